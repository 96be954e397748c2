import CheckoutKit
import Foundation

/// `flow run FLOW --data FILE`: the flow once per row of a data file, the row's values as its variables
/// (docs/qa-ci.md, "Data-driven runs").
extension FlowSuite {
    /// One row of a data file: its values for the flow, its id (the run's name), and the outcome it must have.
    struct DataRow: Sendable, Equatable {
        /// Counted from 1, the header apart (a JSON Lines file's line, a JSON array's element).
        var number: Int
        var id: String
        /// The row's cells by column, but for empty ones (the flow's default stands) and the reserved `id` and
        /// `outcome` (unless the flow declares a variable of that name).
        var values: JSON.Object
        /// `outcome`: the verdict the run must end with — `passed`, or `failed` for a row that must be refused.
        var expected: Verdict?
    }

    /// The reserved columns: the run's name, and the outcome it must have.
    static let idColumn = "id"
    static let outcomeColumn = "outcome"

    /// The rows of `path` for `flow`, by its extension: `.csv` (a header row naming the columns; a cell is text, read
    /// as `--var` reads it), `.jsonl`/`.ndjson` (an object a line) or `.json` (an array of objects; a value keeps its
    /// type). Every row is checked here, before anything is sent: a column the flow has no variable for, a duplicate
    /// id, an outcome other than passed or failed.
    static func dataRows(_ path: String, for flow: Flow) throws(Diagnostic) -> [DataRow] {
        let data: Data
        switch FileIO.read(path) {
        case .success(let bytes): data = bytes
        case .failure(let error):
            throw .data("cannot read --data \(path): \(error.reason)", hint: "check the path")
        }
        let records: [(number: Int, cells: [(String, JSON)])]
        switch (path as NSString).pathExtension.lowercased() {
        case "csv": records = try CSV.records(data, path: path)
        case "jsonl", "ndjson": records = try jsonLines(data, path: path)
        case "json": records = try jsonArray(data, path: path)
        default:
            throw .usage(
                "--data \(path): the file's type is told by its extension, and '.\((path as NSString).pathExtension)' is none of .csv, .jsonl, .ndjson, .json",
                hint: "rename it, e.g. cases.csv")
        }
        guard !records.isEmpty else {
            throw .data("--data \(path) has no rows", hint: "give at least one row under the header")
        }
        let used = flow.variableNames
        var ids: [String: Int] = [:]
        var rows: [DataRow] = []
        for record in records {
            var row = DataRow(number: record.number, id: String(record.number), values: [:])
            for (column, value) in record.cells {
                let empty = value == .null || value == .string("")
                if column == idColumn && !empty {
                    let id: String
                    switch value {
                    case .string(let text): id = text
                    case .number(let number): id = number.description
                    default:
                        throw .data(
                            "--data \(path) row \(record.number): column id must be text or a number, found \(value.kindName)",
                            hint: "give each row a short name, e.g. decline-5100")
                    }
                    row.id = id
                }
                if column == outcomeColumn && !empty && !used.contains(column) {
                    switch value.stringValue {
                    case "passed": row.expected = .passed
                    case "failed": row.expected = .failed
                    default:
                        throw .data(
                            "--data \(path) row \(record.number): column outcome is \(value.serialized()), and a row's outcome is passed or failed",
                            hint:
                                "an unknown money outcome is never what a row expects: it leaves a payment to settle (docs/outcomes.md)"
                        )
                    }
                    continue
                }
                if column == idColumn && !used.contains(column) { continue }
                guard used.contains(column) else {
                    let close = Suggest.closest(to: column, in: used.sorted()).map { "; did you mean '\($0)'?" } ?? ""
                    throw .data(
                        "--data \(path): column '\(column)' is not a variable of flow \(flow.name)\(close)",
                        hint:
                            "its variables: \(used.sorted().joined(separator: ", ")); id and outcome name a row and its expected outcome"
                    )
                }
                if !empty { row.values[column] = value }
            }
            if let earlier = ids[row.id] {
                throw .data(
                    "--data \(path): rows \(earlier) and \(row.number) have the same id '\(row.id)'",
                    hint: "give each row an id of its own: reports and shards tell rows apart by it")
            }
            ids[row.id] = row.number
            rows.append(row)
        }
        return rows
    }

