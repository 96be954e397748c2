import COpenSSLSetup
import Crypto
import Foundation
import Testing
import TestSupport

/// A process may end while other threads still use OpenSSL (the test runner's exit with an emulator's workers still
/// verifying a token): OpenSSL must not free its locks under them in an at-exit handler of its own
/// (Sources/COpenSSLSetup).
@Suite struct ProcessExitTests {
    static let childMark = "CRYPTO_TESTS_EXIT_WHILE_SIGNING"

    @Test func theSetUpRanBeforeAnythingElseCalledOpenSSL() {
        #expect(copenssl_setup_done() == 1)
    }

    /// Without the set-up, about one such exit in two crashed (SIGSEGV on a freed lock); ten in a row must all end 0.
    @Test func aProcessExitsCleanlyWhileThreadsStillSignAndParseKeys() throws {
        if ProcessInfo.processInfo.environment[Self.childMark] != nil { Self.exitWhileSigning() }
        let executable = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        var environment = ProcessInfo.processInfo.environment
        environment[Self.childMark] = "1"
        for attempt in 1...10 {
            let run = try runTool(
                executable,
                ["--testing-library", "swift-testing", "--filter", "ProcessExitTests/aProcessExitsCleanly"],
                environment: environment, mergingErrors: true)
            #expect(run.status == 0, "exit \(attempt) of 10 ended \(run.status): \(run.output.suffix(400))")
            if run.status != 0 { break }
        }
    }

    /// The child's side: three threads sign, verify and parse keys without pause while this one calls `exit(0)`.
    private static func exitWhileSigning() -> Never {
        for _ in 0..<3 {
            Thread.detachNewThread {
                while true {
                    let key = P256PrivateKey()
                    let message = Data("exit while signing".utf8)
                    let parsed = try? P256PublicKey(pem: key.publicKey.pemRepresentation)
                    _ = parsed?.verifyES256(signature: key.signES256(message), message: message)
                }
            }
        }
        usleep(20_000)
        exit(0)
    }
}
