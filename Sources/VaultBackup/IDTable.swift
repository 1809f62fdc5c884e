import Foundation
import VaultStore

/// Format 3's id table (Specs/backup-format.md, "Body, format 3"): `coding u8 ‖ length u64 ‖
/// that many bytes`. Coding 0 holds the ids as they are, since random ids do not compress.
/// Coding 1 holds `content length u64 ‖ one xz stream` of that content: each id as two uvarints,
/// the zig-zag differences of its two big-endian words from the previous id's. Ids one process
/// issued in order (`RecordIDs`) differ from the one before by a count, so a million take a
/// few hundred kilobytes instead of 16 MB.
enum IDTable {
    static let asIs: UInt8 = 0
    static let differences: UInt8 = 1
    /// Two uvarints of at most 10 bytes each.
    static let maximumCodedBytesPerID: UInt64 = 20

    /// The coded table of `table` (16 bytes per id): coding 1 when its content is under three
    /// quarters of the ids' own bytes, which only ids with shared, ordered parts give.
    static func encode(_ table: [UInt8]) throws -> [UInt8] {
        var length = 0
        forEachDifference(table) { high, low in length += varintLength(high) + varintLength(low) }
        var out: [UInt8]
        guard length < table.count / 4 * 3 else {
            out = [asIs]
            withUnsafeBytes(of: UInt64(table.count).littleEndian) { out += $0 }
            return out + table
        }
        var content: [UInt8] = []
        content.reserveCapacity(length)
        forEachDifference(table) { high, low in
            content.appendVarint(high)
            content.appendVarint(low)
        }
        // One thread: the content is small, and mostly repeats.
        let encoder = try XZ.Encoder(preset: 1, threads: 1, blockSize: 0)
        try content.withUnsafeBytes { try encoder.compress($0) }
        try encoder.finish()
        out = [differences]
        withUnsafeBytes(of: (UInt64(8 + encoder.output.count).littleEndian, UInt64(content.count).littleEndian)) {
            out += $0
        }
        return out + encoder.output
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

    private static func varintLength(_ value: UInt64) -> Int {
        (UInt64.bitWidth - (value | 1).leadingZeroBitCount + 6) / 7
    }

    /// Reads the table at `offset` of `body` and calls `use` with its `count` ids (16 bytes
    /// each) and the body after it. A coded table is checked against the body before anything
    /// is allocated (its ids may take at most 64 times the body plus 256 MiB, as a decompressed
    /// format 1 export may), then decoded straight into the table as liblzma hands its output
    /// over: nothing but the table is held.
    static func decode<Result>(
        _ body: UnsafeRawBufferPointer, from offset: Int, count: UInt64,
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
        switch coding {
        case asIs:
            guard !overflow, UInt64(stored.count) == idBytes else { throw ColumnExport.truncated }
            return try use(stored, rest)
        case differences:
            guard !overflow, idBytes <= (256 << 20) + 64 * UInt64(body.count), stored.count >= 8 else {
                throw BackupError(.damaged, "The archive's id table decodes to more ids than its size allows.")
            }
            let contentLength = UInt64(littleEndian: stored.loadUnaligned(as: UInt64.self))
            guard contentLength >= 2 * count, contentLength <= maximumCodedBytesPerID * count else {
                throw malformed
            }
            var table = [UInt8](repeating: 0, count: Int(idBytes))
            try table.withUnsafeMutableBytes { table in
                var words = DifferenceReader(table: table)
                do {
                    try XZ.decompress(
                        UnsafeRawBufferPointer(rebasing: stored[8...]), expectedLength: contentLength,
                        reportsProgress: false
                    ) { try words.feed($0) }
                } catch let error as BackupError where error.code == .damaged {
                    throw BackupError(.damaged, "The archive's id table is malformed: \(error.errorDescription ?? "")")
                }
                guard words.isComplete else { throw malformed }
            }
            return try table.withUnsafeBytes { try use($0, rest) }
        default:
            throw BackupError(.damaged, "The archive's id table uses a coding Coffer does not know (\(coding)).")
        }
    }

    static let malformed = BackupError(.damaged, "The archive's id table is malformed.")

    /// Rebuilds ids from their coded differences as the bytes arrive, a uvarint possibly split
    /// between two pieces: each pair of words goes into the next 16 bytes of `table`. Refuses
    /// what `FieldCursor.varint` refuses (a value past 64 bits, a trailing zero group) and any
    /// byte after the last id.
    private struct DifferenceReader {
        let table: UnsafeMutableRawBufferPointer
        var written = 0
        var previous: (high: UInt64, low: UInt64) = (0, 0)
        /// The high word's difference once read, while the low word's is being read.
        var high: UInt64?
        var value: UInt64 = 0
        var shift: UInt64 = 0

        var isComplete: Bool { written == table.count && high == nil && shift == 0 }

        mutating func feed(_ piece: UnsafeRawBufferPointer) throws {
            for byte in piece {
                guard written < table.count, shift < 64, shift < 63 || byte <= 1 else { throw IDTable.malformed }
                value |= UInt64(byte & 0x7f) << shift
                if byte & 0x80 != 0 {
                    shift += 7
                    continue
                }
                guard byte != 0 || shift == 0 else { throw IDTable.malformed }
                let difference = UInt64(bitPattern: unzigzag(value))
                (value, shift) = (0, 0)
                guard let highDifference = high else {
                    high = difference
                    continue
                }
                previous = (previous.high &+ highDifference, previous.low &+ difference)
                high = nil
                table.storeBytes(of: previous.high.bigEndian, toByteOffset: written, as: UInt64.self)
                table.storeBytes(of: previous.low.bigEndian, toByteOffset: written + 8, as: UInt64.self)
                written += 16
            }
        }
    }
}
