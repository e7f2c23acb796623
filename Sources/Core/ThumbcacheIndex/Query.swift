import FoundationEssentials
import ThumbcacheSync

/// A parsed query (Docs/QUERY.md).
public indirect enum QueryExpression: Sendable, Hashable {
    case and([QueryExpression])
    case or([QueryExpression])
    case not(QueryExpression)
    /// `attribute op value`; `position` is where the attribute name starts (for errors).
    case comparison(attribute: String, op: ComparisonOperator, value: QueryValue, position: Int)
    /// `InRange(attribute, low, high)`: low ≤ value ≤ high.
    case inRange(attribute: String, low: QueryValue, high: QueryValue, position: Int)
    /// A word with no operator: matches word prefixes in the text attributes (name, title,
    /// keywords, description, tags, comment), ignoring case and diacritics, like `mdfind word`.
    case text(String, position: Int)
}

public enum ComparisonOperator: String, Sendable, Hashable {
    case equal = "=="
    case notEqual = "!="
    case less = "<"
    case lessOrEqual = "<="
    case greater = ">"
    case greaterOrEqual = ">="
}

/// String comparison modifiers written after the closing quote: `"x"cdw`.
public struct StringModifiers: OptionSet, Sendable, Hashable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    /// `c`: ignore case.
    public static let caseInsensitive = StringModifiers(rawValue: 1)
    /// `d`: ignore diacritics.
    public static let diacriticInsensitive = StringModifiers(rawValue: 2)
    /// `w`: match words of the value rather than the whole value.
    public static let wordBased = StringModifiers(rawValue: 4)
}

public enum QueryValue: Sendable, Hashable {
    case string(String, StringModifiers)
    case number(Double)
    /// Seconds since 1970, from `$time…`.
    case date(Double)
}

/// Parses the query language: Spotlight's query expressions plus plain words.
public struct QueryParser: Sendable {
    /// What `$time.now` means (tests fix it).
    public var now: Date
    /// The calendar `$time…` counts in, when one was given; else local time ($TZ, /etc/localtime),
    /// weeks from Monday (ISO 8601), by the C library.
    public var calendar: Calendar {
        didSet { localTime = false }
    }
    /// No calendar was given: `$time…` is local time by the C library.
    private(set) var localTime: Bool

    public init(now: Date = Date(), calendar: Calendar? = nil) {
        self.now = now
        var cal = calendar ?? Calendar(identifier: .gregorian)
        if calendar == nil {
            // A fixed zone at `now`'s offset, for a caller who reads it; the dates come from the C library.
            cal.timeZone = TimeZone(secondsFromGMT: LocalTime.offset(at: now.timeIntervalSince1970)) ?? cal.timeZone
            cal.firstWeekday = 2  // weeks start on Monday (ISO 8601)
        }
        self.calendar = cal
        localTime = calendar == nil
    }

    public func parse(_ query: String) throws(QueryError) -> QueryExpression {
        var p = Parser(text: Array(query.unicodeScalars), query: query, times: self)
        p.skipSpace()
        if p.atEnd { throw QueryError(message: "empty query", position: 0, query: query) }
        let e = try p.orExpression()
        p.skipSpace()
        if !p.atEnd {
            throw p.error(p.peekChar == ")" ? "unbalanced ')'" : "expected '&&', '||' or the end of the query", at: p.index)
        }
        return e
    }
}

/// The recursive-descent parser over the query's Unicode scalars (not Characters: breaking a
/// query into graphemes cost more than running a one-word search). Positions given out are
/// Characters, as `QueryError` promises.
private struct Parser {
    let text: [Unicode.Scalar]
    let query: String
    let times: QueryParser
    var index = 0
    private let isASCII: Bool

    init(text: [Unicode.Scalar], query: String, times: QueryParser) {
        self.text = text
        self.query = query
        self.times = times
        // ASCII but CR: "\r\n" is one Character of two scalars.
        isASCII = text.allSatisfy { $0.isASCII && $0 != "\r" }
    }

    var atEnd: Bool { index >= text.count }
    var peekChar: Unicode.Scalar? { atEnd ? nil : text[index] }

