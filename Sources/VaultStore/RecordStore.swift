import Foundation

/// Every decrypted record of an open vault, sorted by id, with all payloads in one buffer: a
/// million records cost their own bytes plus 48 bytes each, not an object apiece. The store is
/// also the manifest: a bucket's entries are its records' ids, versions and ciphertext tags, so
/// they are rebuilt from here when a write re-seals the bucket rather than kept twice.
struct RecordStore {
    private(set) var ids: [RecordID] = []
    private(set) var versions: [UInt64] = []
    /// The Poly1305 tag of each record's ciphertext, as its manifest entry lists it.
    private(set) var tags: [RecordTag] = []
    /// Payload `i` is `bytes[ends[i - 1] ..< ends[i]]` (from 0 for the first).
    private(set) var ends: [Int] = []
    private(set) var bytes: [UInt8] = []

    init(reservingCapacity count: Int = 0, payloadBytes: Int = 0) {
        ids.reserveCapacity(count)
        versions.reserveCapacity(count)
        tags.reserveCapacity(count)
        ends.reserveCapacity(count)
        bytes.reserveCapacity(payloadBytes)
    }

    var count: Int { ids.count }

    /// Appends a record whose id sorts after every one already here.
    mutating func append(id: RecordID, version: UInt64, tag: RecordTag, payload: UnsafeRawBufferPointer) {
        ids.append(id)
        versions.append(version)
        tags.append(tag)
        bytes.append(contentsOf: payload)
        ends.append(bytes.count)
    }

    func range(at index: Int) -> Range<Int> { (index == 0 ? 0 : ends[index - 1])..<ends[index] }

    func record(at index: Int) -> VaultRecord {
        VaultRecord(id: ids[index], version: versions[index], payload: Data(bytes[range(at: index)]))
    }

    /// Binary search by id.
    func index(of id: RecordID) -> Int? {
        let low = firstIndex(notBelow: id)
        return low < ids.count && ids[low] == id ? low : nil
    }

    private func firstIndex(notBelow id: RecordID) -> Int {
        var low = 0, high = ids.count
        while low < high {
            let middle = (low + high) / 2
            if ids[middle] < id { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// The manifest entries of one bucket: its records are contiguous, since ids sort by their
    /// first byte first.
    func manifestEntries(inBucket bucket: Int) -> [ManifestEntry] {
        var index = firstIndex(notBelow: RecordID(firstOfBucket: bucket))
        var entries: [ManifestEntry] = []
        while index < ids.count, ids[index].bucket == bucket {
            entries.append(ManifestEntry(id: ids[index], version: versions[index], tag: tags[index]))
            index += 1
        }
        return entries
    }

    /// The same records with new tags (after a rekey re-sealed every one), in this order.
    func replacingTags(_ newTags: [RecordTag]) -> RecordStore {
        precondition(newTags.count == tags.count)
        var copy = self
        copy.tags = newTags
        return copy
    }

    /// This store with `changes` applied (in id order, one per id; a nil record deletes).
    func merging(_ changes: [(id: RecordID, written: (record: VaultRecord, tag: RecordTag)?)]) -> RecordStore {
        var merged = RecordStore(reservingCapacity: count + changes.count)
        merged.bytes.reserveCapacity(bytes.count + changes.reduce(0) { $0 + ($1.written?.record.payload.count ?? 0) })
        var next = changes.startIndex
        func take(_ change: (id: RecordID, written: (record: VaultRecord, tag: RecordTag)?)) {
            guard let (record, tag) = change.written else { return }
            record.payload.withUnsafeBytes {
                merged.append(id: record.id, version: record.version, tag: tag, payload: $0)
            }
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
                        id: ids[index], version: versions[index], tag: tags[index],
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
