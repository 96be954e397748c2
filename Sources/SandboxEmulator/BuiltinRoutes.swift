import Foundation
import LoopbackHTTP
import Synchronization
import WireTypes

/// Provider-independent routes under `/_sandbox/`: health, ledger, request log, and small demo resources
/// (echo, orders) that built-in flows can exercise with raw HTTP requests.
enum BuiltinRoutes {
    static func make(ledger: Ledger, recorder: RequestRecorder) -> [Route] {
        let orders = OrderStore(ledger: ledger)
        // Encoded once: health is what load tests and readiness probes hammer.
        let health = EmulatorResponse.encode(["status": "ok", "service": "checkout-driver sandbox emulator"])
        return [
            Route("GET", "/_sandbox/health") { _ in .respond(.json(200, health)) },
            Route("GET", "/_sandbox/ledger") { request in
                ListPage.serve(request, member: "entries", sinceExample: "le_000001") { page in
                    ledger.page(page).map { .init(items: $0.entries.map(\.json), hasMore: $0.hasMore) }
                }
            },
            Route("GET", "/_sandbox/requests") { request in
                ListPage.serve(request, member: "requests", sinceExample: "rq_000001") { page in
                    recorder.page(page).map { .init(items: $0.entries.map(describe), hasMore: $0.hasMore) }
                }
            },
            Route("POST", "/_sandbox/echo") { request in
                var headers: [String: String] = [:]
                for (name, value) in request.headers {
                    let key = name.lowercased()
                    headers[key] = headers[key].map { "\($0), \(value)" } ?? value
                }
                return EmulatorResponse.json(
                    200,
                    [
                        "method": .string(request.method),
                        "path": .string(request.path),
                        "headers": JSON(headers),
                        "json": request.json ?? .null,
                        "body": .string(String(decoding: request.body, as: UTF8.self)),
                    ])
            },
            Route("POST", "/_sandbox/orders") { orders.create($0) },
            Route("GET", "/_sandbox/orders/:id") { orders.poll($0.params["id"] ?? "") },
            Route("POST", "/_sandbox/orders/:id/pay") { orders.pay($0) },
        ]
    }

    /// A recorded request as JSON: headers keep order and duplicates; the body is UTF-8 text when it is valid UTF-8,
    /// base64 otherwise (`bodyEncoding` says which); a long body is kept cut short, `bodyLength` says how long it was.
    private static func describe(_ entry: RequestRecorder.Entry) -> JSON {
        let request = entry.request
        let text = String(data: request.body, encoding: .utf8)
        return [
            "id": .string(entry.id),
            "bodyLength": JSON(entry.bodyLength),
            "bodyTruncated": JSON(entry.bodyLength > request.body.count),
            "method": .string(request.method),
            "target": .string(request.target),
            "headers": .array(request.headers.map { [.string($0.name), .string($0.value)] }),
            "body": .string(text ?? request.body.base64EncodedString()),
            "bodyEncoding": text == nil ? "base64" : "utf8",
            "connectionID": JSON(request.connectionID),
            "receivedAt": .string(Timestamp.iso8601(entry.receivedAt)),
            "status": JSON(entry.status),
            "cut": JSON(entry.cut),
            "indexOnConnection": JSON(request.indexOnConnection),
        ]
    }
}

/// The demo "orders" resource: create, poll until paid (the third GET flips it), pay once (idempotently).
final class OrderStore: Sendable {
    struct Order {
        var id: String
        var amount: Int
        var currency: String
        var status: String
        var polls: Int

        var json: JSON {
            [
                "id": .string(id), "amount": JSON(amount), "currency": .string(currency), "status": .string(status),
                "polls": JSON(polls),
            ]
        }
    }

    private struct State {
        var orders: [String: Order] = [:]
        /// "orderID Idempotency-Key" → the first response to that pay, replayed on repeats.
        var payReplies: [String: HTTPResponse] = [:]
    }

