import Foundation
import Testing

@testable import FinanceCore

/// The search text's matching (the byte-by-byte ASCII path and Foundation's agree), its
/// snippets, the shared filter's bounds, and the change of a value over time.
@Suite struct TextQueryTests {
    @Test(arguments: [
        ("tesco", "TESCO STORES 4411", true), ("Stores 44", "TESCO STORES 4411", true), ("cafe", "Café Rouge", true),
        ("CAFÉ", "cafe rouge", true), ("école", "ECOLE", true), ("rouge", "Café Rouge", true),
        ("ユニクロ", "ユニクロ 銀座", true), ("zebra", "Café Rouge", false), ("tescos", "TESCO", false),
        ("a|b", "PAYEE a|b", true),
    ])
    func matchesIgnoringCaseAndAccents(query: String, text: String, expected: Bool) throws {
        let found = try TextQuery(query).range(in: text)
        #expect((found != nil) == expected, "\(query) in \(text)")
        // Where it matched is the text itself, whichever path found it.
        if let found {
            #expect(
                text[found].folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil)
                    == query.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil))
        }
    }

    @Test func emptyTextIsRefused() {
        #expect(throws: FinanceError.self) { try TextQuery("") }
        #expect(throws: FinanceError.self) { try TextQuery(" \t ") }
    }

    @Test func snippetsAreOneLineAndCutWithEllipses() throws {
        let short = "2 Rue de l'École\nParis"
        #expect(
            TextQuery.snippet(of: short, around: try #require(try TextQuery("paris").range(in: short)))
                == "2 Rue de l'École Paris")
        let long = String(repeating: "a", count: 60) + " NEEDLE " + String(repeating: "b", count: 60)
        let snippet = TextQuery.snippet(of: long, around: try #require(try TextQuery("needle").range(in: long)))
        #expect(snippet.hasPrefix("…") && snippet.hasSuffix("…") && snippet.contains("NEEDLE"))
        #expect(snippet.count <= 50)
        // At the end of a long text, the room left after the match goes before it.
        let tail = String(repeating: "a", count: 60) + " NEEDLE"
        let end = TextQuery.snippet(of: tail, around: try #require(try TextQuery("needle").range(in: tail)))
        #expect(end.hasPrefix("…") && end.hasSuffix("NEEDLE") && end.count == 49)
    }

    @Test func filterBoundsAreInclusiveAndSizesUnsigned() throws {
        let filter = try RecordFilter(
            from: try CalendarDate(parsing: "2026-11-01"), to: try CalendarDate(parsing: "2026-11-30"),
            minimum: Money(minorUnits: 1000), maximum: Money(minorUnits: 2000))
        let inside = try CalendarDate(parsing: "2026-11-30")
        #expect(filter.admits(date: try CalendarDate(parsing: "2026-11-01"), amount: Money(minorUnits: 1000)))
        #expect(filter.admits(date: inside, amount: Money(minorUnits: -2000)))
        #expect(!filter.admits(date: inside, amount: Money(minorUnits: 2001)))
        #expect(!filter.admits(date: try CalendarDate(parsing: "2026-12-01"), amount: Money(minorUnits: 1500)))
        #expect(throws: FinanceError.self) {
            try RecordFilter(from: try CalendarDate(parsing: "2026-12-01"), to: try CalendarDate(parsing: "2026-11-01"))
        }
        #expect(throws: FinanceError.self) {
            try RecordFilter(minimum: Money(minorUnits: 2), maximum: Money(minorUnits: 1))
        }
    }

    @Test func changePercentagesRoundHalfAwayFromZeroOfTheEarlierSize() throws {
        func change(_ then: Int64, _ now: Int64) throws -> Portfolio.Change {
            try Portfolio.Change(then: Money(minorUnits: then), now: Money(minorUnits: now))
        }
        #expect(try change(1000, 1250).perMille == 250)
        #expect(try change(1700, 1950).perMille == 147)  // 14.705…%
        #expect(try change(2000, 2001).perMille == 1)  // 0.05% → 0.1%
        #expect(try change(2000, 1999).perMille == -1)  // -0.05% → -0.1%
        // An overdrawn account that improves: the change is positive, and so is its percentage.
        #expect(try change(-10000, -5000).perMille == 500)
        #expect(try change(0, 5000).perMille == nil)
        #expect(try change(0, 5000).amount == Money(minorUnits: 5000))
    }
}
