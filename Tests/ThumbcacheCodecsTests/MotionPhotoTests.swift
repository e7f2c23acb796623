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
}