    /// The Character offset of scalar `i` of the query.
    func characters(_ i: Int) -> Int {
        isASCII ? i : String(String.UnicodeScalarView(text[0..<min(i, text.count)])).count
    }

    func error(_ message: String, at position: Int) -> QueryError {
        QueryError(message: message, position: characters(position), query: query)
    }

    mutating func skipSpace() { while let c = peekChar, Self.isSpace(c) { index += 1 } }

    /// Unicode's white space, with ASCII answered without looking up the scalar's properties.
    @inline(__always)
    static func isSpace(_ c: Unicode.Scalar) -> Bool {
        c.isASCII ? c == " " || (c.value >= 0x09 && c.value <= 0x0D) : c.properties.isWhitespace
    }

    func lookingAt(_ s: String) -> Bool {
        var i = index
        for c in s.unicodeScalars {
            guard i < text.count, text[i] == c else { return false }
            i += 1
        }
        return true
    }

    /// A keyword (`NOT`, `InRange`) followed by a non-word character.
    func lookingAtKeyword(_ word: String) -> Bool {
        guard lookingAt(word) else { return false }
        let after = index + word.unicodeScalars.count
        return after >= text.count || !Self.isWordChar(text[after])
    }

    static func isWordChar(_ c: Unicode.Scalar) -> Bool {
        switch c {
        case "(", ")", "!", "=", "<", ">", "&", "|", ",", "\"", "'": return false
        default: return !isSpace(c)
        }
    }

    mutating func orExpression() throws(QueryError) -> QueryExpression {
        var terms = [try andExpression()]
        while true {
            skipSpace()
            guard lookingAt("||") else { break }
            index += 2
            terms.append(try andExpression())
        }
        return terms.count == 1 ? terms[0] : .or(terms)
    }

    mutating func andExpression() throws(QueryError) -> QueryExpression {
        var terms = [try unary()]
        while true {
            skipSpace()
            if lookingAt("&&") {
                index += 2
                terms.append(try unary())
            } else if let c = peekChar, c != ")" && !lookingAt("||") {
                // Juxtaposed terms (`holiday beach`) mean all of them, like mdfind.
                terms.append(try unary())
            } else {
                break
            }
        }
        return terms.count == 1 ? terms[0] : .and(terms)
    }

    mutating func unary() throws(QueryError) -> QueryExpression {
        skipSpace()
        if lookingAt("!") && !lookingAt("!=") {
            index += 1
            return .not(try unary())
        }
        if lookingAtKeyword("NOT") {
            index += 3
            return .not(try unary())
        }
        return try primary()
    }

    mutating func primary() throws(QueryError) -> QueryExpression {
        skipSpace()
        let start = index
        guard let c = peekChar else { throw error("expected a comparison, a word or '(' after this", at: index) }
        if c == "(" {
            index += 1
            let e = try orExpression()
            skipSpace()
            guard peekChar == ")" else { throw error("expected ')' to close the '(' at character \(start + 1)", at: index) }
            index += 1
            return e
        }
        if c == "\"" || c == "'" {
            let (s, _) = try string()
            return .text(s, position: characters(start))
        }
        if lookingAtKeyword("InRange") {
            index += 7
            skipSpace()
            guard peekChar == "(" else { throw error("expected '(' after InRange", at: index) }
            index += 1
            skipSpace()
            let namePos = index
            let name = word()
            guard !name.isEmpty else { throw error("expected an attribute name", at: index) }
            try expect(",")
            let low = try value()
            try expect(",")
            let high = try value()
            skipSpace()
            guard peekChar == ")" else { throw error("expected ')' to close InRange", at: index) }
            index += 1
            return .inRange(attribute: name, low: low, high: high, position: characters(namePos))
        }
        guard Self.isWordChar(c) else { throw error("unexpected '\(c)'", at: index) }
        let name = word()
        skipSpace()
        if let op = comparisonOperator() {
            let value = try self.value()
            return .comparison(attribute: name, op: op, value: value, position: characters(start))
        }
        return .text(name, position: characters(start))
    }

    mutating func expect(_ c: Unicode.Scalar) throws(QueryError) {
        skipSpace()
        guard peekChar == c else { throw error("expected '\(c)'", at: index) }
        index += 1
    }