    private static func jsonLines(_ data: Data, path: String) throws(Diagnostic) -> [(Int, [(String, JSON)])] {
        var records: [(Int, [(String, JSON)])] = []
        for (index, line) in data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).enumerated() {
            if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { continue }
            records.append((index + 1, try object(Data(line), path: path, row: "line \(index + 1)")))
        }
        return records
    }

    private static func jsonArray(_ data: Data, path: String) throws(Diagnostic) -> [(Int, [(String, JSON)])] {
        let parsed: JSON
        do { parsed = try JSON.parse(data) } catch {
            throw .data("--data \(path): not valid JSON: \(error)", hint: "one JSON array of objects, a row each")
        }
        guard case .array(let items) = parsed else {
            throw .data(
                "--data \(path): expected a JSON array of objects, found \(parsed.kindName)",
                hint: "one JSON array of objects, a row each: [{\"id\": \"a\", \"amount\": 5100}]")
        }
        var records: [(Int, [(String, JSON)])] = []
        for (index, item) in items.enumerated() {
            guard case .object(let object) = item else {
                throw .data(
                    "--data \(path) row \(index + 1): expected an object, found \(item.kindName)",
                    hint: "each row is an object of column names to values")
            }
            records.append((index + 1, object.map { ($0.key, $0.value) }))
        }
        return records
    }

    private static func object(_ data: Data, path: String, row: String) throws(Diagnostic) -> [(String, JSON)] {
        let parsed: JSON
        do { parsed = try JSON.parse(data) } catch {
            throw .data("--data \(path) \(row): not valid JSON: \(error)", hint: "one JSON object a line")
        }
        guard case .object(let object) = parsed else {
            throw .data(
                "--data \(path) \(row): expected a JSON object, found \(parsed.kindName)",
                hint: "one JSON object a line, e.g. {\"id\": \"a\", \"amount\": 5100}")
        }
        return object.map { ($0.key, $0.value) }
    }

    /// RFC 4180's CSV: fields separated by commas, a quoted field may hold commas, quotes (doubled) and line breaks,
    /// records end with CRLF or LF; the first record is the header.
    enum CSV {
        static func records(_ data: Data, path: String) throws(Diagnostic) -> [(Int, [(String, JSON)])] {
            var bytes = [UInt8](data)
            if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes.removeFirst(3) }  // a spreadsheet's byte-order mark
            guard let text = String(validating: bytes, as: UTF8.self) else {
                throw .data("--data \(path) is not UTF-8 text", hint: "save it as UTF-8 CSV")
            }
            let all = try fields(text, path: path)
            guard let header = all.first, !(header.count == 1 && header[0].isEmpty) else {
                throw .data("--data \(path) has no header row", hint: "its first line names the columns: id,amount")
            }
            var seen: Set<String> = []
            for name in header {
                guard !name.isEmpty else {
                    throw .data("--data \(path): the header has an empty column name", hint: "name every column")
                }
                guard seen.insert(name).inserted else {
                    throw .data(
                        "--data \(path): the header names column '\(name)' twice", hint: "name each column once")
                }
            }
            var records: [(Int, [(String, JSON)])] = []
            for (index, record) in all.dropFirst().enumerated() {
                if record.count == 1 && record[0].isEmpty { continue }  // a blank line
                guard record.count == header.count else {
                    throw .data(
                        "--data \(path) row \(index + 1): \(record.count) cells, and the header has \(header.count)",
                        hint: "quote a cell that holds a comma: \"a,b\"")
                }
                records.append(
                    (index + 1, zip(header, record).map { ($0, Invocation.variableValue($1)) }))
            }
            return records
        }

        /// The records' fields, as text.
        static func fields(_ text: String, path: String) throws(Diagnostic) -> [[String]] {
            let scalars = Array(text.unicodeScalars)
            var records: [[String]] = []
            var record: [String] = []
            var field = String.UnicodeScalarView()
            var i = 0
            // Whether the field being read was quoted and its closing quote seen: only a separator may follow.
            var closed = false
            func endField() {
                record.append(String(field))
                field = String.UnicodeScalarView()
                closed = false
            }
            while i < scalars.count {
                let c = scalars[i]
                i += 1
                switch c {
                case ",":
                    endField()
                case "\r", "\n":
                    if c == "\r" && i < scalars.count && scalars[i] == "\n" { i += 1 }
                    endField()
                    records.append(record)
                    record = []
                case "\"" where field.isEmpty && !closed:
                    // A quoted field: up to the quote that is not doubled.
                    while true {
                        guard i < scalars.count else {
                            throw .data(
                                "--data \(path) line \(records.count + 1): a quoted cell is never closed",
                                hint: "close it with a \"")
                        }
                        let q = scalars[i]
                        i += 1
                        if q == "\"" {
                            guard i < scalars.count, scalars[i] == "\"" else { break }
                            i += 1
                        }
                        field.append(q)
                    }
                    closed = true
                default:
                    if closed {
                        throw .data(
                            "--data \(path) line \(records.count + 1): text after a quoted cell's closing quote",
                            hint: "a quote inside a quoted cell is written twice: \"say \"\"hi\"\"\"")
                    }
                    field.append(c)
                }
            }
            if !field.isEmpty || !record.isEmpty || closed {
                endField()
                records.append(record)
            }
            return records
        }
    }
}
