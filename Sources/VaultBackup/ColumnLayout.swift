import Foundation

/// How one kind of payload splits into columns (Specs/backup-format.md, "Record layouts"): a
/// short description of its fields in the record codec's own encodings, carried inside every
/// block of an archive that uses it, so a reader needs no knowledge of any record kind.
///
/// `u` unsigned varint, `s` signed (zig-zag) varint, `d` date (a signed varint stored as the
/// difference from the previous one), `n` an unsigned varint that mostly grows (a sequence
/// number, stored as the difference from the previous one; format 3), `b` one byte, `t` length-prefixed bytes (dictionary
/// coded), `i` a 16-byte id (an index into the archive's id table), `?X` a presence byte then X,
/// `[…]` a count then that many of the fields inside, `(…)` fields in sequence, `<A|B|…>` a tag
/// byte choosing one of the alternatives, `*` every byte left (the last field only).
/// A class: it is looked up per record, and a reference costs one count where a copy of its
/// arrays would cost four.
public final class ColumnLayout: Sendable {
    /// One field, with the streams its values go to (numbered in the order they appear).
    indirect enum Field: Sendable {
        case unsigned(Int)
        case signed(Int)
        case date(Int)
        case increasing(Int)
        case byte(Int)
        case text(codes: Int, entries: Int)
        case id(Int)
        case rest(Int)
        case optional(presence: Int, Field)
        case list(count: Int, [Field])
        case sequence([Field])
        case union(tag: Int, [[Field]])

        /// Whether every value of this field takes at least one byte of some stream: all but a
        /// sequence of none.
        var takesAByte: Bool {
            if case .sequence(let inner) = self { return inner.contains(where: \.takesAByte) }
            return true
        }
    }

    static let maximumLength = 255
    static let maximumDepth = 8
    /// The layout of blocks that hold whole payloads, whatever they contain (block kind 0).
    static var whole: ColumnLayout { try! ColumnLayout("*") }

    let text: String
    let fields: [Field]
    /// `fields` compiled for the loops that run per record: one flat array, children by range.
    let nodes: [Node]
    let top: Range<Int>
    let streamCount: Int
    /// The nodes of the first two top-level `d`, `u` and `n` fields (-1: none): what records are
    /// ordered by.
    let orderingNodes: (Int, Int)

    public init(_ text: String) throws {
        let bytes = Array(text.utf8)
        guard !bytes.isEmpty, bytes.count <= Self.maximumLength else { throw Self.malformed }
        var parser = Parser(bytes: bytes)
        let fields = try parser.sequence(depth: 0, topLevel: true)
        guard parser.offset == bytes.count else { throw Self.malformed }
        self.text = text
        self.fields = fields
        let (nodes, top) = Self.flatten(fields)
        (self.nodes, self.top) = (nodes, top)
        self.streamCount = parser.streams
        let ordering = top.filter { [.date, .unsigned, .increasing].contains(nodes[$0].symbol) }
        orderingNodes = (ordering.first ?? -1, ordering.dropFirst().first ?? -1)
    }

    static let malformed = BackupError(.damaged, "An archive block describes its columns in a way Coffer cannot read.")

    /// A field with its streams and the range of its children in `nodes` (the inner field of
    /// `?`, the fields of `[…]` and `(…)`, one `(…)` per alternative of `<…>`): plain values,
    /// so walking a layout per record retains nothing.
    struct Node: Sendable {
        enum Symbol: UInt8, Sendable {
            case unsigned, signed, date, increasing, byte, text, id, rest, optional, list, sequence, union
        }
        var symbol: Symbol
        var stream: Int
        var entries = 0
        var children: Range<Int> = 0..<0
    }

    private static func flatten(_ fields: [Field]) -> ([Node], Range<Int>) {
        var nodes: [Node] = []
        func place(_ fields: [Field]) -> Range<Int> {
            let start = nodes.count
            nodes += Array(repeating: Node(symbol: .sequence, stream: 0), count: fields.count)
            for (offset, field) in fields.enumerated() { nodes[start + offset] = node(field) }
            return start..<start + fields.count
        }
        func node(_ field: Field) -> Node {
            switch field {
            case .unsigned(let stream): Node(symbol: .unsigned, stream: stream)
            case .signed(let stream): Node(symbol: .signed, stream: stream)
            case .date(let stream): Node(symbol: .date, stream: stream)
            case .increasing(let stream): Node(symbol: .increasing, stream: stream)
            case .byte(let stream): Node(symbol: .byte, stream: stream)
            case .text(let codes, let entries): Node(symbol: .text, stream: codes, entries: entries)
            case .id(let stream): Node(symbol: .id, stream: stream)
            case .rest(let stream): Node(symbol: .rest, stream: stream)
            case .optional(let presence, let inner): Node(symbol: .optional, stream: presence, children: place([inner]))
            case .list(let count, let inner): Node(symbol: .list, stream: count, children: place(inner))
            case .sequence(let inner): Node(symbol: .sequence, stream: 0, children: place(inner))
            case .union(let tag, let alternatives):
                Node(symbol: .union, stream: tag, children: place(alternatives.map { .sequence($0) }))
            }
        }
        let top = place(fields)
        return (nodes, top)
    }

    private struct Parser {
        let bytes: [UInt8]
        var offset = 0
        var streams = 0

        mutating func next() -> Int {
            defer { streams += 1 }
            return streams
        }

