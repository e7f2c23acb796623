import ThumbcacheImaging

/// The pages of an office file or an e-book made of its words (after the picture it carries, a
/// stored thumbnail or a cover, when it has one; from page 1 when it has none): its words, as the
/// full-text index reads them, wrapped into lines and drawn as a text's pages are. Not the
/// document's own layout, which would take its office suite or reading system; a readable look at
/// what it says, as Quick Look's plain views give.
enum DocumentPages {
    /// Page `page` (from 0) of the document on `descriptor`: with `afterPicture`, page 0 is the
    /// picture and page 1 the first of words. `media` (title, authors) goes into the header, so a
    /// document indexed through its page of words keeps them.
    static func page(_ page: Int, descriptor: Int32, name: String, format: ImageFormat, afterPicture: Bool,
                     media: MediaMetadata?) throws(ImagingError) -> TextSource {
        let textPage = afterPicture ? page - 1 : page
        // Enough words for this text page and the next, at four bytes a character at most.
        let lines = (textPage + 2) * TextSource.linesPerPage
        let limit = min(TextSource.pagedReadLimit, lines * TextSource.columns * 4)
        let words = try DocumentText.words(descriptor: descriptor, name: name, format: format, limit: limit)
        let counted = afterPicture ? 1 : 0
        guard words.contains(where: { !$0.isWhitespace }) else { throw ImagingError(path: name, reason: .noSuchPage(page: page + 1, pages: counted)) }
        do {
            return try TextSource(text: Array(wrapped(words, columns: TextSource.columns).utf8), name: name, page: textPage, media: media ?? MediaMetadata())
        } catch {
            // Counted with the picture, when there is one, as page 1.
            guard case .noSuchPage(_, let pages) = error.reason else { throw error }
            throw ImagingError(path: name, reason: .noSuchPage(page: page + 1, pages: pages + counted))
        }
    }

    /// `text` with each line broken at spaces into lines of at most `columns` characters (a word
    /// longer than that is cut), and a blank line between paragraphs, as a page of prose shows.
    static func wrapped(_ text: String, columns: Int) -> String {
        var out: [String] = []
        for paragraph in text.split(separator: "\n", omittingEmptySubsequences: true) {
            var line = ""
            var count = 0
            for word in paragraph.split(separator: " ", omittingEmptySubsequences: true) {
                var word = Substring(word)
                while word.unicodeScalars.count > columns {
                    if count > 0 { out.append(line) }
                    let cut = word.unicodeScalars.index(word.unicodeScalars.startIndex, offsetBy: columns)
                    out.append(String(word.unicodeScalars[..<cut]))
                    word = Substring(word.unicodeScalars[cut...])
                    (line, count) = ("", 0)
                }
                let length = word.unicodeScalars.count
                guard length > 0 else { continue }
                if count > 0 && count + 1 + length > columns {
                    out.append(line)
                    (line, count) = ("", 0)
                }
                line += (count > 0 ? " " : "") + word
                count += (count > 0 ? 1 : 0) + length
            }
            if count > 0 { out.append(line) }
            out.append("")
        }
        return out.joined(separator: "\n")
    }
}
