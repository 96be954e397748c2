import Foundation
public enum CheckoutDriver { public static func main(arguments: [String]) async -> Int32 { 0 } }
