import CofferTestSupport
import Foundation
import Testing
import VaultStore

@testable import VaultBackup

/// The xz stream archive format 4's writer assembles block by block: whatever is compressed or
/// stored, on however many threads, the reader's liblzma gives back exactly the bytes handed in,
/// in order.
@Suite struct XZBlockWriterTests {
    static func randomBytes(_ count: Int, _ random: inout SeededGenerator) -> [UInt8] {
        (0..<count).map { _ in UInt8.random(in: 0...255, using: &random) }
    }

    static func text(_ count: Int) -> [UInt8] {
        let words = ["Tesco", "rent", "Pret A Manger", "salary", "TfL travel", "invoice", "Boots", "refund"]
        var out: [UInt8] = []
        var number = 0
        while out.count < count {
            out += Array("\(words[number % words.count]) \(number % 97) ".utf8)
            number += 1
        }
        return Array(out.prefix(count))
    }

    static func decompressed(_ writer: XZ.BlockWriter, length: Int) throws -> [UInt8] {
        var out: [UInt8] = []
        try writer.output.withUnsafeBytes {
            try XZ.decompress($0, expectedLength: UInt64(length), reportsProgress: false) { out += $0 }
        }
        return out
    }

    /// Pieces of every size around the block size (empty, one byte, a block less one, a block,
    /// a block and one, many blocks), random and text, stored and compressed in turn.
    @Test(arguments: [1, 2])
    func piecesComeBackInOrder(threads: Int) throws {
        var random = SeededGenerator(state: UInt64(threads))
        let blockSize = 16 << 10
        let writer = try XZ.BlockWriter(preset: 0, threads: threads, blockSize: blockSize)
        var expected: [UInt8] = []
        let sizes = [0, 1, blockSize - 1, blockSize, blockSize + 1, 5 * blockSize + 17, 3, 40_000, 0, 70_000]
        for (number, size) in sizes.enumerated() {
            let piece = number % 3 == 0 ? Self.text(size) : Self.randomBytes(size, &random)
            let stored = Bool.random(using: &random)
            try piece.withUnsafeBytes { stored ? try writer.store($0) : try writer.compress($0) }
            expected += piece
        }
        try writer.finish()
        #expect(try Self.decompressed(writer, length: expected.count) == expected)
    }

    /// Every block header says how long the block is, packed and unpacked (what lets the
    /// reader's liblzma decode blocks on several threads; without them it falls back to one),
    /// and the blocks add up to what was handed in. Read from the xz format itself.
    @Test func everyBlockHeaderCarriesItsSizes() throws {
        var random = SeededGenerator(state: 5)
        let writer = try XZ.BlockWriter(preset: 0, threads: 2, blockSize: 16 << 10)
        var total = 0
        for number in 0..<12 {
            let piece = number % 2 == 0 ? Self.text(40_000) : Self.amounts(9_000, &random)
            try piece.withUnsafeBytes { number % 4 == 1 ? try writer.store($0) : try writer.compress($0) }
            total += piece.count
        }
        try writer.finish()
        let stream = writer.output
        func vli(_ at: inout Int) -> Int {
            var value = 0
            var shift = 0
            while true {
                let byte = Int(stream[at])
                at += 1
                value |= (byte & 0x7F) << shift
                if byte < 0x80 { return value }
                shift += 7
            }
        }
        // Check type None in the stream header's flags and the footer's: the archive's
        // secretstream authenticates the stream, the manifest's digest its records.
        #expect(stream[6] == 0 && stream[7] == 0 && stream[stream.count - 4] == 0 && stream[stream.count - 3] == 0)
        var at = 12  // the stream header
        var blocks = 0
        var unpacked = 0
        while stream[at] != 0 {  // 0: the index
            let start = at
            let headerSize = (Int(stream[at]) + 1) * 4
            #expect(stream[at + 1] & 0xC0 == 0xC0, "block \(blocks): both sizes present")
            at += 2
            let packed = vli(&at)
            unpacked += vli(&at)
            at = start + headerSize + packed
            at += (4 - (at - start) % 4) % 4  // padding, and no check
            blocks += 1
        }
        #expect(blocks > 12 && unpacked == total)
        #expect(try Self.decompressed(writer, length: total).count == total)
    }

    /// A stored block, made at once, still goes after the compressed block before it, which
    /// is still being compressed on another thread (a megabyte of amounts takes a tenth of a
    /// second; the text behind it, nothing).
    @Test func aStoredBlockWaitsForTheCompressedOnesBeforeIt() throws {
        var random = SeededGenerator(state: 8)
        let slow = Self.amounts(500_000, &random)
        let writer = try XZ.BlockWriter(preset: 0, threads: 2, blockSize: 1 << 20)
        try slow.withUnsafeBytes { try writer.compress($0) }
        try Self.text(100).withUnsafeBytes { try writer.store($0) }
        try Self.text(50).withUnsafeBytes { try writer.compress($0) }
        try writer.finish()
        let expected = slow + Self.text(100) + Self.text(50)
        #expect(try Self.decompressed(writer, length: expected.count) == expected)
    }

