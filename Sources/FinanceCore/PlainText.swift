import Foundation

/// A bank statement is read field by field, a million fields in a large one, and Foundation's
/// `trimmingCharacters(in:)` copies every field to UTF-16 first. Nearly every field starts and
/// ends with a printable ASCII character, which nothing trims: these return such text as it is
/// and leave everything else to Foundation, so the answer is always Foundation's.
extension String {
    /// `trimmingCharacters(in: .whitespaces)`.
    package var trimmingSpaces: String {
        hasPlainEnds ? self : trimmingCharacters(in: .whitespaces)
    }

    /// `trimmingCharacters(in: .whitespacesAndNewlines)`.
    package var trimmingSpacesAndNewlines: String {
        hasPlainEnds ? self : trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Empty, or first and last characters printable ASCII other than the space.
    private var hasPlainEnds: Bool {
        guard let first = utf8.first, let last = utf8.last else { return true }
        return (0x21...0x7E).contains(first) && (0x21...0x7E).contains(last)
    }

    /// Runs of white space as one space, and none at either end: `split` and `joined` only when
    /// there is something to change or the text is not printable ASCII.
    package var collapsingWhiteSpace: String {
        var afterSpace = true
        for byte in utf8 {
            guard (0x20...0x7E).contains(byte), byte != 0x20 || !afterSpace else { return collapsedWhiteSpace }
            afterSpace = byte == 0x20
        }
        return afterSpace && !isEmpty ? collapsedWhiteSpace : self
    }

    private var collapsedWhiteSpace: String {
        split(whereSeparator: \.isWhitespace).joined(separator: " ")
    }

    /// Whether every character is printable ASCII (the space included): such text has one
    /// character per byte, no line breaks and no control characters, so byte-wise readings of
    /// it agree with Character-wise ones.
    package var isPrintableASCII: Bool {
        utf8.allSatisfy { (0x20...0x7E).contains($0) }
    }
}
