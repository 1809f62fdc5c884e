import Foundation
import VaultCrypto
import VaultStore

#if canImport(Glibc)
    import Glibc
#endif

/// The records to archive, gathered one at a time into one buffer in the order they came: what
/// `Vault.forEachRecord` hands over, kept in about their own size (the buffer grows with
/// `realloc`, which moves a large block's pages instead of copying them). Plain memory, not
/// arrays: the archive writer reads each record's id and payload several times over.
public final class CollectedRecords {
    private var ids: UnsafeMutablePointer<RecordID>
    private var ends: UnsafeMutablePointer<Int>
    private var storage: UnsafeMutableRawPointer
    private var slots: Int
    private var capacity = 1 << 16
    private var used = 0
    public private(set) var count = 0

    /// `expecting`: how many records will come, when known.
    public init(expecting: Int = 0) {
        slots = max(expecting, 16)
        ids = .allocate(capacity: slots)
        ends = .allocate(capacity: slots)
        storage = malloc(capacity)!
    }

    /// A copy of `records` (tests, and archives of records that are not a vault's).
    public convenience init(_ records: [(RecordID, Data)]) {
        self.init(expecting: records.count)
        for (id, payload) in records { payload.withUnsafeBytes { append(id, $0) } }
    }

    deinit {
        ids.deinitialize(count: count)
        ids.deallocate()
        ends.deallocate()
        free(storage)
    }

    public func append(_ id: RecordID, _ payload: UnsafeRawBufferPointer) {
        if used + payload.count > capacity {
            capacity = max(capacity * 2, used + payload.count)
            guard let larger = realloc(storage, capacity) else { fatalError("out of memory") }
            storage = larger
        }
        if count == slots {
            slots *= 2
            let (moreIDs, moreEnds) = (
                UnsafeMutablePointer<RecordID>.allocate(capacity: slots),
                UnsafeMutablePointer<Int>.allocate(capacity: slots)
            )
            moreIDs.moveInitialize(from: ids, count: count)
            moreEnds.moveInitialize(from: ends, count: count)
            ids.deallocate()
            ends.deallocate()
            (ids, ends) = (moreIDs, moreEnds)
        }
        if let source = payload.baseAddress { (storage + used).copyMemory(from: source, byteCount: payload.count) }
        used += payload.count
        (ids + count).initialize(to: id)
        ends[count] = used
        count += 1
    }

    @inline(__always) func id(at index: Int) -> RecordID { ids[index] }

    /// Valid for as long as the records are, and not added to.
    @inline(__always) func payload(at index: Int) -> UnsafeRawBufferPointer {
        let start = index == 0 ? 0 : ends[index - 1]
        return UnsafeRawBufferPointer(start: storage + start, count: ends[index] - start)
    }
}

/// The content of a format 2, 3 or 4 archive (Specs/backup-format.md, "Body, format 2" to "Body,
/// format 4"): the id table (format 2: stored as it is; formats 3 and 4: coded, `IDTable`), then one xz
/// stream of the export: records grouped by kind and payload version, ordered by their dates and
/// sequence numbers, and cut into blocks whose fields lie in columns. The manifest comes last, so
/// the export is written and read in one pass. Coffer writes format 4.
enum ColumnExport {
    static let magic = Array("CFREXPV2".utf8)
    /// A group's records go into one block, up to as many as a reader takes in one: its text
    /// dictionaries then span the group, and a description repeated over a year is stored once.
    static let blockRecordLimit = ColumnBlockDecoder.maximumRecords
    /// A block's streams are compressed in chunks of this size while it is made.
    static let chunkSize = 1 << 20
    /// A block is closed once its columns pass this size, so memory stays bounded either way.
    static let blockByteLimit = 32 << 20
    /// No block Coffer writes is longer (one record's payload is at most 256 MiB, and a block is
    /// closed once it passes 32 MiB); a reader refuses one that is.
    static let maximumBlockLength = 260 << 20
    static let maximumManifestLength = 1 << 20

    /// Archive content ready to seal: `prefix` (the id counts and table) then `compressed` (the export).
    struct Written {
        var prefix: [UInt8]
        var compressed: [UInt8]
        var exportLength: UInt64
        var recordCount: Int
        /// Each record's place in the export, by its index in the records written.
        var positions: [Int32]
    }

    /// Which records go into the export and in what order: kind, version and whether the layout
    /// fits, then the ordering key, then id.
    private struct Group: Comparable {
        let kind: UInt8
        let version: UInt8
        let columns: Bool
        static func < (a: Group, b: Group) -> Bool {
            (a.kind, a.version, a.columns ? 0 : 1) < (b.kind, b.version, b.columns ? 0 : 1)
        }
    }

    /// A group's place in `groupAt`: kind, version, then 0 for columns or 1 for whole payloads.
    private static func slot(kind: UInt8, version: UInt8, columns: Bool) -> Int32 {
        Int32(kind) << 9 | Int32(version) << 1 | (columns ? 0 : 1)
    }

    /// A record's place in the export's order: its ordering key, then its place in id order
    /// (kept here, not looked up per comparison, which missed the cache a million times).
    private struct Entry {
        let key: (Int64, Int64)
        let rank: Int32
        let index: Int32
    }

