import Testing

@testable import CheckoutKit

@Suite struct JSONPathTests {
    @Test func parsesKeysIndicesAndQuotedKeys() throws {
        let path = try JSONPath(#"a.b[0]["odd key"]"#)
        #expect(path.components == [.key("a"), .key("b"), .index(0), .key("odd key")])
        #expect(try JSONPath("$.a['x.y']").components == [.key("a"), .key("x.y")])
        #expect(try JSONPath("$").components.isEmpty)
        #expect(try JSONPath("items[12]").description == "$.items[12]")
    }

    @Test func aKeyIsDottedOnlyWhenItReadsBackSo() throws {
        let path = JSONPath(components: [
            .key("a-b_1"), .key("größe"), .key("odd key"), .key("x.y"), .key(""), .index(3), .key("ü."),
        ])
        #expect(path.description == #"$.a-b_1.größe["odd key"]["x.y"][""][3]["ü."]"#)
        #expect(try JSONPath(path.description) == path)
        for plain in ["a", "A9", "_-", "größe", "日本"] { #expect(JSONPath.isPlainKey(plain), "\(plain)") }
        for odd in ["", " ", "a.b", "a[0]", "größe!", "$", "price€", "no\u{A0}break"] {
            #expect(!JSONPath.isPlainKey(odd), "\(odd)")
        }
    }

    @Test(arguments: ["a..b", "a.", "a[", "a[x]", "a[-1]", #"a["unterminated]"#])
    func rejectsBadSyntax(_ text: String) {
        #expect(throws: JSONPath.SyntaxError.self) { try JSONPath(text) }
    }

    @Test func evaluates() throws {
        let doc: JSON = ["a": ["b": [["odd key": "found"], 2]], "n": nil]
        #expect(try JSONPath(#"a.b[0]["odd key"]"#).evaluate(doc) == "found")
        #expect(try JSONPath("a.b[1]").evaluate(doc) == 2)
        #expect(try JSONPath("a.b[2]").evaluate(doc) == nil)
        #expect(try JSONPath("a.missing").evaluate(doc) == nil)
        #expect(try JSONPath("a.b.c").evaluate(doc) == nil)
        #expect(try JSONPath("n").evaluate(doc) == .null)
        #expect(JSONPath.root.evaluate(doc) == doc)
    }

    @Test func settingCreatesContainers() throws {
        let set = try JSONPath("x.list[2].id").setting("v", in: ["keep": 1])
        #expect(set == ["keep": 1, "x": ["list": [nil, nil, ["id": "v"]]]])
        let replaced = try JSONPath("keep").setting(["new": true], in: set)
        #expect(replaced["keep"] == ["new": true])
        #expect(replaced["x"] == set["x"])
    }
}

@Suite struct SuggestTests {
    @Test func suggestsTheCloseWord() {
        #expect(Suggest.closest(to: "fromat", in: ["format", "verbose", "quiet"]) == "format")
        #expect(Suggest.closest(to: "sandbx", in: ["local", "sandbox"]) == "sandbox")
    }

    @Test func nothingForFarWords() {
        #expect(Suggest.closest(to: "banana", in: ["format", "verbose", "quiet"]) == nil)
        #expect(Suggest.closest(to: "x", in: []) == nil)
    }
}
