import CofferTestSupport
import Foundation
import GRDB
import Testing
import VaultCrypto

@testable import VaultStore

/// Each attack is made with SQLite directly on the file, then must be caught both when the vault
/// is opened and by `verify()` on a vault that was already open, naming the record concerned.
@Suite struct TamperingTests {
    let directory = TemporaryDirectory()
    var url: URL { directory.path("vault.coffer") }

    /// Opens the vault cleanly, runs `attack` on the file, then checks both detection paths.
    func expectDetected(
        _ kind: IntegrityProblem.Kind, naming id: () -> RecordID?, sourceLocation: SourceLocation = #_sourceLocation,
        attack: (Database) throws -> Void
    ) throws {
        let openBefore = try Vault.open(at: url, with: .passphrase(passphrase()))
        try withRawDatabase(url, attack)
        expectIntegrityFailure(naming: id(), kind: kind, sourceLocation: sourceLocation) { _ = try openBefore.verify() }
        expectIntegrityFailure(naming: id(), kind: kind, sourceLocation: sourceLocation) {
            _ = try Vault.open(at: url, with: .passphrase(passphrase()))
        }
    }

    @Test func flippedCiphertextByteIsNamed() throws {
        let ids = try makeVault(at: url, payloads: ["alpha", "beta", "gamma"])
        var sealed = try sealedBytes(url, ids[1])
        sealed[40] ^= 0x01
        try expectDetected(.recordDamaged, naming: { ids[1] }) { db in
            try db.execute(sql: "UPDATE record SET sealed = ? WHERE id = ?", arguments: [sealed, Data(ids[1].bytes)])
        }
    }

    @Test func swappedCiphertextsAreBothNamed() throws {
        let ids = try makeVault(at: url, payloads: ["alpha", "beta"])
        let (first, second) = (try sealedBytes(url, ids[0]), try sealedBytes(url, ids[1]))
        let attack = { (db: Database) in
            try db.execute(sql: "UPDATE record SET sealed = ? WHERE id = ?", arguments: [second, Data(ids[0].bytes)])
            try db.execute(sql: "UPDATE record SET sealed = ? WHERE id = ?", arguments: [first, Data(ids[1].bytes)])
        }
        try expectDetected(.recordDamaged, naming: { ids[0] }, attack: attack)
        expectIntegrityFailure(naming: ids[1], kind: .recordDamaged) {
            _ = try Vault.open(at: url, with: .passphrase(passphrase()))
        }
    }

    @Test func olderVersionPutBackIsNamed() throws {
        let ids = try makeVault(at: url, payloads: ["balance 100"])
        let old = try withRawDatabase(url) { try Row.fetchOne($0, sql: "SELECT version, sealed FROM record")! }
        let oldVersion: Int64 = old["version"]
        let oldSealed: Data = old["sealed"]
        try Vault.open(at: url, with: .passphrase(passphrase())).apply([.put(ids[0], Data("balance 250".utf8))])
        try expectDetected(.recordStale, naming: { ids[0] }) { db in
            try db.execute(
                sql: "UPDATE record SET version = ?, sealed = ? WHERE id = ?",
                arguments: [oldVersion, oldSealed, Data(ids[0].bytes)])
        }
    }

    @Test func olderCopyAtTheSameVersionIsNamed() throws {
        // Same id and version, but a ciphertext sealed earlier: only the manifest's tag tells.
        let ids = try makeVault(at: url, payloads: ["one"])
        let vault = try Vault.open(at: url, with: .passphrase(passphrase()))
        let record = vault.record(ids[0])!
        let replacement = RecordCipher.seal(
            Data("forged".utf8), id: ids[0], version: record.version,
            key: vault.operationalKeys.records, vaultID: vault.id)
        try expectDetected(.recordStale, naming: { ids[0] }) { db in
            try db.execute(
                sql: "UPDATE record SET sealed = ? WHERE id = ?", arguments: [replacement.sealed, Data(ids[0].bytes)])
        }
    }

    @Test func deletedRecordIsNamed() throws {
        let ids = try makeVault(at: url, payloads: ["alpha", "beta", "gamma"])
        try expectDetected(.recordMissing, naming: { ids[2] }) { db in
            try db.execute(sql: "DELETE FROM record WHERE id = ?", arguments: [Data(ids[2].bytes)])
        }
    }

