import CofferTestSupport
import Foundation
import Testing
import VaultCrypto
import VaultStore

@testable import VaultBackup

/// Archive format 3's columns and id table: every payload and id comes back byte for byte,
/// whatever its shape.
@Suite struct ColumnExportTests {
    /// A payload in `layout`, with values drawn from `random`: small and huge numbers, negative
    /// dates, repeated and new texts, ids of records in the archive, and ids that are not.
    static func payload(
        _ fields: [ColumnLayout.Field], ids: [RecordID], strangers: [RecordID], random: inout some RandomNumberGenerator
    ) -> [UInt8] {
        var out: [UInt8] = []
        for field in fields {
            switch field {
            case .unsigned, .signed, .increasing:
                out.appendVarint(
                    Bool.random(using: &random) ? UInt64.random(in: 0..<300, using: &random) : random.next())
            case .date:
                out.appendVarint(zigzag(Int64.random(in: -800_000...3_000_000, using: &random)))
            case .byte: out.append(UInt8.random(in: 0...255, using: &random))
            case .text:
                let text = Array(
                    ["TESCO", "", "Ω≈ç", "rent \(Int.random(in: 0..<5, using: &random))"].randomElement(using: &random)!
                        .utf8)
                out.appendVarint(UInt64(text.count))
                out += text
            case .id:
                let id =
                    Bool.random(using: &random)
                    ? ids.randomElement(using: &random)! : strangers.randomElement(using: &random)!
                out += id.bytes
            case .rest:
                out += (0..<Int.random(in: 0..<40, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random)
                }
            case .optional(_, let inner):
                if Bool.random(using: &random) {
                    out.append(1)
                    out += payload([inner], ids: ids, strangers: strangers, random: &random)
                } else {
                    out.append(0)
                }
            case .list(_, let inner):
                let count = Int.random(in: 0..<4, using: &random)
                out.appendVarint(UInt64(count))
                for _ in 0..<count { out += payload(inner, ids: ids, strangers: strangers, random: &random) }
            case .sequence(let inner): out += payload(inner, ids: ids, strangers: strangers, random: &random)
            case .union(_, let alternatives):
                let tag = Int.random(in: 0..<alternatives.count, using: &random)
                out.append(UInt8(tag))
                out += payload(alternatives[tag], ids: ids, strangers: strangers, random: &random)
            }
        }
        return out
    }

    static let layouts: [UInt16: ColumnLayout] = [
        0x0A03: try! ColumnLayout("sb<i|i|i|>?tdn?(tt)?(?i?in)"),
        0x0501: try! ColumnLayout("ndt[i?t]"),
        0x0D03: try! ColumnLayout("ni[tssb?s]?sdd?tb?d?d[ds?(?i?in)]t[d]"),
        0x1601: try! ColumnLayout("tu*"),
    ]

    /// Records of every layout, of versions no layout describes, ones a layout does not fit
    /// (a bool of 2, a trailing byte, a varint written long), empty and one-byte payloads, and
    /// kind 0: written, read back, identical.
    static func records(count: Int, seed: UInt64) -> [(RecordID, Data)] {
        var random = SeededGenerator(state: seed)
        let ids = (0..<count).map { _ in RecordID.random() }
        let strangers = (0..<20).map { _ in RecordID.random() }
        return ids.enumerated().map { index, id in
            let payload: [UInt8]
            switch index % 10 {
            case 0: payload = []
            case 1: payload = [0x0A]
            case 2: payload = [0, 3, 4]
            case 3: payload = [0x0A, 0x02] + (0..<index % 50).map { UInt8(truncatingIfNeeded: $0 * 7) }
            case 4:
                // Transaction fields with a non-minimal varint amount: stored whole.
                payload =
                    [0x0A, 0x03, 0x81, 0x00]
                    + Array(
                        Self.payload(
                            Array(Self.layouts[0x0A03]!.fields.dropFirst()), ids: ids, strangers: strangers,
                            random: &random))
            case 5:
                payload =
                    [0x0A, 0x03]
                    + Self.payload(Self.layouts[0x0A03]!.fields, ids: ids, strangers: strangers, random: &random) + [9]
            default:
                let key = Array(Self.layouts.keys.sorted())[index % Self.layouts.count]
                payload =
                    [UInt8(key >> 8), UInt8(key & 0xff)]
                    + Self.payload(Self.layouts[key]!.fields, ids: ids, strangers: strangers, random: &random)
            }
            return (id, Data(payload))
        }
    }

