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
    /// One block of `count` payloads of `key`'s layout (`ColumnExportTests.payload`: lists,
    /// options, unions, new and repeated texts, ids), its bytes, the id table, and the payloads.
    static func block(_ key: UInt16, count: Int, seed: UInt64) throws -> (
        bytes: [UInt8], ids: [UInt8], payloads: [[UInt8]]
    ) {
        var random = SeededGenerator(state: seed)
        let layout = ColumnExportTests.layouts[key]!
        let ids = (0..<50).map { _ in RecordID.random() }
        let payloads = (0..<count).map { _ in
            [UInt8(key >> 8), UInt8(key & 0xff)]
                + ColumnExportTests.payload(
                    layout.fields, ids: ids, strangers: ids.prefix(3).map { $0 }, random: &random)
        }
        var encoder = ColumnBlockEncoder(kind: UInt8(key >> 8), version: UInt8(key & 0xff), layout: layout)
        let positions = ColumnExport.TablePositions()
        for payload in payloads {
            try payload.withUnsafeBytes {
                try encoder.add(UnsafeRawBufferPointer(rebasing: $0[2...]), positions: positions)
            }
        }
        var bytes = encoder.header()
        encoder.forEachStream { _, stream in bytes += stream }
        return (bytes, positions.extraBytes, payloads)
    }

    /// Every record's position, kind and payload (after the caller's framing), or nil when the
    /// block is refused.
    static func rebuilt(_ block: [UInt8], ids: [UInt8], sharing: ColumnBlockDecoder.Sharing?) -> [[UInt8]]? {
        var out: [[UInt8]] = []
        let framing = 20
        let count = block.withUnsafeBytes { block in
            ids.withUnsafeBytes { ids in
                try? ColumnBlockDecoder.decode(block, ids: ids, framing: framing, sharing: sharing) {
                    position, kind, framed in
                    // Framing is the caller's to write: it must be there, and writable.
                    framed.storeBytes(of: UInt32(position), toByteOffset: 0, as: UInt32.self)
                    out.append([UInt8(truncatingIfNeeded: position), kind] + Array(framed[framing...]))
                }
            }
        }
        return count == out.count ? out : nil
    }

    static let sharings: [ColumnBlockDecoder.Sharing] = [
        .init(records: 2, heldBytes: 64 << 20),
        // The other thread stops after its first record, or after a few: this one goes on.
        .init(records: 2, heldBytes: 1),
        .init(records: 2, heldBytes: 3000),
    ]

    @Test(arguments: [UInt16(0x0A03), 0x0501, 0x0D03, 0x1601])
    func aSharedBlockRebuildsExactlyWhatOneThreadDoes(key: UInt16) throws {
        let (block, ids, payloads) = try Self.block(key, count: 4000, seed: UInt64(key))
        let alone = try #require(Self.rebuilt(block, ids: ids, sharing: nil))
        #expect(alone.map { Array($0[2...]) } == payloads)
        #expect(alone.enumerated().allSatisfy { $0.element[0] == UInt8(truncatingIfNeeded: $0.offset) })
        for sharing in Self.sharings {
            #expect(Self.rebuilt(block, ids: ids, sharing: sharing) == alone, "\(sharing)")
        }
        // Only from its threshold on: a block of fewer records is rebuilt by one thread.
        #expect(Self.rebuilt(block, ids: ids, sharing: .init(records: 4001, heldBytes: 1)) == alone)
    }

    /// Damage anywhere in a block's streams (which only the vault's keys could make, after
    /// authentication) gives the same outcome shared as alone: the same records, or a refusal.
    /// The other thread's skipping reads what rebuilding would, so where one fails the other does.
    @Test(arguments: [UInt16(0x0A03), 0x0D03])
    func damageIsReadTheSameSharedOrAlone(key: UInt16) throws {
        let (block, ids, _) = try Self.block(key, count: 600, seed: 99)
        var random = SeededGenerator(state: 7)
        var refused = 0
        for _ in 0..<300 {
            var damaged = block
            let offset = Int.random(in: 30..<block.count, using: &random)
            damaged[offset] ^= UInt8.random(in: 1...255, using: &random)
            let alone = Self.rebuilt(damaged, ids: ids, sharing: nil)
            if alone == nil { refused += 1 }
            for sharing in Self.sharings {
                #expect(Self.rebuilt(damaged, ids: ids, sharing: sharing) == alone, "offset \(offset), \(sharing)")
            }
        }
        #expect(refused > 100)
    }

    /// A failure while visiting the first records stops the other thread and is the one thrown.
    @Test func aVisitorsFailureStopsTheOtherThread() throws {
        let (block, ids, _) = try Self.block(0x0A03, count: 20_000, seed: 5)
        struct Stop: Error {}
        for stopAt in [0, 1, 9_000] {
            var visited = 0
            var thrown: Error?
            do {
                _ = try block.withUnsafeBytes { block in
                    try ids.withUnsafeBytes { ids in
                        try ColumnBlockDecoder.decode(block, ids: ids, sharing: .init(records: 2, heldBytes: 64 << 20))
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
        let layout = ColumnExportTests.layouts[0x0501]!
        var random = SeededGenerator(state: 31)
        let ids = (0..<120_000).map { _ in RecordID.random() }
        let records = ids.map { id in
            (
                id,
                Data(
                    [0x05, 0x01]
                        + ColumnExportTests.payload(
                            layout.fields, ids: ids, strangers: ids.prefix(3).map { $0 }, random: &random))
            )
        }
        // Two cores or more (one core rebuilds alone).
        if let automatic = ColumnBlockDecoder.Sharing.automatic { #expect(automatic.records <= records.count) }
        let (manifest, read, _) = try ColumnExportTests.roundTrip(records)
        #expect(manifest.recordCount == 120_000)
        #expect(
            Dictionary(uniqueKeysWithValues: read.map { ($0.0, $0.1) }) == Dictionary(uniqueKeysWithValues: records))
    }
}
