import Foundation
import Testing
import ThumbcacheMediaCodecs
import ThumbcacheImaging
import ThumbcacheTestSupport
@testable import Thumbcache
@testable import ThumbcacheWorker

/// Videos, audio and PDFs through the real sandboxed worker, on fixtures made at test time by
/// Debian's ffmpeg (from a picture drawn here, so the reference is that picture) and by a small
/// PDF writer here (the reference is poppler's own `pdftoppm` of the same page).
struct MediaFormatTests {
    static var pool: WorkerPool { ImageFormatTests.pool }
    static let box = ImageFormatTests.box

    /// A still picture made into a video: `ffmpeg -loop 1 -i picture.png` with `codec` arguments.
    static func video(_ dir: TemporaryDirectory, _ name: String, from picture: RGBAImage = TestPictures.source(),
                      seconds: Int = 3, _ codec: [String], audio: Bool = false) throws -> String {
        let input = try dir.write(name + ".source.png", ImageEncoder.png(picture))
        let output = dir.appending(name)
        var arguments = ["-v", "error", "-y", "-loop", "1", "-framerate", "10", "-i", input]
        if audio { arguments += ["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=44100"] }
        arguments += ["-t", "\(seconds)", "-g", "10", "-pix_fmt", "yuv420p"] + codec
        if audio { arguments += ["-c:a", "aac", "-b:a", "64k", "-ac", "1", "-shortest"] }
        try FixtureTools.run("ffmpeg", arguments + [output])
        return output
    }

    /// The thumbnail of `path` shows `reference` (resized alike) at ≥ `minimum` dB.
    @discardableResult
    static func expectShows(_ path: String, _ reference: RGBAImage, minimum: Double = 30,
                            sourceLocation: SourceLocation = #_sourceLocation) throws -> ImageInfo {
        try ImageFormatTests.expectMatches(path, reference, minimum: minimum, sourceLocation: sourceLocation)
    }

    static let registry = ContentTypeRegistry()

    @Test(arguments: [
        ("h264.mp4", ["-c:v", "libx264", "-preset", "ultrafast"], "H.264", "public.mpeg-4"),
        ("hevc.mp4", ["-c:v", "libx265", "-preset", "ultrafast", "-tag:v", "hvc1", "-x265-params", "log-level=error"], "HEVC", "public.mpeg-4"),
        ("vp9.webm", ["-c:v", "libvpx-vp9", "-deadline", "realtime", "-cpu-used", "8", "-b:v", "1M"], "VP9", "org.webmproject.webm"),
        ("av1.mkv", ["-c:v", "libaom-av1", "-cpu-used", "8", "-row-mt", "1", "-b:v", "1M"], "AV1", "org.matroska.mkv"),
        ("mpeg4.avi", ["-c:v", "mpeg4", "-q:v", "2"], "MPEG-4 Part 2", "public.avi"),
    ])
    func videoCodecsShowTheirPicture(name: String, codec: [String], codecName: String, type: String) throws {
        let dir = TemporaryDirectory()
        let path = try Self.video(dir, name, codec)
        let info = try Self.expectShows(path, TestPictures.source())
        #expect(info.pixelWidth == 480 && info.pixelHeight == 320)
        #expect(info.media?.codecs?.first == codecName)
        #expect(abs((info.media?.durationSeconds ?? 0) - 3) < 0.5, "duration \(String(describing: info.media?.durationSeconds))")
        let detected = Self.registry.type(ofFileAt: path)
        #expect(detected.identifier == type)
        #expect(Self.registry.tree(of: detected).contains(.movie))
    }

    @Test func aPhonesPortraitVideoStaysPortrait() throws {
        let dir = TemporaryDirectory()
        let landscape = try Self.video(dir, "stored.mp4", ["-c:v", "libx264", "-preset", "ultrafast"])
        // What a phone writes: landscape frames and a display matrix that turns them a quarter.
        let rotated = dir.appending("portrait.mp4")
        try FixtureTools.run("ffmpeg", ["-v", "error", "-y", "-i", landscape, "-c", "copy", "-metadata:s:v:0", "rotate=90", rotated])
        // Which way is read back by another program (ExifTool: clockwise degrees), not taken from ffmpeg's option.
        let rotation = try FixtureTools.run("exiftool", ["-s3", "-Rotation", rotated]).trimmingCharacters(in: .whitespacesAndNewlines)
        let turn = try #require(["90": Orientation.right, "270": .left][rotation], "ExifTool reads rotation \(rotation)")
        let info = try Self.expectShows(rotated, turn.apply(to: TestPictures.source()))
        #expect(info.pixelWidth == 320 && info.pixelHeight == 480)
    }

