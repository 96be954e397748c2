import CheckoutKit
import Foundation
import TestSupport
import Testing

@testable import CheckoutCLI

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// `flow run FLOW --data FILE`: a run per row, the row's values as the flow's variables.
@Suite struct FlowDataTests {
    static let bahn = try! FlowCommands.resolve("bahn-apple-pay", registry: Operations.registry)

    static func rows(_ text: String, ext: String = "csv", flow: Flow = bahn) throws -> [FlowSuite.DataRow] {
        let s = try Scratch()
        let path = s.path + "/rows.\(ext)"
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return try FlowSuite.dataRows(path, for: flow)
    }

    static func refusal(_ text: String, ext: String = "csv") throws -> Diagnostic? {
        do {
            _ = try rows(text, ext: ext)
            return nil
        } catch let error as Diagnostic { return error }
    }

    @Test func csvCellsAreQuotedAsRFC4180SaysAndReadAsVarReadsThem() throws {
        let fields = try FlowSuite.CSV.fields(
            "a,b,c\r\n\"x, y\",\"say \"\"hi\"\"\",\"two\nlines\"\n,,\n", path: "f.csv")
        #expect(fields == [["a", "b", "c"], ["x, y", "say \"hi\"", "two\nlines"], ["", "", ""]])
        #expect(try FlowSuite.CSV.fields("a\n\"\"", path: "f.csv") == [["a"], [""]])

        let read = try Self.rows("\u{FEFF}id,amount,currency,order_id\nsmall,5100,,o-1\n\nbig,12000,704,\n")
        #expect(read.map(\.id) == ["small", "big"])
        #expect(read.map(\.number) == [1, 3])
        // A number keeps its type and its text, as `--var amount=5100` does; an empty cell leaves the flow's default.
        #expect(read[0].values == ["amount": .number(JSON.Number(literal: "5100")!), "order_id": "o-1"])
        #expect(read[1].values == ["amount": .number(JSON.Number(literal: "12000")!), "currency": .number(704)])
    }

    /// JSON keeps each value's type; with no id column a row is named by its number.
    @Test func jsonRowsKeepTheirTypesAndRowsWithoutIdAreNumbered() throws {
        let lines = try Self.rows(
            "{\"amount\": \"12.00\"}\n\n{\"amount\": 5100, \"outcome\": \"failed\"}\n", ext: "jsonl")
        #expect(lines.map(\.id) == ["1", "3"])
        #expect(lines[0].values == ["amount": "12.00"])
        #expect(lines[1].expected == .failed && lines[1].values.count == 1)
        let array = try Self.rows("[{\"id\": 7, \"amount\": 8000, \"outcome\": \"passed\"}]", ext: "json")
        #expect(array.map(\.id) == ["7"] && array[0].expected == .passed)
        #expect(array[0].values == ["amount": .number(8000)])
    }

    /// Each mistake is refused with the row or the column named, before anything runs.
    @Test(arguments: [
        (
            "id,amout\na,1\n", "csv",
            ["column 'amout' is not a variable of flow bahn-apple-pay", "did you mean 'amount'"]
        ),
        ("id,amount\na,1\nb\n", "csv", ["row 2: 1 cells, and the header has 2"]),
        ("id,amount\na,1\na,2\n", "csv", ["rows 1 and 2 have the same id 'a'"]),
        ("id,amount,outcome\na,1,unknown\n", "csv", ["row 1: column outcome is \"unknown\"", "passed or failed"]),
        ("id,id\na,b\n", "csv", ["names column 'id' twice"]),
        ("id,amount\n\"a,1\n", "csv", ["never closed"]),
        ("id,amount\n\"a\"x,1\n", "csv", ["after a quoted cell's closing quote"]),
        ("id,amount\n", "csv", ["has no rows"]),
        ("{\"amount\": 1}\n[1]\n", "jsonl", ["line 2: expected a JSON object, found an array"]),
        ("{\"amount\": 1}", "json", ["expected a JSON array of objects"]),
        ("[{\"id\": [1]}]", "json", ["row 1: column id must be text or a number"]),
        ("amount\n1\n", "txt", ["'.txt' is none of .csv, .jsonl, .ndjson, .json"]),
    ])
    func mistakesAreNamed(text: String, ext: String, named: [String]) throws {
        let error = try #require(try Self.refusal(text, ext: ext))
        for part in named { #expect(error.message.contains(part), "\(error.message)") }
    }

    /// A row's runs go to the same shards whatever order the file lists the rows in: shards rank a run by its row's id.
    @Test func aRowsShardDoesNotDependOnTheFilesOrder() {
        let ids = (1...12).map { "row-\($0)" }
        func shards(_ order: [String]) -> [Set<String>] {
            let members = order.map { id in
                FlowSuite.Member(
                    flow: Self.bahn, vars: [:],
                    row: FlowSuite.DataRow(number: 1, id: id, values: [:]))
            }
            return (1...3).map { i in
                Set(FlowSuite.offsets(of: members.map(\.shardKey), shard: .init(index: i, total: 3)).map { order[$0] })
            }
        }
        #expect(shards(ids) == shards(ids.reversed()))
        #expect(shards(ids).allSatisfy { !$0.isEmpty })
    }

    /// An `id` or `outcome` column is a variable when the flow declares one of that name.
    @Test func idIsAVariableOnlyWhereTheFlowDeclaresIt() throws {
        var flow = Self.bahn
        flow.vars["id"] = "x"
        let read = try Self.rows("id,amount\nr1,8000\n", flow: flow)
        #expect(read[0].id == "r1" && read[0].values["id"] == "r1")
        #expect(try Self.rows("id,amount\nr1,8000\n")[0].values["id"] == nil)
    }
}

/// `--data` end to end, as QA runs it: the shipped scenario files, reports, shards and a bad cell.
@Suite struct FlowDataRunTests {
    static let examples = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("examples/data").path

