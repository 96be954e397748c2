import Foundation
import TestSupport
import Testing

@testable import CheckoutKit

/// The one rule of amounts (`Amount.minorUnits`): the text a person wrote, read exactly by its notation and currency,
/// or refused saying what is wrong, as the literal table (`AmountTable`) says: value × currency → minor units, or the
/// words.
@Suite struct AmountTests {
    typealias Outcome = AmountTable.Outcome
    static let minorUnitsTable = AmountTable.minorUnits
    static let majorUnitsTable = AmountTable.majorUnits

    static func outcome(_ value: JSON, _ notation: AmountNotation, _ currency: String) throws -> Outcome {
        switch Amount.minorUnits(value, notation: notation, currency: try Currency.parse(currency)) {
        case .success(let minor): .minor(minor)
        case .failure(let refusal): .refused(refusal.problem)
        }
    }

    @Test func minorUnitsNotationAsTheTableSays() throws {
        for (text, row) in Self.minorUnitsTable {
            for (currency, expected) in row {
                #expect(try Self.outcome(.string(text), .minorUnits, currency) == expected, "\(text) \(currency)")
            }
        }
    }

    @Test func majorUnitsNotationAsTheTableSays() throws {
        for (text, row) in Self.majorUnitsTable {
            for (currency, expected) in row {
                #expect(try Self.outcome(.string(text), .majorUnits, currency) == expected, "\(text) \(currency)")
            }
        }
    }

    /// A JSON number means what its text says: 12.00 read from a file is twelve dollars, not 12 cents; 1e3 is refused.
    @Test func aNumberIsReadByItsTextNotItsValue() throws {
        for (text, row) in Self.minorUnitsTable {
            guard let number = JSON.Number(literal: text) else { continue }
            #expect(try Self.outcome(.number(number), .minorUnits, "USD") == row["USD"], "\(text)")
        }
        let parsed = try JSON.parse(#"{"a": 12.00, "b": 12, "c": 12.30}"#)
        #expect(try Self.outcome(parsed["a"]!, .minorUnits, "USD") == .minor(1200))
        #expect(try Self.outcome(parsed["b"]!, .minorUnits, "USD") == .minor(12))
        #expect(try Self.outcome(parsed["c"]!, .minorUnits, "USD") == .minor(1230))
        #expect(try Self.outcome(.bool(true), .minorUnits, "USD") == .refused("is a boolean, not an amount"))
    }

    @Test func theLargestAmountAndOneMoreDigit() throws {
        #expect(try Self.outcome("999999999999", .minorUnits, "USD") == .minor(999_999_999_999))
        #expect(try Self.outcome("9999999999.99", .majorUnits, "USD") == .minor(999_999_999_999))
        #expect(
            try Self.outcome("1000000000000", .minorUnits, "USD")
                == .refused("is more than the largest amount, 999999999999 minor units"))
        #expect(
            try Self.outcome("99999999999999999999", .majorUnits, "KWD")
                == .refused("is more than the largest amount, 999999999999 minor units"))
        #expect(try Self.outcome("012", .minorUnits, "USD") == .minor(12), "a leading zero changes nothing")
    }

    /// Every cent up to 100.00 survives a round trip, where a double-based conversion (0.29 * 100 = 28.999…) fails.
    @Test func everyCentRoundTrips() {
        for minor in 1...10_000 {
            #expect(
                Amount.minorUnits(.string(Currency.usd.decimal(minor)), notation: .majorUnits, currency: .usd)
                    == .success(minor))
        }
    }

    /// A decimal needs the currency's digits: an unknown numeric code takes minor units only.
    @Test func aDecimalInACurrencyOfUnknownDigitsIsRefused() throws {
        let unknown = try Currency.parse("999")
        #expect(Amount.minorUnits("8000", notation: .minorUnits, currency: unknown) == .success(8000))
        #expect(
            Amount.minorUnits("80.00", notation: .minorUnits, currency: unknown)
                == .failure(.init(problem: "is a decimal, and how many decimals currency 999 has is not known here")))
        #expect(
            Amount.minorUnits("80", notation: .majorUnits, currency: unknown)
                == .failure(
                    .init(problem: "is in major units, and how many decimals currency 999 has is not known here")))
    }

    @Test func anOptionsRefusalNamesItTheValueAndTheForms() throws {
        let error = #expect(throws: Diagnostic.self) {
            try Amount.parse(option: "--amount", "12.5", notation: .minorUnits, currency: try Currency.parse("JPY"))
        }
        #expect(error?.code == .usage)
        #expect(error?.message == "--amount 12.5 has 1 decimal, and JPY has none")
        #expect(
            error?.hint
                == "give digits for minor units (1234 is 1234 JPY) or a whole number of JPY (1234); no sign, exponent, comma or spaces"
        )
        let major = #expect(throws: Diagnostic.self) {
            try Amount.parse(option: "--amount", "1,5", notation: .majorUnits, currency: .usd)
        }
        #expect(
            major?.hint == "give a decimal in USD with at most 2 decimals (12.34); no sign, exponent, comma or spaces")
    }
}

/// ISO 4217 codes, alphabetic or numeric, with their minor-unit digits.
@Suite struct CurrencyTests {
    @Test func codesAndDigits() throws {
        #expect(try Currency.parse("VND").numeric == "704")
        #expect(try Currency.parse("usd") == .usd)
        #expect(try Currency.parse("414").alphabetic == "KWD" && Currency.parse("KWD").minorDigits == 3)
        #expect(try Currency.parse("JPY").minorDigits == 0 && Currency.parse("392").code == "JPY")
        #expect(try Currency.parse("036").code == "AUD")
        #expect(try Currency.parse("999") == Currency(alphabetic: nil, numeric: "999", minorDigits: nil))
        let error = #expect(throws: Diagnostic.self) { try Currency.parse("XYZ") }
        #expect(error?.code == .usage)
        #expect(error?.hint?.contains("numeric such as 840") == true)
    }

    @Test func theTableHasOneEntryPerCode() {
        #expect(Set(Currency.table.map(\.numeric)).count == Currency.table.count)
        #expect(Set(Currency.table.compactMap(\.alphabetic)).count == Currency.table.count)
        #expect(Currency.table.allSatisfy { $0.numeric.count == 3 && [0, 2, 3].contains($0.minorDigits) })
    }

    @Test func moneyIsWrittenWithTheCurrencysDigits() throws {
        #expect(Currency.usd.decimal(1234) == "12.34")
        #expect(try Currency.parse("JPY").decimal(1234) == "1234")
        #expect(try Currency.parse("KWD").decimal(1234) == "1.234")
        #expect(try Currency.parse("KWD").format(1) == "0.001 KWD")
        #expect(try Currency.parse("999").format(5) == "5 minor units of 999")
        #expect(Currency.usd.minorUnits(ofDecimal: "0.00") == 0 && Currency.usd.minorUnits(ofDecimal: "1.234") == nil)
    }
}
