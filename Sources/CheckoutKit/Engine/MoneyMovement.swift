import Foundation

/// One thing a step did with money, as a statement lists it: an authorization, a capture, a charge (both at once) or a
/// void, and whether it went through, was refused, or its outcome is unknown. Operations say it where they know it —
/// money calls through `reconciling` (the answer, a read-back, a refusal, an open outcome alike), the rest through
/// `OperationContext.account` — so a report lists each movement once, whatever it read.
public struct MoneyMovement: Sendable, Equatable {
    public enum Kind: String, Sendable {
        case authorization, capture, charge, void
    }

    public enum Outcome: String, Sendable {
        case done, refused, unknown
    }

    /// Whose money it is ("bahn", "braintree", "cashapp", "centra").
    public var provider: String
    public var kind: Kind
    public var outcome: Outcome
    /// Minor units; nil when the call did not say and the answer did not show it.
    public var amount: Int?
    /// ISO 4217 as the provider gave it ("USD", "704").
    public var currency: String?
    /// What it is known by ("pi_…", "transaction dHJh…", "order 1234").
    public var reference: String?
    /// What a person reads: "succeeded", "authorised, awaiting capture", the refusal's words.
    public var status: String
    /// For an unknown outcome: the ways to settle it, each a sentence with its command in backticks.
    public var settle: [String] = []

    public init(
        provider: String, kind: Kind, outcome: Outcome = .done, amount: Int? = nil, currency: String? = nil,
        reference: String? = nil, status: String = ""
    ) {
        self.provider = provider
        self.kind = kind
        self.outcome = outcome
        self.amount = amount
        self.currency = currency
        self.reference = reference
        self.status = status
    }

    /// The amount as money a person reads, with the currency's alphabetic code: "80.00 USD", "8000 VND"; the minor
    /// units and the code as given when the currency is not known here; "—" when there is no amount.
    public var money: String {
        guard let amount else { return "—" }
        guard let code = currency else { return "\(amount) minor units" }
        guard let known = try? Currency.parse(code) else { return "\(amount) minor units of \(code)" }
        return known.format(amount)
    }

    /// A provider's status as words: `APPROVED`/`CAPTURED` → "approved, captured", `requires_capture` → "requires
    /// capture".
    public static func words(_ statuses: String?...) -> String {
        statuses.compactMap { $0 }.filter { !$0.isEmpty }.map {
            String($0.lowercased().map { $0 == "_" ? " " : $0 })
        }.joined(separator: ", ")
    }

    public var json: JSON {
        var o: JSON.Object = [
            "provider": .string(provider), "kind": .string(kind.rawValue), "outcome": .string(outcome.rawValue),
            "amount": JSON(amount), "currency": JSON(currency), "reference": JSON(reference), "status": .string(status),
        ]
        if !settle.isEmpty { o["settle"] = .array(settle.map(JSON.string)) }
        return .object(o)
    }
}

extension OperationContext {
    /// Adds a movement to the step's account of money (its `StepResult.money`, the HTML page's Money table).
    public func account(_ movement: MoneyMovement) {
        counter.account(movement)
        events(.money(step: step, movement))
    }
}
