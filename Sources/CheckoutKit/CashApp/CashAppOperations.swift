import Foundation

/// The Afterpay + Cash App Pay operations a flow step can `use`, one per SDK call the integration guide describes
/// (docs/protocols/cashapp-afterpay.md): the server checkout (checkout → sign → request → poll → validate → capture or
/// auth) and the Afterpay Button (button → sign → request → poll → confirm). Chained through the state file's `cashapp`
/// section (`CashAppState`).
public enum CashAppOperations {
    public static var all: [FlowOperation] {
        [
            checkout, button, sign, request, CashAppApproval.poll, validate, CashAppPayments.capture,
            CashAppPayments.auth,
            CashAppPayments.payment, CashAppCard.confirm, decide,
        ]
    }

    static let amountHelp =
        "in the currency's major units: 19.99, or 19 for 19.00 (read exactly, never as a binary number)"

    /// The total cashapp.checkout and cashapp.button take. Afterpay takes money as decimal strings in major units, so
    /// an amount is read as one.
    static func amountArgument<Root>(_ path: WritableKeyPath<Root, Int> & Sendable) -> Argument<Root> {
        .amount("amount", path, .majorUnits, currency: "currency", defaultCurrency: "USD", help: amountHelp)
    }
    /// The currency of cashapp.checkout's and cashapp.button's amounts.
    static func currencyArgument<Root>(_ path: WritableKeyPath<Root, Currency> & Sendable) -> Argument<Root> {
        .currency("currency", path, default: "USD", help: "ISO 4217; Cash App Pay through Afterpay is US only (USD)")
    }

    /// What a step outputs that answers with the customer request.
    static let requestOutputs: [FlowOperation.Output] = [
        .init("request", "the customer request as Cash App returned it"), .init("summary.id", "its id (GRR_…)"),
        .init("summary.status", "PENDING, APPROVED or DECLINED"),
    ]

    /// `cashapp.checkout`'s arguments.
    public struct Checkout: OperationArguments {
        public var amount = 0  // required: read before the body runs
        public var currency = Currency.usd
        public var email: String?
        public var confirmUrl: String?
        public var cancelUrl: String?
        public var merchantReference: String?

        public init() {}

        public static let arguments: [Argument<Checkout>] = [
            amountArgument(\.amount), currencyArgument(\.currency), .string("email", \.email),
            .string("confirmUrl", \.confirmUrl),
            .string("cancelUrl", \.cancelUrl), .string("merchantReference", \.merchantReference),
        ]
    }

    public static let checkout = FlowOperation(
        name: "cashapp.checkout",
        summary: "Create an Afterpay checkout for Cash App Pay (POST /v2/checkouts, isCashAppPay: true).",
        arguments: Checkout.self, requiredConfiguration: AfterpayClient.serverConfiguration,
        stateCheck: CashAppState.check,
        outputs: [
            .init("token", "the checkout token (a secret: shown masked)"),
            .init("expires", "when the checkout expires"),
            .init("redirectCheckoutUrl", "Afterpay's checkout page"),
            .init("summary.amount", "the total, a decimal string"),
            .init("summary.cents", "the total in minor units"), .init("summary.currency", "ISO 4217 code"),
        ]
    ) { (args: Checkout, context: OperationContext) async throws(Diagnostic) -> StepOutput in
        let currency = try afterpayCurrency(args.currency)
        let amount = args.amount
        var body: JSON.Object = [
            "amount": ["amount": .string(currency.decimal(amount)), "currency": .string(currency.code)],
            "consumer": ["email": .string(args.email ?? CashAppProtocol.defaultEmail)],
            "merchant": [
                "redirectConfirmUrl": .string(args.confirmUrl ?? CashAppProtocol.defaultConfirmURL),
                "redirectCancelUrl": .string(args.cancelUrl ?? CashAppProtocol.defaultCancelURL),
            ],
            "isCashAppPay": true,
        ]
        body["merchantReference"] = args.merchantReference.map(JSON.string)
        // A new checkout starts over: nothing of the previous one may be signed, requested or captured by mistake.
        try CashAppState(store: context.state).update { $0 = CashAppSection() }
        let response = try await AfterpayClient(context).server(
            "POST", CashAppProtocol.checkoutsPath, body: .object(body))
        let document = try response.requireSuccess("create checkout")
        guard let token = document["token"]?.stringValue else {
            throw .unavailable(
                "Afterpay's checkout answer has no token", hint: "check AFTERPAY_API_URL (see the answer with -v)")
        }
        try CashAppState(store: context.state).update {
            $0 = CashAppSection(flow: .server, token: token, amount: amount, currency: currency.code)
        }
        var output = document.objectValue ?? [:]
        output["summary"] = [
            "amount": .string(currency.decimal(amount)), "cents": .number(amount),
            "currency": .string(currency.code), "expires": document["expires"] ?? .null,
        ]
        return StepOutput(document: .object(output), status: response.status)
    }

