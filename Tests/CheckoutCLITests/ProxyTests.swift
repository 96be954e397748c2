import CheckoutKit
import Foundation
import TestSupport
import Testing

@testable import CheckoutCLI

/// The proxy variables, read as curl reads them: the rules alone.
@Suite struct ProxySettingsTests {
    @Test func eachSchemeHasItsVariableAsCurlReadsThem() {
        let p = ProxySettings(environment: [
            "https_proxy": "http://lower:3128", "HTTPS_PROXY": "http://upper:3128", "HTTP_PROXY": "http://cgi:1",
            "ALL_PROXY": "http://all:8080",
        ])
        #expect(p.proxy(for: "https://api.example.com/v1") == "http://lower:3128")
        // http_proxy is read in lower case only (HTTP_PROXY is what a CGI program gets from a `Proxy:` header).
        #expect(p.proxy(for: "http://api.example.com/") == "http://all:8080")
        #expect(
            ProxySettings(environment: ["HTTPS_PROXY": "http://upper:1"]).proxy(for: "https://h/") == "http://upper:1")
        #expect(ProxySettings(environment: ["http_proxy": "http://h:1"]).proxy(for: "http://x/") == "http://h:1")
        #expect(ProxySettings(environment: ["http_proxy": "http://h:1"]).proxy(for: "https://x/") == nil)
        #expect(ProxySettings(environment: ["http_proxy": ""]).proxy(for: "http://x/") == nil)
        #expect(ProxySettings(environment: [:]).proxy(for: "https://x/") == nil)
    }

    /// no_proxy: `*`, a host, a domain and what is in it (a leading dot or not), an IPv4 block; loopback is proxied
    /// unless named.
    @Test(arguments: [
        ("api.example.com", "https://api.example.com/", true), ("example.com", "https://api.example.com/", true),
        (".example.com", "https://api.example.com/", true), ("example.com", "https://badexample.com/", false),
        ("*", "https://anything/", true), ("EXAMPLE.com", "https://Api.Example.COM/", true),
        ("10.0.0.0/8", "http://10.1.2.3:8080/", true), ("10.0.0.0/8", "http://11.1.2.3/", false),
        ("other.com, 127.0.0.1", "http://127.0.0.1:9/", true), ("other.com", "http://127.0.0.1:9/", false),
        ("", "http://localhost:9/", false),
    ])
    func noProxyNamesWhatGoesDirect(noProxy: String, url: String, direct: Bool) {
        let p = ProxySettings(environment: [
            "https_proxy": "http://p:1", "http_proxy": "http://p:1", "NO_PROXY": noProxy,
        ])
        #expect((p.proxy(for: url) == nil) == direct)
    }

    /// A refusal by the proxy or a TLS handshake that failed sent nothing: a money call's outcome is not left open, and
    /// asking again would change nothing.
    @Test func aRefusalBeforeTheServiceLeavesNoOutcomeOpenAndIsNotRetried() {
        let post = HTTPClientRequest(
            method: "POST", url: "https://bn.example/api/payment_intents/x/confirm", timeout: 5)
        for error in [TransportError.proxyRefused("407"), .tlsRefused("unknown CA")] {
            #expect(!RetryPolicy.leavesOutcomeOpen(.failure(error)), "\(error)")
            #expect(!RetryPolicy.default.shouldRetry(post, attempt: 1, outcome: .failure(error)), "\(error)")
        }
        #expect(RetryPolicy.leavesOutcomeOpen(.failure(.connectionLost("reset"))))
    }

    @Test func localIsNeverProxiedAndPasswordsAreMasked() {
        let env = ["http_proxy": "http://u:s3cret-pw@p:1", "https_proxy": "http://u:s3cret-pw@p:1"]
        let local = NetworkOptions(
            configuration: Configuration(environment: "local", kind: .local, values: [:]), environment: env)
        #expect(local.proxies == .none)
        let sandbox = NetworkOptions(
            configuration: Configuration(
                environment: "sandbox", kind: .sandbox, values: [NetworkOptions.caBundleVariable: "/ca.pem"]),
            environment: env)
        #expect(sandbox.proxies.proxy(for: "http://127.0.0.1:9/") == "http://u:s3cret-pw@p:1")
        #expect(sandbox.caBundle == "/ca.pem")
        #expect(ProxySettings.masked("http://u:s3cret-pw@p:1") == "http://u:***@p:1")
        #expect(ProxySettings(environment: env).passwords.contains("s3cret-pw"))
        // curl takes a proxy with no scheme as http://, its password too; a percent-encoded one is masked both ways.
        #expect(ProxySettings.masked("u:s3cret-pw@p:1") == "u:***@p:1")
        let encoded = ProxySettings(environment: ["https_proxy": "u:p%40ss-w0rd@p:1"])
        #expect(Set(encoded.passwords) == ["p%40ss-w0rd", "p@ss-w0rd"])
        #expect(ProxySettings.masked("u:p%40ss-w0rd@p:1") == "u:***@p:1")
    }
}