    mutating func word() -> String {
        var s = ""
        while let c = peekChar, Self.isWordChar(c) { s.unicodeScalars.append(c); index += 1 }
        return s
    }

    mutating func comparisonOperator() -> ComparisonOperator? {
        for (token, op) in [("==", ComparisonOperator.equal), ("!=", .notEqual), ("<=", .lessOrEqual), (">=", .greaterOrEqual),
                            ("<", .less), (">", .greater), ("=", .equal)] where lookingAt(token) {
            index += token.count
            return op
        }
        return nil
    }

    mutating func string() throws(QueryError) -> (String, StringModifiers) {
        let start = index
        let quote = text[index]
        index += 1
        var s = ""
        while true {
            guard let c = peekChar else { throw error("unterminated string: no closing \(quote)", at: start) }
            index += 1
            if c == quote { break }
            if c == "\\", let next = peekChar {
                index += 1
                // \" and \\ are the characters; \* and \? stay escaped for the pattern.
                if next == quote { s.unicodeScalars.append(next) } else { s.unicodeScalars.append("\\"); s.unicodeScalars.append(next) }
                continue
            }
            s.unicodeScalars.append(c)
        }
        var modifiers: StringModifiers = []
        while let c = peekChar, c.properties.isAlphabetic {
            switch c {
            case "c": modifiers.insert(.caseInsensitive)
            case "d": modifiers.insert(.diacriticInsensitive)
            case "w": modifiers.insert(.wordBased)
            default: throw error("unknown string modifier '\(c)' (c: ignore case, d: ignore diacritics, w: words)", at: index)
            }
            index += 1
        }
        return (s, modifiers)
    }

    mutating func value() throws(QueryError) -> QueryValue {
        skipSpace()
        let start = index
        guard let c = peekChar else { throw error("expected a value: a quoted string, a number or $time…", at: index) }
        if c == "\"" || c == "'" {
            let (s, m) = try string()
            return .string(s, m)
        }
        if c == "$" { return try time() }
        var s = ""
        while let c = peekChar, ("0"..."9").contains(c) || "+-.eE".unicodeScalars.contains(c) { s.unicodeScalars.append(c); index += 1 }
        if let n = Double(s), !s.isEmpty { return .number(n) }
        index = start
        let bare = word()
        if !bare.isEmpty {
            throw error("expected a value: a quoted string (\"\(bare)\"), a number or $time…", at: start)
        }
        throw error("expected a value: a quoted string, a number or $time…", at: start)
    }

    mutating func time() throws(QueryError) -> QueryValue {
        let start = index
        guard lookingAt("$time.") else { throw error("unknown variable: expected $time.now, $time.today… or $time.iso(…)", at: start) }
        index += 6
        var name = ""
        while let c = peekChar, c.properties.isAlphabetic || c == "_" { name.unicodeScalars.append(c); index += 1 }
        var argument: String?
        if peekChar == "(" {
            index += 1
            var a = ""
            while let c = peekChar, c != ")" { a.unicodeScalars.append(c); index += 1 }
            guard peekChar == ")" else { throw error("expected ')' to close $time.\(name)(", at: index) }
            index += 1
            argument = a.trimmingWhitespace(newlines: false)
        }
        if name == "iso" {
            let raw = (argument ?? "").trimming { $0 == "\"" || $0 == "'" }
            guard let t = times.isoTime(raw) else {
                throw error("not an ISO 8601 date: '\(raw)' (use 2024-05-01, 2024-05-01T10:30:00 or …Z / …+02:00)", at: start)
            }
            return .date(t)
        }
        var offset = 0
        if let argument, !argument.isEmpty {
            guard let n = Int(argument.replacing("+", with: "")) else {
                throw error("expected a whole number in $time.\(name)(…), e.g. $time.today(-7)", at: start)
            }
            offset = n
        }
        guard let t = times.time(name, offset: offset) else {
            throw error("unknown time '$time.\(name)': use now, today, yesterday, this_week, this_month, this_year or iso(…)", at: start)
        }
        return .date(t)
    }
}
