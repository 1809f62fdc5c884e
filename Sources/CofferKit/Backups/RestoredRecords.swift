import Dispatch
import Foundation
import VaultCrypto
import VaultStore

/// A restore's records on their way into the new vault's pages, checked on another thread:
/// this thread gathers the archive's records into batches and seals each batch into the pages
/// once it is checked, while another thread checks the next (every record decoded, which
/// proves it readable, migrated if its version is older, and its page group found). Decoding
/// is the restore's largest cost, as large as reading the archive and sealing the pages
/// together; side by side the two take the time of the longer (BENCHMARKS.md). Records reach
/// the writer in the archive's order, each batch whole or not at all: a record that does not
/// decode stops the restore before anything after it is written.
final class RestoredRecords {
    private let writer: BulkRecordWriter
    private var filling = Batch()
    private var spare: Batch?
    /// The batch the other thread is checking; the only one it ever touches.
    private var checking: Batch?
    private let checked = DispatchGroup()

    /// Large enough that handing a batch over costs nothing beside checking it (a few thousand
    /// records), small enough that two batches are a few hundred KiB.
    static let batchRecords = 4096
    static let batchBytes = 1 << 20

    init(into writer: BulkRecordWriter) { self.writer = writer }

    /// The other thread's batch is never left behind: it reads memory this object owns.
    deinit { checked.wait() }

    /// Adds a record read from the archive; its bytes are copied, so `payload` may go.
    func add(_ id: RecordID, _ payload: UnsafeRawBufferPointer) throws {
        filling.add(id, payload)
        if filling.count == Self.batchRecords || filling.bytes.count >= Self.batchBytes { try handOver() }
    }

    /// Writes every record added so far; call once, after the last.
    func finish() throws {
        if let previous = takeChecked() { try write(previous) }
        filling.check()
        try write(filling)
    }

    /// Starts checking the batch just filled, and writes the one checked before it meanwhile.
    private func handOver() throws {
        let previous = takeChecked()
        let batch = filling
        filling = spare ?? Batch()
        spare = nil
        checking = batch
        DispatchQueue.global().async(group: checked) { batch.check() }
        if let previous {
            try write(previous)
            previous.empty()
            spare = previous
        }
    }

    /// The batch the other thread checked, once it has.
    private func takeChecked() -> Batch? {
        checked.wait()
        defer { checking = nil }
        return checking
    }

    private func write(_ batch: Batch) throws {
        if let unreadable = batch.unreadable {
            throw CofferError(.damaged, "Record \(unreadable.hex) in the archive cannot be read; nothing was restored.")
        }
        try batch.bytes.withUnsafeBytes { bytes in
            var start = 0
            for index in 0..<batch.count {
                let end = batch.ends[index]
                if let upgraded = batch.upgraded[index] {
                    try upgraded.withUnsafeBytes {
                        try writer.append(batch.ids[index], group: batch.groups[index], payload: $0)
                    }
                } else {
                    try writer.append(
                        batch.ids[index], group: batch.groups[index],
                        payload: UnsafeRawBufferPointer(rebasing: bytes[start..<end]))
                }
                start = end
            }
        }
    }

    /// Records gathered on one thread and checked on another: `check` runs while nothing else
    /// touches the batch, and what it sets is read only after it has finished (`checked`).
    private final class Batch: @unchecked Sendable {
        private(set) var ids: [RecordID] = []
        /// Where each record's payload ends in `bytes`.
        private(set) var ends: [Int] = []
        private(set) var bytes: [UInt8] = []
        private(set) var groups: [PageGroup] = []
        /// Re-encoded payloads of records written at an older version, by index.
        private(set) var upgraded: [Int: [UInt8]] = [:]
        /// The first record that does not decode; nothing after it is checked.
        private(set) var unreadable: RecordID?

        init() {
            ids.reserveCapacity(RestoredRecords.batchRecords)
            ends.reserveCapacity(RestoredRecords.batchRecords)
            groups.reserveCapacity(RestoredRecords.batchRecords)
            // A batch is handed over at 1 MiB: room for that and an ordinary record over it, so
            // that the buffer seldom grows (`add` wipes what it leaves when it does).
            bytes.reserveCapacity(RestoredRecords.batchBytes + (64 << 10))
        }

        deinit { wipe() }

        var count: Int { ids.count }

        func add(_ id: RecordID, _ payload: UnsafeRawBufferPointer) {
            // Grown by hand: appending past the capacity would free the old buffer, records
            // and all, without wiping it.
            if bytes.count + payload.count > bytes.capacity {
                var larger: [UInt8] = []
                larger.reserveCapacity(max(bytes.capacity * 2, bytes.count + payload.count))
                larger.append(contentsOf: bytes)
                secureWipe(&bytes)
                bytes = larger
            }
            ids.append(id)
            bytes.append(contentsOf: payload)
            ends.append(bytes.count)
        }

        func check() {
            bytes.withUnsafeBytes { bytes in
                var start = 0
                for index in ids.indices {
                    let payload = UnsafeRawBufferPointer(rebasing: bytes[start..<ends[index]])
                    start = ends[index]
                    do {
                        let (record, upgraded) = try RecordCodec.upgradedIfOlder(payload, id: ids[index].uuid)
                        groups.append(RecordGrouping.group(of: record))
                        if let upgraded { self.upgraded[index] = upgraded }
                    } catch {
                        unreadable = ids[index]
                        return
                    }
                }
            }
        }

        /// The records in plaintext, read and re-encoded, zeroed in place.
        private func wipe() {
            secureWipe(&bytes)
            // The keys copied out first: a view of them would share the dictionary's storage,
            // and the wipe would reach a copy of each payload.
            for index in Array(upgraded.keys) { secureWipe(&upgraded[index]!) }
        }

        /// Ready to be filled again, keeping its memory. Its payloads are records in plaintext:
        /// wiped before the memory is filled again or freed.
        func empty() {
            wipe()
            bytes.removeAll(keepingCapacity: true)
            ids.removeAll(keepingCapacity: true)
            ends.removeAll(keepingCapacity: true)
            groups.removeAll(keepingCapacity: true)
            upgraded = [:]
            unreadable = nil
        }
    }
}