    /// `count` change-log entries (`ndt[i?t]`), one group, naming each other's ids.
    static func changeLog(count: Int, seed: UInt64) -> [(RecordID, Data)] {
        var random = SeededGenerator(state: seed)
        let ids = (0..<count).map { _ in RecordID.random() }
        return ids.map { id in
            (id, Data([0x05, 0x01] + payload(layouts[0x0501]!.fields, ids: ids, strangers: [id], random: &random)))
        }
    }

    static func manifest(_ count: UInt64, _ counts: [UInt8: UInt64], _ digest: [UInt8]) -> [UInt8] {
        ExportFormat.encodeManifest(
            .init(
                recordCount: count, countsByKind: counts, contentDigest: digest, commitCounter: 7,
                netWorth: "GBP 1.00", appVersion: "test"))
    }

    static func roundTrip(_ records: [(RecordID, Data)], blockRecords: Int = ColumnExport.blockRecordLimit) throws -> (
        ExportFormat.Manifest, [(RecordID, Data)], ColumnExport.Written
    ) {
        let written = try ColumnExport.write(
            CollectedRecords(records), layouts: layouts, manifest: manifest,
            writer: try XZ.BlockWriter(preset: 1, threads: 2, blockSize: 64 << 10), blockRecords: blockRecords)
        var read: [(RecordID, Data)] = []
        let manifest = try (written.prefix + written.compressed).withUnsafeBytes {
            try ColumnExport.read($0, format: 4, exportLength: written.exportLength) { read.append(($0, Data($1))) }
        }
        return (manifest, read, written)
    }

    @Test(arguments: [1, 2, 3])
    func everyPayloadComesBackByteForByte(seed: UInt64) throws {
        let records = Self.records(count: 3000, seed: seed)
        let (manifest, read, _) = try Self.roundTrip(records)
        #expect(read.count == records.count && manifest.recordCount == 3000 && manifest.commitCounter == 7)
        let expected = records.sorted { $0.0 < $1.0 }
        let got = read.sorted { $0.0 < $1.0 }
        #expect(got.map(\.0) == expected.map(\.0))
        let differing = zip(got, expected).filter { $0.0.1 != $0.1.1 }.count
        #expect(differing == 0, "\(differing) payloads differ")
    }

    /// The manifest's digest is hashed on another thread, a chunk of records at a time, and
    /// records larger than a chunk apart (in memory of their own up to 64 MiB, in place beyond):
    /// whatever the sizes, it is BLAKE2b-256 over every record's id ‖ length ‖ payload in export
    /// order, computed here the plain way.
    @Test func theDigestCoversEveryRecordInExportOrderWhateverItsSize() throws {
        let sizes = [3, 700_000, 600_000, 3 << 20, 5, (64 << 20) + 1, 40, 1 << 20]
        let records = sizes.map { size in
            var payload = [UInt8](repeating: 0x5A, count: 2 + size)
            (payload[0], payload[1]) = (0x33, 0x01)
            for at in stride(from: 2, to: payload.count, by: 997) { payload[at] = UInt8(truncatingIfNeeded: at >> 10) }
            return (RecordID.random(), Data(payload))
        }
        let (manifest, read, _) = try Self.roundTrip(records)
        #expect(read.map(\.1.count).sorted() == records.map(\.1.count).sorted())
        let plain = BLAKE2bHasher()
        for (id, payload) in read {
            plain.update(id.bytes)
            withUnsafeBytes(of: UInt32(payload.count).littleEndian) { plain.update($0) }
            plain.update(payload)
        }
        #expect(manifest.contentDigest == plain.finalize())
    }

    /// A text met again in a block is stored once and named by its code after that (the
    /// dictionary finds it by its bytes), and texts that differ are all kept.
    @Test func aRepeatedTextIsStoredOnce() throws {
        let texts = ["Tesco", "Pret", "Tesco", "Tesco", "Tescos", "Pret", ""]
        let records = texts.enumerated().map { index, text in
            var payload: [UInt8] = [0x16, 0x01]
            payload.appendVarint(UInt64(text.utf8.count))
            payload += Array(text.utf8)
            payload.appendVarint(UInt64(index))
            return (RecordID.random(), Data(payload))
        }
        let (_, read, written) = try Self.roundTrip(records)
        #expect(Dictionary(uniqueKeysWithValues: read) == Dictionary(uniqueKeysWithValues: records))
        var export: [UInt8] = []
        try written.compressed.withUnsafeBytes {
            try XZ.decompress($0, expectedLength: written.exportLength) { export += $0 }
        }
        func occurrences(_ text: String) -> Int {
            let bytes = [UInt8(text.utf8.count)] + Array(text.utf8)
            return (0...export.count - bytes.count).count { export[$0..<$0 + bytes.count].elementsEqual(bytes) }
        }
        #expect(occurrences("Tesco") == 1 && occurrences("Pret") == 1 && occurrences("Tescos") == 1)
    }

