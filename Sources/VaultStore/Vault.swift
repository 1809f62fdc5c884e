import Foundation
import GRDB
internal import GRDBSQLite
import VaultCrypto

#if canImport(Glibc)
    import Glibc
#endif

/// What unlocks a vault.
public enum Credential {
    case passphrase(Passphrase)
    case recoveryKey(RecoveryKey)
    /// A session made by `Vault.createSession`, found in `directory`.
    case session(SessionToken, directory: URL)
}

/// What `verify` proved.
public struct VerificationReport: Sendable, Equatable {
    public let recordCount: Int
    public let commitCounter: UInt64
}

/// What can be read from a vault without unlocking it.
public struct VaultSummary: Sendable {
    public let formatVersion: Int
    public let vaultID: VaultID
    public let kdfParameters: Argon2idParameters
    public let hasRecoveryKey: Bool
    /// Key generation (1 for the first master key; each rekey adds one). Unauthenticated.
    public let keyGeneration: UInt32
    /// Rows in the record table, unauthenticated: a hint until the vault is unlocked and verified.
    public let storedRecordCount: Int
    /// The key history as the header states it (empty in format 1). Each entry's certificate is
    /// checked against the one before, but nothing here is authenticated by a vault key: an
    /// unlocked vault's `keyHistory` is the one to trust.
    public let keyHistory: [KeyGeneration]
}

/// What a change of keys did, for the messages that must say exactly what was revoked.
public struct KeyChangeReport: Sendable, Equatable {
    /// Whether the master key was replaced (every record re-encrypted, a new key generation).
    public let replacedMasterKey: Bool
    /// The key generation now in force.
    public let generation: UInt32
    /// A recovery key that worked before still works.
    public let recoveryKeyKept: Bool
    /// A format 1 recovery key had to be dropped: its slot can only be re-made with the key itself.
    public let recoveryKeyDropped: Bool
}

/// The decrypted, verified contents of a vault and the manifest that vouches for them.
struct VaultState {
    var commit: CommitRecord
    /// The sealed commit record as last read or written, to notice another process's writes.
    var commitSealed: Data
    /// The records, which also hold what the manifest lists for each (id, version, tag).
    var records: RecordStore

    func record(_ id: RecordID) -> VaultRecord? { records.index(of: id).map { records.record(at: $0) } }
}

/// Walks the manifest's buckets in order, entry by entry.
struct ManifestCursor {
    private let buckets: [[ManifestEntry]]
    private var bucket = 0
    private var entry = 0

    init(buckets: [[ManifestEntry]]) {
        self.buckets = buckets
        skipEmpty()
    }

    var current: ManifestEntry? { bucket < buckets.count ? buckets[bucket][entry] : nil }

    mutating func advance() {
        entry += 1
        skipEmpty()
    }

    private mutating func skipEmpty() {
        while bucket < buckets.count, entry >= buckets[bucket].count {
            bucket += 1
            entry = 0
        }
    }
}

/// Keys a credential unlocked: always the operational ones; the master key (and what only it
/// allows: key slots, the header MAC) only from the passphrase or recovery key, never a session.
struct UnlockedKeys {
    let operational: OperationalKeys
    let master: MasterKeys?
    /// The passphrase slot's key-encryption key, when the passphrase was given: a rekey re-wraps
    /// the new master key with it instead of running Argon2id again.
    let passphraseKEK: SymmetricKey?
    /// The recovery key, when it was given: a rekey can then re-make a format 1 recovery slot.
    let recoveryKey: RecoveryKey?
}

/// An open, unlocked, verified vault: one SQLite file of opaque encrypted records.
///
/// Opening checks the header, unwraps the keys and verifies every record against the commit
/// record, so a damaged or tampered vault never opens silently. Every write is one SQLite
/// transaction that also updates the manifest and commit record.
public final class Vault {
    /// How long a write waits for another process's write to finish before it gives up with
    /// `.busy`: long enough for any one command's write, short enough that a stuck writer is
    /// reported instead of hanging.
    public static let busyTimeout: TimeInterval = 10

    public let url: URL
    private let database: DatabaseQueue
    private var headerBytes: [UInt8]
    private var header: VaultHeader
    private var keys: UnlockedKeys
    private var state: VaultState
    private let rollbackGuard: RollbackGuard?

    private init(
        url: URL, database: DatabaseQueue, headerBytes: [UInt8], header: VaultHeader, keys: UnlockedKeys,
        state: VaultState,
        rollbackGuard: RollbackGuard?
    ) {
        self.url = url
        self.database = database
        self.headerBytes = headerBytes
        self.header = header
        self.keys = keys
        self.state = state
        self.rollbackGuard = rollbackGuard
    }

    public var id: VaultID { header.vaultID }
    public var formatVersion: Int { Int(header.formatVersion) }
    public var kdfParameters: Argon2idParameters { header.passphraseSlot.parameters }
    public var hasRecoveryKey: Bool { header.recoverySlot != nil }
    public var commitCounter: UInt64 { state.commit.counter }
    public var recordCount: Int { state.records.count }
    /// BLAKE2b-256 of the sealed commit record: names this exact state of the file.
    public var stateDigest: [UInt8] { CommitRecord.stateDigest(ofSealed: state.commitSealed) }
    public var keyGeneration: UInt32 { header.generation }
    /// This copy of the vault (nil until a format 1 vault's first write): archives name it so
    /// two copies backing up to one folder are told apart.
    public var deviceID: DeviceID? { state.commit.deviceID }
    /// Whether this open holds the master key (opened with the passphrase or recovery key).
    public var canChangeKeys: Bool { keys.master != nil }

    /// Every generation of the vault's signing key, oldest first; the last is the current one.
    /// A format 1 vault has one, its current key.
    public var keyHistory: [KeyGeneration] { header.keyHistory(orFirstSignedBy: keys.operational.signing) }

    /// Every payload, without copies, for as long as `body` runs.
    public func withPayloads<Result>(_ body: (PayloadView) throws -> Result) rethrows -> Result {
        try state.records.withView(body)
    }
    /// The vault's Ed25519 public key (archives it signs verify with this).
    public var signingPublicKey: SigningPublicKey { keys.operational.signing.publicKey }

    /// Every record, ordered by id.
    public var records: [VaultRecord] { (0..<state.records.count).map { state.records.record(at: $0) } }

    public func record(_ id: RecordID) -> VaultRecord? { state.record(id) }