    /// Builds format 4 content from `view`. `layouts` are keyed by `kind << 8 | version`.
    static func write(
        _ view: CollectedRecords, layouts: [UInt16: ColumnLayout],
        manifest: (_ recordCount: UInt64, _ countsByKind: [UInt8: UInt64], _ digest: [UInt8]) -> [UInt8],
        writer: XZ.BlockWriter, blockRecords: Int = blockRecordLimit, blockBytes: Int = blockByteLimit
    ) throws -> Written {
        precondition((1...blockRecordLimit).contains(blockRecords) && (1...blockByteLimit).contains(blockBytes))
        let lookup = SortedIDs(view)
        // Groups found, and where each (kind, version, columns or whole) is in them: by array,
        // since a dictionary lookup per record is a measurable part of a million.
        var groups: [Group] = [], entries: [[Entry]] = []
        var groupAt = [Int32](repeating: -1, count: 1 << 17)
        var layoutAt = [ColumnLayout?](repeating: nil, count: 1 << 16)
        for (key, layout) in layouts { layoutAt[Int(key)] = layout }
        // Each record's group (kind, version, columns or whole, as `slot`) and ordering key,
        // worked out on every core: each part of the records writes only its own places, and
        // the layouts are only read.
        let count = view.count
        var slotOf = [Int32](repeating: 0, count: count)
        var keyOf = [(Int64, Int64)](repeating: (0, 0), count: count)
        slotOf.withUnsafeMutableBufferPointer { slots in
            keyOf.withUnsafeMutableBufferPointer { keys in
                nonisolated(unsafe) let (slots, keys, view) = (slots, keys, view)
                let layoutAt = layoutAt
                let part = 1 << 15
                DispatchQueue.concurrentPerform(iterations: (count + part - 1) / part) { number in
                    // This part's own copy of the layout its records use (they come in runs of
                    // one kind): with one object shared by both threads, every record's retain
                    // and release of it waited for the other core.
                    var ownKey = -1
                    var own: ColumnLayout?
                    for index in number * part..<min(count, (number + 1) * part) {
                        let payload = view.payload(at: index)
                        guard payload.count >= 2, payload[0] != 0 else {
                            slots[index] = Self.slot(kind: 0, version: 0, columns: false)
                            continue
                        }
                        let (kind, version) = (payload[0], payload[1])
                        let fields = UnsafeRawBufferPointer(rebasing: payload[2...])
                        let layoutKey = Int(kind) << 8 | Int(version)
                        if layoutKey != ownKey {
                            ownKey = layoutKey
                            // Its text was parsed once already.
                            own = layoutAt[layoutKey].map { try! ColumnLayout($0.text) }
                        }
                        if let layout = own, let key = layout.orderingKey(of: fields) {
                            slots[index] = Self.slot(kind: kind, version: version, columns: true)
                            keys[index] = key
                        } else {
                            slots[index] = Self.slot(kind: kind, version: version, columns: false)
                        }
                    }
                }
            }
        }
        // How many records each group has, so its entries are allocated once (a million entries
        // grown by doubling would hold half as much again while copied).
        var counted = [Int](repeating: 0, count: 1 << 17)
        for slot in slotOf { counted[Int(slot)] += 1 }
        let rank = lookup.ranks()
        for index in 0..<count {
            let slot = Int(slotOf[index])
            if groupAt[slot] < 0 {
                groupAt[slot] = Int32(groups.count)
                groups.append(Group(kind: UInt8(slot >> 9), version: UInt8(slot >> 1 & 0xFF), columns: slot & 1 == 0))
                var fresh: [Entry] = []
                fresh.reserveCapacity(counted[slot])
                entries.append(fresh)
            }
            entries[Int(groupAt[slot])].append(Entry(key: keyOf[index], rank: rank[index], index: Int32(index)))
        }
        slotOf = []
        keyOf = []
        let order = groups.indices.sorted { groups[$0] < groups[$1] }
        var recordCount = 0
        for group in order {
            entries[group].sort { ($0.key.0, $0.key.1, $0.rank) < ($1.key.0, $1.key.1, $1.rank) }
            recordCount += entries[group].count
        }
        var next: Int32 = 0
        for group in order {
            for entry in entries[group] {
                lookup.position[Int(entry.index)] = next
                next += 1
            }
        }

        let positions = TablePositions(lookup, recordCount: recordCount)

        var exportLength: UInt64 = 0
        func emit(_ bytes: [UInt8]) throws {
            try bytes.withUnsafeBytes { try writer.compress($0) }
            exportLength += UInt64(bytes.count)
        }
        var stored = StoredColumns()
        /// Each stream's chunks of the block being made, compressing since they were taken.
        var chunks: [[XZ.BlockWriter.Job]] = []
        /// Hands the block's full chunks to the writer's threads: a block of a group of a
        /// million records is made in half a second of this thread, which would otherwise leave
        /// the other cores idle until it is done.
        func startChunks(of block: inout ColumnBlockEncoder, group: Int) {
            if chunks.count != block.layout.streamCount {
                chunks = Array(repeating: [], count: block.layout.streamCount)
            }
            for (number, bytes) in block.takeChunks(least: chunkSize) {
                let keep = bytes.withUnsafeBytes { stored.keepsAsIs($0, group: group, stream: number) }
                chunks[number].append(writer.detach(bytes, stored: keep))
            }
        }
        /// A block's header, then its streams (their chunks, then the rest), those xz cannot
        /// shrink kept as they are.
        func emit(block: ColumnBlockEncoder, group: Int) throws {
            try emit(block.header())
            try block.forEachStream { number, column in
                if number < chunks.count {
                    for chunk in chunks[number] {
                        try writer.append(chunk)
                        exportLength += UInt64(chunk.inputCount)
                    }
                }
                if stored.keepsAsIs(column, group: group, stream: number) {
                    try writer.store(column)
                } else {
                    try writer.compress(column)
                }
                exportLength += UInt64(column.count)
            }
            chunks = []
        }
        func u32(_ value: Int) -> [UInt8] { withUnsafeBytes(of: UInt32(value).littleEndian) { Array($0) } }
        let digest = RecordDigest()
        try emit(magic)
        var counts = [UInt64](repeating: 0, count: 256)
        var done = 0
        for groupIndex in order {
            let group = groups[groupIndex]
            let layout = group.columns ? layoutAt[Int(group.kind) << 8 | Int(group.version)]! : .whole
            var block = ColumnBlockEncoder(kind: group.kind, version: group.version, layout: layout)
            func flush() throws {
                guard block.count > 0 else { return }
                let length = block.length
                guard length <= maximumBlockLength else {
                    throw BackupError(
                        .writeFailed,
                        "A record is larger than an archive holds (\(ColumnBlockDecoder.maximumPayload >> 20) MiB); nothing was written."
                    )
                }
                try emit(u32(length))
                try emit(block: block, group: groupIndex)
                block = ColumnBlockEncoder(kind: group.kind, version: group.version, layout: layout)
            }
            let list = entries[groupIndex]
            var next = 0
            while next < list.count {
                // Up to the next 4,096th record, when the block's full chunks are handed over.
                let run = min(list.count - next, 4096 - done & 4095)
                // A block is closed before a record would take it past its limit, so it holds at
                // most the limit or one record (which may be 256 MiB): never more than a reader takes.
                let added = try block.add(run, recordLimit: blockRecords, byteLimit: blockBytes, positions: positions) {
                    let payload = view.payload(at: Int(list[next + $0].index))
                    return group.kind == 0 ? payload : UnsafeRawBufferPointer(rebasing: payload[2...])
                }
                for entry in list[next..<next + added] {
                    let payload = view.payload(at: Int(entry.index))
                    digest.add(view.id(at: Int(entry.index)), payload)
                    counts[Int(payload.first ?? 0)] += 1
                }
                next += added
                done += added
                WorkProgress.report(.compressing, done, of: recordCount, every: 1 << 16)
                if done & 4095 == 0 { startChunks(of: &block, group: groupIndex) }
                if added < run || block.count == blockRecords || block.size >= blockBytes { try flush() }
            }
            try flush()
        }
        let countsByKind = Dictionary(
            uniqueKeysWithValues: counts.indices.filter { counts[$0] > 0 }.map { (UInt8($0), counts[$0]) })
        let manifestBytes = manifest(UInt64(recordCount), countsByKind, digest.finalize())
        try emit(u32(0) + u32(manifestBytes.count) + manifestBytes)
        // The id table last, once the ordering is gone: it is as large as the ids. Each
        // record's id goes to its export position. It is coded and compressed on another thread
        // while the export's last blocks are.
        entries = []
        var table = [UInt8](repeating: 0, count: recordCount * 16)
        table.withUnsafeMutableBytes { table in
            for index in 0..<view.count {
                let at = Int(lookup.position[index]) * 16
                view.id(at: index).withBytes {
                    table.baseAddress!.advanced(by: at).copyMemory(from: $0.baseAddress!, byteCount: 16)
                }
            }
        }
        table += positions.extraBytes
        let coded = Beside { [table] in try IDTable.encode(table) }
        table = []
        do { try writer.finish() } catch {
            _ = try? coded.value()
            throw error
        }
        var prefix: [UInt8] = []
        withUnsafeBytes(of: (UInt64(recordCount).littleEndian, UInt64(positions.extra.count).littleEndian)) {
            prefix += $0
        }
        prefix += try coded.value()
        return Written(
            prefix: prefix, compressed: writer.output, exportLength: exportLength, recordCount: recordCount,
            positions: Array(lookup.position))
    }

