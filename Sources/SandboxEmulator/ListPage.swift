import LoopbackHTTP
import WireTypes

/// How the sandbox's own lists (the ledger, the request log, Bahn's webhook events) are read, as real services page
/// theirs: `?limit=` (1…1000, 100 by default) items after the one `?since=` names (the last of the page before),
/// oldest first, and whether more follow. A read costs what its page holds, never what the emulator has stored.
public struct ListPage: Sendable {
    /// The most items one read returns, and what it returns when it does not say.
    public static let maxLimit = 1000
    public static let defaultLimit = 100

    public var limit: Int
    /// The id of the last item already read; nil from the first.
    public var since: String?

    public init(limit: Int = ListPage.defaultLimit, since: String? = nil) {
        self.limit = limit
        self.since = since
    }

    /// A list's answer: its page of items under `member`, and `hasMore`.
    struct Items {
        var items: [JSON]
        var hasMore: Bool
    }

    /// Serves a list route: the page the query asks for, read by `read` — which answers nil when `since` names no
    /// item it keeps — or a 400 that names the bad parameter and what it should be (`sinceExample`: an id of the list).
    static func serve(
        _ request: EmulatorRequest, member: String, sinceExample: String,
        _ read: (ListPage) -> Items?
    ) -> HTTPReply {
        let query = request.http.query
        guard let limit = query["limit"].map({ Int($0) }) ?? defaultLimit, (1...maxLimit).contains(limit) else {
            return EmulatorResponse.error(
                400, code: "invalid_limit", message: "limit must be a whole number from 1 to \(maxLimit)",
                param: "limit")
        }
        guard let page = read(ListPage(limit: limit, since: query["since"])) else {
            return EmulatorResponse.error(
                400, code: "invalid_since",
                message:
                    "since must be the id of a \(member) entry still kept (such as \(sinceExample)), the last of the page before",
                param: "since")
        }
        return EmulatorResponse.json(200, [member: .array(page.items), "hasMore": JSON(page.hasMore)])
    }

    /// The page of a list kept oldest first, from the index after the one `since` resolves to (`after`; nil when it
    /// names nothing kept).
    static func slice<T>(_ items: ArraySlice<T>, after: Int?, limit: Int) -> (items: ArraySlice<T>, hasMore: Bool) {
        let (window, hasMore) = window(items.indices, after: after, limit: limit)
        return (items[window], hasMore)
    }

    /// The indices of that page among `kept`, the indices of the items kept (an `after` before them starts the page
    /// at the first).
    static func window(_ kept: Range<Int>, after: Int?, limit: Int) -> (indices: Range<Int>, hasMore: Bool) {
        let start = max(kept.lowerBound, after.map { $0 + 1 } ?? kept.lowerBound)
        guard start < kept.upperBound else { return (kept.upperBound..<kept.upperBound, false) }
        let end = min(kept.upperBound, start + limit)
        return (start..<end, end < kept.upperBound)
    }
}
