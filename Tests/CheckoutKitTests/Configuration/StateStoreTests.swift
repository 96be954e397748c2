import Foundation
import TestSupport
import Testing

@testable import CheckoutKit

@Suite struct StateStoreTests {
    @Test func updateThenReadRoundTrips() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = StateStore(path: dir + "/nested/state.json")
        #expect(try store.read() == .object([:]))
        let returned = try store.update { (doc: inout JSON) throws(Diagnostic) -> Int in
            doc = JSONPath(components: [.key("bahn"), .key("intent")]).setting("pi_1", in: doc)
            return 7
        }
        #expect(returned == 7)
        #expect(try store.read() == ["bahn": ["intent": "pi_1"]])
        #expect(try StateStore(path: dir + "/nested/state.json").read()["bahn"]?["intent"] == "pi_1")
    }

    /// The credentials the next invocation must send stay as they are; everything else is redacted as in any output.
    @Test func sessionCredentialsAreKeptAndEverythingElseIsMasked() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let redactor = Redactor(secrets: ["merchant-secret-key"])
        let store = StateStore(path: dir + "/state.json", redactor: redactor)
        try store.update { (doc: inout JSON) throws(Diagnostic) in
            doc = [
                "cashapp": [
                    "token": "002.checkout-token", "jwt": "a.b.c-signed",
                    "redirectUri": "https://m.example/r?t=002.checkout-token",
                    "requestKey": "k-merchant-secret-key",
                ],
                "centra": ["session": "session-token-1"], "other": ["token": "002.checkout-token"],
            ]
        }
        let written = try String(contentsOfFile: dir + "/state.json", encoding: .utf8)
        for kept in [
            "002.checkout-token\"", "a.b.c-signed", "https://m.example/r?t=002.checkout-token", "session-token-1",
        ] {
            #expect(written.contains(kept), "\(kept) kept: \(written)")
        }
        #expect(!written.contains("merchant-secret-key"), "a configured secret is masked")
        #expect(try JSON.parse(written)["other"]?["token"] == "[REDACTED]", "a token elsewhere is masked")
    }

    /// A credential the file keeps is a secret in every other output: reading the file teaches the redactor, for the
    /// chain's sections and each run's.
    @Test func keptCredentialsAreMaskedInMessagesOnceTheFileIsRead() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try
            #"{"cashapp": {"token": "002.chain-checkout-token"}, "runs": {"r1": {"centra": {"session": "cst_run-session-token"}}}}"#
            .write(toFile: dir + "/state.json", atomically: true, encoding: .utf8)
        let redactor = Redactor()
        _ = try StateStore(path: dir + "/state.json", redactor: redactor).read()
        let message = redactor.text(
            "The checkout 002.chain-checkout-token is unknown; session cst_run-session-token ended")
        #expect(
            !message.contains("002.chain-checkout-token") && !message.contains("cst_run-session-token"), "\(message)")
        // Learned once per version of the document and redactor: another redactor reading the document this process
        // already holds learns it too, and a version another writer put in place is learned again.
        let another = Redactor()
        _ = try StateStore(path: dir + "/state.json", redactor: another).read()
        #expect(another.text("002.chain-checkout-token") == Redactor.mask)
        try #"{"cashapp": {"token": "002.next-checkout-token"}}"#.write(
            toFile: dir + "/state.json", atomically: true, encoding: .utf8)
        _ = try StateStore(path: dir + "/state.json", redactor: another).read()
        #expect(another.text("002.next-checkout-token") == Redactor.mask)
        // One store read again, as a batch's runs read it: a run's scope that another writer changed is learned again
        // (each scope is learned once per value, not once per run).
        let batch = StateStore(path: dir + "/state.json", redactor: another)
        _ = try batch.read()  // a file with no runs yet: the runs that come are learned all the same
        try #"{"runs": {"r1": {"centra": {"session": "cst_first-run-token"}}}}"#.write(
            toFile: dir + "/state.json", atomically: true, encoding: .utf8)
        _ = try batch.ownRun("r2").read()
        try #"{"runs": {"r1": {"centra": {"session": "cst_rotated-run-token"}}}}"#.write(
            toFile: dir + "/state.json", atomically: true, encoding: .utf8)
        _ = try batch.ownRun("r3").read()
        #expect(another.text("session cst_rotated-run-token") == "session \(Redactor.mask)")
    }

    @Test func fileIsPrivateAndNoTemporaryFilesRemain() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = StateStore(path: dir + "/state.json")
        for i in 0..<3 { try store.update { (doc: inout JSON) throws(Diagnostic) in doc = ["n": .number(Double(i))] } }
        let attributes = try FileManager.default.attributesOfItem(atPath: dir + "/state.json")
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.hasSuffix(".tmp") }
        #expect(leftovers.isEmpty)
    }

    @Test func redactorHasTheLastWord() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = StateStore(path: dir + "/state.json", redactor: Redactor(secrets: ["sk_live_zzzzzz"]))
        try store.update { (doc: inout JSON) throws(Diagnostic) in
            doc = ["note": "sk_live_zzzzzz", "client_secret": "x"]
        }
        let text = try String(contentsOfFile: dir + "/state.json", encoding: .utf8)
        #expect(!text.contains("sk_live_zzzzzz"))
        #expect(text.contains(Redactor.mask))
    }

    @Test func corruptFileIsADataErrorAndIsLeftAlone() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/state.json"
        let garbage = Data("{ this is not json".utf8)
        try garbage.write(to: URL(fileURLWithPath: path))
        let store = StateStore(path: path)
        let onRead = diagnostic { () throws(Diagnostic) in try store.read() }
        #expect(onRead?.code == .dataError)
        #expect(onRead?.message.contains(path) == true)
        let onUpdate = diagnostic { () throws(Diagnostic) in
            try store.update { (doc: inout JSON) throws(Diagnostic) in doc = [:] }
        }
        #expect(onUpdate?.code == .dataError)
        #expect(FileManager.default.contents(atPath: path) == garbage)
        // A JSON document that is not an object is corrupt too.
        try Data("[1,2]".utf8).write(to: URL(fileURLWithPath: path))
        let notAnObject = diagnostic { () throws(Diagnostic) in try store.read() }
        #expect(
            notAnObject?.code == .dataError
                && notAnObject?.message.hasSuffix("is corrupt: expected a JSON object, found an array") == true,
            "\(String(describing: notAnObject))")
    }

    @Test func concurrentUpdatesAreSerialised() async throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = StateStore(path: dir + "/state.json")
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    // `update` blocks on flock and fsync: run it on a Dispatch thread, not the cooperative pool.
                    try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                        DispatchQueue.global().async {
                            do {
                                for _ in 0..<25 {
                                    try store.update { (doc: inout JSON) throws(Diagnostic) in
                                        doc = ["count": .number(Double((doc["count"]?.intValue ?? 0) + 1))]
                                    }
                                }
                                continuation.resume()
                            } catch { continuation.resume(throwing: error) }
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try store.read()["count"] == 200)
    }

    @Test func defaultPathFollowsXDG() {
        #expect(
            StateStore.defaultPath(environment: "local", processEnvironment: ["XDG_STATE_HOME": "/x/state"])
                == "/x/state/checkout-driver/local/state.json")
        #expect(
            StateStore.defaultPath(environment: "sandbox", processEnvironment: ["HOME": "/home/u"])
                == "/home/u/.local/state/checkout-driver/sandbox/state.json")
    }
}