    /// `cashapp.button`'s arguments.
    public struct Button: OperationArguments {
        public var amount = 0  // required: read before the body runs
        public var currency = Currency.usd
        public var shipping: Int?
        public var tax: Int?
        public var email: String?

        public init() {}

        public static let arguments: [Argument<Button>] = [
            amountArgument(\.amount), currencyArgument(\.currency),
            .amount(
                "shipping", \.shipping, .majorUnits, currency: "currency", defaultCurrency: "USD", allowingZero: true,
                default: "0.00", help: "shipping amount within the total"),
            .amount(
                "tax", \.tax, .majorUnits, currency: "currency", defaultCurrency: "USD", allowingZero: true,
                default: "0.00", help: "tax amount within the total"),
            .string("email", \.email),
        ]
    }

    public static let button = FlowOperation(
        name: "cashapp.button", summary: "Create an Afterpay Button (v3) checkout for Cash App Pay (POST /v3/button).",
        arguments: Button.self, requiredConfiguration: AfterpayClient.buttonConfiguration,
        stateCheck: CashAppState.check,
        outputs: [
            .init("token", "the button token (a secret: shown masked)"),
            .init("singleUseCardToken", "names the virtual card"),
            .init("confirmMustBeCalledBefore", "confirm before this time"),
            .init("redirectCheckoutUrl", "Afterpay's checkout page"),
            .init("summary.amount", "the total, a decimal string"), .init("summary.cents", "the total in minor units"),
            .init("summary.currency", "ISO 4217 code"),
        ]
    ) { (args: Button, context: OperationContext) async throws(Diagnostic) -> StepOutput in
        let currency = try afterpayCurrency(args.currency)
        let amount = args.amount
        func part(_ minor: Int?) -> JSON {
            ["amount": .string(currency.decimal(minor ?? 0)), "currency": .string(currency.code)]
        }
        let body: JSON = [
            "shopDirectoryId": .string(CashAppProtocol.sandboxShopDirectoryID),
            "shopDirectoryMerchantId": .string(
                try context.configuration.headerValue("AFTERPAY_SHOP_MERCHANT_ID") ?? ""),
            "amount": ["amount": .string(currency.decimal(amount)), "currency": .string(currency.code)],
            "shippingAmount": part(args.shipping), "taxAmount": part(args.tax), "items": [],
            "consumer": ["email": .string(args.email ?? CashAppProtocol.defaultEmail)],
            "merchant": [
                "redirectConfirmUrl": .string(CashAppProtocol.defaultConfirmURL),
                "redirectCancelUrl": .string(CashAppProtocol.defaultCancelURL),
            ],
            "isCashAppPay": true,
        ]
        try CashAppState(store: context.state).update { $0 = CashAppSection() }
        let response = try await AfterpayClient(context).plus(CashAppProtocol.buttonPath, body: body, sdkHeader: true)
        let document = try response.requireSuccess("create the Afterpay Button checkout")
        guard let token = document["token"]?.stringValue, let card = document["singleUseCardToken"]?.stringValue else {
            throw .unavailable(
                "Afterpay's button answer has no token or singleUseCardToken",
                hint: "check AFTERPAY_PLUS_URL (see the answer with -v)")
        }
        try CashAppState(store: context.state).update { section in
            section = CashAppSection(flow: .button, token: token, amount: amount, currency: currency.code)
            section.singleUseCardToken = card
            section.confirmBefore = document["confirmMustBeCalledBefore"]?.stringValue
        }
        var output = document.objectValue ?? [:]
        output["summary"] = [
            "amount": .string(currency.decimal(amount)), "cents": .number(amount), "currency": .string(currency.code),
            "confirmMustBeCalledBefore": document["confirmMustBeCalledBefore"] ?? .null,
        ]
        return StepOutput(document: .object(output), status: response.status)
    }