    /// The file this vault was opened from, unlocked with the keys this open holds: what a
    /// later process unlocking it would have before reading any record. For checking that an
    /// answer from one record (`UnlockedVaultFile.peek`) agrees with the full open.
    package var unlockedFile: UnlockedVaultFile {
        UnlockedVaultFile(
            url: url, database: database, headerBytes: headerBytes, header: header, keys: keys,
            rollbackGuard: rollbackGuard)
    }

    var headerBytesForBackup: [UInt8] { headerBytes }
    var operationalKeys: OperationalKeys { keys.operational }

    // MARK: Create and open

    /// Creates a new, empty vault. The file is built under a temporary name and linked into
    /// place only when complete, so a crash never leaves a half-made vault at `url`.
    public static func create(
        at url: URL, passphrase: Passphrase, parameters: Argon2idParameters,
        guard rollbackGuard: RollbackGuard? = nil
    ) throws -> Vault {
        let salt = Salt.random()
        let kek = try MasterKeys.deriveKEK(passphrase: passphrase, salt: salt, parameters: parameters)
        let vaultID = VaultID.random()
        let keys = MasterKeys(master: .random())
        let slot = PassphraseSlot.wrapping(keys.master, kek: kek, parameters: parameters, salt: salt, vaultID: vaultID)
        let header = VaultHeader(
            vaultID: vaultID, keys: keys, generation: 1, passphraseSlot: slot, recoverySlot: nil,
            keyHistory: [KeyGeneration.first(signedBy: keys.operational.signing, vaultID: vaultID)])
        try build(at: url, header: header, keys: keys, records: [], replacing: false, keepingOldAt: nil)
        let (database, headerBytes, storedHeader) = try connect(url)
        return try finishOpening(
            url: url, database: database, headerBytes: headerBytes, header: storedHeader,
            keys: UnlockedKeys(operational: keys.operational, master: keys, passphraseKEK: kek, recoveryKey: nil),
            rollbackGuard: rollbackGuard)
    }

