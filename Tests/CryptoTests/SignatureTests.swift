import Crypto
import Foundation
import Testing

/// RFC 7515 Appendix A.3: ES256 with the P-256 key of A.3.1.
@Suite struct ES256Tests {
    let x = b64u("f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU")
    let y = b64u("x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0")
    let d = b64u("jpsQnnGQmL-YBIffH1136cspYG6-0iY7X1fCE9-E9LI")
    let signingInput = Data(
        ("eyJhbGciOiJFUzI1NiJ9"
            + ".eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ").utf8)
    let signature = b64u("DtEhU3ljbEg8L38VWAfUAqOyKAM6-Xx-F4GawxaepmXFCgfTjDxw5djxLa8ISlSApmWQxfKTUJqPP3-Kg6NU1Q")

    @Test func publishedSignatureVerifies() throws {
        let publicKey = try P256PublicKey(x: x, y: y)
        #expect(signature.count == 64)
        #expect(publicKey.verifyES256(signature: signature, message: signingInput))
    }

    @Test func scalarDerivesThePublishedPublicKey() throws {
        let privateKey = try P256PrivateKey(rawScalar: d)
        #expect(privateKey.publicKey == (try P256PublicKey(x: x, y: y)))
        #expect(privateKey.publicKey.x963Representation == Data([0x04]) + x + y)
        #expect(privateKey.rawScalar == d)
    }

    @Test func signThenVerifyWithTheRFCKey() throws {
        let privateKey = try P256PrivateKey(rawScalar: d)
        let fresh = privateKey.signES256(signingInput)
        #expect(fresh.count == 64)
        #expect(privateKey.publicKey.verifyES256(signature: fresh, message: signingInput))
    }

    @Test func tamperingFails() throws {
        let publicKey = try P256PublicKey(x: x, y: y)
        var tamperedInput = signingInput
        tamperedInput[tamperedInput.startIndex + 5] ^= 0x01
        #expect(!publicKey.verifyES256(signature: signature, message: tamperedInput))
        #expect(!publicKey.verifyES256(signature: signature.flippingBit(at: 40), message: signingInput))
        #expect(!publicKey.verifyES256(signature: signature.prefix(63), message: signingInput))
        #expect(!publicKey.verifyES256(signature: Data(count: 64), message: signingInput))
    }

    @Test func keyEncodingsRoundTrip() throws {
        let key = P256PrivateKey()
        let pem = key.pemRepresentation
        #expect(pem.hasPrefix("-----BEGIN PRIVATE KEY-----"))
        let reloaded = try P256PrivateKey(pem: pem)
        #expect(reloaded.rawScalar == key.rawScalar)
        let publicKey = key.publicKey
        #expect(try P256PublicKey(pem: publicKey.pemRepresentation) == publicKey)
        #expect(try P256PublicKey(spkiDER: publicKey.spkiDER) == publicKey)
        #expect(try P256PublicKey(x963: publicKey.x963Representation) == publicKey)
        #expect(publicKey.spkiDER.count == 91)
    }

    /// Generated with `openssl ecparam -genkey -name prime256v1 -noout` (SEC1 form) and
    /// `openssl ec -pubout`.
    @Test func loadsSEC1PrivateKeyPEM() throws {
        let sec1 = """
            -----BEGIN EC PRIVATE KEY-----
            MHcCAQEEIJEvicRC8PXy58y7w1tklbw2dBYkIBomQYyvbG79zj9XoAoGCCqGSM49
            AwEHoUQDQgAEQRav+3MAhuO1nFQnapvsHESxn7A8wHJNQdvJP8XEE8JPvuztDD8b
            bIrGHYVd/N2u5igF4+dyt/R8aiZM/pQm4Q==
            -----END EC PRIVATE KEY-----
            """
        let publicPEM = """
            -----BEGIN PUBLIC KEY-----
            MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEQRav+3MAhuO1nFQnapvsHESxn7A8
            wHJNQdvJP8XEE8JPvuztDD8bbIrGHYVd/N2u5igF4+dyt/R8aiZM/pQm4Q==
            -----END PUBLIC KEY-----
            """
        let key = try P256PrivateKey(pem: sec1)
        #expect(key.publicKey == (try P256PublicKey(pem: publicPEM)))
        #expect(
            key.publicKey.x963Representation.hexString
                == "044116affb730086e3b59c54276a9bec1c44b19fb03cc0724d41dbc93fc5c413c2"
                + "4fbeeced0c3f1b6c8ac61d855dfcddaee62805e3e772b7f47c6a264cfe9426e1")
        #expect(try SigningKey(pem: sec1).algorithm == "ES256")
    }

    @Test func rejectsPointsOffTheCurveAndBadScalars() {
        #expect(throws: CryptoError.self) {
            try P256PublicKey(x: Data(repeating: 1, count: 32), y: Data(repeating: 2, count: 32))
        }
        #expect(throws: CryptoError.self) { try P256PublicKey(x963: Data(count: 65)) }
        #expect(throws: CryptoError.self) { try P256PrivateKey(rawScalar: Data(count: 32)) }
        #expect(throws: CryptoError.self) { try P256PrivateKey(rawScalar: Data(repeating: 0xff, count: 32)) }
        #expect(throws: CryptoError.self) { try P256PrivateKey(pem: "not a key") }
    }
}

