import FinanceCore
import Foundation
import VaultCrypto
import VaultStore

/// The new copy a joining device builds from the folder, in one of two ways that build the
/// same vault. A snapshot (a change file whose puts are in columns, as `sync init` writes) is
/// streamed straight into the new vault's pages as a restore streams an archive: decoded on one
/// core, checked on the other, sealed into pages as it comes. Only its writes that another file
/// also names go through the merge (none of the rest can win or lose against anything), so a
/// join costs about what a restore of the same vault does. Anything a sound folder does not hold
/// (a snapshot that does not check, or that the merge would not apply) gives way to the
/// ordinary build, which merges every file and reports what it found.
extension SyncService {
    struct JoinBuilt {
        let built: VaultBuiltAside
        let merge: SyncMerge
        let recordCount: Int
        /// How many of them came straight from the snapshot, not through the merge.
        let streamed: Int
    }

    /// Why a streamed join gave way; never shown (the ordinary build reports the cause).
    private struct StreamingGaveWay: Error {}

    static func buildJoin(
        at url: URL, unlocked: ArchiveUnlock, keys: SyncKeys, listing: SyncFolder.Listing, state: SyncState,
        now: Date, streaming: Bool
    ) throws -> JoinBuilt {
        func merge() -> SyncMerge {
            var merge = SyncMerge(
                state: state, index: SyncIndex(), keys: keys, listing: listing, now: now, keepsRecords: false,
                stored: { _ in nil })
            merge.readEnrolments()
            return merge
        }
        if streaming {
            do {
                if let streamed = try buildStreaming(at: url, unlocked: unlocked, keys: keys, merge: merge()) {
                    return streamed
                }
            } catch is StreamingGaveWay {
            } catch is SyncFileProblem {
                // The ordinary build reports it, with the file it is in.
            }
        }
        return try buildMerging(at: url, unlocked: unlocked, keys: keys, merge: merge())
    }

    /// Every file merged, then the merged records written in the order they first took a value
    /// (a snapshot's is the archive's), each in the page group its check found.
    private static func buildMerging(
        at url: URL, unlocked: ArchiveUnlock, keys: SyncKeys, merge: SyncMerge
    ) throws -> JoinBuilt {
        var merge = merge
        merge.run()
        var recordCount = 0
        let built = try Vault.restoreAside(at: url, unlocked: unlocked, replacing: false) { writer in
            recordCount = try writeMerged(merge, into: writer)
            recordCount += try writeBookkeeping(merge, index: merge.mergedIndex().encoded(), keys: keys, into: writer)
        }
        return JoinBuilt(built: built, merge: merge, recordCount: recordCount, streamed: 0)
    }

