import Foundation

/// A port nobody listens on now (the kernel's pick for a socket bound to port 0, closed again).
func freePort() throws -> UInt16 {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    try withUnsafeMutablePointer(to: &address) { pointer in
        try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            guard bind(fd, $0, length) == 0, getsockname(fd, $0, &length) == 0 else {
                throw CocoaError(.fileWriteUnknown)
            }
        }
    }
    return UInt16(bigEndian: address.sin_port)
}