/// NIST CAVS 14.1 KAS ECC CDH primitive test, [P-256] COUNT = 0.
@Suite struct ECDHTests {
    @Test func cavsP256Count0() throws {
        let peer = try P256PublicKey(
            x: hex("700c48f77f56584c5cc632ca65640db91b6bacce3a4df6b42ce7cc838833d287"),
            y: hex("db71e509e3fd9b060ddb20ba5c51dcc5948d46fbf640dfe0441782cab85fa4ac"))
        let ours = try P256PrivateKey(
            rawScalar: hex("7d7dc5f71eb29ddaf80d6214632eeae03d9058af1fb6d22ed80badb62bc1a534"))
        #expect(
            ours.publicKey
                == (try P256PublicKey(
                    x: hex("ead218590119e8876b29146ff89ca61770c4edbbf97d38ce385ed281d8a6b230"),
                    y: hex("28af61281fd35e2fa7002523acc85a429cb06ee6648325389f59edfce1405141"))))
        #expect(
            ours.sharedSecret(with: peer).hexString
                == "46fc62106420ff012e54a434fbdd2d25ccc5852060561e68040dd7778997bd7b")
    }

    @Test func bothSidesAgree() {
        let a = P256PrivateKey()
        let b = P256PrivateKey()
        #expect(a.sharedSecret(with: b.publicKey) == b.sharedSecret(with: a.publicKey))
        #expect(a.sharedSecret(with: b.publicKey).count == 32)
    }
}

/// RFC 7515 Appendix A.2: RS256 with the RSA key of A.2.1. PKCS#1 v1.5 is deterministic,
/// so the signature must match the RFC byte for byte.
@Suite struct RS256Tests {
    static let n = b64u(
        "ofgWCuLjybRlzo0tZWJjNiuSfb4p4fAkd_wWJcyQoTbji9k0l8W26mPddxHmfHQp-Vaw-4qPCJrcS2mJPMEzP1Pt0Bm4d4QlL-yRT-SFd2lZS-pCgNMsD1W_YpRPEwOWvG6b32690r2jZ47soMZo9wGzjb_7OMg0LOL-bSf63kpaSHSXndS5z5rexMdbBYUsLA9e-KXBdQOS-UTo7WTBEMa2R2CapHg665xsmtdVMTBQY4uDZlxvb3qCo5ZwKh9kG4LT6_I5IhlJH7aGhyxXFvUK-DWNmoudF8NAco9_h9iaGNj8q2ethFkMLs91kzk2PAcDTW9gb54h4FRWyuXpoQ"
    )
    static let e = b64u("AQAB")
    static let d = b64u(
        "Eq5xpGnNCivDflJsRQBXHx1hdR1k6Ulwe2JZD50LpXyWPEAeP88vLNO97IjlA7_GQ5sLKMgvfTeXZx9SE-7YwVol2NXOoAJe46sui395IW_GO-pWJ1O0BkTGoVEn2bKVRUCgu-GjBVaYLU6f3l9kJfFNS3E0QbVdxzubSu3Mkqzjkn439X0M_V51gfpRLI9JYanrC4D4qAdGcopV_0ZHHzQlBjudU2QvXt4ehNYTCBr6XCLQUShb1juUO1ZdiYoFaFQT5Tw8bGUl_x_jTj3ccPDVZFD9pIuhLhBOneufuBiB4cS98l2SR_RQyGWSeWjnczT0QU91p1DhOVRuOopznQ"
    )
    static let p = b64u(
        "4BzEEOtIpmVdVEZNCqS7baC4crd0pqnRH_5IB3jw3bcxGn6QLvnEtfdUdiYrqBdss1l58BQ3KhooKeQTa9AB0Hw_Py5PJdTJNPY8cQn7ouZ2KKDcmnPGBY5t7yLc1QlQ5xHdwW1VhvKn-nXqhJTBgIPgtldC-KDV5z-y2XDwGUc"
    )
    static let q = b64u(
        "uQPEfgmVtjL0Uyyx88GZFF1fOunH3-7cepKmtH4pxhtCoHqpWmT8YAmZxaewHgHAjLYsp1ZSe7zFYHj7C6ul7TjeLQeZD_YwD66t62wDmpe_HlB-TnBA-njbglfIsRLtXlnDzQkv5dTltRJ11BKBBypeeF6689rjcJIDEz9RWdc"
    )
    static let dp = b64u(
        "BwKfV3Akq5_MFZDFZCnW-wzl-CCo83WoZvnLQwCTeDv8uzluRSnm71I3QCLdhrqE2e9YkxvuxdBfpT_PI7Yz-FOKnu1R6HsJeDCjn12Sk3vmAktV2zb34MCdy7cpdTh_YVr7tss2u6vneTwrA86rZtu5Mbr1C1XsmvkxHQAdYo0"
    )
    static let dq = b64u(
        "h_96-mK1R_7glhsum81dZxjTnYynPbZpHziZjeeHcXYsXaaMwkOlODsWa7I9xXDoRwbKgB719rrmI2oKr6N3Do9U0ajaHF-NKJnwgjMd2w9cjz3_-kyNlxAr2v4IKhGNpmM5iIgOS1VZnOZ68m6_pbLBSp3nssTdlqvd0tIiTHU"
    )
    static let qi = b64u(
        "IYd7DHOhrWvxkwPQsRM2tOgrjbcrfvtQJipd-DlcxyVuuM9sQLdgjVk2oy26F0EmpScGLq2MowX7fhd_QJQ3ydy5cY7YIBi87w93IKLEdfnbJtoOPLUW0ITrJReOgo1cq9SbsxYawBgfp_gh6A5603k2-ZQwVK0JKSHuLFkuQ3U"
    )
    static let signingInput = Data(
        ("eyJhbGciOiJSUzI1NiJ9"
            + ".eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ").utf8)
    static let signature = b64u(
        "cC4hiUPoj9Eetdgtv3hF80EGrhuB__dzERat0XF9g2VtQgr9PJbu3XOiZj5RZmh7AAuHIm4Bh-0Qc_lF5YKt_O8W2Fp5jujGbds9uJdbF9CUAr7t1dnZcAcQjbKBYNX4BAynRFdiuB--f_nZLgrnbyTyWzO75vRK5h6xBArLIARNPvkSjtQBMHlb1L07Qe7K0GarZRmB_eSN9383LcOLn6_dO--xi12jzDwusC-eOkHWEsqtFZESc6BfI7noOPqvhJ1phCnvWh6IeYI2w9QOYEUipUTI8np6LbgGY9Fs98rqVt5AXLIhWkWywlVmtVrBp0igcN_IoypGlUPQGe77Rw"
    )

