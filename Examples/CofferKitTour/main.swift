// A tour of CofferKit as another front end (a phone app, say) would use it: no argument
// parser, no terminal, no CLI. It makes a vault, adds accounts and values, spends, invoices,
// reads the overview, undoes, backs up and restores, and checks the restored vault reports the
// same net worth. Run it: swift run CofferKitTour [FOLDER]   (default: a new temporary folder)
import CofferKit
import FinanceCore
import Foundation
import VaultCrypto
import VaultStore

/// Stops the tour with a message and a failing status: the test that runs it reads both.
func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("tour failed: \(message)\n".utf8))
    exit(1)
}

func tour(in folder: URL) throws {
    let today = try CalendarDate(parsing: "2026-11-22")
    let passphrase = try Passphrase("a tour of the application layer")

    // 1. A new vault: settings and the budget's default categories come with it.
    let ledger = try Ledger.create(
        at: folder.appendingPathComponent("tour.coffer"), passphrase: passphrase,
        parameters: KDFProfile.interactive.parameters, currency: .gbp)

    // 2. Accounts and values; every change is one entry in the change log.
    let savings = try ledger.addAccount(
        name: "Marcus Savings", category: "Savings", kind: .asset,
        value: (try ledger.currency.parse("1,200"), today.adding(months: -1)), today: today)
    try ledger.addAccount(
        name: "Mortgage", category: "Mortgage", kind: .liability, value: (try ledger.currency.parse("1000"), today),
        today: today)
    try ledger.recordValue(of: savings, amount: try ledger.currency.parse("1,250.50"), on: today, note: "statement")
    try ledger.setGrowthRate(try GrowthRate(parsing: "4%"), for: "Savings")

    // 3. The budget: income, spending (the category's type decides needs/wants/savings), a goal.
    let salary = try ledger.addIncomeSource(
        name: "Salary", amount: try ledger.currency.parse("2500"), frequency: .monthly)
    try ledger.earn(try ledger.currency.parse("2500"), from: salary, on: today)
    try ledger.spend(
        try ledger.currency.parse("12.50"), in: try ledger.category(named: "groc"), on: today, note: "Market")
    try ledger.save(try ledger.currency.parse("100"), towards: try ledger.addGoal(name: "Holiday"), on: today)

    // 4. An invoice, sent and part paid: receivables count in net worth by default.
    let client = try ledger.addClient(name: "Acme Ltd", termsDays: 14)
    let item = LineItem(
        description: "Design", quantity: try Quantity(parsing: "2"), unitPrice: try ledger.currency.parse("150"))
    let invoice = try ledger.createInvoice(for: client, items: [item], issued: today.adding(days: -10), send: true)
    try ledger.recordPayment(on: invoice, amount: try ledger.currency.parse("100"), date: today)

    // 5. The overview's figures: one definition of net worth for every report.
    let totals = try ledger.netWorth.totals(on: today)
    let month = try ledger.budget.summary(for: BudgetMonth(containing: today))
    print(
        "Net worth \(ledger.currency.format(totals.netWorth)) (receivable \(ledger.currency.format(totals.receivable)))"
    )
    print("Budget: \(ledger.currency.format(month.remaining)) remaining in \(month.month.title)")
    guard totals.netWorth == (try ledger.currency.parse("450.50")) else { fail("net worth is \(totals.netWorth)") }

    // 6. Undo: a mistaken spend goes back exactly.
    let mistake = try ledger.spend(
        try ledger.currency.parse("999"), in: try ledger.category(named: "Dining Out"), on: today)
    let undone = try ledger.undo()
    guard undone?.summary.contains("999") == true, !ledger.transactions.contains(where: { $0.id == mistake.id }) else {
        fail("undo")
    }
    print("Undone: \(undone?.summary ?? "")")

    // 7. A backup, read back and verified before it counts.
    let backups = folder.appendingPathComponent("backups")
    try FileManager.default.createDirectory(at: backups, withIntermediateDirectories: true)
    let outcomes = try BackupService.create(
        ledger, to: [backups], appVersion: "tour", today: today, acceptRollback: false
    ) { _ in }
    guard case .written(let archive, let records, _) = outcomes.first?.outcome else { fail("backup: \(outcomes)") }
    print("Backed up \(records) records to \(archive.lastPathComponent)")

    // 8. Restore on a "new machine": the archive alone and the passphrase, one key derivation.
    let found = try BackupService.inspect(archive, vaultURL: nil)
    let restoredURL = folder.appendingPathComponent("restored.coffer")
    let opened = try BackupService.restore(
        BackupService.unlock(found, credential: .passphrase(passphrase)), to: restoredURL, replacing: false,
        keepingOldAt: nil, guard: nil
    ) { _ in }
    let restored = try Ledger(vault: Vault.open(at: restoredURL, with: .passphrase(passphrase)))
    let restoredTotals = try restored.netWorth.totals(on: today)
    guard restoredTotals == totals, restored.transactions.count == ledger.transactions.count,
        restored.changes.count == ledger.changes.count
    else {
        fail("the restored vault differs")
    }
    print(
        "Restored \(opened.contents.recordCount) records; net worth \(restored.currency.format(restoredTotals.netWorth)), as before"
    )
}

let folder =
    CommandLine.arguments.dropFirst().first.map { URL(fileURLWithPath: $0) }
    ?? FileManager.default.temporaryDirectory.appendingPathComponent("coffer-kit-tour-\(UUID().uuidString)")
do {
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { if CommandLine.arguments.count < 2 { try? FileManager.default.removeItem(at: folder) } }
    try tour(in: folder)
    print("Tour complete.")
} catch {
    fail("\((error as? LocalizedError)?.errorDescription ?? "\(error)")")
}
