import Foundation
import Testing

@testable import CheckoutKit

/// The state file's text is put together section by section, each part reused while it can be (`StateStore+Rendering`):
/// whatever is reused, the text is the whole document's pretty serialization, masked as the whole would be.
@Suite struct StateFileRenderingTests {
    /// The file put together section by section is the whole document's serialization, masked as a whole would be —
    /// also when a later section teaches the redactor a secret an earlier one holds, and when a section is reused.
    @Test func sectionBySectionIsTheWholeDocumentsText() throws {
        let redactor = Redactor(secrets: ["configured-secret-1"])
        let store = StateStore(path: "/unused", redactor: redactor)
        var cache = RenderCache()
        let document: JSON = [
            "a-first": [
                "note": "learned-later-999 and configured-secret-1", "n": 1.5, "list": [true, .null, "x\n\"y\""],
            ],
            "z-last": ["password": "learned-later-999"], "spent": ["k": ["at": "now"]],
        ]
        let (written, bytes) = store.render(document, reusing: &cache)
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(text == written.serialized(pretty: true) + "\n")
        #expect(!text.contains("learned-later-999"))
        #expect(!text.contains("configured-secret-1"))
        #expect(written["a-first"]?["n"] == 1.5)
        // Again with one section changed: the others are reused, the text is still the whole's.
        var next = document.objectValue!
        next["z-last"] = ["password": "learned-later-999", "more": "configured-secret-1 again"]
        let reusedSpent = cache.document!.members!["spent"]!.bytes
        let (written2, bytes2) = store.render(.object(next), reusing: &cache)
        #expect(String(decoding: bytes2, as: UTF8.self) == written2.serialized(pretty: true) + "\n")
        #expect(cache.document!.members!["spent"]!.bytes == reusedSpent)
        #expect(!String(decoding: bytes2, as: UTF8.self).contains("configured-secret-1"))
        // A secret learned elsewhere after a section was written masks it at the next write.
        let (_, before) = store.render(["plain": ["id": "later-known-value"]], reusing: &cache)
        #expect(String(decoding: before, as: UTF8.self).contains("later-known-value"))
        redactor.register("later-known-value")
        let (_, after) = store.render(["plain": ["id": "later-known-value"]], reusing: &cache)
        #expect(!String(decoding: after, as: UTF8.self).contains("later-known-value"))
        #expect(String(decoding: store.render([:], reusing: &cache).bytes, as: UTF8.self) == "{}\n")
    }

