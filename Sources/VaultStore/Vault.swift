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
    /// Rows in the record table, unauthenticated: a hint until the vault is unlocked and verified.
    public let storedRecordCount: Int
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

/// An open, unlocked, verified vault: one SQLite file of opaque encrypted records.
///
/// Opening checks the header, unwraps the master key and verifies every record against the
/// commit record, so a damaged or tampered vault never opens silently. Every write is one
/// SQLite transaction that also updates the manifest and commit record.
public final class Vault {
    public let url: URL
    private let database: DatabaseQueue
    private var headerBytes: [UInt8]
    private var header: VaultHeader
    private var keys: VaultKeys
    private var state: VaultState

    private init(url: URL, database: DatabaseQueue, headerBytes: [UInt8], header: VaultHeader, keys: VaultKeys, state: VaultState) {
        self.url = url
        self.database = database
        self.headerBytes = headerBytes
        self.header = header
        self.keys = keys
        self.state = state
    }

    public var id: VaultID { header.vaultID }
    public var formatVersion: Int { Int(header.formatVersion) }
    public var kdfParameters: Argon2idParameters { header.passphraseSlot!.argon2Parameters! }
    public var hasRecoveryKey: Bool { header.recoverySlot != nil }
    public var commitCounter: UInt64 { state.commit.counter }
    public var recordCount: Int { state.records.count }

    /// Every payload, without copies, for as long as `body` runs.
    public func withPayloads<Result>(_ body: (PayloadView) throws -> Result) rethrows -> Result {
        try state.records.withView(body)
    }
    /// The vault's Ed25519 public key (archives it signs verify with this).
    public var signingPublicKey: SigningPublicKey { keys.signing.publicKey }

    /// Every record, ordered by id.
    public var records: [VaultRecord] { (0..<state.records.count).map { state.records.record(at: $0) } }

    public func record(_ id: RecordID) -> VaultRecord? { state.record(id) }

    var headerBytesForBackup: [UInt8] { headerBytes }
    var keysForBackup: VaultKeys { keys }

    // MARK: Create and open

