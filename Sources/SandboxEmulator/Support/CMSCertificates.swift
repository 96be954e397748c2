import Crypto
import Foundation

/// Reads the `certificates` field out of a CMS SignedData (RFC 5652 §5.1).
///
/// `CMS.verifyDetached` only hands back the signer certificates, but Apple's token rules also require checking
/// the intermediate. Apple's own signatures use BER with indefinite lengths (they start `30 80`), so this walker
/// accepts both definite and indefinite lengths. It only navigates; each certificate is parsed by `Certificate`.
enum CMSCertificates {
    /// Every certificate the SignedData carries, or nil when the structure cannot be walked.
    static func included(in signature: Data) -> [Certificate]? {
        let bytes = [UInt8](signature)
        // ContentInfo ::= SEQUENCE { contentType OID, content [0] EXPLICIT SignedData }
        guard let contentInfo = BER.element(bytes, at: 0), contentInfo.tag == 0x30,
              let children = BER.children(bytes, of: contentInfo), children.count >= 2, children[1].tag == 0xA0,
              let explicit = BER.children(bytes, of: children[1]), let signedData = explicit.first, signedData.tag == 0x30,
              let fields = BER.children(bytes, of: signedData) else { return nil }
        // SignedData ::= SEQUENCE { version, digestAlgorithms, encapContentInfo, certificates [0] IMPLICIT OPTIONAL, ... }
        guard let set = fields.dropFirst(3).first(where: { $0.tag == 0xA0 }) else { return [] }
        guard let certs = BER.children(bytes, of: set) else { return nil }
        return certs.compactMap { element in
            // Certificates inside are always DER (definite length), so the element's bytes are the certificate.
            guard element.tag == 0x30, let end = element.end else { return nil }
            return try? Certificate(der: Data(bytes[element.start..<end]))
        }
    }
}

/// The smallest BER walker that serves `CMSCertificates`: single-byte tags, definite and indefinite lengths.
private enum BER {
    struct Element {
        var tag: UInt8
        /// Offset of the tag byte.
        var start: Int
        /// Offset of the first content byte.
        var contentStart: Int
        /// One past the last content byte for definite lengths; nil for indefinite ones.
        var contentEnd: Int?
        /// One past the element (after the end-of-contents octets when indefinite); nil if not yet known.
        var end: Int?
    }

    static func element(_ b: [UInt8], at offset: Int) -> Element? {
        guard offset + 2 <= b.count else { return nil }
        let tag = b[offset]
        guard tag & 0x1F != 0x1F else { return nil }  // multi-byte tags never occur in CMS
        let first = b[offset + 1]
        if first == 0x80 {
            guard tag & 0x20 != 0 else { return nil }  // indefinite length is only allowed on constructed types
            var element = Element(tag: tag, start: offset, contentStart: offset + 2, contentEnd: nil, end: nil)
            guard let end = indefiniteEnd(b, of: element) else { return nil }
            element.end = end
            return element
        }
        var length = 0
        var cursor = offset + 2
        if first & 0x80 == 0 {
            length = Int(first)
        } else {
            let count = Int(first & 0x7F)
            guard count <= 4, cursor + count <= b.count else { return nil }
            for i in 0..<count { length = length << 8 | Int(b[cursor + i]) }
            cursor += count
        }
        guard cursor + length <= b.count else { return nil }
        return Element(tag: tag, start: offset, contentStart: cursor, contentEnd: cursor + length, end: cursor + length)
    }

    /// The elements directly inside `parent`.
    static func children(_ b: [UInt8], of parent: Element) -> [Element]? {
        var result: [Element] = []
        var cursor = parent.contentStart
        while true {
            if let limit = parent.contentEnd {
                if cursor == limit { return result }
                guard cursor < limit else { return nil }
            } else if cursor + 2 <= b.count, b[cursor] == 0, b[cursor + 1] == 0 {
                return result  // end-of-contents
            }
            guard let child = element(b, at: cursor), let end = child.end else { return nil }
            result.append(child)
            cursor = end
        }
    }

    /// For an indefinite-length element: the offset after its end-of-contents octets.
    private static func indefiniteEnd(_ b: [UInt8], of parent: Element) -> Int? {
        var cursor = parent.contentStart
        while cursor + 2 <= b.count {
            if b[cursor] == 0, b[cursor + 1] == 0 { return cursor + 2 }
            guard let child = element(b, at: cursor), let end = child.end else { return nil }
            cursor = end
        }
        return nil
    }
}
