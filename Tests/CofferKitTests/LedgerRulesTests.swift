import CofferTestSupport
import FinanceCore
import Foundation
import Testing
import VaultCrypto
import VaultStore

@testable import CofferKit

/// The rules that span records, without the binary: each refusal names what is wrong and
/// writes nothing.
@Suite struct LedgerRulesTests {
    let today = date("2026-11-22")

    /// Runs `body` on a new vault made the way `coffer init` makes one.
    func withLedger(_ body: (Ledger) throws -> Void) throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-rules-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try body(
            try Ledger.create(
                at: folder.appendingPathComponent("v.coffer"), passphrase: try .init("rules"),
                parameters: KDFProfile.interactive.parameters, currency: .gbp))
    }

    /// `body` must throw a CofferError with `code`, and leave the vault's records as they were.
    func refused(_ ledger: Ledger, _ code: CofferError.Code, _ what: String, _ body: () throws -> Void) {
        let before = ledger.vault.records.map { [$0.id.hex] + [$0.payload.base64EncodedString()] }
        do {
            try body()
            Issue.record("\(what) was not refused")
        } catch let error as CofferError {
            #expect(error.code == code, "\(what): \(error.message)")
        } catch {
            Issue.record("\(what): \(error)")
        }
        #expect(
            ledger.vault.records.map { [$0.id.hex] + [$0.payload.base64EncodedString()] } == before,
            "\(what) wrote nothing")
    }

    @Test func namesAreUniqueCaseInsensitively() throws {
        try withLedger { ledger in
            try ledger.addAccount(name: "Savings", category: "Savings", kind: .asset, today: today)
            refused(ledger, .alreadyExists, "a second account") {
                try ledger.addAccount(name: "SAVINGS", category: "Cash", kind: .asset, today: today)
            }
            try ledger.addAccount(name: "Current", category: "Cash", kind: .asset, today: today)
            refused(ledger, .alreadyExists, "a rename onto another account") {
                try ledger.renameAccount(try ledger.account(named: "Current"), to: "savings")
            }
            try ledger.addClient(name: "Acme")
            refused(ledger, .alreadyExists, "a second client") { try ledger.addClient(name: "acme") }
            try ledger.addGoal(name: "Holiday")
            refused(ledger, .alreadyExists, "a second goal") { try ledger.addGoal(name: "holiday") }
            try ledger.addIncomeSource(name: "Salary", amount: Money(minorUnits: 100), frequency: .monthly)
            refused(ledger, .alreadyExists, "a second income source") {
                try ledger.addIncomeSource(name: "SALARY", amount: Money(minorUnits: 1), frequency: .monthly)
            }
            refused(ledger, .alreadyExists, "a category twice in one type") {
                try ledger.addCategory(name: "groceries", type: .needs)
            }
            try ledger.addCategory(name: "Groceries", type: .wants)  // another type may share the name
        }
    }

    @Test func namesMatchExactlyOrByAUniquePrefix() throws {
        try withLedger { ledger in
            try ledger.addAccount(name: "Marcus Savings", category: "Savings", kind: .asset, today: today)
            try ledger.addAccount(name: "Marcus ISA", category: "Investments", kind: .asset, today: today)
            #expect(try ledger.account(named: "marcus s").name == "Marcus Savings")
            do {
                _ = try ledger.account(named: "marcus")
                Issue.record("an ambiguous prefix must not pick one")
            } catch let error as CofferError {
                #expect(error.code == .ambiguous && error.candidates.sorted() == ["Marcus ISA", "Marcus Savings"])
            }
            do {
                _ = try ledger.account(named: "Monzo")
                Issue.record("no match must not pick one")
            } catch let error as CofferError {
                #expect(error.code == .noMatch && error.kind == "account" && error.candidates.count == 2)
            }
        }
    }

    @Test func guardsKeepRecordsFromPointingAtNothing() throws {
        try withLedger { ledger in
            let client = try ledger.addClient(name: "Acme")
            let item = LineItem(
                description: "Work", quantity: try Quantity(parsing: "1"), unitPrice: Money(minorUnits: 500))
            try ledger.createInvoice(for: client, items: [item], issued: today)
            refused(ledger, .inUse, "removing a client with invoices") { try ledger.removeClient(client) }
            let goal = try ledger.addGoal(name: "Holiday")
            try ledger.save(Money(minorUnits: 100), towards: goal, on: today)
            refused(ledger, .inUse, "removing a goal with contributions") { try ledger.removeGoal(goal) }
            let account = try ledger.addAccount(
                name: "Old", category: "Cash", kind: .asset, value: (Money(minorUnits: 5), today), today: today)
            try ledger.closeAccount(account, on: date("2026-11-01"))
            refused(ledger, .closed, "a value on a closed account") {
                try ledger.recordValue(of: try ledger.account(named: "Old"), amount: Money(minorUnits: 1), on: today)
            }
            refused(ledger, .closed, "closing a closed account") {
                try ledger.closeAccount(try ledger.account(named: "Old"), on: today)
            }
            refused(ledger, .invalidInput, "spending nothing") {
                try ledger.spend(.zero, in: try ledger.category(named: "Groceries"), on: today)
            }
            refused(ledger, .invalidInput, "a due date before the issue date") {
                try ledger.createInvoice(for: client, items: [item], issued: today, due: .on(date("2026-11-01")))
            }
            let salary = try ledger.addIncomeSource(name: "Salary", amount: Money(minorUnits: 100), frequency: .monthly)
            let income = try ledger.earn(Money(minorUnits: 100), from: salary, on: today)
            refused(ledger, .invalidInput, "a category on income") {
                try ledger.editTransaction(income, .init(category: try ledger.category(named: "Groceries")))
            }
        }
    }

    @Test func deletingAnAccountTakesItsValuesInOneChange() throws {
        try withLedger { ledger in
            let account = try ledger.addAccount(
                name: "Savings", category: "Savings", kind: .asset, value: (Money(minorUnits: 5), today), today: today)
            try ledger.recordValue(of: account, amount: Money(minorUnits: 7), on: today)
            #expect(ledger.updates(of: account).count == 2)
            try ledger.deleteAccount(account)
            #expect(ledger.accounts.isEmpty && ledger.updates.isEmpty)
            try ledger.undo()
            #expect(ledger.updates(of: try ledger.account(named: "Savings")).count == 2)
        }
    }

    @Test func invoiceNumbersAreNeverReused() throws {
        try withLedger { ledger in
            let client = try ledger.addClient(name: "Acme")
            let item = LineItem(
                description: "Work", quantity: try Quantity(parsing: "1"), unitPrice: Money(minorUnits: 500))
            #expect(try ledger.createInvoice(for: client, items: [item], issued: today).number == 1)
            try ledger.undo()
            #expect(ledger.invoices.isEmpty)
            #expect(
                try ledger.createInvoice(for: client, items: [item], issued: today).number == 2,
                "undo never frees a number")
        }
    }

    @Test func readingNeverWritesAndDefaultCategoriesArriveWithTheFirstChange() throws {
        try withScratchVault { vault in
            let ledger = try Ledger(vault: vault)  // a vault from before budgets: no categories stored
            let counter = vault.commitCounter
            let groceries = try ledger.category(named: "Groceries")
            _ = try ledger.budget.summary(for: BudgetMonth(containing: today))
            #expect(vault.commitCounter == counter, "looking up and summarising wrote nothing")
            try ledger.spend(Money(minorUnits: 250), in: groceries, on: today)
            let reread = try Ledger(vault: vault)
            #expect(
                reread.budgetCategories.contains { $0.id == groceries.id },
                "the categories were written with the first change")
            #expect(reread.label(of: reread.transactions[0]) == "Groceries")
            try reread.undo()
            #expect(
                try Ledger(vault: vault).budgetCategories.map(\.id) == reread.budgetCategories.map(\.id),
                "undo keeps the setup")
        }
    }
}
