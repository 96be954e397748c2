import Foundation
import Testing

@testable import CheckoutKit

/// Every kind of argument an operation can declare, read into one value.
private struct Everything: OperationArguments {
    enum Mode: String, CaseIterable, Sendable { case manual, automatic }
    var id: String?
    var name = ""
    var mode: Mode?
    var flavour: Mode = .automatic
    var currency: Currency = .usd
    var count: Int?
    var open = false
    var payload: JSON.Object?
    var lines: [JSON]?
    var wait: Double?
    var amount: Int?
    var price: Int?
    var later: PendingAmount?

    static let arguments: [Argument<Everything>] = [
        .string("id", \.id), .string("name", \.name), .choice("mode", \.mode),
        .choice("flavour", \.flavour, default: "automatic"),
        .currency("currency", \.currency, default: "USD", help: "ISO 4217"), .integer("count", \.count, range: 1...9),
        .boolean("open", \.open), .object("payload", \.payload), .array("lines", \.lines), .duration("wait", \.wait),
        .amount("amount", \.amount, .minorUnits, currency: "currency", defaultCurrency: "USD", help: "minor units"),
        .amount("price", \.price, .majorUnits, currency: "currency", defaultCurrency: "USD", help: "major units"),
        .amount("later", \.later, .majorUnits, help: "in a currency learnt later"),
    ]
}

private let everything = FlowOperation(name: "test.everything", summary: "", arguments: Everything.self) { _, _ in
    StepOutput(document: .null)
}

@Suite struct OperationArgumentsTests {
    private func value(_ arguments: JSON.Object) throws -> Everything { try Everything.read(arguments).get() }

    private func problem(_ arguments: JSON.Object) -> FlowOperation.ArgumentProblem? {
        everything.check(arguments, templates: .object(arguments))
    }

