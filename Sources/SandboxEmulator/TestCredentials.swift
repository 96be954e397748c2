import Foundation

/// The emulator's test credentials: fixed, public, and useless anywhere but here. They are the other half
/// of what `--env local` configures the driver with, so that the driver and the emulator agree without
/// any setup. Generated once with the `openssl` command line (P-256 keys; a root → intermediate → leaf
/// chain shaped like Apple's, the intermediate carrying OID 1.2.840.113635.100.6.2.14 and the leaf
/// 1.2.840.113635.100.6.29; valid for 30 years from 2026-11-29).
///
/// NOT SECRET: these keys are published in this repository on purpose. Never use them outside the emulator.
///
/// Apple Pay's test PKI, which every wallet provider's token goes through, is here; each provider's own credentials
/// are in its folder (`Bahn/BahnTestCredentials.swift`, …): adding a provider touches only its own folders.
public enum TestCredentials {
    // MARK: Apple Pay

    /// The emulator's stand-in for Apple Root CA - G3: the trust anchor it verifies token signatures against.
    public static let applePayRootCertificatePEM = """
        -----BEGIN CERTIFICATE-----
        MIIB+jCCAaCgAwIBAgIUP47L8bfO1ibM7zP6ldZVzZyF+0owCgYIKoZIzj0EAwIw
        WjEwMC4GA1UEAwwnQ2hlY2tvdXQgRHJpdmVyIFRlc3QgQXBwbGUgUm9vdCBDQSAt
        IEczMSYwJAYDVQQKDB1jaGVja291dC1kcml2ZXIgdGVzdCBmaXh0dXJlczAgFw0y
        NjExMjkxMzU4MDVaGA8yMDU2MTEyMTEzNTgwNVowWjEwMC4GA1UEAwwnQ2hlY2tv
        dXQgRHJpdmVyIFRlc3QgQXBwbGUgUm9vdCBDQSAtIEczMSYwJAYDVQQKDB1jaGVj
        a291dC1kcml2ZXIgdGVzdCBmaXh0dXJlczBZMBMGByqGSM49AgEGCCqGSM49AwEH
        A0IABL8OD7LaVwn50fU2iZnHMc0vuDJOQ7y2+ZlEusn6JZqptk8mZHup1O5vr6/z
        XJZieD7GKH3h016Jw+GkhynJoUCjQjBAMA8GA1UdEwEB/wQFMAMBAf8wDgYDVR0P
        AQH/BAQDAgEGMB0GA1UdDgQWBBQ46YK/JOCnSxKX11aE7YNRq8hltzAKBggqhkjO
        PQQDAgNIADBFAiEAgLi1s2a/iA5BOLiR/Ddjm/GWOxo3hRNVIa1KRmET/h0CIE84
        ASwwQrcol3UX49K1gLGcWWxPYKZ5o3RJPflNOi94
        -----END CERTIFICATE-----
        """

    /// The stand-in for Apple's Worldwide Developer Relations CA - G2.
    public static let applePayIntermediateCertificatePEM = """
        -----BEGIN CERTIFICATE-----
        MIICSTCCAe+gAwIBAgIUPl22dISjBWhn6mMVQa7XiRjNzWowCgYIKoZIzj0EAwIw
        WjEwMC4GA1UEAwwnQ2hlY2tvdXQgRHJpdmVyIFRlc3QgQXBwbGUgUm9vdCBDQSAt
        IEczMSYwJAYDVQQKDB1jaGVja291dC1kcml2ZXIgdGVzdCBmaXh0dXJlczAgFw0y
        NjExMjkxMzU4MDVaGA8yMDU2MTEyMTEzNTgwNVowczFJMEcGA1UEAwxAQ2hlY2tv
        dXQgRHJpdmVyIFRlc3QgQXBwbGUgV29ybGR3aWRlIERldmVsb3BlciBSZWxhdGlv
        bnMgQ0EgLSBHMjEmMCQGA1UECgwdY2hlY2tvdXQtZHJpdmVyIHRlc3QgZml4dHVy
        ZXMwWTATBgcqhkjOPQIBBggqhkjOPQMBBwNCAASOOyLgpkGysy4V+JeoNl16VdZ7
        YoSJVVtVy9MuQKh52bjRHWbFiLvvLn9ZrlRWgLWQT3qLdx3JWHceEiedxXRYo3gw
        djASBgNVHRMBAf8ECDAGAQH/AgEAMA4GA1UdDwEB/wQEAwIBBjAdBgNVHQ4EFgQU
        VvS0YQny1hRrkUCVkypdRYJxB1gwHwYDVR0jBBgwFoAUOOmCvyTgp0sSl9dWhO2D
        UavIZbcwEAYKKoZIhvdjZAYCDgQCBQAwCgYIKoZIzj0EAwIDSAAwRQIgPokcqGyn
        Vzuq4PDP6yHtN976R+M4P9i8tR5DrkLcxtQCIQCwzJYmI0CNToxlS2AeJGffxZOR
        C4FHXa8r3/8YKbIrlA==
        -----END CERTIFICATE-----
        """