    /// Which columns the export keeps out of LZMA2 (in uncompressed chunks of the same xz
    /// stream): those whose bytes are so near random that xz would spend its slowest work on
    /// them for little, like the amounts of a million card payments (xz takes 16 % off them at a
    /// third of the speed it compresses texts). A column is judged once per group, on its first
    /// block of 16 KiB or more; smaller columns always go to LZMA2.
    struct StoredColumns {
        private var decided: [Int: Bool] = [:]

        mutating func keepsAsIs(_ column: UnsafeRawBufferPointer, group: Int, stream: Int) -> Bool {
            guard column.count >= Self.smallest else { return false }
            let key = group << 16 | stream
            if let known = decided[key] { return known }
            let verdict = Self.xzCannotShrink(column)
            decided[key] = verdict
            return verdict
        }

        static let smallest = 16 << 10
        static let sampleSize = 32 << 10

        /// True when a sample of `column` compresses by less than a fifth. The sample is only
        /// compressed when its bytes are spread evenly enough (order-0 entropy above 6 bits a
        /// byte) that it might: a column xz's literal coder alone would shrink by a quarter is
        /// never stored.
        static func xzCannotShrink(_ column: UnsafeRawBufferPointer) -> Bool {
            let sample = UnsafeRawBufferPointer(rebasing: column[max(0, column.count - sampleSize)...])
            var counts = [Int](repeating: 0, count: 256)
            for byte in sample { counts[Int(byte)] += 1 }
            let total = Double(sample.count)
            let bitsPerByte = counts.reduce(0.0) { sum, count in
                count == 0 ? sum : sum - Double(count) / total * log2(Double(count) / total)
            }
            guard bitsPerByte > 6 else { return false }
            guard let trial = try? XZ.encodeBlock(Array(sample), stored: false, preset: Archive.compressionPreset)
            else { return false }
            return trial.bytes.count * 5 > sample.count * 4
        }
    }

