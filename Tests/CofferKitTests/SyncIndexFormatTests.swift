import CofferTestSupport
import FinanceCore
import Foundation
import Testing
import VaultCrypto
import VaultStore

@testable import CofferKit

/// The sync index's bytes as scripts/make-vectors.py writes them from Specs/sync-format.md §7
/// alone, at both versions: Coffer reads each to its entries, takes the digests the vector holds
/// of the payloads, and writes the same bytes back. A device whose index is at version 1 keeps
/// publishing exactly its own edits.
@Suite struct SyncIndexFormatTests {
    struct Entry: Decodable {
        let id: String
        let deleted: Bool
        let clock: UInt64
        let device: String
        let payload: String?
    }
    struct Index: Decodable {
        let version: UInt8
        let hex: String
        let entries: [Entry]
    }
    struct SipVector: Decodable {
        let key: String
        let input: String
        let output: String
    }
    struct File: Decodable {
        let siphash24: SipVector
        let indexes: [Index]
    }

    static let file = try! JSONDecoder().decode(
        File.self,
        from: Data(
            contentsOf: URL(fileURLWithPath: #filePath)
                .deletingLastPathComponent().appendingPathComponent("../../Specs/vectors/sync-index.json").standardized)
    )

    func bytes(_ hex: String) -> [UInt8] {
        stride(from: 0, to: hex.count, by: 2).map { UInt8(hex.dropFirst($0).prefix(2), radix: 16)! }
    }

    @Test func sipHashGivesThePapersVector() throws {
        let vector = Self.file.siphash24
        let key = try SipHashKey(SecureBytes(copying: bytes(vector.key)))
        let output = bytes(vector.input).withUnsafeBytes { SipHash24.hash($0, key: key) }
        #expect(String(output, radix: 16) == vector.output)
    }

    @Test func everyVersionReadsToItsEntriesAndIsWrittenAgainAsItWas() throws {
        #expect(Self.file.indexes.map(\.version) == [1, 2])
        for vector in Self.file.indexes {
            let index = try SyncIndex(decoding: SyncIndexData(bytes: bytes(vector.hex)))
            #expect(index.digester.version == vector.version)
            #expect(index.ids.map(\.hex) == vector.entries.map(\.id))
            for (entry, expected) in zip(index.entries, vector.entries) {
                #expect(entry.stamp.clock == expected.clock)
                #expect(entry.stamp.device.hex == expected.device)
                #expect((entry.digest == nil) == expected.deleted)
                if let payload = expected.payload {
                    #expect(entry.digest == index.digester.digest(of: bytes(payload)), "version \(vector.version)")
                    #expect(entry.digest != index.digester.digest(of: bytes(payload) + [0]))
                }
            }
            #expect(index.encoded().bytes == bytes(vector.hex), "version \(vector.version) is kept as it was read")
        }
    }

    @Test func eachNewIndexDigestsUnderAKeyOfItsOwnThatItKeeps() throws {
        let payload = Array("the same payload".utf8)
        let (first, second) = (SyncIndex(), SyncIndex())
        #expect(first.digester.version == 2)
        #expect(first.digester.digest(of: payload) != second.digester.digest(of: payload))
        let readBack = try SyncIndex(decoding: first.encoded())
        #expect(readBack.digester.digest(of: payload) == first.digester.digest(of: payload))
    }

    /// A joining device encodes its streamed snapshot straight from columns: the bytes are the
    /// ones the same entries give one by one, in id order, the merge's entry kept where an id is
    /// in both, the snapshot's deletes written as tombstones.
    @Test func aStreamedSnapshotEncodesAsItsEntriesWould() throws {
        let (snapshotDevice, otherDevice) = (SyncDeviceID.random(), SyncDeviceID.random())
        var merged = SyncIndex()
        let shared = RecordID.random()
        let mergedOnly = (0..<5).map { _ in RecordID.random() }
        merged.update(
            unsorted: ([shared] + mergedOnly).enumerated().map { position, id in
                (id, .init(stamp: SyncStamp(clock: 900 + UInt64(position), device: otherDevice), digest: nil))
            })
        var streamed = StreamedIndexEntries(device: snapshotDevice, capacity: 0)
        var expected = merged
        var oneByOne: [(id: RecordID, entry: SyncIndex.Entry)] = []
        for position in 0..<300 {
            let id = position == 17 ? shared : RecordID.random()
            let digest = merged.digester.digest(of: Array("payload \(position)".utf8))
            streamed.put(id, clock: UInt64(position + 1))
            streamed.written(id, digest: digest)
            if id != shared {
                oneByOne.append(
                    (id, .init(stamp: SyncStamp(clock: UInt64(position + 1), device: snapshotDevice), digest: digest)))
            }
        }
        for position in 0..<4 {
            let id = RecordID.random()
            streamed.delete(id, clock: 500 + UInt64(position))
            oneByOne.append(
                (id, .init(stamp: SyncStamp(clock: 500 + UInt64(position), device: snapshotDevice), digest: nil)))
        }
        expected.update(unsorted: oneByOne)
        let encoded = merged.encoded(adding: streamed)
        let readBack = try SyncIndex(decoding: encoded)
        #expect(readBack.count == 5 + 1 + 299 + 4)
        #expect(readBack.ids == expected.ids)
        #expect(readBack.entries == expected.entries)
        #expect(readBack.entry(shared)?.stamp == SyncStamp(clock: 900, device: otherDevice))
        #expect(encoded.bytes.count == expected.encoded().bytes.count)
    }

    @Test func anUnknownVersionOrACutKeyIsRefused() throws {
        let version2 = bytes(Self.file.indexes[1].hex)
        for damaged in [[3] + version2.dropFirst(), Array(version2.prefix(9)), Array(version2.dropLast())] {
            #expect(throws: CofferError.self) { try SyncIndex(decoding: SyncIndexData(bytes: damaged)) }
        }
    }

    /// A vault synced by an earlier Coffer holds its index at version 1 (BLAKE2b-128 digests):
    /// its next syncs publish only what changed, and keep the index at version 1.
    @Test func aDeviceWithAVersion1IndexPublishesOnlyItsEdits() throws {
        let today = date("2026-11-24")
        let pair = try SyncAttackTests.Pair(passphrase: "sync index version 1", today: today)
        let stored = try #require(pair.a.syncIndex)
        let current = try SyncIndex(decoding: stored.data)
        #expect(current.digester.version == 2)
        try pair.a.writeWithoutHistory([(stored.id, .syncIndex(SyncIndexData(bytes: version1(current, of: pair.a))))])
        #expect(try SyncService.sync(pair.a).published.isEmpty, "nothing changed")

        try pair.a.recordValue(of: try pair.a.account(named: "Savings"), amount: Money(minorUnits: 250), on: today)
        let report = try SyncService.sync(pair.a)
        #expect(report.published.first?.changes == 2, "the new value and its log entry, nothing else")
        #expect(pair.a.syncIndex?.data.bytes.first == 1, "the index stays at version 1")
        #expect(try SyncService.sync(pair.a).published.isEmpty)
        _ = try SyncService.sync(pair.b)
        #expect(pair.bValues == [100, 250])
    }

    /// `index` at version 1, written from the spec: its digests BLAKE2b-128 of the payloads the
    /// vault holds (an indexed record the vault no longer holds would be published as deleted).
    func version1(_ index: SyncIndex, of ledger: Ledger) -> [UInt8] {
        var devices: [SyncDeviceID] = []
        for entry in index.entries where !devices.contains(entry.stamp.device) { devices.append(entry.stamp.device) }
        var out: [UInt8] = [1]
        withUnsafeBytes(of: UInt16(devices.count).littleEndian) { out += $0 }
        for device in devices { out += device.bytes }
        withUnsafeBytes(of: UInt32(index.count).littleEndian) { out += $0 }
        for (id, entry) in zip(index.ids, index.entries) {
            out += id.bytes
            let payload = entry.digest == nil ? nil : ledger.vault.record(id).map { Array($0.payload) }
            out.append(payload == nil ? 1 : 0)
            withUnsafeBytes(of: entry.stamp.clock.littleEndian) { out += $0 }
            withUnsafeBytes(of: UInt16(devices.firstIndex(of: entry.stamp.device)!).littleEndian) { out += $0 }
            if let payload { out += BLAKE2b.hash(payload, outputByteCount: 16) }
        }
        return out
    }
}
