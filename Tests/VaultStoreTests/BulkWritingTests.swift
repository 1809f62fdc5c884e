import CofferTestSupport
import Foundation
import Testing
import VaultCrypto

@testable import VaultStore

/// A bulk load (`Vault.writeInBulk`) takes records the vault does not hold, each once: an id
/// given twice, one already in the vault, or one an ordinary change of the same load also
/// writes is refused, and the vault is left as it was. Ids are checked by their high halves
/// first, so ids that share one but differ in the other must still load.
@Suite struct BulkWritingTests {
    let directory = TemporaryDirectory()
    var url: URL { directory.path("vault.coffer") }

    func load(_ ids: [RecordID], changes: [RecordChange] = [], into vault: Vault) throws {
        try vault.writeInBulk { writer in
            for (index, id) in ids.enumerated() {
                try Data("record \(index)".utf8).withUnsafeBytes {
                    try writer.append(id, group: .unsorted, payload: $0)
                }
            }
            return changes
        }
    }

    static func id(_ high: UInt64, _ low: UInt64) throws -> RecordID {
        try RecordID(withUnsafeBytes(of: (high.bigEndian, low.bigEndian), Array.init))
    }

    @Test func anIDGivenTwiceOrAlreadyThereIsRefusedAndNothingChanges() throws {
        let vault = try Vault.create(at: url, passphrase: passphrase(), parameters: testParameters)
        let kept = RecordID.random()
        try vault.apply([.put(kept, Data("kept".utf8))])
        let many = (0..<5_000).map { _ in RecordID.random() }
        let attempts: [(String, [RecordID], [RecordChange])] = [
            ("an id given twice", many + [many[1_234]], []),
            ("an id given twice, far apart", [many[4_999]] + many, []),
            ("an id the vault holds", many + [kept], []),
            ("an id an ordinary change writes too", many, [.put(many[4_321], Data("again".utf8))]),
        ]
        for (what, ids, changes) in attempts {
            #expect(throws: VaultError.self, "\(what)") { try load(ids, changes: changes, into: vault) }
            let reopened = try Vault.open(at: url, with: .passphrase(passphrase()))
            #expect(reopened.records.map(\.id) == [kept], "\(what)")
            #expect(reopened.commitCounter == 1, "\(what)")
        }
    }

    @Test func idsThatShareAHighHalfStillLoad() throws {
        let vault = try Vault.create(at: url, passphrase: passphrase(), parameters: testParameters)
        let shared = try (0..<3).map { try Self.id(42, UInt64($0)) }
        let ids = (0..<2_000).map { _ in RecordID.random() } + shared + [try Self.id(7, 42)]
        try load(ids.shuffled(), into: vault)
        let reopened = try Vault.open(at: url, with: .passphrase(passphrase()))
        #expect(Set(reopened.records.map(\.id)) == Set(ids))
        #expect(try reopened.verify().recordCount == ids.count)

        // An id given twice among others that share its high half is still found.
        let twice = try [Self.id(99, 1), Self.id(99, 2), Self.id(99, 1)]
        #expect(throws: VaultError.self) { try load(twice, into: reopened) }
        #expect(try Vault.open(at: url, with: .passphrase(passphrase())).records.count == ids.count)
    }
}
