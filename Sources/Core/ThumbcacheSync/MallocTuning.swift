#if canImport(Glibc)
import Glibc
#endif

/// Decoders allocate and free buffers of a few hundred kilobytes to a few megabytes per image.
/// By default glibc's threshold for serving those with mmap starts at 128 KB, and freed mappings
/// are unmapped, so images page-fault their buffers in again and again (about 12 % of a JPEG warm).
/// Keep buffers up to 8 MB in the heap and reuse them: the CLI and every decoder worker call this.
/// (`mallopt` is declared in malloc.h, which Swift's Glibc module does not export; it is looked
/// up by name, with glibc's values of the two options.)
package func keepDecoderBuffersInHeap() {
    #if canImport(Glibc)
    typealias Mallopt = @convention(c) (Int32, Int32) -> Int32
    guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "mallopt") else { return }
    let mallopt = unsafeBitCast(symbol, to: Mallopt.self)
    let trimThreshold: Int32 = -1, mmapThreshold: Int32 = -3  // M_TRIM_THRESHOLD, M_MMAP_THRESHOLD
    // 8 MB / 16 MB gave the lowest peak RSS and the fastest warm (Docs/PERFORMANCE.md); larger
    // values keep more freed memory per thread arena without saving more page faults.
    _ = mallopt(mmapThreshold, 8 << 20)
    _ = mallopt(trimThreshold, 16 << 20)
    #endif
}

/// At most `count` malloc arenas: each new thread's arena reserves 64 MB of address space, which
/// a worker's address-space limit would count (its decoders' threads need no arenas of their own).
package func limitMallocArenas(_ count: Int32) {
    #if canImport(Glibc)
    typealias Mallopt = @convention(c) (Int32, Int32) -> Int32
    guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "mallopt") else { return }
    _ = unsafeBitCast(symbol, to: Mallopt.self)(-8, count)  // M_ARENA_MAX
    #endif
}

/// For the services that run for weeks (`serve`, `daemon`, `watch`), whose decoding happens in
/// workers: two arenas, and freed memory above 2 MB at the top of one handed back. With glibc's
/// default arenas (eight a core) and the decoders' 16 MB trim threshold, each of their many
/// threads kept what it had freed: `serve`'s RssAnon grew to 66 MB in 100 s of requests for new
/// files while its heap never held more than 20 MB (heaptrack); with this it stays at 18 MB.
package func keepServiceMemoryFlat() {
    #if canImport(Glibc)
    typealias Mallopt = @convention(c) (Int32, Int32) -> Int32
    guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "mallopt") else { return }
    let mallopt = unsafeBitCast(symbol, to: Mallopt.self)
    _ = mallopt(-8, 2)  // M_ARENA_MAX
    _ = mallopt(-1, 2 << 20)  // M_TRIM_THRESHOLD
    #endif
}
