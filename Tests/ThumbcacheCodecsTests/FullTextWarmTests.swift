import Foundation
import Testing
import ThumbcacheImaging
import ThumbcacheTestSupport

/// `warm` reads the words inside files through the sandboxed document worker, once per content,
/// and `search` finds and ranks them; a changed file's old words stop matching; a tree that stops
/// changing is never read again. Real processes throughout.
@Suite(.serialized)
struct FullTextWarmTests {
    func run(_ arguments: [String]) throws -> (status: ChildProcess.Termination, stdout: [String], stderr: String) {
        try ChildProcess.run("thumbcache", arguments)
    }

    /// The number of texts a `warm --json` read.
    func textsRead(_ output: [String]) throws -> Int? {
        let summary = try JSONSerialization.jsonObject(with: Data(output.joined(separator: "\n").utf8)) as? [String: Any]
        return (summary?["index"] as? [String: Any])?["texts"] as? Int
    }

    @Test func warmReadsTheWordsOnceAndSearchFindsThem() throws {
        let dir = TemporaryDirectory()
        let tree = dir.appending("tree"), cache = dir.appending("cache")
        try FileManager.default.createDirectory(atPath: tree, withIntermediateDirectories: true)
        let letter = try dir.write("tree/letter.pdf", TextExtractionTests.pdf(pages: ["Quarterly invoice enclosed", "Payment due in March"]))
        let notes = try dir.write("tree/notes.txt", Array("the invoice is paid, the invoice is filed".utf8))
        let copy = try dir.write("tree/notes copy.txt", Array("the invoice is paid, the invoice is filed".utf8))
        let page = try dir.write("tree/page.html", Array("<html><body><p>No bill here</p><script>invoice()</script></body></html>".utf8))
        _ = try dir.write("tree/photo.png", try ImageEncoder.png(testPhoto(width: 16, height: 16)))

        let first = try run(["warm", tree, "--cache", cache, "--json"])
        #expect(first.status == .exited(0), "\(first.stderr)")
        #expect(try textsRead(first.stdout) == 3, "the PDF, the notes once for both copies, the page")

        // Ranked: the notes say "invoice" twice in eight words, the PDF once in eight.
        #expect(try run(["search", "invoice", "--cache", cache]).stdout.map { $0 == copy ? notes : $0 } == [notes, notes, letter])
        #expect(try run(["search", #""due in march""#, "--cache", cache]).stdout == [letter])
        #expect(try run(["search", "bill", "--cache", cache]).stdout == [page])
        #expect(try run(["search", #"kMDItemTextContent == "invoice"cd && kMDItemFSName == "*.pdf""#, "--cache", cache]).stdout == [letter])
        let json = try run(["search", "payment", "--json", "--cache", cache])
        let object = try JSONSerialization.jsonObject(with: Data(json.stdout.joined(separator: "\n").utf8)) as? [String: Any]
        let hit = try #require((object?["results"] as? [[String: Any]])?.first)
        let snippet = try #require(hit["snippet"] as? [String: Any])
        #expect((snippet["text"] as? String)?.contains("Payment due in March") == true, "\(snippet)")
        #expect((snippet["matches"] as? [[Int]])?.count == 1 && (hit["score"] as? Double ?? 0) > 0)

        // Nothing changed: no word is read again.
        #expect(try textsRead(try run(["warm", tree, "--cache", cache, "--json"]).stdout) == 0)

        // The notes change: their old words no longer find them, their new ones do.
        try Data("a receipt for the gooseberries".utf8).write(to: URL(fileURLWithPath: notes))
        #expect(try textsRead(try run(["warm", tree, "--cache", cache, "--json"]).stdout) == 1)
        #expect(try run(["search", "invoice", "--cache", cache]).stdout == [copy, letter])
        #expect(try run(["search", "gooseberries", "--cache", cache]).stdout == [notes])

        // The copy goes: `compact` removes the text no file holds any more.
        try FileManager.default.removeItem(atPath: copy)
        #expect(try run(["warm", tree, "--cache", cache]).status == .exited(0))
        let compact = try run(["compact", "--cache", cache, "--json"])
        let report = try JSONSerialization.jsonObject(with: Data(compact.stdout.joined(separator: "\n").utf8)) as? [String: Any]
        #expect((report?["wordsInsideFiles"] as? [String: Any])?["documentsRemoved"] as? Int == 1, "\(compact.stdout)")
        #expect(try run(["search", "invoice", "--cache", cache]).stdout == [letter])

        // --text-limit 0 reads no words.
        let other = dir.appending("other-cache")
        #expect(try textsRead(try run(["warm", tree, "--cache", other, "--json", "--text-limit", "0"]).stdout) == 0)
        #expect(try run(["search", "gooseberries", "--cache", other]).stdout.isEmpty)
    }
}
