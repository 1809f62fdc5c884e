import Foundation

/// Every decrypted record of an open vault, with all payloads in one buffer: a million records
/// cost their own bytes plus 32 bytes each, not an object apiece. In id order when read from a
/// format 1 or 2 file, in page order from format 3.
struct RecordStore {
    private(set) var ids: [RecordID] = []
    private(set) var versions: [UInt64] = []
    /// Payload `i` is `bytes[ends[i - 1] ..< ends[i]]` (from 0 for the first).
    private(set) var ends: [Int] = []
    private(set) var bytes: [UInt8] = []

    init(reservingCapacity count: Int = 0, payloadBytes: Int = 0) {
        ids.reserveCapacity(count)
        versions.reserveCapacity(count)
        ends.reserveCapacity(count)
        bytes.reserveCapacity(payloadBytes)
    }

    var count: Int { ids.count }

    /// Appends a record (after every one already here).
    mutating func append(id: RecordID, version: UInt64, payload: UnsafeRawBufferPointer) {
        ids.append(id)
        versions.append(version)
        bytes.append(contentsOf: payload)
        ends.append(bytes.count)
    }

    func range(at index: Int) -> Range<Int> { (index == 0 ? 0 : ends[index - 1])..<ends[index] }

    func record(at index: Int) -> VaultRecord {
        VaultRecord(id: ids[index], version: versions[index], payload: Data(bytes[range(at: index)]))
    }

    /// Where each record is, by id.
    func lookup() -> [RecordID: Int] {
        var lookup: [RecordID: Int] = [:]
        lookup.reserveCapacity(ids.count)
        for (index, id) in ids.enumerated() { lookup[id] = index }
        return lookup
    }

    /// This store with `changes` applied (one per id; nil deletes): the records no change names,
    /// then the written ones.
    func replacing(_ changes: [(id: RecordID, written: PageRecord?)]) -> RecordStore {
        let changed = Set(changes.map(\.id))
        var result = RecordStore(reservingCapacity: count + changes.count)
        result.bytes.reserveCapacity(bytes.count + changes.reduce(0) { $0 + ($1.written?.payload.count ?? 0) })
        bytes.withUnsafeBytes { all in
            for index in ids.indices where !changed.contains(ids[index]) {
                result.append(
                    id: ids[index], version: versions[index],
                    payload: UnsafeRawBufferPointer(rebasing: all[range(at: index)]))
            }
        }
        for case (_, let written?) in changes {
            written.payload.withUnsafeBytes {
                result.append(id: written.id, version: written.version, payload: $0)
            }
        }
        return result
    }
}

/// Read-only access to every payload of an open vault without copying them, for decoding a
/// whole vault (on several threads if wanted) inside `Vault.withPayloads`.
public struct PayloadView: @unchecked Sendable {
    private let ids: UnsafeBufferPointer<RecordID>
    private let ends: UnsafeBufferPointer<Int>
    private let bytes: UnsafeRawBufferPointer

    init(ids: UnsafeBufferPointer<RecordID>, ends: UnsafeBufferPointer<Int>, bytes: UnsafeRawBufferPointer) {
        self.ids = ids
        self.ends = ends
        self.bytes = bytes
    }

    public var count: Int { ids.count }
    public func id(at index: Int) -> RecordID { ids[index] }
    public func payload(at index: Int) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: bytes[(index == 0 ? 0 : ends[index - 1])..<ends[index]])
    }
}

extension RecordStore {
    func withView<Result>(_ body: (PayloadView) throws -> Result) rethrows -> Result {
        try ids.withUnsafeBufferPointer { ids in
            try ends.withUnsafeBufferPointer { ends in
                try bytes.withUnsafeBytes { try body(PayloadView(ids: ids, ends: ends, bytes: $0)) }
            }
        }
    }
}
