import FinanceCore
import Foundation
import Testing
import VaultCrypto
import VaultStore

@testable import CofferKit

/// After each small write the ledger patches its views in place; they must equal what decoding
/// the whole vault again gives.
@Suite struct IncrementalLedgerTests {
    @Test func smallWritesMatchAFullReload() throws {
        try withScratchVault { vault in
            let ledger = try Ledger(vault: vault)
            try ledger.writeWithoutHistory([(UUID(), .settings(VaultSettings(currency: .gbp)))])
            let account = Account(
                name: "Savings", category: "Savings", kind: .asset, created: try CalendarDate(parsing: "2025-01-01"))
            try ledger.commit("add", puts: [(account.id, .account(account))])
            var ids: [UUID] = []
            for day in 1...40 {
                let update = ValueUpdate(
                    accountID: account.id,
                    date: try CalendarDate(parsing: String(format: "2025-02-%02d", day % 28 + 1)),
                    amount: Money(minorUnits: Int64(day * 100)), sequence: UInt64(day))
                let spend = Transaction(
                    amount: Money(minorUnits: 250), type: .expense, target: .uncategorised, note: "shop \(day)",
                    date: try CalendarDate(parsing: "2025-02-10"), sequence: UInt64(day))
                ids.append(spend.id)
                try ledger.commit("day \(day)", puts: [(update.id, .update(update)), (spend.id, .transaction(spend))])
                #expect(snapshot(ledger) == snapshot(try Ledger(vault: vault)), "after commit \(day)")
            }
            try ledger.commit("delete", deletes: Array(ids.prefix(5)))
            #expect(snapshot(ledger) == snapshot(try Ledger(vault: vault)))
            for _ in 0..<3 {
                _ = try ledger.undo()
                #expect(snapshot(ledger) == snapshot(try Ledger(vault: vault)), "after undo")
            }

            // A large write (new records, replaced ones, deletions, an id written twice in one batch:
            // the later wins), and undoing it, which patches the ledger with that id twice.
            let moreAccounts = (0..<30).map {
                Account(
                    name: "Account \($0)", category: "Savings", kind: .asset,
                    created: try! CalendarDate(parsing: "2025-01-01"))
            }
            var big: [(UUID, FinanceRecord)] = moreAccounts.map { ($0.id, .account($0)) }
            big += try (0..<600).map { index in
                let spend = Transaction(
                    amount: Money(minorUnits: Int64(index + 1)), type: .expense, target: .uncategorised,
                    note: "bulk \(index)",
                    date: try CalendarDate(parsing: "2025-03-01"), sequence: UInt64(100 + index))
                return (spend.id, .transaction(spend))
            }
            let replaced = Transaction(
                id: ids[10], amount: Money(minorUnits: 999), type: .expense, target: .uncategorised, note: "replaced",
                date: try CalendarDate(parsing: "2025-02-10"), sequence: 7)
            big.append((ids[10], .transaction(replaced)))
            big.append(
                (
                    ids[10],
                    .transaction(
                        Transaction(
                            id: ids[10], amount: Money(minorUnits: 1000), type: .expense, target: .uncategorised,
                            note: "replaced twice",
                            date: try CalendarDate(parsing: "2025-02-10"), sequence: 7))
                ))
            try ledger.commit("bulk", puts: big, deletes: Array(ids[20..<30]))
            #expect(snapshot(ledger) == snapshot(try Ledger(vault: vault)), "after a large write")
            #expect(ledger.transactions.first { $0.id == ids[10] }?.note == "replaced twice")
            _ = try ledger.undo()
            #expect(snapshot(ledger) == snapshot(try Ledger(vault: vault)), "after undoing a large write")
        }
    }
}
