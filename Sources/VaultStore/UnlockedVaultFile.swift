import Foundation
import GRDB
import VaultCrypto

/// A vault file whose header was read, checked against this machine's high-water mark and
/// unlocked, and whose records are not read yet. `open()` reads and verifies every record;
/// `peek(_:)` reads one, authenticated through the commit record and its manifest bucket, so a
/// command that can answer from one record (a sync with nothing to do) costs what it reads,
/// not what the vault holds. Either way the keys are unwrapped once.
public final class UnlockedVaultFile {
    let url: URL
    let database: DatabaseQueue
    let headerBytes: [UInt8]
    let header: VaultHeader
    let keys: UnlockedKeys
    let rollbackGuard: RollbackGuard?

    init(
        url: URL, database: DatabaseQueue, headerBytes: [UInt8], header: VaultHeader, keys: UnlockedKeys,
        rollbackGuard: RollbackGuard?
    ) {
        self.url = url
        self.database = database
        self.headerBytes = headerBytes
        self.header = header
        self.keys = keys
        self.rollbackGuard = rollbackGuard
    }

    /// Unlocks the vault at `url` with `credential` (wrong credential → 77-class errors); with
    /// `guard`, its header is checked against the high-water mark first.
    public static func unlock(
        at url: URL, with credential: Credential, now: Date = Date(), guard rollbackGuard: RollbackGuard? = nil
    ) throws -> UnlockedVaultFile {
        try unlock(at: url, guard: rollbackGuard) {
            try Vault.unlock(header: $0, credential: credential, clock: .system(now: now))
        }
    }

    /// Unlocking with the keys `unlocking` gives for the header found: from a credential, or
    /// (after a restore) keys already unlocked. The high-water mark is checked before them.
    static func unlock(
        at url: URL, guard rollbackGuard: RollbackGuard?, unlocking: (VaultHeader) throws -> UnlockedKeys
    )
        throws -> UnlockedVaultFile
    {
        let (database, headerBytes, header) = try Vault.connect(url)
        try rollbackGuard?.checkHeader(
            vaultID: header.vaultID, path: url.standardizedFileURL.path,
            format: header.formatVersion, generation: header.generation)
        let keys = try unlocking(header)
        try Vault.checkHeaderMAC(header, keys: keys)
        return UnlockedVaultFile(
            url: url, database: database, headerBytes: headerBytes, header: header, keys: keys,
            rollbackGuard: rollbackGuard)
    }

    /// Reads and verifies every record: the vault, open.
    public func open() throws -> Vault {
        try Vault.finishOpening(
            url: url, database: database, headerBytes: headerBytes, header: header, keys: keys,
            rollbackGuard: rollbackGuard)
    }

    /// The keys a backup or a sync folder of this vault is sealed and signed with.
    public var backupKeys: BackupKeys {
        BackupKeys(
            vaultID: header.vaultID, headerBytes: headerBytes, backupKey: keys.operational.backup,
            signingKey: keys.operational.signing,
            keyHistory: header.keyHistory(orFirstSignedBy: keys.operational.signing))
    }

    /// What `peek(_:)` read: the commit the file is at (its counter, and the file's device id
    /// as `Vault.deviceID` gives it), and the record's payload (nil when the commit record lists
    /// no such record).
    public struct Peek: Sendable {
        public let commitCounter: UInt64
        public let deviceID: DeviceID?
        public let payload: [UInt8]?
    }

    /// One record, read without the others: the commit record opened (and checked against the
    /// header and the high-water mark, which it then raises), the manifest bucket that lists
    /// `id` checked against the commit record's digest, and the record checked against that
    /// bucket's entry (version and tag) before it is opened. Damage anywhere else in the file is
    /// not looked for: that is `open()`'s work.
    public func peek(_ id: RecordID) throws -> Peek {
        let operational = keys.operational
        let vaultID = header.vaultID
        func damaged(_ detail: String) -> VaultError {
            VaultError(
                .integrityFailure, "The vault is damaged or has been tampered with: 1 problem found.",
                problems: [IntegrityProblem(kind: .structureDamaged, recordID: id, detail: detail)])
        }
        let (commit, commitSealed, payload) = try withStorageErrors {
            try database.read { db -> (CommitRecord, Data, [UInt8]?) in
                guard let commitSealed = try Data.fetchOne(db, sql: "SELECT sealed FROM commit_record WHERE id = 1"),
                    let commit = CommitRecord.open(
                        commitSealed, key: operational.integrity, vaultID: vaultID, formatVersion: header.formatVersion)
                else { throw damaged("the commit record is missing or does not authenticate") }
                if let digest = commit.headerDigest, !constantTimeEqual(digest, BLAKE2b.hash(headerBytes)) {
                    throw VaultError(
                        .headerTampered,
                        "The vault header is not the one its commit record names: an older or edited header was put back."
                    )
                }
                let bucket = id.bucket
                guard
                    let sealedBucket = try Data.fetchOne(
                        db, sql: "SELECT sealed FROM manifest WHERE bucket = ?", arguments: [bucket]),
                    constantTimeEqual(Manifest.digest(ofSealed: sealedBucket), commit.bucketDigests[bucket]),
                    let entries = Manifest.open(
                        sealedBucket, bucket: bucket, key: operational.integrity, vaultID: vaultID)
                else {
                    throw damaged("manifest bucket \(bucket) is missing, damaged or does not match the commit record")
                }
                guard let entry = entries.first(where: { $0.id == id }) else { return (commit, commitSealed, nil) }
                guard
                    let row = try Row.fetchOne(
                        db, sql: "SELECT version, sealed FROM record WHERE id = ?", arguments: [Data(id.bytes)])
                else { throw damaged("is listed in the commit record but missing from the file (deleted)") }
                // Read as database values: a column of another type is damage, never a crash.
                guard let version = Int64.fromDatabaseValue(row[0]), let sealed = Data.fromDatabaseValue(row[1]) else {
                    throw damaged("is stored malformed")
                }
                let bytes = [UInt8](sealed)
                let tagMatches =
                    bytes.count >= XChaCha20Poly1305.tagByteCount
                    && bytes.withUnsafeBytes {
                        RecordCipher.tag(of: $0).constantTimeEquals(entry.tag)
                    }
                guard UInt64(clamping: version) == entry.version, tagMatches else {
                    throw damaged("is not the copy the commit record lists (replaced, rolled back or replayed)")
                }
                var plain: [UInt8] = []
                defer { secureWipe(&plain) }
                let rows = [SealedRow(id: id, storedVersion: version, entry: entry, range: 0..<bytes.count)]
                guard
                    let range = RecordCipher.openAll(
                        bytes, rows: rows, into: &plain, key: operational.records, vaultID: vaultID
                    ).first ?? nil
                else { throw damaged("does not authenticate (its bytes were altered)") }
                return (commit, commitSealed, Array(plain[range]))
            }
        }
        if let rollbackGuard {
            let path = url.standardizedFileURL.path, state = CommitRecord.stateDigest(ofSealed: commitSealed)
            try rollbackGuard.checkState(
                vaultID: vaultID, device: commit.deviceID, counter: commit.counter, state: state, path: path)
            rollbackGuard.record(
                vaultID: vaultID, format: header.formatVersion, generation: header.generation,
                device: commit.deviceID, counter: commit.counter, state: state, path: path)
        }
        return Peek(commitCounter: commit.counter, deviceID: commit.deviceID, payload: payload)
    }
}
