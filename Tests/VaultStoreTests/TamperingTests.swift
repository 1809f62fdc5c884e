import CofferTestSupport
import Foundation
import GRDB
import Testing
import VaultCrypto

@testable import VaultStore

/// Each attack is made with SQLite directly on the file, then must be caught both when the vault
/// is opened and by `verify()` on a vault that was already open, naming every record concerned.
/// Records whose payloads start with the same letter share a page (`byFirstLetter`).
@Suite struct TamperingTests {
    let directory = TemporaryDirectory()
    var url: URL { directory.path("vault.coffer") }

    /// Opens the vault cleanly, runs `attack` on the file, then checks both detection paths.
    func expectDetected(
        _ kind: IntegrityProblem.Kind, naming ids: [RecordID?], sourceLocation: SourceLocation = #_sourceLocation,
        attack: (Database) throws -> Void
    ) throws {
        let openBefore = try Vault.open(at: url, with: .passphrase(passphrase()))
        try withRawDatabase(url, attack)
        for id in ids {
            expectIntegrityFailure(naming: id, kind: kind, sourceLocation: sourceLocation) {
                _ = try openBefore.verify()
            }
            expectIntegrityFailure(naming: id, kind: kind, sourceLocation: sourceLocation) {
                _ = try Vault.open(at: url, with: .passphrase(passphrase()))
            }
        }
    }

    func problems(_ body: () throws -> Void) -> [IntegrityProblem] {
        do {
            try body()
        } catch let error as VaultError {
            return error.problems
        } catch {}
        return []
    }

    @Test func aFlippedByteNamesEveryRecordOfItsPageAndNoOther() throws {
        let ids = try makeVault(at: url, payloads: ["apple", "avocado", "banana"])
        var sealed = try sealedPage(url, ids[0])
        let locator = try locators(url, ids[0]).page
        sealed[40] ^= 0x01
        try expectDetected(.recordDamaged, naming: [ids[0], ids[1]]) { db in
            try db.execute(sql: "UPDATE page SET sealed = ? WHERE locator = ?", arguments: [sealed, locator])
        }
        let found = problems { _ = try Vault.open(at: url, with: .passphrase(passphrase())) }
        #expect(!found.contains { $0.recordID == ids[2] })
    }

    @Test func swappedPagesAreBothNamed() throws {
        let ids = try makeVault(at: url, payloads: ["alpha", "beta"])
        let (first, second) = (try locators(url, ids[0]).page, try locators(url, ids[1]).page)
        let (firstSealed, secondSealed) = (try sealedPage(url, ids[0]), try sealedPage(url, ids[1]))
        try expectDetected(.recordDamaged, naming: [ids[0], ids[1]]) { db in
            try db.execute(sql: "UPDATE page SET sealed = ? WHERE locator = ?", arguments: [secondSealed, first])
            try db.execute(sql: "UPDATE page SET sealed = ? WHERE locator = ?", arguments: [firstSealed, second])
        }
    }

    @Test func anOlderPagePutBackNamesItsRecords() throws {
        let ids = try makeVault(at: url, payloads: ["balance 100", "budget"])
        let locator = try locators(url, ids[0]).page
        let old = try sealedPage(url, ids[0])
        try Vault.open(at: url, with: .passphrase(passphrase())).apply([.put(ids[0], Data("balance 250".utf8))])
        try expectDetected(.recordStale, naming: [ids[0], ids[1]]) { db in
            try db.execute(sql: "UPDATE page SET sealed = ? WHERE locator = ?", arguments: [old, locator])
        }
    }

