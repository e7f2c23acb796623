import ArgumentParser
import ThumbcacheSync
import Glibc
import Thumbcache

struct SearchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "search",
        abstract: "Find indexed files (and app items) with Spotlight's query language.",
        discussion: """
            Prints one path per line, like mdfind. `thumbcache warm DIR` indexes the files under \
            DIR, the words inside them included. The query is a Spotlight query expression or \
            plain words (see QUERY.md in /usr/share/doc/thumbcache or Docs/); a query with words \
            lists the best matches first:

              thumbcache search holiday           in names, titles, tags and texts
              thumbcache search '"annual report" revenue' --snippets
              thumbcache search 'photosynth*'     a prefix
              thumbcache search 'kMDItemTextContent == "invoice"cd &&
                                 kMDItemContentTypeTree == "com.adobe.pdf"'

              thumbcache search 'kMDItemFSName == "*holiday*"c'
              thumbcache search 'kMDItemContentTypeTree == "public.image" &&
                                 kMDItemPixelWidth >= 4000'
              thumbcache search --onlyin ~/Pictures 'kMDItemContentModificationDate >=
                                 $time.today(-7)'
              thumbcache search 'kMDItemUserTags == "work"' --attr kMDItemFSSize --json

            Operators: == != < > <= >= InRange(attr, low, high) && || ! NOT ( ). Strings take \
            * and ? wildcards and the modifiers c (ignore case), d (ignore diacritics) and w \
            (match words). Dates: $time.now, $time.today, $time.yesterday, $time.this_week, \
            $time.this_month, $time.this_year, each with an optional (±N), and $time.iso(2024-05-01).
            """
    )

    @Argument(help: ArgumentHelp("The query (quote it for the shell).", valueName: "query"))
    var query: String

    @OptionGroup var cacheOptions: CacheOptions

    @Option(name: .customLong("onlyin"), help: ArgumentHelp("Only results at or under this directory (repeatable).", valueName: "dir"))
    var onlyIn: [String] = []

    @Option(name: .long, help: "Print at most this many results.")
    var limit: Int?

    @Option(name: .customLong("attr"), help: ArgumentHelp("Also print this attribute of each result (repeatable).", valueName: "name"))
    var attributes: [String] = []

    @Flag(name: .long, help: "Print only the number of results.")
    var count = false

    @Flag(name: .long, help: "Print the results as JSON (with each one's score and snippet when the query has words).")
    var json = false

    @Flag(name: .long, help: "Under each result, print the passage of its text where the query's words are.")
    var snippets = false

    func validate() throws {
        if let limit, limit < 0 { throw ValidationError("--limit must not be negative") }
    }

    func run() throws {
        try cacheOptions.requireExisting(toDo: "search")
        let index = try cacheOptions.openIndex()
        let options = SearchOptions(onlyIn: onlyIn.map(FilePaths.resolved), limit: count ? 0 : limit,
                                    attributes: attributes.isEmpty ? nil : attributes, snippets: snippets || json)
        let results: SearchResults
        do {
            results = try index.search(query, options: options)
        } catch let error as QueryError {
            writeStandardError("thumbcache search: \(error)\n")
            throw ExitCode(2)
        }
        for name in results.unknownAttributes {
            writeStandardError("thumbcache search: note: no item has the attribute \(name)\n")
        }
        if results.count == 0, case let statistics = try index.statistics(), statistics.items == 0 {
            let why = statistics.fileSystemIsFull
                ? "is empty, and the file system holding it is full (\(statistics.fileSystemFreeBytes ?? 0) bytes free), so a warm "
                    + "could not write it: free some space, then run `thumbcache warm DIR` again"
                : "is empty; run `thumbcache warm DIR` first"
            writeStandardError("thumbcache search: the index at \(index.directory) \(why)\n")
        }
        if json {
            var out = JSONText(pretty: true)
            out.object { o in
                o.member("count", results.count)
                if !count { o.member("results") { $0.array { list in for r in results.results { list.element { AttributeFormat.write(r, into: &$0) } } } } }
            }
            print(out.text)
            return
        }
        if count {
            print(results.count)
            return
        }
        for r in results.results {
            var line = r.displayName
            for name in attributes {
                line += "\t\(name)=" + (r.attributes[name].map(AttributeFormat.text) ?? "(null)")
            }
            print(line)
            if snippets, let snippet = r.snippet { print("    " + Self.highlighted(snippet)) }
        }
    }

    /// The snippet with its matched words in bold on a terminal, between «» elsewhere.
    static func highlighted(_ snippet: TextSnippet) -> String {
        let (open, close) = isatty(STDOUT_FILENO) == 1 ? ("\u{1B}[1m", "\u{1B}[0m") : ("«", "»")
        return snippet.marked(plain: { $0 }, match: { open + $0 + close })
    }
}
