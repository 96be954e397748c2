import Foundation
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
            doc = ["cashapp": ["token": "002.checkout-token", "jwt": "a.b.c-signed", "redirectUri": "https://m.example/r?t=002.checkout-token",
                               "requestKey": "k-merchant-secret-key"],
                   "centra": ["session": "session-token-1"], "other": ["token": "002.checkout-token"]]
        }
        let written = try String(contentsOfFile: dir + "/state.json", encoding: .utf8)
        for kept in ["002.checkout-token\"", "a.b.c-signed", "https://m.example/r?t=002.checkout-token", "session-token-1"] {
            #expect(written.contains(kept), "\(kept) kept: \(written)")
        }
        #expect(!written.contains("merchant-secret-key"), "a configured secret is masked")
        #expect(try JSON.parse(written)["other"]?["token"] == "[REDACTED]", "a token elsewhere is masked")
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
        try store.update { (doc: inout JSON) throws(Diagnostic) in doc = ["note": "sk_live_zzzzzz", "client_secret": "x"] }
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
        let onUpdate = diagnostic { () throws(Diagnostic) in try store.update { (doc: inout JSON) throws(Diagnostic) in doc = [:] } }
        #expect(onUpdate?.code == .dataError)
        #expect(FileManager.default.contents(atPath: path) == garbage)
        // A JSON document that is not an object is corrupt too.
        try Data("[1,2]".utf8).write(to: URL(fileURLWithPath: path))
        #expect(diagnostic { () throws(Diagnostic) in try store.read() }?.code == .dataError)
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
        #expect(StateStore.defaultPath(environment: "local", processEnvironment: ["XDG_STATE_HOME": "/x/state"])
            == "/x/state/checkout-driver/local/state.json")
        #expect(StateStore.defaultPath(environment: "sandbox", processEnvironment: ["HOME": "/home/u"])
            == "/home/u/.local/state/checkout-driver/sandbox/state.json")
    }
}
