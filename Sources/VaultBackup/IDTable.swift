import Foundation
import VaultStore

/// The id table of formats 3 and 4 (Specs/backup-format.md, "Body, format 3" and "Body, format 4"):
/// `coding u8 ‖ length u64 ‖ that many bytes`. Coding 0 holds the ids as they are, since random
/// ids do not compress. Codings 1 and 2 hold `content length u64 ‖ one xz stream` of that
/// content, the ids coded as differences from the id before. Coding 1 (format 3): each id as two
/// uvarints, the zig-zag differences of its two big-endian words. Coding 2 (format 4): the same
/// differences in three columns, one after the other: the high word's first 48 bits (an ordered
/// id's millisecond), its last 16 (version and counter), then the low word; each column is
/// mostly one small value repeated, which xz takes at a fraction of the time and size of the
/// pairs mixed together.
enum IDTable {
    static let asIs: UInt8 = 0
    static let differences: UInt8 = 1
    static let columns: UInt8 = 2
    /// Coding 1: two uvarints of at most 10 bytes each.
    static let maximumCodedBytesPerID: UInt64 = 20
    /// Coding 2: a 49-bit, a 17-bit and a 64-bit zig-zag value: 7 + 3 + 10 bytes at most.
    static let maximumColumnBytesPerID: UInt64 = 20

    /// The table of `table` (16 bytes per id) in `coding` (1 or 2), or as it is (coding 0) when
    /// the coded content would not be under three quarters of the ids' own bytes, which only ids
    /// with shared, ordered parts give, or the coded table would not be smaller than the ids (a
    /// handful of them, where xz's own framing outweighs what coding saves).
    static func encode(_ table: [UInt8], coding: UInt8 = columns) throws -> [UInt8] {
        precondition(coding == differences || coding == columns)
        // Measured before anything is built: random ids would take more than the ids themselves.
        var length = 0
        forEachValue(table, coding: coding) { length += varintLength($0) }
        guard length < table.count / 4 * 3 else { return uncoded(table) }
        var content: [UInt8] = []
        content.reserveCapacity(length)
        forEachValue(table, coding: coding) { content.appendVarint($0) }
        // Compressed while the export's last blocks are (`ColumnExport.write`): columns on as many
        // threads as the export's, in blocks of 256 KiB once there are 1 MiB of them. The first
        // column of ids made over years (their milliseconds' differences) is near random: in
        // blocks of 1 MiB its first block alone took a thread 0.3 s at a million ids while the
        // other waited; in blocks of 256 KiB it takes a third less CPU, shared by both threads,
        // for the same size. A smaller table compresses in a few milliseconds, and one block
        // keeps it a tenth smaller (at 100k ids, 166 KB against 183 KB; BENCHMARKS.md).
        let encoder =
            coding == differences
            ? try XZ.Encoder(preset: 1, threads: 1, blockSize: 0)
            : try XZ.Encoder(
                preset: 0, threads: Archive.compressionThreads,
                blockSize: content.count >= 1 << 20 ? 256 << 10 : 1 << 20)
        try content.withUnsafeBytes { try encoder.compress($0) }
        try encoder.finish()
        guard 8 + encoder.output.count < table.count else { return uncoded(table) }
        var out = [coding]
        withUnsafeBytes(of: (UInt64(8 + encoder.output.count).littleEndian, UInt64(content.count).littleEndian)) {
            out += $0
        }
        return out + encoder.output
    }

    private static func uncoded(_ table: [UInt8]) -> [UInt8] {
        var out = [asIs]
        withUnsafeBytes(of: UInt64(table.count).littleEndian) { out += $0 }
        return out + table
    }

    /// Every value of the content of `coding`, in order.
    private static func forEachValue(_ table: [UInt8], coding: UInt8, _ body: (UInt64) -> Void) {
        if coding == differences {
            forEachDifference(table) { high, low in
                body(high)
                body(low)
            }
        } else {
            for column in 0..<3 { forEachDifference(table, column: column, body) }
        }
    }

    private static func varintLength(_ value: UInt64) -> Int {
        (UInt64.bitWidth - (value | 1).leadingZeroBitCount + 6) / 7
    }