    @Test func aPageSealedAgainWithOtherContentIsStale() throws {
        // Authentic, at its own row, but not the ciphertext the index lists: only the tag tells.
        let ids = try makeVault(at: url, payloads: ["one"])
        let vault = try Vault.open(at: url, with: .passphrase(passphrase()))
        let locator = vault.pageLocators(of: ids[0])!.page
        let forged = PageCodec.seal(
            PageCodec.encode([PageRecord(id: ids[0], version: 1, payload: Data("forged".utf8))]),
            key: vault.operationalKeys.records, locator: locator, vaultID: vault.id
        ).0
        try expectDetected(.recordStale, naming: [ids[0]]) { db in
            try db.execute(sql: "UPDATE page SET sealed = ? WHERE locator = ?", arguments: [forged, locator])
        }
    }

    @Test func aDeletedPageNamesItsRecords() throws {
        let ids = try makeVault(at: url, payloads: ["alpha", "gamma", "gold"])
        let locator = try locators(url, ids[1]).page
        try expectDetected(.recordMissing, naming: [ids[1], ids[2]]) { db in
            try db.execute(sql: "DELETE FROM page WHERE locator = ?", arguments: [locator])
        }
    }

    @Test func aPageCopiedToAnotherRowIsFound() throws {
        let ids = try makeVault(at: url, payloads: ["alpha"])
        let sealed = try sealedPage(url, ids[0])
        try expectDetected(.recordUnexpected, naming: [nil]) { db in
            try db.execute(
                sql: "INSERT INTO page (locator, sealed) VALUES (?, ?)",
                arguments: [Data(SecureRandom.bytes(count: 16)), sealed])
        }
    }

