import Foundation

/// Reads a flow file (JSON) into a `Flow`, checking all of it before anything runs. Every error names the
/// JSON path of the offending element, e.g. `$.steps[1].expect.status: expected an integer…`.
public enum FlowFile {
    public static func load(path: String, registry: OperationRegistry) throws(Diagnostic) -> Flow {
        let data: Data
        switch FileIO.read(path) {
        case .success(let bytes): data = bytes
        case .failure(let error):
            throw .data(
                "cannot read flow file \(path): \(error.reason)",
                hint: "check the path; `checkout-driver flow list` shows the built-in flows")
        }
        let file = FlowDecoder.Includes.key(path)
        return try decode(
            data, source: path, registry: registry,
            includes: FlowDecoder.Includes(directory: FileIO.directory(of: file), chain: [file]))
    }

    /// - Parameter includes: where the flow's `include`s are resolved from (by default the working directory).
    public static func decode(_ data: Data, source: String, registry: OperationRegistry) throws(Diagnostic) -> Flow {
        try decode(data, source: source, registry: registry, includes: .init(directory: nil, chain: []))
    }

    static func decode(
        _ data: Data, source: String, registry: OperationRegistry, includes: FlowDecoder.Includes
    ) throws(Diagnostic) -> Flow {
        let json: JSON
        do { json = try JSON.parse(data) } catch {
            throw .data(
                "\(source): not valid JSON: \(error)", hint: "a flow file is one JSON object; see docs/flow-files.md")
        }
        do {
            var flow = try FlowDecoder(registry: registry, includes: includes).flow(json, at: .root)
            flow.source = source
            flow.varSources = flow.varSources.mapValues { "\(source): \($0)" }
            return flow
        } catch let error as FlowDecoder.Problem {
            throw .data(
                "\(source): \(error.path): \(error.message)",
                hint: error.hint ?? "see docs/flow-files.md for the format")
        } catch {
            throw .internalError("\(source): \(error)")
        }
    }
}