    /// The manifest's digest: BLAKE2b-256 over every record's id ‖ length u32 ‖ payload, in export
    /// order. One hash cannot be split across cores, but it can run beside the work that makes
    /// the records: records are copied, framed, into chunks of 1 MiB, and another thread hashes
    /// each chunk while the next fills (at a million records, hashing was a fifth of the thread
    /// that rebuilds them on every read, and of the one that writes the columns). The chunks hold
    /// records in plaintext: wiped when the digest goes.
    fileprivate final class RecordDigest: @unchecked Sendable {
        static let framing = 20
        static let chunkSize = 1 << 20
        static let largeCopyLimit = 64 << 20
        private let hasher = BLAKE2bHasher()
        private let queue = DispatchQueue(label: "coffer.backup.digest")
        /// Chunks (or large records) handed to `queue` and not yet hashed: at most two, so the
        /// third chunk is free to fill.
        private let handedOver = DispatchSemaphore(value: 2)
        private let chunks = (0..<3).map { _ in
            UnsafeMutableRawBufferPointer.allocate(byteCount: chunkSize, alignment: 16)
        }
        private var current = 0
        private var filled = 0

        deinit {
            queue.sync {}
            for chunk in chunks {
                secureWipe(chunk)
                chunk.deallocate()
            }
        }

        func add(_ id: RecordID, _ payload: UnsafeRawBufferPointer) {
            id.withBytes { add(id: $0, payload: payload) }
        }

        /// `framed`: `framing` bytes free, then the payload (as `ColumnBlockDecoder` rebuilds it).
        func add(_ id: UnsafeRawBufferPointer, framed: UnsafeMutableRawBufferPointer) {
            add(id: id, payload: UnsafeRawBufferPointer(rebasing: framed[Self.framing...]))
        }

        private func add(id: UnsafeRawBufferPointer, payload: UnsafeRawBufferPointer) {
            let size = Self.framing + payload.count
            if filled + size > Self.chunkSize { handOver() }
            guard size <= Self.chunkSize else {
                addLarge(id: id, payload: payload)
                return
            }
            frame(id: id, payload: payload, at: chunks[current].baseAddress! + filled)
            filled += size
        }

        private func frame(id: UnsafeRawBufferPointer, payload: UnsafeRawBufferPointer, at: UnsafeMutableRawPointer) {
            at.copyMemory(from: id.baseAddress!, byteCount: 16)
            at.storeBytes(of: UInt32(payload.count).littleEndian, toByteOffset: 16, as: UInt32.self)
            if let source = payload.baseAddress {
                (at + Self.framing).copyMemory(from: source, byteCount: payload.count)
            }
        }

        /// A record larger than a chunk (one change that touched a million records is 20 MB):
        /// up to `largeCopyLimit`, framed into memory of its own that the queue hashes, wipes and
        /// frees; beyond it, hashed here once the queue is done with every chunk before it.
        private func addLarge(id: UnsafeRawBufferPointer, payload: UnsafeRawBufferPointer) {
            let size = Self.framing + payload.count
            guard size <= Self.largeCopyLimit else {
                queue.sync {}
                hasher.update(id)
                withUnsafeBytes(of: UInt32(payload.count).littleEndian) { hasher.update($0) }
                hasher.update(payload)
                return
            }
            let copy = UnsafeMutableRawBufferPointer.allocate(byteCount: size, alignment: 16)
            frame(id: id, payload: payload, at: copy.baseAddress!)
            enqueue(copy, owned: true)
        }

        /// Queues the chunk being filled and moves to the next, which the queue is done with.
        private func handOver() {
            guard filled > 0 else { return }
            enqueue(UnsafeMutableRawBufferPointer(rebasing: chunks[current][..<filled]), owned: false)
            current = (current + 1) % chunks.count
            filled = 0
        }

        /// Hands `bytes` to the queue once fewer than two wait there; `owned` memory is wiped and
        /// freed once hashed.
        private func enqueue(_ bytes: UnsafeMutableRawBufferPointer, owned: Bool) {
            handedOver.wait()
            nonisolated(unsafe) let (bytes, hasher) = (bytes, hasher)
            queue.async { [handedOver] in
                hasher.update(UnsafeRawBufferPointer(bytes))
                if owned {
                    secureWipe(bytes)
                    bytes.deallocate()
                }
                handedOver.signal()
            }
        }

        func finalize() -> [UInt8] {
            handOver()
            return queue.sync { hasher.finalize() }
        }
    }

