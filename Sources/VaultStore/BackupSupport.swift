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

/// Archived headers may ask for at most this much Argon2id work before anything has proved the
/// archive genuine: exactly the most Coffer writes, the "sensitive" profile (4 passes, 1 GiB).
let archiveArgon2Ceiling = (opsLimit: UInt64(4), memLimit: UInt64(1) << 30)

extension Vault {
    public var backupKeys: BackupKeys {
        BackupKeys(vaultID: id, headerBytes: headerBytesForBackup, backupKey: operationalKeys.backup,
                   signingKey: operationalKeys.signing, keyHistory: keyHistory)
    }

    /// The backup keys of the vault an archived header belongs to, from the passphrase (or
    /// recovery key) that was current when the header was archived, or from a session of the
    /// same key generation. With the passphrase the header's MAC is checked, so an edited header
    /// is refused; its Argon2id cost is bounded before any work.
    public static func backupKeys(fromArchivedHeader bytes: [UInt8], credential: Credential, now: Date = Date()) throws -> BackupKeys {
        let header = try VaultHeader.decode(bytes)
        let parameters = header.passphraseSlot.parameters
        guard parameters.opsLimit <= archiveArgon2Ceiling.opsLimit, parameters.memLimit <= archiveArgon2Ceiling.memLimit else {
            throw VaultError(.unsafeParameters, "The vault header inside the archive asks for Argon2id with \(parameters.opsLimit) passes and \(parameters.memLimit >> 20) MiB, more than Coffer ever writes; it was not run.")
        }
        let keys: OperationalKeys
        do {
            let unlocked = try unlock(header: header, credential: credential, clock: .system(now: now))
            if let master = unlocked.master {
                guard constantTimeEqual(master.operational.masterKeyID, header.masterKeyID), header.hasValidMAC(keys: master) else {
                    throw VaultError(.headerTampered, "The vault header inside the archive has been altered.")
                }
            }
            keys = unlocked.operational
        } catch let error as VaultError where error.code == .wrongPassphrase {
            throw VaultError(.wrongPassphrase, "The passphrase is wrong for this archive.")
        }
        let history = header.keyHistory(orFirstSignedBy: keys.signing)
        guard history.last?.signingKey == keys.signing.publicKey else {
            throw VaultError(.headerTampered, "The vault header inside the archive names a signing key that its own keys do not give.")
        }
        return BackupKeys(vaultID: header.vaultID, headerBytes: bytes, backupKey: keys.backup, signingKey: keys.signing, keyHistory: history)
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
    public static func restore(at url: URL, headerBytes: [UInt8], credential: Credential, records: [(RecordID, Data)],
                               replacing: Bool, keepingOldAt oldCopy: URL?, guard rollbackGuard: RollbackGuard? = nil) throws -> Vault {
        let archived = try VaultHeader.decode(headerBytes)
        let unlocked = try unlock(header: archived, credential: credential, clock: .system())
        guard let master = unlocked.master else {
            throw VaultError(.passphraseRequired, "Restoring needs the passphrase (or recovery key) of the archive, not a session.")
        }
        guard constantTimeEqual(master.operational.masterKeyID, archived.masterKeyID), archived.hasValidMAC(keys: master) else {
            throw VaultError(.headerTampered, "The vault header inside the archive has been altered.")
        }
        let header = archived.replacingSlots(passphrase: archived.passphraseSlot, recovery: archived.recoverySlot, keys: master)
        try build(at: url, header: header, keys: master, records: records, replacing: replacing, keepingOldAt: oldCopy)
        var accepting = rollbackGuard
        accepting?.acceptRollback = true
        return try open(at: url, with: credential, guard: accepting)
    }
}
