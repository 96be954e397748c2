import Foundation

/// The typed readers every part of the decoder uses: each value of the expected type, or a `Problem` naming its JSON
/// path and what was expected.
extension FlowDecoder {
    /// The flow file's own text in a header or a one-line argument — literal parts and `|fallback`s — must be one line.
    static func checkOneLine(_ template: String, at path: @autoclosure () -> JSONPath, into target: String) throws {
        let segments = (try? Template.parse(template)) ?? [.literal(template)]
        for segment in segments {
            let text: String? =
                switch segment {
                case .literal(let l): l
                case .reference(_, let fallback, _): fallback
                }
            if let text, let problem = HeaderSafety.problem(text) {
                throw Problem(
                    path: path(), message: "the value \(problem), which cannot go into \(target)",
                    hint: "a header value is one line")
            }
        }
    }

    func checkTemplate(_ value: JSON, at path: @autoclosure () -> JSONPath) throws {
        do { _ = try Template.references(in: value) } catch { throw Problem(path: path(), message: error.description) }
    }

    func object(_ json: JSON, at path: @autoclosure () -> JSONPath, allowed: Set<String>?) throws -> JSON.Object {
        guard case .object(let o) = json else {
            throw Problem(path: path(), message: "expected an object, found \(json.kindName)")
        }
        // Sorted only to name the first unknown key the same way each time: most objects have none.
        if let allowed, !o.allSatisfy({ allowed.contains($0.key) }) {
            for key in o.keys.sorted() where !allowed.contains(key) {
                let suggestion = Suggest.closest(to: key, in: Array(allowed)).map { "; did you mean '\($0)'?" } ?? ""
                throw Problem(
                    path: path().appending(key), message: "unknown key '\(key)'\(suggestion)",
                    hint: "allowed here: \(allowed.filter { !$0.hasPrefix("$") }.sorted().joined(separator: ", "))")
            }
        }
        return o
    }

    func string(_ json: JSON?, at path: @autoclosure () -> JSONPath, required: Bool = false) throws -> String? {
        guard let json else {
            if required { throw Problem(path: path(), message: "missing required string") }
            return nil
        }
        guard case .string(let s) = json else {
            throw Problem(path: path(), message: "expected a string, found \(json.kindName)")
        }
        if required && s.isEmpty { throw Problem(path: path(), message: "must not be empty") }
        return s
    }

    func bool(_ json: JSON?, at path: @autoclosure () -> JSONPath) throws -> Bool? {
        guard let json else { return nil }
        guard case .bool(let b) = json else {
            throw Problem(path: path(), message: "expected true or false, found \(json.kindName)")
        }
        return b
    }

    func int(_ json: JSON, at path: @autoclosure () -> JSONPath, range: ClosedRange<Int>) throws -> Int {
        guard let i = json.intValue, range.contains(i) else {
            throw Problem(
                path: path(), message: "expected an integer in \(range.lowerBound)…\(range.upperBound), found \(json)")
        }
        return i
    }

    func seconds(_ json: JSON, at path: @autoclosure () -> JSONPath) throws -> Double {
        if let d = json.doubleValue, d >= 0 { return d }
        if let s = json.stringValue, let d = Duration.seconds(from: s) { return d }
        throw Problem(
            path: path(),
            message: "expected seconds (a number, or a string like \"500ms\", \"2s\", \"1m\"), found \(json)")
    }

    func jsonPath(_ json: JSON, at path: @autoclosure () -> JSONPath) throws -> JSONPath {
        guard case .string(let s) = json else {
            throw Problem(path: path(), message: "expected a JSON path string, found \(json.kindName)")
        }
        do { return try JSONPath(s) } catch { throw Problem(path: path(), message: "\(error)") }
    }

    func regex(_ json: JSON, at path: @autoclosure () -> JSONPath) throws -> String {
        guard case .string(let s) = json else {
            throw Problem(path: path(), message: "expected a regular expression string")
        }
        do { _ = try NSRegularExpression(pattern: s) } catch {
            throw Problem(path: path(), message: "invalid regular expression '\(s)'")
        }
        return s
    }
}
