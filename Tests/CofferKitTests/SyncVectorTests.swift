import CofferTestSupport
import Foundation
import Testing
import VaultCrypto
import VaultStore

@testable import CofferKit

/// A sync folder built by scripts/make-vectors.py from Specs/sync-format.md alone (its keys
/// file, two devices' enrolments and change files, one xz-packed, and a concurrent edit). The
/// format's committed fixture: a device joins it with the passphrase and holds exactly the
/// records the vector lists, with the losing edit kept as a conflict, for as long as Coffer reads
/// sync folders of this version.
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
        let losingPayload: String
        let records: [Record]
    }

    static let vectors = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../Specs/vectors").standardized

    @Test func aFolderWrittenFromTheSpecAloneJoins() throws {
        let vector = try JSONDecoder().decode(
            File.self, from: Data(contentsOf: Self.vectors.appendingPathComponent("sync-v1.json")))
        let directory = TemporaryDirectory()
        // Joining publishes the new device's enrolment: the committed folder is copied first.
        let folder = directory.path("folder")
        try FileManager.default.copyItem(at: Self.vectors.appendingPathComponent(vector.folder), to: folder)
        let (ledger, report) = try SyncService.join(
            folder: folder, vault: directory.path("joined.coffer"),
            credential: .passphrase(try Passphrase(vector.passphrase)), deviceName: "fixture")
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
}