    @Test func blackOpeningFramesArePassedOver() throws {
        let dir = TemporaryDirectory()
        // Four seconds of black, then the picture; one key frame a second.
        let picture = try dir.write("picture.png", ImageEncoder.png(TestPictures.source()))
        let path = dir.appending("fade-in.mp4")
        try FixtureTools.run("ffmpeg", [
            "-v", "error", "-y", "-f", "lavfi", "-i", "color=black:s=480x320:r=10:d=4", "-loop", "1", "-framerate", "10", "-t", "3", "-i", picture,
            "-filter_complex", "[1:v]format=yuv420p[p];[0:v][p]concat=n=2:v=1:a=0", "-g", "10", "-c:v", "libx264", "-preset", "ultrafast",
            "-pix_fmt", "yuv420p", path,
        ])
        try Self.expectShows(path, TestPictures.source())
        // A single key frame at the start (black): the frames after it are looked at in order.
        let sparse = dir.appending("one-key-frame.mp4")
        try FixtureTools.run("ffmpeg", [
            "-v", "error", "-y", "-f", "lavfi", "-i", "color=black:s=480x320:r=10:d=2", "-loop", "1", "-framerate", "10", "-t", "2", "-i", picture,
            "-filter_complex", "[1:v]format=yuv420p[p];[0:v][p]concat=n=2:v=1:a=0", "-g", "1000", "-c:v", "libx264", "-preset", "ultrafast",
            "-pix_fmt", "yuv420p", sparse,
        ])
        try Self.expectShows(sparse, TestPictures.source(), minimum: 28)
    }

    @Test func aVideosIndexAttributes() throws {
        let dir = TemporaryDirectory()
        let path = try Self.video(dir, "clip.mov", ["-c:v", "libx264", "-preset", "ultrafast", "-b:v", "800k"], audio: true)
        let media = try #require(try Self.pool.info(ofFileAt: path, format: nil).media)
        #expect(media.codecs == ["H.264", "AAC"])
        #expect(media.audioChannelCount == 1 && media.audioSampleRate == 44100)
        #expect((media.videoBitRate ?? 0) > 0 && (media.audioBitRate ?? 0) > 0)
        #expect(Self.registry.type(ofFileAt: path).identifier == "com.apple.quicktime-movie")
    }

    // MARK: Audio

