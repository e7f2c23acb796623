import FoundationEssentials
import ThumbcacheSync

/// What `$time…` means: in the calendar given, or else in local time by the C library
/// (Foundation's `TimeZone.current` is GMT in a program without ICU's data).
extension QueryParser {
    /// Seconds since 1970 for `$time.NAME(offset)`; nil for an unknown name.
    func time(_ name: String, offset: Int) -> Double? {
        if name == "now" { return now.timeIntervalSince1970 + Double(offset) }
        guard localTime else { return calendarTime(name, offset: offset) }
        let today = LocalTime.fields(now.timeIntervalSince1970)
        let (y, m, d) = (today.year, today.month, today.day)
        switch name {
        case "today": return LocalTime.seconds(year: y, month: m, day: d + offset)
        case "yesterday": return LocalTime.seconds(year: y, month: m, day: d + offset - 1)
        case "this_week": return LocalTime.seconds(year: y, month: m, day: d - (today.weekday + 6) % 7 + 7 * offset)
        case "this_month": return LocalTime.seconds(year: y, month: m + offset, day: 1)
        case "this_year": return LocalTime.seconds(year: y + offset, month: 1, day: 1)
        default: return nil
        }
    }

    /// ``time(_:offset:)`` in the calendar given.
    private func calendarTime(_ name: String, offset: Int) -> Double? {
        let startOfDay = calendar.startOfDay(for: now)
        func add(_ component: Calendar.Component, _ n: Int, to date: Date) -> Double? {
            calendar.date(byAdding: component, value: n, to: date)?.timeIntervalSince1970
        }
        switch name {
        case "today": return add(.day, offset, to: startOfDay)
        case "yesterday": return add(.day, offset - 1, to: startOfDay)
        case "this_week":
            guard let start = calendar.dateInterval(of: .weekOfYear, for: now)?.start else { return nil }
            return add(.weekOfYear, offset, to: start)
        case "this_month":
            guard let start = calendar.dateInterval(of: .month, for: now)?.start else { return nil }
            return add(.month, offset, to: start)
        case "this_year":
            guard let start = calendar.dateInterval(of: .year, for: now)?.start else { return nil }
            return add(.year, offset, to: start)
        default: return nil
        }
    }

    /// Seconds since 1970 for an ISO 8601 date (`2024-05-01`, local midnight), date and time
    /// (`2024-05-01T10:30[:00]`, local) or with a zone (`…Z`, `…+02:00`).
    func isoTime(_ text: String) -> Double? {
        var s = Substring(text.trimmingWhitespace(newlines: false))
        func int(_ digits: Int) -> Int? {
            let head = s.prefix(digits)
            guard head.count == digits, head.allSatisfy({ $0.isASCII && $0.isNumber }), let v = Int(head) else { return nil }
            s = s.dropFirst(digits)
            return v
        }
        func take(_ c: Character) -> Bool {
            guard s.first == c else { return false }
            s = s.dropFirst()
            return true
        }
        guard let y = int(4), take("-"), let m = int(2), take("-"), let d = int(2) else { return nil }
        var (h, mi, sec) = (0, 0, 0.0)
        var zone: Int? = nil
        if take("T") || take(" ") {
            guard let hh = int(2), take(":"), let mm = int(2) else { return nil }
            (h, mi) = (hh, mm)
            if take(":") {
                let digits = s.prefix { $0.isASCII && ($0.isNumber || $0 == ".") }
                guard let v = Double(digits), v >= 0, v < 61 else { return nil }
                sec = v
                s = s.dropFirst(digits.count)
            }
            if take("Z") {
                zone = 0
            } else if let sign = s.first, sign == "+" || sign == "-" {
                s = s.dropFirst()
                guard let zh = int(2) else { return nil }
                _ = take(":")
                let zm = int(2) ?? 0
                zone = (sign == "-" ? -1 : 1) * (zh * 3600 + zm * 60)
            }
        }
        guard s.isEmpty, (1...12).contains(m), (1...31).contains(d), h < 24, mi < 60 else { return nil }
        if let zone {
            let t = LocalTime.seconds(year: y, month: m, day: d, hour: h, minute: mi, second: sec, offset: zone)
            // A day the month does not have (2024-02-30) would have carried over into the next.
            return LocalTime.fields(t, offset: zone).day == d ? t : nil
        }
        if !localTime {
            let c = DateComponents(calendar: calendar, year: y, month: m, day: d, hour: h, minute: mi, second: Int(sec),
                                   nanosecond: Int((sec - sec.rounded(.down)) * 1e9))
            guard let date = calendar.date(from: c), calendar.component(.day, from: date) == d else { return nil }
            return date.timeIntervalSince1970
        }
        guard let t = LocalTime.seconds(year: y, month: m, day: d, hour: h, minute: mi, second: sec),
              LocalTime.fields(t).day == d else { return nil }
        return t
    }
}