    /// Each id's place in the archive's id table, as the columns are written: a record's export
    /// position, or, for an id a record names that is no record of the archive (a deleted one, in
    /// the change log), a place after the records', in the order first met.
    final class TablePositions {
        private let lookup: SortedIDs
        private let recordCount: Int
        /// Records name few ids, over and over (a transaction's account, its category): the
        /// last id met in each of a few slots answers most lookups without the sorted table's
        /// cache misses, which cost more than the rest of making the columns.
        private let recent: UnsafeMutableBufferPointer<(id: RecordID, index: UInt64)?>
        private(set) var extra: [RecordID: UInt64] = [:]
        private(set) var extraBytes: [UInt8] = []

        /// Places for ids of no archive's records, each an extra entry as first met: for a block
        /// made on its own.
        convenience init() { self.init(SortedIDs(CollectedRecords([])), recordCount: 0) }

        fileprivate init(_ lookup: SortedIDs, recordCount: Int) {
            (self.lookup, self.recordCount) = (lookup, recordCount)
            recent = .allocate(capacity: 1 << 10)
            recent.initialize(repeating: nil)
        }

        deinit { recent.deallocate() }

        func index(of bytes: UnsafeRawBufferPointer) -> UInt64 {
            let id = try! RecordID(contiguous: bytes)
            // Both words mixed: ordered ids share their first bytes.
            let slot = Int(id.mixed >> 54)
            if let hit = recent[slot], hit.id == id { return hit.index }
            let index: UInt64
            if let known = lookup.position(of: id) {
                index = UInt64(known)
            } else if let known = extra[id] {
                index = known
            } else {
                index = UInt64(recordCount + extra.count)
                extra[id] = index
                extraBytes += bytes
            }
            recent[slot] = (id, index)
            return index
        }
    }

    /// The source's records in id order, as source indices, with a table of where each of 2¹⁶
    /// slices of the ids' range starts (a counting sort, then each bucket sorted): finding an id
    /// costs a few comparisons, not a search of the whole; and each record's place in the export
    /// once it has one. The slices divide the range the ids' first words span, not all 2⁶⁴
    /// values: ordered ids share their first bytes, and would otherwise fall in one bucket. The
    /// ids themselves stay in the source. Plain memory, looked up millions of times.
    fileprivate final class SortedIDs {
        let source: CollectedRecords
        let indices: UnsafeMutableBufferPointer<Int32>
        let starts: UnsafeMutableBufferPointer<Int32>
        /// The export position of each source index (-1: not in the export).
        let position: UnsafeMutableBufferPointer<Int32>
        /// The smallest first word, and how far a first word's distance from it is shifted to
        /// give its bucket.
        let lowest: UInt64
        let shift: UInt64

        init(_ source: CollectedRecords) {
            self.source = source
            let count = source.count
            var lowest = UInt64.max, highest: UInt64 = 0
            for index in 0..<count {
                let high = source.id(at: index).high
                lowest = min(lowest, high)
                highest = max(highest, high)
            }
            lowest = count == 0 ? 0 : lowest
            let shift = UInt64(max(0, UInt64.bitWidth - (highest &- lowest).leadingZeroBitCount - 16))
            (self.lowest, self.shift) = (lowest, shift)
            starts = .allocate(capacity: (1 << 16) + 1)
            starts.initialize(repeating: 0)
            for index in 0..<count { starts[Self.bucket(of: source.id(at: index), lowest, shift)! + 1] += 1 }
            for bucket in 0..<(1 << 16) { starts[bucket + 1] += starts[bucket] }
            indices = .allocate(capacity: count)
            var next = Array(starts.prefix(1 << 16))
            for index in 0..<count {
                let bucket = Self.bucket(of: source.id(at: index), lowest, shift)!
                indices[Int(next[bucket])] = Int32(index)
                next[bucket] += 1
            }
            for bucket in 0..<(1 << 16) where starts[bucket + 1] - starts[bucket] > 1 {
                var members = UnsafeMutableBufferPointer(
                    rebasing: indices[Int(starts[bucket])..<Int(starts[bucket + 1])])
                members.sort { source.id(at: Int($0)) < source.id(at: Int($1)) }
            }
            position = .allocate(capacity: count)
            position.initialize(repeating: -1)
        }

        deinit {
            for buffer in [indices, starts, position] { buffer.deallocate() }
        }

        /// Each source index's place in id order: what breaks ties in the export's order.
        func ranks() -> [Int32] {
            var rank = [Int32](repeating: 0, count: indices.count)
            for (sorted, index) in indices.enumerated() { rank[Int(index)] = Int32(sorted) }
            return rank
        }

        /// The bucket of an id, nil for one outside the range the source's ids span.
        private static func bucket(of id: RecordID, _ lowest: UInt64, _ shift: UInt64) -> Int? {
            guard id.high >= lowest else { return nil }
            let slice = (id.high - lowest) >> shift
            return slice < 1 << 16 ? Int(slice) : nil
        }

        /// The export position of `id`, when it is a record of the export.
        func position(of id: RecordID) -> Int32? {
            guard let bucket = Self.bucket(of: id, lowest, shift) else { return nil }
            var low = Int(starts[bucket]), high = Int(starts[bucket + 1])
            while low < high {
                let middle = (low + high) / 2
                let index = Int(indices[middle])
                let candidate = source.id(at: index)
                if candidate == id {
                    let at = position[index]
                    return at >= 0 ? at : nil
                }
                if candidate < id { low = middle + 1 } else { high = middle }
            }
            return nil
        }
    }

