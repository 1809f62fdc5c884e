import CofferTestSupport
import Foundation
import Testing
import VaultStore

@testable import VaultBackup

/// A large block is rebuilt by two threads (`ColumnBlockDecoder.Sharing`): the other thread
/// skips the first records' values column by column and rebuilds the rest into memory of its
/// own. Whatever the block holds, how it is shared, or where it is damaged, the records come
/// out exactly as one thread rebuilds them, in order, or the block is refused as it is by one.
@Suite struct SharedRebuildTests {
    /// The transactions', change log's and invoices' layouts, one with lists in a list and a
    /// choice in a list, and kind 0's, which holds whole payloads.
    static let layouts: [UInt16: ColumnLayout] = ColumnExportTests.layouts.merging([
        0x3101: try! ColumnLayout("[u[t?i]<u|t|>]d"), 0x0000: ColumnLayout.whole,
    ]) { $1 }

    /// One block of `count` payloads of `key`'s layout (`ColumnExportTests.payload`: lists,
    /// options, unions, new and repeated texts, ids), its bytes, the id table, and the payloads.
    static func block(_ key: UInt16, count: Int, seed: UInt64) throws -> (
        bytes: [UInt8], ids: [UInt8], payloads: [[UInt8]]
    ) {
        var random = SeededGenerator(state: seed)
        let layout = layouts[key]!
        let ids = (0..<50).map { _ in RecordID.random() }
        // Kind 0 blocks hold whole payloads; others rebuild their kind and version.
        let header: [UInt8] = key == 0 ? [] : [UInt8(key >> 8), UInt8(key & 0xff)]
        let payloads = (0..<count).map { _ in
            header
                + ColumnExportTests.payload(layout.fields, ids: ids, strangers: Array(ids.prefix(3)), random: &random)
        }
        var encoder = ColumnBlockEncoder(kind: UInt8(key >> 8), version: UInt8(key & 0xff), layout: layout)
        let positions = ColumnExport.TablePositions()
        for payload in payloads {
            try payload.withUnsafeBytes {
                try encoder.add(UnsafeRawBufferPointer(rebasing: $0[header.count...]), positions: positions)
            }
        }
        var bytes = encoder.header()
        encoder.forEachStream { _, stream in bytes += stream }
        return (bytes, positions.extraBytes, payloads)
    }

    /// What decoding a block gave: each record visited (its position's low byte, its kind, its
    /// payload after the caller's framing), in order, then the refusal if there was one; and how
    /// many records the other thread handed over (nil: it had no part).
    struct Outcome: Equatable {
        var records: [[UInt8]] = []
        var refusal: String?
        var held: Int?

        static func == (a: Outcome, b: Outcome) -> Bool { a.records == b.records && a.refusal == b.refusal }
    }

    static func rebuilt(_ block: [UInt8], ids: [UInt8], sharing: ColumnBlockDecoder.Sharing?) -> Outcome {
        var outcome = Outcome()
        let framing = 20
        do {
            let count = try block.withUnsafeBytes { block in
                try ids.withUnsafeBytes { ids in
                    try ColumnBlockDecoder.decode(
                        block, ids: ids, framing: framing, sharing: sharing, observeSharing: { outcome.held = $0 }
                    ) { position, kind, framed in
                        // Framing is the caller's to write: it must be there, and writable.
                        framed.storeBytes(of: UInt32(position), toByteOffset: 0, as: UInt32.self)
                        outcome.records.append([UInt8(truncatingIfNeeded: position), kind] + Array(framed[framing...]))
                    }
                }
            }
            #expect(count == outcome.records.count)
        } catch {
            outcome.refusal = (error as? BackupError)?.errorDescription ?? "\(error)"
        }
        return outcome
    }

    static let sharings: [ColumnBlockDecoder.Sharing] = [
        .init(records: 2, heldBytes: 64 << 20),
        // The other thread stops after its first record, or after a few: this one goes on.
        .init(records: 2, heldBytes: 1),
        .init(records: 2, heldBytes: 3000),
    ]

