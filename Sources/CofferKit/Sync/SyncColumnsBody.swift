import Foundation
import VaultBackup
import VaultStore

/// Packed body 2 of a change file (Specs/sync-format.md §4, "Change file body in columns"): the
/// puts' records in the backup archive's column-shaped, compressed encoding, then the rest of
/// the body (stamps, bases, deletes) as a small xz stream. A whole vault's first publish is then
/// made at a backup's speed and takes the archive's size: what `sync init` and `device join` pay
/// for, against `backup create` and `restore`.
extension SyncChanges {
    /// Change files with this many puts or more are written in columns: below, the columns' own
    /// framing (a block per kind, the manifest, the id table) outweighs what they save.
    static let columnsThreshold = 1024
    static let columnsCodec: UInt8 = 2
    /// xz preset of the columns. Archives use 0, for speed at every backup; a folder's snapshot is
    /// made once and kept, and preset 1 made it 2 % smaller in the same time at 100k records
    /// (786,585 B against 801,945 B, `sync init` 548 ms against 567 ms; BENCHMARKS.md): within the
    /// archive's size, which preset 0 was not.
    static let columnsPreset: UInt32 = 1

    /// The packed body: in columns when there are enough puts, else as `SyncEnvelope.packed`.
    func packed() throws -> [UInt8] {
        let puts = operations.filter { $0.payload != nil }
        guard puts.count >= Self.columnsThreshold else { return SyncEnvelope.packed(encoded()) }
        let records = CollectedRecords(expecting: puts.count)
        for put in puts { put.payload!.withUnsafeBytes { records.append(put.record, $0) } }
        let (columns, positions) = try RecordColumns.encode(
            records, layouts: ArchiveLayouts.all, preset: Self.columnsPreset)
        // The stamps follow the records' order in the columns, which the ids come back in.
        var inColumnOrder = [Int](repeating: 0, count: puts.count)
        for (index, position) in positions.enumerated() { inColumnOrder[Int(position)] = index }
        var rest = PayloadWriter()
        writeHead(&rest)
        rest.unsigned(UInt64(puts.count))
        for index in inColumnOrder { rest.unsigned(puts[index].clock) }
        for index in inColumnOrder { Self.write(base: puts[index].base, to: &rest) }
        let deletes = operations.filter { $0.payload == nil }
        rest.unsigned(UInt64(deletes.count))
        for delete in deletes { rest.raw(delete.record.bytes) }
        for delete in deletes { rest.unsigned(delete.clock) }
        for delete in deletes { Self.write(base: delete.base, to: &rest) }
        let compressedRest = try XZ.compress(rest.bytes, preset: 0)
        var packed: [UInt8] = [Self.columnsCodec]
        packed.reserveCapacity(1 + 16 + columns.count + compressedRest.count)
        withUnsafeBytes(of: UInt64(columns.count).littleEndian) { packed += $0 }
        packed += columns
        withUnsafeBytes(of: UInt64(rest.bytes.count).littleEndian) { packed += $0 }
        packed += compressedRest
        return packed
    }

    /// The changes in a packed body of any codec (0, 1 or 2).
    static func decode(packed: [UInt8]) throws(SyncFileProblem) -> SyncChanges {
        try decodingProblems {
            guard packed.first == columnsCodec else { return try decode(try SyncEnvelope.unpacked(packed)) }
            return try packed.withUnsafeBytes { try decodeColumns(UnsafeRawBufferPointer(rebasing: $0[1...])) }
        }
    }

    /// What decoding a body threw, as the file's problem.
    private static func decodingProblems(_ body: () throws -> SyncChanges) throws(SyncFileProblem) -> SyncChanges {
        do {
            return try body()
        } catch let problem as SyncFileProblem {
            throw problem
        } catch is NewerWrite {
            throw .newerFormat
        } catch {
            throw .damaged
        }
    }

    /// A put of a packed body 2 as its columns hand it over: `payload` is valid only during the
    /// call, so a joining device checks and writes a whole vault without a copy per record.
    typealias StreamedPut = (id: RecordID, clock: UInt64, base: SyncStamp, payload: UnsafeRawBufferPointer)