    @Test func aPageMovedToAnotherRowIsMissingAndUnexpected() throws {
        let ids = try makeVault(at: url, payloads: ["alpha"])
        let locator = try locators(url, ids[0]).page
        try expectDetected(.recordMissing, naming: [ids[0]]) { db in
            try db.execute(
                sql: "UPDATE page SET locator = ? WHERE locator = ?",
                arguments: [Data(SecureRandom.bytes(count: 16)), locator])
        }
        #expect(
            problems { _ = try Vault.open(at: url, with: .passphrase(passphrase())) }.contains {
                $0.kind == .recordUnexpected
            })
    }

    /// A primary key of BLOB affinity takes a text copy of a key as another key: every page
    /// copied that way must be found, not read twice (the review of format 3 found it was).
    @Test func pagesAndIndexesCopiedAsTextAreFound() throws {
        let ids = try makeVault(at: url, payloads: ["alpha", "beta"])
        try expectDetected(.recordUnexpected, naming: [nil]) { db in
            try db.execute(sql: "INSERT INTO page SELECT CAST(locator AS TEXT), sealed FROM page")
        }
        #expect(
            problems { _ = try Vault.open(at: url, with: .passphrase(passphrase())) }.contains {
                $0.detail.contains("2 pages that no index lists")
            }, "the copies are counted, never read as the pages they copy")
        let other = directory.path("other.coffer")
        _ = try makeVault(at: other, payloads: ["alpha"])
        try withRawDatabase(other) { db in
            try db.execute(sql: "INSERT INTO page_index SELECT CAST(locator AS TEXT), sealed FROM page_index")
        }
        expectIntegrityFailure(naming: nil, kind: .structureDamaged) {
            _ = try Vault.open(at: other, with: .passphrase(passphrase()))
        }
        let moved = directory.path("moved.coffer")
        let movedIDs = try makeVault(at: moved, payloads: ["alpha"])
        try withRawDatabase(moved) { try $0.execute(sql: "UPDATE page SET locator = CAST(locator AS TEXT)") }
        expectIntegrityFailure(naming: movedIDs[0], kind: .recordMissing) {
            _ = try Vault.open(at: moved, with: .passphrase(passphrase()))
        }
        expectIntegrityFailure(naming: movedIDs[0], kind: .recordMissing) {
            _ = try Vault.open(at: moved, with: .passphrase(passphrase()), reading: { _ in true })
        }
    }

    @Test func aTableRebuiltToHoldDuplicatesIsRefused() throws {
        let ids = try makeVault(at: url, payloads: ["alpha", "beta"])
        let locator = try locators(url, ids[0]).page
        // The primary key forbids a duplicate, so the attacker rebuilds the table without it:
        // the schema is no longer Coffer's, and the file is refused before any page is read.
        try withRawDatabase(url) { db in
            try db.execute(
                sql: """
                    CREATE TABLE loose AS SELECT * FROM page;
                    DROP TABLE page;
                    ALTER TABLE loose RENAME TO page;
                    INSERT INTO page SELECT * FROM page WHERE locator = ?;
                    """, arguments: [locator])
        }
        expectVaultError(.schemaTampered) { _ = try Vault.open(at: url, with: .passphrase(passphrase())) }
    }

    @Test func aPageFromAnotherVaultIsFound() throws {
        _ = try makeVault(at: url, payloads: ["mine"])
        let otherURL = directory.path("other.coffer")
        _ = try makeVault(at: otherURL, payloads: ["theirs"])
        let foreign = try withRawDatabase(otherURL) { try Row.fetchOne($0, sql: "SELECT * FROM page")! }
        try expectDetected(.recordUnexpected, naming: [nil]) { db in
            try db.execute(
                sql: "INSERT INTO page (locator, sealed) VALUES (?, ?)",
                arguments: [foreign["locator"] as Data, foreign["sealed"] as Data])
        }
    }

    @Test func aRolledBackIndexIsDetected() throws {
        let ids = try makeVault(at: url, payloads: ["alpha"])
        let locator = try locators(url, ids[0]).index
        let old = try withRawDatabase(url) {
            try Data.fetchOne($0, sql: "SELECT sealed FROM page_index WHERE locator = ?", arguments: [locator])!
        }
        try Vault.open(at: url, with: .passphrase(passphrase())).apply([.put(ids[0], Data("changed".utf8))])
        try expectDetected(.structureDamaged, naming: [nil]) { db in
            try db.execute(sql: "UPDATE page_index SET sealed = ? WHERE locator = ?", arguments: [old, locator])
        }
    }

    @Test func aDeletedOrPlantedIndexIsDetected() throws {
        let ids = try makeVault(at: url, payloads: ["alpha", "beta"])
        let locator = try locators(url, ids[0]).index
        try expectDetected(.structureDamaged, naming: [nil]) { db in
            try db.execute(sql: "DELETE FROM page_index WHERE locator = ?", arguments: [locator])
        }
        let planted = directory.path("planted.coffer")
        _ = try makeVault(at: planted, payloads: ["x"])
        try withRawDatabase(planted) { db in
            try db.execute(
                sql: "INSERT INTO page_index (locator, sealed) VALUES (?, zeroblob(80))",
                arguments: [Data(SecureRandom.bytes(count: 16))])
        }
        expectIntegrityFailure(naming: nil, kind: .structureDamaged) {
            _ = try Vault.open(at: planted, with: .passphrase(passphrase()))
        }
    }

    @Test func commitRecordFromAnotherVaultIsDetected() throws {
        _ = try makeVault(at: url, payloads: ["alpha"])
        let otherURL = directory.path("other.coffer")
        _ = try makeVault(at: otherURL, payloads: ["beta"])
        let foreign = try withRawDatabase(otherURL) { try Data.fetchOne($0, sql: "SELECT sealed FROM commit_record")! }
        try expectDetected(.structureDamaged, naming: [nil]) { db in
            try db.execute(sql: "UPDATE commit_record SET sealed = ?", arguments: [foreign])
        }
    }

    @Test func everyProblemIsReportedNotJustTheFirst() throws {
        let ids = try makeVault(at: url, payloads: ["a", "b", "c", "d"])
        let (deleted, zeroed) = (try locators(url, ids[0]).page, try locators(url, ids[3]).page)
        try withRawDatabase(url) { db in
            try db.execute(sql: "DELETE FROM page WHERE locator = ?", arguments: [deleted])
            try db.execute(sql: "UPDATE page SET sealed = zeroblob(1064) WHERE locator = ?", arguments: [zeroed])
        }
        do {
            _ = try Vault.open(at: url, with: .passphrase(passphrase()))
            Issue.record("expected failure")
        } catch let error as VaultError {
            #expect(Set(error.problems.compactMap(\.recordID)) == [ids[0], ids[3]])
            #expect(!(error.errorDescription ?? "").contains("decryption failed"))
        }
    }

    @Test func writesReSealOnlyThePagesTheyTouch() throws {
        let ids = try makeVault(at: url, payloads: ["apple", "banana", "cherry"])
        func rows() throws -> [Data: Data] {
            try withRawDatabase(url) { db in
                Dictionary(
                    uniqueKeysWithValues: try Row.fetchAll(db, sql: "SELECT locator, sealed FROM page").map {
                        ($0[0] as Data, $0[1] as Data)
                    })
            }
        }
        let before = try rows()
        try Vault.open(at: url, with: .passphrase(passphrase())).apply([.put(ids[1], Data("blueberry".utf8))])
        let after = try rows()
        #expect(Set(before.keys) == Set(after.keys))
        #expect(before.filter { after[$0.key] != $0.value }.map(\.key) == [try locators(url, ids[1]).page])
    }

    @Test func aFullPageSpillsIntoANewOneAndAnEmptiedPageGoes() throws {
        let big = String(repeating: "x", count: 6_000)
        let ids = try makeVault(at: url, payloads: ["x1" + big, "x2" + big, "x3" + big])
        let pages = try withRawDatabase(url) { try Int.fetchOne($0, sql: "SELECT count(*) FROM page")! }
        #expect(pages == 2)
        let vault = try Vault.open(at: url, with: .passphrase(passphrase()))
        try vault.apply(ids.map { .delete($0) })
        #expect(
            try withRawDatabase(url) {
                try Int.fetchOne($0, sql: "SELECT (SELECT count(*) FROM page) + (SELECT count(*) FROM page_index)")!
            } == 0)
        #expect(try Vault.open(at: url, with: .passphrase(passphrase())).verify().recordCount == 0)
    }
}