    private let state = Mutex(State())
    private let ledger: Ledger

    init(ledger: Ledger) { self.ledger = ledger }

    func create(_ request: EmulatorRequest) -> HTTPReply {
        // Typed members: `true`, `12.5`, `12.00` and `"100"` are not an integer amount.
        guard let fields = request.jsonObject else {
            return EmulatorResponse.error(400, code: "invalid_json", message: "The body must be a JSON object")
        }
        guard let rawAmount = fields["amount"], !rawAmount.isNull else { return missing("amount") }
        guard let rawCurrency = fields["currency"], !rawCurrency.isNull else { return missing("currency") }
        guard let amount = rawAmount.integerAsWritten else {
            return invalid("amount", "amount must be a positive integer (minor units)")
        }
        guard let currency = rawCurrency.stringValue else {
            return invalid("currency", "currency must be a three-letter ISO 4217 code")
        }
        guard amount > 0 else { return invalid("amount", "amount must be a positive integer (minor units)") }
        guard currency.count == 3, currency.allSatisfy({ $0.isASCII && $0.isLetter }) else {
            return invalid("currency", "currency must be a three-letter ISO 4217 code")
        }
        let order = Order(
            id: "ord_" + String(format: "%016llx", UInt64.random(in: 0...UInt64.max)), amount: amount,
            currency: currency.uppercased(), status: "pending", polls: 0)
        state.withLock { $0.orders[order.id] = order }
        return EmulatorResponse.json(201, ["order": order.json])
    }

    /// Each GET counts as a poll; the third one finds the order paid, so flows can demonstrate `until`.
    func poll(_ id: String) -> HTTPReply {
        let order = state.withLock { s -> Order? in
            guard var order = s.orders[id] else { return nil }
            order.polls += 1
            if order.polls >= 3 && order.status == "pending" { order.status = "paid" }
            s.orders[id] = order
            return order
        }
        guard let order else { return missingOrder(id) }
        return EmulatorResponse.json(200, ["order": order.json])
    }

    /// Pays once: one authorization and one capture in the ledger. A repeat with the same Idempotency-Key replays the
    /// first response (marked `Idempotent-Replayed: true`); a repeat without one is a 409.
    func pay(_ request: EmulatorRequest) -> HTTPReply {
        let id = request.params["id"] ?? ""
        let key = request.headers["Idempotency-Key"].map { "\(id) \($0)" }
        return state.withLock { s -> HTTPReply in
            if let key, var replay = s.payReplies[key] {
                replay.headers["Idempotent-Replayed"] = "true"
                return .respond(replay)
            }
            guard var order = s.orders[id] else { return missingOrder(id) }
            guard order.status != "paid" else {
                return EmulatorResponse.error(409, code: "order_already_paid", message: "Order \(id) is already paid")
            }
            order.status = "paid"
            s.orders[id] = order
            // Under the store's lock, so two concurrent pays cannot both charge.
            ledger.append(
                provider: "sandbox", kind: .authorization, reference: id, amount: order.amount, currency: order.currency
            )
            ledger.append(
                provider: "sandbox", kind: .capture, reference: id, amount: order.amount, currency: order.currency)
            let response = HTTPResponse.json(200, EmulatorResponse.encode(["order": order.json]))
            if let key { s.payReplies[key] = response }
            return .respond(response)
        }
    }

    private func missingOrder(_ id: String) -> HTTPReply {
        EmulatorResponse.error(404, code: "resource_missing", message: "No such order: \(id)", param: "id")
    }

    private func missing(_ field: String) -> HTTPReply {
        EmulatorResponse.error(
            400, code: "parameter_missing", message: "Missing required parameter: \(field)", param: field)
    }

    private func invalid(_ field: String, _ message: String) -> HTTPReply {
        EmulatorResponse.error(400, code: "parameter_invalid", message: message, param: field)
    }
}
