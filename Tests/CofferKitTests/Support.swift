import FinanceCore
import Foundation
import VaultCrypto
import VaultStore

@testable import CofferKit

/// Runs `body` on a new vault (interactive Argon2id) in a folder of its own, removed afterwards.
func withScratchVault(_ body: (Vault) throws -> Void) throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-scratch-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    try body(
        try Vault.create(
            at: folder.appendingPathComponent("v.coffer"), passphrase: try Passphrase("scratch"),
            parameters: KDFProfile.interactive.parameters))
}

/// Every view of a ledger as text: two ledgers with equal snapshots hold the same records.
/// The invoice counter can be left out: it moves outside the change log, so undo keeps it.
func snapshot(_ ledger: Ledger, includingCounter: Bool = true) -> String {
    var text = ""
    dump(
        (
            ledger.backupTargets.values.map(\.path).sorted(), ledger.settings, ledger.settingsID, ledger.accounts,
            ledger.updates, ledger.categoryRates.sorted { $0.key.uuidString < $1.key.uuidString }.map(\.value),
            ledger.changes.map(\.entry), ledger.budgetCategories, ledger.incomeSources, ledger.transactions,
            ledger.goals, ledger.clients,
            ledger.invoices, includingCounter ? ledger.invoiceCounter?.counter : nil, ledger.ruleSets,
            ledger.notes
        ), to: &text)
    return text
}