/// The same attacks on a format 2 file (the committed fixture), which is read, never written:
/// one sealed row per record, 256 manifest buckets.
@Suite struct LegacyTamperingTests {
    let directory = TemporaryDirectory()
    var url: URL { directory.path("vault.coffer") }
    let fixture = SpecFixtureTests.vectorsDirectory.appendingPathComponent("vault-v2.coffer")
    let fixturePassphrase = "fixture passphrase two"

    func legacyVault() throws -> [RecordID] {
        try FileManager.default.copyItem(at: fixture, to: url)
        return try withRawDatabase(url) {
            try Data.fetchAll($0, sql: "SELECT id FROM record ORDER BY id").map { try RecordID($0) }
        }
    }

    func expectDetected(_ kind: IntegrityProblem.Kind, naming id: RecordID?, attack: (Database) throws -> Void) throws {
        let openBefore = try Vault.open(at: url, with: .passphrase(passphrase(fixturePassphrase)))
        try withRawDatabase(url, attack)
        expectIntegrityFailure(naming: id, kind: kind) { _ = try openBefore.verify() }
        expectIntegrityFailure(naming: id, kind: kind) {
            _ = try Vault.open(at: url, with: .passphrase(passphrase(fixturePassphrase)))
        }
    }

    @Test func aFlippedByteIsNamed() throws {
        let ids = try legacyVault()
        var sealed = try sealedBytes(url, ids[1])
        sealed[40] ^= 0x01
        try expectDetected(.recordDamaged, naming: ids[1]) { db in
            try db.execute(sql: "UPDATE record SET sealed = ? WHERE id = ?", arguments: [sealed, Data(ids[1].bytes)])
        }
    }

