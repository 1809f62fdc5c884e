import CofferTestSupport
import Foundation
import GRDB
import Testing
import VaultCrypto

@testable import VaultStore

/// `UnlockedVaultFile.peek` reads one record without the others. What it reads must be exactly
/// what a full open gives, and every attack on what it reads (the record, its manifest bucket,
/// the commit record, the whole file rolled back) must be refused, not answered from.
@Suite struct PeekTests {
    let directory = TemporaryDirectory()
    var url: URL { directory.path("vault.coffer") }

    func unlocked(guard rollbackGuard: RollbackGuard? = nil) throws -> UnlockedVaultFile {
        try UnlockedVaultFile.unlock(at: url, with: .passphrase(passphrase()), guard: rollbackGuard)
    }

    func expectRefused(_ id: RecordID, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let file = try unlocked()
        #expect(throws: VaultError.self, sourceLocation: sourceLocation) { try file.peek(id) }
    }

    @Test func readsOneRecordAsTheFullOpenDoes() throws {
        let ids = try makeVault(at: url, payloads: ["alpha", "beta", "gamma"])
        let file = try unlocked()
        let vault = try file.open()
        for id in ids {
            let peek = try file.peek(id)
            #expect(peek.payload == Array(vault.record(id)!.payload))
            #expect(peek.commitCounter == vault.commitCounter)
            #expect(peek.deviceID == vault.deviceID)
        }
        #expect(try file.peek(.random()).payload == nil, "an id the commit record does not list is absent")
    }

    @Test func aFlippedByteIsRefused() throws {
        let ids = try makeVault(at: url, payloads: ["alpha", "beta"])
        var sealed = try sealedBytes(url, ids[1])
        sealed[40] ^= 0x01
        try withRawDatabase(url) {
            try $0.execute(sql: "UPDATE record SET sealed = ? WHERE id = ?", arguments: [sealed, Data(ids[1].bytes)])
        }
        try expectRefused(ids[1])
        #expect(try unlocked().peek(ids[0]).payload == Array("alpha".utf8), "the other record still reads")
    }

    @Test func anOlderVersionPutBackIsRefused() throws {
        let ids = try makeVault(at: url, payloads: ["balance 100"])
        let old = try withRawDatabase(url) { try Row.fetchOne($0, sql: "SELECT version, sealed FROM record")! }
        try Vault.open(at: url, with: .passphrase(passphrase())).apply([.put(ids[0], Data("balance 250".utf8))])
        try withRawDatabase(url) {
            try $0.execute(
                sql: "UPDATE record SET version = ?, sealed = ? WHERE id = ?",
                arguments: [old["version"] as Int64, old["sealed"] as Data, Data(ids[0].bytes)])
        }
        try expectRefused(ids[0])
    }

    @Test func aDeletedRecordIsRefused() throws {
        let ids = try makeVault(at: url, payloads: ["alpha"])
        try withRawDatabase(url) {
            try $0.execute(sql: "DELETE FROM record WHERE id = ?", arguments: [Data(ids[0].bytes)])
        }
        try expectRefused(ids[0])
    }

    @Test func anOlderManifestBucketIsRefused() throws {
        let ids = try makeVault(at: url, payloads: ["balance 100"])
        let bucket = ids[0].bucket
        let oldBucket = try withRawDatabase(url) {
            try Data.fetchOne($0, sql: "SELECT sealed FROM manifest WHERE bucket = ?", arguments: [bucket])!
        }
        let old = try withRawDatabase(url) { try Row.fetchOne($0, sql: "SELECT version, sealed FROM record")! }
        try Vault.open(at: url, with: .passphrase(passphrase())).apply([.put(ids[0], Data("balance 250".utf8))])
        // The record and its bucket both put back as they were: only the commit record's digest tells.
        try withRawDatabase(url) {
            try $0.execute(sql: "UPDATE manifest SET sealed = ? WHERE bucket = ?", arguments: [oldBucket, bucket])
            try $0.execute(
                sql: "UPDATE record SET version = ?, sealed = ? WHERE id = ?",
                arguments: [old["version"] as Int64, old["sealed"] as Data, Data(ids[0].bytes)])
        }
        try expectRefused(ids[0])
    }

    @Test func anAlteredCommitRecordIsRefused() throws {
        let ids = try makeVault(at: url, payloads: ["alpha"])
        try withRawDatabase(url) { db in
            var sealed = [UInt8](try Data.fetchOne(db, sql: "SELECT sealed FROM commit_record WHERE id = 1")!)
            sealed[30] ^= 0x01
            try db.execute(sql: "UPDATE commit_record SET sealed = ? WHERE id = 1", arguments: [Data(sealed)])
        }
        try expectRefused(ids[0])
    }

    /// After a passphrase change that keeps the master key, the older header is put back: the
    /// old passphrase unlocks it, but the commit record names today's header.
    @Test func anOlderHeaderPutBackIsRefused() throws {
        let ids = try makeVault(at: url, payloads: ["alpha"])
        let vault = try Vault.open(at: url, with: .passphrase(passphrase()))
        try vault.apply([.put(RecordID.random(), Data("x".utf8))])  // format 2: the commit names the header
        let oldHeader = try withRawDatabase(url) { try Data.fetchOne($0, sql: "SELECT body FROM header")! }
        try vault.changePassphrase(to: passphrase("a new passphrase"), keepMasterKey: true)
        try withRawDatabase(url) {
            try $0.execute(sql: "UPDATE header SET body = ? WHERE id = 1", arguments: [oldHeader])
        }
        let file = try unlocked()
        #expect {
            try file.peek(ids[0])
        } throws: { ($0 as? VaultError)?.code == .headerTampered }
    }

    @Test func aWrongTypeInARowIsDamageNotACrash() throws {
        let ids = try makeVault(at: url, payloads: ["alpha"])
        try withRawDatabase(url) {
            try $0.execute(sql: "UPDATE record SET version = X'00' WHERE id = ?", arguments: [Data(ids[0].bytes)])
        }
        try expectRefused(ids[0])
    }

    @Test func aWholeFileRolledBackIsRefusedByTheHighWaterMark() throws {
        let ids = try makeVault(at: url, payloads: ["balance 100"])
        let marks = RollbackGuard(directory: directory.path("state"))
        let older = directory.path("older.coffer")
        try FileManager.default.copyItem(at: url, to: older)
        try UnlockedVaultFile.unlock(at: url, with: .passphrase(passphrase()), guard: marks).open()
            .apply([.put(ids[0], Data("balance 250".utf8))])
        try FileManager.default.removeItem(at: url)
        try FileManager.default.copyItem(at: older, to: url)
        let file = try unlocked(guard: marks)
        #expect {
            try file.peek(ids[0])
        } throws: { ($0 as? VaultError)?.code == .rolledBack }
    }

    @Test func aPeekRaisesTheHighWaterMark() throws {
        let ids = try makeVault(at: url, payloads: ["balance 100"])
        let marks = RollbackGuard(directory: directory.path("state"))
        let older = directory.path("older.coffer")
        try FileManager.default.copyItem(at: url, to: older)
        try Vault.open(at: url, with: .passphrase(passphrase())).apply([.put(ids[0], Data("balance 250".utf8))])
        _ = try unlocked(guard: marks).peek(ids[0])  // the first this machine sees of the file
        try FileManager.default.removeItem(at: url)
        try FileManager.default.copyItem(at: older, to: url)
        #expect {
            try Vault.open(at: url, with: .passphrase(passphrase()), guard: marks)
        } throws: { ($0 as? VaultError)?.code == .rolledBack }
    }
}
