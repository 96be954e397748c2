import CheckoutKit
import Foundation
import Testing

@Suite final class TokenFileTests {
    /// One directory per test, removed afterwards (Swift Testing makes a fresh instance for every test).
    let directory: URL

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("token-files-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: directory) }

    static let txid = String(repeating: "ab", count: 32)
    static let goodToken =
        #"{"data":"c2VjcmV0LXBheW1lbnQtZGF0YQ==","signature":"c2lnbmF0dXJlLWJ5dGVz","header":{"ephemeralPublicKey":"MFkwEwYHKoZIzj0C","publicKeyHash":"aGFzaA==","transactionId":"\#(txid)"},"version":"EC_v1"}"#

    /// A fresh temporary file holding `bytes`.
    func file(_ bytes: Data) throws -> String {
        let path = directory.appendingPathComponent("token-\(UUID().uuidString).json").path
        try bytes.write(to: URL(fileURLWithPath: path))
        return path
    }

    func file(_ text: String) throws -> String { try file(Data(text.utf8)) }

    /// Reads `path`, expecting a data error; returns message + hint for matching.
    func failure(_ path: String) -> (message: String, hint: String) {
        do {
            _ = try PaymentTokenFile.read(path: path, redactor: nil)
            Issue.record("expected \(path) to be refused")
            return ("", "")
        } catch {
            #expect(error.code == .dataError)
            #expect(error.message.contains(path), "message names the file: \(error.message)")
            #expect(error.hint != nil, "every refusal names a fix")
            #expect(!error.message.contains("\n"))
            return (error.message, error.hint ?? "")
        }
    }

    @Test func emptyFile() throws {
        #expect(failure(try file("")).message.contains("is empty"))
        #expect(failure(try file("  \n")).message.contains("is empty"))
    }

    @Test func notUTF8() throws {
        #expect(failure(try file(Data([0x7B, 0xFF, 0xFE, 0x7D]))).message.contains("not UTF-8"))
    }

    @Test func notJSON() throws {
        #expect(failure(try file("data=abc&signature=def")).message.contains("not JSON"))
    }

    @Test func notAnObject() throws {
        #expect(failure(try file("[1,2,3]")).message.contains("an array, not a JSON object"))
    }

    @Test func tokenEncodedAsAJSONString() throws {
        let doubled = JSON.string(Self.goodToken).serialized()
        #expect(failure(try file(doubled)).message.contains("encoded twice"))
    }

    @Test(arguments: ["data", "signature", "header", "version"])
    func missingTopLevelKey(_ key: String) throws {
        var object = try #require(try JSONSerialization.jsonObject(with: Data(Self.goodToken.utf8)) as? [String: Any])
        object[key] = nil
        let path = try file(try JSONSerialization.data(withJSONObject: object))
        #expect(failure(path).message.contains("missing '\(key)'"))
    }

    @Test func missingSeveralKeysNamesThemAll() throws {
        #expect(failure(try file(#"{"data":"abc"}"#)).message.contains("missing 'signature', 'header' and 'version'"))
    }

    @Test(arguments: ["ephemeralPublicKey", "publicKeyHash", "transactionId"])
    func headerMissingKey(_ key: String) throws {
        let broken = Self.goodToken.replacingOccurrences(of: "\"\(key)\":", with: "\"x\(key)\":")
        #expect(failure(try file(broken)).message.contains("header missing '\(key)'"))
    }

    @Test func rsaVersionIsNotSupported() throws {
        let failure = failure(try file(Self.goodToken.replacingOccurrences(of: "EC_v1", with: "RSA_v1")))
        #expect(failure.message.contains("RSA_v1 is not supported"))
    }

    @Test func unknownVersion() throws {
        let failure = failure(try file(Self.goodToken.replacingOccurrences(of: "EC_v1", with: "EC_v9")))
        #expect(failure.message.contains("unknown version 'EC_v9'"))
        #expect(failure.message.contains("RSA_v1 is not supported"))
    }

    @Test func base64WrappedToken() throws {
        let wrapped = Data(Self.goodToken.utf8).base64EncodedString() + "\n"
        let path = try file(wrapped)
        let failure = failure(path)
        #expect(failure.message.contains("base64"))
        #expect(failure.hint.contains("base64 -d \(path) > token.json"))
        #expect(failure.hint.contains("as PassKit produced them"))
    }

    @Test func wholePKPayment() throws {
        let payment =
            #"{"token":{"paymentData":\#(Self.goodToken),"paymentMethod":{"network":"Visa"},"transactionIdentifier":"AB"}}"#
        let failure = failure(try file(payment))
        #expect(failure.message.contains("PKPayment"))
        #expect(failure.message.contains("token.paymentData"))
    }

    @Test func wholePKPaymentTokenWithBase64PaymentData() throws {
        let encoded = Data(Self.goodToken.utf8).base64EncodedString()
        let failure = failure(try file(#"{"paymentData":"\#(encoded)","transactionIdentifier":"AB"}"#))
        #expect(failure.message.contains("PKPaymentToken"))
        #expect(failure.message.contains("base64-encoded at paymentData"))
        #expect(failure.hint.contains("base64 -d"))
    }

    @Test func wholePKPaymentToken() throws {
        let failure = failure(try file(#"{"paymentData":\#(Self.goodToken),"transactionIdentifier":"AB"}"#))
        #expect(failure.message.contains("PKPaymentToken; the token is the value at paymentData"))
    }

    @Test func truncatedFile() throws {
        let cut = String(Self.goodToken.prefix(Self.goodToken.count - 30))
        // Named with where it ends, as every file cut short is.
        #expect(
            failure(try file(cut)).message.contains(
                "looks truncated: the JSON ends before its last object or string is closed (unterminated string at line 1, column \(cut.count + 1)"
            ))
    }

    @Test func goodTokenIsReadByteForByte() throws {
        // Odd key order and a trailing newline: both must survive untouched.
        let odd =
            #"{"version":"EC_v1","header":{"transactionId":"\#(Self.txid)","publicKeyHash":"aGFzaA==","ephemeralPublicKey":"MFkwEwYHKoZIzj0C"},"signature":"c2lnbmF0dXJlLWJ5dGVz","data":"c2VjcmV0LXBheW1lbnQtZGF0YQ=="}"#
            + "\n"
        let bytes = Data(odd.utf8)
        let token = try PaymentTokenFile.read(path: try file(bytes), redactor: nil)
        #expect(token.bytes == bytes)
        #expect(token.transactionId == Self.txid)
        #expect(token.version == "EC_v1")
    }

    @Test func redactorMasksDataAndSignatureAfterRead() throws {
        let redactor = Redactor()
        #expect(
            try PaymentTokenFile.read(path: try file(Self.goodToken), redactor: redactor).transactionId == Self.txid)
        let shown = redactor.text("sent c2VjcmV0LXBheW1lbnQtZGF0YQ== with c2lnbmF0dXJlLWJ5dGVz")
        #expect(!shown.contains("c2VjcmV0LXBheW1lbnQtZGF0YQ=="))
        #expect(!shown.contains("c2lnbmF0dXJlLWJ5dGVz"))
        #expect(shown.contains(Redactor.mask))
        #expect(redactor.text(Self.goodToken) == Redactor.mask)
        // Whole in base64, as Adyen's applepay.token carries it.
        #expect(redactor.text(Data(Self.goodToken.utf8).base64EncodedString()) == Redactor.mask)
    }

    /// A file that writes its data's "/" as "\/" (PHP, NSJSONSerialization) does not spell its parts as they are
    /// registered: it is masked in every escaped copy by its own spellings.
    @Test func aTokenFileThatEscapesItsSlashesIsMaskedInEveryCopy() throws {
        let text = Self.goodToken.replacingOccurrences(
            of: "c2VjcmV0LXBheW1lbnQtZGF0YQ==", with: #"c2VjcmV0\/L3BheW1lbnQ\/ZGF0YT4+\/d2l0aCBzbGFzaGVz"#)
        let redactor = Redactor()
        _ = try PaymentTokenFile.read(path: try file(text), redactor: redactor)
        let copies = [
            text, String(JSON.string(text).serialized().dropFirst().dropLast()),
            PercentEncoding.encoded(text, keeping: PercentEncoding.unreserved),
            Data(text.utf8).base64EncodedString(),
        ]
        for copy in copies {
            let shown = redactor.text("sent \(copy) here")
            #expect(shown == "sent \(Redactor.mask) here", "\(shown)")
        }
    }

    @Test func missingFile() throws {
        let path = "/nonexistent/token.json"
        #expect(throws: Diagnostic.self) { try PaymentTokenFile.read(path: path, redactor: nil) }
    }
}