    @Test func aDeletedRecordIsNamed() throws {
        let ids = try legacyVault()
        try expectDetected(.recordMissing, naming: ids[0]) { db in
            try db.execute(sql: "DELETE FROM record WHERE id = ?", arguments: [Data(ids[0].bytes)])
        }
    }

    @Test func aRecordCopiedUnderANewIDIsNamed() throws {
        let ids = try legacyVault()
        let copyID = RecordID.random()
        try expectDetected(.recordUnexpected, naming: copyID) { db in
            try db.execute(
                sql: "INSERT INTO record (id, version, sealed) SELECT ?, version, sealed FROM record WHERE id = ?",
                arguments: [Data(copyID.bytes), Data(ids[0].bytes)])
        }
    }

    /// Upgrading rewrites the header, which needs the master key: a session (made by an earlier
    /// Coffer, before the upgrade) can read a format 2 file but not write it, and changes nothing.
    @Test func aSessionReadsButCannotUpgrade() throws {
        _ = try legacyVault()
        let vault = try Vault.open(at: url, with: .passphrase(passphrase(fixturePassphrase)))
        let sessions = directory.path("sessions")
        let token = try SessionStore.create(
            keys: vault.operationalKeys, vaultID: vault.id, generation: vault.keyGeneration, lifetime: 600,
            directory: sessions, clock: .system())
        let before = try Data(contentsOf: url)
        let opened = try Vault.open(at: url, with: .session(token, directory: sessions))
        #expect(opened.recordCount == vault.recordCount)
        expectVaultError(.passphraseRequired) { try opened.apply([.put(.random(), Data("x".utf8))]) }
        #expect(try Data(contentsOf: url) == before)
        #expect(!FileManager.default.fileExists(atPath: url.path + ".format2-copy"))
    }

    @Test func anUpgradeKeepsEveryRecordAndVersion() throws {
        _ = try legacyVault()
        let before = try Vault.open(at: url, with: .passphrase(passphrase(fixturePassphrase)))
        let records = before.records
        try before.upgrade()
        let after = try Vault.open(at: url, with: .passphrase(passphrase(fixturePassphrase)))
        #expect(after.formatVersion == 3)
        #expect(after.records == records)
        #expect(after.commitCounter == before.commitCounter)
        #expect(after.deviceID != nil)
        #expect(!FileManager.default.fileExists(atPath: url.path + ".format2-copy"))
    }

    @Test func aRolledBackManifestBucketIsDetected() throws {
        let ids = try legacyVault()
        try expectDetected(.structureDamaged, naming: nil) { db in
            try db.execute(
                sql: "UPDATE manifest SET sealed = (SELECT sealed FROM manifest WHERE bucket = ?) WHERE bucket = ?",
                arguments: [(Int(ids[0].bytes[0]) + 1) % 256, Int(ids[0].bytes[0])])
        }
    }
}

@Suite struct HeaderTests {
    let directory = TemporaryDirectory()
    var url: URL { directory.path("vault.coffer") }

    func headerBytes() throws -> [UInt8] {
        try withRawDatabase(url) { Array(try Data.fetchOne($0, sql: "SELECT body FROM header")!) }
    }

    func writeHeader(_ bytes: [UInt8], fixChecksum: Bool) throws {
        var bytes = bytes
        if fixChecksum {
            bytes = Array(bytes.dropLast(32))
            bytes += BLAKE2b.hash(bytes)
        }
        try withRawDatabase(url) { try $0.execute(sql: "UPDATE header SET body = ?", arguments: [Data(bytes)]) }
    }

    @Test func wrongPassphraseSaysSo() throws {
        _ = try makeVault(at: url, payloads: ["x"])
        do {
            _ = try Vault.open(at: url, with: .passphrase(passphrase("not it")))
            Issue.record("opened with the wrong passphrase")
        } catch let error as VaultError {
            #expect(error.code == .wrongPassphrase)
            #expect(error.errorDescription?.contains("passphrase is wrong") == true)
        }
    }

