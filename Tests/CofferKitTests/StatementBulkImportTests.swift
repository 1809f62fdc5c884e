import FinanceCore
import Foundation
import Testing
import VaultCrypto
import VaultStore

@testable import CofferKit

/// A statement of more lines than a small write is sealed into pages as it is encoded
/// (`Vault.writeInBulk`) rather than written through `commit`: the vault must end as `commit`
/// would leave it, summary included, and undo must take the whole statement back.
@Suite struct StatementBulkImportTests {
    /// A statement of `count` lines, oldest first, with a running balance.
    static func statement(_ count: Int) throws -> BankStatement {
        var text = "Date,Description,Amount,Balance\n"
        for index in 0..<count {
            let amount: Int64 = index % 10 == 0 ? 120_000 : -Int64(100 + index)
            let balance = 500_000 - Int64(index) * 50
            text += String(
                format: "2025-%02d-%02d,Shop %d,%@,%@\n", 3 + index * 4 / count, 1 + index % 28, index % 37,
                Currency.gbp.decimalString(Money(minorUnits: amount)),
                Currency.gbp.decimalString(Money(minorUnits: balance)))
        }
        return try BankStatement(
            data: Data(text.utf8), name: "s.csv", delimiter: nil, skipLines: 0, hasHeader: true, encoding: .utf8,
            detectHeader: true, columns: StatementColumns(destination: .transactions), currencyColumn: nil)
    }

    @Test(arguments: [false, true])
    func aLargeStatementEndsAsCommitWouldLeaveIt(thenRead: Bool) throws {
        try withScratchVault { vault in
            let ledger = try Ledger(vault: vault)
            try ledger.writeWithoutHistory([(UUID(), .settings(VaultSettings(currency: .gbp)))])
            let today = try CalendarDate(parsing: "2025-08-01")
            let current = try ledger.addAccount(
                name: "Current", category: "Cash", kind: .asset,
                value: (Money(minorUnits: 400_000), try CalendarDate(parsing: "2025-01-15")), today: today)
            let spend = Transaction(
                amount: Money(minorUnits: 999), type: .expense, target: .uncategorised, note: "before",
                date: try CalendarDate(parsing: "2025-02-02"), sequence: ledger.nextTransactionSequence)
            try ledger.commit("spend", puts: [(spend.id, .transaction(spend))])
            let before = snapshot(ledger)
            var options = Ledger.StatementImportOptions(fileName: "s.csv")
            options.account = "Current"
            options.thenRead = thenRead
            let result = try ledger.importStatement(try Self.statement(1_000), options)
            #expect(result.added == 1_000)
            let closing = try #require(result.recordedBalance)
            #expect(closing.accountID == current.id && closing.amount == Money(minorUnits: 500_000 - 999 * 50))
            // Sealed in bulk: the loaded groups stay on disk until the vault is read again.
            #expect(vault.isPartial == !thenRead)

            // The same vault read afresh from its file (it holds part of itself after a bulk load).
            let read = try Ledger(vault: vault)
            #expect(read.transactions.count == 1 + 1_000)
            #expect(read.updates.contains { $0.id == closing.id && $0.amount == closing.amount })
            #expect(read.changes.count == 3 && read.changes.last?.entry.before.count == 1_001)
            if thenRead { #expect(snapshot(ledger) == snapshot(read)) }
            let summary = try #require(read.summaryRecord?.summary)
            #expect(read.isCurrent(summary), "the summary names the import's commit")
            #expect(summary.transactions == 1_001 && summary.lastTransaction == read.nextTransactionSequence - 1)
            #expect(summary.lastValueOrder == read.nextUpdateSequence - 1)
            #expect(summary.lastChange == read.changes.last?.entry.sequence)
            #expect(
                summary.monthEnds
                    == (try MonthEnds.empty.recomputed(from: nil, portfolio: read.portfolio, invoices: read.invoices)),
                "the closing balance moved the month ends from its month")
            #expect(try vault.verify().recordCount == vault.recordCount)

            // One change, taken back whole.
            try read.undo()
            #expect(snapshot(read) == before)
            #expect(snapshot(try Ledger(vault: vault)) == before)
        }
    }
}
