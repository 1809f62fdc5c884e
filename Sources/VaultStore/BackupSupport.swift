import Foundation
import GRDB
import VaultCrypto
#if canImport(Glibc)
import Glibc
#endif

/// What the backup module needs from a vault's key hierarchy, and nothing more: the header
/// (whose passphrase slot lets a fresh machine re-derive everything from the passphrase), the
/// backup subkey and the vault's signing key.
public struct BackupKeys: Sendable {
    public let vaultID: VaultID
    /// The vault header as stored: format, vault id, key slots, MAC, checksum.
    public let headerBytes: [UInt8]
    public let backupKey: SymmetricKey
    public let signingKey: SigningKey
}

extension Vault {
    public var backupKeys: BackupKeys {
        BackupKeys(vaultID: id, headerBytes: headerBytesForBackup, backupKey: keysForBackup.backup, signingKey: keysForBackup.signing)
    }

    /// The backup keys of the vault an archived header belongs to, from the passphrase that was
    /// current when the header was archived (or from `session`'s master key when the vault has
    /// not been rekeyed since). The header's MAC is checked, so an edited header is refused.
    public static func backupKeys(fromArchivedHeader bytes: [UInt8], credential: Credential, now: Date = Date()) throws -> BackupKeys {
        let header = try VaultHeader.decode(bytes)
        let keys = try archivedKeys(header: header, credential: credential, now: now)
        return BackupKeys(vaultID: header.vaultID, headerBytes: bytes, backupKey: keys.backup, signingKey: keys.signing)
    }

    /// Unwraps the master key of an archived header and checks the header's MAC with it.
    private static func archivedKeys(header: VaultHeader, credential: Credential, now: Date) throws -> VaultKeys {
        let master: SymmetricKey
        do {
            master = try unwrapMasterKey(header: header, credential: credential, now: now)
        } catch let error as VaultError where error.code == .wrongPassphrase {
            throw VaultError(.wrongPassphrase, "The passphrase is wrong for this archive.")
        }
        let keys = VaultKeys(master: master)
        guard constantTimeEqual(keys.masterKeyID, header.masterKeyID), header.hasValidMAC(keys: keys) else {
            throw VaultError(.headerTampered, "The vault header inside the archive has been altered.")
        }
        return keys
    }

    /// The vault id in an archived header, read without any key (for messages and checks).
    public static func vaultID(ofHeader bytes: [UInt8]) throws -> VaultID { try VaultHeader.decode(bytes).vaultID }

    /// Builds a vault at `url` from an archived header and records: same vault id, keys and
    /// passphrase as when the archive was made; every record sealed afresh. Built under a
    /// temporary name and checked by opening it, then moved into place atomically. With
    /// `replacing`, an existing vault at `url` is kept as `keepingOldAt` (hard link) first.
    public static func restore(at url: URL, headerBytes: [UInt8], credential: Credential, records: [(RecordID, Data)],
                               replacing: Bool, keepingOldAt oldCopy: URL?) throws -> Vault {
        let header = try VaultHeader.decode(headerBytes)
        let vaultKeys = try archivedKeys(header: header, credential: credential, now: Date())
        let master = vaultKeys.master
        let fileManager = FileManager.default
        let exists = fileManager.fileExists(atPath: url.path)
        guard !exists || replacing else {
            throw VaultError(.alreadyExists, "A vault already exists at \(url.path); nothing was changed.")
        }
        let directory = url.deletingLastPathComponent()
        try withStorageErrors {
            if !fileManager.fileExists(atPath: directory.path) {
                try fileManager.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            }
        }
        let temporary = directory.appendingPathComponent(".\(url.lastPathComponent).\(SecureRandom.bytes(count: 6).hexString).restoring")
        defer { for suffix in ["", "-wal", "-shm", "-journal"] { unlink(temporary.path + suffix) } }
        try withStorageErrors {
            let database = try DatabaseQueue(path: temporary.path, configuration: Schema.configuration())
            chmod(temporary.path, 0o600)
            try Schema.migrator.migrate(database)
            try database.write { db in
                try db.execute(sql: "INSERT INTO header (id, body) VALUES (1, ?)", arguments: [Data(headerBytes)])
                var buckets = [[ManifestEntry]](repeating: [], count: Manifest.bucketCount)
                for (id, payload) in records.sorted(by: { $0.0 < $1.0 }) {
                    let (sealed, tag) = RecordCipher.seal(payload, id: id, version: 1, key: vaultKeys.records, vaultID: header.vaultID)
                    try db.execute(sql: "INSERT INTO record (id, version, sealed) VALUES (?, 1, ?)", arguments: [Data(id.bytes), sealed])
                    buckets[id.bucket].append(ManifestEntry(id: id, version: 1, tag: tag))
                }
                var digests: [[UInt8]] = []
                for bucket in 0..<Manifest.bucketCount {
                    let sealed = Manifest.seal(buckets[bucket], bucket: bucket, key: vaultKeys.integrity, vaultID: header.vaultID)
                    digests.append(Manifest.digest(ofSealed: sealed))
                    try db.execute(sql: "INSERT INTO manifest (bucket, sealed) VALUES (?, ?)", arguments: [bucket, sealed])
                }
                let commit = CommitRecord(counter: 0, recordCount: UInt64(records.count), bucketDigests: digests)
                try db.execute(sql: "INSERT INTO commit_record (id, sealed) VALUES (1, ?)",
                               arguments: [commit.sealed(key: vaultKeys.integrity, vaultID: header.vaultID)])
            }
            try database.close()
        }
        // Check the new vault before it replaces anything.
        let (checkDatabase, checkHeaderBytes, checkHeader) = try connect(temporary)
        let checked = try finishOpening(url: temporary, database: checkDatabase, headerBytes: checkHeaderBytes, header: checkHeader, master: master)
        guard checked.recordCount == records.count else {
            throw VaultError(.integrityFailure, "The restored vault did not verify; nothing was replaced.")
        }
        try withStorageErrors { try checkDatabase.close() }
        fsyncFile(temporary)

        if exists {
            // Fold any write-ahead log into the old file first: otherwise the kept copy could
            // miss committed changes, and a stale log could be replayed onto the new vault.
            try withStorageErrors {
                let old = try DatabaseQueue(path: url.path, configuration: Schema.configuration())
                try old.writeWithoutTransaction { try $0.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
                try old.close()
            }
        }
        if exists, let oldCopy {
            guard link(url.path, oldCopy.path) == 0 else {
                throw VaultError(.storageFailure, "Could not keep the old vault as \(oldCopy.path): \(String(cString: strerror(errno))). Nothing was replaced.")
            }
        }
        guard rename(temporary.path, url.path) == 0 else {
            throw VaultError(.storageFailure, "Could not move the restored vault into place: \(String(cString: strerror(errno))). Nothing was replaced.")
        }
        for suffix in ["-wal", "-shm"] { unlink(url.path + suffix) }
        syncDirectory(directory)
        return try open(at: url, with: credential)
    }
}

func fsyncFile(_ url: URL) {
    let descriptor = Glibc.open(url.path, O_RDONLY)
    guard descriptor >= 0 else { return }
    fsync(descriptor)
    close(descriptor)
}