    @Test func damagedHeaderIsToldApartFromAWrongPassphrase() throws {
        _ = try makeVault(at: url, payloads: ["x"])
        var bytes = try headerBytes()
        bytes[60] ^= 0x04
        try writeHeader(bytes, fixChecksum: false)
        for attempt in ["correct horse battery staple", "not it"] {
            do {
                _ = try Vault.open(at: url, with: .passphrase(passphrase(attempt)))
                Issue.record("opened a damaged vault")
            } catch let error as VaultError {
                #expect(error.code == .headerDamaged)
                #expect(error.errorDescription?.contains("header is damaged") == true)
            }
        }
    }

    @Test func removingTheRecoverySlotIsCaughtByTheHeaderMAC() throws {
        _ = try makeVault(at: url, payloads: ["x"])
        _ = try Vault.open(at: url, with: .passphrase(passphrase())).createRecoveryKey()
        let bytes = try headerBytes()
        #expect(bytes[46] == 2)
        // Drop the second slot and fix the unkeyed checksum, as a careful attacker would.
        var edited = Array(bytes[..<46]) + [1] + Array(bytes[47..<(47 + PassphraseSlot.byteCount)])
        edited += Array(bytes[(47 + PassphraseSlot.byteCount + RecoverySlot.sealedByteCount)...])
        try writeHeader(edited, fixChecksum: true)
        expectVaultError(.headerTampered) { _ = try Vault.open(at: url, with: .passphrase(passphrase())) }
    }

    @Test func craftedMemoryLimitIsRefusedBeforeAllocating() throws {
        _ = try makeVault(at: url, payloads: ["x"])
        var bytes = try headerBytes()
        // Slot 1 starts at 47: kind, kdf, opslimit (8), then memlimit (8) at offset 57.
        let eightGiB = UInt64(8) << 30
        withUnsafeBytes(of: eightGiB.littleEndian) { bytes.replaceSubrange(57..<65, with: $0) }
        try writeHeader(bytes, fixChecksum: true)
        let started = Date()
        expectVaultError(.unsafeParameters) { _ = try Vault.open(at: url, with: .passphrase(passphrase())) }
        #expect(Date().timeIntervalSince(started) < 5, "refused without running the KDF")
    }

    @Test func notAVault() throws {
        let junk = directory.path("junk.coffer")
        try Data(repeating: 0x41, count: 4096).write(to: junk)
        expectVaultError(.notAVault) { _ = try Vault.open(at: junk, with: .passphrase(passphrase())) }
        let otherDatabase = directory.path("other.sqlite")
        try DatabaseQueue(path: otherDatabase.path).write { try $0.execute(sql: "CREATE TABLE t (x)") }
        expectVaultError(.notAVault) { _ = try Vault.open(at: otherDatabase, with: .passphrase(passphrase())) }
        expectVaultError(.notFound) {
            _ = try Vault.open(at: directory.path("missing.coffer"), with: .passphrase(passphrase()))
        }
    }

    @Test func newerFormatIsRefused() throws {
        _ = try makeVault(at: url, payloads: [])
        var bytes = try headerBytes()
        bytes[8] = 4
        try writeHeader(bytes, fixChecksum: true)
        expectVaultError(.unsupportedVersion) { _ = try Vault.open(at: url, with: .passphrase(passphrase())) }
    }

    @Test func createRefusesToReplaceAVault() throws {
        _ = try makeVault(at: url, payloads: ["keep me"])
        let before = try Data(contentsOf: url)
        expectVaultError(.alreadyExists) {
            _ = try Vault.create(at: url, passphrase: passphrase("x"), parameters: testParameters)
        }
        #expect(try Data(contentsOf: url) == before)
    }
}

