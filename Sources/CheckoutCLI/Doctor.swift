import CheckoutKit
import Crypto
import Foundation

/// The checks themselves, on a configuration; `DoctorCommands` prints them.
struct Doctor {
    let configuration: Configuration
    let providers: [Provider]
    let redactor: Redactor
    static let timeout = 5.0

    struct Variable {
        var provider: String
        var name: String
        var required: Bool
        var source: String?
    }

    struct Service {
        var variable: String
        var url: String
        var required: Bool
        var status: Int?
        var error: String?
        var milliseconds: Int?
        /// Server clock minus ours, in whole seconds (the Date header's resolution); nil without a Date header.
        var skew: Int?
        var tls: TLSProbe.Report?
        var tlsError: String?
        /// The proxy requests to it go through (its credentials masked), nil when they go direct.
        var proxy: String?
    }

    struct Report {
        var environment: String
        var variables: [Variable]
        var services: [Service]

        var missing: [Variable] { variables.filter { $0.required && $0.source == nil } }
        var silent: [Service] { services.filter { $0.required && $0.status == nil } }

        var exitCode: ExitCode { !missing.isEmpty ? .configuration : !silent.isEmpty ? .unavailable : .ok }

        /// One line: what to fix first.
        var problem: String? {
            if !missing.isEmpty {
                let names = missing.map(\.name)
                return
                    "\(names.count) required variable\(names.count == 1 ? " is" : "s are") not set for environment '\(environment)': \(names.joined(separator: ", ")) — set \(names.count == 1 ? "it" : "them") in .env, --env-file, the environment, --set or a profile"
            }
            if !silent.isEmpty {
                return silent.map {
                    "\($0.variable) (\($0.url)) does not answer: \($0.error ?? "no answer within \(Int(Doctor.timeout)) s")"
                }
                .joined(separator: "; ")
            }
            return nil
        }

        var json: JSON.Object {
            [
                "environment": .string(environment),
                "variables": .array(
                    variables.map { v in
                        [
                            "provider": .string(v.provider), "name": .string(v.name), "required": .bool(v.required),
                            "set": .bool(v.source != nil),
                            "source": v.source.map(JSON.string) ?? .null,
                        ]
                    }),
                "services": .array(
                    services.map { s in
                        var o: JSON.Object = [
                            "variable": .string(s.variable), "url": .string(s.url), "required": .bool(s.required),
                            "answered": .bool(s.status != nil),
                        ]
                        o["proxy"] = s.proxy.map(JSON.string) ?? .null
                        if let status = s.status { o["status"] = JSON(status) }
                        if let error = s.error { o["error"] = .string(error) }
                        if let ms = s.milliseconds { o["milliseconds"] = JSON(ms) }
                        if let skew = s.skew { o["clockSkewSeconds"] = JSON(skew) }
                        if let tls = s.tls {
                            var t: JSON.Object = ["verified": .bool(tls.problem == nil)]
                            if let problem = tls.problem { t["problem"] = .string(problem) }
                            if let expires = tls.expires {
                                t["expires"] = .string(Timestamp.iso8601(expires))
                                t["daysLeft"] = JSON(Doctor.daysLeft(expires))
                            }
                            o["tls"] = .object(t)
                        } else if let error = s.tlsError {
                            o["tls"] = ["error": .string(error)]
                        }
                        return .object(o)
                    }),
                "libraries": ["libcurl": .string(TLSProbe.curlVersion), "openssl": .string(openSSLVersion)],
                "exitCode": JSON(Int(exitCode.rawValue)),
                "problem": problem.map(JSON.string) ?? .null,
            ]
        }