    /// The snapshot streamed into the pages, then the rest merged (nil: it gave way).
    private static func buildStreaming(
        at url: URL, unlocked: ArchiveUnlock, keys: SyncKeys, merge: SyncMerge
    ) throws -> JoinBuilt? {
        var merge = merge
        guard let (snapshot, device, sequence, packed) = openSnapshot(merge) else { return nil }
        let touched = merge.preloadAll(except: snapshot)
        let digester = merge.index.digester
        var (recordCount, streamedCount) = (0, 0)
        let built = try Vault.restoreAside(at: url, unlocked: unlocked, replacing: false) { writer in
            // Each streamed record's entry in the sync index, as it is written.
            var streamed = StreamedIndexEntries(device: device, capacity: 0)
            let records = RestoredRecords(
                into: writer,
                check: { id, payload in
                    let record = try SyncMerge.record(payload, id: id)
                    return .init(group: RecordGrouping.group(of: record), digest: digester.digest(payload))
                },
                refusal: { _ in StreamingGaveWay() },
                written: { id, found in streamed.written(id, digest: found.digest!) })
            var held: [SyncOperation] = []
            var omitted = (count: 0, clock: UInt64(0))
            // What writing the pages threw: a storage failure is the join's, not the file's.
            var failure: Error?
            func writing(_ body: () throws -> Void) throws {
                do { try body() } catch {
                    failure = error
                    throw error
                }
            }
            var changes: SyncChanges
            do {
                changes = try SyncChanges.decode(
                    columns: packed,
                    expecting: { streamed = StreamedIndexEntries(device: device, capacity: $0 + $1) }
                ) { put in
                    if !touched.isEmpty, touched.contains(put.id) {
                        held.append(
                            .init(record: put.id, clock: put.clock, base: put.base, payload: Array(put.payload)))
                        return
                    }
                    omitted = (omitted.count + 1, max(omitted.clock, put.clock))
                    streamed.put(put.id, clock: put.clock)
                    try writing { try records.add(put.id, put.payload) }
                }
                try writing { try records.finish() }
            } catch {
                throw failure ?? error
            }
            guard changes.seen[device] == sequence - 1 else { throw StreamingGaveWay() }
            for delete in changes.operations {
                if touched.contains(delete.record) {
                    held.append(delete)
                } else {
                    omitted = (omitted.count + 1, max(omitted.clock, delete.clock))
                    streamed.delete(delete.record, clock: delete.clock)
                }
            }
            changes.operations = held
            merge.preload(snapshot, sequence: sequence, changes: changes, omitted: omitted)
            merge.run()
            // Streamed records count only if the merge applied the snapshot they came in.
            guard (merge.state.devices[device]?.applied ?? 0) >= sequence else { throw StreamingGaveWay() }
            streamedCount = streamed.digests.count
            recordCount = streamedCount
            recordCount += try writeMerged(merge, into: writer)
            // A whole vault's index is sorted and encoded on the other core while this one seals
            // the pages still open.
            nonisolated(unsafe) let finished = merge
            let entries = streamed
            let index = Beside { finished.mergedIndex().encoded(adding: entries) }
            try writer.sealAll()
            recordCount += try writeBookkeeping(merge, index: try index.value(), keys: keys, into: writer)
        }
        return JoinBuilt(built: built, merge: merge, recordCount: recordCount, streamed: streamedCount)
    }

    /// The folder's snapshot: of the change files the merge can come to, the largest that opens
    /// and checks against its name and signature and whose body is in columns (of the three
    /// largest: a planted file larger than the snapshot does not stop the streaming).
    private static func openSnapshot(_ merge: SyncMerge) -> (
        file: URL, device: SyncDeviceID, sequence: UInt64, packed: [UInt8]
    )? {
        func size(_ file: URL) -> Int { (try? file.resourceValues(forKeys: [.fileSizeKey]).fileSize) ?? 0 }
        let candidates = merge.reachableChanges.map { (candidate: $0, size: size($0.file)) }
            .sorted { $0.size > $1.size }.prefix(3).map(\.candidate)
        for candidate in candidates {
            guard let key = merge.state.devices[candidate.device]?.publicKey,
                let packed = try? SyncMerge.openChanges(
                    candidate.file, device: candidate.device, sequence: candidate.sequence, key: key,
                    keys: merge.keys, body: { envelope throws(SyncFileProblem) in try envelope.openPacked(merge.keys) }
                ),
                packed.first == SyncChanges.columnsCodec
            else { continue }
            return (candidate.file, candidate.device, candidate.sequence, packed)
        }
        return nil
    }

    /// The merge's records that are not deleted; returns how many.
    private static func writeMerged(_ merge: SyncMerge, into writer: BulkRecordWriter) throws -> Int {
        var count = 0
        for id in merge.order {
            let value = merge.values[id]!
            guard let payload = value.payload else { continue }
            try payload.withUnsafeBytes { try writer.append(id, group: merge.group(of: value), payload: $0) }
            count += 1
        }
        return count
    }

    /// This device's sync state, its sync index and the merge's conflicts; returns how many.
    private static func writeBookkeeping(
        _ merge: SyncMerge, index: SyncIndexData, keys: SyncKeys, into writer: BulkRecordWriter
    ) throws -> Int {
        var count = 0
        func append(_ id: RecordID, _ record: FinanceRecord) throws {
            try RecordCodec.encode(record).withUnsafeBytes {
                try writer.append(id, group: RecordGrouping.group(of: record), payload: $0)
            }
            count += 1
        }
        try append(keys.stateRecordID, .syncState(merge.state))
        try append(RecordID(uuid: RecordIDs.next()), .syncIndex(index))
        for conflict in merge.conflicts { try append(RecordID(uuid: RecordIDs.next()), .syncConflict(conflict)) }
        return count
    }
}