        /// Fields up to a closing bracket, `|` or the end.
        mutating func sequence(depth: Int, topLevel: Bool = false) throws -> [Field] {
            guard depth <= ColumnLayout.maximumDepth else { throw ColumnLayout.malformed }
            var fields: [Field] = []
            while offset < bytes.count,
                ![UInt8(ascii: ")"), UInt8(ascii: "]"), UInt8(ascii: "|"), UInt8(ascii: ">")]
                    .contains(bytes[offset])
            {
                if bytes[offset] == UInt8(ascii: "*") {
                    // Only as the very last field of the whole layout.
                    guard topLevel, offset == bytes.count - 1 else { throw ColumnLayout.malformed }
                    offset += 1
                    fields.append(.rest(next()))
                    break
                }
                fields.append(try field(depth: depth))
            }
            return fields
        }

        mutating func field(depth: Int) throws -> Field {
            guard offset < bytes.count, depth <= ColumnLayout.maximumDepth else { throw ColumnLayout.malformed }
            let symbol = bytes[offset]
            offset += 1
            switch symbol {
            case UInt8(ascii: "u"): return .unsigned(next())
            case UInt8(ascii: "s"): return .signed(next())
            case UInt8(ascii: "d"): return .date(next())
            case UInt8(ascii: "n"): return .increasing(next())
            case UInt8(ascii: "b"): return .byte(next())
            case UInt8(ascii: "i"): return .id(next())
            case UInt8(ascii: "t"):
                let codes = next()
                return .text(codes: codes, entries: next())
            case UInt8(ascii: "?"):
                let presence = next()
                return .optional(presence: presence, try field(depth: depth + 1))
            case UInt8(ascii: "("):
                let inner = try sequence(depth: depth + 1)
                try expect(")")
                return .sequence(inner)
            case UInt8(ascii: "["):
                let count = next()
                let inner = try sequence(depth: depth + 1)
                // Every item must take at least one byte of some stream, so a block's items are
                // never more than its bytes: `[()]` would let a count loop over nothing.
                guard inner.contains(where: \.takesAByte) else { throw ColumnLayout.malformed }
                try expect("]")
                return .list(count: count, inner)
            case UInt8(ascii: "<"):
                let tag = next()
                var alternatives = [try sequence(depth: depth + 1)]
                while offset < bytes.count, bytes[offset] == UInt8(ascii: "|") {
                    offset += 1
                    alternatives.append(try sequence(depth: depth + 1))
                }
                try expect(">")
                return .union(tag: tag, alternatives)
            default: throw ColumnLayout.malformed
            }
        }

        mutating func expect(_ symbol: Unicode.Scalar) throws {
            guard offset < bytes.count, bytes[offset] == UInt8(ascii: symbol) else { throw ColumnLayout.malformed }
            offset += 1
        }
    }
}

/// Reads a payload's fields in place: the canonical encodings only (minimal varints, presence
/// bytes 0 or 1), so that writing the values back gives the same bytes.
struct FieldCursor {
    let bytes: UnsafeRawBufferPointer
    var offset = 0

    var isAtEnd: Bool { offset == bytes.count }

    mutating func byte() -> UInt8? {
        guard offset < bytes.count else { return nil }
        defer { offset += 1 }
        return bytes[offset]
    }

    /// Most values are below 128: one byte, read here; longer ones in `longVarint`.
    @inline(__always) mutating func varint() -> UInt64? {
        if offset < bytes.count {
            let first = bytes[offset]
            if first < 0x80 {
                offset += 1
                return UInt64(first)
            }
        }
        return longVarint()
    }

    private mutating func longVarint() -> UInt64? {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while offset < bytes.count {
            let next = bytes[offset]
            offset += 1
            guard shift < 64, shift < 63 || next <= 1 else { return nil }
            result |= UInt64(next & 0x7f) << shift
            if next & 0x80 == 0 {
                // Minimal: no trailing zero group (except the value 0 itself).
                return next == 0 && shift > 0 ? nil : result
            }
            shift += 7
        }
        return nil
    }

    mutating func take(_ count: UInt64) -> UnsafeRawBufferPointer? {
        guard count <= UInt64(bytes.count - offset) else { return nil }
        defer { offset += Int(count) }
        return UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + Int(count)])
    }
}

extension Array where Element == UInt8 {
    mutating func appendVarint(_ value: UInt64) {
        var value = value
        while value >= 0x80 {
            append(UInt8(value & 0x7f) | 0x80)
            value >>= 7
        }
        append(UInt8(value))
    }
}

@inline(__always) func zigzag(_ value: Int64) -> UInt64 { UInt64(bitPattern: (value << 1) ^ (value >> 63)) }
@inline(__always) func unzigzag(_ raw: UInt64) -> Int64 { Int64(bitPattern: (raw >> 1) ^ (0 &- (raw & 1))) }

extension ColumnLayout {
    /// Whether a whole payload (kind and version first) is stored in this layout's columns.
    package func fits(_ payload: UnsafeRawBufferPointer) -> Bool {
        payload.count >= 2 && orderingKey(of: UnsafeRawBufferPointer(rebasing: payload[2...])) != nil
    }

    /// The values of the ordering fields, or nil when the payload (after its kind and version)
    /// does not follow this layout exactly: such a record is stored whole.
    func orderingKey(of fields: UnsafeRawBufferPointer) -> (Int64, Int64)? {
        var cursor = FieldCursor(bytes: fields)
        var key: (Int64, Int64) = (0, 0)
        let complete = nodes.withUnsafeBufferPointer { nodes in
            for index in top {
                let start = cursor.offset
                guard Self.skim(index..<index + 1, nodes, &cursor) else { return false }
                guard index == orderingNodes.0 || index == orderingNodes.1 else { continue }
                // The field just skimmed is one varint: read it again for its value.
                var again = FieldCursor(bytes: cursor.bytes, offset: start)
                let raw = again.varint()!
                let value = nodes[index].symbol == .date ? unzigzag(raw) : Int64(bitPattern: raw)
                if index == orderingNodes.0 { key.0 = value } else { key.1 = value }
            }
            return true
        }
        return complete && cursor.isAtEnd ? key : nil
    }

