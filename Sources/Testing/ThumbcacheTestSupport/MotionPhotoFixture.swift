import Foundation
import ThumbcacheImaging

/// Motion Photos as phones write them: a JPEG whose APP1 XMP packet describes the MP4 appended
/// after it (MotionPhotoTests, ServeTests).
package enum MotionPhotoFixture {
    /// An MP4 of `seconds` of ffmpeg's test pattern (H.264), as a phone's clip.
    package static func movie(in dir: TemporaryDirectory, seconds: Int = 2) throws -> [UInt8] {
        let path = dir.appending("motion-\(UUID().uuidString).mp4")
        try FixtureTools.run("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc=size=160x120:rate=10", "-t", "\(seconds)",
                                        "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", path])
        return Array(try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    /// A JPEG of `picture` with `xmp` in its APP1 segment, then `trailer`.
    package static func jpeg(xmp: String, trailer: [UInt8]) throws -> [UInt8] {
        let plain = try ImageEncoder.jpeg(TestPictures.source())
        let payload = Array("http://ns.adobe.com/xap/1.0/\0".utf8) + Array(xmp.utf8)
        let length = payload.count + 2
        let segment: [UInt8] = [0xFF, 0xE1, UInt8(length >> 8), UInt8(length & 0xFF)] + payload
        return Array(plain[0..<2]) + segment + Array(plain[2...]) + trailer
    }

    /// A HEIC (or, with `avif`, an AVIF) Motion Photo as Pixels write one: heif-enc's still of
    /// `picture`, `xmp` put in as its XMP item by exiftool, then the movie in a top-level `mpvd`
    /// box that HEIF readers pass over.
    package static func heif(_ dir: TemporaryDirectory, _ name: String, picture: RGBAImage, avif: Bool = false, xmp: String,
                             movie: [UInt8]) throws -> String {
        let still = try FixtureTools.fixture(dir, name + ".still", from: picture, "heif-enc") { avif ? ["--avif", "-q", "90", "-o", $1, $0] : ["-q", "90", "-o", $1, $0] }
        let packet = try dir.write(name + ".xmp", Array(xmp.utf8))
        try FixtureTools.run("exiftool", ["-q", "-overwrite_original", "-xmp<=" + packet, still])
        let length = UInt32(8 + movie.count)
        let box = [UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)] + Array("mpvd".utf8)
        return try dir.write(name, Array(try Data(contentsOf: URL(fileURLWithPath: still))) + box + movie)
    }

    /// `still` with a Samsung phone's trailer: the movie as a `MotionPhoto_Data` record and a
    /// version record, their directory (`SEFH`) and the footer (its length, `SEFT`).
    package static func samsung(still: [UInt8], movie: [UInt8]) -> [UInt8] {
        func le16(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF)] }
        func le32(_ v: Int) -> [UInt8] { le16(v & 0xFFFF) + le16(v >> 16) }
        func record(_ type: Int, _ name: String, _ payload: [UInt8]) -> [UInt8] { [0, 0] + le16(type) + le32(name.utf8.count) + Array(name.utf8) + payload }
        let records = [(0x0A30, record(0x0A30, "MotionPhoto_Data", movie)), (0x0A31, record(0x0A31, "MotionPhoto_Version", Array("mpv2".utf8)))]
        var out = still
        var starts: [Int] = []
        for (_, bytes) in records {
            starts.append(out.count)
            out += bytes
        }
        let directory = out.count
        var head = Array("SEFH".utf8) + le32(106) + le32(records.count)
        for (i, (type, bytes)) in records.enumerated() { head += [0, 0] + le16(type) + le32(directory - starts[i]) + le32(bytes.count) }
        return out + head + le32(head.count) + Array("SEFT".utf8)
    }

    /// Google's Motion Photo 1.0: attributes on the description, the directory as items.
    package static func motionPhotoXMP(videoLength: Int, presentationUs: Int) -> String {
        """
        <x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
        <rdf:Description rdf:about="" xmlns:Camera="http://ns.google.com/photos/1.0/camera/"
          xmlns:Container="http://ns.google.com/photos/1.0/container/" xmlns:Item="http://ns.google.com/photos/1.0/container/item/"
          Camera:MotionPhoto="1" Camera:MotionPhotoVersion="1" Camera:MotionPhotoPresentationTimestampUs="\(presentationUs)">
        <Container:Directory><rdf:Seq>
        <rdf:li rdf:parseType="Resource"><Container:Item Item:Mime="image/jpeg" Item:Semantic="Primary" Item:Length="0" Item:Padding="0"/></rdf:li>
        <rdf:li rdf:parseType="Resource"><Container:Item Item:Mime="video/mp4" Item:Semantic="MotionPhoto" Item:Length="\(videoLength)"/></rdf:li>
        </rdf:Seq></Container:Directory></rdf:Description></rdf:RDF></x:xmpmeta>
        """
    }

    /// The earlier form, its values written as elements.
    package static func microVideoXMP(offset: Int) -> String {
        """
        <x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
        <rdf:Description rdf:about="" xmlns:GCamera="http://ns.google.com/photos/1.0/camera/">
        <GCamera:MicroVideo>1</GCamera:MicroVideo><GCamera:MicroVideoVersion>1</GCamera:MicroVideoVersion>
        <GCamera:MicroVideoOffset> \(offset) </GCamera:MicroVideoOffset>
        <GCamera:MicroVideoPresentationTimestampUs>250000</GCamera:MicroVideoPresentationTimestampUs>
        </rdf:Description></rdf:RDF></x:xmpmeta>
        """
    }

    /// An iPhone's MakerNote ("Apple iOS", big-endian, offsets from its own start) holding the
    /// content identifier (tag 0x0011), inside an EXIF block.
    package static func exifWithAppleIdentifier(_ id: String) -> [UInt8] {
        func u16(_ v: Int) -> [UInt8] { [UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
        func u32(_ v: Int) -> [UInt8] { [UInt8(v >> 24 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
        let text = Array(id.utf8) + [0]
        var note = Array("Apple iOS\0".utf8) + [0, 1] + Array("MM".utf8)
        note += u16(1) + u16(0x0011) + u16(2) + u32(text.count) + u32(32) + u32(0) + text
        var tiff = Array("MM".utf8) + [0, 42] + u32(8)
        tiff += u16(1) + u16(0x8769) + u16(4) + u32(1) + u32(26) + u32(0)  // IFD0 → the EXIF IFD at 26
        tiff += u16(1) + u16(0x927C) + u16(7) + u32(note.count) + u32(44) + u32(0)  // its MakerNote at 44
        return tiff + note
    }
}