    /// Creates a new, empty vault. The file is built under a temporary name and linked into
    /// place only when complete, so a crash never leaves a half-made vault at `url`.
    public static func create(at url: URL, passphrase: Passphrase, parameters: Argon2idParameters) throws -> Vault {
        let fileManager = FileManager.default
        guard !fileManager.fileExists(atPath: url.path) else {
            throw VaultError(.alreadyExists, "A vault already exists at \(url.path); nothing was changed.")
        }
        let directory = url.deletingLastPathComponent()
        try withStorageErrors {
            if !fileManager.fileExists(atPath: directory.path) {
                try fileManager.createDirectory(at: directory, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
            }
        }
        let vaultID = VaultID.random()
        let keys = VaultKeys(master: .random())
        let slot = try VaultKeys.passphraseSlot(for: keys.master, passphrase: passphrase, parameters: parameters, vaultID: vaultID)
        let header = VaultHeader(vaultID: vaultID, keys: keys, slots: [slot])

        let temporary = directory.appendingPathComponent(".\(url.lastPathComponent).\(SecureRandom.bytes(count: 6).hexString).creating")
        defer {
            for suffix in ["", "-wal", "-shm", "-journal"] { unlink(temporary.path + suffix) }
        }
        try withStorageErrors {
            let database = try DatabaseQueue(path: temporary.path, configuration: Schema.configuration())
            chmod(temporary.path, 0o600)
            try Schema.migrator.migrate(database)
            try database.write { db in
                try db.execute(sql: "INSERT INTO header (id, body) VALUES (1, ?)", arguments: [Data(header.encoded())])
                var digests: [[UInt8]] = []
                for bucket in 0..<Manifest.bucketCount {
                    let sealed = Manifest.seal([], bucket: bucket, key: keys.integrity, vaultID: vaultID)
                    digests.append(Manifest.digest(ofSealed: sealed))
                    try db.execute(sql: "INSERT INTO manifest (bucket, sealed) VALUES (?, ?)", arguments: [bucket, sealed])
                }
                let commit = CommitRecord(counter: 0, recordCount: 0, bucketDigests: digests)
                try db.execute(sql: "INSERT INTO commit_record (id, sealed) VALUES (1, ?)",
                               arguments: [commit.sealed(key: keys.integrity, vaultID: vaultID)])
            }
            try database.close()
        }
        // link(2) fails if `url` appeared meanwhile, so an existing vault is never replaced.
        guard link(temporary.path, url.path) == 0 else {
            if errno == EEXIST {
                throw VaultError(.alreadyExists, "A vault already exists at \(url.path); nothing was changed.")
            }
            throw VaultError(.storageFailure, "Could not create the vault at \(url.path): \(String(cString: strerror(errno))).")
        }
        syncDirectory(directory)
        let (database, headerBytes, storedHeader) = try connect(url)
        return try finishOpening(url: url, database: database, headerBytes: headerBytes, header: storedHeader, master: keys.master)
    }

    /// Opens, unlocks and fully verifies the vault at `url`.
    public static func open(at url: URL, with credential: Credential, now: Date = Date()) throws -> Vault {
        let (database, headerBytes, header) = try connect(url)
        let master = try unwrapMasterKey(header: header, credential: credential, now: now)
        return try finishOpening(url: url, database: database, headerBytes: headerBytes, header: header, master: master)
    }

    /// The master key a credential unwraps from `header` (wrong credential → 77-class errors).
    static func unwrapMasterKey(header: VaultHeader, credential: Credential, now: Date) throws -> SymmetricKey {
        switch credential {
        case .passphrase(let passphrase):
            let slot = header.passphraseSlot!
            let kek = try VaultKeys.deriveKEK(passphrase: passphrase, salt: slot.salt, parameters: slot.argon2Parameters!)
            guard let unwrapped = slot.unwrap(with: kek, vaultID: header.vaultID) else {
                throw VaultError(.wrongPassphrase, "The passphrase is wrong for this vault.")
            }
            return unwrapped
        case .recoveryKey(let recoveryKey):
            guard let slot = header.recoverySlot else {
                throw VaultError(.noRecoveryKey, "This vault has no recovery key; unlock it with its passphrase.")
            }
            guard let unwrapped = slot.unwrap(with: recoveryKey.keyEncryptionKey(salt: slot.salt, vaultID: header.vaultID),
                                              vaultID: header.vaultID) else {
                throw VaultError(.wrongRecoveryKey, "The recovery key does not open this vault (it may belong to another vault, or have been replaced).")
            }
            return unwrapped
        case .session(let token, let directory):
            return try SessionStore.unwrapMasterKey(token: token, directory: directory, header: header, now: now)
        }
    }

    /// Reads what needs no key: format, KDF profile, recovery slot, row count.
    public static func summary(at url: URL) throws -> VaultSummary {
        let (database, _, header) = try connect(url)
        let rows = try withStorageErrors { try database.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM record") ?? 0 } }
        return VaultSummary(formatVersion: Int(header.formatVersion), vaultID: header.vaultID,
                            kdfParameters: header.passphraseSlot!.argon2Parameters!,
                            hasRecoveryKey: header.recoverySlot != nil, storedRecordCount: rows)
    }

    /// Opens the SQLite file, checks that it is a Coffer vault this build can read, brings its
    /// schema up to date, and parses the header (checksum, version, parameter ranges).
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
                    throw VaultError(.unsupportedVersion, "This vault was written by a newer Coffer; upgrade Coffer to open it.")
                }
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

    static func finishOpening(url: URL, database: DatabaseQueue, headerBytes: [UInt8], header: VaultHeader,
                                      master: SymmetricKey) throws -> Vault {
        let keys = VaultKeys(master: master)
        guard constantTimeEqual(keys.masterKeyID, header.masterKeyID), header.hasValidMAC(keys: keys) else {
            throw VaultError(.headerTampered, "The vault header has been altered: its authentication code does not match.")
        }
        let state = try withStorageErrors { try database.read { try loadState(db: $0, header: header, keys: keys) } }
        return Vault(url: url, database: database, headerBytes: headerBytes, header: header, keys: keys, state: state)
    }

    // MARK: Verification

    /// Re-reads the header and every record from disk and checks them all.
    public func verify() throws -> VerificationReport {
        let current = try withStorageErrors {
            try database.read { db -> [UInt8] in
                guard let body = try Data.fetchOne(db, sql: "SELECT body FROM header WHERE id = 1") else {
                    throw VaultError(.headerDamaged, "The vault header is damaged: it is missing.")
                }
                return Array(body)
            }
        }
        let parsed = try VaultHeader.decode(current)
        guard constantTimeEqual(keys.masterKeyID, parsed.masterKeyID), parsed.hasValidMAC(keys: keys) else {
            throw VaultError(.headerTampered, "The vault header has been altered: its authentication code does not match.")
        }
        let fresh = try withStorageErrors { try database.read { try Self.loadState(db: $0, header: parsed, keys: keys) } }
        headerBytes = current
        header = parsed
        state = fresh
        return VerificationReport(recordCount: fresh.records.count, commitCounter: fresh.commit.counter)
    }

    /// Reads the commit record, manifest and records and checks each against the others.
    /// Collects every problem instead of stopping at the first, so `verify` can name them all.
    private static func loadState(db: Database, header: VaultHeader, keys: VaultKeys) throws -> VaultState {
        let vaultID = header.vaultID
        func failure(_ problems: [IntegrityProblem]) -> VaultError {
            VaultError(.integrityFailure,
                       "The vault is damaged or has been tampered with: \(problems.count) problem\(problems.count == 1 ? "" : "s") found.",
                       problems: problems)
        }
        guard let commitSealed = try Data.fetchOne(db, sql: "SELECT sealed FROM commit_record WHERE id = 1") else {
            throw failure([IntegrityProblem(kind: .structureDamaged, recordID: nil, detail: "the commit record is missing")])
        }
        guard let commit = CommitRecord.open(commitSealed, key: keys.integrity, vaultID: vaultID) else {
            throw failure([IntegrityProblem(kind: .structureDamaged, recordID: nil,
                                            detail: "the commit record does not authenticate (altered, or from another vault)")])
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
                problems.append(IntegrityProblem(kind: .structureDamaged, recordID: nil, detail: "the manifest has an extra bucket \(index)"))
                continue
            }
            seen[index] = true
            sealedBuckets.append((index, row[1]))
        }
        let checked = Manifest.openAll(sealedBuckets, digests: commit.bucketDigests, key: keys.integrity, vaultID: vaultID)
        for ((index, _), result) in zip(sealedBuckets, checked) {
            switch result {
            case .digestMismatch:
                problems.append(IntegrityProblem(kind: .structureDamaged, recordID: nil,
                                                 detail: "manifest bucket \(index) does not match the commit record (altered or rolled back)"))
            case .damaged:
                problems.append(IntegrityProblem(kind: .structureDamaged, recordID: nil, detail: "manifest bucket \(index) is damaged"))
            case .opened(let entries):
                buckets[index] = entries
                trusted[index] = true
            }
        }
        for index in 0..<Manifest.bucketCount where !seen[index] {
            problems.append(IntegrityProblem(kind: .structureDamaged, recordID: nil, detail: "manifest bucket \(index) is missing"))
        }
        let listed = buckets.reduce(0) { $0 + $1.count }
        if problems.isEmpty, UInt64(listed) != commit.recordCount {
            problems.append(IntegrityProblem(kind: .structureDamaged, recordID: nil,
                                             detail: "the manifest lists \(listed) records but the commit record counts \(commit.recordCount)"))
        }

        // Merge the id-ordered rows with the id-ordered manifest (buckets 0...255 in turn are in
        // id order too), so every record is matched in one pass without a lookup table.
        // A cursor over the buckets in turn (no flattened copy: a million entries are 40 MB).
        var expected = ManifestCursor(buckets: buckets)
        var previous: RecordID?
        func reportMissing(upTo id: RecordID?) {
            while let listedEntry = expected.current, id.map({ listedEntry.id < $0 }) ?? true {
                problems.append(IntegrityProblem(kind: .recordMissing, recordID: listedEntry.id,
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
        var records = RecordStore(reservingCapacity: listed, payloadBytes: max(0, sealedTotal - listed * (RecordCipher.nonceByteCount + RecordCipher.tagByteCount)))
        var plain: [UInt8] = []
        func openPending() {
            let opened = RecordCipher.openAll(sealedBytes, rows: pending, into: &plain, key: keys.records, vaultID: vaultID)
            defer { secureWipe(&plain) }
            for (row, payload) in zip(pending, opened) {
                let id = row.id, version = UInt64(clamping: row.storedVersion)
                guard let entry = row.entry else {
                    problems.append(IntegrityProblem(kind: .recordUnexpected, recordID: id, detail: payload == nil
                        ? "is not listed in the commit record and does not authenticate (injected, or copied from another vault)"
                        : "is not listed in the commit record (a deleted record put back, or injected)"))
                    continue
                }
                guard let payload else {
                    problems.append(IntegrityProblem(kind: .recordDamaged, recordID: id,
                        detail: version == entry.version
                            ? "does not authenticate (its bytes were altered, or swapped with another record's)"
                            : "does not authenticate, and its version \(row.storedVersion) differs from the committed version \(entry.version)"))
                    continue
                }
                let tagMatches = sealedBytes.withUnsafeBytes { RecordCipher.tag(of: UnsafeRawBufferPointer(rebasing: $0[row.range])).constantTimeEquals(entry.tag) }
                guard version == entry.version, tagMatches else {
                    problems.append(IntegrityProblem(kind: .recordStale, recordID: id,
                        detail: version == entry.version
                            ? "is authentic but not the copy the commit record lists (replaced by another copy)"
                            : "is an older version (\(version)) than the committed version \(entry.version) (rolled back or replayed)"))
                    continue
                }
                plain.withUnsafeBytes { records.append(id: id, version: version, tag: entry.tag, payload: UnsafeRawBufferPointer(rebasing: $0[payload])) }
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
            guard step == SQLITE_ROW else { throw DatabaseError(resultCode: ResultCode(rawValue: step)) }  // mapped by withStorageErrors
            let idLength = Int(sqlite3_column_bytes(handle, 0))
            guard idLength == RecordID.byteCount, sqlite3_column_type(handle, 0) == SQLITE_BLOB, let idBytes = sqlite3_column_blob(handle, 0) else {
                problems.append(IntegrityProblem(kind: .recordUnexpected, recordID: nil,
                                                 detail: "a record with a malformed \(idLength)-byte id is in the file (injected)"))
                continue
            }
            let id = RecordID(unsafe: idBytes)
            if id == previous {
                problems.append(IntegrityProblem(kind: .recordDuplicated, recordID: id, detail: "appears more than once (duplicated)"))
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
            pending.append(SealedRow(id: id, storedVersion: storedVersion, entry: entry, range: start..<sealedBytes.count))
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
        let keys = self.keys
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
            let upsert = try db.makeStatement(sql: """
                INSERT INTO record (id, version, sealed) VALUES (?, ?, ?)
                ON CONFLICT (id) DO UPDATE SET version = excluded.version, sealed = excluded.sealed
                """)
            var finalStates: [(id: RecordID, written: (record: VaultRecord, tag: RecordTag)?)] = []  // id order, last change per id
            finalStates.reserveCapacity(changes.count)
            var changedBuckets = Set<Int>()
            for position in order {
                let written: (record: VaultRecord, tag: RecordTag)?
                switch changes[position] {
                case .put(let id, let payload):
                    let (bytes, tag) = sealed[position]!
                    try Self.upsert(upsert.sqliteStatement, id: id, version: versions[position], sealed: bytes)
                    written = (VaultRecord(id: id, version: versions[position], payload: payload), tag)
                case .delete(let id):
                    try db.execute(sql: "DELETE FROM record WHERE id = ?", arguments: [Data(id.bytes)])
                    written = nil
                }
                let id = changes[position].id
                if finalStates.last?.id == id { finalStates.removeLast() }
                finalStates.append((id, written))
                changedBuckets.insert(id.bucket)
            }
            updated.records = updated.records.merging(finalStates)
            try self.writeManifest(db, state: &updated, buckets: changedBuckets, keys: keys)
        }
        state = updated
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
        if result == SQLITE_OK { result = sealed.withUnsafeBytes { sqlite3_bind_blob(handle, 3, $0.baseAddress, Int32($0.count), transient) } }
        if result == SQLITE_OK { result = sqlite3_step(handle) }
        guard result == SQLITE_DONE else { throw DatabaseError(resultCode: ResultCode(rawValue: result)) }  // mapped by withStorageErrors
    }

    /// The state as it is on disk now: ours, unless another process committed since we read it,
    /// in which case everything is re-read and re-verified inside the caller's transaction.
    private func currentState(_ db: Database) throws -> VaultState {
        let onDisk = try Data.fetchOne(db, sql: "SELECT sealed FROM commit_record WHERE id = 1")
        if onDisk == state.commitSealed { return state }
        let body = try Data.fetchOne(db, sql: "SELECT body FROM header WHERE id = 1").map(Array.init)
        guard body == headerBytes else {
            throw VaultError(.storageFailure, "Another coffer process changed this vault's keys while this one ran. Nothing was written; run the command again.")
        }
        return try Self.loadState(db: db, header: header, keys: keys)
    }

    private func writeManifest(_ db: Database, state: inout VaultState, buckets: Set<Int>, keys: VaultKeys) throws {
        for bucket in buckets.sorted() {
            let sealed = Manifest.seal(state.records.manifestEntries(inBucket: bucket), bucket: bucket, key: keys.integrity, vaultID: id)
            state.commit.bucketDigests[bucket] = Manifest.digest(ofSealed: sealed)
            try db.execute(sql: "UPDATE manifest SET sealed = ? WHERE bucket = ?", arguments: [sealed, bucket])
        }
        state.commit.counter += 1
        state.commit.recordCount = UInt64(state.records.count)
        state.commitSealed = state.commit.sealed(key: keys.integrity, vaultID: id)
        try db.execute(sql: "UPDATE commit_record SET sealed = ? WHERE id = 1", arguments: [state.commitSealed])
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

    /// Re-wraps the master key under a new passphrase. Records are untouched, so this is instant
    /// and atomic (one row). Old sessions keep working: they hold the unchanged master key.
    public func changePassphrase(to newPassphrase: Passphrase, parameters: Argon2idParameters? = nil) throws {
        let slot = try VaultKeys.passphraseSlot(for: keys.master, passphrase: newPassphrase,
                                                parameters: parameters ?? kdfParameters, vaultID: id)
        try replaceHeader(header.replacingSlots([slot] + header.slots.filter { $0.kind != .passphrase }, keys: keys))
    }

    /// Adds (or replaces) the recovery-key slot and returns the new key, to be shown once.
    public func createRecoveryKey() throws -> RecoveryKey {
        let recoveryKey = RecoveryKey.generate()
        let slot = VaultKeys.recoverySlot(for: keys.master, recoveryKey: recoveryKey, vaultID: id)
        try replaceHeader(header.replacingSlots(header.slots.filter { $0.kind != .recoveryKey } + [slot], keys: keys))
        return recoveryKey
    }

    public func removeRecoveryKey() throws {
        guard hasRecoveryKey else {
            throw VaultError(.noRecoveryKey, "This vault has no recovery key; nothing was changed.")
        }
        try replaceHeader(header.replacingSlots(header.slots.filter { $0.kind != .recoveryKey }, keys: keys))
    }

    /// Replaces the master key: every record, the manifest, the commit record and the header are
    /// re-sealed under the new key in one transaction. `passphrase` must be the current one; it
    /// wraps the new key. The recovery slot is dropped, since its key cannot be re-derived
    /// without the recovery key; returns whether one was dropped.
    @discardableResult
    public func rekey(passphrase: Passphrase) throws -> Bool {
        let slot = header.passphraseSlot!
        let kek = try VaultKeys.deriveKEK(passphrase: passphrase, salt: slot.salt, parameters: slot.argon2Parameters!)
        guard let current = slot.unwrap(with: kek, vaultID: id), current.constantTimeEquals(keys.master) else {
            throw VaultError(.wrongPassphrase, "The passphrase is wrong for this vault.")
        }
        let newKeys = VaultKeys(master: .random())
        let newSlot = KeySlot.wrapping(newKeys.master, kek: kek, kind: .passphrase, kdf: .argon2id13,
                                       opsLimit: slot.opsLimit, memLimit: slot.memLimit, salt: slot.salt, vaultID: id)
        let newHeader = VaultHeader(vaultID: id, keys: newKeys, slots: [newSlot])
        let newHeaderBytes = newHeader.encoded()
        let droppedRecovery = hasRecoveryKey
        let vaultID = id
        var updated = state
        try inImmediateTransaction { db in
            updated = try self.currentState(db)
            let records = updated.records
            let newTags = try (0..<records.count).map { index in
                let record = records.record(at: index)
                let (sealed, tag) = RecordCipher.seal(record.payload, id: record.id, version: record.version,
                                                      key: newKeys.records, vaultID: vaultID)
                try db.execute(sql: "UPDATE record SET sealed = ? WHERE id = ?", arguments: [sealed, Data(record.id.bytes)])
                return tag
            }
            updated.records = records.replacingTags(newTags)
            try self.writeManifest(db, state: &updated, buckets: Set(0..<Manifest.bucketCount), keys: newKeys)
            try db.execute(sql: "UPDATE header SET body = ? WHERE id = 1", arguments: [Data(newHeaderBytes)])
        }
        keys = newKeys
        header = newHeader
        headerBytes = newHeaderBytes
        state = updated
        return droppedRecovery
    }

    /// Writes a new header if the one on disk is still the one this process read.
    private func replaceHeader(_ newHeader: VaultHeader) throws {
        let newBytes = newHeader.encoded()
        try inImmediateTransaction { db in
            let onDisk = try Data.fetchOne(db, sql: "SELECT body FROM header WHERE id = 1").map(Array.init)
            guard onDisk == headerBytes else {
                throw VaultError(.storageFailure, "Another coffer process changed this vault's keys while this one ran. Nothing was written; run the command again.")
            }
            try db.execute(sql: "UPDATE header SET body = ? WHERE id = 1", arguments: [Data(newBytes)])
        }
        header = newHeader
        headerBytes = newBytes
    }

    // MARK: Sessions

    /// Stores the master key wrapped under a fresh session secret until `now + lifetime`, and
    /// returns the token that unwraps it (the only copy of the secret).
    public func createSession(lifetime: TimeInterval, directory: URL, now: Date = Date()) throws -> SessionToken {
        try SessionStore.create(master: keys.master, vaultID: id, lifetime: lifetime, directory: directory, now: now)
    }
}

/// fsync(2) on a directory, so a rename or link in it survives a power cut.
func syncDirectory(_ directory: URL) {
    let descriptor = Glibc.open(directory.path, O_RDONLY | O_DIRECTORY)
    guard descriptor >= 0 else { return }
    fsync(descriptor)
    close(descriptor)
}