    @Test func copiedRecordUnderANewIDIsNamed() throws {
        let ids = try makeVault(at: url, payloads: ["alpha"])
        let copyID = RecordID.random()
        try expectDetected(.recordUnexpected, naming: { copyID }) { db in
            try db.execute(
                sql: "INSERT INTO record (id, version, sealed) SELECT ?, version, sealed FROM record WHERE id = ?",
                arguments: [Data(copyID.bytes), Data(ids[0].bytes)])
        }
    }

    @Test func aTableRebuiltToHoldDuplicatesIsRefused() throws {
        let ids = try makeVault(at: url, payloads: ["alpha", "beta"])
        // The primary key forbids a duplicate, so the attacker rebuilds the table without it:
        // the schema is no longer Coffer's, and the file is refused before any record is read.
        try withRawDatabase(url) { db in
            try db.execute(
                sql: """
                    CREATE TABLE loose AS SELECT * FROM record;
                    DROP TABLE record;
                    ALTER TABLE loose RENAME TO record;
                    INSERT INTO record SELECT * FROM record WHERE id = ?;
                    """, arguments: [Data(ids[0].bytes)])
        }
        expectVaultError(.schemaTampered) { _ = try Vault.open(at: url, with: .passphrase(passphrase())) }
    }

    @Test func recordFromAnotherVaultIsNamed() throws {
        _ = try makeVault(at: url, payloads: ["mine"])
        let otherURL = directory.path("other.coffer")
        let foreign = try makeVault(at: otherURL, payloads: ["theirs"])
        let foreignRow = try withRawDatabase(otherURL) { try Row.fetchOne($0, sql: "SELECT * FROM record")! }
        try expectDetected(.recordUnexpected, naming: { foreign[0] }) { db in
            try db.execute(
                sql: "INSERT INTO record (id, version, sealed) VALUES (?, ?, ?)",
                arguments: [foreignRow["id"] as Data, foreignRow["version"] as Int64, foreignRow["sealed"] as Data])
        }
    }

    @Test func rolledBackManifestBucketIsDetected() throws {
        let ids = try makeVault(at: url, payloads: ["alpha"])
        let bucket = Int(ids[0].bytes[0])
        let oldBucket = try withRawDatabase(url) {
            try Data.fetchOne($0, sql: "SELECT sealed FROM manifest WHERE bucket = ?", arguments: [bucket])!
        }
        try Vault.open(at: url, with: .passphrase(passphrase())).apply([.put(ids[0], Data("changed".utf8))])
        try expectDetected(.structureDamaged, naming: { nil }) { db in
            try db.execute(sql: "UPDATE manifest SET sealed = ? WHERE bucket = ?", arguments: [oldBucket, bucket])
        }
    }

    @Test func commitRecordFromAnotherVaultIsDetected() throws {
        _ = try makeVault(at: url, payloads: ["alpha"])
        let otherURL = directory.path("other.coffer")
        _ = try makeVault(at: otherURL, payloads: ["beta"])
        let foreign = try withRawDatabase(otherURL) { try Data.fetchOne($0, sql: "SELECT sealed FROM commit_record")! }
        try expectDetected(.structureDamaged, naming: { nil }) { db in
            try db.execute(sql: "UPDATE commit_record SET sealed = ?", arguments: [foreign])
        }
    }

    @Test func everyProblemIsReportedNotJustTheFirst() throws {
        let ids = try makeVault(at: url, payloads: ["a", "b", "c", "d"])
        try withRawDatabase(url) { db in
            try db.execute(sql: "DELETE FROM record WHERE id = ?", arguments: [Data(ids[0].bytes)])
            try db.execute(
                sql: "UPDATE record SET sealed = zeroblob(120) WHERE id = ?", arguments: [Data(ids[3].bytes)])
        }
        do {
            _ = try Vault.open(at: url, with: .passphrase(passphrase()))
            Issue.record("expected failure")
        } catch let error as VaultError {
            #expect(Set(error.problems.compactMap(\.recordID)) == [ids[0], ids[3]])
            #expect(!(error.errorDescription ?? "").contains("decryption failed"))
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
        bytes[8] = 3
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
