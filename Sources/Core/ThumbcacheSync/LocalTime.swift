#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Local wall-clock time by the C library ($TZ, else /etc/localtime). Foundation's
/// `TimeZone.current` needs FoundationInternationalization and ICU's data for any zone but GMT,
/// which the programs do not link (Docs/PERFORMANCE.md).
package enum LocalTime {
    /// A moment's local date: `weekday` 0 is Sunday.
    package struct Fields: Equatable, Sendable {
        package var year, month, day, hour, minute, second, weekday: Int
    }

    /// The local date and time of `seconds` since 1970.
    package static func fields(_ seconds: Double) -> Fields {
        var t = time_t(seconds.rounded(.down))
        var parts = tm()
        localtime_r(&t, &parts)
        return Fields(parts)
    }

    /// How many seconds local time is east of UTC at `seconds` since 1970.
    package static func offset(at seconds: Double) -> Int {
        var t = time_t(seconds.rounded(.down))
        var parts = tm()
        localtime_r(&t, &parts)
        return Int(parts.tm_gmtoff)
    }

    /// The date and time `seconds` since 1970 is at `offset` seconds east of UTC.
    package static func fields(_ seconds: Double, offset: Int) -> Fields {
        var t = time_t(seconds.rounded(.down)) + time_t(offset)
        var parts = tm()
        gmtime_r(&t, &parts)
        return Fields(parts)
    }

    /// Seconds since 1970 of a local date and time; fields out of their range carry over (day 0
    /// is the month before's last), as `mktime` does. A time a clock change skipped moves
    /// forward; one it repeated is its first occurrence, as Foundation's calendar chooses.
    package static func seconds(year: Int, month: Int, day: Int, hour: Int = 0, minute: Int = 0, second: Double = 0) -> Double? {
        let whole = Int(second.rounded(.down))
        // The wall time asked for, its fields carried over (UTC arithmetic has no clock changes).
        var asked = tm(year: year, month: month, day: day, hour: hour, minute: minute, second: whole)
        var flat = timegm(&asked)
        var wall = tm()
        gmtime_r(&flat, &wall)
        var matching: [time_t] = []
        var moved: time_t?
        for dst: Int32 in [-1, 0, 1] {
            var parts = tm(year: year, month: month, day: day, hour: hour, minute: minute, second: whole)
            parts.tm_isdst = dst
            errno = 0
            var t = mktime(&parts)
            if t == -1 && errno != 0 { continue }
            if dst == -1 { moved = t }
            var back = tm()
            localtime_r(&t, &back)
            if back.tm_year == wall.tm_year && back.tm_mon == wall.tm_mon && back.tm_mday == wall.tm_mday
                && back.tm_hour == wall.tm_hour && back.tm_min == wall.tm_min && back.tm_sec == wall.tm_sec {
                matching.append(t)
            }
        }
        // Matching none: a time the clock skipped, which mktime moved forward.
        let found = matching.min() ?? moved
        guard let found else { return nil }
        return Double(found) + (second - second.rounded(.down))
    }

    /// Seconds since 1970 of a date and time at `offset` seconds east of UTC.
    package static func seconds(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Double, offset: Int) -> Double {
        var parts = tm(year: year, month: month, day: day, hour: hour, minute: minute, second: Int(second.rounded(.down)))
        return Double(timegm(&parts) - time_t(offset)) + (second - second.rounded(.down))
    }

    /// "HH:MM:SS", local.
    package static func clock(_ seconds: Double) -> String {
        let f = fields(seconds)
        return [f.hour, f.minute, f.second].map { zeroPadded($0, width: 2) }.joined(separator: ":")
    }
}

extension LocalTime.Fields {
    fileprivate init(_ parts: tm) {
        self.init(year: Int(parts.tm_year) + 1900, month: Int(parts.tm_mon) + 1, day: Int(parts.tm_mday), hour: Int(parts.tm_hour),
                  minute: Int(parts.tm_min), second: Int(parts.tm_sec), weekday: Int(parts.tm_wday))
    }
}

extension tm {
    fileprivate init(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int) {
        self.init()
        tm_year = Int32(truncatingIfNeeded: year - 1900)
        tm_mon = Int32(truncatingIfNeeded: month - 1)
        tm_mday = Int32(truncatingIfNeeded: day)
        tm_hour = Int32(truncatingIfNeeded: hour)
        tm_min = Int32(truncatingIfNeeded: minute)
        tm_sec = Int32(truncatingIfNeeded: second)
    }
}
