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
    /// Keys this process already holds in memory (`UnlockedVaultFile.holdKeys()`).
    case held(HeldKeys)
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
    /// Rows in the record table of a format 1 or 2 file, unauthenticated: a hint until the
    /// vault is unlocked and verified. Nil in format 3, whose file does not show its records.
    public let storedRecordCount: Int?
    /// Sealed pages in a format 3 file (nil in formats 1 and 2): all the file shows of its size.
    public let storedPageCount: Int?
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

/// The decrypted, verified contents of a vault and what vouches for them.
struct VaultState {
    /// Only some groups were read (`Vault.open(reading:)`): nothing may be written from it.
    var partial: Bool
    var counter: UInt64
    /// Which copy of the vault the file is (nil only in a format 1 file).
    var deviceID: DeviceID?
    /// The sealed commit record as last read or written, to notice another process's writes.
    var commitSealed: Data
    var records: RecordStore
    /// Format 3's commit record and page indexes; nil for a format 1 or 2 file, which is only
    /// read: its first write upgrades it.
    var paged: PagedLayout?
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
    let database: DatabaseQueue
    private(set) var headerBytes: [UInt8]
    private(set) var header: VaultHeader
    private(set) var keys: UnlockedKeys
    var state: VaultState
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
    public var commitCounter: UInt64 { state.counter }
    public var recordCount: Int { state.records.count }
    /// Sealed pages in a format 3 file (nil for formats 1 and 2).
    public var pageCount: Int? { state.paged.map { $0.indexes.values.reduce(0) { $0 + $1.pages.count } } }
    /// Every group the vault holds records in (format 3; empty for formats 1 and 2), read or not:
    /// the commit record lists them all.
    public var groups: [PageGroup] { state.paged.map { $0.commit.indexDigests.keys.sorted() } ?? [] }
    /// Whether only some groups were read (`open(reading:)`); such a vault cannot be written.
    public var isPartial: Bool { state.partial }
    /// BLAKE2b-256 of the sealed commit record: names this exact state of the file.
    public var stateDigest: [UInt8] { CommitRecord.stateDigest(ofSealed: state.commitSealed) }
    public var keyGeneration: UInt32 { header.generation }
    /// This copy of the vault (nil until a format 1 vault's first write): archives name it so
    /// two copies backing up to one folder are told apart.
    public var deviceID: DeviceID? { state.deviceID }
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

    public func record(_ id: RecordID) -> VaultRecord? {
        state.records.index(of: id).map { state.records.record(at: $0) }
    }

    /// Which group a record is stored in (Specs/vault-format.md, "Format 3"): the layer above
    /// sets it so that what one command reads sits together. Used by writes, and by the upgrade
    /// of a format 1 or 2 file. Without it a record stays in its group, and a new one goes to
    /// `.unsorted`.
    public var grouping: PageGrouping?

    /// The records stored in another group than `grouping` gives them (it changed since they were
    /// written): putting them again moves them. Empty without a grouping, before format 3, or
    /// when only some groups were read.
    public func recordsOutsideTheirGroup() -> [RecordID] {
        guard let grouping, let layout = state.paged, !state.partial else { return [] }
        var found: [RecordID] = []
        state.records.withView { view in
            for (group, index) in layout.indexes {
                for page in index.pages {
                    for id in page.ids {
                        guard let at = state.records.index(of: id), grouping(id, view.payload(at: at)) != group
                        else { continue }
                        found.append(id)
                    }
                }
            }
        }
        return found.sorted()
    }

    /// The row holding `id`'s page, and the row of its group's index (format 3): what an attack
    /// on one page aims at.
    package func pageLocators(of id: RecordID) -> (page: Data, index: Data)? {
        guard let place = state.paged?.places(of: [id])[id] else { return nil }
        let key = keys.operational.locator
        return (
            PageLayout.locator(.page, group: place.group, number: place.number, key: key),
            PageLayout.locator(.index, group: place.group, key: key)
        )
    }

