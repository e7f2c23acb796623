/// Small PDFs written byte by byte, for tests of the documents worker, previews and the page.
package enum PDFFixture {
    /// A PDF of `pages` pages: text in a standard (not embedded) font and pale boxes, as a report
    /// has, on a media box of `width × height` points, optionally cropped. (Box edges that fall
    /// between pixels are where pdftoppm's Splash, which snaps fills to the pixel grid, and cairo
    /// differ most: saturated boxes would measure that, not the page.)
    /// With `pageTexts`, each page shows its own text and boxes placed by its number instead.
    package static func document(pages: Int = 1, width: Int = 612, height: Int = 792, cropBox: [Int]? = nil, title: String = "Quarterly report",
                    author: String = "Ana Author", text: String = "Hello thumbcache", pageTexts: [String]? = nil) -> [UInt8] {
        // Every page shows the same content stream (object 4): a document of 100 000 pages stays small.
        let pages = pageTexts?.count ?? pages
        var objects: [[UInt8]] = []
        let kids = (0..<pages).map { "\(5 + $0) 0 R" }.joined(separator: " ")
        objects.append(Array("<< /Type /Catalog /Pages 2 0 R >>".utf8))
        objects.append(Array("<< /Type /Pages /Kids [\(kids)] /Count \(pages) >>".utf8))
        objects.append(Array("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>".utf8))
        func stream(_ text: String, _ n: Int) -> [UInt8] {
            let content = Array("""
            BT /F1 40 Tf 60 \(height - 120) Td (\(text)) Tj ET 0.75 0.85 1 rg \(60 + 40 * n) 60 \(width / 2) \(height / 4) re f \
            1 0.85 0.7 rg \(width / 2) \(height / 2 - 60 * n) \(width / 3) \(height / 5) re f
            """.utf8)
            return Array("<< /Length \(content.count) >>\nstream\n".utf8) + content + Array("\nendstream".utf8)
        }
        objects.append(stream(text, 0))
        let crop = cropBox.map { " /CropBox [\($0.map(String.init).joined(separator: " "))]" } ?? ""
        // Pages' own streams (with `pageTexts`) follow the pages and the info dictionary.
        let firstOwn = 5 + pages + 1
        for i in 0..<pages {
            let contents = pageTexts == nil ? 4 : firstOwn + i
            objects.append(Array("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 \(width) \(height)]\(crop) /Resources << /Font << /F1 3 0 R >> >> /Contents \(contents) 0 R >>".utf8))
        }
        objects.append(Array("<< /Title (\(title)) /Author (\(author)) /Creator (thumbcache tests) >>".utf8))
        let info = objects.count
        for (i, own) in (pageTexts ?? []).enumerated() { objects.append(stream(own, i + 1)) }
        var out = Array("%PDF-1.4\n".utf8)
        var offsets: [Int] = []
        for (i, object) in objects.enumerated() {
            offsets.append(out.count)
            out += Array("\(i + 1) 0 obj\n".utf8) + object + Array("\nendobj\n".utf8)
        }
        let xref = out.count
        out += Array("xref\n0 \(objects.count + 1)\n0000000000 65535 f \n".utf8)
        for o in offsets { out += Array(String(repeating: "0", count: 10 - String(o).count).utf8) + Array("\(o) 00000 n \n".utf8) }
        out += Array("trailer\n<< /Size \(objects.count + 1) /Root 1 0 R /Info \(info) 0 R >>\nstartxref\n\(xref)\n%%EOF\n".utf8)
        return out
    }
}