    /// Reads the content of a format 2, 3 or 4 archive: the id table, then the export streamed
    /// through the xz decoder block by block, each record rebuilt, counted and hashed, and handed
    /// to `visit` (valid only during the call); then the manifest, which must match exactly.
    /// `memoryLimit` holds for every decoder together; `tableShare` is the id table's part of it
    /// while the export decodes beside it (`Prefetch`).
    static func read(
        _ body: UnsafeRawBufferPointer, format: UInt16, exportLength: UInt64,
        memoryLimit: UInt64 = XZ.memoryLimit, tableShare: UInt64 = Prefetch.tableShare,
        visit: ((RecordID, UnsafeRawBufferPointer) throws -> Void)?
    ) throws -> ExportFormat.Manifest {
        var cursor = FieldCursor(bytes: body)
        guard let counts = cursor.take(16) else { throw truncated }
        let recordCount = counts.loadUnaligned(as: UInt64.self).littleEndian
        let extraCount = counts.loadUnaligned(fromByteOffset: 8, as: UInt64.self).littleEndian
        // Both counts are checked before any is used: their sum, times 16, must fit in what is
        // left of the body (format 2), or be what a coded table may decode to (formats 3 and 4).
        let (tableCount, sumOverflow) = recordCount.addingReportingOverflow(extraCount)
        let (idBytes, overflow) = tableCount.multipliedReportingOverflow(by: 16)
        guard !sumOverflow, !overflow, recordCount <= UInt64(Int32.max) else { throw truncated }
        switch format {
        case 2:
            guard let table = cursor.take(idBytes) else { throw truncated }
            return try read(
                table: table, recordCount: recordCount,
                export: UnsafeRawBufferPointer(rebasing: body[cursor.offset...]),
                exportLength: exportLength, memoryLimit: memoryLimit, visit: visit)
        case 3, 4:
            // The export decodes from the start, while the table does, the two sharing the one
            // memory limit (`Prefetch`).
            let prefetched = exportAfterTable(body, at: cursor.offset).map {
                Prefetch($0, expectedLength: exportLength, memoryLimit: memoryLimit, tableShare: tableShare)
            }
            defer { prefetched?.stop() }
            return try IDTable.decode(
                body, from: cursor.offset, count: tableCount, format: format,
                memoryLimit: prefetched == nil ? memoryLimit : tableShare,
                raisedLimit: {
                    // The table needs more: the export's decoder goes, and decodes after it.
                    prefetched?.stop()
                    return memoryLimit
                }
            ) { table, export in
                prefetched?.tableDecoded()
                return try read(
                    table: table, recordCount: recordCount, export: export, exportLength: exportLength,
                    memoryLimit: memoryLimit, prefetched: prefetched?.isStopped == false ? prefetched : nil,
                    visit: visit)
            }
        default:
            throw BackupError(.unsupported, "This Coffer reads archive content of formats 2 to 4, not \(format).")
        }
    }

    /// The export, once the id table is known (`table`: 16 bytes per id), its record ids checked
    /// unique beside it.
    private static func read(
        table: UnsafeRawBufferPointer, recordCount: UInt64, export: UnsafeRawBufferPointer, exportLength: UInt64,
        memoryLimit: UInt64, prefetched: Prefetch? = nil, visit: ((RecordID, UnsafeRawBufferPointer) throws -> Void)?
    ) throws -> ExportFormat.Manifest {
        // Checked beside the decoding, on another core: nothing the reader hands over counts
        // before the manifest has matched at the end, and the table outlives both.
        nonisolated(unsafe) let ids = UnsafeRawBufferPointer(rebasing: table[..<(Int(recordCount) * 16)])
        let uniqueness = Beside { try checkUnique(ids) }
        let manifest: ExportFormat.Manifest
        do {
            manifest = try readExport(
                table: table, recordCount: recordCount, export: export,
                exportLength: exportLength, memoryLimit: memoryLimit, prefetched: prefetched, visit: visit)
        } catch {
            // A repeated id is the first fault, whatever the decoding then made of it.
            try uniqueness.value()
            throw error
        }
        try uniqueness.value()
        return manifest
    }

