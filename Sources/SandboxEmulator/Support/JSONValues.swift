import Foundation

/// What a JSONSerialization value really held. It hands back NSNumber for numbers and booleans alike, and on Linux an
/// NSNumber holding 1 even answers `is Bool` (and `true` answers `as? Int`), so a type check must ask the number's
/// encoding: "c" is how true and false come back.
enum JSONValues {
    static func isBool(_ value: Any?) -> Bool {
        (value as? NSNumber).map { String(cString: $0.objCType) == "c" } ?? false
    }

    /// A JSON integer: not a boolean, not a fraction, and small enough to be exact.
    static func integer(_ value: Any?) -> Int? {
        guard let number = value as? NSNumber, !isBool(number) else { return nil }
        let double = number.doubleValue
        guard double.rounded() == double, abs(double) < 9e15 else { return nil }
        return number.intValue
    }
}
