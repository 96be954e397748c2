@testable import GraphQL

/// A small schema with every kind of type, for the validation and execution tests.
enum TestSchema {
    static let sdl = """
        scalar Map
        interface Node { id: ID! }
        type Product implements Node { id: ID! name: String! price(currency: Currency = EUR): Money tags: [String!] old: String @deprecated(reason: "use name") }
        type Money { amount: Int! currency: Currency! }
        enum Currency { EUR SEK USD }
        type Cart implements Node { id: ID! lines: [Line!]! total: Money! }
        type Line { id: ID! product: Product! quantity: Int! broken: String! maybe: String }
        union SearchResult = Product | Cart
        input LineInput { product: ID!, quantity: Int = 1, note: String }
        type Query {
          product(id: ID!): Product
          cart: Cart!
          search(text: String!, first: Int = 10): [SearchResult!]!
          node(id: ID!): Node
          echo(value: Map): Map
          amount(value: Int): Int
          rate(currency: Currency! = EUR): Int
          failing: String
        }
        type Mutation { addLine(line: LineInput!): Cart! addLines(lines: [LineInput!]): Cart! }
        """

    static let schema: Schema = {
        do { return try Schema(sdl: sdl) } catch { fatalError("\(error)") }
    }()

    static func validate(_ query: String) throws -> [String] {
        Validator.validate(try Parser.parse(query), against: schema).map(\.message)
    }
}
