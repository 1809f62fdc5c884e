import FinanceCore
import Foundation
import Testing

@testable import CofferKit

/// The journal reader reads the shapes hledger and people write, and refuses by line what it
/// cannot take whole.
@Suite struct JournalReaderTests {
    let usd = try! Currency.named("USD")

    @Test(arguments: [
        ("GBP 1250.50", 125_050), ("£1,250.50", 125_050), ("-£12.00", -1200), ("£-12", -1200),
        ("1250.50 GBP", 125_050), ("GBP -0.05", -5), ("- GBP 3", -300), ("\"GBP\" 7.10", 710),
    ])
    func amounts(text: String, minorUnits: Int64) throws {
        #expect(try Journal.money(Substring(text), line: 1, currency: .gbp) == Money(minorUnits: minorUnits))
    }

    @Test func dollarsInADollarVault() throws {
        #expect(try Journal.money("$12", line: 1, currency: usd) == Money(minorUnits: 1200))
        #expect(throws: CofferError.self) { try Journal.money("$12", line: 1, currency: .gbp) }
    }

    @Test func postingsCommentsAndAssertions() throws {
        let journal = try Journal(
            reading: """
                ; header comment
                account Assets:Bank Account
                    ; type: A
                commodity £1,000.00

                2026/01/02 ! (42) Corner Shop | milk  ; a comment
                    Expenses:Food\t£2.50
                    ; a posting comment
                    * Assets:Bank Account    £-2.50 == £-2.50

                2026-01-01 Opening
                    Assets:Bank Account    £0.00
                    Equity:Opening
                """, currency: .gbp)
        // Date order, as hledger checks assertions.
        #expect(journal.entries.map(\.payee) == ["Opening", "Corner Shop"])
        let shop = journal.entries[1]
        #expect(shop.postings.map(\.account) == ["Expenses:Food", "Assets:Bank Account"])
        #expect(shop.postings.map(\.amount) == [Money(minorUnits: 250), Money(minorUnits: -250)])
        #expect(journal.entries[0].postings[1].amount == .zero)
    }

    @Test(arguments: [
        ("2026-01-01 x\n    Assets:A    GBP 1\n    Assets:B\n    Equity:C\n", "line 4: only one posting"),
        ("2026-13-01 x\n", "line 1: '2026-13-01' is not a date"),
        ("    Assets:A    GBP 1\n", "line 1: an indented line"),
        ("2026-01-01 x\n    Assets:A    = GBP 1\n", "line 2: balance assignments"),
        ("2026-01-01 x\n    (Assets:A)    GBP 1\n", "line 2: virtual postings"),
        ("2026-01-01 x\n    Assets:A    GBP 1 =* GBP 1\n    Equity:B\n", "line 2: balance assertions that include"),
        ("= expenses\n    (budget)    1\n", "line 1: an automated transaction"),
        ("P 2026-01-01 EUR GBP 0.85\n", "line 1: the 'P' directive"),
        ("2026-01-01 x\n    Assets:A    GBP 1.234\n    Equity:B\n", "line 2: 'GBP 1.234' is not an amount"),
        (
            "2026-01-02 x\n    Assets:A    GBP 1 = GBP 2\n    Equity:B\n\n2026-01-01 y\n    Assets:A    GBP 2\n    Equity:B\n",
            "line 2: the balance assertion of Assets:A does not hold on 2026-01-02"
        ),
    ])
    func refusals(text: String, message: String) {
        do {
            _ = try Journal(reading: text, currency: .gbp)
            Issue.record("read: \(text)")
        } catch let error as CofferError {
            #expect(error.message.hasPrefix(message), "\(error.message)")
        } catch {
            Issue.record("\(error)")
        }
    }
}