    static func rfcKey() throws -> RSAPrivateKey {
        try RSAPrivateKey(
            modulus: n, publicExponent: e, privateExponent: d, prime1: p, prime2: q,
            exponent1: dp, exponent2: dq, coefficient: qi)
    }

    @Test func signatureMatchesRFCExactly() throws {
        #expect(try Self.rfcKey().signRS256(Self.signingInput) == Self.signature)
    }

    @Test func publishedSignatureVerifiesWithPublicJWK() throws {
        let publicKey = try RSAPublicKey(modulus: Self.n, publicExponent: Self.e)
        #expect(publicKey.verifyRS256(signature: Self.signature, message: Self.signingInput))
        #expect(!publicKey.verifyRS256(signature: Self.signature.flippingBit(at: 100), message: Self.signingInput))
        #expect(!publicKey.verifyRS256(signature: Self.signature, message: Self.signingInput + Data([0x20])))
        #expect(try Self.rfcKey().publicKey == publicKey)
    }

    @Test func pemRoundTripAndGeneratedKey() throws {
        let reloaded = try RSAPrivateKey(pem: try Self.rfcKey().pemRepresentation)
        #expect(reloaded.signRS256(Self.signingInput) == Self.signature)

        let generated = RSAPrivateKey()
        let message = Data("hello".utf8)
        let signature = generated.signRS256(message)
        #expect(signature.count == 256)
        let publicKey = try RSAPublicKey(pem: generated.publicKey.pemRepresentation)
        #expect(publicKey.verifyRS256(signature: signature, message: message))
        #expect(try RSAPublicKey(spkiDER: publicKey.spkiDER) == publicKey)
    }

    @Test func signingKeyAndVerifyingKeyDispatch() throws {
        let rsa = try SigningKey(pem: try Self.rfcKey().pemRepresentation)
        #expect(rsa.algorithm == "RS256")
        #expect(try rsa.sign(Self.signingInput) == Self.signature)
        let rsaPublic = try VerifyingKey(pem: try Self.rfcKey().publicKey.pemRepresentation)
        #expect(rsaPublic.algorithm == "RS256")
        #expect(rsaPublic.verify(signature: Self.signature, message: Self.signingInput))

        let ecKey = P256PrivateKey()
        let ec = try SigningKey(pem: ecKey.pemRepresentation)
        #expect(ec.algorithm == "ES256")
        let ecSignature = try ec.sign(Self.signingInput)
        #expect(ecSignature.count == 64)
        let ecPublic = try VerifyingKey(pem: ecKey.publicKey.pemRepresentation)
        #expect(ecPublic == ec.verifyingKey)
        #expect(ecPublic.verify(signature: ecSignature, message: Self.signingInput))
        #expect(!rsaPublic.verify(signature: ecSignature, message: Self.signingInput))
    }
}
