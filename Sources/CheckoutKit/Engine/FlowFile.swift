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

extension FlowFile {
    /// The line (from 1) where a step's object starts in its flow file, for a location as `Step.location` gives it
    /// (`$.steps[2]`, `$.finally[0]`); nil for any other location or a file that cannot be read. What a CI annotation
    /// points at: the file's text is scanned once, strings and nesting minded, without parsing it again.
    public static func line(of location: String, in path: String) -> Int? {
        let parts = location.split(whereSeparator: { "[].".contains($0) })
        guard parts.count == 3, parts[0] == "$", let index = Int(parts[2]), index >= 0,
            case .success(let data) = FileIO.read(path)
        else { return nil }
        return line(ofElement: index, inArray: String(parts[1]), of: Array(data))
    }

    /// The line where element `index` of the root object's array `key` starts.
    static func line(ofElement index: Int, inArray key: String, of bytes: [UInt8]) -> Int? {
        var line = 1
        var depth = 0
        var scan = JSONTextScan()
        var string: [UInt8] = []
        var lastKey: [UInt8] = []
        // Inside the array wanted (at depth 2): the element count so far, and whether the next value starts one.
        var inArray = false
        var element = -1
        var expectingElement = false
        for byte in bytes {
            if byte == UInt8(ascii: "\n") { line += 1 }
            switch scan.read(byte) {
            case .inString:
                if depth == 1 { string.append(byte) }
                continue
            case .closing:
                if depth == 1 { lastKey = string }
                continue
            case .opening, .structure: break
            }
            let isSpace = byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
            if inArray && depth == 2 && expectingElement && !isSpace && byte != UInt8(ascii: "]") {
                element += 1
                expectingElement = false
                if element == index { return line }
            }
            switch byte {
            case UInt8(ascii: "\""):
                string = []
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                depth += 1
                if depth == 2 && byte == UInt8(ascii: "[") && lastKey == Array(key.utf8) {
                    inArray = true
                    expectingElement = true
                }
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                if depth == 2 && inArray { return nil }
                depth -= 1
            case UInt8(ascii: ","):
                if inArray && depth == 2 { expectingElement = true }
            default: break
            }
        }
        return nil
    }
}
