import Foundation
import LoopbackHTTP

/// Where an operation listens for something that comes back to the driver (a 3DS return): the other half of the
/// `HTTPClient` seam. A run binds a loopback socket; a replay hands out the addresses its recording listened on and
/// delivers the recorded requests to them itself, so that it opens no socket (see `ReplayTransport`).
public protocol Listening: Sendable {
    /// Starts a listener that answers with `handler`; `what` names it in the error when it cannot start.
    func listen(_ what: String, _ handler: @escaping HTTPHandler) throws(Diagnostic) -> any Listener
    /// Whether a listener can hear from outside the run (a browser, a phone). In a replay nothing but its own requests
    /// arrives, so a wait for more ends at once.
    var hearsOutside: Bool { get }
}

public protocol Listener: Sendable {
    /// `http://127.0.0.1:<port>`.
    var baseURL: String { get }
    func stop()
}

/// A real listener on 127.0.0.1, on a free port.
public struct LoopbackListening: Listening {
    public init() {}

    public var hearsOutside: Bool { true }

    public func listen(_ what: String, _ handler: @escaping HTTPHandler) throws(Diagnostic) -> any Listener {
        let server: HTTPServer
        do { server = try HTTPServer(host: "127.0.0.1", port: 0, handler: handler) } catch {
            throw .unavailable("cannot start the \(what) on 127.0.0.1: \(error)", hint: "check that loopback sockets are allowed")
        }
        server.start()
        return server
    }
}

extension HTTPServer: Listener {
    public func stop() { shutdown() }
}