    /// The stand-in for Apple's payment-token signing leaf (ecc-smp-broker-sign).
    public static let applePayLeafCertificatePEM = """
        -----BEGIN CERTIFICATE-----
        MIICUDCCAfWgAwIBAgIUOq8V1ONdEuYXbNsFEo8/D7sDRC4wCgYIKoZIzj0EAwIw
        czFJMEcGA1UEAwxAQ2hlY2tvdXQgRHJpdmVyIFRlc3QgQXBwbGUgV29ybGR3aWRl
        IERldmVsb3BlciBSZWxhdGlvbnMgQ0EgLSBHMjEmMCQGA1UECgwdY2hlY2tvdXQt
        ZHJpdmVyIHRlc3QgZml4dHVyZXMwIBcNMjYxMTI5MTM1ODA1WhgPMjA1NjExMjEx
        MzU4MDVaMGcxPTA7BgNVBAMMNENoZWNrb3V0IERyaXZlciBUZXN0IGVjYy1zbXAt
        YnJva2VyLXNpZ25fVUM0LVNBTkRCT1gxJjAkBgNVBAoMHWNoZWNrb3V0LWRyaXZl
        ciB0ZXN0IGZpeHR1cmVzMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEOnTWQcnN
        wAEXNItjMJzHzLB7U790Mdh0esYWX3aBdNM9pBf9RnO34glUTC5skbwu6gaFcW6F
        jbbwDd/ccIR6UKNxMG8wDAYDVR0TAQH/BAIwADAOBgNVHQ8BAf8EBAMCB4AwHQYD
        VR0OBBYEFIX0O5PX7hrTw+QQ9mKAby+21JPXMB8GA1UdIwQYMBaAFFb0tGEJ8tYU
        a5FAlZMqXUWCcQdYMA8GCSqGSIb3Y2QGHQQCBQAwCgYIKoZIzj0EAwIDSQAwRgIh
        AKl2HKRjc/m3K7yGng/6S86Bv8K5bT7qvB3h8cljMUP+AiEA6veA7R8QiY9Lqexs
        QYG/RSI6bTAobU2KmpXs3P9u5KA=
        -----END CERTIFICATE-----
        """

    /// The leaf's private key: `applepay token` signs test tokens with it.
    public static let applePayLeafPrivateKeyPEM = """
        -----BEGIN PRIVATE KEY-----
        MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgi172gmuuZuC7mhb3
        MnmXc8KdK2qNGTGQVk+EXUoqJqShRANCAAQ6dNZByc3AARc0i2MwnMfMsHtTv3Qx
        2HR6xhZfdoF00z2kF/1Gc7fiCVRMLmyRvC7qBoVxboWNtvAN39xwhHpQ
        -----END PRIVATE KEY-----
        """

    /// The payment processing key pair's private half: the emulator decrypts tokens with it, as Bahn
    /// would with the key behind its CSR.
    public static let paymentProcessingPrivateKeyPEM = """
        -----BEGIN PRIVATE KEY-----
        MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgCf8b6oK5fG+7o6vf
        v+DnlsVkLbR2dDDHBMasIs8j7IShRANCAATRq02VcQT79l9vsu687BjN9ekkyKrS
        Qmn7TOhe0zxYvLa5BwMXrIag85jbwk93Q/9hgH8Vg9lYM9lN99txfjU+
        -----END PRIVATE KEY-----
        """

    /// The payment processing public key: what tokens are encrypted to (`header.publicKeyHash` hashes it).
    public static let paymentProcessingPublicKeyPEM = """
        -----BEGIN PUBLIC KEY-----
        MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE0atNlXEE+/Zfb7LuvOwYzfXpJMiq
        0kJp+0zoXtM8WLy2uQcDF6yGoPOY28JPd0P/YYB/FYPZWDPZTffbcX41Pg==
        -----END PUBLIC KEY-----
        """

    /// The merchant identifier the emulator's processing key belongs to.
    public static let merchantIdentifier = "merchant.dev.checkout-driver.emulator"
}
