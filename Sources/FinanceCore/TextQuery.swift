import Foundation

/// Text as people type it into a search: found anywhere inside a field, whatever its case and
/// accents ("cafe" finds "Café", "ÉCOLE" finds "école"). Searches run over every record in
/// memory, so the common case (a plain-ASCII query against plain-ASCII text, which is what bank
/// statements are made of) is compared byte by byte; anything else goes through Foundation's
/// case- and diacritic-insensitive comparison.
public struct TextQuery: Sendable {
    public let text: String
    /// The query folded to lower-case ASCII, when folding leaves it ASCII.
    private let asciiNeedle: [UInt8]?
    private let folded: String

    /// Refuses an empty query (or one of spaces only): it would match everything.
    public init(_ text: String) throws {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty else { throw FinanceError(.invalidName, "Enter some text to search for.") }
        self.text = trimmed
        folded = trimmed.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil)
        let bytes = Array(folded.utf8)
        asciiNeedle = bytes.allSatisfy { $0 < 0x80 } ? bytes.map(Self.lower) : nil
    }

    private static func lower(_ byte: UInt8) -> UInt8 { (0x41...0x5A).contains(byte) ? byte | 0x20 : byte }

    /// Where the query first occurs in `haystack`, or nil.
    public func range(in haystack: String) -> Range<String.Index>? {
        if let needle = asciiNeedle {
            // Native strings are contiguous UTF-8: no copy; anything else goes to Foundation.
            switch haystack.utf8.withContiguousStorageIfAvailable({ Self.asciiOffset(of: needle, in: $0) }) {
            case .some(.some(.some(let offset))):
                let start = haystack.utf8.index(haystack.startIndex, offsetBy: offset)
                return start..<haystack.utf8.index(start, offsetBy: needle.count)
            case .some(.some(.none)): return nil
            default: break  // not ASCII (or not contiguous): Foundation decides
            }
        }
        return haystack.range(of: folded, options: [.caseInsensitive, .diacriticInsensitive])
    }

    public func matches(_ haystack: String) -> Bool { range(in: haystack) != nil }

    /// The byte offset of `needle` in `bytes` ignoring ASCII case; `.some(nil)` when absent;
    /// nil when a byte that is not ASCII comes first (an accented letter may still match). A
    /// match found in the ASCII before any other byte is the first match either way.
    private static func asciiOffset(of needle: [UInt8], in bytes: UnsafeBufferPointer<UInt8>) -> Int?? {
        let count = bytes.count, length = needle.count, first = needle[0]
        var start = 0
        while start < count {
            let byte = bytes[start]
            if byte >= 0x80 { return nil }
            if lower(byte) == first, start + length <= count {
                var index = 1
                while index < length, lower(bytes[start + index]) == needle[index] { index += 1 }
                if index == length { return .some(start) }
            }
            start += 1
        }
        return .some(nil)
    }

    /// The text around a match on one line, at most about `width` characters, with `…` where
    /// it was cut: enough to see why it matched without printing a whole address or note.
    public static func snippet(of text: String, around range: Range<String.Index>, width: Int = 48) -> String {
        func oneLine(_ part: Substring) -> String {
            part.map { $0.isNewline || $0 == "\t" ? " " : String($0) }.joined()
        }
        guard text.count > width else { return oneLine(text[...]) }
        let match = text[range].count
        // A third of the room before the match, the rest after; what the end leaves unused goes before.
        let after = max(0, width - match - max(0, (width - match) / 3))
        let room = text.distance(from: range.upperBound, to: text.endIndex)
        let before = max(0, width - match - min(after, room))
        let start = text.index(range.lowerBound, offsetBy: -before, limitedBy: text.startIndex) ?? text.startIndex
        let end = text.index(range.upperBound, offsetBy: after, limitedBy: text.endIndex) ?? text.endIndex
        return (start > text.startIndex ? "…" : "") + oneLine(text[start..<end]) + (end < text.endIndex ? "…" : "")
    }
}

/// The filters `transaction list` and `invoices` share: a date range, a size range (amounts
/// without their sign) and a text; every bound inclusive, every part optional.
public struct RecordFilter: Sendable {
    public var from: CalendarDate?
    public var to: CalendarDate?
    public var minimum: Money?
    public var maximum: Money?
    public var text: TextQuery?

    /// Refuses a range that is empty by construction (`--from` after `--to`, `--min` over `--max`).
    public init(
        from: CalendarDate? = nil, to: CalendarDate? = nil, minimum: Money? = nil, maximum: Money? = nil,
        text: TextQuery? = nil
    ) throws {
        if let from, let to, from > to {
            throw FinanceError(.invalidDate, "The range is empty: \(from) is after \(to).")
        }
        if let minimum, let maximum, minimum > maximum {
            throw FinanceError(.invalidAmount, "The range is empty: the minimum is above the maximum.")
        }
        self.from = from
        self.to = to
        self.minimum = minimum
        self.maximum = maximum
        self.text = text
    }

    public var hasDates: Bool { from != nil || to != nil }

    /// Whether `date` and the size of `amount` fall within the bounds (the text is the caller's:
    /// which fields it reads depends on the record).
    public func admits(date: CalendarDate, amount: Money) -> Bool {
        let size = Money(minorUnits: Int64(clamping: amount.minorUnits.magnitude))
        return from.map { date >= $0 } ?? true && to.map { date <= $0 } ?? true
            && minimum.map { size >= $0 } ?? true && maximum.map { size <= $0 } ?? true
    }
}
