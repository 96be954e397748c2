import Foundation
import Synchronization
import TestSupport
import Testing

@testable import CheckoutKit

/// A money call of a whole flow's run is on disk as in flight before its request leaves, and settled by whatever answer
/// comes back: a crash between the two leaves it open, an ending the process lives to see never does.
@Suite struct InFlightOutcomeTests {
    /// A transport that reads the state file from disk as each confirm leaves (what a crash at that moment would
    /// leave).
    final class Peeking: HTTPClient, @unchecked Sendable {
        let path: String
        /// The file's bytes as each confirm left.
        let seen = Mutex<[Data]>([])
        private let inner = CurlTransport(options: .direct)

        init(path: String) { self.path = path }

        func send(_ request: HTTPClientRequest) async throws(TransportError) -> HTTPClientResponse {
            if request.method == "POST" && request.url.hasSuffix("/confirm") {
                let disk = (try? Data(contentsOf: URL(fileURLWithPath: path))) ?? Data()
                seen.withLock { $0.append(disk) }
            }
            return try await inner.send(request)
        }
    }

    static func outcomes(_ document: [String: Any]) -> [[String: Any]] {
        ((document["openOutcomes"] as? [String: Any]) ?? [:]).values.compactMap { $0 as? [String: Any] }
    }

    @Test func theConfirmIsOnDiskAsInFlightBeforeItLeavesAndTheRunsTwoWritesSettleIt() async throws {
        let rig = try BahnRig()
        let run = rig.state.ownRun("run-1")
        let peeking = Peeking(path: rig.state.path)
        let writesBefore = SharedStateFile.at(rig.state.path).writes
        let result = try await rig.run(BahnRig.paySteps(order: "f-1"), state: run, client: peeking)
        #expect(result.passed, "\(String(describing: result.failure))")
        let intent = try #require(result.captures["intent"]?.stringValue)

        let bytes = try #require(peeking.seen.withLock { $0 }.first, "the confirm left")
        let atConfirm = try #require(
            try JSONSerialization.jsonObject(with: bytes) as? [String: Any], "the file was there")
        let inFlight = try #require(
            Self.outcomes(atConfirm).first, "in flight on disk before the confirm left: \(atConfirm)")
        #expect(Self.outcomes(atConfirm).count == 1)
        #expect(inFlight["provider"] as? String == "bahn" && inFlight["reference"] as? String == "intent \(intent)")
        #expect(inFlight["run"] as? String == "run-1")
        let process = try #require(inFlight["inFlight"] as? [String: Any])
        #expect(process["pid"] as? Int == Int(getpid()))
        #expect(process["started"] as? String == String(ProcessIdentity.current.started))
        let txid = try #require(result.captures["txid"]?.stringValue)
        #expect(
            inFlight["spends"] as? [String] == [SpentCredentials.key("Apple Pay token", txid)],
            "the token it uses up: \(inFlight)")
        let settle = (inFlight["settle"] as? [String]) ?? []
        #expect(
            settle.contains { $0.contains("--idempotency-key order-f-1-applepay") },
            "the re-send that replays: \(settle)")
        // What a settle command needs went with it: the run's intent and the key the confirm is sent under.
        let scope = (atConfirm["runs"] as? [String: Any])?["run-1"] as? [String: Any]
        let tokens = ((scope?["bahn"] as? [String: Any])?["tokens"] as? [String: Any]) ?? [:]
        #expect(
            tokens.values.contains { ($0 as? [String: Any])?["idempotencyKey"] as? String == "order-f-1-applepay" },
            "\(atConfirm)")

        // The answer settled it in memory; the finish writes that, the spent token and the run's end in one write.
        #expect(try OpenOutcomes.read(run).isEmpty)
        #expect(Self.outcomes(try rig.stateFile()).count == 1, "nothing written between the confirm and the finish")
        try run.finishRun()
        let finished = try rig.stateFile()
        #expect(Self.outcomes(finished).isEmpty, "\(finished)")
        #expect(((finished["spent"] as? [String: Any]) ?? [:]).count == 1)
        #expect(
            (((finished["runs"] as? [String: Any])?["run-1"] as? [String: Any])?["run"] as? [String: Any])?[
                "finishedAt"] != nil)
        #expect(
            SharedStateFile.at(rig.state.path).writes - writesBefore == 2,
            "one write before the money call, one at the finish")
    }

    @Test func aDeclineSettlesTheRecordAndAnOutcomeLeftOpenReplacesIt() async throws {
        // A decline is a clear refusal: nothing stays open.
        let plain = try BahnRig()
        let declined = plain.state.ownRun("declined")
        let refused = try await plain.run(BahnRig.paySteps(amount: 5100, order: "f-2"), state: declined)
        #expect(refused.failure?.code == .failure, "\(String(describing: refused.failure))")
        try declined.finishRun()
        #expect(Self.outcomes(try plain.stateFile()).isEmpty)
        #expect(((try plain.stateFile()["spent"] as? [String: Any]) ?? [:]).count == 1, "a decline uses the token up")
        // An answer lost and not read back: exit 75, an open outcome that is no longer in flight.
        let rig = try BahnRig(
            faults: "POST /api/payment_intents/*/confirm => drop @1-3; GET /api/payment_intents/* => status=503 @1-3")
        let lost = rig.state.ownRun("lost")
        let unknown = try await rig.run(BahnRig.paySteps(order: "f-3"), state: lost)
        #expect(unknown.failure?.code == .outcomeUnknown, "\(String(describing: unknown.failure))")
        try lost.finishRun()
        let open = Self.outcomes(try rig.stateFile())
        #expect(open.count == 1 && open.first?["run"] as? String == "lost", "\(open)")
        #expect(open.first?["inFlight"] == nil, "left open by a run that ended, not in flight: \(open)")
    }

    /// An in-flight entry of a process still running blocks nothing; one whose process is gone is an open outcome.
    @Test(arguments: [true, false])
    func anInFlightEntryBlocksOnlyOnceItsProcessIsGone(running: Bool) async throws {
        let rig = try BahnRig()
        let me = ProcessIdentity.current
        // The same pid with another start time is a process that is gone (this pid's earlier owner).
        let holder = running ? me : ProcessIdentity(pid: me.pid, started: me.started + 1)
        let entry = OpenOutcome(
            provider: "bahn", reference: "intent pi_elsewhere", replay: nil, effect: "the charge",
            settle: ["read the intent's status: `checkout-driver bahn intent pi_elsewhere`"],
            since: "2026-12-05T10:00:00Z", run: "other", inFlight: holder)
        try OpenOutcomes.record(entry, in: rig.state)
        let result = try await rig.run(BahnRig.paySteps(order: running ? "f-4" : "f-5"))
        if running {
            #expect(result.passed, "\(String(describing: result.failure))")
        } else {
            let failure = try #require(result.failure)
            #expect(failure.code == .outcomeUnknown)
            #expect(
                failure.message.contains(
                    "refused before sending: the charge of intent pi_elsewhere (in flight since 2026-12-05T10:00:00Z in process \(me.pid), which ended before it was settled)"
                ),
                "\(failure)")
            #expect(failure.hint?.contains("checkout-driver bahn intent pi_elsewhere") == true)
            #expect(rig.confirmRequests.isEmpty, "nothing sent")
        }
    }

    /// The single-use values a call had in flight count as used until its answer records them — and for good when its
    /// process died first: the same token is refused before sending at any provider.
    @Test func aTokenInFlightWhenItsProcessDiedCountsAsUsedEverywhere() async throws {
        let rig = try BahnRig()
        let (path, token) = try rig.makeToken(amount: 8000)
        let me = ProcessIdentity.current
        var entry = OpenOutcome(
            provider: "centra", reference: "order of session s-1", replay: nil, effect: "the payment",
            settle: ["read the order: `checkout-driver centra order --run gone`"], since: "2026-12-05T10:00:00Z",
            run: "gone", inFlight: ProcessIdentity(pid: me.pid, started: me.started + 1))
        entry.spends = [SpentCredentials.key("Apple Pay token", token.transactionId)]
        try OpenOutcomes.record(entry, in: rig.state)
        #expect(try OpenOutcomes.read(rig.state).first?.spends == entry.spends, "kept in the file as written")
        let result = try await rig.run(
            #"""
            {"name":"create","use":"bahn.createIntent","with":{"amount":8000,"currency":"704","orderId":"f-6","description":"Order #f-6"}},
            {"name":"confirm","use":"bahn.confirm","with":{"orderId":"f-6","tokenFile":"\#(path)"}}
            """#)
        let failure = try #require(result.failure)
        #expect(
            failure.message.contains(
                "refused before sending: this Apple Pay token was already used by the payment of order of session s-1 (in flight since 2026-12-05T10:00:00Z in process \(me.pid), which ended before it was settled)"
            ),
            "\(failure)")
        #expect(rig.confirmRequests.isEmpty, "nothing sent")
    }

    @Test func aProcessIsKnownByItsPidAndStartTime() throws {
        let me = try #require(ProcessIdentity.of(pid: getpid()))
        #expect(me == .current && me.started > 0)
        #expect(me.isRunning)
        #expect(!ProcessIdentity(pid: me.pid, started: me.started + 1).isRunning)
        #expect(ProcessIdentity.of(pid: Int32.max) == nil, "no such process")
        #expect(ProcessIdentity(me.json) == me, "read back as written")
        #expect(ProcessIdentity(["pid": 12, "started": 34]) == nil, "the start time is kept as a string")
    }

    /// A call in flight blocks only once its process is gone without settling it. A process that settles its call and
    /// exits between the guard's read of the file and its look at the process must not pass for one that died with it:
    /// the file is read again after a process is seen gone.
    @Test func aCallSettledJustBeforeItsProcessEndedDoesNotBlock() throws {
        let alive = ProcessIdentity(pid: 100, started: 1)
        let gone = ProcessIdentity(pid: 200, started: 2)
        func outcome(_ reference: String, _ process: ProcessIdentity?) -> OpenOutcome {
            OpenOutcome(
                provider: "bahn", reference: reference, replay: nil, effect: "the charge", settle: [], since: "now",
                inFlight: process)
        }
        let isRunning: (ProcessIdentity) -> Bool = { $0 == alive }
        // The first read still holds the call of the process that is gone by the time it is looked at; the second,
        // made after, no longer does: it was settled.
        var reads = [[outcome("intent pi_1", gone), outcome("intent pi_2", alive)], [outcome("intent pi_2", alive)]]
        var count = 0
        let settled = try OpenOutcomes.blocking(
            read: { () throws(Diagnostic) -> [OpenOutcome] in
                count += 1
                return reads.removeFirst()
            }, isRunning: isRunning)
        #expect(settled.isEmpty, "\(settled)")
        #expect(count == 2, "read again once a process was seen gone")
        // Still there after its process was seen gone: it died with the call, which blocks; a run that ended with an
        // outcome open blocks whatever; the call of a running process never does.
        reads = [
            [outcome("intent pi_1", gone), outcome("intent pi_2", alive), outcome("intent pi_3", nil)],
            [outcome("intent pi_1", gone), outcome("intent pi_2", alive), outcome("intent pi_3", nil)],
        ]
        let left = try OpenOutcomes.blocking(
            read: { () throws(Diagnostic) -> [OpenOutcome] in reads.removeFirst() },
            isRunning: isRunning)
        #expect(left.map(\.reference) == ["intent pi_1", "intent pi_3"])
        // Nothing in flight: one read.
        count = 0
        reads = [[outcome("intent pi_3", nil)]]
        _ = try OpenOutcomes.blocking(
            read: { () throws(Diagnostic) -> [OpenOutcome] in
                count += 1
                return reads.removeFirst()
            },
            isRunning: isRunning)
        #expect(count == 1)
    }
}
