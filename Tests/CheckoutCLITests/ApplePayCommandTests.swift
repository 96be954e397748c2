import Foundation
import TestSupport
import Testing

@Suite struct ApplePayCommandTests {
    /// The secret parts of a token: none of them may be echoed anywhere but the token's own destination.
    func secrets(of token: Data) async throws -> [String] {
        let object = try #require(try JSONSerialization.jsonObject(with: token) as? [String: Any])
        let header = try #require(object["header"] as? [String: String])
        return [object["data"] as? String, object["signature"] as? String, header["ephemeralPublicKey"]].compactMap {
            $0
        }
    }

    @Test func writesTheTokenToAFile() async throws {
        let scratch = try Scratch()
        let directory = scratch.url
        let out = directory.appendingPathComponent("token.json").path
        let result = try await BinaryRunner.run([
            "applepay", "token", "--amount", "8000", "--currency", "VND", "--out", out,
        ])
        #expect(result.status == 0, "\(result.stderr)")

        let mode = try FileManager.default.attributesOfItem(atPath: out)[.posixPermissions] as? NSNumber
        #expect(mode?.intValue == 0o600)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: out))
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(text.hasPrefix("{\"data\":\""))
        #expect(text.hasSuffix("\"version\":\"EC_v1\"}"))
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.contains("8000") && result.stderr.contains("704"))
        let secrets = try await secrets(of: bytes)
        #expect(secrets.count == 3)
        for secret in secrets {
            #expect(!result.stdout.contains(secret) && !result.stderr.contains(secret))
        }
        // No temporary file is left behind next to the token.
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["token.json"])
    }

    @Test func stdoutCarriesTheTokenBytesOnly() async throws {
        let result = try await BinaryRunner.run(["applepay", "token", "--amount", "1500", "--currency", "USD", "-q"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.hasPrefix("{\"data\":\""))
        #expect(result.stdoutData.last == UInt8(ascii: "}"))
        #expect(try JSONSerialization.jsonObject(with: result.stdoutData) is [String: Any])
        #expect(result.stderr.isEmpty)
    }

    @Test func negativeAmountIsAUsageError() async throws {
        let result = try await BinaryRunner.run(["applepay", "token", "--amount", "-5"])
        #expect(result.status == 64)
        #expect(
            result.stderr.contains(
                "error: --amount -5 is negative\nhint: give digits for minor units (1234 is 1234 VND) or a whole number of VND (1234)"
            ), "\(result.stderr)")
        #expect(result.stdout.isEmpty)
    }

    @Test func unknownCurrencyIsAUsageError() async throws {
        let result = try await BinaryRunner.run(["applepay", "token", "--amount", "100", "--currency", "XYZ"])
        #expect(result.status == 64)
        #expect(result.stderr.contains("unknown currency 'XYZ'"))
        #expect(result.stderr.contains("numeric such as 840"), "\(result.stderr)")
    }

    @Test func missingAmountIsAUsageError() async throws {
        let result = try await BinaryRunner.run(["applepay", "token"])
        #expect(result.status == 64)
        #expect(result.stderr.contains("--amount"))
    }
}
