import Foundation
import TestSupport
import Testing

@testable import CheckoutKit

/// A token a run makes for itself never goes through the disk: it is kept in the run's memory under its scratch
/// directory's name, and whatever reads a file the flow names reads it there.
@Suite struct MadeTokenTests {
    @Test func aRunsOwnTokenPaysAndIsSentFromMemoryWithoutAFile() async throws {
        let rig = try BahnRig()
        var services = RunServices()
        services.scratchDirectory = rig.directory + "/scratch"
        let echo =
            #"{"name":"echo","request":{"method":"POST","url":"\#(rig.emulator.baseURL)/_sandbox/echo","bodyFile":"${vars.token_file}"}}"#
        let result = try await rig.run(BahnRig.paySteps(order: "m-1") + "," + echo, services: services)
        #expect(result.passed, "\(String(describing: result.failure))")
        let path = try #require(result.captures["token_file"]?.stringValue)
        #expect(path.hasPrefix(rig.directory + "/scratch/token-"))
        #expect(!FileManager.default.fileExists(atPath: path), "never written")
        #expect(!FileManager.default.fileExists(atPath: rig.directory + "/scratch"))
        // The raw request sent the token's bytes, read from memory.
        let sent = try #require(rig.emulator.receivedRequests().last { $0.path == "/_sandbox/echo" })
        let token = try JSON.parse(sent.body)
        #expect(
            token["version"] == "EC_v1" && token["data"] != nil,
            "\(String(decoding: sent.body, as: UTF8.self).prefix(80))")
    }

    @Test func aTokenTheFlowNamesAFileForIsWrittenThere() async throws {
        let rig = try BahnRig()
        var services = RunServices()
        services.scratchDirectory = rig.directory + "/scratch"
        let out = rig.directory + "/mine.json"
        let steps =
            #"{"name":"make-token","use":"applepay.makeToken","with":{"amount":100,"currency":"VND","out":"\#(out)"},"capture":{"token_file":"path"}}"#
        let result = try await rig.run(steps, services: services)
        #expect(result.passed, "\(String(describing: result.failure))")
        #expect(result.captures["token_file"]?.stringValue == out)
        let written = try PaymentTokenFile.read(path: out, redactor: nil)
        #expect(written.version == "EC_v1")
    }
}
