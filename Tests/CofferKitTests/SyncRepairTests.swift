import CofferTestSupport
import FinanceCore
import Foundation
import Testing
import VaultCrypto

@testable import CofferKit

/// Each rule that spans records, broken by two devices' concurrent writes, repaired by the
/// documented rule (Specs/sync-format.md §6), reported, and the same on both devices.
@Suite struct SyncRepairTests {
    let today = date("2026-11-24")

    func pair() throws -> SyncAttackTests.Pair {
        try SyncAttackTests.Pair(passphrase: "sync repair passphrase", today: today)
    }

    /// Both devices sync until neither publishes; returns every repair line reported.
    func settle(_ pair: SyncAttackTests.Pair) throws -> [String] {
        var repairs: [String] = []
        for _ in 0..<4 {
            let a = try SyncService.sync(pair.a), b = try SyncService.sync(pair.b)
            repairs += a.repairs + b.repairs
            if a.published.isEmpty && b.published.isEmpty { break }
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        #expect(
            try encoder.encode(ExportDocument(ledger: pair.a, only: nil))
                == encoder.encode(ExportDocument(ledger: pair.b, only: nil)), "both devices agree")
        return repairs
    }

    @Test func twoAccountsWithOneNameKeepBothUnderTwoNames() throws {
        let pair = try pair()
        _ = try pair.a.addAccount(name: "Pension", category: "Pensions", kind: .asset, today: today)
        _ = try pair.b.addAccount(name: "pension", category: "Pensions", kind: .asset, today: today)
        let repairs = try settle(pair)
        #expect(repairs.contains { $0.contains("now 'pension (2)'") || $0.contains("now 'Pension (2)'") }, "\(repairs)")
        #expect(pair.a.accounts.filter { $0.name.lowercased().hasPrefix("pension") }.count == 2)
    }

    @Test func twoInvoicesGivenOneNumberAreNumberedApart() throws {
        let pair = try pair()
        _ = try pair.a.addClient(name: "Acme")
        _ = try settle(pair)
        let item = [
            LineItem(description: "Work", quantity: Quantity(thousandths: 1000), unitPrice: Money(minorUnits: 100))
        ]
        _ = try pair.a.createInvoice(for: try pair.a.client(named: "Acme"), items: item, issued: today)
        _ = try pair.b.createInvoice(for: try pair.b.client(named: "Acme"), items: item, issued: today)
        let repairs = try settle(pair)
        #expect(pair.a.invoices.map(\.number).sorted() == [1, 2], "\(repairs)")
        #expect(repairs.contains { $0.contains("invoice number 1") })
        _ = try pair.a.createInvoice(for: try pair.a.client(named: "Acme"), items: item, issued: today)
        #expect(pair.a.invoices.map(\.number).max() == 3, "numbering goes on above both")
    }

    @Test func aCategoryDeletedWhileSpentInElsewhereComesBack() throws {
        let pair = try pair()
        _ = try pair.a.addCategory(name: "Pottery", type: .wants)
        _ = try settle(pair)
        try pair.a.deleteCategory(try pair.a.category(named: "Pottery"))
        try pair.b.spend(Money(minorUnits: 1250), in: try pair.b.category(named: "Pottery"), on: today)
        let repairs = try settle(pair)
        #expect(repairs.contains { $0.contains("it is back") }, "\(repairs)")
        #expect(pair.a.budgetCategories.contains { $0.name == "Pottery" })
        #expect(pair.a.transactions.contains { pair.a.label(of: $0) == "Pottery" })
    }

    @Test func aValueOnAnAccountClosedElsewhereReopensIt() throws {
        let pair = try pair()
        try pair.a.closeAccount(try pair.a.account(named: "Savings"), on: today)
        try pair.b.recordValue(of: try pair.b.account(named: "Savings"), amount: Money(minorUnits: 5), on: today)
        let repairs = try settle(pair)
        #expect(repairs.contains { $0.contains("open again") }, "\(repairs)")
        #expect(try pair.a.account(named: "Savings").closed == nil)
    }

    /// `coffer undo` of a change that came from the other device publishes the revert.
    @Test func undoingASyncedChangePublishesTheRevert() throws {
        let pair = try pair()
        try pair.a.recordValue(of: try pair.a.account(named: "Savings"), amount: Money(minorUnits: 4_000), on: today)
        _ = try settle(pair)
        #expect(pair.b.changes.last?.entry.summary.contains("Savings") == true)
        _ = try pair.b.undo()
        _ = try settle(pair)
        #expect(pair.a.updates.map(\.amount.minorUnits) == [100], "the laptop's value is gone on the laptop too")
    }
}
