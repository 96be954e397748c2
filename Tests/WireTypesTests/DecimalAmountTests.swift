import Testing

@testable import WireTypes

/// The one reader and writer of decimal money, for the driver and the emulator: digit by digit, never a Double.
@Suite struct DecimalAmountTests {
    @Test func decimalsAreReadDigitByDigit() {
        #expect(DecimalAmount.exactMinorUnits("19.99") == 1999)
        #expect(DecimalAmount.exactMinorUnits("0.10") == 10)
        #expect(DecimalAmount.exactMinorUnits("0.07") == 7, "no 6-cent surprise from a Double")
        #expect(DecimalAmount.exactMinorUnits("1234567.89") == 123_456_789)
        #expect(DecimalAmount.exactMinorUnits("10") == 1000)
        #expect(DecimalAmount.exactMinorUnits("10.5") == 1050)
        #expect(
            DecimalAmount.exactMinorUnits("0") == 0, "zero is an amount here; callers that need a positive one say so")
        #expect(DecimalAmount.exactMinorUnits("999999999999.99") == 99_999_999_999_999)
        for bad in ["1.505", "-1.00", "1e3", ".50", "1.", "", " 1.00", "١.٠٠", "1,00", "+1", "1.0.0", "1000000000000"] {
            #expect(DecimalAmount.exactMinorUnits(bad) == nil, "\(bad)")
        }
    }

    /// Afterpay wants exactly two decimals; a currency without minor units takes whole numbers only.
    @Test func theDecimalsCanBeRequiredOrForbidden() {
        #expect(DecimalAmount.exactMinorUnits("10.00", minimumDecimals: 2) == 1000)
        for bad in ["10", "10.5", "10.505"] {
            #expect(DecimalAmount.exactMinorUnits(bad, minimumDecimals: 2) == nil, "\(bad)")
        }
        #expect(DecimalAmount.exactMinorUnits("8000", decimals: 0) == 8000)
        #expect(DecimalAmount.exactMinorUnits("8000.5", decimals: 0) == nil)
    }

    /// Fraction digits past the currency's count are allowed only as zeros, and only when asked.
    @Test func extraZerosAreAllowedOnlyWhenAsked() {
        #expect(DecimalAmount.exactMinorUnits("25.500", extraZeros: true) == 2550)
        #expect(DecimalAmount.exactMinorUnits("25.500") == nil)
        #expect(DecimalAmount.exactMinorUnits("25.501", extraZeros: true) == nil)
        #expect(DecimalAmount.exactMinorUnits("80.0", decimals: 0, extraZeros: true) == 80)
        #expect(DecimalAmount.exactMinorUnits("80.5", decimals: 0, extraZeros: true) == nil)
    }

    @Test func minorUnitsAreWrittenWithEveryDecimal() {
        #expect(DecimalAmount.text(5) == "0.05")
        #expect(DecimalAmount.text(123_456) == "1234.56")
        #expect(DecimalAmount.text(1000) == "10.00")
        #expect(DecimalAmount.text(8000, decimals: 0) == "8000")
        #expect(DecimalAmount.text(7, decimals: 3) == "0.007")
    }
}
