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

    /// Reads and verifies every record as `open()` does, keeping none: what `coffer verify`
    /// proves, in memory that grows with the record count (the page indexes' ids) but not with
    /// what the records hold. The high-water mark is checked and raised as an open does. A
    /// vault of format 1 or 2 (no pages) is opened whole.
    public func verify() throws -> VerificationReport {
        guard header.formatVersion >= PageLayout.formatVersion else {
            let vault = try open()
            return VerificationReport(recordCount: vault.recordCount, commitCounter: vault.commitCounter)
        }
        var count = 0
        let state = try Vault.loadStateChecked(
            url: url, database: database, header: header, rollbackGuard: rollbackGuard
        ) { db in
            count = 0
            return try Vault.loadPagedState(
                db: db, header: header, headerBytes: headerBytes, keys: keys.operational, sink: { _, _ in count += 1 })
        }
        Vault.recordMark(rollbackGuard, url: url, header: header, state: state)
        return VerificationReport(recordCount: count, commitCounter: state.counter)
    }

    /// Reads and verifies every record, or with `reading` the records of the groups it selects
    /// (format 3; earlier formats are read whole): the vault, open.
    public func open(reading: ((PageGroup) -> Bool)? = nil) throws -> Vault {
        try Vault.finishOpening(
            url: url, database: database, headerBytes: headerBytes, header: header, keys: keys,
            rollbackGuard: rollbackGuard, reading: reading)
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
    /// header and the high-water mark, which it then raises), the index of `group` (format 3;
    /// the manifest bucket that lists `id` in formats 1 and 2) checked against the commit
    /// record's digest, and the page (or record) checked against that index's tag before it is
    /// opened. Damage anywhere else in the file is not looked for: that is `open()`'s work.
    public func peek(_ id: RecordID, in group: PageGroup = .unsorted) throws -> Peek {
        func damaged(_ detail: String) -> VaultError {
            VaultError(
                .integrityFailure, "The vault is damaged or has been tampered with: 1 problem found.",
                problems: [IntegrityProblem(kind: .structureDamaged, recordID: id, detail: detail)])
        }
        let (peek, commitSealed) =
            header.formatVersion >= PageLayout.formatVersion
            ? try peekPage(id, in: group, damaged: damaged) : try peekLegacy(id, damaged: damaged)
        if let rollbackGuard {
            let path = url.standardizedFileURL.path, state = CommitRecord.stateDigest(ofSealed: commitSealed)
            try rollbackGuard.checkState(
                vaultID: header.vaultID, device: peek.deviceID, counter: peek.commitCounter, state: state, path: path)
            rollbackGuard.record(
                vaultID: header.vaultID, format: header.formatVersion, generation: header.generation,
                device: peek.deviceID, counter: peek.commitCounter, state: state, path: path)
        }
        return peek
    }

    /// The state the file is at now: the digest of its commit record, once that record
    /// authenticates, names this header and is not older than this machine's high-water mark.
    /// Every index, page and record is bound to the commit record by digest, so two reads at
    /// the same state read the same records: what was computed from the first may be kept
    /// (the web app's last page) for as long as the state stays the same.
    public func currentState() throws -> [UInt8] {
        // Another process may write, and raise the mark, between the read and the check: only
        // the file as it is now counts, so a refusal stands once the file has stopped changing.
        var read = try readCommit()
        while true {
            do {
                try checkMark(read)
                return CommitRecord.stateDigest(ofSealed: read.sealed)
            } catch let error as VaultError where error.code == .rolledBack {
                let again = try readCommit()
                guard again.sealed != read.sealed else { throw error }
                read = again
            }
        }
    }

    private func checkMark(_ read: (counter: UInt64, device: DeviceID?, sealed: Data)) throws {
        try rollbackGuard?.checkState(
            vaultID: header.vaultID, device: read.device, counter: read.counter,
            state: CommitRecord.stateDigest(ofSealed: read.sealed), path: url.standardizedFileURL.path)
    }

    /// The commit record, authenticated and checked against the header.
    private func readCommit() throws -> (counter: UInt64, device: DeviceID?, sealed: Data) {
        let operational = keys.operational, vaultID = header.vaultID, headerBytes = headerBytes
        let paged = header.formatVersion >= PageLayout.formatVersion, formatVersion = header.formatVersion
        return try withStorageErrors {
            try database.read { db -> (counter: UInt64, device: DeviceID?, sealed: Data) in
                let sealed = try Data.fetchOne(db, sql: "SELECT sealed FROM commit_record WHERE id = 1")
                let opened: (counter: UInt64, device: DeviceID?, headerDigest: [UInt8]?)? = sealed.flatMap { sealed in
                    if paged {
                        return PagedCommit.open(sealed, key: operational.integrity, vaultID: vaultID).map {
                            (
                                counter: $0.counter, device: Optional($0.deviceID),
                                headerDigest: Optional($0.headerDigest)
                            )
                        }
                    }
                    return CommitRecord.open(
                        sealed, key: operational.integrity, vaultID: vaultID, formatVersion: formatVersion
                    ).map { (counter: $0.counter, device: $0.deviceID, headerDigest: $0.headerDigest) }
                }
                guard let sealed, let opened else {
                    throw VaultError(
                        .integrityFailure, "The vault is damaged or has been tampered with: 1 problem found.",
                        problems: [
                            IntegrityProblem(
                                kind: .structureDamaged, recordID: nil,
                                detail: "the commit record is missing or does not authenticate")
                        ])
                }
                if let digest = opened.headerDigest, !constantTimeEqual(digest, BLAKE2b.hash(headerBytes)) {
                    throw VaultError(
                        .headerTampered,
                        "The vault header is not the one its commit record names: an older or edited header was put back."
                    )
                }
                return (opened.counter, opened.device, sealed)
            }
        }
    }

    private func peekPage(_ id: RecordID, in group: PageGroup, damaged: (String) -> VaultError) throws -> (Peek, Data) {
        let operational = keys.operational
        let vaultID = header.vaultID
        return try withStorageErrors {
            try database.read { db -> (Peek, Data) in
                guard let commitSealed = try Data.fetchOne(db, sql: "SELECT sealed FROM commit_record WHERE id = 1"),
                    let commit = PagedCommit.open(commitSealed, key: operational.integrity, vaultID: vaultID)
                else { throw damaged("the commit record is missing or does not authenticate") }
                guard constantTimeEqual(commit.headerDigest, BLAKE2b.hash(headerBytes)) else {
                    throw VaultError(
                        .headerTampered,
                        "The vault header is not the one its commit record names: an older or edited header was put back."
                    )
                }
                let absent = Peek(commitCounter: commit.counter, deviceID: commit.deviceID, payload: nil)
                guard let digest = commit.indexDigests[group] else { return (absent, commitSealed) }
                let indexLocator = PageLayout.locator(.index, group: group, key: operational.locator)
                guard
                    let sealedIndex = try Data.fromDatabaseValue(
                        DatabaseValue.fetchOne(
                            db, sql: "SELECT sealed FROM page_index WHERE locator = ?", arguments: [indexLocator])
                            ?? .null),
                    constantTimeEqual(BLAKE2b.hash(sealedIndex), digest),
                    let index = GroupIndex.open(
                        sealedIndex, group: group, key: operational.integrity, locator: indexLocator, vaultID: vaultID)
                else { throw damaged("its page index is missing, damaged or does not match the commit record") }
                guard let page = index.pages.first(where: { $0.ids.contains(id) }) else {
                    return (absent, commitSealed)
                }
                let locator = PageLayout.locator(.page, group: group, number: page.number, key: operational.locator)
                guard
                    let value = try DatabaseValue.fetchOne(
                        db, sql: "SELECT sealed FROM page WHERE locator = ?", arguments: [locator])
                else { throw damaged("is listed in a page index but its page is missing from the file (deleted)") }
                guard let sealed = Data.fromDatabaseValue(value), sealed.count >= XChaCha20Poly1305.tagByteCount,
                    sealed.withUnsafeBytes({ RecordCipher.tag(of: $0) }).constantTimeEquals(page.tag)
                else {
                    throw damaged(
                        "is in a page that is not the copy its index lists (replaced, rolled back or replayed)")
                }
                guard var plain = PageCodec.openAll([(locator, sealed)], key: operational.records, vaultID: vaultID)[0]
                else { throw damaged("is in a page that does not authenticate (its bytes were altered)") }
                defer { secureWipe(&plain) }
                let payload = plain.withUnsafeBytes { bytes -> [UInt8]? in
                    guard let entries = PageCodec.entries(of: bytes), entries.map(\.id) == page.ids,
                        let entry = entries.first(where: { $0.id == id })
                    else { return nil }
                    return Array(bytes[entry.payload])
                }
                guard let payload else { throw damaged("is in a page whose records are not the ones its index lists") }
                return (Peek(commitCounter: commit.counter, deviceID: commit.deviceID, payload: payload), commitSealed)
            }
        }
    }

    private func peekLegacy(_ id: RecordID, damaged: (String) -> VaultError) throws -> (Peek, Data) {
        let operational = keys.operational
        let vaultID = header.vaultID
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
        return (Peek(commitCounter: commit.counter, deviceID: commit.deviceID, payload: payload), commitSealed)
    }
}