    /// Walks a payload's fields: whether they follow the layout.
    private static func skim(_ range: Range<Int>, _ nodes: UnsafeBufferPointer<Node>, _ cursor: inout FieldCursor)
        -> Bool
    {
        for index in range {
            let node = nodes[index]
            switch node.symbol {
            case .unsigned, .signed, .date, .increasing:
                guard cursor.varint() != nil else { return false }
            case .byte: guard cursor.byte() != nil else { return false }
            case .text:
                guard let length = cursor.varint(), cursor.take(length) != nil else { return false }
            case .id: guard cursor.take(16) != nil else { return false }
            case .rest: cursor.offset = cursor.bytes.count
            case .optional:
                switch cursor.byte() {
                case 0: continue
                case 1: guard skim(node.children, nodes, &cursor) else { return false }
                default: return false
                }
            case .list:
                guard let count = cursor.varint(), count <= UInt64(cursor.bytes.count - cursor.offset) else {
                    return false
                }
                for _ in 0..<count { guard skim(node.children, nodes, &cursor) else { return false } }
            case .sequence:
                guard skim(node.children, nodes, &cursor) else { return false }
            case .union:
                guard let tag = cursor.byte(), Int(tag) < node.children.count,
                    skim(nodes[node.children.lowerBound + Int(tag)].children, nodes, &cursor)
                else { return false }
            }
        }
        return true
    }
}

/// One block's columns as they are filled (Specs/backup-format.md, "Blocks").
struct ColumnBlockEncoder {
    let kind: UInt8
    let version: UInt8
    let layout: ColumnLayout
    private(set) var count = 0
    private var streams: [[UInt8]]
    /// The last date, increasing number or id position of each stream: all are stored as differences.
    private var previous: [Int64]
    private var dictionaries: [TextDictionary]
    private(set) var size = 0
    /// Bytes of each stream handed over by `takeChunks`, and of those, how many its array no
    /// longer holds (all of them, but for the entries streams the dictionaries read back).
    private var handedOver: [Int]
    private var dropped: [Int]
    private let readBack: [Bool]

    /// Where one record's values go: the block's state, borrowed for the record, so the walk
    /// over the layout touches plain memory.
    fileprivate struct Sink {
        let streams: UnsafeMutableBufferPointer<[UInt8]>
        let previous: UnsafeMutableBufferPointer<Int64>
        let dictionaries: UnsafeMutableBufferPointer<TextDictionary>
        let nodes: UnsafeBufferPointer<ColumnLayout.Node>
        var size = 0
    }

    init(kind: UInt8, version: UInt8, layout: ColumnLayout) {
        self.kind = kind
        self.version = version
        self.layout = layout
        streams = Array(repeating: [], count: layout.streamCount)
        previous = Array(repeating: 0, count: layout.streamCount)
        dictionaries = Array(repeating: TextDictionary(), count: layout.streamCount)
        handedOver = Array(repeating: 0, count: layout.streamCount)
        dropped = Array(repeating: 0, count: layout.streamCount)
        var readBack = Array(repeating: false, count: layout.streamCount)
        for node in layout.nodes where node.symbol == .text { readBack[node.entries] = true }
        self.readBack = readBack
    }

    /// Adds one record's fields (a payload that `orderingKey` accepted); `positions` gives an
    /// id's place in the archive's id table.
    mutating func add(_ fields: UnsafeRawBufferPointer, positions: ColumnExport.TablePositions) throws {
        _ = try add(1, recordLimit: .max, byteLimit: .max, positions: positions) { _ in fields }
    }

    /// Adds up to `available` records, `fields(n)` giving the nth one's fields, while the block
    /// has room: it stops before a record whose payload (its kind and version too) would take
    /// it to `byteLimit` (unless it is empty) and after one that reaches `recordLimit` or
    /// `byteLimit`. How many it added. The block's memory is borrowed once for them all, not
    /// per record (a million records paid a tenth of a second in reference counts).
    mutating func add(
        _ available: Int, recordLimit: Int, byteLimit: Int, positions: ColumnExport.TablePositions,
        fields: (Int) -> UnsafeRawBufferPointer
    ) throws -> Int {
        let (top, header) = (layout.top, kind == 0 ? 0 : 2)
        var (count, size) = (self.count, self.size)
        defer { (self.count, self.size) = (count, size) }
        return try streams.withUnsafeMutableBufferPointer { streams in
            try previous.withUnsafeMutableBufferPointer { previous in
                try dictionaries.withUnsafeMutableBufferPointer { dictionaries in
                    try layout.nodes.withUnsafeBufferPointer { nodes in
                        for number in 0..<available {
                            var cursor = FieldCursor(bytes: fields(number))
                            if count > 0, size + header + cursor.bytes.count >= byteLimit { return number }
                            var sink = Sink(
                                streams: streams, previous: previous, dictionaries: dictionaries, nodes: nodes)
                            try sink.emit(top, &cursor, positions: positions)
                            guard cursor.isAtEnd else { throw ColumnBlockEncoder.inconsistent }
                            size += sink.size
                            count += 1
                            if count == recordLimit || size >= byteLimit { return number + 1 }
                        }
                        return available
                    }
                }
            }
        }
    }

    static let inconsistent = BackupError(.writeFailed, "A record changed its shape while the archive was written.")