    /// Whether the file is in a format this Coffer reads but does not write: its first write
    /// (or `upgrade()`) rewrites it in format 3, which needs the passphrase.
    public var needsUpgrade: Bool { state.paged == nil }

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
        try build(
            at: url, header: header, keys: keys, records: [], grouping: { _, _ in .unsorted }, replacing: false,
            keepingOldAt: nil)
        let (database, headerBytes, storedHeader) = try connect(url)
        return try finishOpening(
            url: url, database: database, headerBytes: headerBytes, header: storedHeader,
            keys: UnlockedKeys(operational: keys.operational, master: keys, passphraseKEK: kek, recoveryKey: nil),
            rollbackGuard: rollbackGuard)
    }

    /// Writes a complete vault (header, records at version 1 in pages grouped by `grouping`,
    /// their indexes, a commit record with a new device id) under a temporary name, checks it,
    /// and moves it to `url`: linked when nothing is there, renamed over the old file with
    /// `replacing` (kept as `oldCopy` first).
    static func build(
        at url: URL, header: VaultHeader, keys: MasterKeys, records: [(RecordID, Data)], grouping: PageGrouping,
        replacing: Bool, keepingOldAt oldCopy: URL?
    ) throws {
        let built = try buildAside(at: url, header: header, keys: keys, replacing: replacing) { writer in
            for (id, payload) in records {
                try payload.withUnsafeBytes { try writer.append(id, group: grouping(id, $0), payload: $0) }
            }
        }
        try built.moveIntoPlace(replacing: replacing, keepingOldAt: oldCopy)
    }

    /// Writes a complete vault under a temporary name beside `url`: the header, every record
    /// `body` streams into the writer (at version 1, sealed into a page as each page fills, so
    /// memory holds one page per group, never the records), their indexes, and a commit record
    /// with a new device id. Then reads it back from the file, every page checked as a whole open
    /// checks it, and returns it ready to move into place. Nothing is at `url` until then; a
    /// vault built aside and never moved is deleted.
    static func buildAside(
        at url: URL, header: VaultHeader, keys: MasterKeys, replacing: Bool,
        records body: (BulkRecordWriter) throws -> Void
    ) throws -> VaultBuiltAside {
        let fileManager = FileManager.default
        guard replacing || !fileManager.fileExists(atPath: url.path) else {
            throw VaultError(.alreadyExists, "A vault already exists at \(url.path); nothing was changed.")
        }
        let directory = url.deletingLastPathComponent()
        let built = VaultBuiltAside(
            url: url,
            temporary: directory.appendingPathComponent(
                ".\(url.lastPathComponent).\(SecureRandom.bytes(count: 6).hexString).building"))
        // The folders this makes for the vault go again, if still empty, when it never moves in.
        var folder = directory
        while !fileManager.fileExists(atPath: folder.path), folder.path != "/" {
            built.madeFolders.append(folder)
            folder = folder.deletingLastPathComponent()
        }
        try withStorageErrors {
            if !built.madeFolders.isEmpty {
                try fileManager.createDirectory(
                    at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            }
        }
        let vaultID = header.vaultID
        let headerBytes = header.encoded()
        let operational = keys.operational
        let temporary = built.temporary
        var recordCount = 0
        try withStorageErrors {
            let database = try DatabaseQueue(path: temporary.path, configuration: Schema.buildingConfiguration())
            chmod(temporary.path, 0o600)
            try Schema.migrator.migrate(database)
            try database.write { db in
                // Pages land at random places in the page table (their locators are keyed
                // hashes): as for a bulk load, a larger cache keeps its leaves in memory.
                try db.execute(sql: "PRAGMA cache_size = \(Self.bulkCacheSize)")
                try db.execute(sql: "INSERT INTO header (id, body) VALUES (1, ?)", arguments: [Data(headerBytes)])
                let writer = BulkRecordWriter(db: db, keys: operational, vaultID: vaultID) { _ in 0 }
                try body(writer)
                try writer.sealAll()
                recordCount = writer.ids.count
                var commit = PagedCommit(
                    counter: 0, recordCount: UInt64(recordCount), headerDigest: BLAKE2b.hash(headerBytes),
                    deviceID: .random(), indexDigests: [:])
                let indexes = writer.sealed.map { GroupIndex(group: $0.key, pages: $0.value) }
                for index in GroupIndex.sealAll(indexes, keys: operational, vaultID: vaultID) {
                    try db.execute(
                        sql: "INSERT INTO page_index (locator, sealed) VALUES (?, ?)",
                        arguments: [index.locator, index.sealed])
                    try Self.expectOneChange(db, "a page index")
                    commit.indexDigests[index.group] = index.digest
                }
                try db.execute(
                    sql: "INSERT INTO commit_record (id, sealed) VALUES (1, ?)",
                    arguments: [commit.sealed(key: operational.integrity, vaultID: vaultID)])
            }
            try database.writeWithoutTransaction { try $0.execute(sql: "PRAGMA journal_mode = WAL") }
            try database.close()
        }
        // Check the new vault before it goes anywhere: read back from the file, every record
        // counted and none kept. This is also where an id given twice is found.
        let (checkDatabase, checkHeaderBytes, checkHeader) = try connect(temporary)
        try checkHeaderMAC(
            checkHeader,
            keys: UnlockedKeys(operational: operational, master: keys, passphraseKEK: nil, recoveryKey: nil))
        var checked = 0
        do {
            _ = try withStorageErrors {
                try checkDatabase.read { db in
                    try loadPagedState(
                        db: db, header: checkHeader, headerBytes: checkHeaderBytes, keys: operational,
                        sink: { _, _ in checked += 1 })
                }
            }
        } catch let error as VaultError where error.code == .integrityFailure {
            if let repeated = error.problems.first(where: { $0.kind == .recordDuplicated })?.recordID {
                throw VaultError(.duplicateRecord, "Record \(repeated.hex) is given twice; nothing was written.")
            }
            throw VaultError(.integrityFailure, "The new vault did not verify; nothing was written.")
        }
        try withStorageErrors { try checkDatabase.close() }
        guard checked == recordCount else {
            throw VaultError(.integrityFailure, "The new vault did not verify; nothing was written.")
        }
        DurableFile.syncFile(temporary)
        return built
    }

    /// Opens, unlocks and fully verifies the vault at `url`. With `guard`, the file is also
    /// checked against this machine's high-water mark (older, or forked: `.rolledBack`), and the
    /// mark raised to what was found.
    public static func open(
        at url: URL, with credential: Credential, now: Date = Date(), guard rollbackGuard: RollbackGuard? = nil,
        reading: ((PageGroup) -> Bool)? = nil
    ) throws -> Vault {
        try UnlockedVaultFile.unlock(at: url, guard: rollbackGuard) {
            try unlock(header: $0, credential: credential, clock: .system(now: now))
        }.open(reading: reading)
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
        case .held(let held):
            return UnlockedKeys(
                operational: try held.keys(for: header), master: nil, passphraseKEK: nil, recoveryKey: nil)
        }
    }

    /// Reads what needs no key: format, KDF profile, recovery slot, row count.
    public static func summary(at url: URL) throws -> VaultSummary {
        let (database, _, header) = try connect(url)
        let paged = header.formatVersion >= PageLayout.formatVersion
        let rows = try withStorageErrors {
            try database.read {
                try Int.fetchOne($0, sql: paged ? "SELECT COUNT(*) FROM page" : "SELECT COUNT(*) FROM record") ?? 0
            }
        }
        return VaultSummary(
            formatVersion: Int(header.formatVersion), vaultID: header.vaultID,
            kdfParameters: header.passphraseSlot.parameters,
            hasRecoveryKey: header.recoverySlot != nil, keyGeneration: header.generation,
            storedRecordCount: paged ? nil : rows, storedPageCount: paged ? rows : nil,
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
            let (bytes, paged) = try database.read { db -> ([UInt8], Bool) in
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
                return (Array(body), try migrator.appliedIdentifiers(db).contains(Schema.pagedMigration))
            }
            let header = try VaultHeader.decode(bytes)
            // Format 3 lives in the page tables, formats 1 and 2 in the record table: a header
            // that names the other layout was put into this file from elsewhere.
            guard paged == (header.formatVersion >= PageLayout.formatVersion) else {
                throw VaultError(
                    .headerTampered,
                    "The vault header does not belong with this file's data: it names format \(header.formatVersion), the file holds \(paged ? "pages (format 3)" : "records of format 1 or 2")."
                )
            }
            return (database, bytes, header)
        }
    }

    /// The state `load` reads, checked against this machine's high-water mark. Other processes
    /// may write, and raise the mark, after this one read the file (again and again while they
    /// keep writing): only the file as it is now counts, so a refusal stands once the file has
    /// stopped changing under it.
    static func loadStateChecked(
        url: URL, database: DatabaseQueue, header: VaultHeader, rollbackGuard: RollbackGuard?,
        load: (Database) throws -> VaultState
    ) throws -> VaultState {
        var state = try withStorageErrors { try database.read { try load($0) } }
        guard let rollbackGuard else { return state }
        while true {
            do {
                try rollbackGuard.checkState(
                    vaultID: header.vaultID, device: state.deviceID, counter: state.counter,
                    state: CommitRecord.stateDigest(ofSealed: state.commitSealed), path: url.standardizedFileURL.path)
                return state
            } catch let error as VaultError where error.code == .rolledBack {
                let now = try withStorageErrors {
                    try database.read { try Data.fetchOne($0, sql: "SELECT sealed FROM commit_record WHERE id = 1") }
                }
                guard now != state.commitSealed else { throw error }
                state = try withStorageErrors { try database.read { try load($0) } }
            }
        }
    }

    static func finishOpening(
        url: URL, database: DatabaseQueue, headerBytes: [UInt8], header: VaultHeader, keys: UnlockedKeys,
        rollbackGuard: RollbackGuard?, reading: ((PageGroup) -> Bool)? = nil
    ) throws -> Vault {
        try checkHeaderMAC(header, keys: keys)
        let state = try loadStateChecked(
            url: url, database: database, header: header, rollbackGuard: rollbackGuard
        ) { db in
            try loadState(db: db, header: header, headerBytes: headerBytes, keys: keys.operational, reading: reading)
        }
        let vault = Vault(
            url: url, database: database, headerBytes: headerBytes, header: header, keys: keys, state: state,
            rollbackGuard: rollbackGuard)
        vault.recordMark()
        return vault
    }

    /// Reads and verifies the records as the header's format stores them.
    /// A format 1 or 2 file is always read whole: it has no groups.
    static func loadState(
        db: Database, header: VaultHeader, headerBytes: [UInt8], keys: OperationalKeys,
        reading: ((PageGroup) -> Bool)? = nil
    ) throws -> VaultState {
        header.formatVersion >= PageLayout.formatVersion
            ? try loadPagedState(db: db, header: header, headerBytes: headerBytes, keys: keys, reading: reading)
            : try loadLegacyState(db: db, header: header, headerBytes: headerBytes, keys: keys)
    }

    /// What a load that found problems throws: every problem, counted.
    static func failure(_ problems: [IntegrityProblem]) -> VaultError {
        VaultError(
            .integrityFailure,
            "The vault is damaged or has been tampered with: \(problems.count) problem\(problems.count == 1 ? "" : "s") found.",
            problems: problems)
    }

    /// Raises this machine's high-water mark to the state this process holds.
    func recordMark() { Self.recordMark(rollbackGuard, url: url, header: header, state: state) }

    static func recordMark(_ rollbackGuard: RollbackGuard?, url: URL, header: VaultHeader, state: VaultState) {
        rollbackGuard?.record(
            vaultID: header.vaultID, format: header.formatVersion, generation: header.generation,
            device: state.deviceID, counter: state.counter,
            state: CommitRecord.stateDigest(ofSealed: state.commitSealed),
            path: url.standardizedFileURL.path)
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
        return VerificationReport(recordCount: fresh.records.count, commitCounter: fresh.counter)
    }

    // MARK: Writing records

    /// Puts and deletes records in one transaction that re-seals the pages they leave or join,
    /// those pages' group indexes and the commit record. Either all of it is written or none. A
    /// format 1 or 2 file is upgraded to format 3 first (`upgrade()`).
    ///
    /// A vault opened for some groups (`open(reading:)`) writes to those groups and to new ones
    /// only, and deletes only records it read; a record it puts that it did not read must be a
    /// new one (a fresh id): one already in a group not read would be there twice, which
    /// the next whole read reports as a duplicated record.
    public func apply(_ changes: [RecordChange]) throws {
        guard !changes.isEmpty else { return }
        if state.paged == nil { try upgrade() }
        let keys = self.keys.operational
        let vaultID = id
        let grouping = self.grouping
        var updated = state
        try inImmediateTransaction { db in
            updated = try self.currentState(db)
            guard var layout = updated.paged else { throw Self.replacedMeanwhile }
            let final = try Self.finalStates(of: changes, over: updated.records)
            let added = final.count { $0.written != nil && updated.records.index(of: $0.id) == nil }
            let removed = final.count { $0.written == nil }
            if updated.partial {
                // Only into groups read whole, or new: an index not read would be written over.
                let places = layout.places(of: Set(final.map(\.id)))
                for case (let id, let written?) in final {
                    let group =
                        grouping.map { grouping in written.payload.withUnsafeBytes { grouping(id, $0) } }
                        ?? places[id]?.group ?? .unsorted
                    guard layout.indexes[group] != nil || layout.commit.indexDigests[group] == nil else {
                        throw VaultError(
                            .storageFailure,
                            "This vault was opened to read part of it, and the change reaches records it did not read; open it whole to change it. Nothing was changed."
                        )
                    }
                }
                layout.commit.recordCount = UInt64(Int(layout.commit.recordCount) + added - removed)
            }
            try Self.writeChangedPages(
                db, layout: &layout, final: final, store: updated.records, grouping: grouping, keys: keys,
                vaultID: vaultID)
            WorkProgress.report(.writing, changes.count, of: changes.count)
            updated.records = updated.records.merging(final)
            updated.paged = layout
            try self.writeCommit(db, state: &updated, keys: keys, headerBytes: self.headerBytes)
        }
        state = updated
        recordMark()
    }

    /// One final state per id, in id order: each put one version past the record's last; a
    /// record put and deleted again in one batch, and never stored, leaves no trace.
    static func finalStates(of changes: [RecordChange], over records: RecordStore) throws
        -> [(id: RecordID, written: PageRecord?)]
    {
        var final: [(id: RecordID, written: PageRecord?)] = []
        var position: [RecordID: Int] = [:]
        for change in changes {
            let known =
                position[change.id].map { final[$0].written?.version }
                ?? records.index(of: change.id).map { records.versions[$0] }
            switch change {
            case .put(let id, let payload):
                let written = PageRecord(id: id, version: (known ?? 0) + 1, payload: payload)
                if let at = position[id] {
                    final[at].written = written
                } else {
                    position[id] = final.count
                    final.append((id, written))
                }
            case .delete(let id):
                guard known != nil else {
                    throw VaultError(.recordNotFound, "Record \(id.hex) does not exist; nothing was changed.")
                }
                if let at = position[id] {
                    final[at].written = nil
                } else {
                    position[id] = final.count
                    final.append((id, nil))
                }
            }
        }
        // A record put and deleted again in one batch, and never stored, leaves no trace.
        final.removeAll { $0.written == nil && records.index(of: $0.id) == nil }
        final.sort { $0.id < $1.id }
        return final
    }

    static var replacedMeanwhile: VaultError {
        VaultError(
            .storageFailure,
            "Another process changed this vault's format or keys while it was open here. Nothing was written; try again."
        )
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
    func currentState(_ db: Database) throws -> VaultState {
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

    /// Re-seals the commit record (counter + 1, the record count, naming `headerBytes`), then
    /// reads it back inside the transaction: what was written must be what is there.
    func writeCommit(_ db: Database, state: inout VaultState, keys: OperationalKeys, headerBytes: [UInt8])
        throws
    {
        guard var layout = state.paged else { throw Self.replacedMeanwhile }
        layout.commit.counter += 1
        if !state.partial { layout.commit.recordCount = UInt64(state.records.count) }
        layout.commit.headerDigest = BLAKE2b.hash(headerBytes)
        if let device = state.deviceID { layout.commit.deviceID = device }
        state.paged = layout
        state.counter = layout.commit.counter
        state.deviceID = layout.commit.deviceID
        state.commitSealed = layout.commit.sealed(key: keys.integrity, vaultID: id)
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

    func inImmediateTransaction(_ body: (Database) throws -> Void) throws {
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

    /// A vault opened to read some groups holds only their records: a write from it could not
    /// know what it overwrites, so every write needs the whole vault open.
    func requireWhole() throws {
        guard !state.partial else {
            throw VaultError(
                .storageFailure,
                "This vault was opened to read part of it; open it whole to change it. Nothing was changed.")
        }
    }

    /// The master key, for a change of keys: a format 1 or 2 file is upgraded first, since only
    /// format 3 is written.
    private func requireWritable(_ action: String) throws -> MasterKeys {
        try requireWhole()
        let master = try requireMaster(action)
        if state.paged == nil { try upgrade() }
        return master
    }

    private func requireMaster(_ action: String) throws -> MasterKeys {
        guard let master = keys.master else {
            throw VaultError(
                .passphraseRequired,
                "\(action) needs the passphrase (or recovery key): a session does not hold the master key.")
        }
        return master
    }

    /// Rewrites a format 1 or 2 file in format 3 (pages), in place and in one transaction: the
    /// same master key, slots and key history; every record at its version, grouped by
    /// `grouping`; the same device id (a new one for format 1) and the next commit counter. A
    /// consistent copy of the old file is kept beside it until the new one verifies, then removed.
    /// Needs the master key: the header changes.
    public func upgrade() throws {
        guard state.paged == nil else { return }
        let master = try requireMaster("Upgrading this vault to the current format (coffer upgrade)")
        let newHeader = header.replacingSlots(
            passphrase: header.passphraseSlot, recovery: header.recoverySlot, keys: master)
        let newBytes = newHeader.encoded()
        let aside = URL(fileURLWithPath: url.path + ".format\(header.formatVersion)-copy")
        try Self.copyConsistently(database, to: aside)
        let grouping = self.grouping
        var updated = state
        do {
            try inImmediateTransaction { db in
                updated = try self.currentState(db)
                guard updated.paged == nil else { throw Self.replacedMeanwhile }
                // The copy must hold the state being upgraded: a write that came between the
                // copy and this transaction would be missing from it.
                let copied = try DatabaseQueue(path: aside.path, configuration: Schema.configuration(readOnly: true))
                let copiedCommit = try copied.read {
                    try Data.fetchOne($0, sql: "SELECT sealed FROM commit_record WHERE id = 1")
                }
                try copied.close()
                guard copiedCommit == updated.commitSealed else {
                    throw VaultError(
                        .busy,
                        "Another process wrote to the vault while it was being upgraded. Nothing was changed; try again."
                    )
                }
                try Schema.migrateToPages(db)
                try Self.writeHeader(db, newBytes)
                let records = (0..<updated.records.count).map { index in
                    let record = updated.records.record(at: index)
                    return PageRecord(id: record.id, version: record.version, payload: record.payload)
                }
                let device = updated.deviceID ?? .random()
                updated.paged = try Self.writeAllPages(
                    db, records: records, grouping: grouping ?? { _, _ in .unsorted }, keys: master.operational,
                    vaultID: self.id,
                    headerBytes: newBytes, counter: updated.counter, deviceID: device)
                updated.deviceID = device
                try self.writeCommit(db, state: &updated, keys: master.operational, headerBytes: newBytes)
            }
        } catch {
            Self.removeVaultFile(aside)
            throw error
        }
        header = newHeader
        headerBytes = newBytes
        state = updated
        recordMark()
        let report = try verify()
        guard report.recordCount == updated.records.count else {
            throw VaultError(
                .integrityFailure,
                "The upgraded vault did not verify; the vault as it was before is kept at \(aside.path).")
        }
        Self.removeVaultFile(aside)
    }

    /// A copy of the vault as of one committed state (SQLite's `VACUUM INTO`), made 0600.
    private static func copyConsistently(_ database: DatabaseQueue, to copy: URL) throws {
        removeVaultFile(copy)
        let descriptor = Glibc.open(copy.path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        guard descriptor >= 0 else {
            throw VaultError(
                .storageFailure,
                "Could not keep a copy of the vault at \(copy.path) before upgrading it: \(String(cString: strerror(errno))). Nothing was changed."
            )
        }
        Glibc.close(descriptor)
        try withStorageErrors {
            try database.writeWithoutTransaction { try $0.execute(sql: "VACUUM INTO ?", arguments: [copy.path]) }
        }
    }

    static func removeVaultFile(_ url: URL) {
        for suffix in ["", "-wal", "-shm", "-journal"] { unlink(url.path + suffix) }
    }

    /// Writes `newHeader` (same master key) and a commit record naming it, in one transaction.
    private func writeHeader(_ newHeader: VaultHeader, keys master: MasterKeys) throws {
        let newBytes = newHeader.encoded()
        var updated = state
        try inImmediateTransaction { db in
            updated = try self.currentState(db)
            try Self.writeHeader(db, newBytes)
            try self.writeCommit(db, state: &updated, keys: master.operational, headerBytes: newBytes)
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
        let master = try requireWritable("Changing the passphrase")
        let parameters = parameters ?? kdfParameters
        let salt = Salt.random()
        let kek = try MasterKeys.deriveKEK(passphrase: newPassphrase, salt: salt, parameters: parameters)
        if keepMasterKey {
            let slot = PassphraseSlot.wrapping(master.master, kek: kek, parameters: parameters, salt: salt, vaultID: id)
            try writeHeader(
                header.replacingSlots(passphrase: slot, recovery: header.recoverySlot, keys: master),
                keys: master)
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
        let master = try requireWritable("Creating a recovery key")
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
            keys: master)
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
        _ = try requireWritable("Removing the recovery key")
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
        _ = try requireWritable("Rekeying")
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
        let old = try requireWritable("Replacing the master key")
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
        var updated = state
        try inImmediateTransaction { db in
            updated = try self.currentState(db)
            guard let layout = updated.paged else { throw Self.replacedMeanwhile }
            // Every page and index is sealed again under the new keys; the new locator key names
            // every row anew, so the old rows go and each record keeps its group and version.
            let places = layout.places()
            let records = (0..<updated.records.count).map { index in
                let record = updated.records.record(at: index)
                return PageRecord(id: record.id, version: record.version, payload: record.payload)
            }
            try db.execute(sql: "DELETE FROM page")
            try db.execute(sql: "DELETE FROM page_index")
            try Self.writeHeader(db, newHeaderBytes)
            var rebuilt = try Self.writeAllPages(
                db, records: records, grouping: { id, _ in places[id]?.group ?? .unsorted },
                keys: newKeys.operational, vaultID: vaultID, headerBytes: newHeaderBytes,
                counter: layout.commit.counter,
                deviceID: layout.commit.deviceID, progress: .reencrypting)
            rebuilt.commit.counter = layout.commit.counter
            updated.paged = rebuilt
            try self.writeCommit(db, state: &updated, keys: newKeys.operational, headerBytes: newHeaderBytes)
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
    /// vault of an earlier format is upgraded first (this is the passphrase's moment: a session
    /// could not upgrade it), so every session's writes go to format 3.
    public func createSession(
        lifetime: TimeInterval, idleTimeout: TimeInterval? = nil, directory: URL, now: Date = Date()
    ) throws -> SessionToken {
        if state.paged == nil { try upgrade() }
        return try SessionStore.create(
            keys: keys.operational, vaultID: id, generation: header.generation, lifetime: lifetime,
            idleTimeout: idleTimeout, directory: directory, clock: .system(now: now))
    }
}
