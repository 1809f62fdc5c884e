import Foundation
import VaultCrypto
import VaultStore

/// A record payload's digest in a sync index, kept as two words (no allocation per record;
/// a version 2 digest is one word, `low` 0).
struct PayloadDigest: Hashable, Sendable {
    let high: UInt64
    let low: UInt64

    init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }
}

/// How an index's digests are taken (Specs/sync-format.md §7). Version 2: SipHash-2-4 (64 bits)
/// under a random key of the index's own, kept in it: taken of every record at every sync, and
/// of a whole vault as a device joins, for a fifth of what BLAKE2b costs on a record's few dozen
/// bytes; keyed, so no one can make two payloads give one digest without the key, and an
/// accidental match of a changed record is a chance of 2⁻⁶⁴. Version 1 (written before):
/// unkeyed BLAKE2b-128; an index read at version 1 keeps taking them, since the values its
/// digests were taken of may no longer be held to take them again.
struct PayloadDigester: Sendable {
    /// nil: version 1.
    let key: SipHashKey?

    /// A version 2 digester with a new key: for an index made from nothing.
    static func fresh() -> PayloadDigester { PayloadDigester(key: .random()) }

    var version: UInt8 { key == nil ? 1 : 2 }

    /// Bytes of a digest in the index.
    var byteCount: Int { key == nil ? 16 : 8 }

    func digest(_ payload: UnsafeRawBufferPointer) -> PayloadDigest {
        if let key { return PayloadDigest(high: SipHash24.hash(payload, key: key), low: 0) }
        var words: (UInt64, UInt64) = (0, 0)
        withUnsafeMutableBytes(of: &words) { BLAKE2b.hash(payload, into: $0) }
        return PayloadDigest(high: words.0, low: words.1)
    }

    func digest<Bytes: ContiguousBytes>(of payload: Bytes) -> PayloadDigest {
        payload.withUnsafeBytes { digest($0) }
    }
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
    /// How this index's digests are taken: every digest compared with one of its entries must be.
    let digester: PayloadDigester