    /// `kind ‖ version ‖ layout length u8 ‖ layout ‖ uvarint record count ‖ uvarint stream count
    /// ‖ uvarint length × streams`: what comes before the streams.
    func header() -> [UInt8] {
        var out: [UInt8] = [kind, version, UInt8(layout.text.utf8.count)]
        out += Array(layout.text.utf8)
        out.appendVarint(UInt64(count))
        out.appendVarint(UInt64(streams.count))
        for number in streams.indices { out.appendVarint(UInt64(dropped[number] + streams[number].count)) }
        return out
    }

    /// The block's length in the export: its header and every stream.
    var length: Int { streams.indices.reduce(header().count) { $0 + dropped[$1] + streams[$1].count } }

    /// The bytes of each stream not handed over yet once there are `least` of them, so that a
    /// large block's columns are compressed while it is still being made. A stream's array is
    /// handed over whole and started afresh, but for the entries streams, which the dictionaries
    /// read back: those are copied.
    mutating func takeChunks(least: Int) -> [(stream: Int, bytes: [UInt8])] {
        var chunks: [(stream: Int, bytes: [UInt8])] = []
        for number in streams.indices where dropped[number] + streams[number].count - handedOver[number] >= least {
            let bytes: [UInt8]
            if readBack[number] {
                bytes = Array(streams[number][(handedOver[number] - dropped[number])...])
            } else {
                bytes = streams[number]
                streams[number] = []
                streams[number].reserveCapacity(least + least / 8)
                dropped[number] += bytes.count
            }
            handedOver[number] += bytes.count
            chunks.append((number, bytes))
        }
        return chunks
    }

    /// Each stream's bytes not handed over by `takeChunks`, in order, after `header()` and the
    /// chunks: handed over where they are.
    func forEachStream(_ body: (Int, UnsafeRawBufferPointer) throws -> Void) rethrows {
        for (number, stream) in streams.enumerated() {
            try stream.withUnsafeBytes {
                try body(number, UnsafeRawBufferPointer(rebasing: $0[(handedOver[number] - dropped[number])...]))
            }
        }
    }
}

extension ColumnBlockEncoder.Sink {
    mutating func emit(
        _ range: Range<Int>, _ cursor: inout FieldCursor, positions: ColumnExport.TablePositions
    ) throws {
        for position in range {
            let node = nodes[position]
            let stream = node.stream
            switch node.symbol {
            case .unsigned, .signed:
                guard let value = cursor.varint() else { throw ColumnBlockEncoder.inconsistent }
                append(varint: value, to: stream)
            case .date:
                guard let raw = cursor.varint() else { throw ColumnBlockEncoder.inconsistent }
                let value = unzigzag(raw)
                append(varint: zigzag(value &- previous[stream]), to: stream)
                previous[stream] = value
            case .increasing:
                guard let raw = cursor.varint() else { throw ColumnBlockEncoder.inconsistent }
                let value = Int64(bitPattern: raw)
                append(varint: zigzag(value &- previous[stream]), to: stream)
                previous[stream] = value
            case .byte:
                guard let value = cursor.byte() else { throw ColumnBlockEncoder.inconsistent }
                streams[stream].append(value)
                size += 1
            case .text:
                guard let length = cursor.varint(), let text = cursor.take(length) else {
                    throw ColumnBlockEncoder.inconsistent
                }
                let code = streams[node.entries].withUnsafeBytes { dictionaries[stream].code(of: text, in: $0) }
                append(varint: code.value, to: stream)
                if code.isNew {
                    append(varint: length, to: node.entries)
                    dictionaries[stream].added(at: streams[node.entries].count, length: text.count)
                    streams[node.entries] += text
                    size += text.count
                }
            case .id:
                guard let id = cursor.take(16) else { throw ColumnBlockEncoder.inconsistent }
                let position = Int64(bitPattern: positions.index(of: id))
                append(varint: zigzag(position &- previous[stream]), to: stream)
                previous[stream] = position
            case .rest:
                let rest = UnsafeRawBufferPointer(rebasing: cursor.bytes[cursor.offset...])
                cursor.offset = cursor.bytes.count
                append(varint: UInt64(rest.count), to: stream)
                streams[stream] += rest
                size += rest.count
            case .optional:
                guard let flag = cursor.byte(), flag <= 1 else { throw ColumnBlockEncoder.inconsistent }
                streams[stream].append(flag)
                size += 1
                if flag == 1 { try emit(node.children, &cursor, positions: positions) }
            case .list:
                guard let items = cursor.varint() else { throw ColumnBlockEncoder.inconsistent }
                append(varint: items, to: stream)
                for _ in 0..<items { try emit(node.children, &cursor, positions: positions) }
            case .sequence:
                try emit(node.children, &cursor, positions: positions)
            case .union:
                guard let tag = cursor.byte(), Int(tag) < node.children.count else {
                    throw ColumnBlockEncoder.inconsistent
                }
                streams[stream].append(tag)
                size += 1
                try emit(nodes[node.children.lowerBound + Int(tag)].children, &cursor, positions: positions)
            }
        }
    }

    private mutating func append(varint value: UInt64, to stream: Int) {
        let before = streams[stream].count
        streams[stream].appendVarint(value)
        size += streams[stream].count - before
    }
}

/// One text stream's dictionary while a block is written: each text's code, found by hashing its
/// bytes, the texts themselves being where the block keeps them anyway (its entries stream), so a
/// text met again costs a hash and a comparison, and a new one no allocation of its own.
struct TextDictionary {
    /// Where each code's text starts in the entries stream, its length and its hash.
    private var starts: [Int] = []
    private var lengths: [Int] = []
    private var hashes: [UInt64] = []
    /// Open addressing, a power of two long, at most half full: code + 1, or 0 when free.
    private var slots = [Int32](repeating: 0, count: 64)
    private var pending = (slot: 0, hash: UInt64(0))