    /// The export once the table is known: each block decoded as the xz stream hands it over,
    /// then the manifest, which must match what was read exactly.
    private static func readExport(
        table: UnsafeRawBufferPointer, recordCount: UInt64, export: UnsafeRawBufferPointer,
        exportLength: UInt64, memoryLimit: UInt64, prefetched: Prefetch?,
        visit: ((RecordID, UnsafeRawBufferPointer) throws -> Void)?
    ) throws -> ExportFormat.Manifest {
        let reader = StreamReader(table: table, recordCount: Int(recordCount), visit: visit)
        if let prefetched {
            var produced = 0
            while let piece = try prefetched.next() {
                try piece.withUnsafeBytes { try reader.feed($0) }
                produced += piece.count
                prefetched.recycle(piece)
                WorkProgress.report(.decompressing, produced, of: Int(exportLength), every: 1)
            }
        } else {
            try XZ.decompress(export, expectedLength: exportLength, memoryLimit: memoryLimit) { piece in
                try reader.feed(piece)
            }
        }
        guard let manifest = reader.manifest else { throw truncated }
        guard reader.pending.count == reader.start else {
            throw BackupError(.damaged, "The archive's export has bytes after its manifest.")
        }
        guard manifest.recordCount == recordCount, UInt64(reader.records) == recordCount else {
            throw BackupError(
                .damaged,
                "The archive holds \(reader.records) records but its manifest lists \(manifest.recordCount).")
        }
        guard reader.counts.indices.allSatisfy({ reader.counts[$0] == manifest.countsByKind[UInt8($0)] ?? 0 }),
            manifest.countsByKind.values.allSatisfy({ $0 > 0 })
        else {
            throw BackupError(.damaged, "The archive's records do not match its manifest's counts by kind.")
        }
        guard reader.digest.finalize() == manifest.contentDigest else {
            throw BackupError(.damaged, "The archive's records do not match its manifest's digest.")
        }
        return manifest
    }

    static let truncated = BackupError(.damaged, "The archive's content is truncated.")

    /// The export after a coded or stored id table at `offset` of `body` (its coding u8 and
    /// length u64 first), nil when the table's length does not fit: the table's own reading then
    /// says why.
    private static func exportAfterTable(_ body: UnsafeRawBufferPointer, at offset: Int) -> UnsafeRawBufferPointer? {
        var cursor = FieldCursor(bytes: body)
        cursor.offset = offset
        guard cursor.byte() != nil, let length = cursor.take(8),
            cursor.take(UInt64(littleEndian: length.loadUnaligned(as: UInt64.self))) != nil
        else { return nil }
        return UnsafeRawBufferPointer(rebasing: body[cursor.offset...])
    }

    /// The export's xz stream decoded on another thread from the start, while the id table is
    /// decoded (every record's rebuilding waits for it): at a million records the table is a
    /// tenth of a second of liblzma that the export's decoding no longer waits behind. Its
    /// output is copied into pieces of which at most `bound` bytes wait (a block as large as the
    /// writer makes: the next block decodes while one is rebuilt); a failure comes after
    /// the pieces before it, as it would have unthreaded. The two decoders share the one limit
    /// of 256 MiB: the table's gets `tableShare` and this one the rest until the table is
    /// decoded, when this one may take it all; should the table need more, this one stops and
    /// the export is decoded after the table, as without it. (Coffer's own streams need a few
    /// MiB each.) Its thread is its own: it waits for room, which no shared pool should.
    final class Prefetch: @unchecked Sendable {
        static let bound = blockByteLimit
        static let tableShare: UInt64 = 64 << 20
        private let condition = NSCondition()
        private var pieces: [[UInt8]] = []
        /// Pieces given back once read, for the decoder to fill again: each piece is as large
        /// as the allocations that get mappings of their own, which a new one a piece would
        /// map, fault in and unmap.
        private var spare: [[UInt8]] = []
        private var taken = 0
        private var waiting = 0
        private var finished = false
        private var failure: Error?
        private var stopped = false
        private var tableDone = false
        private let done = DispatchSemaphore(value: 0)

        /// `export` must stay valid until `stop` has returned.
        init(_ export: UnsafeRawBufferPointer, expectedLength: UInt64, memoryLimit: UInt64, tableShare: UInt64) {
            precondition(tableShare < memoryLimit)
            nonisolated(unsafe) let export = export
            let thread = Thread {
                var failure: Error?
                do {
                    try XZ.decompress(
                        export, expectedLength: expectedLength, memoryLimit: memoryLimit - tableShare,
                        raisedLimit: { self.waitForTheTable() ? memoryLimit : nil }, reportsProgress: false
                    ) { try self.put($0) }
                } catch { failure = error }
                self.condition.withLock {
                    (self.finished, self.failure) = (true, failure)
                    self.condition.broadcast()
                }
                self.done.signal()
            }
            thread.name = "coffer.backup.export"
            thread.start()
        }

        /// A copy of `bytes` waits to be taken, in a piece taken before if there is one.
        private func put(_ bytes: UnsafeRawBufferPointer) throws {
            var piece = condition.withLock { spare.popLast() } ?? []
            piece.removeAll(keepingCapacity: true)
            piece.append(contentsOf: bytes)
            condition.lock()
            defer { condition.unlock() }
            while waiting >= Self.bound, !stopped { condition.wait() }
            if stopped { throw CancellationError() }
            pieces.append(piece)
            waiting += piece.count
            condition.broadcast()
        }

        /// Whether the table's decoder has gone (false: this one was stopped first).
        private func waitForTheTable() -> Bool {
            condition.lock()
            defer { condition.unlock() }
            while !tableDone, !stopped { condition.wait() }
            return !stopped
        }

        /// The table is decoded and its decoder gone.
        func tableDecoded() {
            condition.withLock {
                tableDone = true
                condition.broadcast()
            }
        }

