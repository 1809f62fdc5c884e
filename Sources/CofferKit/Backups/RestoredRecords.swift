import Dispatch
import Foundation
import VaultCrypto
import VaultStore

/// A restore's records (and a joining device's snapshot's, `SyncService.buildJoin`, with its own
/// `check`) on their way into the new vault's pages, checked on another thread:
/// this thread gathers the archive's records into batches and seals each batch into the pages
/// once it is checked, while another thread checks the next (every record decoded, which
/// proves it readable, migrated if its version is older, and its page group found). Decoding
/// is the restore's largest cost, as large as reading the archive and sealing the pages
/// together; side by side the two take the time of the longer (BENCHMARKS.md). Records reach
/// the writer in the archive's order, each batch whole or not at all: a record that does not
/// decode stops the restore before anything after it is written.
final class RestoredRecords {
    /// What checking a record found: its page group, its payload re-encoded when it must be
    /// written at another version, and the digest a joining device's sync index keeps.
    struct Checked {
        var group: PageGroup
        var upgraded: [UInt8]? = nil
        var digest: PayloadDigest? = nil
    }
    /// Checks one record, on the other thread; throws when it must not be written.
    typealias Check = @Sendable (RecordID, UnsafeRawBufferPointer) throws -> Checked
    /// Told of each record as it is written, with what its check found.
    typealias Written = (RecordID, Checked) -> Void

    private let writer: BulkRecordWriter
    private let check: Check
    private let written: Written?
    /// How a restore checks a record: decoded (which proves it readable), migrated if its
    /// version is older, its page group found.
    static let restoring: Check = { id, payload in
        let (record, upgraded) = try RecordCodec.upgradedIfOlder(payload, id: id.uuid)
        return Checked(group: RecordGrouping.group(of: record), upgraded: upgraded)
    }
    /// What a batch that did not check throws, with the id of its first unwritable record.
    private let refusal: (RecordID) -> Error
    private var filling = Batch()
    private var spare: Batch?
    /// The batch the other thread is checking; the only one it ever touches.
    private var checking: Batch?
    private let checked = DispatchGroup()

    /// Large enough that handing a batch over costs nothing beside checking it (a few thousand
    /// records), small enough that two batches are a few hundred KiB.
    static let batchRecords = 4096
    static let batchBytes = 1 << 20

    init(
        into writer: BulkRecordWriter, check: @escaping Check = restoring,
        refusal: @escaping (RecordID) -> Error = {
            CofferError(.damaged, "Record \($0.hex) in the archive cannot be read; nothing was restored.")
        },
        written: Written? = nil
    ) {
        self.writer = writer
        self.check = check
        self.refusal = refusal
        self.written = written
    }

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
        filling.check(check)
        try write(filling)
    }

    /// Starts checking the batch just filled, and writes the one checked before it meanwhile.
    private func handOver() throws {
        let previous = takeChecked()
        let batch = filling
        filling = spare ?? Batch()
        spare = nil
        checking = batch
        let check = self.check
        DispatchQueue.global().async(group: checked) { batch.check(check) }
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
        if let unreadable = batch.unreadable { throw refusal(unreadable) }
        try batch.bytes.withUnsafeBytes { bytes in
            var start = 0
            for index in 0..<batch.count {
                let end = batch.ends[index]
                let found = batch.found[index]
                if let upgraded = found.upgraded {
                    try upgraded.withUnsafeBytes {
                        try writer.append(batch.ids[index], group: found.group, payload: $0)
                    }
                } else {
                    try writer.append(
                        batch.ids[index], group: found.group,
                        payload: UnsafeRawBufferPointer(rebasing: bytes[start..<end]))
                }
                written?(batch.ids[index], found)
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
        /// What checking each record found, by index.
        private(set) var found: [Checked] = []
        /// The first record that does not decode; nothing after it is checked.
        private(set) var unreadable: RecordID?

        init() {
            ids.reserveCapacity(RestoredRecords.batchRecords)
            ends.reserveCapacity(RestoredRecords.batchRecords)
            found.reserveCapacity(RestoredRecords.batchRecords)
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

        func check(_ check: Check) {
            bytes.withUnsafeBytes { bytes in
                var start = 0
                for index in ids.indices {
                    let payload = UnsafeRawBufferPointer(rebasing: bytes[start..<ends[index]])
                    start = ends[index]
                    do {
                        found.append(try check(ids[index], payload))
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
            for index in found.indices where found[index].upgraded != nil { secureWipe(&found[index].upgraded!) }
        }

        /// Ready to be filled again, keeping its memory. Its payloads are records in plaintext:
        /// wiped before the memory is filled again or freed.
        func empty() {
            wipe()
            bytes.removeAll(keepingCapacity: true)
            ids.removeAll(keepingCapacity: true)
            ends.removeAll(keepingCapacity: true)
            found.removeAll(keepingCapacity: true)
            unreadable = nil
        }
    }
}