    /// `currency`, when Afterpay can take it: it is sent by its alphabetic code, as Afterpay's Money takes it.
    static func afterpayCurrency(_ currency: Currency) throws(Diagnostic) -> Currency {
        guard currency.alphabetic != nil else {
            throw .usage(
                "currency \(currency.numeric) has no alphabetic code known here, and Afterpay takes one",
                hint: "give an alphabetic ISO 4217 code; Cash App Pay through Afterpay is US only: USD")
        }
        return currency
    }

    /// `cashapp.sign`'s arguments.
    public struct Sign: OperationArguments {
        public var token: String?

        public init() {}

        public static let arguments: [Argument<Sign>] = [
            .string("token", \.token, default: "the state file's", help: "a checkout or button token")
        ]
    }

    public static let sign = FlowOperation(
        name: "cashapp.sign", summary: "Sign the checkout token for Cash App (sign-payment) and keep the signing data.",
        arguments: Sign.self, requiredConfiguration: AfterpayClient.plusConfiguration, stateCheck: CashAppState.check,
        outputs: [
            .init(
                "signing", "what the signature covers: alg, kid, merchantId, amount (minor units), amountText, currency"
            ),
            .init("redirectUrl", "where Cash App returns (masked)"),
        ]
    ) { (args: Sign, context: OperationContext) async throws(Diagnostic) -> StepOutput in
        let state = CashAppState(store: context.state)
        var section = try state.read()
        if let given = args.token, given != section.token {
            // A token from elsewhere (the merchant's own server): a checkout of its own from here on.
            section = CashAppSection()
            section.flow = .server
            section.token = given
        }
        guard let token = section.token else {
            throw .usage(
                "no checkout token to sign",
                hint: "run `checkout-driver cashapp checkout --amount 10.00` first, or pass --token T")
        }
        let response = try await AfterpayClient(context).plus(CashAppProtocol.signPath, body: ["token": .string(token)])
        let document = try response.requireSuccess("sign-payment")
        guard let jwt = document["jwtToken"]?.stringValue, let brand = document["externalBrandId"]?.stringValue else {
            throw .unavailable(
                "Afterpay's sign-payment answer has no jwtToken or externalBrandId",
                hint: "check AFTERPAY_PLUS_URL (see the answer with -v)")
        }
        context.redactor.register(jwt)
        let signing = try SigningData(jwt: jwt, token: token)
        if let expected = section.amount, expected != signing.amount {
            context.note(
                "warning: the JWT signs \(signing.currency.format(signing.amount)), the checkout was for \(signing.currency.format(expected)); Cash App will ask for the JWT's amount"
            )
        }
        if section.jwt != jwt {
            // A new JWT: the request, approval and validation of the old one do not carry over.
            for path in [
                \CashAppSection.requestKey, \.requestBody, \.requestID, \.requestStatus, \.customerID, \.grantID,
            ] { section[keyPath: path] = nil }
            section.validated = false
        }
        section.jwt = jwt
        section.brandID = brand
        section.merchantID = signing.merchantID
        section.redirectURI = signing.redirectURI
        section.signedAmount = signing.amount
        section.currency = section.currency ?? signing.currency.code
        let signed = section
        try state.update { $0 = signed }
        return StepOutput(
            document: ["signing": signing.summary, "redirectUrl": document["redirectUrl"] ?? .null],
            status: response.status)
    }

    /// What Pay Kit's customer request is built from: the JWT's payload, decoded (never verified: that is Afterpay's
    /// job at validate-payment), with the amount parsed exactly from its decimal string.
    struct SigningData {
        var amount: Int
        var currency: Currency
        var redirectURI: String
        var merchantID: String
        var header: JSON

        init(jwt: String, token: String) throws(Diagnostic) {
            let parts = jwt.split(separator: ".", omittingEmptySubsequences: false)
            guard parts.count == 3, let headerBytes = Data(base64URLEncoded: String(parts[0])),
                let payloadBytes = Data(base64URLEncoded: String(parts[1])),
                let header = try? JSON.parse(headerBytes), let payload = try? JSON.parse(payloadBytes)
            else {
                throw .unavailable(
                    "Afterpay's jwtToken is not a JWT (three base64url parts of JSON)",
                    hint: "check AFTERPAY_PLUS_URL (see the answer with -v)")
            }
            let currency = (try? Currency.parse(payload["amount"]?["currency"]?.stringValue ?? "USD")) ?? .usd
            guard let text = payload["amount"]?["amount"]?.stringValue,
                let amount = currency.minorUnits(ofDecimal: text), amount > 0
            else {
                throw .failure(
                    "the JWT's amount.amount is not a decimal string: \(payload["amount"]?.serialized() ?? "missing")",
                    hint: "Afterpay signs amounts as strings such as \"50.00\"")
            }
            guard let redirect = payload["redirectUrl"]?.stringValue,
                let merchant = payload["externalMerchantId"]?.stringValue
            else {
                throw .failure(
                    "the JWT's payload lacks redirectUrl or externalMerchantId",
                    hint: "see the sign-payment answer with -v")
            }
            if let signed = payload["token"]?.stringValue, signed != token {
                throw .failure("Afterpay signed another checkout than the one sent", hint: "sign the checkout again")
            }
            self.amount = amount
            self.currency = currency
            redirectURI = redirect
            merchantID = merchant
            self.header = header
        }

