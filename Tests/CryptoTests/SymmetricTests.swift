import Crypto
import Foundation
import Testing

@Suite struct DigestAndMACTests {
    @Test func sha256OfABC() {
        // FIPS 180-2, Appendix B.1.
        #expect(
            Digest.sha256(Data("abc".utf8)).hexString
                == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }

    @Test func sha256OfEmptyInput() {
        #expect(
            Digest.sha256(Data()).hexString
                == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    }

    // RFC 4231 §4, HMAC-SHA-256 results.
    @Test func hmacRFC4231Case1() {
        let mac = HMAC.sha256(key: Data(repeating: 0x0b, count: 20), message: Data("Hi There".utf8))
        #expect(mac.hexString == "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7")
    }

    @Test func hmacRFC4231Case2() {
        let mac = HMAC.sha256(key: Data("Jefe".utf8), message: Data("what do ya want for nothing?".utf8))
        #expect(mac.hexString == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
    }

    @Test func hmacRFC4231Case4() {
        let mac = HMAC.sha256(
            key: hex("0102030405060708090a0b0c0d0e0f10111213141516171819"),
            message: Data(repeating: 0xcd, count: 50))
        #expect(mac.hexString == "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b")
    }

    @Test func hmacRFC4231Case6LongKey() {
        let mac = HMAC.sha256(
            key: Data(repeating: 0xaa, count: 131),
            message: Data("Test Using Larger Than Block-Size Key - Hash Key First".utf8))
        #expect(mac.hexString == "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54")
    }
}

/// The GCM specification (McGrew & Viega), AES-256 test cases; also in NIST SP 800-38D's examples.
@Suite struct AESGCMTests {
    let key = hex("feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308")
    let iv = hex("cafebabefacedbaddecaf888")
    let plaintext60 = hex(
        "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a72"
            + "1c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39")
    let aad = hex("feedfacedeadbeeffeedfacedeadbeefabaddad2")
    let ciphertext60 = hex(
        "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa"
            + "8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662")

    @Test func testCase14() throws {
        let zeroKey = Data(count: 32)
        let zeroIV = Data(count: 12)
        let sealed = try AESGCM.seal(key: zeroKey, iv: zeroIV, plaintext: Data(count: 16))
        #expect(sealed.ciphertext.hexString == "cea7403d4d606b6e074ec5d3baf39d18")
        #expect(sealed.tag.hexString == "d0d1c8a799996bf0265b98b5d48ab919")
        #expect(
            try AESGCM.open(key: zeroKey, iv: zeroIV, ciphertext: sealed.ciphertext, tag: sealed.tag) == Data(count: 16)
        )
    }

    @Test func testCase15() throws {
        let plaintext = plaintext60 + hex("1aafd255")
        let sealed = try AESGCM.seal(key: key, iv: iv, plaintext: plaintext)
        #expect(sealed.ciphertext == ciphertext60 + hex("898015ad"))
        #expect(sealed.tag.hexString == "b094dac5d93471bdec1a502270e3cc6c")
    }

    @Test func testCase16WithAAD() throws {
        let sealed = try AESGCM.seal(key: key, iv: iv, plaintext: plaintext60, aad: aad)
        #expect(sealed.ciphertext == ciphertext60)
        #expect(sealed.tag.hexString == "76fc6ece0f4e1768cddf8853bb2d551b")
        let opened = try AESGCM.open(
            key: key, iv: iv, ciphertext: ciphertext60,
            tag: hex("76fc6ece0f4e1768cddf8853bb2d551b"), aad: aad)
        #expect(opened == plaintext60)
    }

    @Test func tamperingFailsToOpen() {
        let tag = hex("76fc6ece0f4e1768cddf8853bb2d551b")
        #expect(throws: CryptoError.self) {
            try AESGCM.open(key: key, iv: iv, ciphertext: ciphertext60, tag: tag.flippingBit(at: 15), aad: aad)
        }
        #expect(throws: CryptoError.self) {
            try AESGCM.open(key: key, iv: iv, ciphertext: ciphertext60.flippingBit(at: 0), tag: tag, aad: aad)
        }
        #expect(throws: CryptoError.self) {
            try AESGCM.open(key: key, iv: iv, ciphertext: ciphertext60, tag: tag, aad: Data())
        }
    }

    @Test func sixteenByteZeroIVAsApplePayUsesIt() throws {
        let iv16 = Data(count: 16)
        let message = Data("{\"applicationPrimaryAccountNumber\":\"4111111111111111\"}".utf8)
        let sealed = try AESGCM.seal(key: key, iv: iv16, plaintext: message)
        #expect(try AESGCM.open(key: key, iv: iv16, ciphertext: sealed.ciphertext, tag: sealed.tag) == message)
        // A 16-byte IV is not the 12-byte IV zero-padded: GCM hashes non-96-bit IVs.
        let with12 = try AESGCM.seal(key: key, iv: Data(count: 12), plaintext: message)
        #expect(with12.ciphertext != sealed.ciphertext)
    }

    @Test func badKeyLengthIsAnError() {
        #expect(throws: CryptoError.self) {
            try AESGCM.seal(key: Data(count: 31), iv: iv, plaintext: Data())
        }
    }
}

