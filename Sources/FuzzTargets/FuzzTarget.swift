import CheckoutCLI
import CheckoutKit
import Foundation
import GraphQL
import SandboxEmulator
import WireTypes

/// What the fuzzers feed hostile bytes to: every reader of input a user or a peer controls, through the same public
/// entry points the tool itself uses. Each target holds its reader to the rule the README promises — a clear error
/// (a `Diagnostic` that is not an internal error, with a message), never a crash — and, where there is one, to a
/// property (JSON written then read is the same value). A broken rule traps, which the fuzzer reports as a crash.
///
/// `Scripts/fuzz` runs these under libFuzzer with AddressSanitizer; the regression tests run every file of the starting
/// corpora and of the crashers found (`Fuzz/`) through them in the ordinary test build.
public enum FuzzTarget: String, CaseIterable, Sendable {
    case flowFile = "flow-file"
    case tokenFile = "token-file"
    case har
    case dotEnv = "dot-env"
    case configFile = "config-file"
    case graphQLDocument = "graphql-document"
    case graphQLSchema = "graphql-sdl"
    case httpRequest = "http-request"
    case json
    case commandLine = "command-line"

    /// Feeds `bytes` to the target's reader.
    public func run(_ bytes: [UInt8]) {
        switch self {
        case .flowFile: Readers.flowFile(bytes)
        case .tokenFile: Readers.tokenFile(bytes)
        case .har: Readers.har(bytes)
        case .dotEnv: Readers.dotEnv(bytes)
        case .configFile: Readers.configFile(bytes)
        case .graphQLDocument: GraphQLTargets.document(bytes)
        case .graphQLSchema: GraphQLTargets.schema(bytes)
        case .httpRequest: HTTPTarget.request(bytes)
        case .json: Readers.json(bytes)
        case .commandLine: Readers.commandLine(bytes)
        }
    }
}

/// A refusal as the tool must give it: one `Diagnostic`, with a message, that is not an internal error.
func expectClearRefusal(_ error: Diagnostic, _ what: String) {
    precondition(!error.message.isEmpty, "\(what): a refusal with no message")
    precondition(error.code != .internalError, "\(what): an internal error: \(error.message)")
    precondition(error.code != .ok, "\(what): a refusal that exits 0: \(error.message)")
}

/// A file the readers that take a path read: one per process (a fuzzer runs one input at a time), in memory where the
/// system has a RAM-backed folder — a million inputs written to disk, each one synced by an atomic write, would make
/// the disk, not the reader, what is measured.
enum Scratch {
    static let directory: String = {
        let base = FileManager.default.fileExists(atPath: "/dev/shm") ? "/dev/shm/" : NSTemporaryDirectory()
        let path = base + "checkout-fuzz-\(getpid())"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }()

    static func file(_ name: String, _ bytes: [UInt8]) -> String {
        let path = directory + "/" + name
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        precondition(fd >= 0, "cannot write \(path): \(String(cString: strerror(errno)))")
        defer { close(fd) }
        var written = 0
        while written < bytes.count {
            let n = bytes[written...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            precondition(n > 0, "cannot write \(path): \(String(cString: strerror(errno)))")
            written += n
        }
        return path
    }
}