/// Run scopes, the chain lock, and the file-wide sections that guard money across them.
@Suite struct StateStoreScopeTests {
    /// The chain's lock is taken before the state file is first written, so its folder is made then (owner only), and
    /// only when it is missing.
    @Test func theChainMakesAMissingFolderForItsLock() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = StateStore(path: dir + "/new/folder/state.json")
        let hold = try #require(try store.holdChain(wait: 0, command: "test"))
        let attributes = try FileManager.default.attributesOfItem(atPath: dir + "/new/folder")
        #expect((attributes[.posixPermissions] as? Int) == 0o700)
        let mark = try String(contentsOfFile: dir + "/new/folder/state.json.chain.lock", encoding: .utf8)
        #expect(mark == "pid \(getpid()): test\n")
        withExtendedLifetime(hold) {}
    }

    @Test func aRunSeesTheChainsCapturesButNoProviderSectionAndBecomesTheChainWhenItEnds() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let chain = StateStore(path: dir + "/state.json")
        try chain.update { (doc: inout JSON) throws(Diagnostic) in
            doc = ["captures": ["f": ["x": 1]], "cashapp": ["token": "t-old"]]
        }
        let run = chain.scoped(run: "r1")
        #expect(try run.read() == ["captures": ["f": ["x": 1]]], "a run starts from nothing but the captures")
        try run.update { (doc: inout JSON) throws(Diagnostic) in
            doc = JSONPath(components: [.key("cashapp"), .key("token")]).setting("t-new", in: doc)
        }
        #expect(try chain.read()["cashapp"]?["token"] == "t-old", "a running run does not touch the chain")
        try run.recordCaptures(["y": 2], flow: "f")
        #expect(try chain.read()["captures"] == ["f": ["x": 1, "y": 2]], "captures are the chain's at once")
        try run.finishRun()
        #expect(try chain.read()["cashapp"]?["token"] == "t-new", "the finished run is what single steps continue")
        #expect(try chain.readFile()["runs"]?["r1"]?["cashapp"]?["token"] == "t-new", "and the file remembers the run")
    }

    @Test func parallelRunsLoseNoCaptureWhateverOrderTheyEndIn() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let chain = StateStore(path: dir + "/state.json")
        let a = chain.scoped(run: "a")
        let b = chain.scoped(run: "b")
        try a.recordCaptures(["x": 1, "id": "a"], flow: "fa")
        try b.recordCaptures(["y": 2, "id": "b"], flow: "fb")
        try b.finishRun()
        try a.finishRun()
        #expect(
            try chain.read()["captures"] == ["fa": ["x": 1, "id": "a"], "fb": ["y": 2, "id": "b"]],
            "each flow keeps its own, the same name included")
        #expect(
            try chain.readFile()["runs"]?["a"]?["captures"] == nil,
            "a run's captures are the chain's, not a copy of its own")
    }

    @Test func aProviderSectionWithAnOpenOutcomeStaysWithItsRunAndOldRunsAreForgotten() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let chain = StateStore(path: dir + "/state.json")
        try chain.update { (doc: inout JSON) throws(Diagnostic) in doc = ["centra": ["session": "chain-session"]] }
        let open = chain.scoped(run: "open")
        try open.update { (doc: inout JSON) throws(Diagnostic) in doc = ["centra": ["session": "paid-session"]] }
        try OpenOutcomes.record(
            OpenOutcome(
                provider: "centra", reference: "session of run open", replay: nil, effect: "the payment",
                settle: [], since: "t", run: "open"), in: chain)
        try open.finishRun()
        #expect(try chain.read()["centra"]?["session"] == "chain-session", "the open payment's session is not promoted")
        for i in 0..<(StateStore.keptRuns + 3) {
            let run = chain.scoped(run: "r\(i)")
            try run.update { (doc: inout JSON) throws(Diagnostic) in doc = ["bahn": ["lastIntent": .string("pi_\(i)")]]
            }
            try run.finishRun()
        }
        let runs = try #require(try chain.readFile()["runs"]?.objectValue)
        #expect(runs["open"] != nil, "a run with an open outcome is always kept")
        #expect(runs.count == StateStore.keptRuns + 1, "\(runs.keys.sorted())")
    }

    @Test func theChainIsHeldByOneCommandAndASecondOneIsRefusedAfterItsWait() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = StateStore(path: dir + "/state.json")
        var held: ChainLock? = try store.holdChain(wait: 1, command: "checkout-driver cashapp capture")
        #expect(held != nil)
        let started = Date()
        do {
            _ = try store.holdChain(wait: 0.3, command: "checkout-driver cashapp payment")
            Issue.record("a second holder was let in")
        } catch {
            #expect(error.code == .unavailable)
            #expect(
                error.message.contains("in use by another command (pid \(getpid()): checkout-driver cashapp capture)"),
                "\(error.message)")
            #expect(error.hint?.contains("--session FILE") == true)
        }
        #expect(Date().timeIntervalSince(started) >= 0.3, "it waited its bound")
        held = nil
        #expect(
            try store.holdChain(wait: 0.3, command: "checkout-driver cashapp payment") != nil,
            "released with its holder")
    }

    /// A process's runs finishing at once share one hold of the chain, which another command (a single step, in this
    /// process or another) still waits for; it is let go with its last holder.
    @Test func runsFinishingAtOnceShareOneHoldOfTheChain() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = StateStore(path: dir + "/state.json")
        var first = try store.ownRun("r1").holdChain(wait: 0, command: "checkout-driver flow run", finishingRun: true)
        var second = try store.ownRun("r2").holdChain(wait: 0, command: "checkout-driver flow run", finishingRun: true)
        #expect(first != nil && first === second)
        #expect(throws: Diagnostic.self) { try store.holdChain(wait: 0.1, command: "checkout-driver bahn confirm") }
        first = nil
        #expect(throws: Diagnostic.self) { try store.holdChain(wait: 0.1, command: "checkout-driver bahn confirm") }
        second = nil
        #expect(
            try store.holdChain(wait: 0.3, command: "checkout-driver bahn confirm") != nil,
            "let go with its last holder")
        // A hold for a single step is never shared, with another single step or with a finishing run.
        let step = try store.holdChain(wait: 0, command: "checkout-driver bahn confirm")
        #expect(throws: Diagnostic.self) {
            try store.ownRun("r3").holdChain(wait: 0.1, command: "checkout-driver flow run", finishingRun: true)
        }
        withExtendedLifetime(step) {}
    }

    @Test func aRunStillGoingIsNeverForgottenAndAChainsOpenPaymentKeepsItsSession() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let chain = StateStore(path: dir + "/state.json")
        let going = chain.scoped(run: "going")
        try going.update { (doc: inout JSON) throws(Diagnostic) in doc = ["cashapp": ["token": "t-going"]] }
        for i in 0...StateStore.keptRuns {
            let run = chain.scoped(run: "r\(i)")
            try run.update { (doc: inout JSON) throws(Diagnostic) in doc = ["bahn": ["lastIntent": .string("pi_\(i)")]]
            }
            try run.finishRun()
        }
        #expect(try going.read()["cashapp"]?["token"] == "t-going", "a run halfway through keeps its checkout")
        #expect(try chain.runningScopes().keys.sorted() == ["going"])

        try chain.update { (doc: inout JSON) throws(Diagnostic) in
            doc = JSONPath(components: [.key("centra"), .key("session")]).setting("paid", in: doc)
        }
        try OpenOutcomes.record(
            OpenOutcome(
                provider: "centra", reference: "session", replay: nil, effect: "the payment", settle: [], since: "t"),
            in: chain)
        let later = chain.scoped(run: "later")
        try later.update { (doc: inout JSON) throws(Diagnostic) in doc = ["centra": ["session": "new"]] }
        try later.finishRun()
        #expect(try chain.read()["centra"]?["session"] == "paid", "the chain's open payment keeps its session")
    }
}
