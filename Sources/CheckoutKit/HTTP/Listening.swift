import Foundation
import LoopbackHTTP

/// Where an operation listens for something that comes back to the driver (a 3DS return): the other half of the
/// `HTTPClient` seam. A run binds a loopback socket; a replay hands out the addresses its recording listened on and
/// delivers the recorded requests to them itself, so that it opens no socket (see `ReplayTransport`).
public protocol Listening: Sendable {
    /// A listener that will answer with `handler`, its address taken now so that it can be handed out at once; it
    /// answers from `start()` on. `what` names it in the error when it cannot listen.
    func listen(_ what: String, _ handler: @escaping HTTPHandler) throws(Diagnostic) -> any Listener
    /// Whether a listener can hear from outside the run (a browser, a phone). In a replay nothing but its own requests
    /// arrives, so a wait for more ends at once.
    var hearsOutside: Bool { get }
}

public protocol Listener: Sendable {
    /// `http://127.0.0.1:<port>`.
    var baseURL: String { get }
    /// Begins answering; a request that came before waits for it (in the socket's backlog). Most runs never need
    /// their listener (no 3DS challenge came), and one that is only bound costs a few system calls, not threads.
    func start()
    func stop()
}

/// A real listener on 127.0.0.1, on a free port.
public struct LoopbackListening: Listening {
    public init() {}

    public var hearsOutside: Bool { true }

    public func listen(_ what: String, _ handler: @escaping HTTPHandler) throws(Diagnostic) -> any Listener {
        let server: HTTPServer
        do { server = try HTTPServer(host: "127.0.0.1", port: 0, handler: handler) } catch {
            throw .unavailable(
                "cannot start the \(what) on 127.0.0.1: \(error)", hint: "check that loopback sockets are allowed")
        }
        return server
    }
}

extension HTTPServer: Listener {
    public func stop() { shutdown() }
}