/// `open(reading:)` reads only the groups it selects: what it does not read costs nothing and
/// cannot fail it, what it reads is checked as the whole open checks it, and nothing can be
/// written from it.
@Suite struct PartialReadTests {
    let directory = TemporaryDirectory()
    var url: URL { directory.path("vault.coffer") }
    func onlyA(_ group: PageGroup) -> Bool { group.rawValue == UInt64(Character("a").asciiValue!) }

    @Test func readsTheSelectedGroupsAndChecksThem() throws {
        let ids = try makeVault(at: url, payloads: ["apple", "avocado", "banana", "cherry"])
        let partial = try Vault.open(at: url, with: .passphrase(passphrase()), reading: onlyA)
        #expect(partial.isPartial)
        #expect(Set(partial.records.map(\.id)) == [ids[0], ids[1]])
        #expect(partial.groups.count == 3, "every group is listed, read or not")

        // Damage outside the selection is not read; inside it, it is found as by the whole open.
        let (outside, inside) = (try locators(url, ids[2]).page, try locators(url, ids[0]).page)
        try flipStoredByte(url, page: outside, fromEnd: 30)
        #expect(try Vault.open(at: url, with: .passphrase(passphrase()), reading: onlyA).recordCount == 2)
        expectIntegrityFailure(naming: ids[2], kind: .recordDamaged) {
            _ = try Vault.open(at: url, with: .passphrase(passphrase()))
        }
        try flipStoredByte(url, page: inside, fromEnd: 30)
        expectIntegrityFailure(naming: ids[1], kind: .recordDamaged) {
            _ = try Vault.open(at: url, with: .passphrase(passphrase()), reading: onlyA)
        }
    }

    @Test func aPartialOpenWritesOnlyWhatItReadAndVerifiesEverything() throws {
        let ids = try makeVault(at: url, payloads: ["apple", "banana"])
        let partial = try Vault.open(at: url, with: .passphrase(passphrase()), reading: onlyA)
        partial.grouping = byFirstLetter
        let before = try Data(contentsOf: url)
        // Into a group it did not read: that group's index would be written over.
        expectVaultError(.storageFailure) { try partial.apply([.put(ids[1], Data("blueberry".utf8))]) }
        expectVaultError(.storageFailure) { try partial.apply([.put(.random(), Data("blackberry".utf8))]) }
        expectVaultError(.storageFailure) {
            try partial.apply([.put(.random(), Data("apricot".utf8)), .put(ids[0], Data("bilberry".utf8))])
        }
        expectVaultError(.recordNotFound) { try partial.apply([.delete(ids[1])]) }
        expectVaultError(.storageFailure) { try partial.rekey() }
        #expect(try Data(contentsOf: url) == before)

        // Into the group it read, and a new one: the whole vault then counts and holds them.
        let (almond, cherry) = (RecordID.random(), RecordID.random())
        try partial.apply([
            .put(ids[0], Data("apricot".utf8)), .put(almond, Data("almond".utf8)), .put(cherry, Data("cherry".utf8)),
        ])
        let whole = try Vault.open(at: url, with: .passphrase(passphrase()))
        #expect(whole.recordCount == 4)
        #expect(whole.record(ids[0])?.payload == Data("apricot".utf8))
        #expect(whole.record(ids[1])?.payload == Data("banana".utf8))
        #expect(whole.record(almond)?.payload == Data("almond".utf8))
        #expect(whole.record(cherry)?.payload == Data("cherry".utf8))
        #expect(try whole.verify().recordCount == 4)
        // A deleted page of an unread group: verify reads the whole vault.
        let locator = try locators(url, ids[1]).page
        try withRawDatabase(url) { try $0.execute(sql: "DELETE FROM page WHERE locator = ?", arguments: [locator]) }
        expectIntegrityFailure(naming: ids[1], kind: .recordMissing) { _ = try partial.verify() }
    }
}
