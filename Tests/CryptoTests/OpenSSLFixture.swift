import Foundation

/// Fixtures made with the openssl command-line tool while writing the tests (OpenSSL 3.0.19):
/// `openssl req -x509` for the root, `openssl x509 -req` (with extension 1.2.840.113635.100.6.29 = DER 0500)
/// for the leaf, and `openssl cms -sign -binary -md sha256 -outform DER` (detached) for the signature.
/// They prove interoperability with a CMS we did not produce ourselves.
enum OpenSSLFixture {
    static let rootPEM = """
        -----BEGIN CERTIFICATE-----
        MIIBmjCCAUGgAwIBAgIUO1nUHG/bVYE66x8YVouARacRrzowCgYIKoZIzj0EAwIw
        GjEYMBYGA1UEAwwPRml4dHVyZSBSb290IENBMCAXDTI2MTEyOTEzNTUyOVoYDzIx
        MjYxMTA1MTM1NTI5WjAaMRgwFgYDVQQDDA9GaXh0dXJlIFJvb3QgQ0EwWTATBgcq
        hkjOPQIBBggqhkjOPQMBBwNCAARXDCTJYUk2HdOEQ1F+gTYRI/A9FyIOWu4Fhtey
        cjwQkn6xYmTmETdj926iwSQU8docL2Ytqte7RuFWsfp+EGmao2MwYTAdBgNVHQ4E
        FgQUIJ9gP8HF9H/lZsIx7k4EP3XmXy4wHwYDVR0jBBgwFoAUIJ9gP8HF9H/lZsIx
        7k4EP3XmXy4wDwYDVR0TAQH/BAUwAwEB/zAOBgNVHQ8BAf8EBAMCAQYwCgYIKoZI
        zj0EAwIDRwAwRAIgO12jfMWqUxe0iQypiuG7iOTBVYr9UlXbSBLLeC4s+L4CID/g
        h/Uqj4nAmeYaQHCgBgz7A8SEfl1Faotiin4yyERQ
        -----END CERTIFICATE-----
        """

    static let leafPEM = """
        -----BEGIN CERTIFICATE-----
        MIIBpjCCAUygAwIBAgIUBdrzRlRxMpWQ0BlTSWclsWFkj6YwCgYIKoZIzj0EAwIw
        GjEYMBYGA1UEAwwPRml4dHVyZSBSb290IENBMCAXDTI2MTEyOTEzNTUyOVoYDzIx
        MjYxMTA1MTM1NTI5WjAXMRUwEwYDVQQDDAxGaXh0dXJlIExlYWYwWTATBgcqhkjO
        PQIBBggqhkjOPQMBBwNCAAQNle6/B5gHDgeUVan2KJajS8foeF623WwdH+oTY/9t
        gxVnEIW3Z3gTigKY/rh/DUou+MghwS6AG3F4rK5FkYORo3EwbzAMBgNVHRMBAf8E
        AjAAMA4GA1UdDwEB/wQEAwIHgDAPBgkqhkiG92NkBh0EAgUAMB0GA1UdDgQWBBSE
        YQOevOAaoEJv1df4fT8+1pvufTAfBgNVHSMEGDAWgBQgn2A/wcX0f+VmwjHuTgQ/
        deZfLjAKBggqhkjOPQQDAgNIADBFAiBzSvyjueDWmWT00vgSj9EkLi9PjkbgHi8v
        4Rl88c+cpwIhAJJdQjtfAY+Od+rNegfRIuOLZqnmxrkJhxAV7N3/oPdl
        -----END CERTIFICATE-----
        """

    static let content = Data("openssl-signed content\n".utf8)

    /// signingTime 261129135529Z.
    static let signingTime = Date(timeIntervalSince1970: 1_795_960_529)

    static let signatureBase64 = """
        MIIDZwYJKoZIhvcNAQcCoIIDWDCCA1QCAQExDTALBglghkgBZQMEAgEwCwYJKoZIhvcNAQcBoIIB
        qjCCAaYwggFMoAMCAQICFAXa80ZUcTKVkNAZU0lnJbFhZI+mMAoGCCqGSM49BAMCMBoxGDAWBgNV
        BAMMD0ZpeHR1cmUgUm9vdCBDQTAgFw0yNjExMjkxMzU1MjlaGA8yMTI2MTEwNTEzNTUyOVowFzEV
        MBMGA1UEAwwMRml4dHVyZSBMZWFmMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEDZXuvweYBw4H
        lFWp9iiWo0vH6Hhett1sHR/qE2P/bYMVZxCFt2d4E4oCmP64fw1KLvjIIcEugBtxeKyuRZGDkaNx
        MG8wDAYDVR0TAQH/BAIwADAOBgNVHQ8BAf8EBAMCB4AwDwYJKoZIhvdjZAYdBAIFADAdBgNVHQ4E
        FgQUhGEDnrzgGqBCb9XX+H0/Ptab7n0wHwYDVR0jBBgwFoAUIJ9gP8HF9H/lZsIx7k4EP3XmXy4w
        CgYIKoZIzj0EAwIDSAAwRQIgc0r8o7ng1plk9NL4Eo/RJC4vT45G4B4vL+EZfPHPnKcCIQCSXUI7
        XwGPjnfqzXoH0SLji2ap5sa5CYcQFezd/6D3ZTGCAYMwggF/AgEBMDIwGjEYMBYGA1UEAwwPRml4
        dHVyZSBSb290IENBAhQF2vNGVHEylZDQGVNJZyWxYWSPpjALBglghkgBZQMEAgGggeQwGAYJKoZI
        hvcNAQkDMQsGCSqGSIb3DQEHATAcBgkqhkiG9w0BCQUxDxcNMjYxMTI5MTM1NTI5WjAvBgkqhkiG
        9w0BCQQxIgQgsmqAUcdv2M9Y0e95GrOuWOIWW/ZZSesNppD7YRYsTVQweQYJKoZIhvcNAQkPMWww
        ajALBglghkgBZQMEASowCwYJYIZIAWUDBAEWMAsGCWCGSAFlAwQBAjAKBggqhkiG9w0DBzAOBggq
        hkiG9w0DAgICAIAwDQYIKoZIhvcNAwICAUAwBwYFKw4DAgcwDQYIKoZIhvcNAwICASgwCgYIKoZI
        zj0EAwIERjBEAiA4h0AktFpSO4nYMLfRSXmkIixrJEOh+gxo7MWYSN0vKwIgb6wepQRjGdOyNsD3
        J2zG9LJBxjqtKJYb1lapIOs9m3A=
        """

    static var signature: Data { Data(base64Encoded: signatureBase64, options: .ignoreUnknownCharacters)! }
}
