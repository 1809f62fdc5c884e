import Foundation
import GRDB
import VaultCrypto

/// What the backup module needs from a vault's key hierarchy, and nothing more: the header
/// (whose passphrase slot lets a fresh machine re-derive everything from the passphrase), the
/// backup subkey, the vault's signing key and the history of its signing keys.
public struct BackupKeys: Sendable {
    public let vaultID: VaultID
    /// The vault header as stored: format, vault id, key slots, key history, MAC, checksum.
    public let headerBytes: [UInt8]
    public let backupKey: SymmetricKey
    public let signingKey: SigningKey
    /// Every generation of the vault's signing key up to this one, oldest first.
    public let keyHistory: [KeyGeneration]
}

/// An archived vault header, unlocked once (`Vault.unlockArchivedHeader(_:credential:now:)`):
/// the archive's keys for checking and opening it, and, when a passphrase or recovery key
/// unlocked it, the master key for rebuilding the vault without deriving it again. The keys
/// stay in secure memory, wiped when the last copy of this value is released.
public struct ArchiveUnlock: Sendable {
    /// Enough to check the archive's signature and open it.
    public let backupKeys: BackupKeys
    let header: VaultHeader
    let keys: UnlockedKeys

    /// Whether `Vault.restore(at:unlocked:…)` can build a vault from this: only the passphrase
    /// or recovery key gives the master key; a session never holds it.
    public var canRestore: Bool { keys.master != nil }
}

/// Archived headers may ask for at most this much Argon2id work before anything has proved the
/// archive genuine: exactly the most Coffer writes, the "sensitive" profile (4 passes, 1 GiB).
let archiveArgon2Ceiling = (opsLimit: UInt64(4), memLimit: UInt64(1) << 30)

extension Vault {
    /// Every record, read afresh from the file and checked as a whole open checks them (commit
    /// record, every index, every page), handed to `body` one at a time in no particular order
    /// (the payload valid only during the call) and kept nowhere: how an archive reads a vault
    /// of millions of records in the memory of three batches of pages, whatever part of it this
    /// open read. The file must still be at the commit this open read. A format 1 or 2 file,
    /// always read whole, hands over what this open holds. From pages, `body` is called on
    /// another thread (one record after another, in order, never after this returns).
    public func forEachRecord(_ body: (RecordID, UnsafeRawBufferPointer) -> Void) throws {
        guard state.paged != nil else {
            return withPayloads { view in
                for index in 0..<view.count { body(view.id(at: index), view.payload(at: index)) }
            }
        }
        let read = try withStorageErrors {
            try withoutActuallyEscaping(body) { body in
                try database.read { db in
                    try Self.loadPagedState(
                        db: db, header: header, headerBytes: headerBytes, keys: keys.operational, sink: body)
                }
            }
        }
        guard read.commitSealed == state.commitSealed else {
            throw VaultError(
                .storageFailure,
                "The vault was changed by another process while it was being read; nothing was written.")
        }
    }

    /// How many records the commit this open read holds, whatever part of them it read.
    public var committedRecordCount: Int { state.paged.map { Int($0.commit.recordCount) } ?? state.records.count }

    public var backupKeys: BackupKeys {
        BackupKeys(
            vaultID: id, headerBytes: headerBytesForBackup, backupKey: operationalKeys.backup,
            signingKey: operationalKeys.signing, keyHistory: keyHistory)
    }

    /// Opens the vault at `url` with the keys an archive of the same vault unlocked, with no
    /// key derivation: only while its master key is still the archive's (no passphrase change
    /// or rekey since; otherwise `.wrongPassphrase`). The header's MAC is checked as always.
    /// For looking at a vault a restore would replace; the high-water mark is left alone.
    public static func open(at url: URL, unlocked: ArchiveUnlock) throws -> Vault {
        try open(at: url, guard: nil) { header in
            guard header.vaultID == unlocked.header.vaultID, let master = unlocked.keys.master,
                constantTimeEqual(master.operational.masterKeyID, header.masterKeyID)
            else {
                throw VaultError(
                    .wrongPassphrase, "The archive's keys do not open this vault: its keys were changed since.")
            }
            return UnlockedKeys(operational: master.operational, master: master, passphraseKEK: nil, recoveryKey: nil)
        }
    }

