import CofferTestSupport
import Foundation
import Testing
import VaultCrypto
import VaultStore

@testable import CofferKit

/// Sync folders built by scripts/make-vectors.py from Specs/sync-format.md alone: `sync-v1` (its
/// keys file, two devices' enrolments and change files, one xz-packed, and a concurrent edit) and
/// `sync-v1-columns` (a device's snapshot in columns, packed body 2). The format's committed
/// fixtures: a device joins each with the passphrase and holds exactly the records the vector
/// lists, with the losing edit kept as a conflict, for as long as Coffer reads sync folders of
/// this version.
@Suite struct SyncVectorTests {
    struct Record: Decodable {
        let id: String
        let payload: String
    }
    struct File: Decodable {
        let folder: String
        let passphrase: String
        let vaultId: String
        let devices: [String: String]
        let conflicts: Int
        let losingPayload: String?
        let writes: Int?
        let packed: String?
        let records: [Record]
    }

    static let vectors = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../Specs/vectors").standardized

    static func vector(_ name: String) throws -> File {
        try JSONDecoder().decode(File.self, from: Data(contentsOf: Self.vectors.appendingPathComponent(name)))
    }

    /// Joining publishes the new device's enrolment: the committed folder is copied first.
    static func join(_ vector: File, in directory: TemporaryDirectory) throws -> (Ledger, SyncReport) {
        let folder = directory.path("folder")
        try FileManager.default.copyItem(at: vectors.appendingPathComponent(vector.folder), to: folder)
        return try SyncService.join(
            folder: folder, vault: directory.path("joined.coffer"),
            credential: .passphrase(try Passphrase(vector.passphrase)), deviceName: "fixture")
    }

    @Test func aFolderWrittenFromTheSpecAloneJoins() throws {
        let vector = try Self.vector("sync-v1.json")
        let directory = TemporaryDirectory()
        let (ledger, report) = try Self.join(vector, in: directory)
        #expect(ledger.vault.id.hex == vector.vaultId)
        #expect(ledger.vault.keyGeneration == 2)
        #expect(report.problems.isEmpty, "\(report.problems)")
        #expect(
            report.merged.map { "\($0.device): \($0.files) files, \($0.changes) writes" }.sorted()
                == ["desktop: 1 files, 2 writes", "laptop: 2 files, 104 writes"])
        let held = ledger.vault.records.filter { !RecordCodec.isLocal($0.payload) }
            .map { ($0.id.hex, Data($0.payload).hexString) }
        #expect(held.map(\.0) == vector.records.map(\.id))
        #expect(held.map(\.1) == vector.records.map(\.payload))
        #expect(ledger.syncConflicts.count == vector.conflicts)
        #expect(
            ledger.syncConflicts.first.flatMap { $0.conflict.loser.map { Data($0).hexString } } == vector.losingPayload)
        let known = Set(ledger.syncState!.state.devices.map { $0.key.hex })
        #expect(known == Set(vector.devices.values))
        #expect(ledger.syncState!.state.devices.values.map(\.name).sorted() == vector.devices.keys.sorted())
    }

    /// A snapshot in the archive's columns, written from the spec alone: its packed body decodes
    /// to the vector's writes, and a device that joins holds exactly its records.
    @Test func aSnapshotInColumnsWrittenFromTheSpecAloneJoins() throws {
        let vector = try Self.vector("sync-v1-columns.json")
        let changes = try SyncChanges.decode(packed: [UInt8](hexString: vector.packed!)!)
        #expect(changes.operations.count == vector.writes)
        #expect(changes.operations.filter { $0.payload == nil }.count == 1)
        let directory = TemporaryDirectory()
        let (ledger, report) = try Self.join(vector, in: directory)
        #expect(ledger.vault.id.hex == vector.vaultId)
        #expect(report.problems.isEmpty, "\(report.problems)")
        #expect(
            report.merged.map { "\($0.device): \($0.files) files, \($0.changes) writes" } == [
                "phone: 1 files, \(vector.writes!) writes"
            ])
        let held = ledger.vault.records.filter { !RecordCodec.isLocal($0.payload) }
            .map { ($0.id.hex, Data($0.payload).hexString) }
        #expect(held.map(\.0) == vector.records.map(\.id))
        #expect(held.map(\.1) == vector.records.map(\.payload))
        #expect(ledger.syncConflicts.isEmpty)
        #expect(Set(ledger.syncState!.state.devices.map { $0.key.hex }) == Set(vector.devices.values))
    }
}
