import CheckoutCLI
import CheckoutKit
import Foundation
import WireTypes

/// The file and text readers: flow files, token files, HAR recordings, `.env` and config files, JSON, command lines.
enum Readers {
    static let registry = OperationRegistry(Providers.all.flatMap(\.operations))

    static func flowFile(_ bytes: [UInt8]) {
        // A file of its own, so that an `include` of a relative path resolves beside it (and mostly finds nothing).
        let path = Scratch.file("flow.json", bytes)
        do throws(Diagnostic) {
            _ = try FlowFile.decode(Data(bytes), source: path, registry: registry)
        } catch {
            expectClearRefusal(error, "flow file")
        }
    }

    static func tokenFile(_ bytes: [UInt8]) {
        let path = Scratch.file("token.json", bytes)
        do throws(Diagnostic) {
            // No redactor: registering the token's values costs four times the reading, a million inputs must fit in
            // the hour, and what it does with them (encoding a string several ways) is not reading hostile bytes.
            let token = try PaymentTokenFile.read(path: path, redactor: nil)
            // Sent exactly as read: nothing trimmed or re-encoded.
            precondition(token.bytes == Data(bytes), "a token file's bytes changed on reading")
        } catch {
            expectClearRefusal(error, "token file")
        }
    }

    static func har(_ bytes: [UInt8]) {
        do throws(Diagnostic) {
            _ = try Recording.parse(Data(bytes), source: "fuzz.har")
        } catch {
            expectClearRefusal(error, "HAR file")
        }
    }

    static func dotEnv(_ bytes: [UInt8]) {
        let path = Scratch.file("fuzz.env", bytes)
        do throws(Diagnostic) {
            _ = try ConfigurationLoader(
                processEnvironment: ["HOME": Scratch.directory], workingDirectory: Scratch.directory
            )
            .load(environmentFlag: "sandbox", configPath: nil, envFile: path)
        } catch {
            expectClearRefusal(error, ".env file")
        }
    }

    static func configFile(_ bytes: [UInt8]) {
        let path = Scratch.file("config.json", bytes)
        do throws(Diagnostic) {
            _ = try ConfigurationLoader(
                processEnvironment: ["HOME": Scratch.directory], workingDirectory: Scratch.directory
            )
            .load(environmentFlag: nil, configPath: path)
        } catch {
            expectClearRefusal(error, "config file")
        }
    }

    /// JSON read, written and read again is the same value, compact or pretty.
    static func json(_ bytes: [UInt8]) {
        guard let value = try? JSON.parse(Data(bytes)) else { return }
        for pretty in [false, true] {
            let text = value.serialized(pretty: pretty)
            guard let again = try? JSON.parse(text) else {
                preconditionFailure("JSON the writer wrote does not parse: \(text.prefix(200))")
            }
            // Numbers are kept as written, so the text comes back byte for byte, whatever a double would make of it.
            precondition(
                again == value && again.serialized(pretty: pretty) == text,
                "JSON changed on a round trip: \(text.prefix(200))")
        }
    }

    /// Arguments separated by NUL bytes (as a shell hands them over). Parsed only: nothing is run.
    static func commandLine(_ bytes: [UInt8]) {
        let arguments = bytes.split(separator: 0, omittingEmptySubsequences: false).map {
            String(decoding: $0, as: UTF8.self)
        }
        do throws(Diagnostic) {
            _ = try CheckoutDriver.parse(arguments)
        } catch {
            expectClearRefusal(error, "command line")
        }
    }
}