    /// One column of coding 2: each id's part (0: the high word's first 48 bits, 1: its last 16,
    /// 2: the low word) as the zig-zag difference from the previous id's (the low word's modulo 2⁶⁴).
    private static func forEachDifference(_ table: [UInt8], column: Int, _ body: (UInt64) -> Void) {
        var previous: UInt64 = 0
        table.withUnsafeBytes { raw in
            for at in stride(from: 0, to: raw.count, by: 16) {
                let high = UInt64(bigEndian: raw.loadUnaligned(fromByteOffset: at, as: UInt64.self))
                let value =
                    switch column {
                    case 0: high >> 16
                    case 1: high & 0xFFFF
                    default: UInt64(bigEndian: raw.loadUnaligned(fromByteOffset: at + 8, as: UInt64.self))
                    }
                body(zigzag(Int64(bitPattern: value &- previous)))
                previous = value
            }
        }
    }

    /// Each id's two words as zig-zag differences from the previous id's (modulo 2⁶⁴).
    private static func forEachDifference(_ table: [UInt8], _ body: (UInt64, UInt64) -> Void) {
        var previous: (high: UInt64, low: UInt64) = (0, 0)
        table.withUnsafeBytes { raw in
            for at in stride(from: 0, to: raw.count, by: 16) {
                let high = UInt64(bigEndian: raw.loadUnaligned(fromByteOffset: at, as: UInt64.self))
                let low = UInt64(bigEndian: raw.loadUnaligned(fromByteOffset: at + 8, as: UInt64.self))
                body(
                    zigzag(Int64(bitPattern: high &- previous.high)), zigzag(Int64(bitPattern: low &- previous.low)))
                previous = (high, low)
            }
        }
    }

    /// Reads the table at `offset` of `body` and calls `use` with its `count` ids (16 bytes
    /// each) and the body after it. Format 3 knows codings 0 and 1, format 4 codings 0 and 2. A
    /// coded table is checked against the body before anything is allocated (its ids may take at
    /// most 64 times the body plus 256 MiB, as a decompressed format 1 export may), then decoded
    /// straight into the table as liblzma hands its output over: nothing but the table is held.
    static func decode<Result>(
        _ body: UnsafeRawBufferPointer, from offset: Int, count: UInt64, format: UInt16,
        memoryLimit: UInt64 = XZ.memoryLimit, raisedLimit: (() -> UInt64?)? = nil,
        _ use: (_ table: UnsafeRawBufferPointer, _ rest: UnsafeRawBufferPointer) throws -> Result
    ) throws -> Result {
        var cursor = FieldCursor(bytes: body)
        cursor.offset = offset
        guard let coding = cursor.byte(), let lengthBytes = cursor.take(8) else { throw ColumnExport.truncated }
        guard let stored = cursor.take(UInt64(littleEndian: lengthBytes.loadUnaligned(as: UInt64.self))) else {
            throw ColumnExport.truncated
        }
        let rest = UnsafeRawBufferPointer(rebasing: body[cursor.offset...])
        let (idBytes, overflow) = count.multipliedReportingOverflow(by: 16)
        guard coding == asIs || coding == (format >= 4 ? columns : differences) else {
            throw BackupError(.damaged, "The archive's id table uses a coding Coffer does not know (\(coding)).")
        }
        if coding == asIs {
            guard !overflow, UInt64(stored.count) == idBytes else { throw ColumnExport.truncated }
            return try use(stored, rest)
        }
        guard !overflow, idBytes <= (256 << 20) + 64 * UInt64(body.count), stored.count >= 8 else {
            throw BackupError(.damaged, "The archive's id table decodes to more ids than its size allows.")
        }
        let contentLength = UInt64(littleEndian: stored.loadUnaligned(as: UInt64.self))
        let (least, most) =
            coding == differences
            ? (2 * count, maximumCodedBytesPerID * count) : (3 * count, maximumColumnBytesPerID * count)
        guard contentLength >= least, contentLength <= most else { throw malformed }
        var table = [UInt8](repeating: 0, count: Int(idBytes))
        /// The content, decompressed straight into `sink`, which must then hold every id.
        func fill(_ sink: some ValueSink) throws {
            var reader = VarintReader(sink: sink)
            do {
                try XZ.decompress(
                    UnsafeRawBufferPointer(rebasing: stored[8...]), expectedLength: contentLength,
                    memoryLimit: memoryLimit, raisedLimit: raisedLimit, reportsProgress: false
                ) { try reader.feed($0) }
            } catch let error as BackupError
                where error.code == .damaged && error.errorDescription != malformed.errorDescription
            {
                throw BackupError(.damaged, "The archive's id table is malformed: \(error.errorDescription ?? "")")
            }
            guard reader.isComplete else { throw malformed }
        }
        try table.withUnsafeMutableBytes { table in
            try coding == differences ? fill(Pairs(table: table)) : fill(Columns(table: table))
        }
        return try table.withUnsafeBytes { try use($0, rest) }
    }

