import Crypto
import Foundation
import Testing

@testable import CheckoutKit

@Suite struct RedactorTests {
    let mask = Redactor.mask

    /// A JWT under a secret's key keeps its header and payload (redacted) and loses its signature — a replay builds on
    /// its payload, and nobody can use it — and the signature is a secret wherever else it shows.
    @Test func aJWTKeepsItsShapeButNotItsSignature() throws {
        let r = Redactor()
        let header = Data(#"{"alg":"ES256","kid":"k"}"#.utf8).base64URLEncodedString()
        let payload = Data(#"{"amount":"10.00","token":"tok_secret_12345"}"#.utf8).base64URLEncodedString()
        let signature = "c2lnbmF0dXJlLWJ5dGVzLTEyMzQ1Njc4OTA"
        let jwt = "\(header).\(payload).\(signature)"
        let out = r.json(["jwtToken": .string(jwt)])
        let kept = try #require(out["jwtToken"]?.stringValue)
        let parts = kept.split(separator: ".").map(String.init)
        #expect(parts.count == 3 && parts[2] == "REDACTED", "\(kept)")
        let decoded = try JSON.parse(try #require(Data(base64URLEncoded: parts[1])))
        #expect(decoded == ["amount": "10.00", "token": .string(mask)])
        #expect(!kept.contains(signature))
        #expect(r.text("sig \(signature) in a message") == "sig \(mask) in a message")
        // Redacting the redacted form again changes nothing (a HAR is redacted once more as a whole).
        #expect(r.json(out) == out)
        #expect(r.text(out.serialized()) == out.serialized())
    }

    /// An Adyen threeDS2 action's token says where the challenge is: kept, its contents redacted.
    @Test func anAdyenChallengeTokenKeepsItsContents() throws {
        let r = Redactor()
        let inner: JSON = ["acsURL": "https://acs.example/challenge", "secret": "s3cr3t-value"]
        let token = inner.data.base64EncodedString()
        let out = r.json(["type": "threeDS2", "subtype": "challenge", "token": .string(token)])
        let kept = try JSON.parse(#require(out["token"]?.stringValue.flatMap { Data(base64Encoded: $0) }))
        #expect(kept == ["acsURL": "https://acs.example/challenge", "secret": .string(mask)])
        // Elsewhere a token is a token.
        #expect(r.json(["type": "card", "token": .string(token)])["token"] == .string(mask))
    }

    @Test func sensitiveHeadersAreMasked() {
        let r = Redactor()
        let out = r.headers([
            "Authorization": "Basic dXNlcjpwYXNz", "bn-api-key": "key-123456", "X-Shared-Secret": "s",
            "Cookie": "a=b", "Accept": "application/json",
        ])
        #expect(out["Authorization"] == mask)
        #expect(out["Bn-Api-Key"] == mask)
        #expect(out["X-Shared-Secret"] == mask)
        #expect(out["Cookie"] == mask)
        #expect(out["Accept"] == "application/json")
    }

    /// Every credential header, one at a time, each in a fresh redactor with a value it has never seen: a value
    /// already registered elsewhere would be masked by the value net and hide a header missing from the list.
    @Test(arguments: [
        "Authorization", "Proxy-Authorization", "X-Shared-Secret", "Bn-Api-Key", "Client-Key", "Cookie",
        "Set-Cookie", "X-Api-Key", "Api-Key", "X-Auth-Token",
    ])
    func eachCredentialHeaderIsMasked(name: String) {
        let value = "unseen-\(name.lowercased())-\(UUID().uuidString)"
        let shouted = "shouted-\(name.lowercased())-\(UUID().uuidString)"
        let r = Redactor()
        let out = r.headers(HTTPHeaders([(name, value), (name.uppercased(), shouted), ("Accept", "application/json")]))
        #expect(out.fields.map(\.name) == [name, name.uppercased(), "Accept"], "names and order are kept")
        #expect(out.fields.map(\.value) == [mask, mask, "application/json"], "\(name), in any letter case")
        // Masking a header is no reason to remember its value: only secret JSON keys and configured secrets are.
        #expect(r.knownSecrets.isEmpty)
    }

    /// Every secret JSON key, one at a time, each in a fresh redactor, nested and at the top in upper case; the
    /// value is remembered too, so it is masked where it reappears as text.
    @Test(arguments: [
        "client_secret", "clientSecret", "secret", "password", "token", "jwt", "signature", "api_key",
        "apiKey", "access_token", "refresh_token", "session_token", "sessionToken", "cvc", "cvv",
        "card_number", "cardNumber", "pan", "private_key", "shared_secret",
    ])
    func eachSecretKeyIsMasked(key: String) {
        let value = "unseen-\(key)-\(UUID().uuidString)"
        let shouted = "shouted-\(key)-\(UUID().uuidString)"
        let r = Redactor()
        let input = JSON.object([
            "outer": .array([.object([key: .string(value), "amount": 100])]), key.uppercased(): .string(shouted),
        ])
        let out = r.json(input)
        #expect(
            out
                == .object([
                    "outer": .array([.object([key: .string(mask), "amount": 100])]), key.uppercased(): .string(mask),
                ]),
            "\(key): \(out.serialized())")
        #expect(
            r.text("echoed: \(value) and \(shouted)") == "echoed: \(mask) and \(mask)",
            "values under \(key) are remembered")
    }

    /// A key is told sensitive in any case, byte by byte, and only when it is one of the keys: no prefix, no longer
    /// word.
    @Test func keysAreComparedInAnyCaseButExactly() {
        #expect(
            Redactor.isSensitiveKey("ToKeN") && Redactor.isSensitiveKey("CARDNUMBER")
                && Redactor.isSensitiveKey("Api_Key"))
        #expect(
            !Redactor.isSensitiveKey("tokens") && !Redactor.isSensitiveKey("toke") && !Redactor.isSensitiveKey("t0ken"))
        #expect(
            !Redactor.isSensitiveKey("token_type") && !Redactor.isSensitiveKey("") && !Redactor.isSensitiveKey("amount")
        )
        #expect(!Redactor.isSensitiveKey("[oken") && !Redactor.isSensitiveKey("@pi_key"))  // the bytes beside A and Z
        // only A–Z fold: not "_" into DEL
        #expect(!Redactor.isSensitiveKey("api\u{7F}key") && !Redactor.isSensitiveKey("API\u{7F}KEY"))
        #expect(Redactor.isSensitiveKey("to\u{212A}en"))  // the Kelvin sign's lowercase is "k"
        // Past the eighth byte (the second packed word), and past sixteen bytes.
        #expect(Redactor.isSensitiveKey("Shared_SecreT") && !Redactor.isSensitiveKey("shared_secrex"))
        #expect(!Redactor.isSensitiveKey("session_tokens") && !Redactor.isSensitiveKey("shared_secret_of_the_merchant"))
    }

    /// Every sensitive key is told in lower and upper case: each one is packed (none is too long or beyond ASCII).
    @Test func everySensitiveKeyIsPacked() {
        #expect(Redactor.sensitiveKeysPacked.map(\.count).reduce(0, +) == Redactor.sensitiveKeys.count)
        for key in Redactor.sensitiveKeys {
            #expect(Redactor.isSensitiveKey(key) && Redactor.isSensitiveKey(key.uppercased()), "\(key)")
        }
    }

    /// The shortest secrets are masked standing alone, in a JSON string of their own, and inside longer text; shorter
    /// values are never registered, so a string shorter than any secret is left as it is.
    @Test(arguments: ["s3cr3t", "pin-123", "k8s-key9", "Abcdefghi"])
    func theShortestSecretsAreMaskedStandingAlone(secret: String) {
        let r = Redactor(secrets: [secret])
        #expect(r.text(secret) == mask)
        #expect(r.json(["note": .string(secret)]) == ["note": .string(mask)])
        #expect(r.text("[\(secret)]") == "[\(mask)]")
        #expect(Redactor(secrets: ["12345"]).text("12345") == "12345", "five characters say nothing")
    }

    @Test func sensitiveJSONKeysAreMaskedAtAnyDepth() {
        let r = Redactor()
        let out = r.json([
            "client_secret": "pi_1_secret_2", "Token": "abc", "nested": ["list": [["signature": "sig", "ok": 1]]],
            "amount": 100, "jwt": nil,
        ])
        #expect(out["client_secret"] == .string(mask))
        #expect(out["Token"] == .string(mask))
        #expect(out["nested"] == ["list": [["signature": .string(mask), "ok": 1]]])
        #expect(out["amount"] == 100)
        #expect(out["jwt"] == .null)
    }

    @Test func applePayTokenDataIsMasked() {
        let r = Redactor()
        let token: JSON = [
            "paymentData": [
                "version": "EC_v1", "data": "BASE64CIPHERTEXT", "signature": "MIAGCSqG",
                "header": ["ephemeralPublicKey": "MFkw", "transactionId": "abc"],
            ]
        ]
        let out = r.json(token)
        #expect(out["paymentData"]?["data"] == .string(mask))
        #expect(out["paymentData"]?["signature"] == .string(mask))
        #expect(out["paymentData"]?["version"] == "EC_v1")
        #expect(out["paymentData"]?["header"]?["transactionId"] == "abc")
        // A plain `data` key elsewhere is not a credential.
        #expect(r.json(["data": "visible"])["data"] == "visible")
    }

    /// A token file's document is masked whole as written and in base64 (Adyen's `applepay.token`); escaped into a
    /// JSON string or a URL, by its secret parts, which are registered in every spelling of their own.
    @Test func aTokenDocumentIsMaskedWholeOrByItsParts() {
        let data = "c2VjcmV0IGNpcGhlcnRleHQ/+rest=="
        let signature = "MIAGCSqGSIb3DQEHAqCAMIACAQEx/+sig="
        let document =
            #"{"data":"\#(data)","header":{"ephemeralPublicKey":"MFkwEwYH","transactionId":"abc1234"},"signature":"\#(signature)","version":"EC_v1"}"#
        let r = Redactor()
        r.register(data)
        r.register(signature)
        r.register(document: document)
        let base64 = Data(document.utf8).base64EncodedString()
        let base64URL = base64.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
        #expect(
            Redactor.encodedForms(of: document, escaped: false).map { String(decoding: $0, as: UTF8.self) }
                == [document, base64, base64URL])
        #expect(r.text("token \(document) sent") == "token \(mask) sent")
        #expect(base64.hasSuffix("="), "padded, so that base64 and base64url differ: \(base64)")
        #expect(r.text("applepay.token=\(base64)") == "applepay.token=\(mask)")
        // Inside a serialized GraphQL body (a JSON string holding the document) and a query string.
        let escaped = JSON.string(document).serialized()
        let inBody = r.text(#"{"variables":{"applePayToken":\#(escaped)}}"#)
        let inQuery = r.text(
            "https://h/x?token=" + PercentEncoding.encoded(document, keeping: PercentEncoding.unreserved))
        for masked in [inBody, inQuery] {
            #expect(!masked.contains("c2VjcmV0") && !masked.contains("MIAGCSqG"), "\(masked)")
            #expect(masked.contains("abc123"), "the header is not a secret: \(masked)")
        }
    }

    @Test func registeredSecretsAreMaskedEverywhere() {
        let r = Redactor(secrets: ["sk_test_SECRET42"])
        #expect(r.text("failed with key sk_test_SECRET42 here") == "failed with key \(mask) here")
        #expect(r.text("https://h/x?key=sk_test_SECRET42&y=1") == "https://h/x?key=\(mask)&y=1")
        #expect(r.json(["note": "key=sk_test_SECRET42"])["note"] == .string("key=\(mask)"))
        #expect(r.headers(["X-Other": "Bearer sk_test_SECRET42"])["X-Other"] == "Bearer \(mask)")
        #expect(!r.body(Data(#"{"k":"sk_test_SECRET42"}"#.utf8), contentType: "application/json").contains("SECRET42"))
        #expect(!r.body(Data("k=sk_test_SECRET42".utf8), contentType: "text/plain").contains("SECRET42"))
    }

    /// The search rolls its key on byte by byte: a secret is found at every offset, at the very end, right after
    /// another one and after a near miss that shares its first bytes.
    @Test func secretsAreFoundAtEveryOffset() {
        let r = Redactor(secrets: ["sk_test_SECRET42", "tok_live_77"])
        for offset in 0..<10 {
            let pad = String(repeating: "x", count: offset)
            #expect(r.text(pad + "sk_test_SECRET42") == pad + mask, "at the end after \(offset)")
            #expect(r.text(pad + "sk_test_SECRET42" + pad) == pad + mask + pad)
        }
        #expect(r.text("sk_test_SECRET42tok_live_77") == mask + mask)
        #expect(r.text("sk_test_SECRETsk_test_SECRET42.") == "sk_test_SECRET" + mask + ".")
        #expect(r.text("sk_test_SECRET4") == "sk_test_SECRET4", "one byte short")
    }

    /// A document in which nothing is a secret comes back as the very value given (no object of it copied), and one
    /// with a secret deep inside changes there only.
    @Test func aDocumentWithoutSecretsKeepsItsStorage() throws {
        let r = Redactor(secrets: ["sk_test_SECRET42"])
        let document = try JSON.parse(
            #"{"order":{"id":"ord_1","lines":[{"name":"Linen shirt","price":"799.00"},{"name":"Socks"}]},"n":[1,2]}"#)
        #expect(r.json(document).isIdentical(to: document))
        let note = JSONPath(components: [.key("order"), .key("lines"), .index(1), .key("note")])
        let first = JSONPath(components: [.key("order"), .key("lines"), .index(0)])
        let shown = r.json(note.setting("key sk_test_SECRET42", in: document))
        #expect(note.evaluate(shown) == .string("key \(mask)"))
        #expect(first.evaluate(shown) == first.evaluate(document))
        #expect(shown["n"] == [1, 2] && shown["order"]?["id"] == "ord_1")
    }

    /// A value registered again for another holder takes the forms made of it the first time: once the first holder
    /// is forgotten, every form is still masked for the second.
    @Test func aValueRegisteredAgainKeepsEveryFormForItsNewHolder() {
        let value = "cst_rotated/session token+1"
        let forms = Redactor.encodedForms(of: value).map { String(decoding: $0, as: UTF8.self) }
        #expect(forms.count >= 6, "\(forms)")
        for laterHolder in ["run 2", nil] {
            let r = Redactor()
            Redactor.$run.withValue("run 1") { r.register(value) }
            Redactor.$run.withValue(laterHolder) { r.register(value) }
            r.forget(run: "run 1")
            for form in forms {
                #expect(r.text("<\(form)>") == "<\(mask)>", "\(form), held by \(laterHolder ?? "the process")")
            }
            if let laterHolder {
                r.forget(run: laterHolder)
                #expect(r.text(value) == value)
            }
        }
    }

    /// A form two values share is one form: registering a value whose spellings are all known already (the same secret
    /// read with a line break) learns nothing new, so that nothing masked before is masked again for it.
    @Test func spellingsAlreadyKnownAreNotLearnedAgain() {
        let r = Redactor()
        Redactor.$run.withValue("run 1") { r.register("sk_test_SECRET42/x") }
        let learned = r.generation
        Redactor.$run.withValue("run 2") { r.register(" sk_test_SECRET42/x\n") }
        #expect(r.generation == learned)
        #expect(r.forms(since: learned).isEmpty)
        r.forget(run: "run 1")
        #expect(r.text("k=sk_test_SECRET42%2Fx") == "k=\(mask)", "run 2 holds every form still")
    }

    /// Two normal forms of one text are two secrets, each registered and masked in its own bytes (`String`'s `==`
    /// takes them for the same).
    @Test func eachNormalFormOfASecretIsItsOwn() {
        let r = Redactor()
        let composed = "caf\u{E9}-secret-value"
        let decomposed = "cafe\u{301}-secret-value"
        r.register(composed)
        r.register(decomposed)
        #expect(r.text("a \(composed) b") == "a \(mask) b")
        #expect(r.text("a \(decomposed) b") == "a \(mask) b")
        #expect(r.knownSecrets.contains { $0.utf8.elementsEqual(decomposed.utf8) })
    }

    @Test func longerSecretsAreMaskedWhole() {
        let r = Redactor(secrets: ["abcdef", "abcdef-ghijkl"])
        #expect(r.text("x abcdef-ghijkl y") == "x \(mask) y")
    }

    @Test func urlPasswordsAreMasked() {
        let r = Redactor()
        #expect(
            r.text("GET https://merchant:hunter2@api.example.com/v2/x")
                == "GET https://merchant:\(mask)@api.example.com/v2/x")
        #expect(r.text("http://127.0.0.1:8080/path") == "http://127.0.0.1:8080/path")
    }

    @Test func compactJWSShowsTheRedactedPayloadWithoutTheSignature() {
        let r = Redactor()
        let header = Data(#"{"alg":"ES256","kid":"k1"}"#.utf8).base64URLEncodedString()
        let payload = Data(#"{"amount":100,"client_secret":"cs_live_abc"}"#.utf8).base64URLEncodedString()
        let signature = "c2lnbmF0dXJlLWJ5dGVz"
        let shown = r.body(Data("\(header).\(payload).\(signature)".utf8), contentType: "application/jose")
        #expect(shown.hasPrefix("JWS "))
        #expect(shown.contains(#""alg":"ES256""#))
        #expect(shown.contains(#""amount":100"#))
        #expect(!shown.contains("cs_live_abc"))
        #expect(!shown.contains(signature))
        #expect(shown.hasSuffix(".\(mask)"))
    }

    @Test func shortValuesAreNotRegistered() {
        let r = Redactor(secrets: ["abcde", "  ok  ", "1"])
        #expect(r.knownSecrets.isEmpty)
        #expect(r.text("abcde ok 1") == "abcde ok 1")
        r.register("abcdef")
        #expect(r.knownSecrets.contains("abcdef"))
        #expect(r.knownSecrets.allSatisfy { $0.count >= 6 })
    }

    @Test func formBodiesAndBinaryBodies() {
        let r = Redactor()
        #expect(
            r.body(Data("a=1&password=pw&b=2".utf8), contentType: "application/x-www-form-urlencoded")
                == "a=1&password=\(mask)&b=2")
        #expect(r.body(Data([0xff, 0xfe, 0x00]), contentType: nil) == "<3 bytes of binary data>")
    }

    /// A batch's run registers its secrets as its own, and they go when it is forgotten — unless the process, or
    /// another run still going, registered them too. Generations only grow, so a renderer's cache is never told a
    /// forgotten form is new, nor misses one learned after.
    @Test func aRunsSecretsAreForgottenWithItOnly() {
        let r = Redactor(secrets: ["process-wide-secret"])
        Redactor.$run.withValue("run 1") {
            r.register("token-of-run-one")
            r.register("shared-between-runs")
            r.register("later-made-permanent")
        }
        Redactor.$run.withValue("run 2") { r.register("shared-between-runs") }
        r.register("later-made-permanent")
        let before = r.generation
        r.forget(run: "run 1")
        #expect(r.text("token-of-run-one") == "token-of-run-one", "forgotten")
        #expect(
            r.text(Data("token-of-run-one".utf8).base64EncodedString())
                == Data("token-of-run-one".utf8).base64EncodedString(), "every form of it")
        #expect(r.text("shared-between-runs") == mask, "run 2 still holds it")
        #expect(r.text("later-made-permanent") == mask, "the process registered it too")
        #expect(r.text("process-wide-secret") == mask)
        #expect(r.generation == before)
        r.forget(run: "run 2")
        #expect(r.text("shared-between-runs") == "shared-between-runs")
        // Registered again after it was forgotten: learned anew, at a newer generation.
        Redactor.$run.withValue("run 3") { r.register("token-of-run-one") }
        #expect(r.text("token-of-run-one") == mask)
        #expect(r.generation > before)
        #expect(r.forms(since: before).contains(Array("token-of-run-one".utf8)))
        #expect(!r.forms(since: before).contains(Array("shared-between-runs".utf8)))
    }

    /// Long secrets alike in their length, their first and their last 32 bytes (a key is hashed by those alone) are
    /// still two secrets: each is masked, and forgetting one run's leaves the other's.
    @Test func longSecretsAlikeAtBothEndsAreTwoSecrets() {
        let head = String(repeating: "h", count: 40)
        let tail = String(repeating: "t", count: 40)
        let first = head + "first-middle" + tail
        let second = head + "other-middle" + tail
        let r = Redactor()
        Redactor.$run.withValue("run 1") { r.register(first) }
        Redactor.$run.withValue("run 2") { r.register(second) }
        #expect(r.text("a \(first) b \(second) c") == "a \(mask) b \(mask) c")
        r.forget(run: "run 1")
        #expect(r.text(first) == first)
        #expect(r.text(second) == mask)
        #expect(r.text(Data(second.utf8).base64EncodedString()) == mask, "and its forms")
    }

    /// A forgotten run's forms are no longer among those learned since an earlier generation: a state-file part masked
    /// before is not searched for them again.
    @Test func forgottenFormsAreNoLongerListedAsLearned() {
        let r = Redactor()
        let start = r.generation
        Redactor.$run.withValue("a") { r.register("forgotten-secret-value") }
        Redactor.$run.withValue("b") { r.register("kept-secret-value") }
        r.forget(run: "a")
        let listed = r.forms(since: start)
        #expect(!listed.contains(Array("forgotten-secret-value".utf8)))
        #expect(listed.contains(Array("kept-secret-value".utf8)))
        #expect(r.generation > start)
    }

    /// The percent-encoded forms and the trimming are made on bytes, and equal Foundation's for every kind of
    /// character.
    @Test(arguments: [
        "sk_test/secret value+1", "a b&c=d?e#f", "ünïcødé 🔑 key", "~-._ unreserved!$'()*,;:@", "%41 already",
        "\t tabbed \n",
        "\u{3000}ideographic space\u{00A0}", "", "sk_test/slash_only",
    ])
    func encodedFormsAreFoundationsOnBytes(_ secret: String) {
        let unreserved = CharacterSet(
            charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
        #expect(
            PercentEncoding.encoded(secret, keeping: PercentEncoding.unreserved)
                == secret.addingPercentEncoding(withAllowedCharacters: unreserved))
        #expect(
            PercentEncoding.pathSegment(secret)
                == secret.addingPercentEncoding(
                    withAllowedCharacters: .urlPathAllowed.subtracting(CharacterSet(charactersIn: "/"))))
        #expect(
            Redactor.encodedForms(of: secret).contains(
                Array(secret.addingPercentEncoding(withAllowedCharacters: .urlQueryAllowed)!.utf8)))
        #expect(
            Redactor.encodedForms(of: secret).contains(
                Array(secret.addingPercentEncoding(withAllowedCharacters: unreserved)!.utf8)))
        // The rest of Foundation's spellings: JSON (and with "/" escaped), form encoding, base64 and base64url.
        let forms = Redactor.encodedForms(of: secret)
        let json = String(
            decoding: try! JSONSerialization.data(withJSONObject: [secret], options: [.fragmentsAllowed]), as: UTF8.self
        )
        #expect(forms.contains(Array(json.dropFirst(2).dropLast(2).utf8)), "\(json)")
        #expect(forms.contains(Array(Data(secret.utf8).base64EncodedString().utf8)))
        let url = Data(secret.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(
            of: "/", with: "_"
        )
        .replacingOccurrences(of: "=", with: "")
        #expect(forms.contains(Array(url.utf8)))
        if secret.contains(" ") {
            #expect(
                forms.contains(
                    Array(
                        secret.addingPercentEncoding(withAllowedCharacters: unreserved)!.replacingOccurrences(
                            of: "%20", with: "+"
                        ).utf8)))
        }
        #expect(Redactor.trimmed(secret) == secret.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// A secret is registered without the white space around it — Unicode's, line breaks and no-break spaces included —
    /// and as it is when it starts and ends with a printable ASCII character.
    @Test(arguments: [
        "tok_123", "a", "  spaced  ", "\tx y\n", "\u{00A0}no-break\u{00A0}", "em\u{2003}", "\u{2028}line", "é-accent-é",
        "~tilde~", " ", "",
    ])
    func aSecretIsTrimmedOfWhiteSpaceOnly(_ secret: String) {
        #expect(Redactor.trimmed(secret) == secret.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// A configured secret is masked in the forms it takes on the way: JSON-escaped, percent-encoded, base64, and
    /// line by line for a PEM.
    @Test func encodedFormsOfASecretAreMaskedToo() {
        let pem =
            "-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg\nhsSecretSecretSecretSecretSecretSecretSecretSecret\n-----END PRIVATE KEY-----"
        let key = "sk_test/secret value+1"
        let r = Redactor(secrets: [pem, key])
        let escaped = String(JSON.string(pem).serialized().dropFirst().dropLast())
        #expect(escaped.contains("\\n"))
        #expect(r.text("body: {\"key\":\"\(escaped)\"}") == "body: {\"key\":\"\(mask)\"}")
        #expect(!r.text(escaped.replacingOccurrences(of: "/", with: "\\/")).contains("MIGHAgEAMBMGByqGSM49"))
        #expect(r.text("one line: MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg") == "one line: \(mask)")
        #expect(r.text("-----BEGIN PRIVATE KEY-----") == "-----BEGIN PRIVATE KEY-----", "the armour is no secret")
        #expect(r.text("https://h/x?k=sk_test%2Fsecret%20value%2B1") == "https://h/x?k=\(mask)")
        #expect(r.text("form: k=sk_test%2Fsecret+value%2B1") == "form: k=\(mask)")
        #expect(r.text("b64 \(Data(key.utf8).base64EncodedString())") == "b64 \(mask)")
        #expect(r.text("b64url \(Data(key.utf8).base64URLEncodedString())") == "b64url \(mask)")
        #expect(
            !r.body(Data(#"{"echo":"\#(escaped)"}"#.utf8), contentType: "application/json").contains(
                "MIGHAgEAMBMGByqGSM49"))
    }
}
