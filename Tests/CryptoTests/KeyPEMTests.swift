import Foundation
import Testing

@testable import Crypto

/// A P-256 key PEM is read from its scalar or point (`PKeyBox.p256(pem:label:)`), not through OpenSSL 3.0's decoder
/// chains (about 0.7 ms a key); every other PEM still goes through them. Fixtures made with the `openssl` command line
/// (`ecparam -genkey`, `pkcs8 -topk8`, `ec -pubout`): test keys of no value.
@Suite struct KeyPEMTests {
    static let sec1 = """
        -----BEGIN EC PRIVATE KEY-----
        MHcCAQEEIP9o7iTgCRw0fRw0qbKpblpttsNJRvdVxjpZW3k+XUVdoAoGCCqGSM49
        AwEHoUQDQgAEdF9NqIna2h1l2HfhfljSjhAMrM+0EBZAxlcsoZ8tJYfn9F/yJGPM
        1hzC2fAPOIk/PXG7C8Q5sXJyT1+I6ELtcA==
        -----END EC PRIVATE KEY-----
        """
    /// The same key's public half.
    static let sec1Public = """
        -----BEGIN PUBLIC KEY-----
        MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEdF9NqIna2h1l2HfhfljSjhAMrM+0
        EBZAxlcsoZ8tJYfn9F/yJGPM1hzC2fAPOIk/PXG7C8Q5sXJyT1+I6ELtcA==
        -----END PUBLIC KEY-----
        """
    /// secp256k1: a 32-byte scalar too, on another curve.
    static let k1 = """
        -----BEGIN EC PRIVATE KEY-----
        MHQCAQEEIFPRe+t2/ceI9/vQGYhxxp9WSodk6ZbnLLL4wRDz5ZzboAcGBSuBBAAK
        oUQDQgAEs8IP/MODhRYD8KYripr9Qat8o5Q5qNPuhb5eLNGZOBGtQTHXAj0dw8zh
        zbHH8gUrW1kCLZiqBGqkRgsQvk32HQ==
        -----END EC PRIVATE KEY-----
        """
    static let k1PKCS8 = """
        -----BEGIN PRIVATE KEY-----
        MIGEAgEAMBAGByqGSM49AgEGBSuBBAAKBG0wawIBAQQgU9F763b9x4j3+9AZiHHG
        n1ZKh2TplucssvjBEPPlnNuhRANCAASzwg/8w4OFFgPwpiuKmv1Bq3yjlDmo0+6F
        vl4s0Zk4Ea1BMdcCPR3DzOHNscfyBStbWQItmKoEaqRGCxC+TfYd
        -----END PRIVATE KEY-----
        """
    /// `sec1`, encrypted (PKCS#8, passphrase "secret").
    static let encrypted = """
        -----BEGIN ENCRYPTED PRIVATE KEY-----
        MIHsMFcGCSqGSIb3DQEFDTBKMCkGCSqGSIb3DQEFDDAcBAjFH8D2jfB26wICCAAw
        DAYIKoZIhvcNAgkFADAdBglghkgBZQMEASoEEH4FhpqWQpMvE3dHk4qfgtEEgZCe
        shFE+rVGa1ZD+z/x9J1Scu89z7eEHEGJBWyoLRgwjsr4tiAdQRzsy9NxFQJRzMTd
        P2eC7wuXGd24KklEkEBVPs1BcGrB/jPpLAlflaxuNVNbBFD+WoKLybVM3cPvbaLp
        NLla1hP1eqcwZy4kfcw2CS7/BMdcwXjoHAbHyGLxHo5oqYoVNup2QAfE9OG6CbQ=
        -----END ENCRYPTED PRIVATE KEY-----
        """
    /// A P-256 key after an EC PARAMETERS block, as `openssl ecparam -genkey` writes it.
    static let afterParameters = """
        -----BEGIN EC PARAMETERS-----
        BggqhkjOPQMBBw==
        -----END EC PARAMETERS-----
        -----BEGIN EC PRIVATE KEY-----
        MHcCAQEEIA8REou5dV8bxMZwiG0AZE9F+CZUKkoivt3Yu/VDM29hoAoGCCqGSM49
        AwEHoUQDQgAEahbAfUJLdQw2jp7/7LSHCPoFdG83Qdjd/2nQAgp7Lbn7qzYHEDpQ
        263WYlssZiAps7ssseC+hQ9anDYtlWN/pw==
        -----END EC PRIVATE KEY-----
        """

