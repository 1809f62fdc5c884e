import CofferTestSupport
import FinanceCore
import Foundation
import Testing
import VaultStore

@testable import CofferKit

/// Every kind of change CofferKit makes is undone exactly: the ledger (and a fresh read of the
/// vault) after `undo` equals the ledger before the change.
@Suite struct LedgerUndoTests {
    /// Undo twice, redo twice: the changes come back in order; a new change forgets what could
    /// be redone; a redo that would overwrite a change made since the undo is refused.
    @Test func redoTakesBackUndosInOrderUntilANewChange() throws {
        try withScratchVault { vault in
            let ledger = try Ledger(vault: vault)
            try ledger.writeWithoutHistory([(UUID(), .settings(VaultSettings(currency: .gbp)))])
            let today = date("2026-11-22")
            try ledger.addAccount(name: "Savings", category: "Savings", kind: .asset, today: today)
            let empty = snapshot(ledger)
            try ledger.recordValue(of: try ledger.account(named: "Savings"), amount: Money(minorUnits: 100), on: today)
            let one = snapshot(ledger)
            try ledger.recordValue(of: try ledger.account(named: "Savings"), amount: Money(minorUnits: 200), on: today)
            let two = snapshot(ledger)
            try ledger.undo()
            try ledger.undo()
            #expect(snapshot(ledger) == empty)
            #expect(ledger.undoneChanges.count == 2)
            try ledger.redo()
            #expect(snapshot(ledger) == one)
            try ledger.redo()
            #expect(snapshot(ledger) == two)
            #expect(try ledger.redo() == nil)

            // A new change after an undo: nothing to redo any more, in memory and read back.
            try ledger.undo()
            try ledger.addCategory(name: "Pottery", type: .wants)
            #expect(ledger.undoneChanges.isEmpty)
            #expect(try Ledger(vault: vault).undoneChanges.isEmpty)
            #expect(try ledger.redo() == nil)

            // A record the undone change touched changed since (as a sync would bring it): refused.
            try ledger.undo()
            let planted = try #require(ledger.undoneChanges.last?.undone.after.first)
            let category = BudgetCategory(
                id: planted.recordID, name: "Ceramics", type: .wants, sortOrder: 99, isDefault: false)
            try ledger.writeWithoutHistory([(planted.recordID, .budgetCategory(category))])
            let beforeRefusal = snapshot(ledger)
            #expect(throws: CofferError.self) { try ledger.redo() }
            #expect(snapshot(ledger) == beforeRefusal, "a refused redo changes nothing")
        }
    }

