import CheckoutKit
import Foundation

/// `checkout-driver doctor`: what stands between this machine and a run in the chosen environment — configuration,
/// the services' base URLs (answer, TLS, clock), a `sandbox serve` announcement, the libraries — checked at once.
enum DoctorCommands {
    struct DoctorInput: CommandInput {
        /// The providers named, in the order given; none for all.
        var providers: [String] = []

        static let inputs: [Input<DoctorInput>] = [
            .values(
                "provider", \.providers, value: "P", help: "Check only this provider (repeatable).",
                choices: Providers.all.map(\.name))
        ]
    }

    static let spec = CommandSpec(
        name: "doctor",
        abstract: "Check the environment: configuration, services, TLS, clock skew, sandbox serve, libraries.",
        discussion: """
            For the chosen environment (--env) and each provider (or --provider P): every configuration variable it needs,
            set or missing (never its value), all at once; whether each base URL answers (within 5 s), its TLS certificate
            (verifies, days to expiry) and the clock skew against the server's Date header (webhook signatures and JWTs
            are checked against the clock); whether a sandbox serve announcement is live or stale; libcurl and OpenSSL.
            Exit 0 when all is well, 78 when a required variable is missing, 69 when a required service does not answer.
            """,
        input: DoctorInput.self
    ) { input, invocation throws(Diagnostic) in
        let chosen = input.providers
        let providers = chosen.isEmpty ? Providers.all : Providers.all.filter { chosen.contains($0.name) }
        // Read before the environment is prepared: preparing withdraws a stale announcement.
        let processEnvironment = ProcessInfo.processInfo.environment
        let announced = LocalEmulatorFile.announced(processEnvironment: processEnvironment)
        let serve: JSON =
            announced.map { entry in
                let live = LocalEmulatorFile.running(processEnvironment: processEnvironment) != nil
                return [
                    "state": .string(live ? "running" : "stale"), "url": .string(entry.url),
                    "pid": JSON(Int(entry.pid)),
                ]
            } ?? ["state": "none"]
        let environment = try RunEnvironment.prepare(invocation)
        defer { environment.shutdown() }
        let report = await Doctor(
            configuration: environment.configuration, providers: providers, redactor: environment.redactor
        ).run()
        var document = report.json
        document["sandboxServe"] = serve
        let console = Console.shared
        if environment.settings.output.format == .text {
            console.out(report.text(serve: serve))
            if let problem = report.problem { console.err("doctor: \(problem)") }
        } else {
            console.out(JSON.object(document).serialized(pretty: environment.settings.output.format == .json))
        }
        return report.exitCode
    }
}