    @Test func aP256KeyIsReadFromItsScalarAndAPublicKeyFromItsPoint() throws {
        let sec1 = try #require(PKeyBox.p256(pem: Self.sec1, label: "PRIVATE KEY"))
        #expect(sec1.isP256)
        let key = try P256PrivateKey(pem: Self.sec1)
        let pkcs8 = key.pemRepresentation
        #expect(pkcs8.hasPrefix("-----BEGIN PRIVATE KEY-----"))
        #expect(PKeyBox.p256(pem: pkcs8, label: "PRIVATE KEY") != nil)
        #expect(try P256PrivateKey(pem: pkcs8).rawScalar == key.rawScalar)
        #expect(PKeyBox.p256(pem: Self.sec1Public, label: "PUBLIC KEY") != nil)
        let publicKey = try P256PublicKey(pem: Self.sec1Public)
        #expect(key.publicKey == publicKey)
        // The key read so signs as the key it is.
        let message = Data("read from its scalar".utf8)
        #expect(publicKey.verifyES256(signature: key.signES256(message), message: message))
        // A label asked for is the only one taken.
        #expect(PKeyBox.p256(pem: Self.sec1Public, label: "PRIVATE KEY") == nil)
        #expect(PKeyBox.p256(pem: Self.sec1, label: "PUBLIC KEY") == nil)
    }

    @Test func anotherCurveIsNeverTakenForP256() throws {
        #expect(PKeyBox.p256(pem: Self.k1, label: "PRIVATE KEY") == nil)
        #expect(PKeyBox.p256(pem: Self.k1PKCS8, label: "PRIVATE KEY") == nil)
        #expect(throws: CryptoError.self) { try P256PrivateKey(pem: Self.k1) }
        #expect(throws: CryptoError.self) { try P256PrivateKey(pem: Self.k1PKCS8) }
        #expect(throws: CryptoError.self) { try SigningKey(pem: Self.k1PKCS8) }
    }

    @Test func everyOtherPEMGoesThroughOpenSSLAsBefore() throws {
        // Encrypted: refused, never asked a passphrase for.
        #expect(PKeyBox.p256(pem: Self.encrypted, label: "PRIVATE KEY") == nil)
        #expect(throws: CryptoError.self) { try P256PrivateKey(pem: Self.encrypted) }
        // A key after another block: read by OpenSSL, which looks past the parameters.
        #expect(PKeyBox.p256(pem: Self.afterParameters, label: "PRIVATE KEY") == nil)
        #expect(try P256PrivateKey(pem: Self.afterParameters).publicKey.x963Representation.count == 65)
        // RSA: OpenSSL's too.
        let rsa = RSAPrivateKey(bits: 2048)
        #expect(PKeyBox.p256(pem: rsa.pemRepresentation, label: "PRIVATE KEY") == nil)
        guard case .rs256 = try SigningKey(pem: rsa.pemRepresentation) else {
            Issue.record("an RSA key read as another kind")
            return
        }
        #expect(PKeyBox.p256(pem: rsa.publicKey.pemRepresentation, label: "PUBLIC KEY") == nil)
        #expect(try RSAPublicKey(pem: rsa.publicKey.pemRepresentation) == rsa.publicKey)
        // Not a PEM at all.
        #expect(PKeyBox.p256(pem: "no key here", label: "PRIVATE KEY") == nil)
        #expect(throws: CryptoError.self) { try P256PrivateKey(pem: "no key here") }
    }
}