    @Test(arguments: [UInt16(0x0A03), 0x0501, 0x0D03, 0x1601, 0x3101, 0x0000])
    func aSharedBlockRebuildsExactlyWhatOneThreadDoes(key: UInt16) throws {
        let (block, ids, payloads) = try Self.block(key, count: 4000, seed: UInt64(key))
        let alone = Self.rebuilt(block, ids: ids, sharing: nil)
        #expect(alone.refusal == nil && alone.held == nil)
        #expect(alone.records.map { Array($0[2...]) } == payloads)
        #expect(alone.records.enumerated().allSatisfy { $0.element[0] == UInt8(truncatingIfNeeded: $0.offset) })
        // The other thread takes the last three eighths (1,500 records): all, one, or some.
        for (sharing, held) in zip(Self.sharings, [1500...1500, 1...1, 1...1499]) {
            let shared = Self.rebuilt(block, ids: ids, sharing: sharing)
            #expect(shared == alone, "\(sharing)")
            #expect(held.contains(shared.held ?? 0), "\(sharing): \(shared.held ?? 0) held")
        }
        // Only from its threshold on: a block of fewer records is rebuilt by one thread.
        let fewer = Self.rebuilt(block, ids: ids, sharing: .init(records: 4001, heldBytes: 1))
        #expect(fewer == alone && fewer.held == nil)
    }

    /// Damage anywhere in a block's streams (which only the vault's keys could make, after
    /// authentication) gives the same outcome shared as alone, compared whole: the records
    /// visited before a refusal, and the refusal. The other thread's skipping reads what
    /// rebuilding would, so where one fails the other does; what it rebuilt before it failed is
    /// visited first.
    @Test(arguments: [UInt16(0x0A03), 0x0D03, 0x3101])
    func damageIsReadTheSameSharedOrAlone(key: UInt16) throws {
        let (block, ids, _) = try Self.block(key, count: 600, seed: 99)
        var random = SeededGenerator(state: 7)
        var refused = 0, refusedLate = 0
        for _ in 0..<300 {
            var damaged = block
            let offset = Int.random(in: 30..<block.count, using: &random)
            damaged[offset] ^= UInt8.random(in: 1...255, using: &random)
            let alone = Self.rebuilt(damaged, ids: ids, sharing: nil)
            if alone.refusal != nil { refused += 1 }
            // Refused among the records the other thread rebuilds (from 375 on).
            if alone.refusal != nil, alone.records.count > 375 { refusedLate += 1 }
            for sharing in Self.sharings {
                #expect(Self.rebuilt(damaged, ids: ids, sharing: sharing) == alone, "offset \(offset), \(sharing)")
            }
        }
        #expect(refused > 100 && refusedLate > 10, "\(refused) refused, \(refusedLate) late")
    }

    /// A visitor's failure is the one thrown, with the other thread stopped: before the other
    /// thread's part (from 12,500 on), within the records it holds, and after this thread took
    /// over from where it stopped (it holds a few hundred).
    @Test func aVisitorsFailureStopsTheOtherThread() throws {
        let (block, ids, _) = try Self.block(0x0A03, count: 20_000, seed: 5)
        struct Stop: Error {}
        for (stopAt, heldBytes) in [
            (0, 64 << 20), (1, 64 << 20), (9_000, 64 << 20), (15_000, 64 << 20), (19_000, 20_000),
        ] {
            var visited = 0
            var thrown: Error?
            do {
                _ = try block.withUnsafeBytes { block in
                    try ids.withUnsafeBytes { ids in
                        try ColumnBlockDecoder.decode(block, ids: ids, sharing: .init(records: 2, heldBytes: heldBytes))
                        {
                            _, _, _ in
                            guard visited < stopAt else { throw Stop() }
                            visited += 1
                        }
                    }
                }
            } catch { thrown = error }
            #expect(thrown is Stop)
            #expect(visited == stopAt)
        }
    }

    /// A whole archive read with the automatic sharing (one group of 120,000 records, more than
    /// its threshold) gives every record back.
    @Test func anArchiveWithALargeGroupReadsBack() throws {
        let records = ColumnExportTests.changeLog(count: 120_000, seed: 31)
        // Two cores or more (one core rebuilds alone).
        if let automatic = ColumnBlockDecoder.Sharing.automatic { #expect(automatic.records <= records.count) }
        let (manifest, read, _) = try ColumnExportTests.roundTrip(records)
        #expect(manifest.recordCount == 120_000)
        #expect(
            Dictionary(uniqueKeysWithValues: read.map { ($0.0, $0.1) }) == Dictionary(uniqueKeysWithValues: records))
    }
}
