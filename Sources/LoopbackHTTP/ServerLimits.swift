/// Limits that keep one misbehaving client from exhausting the server.
public struct ServerLimits: Sendable {
    /// Largest request line + header section accepted; beyond it the server answers 431.
    public var maxHeaderBytes: Int
    /// Largest request body accepted (after de-chunking); beyond it the server answers 413.
    public var maxBodyBytes: Int
    /// Seconds a keep-alive connection may sit idle between requests before it is closed.
    public var idleTimeout: Double
    /// Seconds allowed to receive one whole request once its first byte arrived (slowloris guard); 408 then close.
    public var requestTimeout: Double
    /// Connections served at once; further ones get a 503 and are closed.
    public var maxConnections: Int

    public init(
        maxHeaderBytes: Int = 16 * 1024, maxBodyBytes: Int = 8 * 1024 * 1024,
        idleTimeout: Double = 30, requestTimeout: Double = 10, maxConnections: Int = 1024
    ) {
        self.maxHeaderBytes = maxHeaderBytes
        self.maxBodyBytes = maxBodyBytes
        self.idleTimeout = idleTimeout
        self.requestTimeout = requestTimeout
        self.maxConnections = maxConnections
    }
}

/// A server that could not be set up (bind, listen, bad host).
public struct HTTPServerError: Error, CustomStringConvertible, Sendable {
    public let description: String
    public init(_ description: String) { self.description = description }
}