    /// An empty stream is a valid xz stream of nothing.
    @Test func nothingIsAnEmptyStream() throws {
        let writer = try XZ.BlockWriter(preset: 0, threads: 2, blockSize: 1 << 20)
        try writer.finish()
        #expect(try Self.decompressed(writer, length: 0).isEmpty)
    }

    /// Zigzag varints of random amounts from £1 to £250, as a column holds them: xz takes a
    /// sixth off them.
    static func amounts(_ count: Int, _ random: inout SeededGenerator) -> [UInt8] {
        var out: [UInt8] = []
        for _ in 0..<count {
            let pence = Int64.random(in: 100...25_000, using: &random)
            out.appendVarint(UInt64(bitPattern: pence << 1 ^ pence >> 63))
        }
        return out
    }

    /// Stored bytes are in the stream as they are (LZMA2's uncompressed chunks, at most 64 KiB
    /// each behind a 3-byte header); the same bytes compressed are not, and are smaller.
    @Test func storedBytesAreKeptAsTheyAre() throws {
        var random = SeededGenerator(state: 9)
        let column = Self.amounts(80_000, &random)
        let firstChunk = Array(column.prefix(60_000))

        let stored = try XZ.BlockWriter(preset: 0, threads: 2, blockSize: 1 << 20)
        try column.withUnsafeBytes { try stored.store($0) }
        try stored.finish()
        #expect(stored.output.count >= column.count && stored.output.count < column.count + 200)
        #expect(stored.output.firstRange(of: firstChunk) != nil)
        #expect(try Self.decompressed(stored, length: column.count) == column)

        let compressed = try XZ.BlockWriter(preset: 0, threads: 2, blockSize: 1 << 20)
        try column.withUnsafeBytes { try compressed.compress($0) }
        try compressed.finish()
        #expect(compressed.output.firstRange(of: firstChunk) == nil)
        #expect(compressed.output.count * 10 < column.count * 9)
        #expect(try Self.decompressed(compressed, length: column.count) == column)
    }

    /// Columns are kept out of LZMA2 only when xz cannot take a fifth off them: noise and
    /// random amounts are; texts, constants and dictionary codes that count up (bytes spread
    /// evenly, yet a pattern xz finds) are not; nor is anything under 16 KiB.
    @Test func onlyColumnsXZCannotShrinkAreKeptAsTheyAre() {
        var random = SeededGenerator(state: 4)
        func judged(_ bytes: [UInt8]) -> Bool {
            bytes.withUnsafeBytes { ColumnExport.StoredColumns.xzCannotShrink($0) }
        }
        let amounts = Self.amounts(30_000, &random)
        var codes: [UInt8] = []
        for number in 0..<30_000 { codes.appendVarint(UInt64(number)) }
        #expect(judged(Self.randomBytes(40_000, &random)))
        #expect(judged(amounts))
        #expect(!judged(codes))
        #expect(!judged(Self.text(40_000)))
        #expect(!judged([UInt8](repeating: 7, count: 40_000)))

        var columns = ColumnExport.StoredColumns()
        let small = Self.randomBytes(ColumnExport.StoredColumns.smallest - 1, &random)
        #expect(!small.withUnsafeBytes { columns.keepsAsIs($0, group: 0, stream: 0) })
        #expect(amounts.withUnsafeBytes { columns.keepsAsIs($0, group: 1, stream: 0) })
        #expect(!codes.withUnsafeBytes { columns.keepsAsIs($0, group: 1, stream: 1) })
    }

    /// A column of random amounts goes into the archive as it is, and every record comes back.
    @Test func anExportWithAStoredColumnRoundTrips() throws {
        var random = SeededGenerator(state: 11)
        var records: [(RecordID, Data)] = []
        var columnBytes = 0
        for _ in 0..<20_000 {
            let pence = Int64.random(in: 100...25_000, using: &random)
            var payload: [UInt8] = [0x20, 1]
            payload.appendVarint(UInt64(bitPattern: pence << 1 ^ pence >> 63))
            columnBytes += payload.count - 2
            records.append((RecordID.random(), Data(payload)))
        }
        let written = try ColumnExport.write(
            CollectedRecords(records), layouts: [0x2001: try ColumnLayout("s")],
            manifest: ColumnExportTests.manifest,
            writer: try XZ.BlockWriter(preset: 0, threads: 2, blockSize: 64 << 10))
        #expect(written.compressed.count >= columnBytes)
        var read: [RecordID: Data] = [:]
        _ = try (written.prefix + written.compressed).withUnsafeBytes {
            try ColumnExport.read($0, format: 4, exportLength: written.exportLength) { read[$0] = Data($1) }
        }
        #expect(read == Dictionary(uniqueKeysWithValues: records))
    }
}
