import Crypto
import Foundation
import WireTypes

/// The JWT sign-payment hands out and validate-payment (and v3 confirm) takes back: ES256 over
/// b64url(header).b64url(payload), the header `{kid, alg: "ES256", ttl}`, signed with the emulator's api-plus key.
enum CashAppJWT {
    /// Loaded once; the PEMs are constants, so a failure is a build defect.
    static let signingKey: P256PrivateKey = {
        do { return try P256PrivateKey(pem: TestCredentials.afterpayJWTPrivateKeyPEM) } catch {
            fatalError("the Afterpay JWT private key in TestCredentials does not load: \(error)")
        }
    }()

    static let verifyingKey: P256PublicKey = {
        do { return try P256PublicKey(pem: TestCredentials.afterpayJWTPublicKeyPEM) } catch {
            fatalError("the Afterpay JWT public key in TestCredentials does not load: \(error)")
        }
    }()

    static func sign(_ payload: JSON) -> String {
        let header: JSON = [
            "kid": .string(TestCredentials.afterpayJWTKeyID), "alg": "ES256", "ttl": JSON(CashAppRules.jwtTTL),
        ]
        let input =
            EmulatorResponse.encode(header).base64URLEncodedString() + "."
            + EmulatorResponse.encode(payload).base64URLEncodedString()
        return input + "." + signingKey.signES256(Data(input.utf8)).base64URLEncodedString()
    }

    /// The payload of a JWT this emulator signed that has not expired; `invalid_jwt` (400) for anything else.
    static func verify(_ jwt: String, now: Date = Date()) throws(AfterpayFailure) -> JSON.Object {
        func invalid(_ why: String) -> AfterpayFailure {
            AfterpayFailure(400, "invalid_jwt", "The JWT is invalid: \(why)")
        }
        let parts = jwt.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 3 else { throw invalid("expected three base64url parts separated by '.'") }
        guard let headerBytes = Data(base64URLEncoded: parts[0]),
            let header = (try? JSON.parse(headerBytes))?.objectValue
        else {
            throw invalid("the header is not base64url JSON")
        }
        guard header.string("alg") == "ES256", header.string("kid") == TestCredentials.afterpayJWTKeyID else {
            throw invalid("not signed with ES256 by key \(TestCredentials.afterpayJWTKeyID)")
        }
        guard let signature = Data(base64URLEncoded: parts[2]),
            verifyingKey.verifyES256(signature: signature, message: Data((parts[0] + "." + parts[1]).utf8))
        else {
            throw invalid("the signature does not verify")
        }
        guard let payloadBytes = Data(base64URLEncoded: parts[1]),
            let payload = (try? JSON.parse(payloadBytes))?.objectValue
        else {
            throw invalid("the payload is not base64url JSON")
        }
        guard let exp = payload.integer("exp"), Double(exp) > now.timeIntervalSince1970 else {
            throw invalid("it has expired (sign the token again)")
        }
        return payload
    }
}
