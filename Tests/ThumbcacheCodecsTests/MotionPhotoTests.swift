import Foundation
import Testing
import ThumbcacheImaging
import ThumbcacheIndex
import ThumbcacheTestSupport
import ThumbcacheWorker

/// Moving photos. Motion Photos (a JPEG with its movie appended) made as the format's writers
/// make them: an XMP packet after the JPEG's start, an MP4 (by ffmpeg) after its end. Live
/// Photos: a still and a movie sharing Apple's content identifier. Through the real worker and
/// the real CLI.
@Suite(.serialized)
struct MotionPhotoTests {
    @Test func theMovieIsFoundFromTheTailAndCheckedAndIndexed() throws {
        let dir = TemporaryDirectory()
        let mp4 = try MotionPhotoFixture.movie(in: dir)
        let tree = dir.appending("tree")
        try FileManager.default.createDirectory(atPath: tree, withIntermediateDirectories: true)
        let motion = try dir.write("tree/PXL_motion.jpg", MotionPhotoFixture.jpeg(xmp: MotionPhotoFixture.motionPhotoXMP(videoLength: mp4.count, presentationUs: 1_500_000), trailer: mp4))
        let legacy = try dir.write("tree/MVIMG_legacy.jpg", MotionPhotoFixture.jpeg(xmp: MotionPhotoFixture.microVideoXMP(offset: mp4.count), trailer: mp4))
        // Its XMP promises the whole movie, but the file was cut: no movie is claimed.
        let cut = try dir.write("tree/cut.jpg", MotionPhotoFixture.jpeg(xmp: MotionPhotoFixture.motionPhotoXMP(videoLength: mp4.count, presentationUs: 0),
                                                          trailer: Array(mp4.prefix(mp4.count / 2))))
        let plain = try dir.write("tree/plain.jpg", MotionPhotoFixture.jpeg(xmp: "<x:xmpmeta/>", trailer: []))

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

    /// A HEIC and an AVIF Motion Photo: the XMP is an item of the HEIF, the movie an `mpvd` box
    /// after its boxes. The HEIC goes the direct HEIF path, the AVIF with alpha libheif's.
    @Test func heifMotionPhotosAreFoundThroughTheirXMPItem() throws {
        let dir = TemporaryDirectory()
        let mp4 = try MotionPhotoFixture.movie(in: dir)
        let xmp = MotionPhotoFixture.motionPhotoXMP(videoLength: mp4.count, presentationUs: 750_000)
        let heic = try MotionPhotoFixture.heif(dir, "PXL_motion.heic", picture: TestPictures.source(), xmp: xmp, movie: mp4)
        let avif = try MotionPhotoFixture.heif(dir, "PXL_alpha.avif", picture: TestPictures.source(alpha: true), avif: true, xmp: xmp, movie: mp4)
        let cut = try MotionPhotoFixture.heif(dir, "PXL_cut.heic", picture: TestPictures.source(), xmp: xmp, movie: Array(mp4.prefix(mp4.count / 2)))
        let pool = MediaFormatTests.pool
        for path in [heic, avif] {
            let found = try #require(try pool.info(ofFileAt: path, format: nil).media?.motionPhoto, "\(path)")
            let size = try #require(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
            #expect(found.videoOffset == size - mp4.count && found.videoLength == mp4.count && found.presentationSeconds == 0.75, "\(path)")
            #expect(abs((found.videoDurationSeconds ?? 0) - 2) < 0.05 && found.bytesRead < 256, "\(path): \(found)")
            // The still decodes as before: the box after the HEIF's is passed over.
            let image = try pool.thumbnail(ofFileAt: path, options: MediaFormatTests.box, format: nil).image
            #expect(image.width == MediaFormatTests.box.maxWidth, "\(path)")
        }
        #expect(try pool.info(ofFileAt: cut, format: nil).media?.motionPhoto == nil, "a movie cut short is not claimed")
    }

    /// A Samsung phone's JPEG without Google's XMP: the movie is the trailer's `MotionPhoto_Data`
    /// record, found from the file's tail alone; a trailer without one, or a record that does not
    /// hold an MP4, claims nothing.
    @Test func aSamsungTrailersMovieIsFoundFromTheTail() throws {
        let dir = TemporaryDirectory()
        let mp4 = try MotionPhotoFixture.movie(in: dir)
        let still = try ImageEncoder.jpeg(TestPictures.source())
        let samsung = try dir.write("20251124_101010.jpg", MotionPhotoFixture.samsung(still: still, movie: mp4))
        let found = try #require(try MediaFormatTests.pool.info(ofFileAt: samsung, format: nil).media?.motionPhoto)
        #expect(found.videoOffset == still.count + 8 + "MotionPhoto_Data".utf8.count && found.videoLength == mp4.count)
        #expect(abs((found.videoDurationSeconds ?? 0) - 2) < 0.05 && found.presentationSeconds == nil)
        #expect(found.bytesRead < 256, "read \(found.bytesRead) bytes of the file's tail")
        let fake = try dir.write("fake.jpg", MotionPhotoFixture.samsung(still: still, movie: Array(repeating: 7, count: 4000)))
        #expect(try MediaFormatTests.pool.info(ofFileAt: fake, format: nil).media?.motionPhoto == nil, "a record that holds no MP4")
        let cut = try dir.write("cut.jpg", Array(MotionPhotoFixture.samsung(still: still, movie: mp4).dropLast(3)))
        #expect(try MediaFormatTests.pool.info(ofFileAt: cut, format: nil).media?.motionPhoto == nil, "no footer, no movie")
    }

    @Test func aLivePhotosStillAndMovieShareTheirIdentifier() throws {
        let dir = TemporaryDirectory()
        let id = "4C6F7665-2D4C-4976-6550-686F746F7321"
        let tree = dir.appending("tree")
        try FileManager.default.createDirectory(atPath: tree, withIntermediateDirectories: true)
        let still = try dir.write("tree/IMG_0042.JPG", ImageEncoder.jpeg(TestPictures.source(), options: ImageEncoder.JPEGOptions(), exif: MotionPhotoFixture.exifWithAppleIdentifier(id)))
        // The fixtures are what exiftool reads as the pair's identifier: Apple's MakerNote tag
        // 0x0011 (12.57 calls it MediaGroupUUID) and QuickTime's Keys ContentIdentifier, which
        // ffmpeg writes as an mdta key (this exiftool cannot write it).
        let read = try FixtureTools.run("exiftool", ["-s3", "-Apple:MediaGroupUUID", "-Apple:ContentIdentifier", still])
        #expect(read.trimmingCharacters(in: .whitespacesAndNewlines) == id)
        let movie = dir.appending("tree/IMG_0042.MOV")
        try FixtureTools.run("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc=size=160x120:rate=10", "-t", "2",
                                        "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p",
                                        "-movflags", "use_metadata_tags", "-metadata", "com.apple.quicktime.content.identifier=\(id)", movie])
        #expect(try FixtureTools.run("exiftool", ["-s3", "-Keys:ContentIdentifier", movie]).trimmingCharacters(in: .whitespacesAndNewlines) == id)
        let other = try dir.write("tree/IMG_0043.JPG", ImageEncoder.jpeg(TestPictures.source(), options: ImageEncoder.JPEGOptions(),
                                                                       exif: MotionPhotoFixture.exifWithAppleIdentifier("another")))

        let pool = MediaFormatTests.pool
        #expect(try pool.info(ofFileAt: still, format: nil).exif?.contentIdentifier == id)
        #expect(try pool.info(ofFileAt: movie, format: nil).media?.contentIdentifier == id)
        let cache = dir.appending("cache")
        func warm() throws { try #require(try ChildProcess.run("thumbcache", ["warm", tree, "--cache", cache]).status == .exited(0)) }
        func search(_ query: String) throws -> Set<String> {
            Set(try ChildProcess.run("thumbcache", ["search", query, "--cache", cache]).stdout.filter { !$0.isEmpty })
        }
        try warm()
        // Both halves carry the identifier; a search shows the pair once, as its still.
        #expect(try search("kMDItemLivePhotoContentIdentifier == \"\(id)\"") == [still])
        #expect(try search("kMDItemContentTypeTree == \"public.movie\"").isEmpty, "the paired movie is hidden")
        let index = try MetadataIndex.open(directory: cache + "/index")
        let both = try index.search("kMDItemLivePhotoContentIdentifier == \"\(id)\"", options: SearchOptions(pairsLivePhotos: false))
        #expect(Set(both.results.compactMap(\.path)) == [still, movie])
        // The pair follows the still: moved, the movie stays hidden; gone, the movie is a result again.
        let moved = dir.appending("tree/album/IMG_0042.JPG")
        try FileManager.default.createDirectory(atPath: dir.appending("tree/album"), withIntermediateDirectories: true)
        try FileManager.default.moveItem(atPath: still, toPath: moved)
        try warm()
        #expect(try search("kMDItemLivePhotoContentIdentifier == \"\(id)\"") == [moved])
        try FileManager.default.removeItem(atPath: moved)
        try warm()
        #expect(try search("kMDItemLivePhotoContentIdentifier == \"\(id)\"") == [movie])
        #expect(try search("kMDItemLivePhotoContentIdentifier == \"another\"") == [other])
    }
}