    /// Writes a complete vault (header, records at version 1, manifest, a commit record with a
    /// new device id) under a temporary name, checks it, and moves it to `url`: linked when
    /// nothing is there, renamed over the old file with `replacing` (kept as `oldCopy` first).
    static func build(
        at url: URL, header: VaultHeader, keys: MasterKeys, records: [(RecordID, Data)], replacing: Bool,
        keepingOldAt oldCopy: URL?
    ) throws {
        let fileManager = FileManager.default
        let exists = fileManager.fileExists(atPath: url.path)
        guard !exists || replacing else {
            throw VaultError(.alreadyExists, "A vault already exists at \(url.path); nothing was changed.")
        }
        let directory = url.deletingLastPathComponent()
        try withStorageErrors {
            if !fileManager.fileExists(atPath: directory.path) {
                try fileManager.createDirectory(
                    at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            }
        }
        let vaultID = header.vaultID
        let headerBytes = header.encoded()
        let operational = keys.operational
        let temporary = directory.appendingPathComponent(
            ".\(url.lastPathComponent).\(SecureRandom.bytes(count: 6).hexString).building")
        defer { for suffix in ["", "-wal", "-shm", "-journal"] { unlink(temporary.path + suffix) } }
        try withStorageErrors {
            let database = try DatabaseQueue(path: temporary.path, configuration: Schema.configuration())
            chmod(temporary.path, 0o600)
            try Schema.migrator.migrate(database)
            try database.write { db in
                try db.execute(sql: "INSERT INTO header (id, body) VALUES (1, ?)", arguments: [Data(headerBytes)])
                var buckets = [[ManifestEntry]](repeating: [], count: Manifest.bucketCount)
                for (index, (id, payload)) in records.sorted(by: { $0.0 < $1.0 }).enumerated() {
                    let (sealed, tag) = RecordCipher.seal(
                        payload, id: id, version: 1, key: operational.records, vaultID: vaultID)
                    try db.execute(
                        sql: "INSERT INTO record (id, version, sealed) VALUES (?, 1, ?)",
                        arguments: [Data(id.bytes), sealed])
                    buckets[id.bucket].append(ManifestEntry(id: id, version: 1, tag: tag))
                    WorkProgress.report(.encrypting, index + 1, of: records.count)
                }
                var digests: [[UInt8]] = []
                for bucket in 0..<Manifest.bucketCount {
                    let sealed = Manifest.seal(
                        buckets[bucket], bucket: bucket, key: operational.integrity, vaultID: vaultID)
                    digests.append(Manifest.digest(ofSealed: sealed))
                    try db.execute(
                        sql: "INSERT INTO manifest (bucket, sealed) VALUES (?, ?)", arguments: [bucket, sealed])
                }
                let commit = CommitRecord(
                    counter: 0, recordCount: UInt64(records.count), bucketDigests: digests,
                    headerDigest: BLAKE2b.hash(headerBytes), deviceID: .random())
                try db.execute(
                    sql: "INSERT INTO commit_record (id, sealed) VALUES (1, ?)",
                    arguments: [commit.sealed(key: operational.integrity, vaultID: vaultID)])
            }
            try database.close()
        }
        // Check the new vault before it goes anywhere.
        let (checkDatabase, checkHeaderBytes, checkHeader) = try connect(temporary)
        let checked = try finishOpening(
            url: temporary, database: checkDatabase, headerBytes: checkHeaderBytes, header: checkHeader,
            keys: UnlockedKeys(operational: operational, master: keys, passphraseKEK: nil, recoveryKey: nil),
            rollbackGuard: nil)
        guard checked.recordCount == records.count else {
            throw VaultError(.integrityFailure, "The new vault did not verify; nothing was written.")
        }
        try withStorageErrors { try checkDatabase.close() }
        DurableFile.syncFile(temporary)
        if !exists {
            // link(2) fails if `url` appeared meanwhile, so an existing vault is never replaced.
            guard link(temporary.path, url.path) == 0 else {
                if errno == EEXIST {
                    throw VaultError(.alreadyExists, "A vault already exists at \(url.path); nothing was changed.")
                }
                throw VaultError(
                    .storageFailure, "Could not create the vault at \(url.path): \(String(cString: strerror(errno))).")
            }
        } else {
            // Fold any write-ahead log into the old file first: otherwise the kept copy could
            // miss committed changes, and a stale log could be replayed onto the new vault.
            try withStorageErrors {
                let old = try DatabaseQueue(path: url.path, configuration: Schema.configuration())
                try old.writeWithoutTransaction { try $0.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
                try old.close()
            }
            if let oldCopy {
                guard link(url.path, oldCopy.path) == 0 else {
                    throw VaultError(
                        .storageFailure,
                        "Could not keep the old vault as \(oldCopy.path): \(String(cString: strerror(errno))). Nothing was replaced."
                    )
                }
            }
            guard rename(temporary.path, url.path) == 0 else {
                throw VaultError(
                    .storageFailure,
                    "Could not move the new vault into place: \(String(cString: strerror(errno))). Nothing was replaced."
                )
            }
            for suffix in ["-wal", "-shm"] { unlink(url.path + suffix) }
        }
        DurableFile.syncDirectory(directory)
    }

    /// Opens, unlocks and fully verifies the vault at `url`. With `guard`, the file is also
    /// checked against this machine's high-water mark (older, or forked: `.rolledBack`), and the
    /// mark raised to what was found.
    public static func open(
        at url: URL, with credential: Credential, now: Date = Date(), guard rollbackGuard: RollbackGuard? = nil
    ) throws -> Vault {
        try open(at: url, guard: rollbackGuard) {
            try unlock(header: $0, credential: credential, clock: .system(now: now))
        }
    }

    /// Opening with the keys `unlocking` gives for the header found: from a credential, or
    /// (after a restore) keys already unlocked. The high-water mark is checked before them.
    static func open(at url: URL, guard rollbackGuard: RollbackGuard?, unlocking: (VaultHeader) throws -> UnlockedKeys)
        throws -> Vault
    {
        try UnlockedVaultFile.unlock(at: url, guard: rollbackGuard, unlocking: unlocking).open()
    }

    /// With the master key (passphrase or recovery key), the header's MAC must verify.
    static func checkHeaderMAC(_ header: VaultHeader, keys: UnlockedKeys) throws {
        guard let master = keys.master else { return }
        guard constantTimeEqual(master.operational.masterKeyID, header.masterKeyID), header.hasValidMAC(keys: master)
        else {
            throw VaultError(
                .headerTampered, "The vault header has been altered: its authentication code does not match.")
        }
    }

    /// The keys a credential unlocks from `header` (wrong credential → 77-class errors).
    static func unlock(header: VaultHeader, credential: Credential, clock: SessionClock) throws -> UnlockedKeys {
        switch credential {
        case .passphrase(let passphrase):
            let slot = header.passphraseSlot
            let kek = try MasterKeys.deriveKEK(passphrase: passphrase, salt: slot.salt, parameters: slot.parameters)
            guard let master = slot.unwrap(with: kek, vaultID: header.vaultID) else {
                throw VaultError(.wrongPassphrase, "The passphrase is wrong for this vault.")
            }
            let keys = MasterKeys(master: master)
            return UnlockedKeys(operational: keys.operational, master: keys, passphraseKEK: kek, recoveryKey: nil)
        case .recoveryKey(let recoveryKey):
            guard let slot = header.recoverySlot else {
                throw VaultError(.noRecoveryKey, "This vault has no recovery key; unlock it with its passphrase.")
            }
            guard let master = slot.unwrap(with: recoveryKey, vaultID: header.vaultID) else {
                throw VaultError(
                    .wrongRecoveryKey,
                    "The recovery key does not open this vault (it may belong to another vault, or have been replaced or removed)."
                )
            }
            let keys = MasterKeys(master: master)
            return UnlockedKeys(
                operational: keys.operational, master: keys, passphraseKEK: nil, recoveryKey: recoveryKey)
        case .session(let token, let directory):
            guard header.formatVersion >= 2 else {
                throw VaultError(
                    .sessionInvalid, "This vault's header is in format 1, which no session of this Coffer was made for."
                )
            }
            let operational = try SessionStore.unwrapKeys(
                token: token, directory: directory, header: header, clock: clock)
            return UnlockedKeys(operational: operational, master: nil, passphraseKEK: nil, recoveryKey: nil)
        }
    }

    /// Reads what needs no key: format, KDF profile, recovery slot, row count.
    public static func summary(at url: URL) throws -> VaultSummary {
        let (database, _, header) = try connect(url)
        let rows = try withStorageErrors {
            try database.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM record") ?? 0 }
        }
        return VaultSummary(
            formatVersion: Int(header.formatVersion), vaultID: header.vaultID,
            kdfParameters: header.passphraseSlot.parameters,
            hasRecoveryKey: header.recoverySlot != nil, keyGeneration: header.generation, storedRecordCount: rows,
            keyHistory: header.keyHistory)
    }

    /// The vault id in the header of a file that does not open (a damaged header, a planted
    /// schema), read with no check at all: only to find the sessions `coffer lock` must end.
    public static func unverifiedVaultID(at url: URL) -> VaultID? {
        guard FileManager.default.fileExists(atPath: url.path),
            let database = try? DatabaseQueue(path: url.path, configuration: Schema.configuration(readOnly: true)),
            let body = try? database.read({ try Data.fetchOne($0, sql: "SELECT body FROM header WHERE id = 1") })
        else { return nil }
        let bytes = Array(body)
        let start = VaultHeader.magic.count + 2
        guard bytes.count >= start + VaultID.byteCount,
            Array(bytes.prefix(VaultHeader.magic.count)) == VaultHeader.magic
        else { return nil }
        return VaultID(unchecked: Array(bytes[start..<start + VaultID.byteCount]))
    }

    /// Opens the SQLite file, checks that it is a Coffer vault this build can read and that its
    /// schema is exactly Coffer's (no trigger, view, index or column anyone else added), brings
    /// the schema up to date, and parses the header (checksum, version, slots, key history).
    static func connect(_ url: URL) throws -> (DatabaseQueue, [UInt8], VaultHeader) {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else {
            throw VaultError(.notFound, "No vault at \(url.path).")
        }
        guard !isDirectory.boolValue else {
            throw VaultError(.notAVault, "\(url.path) is a folder, not a Coffer vault: give the vault file inside it.")
        }
        return try withStorageErrors {
            let database = try DatabaseQueue(path: url.path, configuration: Schema.configuration())
            let migrator = Schema.migrator
            let (bytes, upToDate) = try database.read { db -> ([UInt8], Bool) in
                guard try db.tableExists("header"), try db.tableExists("grdb_migrations") else {
                    throw VaultError(.notAVault, "\(url.path) is an SQLite database but not a Coffer vault.")
                }
                if try migrator.hasBeenSuperseded(db) {
                    throw VaultError(
                        .unsupportedVersion, "This vault was written by a newer Coffer; upgrade Coffer to open it.")
                }
                try Schema.checkPinned(db)
                guard let body = try Data.fetchOne(db, sql: "SELECT body FROM header WHERE id = 1") else {
                    throw VaultError(.headerDamaged, "The vault header is damaged: it is missing.")
                }
                return (Array(body), try migrator.hasCompletedMigrations(db))
            }
            let header = try VaultHeader.decode(bytes)
            if !upToDate { try migrator.migrate(database) }
            return (database, bytes, header)
        }
    }

    static func finishOpening(
        url: URL, database: DatabaseQueue, headerBytes: [UInt8], header: VaultHeader, keys: UnlockedKeys,
        rollbackGuard: RollbackGuard?
    ) throws -> Vault {
        try checkHeaderMAC(header, keys: keys)
        var state = try withStorageErrors {
            try database.read {
                try loadState(db: $0, header: header, headerBytes: headerBytes, keys: keys.operational)
            }
        }
        if let rollbackGuard {
            let check = { (state: VaultState) throws in
                try rollbackGuard.checkState(
                    vaultID: header.vaultID, device: state.commit.deviceID, counter: state.commit.counter,
                    state: CommitRecord.stateDigest(ofSealed: state.commitSealed), path: url.standardizedFileURL.path)
            }
            // Other processes may write, and raise the mark, after this one read the file (again
            // and again while they keep writing): only the file as it is now counts, so a refusal
            // stands once the file has stopped changing under it.
            while true {
                do {
                    try check(state)
                    break
                } catch let error as VaultError where error.code == .rolledBack {
                    let now = try withStorageErrors {
                        try database.read {
                            try Data.fetchOne($0, sql: "SELECT sealed FROM commit_record WHERE id = 1")
                        }
                    }
                    guard now != state.commitSealed else { throw error }
                    state = try withStorageErrors {
                        try database.read {
                            try loadState(db: $0, header: header, headerBytes: headerBytes, keys: keys.operational)
                        }
                    }
                }
            }
        }
        let vault = Vault(
            url: url, database: database, headerBytes: headerBytes, header: header, keys: keys, state: state,
            rollbackGuard: rollbackGuard)
        vault.recordMark()
        return vault
    }

    /// Raises this machine's high-water mark to the state this process holds.
    private func recordMark() {
        rollbackGuard?.record(
            vaultID: id, format: header.formatVersion, generation: header.generation, device: state.commit.deviceID,
            counter: state.commit.counter, state: stateDigest, path: url.standardizedFileURL.path)
    }

    // MARK: Verification

    /// Re-reads the header and every record from disk and checks them all.
    public func verify() throws -> VerificationReport {
        let current = try withStorageErrors {
            try database.read { db -> [UInt8] in
                try Schema.checkPinned(db)
                guard let body = try Data.fetchOne(db, sql: "SELECT body FROM header WHERE id = 1") else {
                    throw VaultError(.headerDamaged, "The vault header is damaged: it is missing.")
                }
                return Array(body)
            }
        }
        let parsed = try VaultHeader.decode(current)
        if let master = keys.master {
            guard constantTimeEqual(master.operational.masterKeyID, parsed.masterKeyID),
                parsed.hasValidMAC(keys: master)
            else {
                throw VaultError(
                    .headerTampered, "The vault header has been altered: its authentication code does not match.")
            }
        } else {
            guard parsed.generation == header.generation,
                constantTimeEqual(keys.operational.masterKeyID, parsed.masterKeyID)
            else {
                throw VaultError(
                    .headerTampered, "The vault header was replaced while this command ran: it names other keys.")
            }
        }
        let fresh = try withStorageErrors {
            try database.read {
                try Self.loadState(db: $0, header: parsed, headerBytes: current, keys: keys.operational)
            }
        }
        headerBytes = current
        header = parsed
        state = fresh
        return VerificationReport(recordCount: fresh.records.count, commitCounter: fresh.commit.counter)
    }

    /// Reads the commit record, manifest and records and checks each against the others.
    /// Collects every problem instead of stopping at the first, so `verify` can name them all.
    private static func loadState(db: Database, header: VaultHeader, headerBytes: [UInt8], keys: OperationalKeys) throws
        -> VaultState
    {
        let vaultID = header.vaultID
        func failure(_ problems: [IntegrityProblem]) -> VaultError {
            VaultError(
                .integrityFailure,
                "The vault is damaged or has been tampered with: \(problems.count) problem\(problems.count == 1 ? "" : "s") found.",
                problems: problems)
        }
        guard let commitSealed = try Data.fetchOne(db, sql: "SELECT sealed FROM commit_record WHERE id = 1") else {
            throw failure([
                IntegrityProblem(kind: .structureDamaged, recordID: nil, detail: "the commit record is missing")
            ])
        }
        guard
            let commit = CommitRecord.open(
                commitSealed, key: keys.integrity, vaultID: vaultID, formatVersion: header.formatVersion)
        else {
            throw failure([
                IntegrityProblem(
                    kind: .structureDamaged, recordID: nil,
                    detail: header.formatVersion >= 2
                        ? "the commit record does not authenticate under this header's keys (altered, from another vault, or the header is older or newer than the data)"
                        : "the commit record does not authenticate (altered, or from another vault)")
            ])
        }
        if let digest = commit.headerDigest, !constantTimeEqual(digest, BLAKE2b.hash(headerBytes)) {
            throw VaultError(
                .headerTampered,
                "The vault header is not the one its commit record names: an older or edited header was put back.")
        }

        var problems: [IntegrityProblem] = []
        var buckets = [[ManifestEntry]](repeating: [], count: Manifest.bucketCount)
        var trusted = [Bool](repeating: false, count: Manifest.bucketCount)
        var seen = [Bool](repeating: false, count: Manifest.bucketCount)
        // Buckets are read in order, then checked and opened on all cores.
        var sealedBuckets: [(index: Int, sealed: Data)] = []
        let bucketRows = try Row.fetchCursor(db, sql: "SELECT bucket, sealed FROM manifest ORDER BY bucket")
        while let row = try bucketRows.next() {
            let index: Int = row[0]
            guard (0..<Manifest.bucketCount).contains(index), !seen[index] else {
                problems.append(
                    IntegrityProblem(
                        kind: .structureDamaged, recordID: nil, detail: "the manifest has an extra bucket \(index)"))
                continue
            }
            seen[index] = true
            sealedBuckets.append((index, row[1]))
        }
        let checked = Manifest.openAll(
            sealedBuckets, digests: commit.bucketDigests, key: keys.integrity, vaultID: vaultID)
        for ((index, _), result) in zip(sealedBuckets, checked) {
            switch result {
            case .digestMismatch:
                problems.append(
                    IntegrityProblem(
                        kind: .structureDamaged, recordID: nil,
                        detail: "manifest bucket \(index) does not match the commit record (altered or rolled back)"))
            case .damaged:
                problems.append(
                    IntegrityProblem(
                        kind: .structureDamaged, recordID: nil, detail: "manifest bucket \(index) is damaged"))
            case .opened(let entries):
                buckets[index] = entries
                trusted[index] = true
            }
        }
        for index in 0..<Manifest.bucketCount where !seen[index] {
            problems.append(
                IntegrityProblem(kind: .structureDamaged, recordID: nil, detail: "manifest bucket \(index) is missing"))
        }
        let listed = buckets.reduce(0) { $0 + $1.count }
        if problems.isEmpty, UInt64(listed) != commit.recordCount {
            problems.append(
                IntegrityProblem(
                    kind: .structureDamaged, recordID: nil,
                    detail: "the manifest lists \(listed) records but the commit record counts \(commit.recordCount)"))
        }

        // Merge the id-ordered rows with the id-ordered manifest (buckets 0...255 in turn are in
        // id order too), so every record is matched in one pass without a lookup table.
        // A cursor over the buckets in turn (no flattened copy: a million entries are 40 MB).
        var expected = ManifestCursor(buckets: buckets)
        var previous: RecordID?
        func reportMissing(upTo id: RecordID?) {
            while let listedEntry = expected.current, id.map({ listedEntry.id < $0 }) ?? true {
                problems.append(
                    IntegrityProblem(
                        kind: .recordMissing, recordID: listedEntry.id,
                        detail: "is listed in the commit record but missing from the file (deleted)"))
                expected.advance()
            }
        }
        // First pass, in SQLite's id order: structure checks, and every sealed record copied
        // into one buffer. Decryption, the expensive part, then runs in parallel.
        // Rows are opened in batches, so the sealed copies never all sit in memory at once.
        let batchSize = 16_384
        var pending: [SealedRow] = []
        pending.reserveCapacity(min(listed, batchSize))
        var sealedBytes: [UInt8] = []
        sealedBytes.reserveCapacity(min(listed, batchSize) * 160)
        // Payloads are shorter than their sealed form by at least the nonce and tag: reserving
        // that bound once avoids copying the whole buffer as it grows (untouched capacity costs
        // no memory).
        let sealedTotal = try Int.fetchOne(db, sql: "SELECT sum(length(sealed)) FROM record") ?? 0
        var records = RecordStore(
            reservingCapacity: listed,
            payloadBytes: max(0, sealedTotal - listed * XChaCha20Poly1305.SealedBox.overheadByteCount))
        var plain: [UInt8] = []
        func openPending() {
            let opened = RecordCipher.openAll(
                sealedBytes, rows: pending, into: &plain, key: keys.records, vaultID: vaultID)
            defer { secureWipe(&plain) }
            for (row, payload) in zip(pending, opened) {
                let id = row.id, version = UInt64(clamping: row.storedVersion)
                guard let entry = row.entry else {
                    problems.append(
                        IntegrityProblem(
                            kind: .recordUnexpected, recordID: id,
                            detail: payload == nil
                                ? "is not listed in the commit record and does not authenticate (injected, or copied from another vault)"
                                : "is not listed in the commit record (a deleted record put back, or injected)"))
                    continue
                }
                guard let payload else {
                    problems.append(
                        IntegrityProblem(
                            kind: .recordDamaged, recordID: id,
                            detail: version == entry.version
                                ? "does not authenticate (its bytes were altered, or swapped with another record's)"
                                : "does not authenticate, and its version \(row.storedVersion) differs from the committed version \(entry.version)"
                        ))
                    continue
                }
                let tagMatches = sealedBytes.withUnsafeBytes {
                    RecordCipher.tag(of: UnsafeRawBufferPointer(rebasing: $0[row.range])).constantTimeEquals(entry.tag)
                }
                guard version == entry.version, tagMatches else {
                    let detail: String
                    if version == entry.version {
                        detail = "is authentic but not the copy the commit record lists (replaced by another copy)"
                    } else if version < entry.version {
                        detail =
                            "is an older version (\(version)) than the committed version \(entry.version) (this record was rolled back or replayed)"
                    } else {
                        detail =
                            "is newer (version \(version)) than the commit record lists (version \(entry.version)): the commit record and manifest were rolled back, not this record"
                    }
                    problems.append(IntegrityProblem(kind: .recordStale, recordID: id, detail: detail))
                    continue
                }
                plain.withUnsafeBytes {
                    records.append(
                        id: id, version: version, tag: entry.tag, payload: UnsafeRawBufferPointer(rebasing: $0[payload])
                    )
                }
            }
            pending.removeAll(keepingCapacity: true)
            sealedBytes.removeAll(keepingCapacity: true)
        }
        // Straight through SQLite's C API: the sealed blob is copied once, from SQLite's page
        // into the shared buffer, with no object per row.
        let statement = try db.makeStatement(sql: "SELECT id, version, sealed FROM record ORDER BY id")
        let handle = statement.sqliteStatement
        defer { sqlite3_reset(handle) }
        while true {
            let step = sqlite3_step(handle)
            if step == SQLITE_DONE { break }
            // Mapped by withStorageErrors.
            guard step == SQLITE_ROW else { throw DatabaseError(resultCode: ResultCode(rawValue: step)) }
            let idLength = Int(sqlite3_column_bytes(handle, 0))
            guard idLength == RecordID.byteCount, sqlite3_column_type(handle, 0) == SQLITE_BLOB,
                let idBytes = sqlite3_column_blob(handle, 0)
            else {
                problems.append(
                    IntegrityProblem(
                        kind: .recordUnexpected, recordID: nil,
                        detail: "a record with a malformed \(idLength)-byte id is in the file (injected)"))
                continue
            }
            let id = RecordID(unsafe: idBytes)
            if id == previous {
                problems.append(
                    IntegrityProblem(
                        kind: .recordDuplicated, recordID: id, detail: "appears more than once (duplicated)"))
                continue
            }
            previous = id
            reportMissing(upTo: id)
            let storedVersion = sqlite3_column_int64(handle, 1)
            let entry: ManifestEntry? = expected.current?.id == id ? expected.current : nil
            if entry != nil { expected.advance() }
            guard trusted[id.bucket] else { continue }  // its bucket is already reported
            let start = sealedBytes.count
            let length = Int(sqlite3_column_bytes(handle, 2))
            if length > 0, let blob = sqlite3_column_blob(handle, 2) {
                sealedBytes.append(contentsOf: UnsafeRawBufferPointer(start: blob, count: length))
            }
            pending.append(
                SealedRow(id: id, storedVersion: storedVersion, entry: entry, range: start..<sealedBytes.count))
            if pending.count == batchSize { openPending() }
        }
        reportMissing(upTo: nil)

        openPending()
        guard problems.isEmpty else { throw failure(problems) }
        return VaultState(commit: commit, commitSealed: commitSealed, records: records)
    }
    // MARK: Writing records

    /// Puts and deletes records in one transaction that also re-seals the affected manifest
    /// buckets and the commit record. Either all of it is written or none.
    public func apply(_ changes: [RecordChange]) throws {
        guard !changes.isEmpty else { return }
        if header.formatVersion < VaultHeader.currentFormatVersion { try upgradeFormat() }
        let keys = self.keys.operational
        let vaultID = id
        var updated = state
        try inImmediateTransaction { db in
            updated = try self.currentState(db)
            // Everything walks the changes in id order (a stable sort keeps each id's own order):
            // SQLite then appends to its B-tree, and the record store takes the changes in one
            // linear merge; the touched manifest buckets are then rebuilt from it.
            let order = changes.indices.sorted { (changes[$0].id, $0) < (changes[$1].id, $1) }
            var versions = [UInt64](repeating: 0, count: changes.count)
            var previous: (id: RecordID, version: UInt64?)?  // an id's state after its earlier change in this batch
            for position in order {
                let change = changes[position]
                let current = previous?.id == change.id ? previous!.version : updated.record(change.id)?.version
                if change.isDelete, current == nil {
                    throw VaultError(.recordNotFound, "Record \(change.id.hex) does not exist; nothing was changed.")
                }
                versions[position] = change.isDelete ? 0 : (current ?? 0) + 1
                previous = (change.id, change.isDelete ? nil : versions[position])
            }
            // Sealed on all cores, then written.
            let sealed = RecordCipher.sealAll(changes, versions: versions, key: keys.records, vaultID: vaultID)
            let upsert = try db.makeStatement(
                sql: """
                    INSERT INTO record (id, version, sealed) VALUES (?, ?, ?)
                    ON CONFLICT (id) DO UPDATE SET version = excluded.version, sealed = excluded.sealed
                    """)
            // Id order, last change per id.
            var finalStates: [(id: RecordID, written: (record: VaultRecord, tag: RecordTag)?)] = []
            finalStates.reserveCapacity(changes.count)
            var changedBuckets = Set<Int>()
            for (step, position) in order.enumerated() {
                WorkProgress.report(.writing, step + 1, of: order.count)
                let written: (record: VaultRecord, tag: RecordTag)?
                switch changes[position] {
                case .put(let id, let payload):
                    let (bytes, tag) = sealed[position]!
                    try Self.upsert(upsert.sqliteStatement, id: id, version: versions[position], sealed: bytes)
                    written = (VaultRecord(id: id, version: versions[position], payload: payload), tag)
                case .delete(let id):
                    try db.execute(sql: "DELETE FROM record WHERE id = ?", arguments: [Data(id.bytes)])
                    try Self.expectOneChange(db, "deleting a record")
                    written = nil
                }
                let id = changes[position].id
                if finalStates.last?.id == id { finalStates.removeLast() }
                finalStates.append((id, written))
                changedBuckets.insert(id.bucket)
            }
            updated.records = updated.records.merging(finalStates)
            try self.writeManifest(
                db, state: &updated, buckets: changedBuckets, keys: keys, headerBytes: self.headerBytes)
        }
        state = updated
        recordMark()
    }

    /// One row through SQLite's C API: a bulk import writes many, and GRDB's argument handling
    /// would cost more than the write itself.
    private static func upsert(_ handle: SQLiteStatement, id: RecordID, version: UInt64, sealed: Data) throws {
        let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
        sqlite3_reset(handle)
        var result = withUnsafeBytes(of: (id.high.bigEndian, id.low.bigEndian)) {
            sqlite3_bind_blob(handle, 1, $0.baseAddress, Int32($0.count), transient)
        }
        if result == SQLITE_OK { result = sqlite3_bind_int64(handle, 2, Int64(version)) }
        if result == SQLITE_OK {
            result = sealed.withUnsafeBytes { sqlite3_bind_blob(handle, 3, $0.baseAddress, Int32($0.count), transient) }
        }
        if result == SQLITE_OK { result = sqlite3_step(handle) }
        // Mapped by withStorageErrors.
        guard result == SQLITE_DONE else { throw DatabaseError(resultCode: ResultCode(rawValue: result)) }
        guard sqlite3_changes(sqlite3_db_handle(handle)) == 1 else { throw Self.writeVanished("writing a record") }
    }

    /// What a planted trigger (`RAISE(IGNORE)`) or rule would do is make a write vanish while
    /// SQLite reports success. The schema check refuses such files on open; this is the second
    /// line: every write must change exactly what it says.
    static func writeVanished(_ what: String) -> VaultError {
        VaultError(
            .schemaTampered,
            "The vault file did not take a write (\(what) changed nothing): something in the file intercepts writes. Nothing was changed."
        )
    }

    static func expectOneChange(_ db: Database, _ what: String) throws {
        guard db.changesCount == 1 else { throw writeVanished(what) }
    }

    /// The state as it is on disk now: ours, unless another process committed since we read it,
    /// in which case everything is re-read and re-verified inside the caller's transaction.
    private func currentState(_ db: Database) throws -> VaultState {
        let onDisk = try Data.fetchOne(db, sql: "SELECT sealed FROM commit_record WHERE id = 1")
        if onDisk == state.commitSealed { return state }
        let body = try Data.fetchOne(db, sql: "SELECT body FROM header WHERE id = 1").map(Array.init)
        guard body == headerBytes else {
            throw VaultError(
                .storageFailure,
                "Another process changed this vault's keys while it was open here. Nothing was written; try again.")
        }
        return try Self.loadState(db: db, header: header, headerBytes: headerBytes, keys: keys.operational)
    }

    /// Re-seals `buckets` and the commit record (counter + 1, naming `headerBytes` in format 2),
    /// then reads the commit record back inside the transaction: what was written must be what
    /// is there.
    private func writeManifest(
        _ db: Database, state: inout VaultState, buckets: Set<Int>, keys: OperationalKeys, headerBytes: [UInt8]
    ) throws {
        for bucket in buckets.sorted() {
            let sealed = Manifest.seal(
                state.records.manifestEntries(inBucket: bucket), bucket: bucket, key: keys.integrity, vaultID: id)
            state.commit.bucketDigests[bucket] = Manifest.digest(ofSealed: sealed)
            try db.execute(sql: "UPDATE manifest SET sealed = ? WHERE bucket = ?", arguments: [sealed, bucket])
            try Self.expectOneChange(db, "a manifest bucket")
        }
        state.commit.counter += 1
        state.commit.recordCount = UInt64(state.records.count)
        if state.commit.deviceID != nil { state.commit.headerDigest = BLAKE2b.hash(headerBytes) }
        state.commitSealed = state.commit.sealed(key: keys.integrity, vaultID: id)
        try db.execute(sql: "UPDATE commit_record SET sealed = ? WHERE id = 1", arguments: [state.commitSealed])
        try Self.expectOneChange(db, "the commit record")
        guard try Data.fetchOne(db, sql: "SELECT sealed FROM commit_record WHERE id = 1") == state.commitSealed else {
            throw Self.writeVanished("the commit record read back differs")
        }
    }

    /// Replaces the header inside a write transaction and reads it back.
    private static func writeHeader(_ db: Database, _ bytes: [UInt8]) throws {
        try db.execute(sql: "UPDATE header SET body = ? WHERE id = 1", arguments: [Data(bytes)])
        try expectOneChange(db, "the header")
        guard try Data.fetchOne(db, sql: "SELECT body FROM header WHERE id = 1").map(Array.init) == bytes else {
            throw writeVanished("the header read back differs")
        }
    }

    private func inImmediateTransaction(_ body: (Database) throws -> Void) throws {
        try withStorageErrors {
            try database.writeWithoutTransaction { db in
                try db.inTransaction(.immediate) {
                    try body(db)
                    return .commit
                }
            }
        }
    }

    // MARK: Keys
    //
    // Everything here needs the master key: slots wrap it and the header MAC is keyed from it.
    // A vault opened with a session has no master key, so none of this is possible with one,
    // whatever the caller does.

    private func requireMaster(_ action: String) throws -> MasterKeys {
        guard let master = keys.master else {
            throw VaultError(
                .passphraseRequired,
                "\(action) needs the passphrase (or recovery key): a session does not hold the master key.")
        }
        return master
    }

    /// Rewrites a format 1 vault in format 2 in one transaction: the same master key and slots,
    /// a key history of one generation, and a commit record that names the header and a new
    /// device id. No record is re-sealed.
    private func upgradeFormat() throws {
        let master = try requireMaster("Upgrading the vault's format")
        let newHeader = header.replacingSlots(
            passphrase: header.passphraseSlot, recovery: header.recoverySlot, keys: master)
        try writeHeader(newHeader, keys: master, device: state.commit.deviceID ?? .random())
    }

    /// Writes `newHeader` (same master key) and a commit record naming it, in one transaction.
    private func writeHeader(_ newHeader: VaultHeader, keys master: MasterKeys, device: DeviceID) throws {
        let newBytes = newHeader.encoded()
        var updated = state
        try inImmediateTransaction { db in
            updated = try self.currentState(db)
            updated.commit.deviceID = device
            try Self.writeHeader(db, newBytes)
            try self.writeManifest(db, state: &updated, buckets: [], keys: master.operational, headerBytes: newBytes)
        }
        header = newHeader
        headerBytes = newBytes
        state = updated
        recordMark()
    }

    /// Changes the passphrase. By default this replaces the master key (as `rekey` does), so the
    /// old passphrase opens neither this vault nor any later archive, even together with an
    /// older header or archive. `keepMasterKey` only re-wraps the master key: instant, but the
    /// old passphrase still opens any older copy of the header (every archive made before),
    /// and with it this vault's data.
    @discardableResult
    public func changePassphrase(
        to newPassphrase: Passphrase, parameters: Argon2idParameters? = nil, keepMasterKey: Bool = false
    ) throws -> KeyChangeReport {
        let master = try requireMaster("Changing the passphrase")
        let parameters = parameters ?? kdfParameters
        let salt = Salt.random()
        let kek = try MasterKeys.deriveKEK(passphrase: newPassphrase, salt: salt, parameters: parameters)
        if keepMasterKey {
            let slot = PassphraseSlot.wrapping(master.master, kek: kek, parameters: parameters, salt: salt, vaultID: id)
            try writeHeader(
                header.replacingSlots(passphrase: slot, recovery: header.recoverySlot, keys: master),
                keys: master, device: state.commit.deviceID ?? .random())
            keys = UnlockedKeys(
                operational: keys.operational, master: master, passphraseKEK: kek, recoveryKey: keys.recoveryKey)
            return KeyChangeReport(
                replacedMasterKey: false, generation: header.generation, recoveryKeyKept: hasRecoveryKey,
                recoveryKeyDropped: false)
        }
        return try replaceMasterKey(kek: kek, parameters: parameters, salt: salt, recovery: .keep)
    }

    /// Adds a recovery key, shown once. Replacing an existing one replaces the master key too,
    /// so the old recovery key loses its power over this vault and every later archive.
    public func createRecoveryKey() throws -> (RecoveryKey, KeyChangeReport) {
        let master = try requireMaster("Creating a recovery key")
        let recoveryKey = RecoveryKey.generate()
        let recipient = recoveryKey.agreementKey(vaultID: id).publicKey
        if hasRecoveryKey {
            guard let kek = keys.passphraseKEK else {
                throw VaultError(.passphraseRequired, "Replacing the recovery key needs the passphrase.")
            }
            let report = try replaceMasterKey(
                kek: kek, parameters: kdfParameters, salt: header.passphraseSlot.salt, recovery: .sealTo(recipient))
            return (recoveryKey, report)
        }
        let slot = try RecoverySlot.sealing(master.master, to: recipient, vaultID: id)
        try writeHeader(
            header.replacingSlots(passphrase: header.passphraseSlot, recovery: slot, keys: master),
            keys: master, device: state.commit.deviceID ?? .random())
        return (
            recoveryKey,
            KeyChangeReport(
                replacedMasterKey: false, generation: header.generation, recoveryKeyKept: true,
                recoveryKeyDropped: false)
        )
    }

    /// Removes the recovery key and replaces the master key, so the removed key opens neither
    /// this vault nor any later archive. Needs the passphrase (it keeps working).
    @discardableResult
    public func removeRecoveryKey() throws -> KeyChangeReport {
        guard hasRecoveryKey else {
            throw VaultError(.noRecoveryKey, "This vault has no recovery key; nothing was changed.")
        }
        _ = try requireMaster("Removing the recovery key")
        guard let kek = keys.passphraseKEK else {
            throw VaultError(
                .passphraseRequired, "Removing the recovery key needs the passphrase, which keeps working after it.")
        }
        return try replaceMasterKey(
            kek: kek, parameters: kdfParameters, salt: header.passphraseSlot.salt, recovery: .drop)
    }

    /// Whether `rekey` would have to drop the recovery key: a format 1 recovery slot can be re-made
    /// for a new master key only with the recovery key itself, which this opening did not use.
    /// Asked before rekeying, so the user hears it before it happens.
    public var rekeyDropsRecoveryKey: Bool {
        if case .legacy? = header.recoverySlot { return keys.recoveryKey == nil }
        return false
    }

    /// Replaces the master key: every record, the manifest, the commit record and the header are
    /// re-sealed under the new key in one transaction, and the key history gains a generation
    /// certified by the old signing key. The passphrase keeps working; so does the recovery key
    /// (format 1 recovery keys only when this vault was opened with it). Needs the passphrase.
    @discardableResult
    public func rekey() throws -> KeyChangeReport {
        _ = try requireMaster("Rekeying")
        guard let kek = keys.passphraseKEK else {
            throw VaultError(
                .passphraseRequired,
                "Rekeying needs the passphrase (with the recovery key, change the passphrase instead).")
        }
        return try replaceMasterKey(
            kek: kek, parameters: kdfParameters, salt: header.passphraseSlot.salt, recovery: .keep)
    }

    private enum RecoveryPlan {
        case keep
        case drop
        case sealTo(KeyAgreementPublicKey)
    }

    private func replaceMasterKey(
        kek: SymmetricKey, parameters: Argon2idParameters, salt: Salt, recovery plan: RecoveryPlan
    ) throws -> KeyChangeReport {
        let old = try requireMaster("Replacing the master key")
        let newKeys = MasterKeys(master: .random())
        let vaultID = id
        let passphraseSlot = PassphraseSlot.wrapping(
            newKeys.master, kek: kek, parameters: parameters, salt: salt, vaultID: vaultID)
        var recoverySlot: RecoverySlot?
        var dropped = false
        switch plan {
        case .drop:
            recoverySlot = nil
        case .sealTo(let recipient):
            recoverySlot = try RecoverySlot.sealing(newKeys.master, to: recipient, vaultID: vaultID)
        case .keep:
            switch header.recoverySlot {
            case .sealed(let recipient, _, _)?:
                recoverySlot = try RecoverySlot.sealing(newKeys.master, to: recipient, vaultID: vaultID)
            case .legacy?:
                if let recoveryKey = keys.recoveryKey {
                    recoverySlot = try RecoverySlot.sealing(
                        newKeys.master, to: recoveryKey.agreementKey(vaultID: vaultID).publicKey, vaultID: vaultID)
                } else {
                    dropped = true
                }
            case nil:
                recoverySlot = nil
            }
        }
        let previous = header.keyHistory(orFirstSignedBy: old.operational.signing)
        let generation = header.generation + 1
        let history =
            previous + [
                KeyGeneration.certified(
                    number: generation, created: UInt64(Date().timeIntervalSince1970),
                    signingKey: newKeys.operational.signing.publicKey,
                    by: old.operational.signing, vaultID: vaultID)
            ]
        let newHeader = VaultHeader(
            vaultID: vaultID, keys: newKeys, generation: generation, passphraseSlot: passphraseSlot,
            recoverySlot: recoverySlot, keyHistory: history)
        let newHeaderBytes = newHeader.encoded()
        let device = state.commit.deviceID ?? .random()
        var updated = state
        try inImmediateTransaction { db in
            updated = try self.currentState(db)
            updated.commit.deviceID = device
            let records = updated.records
            let newTags = try (0..<records.count).map { index in
                let record = records.record(at: index)
                let (sealed, tag) = RecordCipher.seal(
                    record.payload, id: record.id, version: record.version,
                    key: newKeys.operational.records, vaultID: vaultID)
                try db.execute(
                    sql: "UPDATE record SET sealed = ? WHERE id = ?", arguments: [sealed, Data(record.id.bytes)])
                try Self.expectOneChange(db, "re-sealing a record")
                WorkProgress.report(.reencrypting, index + 1, of: records.count)
                return tag
            }
            updated.records = records.replacingTags(newTags)
            try Self.writeHeader(db, newHeaderBytes)
            try self.writeManifest(
                db, state: &updated, buckets: Set(0..<Manifest.bucketCount), keys: newKeys.operational,
                headerBytes: newHeaderBytes)
        }
        keys = UnlockedKeys(
            operational: newKeys.operational, master: newKeys, passphraseKEK: kek, recoveryKey: keys.recoveryKey)
        header = newHeader
        headerBytes = newHeaderBytes
        state = updated
        recordMark()
        return KeyChangeReport(
            replacedMasterKey: true, generation: generation, recoveryKeyKept: recoverySlot != nil,
            recoveryKeyDropped: dropped)
    }

    // MARK: Sessions

    /// Stores the operational subkeys (never the master key) sealed under a fresh session
    /// secret and returns the token that opens them (the only copy of the secret). The session
    /// lasts `idleTimeout` after each use (as sudo's does), and never beyond `now + lifetime`, by
    /// the wall clock and by the time since boot; with no idle timeout it lasts `lifetime`. A
    /// format 1 vault is upgraded first, so every session has a commit record that authenticates
    /// the header.
    public func createSession(
        lifetime: TimeInterval, idleTimeout: TimeInterval? = nil, directory: URL, now: Date = Date()
    ) throws -> SessionToken {
        if header.formatVersion < VaultHeader.currentFormatVersion { try upgradeFormat() }
        return try SessionStore.create(
            keys: keys.operational, vaultID: id, generation: header.generation, lifetime: lifetime,
            idleTimeout: idleTimeout, directory: directory, clock: .system(now: now))
    }
}
