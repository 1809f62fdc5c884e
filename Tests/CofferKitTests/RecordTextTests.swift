import CofferTestSupport
import FinanceCore
import Foundation
import Testing

@testable import CofferKit

@Suite struct RecordTextTests {
    /// Every string reachable in a record, found by reflection: what `textFields` must list.
    func reflectedStrings(_ value: Any) -> [String] {
        if let text = value as? String { return [text] }
        return Mirror(reflecting: value).children.flatMap { reflectedStrings($0.value) }
    }

    /// A text field added to a record later, and not added to `textFields`, fails here.
    @Test func textFieldsCoverEveryStringOfEveryRecordKind() {
        for (_, record) in RecordCodecTests.records {
            #expect(record.textFields.map(\.text).sorted() == reflectedStrings(record).sorted(), "\(record)")
        }
    }

    @Test(arguments: ["\u{1B}]2;pwned\u{07}", "\u{1B}[2J", "\u{07}", "\u{9B}31m", "\u{7F}", "\u{00}", "\r"])
    func controlCharactersAreRefusedInEveryField(_ control: String) throws {
        let client = Client(
            name: "Acme", email: "ap\(control)@acme.example", address: "1 High St\nLondon", termsDays: 14)
        #expect(throws: FinanceError.self) { try FinanceRecord.client(client).checkText() }
        let note = Transaction(
            amount: Money(minorUnits: 100), type: .expense, target: .uncategorised, note: "NOTE\(control)X",
            date: try CalendarDate(parsing: "2026-01-02"), sequence: 1)
        #expect(throws: FinanceError.self) { try FinanceRecord.transaction(note).checkText() }
        var multiLine = client
        multiLine.email = nil
        multiLine.address = "1 High St\(control)"
        #expect(throws: FinanceError.self) { try FinanceRecord.client(multiLine).checkText() }
        let body = Note(title: "Will", body: "In the desk\(control)", created: date("2026-01-02"), updated: 0)
        #expect(throws: FinanceError.self) { try FinanceRecord.note(body).checkText() }
    }

    @Test func lineBreaksOnlyWhereTextIsMultiLine() throws {
        try FinanceRecord.client(Client(name: "Acme", email: nil, address: "1 High St\n\tLondon", termsDays: 14))
            .checkText()
        #expect(throws: FinanceError.self) {
            try FinanceRecord.client(Client(name: "Acme\nLtd", email: nil, address: nil, termsDays: 14)).checkText()
        }
        let note = Note(title: "Will", body: "Top drawer\n\tleft", created: date("2026-01-02"), updated: 0)
        try FinanceRecord.note(note).checkText()
        var twoLineTitle = note
        twoLineTitle.title = "Will\nand testament"
        #expect(throws: FinanceError.self) { try FinanceRecord.note(twoLineTitle).checkText() }
    }
}