        var isStopped: Bool { condition.withLock { stopped } }

        /// Gives back a piece `next` handed over, once read.
        func recycle(_ piece: [UInt8]) {
            condition.withLock { if spare.count < 16 { spare.append(piece) } }
        }

        /// The next piece of output, nil once the stream has ended well; the decoder's failure
        /// once every piece before it is taken.
        func next() throws -> [UInt8]? {
            condition.lock()
            defer { condition.unlock() }
            while taken == pieces.count, !finished { condition.wait() }
            guard taken < pieces.count else {
                if let failure { throw failure }
                return nil
            }
            let piece = pieces[taken]
            pieces[taken] = []
            taken += 1
            if taken == pieces.count || taken >= 1024 {
                pieces.removeFirst(taken)
                taken = 0
            }
            waiting -= piece.count
            condition.broadcast()
            return piece
        }

        /// Stops the decoding if it is still going, and waits for its thread to let go of the
        /// export and of its memory. Any number of times.
        func stop() {
            let first = condition.withLock {
                defer { stopped = true }
                condition.broadcast()
                return !stopped
            }
            if first { done.wait() }
        }
    }

    /// Record ids must be unique: sorted copies of their two words, compared neighbour to neighbour.
    private static func checkUnique(_ table: UnsafeRawBufferPointer) throws {
        var ids = (0..<table.count / 16).map {
            try! RecordID(contiguous: UnsafeRawBufferPointer(rebasing: table[$0 * 16..<$0 * 16 + 16]))
        }
        ids.sort()
        for index in ids.indices.dropFirst() where ids[index - 1] == ids[index] {
            throw BackupError(.damaged, "The archive holds the same record id twice.")
        }
    }

    /// Cuts the decompressed export into blocks as it arrives, keeping at most one block.
    private final class StreamReader {
        let table: UnsafeRawBufferPointer
        let recordCount: Int
        let visit: ((RecordID, UnsafeRawBufferPointer) throws -> Void)?
        var pending: [UInt8] = []
        var start = 0
        var sawMagic = false
        var ended = false
        var manifest: ExportFormat.Manifest?
        var records = 0
        var counts = [UInt64](repeating: 0, count: 256)
        let digest = RecordDigest()

        init(
            table: UnsafeRawBufferPointer, recordCount: Int, visit: ((RecordID, UnsafeRawBufferPointer) throws -> Void)?
        ) {
            self.table = table
            self.recordCount = recordCount
            self.visit = visit
        }

        func feed(_ piece: UnsafeRawBufferPointer) throws {
            // Nothing may follow the manifest: refused at once, never gathered.
            guard manifest == nil || piece.isEmpty else {
                throw BackupError(.damaged, "The archive's export has bytes after its manifest.")
            }
            if start > 0, start >= pending.count / 2 {
                pending.removeSubrange(..<start)
                start = 0
            }
            pending += piece
            while try step() {}
        }

        private func u32(at offset: Int) -> Int {
            pending.withUnsafeBytes {
                Int(UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
            }
        }

        /// Consumes one whole part when it is there.
        private func step() throws -> Bool {
            let available = pending.count - start
            if !sawMagic {
                guard available >= magic.count else { return false }
                guard Array(pending[start..<start + magic.count]) == magic else {
                    throw BackupError(.damaged, "The archive's content is not a Coffer export.")
                }
                start += magic.count
                sawMagic = true
                return true
            }
            guard manifest == nil, available >= 4 else { return false }
            let length = u32(at: start)
            if ended {
                guard length <= maximumManifestLength else { throw truncated }
                guard available >= 4 + length else { return false }
                manifest = try pending.withUnsafeBytes {
                    try ExportFormat.parseManifest(Array($0[start + 4..<start + 4 + length]))
                }
                start += 4 + length
                return false
            }
            if length == 0 {
                start += 4
                ended = true
                return true
            }
            guard length <= maximumBlockLength else {
                throw BackupError(.damaged, "The archive's export holds a block larger than Coffer writes.")
            }
            guard available >= 4 + length else {
                // Room for the whole block at once: grown by doubling, a block of 30 MB would be
                // copied six times into memory never touched before.
                if pending.capacity - start < 4 + length {
                    pending.removeSubrange(..<start)
                    start = 0
                    pending.reserveCapacity(4 + length)
                }
                return false
            }
            try pending.withUnsafeBytes { buffer in
                let block = UnsafeRawBufferPointer(rebasing: buffer[start + 4..<start + 4 + length])
                let first = records
                let added = try ColumnBlockDecoder.decode(block, ids: table, framing: RecordDigest.framing) {
                    position, _, framed in
                    let index = first + position
                    guard index < recordCount else {
                        throw BackupError(.damaged, "The archive's export holds more records than its id table.")
                    }
                    let idBytes = UnsafeRawBufferPointer(rebasing: table[index * 16..<index * 16 + 16])
                    digest.add(idBytes, framed: framed)
                    let payload = UnsafeRawBufferPointer(rebasing: framed[RecordDigest.framing...])
                    counts[Int(payload.first ?? 0)] += 1
                    try visit?(try RecordID(contiguous: idBytes), payload)
                }
                records += added
            }
            start += 4 + length
            return true
        }
    }
}