        var summary: JSON {
            [
                "amount": .number(amount), "amountText": .string(currency.decimal(amount)),
                "currency": .string(currency.code),
                "redirectUri": .string(redirectURI), "merchantId": .string(merchantID),
                "alg": header["alg"] ?? .null, "kid": header["kid"] ?? .null,
            ]
        }
    }

    /// `cashapp.request`'s arguments.
    public struct Request: OperationArguments {
        public var scope = CashAppProtocol.Scope.brand
        public var redirectUrl: String?
        public var referenceId: String?

        public init() {}

        public static let arguments: [Argument<Request>] = [
            .choice(
                "scope", \.scope, default: "brand", help: "brand or merchant: which id goes into scope_id (UNCONFIRMED)"
            ),
            .string("redirectUrl", \.redirectUrl), .string("referenceId", \.referenceId),
        ]
    }

    public static let request = FlowOperation(
        name: "cashapp.request",
        summary: "Create the Cash App customer request (ONE_TIME_PAYMENT) and show its approval link.",
        arguments: Request.self, requiredConfiguration: CashAppClient.requiredConfiguration,
        stateCheck: CashAppState.check,
        outputs: requestOutputs + [
            .init("summary.approvalLink", "the link the customer approves at"),
            .init("summary.idempotencyKey", "the key the request was created under"),
        ]
    ) { (args: Request, context: OperationContext) async throws(Diagnostic) -> StepOutput in
        let client = try CashAppClient(context)
        let state = CashAppState(store: context.state)
        let section = try state.read()
        guard let amount = section.signedAmount, let brand = section.brandID, let merchant = section.merchantID else {
            throw .usage("the checkout is not signed yet", hint: "run `checkout-driver cashapp sign` first")
        }
        var request: JSON.Object = [
            // brand (the default) sends the signing data's brand id, merchant its merchant id.
            "actions": [
                [
                    "type": "ONE_TIME_PAYMENT", "scope_id": .string(args.scope == .brand ? brand : merchant),
                    "amount": .number(amount), "currency": .string(section.currency ?? "USD"),
                ]
            ],
            "channel": "IN_APP",
            // The signing data's redirectUri (the JWT payload's redirectUrl): where Cash App sends the customer back.
            "redirect_url": .string(args.redirectUrl ?? section.redirectURI ?? CashAppProtocol.defaultConfirmURL),
        ]
        request["reference_id"] = args.referenceId.map(JSON.string)
        let key = try state.requestKey(for: .object(request))
        let created = try await client.create(["request": .object(request), "idempotency_key": .string(key)])
        try state.update { section in
            section.requestID = created.id
            section.requestStatus = created.state
        }
        if let link = created.mobileURL { context.offer("approve in Cash App", url: link) }
        return StepOutput(
            document: [
                "request": created.json,
                "summary": [
                    "id": .string(created.id ?? ""), "status": .string(created.state ?? ""),
                    "approvalLink": created.mobileURL.map(JSON.string) ?? .null,
                    "idempotencyKey": .string(key),
                ],
            ],
            status: created.status)
    }

