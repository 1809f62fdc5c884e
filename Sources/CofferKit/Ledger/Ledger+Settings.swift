import FinanceCore
import Foundation
import VaultCrypto
import VaultStore

/// Making a vault, its settings, and where its backups go.
extension Ledger {
    /// Creates a vault at `url` with its settings and the budget's default categories, outside
    /// the change log (there is nothing before them to undo to).
    public static func create(
        at url: URL, passphrase: Passphrase, parameters: Argon2idParameters, currency: Currency,
        guard rollbackGuard: RollbackGuard? = nil
    ) throws -> Ledger {
        let vault = try Vault.create(at: url, passphrase: passphrase, parameters: parameters, guard: rollbackGuard)
        let ledger = try Ledger(vault: vault)
        try ledger.writeWithoutHistory(
            [(RecordIDs.next(), .settings(VaultSettings(currency: currency)))]
                + BudgetCategory.defaults().map { ($0.id, .budgetCategory($0)) })
        return ledger
    }

    /// The vault's settings, or the defaults a vault without a settings record has.
    public var currentSettings: VaultSettings { settings ?? VaultSettings(currency: currency) }

    /// Whether unpaid sent invoices count in net worth as "Invoices receivable".
    public func setIncludeReceivables(_ include: Bool) throws {
        var settings = currentSettings
        settings.includeReceivables = include
        try commit(
            "Turned invoices receivable \(include ? "on" : "off")",
            puts: [(settingsID ?? RecordIDs.next(), .settings(settings))])
    }

    // MARK: Backup targets

    /// Saves a folder as a default backup destination (by its standardised path).
    public func addBackupTarget(_ folder: URL) throws -> String {
        let path = folder.standardizedFileURL.path
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw CofferError(.invalidInput, "\(path) is not a folder.")
        }
        guard !backupTargets.values.contains(where: { $0.path == path }) else {
            throw CofferError(.alreadyExists, "\(path) is already a backup target.", kind: "backup target")
        }
        try commit("Added backup target \(path)", puts: [(RecordIDs.next(), .backupTarget(BackupTarget(path: path)))])
        return path
    }

    /// Stops backing up to a folder; its archives stay where they are.
    public func removeBackupTarget(_ folder: URL) throws -> String {
        let path = folder.standardizedFileURL.path
        guard let (id, _) = backupTargets.first(where: { $0.value.path == path }) else {
            throw CofferError(.noMatch, "\(path) is not a backup target.", kind: "backup target")
        }
        try commit("Removed backup target \(path)", deletes: [id])
        return path
    }

    /// Saved backup destinations, sorted.
    public var backupTargetPaths: [String] { backupTargets.values.map(\.path).sorted() }
}