    /// The changes of a packed body 2 with its puts handed to `put` one by one, in the columns'
    /// order, rather than kept: the result holds the head and the deletes. Everything `decode`
    /// checks is checked; what `put` was given counts only once this returns.
    /// `expecting` is told how many puts and deletes the body holds before the first put.
    static func decode(
        columns packed: [UInt8], expecting: (_ puts: Int, _ deletes: Int) -> Void = { _, _ in },
        put: (StreamedPut) throws -> Void
    ) throws(SyncFileProblem) -> SyncChanges {
        try decodingProblems {
            guard packed.first == columnsCodec else { throw PayloadReader.malformed }
            return try packed.withUnsafeBytes {
                try decodeColumns(UnsafeRawBufferPointer(rebasing: $0[1...]), expecting: expecting, put: put)
            }
        }
    }

    private static func decodeColumns(_ bytes: UnsafeRawBufferPointer) throws -> SyncChanges {
        var puts: [SyncOperation] = []
        var changes = try decodeColumns(bytes) { put in
            puts.append(SyncOperation(record: put.id, clock: put.clock, base: put.base, payload: Array(put.payload)))
        }
        changes.operations = puts + changes.operations
        return changes
    }

    private static func decodeColumns(
        _ bytes: UnsafeRawBufferPointer, expecting: (_ puts: Int, _ deletes: Int) -> Void = { _, _ in },
        put: (StreamedPut) throws -> Void
    ) throws -> SyncChanges {
        func length(at offset: Int) throws -> Int {
            guard bytes.count - offset >= 8 else { throw PayloadReader.malformed }
            let value = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
            guard value <= UInt64(SyncEnvelope.maximumByteCount) else { throw PayloadReader.malformed }
            return Int(value)
        }
        let columnsLength = try length(at: 0)
        guard bytes.count - 8 - columnsLength >= 8 else { throw PayloadReader.malformed }
        let columns = UnsafeRawBufferPointer(rebasing: bytes[8..<8 + columnsLength])
        let restLength = try length(at: 8 + columnsLength)
        let rest = try XZ.decompress(Array(bytes[(16 + columnsLength)...]), expectedLength: restLength)
        return try rest.withUnsafeBytes { raw in
            var reader = PayloadReader(raw)
            var changes = try readHead(&reader)
            let putCount = try reader.unsigned()
            // Each put has a clock and a base of a byte at least.
            guard putCount <= UInt64(raw.count / 2) else { throw PayloadReader.malformed }
            let clocks = try (0..<Int(putCount)).map { _ in try reader.unsigned() }
            let bases = try clocks.map { _ in try readBase(&reader) }
            let deleteCount = try reader.unsigned()
            // Each delete takes at least 18 bytes (id, clock, base).
            guard deleteCount <= UInt64(raw.count / 18) else { throw PayloadReader.malformed }
            let deleted = try (0..<Int(deleteCount)).map { _ in try reader.raw(16) { try RecordID(contiguous: $0) } }
            let deleteClocks = try deleted.map { _ in try reader.unsigned() }
            let deleteBases = try deleted.map { _ in try readBase(&reader) }
            guard reader.isAtEnd else { throw PayloadReader.malformed }
            // The columns hold each id once; a delete must not name one of them, nor another twice.
            let deletedSet = Set(deleted)
            guard deletedSet.count == deleted.count else { throw PayloadReader.malformed }
            expecting(clocks.count, deleted.count)
            var puts = 0
            try RecordColumns.decode(columns) { id, payload in
                guard puts < clocks.count, deletedSet.isEmpty || !deletedSet.contains(id) else {
                    throw PayloadReader.malformed
                }
                try put((id, clocks[puts], bases[puts], payload))
                puts += 1
            }
            guard puts == clocks.count else { throw PayloadReader.malformed }
            changes.operations = deleted.indices.map {
                SyncOperation(record: deleted[$0], clock: deleteClocks[$0], base: deleteBases[$0], payload: nil)
            }
            return changes
        }
    }
}