    static let malformed = BackupError(.damaged, "The archive's id table is malformed.")

    /// Where a coded table's values go, one at a time, in order.
    private protocol ValueSink {
        /// False once every id is whole: any further byte is refused.
        var wantsMore: Bool { get }
        mutating func take(_ zigzagged: UInt64) throws
    }

    /// Reads uvarints as the bytes arrive, one possibly split between two pieces, refusing what
    /// `FieldCursor.varint` refuses (a value past 64 bits, a trailing zero group) and any byte
    /// after the last id.
    private struct VarintReader<Sink: ValueSink> {
        var sink: Sink
        var value: UInt64 = 0
        var shift: UInt64 = 0

        var isComplete: Bool { !sink.wantsMore && shift == 0 }

        mutating func feed(_ piece: UnsafeRawBufferPointer) throws {
            for byte in piece {
                guard sink.wantsMore, shift < 64, shift < 63 || byte <= 1 else { throw IDTable.malformed }
                value |= UInt64(byte & 0x7f) << shift
                if byte & 0x80 != 0 {
                    shift += 7
                    continue
                }
                guard byte != 0 || shift == 0 else { throw IDTable.malformed }
                try sink.take(value)
                (value, shift) = (0, 0)
            }
        }
    }

    /// Coding 1: each pair of differences makes the next 16 bytes of `table`.
    private struct Pairs: ValueSink {
        let table: UnsafeMutableRawBufferPointer
        var written = 0
        var previous: (high: UInt64, low: UInt64) = (0, 0)
        /// The high word's difference once read, while the low word's is being read.
        var high: UInt64?

        var wantsMore: Bool { written < table.count }

        mutating func take(_ zigzagged: UInt64) throws {
            let difference = UInt64(bitPattern: unzigzag(zigzagged))
            guard let highDifference = high else {
                high = difference
                return
            }
            previous = (previous.high &+ highDifference, previous.low &+ difference)
            high = nil
            table.storeBytes(of: previous.high.bigEndian, toByteOffset: written, as: UInt64.self)
            table.storeBytes(of: previous.low.bigEndian, toByteOffset: written + 8, as: UInt64.self)
            written += 16
        }
    }

    /// Coding 2: the first column fills every id's high word's first 48 bits, the second adds
    /// its last 16, the third fills the low words. A running value that leaves its part's range
    /// (past 48 or 16 bits) is refused: no table Coffer writes has one.
    private struct Columns: ValueSink {
        let table: UnsafeMutableRawBufferPointer
        var column = 0
        var at = 0
        var previous: UInt64 = 0

        var wantsMore: Bool { column < 3 && !table.isEmpty }

        mutating func take(_ zigzagged: UInt64) throws {
            let value = previous &+ UInt64(bitPattern: unzigzag(zigzagged))
            switch column {
            case 0:
                guard value < 1 << 48 else { throw IDTable.malformed }
                table.storeBytes(of: (value << 16).bigEndian, toByteOffset: at, as: UInt64.self)
            case 1:
                guard value < 1 << 16 else { throw IDTable.malformed }
                let high = UInt64(bigEndian: table.loadUnaligned(fromByteOffset: at, as: UInt64.self))
                table.storeBytes(of: (high | value).bigEndian, toByteOffset: at, as: UInt64.self)
            default:
                table.storeBytes(of: value.bigEndian, toByteOffset: at + 8, as: UInt64.self)
            }
            previous = value
            at += 16
            if at == table.count { (column, at, previous) = (column + 1, 0, 0) }
        }
    }
}