    public static let validate = FlowOperation(
        name: "cashapp.validate",
        summary: "Validate the approved order with Afterpay (validate-payment): only SUCCESS passes.",
        arguments: NoArguments.self, requiredConfiguration: AfterpayClient.plusConfiguration,
        stateCheck: CashAppState.check,
        outputs: [
            .init("validation.status", "SUCCESS (anything else fails the step)"),
            .init("validation.cashAppTag", "the customer's $cashtag"),
            .init("validation", "Afterpay's whole answer"),
        ]
    ) { (_: NoArguments, context: OperationContext) async throws(Diagnostic) -> StepOutput in
        let state = CashAppState(store: context.state)
        let section = try state.read()
        guard let jwt = section.jwt else {
            throw .usage(
                "nothing to validate: the checkout is not signed", hint: "run `checkout-driver cashapp sign` first")
        }
        guard let customer = section.customerID, let grant = section.grantID else {
            // A declined request never gets a grant: waiting for one would not help.
            if section.requestStatus == "DECLINED" {
                throw .failure(
                    "nothing to validate: the customer declined the payment in Cash App",
                    hint: "start again with `checkout-driver cashapp pay`, or offer another payment method")
            }
            throw .usage(
                "nothing to validate: the customer request has no approval with a grant yet",
                hint: "run `checkout-driver cashapp poll` until it is approved")
        }
        let response = try await AfterpayClient(context).plus(
            CashAppProtocol.validatePath,
            body: [
                "jwt": .string(jwt), "externalCustomerId": .string(customer),
                "externalGrantId": .string(grant),
            ])
        let document = try response.requireSuccess("validate-payment")
        let status = document["status"]?.stringValue ?? "none"
        try state.update { $0.validated = status == "SUCCESS" }
        guard status == "SUCCESS" else {
            throw .failure(
                "Afterpay did not validate the Cash App order: status \(status) (only SUCCESS may be captured)",
                hint: "do not capture it; start the payment again (`checkout-driver cashapp pay`)")
        }
        return StepOutput(document: ["validation": document], status: response.status)
    }

    /// `cashapp.decide`'s arguments.
    public struct Decide: OperationArguments {
        /// The word is the emulator's path segment and the command's name (`cashapp approve`, `cashapp decline`).
        public enum Decision: String, CaseIterable, Sendable { case approve, decline }

        public var decision = Decision.approve  // required: read before the body runs
        public var request: String?

        public init() {}

        public static let arguments: [Argument<Decide>] = [
            .choice("decision", \.decision, help: "approve or decline"),
            .string("request", \.request, default: "the state file's", help: "the customer request id"),
        ]
    }

    public static let decide = FlowOperation(
        name: "cashapp.decide", summary: "Play the customer on the emulator: approve or decline a customer request.",
        arguments: Decide.self, requiredConfiguration: ["EMULATOR_URL"], stateCheck: CashAppState.check,
        outputs: requestOutputs
    ) { (args: Decide, context: OperationContext) async throws(Diagnostic) -> StepOutput in
        let decision = args.decision.rawValue
        // The request a `cashapp pay` running in another terminal waits on is in its run's scope; else the chain's.
        let waiting = (try context.state?.runningScopes() ?? [:]).compactMap {
            $0.value["cashapp"]?["requestId"]?.stringValue
        }
        if args.request == nil && waiting.count > 1 {
            throw .usage(
                "\(waiting.count) runs are waiting on a customer request: \(waiting.sorted().joined(separator: ", "))",
                hint: "name one: `checkout-driver cashapp \(decision) GRR_…`")
        }
        let chained = try CashAppState(store: context.state).read().requestID
        let kept = waiting.first ?? chained
        guard let id = args.request ?? kept else {
            throw .usage(
                "no customer request in the state file",
                hint: "give its id (GRR_…), or run `checkout-driver cashapp request` first")
        }
        let url =
            HTTPURL.base(context.configuration.value("EMULATOR_URL")!) + "/_sandbox/cashapp/requests/\(id)/\(decision)"
        let timeout = context.requestTimeout
        let response = try await context.send { (_: Int) throws(Diagnostic) -> HTTPClientRequest in
            HTTPClientRequest(method: "POST", url: url, headers: ["Accept": "application/json"], timeout: timeout)
        }
        let decided: CustomerRequest
        do throws(Diagnostic) {
            decided = try CashAppResponse(response, hint: context.garbledHint(endpoint: CashAppResponse.endpointHint))
                .request("\(decision) \(id)")
        } catch {
            var failure = error
            if response.status == 404, context.services.emulatorEndsWithRun {
                failure.hint =
                    "the embedded emulator (--env local) ends with each command: start `checkout-driver sandbox serve` in another terminal, then run `cashapp pay` and `cashapp \(decision)` against it"
            }
            throw failure
        }
        return StepOutput(
            document: [
                "request": decided.json, "summary": ["id": .string(id), "status": .string(decided.state ?? "")],
            ],
            status: response.status)
    }
}
