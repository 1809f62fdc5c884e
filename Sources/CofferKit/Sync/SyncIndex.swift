import Foundation
import VaultCrypto
import VaultStore

/// A record payload's digest: BLAKE2b-128, kept as two words (no allocation per record).
struct PayloadDigest: Hashable, Sendable {
    let high: UInt64
    let low: UInt64

    init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    init(_ payload: UnsafeRawBufferPointer) {
        var words: (UInt64, UInt64) = (0, 0)
        withUnsafeMutableBytes(of: &words) { BLAKE2b.hash(payload, into: $0) }
        self.init(high: words.0, low: words.1)
    }

    init<Bytes: ContiguousBytes>(of payload: Bytes) { self = payload.withUnsafeBytes { PayloadDigest($0) } }
}

/// The parsed `SyncIndexData`: per record id, in id order, the stamp of the value this device
/// holds and the digest of its payload, or a tombstone's stamp (`digest == nil`).
struct SyncIndex {
    struct Entry: Equatable {
        var stamp: SyncStamp
        /// nil: the record was deleted by the write `stamp` names.
        var digest: PayloadDigest?
    }

    private(set) var ids: [RecordID] = []
    private(set) var entries: [Entry] = []

    init() {}

    var count: Int { ids.count }

    func entry(_ id: RecordID) -> Entry? {
        var low = 0, high = ids.count
        while low < high {
            let middle = (low + high) / 2
            if ids[middle] < id { low = middle + 1 } else { high = middle }
        }
        return low < ids.count && ids[low] == id ? entries[low] : nil
    }

    func stamp(_ id: RecordID) -> SyncStamp { entry(id)?.stamp ?? .zero }

    /// Sets the entries in `changes` (one linear merge, so large batches stay cheap).
    mutating func update(_ changes: [RecordID: Entry]) {
        update(sorted: Self.sortedByID(changes.map { ($0.key, $0.value) }))
    }

    /// `entries` in id order. The ids are sorted with their places alone (24 bytes each, not an
    /// entry's 64): a joining device sorts a whole vault's.
    static func sortedByID(_ entries: [(id: RecordID, entry: Entry)]) -> [(id: RecordID, entry: Entry)] {
        var keys = entries.indices.map { (high: entries[$0].id.high, low: entries[$0].id.low, at: Int32($0)) }
        keys.sort { ($0.high, $0.low) < ($1.high, $1.low) }
        return keys.map { entries[Int($0.at)] }
    }

    /// Sets the entries in `sorted`, which is in id order with each id once.
    mutating func update(sorted: [(id: RecordID, entry: Entry)]) {
        guard !sorted.isEmpty else { return }
        guard !ids.isEmpty else {
            (ids, entries) = (sorted.map(\.id), sorted.map(\.entry))
            return
        }
        var mergedIDs: [RecordID] = []
        var mergedEntries: [Entry] = []
        mergedIDs.reserveCapacity(ids.count + sorted.count)
        mergedEntries.reserveCapacity(ids.count + sorted.count)
        var old = 0
        for (id, entry) in sorted {
            while old < ids.count, ids[old] < id {
                mergedIDs.append(ids[old])
                mergedEntries.append(entries[old])
                old += 1
            }
            if old < ids.count, ids[old] == id { old += 1 }
            mergedIDs.append(id)
            mergedEntries.append(entry)
        }
        mergedIDs.append(contentsOf: ids[old...])
        mergedEntries.append(contentsOf: entries[old...])
        ids = mergedIDs
        entries = mergedEntries
    }

    // MARK: Encoding (Specs/sync-format.md §7)

    static let formatVersion: UInt8 = 1

    func encoded() -> SyncIndexData {
        var devices: [SyncDeviceID: UInt16] = [:]
        var table: [SyncDeviceID] = []
        // Each entry's device found once per run of the same device (a whole snapshot is one).
        var devicesByEntry = [UInt16](repeating: 0, count: entries.count)
        var last: (device: SyncDeviceID, index: UInt16)?
        for (position, entry) in entries.enumerated() {
            let device = entry.stamp.device
            if let last, last.device == device {
                devicesByEntry[position] = last.index
                continue
            }
            let index = devices[device] ?? UInt16(table.count)
            if index == table.count {
                devices[device] = index
                table.append(device)
            }
            devicesByEntry[position] = index
            last = (device, index)
        }
        let deleted = entries.count { $0.digest == nil }
        let length = 1 + 2 + table.count * 16 + 4 + entries.count * 43 - deleted * 16
        var bytes = [UInt8](repeating: 0, count: length)
        bytes.withUnsafeMutableBytes { raw in
            var offset = 0
            /// `value`'s bytes as they are in memory.
            func store<T: FixedWidthInteger>(_ value: T) {
                precondition(raw.count - offset >= MemoryLayout<T>.size)
                raw.storeBytes(of: value, toByteOffset: offset, as: T.self)
                offset += MemoryLayout<T>.size
            }
            func append<T: FixedWidthInteger>(_ value: T) { store(value.littleEndian) }
            append(Self.formatVersion)
            append(UInt16(table.count))
            for device in table { for byte in device.bytes { append(byte) } }
            append(UInt32(ids.count))
            for (position, (id, entry)) in zip(ids, entries).enumerated() {
                store(id.high.bigEndian)
                store(id.low.bigEndian)
                append(UInt8(entry.digest == nil ? 1 : 0))
                append(entry.stamp.clock)
                append(devicesByEntry[position])
                if let digest = entry.digest {
                    append(digest.high)
                    append(digest.low)
                }
            }
            precondition(offset == raw.count)
        }
        return SyncIndexData(bytes: bytes)
    }

    init(decoding data: SyncIndexData) throws {
        let malformed = CofferError(.damaged, "This device's sync index is malformed.")
        try data.bytes.withUnsafeBytes { raw in
            var offset = 0
            func take(_ count: Int) throws -> UnsafeRawBufferPointer {
                guard raw.count - offset >= count else { throw malformed }
                defer { offset += count }
                return UnsafeRawBufferPointer(rebasing: raw[offset..<offset + count])
            }
            func read<T: FixedWidthInteger>(_: T.Type) throws -> T {
                T(littleEndian: try take(MemoryLayout<T>.size).loadUnaligned(as: T.self))
            }
            guard try take(1)[0] == Self.formatVersion else { throw malformed }
            let deviceCount = Int(try read(UInt16.self))
            var table: [SyncDeviceID] = []
            for _ in 0..<deviceCount { table.append(SyncDeviceID(unchecked: Array(try take(16)))) }
            let count = Int(try read(UInt32.self))
            guard count <= raw.count / 27 else { throw malformed }
            ids.reserveCapacity(count)
            entries.reserveCapacity(count)
            for _ in 0..<count {
                let id = try RecordID(contiguous: try take(16))
                let flag = try take(1)[0]
                guard flag <= 1 else { throw malformed }
                let clock = try read(UInt64.self)
                let deviceIndex = Int(try read(UInt16.self))
                guard deviceIndex < table.count else { throw malformed }
                var digest: PayloadDigest?
                if flag == 0 { digest = PayloadDigest(high: try read(UInt64.self), low: try read(UInt64.self)) }
                guard ids.last.map({ $0 < id }) ?? true else { throw malformed }
                ids.append(id)
                entries.append(Entry(stamp: SyncStamp(clock: clock, device: table[deviceIndex]), digest: digest))
            }
            guard offset == raw.count else { throw malformed }
        }
    }
}
