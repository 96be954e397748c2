import Foundation
import TestSupport
import Testing

@testable import CheckoutKit

/// `{"include": "NAME|PATH", "vars": {…}}`: another flow's steps in place, its variables shared (the flow's own `vars`
/// over the include's, the include's over the included flow's defaults), its `finally` after the flow's own; cycles,
/// missing files and bad variables refused (65) naming the chain.
@Suite struct FlowIncludeTests {
    let registry = OperationRegistry([fetchOperation])

    func files(_ contents: [String: String]) throws -> String {
        let dir = try temporaryDirectory()
        for (name, text) in contents {
            let path = dir + "/" + name
            try FileManager.default.createDirectory(
                atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        }
        return dir
    }

    func problem(_ path: String, registry: OperationRegistry? = nil) -> String {
        guard
            let d = diagnostic({ () throws(Diagnostic) in
                try FlowFile.load(path: path, registry: registry ?? self.registry)
            })
        else {
            Issue.record("the flow loaded")
            return ""
        }
        #expect(d.code == .dataError)
        return d.message
    }

    static let login = #"""
        {"name": "login", "vars": {"user": "ada", "tag": "l"}, "varDescriptions": {"user": "who logs in"},
         "steps": [{"name": "login", "use": "test.fetch", "with": {"url": "http://x/${vars.user}", "tag": "${vars.tag}"}, "capture": {"session": "id"}}],
         "finally": [{"name": "logout", "use": "test.fetch", "with": {"url": "http://x/logout"}}]}
        """#

    @Test func anIncludedFlowsStepsComeInPlaceWithItsVariablesShared() throws {
        let dir = try files([
            "parts/login.json": Self.login,
            "main.json": #"""
            {"name": "main", "vars": {"tag": "own"},
             "steps": [{"name": "first", "use": "test.fetch", "with": {"url": "http://x/1"}},
                       {"include": "parts/login.json", "vars": {"user": "grace"}},
                       {"name": "after", "use": "test.fetch", "with": {"url": "http://x/${vars.session}"}}],
             "finally": [{"name": "cleanup", "use": "test.fetch", "with": {"url": "http://x/c"}}]}
            """#,
        ])
        let flow = try FlowFile.load(path: dir + "/main.json", registry: registry)
        #expect(flow.steps.map(\.name) == ["first", "login", "after"])
        #expect(flow.finally.map(\.name) == ["cleanup", "logout"], "the flow's own clean-up first, then the include's")
        #expect(
            flow.vars == ["user": "grace", "tag": "own"],
            "the include's vars over its defaults, the flow's own over both")
        #expect(flow.varDescriptions == ["user": "who logs in"])
        #expect(flow.steps[1].location == "$.steps[1] (include parts/login.json): $.steps[0]")
        #expect(flow.variableNames.contains("session"))
    }

    @Test func aBuiltinFlowCanBeIncluded() throws {
        let dir = try files([
            "main.json": #"{"name": "main", "steps": [{"include": "bahn-apple-pay", "vars": {"amount": 5100}}]}"#
        ])
        let flow = try FlowFile.load(path: dir + "/main.json", registry: CommandFlowTests.registry)
        #expect(flow.steps.map(\.name) == ["make-token", "create-intent", "confirm", "poll", "webhook"])
        #expect(flow.vars["amount"] == 5100 && flow.vars["currency"] == "704")
    }

    @Test func anIncludeCycleIsRefusedNamingTheChain() throws {
        let dir = try files([
            "a.json": #"{"name": "a", "steps": [{"include": "sub/b.json"}]}"#,
            "sub/b.json": #"{"name": "b", "steps": [{"include": "../a.json"}]}"#,
            "self.json": #"{"name": "s", "steps": [{"include": "./self.json"}]}"#,
        ])
        #expect(
            problem(dir + "/a.json").hasSuffix(
                "a.json: $.steps[0].include: in sub/b.json: $.steps[0].include: include cycle: a.json → b.json → a.json"
            ))
        #expect(
            problem(dir + "/self.json").hasSuffix("self.json: $.steps[0].include: include cycle: self.json → self.json")
        )
    }

    @Test func aMissingOrBrokenIncludeIsRefusedNamingTheChain() throws {
        let dir = try files([
            "a.json": #"{"name": "a", "steps": [{"include": "b.json"}]}"#,
            "b.json": #"{"name": "b", "steps": [{"include": "gone.json"}]}"#,
            "c.json": #"{"name": "c", "steps": [{"include": "d.json"}]}"#,
            "d.json": #"{"name": "d", "steps": [{"name": "x", "use": "test.fecth"}]}"#,
            "e.json": #"{"name": "e", "steps": [{"include": "bahn-aple-pay"}]}"#,
        ])
        #expect(
            problem(dir + "/a.json").contains(
                "a.json: $.steps[0].include: in b.json: $.steps[0].include: cannot read included flow gone.json (\(dir)/gone.json): No such file or directory"
            ))
        #expect(
            problem(dir + "/c.json").contains(
                "c.json: $.steps[0].include: in d.json: $.steps[0].use: unknown operation 'test.fecth'; did you mean 'test.fetch'?"
            ))
        #expect(
            problem(dir + "/e.json").contains(
                "$.steps[0].include: no built-in flow named 'bahn-aple-pay'; did you mean 'bahn-apple-pay'?"))
    }

    @Test func variablesAnIncludeDoesNotHaveOrGetsTwiceAreRefused() throws {
        let dir = try files([
            "login.json": Self.login,
            "typo.json": #"{"name": "t", "steps": [{"include": "login.json", "vars": {"usr": "x"}}]}"#,
            "twice.json":
                #"{"name": "t", "steps": [{"include": "login.json", "vars": {"user": "a"}}, {"include": "other.json"}]}"#,
            "other.json":
                #"{"name": "o", "vars": {"user": "b"}, "steps": [{"name": "o", "use": "test.fetch", "with": {"url": "http://x/${vars.user}"}}]}"#,
            "decided.json":
                #"{"name": "t", "vars": {"user": "c"}, "steps": [{"include": "login.json", "vars": {"user": "a"}}, {"include": "other.json"}]}"#,
            "dupe.json":
                #"{"name": "t", "steps": [{"include": "login.json"}, {"name": "login", "use": "test.fetch", "with": {"url": "http://x"}}]}"#,
        ])
        #expect(
            problem(dir + "/typo.json").contains(
                "$.steps[0].vars.usr: login.json has no variable 'usr'; did you mean 'user'?"))
        #expect(
            problem(dir + "/twice.json").contains(
                "$.vars: variable 'user' gets different values from the includes of login.json and other.json"))
        #expect(
            try FlowFile.load(path: dir + "/decided.json", registry: registry).vars["user"] == "c",
            "the flow's own value settles it")
        #expect(
            problem(dir + "/dupe.json").contains(
                "$.steps[1].name: duplicate step name 'login' ($.steps[0] (include login.json): $.steps[0] and $.steps[1])"
            ))
    }
}
