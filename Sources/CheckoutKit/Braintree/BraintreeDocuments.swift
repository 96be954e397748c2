/// Every GraphQL document the Braintree client sends: one per operation, named, with the transaction fragment they
/// share. Each validates against Braintree's published schema (the tests check them with this project's engine, and
/// `Scripts/test` with graphql-core). `__typename` where the type is a union.
enum BraintreeDocuments {
    private static let transaction = """
        fragment TransactionParts on Transaction {
          id legacyId status orderId createdAt merchantAccountId
          amount { value currencyCode }
          processorResponse { legacyCode message }
          paymentMethodSnapshot {
            __typename
            ... on CreditCardDetails { brandCode last4 origin { type } }
            ... on CreditCardTransactionDetails { creditCard { brandCode last4 origin { type } } }
          }
        }
        """

    private static func document(
        _ name: String, mutation: Bool, _ body: String, transaction uses: Bool = true
    ) -> GraphQLDocument {
        GraphQLDocument(name: name, isMutation: mutation, text: body + (uses ? "\n" + transaction : ""))
    }

    static let ping = document("BraintreePing", mutation: false, "query BraintreePing { ping }", transaction: false)
    static let charge = document(
        "BraintreeCharge", mutation: true,
        """
        mutation BraintreeCharge($input: ChargePaymentMethodInput!) { chargePaymentMethod(input: $input) { transaction { ...TransactionParts } } }
        """)
    static let authorize = document(
        "BraintreeAuthorize", mutation: true,
        """
        mutation BraintreeAuthorize($input: AuthorizePaymentMethodInput!) { authorizePaymentMethod(input: $input) { transaction { ...TransactionParts } } }
        """)
    static let capture = document(
        "BraintreeCapture", mutation: true,
        """
        mutation BraintreeCapture($input: CaptureTransactionInput!) { captureTransaction(input: $input) { transaction { ...TransactionParts } } }
        """)
    static let void = document(
        "BraintreeVoid", mutation: true,
        """
        mutation BraintreeVoid($input: ReverseTransactionInput!) {
          reverseTransaction(input: $input) { reversal { __typename ... on Transaction { ...TransactionParts } ... on Refund { id legacyId status amount { value currencyCode } } } }
        }
        """)
    static let clientToken = document(
        "BraintreeClientToken", mutation: true,
        """
        mutation BraintreeClientToken($input: CreateClientTokenInput) { createClientToken(input: $input) { clientToken } }
        """, transaction: false)
    static let transactionsByOrder = document(
        "BraintreeTransactionsByOrder", mutation: false,
        """
        query BraintreeTransactionsByOrder($input: TransactionSearchInput!) { search { transactions(input: $input, first: 10) { edges { node { ...TransactionParts } } } } }
        """)
    static let transactionByID = document(
        "BraintreeTransaction", mutation: false,
        """
        query BraintreeTransaction($id: ID!) { node(id: $id) { __typename ... on Transaction { ...TransactionParts } } }
        """)

    static let all = [ping, charge, authorize, capture, void, clientToken, transactionsByOrder, transactionByID]
}
