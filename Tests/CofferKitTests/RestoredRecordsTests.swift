import CofferTestSupport
import FinanceCore
import Foundation
import Testing
import VaultBackup
import VaultCrypto
import VaultStore

@testable import CofferKit

/// A restore's records checked on another thread while this one writes: every record arrives,
/// in order, migrated when older, whichever batch it falls in; a record that does not decode
/// stops everything, in the first batch, a middle one or the last.
@Suite struct RestoredRecordsTests {
    let passphrase = "restored records passphrase"
    let eur = try! Currency.named("EUR")
    /// Settings at payload version 1 (currency only): restored, they are re-encoded at today's
    /// version with receivables on (PayloadPinTests).
    static let settingsVersionOne: [UInt8] = [1, 1, 3, 0x45, 0x55, 0x52]

    /// An unlocked archive of a small vault: what a restore needs to build a vault aside.
    func unlockedArchive(in directory: TemporaryDirectory) throws -> BackupService.UnlockedArchive {
        let ledger = try Ledger.create(
            at: directory.path("v.coffer"), passphrase: try Passphrase(passphrase), parameters: testParameters,
            currency: .gbp)
        let folder = directory.path("backups")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let outcomes = try BackupService.create(
            ledger, to: [folder], appVersion: "test", today: date("2026-11-22"), acceptRollback: false
        ) { _ in }
        guard case .written(let archive, _, _) = outcomes[0].outcome else { throw CofferError(.damaged, "no archive") }
        return try BackupService.unlock(
            BackupService.inspect(archive, vaultURL: nil), credential: .passphrase(try Passphrase(passphrase)))
    }

    /// Ids in increasing order, so that the restored vault's records can be compared by position.
    func ids(_ count: Int) -> [RecordID] {
        (0..<count).map {
            try! RecordID([UInt8](repeating: 0, count: 8) + withUnsafeBytes(of: UInt64($0 + 1).bigEndian, Array.init))
        }
    }

    @Test func recordsOfEveryBatchArriveAndOlderOnesAreMigrated() throws {
        let directory = TemporaryDirectory()
        let unlocked = try unlockedArchive(in: directory)
        let count = RestoredRecords.batchRecords * 3 + 123
        let ids = ids(count)
        let current = RecordCodec.encode(.settings(VaultSettings(currency: eur, includeReceivables: false)))
        let target = directory.path("restored.coffer")
        let built = try Vault.restoreAside(at: target, unlocked: unlocked.unlock, replacing: false) { writer in
            let records = RestoredRecords(into: writer)
            for (position, id) in ids.enumerated() {
                let payload = position % 3 == 0 ? Self.settingsVersionOne : current
                try payload.withUnsafeBytes { try records.add(id, $0) }
            }
            try records.finish()
        }
        try built.moveIntoPlace(replacing: false, keepingOldAt: nil, guard: nil)
        let vault = try Vault.open(at: target, with: .passphrase(try Passphrase(passphrase)))
        var restored: [RecordID: [UInt8]] = [:]
        try vault.forEachRecord { id, payload in restored[id] = Array(payload) }
        #expect(restored.count == count)
        let migrated = RecordCodec.encode(.settings(VaultSettings(currency: eur, includeReceivables: true)))
        #expect(migrated != current)
        for (position, id) in ids.enumerated() {
            #expect(restored[id] == (position % 3 == 0 ? migrated : current), "record \(position)")
        }
    }

    /// Records of 300 KB push a batch past the room it keeps (1 MiB and 64 KiB): its buffer grows
    /// by hand (the old one wiped) and every record still arrives whole, big and small.
    @Test func largeRecordsGrowABatchAndArriveWhole() throws {
        let directory = TemporaryDirectory()
        let unlocked = try unlockedArchive(in: directory)
        let ids = ids(60)
        let small = RecordCodec.encode(.settings(VaultSettings(currency: eur, includeReceivables: false)))
        let payloads = ids.enumerated().map { position, id in
            position % 3 == 0
                ? small
                : RecordCodec.encode(
                    .note(
                        Note(
                            id: id.uuid, title: "Note \(position)",
                            body: String(repeating: "ledger line \(position); ", count: 20_000),
                            created: date("2026-11-22"), updated: 1_800_000_000)))
        }
        #expect(payloads.filter { $0.count > 290_000 }.count == 40)
        let target = directory.path("restored.coffer")
        let built = try Vault.restoreAside(at: target, unlocked: unlocked.unlock, replacing: false) { writer in
            let records = RestoredRecords(into: writer)
            for (id, payload) in zip(ids, payloads) { try payload.withUnsafeBytes { try records.add(id, $0) } }
            try records.finish()
        }
        try built.moveIntoPlace(replacing: false, keepingOldAt: nil, guard: nil)
        let vault = try Vault.open(at: target, with: .passphrase(try Passphrase(passphrase)))
        var restored: [RecordID: [UInt8]] = [:]
        try vault.forEachRecord { id, payload in restored[id] = Array(payload) }
        #expect(restored == Dictionary(uniqueKeysWithValues: zip(ids, payloads)))
    }

    /// A settings record whose fields stop after the currency's length.
    static let unreadable: [UInt8] = [1, 2, 3]

    @Test(arguments: [0, RestoredRecords.batchRecords + 17, RestoredRecords.batchRecords * 3 + 100])
    func anUnreadableRecordStopsTheRestoreWhereverItIs(position bad: Int) throws {
        let directory = TemporaryDirectory()
        let unlocked = try unlockedArchive(in: directory)
        let ids = ids(RestoredRecords.batchRecords * 3 + 123)
        let current = RecordCodec.encode(.settings(VaultSettings(currency: eur, includeReceivables: false)))
        let target = directory.path("restored.coffer")
        var added = 0
        let error = #expect(throws: CofferError.self) {
            _ = try Vault.restoreAside(at: target, unlocked: unlocked.unlock, replacing: false) { writer in
                let records = RestoredRecords(into: writer)
                for (position, id) in ids.enumerated() {
                    try (position == bad ? Self.unreadable : current).withUnsafeBytes { try records.add(id, $0) }
                    added += 1
                }
                try records.finish()
            }
        }
        #expect(error?.code == .damaged)
        #expect(error?.errorDescription?.contains(ids[bad].hex) == true)
        // Found by the other thread at most two batches after it was read, never later.
        #expect(added < bad + 2 * RestoredRecords.batchRecords + 1)
        #expect(!FileManager.default.fileExists(atPath: target.path))
        let left = try FileManager.default.contentsOfDirectory(atPath: directory.url.path)
        #expect(!left.contains { $0.hasSuffix(".building") }, "nothing half built is left: \(left)")
    }
}