/// Proxies and certificates with real parts on loopback: Debian's tinyproxy, an `openssl s_server` whose certificate a
/// CA the test makes signed, and mitmproxy (PyPI, in .build/venv-mitmproxy) intercepting TLS.
@Suite(.serialized) struct ProxyRunTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path

    /// Waits until something accepts connections on `port`.
    static func listening(_ port: UInt16, timeout: Double = 20) async -> Bool {
        await eventually(timeout: timeout) { (try? RawClient(port: port, receiveTimeout: 1)) != nil }
    }

    /// tinyproxy on a free port, logging each request; with `credentials` ("user pass") it wants them (407 without).
    static func tinyproxy(_ s: Scratch, credentials: String? = nil) async throws -> (TestProcess, UInt16, String) {
        let port = try FreePort.take()
        let log = s.path + "/tinyproxy-\(port).log"
        let config = s.path + "/tinyproxy-\(port).conf"
        try Data(
            ("Port \(port)\nListen 127.0.0.1\nLogFile \"\(log)\"\nLogLevel Info\nAllow 127.0.0.1\nMaxClients 50\n"
                + (credentials.map { "BasicAuth \($0)\n" } ?? "")).utf8
        ).write(to: URL(fileURLWithPath: config))
        let process = try TestProcess("/usr/bin/tinyproxy", ["-d", "-c", config])
        #expect(await listening(port), "tinyproxy did not start")
        return (process, port, log)
    }

    /// A CA of the test's own, and a server certificate for 127.0.0.1 it signed.
    static func testPKI(_ s: Scratch) throws {
        let steps = [
            "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout ca.key -out ca.pem -days 2 -subj '/CN=checkout-driver test CA'",
            "openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout srv.key -out srv.csr -subj '/CN=127.0.0.1'",
            "printf 'subjectAltName=IP:127.0.0.1\\n' > ext.cnf",
            "openssl x509 -req -in srv.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out srv.pem -days 2 -extfile ext.cnf",
        ]
        for step in steps {
            let run = try runTool("/bin/sh", ["-c", "cd '\(s.path)' && \(step)"], mergingErrors: true)
            #expect(run.status == 0, "\(step): \(run.output)")
        }
    }

    /// `openssl s_server -www` with that certificate: a GET gets a 200 page.
    static func tlsServer(_ s: Scratch) async throws -> (TestProcess, UInt16) {
        let port = try FreePort.take()
        let process = try TestProcess(
            "/usr/bin/openssl",
            [
                "s_server", "-accept", String(port), "-cert", s.path + "/srv.pem", "-key", s.path + "/srv.key", "-www",
                "-quiet",
            ])
        #expect(await listening(port), "openssl s_server did not start")
        return (process, port)
    }

    static func flow(_ s: Scratch, url: String, method: String = "GET") throws -> String {
        let path = s.path + "/\(method.lowercased())-\(UUID()).json"
        let body = method == "POST" ? #", "json": {"amount": 100, "currency": "VND"}"# : ""
        try Data(
            #"{"name": "through", "steps": [{"name": "call", "request": {"method": "\#(method)", "url": "\#(url)"\#(body)}}]}"#
                .utf8
        ).write(to: URL(fileURLWithPath: path))
        return path
    }

    static func log(_ path: String) -> String { (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }

    /// A flow against `sandbox serve` goes through tinyproxy under --env sandbox, and nothing goes through it under
    /// --env local; a TLS service is reached through its CONNECT tunnel, refused (69, naming --cacert) until the test's
    /// CA is trusted with --cacert or CHECKOUT_DRIVER_CACERT.
    @Test func aFlowGoesThroughTinyproxyAndTLSThroughItsTunnel() async throws {
        let s = try Scratch()
        let server = try ServeProcess(home: s.path, arguments: ["--no-announce"])
        defer { server.stop() }
        let (proxy, port, log) = try await Self.tinyproxy(s)
        defer { _ = proxy.stop() }
        let proxyURL = "http://127.0.0.1:\(port)"
        let through = try await BinaryRunner.run(
            ["flow", "run", "emulator-orders", "--env", "sandbox"], home: s.path,
            environment: ["http_proxy": proxyURL, "EMULATOR_URL": server.url])
        #expect(through.status == 0, "\(through.all)")
        #expect(Self.log(log).contains("Request (file descriptor"), "\(Self.log(log))")
        #expect(Self.log(log).contains("POST \(server.url)/_sandbox/orders HTTP/1.1"), "\(Self.log(log))")

        let before = Self.log(log).components(separatedBy: "Request (file descriptor").count
        let local = try await BinaryRunner.run(
            ["flow", "run", "emulator-orders"], home: s.path,
            environment: ["http_proxy": proxyURL, "all_proxy": proxyURL])
        #expect(local.status == 0, "\(local.all)")
        #expect(
            Self.log(log).components(separatedBy: "Request (file descriptor").count == before, "--env local was proxied"
        )

        try Self.testPKI(s)
        let (tls, tlsPort) = try await Self.tlsServer(s)
        defer { _ = tls.stop() }
        let get = try Self.flow(s, url: "https://127.0.0.1:\(tlsPort)/")
        let refused = try await BinaryRunner.run(
            ["flow", "run", get, "--env", "sandbox"], home: s.path, environment: ["https_proxy": proxyURL])
        #expect(refused.status == 69, "\(refused.all)")
        #expect(refused.stderr.contains("the TLS handshake failed, so nothing was sent"), "\(refused.stderr)")
        #expect(refused.stderr.contains("--cacert FILE or CHECKOUT_DRIVER_CACERT"))
        #expect(!refused.stderr.contains("attempt 2"), "a certificate refused is not asked again")
        #expect(Self.log(log).contains("CONNECT 127.0.0.1:\(tlsPort)"), "\(Self.log(log))")
        let trusted = try await BinaryRunner.run(
            ["flow", "run", get, "--env", "sandbox", "--cacert", s.path + "/ca.pem"], home: s.path,
            environment: ["https_proxy": proxyURL])
        #expect(trusted.status == 0, "\(trusted.all)")
        let byVariable = try await BinaryRunner.run(
            ["flow", "run", get, "--env", "sandbox"], home: s.path,
            environment: ["https_proxy": proxyURL, "CHECKOUT_DRIVER_CACERT": s.path + "/ca.pem"])
        #expect(byVariable.status == 0, "\(byVariable.all)")
        let missing = try await BinaryRunner.run(
            ["flow", "run", get, "--env", "sandbox", "--cacert", s.path + "/nope.pem"], home: s.path)
        #expect(missing.status == 78 && missing.stderr.contains("nope.pem"), "\(missing.all)")
    }

    /// A proxy that wants credentials refuses (407): a POST without an idempotency key, whose lost answer would leave
    /// its outcome open, is a clear 69 through the CONNECT tunnel the proxy will not open — it never reached the
    /// service — and so is a plain-HTTP request the proxy answers 407 itself (the emulator saw none). With the
    /// credentials in the variable's URL it goes through, and the password shows nowhere: not in -v, not in the HAR.
    @Test func aProxyThatRefusesIsNeverAnUnknownOutcome() async throws {
        let s = try Scratch()
        let server = try ServeProcess(home: s.path, arguments: ["--no-announce"])
        defer { server.stop() }
        let (proxy, port, _) = try await Self.tinyproxy(s, credentials: "shopper pr0xy-s3cret")
        defer { _ = proxy.stop() }
        let tunnel = try await BinaryRunner.run(
            ["flow", "run", try Self.flow(s, url: "https://127.0.0.1:9/pay", method: "POST"), "--env", "sandbox"],
            home: s.path, environment: ["https_proxy": "http://127.0.0.1:\(port)"])
        #expect(tunnel.status == 69, "\(tunnel.all)")
        #expect(tunnel.stderr.contains("the proxy refused it, so it never reached the service: CONNECT answered 407"))
        // (A POST's body unread by tinyproxy when it answers 407 may reset the connection first; a GET has none.)
        let plain = try await BinaryRunner.run(
            ["flow", "run", try Self.flow(s, url: server.url + "/_sandbox/health"), "--env", "sandbox"], home: s.path,
            environment: ["http_proxy": "http://127.0.0.1:\(port)"])
        #expect(plain.status == 69, "\(plain.all)")
        #expect(
            plain.stderr.contains("never reached the service: 407 Proxy Authentication Required"), "\(plain.stderr)")
        #expect(!(try curl(["-s", server.url + "/_sandbox/requests"])).contains("/_sandbox/health"))

        let post = try Self.flow(s, url: server.url + "/_sandbox/orders", method: "POST")
        let withCredentials = try await BinaryRunner.run(
            ["flow", "run", post, "--env", "sandbox", "-v", "--record", s.path + "/run.har"], home: s.path,
            environment: ["http_proxy": "http://shopper:pr0xy-s3cret@127.0.0.1:\(port)"])
        #expect(withCredentials.status == 0, "\(withCredentials.all)")
        #expect(!withCredentials.all.contains("pr0xy-s3cret"))
        #expect(!(try String(contentsOfFile: s.path + "/run.har", encoding: .utf8)).contains("pr0xy-s3cret"))

        // doctor names the proxy each base URL goes through, its password masked, and what goes direct.
        let doctor = try await BinaryRunner.run(
            ["doctor", "--env", "sandbox", "--provider", "bahn", "--format", "json"], home: s.path,
            environment: [
                "https_proxy": "http://shopper:pr0xy-s3cret@127.0.0.1:\(port)", "BAHN_API_URL": "https://127.0.0.1:9",
            ])
        #expect(!doctor.all.contains("pr0xy-s3cret"), "\(doctor.all)")
        #expect(doctor.stdout.contains("\"proxy\": \"http://shopper:"), "\(doctor.stdout)")
        let direct = try await BinaryRunner.run(
            ["doctor", "--env", "sandbox", "--provider", "bahn"], home: s.path,
            environment: [
                "https_proxy": "http://127.0.0.1:\(port)", "no_proxy": "127.0.0.1",
                "BAHN_API_URL": "https://127.0.0.1:9",
            ])
        #expect(direct.stdout.contains("https://127.0.0.1:9  direct"), "\(direct.stdout)")
    }

    /// mitmproxy intercepts TLS with a certificate of its own CA: refused until that CA is trusted with --cacert.
    @Test func aTLSInterceptingProxyIsTrustedThroughCacert() async throws {
        let s = try Scratch()
        try Self.testPKI(s)
        let (tls, tlsPort) = try await Self.tlsServer(s)
        defer { _ = tls.stop() }
        let port = try FreePort.take()
        let mitm = try TestProcess(
            Self.repository + "/.build/venv-mitmproxy/bin/mitmdump",
            [
                "--listen-host", "127.0.0.1", "--listen-port", String(port), "--set", "confdir=\(s.path)/mitm",
                // It checks the test server's certificate against its own store, which has not the test CA.
                "--set", "ssl_insecure=true",
            ])
        defer { _ = mitm.stop() }
        #expect(await Self.listening(port, timeout: 60), "mitmdump did not start")
        let get = try Self.flow(s, url: "https://127.0.0.1:\(tlsPort)/")
        let proxy = ["https_proxy": "http://127.0.0.1:\(port)"]
        let refused = try await BinaryRunner.run(
            ["flow", "run", get, "--env", "sandbox"], home: s.path, environment: proxy)
        #expect(refused.status == 69 && refused.stderr.contains("--cacert"), "\(refused.all)")
        let trusted = try await BinaryRunner.run(
            ["flow", "run", get, "--env", "sandbox", "--cacert", s.path + "/mitm/mitmproxy-ca-cert.pem"], home: s.path,
            environment: proxy)
        #expect(trusted.status == 0, "\(trusted.all)")
        // The test CA alone does not do: the certificate that arrives is mitmproxy's, as --cacert replaces the store.
        let wrongCA = try await BinaryRunner.run(
            ["flow", "run", get, "--env", "sandbox", "--cacert", s.path + "/ca.pem"], home: s.path, environment: proxy)
        #expect(wrongCA.status == 69, "\(wrongCA.all)")
    }
}