    /// A tone with `picture` attached as its cover (ffmpeg writes ID3 APIC, FLAC PICTURE, MP4 covr).
    static func song(_ dir: TemporaryDirectory, _ name: String, cover: [UInt8]?, coverName: String = "cover.png", _ codec: [String]) throws -> String {
        let output = dir.appending(name)
        var arguments = ["-v", "error", "-y", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=44100:duration=2"]
        if let cover { arguments += ["-i", try dir.write(name + "." + coverName, cover)] }
        arguments += ["-map", "0:a"]
        if cover != nil { arguments += ["-map", "1:v", "-c:v", "copy", "-disposition:v", "attached_pic"] }
        arguments += codec + ["-metadata", "title=Morning Tune", "-metadata", "artist=Ana Artist", "-metadata", "album=First Light",
                              "-metadata", "genre=Ambient", "-metadata", "date=2021", "-metadata", "track=3/9", output]
        try FixtureTools.run("ffmpeg", arguments)
        return output
    }

    @Test(arguments: [
        ("song.mp3", ["-c:a", "libmp3lame", "-id3v2_version", "3"], "cover.jpg", "public.mp3"),
        ("song.flac", ["-c:a", "flac"], "cover.png", "org.xiph.flac"),
        ("song.m4a", ["-c:a", "aac"], "cover.jpg", "public.mpeg-4-audio"),
    ])
    func anAudioFilesCoverIsItsThumbnail(name: String, codec: [String], coverName: String, type: String) throws {
        let dir = TemporaryDirectory()
        let picture = TestPictures.source(width: 300, height: 300)
        let cover = coverName.hasSuffix(".png") ? try ImageEncoder.png(picture) : try ImageEncoder.jpeg(picture, quality: 95)
        let path = try Self.song(dir, name, cover: cover, coverName: coverName, codec)
        // The cover's own pixels (its JPEG decoded as it is) are the reference.
        let reference = coverName.hasSuffix(".png") ? picture : try ImageDecoder.jpeg(cover)
        let info = try Self.expectShows(path, reference, minimum: 40)
        let media = try #require(info.media)
        #expect(media.title == "Morning Tune" && media.authors == ["Ana Artist"] && media.album == "First Light")
        #expect(media.genre == "Ambient" && media.recordingYear == 2021 && media.trackNumber == 3)
        #expect(abs((media.durationSeconds ?? 0) - 2) < 0.2)
        #expect(media.audioSampleRate == 44100)
        let detected = Self.registry.type(ofFileAt: path)
        #expect(detected.identifier == type)
        #expect(Self.registry.tree(of: detected).contains(.audio))
    }

    @Test func anOpusFilesPictureBlockIsItsCover() throws {
        let dir = TemporaryDirectory()
        let picture = TestPictures.source(width: 200, height: 200)
        let png = try ImageEncoder.png(picture)
        // Vorbis comments carry the cover as a base64 FLAC picture block (METADATA_BLOCK_PICTURE).
        func be32(_ v: Int) -> [UInt8] { [UInt8(v >> 24 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
        let mime = Array("image/png".utf8)
        let block = be32(3) + be32(mime.count) + mime + be32(0) + be32(200) + be32(200) + be32(32) + be32(0) + be32(png.count) + png
        let path = try Self.song(dir, "song.opus", cover: nil, ["-c:a", "libopus", "-metadata", "METADATA_BLOCK_PICTURE=" + Data(block).base64EncodedString()])
        try Self.expectShows(path, picture, minimum: 40)
        #expect(Self.registry.type(ofFileAt: path).identifier == "org.xiph.opus")
    }

    @Test func audioWithoutACoverHasNoPictureButItsTags() throws {
        let dir = TemporaryDirectory()
        let path = try Self.song(dir, "plain.mp3", cover: nil, ["-c:a", "libmp3lame"])
        #expect {
            try Self.pool.thumbnail(ofFileAt: path, options: Self.box, format: nil)
        } throws: { error in
            guard let failure = error as? ImagingError, case .noPicture = failure.reason else { return false }
            return failure.path == path
        }
        let media = try #require(try Self.pool.info(ofFileAt: path, format: nil).media)
        #expect(media.title == "Morning Tune" && media.codecs == ["MP3"])
    }

    /// A video's pages past the first are its key frames a tenth of the duration apart: red for
    /// the first half, blue for the second; a recording has one page, its cover.
    @Test func aVideosLaterPagesAreKeyFramesThroughIt() throws {
        let dir = TemporaryDirectory()
        let video = dir.appending("halves.mp4")
        try FixtureTools.run("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "color=c=red:s=160x120:d=5:r=10", "-f", "lavfi",
                                        "-i", "color=c=blue:s=160x120:d=5:r=10", "-filter_complex", "[0][1]concat=n=2:v=1",
                                        "-g", "10", "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", video])
        func centre(_ page: Int) throws -> (red: UInt8, blue: UInt8) {
            var options = Self.box
            options.page = page
            let image = try Self.pool.thumbnail(ofFileAt: video, options: options, format: nil).image
            let i = (image.height / 2 * image.width + image.width / 2) * 4
            return (image.pixels[i], image.pixels[i + 2])
        }
        for page in [1, 2, 3] { #expect(try centre(page).red > 200 && centre(page).blue < 60, "page \(page + 1) is in the red half") }
        for page in [6, 8, 9] { #expect(try centre(page).blue > 200 && centre(page).red < 60, "page \(page + 1) is in the blue half") }
        var past = Self.box
        past.page = 10
        #expect(throws: ImagingError(path: video, reason: .noSuchPage(page: 11, pages: 10))) {
            try Self.pool.thumbnail(ofFileAt: video, options: past, format: nil)
        }
        let song = try Self.song(dir, "song.mp3", cover: ImageEncoder.png(TestPictures.source(width: 64, height: 64)), ["-c:a", "libmp3lame"])
        var second = Self.box
        second.page = 1
        #expect(throws: ImagingError(path: song, reason: .noSuchPage(page: 2, pages: 1))) {
            try Self.pool.thumbnail(ofFileAt: song, options: second, format: nil)
        }
    }

    // MARK: PDF

    /// A PDF written here (``PDFFixture/document(pages:width:height:cropBox:title:author:text:pageTexts:)``).
    static func pdf(pages: Int = 1, width: Int = 612, height: Int = 792, cropBox: [Int]? = nil, title: String = "Quarterly report",
                    author: String = "Ana Author", text: String = "Hello thumbcache", pageTexts: [String]? = nil) -> [UInt8] {
        PDFFixture.document(pages: pages, width: width, height: height, cropBox: cropBox, title: title, author: author, text: text, pageTexts: pageTexts)
    }

    /// poppler's `tool` (pdftoppm: Splash; pdftocairo: cairo) drawing page `page`'s crop box at
    /// `width × height` pixels: a reference.
    static func render(_ tool: String, _ dir: TemporaryDirectory, _ path: String, width: Int, height: Int, page: Int = 1) throws -> RGBAImage {
        let base = dir.appending("reference-\(UUID().uuidString)")
        try FixtureTools.run(tool, ["-f", "\(page)", "-l", "\(page)", "-cropbox", "-scale-to-x", "\(width)", "-scale-to-y", "\(height)",
                                    "-singlefile", "-png", path, base])
        return try ImageDecoder.png(Array(try Data(contentsOf: URL(fileURLWithPath: base + ".png"))))
    }

    @Test(arguments: [(612, 792, nil), (842, 595, nil), (612, 792, [100, 100, 400, 500])] as [(Int, Int, [Int]?)])
    func aPDFsFirstPageMatchesPopplersOwnRender(width: Int, height: Int, cropBox: [Int]?) throws {
        let dir = TemporaryDirectory()
        let path = try dir.write("page.pdf", Self.pdf(pages: 3, width: width, height: height, cropBox: cropBox))
        let made = try Self.pool.thumbnail(ofFileAt: path, options: Self.box, format: nil)
        // The crop box's aspect ratio.
        let (cw, ch) = cropBox.map { ($0[2] - $0[0], $0[3] - $0[1]) } ?? (width, height)
        let expected = Thumbnailer.resize(RGBAImage(width: cw, height: ch, pixels: [UInt8](repeating: 0, count: cw * ch * 4), hasAlpha: false),
                                          options: Self.box)
        #expect(made.image.width == expected.width && made.image.height == expected.height)
        // pdftoppm draws as we do (Splash, poppler's C++ binding): the same page at the same size.
        // pdftocairo (cairo, as evince draws) places small glyphs and pixel edges its own way:
        // 27.5 dB on the landscape page's 7-pixel heading, 36–44 on the others.
        for (tool, minimum) in [("pdftoppm", 45.0), ("pdftocairo", 25.0)] {
            let reference = try Self.render(tool, dir, path, width: made.image.width, height: made.image.height)
            try #require(reference.width == made.image.width && reference.height == made.image.height)
            let db = TestPictures.premultipliedPSNR(made.image, reference)
            #expect(db >= minimum, "PSNR \(db) dB against \(tool)")
        }
        let media = try #require(made.info.media)
        #expect(media.pageCount == 3 && media.title == "Quarterly report" && media.authors == ["Ana Author"])
        #expect(media.creator == "thumbcache tests" && media.pageWidth == Double(cw) && media.pageHeight == Double(ch))
        #expect(Self.registry.type(ofFileAt: path) == .pdf)
    }

    /// Any page of a document, not only the first (the previews' "page N"): each matches
    /// poppler's own drawing of that page; a page the file does not have is an error saying how
    /// many it has, and a file without pages has only the first.
    @Test func aPDFsPageNMatchesPopplersRenderOfThatPage() throws {
        let dir = TemporaryDirectory()
        let path = try dir.write("pages.pdf", Self.pdf(pageTexts: ["One", "Second page", "Third and last"]))
        var images: [RGBAImage] = []
        for page in 1...3 {
            var options = Self.box
            options.page = page - 1
            let made = try Self.pool.thumbnail(ofFileAt: path, options: options, format: nil).image
            let reference = try Self.render("pdftoppm", dir, path, width: made.width, height: made.height, page: page)
            let db = TestPictures.premultipliedPSNR(made, reference)
            #expect(db >= 45, "page \(page): PSNR \(db) dB against pdftoppm")
            images.append(made)
        }
        #expect(images[0].pixels != images[1].pixels && images[1].pixels != images[2].pixels, "the pages differ")
        // `thumbnail --page` counts from 1, as pdftoppm's -f does.
        let out = dir.appending("page-3.png")
        let child = try ChildProcess(program: "thumbcache", arguments: ["thumbnail", "--page", "3", "--size", "\(Self.box.maxWidth)", path, "-o", out])
        let (end, stderr) = child.wait()
        try #require(end == .exited(0), "\(stderr)")
        #expect(try ImageDecoder.png(Array(Data(contentsOf: URL(fileURLWithPath: out)))).pixels == images[2].pixels)
        let past = try ChildProcess(program: "thumbcache", arguments: ["thumbnail", "--page", "9", path, "-o", out]).wait()
        #expect(past.0 == .exited(1) && past.1.contains("no page 9: the file has 3 pages"), "\(past.1)")
        var beyond = Self.box
        beyond.page = 3
        #expect(throws: ImagingError(path: path, reason: .noSuchPage(page: 4, pages: 3))) {
            try Self.pool.thumbnail(ofFileAt: path, options: beyond, format: nil)
        }
        let png = try dir.write("one.png", ImageEncoder.png(testPhoto(width: 40, height: 30)))
        var second = Self.box
        second.page = 1
        #expect(throws: ImagingError(path: png, reason: .noSuchPage(page: 2, pages: 1))) {
            try Self.pool.thumbnail(ofFileAt: png, options: second, format: nil)
        }
    }