    @Test func eachKindIsReadIntoItsProperty() throws {
        let v = try value([
            "id": 1001, "name": "n", "mode": "manual", "flavour": "manual", "currency": "JPY", "count": 3, "open": true,
            "payload": ["a": 1], "lines": [1, 2], "wait": "2m", "amount": "1200", "later": "19.99",
        ])
        #expect(v.id == "1001", "a number given for text is read as written")
        #expect(
            v.name == "n" && v.mode == .manual && v.flavour == .manual && v.currency.code == "JPY" && v.count == 3
                && v.open)
        #expect(v.payload == ["a": 1] && v.lines == [1, 2] && v.wait == 120)
        #expect(v.amount == 1200, "JPY has no minor unit: 1200 is 1200")
        #expect(try v.later?.minorUnits(in: .usd) == 1999)
        #expect(try v.later?.minorUnitsInAnyCurrency() == nil, "a decimal needs its currency")
    }

    @Test func whatIsLeftOutKeepsItsDefault() throws {
        let v = try value(["name": "n"])
        #expect(
            v.id == nil && v.mode == nil && v.flavour == .automatic && v.currency == .usd && !v.open && v.amount == nil
                && v.later == nil)
    }

    @Test func amountsAreReadExactlyInTheirCurrency() throws {
        #expect(try value(["amount": "80.00"]).amount == 8000, "a decimal in USD, the default currency")
        #expect(try value(["amount": 8000]).amount == 8000)
        #expect(try value(["amount": "0.001", "currency": "KWD"]).amount == 1)
        #expect(problem(["amount": "12.345"])?.problem == "has 3 decimals, and USD has 2")
        #expect(problem(["amount": "12.5", "currency": "JPY"])?.argument == "amount")
        // The currency an amount is read in is blamed when it is no currency.
        #expect(problem(["amount": "12", "currency": "XYZ"])?.argument == "currency")
        #expect(
            try Everything.read(["later": "5"]).get().later?.minorUnitsInAnyCurrency() == nil,
            "major units need the currency")
        #expect(
            problem(["later": "1,5"])?.argument == "later",
            "the form of an amount whose currency comes later is checked now")
        #expect(throws: Diagnostic.self) { try Everything.read(["later": "12.345"]).get().later?.minorUnits(in: .usd) }
        // Read in the currency it is given: 12 in JPY is 12 minor units, and JPY has no decimals.
        let yen = try Currency.parse("JPY")
        #expect(try value(["later": "12"]).later?.minorUnits(in: yen) == 12)
        #expect(throws: Diagnostic.self) { try Everything.read(["later": "12.5"]).get().later?.minorUnits(in: yen) }
    }

    @Test func anAmountWaitsForACurrencyNotKnownYet() {
        // Before the run: the currency is a template whose value is not known; its amount is read when it is.
        let known: JSON.Object = ["amount": "12.345"]
        #expect(everything.check(known, templates: ["amount": "12.345", "currency": "${steps.cart.currency}"]) == nil)
        #expect(everything.check(known, templates: .object(known)) != nil)
    }

    static let wrongValues: [(JSON.Object, String, String)] = [
        (["count": 0] as JSON.Object, "count", "is out of range 1…9"),
        (["count": "three"], "count", "is a string, not an integer"),
        (["open": "yes"], "open", "is a string, not true or false"),
        (["mode": "later"], "mode", "is not one of manual, automatic"),
        (["payload": "x"], "payload", "is a string, not an object"),
        (["lines": ["a": 1]], "lines", "is an object, not an array"),
        (["id": ["x": 1]], "id", "is an object, not a string"),
        (["wait": "soon"], "wait", "is not a positive number of seconds or a duration"),
        (["wait": 0], "wait", "is not a positive number of seconds or a duration"),
    ]

    @Test(arguments: wrongValues)
    func aWrongValueIsOneProblemNamingItsArgument(_ arguments: JSON.Object, _ argument: String, _ text: String) {
        let found = problem(arguments)
        #expect(found?.argument == argument && found?.problem == text, "\(String(describing: found))")
    }

    @Test func theDeclarationIsWhatFlowOpsShows() {
        #expect(
            everything.parameters.map(\.name) == [
                "id", "name", "mode", "flavour", "currency", "count", "open", "payload", "lines", "wait", "amount",
                "price", "later",
            ])
        // A value that is not optional and has no default must be given; with a default, or optional, it may be left
        // out.
        #expect(everything.parameters.filter(\.required).map(\.name) == ["name"])
        #expect(everything.parameters.first { $0.name == "mode" }?.choices == ["manual", "automatic"])
        #expect(everything.parameters.first { $0.name == "count" }?.range == 1...9)
        #expect(everything.parameters.first { $0.name == "amount" }?.amount?.currencyArgument == "currency")
        #expect(everything.parameters.first { $0.name == "flavour" }?.defaultValue == "automatic")
    }

    /// What a command builds a step from: the value written as a flow file gives it, and read back the same.
    @Test func aValueIsWrittenAsAStepGivesItAndReadBackTheSame() throws {
        var v = Everything()
        (v.id, v.name, v.mode, v.flavour) = ("o-1", "n", .manual, .manual)
        (v.currency, v.count, v.open, v.payload, v.lines, v.wait) = (
            try Currency.parse("KWD"), 3, true, ["a": 1], [1], 90
        )
        (v.amount, v.price) = (1234, 1234)
        v.later = try Everything.read(["later": "19.99"]).get().later
        let written = v.stepArguments
        #expect(written["amount"] == 1234, "digits: minor units")
        #expect(written["price"] == "1.234", "major units in the currency given: KWD has 3 decimals")
        #expect(written["currency"] == "KWD" && written["count"] == 3 && written["later"] == "19.99")
        #expect(
            Set(written.keys) == [
                "id", "name", "mode", "flavour", "currency", "count", "open", "payload", "lines", "wait", "amount",
                "price", "later",
            ])
        let back = try Everything.read(written).get()
        #expect(back.id == v.id && back.name == v.name && back.mode == v.mode && back.flavour == v.flavour)
        #expect(back.currency == v.currency && back.count == v.count && back.open && back.payload == v.payload)
        #expect(
            back.lines == v.lines && back.wait == 90 && back.amount == 1234 && back.price == 1234
                && back.later == v.later)
        // What is as `init()` leaves it is left out, as a flow file leaves it out — but a required argument, whose
        // initial value is a placeholder, is always written.
        #expect(Everything().stepArguments == ["name": ""])
        var usd = Everything()
        usd.price = 8000
        #expect(usd.stepArguments == ["name": "", "price": "80.00"], "the default currency's decimals")
    }

    /// The body gets the typed value; a variable the operation would refuse stops the run before its first request.
    @Test func theBodyReceivesTheValueAndABadVariableStopsTheRunFirst() async throws {
        let server = try TestServer { _, _ in .json(200, ["ok": true]) }
        var h = Harness()
        h.registry.register(fetchOperation)
        let flow =
            #"{"name": "f", "vars": {"count": 2}, "steps": [{"name": "get", "use": "test.fetch", "with": {"url": "\#(server.baseURL)/x", "count": "${vars.count}"}}]}"#
        let passed = try await h.run(flow)
        #expect(passed.passed, "\(String(describing: passed.failure))")
        #expect(try #require(server.requests("/x").first).headers["X-Count"] == "2")
        let refused = try await h.run(flow, vars: ["count": "two"])
        #expect(!refused.passed && server.count("/x") == 1, "nothing sent for the bad variable")
        let message = try #require(refused.failure?.message)
        #expect(message.contains("argument 'count' of test.fetch") && message.contains("not an integer"), "\(message)")
    }
}