    /// The text's code, and whether it is new (then `added(at:length:)` must follow: the caller
    /// appends it to the entries stream).
    mutating func code(of text: UnsafeRawBufferPointer, in entries: UnsafeRawBufferPointer) -> (
        value: UInt64, isNew: Bool
    ) {
        let mask = slots.count - 1
        let hash = Self.hash(text)
        var slot = Int(truncatingIfNeeded: hash) & mask
        while slots[slot] != 0 {
            let code = Int(slots[slot]) - 1
            if hashes[code] == hash, lengths[code] == text.count,
                text.count == 0 || memcmp(entries.baseAddress! + starts[code], text.baseAddress!, text.count) == 0
            {
                return (UInt64(code), false)
            }
            slot = (slot + 1) & mask
        }
        pending = (slot, hash)
        return (UInt64(starts.count), true)
    }

    /// Records the new text `code(of:in:)` just gave a code, at `start` of the entries stream.
    mutating func added(at start: Int, length: Int) {
        starts.append(start)
        lengths.append(length)
        hashes.append(pending.hash)
        slots[pending.slot] = Int32(starts.count)
        guard starts.count * 2 > slots.count else { return }
        slots = [Int32](repeating: 0, count: slots.count * 2)
        let mask = slots.count - 1
        for (code, hash) in hashes.enumerated() {
            var slot = Int(truncatingIfNeeded: hash) & mask
            while slots[slot] != 0 { slot = (slot + 1) & mask }
            slots[slot] = Int32(code + 1)
        }
    }

    /// FNV-1a over the bytes, folded: texts are short, and what matters is that equal ones meet.
    private static func hash(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return hash ^ (hash >> 29)
    }
}

/// Rebuilds the payloads of one block, checking every stream is used exactly to its end.
struct ColumnBlockDecoder {
    static let maximumRecords = 1 << 20
    /// The largest payload a block rebuilds (a change-log entry naming ten million records is
    /// 170 MB), and the most one block rebuilds in all.
    static let maximumPayload = 256 << 20
    static let maximumRebuilt = 4 << 30

    /// How a large block is shared between two threads (`Helper`): from `records` records on,
    /// another thread rebuilds the last three eighths of them beside this one, holding at most
    /// `heldBytes` of them (past it, this thread goes on from where the other stopped).
    struct Sharing {
        let records: Int
        let heldBytes: Int

        init(records: Int, heldBytes: Int) {
            precondition(records >= 1 && heldBytes >= 0)
            (self.records, self.heldBytes) = (records, heldBytes)
        }

        /// One block of a group can be a million transactions: a quarter of a second of one
        /// core, while the other has little but the digest to do.
        static let automatic: Sharing? =
            ProcessInfo.processInfo.activeProcessorCount > 1 ? Sharing(records: 1 << 16, heldBytes: 64 << 20) : nil
    }

    /// Calls `visit` with each record's position in the block, the block's kind, and `framing`
    /// bytes the caller may write followed by the record's payload (valid only during the call),
    /// in the block's order; `ids` is the id table, 16 bytes an entry. `observeSharing` hears how
    /// many records the other thread handed over, when it had a part (for tests).
    static func decode(
        _ block: UnsafeRawBufferPointer, ids: UnsafeRawBufferPointer, framing: Int = 0,
        sharing: Sharing? = Sharing.automatic, observeSharing: ((_ held: Int) -> Void)? = nil,
        visit: (Int, UInt8, UnsafeMutableRawBufferPointer) throws -> Void
    ) throws -> Int {
        // Dictionary entries are kept as 32-bit places in their stream.
        guard block.count <= Int(UInt32.max) else { throw damaged }
        var cursor = FieldCursor(bytes: block)
        guard let kind = cursor.byte(), let version = cursor.byte(), let length = cursor.byte(),
            let text = cursor.take(UInt64(length)), let layoutText = String(validating: text, as: UTF8.self)
        else { throw damaged }
        let layout = try ColumnLayout(layoutText)
        // Kind 0 blocks hold whole payloads, header included; others rebuild it.
        guard kind == 0 ? (version == 0 && layout.text == "*") : true else { throw damaged }
        guard let count = cursor.varint(), count <= UInt64(maximumRecords), let streamCount = cursor.varint(),
            streamCount == UInt64(layout.streamCount)
        else { throw damaged }
        var lengths: [UInt64] = []
        for _ in 0..<streamCount {
            guard let length = cursor.varint() else { throw damaged }
            lengths.append(length)
        }
        var streams: [FieldCursor] = []
        for length in lengths {
            guard let stream = cursor.take(length) else { throw damaged }
            streams.append(FieldCursor(bytes: stream))
        }
        guard cursor.isAtEnd else { throw damaged }
        let block = Block(
            layout: layout, kind: kind, version: version, records: Int(count), streams: streams, ids: ids,
            bytes: block.count)
        let shared = sharing.flatMap { $0.records <= block.records ? block.records - block.records * 3 / 8 : nil }
        let helper = shared.map { Helper(block, from: $0, framing: framing, heldBytes: sharing!.heldBytes) }
        defer { helper?.stop() }
        let own = Columns(block)
        defer { withExtendedLifetime(own) {} }
        var state = own.state
        // What a block rebuilds is bounded too: texts repeat from a dictionary and ids take 16
        // bytes for one, so a small block could otherwise ask for gigabytes.
        var rebuilt = 0
        var payload = PayloadBuffer(framing: framing)
        defer { payload.release() }
        try layout.nodes.withUnsafeBufferPointer { nodes in
            try rebuild(block, 0..<(shared ?? block.records), nodes, &state, &payload, &rebuilt, visit)
            guard let helper else { return }
            let failure = helper.finish()
            // Where the other thread skipped to must be exactly where this one arrived.
            guard let start = helper.start else { throw failure ?? damaged }
            guard start.matches(state) else { throw damaged }
            // The records it rebuilt before it failed come first, as they would from one thread.
            for (offset, framed) in helper.held.enumerated() {
                rebuilt += framed.count - framing
                guard rebuilt <= maximumRebuilt else { throw tooLarge }
                try visit(helper.first + offset, kind, framed)
            }
            if let failure { throw failure }
            observeSharing?(helper.held.count)
            state = helper.columns.state
            try rebuild(block, helper.end..<block.records, nodes, &state, &payload, &rebuilt, visit)
        }
        guard state.streams.allSatisfy({ $0.isAtEnd }) else { throw damaged }
        return block.records
    }

