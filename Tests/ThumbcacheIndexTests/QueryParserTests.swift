import Foundation
import Testing
@testable import ThumbcacheIndex

/// The query language: what parses to what, and where errors point.
struct QueryParserTests {
    /// Fixed clock and zone: Wednesday 2026-11-18 15:30:00 UTC.
    static let now = Date(timeIntervalSince1970: 1_795_015_800)
    static var parser: QueryParser {
        var cal = Calendar(identifier: .gregorian)
        cal.timeZone = TimeZone(secondsFromGMT: 0)!
        cal.firstWeekday = 2
        return QueryParser(now: now, calendar: cal)
    }

    func parse(_ q: String) throws -> QueryExpression { try Self.parser.parse(q) }

    func errorPosition(_ q: String) -> (Int, String)? {
        do {
            _ = try Self.parser.parse(q)
            return nil
        } catch {
            return (error.position, error.message)
        }
    }

    @Test func comparisonsOfEveryOperator() throws {
        for (token, op) in [("==", ComparisonOperator.equal), ("!=", .notEqual), ("<", .less), (">", .greater),
                            ("<=", .lessOrEqual), (">=", .greaterOrEqual), ("=", .equal)] {
            #expect(try parse("kMDItemFSSize \(token) 42") == .comparison(attribute: "kMDItemFSSize", op: op, value: .number(42), position: 0))
        }
        #expect(try parse("kMDItemFSSize>=1.5e3") == .comparison(attribute: "kMDItemFSSize", op: .greaterOrEqual, value: .number(1500), position: 0))
        #expect(try parse("kMDItemAltitude < -12") == .comparison(attribute: "kMDItemAltitude", op: .less, value: .number(-12), position: 0))
    }

    @Test func stringsModifiersAndEscapes() throws {
        #expect(try parse(#"kMDItemFSName == "*holiday*"cdw"#)
                == .comparison(attribute: "kMDItemFSName", op: .equal, value: .string("*holiday*", [.caseInsensitive, .diacriticInsensitive, .wordBased]), position: 0))
        #expect(try parse(#"kMDItemTitle == 'it\'s'"#) == .comparison(attribute: "kMDItemTitle", op: .equal, value: .string("it's", []), position: 0))
        // \* stays escaped for the pattern, which then means a literal star.
        guard case .comparison(_, _, .string(let s, _), _) = try parse(#"kMDItemTitle == "a\*b""#) else { Issue.record("not a comparison"); return }
        #expect(s == #"a\*b"#)
        #expect(WildcardPattern(s).matches("a*b"))
        #expect(!WildcardPattern(s).matches("axxb"))
    }

    @Test func booleansPrecedenceAndParentheses() throws {
        let a = QueryExpression.comparison(attribute: "a", op: .equal, value: .number(1), position: 0)
        let e = try parse("a == 1 || b == 2 && c == 3")
        guard case .or(let parts) = e, parts.count == 2, case .and(let inner) = parts[1], inner.count == 2 else {
            Issue.record("&& must bind tighter than ||: \(e)"); return
        }
        #expect(parts[0] == a)
        guard case .and(let grouped) = try parse("(a == 1 || b == 2) && c == 3"), case .or = grouped[0] else {
            Issue.record("parentheses must group"); return
        }
        #expect(try parse("!(a == 1)") == .not(a.withPosition(2)))
        #expect(try parse("NOT a == 1") == .not(a.withPosition(4)))
        #expect(try parse("a != 1") == .comparison(attribute: "a", op: .notEqual, value: .number(1), position: 0))
    }