    /// Blocks close at their limit of records (a group of more than 2²⁰ records; here, to keep
    /// the test quick, 65,536); each starts its dates, ids and texts afresh.
    @Test func manyRecordsSpanSeveralBlocks() throws {
        let records = Self.changeLog(count: 140_000, seed: 9)
        let (manifest, read, written) = try Self.roundTrip(records, blockRecords: 65_536)
        #expect(manifest.recordCount == 140_000 && read.count == 140_000)
        #expect(
            Dictionary(uniqueKeysWithValues: read.map { ($0.0, $0.1) }) == Dictionary(uniqueKeysWithValues: records))
        // Three blocks' headers: kind 5, version 1, the layout's length and text.
        let header = [UInt8]([5, 1, 8]) + Array("ndt[i?t]".utf8)
        var export: [UInt8] = []
        try written.compressed.withUnsafeBytes {
            try XZ.decompress($0, expectedLength: written.exportLength) { export += $0 }
        }
        let blocks = (0..<export.count - header.count).filter { export[$0..<$0 + header.count].elementsEqual(header) }
        #expect(blocks.count == 3)
    }

    /// A block is closed before a record would take it past its byte limit: it holds at most
    /// the limit, or one record alone (so a 256 MiB record after 31 MiB of others never makes a
    /// block longer than a reader takes). Here the limit is 1 MiB and the records 300 KB.
    @Test func aBlockClosesBeforeARecordWouldTakeItPastItsLimit() throws {
        let records = (0..<12).map { number in
            (
                RecordID.random(),
                Data([0x33, 0x01] + [UInt8](repeating: UInt8(number), count: number == 5 ? 1_500_000 : 300_000))
            )
        }
        let written = try ColumnExport.write(
            CollectedRecords(records), layouts: Self.layouts, manifest: Self.manifest,
            writer: try XZ.BlockWriter(preset: 0, threads: 2, blockSize: 1 << 20), blockBytes: 1 << 20)
        var export: [UInt8] = []
        try written.compressed.withUnsafeBytes {
            try XZ.decompress($0, expectedLength: written.exportLength) { export += $0 }
        }
        var at = 8
        var lengths: [Int] = []
        while true {
            let length = export.withUnsafeBytes { Int($0.loadUnaligned(fromByteOffset: at, as: UInt32.self)) }
            if length == 0 { break }
            lengths.append(length)
            at += 4 + length
        }
        #expect(lengths.count >= 5)
        #expect(lengths.allSatisfy { $0 <= (1 << 20) + 64 || $0 > 1_500_000 }, "\(lengths)")
        #expect(lengths.filter { $0 > 1_500_000 }.count == 1)
    }

    /// A block's streams are handed over a chunk at a time while it is made (entries streams,
    /// which its dictionaries read back, as copies; the others whole): the chunks and the rest
    /// are, byte for byte, the streams of the same block made in one piece, and its header counts
    /// every byte.
    @Test func chunksHandedOverWhileABlockIsMadeAreItsStreams() throws {
        let layout = Self.layouts[0x0A03]!
        var random = SeededGenerator(state: 11)
        let ids = (0..<5000).map { _ in RecordID.random() }
        let positions = ColumnExport.TablePositions()
        var whole = ColumnBlockEncoder(kind: 0x0A, version: 3, layout: layout)
        var chunked = ColumnBlockEncoder(kind: 0x0A, version: 3, layout: layout)
        var handed = [[UInt8]](repeating: [], count: layout.streamCount)
        var kinds = Set<Int>()
        for number in 0..<60_000 {
            let fields = Self.payload(layout.fields, ids: ids, strangers: [RecordID.random()], random: &random)
            try fields.withUnsafeBytes {
                try whole.add($0, positions: positions)
                try chunked.add($0, positions: positions)
            }
            guard number % 1000 == 999 else { continue }
            for (stream, bytes) in chunked.takeChunks(least: 64 << 10) {
                handed[stream] += bytes
                kinds.insert(stream)
            }
        }
        #expect(kinds.count >= 3, "streams handed over: \(kinds.sorted())")
        var rest = handed
        chunked.forEachStream { rest[$0] += $1 }
        var expected = [[UInt8]](repeating: [], count: layout.streamCount)
        whole.forEachStream { expected[$0] = Array($1) }
        #expect(rest == expected)
        #expect(chunked.header() == whole.header() && chunked.length == whole.length)
        // Nothing more to hand over right after a hand-over, and a block too small gives none.
        #expect(chunked.takeChunks(least: 64 << 10).isEmpty)
    }

    /// One block of a whole group, its streams compressed in chunks as it is made, reads back.
    @Test func aLargeBlockCompressedInChunksReadsBack() throws {
        let records = Self.records(count: 60_000, seed: 12)
        let (manifest, read, _) = try Self.roundTrip(records)
        #expect(manifest.recordCount == 60_000)
        #expect(
            Dictionary(uniqueKeysWithValues: read.map { ($0.0, $0.1) }) == Dictionary(uniqueKeysWithValues: records))
    }

    /// Damage inside the decrypted body (which only the vault's own keys could make) is still
    /// refused, never a crash and never a wrong record: every byte of a small body flipped in turn.
    @Test func everyFlippedByteOfTheBodyIsRefused() throws {
        let records = Self.records(count: 40, seed: 4)
        let (_, _, written) = try Self.roundTrip(records)
        let body = written.prefix + written.compressed
        let refused = Self.refusedFlips(of: written, at: 0..<body.count, flipping: 0x10)
        // A flip inside an id (random ids: the table is stored as it is) changes an id, not the
        // structure; the manifest's digest covers ids, so even those are refused.
        #expect(written.prefix[16] == IDTable.asIs)
        #expect(refused == body.count)
    }

    /// How many of the bodies `written` gives with `bits` flipped at one of `offsets` the reader
    /// refuses (as damage, never a crash).
    static func refusedFlips(of written: ColumnExport.Written, at offsets: Range<Int>, flipping bits: UInt8) -> Int {
        let body = written.prefix + written.compressed
        return offsets.count { offset in
            var damaged = body
            damaged[offset] ^= bits
            do {
                _ = try damaged.withUnsafeBytes {
                    try ColumnExport.read($0, format: 4, exportLength: written.exportLength, visit: nil)
                }
                return false
            } catch {
                return error is BackupError
            }
        }
    }

    /// Id counts whose sum wraps around (found by the fuzzer) are refused before any is used.
    @Test(arguments: [UInt16(2), 3, 4])
    func idCountsThatOverflowAreRefused(format: UInt16) throws {
        for (records, extra) in [(UInt64(1), UInt64.max), (UInt64(Int32.max) + 1, 0), (2, UInt64.max / 16)] {
            var body: [UInt8] = []
            withUnsafeBytes(of: records.littleEndian) { body += $0 }
            withUnsafeBytes(of: extra.littleEndian) { body += $0 }
            body += [UInt8](repeating: 7, count: 64)
            #expect(throws: BackupError.self) {
                try body.withUnsafeBytes { try ColumnExport.read($0, format: format, exportLength: 10, visit: nil) }
            }
        }
    }

    /// A block whose values repeat one long text millions of times (found by review: a few MB
    /// asking to rebuild gigabytes) is refused once a payload passes the limit.
    @Test func aBlockThatRebuildsTooMuchIsRefused() throws {
        let repeats = 3_000_000
        let text = [UInt8](repeating: 0x41, count: 200)
        var counts: [UInt8] = [], entries: [UInt8] = []
        let codes = [UInt8](repeating: 0, count: repeats)
        counts.appendVarint(UInt64(repeats))
        entries.appendVarint(UInt64(text.count))
        entries += text
        var block: [UInt8] = [9, 1, 3] + Array("[t]".utf8)
        block.appendVarint(1)
        block.appendVarint(3)
        for stream in [counts, codes, entries] { block.appendVarint(UInt64(stream.count)) }
        block += counts + codes + entries
        let error = #expect(throws: BackupError.self) {
            _ = try block.withUnsafeBytes {
                try ColumnBlockDecoder.decode($0, ids: UnsafeRawBufferPointer(start: nil, count: 0)) { _, _, _ in }
            }
        }
        #expect(error?.errorDescription == ColumnBlockDecoder.tooLarge.errorDescription)
    }

    /// Bytes after the manifest are refused as they arrive, not gathered until the stream ends.
    @Test func bytesAfterTheManifestAreRefused() throws {
        let (_, _, written) = try Self.roundTrip(Self.records(count: 30, seed: 5))
        var export: [UInt8] = []
        try written.compressed.withUnsafeBytes {
            try XZ.decompress($0, expectedLength: written.exportLength) { export += $0 }
        }
        let encoder = try XZ.Encoder(preset: 0, threads: 1, blockSize: 0)
        try (export + [UInt8](repeating: 0, count: 1 << 20)).withUnsafeBytes { try encoder.compress($0) }
        try encoder.finish()
        let body = written.prefix + encoder.output
        let error = #expect(throws: BackupError.self) {
            try body.withUnsafeBytes {
                try ColumnExport.read($0, format: 4, exportLength: UInt64(export.count + (1 << 20)), visit: nil)
            }
        }
        #expect(error?.errorDescription?.contains("after its manifest") == true)
    }

    /// Ids that share their first eight bytes (as ordered ids of one device would) all fall in
    /// one bucket of the writer's lookup: they are told apart whole, round-trip, and only a true
    /// repeat among them is refused.
    @Test func idsSharingTheirHighHalfAreToldApart() throws {
        let high = Array(RecordID.random().bytes.prefix(8))
        let ids = try (0..<2000).map { number in
            try RecordID(high + withUnsafeBytes(of: UInt64(number * 7919 % 2000).bigEndian) { Array($0) })
        }
        let records = ids.enumerated().map { ($1, Data([0x0A, 0x02, UInt8($0 % 200)])) }
        let (manifest, read, written) = try Self.roundTrip(records)
        #expect(manifest.recordCount == 2000)
        #expect(
            Dictionary(uniqueKeysWithValues: read.map { ($0.0, $0.1) }) == Dictionary(uniqueKeysWithValues: records))
        // Such ids are coded in columns; the table rebuilt with its third id made the first's.
        #expect(written.prefix[16] == IDTable.columns)
        var table = read.flatMap(\.0.bytes)
        table.replaceSubrange(32..<48, with: table[0..<16])
        let body = Array(written.prefix[..<16]) + (try IDTable.encode(table)) + written.compressed
        let error = #expect(throws: BackupError.self) {
            try body.withUnsafeBytes {
                try ColumnExport.read($0, format: 4, exportLength: written.exportLength, visit: nil)
            }
        }
        #expect(error?.errorDescription?.contains("same record id twice") == true)
    }

    @Test func twoRecordsWithOneIdAreRefused() throws {
        let id = RecordID.random()
        let records = [(id, Data([0x0A, 0x02, 1])), (RecordID.random(), Data([0x0A, 0x02, 2]))]
        let (_, _, written) = try Self.roundTrip(records)
        var body = written.prefix + written.compressed
        // Random ids: the table as it is, after the counts, its coding and its length.
        #expect(body[16] == IDTable.asIs)
        // The second table entry becomes the first one's id.
        body.replaceSubrange(41..<57, with: body[25..<41])
        #expect(throws: BackupError.self) {
            try body.withUnsafeBytes {
                try ColumnExport.read($0, format: 4, exportLength: written.exportLength, visit: nil)
            }
        }
    }

    /// Ids as `RecordIDs` issues them (a millisecond and a counter, then one process's random
    /// bits), and a second process's among them: coded in columns, three bytes each before
    /// compression, and read back exactly.
    static func orderedIDs(count: Int, processes: Int = 2) -> [RecordID] {
        (0..<count).map { number in
            let process = number * processes / count
            let millisecond = UInt64(1_790_000_000_000 + number / 3 + process * 86_400_000)
            let high = millisecond << 16 | 0x8 << 12 | UInt64(number % 3)
            let low = 0b10 << 62 | UInt64(0x1234_5678_9ABC + process * 0x9E37_79B9)
            return try! RecordID(withUnsafeBytes(of: (high.bigEndian, low.bigEndian)) { Array($0) })
        }
    }

    /// 400,000 ids: their differences (1.2 MB) are compressed in blocks of 256 KiB and come
    /// out of liblzma in several pieces, so uvarints split between pieces, and columns that
    /// start inside a piece, are read too.
    @Test func orderedIDsAreCodedInAFewBytes() throws {
        let ids = Self.orderedIDs(count: 400_000)
        let records = ids.enumerated().map { ($1, Data([0x0A, 0x02, UInt8($0 % 200)])) }
        let (manifest, read, written) = try Self.roundTrip(records)
        #expect(manifest.recordCount == 400_000)
        #expect(written.prefix[16] == IDTable.columns)
        let content = written.prefix.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 25, as: UInt64.self) }
        // Three columns of one byte per id, but for the first id and the second process's.
        #expect(content > 1_200_000 && content < 1_200_040, "\(content) bytes of differences")
        // 6.4 MB of ids as they are; coded and compressed, well under a byte each.
        #expect(written.prefix.count < 400_000, "\(written.prefix.count) bytes")
        // As many blocks as 256 KiB go into the content (the xz index's count of records, found
        // from the stream footer's backward size).
        let stream = Array(written.prefix[33...])
        let backwardSize =
            (Int(stream.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: stream.count - 8, as: UInt32.self) }) + 1)
            * 4
        let index = stream.count - 12 - backwardSize
        #expect(stream[index] == 0 && Int(stream[index + 1]) == (Int(content) + (256 << 10) - 1) / (256 << 10))
        #expect(Set(read.map(\.0)) == Set(ids))
        #expect(
            Dictionary(uniqueKeysWithValues: read.map { ($0.0, $0.1) }) == Dictionary(uniqueKeysWithValues: records))
    }

    /// The export decodes on another thread while the id table does: a damaged table is still
    /// what the reader reports (the export's decoding stopped, whatever it had found), and a
    /// damaged export with a sound table is reported as the export's.
    @Test func aDamagedTableIsReportedBeforeTheExportDecodedBesideIt() throws {
        let ids = Self.orderedIDs(count: 20_000)
        let (_, _, written) = try Self.roundTrip(ids.enumerated().map { ($1, Data([0x0A, 0x02, UInt8($0 % 200)])) })
        #expect(written.prefix[16] == IDTable.columns)
        func refusal(_ body: [UInt8]) -> String {
            do {
                _ = try body.withUnsafeBytes {
                    try ColumnExport.read($0, format: 4, exportLength: written.exportLength, visit: nil)
                }
                return "read"
            } catch {
                return (error as? BackupError)?.errorDescription ?? "\(error)"
            }
        }
        // The table's xz stream cut short by its last byte, then the export's stream cut too.
        let tableEnd = written.prefix.count
        var bothDamaged = Array(written.prefix[..<(tableEnd - 1)]) + [0] + written.compressed
        bothDamaged[bothDamaged.count - 20] ^= 0xFF
        #expect(refusal(bothDamaged).contains("id table"), "\(refusal(bothDamaged))")
        var exportDamaged = written.prefix + written.compressed
        exportDamaged[exportDamaged.count - 20] ^= 0xFF
        let message = refusal(exportDamaged)
        #expect(message != "read" && !message.contains("id table"), "\(message)")
    }

    /// The table's and the export's decoders run at once and share the one limit of 256 MiB
    /// (the table's 64 MiB, the export's the rest until the table is done): archives whose
    /// streams declare larger dictionaries than either share still read, whichever stream it is.
    /// (liblzma sets aside no more than a block holds, so a test cannot cheaply make a stream
    /// that needs more; `aDecoderAsksBeforeItTakesMoreMemory` tests how a decoder is given more.)
    @Test func tableAndExportShareTheMemoryLimit() throws {
        let ids = Self.orderedIDs(count: 3000)
        let records = ids.enumerated().map { ($1, Data([0x0A, 0x02, UInt8($0 % 200)])) }
        let (_, _, written) = try Self.roundTrip(records)
        #expect(written.prefix[16] == IDTable.columns)
        let content = written.prefix.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 25, as: UInt64.self) }
        func restored(_ stream: [UInt8], length: UInt64, dictionary: UInt32) throws -> [UInt8] {
            var plain: [UInt8] = []
            try stream.withUnsafeBytes { try XZ.decompress($0, expectedLength: length) { plain += $0 } }
            let writer = try XZ.BlockWriter(
                preset: 0, threads: 1, blockSize: 1 << 20, storedDictionarySize: dictionary)
            try plain.withUnsafeBytes { try writer.store($0) }
            try writer.finish()
            return writer.output
        }
        func table(dictionary: UInt32) throws -> [UInt8] {
            let stream = try restored(Array(written.prefix[33...]), length: content, dictionary: dictionary)
            var out = Array(written.prefix[..<17])
            withUnsafeBytes(of: (UInt64(8 + stream.count).littleEndian, content.littleEndian)) { out += $0 }
            return out + stream
        }
        func read(_ body: [UInt8]) throws -> Int {
            var count = 0
            _ = try body.withUnsafeBytes {
                try ColumnExport.read($0, format: 4, exportLength: written.exportLength) { _, _ in count += 1 }
            }
            return count
        }
        let bigTable = try table(dictionary: 96 << 20)
        let bigExport = try restored(written.compressed, length: written.exportLength, dictionary: 224 << 20)
        #expect(try read(bigTable + written.compressed) == 3000)
        #expect(try read(written.prefix + bigExport) == 3000)
        #expect(try read(bigTable + bigExport) == 3000)
    }

    /// The shared limit's two ways of lending memory, with shares small enough that Coffer's own
    /// streams need more: a table needing more than its share stops the export's decoder and
    /// takes the whole limit; an export needing more than its share waits for the table, then
    /// takes it all; a limit neither fits in is refused, whichever decoder meets it first.
    @Test func eachDecoderBorrowsTheWholeLimitOnlyWhenTheOtherIsDone() throws {
        let ids = Self.orderedIDs(count: 200_000)
        let records = ids.enumerated().map { ($1, Data([0x0A, 0x02, UInt8($0 % 200)])) }
        let (_, _, written) = try Self.roundTrip(records)
        #expect(written.prefix[16] == IDTable.columns)
        let body = written.prefix + written.compressed
        func read(limit: UInt64, tableShare: UInt64) throws -> Int {
            var count = 0
            _ = try body.withUnsafeBytes {
                try ColumnExport.read(
                    $0, format: 4, exportLength: written.exportLength, memoryLimit: limit, tableShare: tableShare
                ) { _, _ in count += 1 }
            }
            return count
        }
        #expect(try read(limit: 256 << 20, tableShare: 16 << 10) == 200_000)
        #expect(try read(limit: 256 << 20, tableShare: (256 << 20) - (16 << 10)) == 200_000)
        let error = #expect(throws: BackupError.self) { try read(limit: 32 << 10, tableShare: 16 << 10) }
        #expect(error?.errorDescription?.contains("more memory") == true, "\(error?.errorDescription ?? "")")
    }

    /// A decoder that meets a block needing more memory than its limit asks for more, and goes
    /// on with what it is given; given nothing, it refuses the stream.
    @Test func aDecoderAsksBeforeItTakesMoreMemory() throws {
        let plain = (0..<(3 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 13) }
        let writer = try XZ.BlockWriter(preset: 0, threads: 2, blockSize: 1 << 20)
        try plain.withUnsafeBytes { try writer.compress($0) }
        try writer.finish()
        var asked = 0
        var out: [UInt8] = []
        try writer.output.withUnsafeBytes {
            try XZ.decompress(
                $0, expectedLength: UInt64(plain.count), memoryLimit: 64 << 10,
                raisedLimit: {
                    asked += 1
                    return 256 << 20
                }
            ) { out += $0 }
        }
        #expect(asked >= 1 && out == plain)
        let error = #expect(throws: BackupError.self) {
            try writer.output.withUnsafeBytes {
                try XZ.decompress($0, expectedLength: UInt64(plain.count), memoryLimit: 64 << 10, raisedLimit: { nil })
                { _ in }
            }
        }
        #expect(error?.errorDescription?.contains("more memory") == true)
    }

    /// A coded table flipped anywhere (its coding, lengths, or the xz stream) is refused: the
    /// xz check, the lengths, or the manifest's digest over every id catches it.
    @Test func everyFlippedByteOfACodedTableIsRefused() throws {
        let ids = Self.orderedIDs(count: 300)
        let (_, _, written) = try Self.roundTrip(ids.enumerated().map { ($1, Data([0x0A, 0x02, UInt8($0 % 200)])) })
        #expect(written.prefix[16] == IDTable.columns)
        let refused = Self.refusedFlips(of: written, at: 16..<written.prefix.count, flipping: 0x04)
        #expect(refused == written.prefix.count - 16)
    }

    /// A few hundred bytes that would decode to two billion ids (a bomb, which only the vault's
    /// own keys could seal) are refused before anything is allocated for them; so are tables
    /// whose content ends early or runs on, values outside their column, and codings no Coffer
    /// writes in that format (format 3 codes pairs, format 4 columns).
    @Test(arguments: [(UInt16(3), IDTable.differences), (UInt16(4), IDTable.columns)])
    func codedTablesThatClaimTooMuchAreRefused(format: UInt16, coding: UInt8) throws {
        func body(records: UInt64, table: [UInt8]) -> [UInt8] {
            var out: [UInt8] = []
            withUnsafeBytes(of: (records.littleEndian, UInt64(0).littleEndian)) { out += $0 }
            return out + table
        }
        func coded(_ content: [UInt8], as coding: UInt8 = coding) throws -> [UInt8] {
            let encoder = try XZ.Encoder(preset: 1, threads: 1, blockSize: 0)
            try content.withUnsafeBytes { try encoder.compress($0) }
            try encoder.finish()
            var out: [UInt8] = [coding]
            withUnsafeBytes(of: (UInt64(8 + encoder.output.count).littleEndian, UInt64(content.count).littleEndian)) {
                out += $0
            }
            return out + encoder.output
        }
        let bomb = try coded([UInt8](repeating: 0, count: 1 << 20))
        // Six values: three ids' pairs, or two ids' three columns.
        let six: [UInt8] = [2, 0, 2, 0, 2, 0]
        var cases: [(String, [UInt8])] = [
            ("more ids than its size allows", body(records: UInt64(Int32.max), table: bomb)),
            // Twelve values: too few for five ids in columns, too many for four in pairs.
            ("malformed", body(records: coding == IDTable.differences ? 4 : 5, table: try coded(six + six))),
            ("malformed", body(records: coding == IDTable.differences ? 2 : 1, table: try coded(six))),
            ("does not know", body(records: 1, table: [7] + [UInt8](repeating: 0, count: 8))),
            (
                "does not know",
                body(records: 2, table: try coded(six, as: IDTable.differences + IDTable.columns - coding))
            ),
        ]
        if coding == IDTable.columns {
            // One id whose first column is 2⁴⁸ (zig-zag 2⁴⁹), then 0 and 0: past an id's 48 bits.
            var content: [UInt8] = []
            content.appendVarint(1 << 49)
            cases.append(("malformed", body(records: 1, table: try coded(content + [0, 0]))))
            // Its second column 2¹⁶: past 16 bits.
            content = [0]
            content.appendVarint(1 << 17)
            cases.append(("malformed", body(records: 1, table: try coded(content + [0]))))
            // Below zero: a first column of 1 then -2 (zig-zag 2, 3), or a second column of -1.
            cases.append(("malformed", body(records: 2, table: try coded([2, 3, 0, 0, 0, 0]))))
            cases.append(("malformed", body(records: 1, table: try coded([0, 1, 0]))))
        }
        for (message, body) in cases {
            let error = #expect(throws: BackupError.self) {
                try body.withUnsafeBytes { try ColumnExport.read($0, format: format, exportLength: 10, visit: nil) }
            }
            #expect(error?.errorDescription?.contains(message) == true, "\(error?.errorDescription ?? "")")
        }
    }

    /// Format 3's coding (pairs of differences) still reads: the same ids, coded the old way.
    @Test func formatThreeTablesStillRead() throws {
        let ids = Self.orderedIDs(count: 5000)
        let records = ids.enumerated().map { ($1, Data([0x0A, 0x02, UInt8($0 % 200)])) }
        let (_, read, written) = try Self.roundTrip(records)
        let table = read.flatMap(\.0.bytes)
        let pairs = try IDTable.encode(table, coding: IDTable.differences)
        #expect(pairs[0] == IDTable.differences)
        let body = Array(written.prefix[..<16]) + pairs + written.compressed
        var again: [(RecordID, Data)] = []
        try body.withUnsafeBytes {
            _ = try ColumnExport.read($0, format: 3, exportLength: written.exportLength) {
                again.append(($0, Data($1)))
            }
        }
        #expect(again.map(\.0) == read.map(\.0) && again.map(\.1) == read.map(\.1))
    }

    @Test(arguments: [
        "", "*u", "(u", "u)", "[]", "?", "<u|", "x", "((((((((((u))))))))))", String(repeating: "u", count: 256),
    ])
    func malformedLayoutsAreRefused(text: String) {
        #expect(throws: BackupError.self) { try ColumnLayout(text) }
    }

    @Test func layoutsNumberTheirStreams() throws {
        let layout = try ColumnLayout("sb<i|i|i|>?tdn?(tt)?(?i?in)")
        // s, b | tag, i, i, i | presence, codes, entries | d, n | presence, 2 × (codes, entries)
        // | presence, (presence, i) × 2, n
        #expect(layout.streamCount == 2 + 4 + 3 + 2 + 5 + 6)
        // Ordered by the first two top-level d, u and n fields: the date, then the sequence number.
        // s = -5, b = 1, the empty alternative, no note, d = 20,000, n = 300, no pair, no flow.
        let fields: [UInt8] = [0x09, 1, 3, 0, 0xC0, 0xB8, 0x02, 0xAC, 0x02, 0, 0]
        #expect(fields.withUnsafeBytes { layout.orderingKey(of: $0) } ?? (0, 0) == (20_000, 300))
        #expect(fields.dropLast().withUnsafeBytes { layout.orderingKey(of: $0) } == nil)
        #expect((fields + [0]).withUnsafeBytes { layout.orderingKey(of: $0) } == nil)
    }
}
