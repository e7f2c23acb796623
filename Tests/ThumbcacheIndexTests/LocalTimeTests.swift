import Foundation
import Testing
import ThumbcacheIndex
import ThumbcacheTestSupport

/// `$time…` in local time comes from the C library's zone ($TZ, /etc/localtime), not from
/// Foundation's `TimeZone.current`, which needs ICU's data; each must mean what Foundation's
/// calendar in the same zone says, on both sides of a clock change.
struct LocalTimeTests {
    static let expressions = ["$time.today", "$time.today(-1)", "$time.yesterday", "$time.this_week", "$time.this_week(-1)",
                              "$time.this_month", "$time.this_month(+1)", "$time.this_month(-13)", "$time.this_year", "$time.this_year(-1)",
                              "$time.iso(2024-03-31)", "$time.iso(2024-03-31T02:30)", "$time.iso(2024-10-27T02:30:15.5)",
                              "$time.iso(2024-11-03T01:30)", "$time.iso(2023-02-29)", "$time.iso(2024-05-01T10:30:00Z)"]

    /// Sunday and Monday mornings, the nights of clock changes, a month's and a year's end.
    static let instants: [Double] = [1_711_846_800, 1_711_933_200, 1_730_001_600, 1_730_617_200, 1_730_620_800,
                                     1_735_689_599, 1_735_689_600, 1_740_787_200, 1_795_015_800]

    @Test(arguments: ["America/New_York", "Europe/Berlin", "Australia/Lord_Howe", "Asia/Kolkata", "UTC"])
    func timesMeanWhatFoundationsCalendarSays(zone: String) throws {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = try #require(TimeZone(identifier: zone))
        calendar.firstWeekday = 2
        for now in Self.instants {
            let child = try ChildProcess(program: "thumbcache-probe", arguments: ["times", String(now)] + Self.expressions,
                                         environment: ["TZ": zone])
            let (end, stderr) = child.wait()
            #expect(end == .exited(0), "\(stderr)")
            let expected = Self.expressions.map { e -> String in
                let parsed = try? QueryParser(now: Date(timeIntervalSince1970: now), calendar: calendar).parse("a > " + e)
                guard case .comparison(_, _, .date(let t), _)? = parsed else { return "nil" }
                return String(t)
            }
            #expect(child.output == expected, "\(zone) at \(now): \(Array(zip(Self.expressions, zip(child.output, expected))).filter { $0.1.0 != $0.1.1 })")
        }
    }
}
