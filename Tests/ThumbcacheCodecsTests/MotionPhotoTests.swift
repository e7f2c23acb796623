import Foundation
import Testing
import ThumbcacheImaging
import ThumbcacheTestSupport
import ThumbcacheWorker

/// Motion Photos (a JPEG with its movie appended) made as the format's writers make them: an
/// XMP packet after the JPEG's start, an MP4 (by ffmpeg) after its end. Through the real worker
/// and the real CLI.
@Suite(.serialized)
struct MotionPhotoTests {
    /// A JPEG of `picture` with `xmp` in its APP1 segment, then `trailer`.
    static func jpeg(xmp: String, trailer: [UInt8]) throws -> [UInt8] {
        let plain = try ImageEncoder.jpeg(TestPictures.source())
        let payload = Array("http://ns.adobe.com/xap/1.0/\0".utf8) + Array(xmp.utf8)
        let length = payload.count + 2
        let segment: [UInt8] = [0xFF, 0xE1, UInt8(length >> 8), UInt8(length & 0xFF)] + payload
        return Array(plain[0..<2]) + segment + Array(plain[2...]) + trailer
    }

    /// Google's Motion Photo 1.0: attributes on the description, the directory as items.
    static func motionPhotoXMP(videoLength: Int, presentationUs: Int) -> String {
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
    static func microVideoXMP(offset: Int) -> String {
        """
        <x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
        <rdf:Description rdf:about="" xmlns:GCamera="http://ns.google.com/photos/1.0/camera/">
        <GCamera:MicroVideo>1</GCamera:MicroVideo><GCamera:MicroVideoVersion>1</GCamera:MicroVideoVersion>
        <GCamera:MicroVideoOffset> \(offset) </GCamera:MicroVideoOffset>
        <GCamera:MicroVideoPresentationTimestampUs>250000</GCamera:MicroVideoPresentationTimestampUs>
        </rdf:Description></rdf:RDF></x:xmpmeta>
        """
    }

    @Test func theMovieIsFoundFromTheTailAndCheckedAndIndexed() throws {
        let dir = TemporaryDirectory()
        let mp4 = try Array(Data(contentsOf: URL(fileURLWithPath: MediaFormatTests.video(dir, "clip.mp4", seconds: 2, ["-c:v", "libx264", "-preset", "ultrafast"]))))
        let tree = dir.appending("tree")
        try FileManager.default.createDirectory(atPath: tree, withIntermediateDirectories: true)
        let motion = try dir.write("tree/PXL_motion.jpg", Self.jpeg(xmp: Self.motionPhotoXMP(videoLength: mp4.count, presentationUs: 1_500_000), trailer: mp4))
        let legacy = try dir.write("tree/MVIMG_legacy.jpg", Self.jpeg(xmp: Self.microVideoXMP(offset: mp4.count), trailer: mp4))
        // Its XMP promises the whole movie, but the file was cut: no movie is claimed.
        let cut = try dir.write("tree/cut.jpg", Self.jpeg(xmp: Self.motionPhotoXMP(videoLength: mp4.count, presentationUs: 0),
                                                          trailer: Array(mp4.prefix(mp4.count / 2))))
        let plain = try dir.write("tree/plain.jpg", Self.jpeg(xmp: "<x:xmpmeta/>", trailer: []))

        let pool = MediaFormatTests.pool
        let found = try #require(try pool.info(ofFileAt: motion, format: nil).media?.motionPhoto)
        let size = try #require(try FileManager.default.attributesOfItem(atPath: motion)[.size] as? Int)
        #expect(found.videoOffset == size - mp4.count && found.videoLength == mp4.count)
        #expect(found.presentationSeconds == 1.5)
        #expect(abs((found.videoDurationSeconds ?? 0) - 2) < 0.05, "\(String(describing: found.videoDurationSeconds))")
        #expect(found.bytesRead < 256, "read \(found.bytesRead) bytes of a \(mp4.count)-byte movie")
        let old = try #require(try pool.info(ofFileAt: legacy, format: nil).media?.motionPhoto)
        #expect(old.videoLength == mp4.count && old.presentationSeconds == 0.25)
        #expect(try pool.info(ofFileAt: cut, format: nil).media?.motionPhoto == nil)
        #expect(try pool.info(ofFileAt: plain, format: nil).media?.motionPhoto == nil)
        // The still's thumbnail as for any JPEG: the movie behind it is not read.
        let still = try pool.thumbnail(ofFileAt: motion, options: MediaFormatTests.box, format: nil).image
        #expect(still.pixels == (try pool.thumbnail(ofFileAt: plain, options: MediaFormatTests.box, format: nil).image.pixels))

        let cache = dir.appending("cache")
        let warm = try ChildProcess.run("thumbcache", ["warm", tree, "--cache", cache])
        try #require(warm.status == .exited(0), "\(warm.stderr)")
        let search = try ChildProcess.run("thumbcache", ["search", "kMDItemIsMotionPhoto == 1", "--cache", cache])
        #expect(Set(search.stdout.filter { !$0.isEmpty }) == [motion, legacy], "\(search.stdout) \(search.stderr)")
        let info = try ChildProcess.run("thumbcache", ["info", motion, "--cache", cache]).stdout.joined(separator: "\n")
        #expect(info.contains("kMDItemMotionPhotoPresentationSeconds") && info.contains("= 1.5"), "\(info)")
        #expect(info.contains("kMDItemMotionPhotoVideoDurationSeconds"), "\(info)")
    }
}
