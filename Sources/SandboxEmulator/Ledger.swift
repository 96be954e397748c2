import Foundation
import Synchronization
import WireTypes

/// Every money movement the emulated providers performed, in order. Tests read it to prove that no fault
/// produced a double charge or a lost one.
public final class Ledger: Sendable {
    public enum Kind: String, Codable, Sendable {
        case authorization, capture, refund, void
    }

    /// Written by `json` (what `GET /_sandbox/ledger` serves); decodable from it, as tests and clients read it back.
    public struct Entry: Decodable, Sendable, Equatable {
        public var id: String
        public var provider: String
        public var kind: Kind
        /// What the movement belongs to, e.g. an intent or order id.
        public var reference: String
        /// Minor units (cents).
        public var amount: Int
        public var currency: String
        /// Written and read as ISO 8601 with milliseconds, whatever a decoder's date strategy.
        public var at: Date

        public init(
            id: String, provider: String, kind: Kind, reference: String, amount: Int, currency: String, at: Date
        ) {
            self.id = id
            self.provider = provider
            self.kind = kind
            self.reference = reference
            self.amount = amount
            self.currency = currency
            self.at = at
        }

        private enum CodingKeys: String, CodingKey { case id, provider, kind, reference, amount, currency, at }

        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            id = try c.decode(String.self, forKey: .id)
            provider = try c.decode(String.self, forKey: .provider)
            kind = try c.decode(Kind.self, forKey: .kind)
            reference = try c.decode(String.self, forKey: .reference)
            amount = try c.decode(Int.self, forKey: .amount)
            currency = try c.decode(String.self, forKey: .currency)
            let text = try c.decode(String.self, forKey: .at)
            guard let date = Timestamp.parse(text) else {
                throw DecodingError.dataCorruptedError(
                    forKey: .at, in: c, debugDescription: "not an ISO 8601 timestamp: \(text)")
            }
            at = date
        }
    }

    private let list = Mutex<[Entry]>([])

    public init() {}

    /// Records a movement. The time is cut to whole milliseconds so an entry survives a JSON round trip unchanged.
    @discardableResult
    public func append(provider: String, kind: Kind, reference: String, amount: Int, currency: String) -> Entry {
        let at = dateFromMilliseconds(Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)))
        return list.withLock { entries in
            let entry = Entry(
                id: String(format: "le_%06d", entries.count + 1), provider: provider, kind: kind,
                reference: reference, amount: amount, currency: currency, at: at)
            entries.append(entry)
            return entry
        }
    }

    public func entries() -> [Entry] { list.withLock { $0 } }

    /// A page of the ledger (`ListPage`), oldest first; nil when `since` is not a ledger entry's id.
    public func page(_ page: ListPage) -> (entries: [Entry], hasMore: Bool)? {
        var after: Int?
        if let since = page.since {
            // Ids are "le_" and the entry's 1-based place, six digits or more.
            guard since.hasPrefix("le_"), let place = Int(since.dropFirst(3)), place >= 1 else { return nil }
            after = place - 1
        }
        return list.withLock { entries in
            let (slice, hasMore) = ListPage.slice(entries[...], after: after, limit: page.limit)
            return (Array(slice), hasMore)
        }
    }
}

extension Ledger.Entry {
    /// As `GET /_sandbox/ledger` serves it: the `Codable` form's members.
    var json: JSON {
        [
            "id": .string(id), "provider": .string(provider), "kind": .string(kind.rawValue),
            "reference": .string(reference),
            "amount": JSON(amount), "currency": .string(currency), "at": .string(Timestamp.iso8601(at)),
        ]
    }
}

// Timestamps are whole milliseconds, built from integers as `Timestamp.parse` builds a time it reads, so a ledger
// entry compares equal after a JSON round trip.

private func dateFromMilliseconds(_ ms: Int64) -> Date {
    Date(timeIntervalSince1970: Double(ms / 1000) + Double(ms % 1000) / 1000)
}
