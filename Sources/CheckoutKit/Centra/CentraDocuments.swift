/// Every GraphQL document the Centra client sends: one per operation, named, with the shared fragments it uses.
/// Each validates against Centra's published schema (the tests check them with this project's GraphQL engine, and
/// `Scripts/test` with graphql-core). Ask for `__typename` where the type is an interface or union.
enum CentraDocuments {
    typealias Document = GraphQLDocument

    private static let money =
        "fragment Money on MonetaryValue { value formattedValue currency { code isoNumber denominator } }"

    private static let selection = """
        fragment SelectionParts on Selection {
          id
          lines { id quantity name item { id } lineValue { ...Money } }
          grandTotal { ...Money }
          checkout {
            shippingAddress { country { code } city zipCode }
            shippingMethod { id name }
            shippingMethods { id name selected price { ...Money } }
            totals { type price { ...Money } }
          }
        }
        """

    private static let order = """
        fragment OrderParts on Order {
          id number status
          lines { id quantity name }
          totals { type price { ...Money } }
          shippingMethod { id name }
          paymentMethod { name }
        }
        """

    private static func document(_ name: String, mutation: Bool, _ body: String, fragments: [String]) -> Document {
        Document(name: name, isMutation: mutation, text: body + "\n" + fragments.joined(separator: "\n"))
    }

    static let selectionQuery = document(
        "CentraSelection", mutation: false, "query CentraSelection { selection { ...SelectionParts } }",
        fragments: [selection, money])

    static let orderQuery = document(
        "CentraOrder", mutation: false, "query CentraOrder { order { ...OrderParts } }",
        fragments: [order, money])

    /// Before a payment: the session's latest order (to tell a new one from it) and what the payment will be for.
    static let beforePayment = document(
        "CentraBeforePayment", mutation: false,
        """
        query CentraBeforePayment { order { id } selection { grandTotal { ...Money } checkout { totals { type price { ...Money } } } } }
        """, fragments: [money])

    static let expressCheckoutWidgets = document(
        "CentraExpressCheckoutWidgets", mutation: false,
        """
        query CentraExpressCheckoutWidgets($plugins: [ExpressCheckoutWidgetsPluginItem!]!) {
          expressCheckoutWidgets(plugins: $plugins) { list { name widgets { id name contents error } } userErrors { message path } }
        }
        """, fragments: [])

    static let addItem = document(
        "CentraAddItem", mutation: true,
        """
        mutation CentraAddItem($item: String!, $quantity: Int!) {
          addItem(item: $item, quantity: $quantity) { line { id } selection { ...SelectionParts } userErrors { message path } }
        }
        """, fragments: [selection, money])

    static let updateLine = document(
        "CentraUpdateLine", mutation: true,
        """
        mutation CentraUpdateLine($lineId: String!, $quantity: Int) {
          updateLine(lineId: $lineId, quantity: $quantity) { selection { ...SelectionParts } userErrors { message path } }
        }
        """, fragments: [selection, money])

    static let setShippingMethod = document(
        "CentraSetShippingMethod", mutation: true,
        """
        mutation CentraSetShippingMethod($id: Int!) {
          setShippingMethod(id: $id) { selection { ...SelectionParts } userErrors { message path } }
        }
        """, fragments: [selection, money])

    static let handleWidgetEvent = document(
        "CentraHandleWidgetEvent", mutation: true,
        """
        mutation CentraHandleWidgetEvent($payload: Map!) {
          handleWidgetEvent(payload: $payload) { selection { ...SelectionParts } userErrors { message path } }
        }
        """, fragments: [selection, money])

    static let paymentInstructions = document(
        "CentraPaymentInstructions", mutation: true,
        """
        mutation CentraPaymentInstructions($input: PaymentInstructionsInput!) {
          paymentInstructions(input: $input) {
            action {
              __typename
              action
              ... on SuccessPaymentAction { order { ...OrderParts } }
              ... on RedirectPaymentAction { url }
              ... on FormPaymentAction { html formFields formType }
              ... on JavascriptPaymentAction { script formFields formType }
            }
            selection { ...SelectionParts }
            userErrors { message path }
          }
        }
        """, fragments: [selection, order, money])

    static let paymentResult = document(
        "CentraPaymentResult", mutation: true,
        """
        mutation CentraPaymentResult($fields: Map!) {
          paymentResult(paymentMethodFields: $fields) {
            __typename
            type
            ... on PaymentResultSuccessPayload { order { ...OrderParts } }
            selection { ...SelectionParts }
            userErrors { message path }
          }
        }
        """, fragments: [selection, order, money])

    static let all = [
        selectionQuery, orderQuery, beforePayment, expressCheckoutWidgets, addItem, updateLine, setShippingMethod,
        handleWidgetEvent, paymentInstructions, paymentResult,
    ]
}
