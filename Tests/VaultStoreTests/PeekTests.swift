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

    /// The group `makeVault` puts a payload starting with `letter` in.
    func group(_ letter: Character) -> PageGroup { PageGroup(rawValue: UInt64(letter.asciiValue!)) }

    func expectRefused(_ id: RecordID, in letter: Character, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let file = try unlocked()
        #expect(throws: VaultError.self, sourceLocation: sourceLocation) { try file.peek(id, in: group(letter)) }
    }

    @Test func readsOneRecordAsTheFullOpenDoes() throws {
        let ids = try makeVault(at: url, payloads: ["alpha", "beta", "gamma"])
        let file = try unlocked()
        let vault = try file.open()
        for (id, letter) in zip(ids, "abg") {
            let peek = try file.peek(id, in: group(letter))
            #expect(peek.payload == Array(vault.record(id)!.payload))
            #expect(peek.commitCounter == vault.commitCounter)
            #expect(peek.deviceID == vault.deviceID)
        }
        #expect(try file.peek(.random(), in: group("a")).payload == nil, "an id no index lists is absent")
        #expect(try file.peek(ids[0], in: group("z")).payload == nil, "a group the commit does not list is empty")
    }

    func replacePage(of id: RecordID, with sealed: Data) throws {
        let locator = try locators(url, id).page
        try withRawDatabase(url) {
            try $0.execute(sql: "UPDATE page SET sealed = ? WHERE locator = ?", arguments: [sealed, locator])
        }
    }

    @Test func aFlippedByteIsRefused() throws {
        let ids = try makeVault(at: url, payloads: ["alpha", "beta"])
        var sealed = try sealedPage(url, ids[1])
        sealed[40] ^= 0x01
        try replacePage(of: ids[1], with: sealed)
        try expectRefused(ids[1], in: "b")
        #expect(
            try unlocked().peek(ids[0], in: group("a")).payload == Array("alpha".utf8), "the other page still reads")
    }

    @Test func anOlderPagePutBackIsRefused() throws {
        let ids = try makeVault(at: url, payloads: ["balance 100"])
        let old = try sealedPage(url, ids[0])
        try Vault.open(at: url, with: .passphrase(passphrase())).apply([.put(ids[0], Data("balance 250".utf8))])
        try replacePage(of: ids[0], with: old)
        try expectRefused(ids[0], in: "b")
    }

    @Test func aDeletedPageIsRefused() throws {
        let ids = try makeVault(at: url, payloads: ["alpha"])
        let locator = try locators(url, ids[0]).page
        try withRawDatabase(url) { try $0.execute(sql: "DELETE FROM page WHERE locator = ?", arguments: [locator]) }
        try expectRefused(ids[0], in: "a")
    }

    @Test func anOlderIndexIsRefused() throws {
        let ids = try makeVault(at: url, payloads: ["balance 100"])
        let (pageLocator, indexLocator) = try locators(url, ids[0])
        let oldIndex = try withRawDatabase(url) {
            try Data.fetchOne($0, sql: "SELECT sealed FROM page_index WHERE locator = ?", arguments: [indexLocator])!
        }
        let oldPage = try sealedPage(url, ids[0])
        try Vault.open(at: url, with: .passphrase(passphrase())).apply([.put(ids[0], Data("balance 250".utf8))])
        // The page and its index both put back as they were: only the commit record's digest tells.
        try withRawDatabase(url) {
            try $0.execute(
                sql: "UPDATE page_index SET sealed = ? WHERE locator = ?", arguments: [oldIndex, indexLocator])
            try $0.execute(sql: "UPDATE page SET sealed = ? WHERE locator = ?", arguments: [oldPage, pageLocator])
        }
        try expectRefused(ids[0], in: "b")
    }

    @Test func anAlteredCommitRecordIsRefused() throws {
        let ids = try makeVault(at: url, payloads: ["alpha"])
        try withRawDatabase(url) { db in
            var sealed = [UInt8](try Data.fetchOne(db, sql: "SELECT sealed FROM commit_record WHERE id = 1")!)
            sealed[30] ^= 0x01
            try db.execute(sql: "UPDATE commit_record SET sealed = ? WHERE id = 1", arguments: [Data(sealed)])
        }
        try expectRefused(ids[0], in: "a")
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
            try file.peek(ids[0], in: group("a"))
        } throws: { ($0 as? VaultError)?.code == .headerTampered }
    }

    @Test func aWrongTypeInARowIsDamageNotACrash() throws {
        let ids = try makeVault(at: url, payloads: ["alpha"])
        let locator = try locators(url, ids[0]).page
        try withRawDatabase(url) {
            try $0.execute(sql: "UPDATE page SET sealed = 42 WHERE locator = ?", arguments: [locator])
        }
        try expectRefused(ids[0], in: "a")
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
            try file.peek(ids[0], in: group("b"))
        } throws: { ($0 as? VaultError)?.code == .rolledBack }
    }

    @Test func aPeekRaisesTheHighWaterMark() throws {
        let ids = try makeVault(at: url, payloads: ["balance 100"])
        let marks = RollbackGuard(directory: directory.path("state"))
        let older = directory.path("older.coffer")
        try FileManager.default.copyItem(at: url, to: older)
        try Vault.open(at: url, with: .passphrase(passphrase())).apply([.put(ids[0], Data("balance 250".utf8))])
        _ = try unlocked(guard: marks).peek(ids[0], in: group("b"))  // the first this machine sees of the file
        try FileManager.default.removeItem(at: url)
        try FileManager.default.copyItem(at: older, to: url)
        #expect {
            try Vault.open(at: url, with: .passphrase(passphrase()), guard: marks)
        } throws: { ($0 as? VaultError)?.code == .rolledBack }
    }

    /// `UnlockedVaultFile.verify` (what `coffer verify` runs) streams the records by, keeping
    /// none: it must find what a full open finds, and answer to the high-water mark as one does.
    @Test func aStreamingVerifyFindsWhatAFullOpenFinds() throws {
        let ids = try makeVault(at: url, payloads: ["alpha", "beta", "gamma"])
        let marks = RollbackGuard(directory: directory.path("state"))
        let report = try unlocked(guard: marks).verify()
        #expect(report.recordCount == 3)
        #expect(report.commitCounter == (try unlocked().open().commitCounter))
        let older = directory.path("older.coffer")
        try FileManager.default.copyItem(at: url, to: older)
        try unlocked().open().apply([.put(ids[0], Data("alpha 2".utf8))])
        #expect(try unlocked(guard: marks).verify().commitCounter == report.commitCounter + 1, "the mark raised")
        try FileManager.default.removeItem(at: url)
        try FileManager.default.copyItem(at: older, to: url)
        #expect {
            try unlocked(guard: marks).verify()
        } throws: { ($0 as? VaultError)?.code == .rolledBack }
    }

    @Test func aStreamingVerifyNamesADamagedRecord() throws {
        let ids = try makeVault(at: url, payloads: ["alpha", "beta", "gamma"])
        var sealed = try sealedPage(url, ids[1])
        sealed[40] ^= 0x01
        try replacePage(of: ids[1], with: sealed)
        #expect {
            try unlocked().verify()
        } throws: { error in
            guard let error = error as? VaultError, error.code == .integrityFailure else { return false }
            return error.problems.contains { $0.recordID == ids[1] && $0.kind == .recordDamaged }
        }
    }
}
