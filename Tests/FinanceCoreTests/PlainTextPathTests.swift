import CofferTestSupport
import Foundation
import Testing

@testable import FinanceCore

/// Statement lines are read through byte-wise paths for printable ASCII; each must give what
/// the general path gives, or an import would read a file differently from before.
@Suite struct PlainTextPathTests {
    /// Texts made of what statements hold, and of what the fast paths must hand on: spaces of
    /// every kind, line breaks, control characters, letters outside ASCII.
    static func texts(count: Int, alphabet: [String], seed: UInt64) -> [String] {
        var generator = SeededGenerator(state: seed)
        return (0..<count).map { _ in
            (0..<Int.random(in: 0...14, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! }
                .joined()
        }
    }

    @Test func trimmingAndCollapsingAgreeWithFoundation() {
        let alphabet = [
            "a", "Z", "1", "-", ".", " ", " ", "\t", "\n", "\r\n", "\u{A0}", "\u{2003}", "\u{85}", "\u{1}", "é",
        ]
        for text in Self.texts(count: 20_000, alphabet: alphabet, seed: 7) {
            #expect(text.trimmingSpaces == text.trimmingCharacters(in: .whitespaces), "\(text.debugDescription)")
            #expect(
                text.trimmingSpacesAndNewlines == text.trimmingCharacters(in: .whitespacesAndNewlines),
                "\(text.debugDescription)")
            #expect(
                text.collapsingWhiteSpace == text.split(whereSeparator: \.isWhitespace).joined(separator: " "),
                "\(text.debugDescription)")
        }
    }

    @Test func byteWiseDatesAgreeWithCharacterWiseOnes() throws {
        let alphabet = ["0", "1", "2", "3", "9", "/", "-", ".", " ", "T", "Jan", "sep", "May", "x", ",", "20", "2025"]
        let patterns = try ["YYYY-MM-DD", "DD/MM/YYYY", "D MMM YYYY", "MMM D, YYYY", "DD-MMM-YY", "YYYYMMDD", "M/D/YY"]
            .map { try DatePattern($0) }
        var read = 0
        for text in Self.texts(count: 40_000, alphabet: alphabet, seed: 11) + ["2025-04-03", "3 Sep 2025", "03-MAY-99"]
        where text.isPrintableASCII {
            for pattern in patterns {
                let plain = pattern.plainDate(text)
                #expect(plain == pattern.characterwiseDate(text), "\(pattern) \(text.debugDescription)")
                if plain != nil { read += 1 }
            }
        }
        #expect(read > 3, "the texts must include dates that read, or the comparison proves little")
    }

    @Test func plainAmountsReadAsTheGeneralPathReadsThem() throws {
        let alphabet = ["0", "1", "5", "9", ".", "-", ",", "(", ")", "'"]
        var read = 0
        for currency in [Currency.gbp, try Currency.named("JPY"), try Currency.named("EUR")] {
            for text in Self.texts(count: 20_000, alphabet: alphabet, seed: 13) {
                // A leading space is trimmed by the general path and keeps the fast one out.
                let fast = try? currency.parseStatementAmount(text, decimalComma: false)
                let general = try? currency.parseStatementAmount(" " + text, decimalComma: false)
                #expect(fast == general, "\(currency.code) \(text.debugDescription)")
                if fast != nil { read += 1 }
            }
        }
        #expect(read > 100)
    }
}
