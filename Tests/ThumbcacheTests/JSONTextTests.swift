import Foundation
import Testing
@testable import ThumbcacheIndex
@testable import Thumbcache

/// `JSONText`, which writes `search --json`, `info --json` and `serve`'s answers: what it writes
/// must read back, through Foundation's parser, as exactly what was written.
struct JSONTextTests {
    @Test func stringsNumbersAndNestingReadBack() throws {
        let awkward = "quote \" backslash \\ slash / tab \t newline \n nul \u{0} bell \u{7} unit \u{1F} é 北京 🙂"
        for pretty in [false, true] {
            var json = JSONText(pretty: pretty)
            json.object { o in
                o.member("a", awkward)
                o.member("b", [String]())
                o.member("c") { $0.object { _ in } }
                o.member("d", 42)
                o.member("e", -0.125)
                o.member("f", 1e300)
                o.member("g", Double.nan)
                o.member("h", true)
                o.member("i", ["x", "y"])
            }
            let parsed = try #require(try JSONSerialization.jsonObject(with: Data(json.bytes)) as? [String: Any])
            #expect(parsed["a"] as? String == awkward)
            #expect((parsed["b"] as? [Any])?.isEmpty == true && (parsed["c"] as? [String: Any])?.isEmpty == true)
            #expect(parsed["d"] as? Int == 42 && parsed["e"] as? Double == -0.125 && parsed["f"] as? Double == 1e300)
            #expect(parsed["g"] is NSNull && parsed["h"] as? Bool == true && parsed["i"] as? [String] == ["x", "y"])
            #expect(json.text.contains("\"d\"" + (pretty ? " : " : ":") + "42"), "a whole number has no fraction")
            #expect(json.text.contains("\n") == pretty)
        }
        var pretty = JSONText(pretty: true)
        pretty.object { $0.member("list") { $0.array { $0.element { $0.number(1) }; $0.element { $0.object { $0.member("k", "v") } } } } }
        #expect(pretty.text == "{\n  \"list\" : [\n    1,\n    {\n      \"k\" : \"v\"\n    }\n  ]\n}")
    }

    @Test func aResultIsWrittenWithSortedKeysAndUTCDates() throws {
        var result = SearchResult(itemNumber: 1, path: "/photos/a \"b\".jpg", identifier: nil, domainIdentifier: nil,
                                  contentHash: Array(0..<16), attributes: [
                                      "kMDItemPixelWidth": .number(640), "kMDItemContentCreationDate": .date(1_700_000_000.75),
                                      "kMDItemKeywords": .strings(["sea", "sky"]), "kMDItemFSName": .string("a \"b\".jpg"),
                                  ], score: 1.23456)
        result.snippet = TextSnippet(text: "…the sea…", matches: [4..<7])
        var json = JSONText()
        AttributeFormat.write(result, thumbnail: "/thumbnails/x?size=128", into: &json)
        #expect(json.text == #"{"attributes":{"kMDItemContentCreationDate":"2023-11-14T22:13:20Z","kMDItemFSName":"a \"b\".jpg","#
            + #""kMDItemKeywords":["sea","sky"],"kMDItemPixelWidth":640},"contentHash":"000102030405060708090a0b0c0d0e0f","#
            + #""path":"/photos/a \"b\".jpg","score":1.235,"snippet":{"matches":[[4,7]],"text":"…the sea…"},"#
            + #""thumbnail":"/thumbnails/x?size=128"}"#)
        #expect(AttributeFormat.date(0) == "1970-01-01T00:00:00Z" && AttributeFormat.date(-1) == "1969-12-31T23:59:59Z")
    }
}