    /// An empty index, at version 2 with a new digest key.
    init() { digester = .fresh() }

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
        update(unsorted: changes.map { ($0.key, $0.value) })
    }

    /// Sets `entries`, each id once, in any order. The ids are sorted with their places alone
    /// (24 bytes each, not an entry's 64): a joining device sorts a whole vault's, straight into
    /// an empty index.
    mutating func update(unsorted entries: [(id: RecordID, entry: Entry)]) {
        var keys = entries.indices.map { (high: entries[$0].id.high, low: entries[$0].id.low, at: Int32($0)) }
        keys.sort { ($0.high, $0.low) < ($1.high, $1.low) }
        guard !ids.isEmpty else {
            ids = keys.map { entries[Int($0.at)].id }
            self.entries = keys.map { entries[Int($0.at)].entry }
            return
        }
        update(sorted: keys.map { entries[Int($0.at)] })
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

    func encoded() -> SyncIndexData { encoded(adding: nil) }

    /// The index with a joining device's streamed snapshot in it, encoded straight from its
    /// columns: a whole vault's entries never become `Entry` values (64 bytes each, and the
    /// memory faulted in for them would cost more than the sealing of the index does). Where an
    /// id is in both, this index's entry is the one kept.
    func encoded(adding streamed: StreamedIndexEntries?) -> SyncIndexData {
        // The streamed entries in id order, by their places alone (24 bytes each).
        var order: [(high: UInt64, low: UInt64, at: Int32)] = []
        if let streamed {
            order.reserveCapacity(streamed.count)
            for (at, id) in streamed.ids.enumerated() { order.append((id.high, id.low, Int32(at))) }
            order.sort { ($0.high, $0.low) < ($1.high, $1.low) }
            if !ids.isEmpty { order.removeAll { entry(streamed.ids[Int($0.at)]) != nil } }
        }
        var devices: [SyncDeviceID: UInt16] = [:]
        var table: [SyncDeviceID] = []
        func deviceIndex(_ device: SyncDeviceID) -> UInt16 {
            if let index = devices[device] { return index }
            devices[device] = UInt16(table.count)
            table.append(device)
            return UInt16(table.count - 1)
        }
        // Each entry's device found once per run of the same device (a whole snapshot is one).
        var devicesByEntry = [UInt16](repeating: 0, count: entries.count)
        var last: (device: SyncDeviceID, index: UInt16)?
        for (position, entry) in entries.enumerated() {
            let device = entry.stamp.device
            if let last, last.device == device {
                devicesByEntry[position] = last.index
                continue
            }
            devicesByEntry[position] = deviceIndex(device)
            last = (device, devicesByEntry[position])
        }
        let streamedDevice = streamed.map { deviceIndex($0.device) } ?? 0
        let count = entries.count + order.count
        let deleted =
            entries.count { $0.digest == nil } + (streamed.map { s in order.count { s.isDeleted(Int($0.at)) } } ?? 0)
        let keyLength = digester.key == nil ? 0 : SipHashKey.byteCount
        let length =
            1 + keyLength + 2 + table.count * 16 + 4 + count * (27 + digester.byteCount) - deleted * digester.byteCount
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
            func append(_ id: RecordID, clock: UInt64, device: UInt16, digest: PayloadDigest?) {
                store(id.high.bigEndian)
                store(id.low.bigEndian)
                append(UInt8(digest == nil ? 1 : 0))
                append(clock)
                append(device)
                if let digest {
                    append(digest.high)
                    if digester.key == nil { append(digest.low) }
                }
            }
            func appendOwn(_ position: Int) {
                let entry = entries[position]
                append(ids[position], clock: entry.stamp.clock, device: devicesByEntry[position], digest: entry.digest)
            }
            append(digester.version)
            digester.key?.withUnsafeBytes { key in
                for byte in key { append(byte) }
            }
            append(UInt16(table.count))
            for device in table { for byte in device.bytes { append(byte) } }
            append(UInt32(count))
            var own = 0
            if let streamed {
                for key in order {
                    let at = Int(key.at)
                    let id = streamed.ids[at]
                    while own < ids.count, ids[own] < id {
                        appendOwn(own)
                        own += 1
                    }
                    append(
                        id, clock: streamed.clocks[at], device: streamedDevice,
                        digest: streamed.isDeleted(at) ? nil : streamed.digests[at])
                }
            }
            while own < ids.count {
                appendOwn(own)
                own += 1
            }
            precondition(offset == raw.count)
        }
        return SyncIndexData(bytes: bytes)
    }

    init(decoding data: SyncIndexData) throws {
        (digester, ids, entries) = try Self.decode(data)
    }

    private static func decode(_ data: SyncIndexData) throws -> (PayloadDigester, [RecordID], [Entry]) {
        let malformed = CofferError(.damaged, "This device's sync index is malformed.")
        return try data.bytes.withUnsafeBytes { raw in
            var offset = 0
            func take(_ count: Int) throws -> UnsafeRawBufferPointer {
                guard raw.count - offset >= count else { throw malformed }
                defer { offset += count }
                return UnsafeRawBufferPointer(rebasing: raw[offset..<offset + count])
            }
            func read<T: FixedWidthInteger>(_: T.Type) throws -> T {
                T(littleEndian: try take(MemoryLayout<T>.size).loadUnaligned(as: T.self))
            }
            let digester: PayloadDigester
            switch try take(1)[0] {
            case 1: digester = PayloadDigester(key: nil)
            case 2:
                digester = PayloadDigester(key: try SipHashKey(SecureBytes(copying: try take(SipHashKey.byteCount))))
            default: throw malformed
            }
            let deviceCount = Int(try read(UInt16.self))
            var table: [SyncDeviceID] = []
            for _ in 0..<deviceCount { table.append(SyncDeviceID(unchecked: Array(try take(16)))) }
            let count = Int(try read(UInt32.self))
            guard count <= raw.count / 27 else { throw malformed }
            var ids: [RecordID] = []
            var entries: [Entry] = []
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
                if flag == 0 {
                    digest = PayloadDigest(
                        high: try read(UInt64.self), low: digester.key == nil ? try read(UInt64.self) : 0)
                }
                guard ids.last.map({ $0 < id }) ?? true else { throw malformed }
                ids.append(id)
                entries.append(Entry(stamp: SyncStamp(clock: clock, device: table[deviceIndex]), digest: digest))
            }
            guard offset == raw.count else { throw malformed }
            return (digester, ids, entries)
        }
    }
}

/// A joining device's streamed snapshot as its sync index will hold it, in columns as it is
/// written (`SyncIndex.encoded(adding:)`): every entry is the snapshot's device's, so a record
/// costs its id, clock and digest (40 bytes), with room for the whole snapshot taken at once.
/// A put's id and clock are taken as the snapshot is decoded, its digest once its record is
/// checked and written (in the same order); the deletes come after every put is written.
struct StreamedIndexEntries {
    let device: SyncDeviceID
    private(set) var ids: [RecordID] = []
    private(set) var clocks: [UInt64] = []
    /// The digest of each put; the deletes, after the puts, have none.
    private(set) var digests: [PayloadDigest] = []
    private var deletes = 0

    init(device: SyncDeviceID, capacity: Int) {
        self.device = device
        ids.reserveCapacity(capacity)
        clocks.reserveCapacity(capacity)
        digests.reserveCapacity(capacity)
    }

    var count: Int { ids.count }

    func isDeleted(_ position: Int) -> Bool { position >= digests.count }

    /// A put, as it is decoded.
    mutating func put(_ id: RecordID, clock: UInt64) {
        precondition(deletes == 0, "every put comes before the first delete")
        ids.append(id)
        clocks.append(clock)
    }

    /// The next put written, with its payload's digest.
    mutating func written(_ id: RecordID, digest: PayloadDigest) {
        precondition(ids[digests.count] == id, "puts are written in the order they were decoded")
        digests.append(digest)
    }

    /// A delete; every put is written by then.
    mutating func delete(_ id: RecordID, clock: UInt64) {
        precondition(digests.count == ids.count - deletes, "every put is written before the first delete")
        deletes += 1
        ids.append(id)
        clocks.append(clock)
    }
}
