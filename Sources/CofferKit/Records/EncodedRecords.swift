import Foundation
import VaultStore

/// New records checked and encoded on some core, end to end, for a bulk load to add to its
/// pages in order on the thread that holds the load (`Vault.writeInBulk`).
struct EncodedRecords: Sendable {
    private(set) var ids: [UUID] = []
    private var groups: [PageGroup] = []
    private var payloads: [UInt8] = []
    private var ends: [Int] = []

    /// Refuses text a record may not hold (`checkText`), as a write would.
    mutating func append(_ id: UUID, _ record: FinanceRecord) throws {
        try record.checkText()
        ids.append(id)
        groups.append(RecordGrouping.group(of: record))
        payloads += RecordCodec.encode(record)
        ends.append(payloads.count)
    }

    func add(to writer: BulkRecordWriter) throws {
        var start = 0
        try payloads.withUnsafeBytes { payloads in
            for (index, id) in ids.enumerated() {
                try writer.append(
                    RecordID(uuid: id), group: groups[index],
                    payload: UnsafeRawBufferPointer(rebasing: payloads[start..<ends[index]]))
                start = ends[index]
            }
        }
    }
}
