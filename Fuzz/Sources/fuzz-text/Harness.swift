@testable import ThumbcacheImaging  // the text readers are package API (Tools/fuzz builds with -enable-testing)

/// The readers the full-text extractors run on a file's bytes: the input's first byte picks the
/// charset decoder, HTML, an XML part (Word's runs), subtitles or an e-mail. Each must return,
/// and never more text than its input could make.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ count: Int) -> Int32 {
    guard count > 0 else { return 0 }
    let bytes = UnsafeRawBufferPointer(start: data + 1, count: count - 1)
    guard let text = Charset.decode(bytes) else { return 0 }
    let bound = text.utf8.count * 4 + 16
    let out: String = switch data[0] % 4 {
    case 0: HTMLText.words(text)
    case 1: XMLText.words(text, paragraphs: ["p"], breaks: ["br"], tabs: ["tab"], only: ["t"])
    case 2: SubtitleText.words(text)
    default: MailText.words(text)
    }
    precondition(out.utf8.count <= bound * 2, "\(out.utf8.count) bytes of words from \(count) bytes")
    return 0
}
