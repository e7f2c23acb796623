import ThumbcacheIndex

/// A deterministic set of file-like items for index benchmarks: a home directory of photos,
/// documents, music and downloads, with the attribute mix `warm` produces. Item `i` is the same
/// on every run and machine; Tools/compare-index loads the same items into SQLite.
package enum IndexCorpus {
    package static let million = 1_000_000

    /// SplitMix64, seeded per item so any item can be made alone.
    struct Random {
        var state: UInt64
        init(_ seed: UInt64) { state = seed &* 0x9E37_79B9_7F4A_7C15 ^ 0xD1B5_4A32_D192_ED03 }
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        mutating func int(_ n: Int) -> Int { Int(next() % UInt64(n)) }
        mutating func unit() -> Double { Double(next() >> 11) / Double(1 << 53) }
        /// Zipf-like: small indices far more often.
        mutating func skewed(_ n: Int) -> Int { min(n - 1, Int(Double(n) * unit() * unit())) }
    }

    static let words = [
        "holiday", "beach", "family", "party", "birthday", "wedding", "garden", "mountain", "city", "river", "summer", "winter",
        "report", "invoice", "budget", "notes", "draft", "final", "meeting", "project", "plan", "design", "sketch", "review",
        "letter", "contract", "receipt", "scan", "photo", "picture", "trip", "visit", "concert", "school", "work", "home",
        "dinner", "lunch", "market", "museum", "park", "lake", "forest", "snow", "sunset", "sunrise", "portrait", "friends",
    ] + (0..<250).map { "w\($0)x" }
    static let models: [(make: String, model: String)] = [
        ("Canon", "Canon EOS 5D Mark III"), ("NIKON CORPORATION", "NIKON D750"), ("Apple", "iPhone 12"), ("samsung", "SM-G991B"),
        ("SONY", "ILCE-7M3"), ("FUJIFILM", "X-T3"), ("Google", "Pixel 7"), ("Canon", "Canon EOS 80D"), ("Apple", "iPhone 8"),
        ("OLYMPUS", "E-M10 Mark III"), ("Panasonic", "DMC-GX80"), ("NIKON CORPORATION", "NIKON D3500"), ("Xiaomi", "Redmi Note 8"),
        ("Canon", "Canon PowerShot G7 X"), ("SONY", "DSC-RX100M5"), ("Apple", "iPhone 14 Pro"), ("HUAWEI", "P30"), ("Ricoh", "GR III"),
        ("LEICA", "Q2"), ("GoPro", "HERO9 Black"),
    ]
    static let tops = ["Pictures", "Documents", "Music", "Videos", "Downloads", "Projects"]
    static let image = ["public.image", "public.data", "public.content", "public.item"]
    static let kinds: [(ext: String, type: String, tree: [String])] = [
        ("jpg", "public.jpeg", ["public.jpeg"] + image), ("png", "public.png", ["public.png"] + image),
        ("pdf", "com.adobe.pdf", ["com.adobe.pdf", "public.data", "public.content", "public.item"]),
        ("txt", "public.plain-text", ["public.plain-text", "public.text", "public.data", "public.content", "public.item"]),
        ("mp3", "public.mp3", ["public.mp3", "public.audio", "public.data", "public.content", "public.item"]),
        ("mp4", "public.mpeg-4", ["public.mpeg-4", "public.movie", "public.data", "public.content", "public.item"]),
        ("zip", "public.zip-archive", ["public.zip-archive", "public.archive", "public.data", "public.item"]),
    ]
    static let tags = ["red", "blue", "green", "work", "family", "tax", "todo", "favorite", "archive", "shared"]
    /// 2014-01-01 … 2026-11-01 (UTC), seconds.
    static let firstDate = 1_388_534_400.0, lastDate = 1_793_491_200.0

    /// One item's fields, as both thumbcache and the SQLite loader see them.
    package struct Record: Sendable {
        package var path: String
        package var name: String
        package var size: Int
        package var type: String
        package var tree: [String]
        package var modified: Double
        package var created: Double
        package var width: Int?
        package var height: Int?
        package var make: String?
        package var model: String?
        package var iso: Int?
        package var tags: [String]
    }

    package static func record(_ i: Int) -> Record {
        var r = Random(UInt64(i) &+ 1)
        let top = r.skewed(tops.count)
        let kind: Int
        switch top {
        case 0: kind = r.int(10) < 8 ? 0 : 1
        case 2: kind = 4
        case 3: kind = 5
        default: kind = [2, 3, 1, 0, 6, 2][r.int(6)]
        }
        let year = 2014 + r.int(13)
        let folder = "/home/user/\(tops[top])/\(year)/" + words[r.skewed(words.count)] + "-\(r.int(40))"
        let name: String
        if kind == 0 && r.int(2) == 0 {
            name = ["IMG_", "DSC", "PXL_"][r.int(3)] + String(10000 + r.int(90000)) + (r.int(3) == 0 ? ".JPG" : ".jpg")
        } else {
            var w1 = words[r.int(words.count)]
            if r.int(4) == 0 { w1 = w1.prefix(1).uppercased() + w1.dropFirst() }
            name = w1 + ["-", " ", "_"][r.int(3)] + words[r.int(words.count)] + " \(r.int(1000))." + kinds[kind].ext
        }
        // Sizes from 1 kB to 4 GB, log-uniform.
        let size = Int(1000 * pow2(r.unit() * 22))
        let modified = (firstDate + r.unit() * (lastDate - firstDate)).rounded()
        let created = (modified - r.unit() * 86_400 * 400).rounded()
        var rec = Record(path: folder + "/" + name, name: name, size: size, type: kinds[kind].type, tree: kinds[kind].tree,
                         modified: modified, created: created, tags: [])
        if kind <= 1 {
            let sizes = [(640, 480), (1920, 1080), (3024, 4032), (4000, 3000), (6000, 4000), (4032, 3024), (1280, 720), (5472, 3648)]
            let (w, h) = sizes[r.int(sizes.count)]
            rec.width = w
            rec.height = h
            if kind == 0 {
                let m = models[r.skewed(models.count)]
                rec.make = m.make
                rec.model = m.model
                rec.iso = [100, 200, 400, 800, 1600, 3200, 6400][r.skewed(7)]
            }
        }
        if r.int(20) == 0 { rec.tags = [tags[r.int(tags.count)]] + (r.int(3) == 0 ? [tags[r.int(tags.count)]] : []) }
        return rec
    }

    static func pow2(_ x: Double) -> Double {
        var result = 1.0
        var e = x
        while e >= 1 { result *= 2; e -= 1 }
        return result * (1 + e * (0.6931471805599453 + e * (0.2402265069591007 + e * 0.0555041086648216)))  // 2^e, e in [0, 1)
    }

    /// Item `i` as `warm` would index it.
    package static func item(_ i: Int) -> FileItem {
        let rec = record(i)
        var a: [String: AttributeValue] = [
            MDItem.fsName: .string(rec.name), MDItem.fsSize: .number(Double(rec.size)), MDItem.contentType: .string(rec.type),
            MDItem.contentTypeTree: .strings(rec.tree), MDItem.contentModificationDate: .date(rec.modified),
            MDItem.contentCreationDate: .date(rec.created),
        ]
        if let w = rec.width, let h = rec.height {
            a[MDItem.pixelWidth] = .number(Double(w))
            a[MDItem.pixelHeight] = .number(Double(h))
        }
        if let make = rec.make, let model = rec.model {
            a[MDItem.acquisitionMake] = .string(make)
            a[MDItem.acquisitionModel] = .string(model)
        }
        if let iso = rec.iso { a[MDItem.isoSpeed] = .number(Double(iso)) }
        if !rec.tags.isEmpty { a[MDItem.userTags] = .strings(rec.tags) }
        var hash = [UInt8](repeating: 0, count: 16)
        var seed = Random(UInt64(i) ^ 0xABCDEF)
        for k in 0..<16 { hash[k] = UInt8(truncatingIfNeeded: seed.next()) }
        let state = IndexedFileState(size: UInt64(rec.size), modificationTime: Int64(rec.modified) * 1_000_000_000,
                                     changeTime: Int64(rec.modified) * 1_000_000_000, inode: UInt64(i + 1), device: 1)
        return FileItem(path: rec.path, state: state, contentHash: hash, attributes: a)
    }

    /// The query classes of the issue, each as thumbcache's query and SQLite's SQL.
    package static let queries: [(name: String, query: String, sql: String)] = [
        ("equality", #"kMDItemAcquisitionModel == "ILCE-7M3""#,
         "SELECT rowid FROM items WHERE model = 'ILCE-7M3'"),
        ("range 1%", "InRange(kMDItemFSSize, 1000000, 1170000)",
         "SELECT rowid FROM items WHERE size BETWEEN 1000000 AND 1170000"),
        ("name *holiday*", #"kMDItemFSName == "*holiday*"c"#,
         "SELECT rowid FROM names WHERE name LIKE '%holiday%'"),
        ("3-clause and", #"kMDItemContentTypeTree == "public.image" && kMDItemPixelWidth >= 5000 && kMDItemContentModificationDate >= $time.iso(2024-01-01T00:00:00Z)"#,
         "SELECT i.rowid FROM items i JOIN tree t ON t.item = i.rowid WHERE t.type = 'public.image' AND i.width >= 5000 AND i.modified >= 1704067200"),
    ]

    /// Item `i` as one tab-separated line for the SQLite loader (Tools/compare-index).
    package static func tsvLine(_ i: Int) -> String {
        let r = record(i)
        let fields: [String] = [
            String(i + 1), r.path, r.name, String(r.size), r.type, r.tree.joined(separator: ","), String(Int(r.modified)), String(Int(r.created)),
            r.width.map(String.init) ?? "", r.height.map(String.init) ?? "", r.make ?? "", r.model ?? "", r.iso.map(String.init) ?? "",
            r.tags.joined(separator: ","),
        ]
        return fields.joined(separator: "\t")
    }
}
