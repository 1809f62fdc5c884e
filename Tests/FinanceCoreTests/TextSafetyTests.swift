import Foundation
import Testing
@testable import FinanceCore

@Suite struct TextSafetyTests {
    /// Every string reachable in a record, found by reflection: what `textFields` must list.
    func reflectedStrings(_ value: Any) -> [String] {
        if let text = value as? String { return [text] }
        return Mirror(reflecting: value).children.flatMap { reflectedStrings($0.value) }
    }

    /// A text field added to a record later, and not added to `textFields`, fails here.
    @Test func textFieldsCoverEveryStringOfEveryRecordKind() {
        for (_, record) in RecordCodecTests.records {
            #expect(TextSafety.textFields(of: record).map(\.text).sorted() == reflectedStrings(record).sorted(), "\(record)")
        }
    }

    @Test(arguments: ["\u{1B}]2;pwned\u{07}", "\u{1B}[2J", "\u{07}", "\u{9B}31m", "\u{7F}", "\u{00}", "\r"])
    func controlCharactersAreRefusedInEveryField(_ control: String) throws {
        let client = Client(name: "Acme", email: "ap\(control)@acme.example", address: "1 High St\nLondon", termsDays: 14)
        #expect(throws: FinanceError.self) { try TextSafety.check(.client(client)) }
        let note = Transaction(amount: Money(minorUnits: 100), type: .expense, target: .uncategorised, note: "NOTE\(control)X",
                               date: try CalendarDate(parsing: "2026-01-02"), sequence: 1)
        #expect(throws: FinanceError.self) { try TextSafety.check(.transaction(note)) }
        var multiLine = client
        multiLine.email = nil
        multiLine.address = "1 High St\(control)"
        #expect(throws: FinanceError.self) { try TextSafety.check(.client(multiLine)) }
    }

    @Test func lineBreaksOnlyWhereTextIsMultiLine() throws {
        try TextSafety.check(.client(Client(name: "Acme", email: nil, address: "1 High St\n\tLondon", termsDays: 14)))
        #expect(throws: FinanceError.self) { try TextSafety.check(.client(Client(name: "Acme\nLtd", email: nil, address: nil, termsDays: 14))) }
    }

    @Test func printableReplacesControlsButKeepsTheAllowedSequences() {
        #expect(TextSafety.printable("a\u{1B}]2;T\u{07}b\nc") == "a\u{FFFD}]2;T\u{FFFD}b\nc")
        #expect(TextSafety.printable("\u{1B}[1mbold\u{1B}[0m \u{1B}[2J", keeping: ["\u{1B}[1m", "\u{1B}[0m"]) == "\u{1B}[1mbold\u{1B}[0m \u{FFFD}[2J")
        #expect(TextSafety.printable("plain £ text") == "plain £ text")
    }
}