    private static func rebuild(
        _ block: Block, _ records: Range<Int>, _ nodes: UnsafeBufferPointer<ColumnLayout.Node>, _ state: inout State,
        _ payload: inout PayloadBuffer, _ rebuilt: inout Int,
        _ visit: (Int, UInt8, UnsafeMutableRawBufferPointer) throws -> Void
    ) throws {
        for position in records {
            payload.count = 0
            try state.record(of: block, nodes, into: &payload)
            rebuilt += payload.count
            guard rebuilt <= maximumRebuilt else { throw tooLarge }
            try visit(position, block.kind, payload.framed)
        }
    }

    /// A block's header, read.
    fileprivate struct Block {
        let layout: ColumnLayout
        let kind: UInt8
        let version: UInt8
        let records: Int
        let streams: [FieldCursor]
        let ids: UnsafeRawBufferPointer
        let bytes: Int
    }

    /// One thread's reading of a block's streams: where it is in each, the last value of each
    /// delta-coded one, and each text column's dictionary so far.
    private final class Columns {
        let streams: UnsafeMutableBufferPointer<FieldCursor>
        let previous: UnsafeMutableBufferPointer<Int64>
        let dictionaries: UnsafeMutableBufferPointer<TextDictionary>
        let state: State

        init(_ block: Block) {
            streams = .allocate(capacity: block.streams.count)
            _ = streams.initialize(from: block.streams)
            previous = .allocate(capacity: block.streams.count)
            previous.initialize(repeating: 0)
            dictionaries = .allocate(capacity: block.streams.count)
            dictionaries.initialize(repeating: TextDictionary())
            state = State(
                streams: streams, ids: block.ids, idCount: Int64(block.ids.count / 16), previous: previous,
                dictionaries: dictionaries, blockBytes: block.bytes)
        }

        deinit {
            streams.deallocate()
            previous.deallocate()
            for dictionary in dictionaries { dictionary.release() }
            dictionaries.deallocate()
        }
    }

    /// Where a thread was in every stream, for the comparison of two.
    private struct Position {
        let offsets: [Int]
        let previous: [Int64]
        let dictionaryCounts: [Int]

        init(_ state: State) {
            offsets = state.streams.map(\.offset)
            previous = Array(state.previous)
            dictionaryCounts = state.dictionaries.map(\.count)
        }

        func matches(_ state: State) -> Bool {
            offsets.elementsEqual(state.streams.lazy.map(\.offset)) && previous.elementsEqual(state.previous)
                && dictionaryCounts.elementsEqual(state.dictionaries.lazy.map(\.count))
        }
    }

    /// The other thread of a shared block: it reads the streams of the records before `first`
    /// without rebuilding them (`State.skip`), then rebuilds from `first` into memory of its own,
    /// framed as the caller asked, until the block's end or `heldBytes`; the caller visits what
    /// it holds in order and goes on from `end` with its `columns`. On a global queue: it never
    /// waits for anything.
    private final class Helper: @unchecked Sendable {
        let first: Int
        let columns: Columns
        private(set) var end: Int
        private(set) var start: Position?
        private(set) var held: [UnsafeMutableRawBufferPointer] = []
        private var arena: PayloadBuffer
        private var failure: Error?
        private let stopping = NSLock()
        private var stopRequested = false
        private var joined = false
        private let done = DispatchSemaphore(value: 0)

        init(_ block: Block, from first: Int, framing: Int, heldBytes: Int) {
            (self.first, end) = (first, first)
            columns = Columns(block)
            // Reserved, not touched: no copy as it fills (the record that passes the limit has
            // a mebibyte more).
            arena = PayloadBuffer(framing: 0, capacity: heldBytes + (1 << 20))
            nonisolated(unsafe) let block = block
            DispatchQueue.global().async {
                self.run(block, framing: framing, heldBytes: heldBytes)
                self.done.signal()
            }
        }

        deinit { arena.release() }

        private var stopped: Bool { stopping.withLock { stopRequested } }

        private func run(_ block: Block, framing: Int, heldBytes: Int) {
            var state = columns.state
            var ends: [Int] = []
            do {
                try block.layout.nodes.withUnsafeBufferPointer { nodes in
                    try state.skip(block.layout.top, times: first, nodes)
                    start = Position(state)
                    ends.reserveCapacity(block.records - first)
                    for position in first..<block.records {
                        guard arena.count < heldBytes, position & 1023 != 0 || !stopped else { break }
                        arena.reserve(framing)
                        arena.count += framing
                        arena.recordStart = arena.count
                        try state.record(of: block, nodes, into: &arena)
                        ends.append(arena.count)
                        end = position + 1
                    }
                }
            } catch { failure = error }
            // The arena stops moving only now: the records' places are taken once it is final.
            var recordStart = 0
            held = ends.map { recordEnd in
                defer { recordStart = recordEnd }
                return UnsafeMutableRawBufferPointer(start: arena.start + recordStart, count: recordEnd - recordStart)
            }
        }