    @Test func plainWordsAndInRange() throws {
        #expect(try parse("holiday") == .text("holiday", position: 0))
        #expect(try parse("holiday beach") == .and([.text("holiday", position: 0), .text("beach", position: 8)]))
        #expect(try parse(#""new york""#) == .text("new york", position: 0))
        #expect(try parse("InRange(kMDItemFSSize, 10, 20)") == .inRange(attribute: "kMDItemFSSize", low: .number(10), high: .number(20), position: 8))
        #expect(try parse("holiday && kMDItemFSSize > 3") == .and([.text("holiday", position: 0),
                                                                   .comparison(attribute: "kMDItemFSSize", op: .greater, value: .number(3), position: 11)]))
    }

    @Test func timeValues() throws {
        func date(_ q: String) throws -> Double? {
            if case .comparison(_, _, .date(let d), _) = try parse("kMDItemContentModificationDate > \(q)") { return d }
            return nil
        }
        let now = Self.now.timeIntervalSince1970
        let today = 1_794_960_000.0  // 2026-11-18 00:00 UTC
        #expect(try date("$time.now") == now)
        #expect(try date("$time.now(-60)") == now - 60)
        #expect(try date("$time.today") == today)
        #expect(try date("$time.today(-7)") == today - 7 * 86400)
        #expect(try date("$time.yesterday") == today - 86400)
        #expect(try date("$time.this_week") == today - 2 * 86400)  // Monday 2026-11-16
        #expect(try date("$time.this_week(-1)") == today - 9 * 86400)
        #expect(try date("$time.this_month") == 1_793_491_200)  // 2026-11-01
        #expect(try date("$time.this_month(+1)") == 1_796_083_200)  // 2026-12-01
        #expect(try date("$time.this_year") == 1_767_225_600)  // 2026-01-01
        #expect(try date("$time.this_year(-1)") == 1_735_689_600)  // 2025-01-01
        #expect(try date("$time.iso(2024-05-01)") == 1_714_521_600)
        #expect(try date("$time.iso(2024-05-01T10:30:00Z)") == 1_714_559_400)
        #expect(try date("$time.iso(2024-05-01T12:30:00+02:00)") == 1_714_559_400)
    }

    @Test func errorsPointAtTheProblem() {
        let cases: [(String, Int, String)] = [
            ("kMDItemFSName == ", 17, "expected a value"),
            (#"kMDItemFSName == "abc"#, 17, "unterminated string"),
            ("(a == 1", 7, "expected ')'"),
            ("a == 1)", 6, "unbalanced ')'"),
            ("a == 1 &&", 9, "expected a comparison"),
            (#"kMDItemFSName == "x"q"#, 20, "unknown string modifier 'q'"),
            ("kMDItemFSName == holiday", 17, "quoted string"),
            ("kMDItemFSSize > $time.tomorrow", 16, "unknown time"),
            ("kMDItemFSSize > $time.iso(2024-13-01)", 16, "not an ISO 8601 date"),
            ("kMDItemFSSize > $now", 16, "unknown variable"),
            ("InRange(kMDItemFSSize, 1)", 24, "expected ','"),
            ("", 0, "empty query"),
            ("a == 1 | b == 2", 7, "unexpected '|'"),
        ]
        for (query, position, message) in cases {
            guard let (p, m) = errorPosition(query) else { Issue.record("\(query) parsed"); continue }
            #expect(p == position, "\(query): \(m)")
            #expect(m.contains(message), "\(query): \(m)")
        }
    }

    @Test func errorDescriptionDrawsACaret() {
        do {
            _ = try Self.parser.parse("kMDItemFSSize >")
            Issue.record("parsed")
        } catch {
            #expect(error.description.hasSuffix("  kMDItemFSSize >\n                 ^"))
        }
    }

    @Test func wildcardPatterns() {
        #expect(WildcardPattern("*holiday*").matches("my holiday 2024.jpg"))
        #expect(!WildcardPattern("*holiday*").matches("My Holiday.jpg"))
        #expect(WildcardPattern("*holiday*", ignoresCase: true).matches("My HOLIDAY.jpg"))
        #expect(WildcardPattern("IMG_????.JPG").matches("IMG_4821.JPG"))
        #expect(!WildcardPattern("IMG_????.JPG").matches("IMG_482.JPG"))
        #expect(WildcardPattern("café", ignoresDiacritics: true).matches("cafe"))
        #expect(!WildcardPattern("café").matches("cafe"))
        #expect(WildcardPattern("CAFE", ignoresCase: true, ignoresDiacritics: true).matches("Café"))
        #expect(WildcardPattern("beach", wordBased: true).matches("sunny beach day"))
        #expect(!WildcardPattern("beach", wordBased: true).matches("beaches"))
        #expect(WildcardPattern("bea*", wordBased: true).matches("sunny beaches"))
        #expect(WildcardPattern("a*b*c").matches("aXbYbZc"))
        #expect(!WildcardPattern("a*b*c").matches("aXbYbZ"))
        #expect(WildcardPattern("*").matches(""))
    }
}

extension QueryExpression {
    func withPosition(_ p: Int) -> QueryExpression {
        if case .comparison(let a, let op, let v, _) = self { return .comparison(attribute: a, op: op, value: v, position: p) }
        return self
    }
}