    @Test func standardFontsAreDrawnInsideTheSandbox() throws {
        // Helvetica is not embedded: the worker reads a system font through its Landlock rule.
        let dir = TemporaryDirectory()
        let withText = try dir.write("text.pdf", Self.pdf(text: "WWWWWWWWWW"))
        let without = try dir.write("blank.pdf", Self.pdf(text: ""))
        let a = try Self.pool.thumbnail(ofFileAt: withText, options: Self.box, format: nil).image
        let b = try Self.pool.thumbnail(ofFileAt: without, options: Self.box, format: nil).image
        let differing = zip(a.pixels, b.pixels).filter { abs(Int($0) - Int($1)) > 64 }.count
        #expect(differing > 200, "the text drew \(differing) differing samples")
    }

    // MARK: Hostile files

    /// A per-file error naming the file, or a thumbnail: never a crash or a hang of the worker.
    static func expectErrorOrThumbnail(_ path: String, sourceLocation: SourceLocation = #_sourceLocation) {
        do {
            _ = try pool.thumbnail(ofFileAt: path, options: box, format: nil)
        } catch let error as ImagingError {
            #expect(error.path == path, sourceLocation: sourceLocation)
        } catch {
            Issue.record("\(path): \(error)", sourceLocation: sourceLocation)
        }
    }

