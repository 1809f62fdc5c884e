import FinanceCore
import Foundation
import Testing
import VaultCrypto
import VaultStore

@testable import CofferKit

/// The overview reads only some groups (`RecordGrouping.overview`): everything it shows must be
/// what the whole vault gives, in this month and in months before, with flows in old months.
@Suite struct PartialLedgerTests {
    @Test func theOverviewsGroupsGiveTheWholeVaultsFigures() throws {
        try withScratchVault { vault in
            let today = try CalendarDate(parsing: "2026-11-24")
            let ledger = try Ledger(vault: vault)
            try ledger.addDemoData(today: today)
            let account = try #require(ledger.accounts.first { $0.kind == .asset })
            // Old spending without a flow (not read), and with one (read: it moves a value).
            var puts: [(UUID, FinanceRecord)] = []
            for month in 1...9 {
                let date = try CalendarDate(parsing: String(format: "2026-%02d-15", month))
                let plain = Transaction(
                    amount: Money(minorUnits: Int64(1000 * month)), type: .expense, target: .uncategorised,
                    note: "old \(month)", date: date, sequence: UInt64(900 + month))
                let moving = Transaction(
                    amount: Money(minorUnits: Int64(700 * month)), type: .expense, target: .uncategorised,
                    note: "moved \(month)", date: date, sequence: UInt64(950 + month),
                    flow: AccountFlow(from: account.id, order: ledger.nextUpdateSequence + UInt64(month)))
                puts += [(plain.id, .transaction(plain)), (moving.id, .transaction(moving))]
            }
            try ledger.commit("history", puts: puts)

            let whole = try Ledger(vault: Vault.open(at: vault.url, with: .passphrase(try Passphrase("scratch"))))
            let partial = try Ledger(
                vault: Vault.open(
                    at: vault.url, with: .passphrase(try Passphrase("scratch")),
                    reading: RecordGrouping.overview(on: today)))
            #expect(partial.vault.isPartial)
            #expect(partial.transactions.count < whole.transactions.count, "old spending was not read")
            #expect(!partial.transactions.contains { $0.note == "old 3" })
            #expect(partial.transactions.contains { $0.note == "moved 3" })
            #expect(partial.hasTransactions == whole.hasTransactions)

            for date in [today, try CalendarDate(parsing: "2026-06-30"), try CalendarDate(parsing: "2026-01-31")] {
                #expect(try partial.netWorth.totals(on: date) == whole.netWorth.totals(on: date))
                for account in whole.accounts {
                    #expect(
                        partial.portfolio.value(of: account, on: date) == whole.portfolio.value(of: account, on: date))
                }
            }
            #expect(
                try partial.netWorth.monthEndSeries(through: today) == whole.netWorth.monthEndSeries(through: today))
            let month = BudgetMonth(containing: today)
            let (a, b) = (try partial.budget.summary(for: month), try whole.budget.summary(for: month))
            #expect(a.income == b.income && a.spent == b.spent && a.remaining == b.remaining)
            let (ra, rb) = (
                try Receivables(invoices: partial.invoices, today: today),
                try Receivables(invoices: whole.invoices, today: today)
            )
            #expect(ra.outstanding == rb.outstanding && ra.overdue == rb.overdue && ra.overdueCount == rb.overdueCount)
            #expect(throws: VaultError.self) { try partial.commit("nothing", puts: puts.prefix(1).map { $0 }) }
        }
    }
}