@Suite struct ConcatKDFTests {
    @Test func matchesManualSP800_56A() {
        let z = hex("46fc62106420ff012e54a434fbdd2d25ccc5852060561e68040dd7778997bd7b")
        // Apple Pay style OtherInfo: len(algorithmID) ‖ "id-aes256-GCM" ‖ "Apple" ‖ partyVInfo.
        let otherInfo =
            Data([0x0d]) + Data("id-aes256-GCM".utf8) + Data("Apple".utf8) + Data(repeating: 0x42, count: 32)
        let derived = ConcatKDF.sha256(sharedSecret: z, otherInfo: otherInfo, length: 32)
        let manual = Digest.sha256(Data([0, 0, 0, 1]) + z + otherInfo)
        #expect(derived == manual)
    }

    @Test func longerOutputConcatenatesCounterBlocks() {
        let z = Data(repeating: 7, count: 32)
        let info = Data("info".utf8)
        let derived = ConcatKDF.sha256(sharedSecret: z, otherInfo: info, length: 40)
        let manual = Digest.sha256(Data([0, 0, 0, 1]) + z + info) + Digest.sha256(Data([0, 0, 0, 2]) + z + info)
        #expect(derived == manual.prefix(40))
    }
}

@Suite struct EncodingTests {
    @Test func hexRoundTrip() {
        #expect(Data([0x00, 0xab, 0xff]).hexString == "00abff")
        #expect(Data(hex: "00ABff") == Data([0x00, 0xab, 0xff]))
        #expect(Data(hex: "abc") == nil)
        #expect(Data(hex: "zz") == nil)
    }

    @Test func base64URL() {
        // RFC 7515 A.1: the JOSE header bytes [123, 34, 116, ...] encode to eyJ0eXAiOiJKV1QiLA0KICJhbGciOiJIUzI1NiJ9.
        let header = Data("{\"typ\":\"JWT\",\r\n \"alg\":\"HS256\"}".utf8)
        #expect(header.base64URLEncodedString() == "eyJ0eXAiOiJKV1QiLA0KICJhbGciOiJIUzI1NiJ9")
        #expect(Data(base64URLEncoded: "eyJ0eXAiOiJKV1QiLA0KICJhbGciOiJIUzI1NiJ9") == header)
        #expect(Data([0xfb, 0xff]).base64URLEncodedString() == "-_8")
        #expect(Data(base64URLEncoded: "-_8") == Data([0xfb, 0xff]))
        #expect(Data(base64URLEncoded: "+/8=") == nil)
        #expect(Data(base64URLEncoded: "A") == nil)
        // Each refusal on its own: the standard alphabet's two characters, padding, and what is no base64 at all.
        #expect(Data(base64URLEncoded: "+_8") == nil)
        #expect(Data(base64URLEncoded: "-/8") == nil)
        #expect(Data(base64URLEncoded: "-_8=") == nil)
        #expect(Data(base64URLEncoded: "-_8*") == nil)
        #expect(Data(base64URLEncoded: "-_é") == nil)
        // Every length an encoder gives (remainders 0, 2, 3) decodes back to its bytes.
        for count in 0...9 {
            let bytes = Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 97 &+ 251) })
            #expect(Data(base64URLEncoded: bytes.base64URLEncodedString()) == bytes)
        }
    }

    @Test func randomAndUUID() {
        #expect(SecureRandom.bytes(32).count == 32)
        #expect(SecureRandom.bytes(32) != SecureRandom.bytes(32))
        let uuid = SecureRandom.uuid()
        let pattern = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/
        #expect(uuid.wholeMatch(of: pattern) != nil)
        #expect(UUID(uuidString: uuid) != nil)
    }
}
