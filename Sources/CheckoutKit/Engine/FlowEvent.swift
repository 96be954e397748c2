import Foundation

/// One HTTP exchange as it happened (after every attempt, failed or not). Reporters redact it before
/// anything leaves the process.
public struct ExchangeRecord: Sendable {
    public var step: String
    public var attempt: Int
    public var startedAt: Date
    public var request: HTTPClientRequest
    public var outcome: Result<HTTPClientResponse, TransportError>
    /// Wall-clock seconds, including time spent in the driver around the transfer.
    public var duration: Double
}

public struct StepResult: Sendable {
    public enum Outcome: String, Sendable, Codable {
        case passed, failed, skipped
    }

    public var name: String
    public var isFinally: Bool
    public var optional: Bool
    public var outcome: Outcome
    public var startedAt: Date
    public var duration: Double
    /// HTTP requests made, retries included.
    public var requests: Int
    public var polls: Int
    public var status: Int?
    public var message: String?
    /// The step's output document, for `--format json`; reporters redact it.
    public var output: JSON?
    /// What the step did with money (`MoneyMovement`), in order.
    public var money: [MoneyMovement] = []

    public init(
        name: String, isFinally: Bool, optional: Bool, outcome: Outcome, startedAt: Date, duration: Double,
        requests: Int,
        polls: Int, status: Int?, message: String?, output: JSON?, money: [MoneyMovement] = []
    ) {
        self.name = name
        self.isFinally = isFinally
        self.optional = optional
        self.outcome = outcome
        self.startedAt = startedAt
        self.duration = duration
        self.requests = requests
        self.polls = polls
        self.status = status
        self.message = message
        self.output = output
        self.money = money
    }
}

public struct FlowResult: Sendable {
    public var name: String
    public var environment: String
    public var startedAt: Date
    public var duration: Double
    public var steps: [StepResult]
    /// The failure that decided the outcome: the first failed required step (or a failed `finally` step).
    public var failure: Diagnostic?
    /// Values captured by the flow's steps.
    public var captures: JSON.Object
    /// Which run of the flow this was in a batch (`--repeat`), from 1; nil for a flow that ran once.
    public var repetition: Int?
    /// The id of the `--data` row this run took its variables from.
    public var row: String?
    /// A run whose data row expects it to fail, and it failed: what it failed with (its `failure` then nil).
    public var expectedFailure: String?

    /// How reports tell this run from the flow's others: `bahn-apple-pay[decline]` for a data row, `#3` after it in a
    /// batch, else the flow's name.
    public var label: String {
        name + (row.map { "[\($0)]" } ?? "") + (repetition.map { "#\($0)" } ?? "")
    }

    /// Judges the run by what its data row expects: a run that failed (exit 1) as the row expects it to has passed the
    /// row, its failure kept as `expectedFailure`; one that passed where the row expects a failure has failed it. An
    /// unknown money outcome or an interruption stays what it is: no row can expect money in doubt.
    public mutating func judge(expectingFailure: Bool) {
        guard expectingFailure else { return }
        if let failure {
            // A run that failed for another reason after money went into doubt (an optional step's lost answer, a
            // `finally` void) still left it open: no row passes that.
            guard failure.code == .failure, !failure.outcomeUncertain, !leftMoneyOpen else { return }
            expectedFailure = failure.message
            self.failure = nil
        } else {
            failure = Diagnostic(
                .failure, "row \(row ?? "?") expects the run to fail, and it passed",
                hint: "check the row's values, or set its outcome to passed")
        }
    }

    /// Drops what the run's steps answered and what it captured, keeping how each step and the run ended: all a
    /// summary needs of a run that is over.
    /// The run's failure and its steps' messages, masked by `redactor` (what is printed of them later then needs no
    /// secret the redactor may have forgotten by then).
    public mutating func maskMessages(_ redactor: Redactor) {
        if var failure {
            failure.message = redactor.text(failure.message)
            failure.hint = failure.hint.map(redactor.text)
            self.failure = failure
        }
        for i in steps.indices {
            steps[i].message = steps[i].message.map(redactor.text)
            for j in steps[i].money.indices {
                steps[i].money[j].status = redactor.text(steps[i].money[j].status)
                steps[i].money[j].reference = steps[i].money[j].reference.map(redactor.text)
                steps[i].money[j].settle = steps[i].money[j].settle.map(redactor.text)
            }
        }
    }

    public mutating func forgetAnswers() {
        for i in steps.indices { steps[i].output = nil }
        captures = [:]
    }

    public var passed: Bool { failure == nil }
    /// Whether any step left a movement of money unknown, whatever decided the run's exit code.
    public var leftMoneyOpen: Bool { steps.contains { $0.money.contains { $0.outcome == .unknown } } }
    /// Stopped by SIGINT or SIGTERM: not failed by what it met.
    public var interrupted: Bool { exitCode == .interrupted || exitCode == .terminated }
    public var exitCode: ExitCode { failure?.code ?? .ok }

    public init(
        name: String, environment: String, startedAt: Date, duration: Double, steps: [StepResult], failure: Diagnostic?,
        captures: JSON.Object
    ) {
        self.name = name
        self.environment = environment
        self.startedAt = startedAt
        self.duration = duration
        self.steps = steps
        self.failure = failure
        self.captures = captures
    }
}

/// What the engine tells reporters, in order.
public enum FlowEvent: Sendable {
    /// `steps` the main steps, `finally` the steps that run after them whatever happened (`Flow.countText`).
    case flowStarted(name: String, environment: String, steps: Int, finally: Int)
    case stepStarted(name: String, index: Int, isFinally: Bool)
    case exchange(ExchangeRecord)
    case retrying(step: String, attempt: Int, delay: Double, reason: String)
    case polling(step: String, poll: Int, reason: String)
    /// A note from an operation worth showing the user (a warning, a hint about what happened).
    case note(step: String, message: String)
    /// A step moved money, was refused, or left an outcome unknown (`MoneyMovement`).
    case money(step: String, MoneyMovement)
    /// A link the user must act on (an approval in Cash App): shown even with `-q`, and on a terminal as a QR code
    /// too, so a phone can open it.
    case link(step: String, label: String, url: String)
    /// An operation listens at `url` for something that comes back to the driver (a 3DS return).
    case listening(step: String, url: String)
    case stepFinished(StepResult)
    case flowFinished(FlowResult)
}

public typealias FlowEventSink = @Sendable (FlowEvent) -> Void
