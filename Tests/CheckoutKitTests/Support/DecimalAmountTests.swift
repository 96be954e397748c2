import Testing
@testable import CheckoutKit

/// Decimal strings to minor units and back, digit by digit: the amounts a binary double would get wrong included.
@Suite struct DecimalAmountTests {
    @Test(arguments: [("19.99", 1999), ("0.07", 7), ("1000000.00", 100_000_000), ("10", 1000), ("10.5", 1050), ("0.01", 1),
                      ("1.10", 110), ("9999999999.99", 999_999_999_999), ("0.29", 29), ("4.35", 435)])
    func decimalStringsBecomeExactMinorUnits(text: String, minor: Int) {
        #expect(DecimalAmount.minorUnits(text) == minor)
    }

    @Test(arguments: ["", "-1.00", "+1.00", "1e3", "10.", ".50", "1.999", " 1.00", "1.00 ", "1,00", "0", "0.00", "0x10", "١٢", "10000000000.00", "1.0.0"])
    func anythingElseIsRefused(text: String) {
        #expect(DecimalAmount.minorUnits(text) == nil, "\(text)")
    }

    @Test func minorUnitsPrintWithTwoDecimals() {
        #expect(DecimalAmount.text(7) == "0.07")
        #expect(DecimalAmount.text(1999) == "19.99")
        #expect(DecimalAmount.text(100_000_000) == "1000000.00")
        #expect(DecimalAmount.text(1000) == "10.00")
        #expect(DecimalAmount.text(5, decimals: 0) == "5")
    }

    /// Every cent up to 100.00 survives the round trip, where a double-based conversion (0.29 * 100 = 28.999…) fails.
    @Test func everyCentRoundTrips() {
        for minor in 1...10_000 { #expect(DecimalAmount.minorUnits(DecimalAmount.text(minor)) == minor) }
    }

    @Test func aBadAmountIsAUsageErrorNamingIt() {
        #expect(throws: Diagnostic.self) { try DecimalAmount.parse(.string("19.999"), name: "--amount") }
        do { _ = try DecimalAmount.parse(.string("19.999"), name: "--amount") } catch {
            #expect(error.code == .usage)
            #expect(error.message.contains("--amount") && error.message.contains("'19.999'"))
        }
    }

    @Test func timestampsWithNanosecondsParse() throws {
        let nanos = try #require(Timestamp.parse("2026-12-01T15:30:00.123456789Z"))
        let plain = try #require(Timestamp.parse("2026-12-01T15:30:00Z"))
        #expect(abs(nanos.timeIntervalSince(plain) - 0.123) < 0.0005)
        #expect(Timestamp.parse("2026-12-01T17:30:00.5+02:00") == plain.addingTimeInterval(0.5))
        #expect(Timestamp.parse("yesterday") == nil)
        #expect(Timestamp.parse("2026-12-01T15:30:00.Z") == nil)
    }
}

/// `--amount` in minor units also takes the decimal form, read exactly by the currency's digits.
@Suite struct MinorUnitsDecimalTests {
    @Test(arguments: [("25.00", "USD", 2500), ("25.5", "EUR", 2550), ("0.01", "840", 1), ("8000", "VND", 8000), ("8000.00", "VND", 8000),
                      ("1999", "USD", 1999), ("12.340", "SEK", 1234)])
    func theDecimalFormIsReadExactly(text: String, currency: String, minor: Int) throws {
        #expect(try MinorUnits.parse(.string(text), currency: currency) == minor)
    }

    @Test(arguments: [("25.5", "VND", "does not fit currency VND, which has no decimals"), ("1.001", "USD", "does not fit currency USD, which has 2 decimals"),
                      ("25.00", "999", "how many decimals currency 999 has is not known"), ("25.00", nil, "must be a whole number"),
                      ("-1.00", "USD", "does not fit"), ("1.", "USD", "does not fit"), ("0.00", "USD", "does not fit")])
    func aDecimalThatDoesNotFitIsRefused(text: String, currency: String?, message: String) {
        #expect(throws: Diagnostic.self) { try MinorUnits.parse(.string(text), currency: currency) }
        do { _ = try MinorUnits.parse(.string(text), currency: currency) } catch { #expect(error.message.contains(message), "\(error.message)") }
    }
}