        /// Waits for the thread; its failure, if it had one (after the records it holds).
        func finish() -> Error? {
            done.wait()
            joined = true
            return failure
        }

        /// Stops the thread if it is still going and waits for it. Any number of times.
        func stop() {
            guard !joined else { return }
            stopping.withLock { stopRequested = true }
            done.wait()
            joined = true
        }
    }

    /// The payload being rebuilt: plain memory, grown by doubling and reused for every record,
    /// `framing` bytes kept free in front of it for the caller.
    fileprivate struct PayloadBuffer {
        let framing: Int
        var start: UnsafeMutableRawPointer
        var capacity: Int
        /// The payload's length (the framing not included).
        var count = 0
        /// Where the record being rebuilt starts: 0, but for the helper's, which holds many.
        var recordStart = 0

        init(framing: Int, capacity: Int = 256) {
            (self.framing, self.capacity) = (framing, framing + capacity)
            start = .allocate(byteCount: self.capacity, alignment: 1)
        }

        /// The framing, then the payload.
        var framed: UnsafeMutableRawBufferPointer {
            UnsafeMutableRawBufferPointer(start: start, count: framing + count)
        }

        func release() { start.deallocate() }

        @inline(__always) mutating func reserve(_ more: Int) {
            guard framing + count + more > capacity else { return }
            let larger = max(capacity * 2, framing + count + more)
            let moved = UnsafeMutableRawPointer.allocate(byteCount: larger, alignment: 1)
            moved.copyMemory(from: start, byteCount: framing + count)
            start.deallocate()
            (start, capacity) = (moved, larger)
        }

        @inline(__always) mutating func append(_ byte: UInt8) {
            reserve(1)
            start.storeBytes(of: byte, toByteOffset: framing + count, as: UInt8.self)
            count += 1
        }

        @inline(__always) mutating func append(bytes: UnsafeRawBufferPointer) {
            reserve(bytes.count)
            if let source = bytes.baseAddress {
                (start + framing + count).copyMemory(from: source, byteCount: bytes.count)
            }
            count += bytes.count
        }

        /// An id: 16 bytes, copied without a call.
        @inline(__always) mutating func appendID(_ source: UnsafeRawPointer) {
            reserve(16)
            let target = start + framing + count
            target.storeBytes(of: source.loadUnaligned(as: UInt64.self), as: UInt64.self)
            target.storeBytes(
                of: source.loadUnaligned(fromByteOffset: 8, as: UInt64.self), toByteOffset: 8, as: UInt64.self)
            count += 16
        }

        @inline(__always) mutating func appendVarint(_ value: UInt64) {
            reserve(10)
            var value = value
            while value >= 0x80 {
                start.storeBytes(of: UInt8(value & 0x7f) | 0x80, toByteOffset: framing + count, as: UInt8.self)
                count += 1
                value >>= 7
            }
            start.storeBytes(of: UInt8(value), toByteOffset: framing + count, as: UInt8.self)
            count += 1
        }
    }

    static let damaged = BackupError(.damaged, "An archive block's columns are malformed.")
    static let tooLarge = BackupError(.damaged, "An archive block rebuilds more than Coffer accepts.")

    /// One text column's dictionary: each entry's place in the entries stream, its length
    /// prefix included, packed as offset << 32 | length (those bytes are what a payload holds).
    /// Plain memory, grown by doubling: a group's dictionary can hold a million entries, looked
    /// up at random, and half the size is fewer cache misses.
    fileprivate struct TextDictionary {
        var entries: UnsafeMutablePointer<UInt64>?
        var count = 0
        var capacity = 0

        mutating func append(offset: Int, length: Int) {
            if count == capacity {
                capacity = max(1024, capacity * 2)
                let larger = UnsafeMutablePointer<UInt64>.allocate(capacity: capacity)
                if let entries {
                    larger.moveInitialize(from: entries, count: count)
                    entries.deallocate()
                }
                entries = larger
            }
            entries![count] = UInt64(offset) << 32 | UInt64(length)
            count += 1
        }

        func release() { entries?.deallocate() }
    }

