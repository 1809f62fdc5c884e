import Foundation
import GRDB
internal import GRDBSQLite
import VaultCrypto

// Formats 1 and 2 (Specs/vault-format.md §3, §4): one sealed row per record, 256 manifest
// buckets. Read, never written: the first write upgrades the file to format 3.

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

extension Vault {
    /// Reads the commit record, manifest and records and checks each against the others.
    /// Collects every problem instead of stopping at the first, so `verify` can name them all.
    static func loadLegacyState(db: Database, header: VaultHeader, headerBytes: [UInt8], keys: OperationalKeys) throws
        -> VaultState
    {
        let vaultID = header.vaultID
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
                        id: id, version: version, payload: UnsafeRawBufferPointer(rebasing: $0[payload])
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
        return VaultState(
            partial: false, counter: commit.counter, deviceID: commit.deviceID, commitSealed: commitSealed,
            records: records, paged: nil
        )
    }
}