    /// Each provider's emulator scenarios, each row with the outcome it must have: every row ends so.
    @Test(arguments: [
        ("bahn-apple-pay", "bahn-scenarios.csv"), ("centra-express-pdp", "centra-scenarios.csv"),
        ("cashapp-server", "cashapp-scenarios.csv"), ("braintree-apple-pay", "braintree-scenarios.jsonl"),
    ])
    func eachScenarioRowEndsAsItSays(flow: String, file: String) async throws {
        let s = try Scratch()
        let path = Self.examples + "/" + file
        let expected = try FlowSuite.dataRows(path, for: try FlowCommands.resolve(flow, registry: Operations.registry))
        #expect(expected.contains { $0.expected == .failed } && expected.contains { $0.expected == .passed })
        let r = try await BinaryRunner.run(
            ["flow", "run", flow, "--data", path, "--parallel", "4", "--format", "json"], home: s.path)
        #expect(r.status == 0, "\(r.all)")
        let flows = try #require(
            (try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])?["flows"]
                as? [[String: Any]])
        #expect(flows.map { $0["row"] as? String } == expected.map(\.id))
        for (run, row) in zip(flows, expected) {
            #expect(run["passed"] as? Bool == true, "\(row.id): \(run)")
            #expect((run["expectedFailure"] != nil) == (row.expected == .failed), "\(row.id): \(run)")
        }
    }

    /// Rows with --repeat and --shard: the shards are disjoint and together every row's every run; the JUnit file names
    /// each run flow[id]#k, the HAR keeps the row, and a row's recording replays.
    @Test func rowsRepeatShardAndAreReportedAndReplayed() async throws {
        let s = try Scratch()
        let data = s.path + "/rows.csv"
        try Data("id,amount,outcome\nsmall,5000,passed\ndeclined,5100,failed\nbig,9000,passed\n".utf8)
            .write(to: URL(fileURLWithPath: data))
        var all: [String] = []
        for shard in 1...2 {
            let r = try await BinaryRunner.run(
                [
                    "flow", "run", "bahn-apple-pay", "--data", data, "--repeat", "2", "--parallel", "3", "--shard",
                    "\(shard)/2", "--junit", s.path + "/j\(shard).xml", "--record", s.path + "/har\(shard)/",
                ], home: s.path)
            #expect(r.status == 0, "\(r.all)")
            all += try XMLDocument(contentsOf: URL(fileURLWithPath: s.path + "/j\(shard).xml"))
                .nodes(forXPath: "/testsuites/testsuite").compactMap {
                    ($0 as? XMLElement)?.attribute(forName: "name")?.stringValue
                }
        }
        let runs = ["small", "declined", "big"].flatMap { id in (1...2).map { "bahn-apple-pay[\(id)]#\($0)" } }
        #expect(all.sorted() == runs.sorted())
        // The declined row failed as it expects: told in the report, counted as no failure.
        for shard in 1...2 {
            let junit = try XMLDocument(contentsOf: URL(fileURLWithPath: s.path + "/j\(shard).xml"))
            let counts = try junit.nodes(forXPath: "//testsuites | //testsuite").compactMap {
                ($0 as? XMLElement)?.attribute(forName: "failures")?.stringValue
            }
            #expect(!counts.isEmpty && counts.allSatisfy { $0 == "0" }, "\(counts)")
            #expect(try junit.nodes(forXPath: "//failure").isEmpty)
        }
        let hars = try FileManager.default.contentsOfDirectory(atPath: s.path + "/har1").sorted()
        let first = try JSONSerialization.jsonObject(
            with: Data(contentsOf: URL(fileURLWithPath: s.path + "/har1/" + hars[0])))
        let run = ((first as? [String: Any])?["log"] as? [String: Any])?["_run"] as? [String: Any]
        #expect(["small", "declined", "big"].contains(run?["row"] as? String ?? ""), "\(String(describing: run))")
        let replay = try await BinaryRunner.run(["flow", "replay", s.path + "/har1/" + hars[0]], home: s.path)
        #expect(replay.status == (run?["row"] as? String == "declined" ? 1 : 0), "\(replay.all)")
    }

    /// A cell that does not fit is refused before any row runs, naming the row and column; --var wins over the rows;
    /// --data takes one flow.
    @Test func aBadCellStopsTheBatchBeforeAnythingIsSent() async throws {
        let s = try Scratch()
        let data = s.path + "/rows.csv"
        try Data("id,amount\nfine,8000\nodd,80.5\n".utf8).write(to: URL(fileURLWithPath: data))
        let r = try await BinaryRunner.run(["flow", "run", "bahn-apple-pay", "--data", data], home: s.path)
        #expect(r.status == 65)
        #expect(r.stderr.contains("--data \(data) row 2 (id odd), column amount=80.5 has 1 decimal"), "\(r.stderr)")
        #expect(r.stderr.contains("nothing was sent"))
        #expect(!r.stdout.contains("make-token"), "a row ran: \(r.stdout)")

        // --var wins over every row: the odd row's cell no longer counts, and both rows pay 7000.
        let overridden = try await BinaryRunner.run(
            ["flow", "run", "bahn-apple-pay", "--data", data, "--var", "amount=7000", "--format", "json"], home: s.path)
        #expect(overridden.status == 0, "\(overridden.all)")

        // A row that expects a failure and passes fails the batch, and its JUnit suite has a failing `outcome` case.
        try Data("id,amount,outcome\nmust-fail,8000,failed\n".utf8).write(to: URL(fileURLWithPath: data))
        let wrong = try await BinaryRunner.run(
            ["flow", "run", "bahn-apple-pay", "--data", data, "--junit", s.path + "/wrong.xml"], home: s.path)
        #expect(wrong.status == 1)
        #expect(wrong.stdout.contains("row must-fail expects the run to fail, and it passed"), "\(wrong.all)")
        let junit = try String(contentsOfFile: s.path + "/wrong.xml", encoding: .utf8)
        #expect(junit.contains("name=\"outcome\" time=\"0.000\">\n      <failure message=\"row must-fail expects"))
        #expect(junit.contains("tests=\"6\" failures=\"1\""), "\(junit)")

        // JSON Lines of rows are printed when each row is judged: the failure it expects, with its row.
        try Data("id,amount,outcome\ndeclined,5100,failed\n".utf8).write(to: URL(fileURLWithPath: data))
        let lines = try await BinaryRunner.run(
            ["flow", "run", "bahn-apple-pay", "--data", data, "--format", "jsonl"], home: s.path)
        #expect(lines.status == 0, "\(lines.all)")
        #expect(lines.stdout.contains("\"row\":\"declined\""), "\(lines.stdout)")
        #expect(lines.stdout.contains("\"expectedFailure\":\"confirm failed"))
        let oneFile = try await BinaryRunner.run(
            ["flow", "run", "bahn-apple-pay", "--data", data, "--record", s.path + "/one.har"], home: s.path)
        #expect(oneFile.status == 0, "one row, one file: \(oneFile.all)")
        try Data("id,amount\na,8000\nb,9000\n".utf8).write(to: URL(fileURLWithPath: data))
        let twoRows = try await BinaryRunner.run(
            ["flow", "run", "bahn-apple-pay", "--data", data, "--record", s.path + "/one.har"], home: s.path)
        #expect(twoRows.status == 64 && twoRows.stderr.contains("2 runs would each need their own"), "\(twoRows.all)")

        let two = try await BinaryRunner.run(
            ["flow", "run", "bahn-apple-pay", "emulator-orders", "--data", data], home: s.path)
        #expect(two.status == 64 && two.stderr.contains("runs one flow once per row"), "\(two.all)")
    }
}