    fileprivate struct State {
        let streams: UnsafeMutableBufferPointer<FieldCursor>
        let ids: UnsafeRawBufferPointer
        let idCount: Int64
        let previous: UnsafeMutableBufferPointer<Int64>
        let dictionaries: UnsafeMutableBufferPointer<TextDictionary>
        let blockBytes: Int

        mutating func varint(_ stream: Int) throws -> UInt64 {
            guard let value = streams[stream].varint() else { throw damaged }
            return value
        }

        mutating func byte(_ stream: Int) throws -> UInt8 {
            guard let value = streams[stream].byte() else { throw damaged }
            return value
        }

        /// A text field's code; a new one (the next code) enters the next text of the entries
        /// stream in the dictionary.
        @inline(__always) mutating func textCode(_ node: ColumnLayout.Node) throws -> Int {
            let code = try varint(node.stream)
            let known = dictionaries[node.stream].count
            if code == UInt64(known) {
                let start = streams[node.entries].offset
                guard let length = streams[node.entries].varint(), streams[node.entries].take(length) != nil
                else { throw damaged }
                dictionaries[node.stream].append(offset: start, length: streams[node.entries].offset - start)
            } else if code > UInt64(known) {
                throw damaged
            }
            return Int(code)
        }

        /// The next record's payload, after what `payload` holds from its `recordStart`: its
        /// kind and version (none for kind 0, whose blocks hold whole payloads), then its fields.
        mutating func record(
            of block: Block, _ nodes: UnsafeBufferPointer<ColumnLayout.Node>, into payload: inout PayloadBuffer
        ) throws {
            if block.kind != 0 {
                payload.append(block.kind)
                payload.append(block.version)
            }
            try rebuild(block.layout.top, nodes, into: &payload)
            guard payload.count - payload.recordStart <= ColumnBlockDecoder.maximumPayload else {
                throw ColumnBlockDecoder.tooLarge
            }
        }

        mutating func rebuild(
            _ range: Range<Int>, _ nodes: UnsafeBufferPointer<ColumnLayout.Node>, into payload: inout PayloadBuffer
        ) throws {
            for position in range {
                // Checked as it grows: one field past the limit at most, never gigabytes.
                guard payload.count - payload.recordStart <= ColumnBlockDecoder.maximumPayload else {
                    throw ColumnBlockDecoder.tooLarge
                }
                let node = nodes[position]
                let stream = node.stream
                switch node.symbol {
                case .unsigned, .signed:
                    payload.appendVarint(try varint(stream))
                case .date:
                    let value = previous[stream] &+ unzigzag(try varint(stream))
                    previous[stream] = value
                    payload.appendVarint(zigzag(value))
                case .increasing:
                    let value = previous[stream] &+ unzigzag(try varint(stream))
                    previous[stream] = value
                    payload.appendVarint(UInt64(bitPattern: value))
                case .byte:
                    payload.append(try byte(stream))
                case .text:
                    let code = try textCode(node)
                    let entry = dictionaries[stream].entries![code]
                    let entries = streams[node.entries].bytes.baseAddress!
                    payload.append(
                        bytes: UnsafeRawBufferPointer(
                            start: entries + Int(entry >> 32), count: Int(entry & 0xffff_ffff)))
                case .id:
                    let position = previous[stream] &+ unzigzag(try varint(stream))
                    previous[stream] = position
                    guard position >= 0, position < idCount else { throw damaged }
                    payload.appendID(ids.baseAddress! + Int(position) * 16)
                case .rest:
                    guard let length = streams[stream].varint(), let rest = streams[stream].take(length) else {
                        throw damaged
                    }
                    payload.append(bytes: rest)
                case .optional:
                    let flag = try byte(stream)
                    guard flag <= 1 else { throw damaged }
                    payload.append(flag)
                    if flag == 1 { try rebuild(node.children, nodes, into: &payload) }
                case .list:
                    let items = try varint(stream)
                    // Every item takes at least one byte of some stream (the layout parser
                    // insists): a count beyond the block's bytes cannot be real, and is refused
                    // before it is looped over.
                    guard items <= UInt64(blockBytes) else { throw damaged }
                    payload.appendVarint(items)
                    for _ in 0..<items { try rebuild(node.children, nodes, into: &payload) }
                case .sequence:
                    try rebuild(node.children, nodes, into: &payload)
                case .union:
                    let tag = try byte(stream)
                    guard Int(tag) < node.children.count else { throw damaged }
                    payload.append(tag)
                    try rebuild(nodes[node.children.lowerBound + Int(tag)].children, nodes, into: &payload)
                }
            }
        }

        /// Reads the fields of the next `times` records as `rebuild` would, with none of its
        /// output, column by column: each stream belongs to one field, so how many values it
        /// gives those records follows from the presence bytes, counts and tags above it, and it
        /// is read in one loop of its own. The streams end where `rebuild` would leave them, the
        /// deltas summed and new texts entered in the dictionaries. It fails only where `rebuild`
        /// would (a count of items past the block's bytes cannot be read to its end).
        mutating func skip(_ range: Range<Int>, times: Int, _ nodes: UnsafeBufferPointer<ColumnLayout.Node>) throws {
            for position in range {
                let node = nodes[position]
                let stream = node.stream
                switch node.symbol {
                case .unsigned, .signed:
                    for _ in 0..<times { _ = try varint(stream) }
                case .date, .increasing, .id:
                    var value = previous[stream]
                    for _ in 0..<times { value = value &+ unzigzag(try varint(stream)) }
                    previous[stream] = value
                case .byte:
                    guard streams[stream].take(UInt64(times)) != nil else { throw damaged }
                case .text:
                    for _ in 0..<times { _ = try textCode(node) }
                case .rest:
                    for _ in 0..<times {
                        guard let length = streams[stream].varint(), streams[stream].take(length) != nil else {
                            throw damaged
                        }
                    }
                case .optional:
                    var present = 0
                    for _ in 0..<times {
                        let flag = try byte(stream)
                        guard flag <= 1 else { throw damaged }
                        present += Int(flag)
                    }
                    try skip(node.children, times: present, nodes)
                case .list:
                    var items = 0
                    for _ in 0..<times {
                        let count = try varint(stream)
                        guard count <= UInt64(blockBytes - items) else { throw damaged }
                        items += Int(count)
                    }
                    try skip(node.children, times: items, nodes)
                case .sequence:
                    try skip(node.children, times: times, nodes)
                case .union:
                    var chosen = [Int](repeating: 0, count: node.children.count)
                    for _ in 0..<times {
                        let tag = Int(try byte(stream))
                        guard tag < chosen.count else { throw damaged }
                        chosen[tag] += 1
                    }
                    for (alternative, child) in node.children.enumerated() {
                        try skip(nodes[child].children, times: chosen[alternative], nodes)
                    }
                }
            }
        }
    }
}
