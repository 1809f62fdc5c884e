import Foundation
import VaultCrypto
import VaultStore

/// Key rotation through the folder: an epoch per key generation (Specs/sync-format.md §9).
extension SyncService {
    /// What `removeDevice` and `rotate` did.
    public struct Rotation: Sendable {
        /// The removed device's name (nil for a rotation that removes nobody).
        public let removed: String?
        /// The key generation now in force.
        public let generation: UInt32
        public let report: SyncReport
    }

    /// Shuts a device out: syncs, replaces the vault's master key (a new key generation, every
    /// record re-encrypted) and starts the folder's new epoch under it. The removed device holds
    /// only the old generation's keys: it can neither read nor sign anything published from now
    /// on. Needs the passphrase (the master key); the other devices take on the new keys at their
    /// next sync, with the passphrase (`adoptNewKeys`).
    public static func removeDevice(named name: String, from ledger: Ledger, now: Date = Date()) throws -> Rotation {
        guard let state = ledger.syncState?.state else {
            throw CofferError(.noMatch, "This vault has no sync folder yet.", kind: "sync folder")
        }
        let others = state.devices.sorted { $0.key < $1.key }.map { (id: $0.key, name: $0.value.name) }
        let device = try Ledger.match(name, among: others, name: \.name, kind: "device")
        if device.id == state.device || name.caseInsensitiveCompare(state.deviceName) == .orderedSame {
            throw CofferError(.invalidInput, "'\(name)' is this device; remove it from another one.", kind: "device")
        }
        return try rotate(ledger, removing: device.name, now: now)
    }

    /// Starts a new epoch under a new master key without removing anyone: the folder's old
    /// change files are deleted by their authors as each device moves (compaction).
    public static func rotate(_ ledger: Ledger, removing removed: String? = nil, now: Date = Date()) throws -> Rotation
    {
        guard ledger.vault.canChangeKeys else {
            throw CofferError(.wrongCredential, "Replacing the vault's keys needs the passphrase, not a session.")
        }
        _ = try sync(ledger, now: now)
        let changed = try ledger.vault.rekey()
        let report = try sync(ledger, now: now)
        return Rotation(removed: removed, generation: changed.generation, report: report)
    }

    /// Takes on keys another device replaced: builds this copy afresh from the folder's new
    /// epoch (as `join` does, with the passphrase), merges this copy's own changes into it as a
    /// duplicated vault file is merged (`mergeCopy`: nothing this copy wrote is lost, both sides
    /// of a record both changed are kept), publishes them, and puts the result in place of the
    /// vault file (the old one kept beside it as `keptAt`). Returns the new copy, open.
    public static func adoptNewKeys(
        _ ledger: Ledger, credential: Credential, keptAt: URL, guard rollbackGuard: RollbackGuard? = nil,
        now: Date = Date()
    ) throws -> (ledger: Ledger, report: SyncReport, merged: CopyMergeReport) {
        guard let state = ledger.syncState?.state else {
            throw CofferError(.noMatch, "This vault has no sync folder yet.", kind: "sync folder")
        }
        let folder = URL(fileURLWithPath: state.folder)
        let url = ledger.vault.url
        let scratch = url.deletingLastPathComponent()
            .appendingPathComponent(".\(url.lastPathComponent).adopting-\(SecureRandom.bytes(count: 6).hexString)")
        defer {
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: scratch.path + suffix) }
        }
        var (fresh, report) = try join(
            folder: folder, vault: scratch, credential: credential, deviceName: state.deviceName,
            trusting: SyncKeys(ledger.vault.backupKeys), guard: nil, now: now)
        let merged = try mergeCopy(fresh, copy: ledger, name: "this device's copy before the new keys", now: now)
        let published = try sync(fresh, now: now)
        report.published += published.published
        report.repairs += published.repairs
        // The merged copy goes into place under the vault's own path, built aside and checked
        // there; the old file is kept (hard link) until it is.
        let unlocked = try Vault.unlockArchivedHeader(
            fresh.vault.backupKeys.headerBytes, credential: credential, now: now)
        let records = fresh.vault.records.map { ($0.id, $0.payload) }
        let vault = try Vault.restore(
            at: url, unlocked: unlocked, records: records, grouping: RecordGrouping.grouping, replacing: true,
            keepingOldAt: keptAt, guard: rollbackGuard)
        removeFiles(of: state.device, before: fresh.vault.keyGeneration, in: SyncFolder(url: folder, epoch: 0))
        return (try Ledger(vault: vault), report, merged)
    }

    /// Deletes a device's own files of epochs before `epoch` (only its author ever does): the
    /// new epoch holds everything in them, so no device needs them once it has moved.
    static func removeFiles(of device: SyncDeviceID, before epoch: UInt32, in folder: SyncFolder) {
        let directory = folder.device(device)
        guard let listing = try? SyncFolder(url: folder.url, epoch: epoch).list() else { return }
        let old =
            listing.otherEpochs.filter { $0.key < epoch }.flatMap { $0.value[device] ?? [] }
            + (listing.enrolments[device] ?? [:]).filter { $0.key < epoch }.map(\.value)
        for file in old { try? FileManager.default.removeItem(at: file) }
        if (try? FileManager.default.contentsOfDirectory(atPath: directory.path))?.isEmpty == true {
            try? FileManager.default.removeItem(at: directory)
        }
    }
}
