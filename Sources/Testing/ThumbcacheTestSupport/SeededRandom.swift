import Foundation

/// A deterministic random generator (SplitMix64) for randomized tests. ``forTest(_:)`` takes its
/// seed from `THUMBCACHE_TEST_SEED` when set, else a fresh one, and prints it, so any failing run
/// can be repeated exactly.
package struct SeededRandom: RandomNumberGenerator, Sendable {
    package let seed: UInt64
    private var state: UInt64

    package init(seed: UInt64) {
        self.seed = seed
        state = seed
    }

    /// A generator for the test `name`, its seed printed with how to repeat it.
    package static func forTest(_ name: String = #function) -> SeededRandom {
        let seed = ProcessInfo.processInfo.environment["THUMBCACHE_TEST_SEED"].flatMap { UInt64($0) }
            ?? UInt64.random(in: 0...UInt64.max)
        print("\(name): seed \(seed) (THUMBCACHE_TEST_SEED=\(seed) repeats it)")
        return SeededRandom(seed: seed)
    }

    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A number in `0..<n`.
    package mutating func int(_ n: Int) -> Int { Int(next() % UInt64(n)) }
}