    @Test func everyChangeKindUndoesExactly() throws {
        try withScratchVault { vault in
            let ledger = try Ledger(vault: vault)
            try ledger.writeWithoutHistory([(UUID(), .settings(VaultSettings(currency: .gbp)))])
            let today = date("2026-11-22")
            var checked: [String] = []
            /// Runs `change`, checks that it wrote something, undoes it, checks the state is as
            /// before (in memory and read back), then redoes it and checks the state is as after
            /// the change (with its log entry), to build on.
            func undoable(_ name: String, counterMoves: Bool = false, _ change: () throws -> Void) throws {
                let before = snapshot(ledger, includingCounter: !counterMoves)
                let changesBefore = ledger.changes.count
                try change()
                let after = snapshot(ledger, includingCounter: !counterMoves)
                #expect(ledger.changes.count == changesBefore + 1, "\(name) writes one change-log entry")
                #expect(after != before, "\(name) changed something")
                let undone = try ledger.undo()
                #expect(undone != nil)
                #expect(snapshot(ledger, includingCounter: !counterMoves) == before, "undoing \(name)")
                #expect(
                    snapshot(try Ledger(vault: vault), includingCounter: !counterMoves) == before,
                    "undoing \(name), read back")
                #expect(try ledger.redo()?.summary == undone?.summary)
                #expect(snapshot(ledger, includingCounter: !counterMoves) == after, "redoing \(name)")
                #expect(
                    snapshot(try Ledger(vault: vault), includingCounter: !counterMoves) == after,
                    "redoing \(name), read back")
                #expect(try ledger.redo() == nil, "one undo, one redo")
                checked.append(name)
            }
            try undoable("add account") {
                try ledger.addAccount(
                    name: "Savings", category: "Savings", kind: .asset, value: (Money(minorUnits: 100_000), today),
                    today: today)
            }
            try undoable("add liability") {
                try ledger.addAccount(name: "Loan", category: "Loans", kind: .liability, today: today)
            }
            try undoable("record a value") {
                try ledger.recordValue(
                    of: try ledger.account(named: "sav"), amount: Money(minorUnits: 120_000), on: today)
            }
            try undoable("rename an account") {
                try ledger.renameAccount(try ledger.account(named: "Loan"), to: "Car loan")
            }
            try undoable("close an account") { try ledger.closeAccount(try ledger.account(named: "Car"), on: today) }
            try undoable("reopen an account") { try ledger.reopenAccount(try ledger.account(named: "Car")) }
            try undoable("set a category's growth") {
                try ledger.setGrowthRate(GrowthRate(basisPoints: 300), for: "Savings")
            }
            try undoable("set an account's growth") {
                try ledger.setGrowthRate(GrowthRate(basisPoints: 500), for: "Car loan")
            }
            try undoable("delete an account with its values") {
                try ledger.deleteAccount(try ledger.account(named: "Car"))
            }
            try undoable("add an income source") {
                try ledger.addIncomeSource(name: "Salary", amount: Money(minorUnits: 250_000), frequency: .monthly)
            }
            try undoable("edit an income source") {
                var source = try ledger.incomeSource(named: "Salary")
                source.amount = Money(minorUnits: 260_000)
                try ledger.saveIncomeSource(source)
            }
            try undoable("add a category") { try ledger.addCategory(name: "Pottery", type: .wants) }
            try undoable("rename a category") {
                try ledger.renameCategory(try ledger.category(named: "Pottery"), to: "Ceramics")
            }
            try undoable("hide a category") {
                try ledger.setCategoryHidden(try ledger.category(named: "Ceramics"), true)
            }
            try undoable("move a category") { try ledger.moveCategory(try ledger.category(named: "Ceramics"), to: 1) }
            try undoable("add a goal") { try ledger.addGoal(name: "Holiday", target: Money(minorUnits: 100_000)) }
            try undoable("edit a goal") {
                var goal = try ledger.goal(named: "Holiday")
                goal.targetDate = date("2027-06-01")
                try ledger.saveGoal(goal)
            }
            try undoable("spend") {
                try ledger.spend(
                    Money(minorUnits: 1_250), in: try ledger.category(named: "Groceries"), on: today, note: "Shop")
            }
            try undoable("earn") {
                try ledger.earn(Money(minorUnits: 250_000), from: try ledger.incomeSource(named: "Salary"), on: today)
            }
            try undoable("save") {
                try ledger.save(Money(minorUnits: 5_000), towards: try ledger.goal(named: "Holiday"), on: today)
            }
            let spending = try #require(ledger.transactions.first { $0.note == "Shop" })
            try undoable("edit a transaction") {
                try ledger.editTransaction(
                    spending, .init(amount: Money(minorUnits: 1_300), category: try ledger.category(named: "Ceramics")))
            }
            try undoable("delete a category, moving its transactions") {
                try ledger.deleteCategory(try ledger.category(named: "Ceramics"))
            }
            try undoable("delete a transaction") {
                try ledger.deleteTransaction(try #require(ledger.transactions.first { $0.type == .income }))
            }
            try undoable("remove an income source") {
                try ledger.removeIncomeSource(try ledger.incomeSource(named: "Salary"))
            }
            try undoable("add a client") { try ledger.addClient(name: "Acme", termsDays: 14) }
            try undoable("edit a client") {
                var client = try ledger.client(named: "Acme")
                client.email = "ap@acme.example"
                try ledger.saveClient(client)
            }
            let item = LineItem(
                description: "Design", quantity: try Quantity(parsing: "2"), unitPrice: Money(minorUnits: 15_000))
            try undoable("create an invoice", counterMoves: true) {
                try ledger.createInvoice(for: try ledger.client(named: "Acme"), items: [item], issued: today)
            }
            try undoable("send an invoice") { try ledger.sendInvoice(try ledger.invoice("INV-0001"), on: today) }
            try undoable("record a payment") {
                try ledger.recordPayment(on: try ledger.invoice("1"), amount: Money(minorUnits: 10_000), date: today)
            }
            try undoable("create a second invoice", counterMoves: true) {
                try ledger.createInvoice(for: try ledger.client(named: "Acme"), items: [item], issued: today)
            }
            try undoable("void an invoice") { try ledger.voidInvoice(try #require(ledger.invoices.last), on: today) }
            try undoable("turn receivables off") { try ledger.setIncludeReceivables(false) }
            try undoable("add a rule") {
                try ledger.addRule(
                    to: "Bank", .init(pattern: "TESCO", target: .category(try ledger.category(named: "Groceries").id)))
            }
            try undoable("add a second rule") {
                _ = try ledger.addRule(
                    to: "Bank",
                    .init(
                        pattern: "SAINSBURY", target: .category(try ledger.category(named: "Groceries").id),
                        field: .payee, minimum: Money(minorUnits: 100), maximum: Money(minorUnits: 9_000)))
            }
            try undoable("remove a rule") { try ledger.removeRule(1, from: try ledger.ruleSet(named: "Bank")) }
            try undoable("remove a rule set") { try ledger.removeRuleSet(try ledger.ruleSet(named: "Bank")) }
            let folder = vault.url.deletingLastPathComponent()
            try undoable("add a backup target") { _ = try ledger.addBackupTarget(folder) }
            try undoable("remove a backup target") { _ = try ledger.removeBackupTarget(folder) }
            try undoable("add a second goal") { try ledger.addGoal(name: "Spare") }
            try undoable("remove a goal with no contributions") {
                try ledger.removeGoal(try ledger.goal(named: "Spare"))
            }
            try undoable("add a note attached to a client") {
                try ledger.addNote(
                    title: "Acme contract", body: "Signed copy in the blue folder.",
                    attachment: Note.Attachment(kind: .client, id: try ledger.client(named: "Acme").id), today: today)
            }
            try undoable("edit a note's body") {
                var note = try ledger.note(named: "Acm")
                note.body += "\nClause 4: 30 days."
                try ledger.saveNote(note, now: Date(timeIntervalSince1970: 1_800_000_000))
            }
            try undoable("attach a note to an account instead") {
                var note = try ledger.note(named: "Acme contract")
                note.attachment = Note.Attachment(kind: .account, id: try ledger.account(named: "Savings").id)
                try ledger.saveNote(note, now: Date(timeIntervalSince1970: 1_800_000_100))
            }
            try undoable("remove a note") { try ledger.removeNote(try ledger.note(named: "Acme contract")) }
            #expect(checked.count == 44)
        }
    }
}