    /// Unlocks an archived vault header once, for everything a restore does with it: checking
    /// and opening the archive (`backupKeys`) and building the vault
    /// (`restore(at:unlocked:records:replacing:keepingOldAt:guard:)`), so Argon2id runs once
    /// per restore, not once per step. The passphrase (or recovery key) is the one current when
    /// the header was archived; a session of the same key generation gives the backup keys but
    /// cannot restore. The header's Argon2id cost is bounded before any work, and with the
    /// passphrase or recovery key its MAC is checked, so an edited header is refused.
    public static func unlockArchivedHeader(_ bytes: [UInt8], credential: Credential, now: Date = Date()) throws
        -> ArchiveUnlock
    {
        let header = try VaultHeader.decode(bytes)
        let parameters = header.passphraseSlot.parameters
        guard parameters.opsLimit <= archiveArgon2Ceiling.opsLimit, parameters.memLimit <= archiveArgon2Ceiling.memLimit
        else {
            throw VaultError(
                .unsafeParameters,
                "The vault header inside the archive asks for Argon2id with \(parameters.opsLimit) passes and \(parameters.memLimit >> 20) MiB, more than Coffer ever writes; it was not run."
            )
        }
        let unlocked: UnlockedKeys
        do {
            unlocked = try unlock(header: header, credential: credential, clock: .system(now: now))
            if let master = unlocked.master {
                guard constantTimeEqual(master.operational.masterKeyID, header.masterKeyID),
                    header.hasValidMAC(keys: master)
                else {
                    throw VaultError(.headerTampered, "The vault header inside the archive has been altered.")
                }
            }
        } catch let error as VaultError where error.code == .wrongPassphrase {
            throw VaultError(.wrongPassphrase, "The passphrase is wrong for this archive.")
        }
        let keys = unlocked.operational
        let history = header.keyHistory(orFirstSignedBy: keys.signing)
        guard history.last?.signingKey == keys.signing.publicKey else {
            throw VaultError(
                .headerTampered,
                "The vault header inside the archive names a signing key that its own keys do not give.")
        }
        return ArchiveUnlock(
            backupKeys: BackupKeys(
                vaultID: header.vaultID, headerBytes: bytes, backupKey: keys.backup,
                signingKey: keys.signing, keyHistory: history),
            header: header, keys: unlocked)
    }

    /// The vault id and key history in an archived header, read without any key. Each
    /// generation's certificate is checked against the one before, so the history is as
    /// trustworthy as its first key: a caller that already trusts that key (or any prefix of the
    /// history) learns the later generations from it.
    public static func keyHistory(ofHeader bytes: [UInt8]) throws -> (VaultID, [KeyGeneration]) {
        let header = try VaultHeader.decode(bytes)
        return (header.vaultID, header.keyHistory)
    }

    /// Builds a vault at `url` from an archived header and records: same vault id, keys and
    /// passphrase as when the archive was made (a format 1 header is rewritten in format 2 with
    /// the same master key); every record sealed afresh; a new device id, since the restored
    /// file is a new copy of the vault. Built under a temporary name and checked by opening it,
    /// then moved into place atomically. With `replacing`, an existing vault at `url` is kept as
    /// `keepingOldAt` (hard link) first. The high-water mark of this path is reset to the
    /// restored file: the restore is the deliberate rollback.
    ///
    /// Returns the vault open, with the keys `unlocked` already holds: no key derivation at all.
    /// Needs the master key, so an unlock made with a session is refused (`.passphraseRequired`).
    public static func restore(
        at url: URL, unlocked: ArchiveUnlock, records: [(RecordID, Data)],
        grouping: @escaping PageGrouping = { _, _ in .unsorted },
        replacing: Bool, keepingOldAt oldCopy: URL?, guard rollbackGuard: RollbackGuard? = nil
    ) throws -> Vault {
        let built = try restoreAside(at: url, unlocked: unlocked, replacing: replacing) { writer in
            for (id, payload) in records {
                try payload.withUnsafeBytes { try writer.append(id, group: grouping(id, $0), payload: $0) }
            }
        }
        try built.moveIntoPlace(replacing: replacing, keepingOldAt: oldCopy)
        var accepting = rollbackGuard
        accepting?.acceptRollback = true
        let vault = try open(at: url, guard: accepting) { _ in unlocked.keys }
        vault.grouping = grouping
        return vault
    }

    /// Opens a vault built from `unlocked` (`restoreAside`), fully verified, with the keys it
    /// already holds: no key derivation at all.
    public static func open(at url: URL, unlocked: ArchiveUnlock, guard rollbackGuard: RollbackGuard? = nil) throws
        -> Vault
    {
        try open(at: url, guard: rollbackGuard) { _ in unlocked.keys }
    }

    /// Builds a vault from an archived header aside from `url`, as `restore(at:unlocked:records:…)`
    /// does, with the records `body` streams into the writer (each sealed into a page as the page
    /// fills): a million records restore in the memory of their ids. Nothing is at `url` until
    /// the caller moves it there (`VaultBuiltAside.moveIntoPlace(replacing:keepingOldAt:guard:)`).
    public static func restoreAside(
        at url: URL, unlocked: ArchiveUnlock, replacing: Bool, records body: (BulkRecordWriter) throws -> Void
    ) throws -> VaultBuiltAside {
        guard let master = unlocked.keys.master else {
            throw VaultError(
                .passphraseRequired, "Restoring needs the passphrase (or recovery key) of the archive, not a session.")
        }
        let archived = unlocked.header
        let header = archived.replacingSlots(
            passphrase: archived.passphraseSlot, recovery: archived.recoverySlot, keys: master)
        let built = try buildAside(at: url, header: header, keys: master, replacing: replacing, records: body)
        built.keys = unlocked.keys
        return built
    }
}
