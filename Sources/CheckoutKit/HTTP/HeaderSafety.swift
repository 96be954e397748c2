/// CR, LF and NUL end or corrupt an HTTP header line: a value holding one could smuggle a second header — or a second
/// request — onto the wire. Each source of a header value refuses them where the value enters (a flow file, an option,
/// a configuration variable, a response), naming that source; `check` is the last net, just before a request is sent.
public enum HeaderSafety {
    /// An RFC 9110 token: what a header name must be.
    public static func isToken(_ name: String) -> Bool {
        !name.isEmpty
            && name.utf8.allSatisfy { b in
                switch b {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"):
                    true
                default: "!#$%&'*+-.^_`|~".utf8.contains(b)
                }
            }
    }

    /// What is wrong with a value, for messages: "holds a line break (LF)".
    public static func problem(_ text: String) -> String? {
        // One pass over the bytes (every header of every request comes here): a line break is named before a carriage
        // return, and that before a NUL, wherever each stands.
        var text = text
        return text.withUTF8 { bytes in
            var carriageReturn = false
            var nul = false
            for byte in bytes where byte <= 0x0D {
                switch byte {
                case 0x0A: return "holds a line break (LF)"
                case 0x0D: carriageReturn = true
                case 0x00: nul = true
                default: break
                }
            }
            return carriageReturn ? "holds a carriage return (CR)" : nul ? "holds a NUL byte" : nil
        }
    }

    static func check(_ request: HTTPClientRequest, during step: String) throws(Diagnostic) {
        for (name, value) in request.headers {
            guard isToken(name) else {
                throw .data(
                    "step '\(step)': '\(name)' is not a valid header name; nothing was sent",
                    hint: "header names are letters, digits and !#$%&'*+-.^_`|~")
            }
            if let problem = problem(value) {
                throw .data(
                    "step '\(step)': the value of header \(name) \(problem); nothing was sent",
                    hint: "a header value is one line: remove the line break from where it came from")
            }
        }
    }
}