        func text(serve: JSON) -> String {
            var lines = ["environment \(environment)", "", "configuration:"]
            var last = ""
            let width = variables.map(\.name.count).max() ?? 0
            for v in variables {
                let state = v.source.map { "set (\($0))" } ?? (v.required ? "MISSING (required)" : "not set")
                lines.append(
                    "  \((v.provider == last ? "" : v.provider).padding(toLength: 10, withPad: " ", startingAt: 0))\(v.name.padding(toLength: width + 2, withPad: " ", startingAt: 0))\(state)"
                )
                last = v.provider
            }
            lines += ["", "services:"]
            if services.isEmpty { lines.append("  none configured") }
            for s in services {
                var facts: [String] = [s.proxy.map { "via proxy \($0)" } ?? "direct"]
                if let status = s.status {
                    facts.append("answers \(status) in \(s.milliseconds ?? 0) ms")
                } else {
                    facts.append("NO ANSWER: \(s.error ?? "?")")
                }
                if let tls = s.tls {
                    let left = tls.expires.map { "\(Doctor.daysLeft($0)) days to expiry" } ?? "expiry unknown"
                    facts.append(tls.problem.map { "TLS does not verify (\($0)), \(left)" } ?? "TLS verifies, \(left)")
                } else if let error = s.tlsError {
                    facts.append("TLS: \(error)")
                }
                if let skew = s.skew {
                    facts.append(
                        "clock skew \(skew >= 0 ? "+" : "")\(skew) s"
                            + (abs(skew) > Doctor.skewTolerance
                                ? " (MORE THAN \(Doctor.skewTolerance) s: signatures and tokens may be refused)" : ""))
                } else if s.status != nil {
                    facts.append("no Date header")
                }
                let width = services.map(\.variable.count).max() ?? 0
                lines.append(
                    "  \(s.variable.padding(toLength: width, withPad: " ", startingAt: 0))  \(s.url)  "
                        + facts.joined(separator: " · "))
            }
            let state = serve["state"]?.stringValue ?? "none"
            let announced = "\(serve["url"]?.stringValue ?? "") (pid \(serve["pid"]?.interpolationText ?? "?"))"
            lines += [
                "",
                "sandbox serve:  "
                    + (state == "running"
                        ? "running at \(announced)"
                        : state == "stale"
                            ? "STALE announcement of \(announced): its process is gone" : "none announced"),
            ]
            lines.append("libraries:      \(TLSProbe.curlVersion) · \(openSSLVersion)")
            lines.append("")
            lines.append(problem.map { "result: \($0)" } ?? "result: all is well")
            return lines.joined(separator: "\n")
        }
    }

    /// Beyond this, a webhook's signed timestamp or a JWT's issue time may be judged stale or early.
    static let skewTolerance = 30

    static func daysLeft(_ expires: Date) -> Int { Int((expires.timeIntervalSinceNow / 86_400).rounded(.down)) }

    func run() async -> Report {
        var variables: [Variable] = []
        var services: [Service] = []
        for provider in providers {
            let declared = Set(provider.variables.map(\.name))
            let required = Set(provider.operations.flatMap(\.requiredConfiguration)).intersection(declared)
            for v in provider.variables {
                let set = configuration.value(v.name) != nil
                variables.append(
                    Variable(
                        provider: provider.name, name: v.name, required: required.contains(v.name),
                        source: set ? configuration.source(of: v.name) ?? "configuration" : nil))
                if v.name.hasSuffix("_URL"), let url = configuration.value(v.name) {
                    services.append(
                        Service(variable: v.name, url: redactor.text(url), required: required.contains(v.name)))
                }
            }
        }
        // Each service probed at once, in parallel: a silent one costs its 5 s once, not once per service.
        let urls = services.map { configuration.value($0.variable)! }
        let options = NetworkOptions(configuration: configuration)
        for index in services.indices {
            services[index].proxy = options.proxies.proxy(for: urls[index]).map {
                redactor.text(ProxySettings.masked($0))
            }
        }
        let probed = await withTaskGroup(of: (Int, Service).self) { group in
            for (index, service) in services.enumerated() {
                group.addTask {
                    (index, await Self.probe(service, url: urls[index], options: options, redactor: redactor))
                }
            }
            var all = services
            for await (index, service) in group { all[index] = service }
            return all
        }
        return Report(environment: configuration.environment, variables: variables, services: probed)
    }

    /// A GET of the base URL: any HTTP answer counts (a base URL often answers 404 or 401); its Date header gives the
    /// skew. An HTTPS one has its certificate looked at too.
    static func probe(_ service: Service, url: String, options: NetworkOptions, redactor: Redactor) async -> Service {
        var service = service
        let started = Date()
        do {
            let response = try await CurlTransport(options: options).send(
                HTTPClientRequest(method: "GET", url: url, timeout: timeout, readOnly: true))
            let finished = Date()
            service.status = response.status
            service.milliseconds = Int((finished.timeIntervalSince(started) * 1000).rounded())
            if let date = response.headers["Date"].flatMap({ Timestamp.httpDate($0) }) {
                // The header is whole seconds, cut down: its middle is half a second on.
                let midpoint = started.addingTimeInterval(finished.timeIntervalSince(started) / 2)
                service.skew = Int((date.timeIntervalSince(midpoint) + 0.5).rounded())
            }
        } catch {
            service.error = redactor.text(error.description)
        }
        if url.lowercased().hasPrefix("https://") {
            switch TLSProbe.check(url, timeout: timeout, options: options) {
            case .success(let report): service.tls = report
            case .failure(let error): service.tlsError = redactor.text(error.description)
            }
        }
        return service
    }
}