    @Test func truncatedVideosAndPDFsFailCleanly() throws {
        let dir = TemporaryDirectory()
        let mp4 = try Self.video(dir, "whole.mp4", ["-c:v", "libx264", "-preset", "ultrafast"], audio: true)
        let webm = try Self.video(dir, "whole.webm", ["-c:v", "libvpx-vp9", "-deadline", "realtime", "-cpu-used", "8"])
        let inputs = [("cut.mp4", try Array(Data(contentsOf: URL(fileURLWithPath: mp4)))),
                      ("cut.webm", try Array(Data(contentsOf: URL(fileURLWithPath: webm)))), ("cut.pdf", Self.pdf(pages: 5))]
        for (name, bytes) in inputs {
            for fraction in [0.02, 0.3, 0.6, 0.95] {
                let path = try dir.write("\(Int(fraction * 100))-\(name)", Array(bytes.prefix(Int(Double(bytes.count) * fraction))))
                Self.expectErrorOrThumbnail(path)
            }
        }
        // Bytes that claim to be a movie and are not.
        Self.expectErrorOrThumbnail(try dir.write("noise.mp4", Array("\0\0\0\u{18}ftypisom".utf8) + (0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 7919) }))
    }

    @Test func aHundredThousandPagesAndATwoHundredInchPageAreCheap() throws {
        let dir = TemporaryDirectory()
        // Only the first page is loaded: the page count comes from the page tree.
        let long = try dir.write("long.pdf", Self.pdf(pages: 100_000))
        let made = try Self.pool.thumbnail(ofFileAt: long, options: Self.box, format: nil)
        #expect(made.info.media?.pageCount == 100_000)
        // 200 inches square (14 400 points): drawn at the box's size, not at the page's.
        let huge = try dir.write("huge.pdf", Self.pdf(width: 14_400, height: 14_400))
        let big = try Self.pool.thumbnail(ofFileAt: huge, options: Self.box, format: nil)
        #expect(big.image.width == 160 && big.image.height == 160)
        #expect(big.info.media?.pageWidth == 14_400)
    }
}
