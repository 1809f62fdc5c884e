import FinanceCore
import Foundation
import Testing
import VaultCrypto
import VaultStore

@testable import CofferKit

/// Where records are stored (Specs/vault-format.md §8.5): the numbers name where records of
/// existing vaults already are, so they are pinned here, and a record that changes group (a date
/// edited into another month, a flow added) moves with its write.
@Suite struct RecordGroupingTests {
    let november = try! CalendarDate(parsing: "2026-11-24")
    var novemberMonth: UInt64 { UInt64(2026 * 12 + 10) }

    func spend(on date: CalendarDate, flow: AccountFlow? = nil) -> Transaction {
        Transaction(
            amount: Money(minorUnits: 320), type: .expense, target: .uncategorised, note: "flat white", date: date,
            sequence: 1, flow: flow)
    }

    @Test func groupsArePinned() throws {
        let account = Account(name: "Current", category: "Cash", kind: .asset, created: november)
        #expect(RecordGrouping.group(of: .account(account)).rawValue == 1 << 56)
        #expect(RecordGrouping.group(of: .transaction(spend(on: november))).rawValue == 4 << 56 | novemberMonth)
        let update = ValueUpdate(accountID: account.id, date: november, amount: Money(minorUnits: 100), sequence: 1)
        #expect(RecordGrouping.group(of: .update(update)).rawValue == 3 << 56 | novemberMonth)
        // A flow makes the transaction part of an account's value history: it goes with the values.
        let moving = spend(on: november, flow: AccountFlow(from: account.id, order: 2))
        #expect(RecordGrouping.group(of: .transaction(moving)).rawValue == 3 << 56 | novemberMonth)
        #expect(RecordGrouping.monthOf(timestamp: 1_795_564_800) == 2026 * 12 + 10, "2026-11-24T00:00:00Z")
        #expect(RecordGrouping.monthOf(timestamp: -1) == 1969 * 12 + 11, "the second before 1970")
        #expect(RecordGrouping.monthOf(timestamp: .min) == 1 * 12, "a hostile time is clamped, never a crash")
        #expect(RecordGrouping.monthOf(timestamp: .max) == 9999 * 12 + 11)
        let unreadable: [UInt8] = [0xFF, 0x01]
        #expect(
            unreadable.withUnsafeBytes { RecordGrouping.grouping(.random(), $0) }.rawValue == 1 << 56,
            "an unreadable payload goes with the setup")
    }

    @Test func aRecordMovesWhenItsGroupChanges() throws {
        try withScratchVault { vault in
            let ledger = try Ledger(vault: vault)
            let account = Account(name: "Current", category: "Cash", kind: .asset, created: november)
            try ledger.commit("add", puts: [(account.id, .account(account))])
            var transaction = spend(on: november)
            try ledger.commit("spend", puts: [(transaction.id, .transaction(transaction))])
            let id = RecordID(uuid: transaction.id)
            let before = try #require(vault.pageLocators(of: id))
            transaction.flow = AccountFlow(from: account.id, order: 2)
            try ledger.commit("from the current account", puts: [(transaction.id, .transaction(transaction))])
            let after = try #require(vault.pageLocators(of: id))
            #expect(after.index != before.index, "moved to the values of its month")
            transaction.date = try CalendarDate(parsing: "2026-10-31")
            try ledger.commit("backdated", puts: [(transaction.id, .transaction(transaction))])
            #expect(try #require(vault.pageLocators(of: id)).index != after.index)
            #expect(try vault.verify().recordCount == vault.recordCount)
            #expect(try Ledger(vault: vault).transactions.first { $0.id == transaction.id }?.flow != nil)
        }
    }
}
