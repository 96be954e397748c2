/// Exit codes follow sysexits(3), as docs/architecture.md, "Exit codes", lists them.
public enum ExitCode: Int32, Sendable, Codable, CaseIterable {
    case ok = 0
    /// The flow ran and failed: a decline, an expectation not met.
    case failure = 1
    case usage = 64
    /// Bad input data: a malformed token, flow or address file.
    case dataError = 65
    /// A service unreachable or timing out.
    case unavailable = 69
    case internalError = 70
    /// `EX_IOERR`: an output could not be written (no space, a read-only file, standard output closed).
    case ioError = 74
    /// `EX_TEMPFAIL`: the outcome of a step that moves money is unknown; the message says how to settle it.
    case outcomeUnknown = 75
    case configuration = 78
    /// Stopped by SIGINT (128 + 2) or SIGTERM (128 + 15), as shells report it.
    case interrupted = 130
    case terminated = 143
    /// Standard output's reader closed the pipe (`… | head -1`): the command ended quietly, with the status of a
    /// process SIGPIPE ends (128 + 13), as other tools do.
    case readerGone = 141

    /// What the code tells a script, in a line: the manual's EXIT STATUS (`checkout-driver manual`) lists them all.
    public var meaning: String {
        switch self {
        case .ok:
            "Success; also a server (sandbox serve, bahn listen, monitor) stopped by SIGINT or SIGTERM."
        case .failure:
            "The flow ran and failed: an expectation not met, a decline, an object the service does not have."
        case .usage: "Usage: an unknown command or option, a bad value."
        case .dataError: "Bad input data: a malformed flow, token, data, .env, config or state file."
        case .unavailable: "A service unreachable or timing out, or the flow's deadline passed."
        case .internalError: "An internal error."
        case .ioError: "An output could not be written: no space, a read-only file, standard output closed."
        case .outcomeUnknown:
            "The outcome of a step that moves money is unknown (it may have gone through): the message gives the "
                + "commands that settle it. Also a payment refused while an earlier one's outcome is still open."
        case .configuration:
            "Configuration missing or wrong: a credential the environment needs (each named), an unknown --env."
        case .interrupted: "Interrupted by SIGINT (Ctrl-C); finally steps and reports still ran."
        case .terminated: "Terminated by SIGTERM; finally steps and reports still ran."
        case .readerGone: "Standard output's reader closed the pipe (| head): the command stopped writing, quietly."
        }
    }
}

/// The one error type that reaches the user. Everything below the command line throws it (or something
/// that converts into it), and a single place in the CLI prints it — redacted — and exits with its code.
public struct Diagnostic: Error, Sendable, CustomStringConvertible {
    public var code: ExitCode
    /// One line naming the problem.
    public var message: String
    /// One line naming the fix, when there is one.
    public var hint: String?
    /// The request may have reached the server and no trustworthy answer came back (lost, cut short, malformed,
    /// timed out): whatever it asked for may or may not have happened. Operations that move money read back.
    public var outcomeUncertain = false
    /// The service said "not now" (429) on every attempt: nothing was done, and nothing about an earlier call answered.
    public var rateLimited = false

    public init(_ code: ExitCode, _ message: String, hint: String? = nil) {
        self.code = code
        self.message = message
        self.hint = hint
    }

    public var description: String { hint.map { "\(message)\nhint: \($0)" } ?? message }

    public static func usage(_ message: String, hint: String? = nil) -> Diagnostic {
        .init(.usage, message, hint: hint)
    }
    public static func data(_ message: String, hint: String? = nil) -> Diagnostic {
        .init(.dataError, message, hint: hint)
    }
    public static func configuration(_ message: String, hint: String? = nil) -> Diagnostic {
        .init(.configuration, message, hint: hint)
    }
    public static func unavailable(_ message: String, hint: String? = nil) -> Diagnostic {
        .init(.unavailable, message, hint: hint)
    }
    public static func failure(_ message: String, hint: String? = nil) -> Diagnostic {
        .init(.failure, message, hint: hint)
    }
    public static func internalError(_ message: String) -> Diagnostic { .init(.internalError, message) }
    public static func ioError(_ message: String, hint: String? = nil) -> Diagnostic {
        .init(.ioError, message, hint: hint)
    }

    /// The answer to a request that may have taken effect was lost: see `outcomeUncertain`.
    public static func uncertain(_ message: String, hint: String? = nil) -> Diagnostic {
        var d = Diagnostic(.unavailable, message, hint: hint)
        d.outcomeUncertain = true
        return d
    }

    /// The run was interrupted (Ctrl-C); the command line turns it into 130 or 143 by the signal.
    public static func interrupted(during step: String) -> Diagnostic {
        .init(
            .interrupted, "interrupted during step '\(step)'",
            hint: "finally steps ran and the reports were written; run the flow again when ready")
    }
}
