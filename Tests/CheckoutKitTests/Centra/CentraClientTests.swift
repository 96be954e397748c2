import Foundation
import GraphQL
import Testing

@testable import CheckoutKit

/// The Centra client's parts that need no server: every document against the published schema, exact money, and
/// the contact mapping.
@Suite struct CentraDocumentTests {
    static let schema: Schema = {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        let url = root.appendingPathComponent("Sources/SandboxEmulator/Centra/Schema/storefront_api_schema.graphql")
        do { return try Schema(sdl: try String(contentsOf: url, encoding: .utf8)) } catch { fatalError("\(error)") }
    }()

    @Test(arguments: CentraDocuments.all.map(\.name))
    func everyDocumentValidatesAgainstCentrasSchema(name: String) throws {
        let document = try #require(CentraDocuments.all.first { $0.name == name })
        let parsed = try Parser.parse(document.text)
        #expect(Validator.validate(parsed, against: Self.schema).map(\.description) == [])
        #expect(parsed.operations.map(\.name) == [name], "one operation, named as the request says")
        #expect(parsed.operations.first?.operation == (document.isMutation ? .mutation : .query))
    }

    /// For Scripts/check-graphql: the same documents, one file each, checked with graphql-core after the tests.
    @Test func everyDocumentIsExportedForTheIndependentCheck() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        let directory = root.appendingPathComponent(".build/graphql-documents/centra")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        for document in CentraDocuments.all {
            try Data(document.text.utf8).write(to: directory.appendingPathComponent(document.name + ".graphql"))
        }
        let written = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter {
            $0.hasSuffix(".graphql")
        }
        #expect(Set(written) == Set(CentraDocuments.all.map { $0.name + ".graphql" }))
    }

    @Test func aRequestAlwaysCarriesItsOperationName() throws {
        let body = try JSON.parse(CentraDocuments.setShippingMethod.request(["id": 2]).body)
        #expect(body["operationName"]?.stringValue == "CentraSetShippingMethod")
        #expect(body["variables"]?["id"] == .number(2))
    }
}

@Suite struct CentraMoneyTests {
    func money(_ value: Double, denominator: Int = 100) -> JSON {
        ["value": .number(value), "currency": ["denominator": .number(Double(denominator))]]
    }

    @Test func majorUnitsBecomeExactMinorUnits() throws {
        #expect(try CentraMoney.minor(money(848)) == 84800)
        #expect(try CentraMoney.minor(money(1247.5)) == 124750)
        #expect(try CentraMoney.minor(money(0.07)) == 7, "0.07 × 100 as doubles is 7.000000000000001")
        #expect(try CentraMoney.minor(money(19.99)) == 1999)
        #expect(try CentraMoney.minor(money(123456789.01)) == 12_345_678_901)
        #expect(try CentraMoney.minor(money(8000, denominator: 1)) == 8000)
    }

    /// Amounts as Centra writes them — their text, trailing zeros and all — in currencies of 0 to 3 decimals.
    @Test(arguments: [
        ("799.50", 100, 79950), ("799.500", 100, 79950), ("49.000", 100, 4900), ("100.0", 100, 10000),
        ("5", 1000, 5000),
        ("0.125", 1000, 125), ("1.5", 1000, 1500), ("0.10", 10, 1), ("8000.0", 1, 8000), ("0", 100, 0),
    ])
    func writtenAmountsBecomeExactMinorUnits(text: String, denominator: Int, minor: Int) throws {
        let money = try JSON.parse(#"{"value": \#(text), "currency": {"denominator": \#(denominator)}}"#)
        #expect(try CentraMoney.minor(money) == minor)
    }

    @Test func minorUnitsBecomeTheCurrencysDecimalString() {
        #expect(CentraMoney.decimal(79900, of: money(0)) == "799.00")
        #expect(CentraMoney.decimal(7, of: money(0)) == "0.07")
        #expect(CentraMoney.decimal(100_000_000, of: money(0)) == "1000000.00")
        #expect(CentraMoney.decimal(8000, of: money(0, denominator: 1)) == "8000")
    }

    @Test func amountsThatCannotBeExactAreRefused() {
        #expect(throws: Diagnostic.self) { try CentraMoney.minor(money(0.005)) }
        #expect(throws: Diagnostic.self) { try CentraMoney.minor(money(-1)) }
        #expect(throws: Diagnostic.self) { try CentraMoney.minor(money(1, denominator: 3)) }
        #expect(throws: Diagnostic.self) { try CentraMoney.minor(["value": "12.00"]) }
        #expect(throws: Diagnostic.self) { try CentraMoney.minor(try JSON.parse(#"{"value": 1e3}"#)) }
        #expect(throws: Diagnostic.self) { try CentraMoney.minor(money(1, denominator: 0)) }
        #expect(throws: Diagnostic.self) { try CentraMoney.minor(money(1, denominator: 1001)) }
        #expect(throws: Diagnostic.self) {
            try CentraMoney.minor(try JSON.parse(#"{"value": 1, "currency": {"denominator": 999999999999999}}"#))
        }
    }
}

@Suite struct CentraAddressTests {
    @Test func aPKContactMapsAsTheSeedsFunctionDoes() throws {
        let mapped = try CentraAddress.address(CentraAddress.testContact, source: "test")
        #expect(
            mapped == [
                "country": "SE", "firstName": "Ada", "lastName": "Lovelace", "address1": "Storgatan 1",
                "city": "Stockholm",
                "state": "", "zipCode": "11122", "email": "ada@example.com", "phoneNumber": "+46701234567",
            ])
        // The sheet's partial address before authorisation.
        #expect(
            CentraAddress.partial(mapped) == [
                "address1": "", "country": "SE", "city": "Stockholm", "state": "", "zipCode": "11122",
            ])
    }

    @Test func anAddressInputIsUsedAsItIsWithItsCountryUpperCased() throws {
        #expect(
            try CentraAddress.address(["country": "no", "city": "Oslo"], source: "t") == [
                "country": "NO", "city": "Oslo",
            ])
        #expect(throws: Diagnostic.self) { try CentraAddress.address(["country": "no", "zip": "0150"], source: "t") }
    }
}
