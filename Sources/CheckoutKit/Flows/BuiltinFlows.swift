import Foundation

/// Flows that ship with the driver. Each is a flow file in `Flows/Builtin/` — the same JSON format as users' flow
/// files, embedded in the binary at build time — and goes through the same decoder, so a built-in flow is also a
/// worked example of the format: `flow show NAME` prints it as it ships, ready to copy and edit.
public enum BuiltinFlows {
    public struct Entry: Sendable {
        public let name: String
        public let description: String
        /// The flow file as it ships (`Flows/Builtin/<name>.json`).
        public let source: String
        /// Outside `--env local` a person must act in it: approve in Cash App, answer a 3DS challenge in a browser.
        /// (The local emulator approves and answers by itself.)
        public let needsPerson: Bool
        /// Variables the flow once had, each with what took its place: a `--var` of an old name, or a recording made
        /// with one, is told what changed instead of only that the name is unknown.
        public let retired: [String: String]
        /// A part that other built-in flows include (steps several of them share), not a flow of its own: `flow list`
        /// and `--all` leave it out; `flow show` and `include` find it by name.
        public let isFragment: Bool

        /// A file of `Flows/Builtin/`, as `PackageResources` embeds it. Its name and description are the file's own;
        /// `BuiltinFlowsTests` checks that every file decodes and is named after its flow.
        init(_ file: [UInt8], needsPerson: Bool = false, retired: [String: String] = [:], fragment: Bool = false) {
            source = String(decoding: file, as: UTF8.self)
            let json = try? JSON.parse(Data(file))
            name = json?["name"]?.stringValue ?? ""
            description = json?["description"]?.stringValue ?? ""
            self.needsPerson = needsPerson
            self.retired = retired
            isFragment = fragment
        }
    }

    /// Every provider's flows (`Provider.flows`, but for fragments), and the raw-request demo of the emulator's own
    /// routes.
    public static let all: [Entry] = Providers.all.flatMap(\.flows).filter { !$0.isFragment } + [emulatorOrders]

    /// The fragments built-in flows include.
    public static let fragments: [Entry] = Providers.all.flatMap(\.flows).filter(\.isFragment)

    /// A built-in flow or fragment by name.
    public static func named(_ name: String) -> Entry? {
        all.first { $0.name == name } ?? fragments.first { $0.name == name }
    }

    /// What `flow run --all` runs: every flow under the local emulator; elsewhere the ones no person has to act in.
    public static func unattended(local: Bool) -> [Entry] { local ? all : all.filter { !$0.needsPerson } }

    public static func load(_ entry: Entry, registry: OperationRegistry) throws(Diagnostic) -> Flow {
        var flow = try FlowFile.decode(
            Data(entry.source.utf8), source: "built-in flow \(entry.name)", registry: registry)
        flow.retiredVariables = entry.retired
        return flow
    }

    /// Raw HTTP requests against the emulator's demo routes: every engine feature in one short flow.
    static let emulatorOrders = Entry(PackageResources.emulator_orders_json)
}