    /// A large section is written member by member: members come and go (new keys merged into last time's order), and
    /// a member left as it was through writes that only checked it is masked once a secret it holds is learned — each
    /// text the whole document's, masked as a whole.
    @Test func aSectionsMembersComeAndGoAndEachIsMaskedAsTheWholeWouldBe() throws {
        let redactor = Redactor()
        let store = StateStore(path: "/unused", redactor: redactor)
        var cache = RenderCache()
        func whole(_ document: JSON) -> String { redactor.json(document).serialized(pretty: true) + "\n" }
        // The text, and the document written (what a read of the file gives back) checked against the whole's masking.
        func rendered(_ document: JSON) -> String {
            let (written, bytes) = store.render(document, reusing: &cache)
            #expect(written == redactor.json(document))
            return String(decoding: bytes, as: UTF8.self)
        }
        var spent: JSON.Object = [:]
        for n in stride(from: 10, to: 60, by: 1) {
            spent["k\(n)"] = ["by": .string("run \(n) of ref-\(n)-tail"), "at": "now"]
        }
        var document: JSON = ["note": "a", "spent": .object(spent)]
        #expect(rendered(document) == whole(document))
        redactor.register("learned-but-nowhere-1")
        #expect(rendered(document) == whole(document), "written again after learning what it does not hold")
        let before = try #require(cache.document?.members?["spent"]?.members?["k17"]?.bytes)
        redactor.register("ref-17-tail")
        spent["k99"] = ["by": "the newest", "at": "now"]
        document = ["note": "a", "spent": .object(spent)]
        let text = rendered(document)
        #expect(text == whole(document))
        #expect(
            !text.contains("ref-17-tail") && text.contains("ref-18-tail"),
            "the member holding what was learned is masked")
        #expect(cache.document?.members?["spent"]?.members?["k17"]?.bytes != before)
        // One gone, one new at the front and one in the middle.
        spent["k30"] = nil
        spent["k0"] = ["by": "first of ref-zero-tail", "at": "now"]
        spent["k305"] = ["by": "between", "at": "now"]
        document = ["note": "b", "spent": .object(spent)]
        #expect(rendered(document) == whole(document))
        #expect(cache.document?.members?["spent"]?.keys == spent.keys.sorted())
        // A member added since the section was first written is masked too once what it holds is learned.
        redactor.register("ref-zero-tail")
        let masked = rendered(document)
        #expect(masked == whole(document))
        #expect(!masked.contains("ref-zero-tail") && masked.contains("first of"))
        // A member written masked among many that are not, and then gone again: the written document follows each.
        spent["k40"] = ["by": "run 40", "password": "hunter2-long-enough"]
        document = ["note": "b", "spent": .object(spent)]
        #expect(rendered(document) == whole(document))
        spent["k41"] = ["by": "run 41 after it", "at": "now"]
        document = ["note": "b", "spent": .object(spent)]
        #expect(rendered(document) == whole(document))
        spent["k40"] = nil
        document = ["note": "b", "spent": .object(spent)]
        #expect(rendered(document) == whole(document))
        let plain: JSON = ["note": "d", "spent": ["k1": ["by": "nothing secret here", "at": "now"]]]
        #expect(rendered(plain) == whole(plain))
        #expect(
            store.render(plain, reusing: &cache).written.isIdentical(to: plain),
            "nothing masked: the very document given")
        #expect(rendered(["note": "c"]) == whole(["note": "c"]), "a section gone")
    }

    /// A large section whose members only change between writes (nothing learned meanwhile) is rendered by its changes
    /// alone: members changed, added at either end and in the middle, and removed, each text the whole document's — and
    /// once a member holds encoded JSON, it is masked again when what it hides is learned, though no search of its text
    /// can see it.
    @Test func aLargeSectionIsRenderedByItsChangesAsTheWholeWouldBe() throws {
        let redactor = Redactor()
        let store = StateStore(path: "/unused", redactor: redactor)
        var cache = RenderCache()
        func rendered(_ document: JSON) -> String {
            let (written, bytes) = store.render(document, reusing: &cache)
            #expect(written == redactor.json(document))
            return String(decoding: bytes, as: UTF8.self)
        }
        func whole(_ document: JSON) -> String { redactor.json(document).serialized(pretty: true) + "\n" }
        var spent: JSON.Object = [:]
        for n in 10..<60 { spent["k\(n)"] = ["by": .string("run \(n)"), "at": "now"] }
        var document: JSON = ["note": "a", "spent": .object(spent)]
        #expect(rendered(document) == whole(document))
        let steps: [(String, JSON?)] = [
            ("k20", ["by": "run 20 again", "at": "later"]), ("k05", ["by": "first", "at": "now"]),
            ("k99", ["by": "last", "at": "now"]), ("k345", ["by": "middle", "at": "now"]), ("k21", nil), ("k10", nil),
            ("k59", nil),
        ]
        for (key, value) in steps {
            let untouched = cache.document?.members?["spent"]?.members?["k40"]
            spent[key] = value
            document = ["note": "a", "spent": .object(spent)]
            #expect(rendered(document) == whole(document), "after \(key)")
            #expect(cache.document?.members?["spent"]?.keys == spent.keys.sorted())
            #expect(cache.document?.members?["spent"]?.members?["k40"] === untouched, "a member not changed is kept")
        }
        let payload = Data(#"{"ref":"hidden-in-jws-4242"}"#.utf8).base64URLEncodedString()
        spent["k33"] = ["jwt": .string("eyJhbGciOiJIUzI1NiJ9.\(payload).c2ln"), "at": "now"]
        document = ["note": "a", "spent": .object(spent)]
        let shown = rendered(document)
        #expect(shown == whole(document))
        #expect(shown.contains(payload), "not a secret yet")
        #expect(rendered(document) == whole(document), "the very same again")
        redactor.register("hidden-in-jws-4242")
        spent["k98"] = ["by": "another", "at": "now"]
        document = ["note": "a", "spent": .object(spent)]
        let text = rendered(document)
        #expect(text == whole(document))
        #expect(!text.contains(payload), "the payload shown redacted")
    }

    /// A document of many sections is never rendered by its changes alone: a section that is an object keeps its
    /// members' texts in its own filter, so a secret learned since that one of them holds is looked for section by
    /// section — here in the record of spent values, while only the runs changed.
    @Test func aSecretLearnedSinceIsMaskedInAnUnchangedSectionOfAManySectionedDocument() throws {
        let redactor = Redactor()
        let store = StateStore(path: "/unused", redactor: redactor)
        var cache = RenderCache()
        var top: JSON.Object = [
            "bahn": ["lastIntent": "pi_1"], "captures": ["f": ["id": "x"]], "cashapp": ["note": "n"],
            "centra": ["selection": "s"], "openOutcomes": ["o": ["by": "nobody"]], "runs": ["r1": ["note": "one"]],
            "spent": ["k1": ["by": "tok-abc123-used", "at": "now"]], "order": ["id": "kept by hand"],
        ]
        _ = store.render(.object(top), reusing: &cache)
        redactor.register("tok-abc123-used")
        top["runs"] = ["r1": ["note": "one"], "r2": ["note": "two"]]
        let (written, bytes) = store.render(.object(top), reusing: &cache)
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(!text.contains("tok-abc123-used"), "\(text)")
        #expect(written == redactor.json(.object(top)))
    }

    /// A part written before is checked against what the redactor learned since — including what a changed part just
    /// before it in the same writing taught it.
    @Test func aSecretTaughtByAnEarlierPartOfTheSameWriteIsMaskedInALaterOne() throws {
        let redactor = Redactor()
        let store = StateStore(path: "/unused", redactor: redactor)
        var cache = RenderCache()
        let first: JSON = [
            "a": ["note": "nothing here"], "b": ["note": "none yet"], "c": ["note": "quotes taught-by-b-4242"],
        ]
        _ = store.render(first, reusing: &cache)
        redactor.register("learned-elsewhere-77")  // the cached parts are checked again, not reused as they were
        let document: JSON = ["a": first["a"]!, "b": ["password": "taught-by-b-4242"], "c": first["c"]!]
        let text = String(decoding: store.render(document, reusing: &cache).bytes, as: UTF8.self)
        #expect(!text.contains("taught-by-b-4242"), "\(text)")
    }

    /// Against the whole-document masking it replaces: the same text for a document with sensitive keys at each level,
    /// an Apple Pay token shaped section, a secret top-level key, kept credentials in the chain and in a run, and a
    /// secret learned from one section that another holds.
    @Test(arguments: StateFileRenderingTests.documents)
    func sectionBySectionMasksAsTheWholeDocumentDoes(_ document: JSON) throws {
        func reference() -> String {
            let redactor = Redactor(secrets: ["configured-secret-1", "ABBBBBB"])
            let store = StateStore(path: "/unused", redactor: redactor)
            var safe = redactor.json(document)
            for path in store.credentialPaths(in: document) {
                if let value = path.evaluate(document) { safe = path.setting(value, in: safe) }
            }
            return safe.serialized(pretty: true) + "\n"
        }
        let store = StateStore(path: "/unused", redactor: Redactor(secrets: ["configured-secret-1", "ABBBBBB"]))
        var cache = RenderCache()
        let text = String(decoding: store.render(document, reusing: &cache).bytes, as: UTF8.self)
        #expect(text == reference())
        // Written again unchanged (every part reused or checked again): the same text.
        #expect(String(decoding: store.render(document, reusing: &cache).bytes, as: UTF8.self) == reference())
    }

    /// Sensitive keys at each level, kept credentials in the chain and in a run; an Apple Pay token shaped document and
    /// a `threeDS2` action split across parts; a secret learned from a later part that an earlier part holds plainly,
    /// inside a JWS payload, and overlapping a secret known before.
    static let documents: [JSON] = [
        [
            "token": ["id": "whole-section-secret"],
            "wallet": ["data": "payment-data-xyz", "header": ["transactionId": "t-1"], "version": "EC_v1"],
            "cashapp": ["token": "002.kept-checkout-token", "note": "says nonce-value-777"],
            "runs": [
                "r1": [
                    "cashapp": ["token": "002.kept-in-run", "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJhIjoiYiJ9.c2ln"],
                    "nonce": "nonce-value-777",
                ],
                "r2": ["run": ["finishedAt": "2026-12-03T10:00:00.000Z"]],
            ],
            "spent": ["Apple Pay token sha256:1": ["by": "configured-secret-1 used it", "at": "now"]],
        ],
        [
            "a": [
                "jwt": .string(
                    "eyJhbGciOiJIUzI1NiJ9." + Data(#"{"ref":"x-learned-later-999"}"#.utf8).base64URLEncodedString()
                        + ".c2ln")
            ],
            "z": ["password": "x-learned-later-999"],
        ],
        ["data": "abcdefgh-data", "header": [:], "version": "EC_v1"],
        [
            "x": [
                "type": "threeDS2",
                "token": .string(Data(#"{"acsURL":"https://acs.example/x"}"#.utf8).base64EncodedString()),
            ]
        ],
        ["a": ["note": "AAAAAABBBBBB"], "z": ["password": "AAAAAAB"]],
    ]
}
