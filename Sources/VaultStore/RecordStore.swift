import Foundation

/// Every decrypted record of an open vault, sorted by id, with all payloads in one buffer: a
/// million records cost their own bytes plus 32 bytes each, not an object apiece.
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

    /// Appends a record whose id sorts after every one already here.
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

    /// Binary search by id.
    func index(of id: RecordID) -> Int? {
        var low = 0, high = ids.count
        while low < high {
            let middle = (low + high) / 2
            if ids[middle] < id { low = middle + 1 } else { high = middle }
        }
        return low < ids.count && ids[low] == id ? low : nil
    }

    /// The same records in id order (pages hold them in the order they were written).
    func sortedByID() -> RecordStore {
        let order = ids.indices.sorted { ids[$0] < ids[$1] }
        if order.elementsEqual(ids.indices) { return self }
        var sorted = RecordStore(reservingCapacity: count)
        sorted.bytes.reserveCapacity(bytes.count)
        bytes.withUnsafeBytes { all in
            for index in order {
                sorted.append(
                    id: ids[index], version: versions[index],
                    payload: UnsafeRawBufferPointer(rebasing: all[range(at: index)]))
            }
        }
        return sorted
    }

    /// This store with `changes` applied (one per id, in id order; nil deletes), in one linear
    /// merge that keeps id order.
    func merging(_ changes: [(id: RecordID, written: PageRecord?)]) -> RecordStore {
        var merged = RecordStore(reservingCapacity: count + changes.count)
        merged.bytes.reserveCapacity(bytes.count + changes.reduce(0) { $0 + ($1.written?.payload.count ?? 0) })
        var next = changes.startIndex
        func take(_ change: (id: RecordID, written: PageRecord?)) {
            guard let record = change.written else { return }
            record.payload.withUnsafeBytes { merged.append(id: record.id, version: record.version, payload: $0) }
        }
        bytes.withUnsafeBytes { all in
            for index in ids.indices {
                while next < changes.endIndex, changes[next].id < ids[index] {
                    take(changes[next])
                    next += 1
                }
                if next < changes.endIndex, changes[next].id == ids[index] {
                    take(changes[next])
                    next += 1
                } else {
                    merged.append(
                        id: ids[index], version: versions[index],
                        payload: UnsafeRawBufferPointer(rebasing: all[range(at: index)]))
                }
            }
        }
        for change in changes[next...] { take(change) }
        return merged
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

extension RecordStore {
    /// The records whose ids pass `keep`, in the same order.
    func filter(_ keep: (RecordID) -> Bool) -> RecordStore {
        var kept = RecordStore(reservingCapacity: count)
        bytes.withUnsafeBytes { all in
            for index in ids.indices where keep(ids[index]) {
                kept.append(
                    id: ids[index], version: versions[index],
                    payload: UnsafeRawBufferPointer(rebasing: all[range(at: index)]))
            }
        }
        return kept
    }
}
