import CofferTestSupport
import Foundation
import GRDB
import Testing
import VaultCrypto

@testable import VaultStore

@Suite struct RecordTests {
    let directory = TemporaryDirectory()
    var url: URL { directory.path("vault.coffer") }

    @Test func putUpdateDeleteRoundTrip() throws {
        let vault = try Vault.create(at: url, passphrase: passphrase(), parameters: testParameters)
        let (a, b) = (RecordID.random(), RecordID.random())
        try vault.apply([.put(a, Data("first".utf8)), .put(b, Data(repeating: 9, count: 500))])
        try vault.apply([.put(a, Data("second".utf8))])
        try vault.apply([.delete(b)])
        #expect(vault.commitCounter == 3)

        let reopened = try Vault.open(at: url, with: .passphrase(passphrase()))
        #expect(reopened.records.map(\.id) == [a])
        #expect(reopened.record(a)?.payload == Data("second".utf8))
        #expect(reopened.record(a)?.version == 2)
        #expect(try reopened.verify() == VerificationReport(recordCount: 1, commitCounter: 3))
    }

    @Test func aFailedWriteChangesNothing() throws {
        let vault = try Vault.create(at: url, passphrase: passphrase(), parameters: testParameters)
        let kept = RecordID.random()
        try vault.apply([.put(kept, Data("kept".utf8))])
        let before = try withRawDatabase(url) {
            try Row.fetchAll($0, sql: "SELECT * FROM page UNION ALL SELECT * FROM page_index")
        }
        expectVaultError(.recordNotFound) { try vault.apply([.put(.random(), Data("new".utf8)), .delete(.random())]) }
        let after = try withRawDatabase(url) {
            try Row.fetchAll($0, sql: "SELECT * FROM page UNION ALL SELECT * FROM page_index")
        }
        #expect(before == after)
        #expect(try Vault.open(at: url, with: .passphrase(passphrase())).records.map(\.id) == [kept])
    }

    @Test func twoProcessesWritingTheSameVaultLoseNothing() throws {
        _ = try Vault.create(at: url, passphrase: passphrase(), parameters: testParameters)
        let first = try Vault.open(at: url, with: .passphrase(passphrase()))
        let second = try Vault.open(at: url, with: .passphrase(passphrase()))
        var written: [RecordID] = []
        for round in 0..<5 {
            for vault in [first, second] {
                let id = RecordID.random()
                try vault.apply([.put(id, Data("round \(round)".utf8))])
                written.append(id)
            }
        }
        let reopened = try Vault.open(at: url, with: .passphrase(passphrase()))
        #expect(Set(reopened.records.map(\.id)) == Set(written))
    }

    @Test func manyRecordsAcrossEveryBucket() throws {
        let vault = try Vault.create(at: url, passphrase: passphrase(), parameters: testParameters)
        let changes = (0..<3000).map { RecordChange.put(.random(), Data("record \($0)".utf8)) }
        try vault.apply(changes)
        let reopened = try Vault.open(at: url, with: .passphrase(passphrase()))
        #expect(reopened.recordCount == 3000)
        #expect(Set(reopened.records.map { String(decoding: $0.payload, as: UTF8.self) }).count == 3000)
    }
}

@Suite struct KeyManagementTests {
    let directory = TemporaryDirectory()
    var url: URL { directory.path("vault.coffer") }

    func payloads(_ vault: Vault) -> [Data] { vault.records.map(\.payload) }

    @Test func passphraseChangeWithTheMasterKeyKeptRewrapsOnly() throws {
        _ = try makeVault(at: url, payloads: ["a", "b", "c"])
        let vault = try Vault.open(at: url, with: .passphrase(passphrase()))
        let recordsBefore = try withRawDatabase(url) {
            try Row.fetchAll($0, sql: "SELECT * FROM page UNION ALL SELECT * FROM page_index")
        }
        let report = try vault.changePassphrase(to: passphrase("new passphrase"), keepMasterKey: true)
        #expect(!report.replacedMasterKey)
        expectVaultError(.wrongPassphrase) { _ = try Vault.open(at: url, with: .passphrase(passphrase())) }
        let reopened = try Vault.open(at: url, with: .passphrase(passphrase("new passphrase")))
        #expect(payloads(reopened) == payloads(vault))
        #expect(
            try withRawDatabase(url) {
                try Row.fetchAll($0, sql: "SELECT * FROM page UNION ALL SELECT * FROM page_index")
            } == recordsBefore)
    }

    @Test func passphraseChangeReplacesTheMasterKeyByDefault() throws {
        _ = try makeVault(at: url, payloads: ["a", "b", "c"])
        let vault = try Vault.open(at: url, with: .passphrase(passphrase()))
        let recordsBefore = try withRawDatabase(url) { try Row.fetchAll($0, sql: "SELECT locator, sealed FROM page") }
        let generation = vault.keyGeneration
        let report = try vault.changePassphrase(to: passphrase("new passphrase"))
        #expect(report.replacedMasterKey)
        #expect(report.generation == generation + 1)
        let recordsAfter = try withRawDatabase(url) { try Row.fetchAll($0, sql: "SELECT locator, sealed FROM page") }
        #expect(
            Set(recordsAfter.map { $0["sealed"] as Data }).isDisjoint(
                with: Set(recordsBefore.map { $0["sealed"] as Data })))
        let reopened = try Vault.open(at: url, with: .passphrase(passphrase("new passphrase")))
        #expect(payloads(reopened) == payloads(vault))
        #expect(reopened.keyHistory.count == Int(generation) + 1)
    }

    @Test func rekeyReplacesEveryCiphertextAndTheOldKeyStopsWorking() throws {
        let ids = try makeVault(at: url, payloads: (0..<50).map { "record \($0)" })
        let vault = try Vault.open(at: url, with: .passphrase(passphrase()))
        let sessions = directory.path("sessions")
        let oldSession = try vault.createSession(lifetime: 600, directory: sessions)
        let (recoveryKey, _) = try vault.createRecoveryKey()
        let before = try withRawDatabase(url) {
            try Dictionary(
                uniqueKeysWithValues: Row.fetchAll($0, sql: "SELECT locator, sealed FROM page").map {
                    ($0["locator"] as Data, $0["sealed"] as Data)
                })
        }
        let expected = payloads(vault)
        let oldSigningKey = vault.signingPublicKey

        let report = try vault.rekey()
        #expect(report.replacedMasterKey && report.recoveryKeyKept && !report.recoveryKeyDropped)

        let after = try withRawDatabase(url) {
            try Dictionary(
                uniqueKeysWithValues: Row.fetchAll($0, sql: "SELECT locator, sealed FROM page").map {
                    ($0["locator"] as Data, $0["sealed"] as Data)
                })
        }
        // Every page is sealed anew, at a row named by the new keys.
        #expect(after.count == before.count)
        #expect(Set(after.keys).isDisjoint(with: before.keys))
        #expect(Set(after.values).isDisjoint(with: before.values))
        let reopened = try Vault.open(at: url, with: .passphrase(passphrase()))
        #expect(payloads(reopened) == expected)
        #expect(reopened.records.map(\.id) == ids.sorted())
        // The recovery key follows the new master key: its slot is sealed to its public half.
        #expect(payloads(try Vault.open(at: url, with: .recoveryKey(recoveryKey))) == expected)
        // The key history: generation 2, certified by generation 1's key.
        #expect(reopened.keyHistory.map(\.signingKey) == [oldSigningKey, reopened.signingPublicKey])
        // The session's keys are the old master key's: they must not open the rekeyed vault.
        expectVaultError(.sessionInvalid) {
            _ = try Vault.open(at: url, with: .session(oldSession, directory: sessions))
        }
    }

    @Test func aSessionCannotChangeAnyKey() throws {
        _ = try makeVault(at: url, payloads: ["a"])
        let sessions = directory.path("sessions")
        let token = try Vault.open(at: url, with: .passphrase(passphrase())).createSession(
            lifetime: 600, directory: sessions)
        let vault = try Vault.open(at: url, with: .session(token, directory: sessions))
        let before = try withRawDatabase(url) { try Data.fetchOne($0, sql: "SELECT body FROM header") }
        #expect(!vault.canChangeKeys)
        expectVaultError(.passphraseRequired) { try vault.rekey() }
        expectVaultError(.passphraseRequired) { try vault.changePassphrase(to: passphrase("attacker chosen")) }
        expectVaultError(.passphraseRequired) {
            try vault.changePassphrase(to: passphrase("attacker chosen"), keepMasterKey: true)
        }
        expectVaultError(.passphraseRequired) { _ = try vault.createRecoveryKey() }
        #expect(try withRawDatabase(url) { try Data.fetchOne($0, sql: "SELECT body FROM header") } == before)
        try vault.apply([.put(RecordID.random(), Data("written through the session".utf8))])
        #expect(try Vault.open(at: url, with: .passphrase(passphrase())).recordCount == 2)
    }

    @Test func recoveryKeyOpensUntilRemoved() throws {
        _ = try makeVault(at: url, payloads: ["a"])
        let vault = try Vault.open(at: url, with: .passphrase(passphrase()))
        let (recoveryKey, _) = try vault.createRecoveryKey()
        let text = recoveryKey.displayText
        #expect(text.range(of: #"^([0-9A-Z]{4}-){7}[0-9A-Z]{4}$"#, options: .regularExpression) != nil)

        // Lower case, no hyphens, O for 0 and L for 1: still the same key.
        let sloppy = text.lowercased().replacingOccurrences(of: "-", with: " ")
            .replacingOccurrences(of: "0", with: "o").replacingOccurrences(of: "1", with: "l")
        for form in [text, sloppy] {
            let opened = try Vault.open(at: url, with: .recoveryKey(try RecoveryKey(parsing: form)))
            #expect(payloads(opened) == payloads(vault))
        }
        // A typo is caught by the checksum, before any key work.
        var typo = Array(text)
        typo[0] = typo[0] == "A" ? "B" : "A"
        expectVaultError(.wrongRecoveryKey) { _ = try RecoveryKey(parsing: String(typo)) }

        // The recovery key can set a new passphrase: the forgotten-passphrase path.
        let recovered = try Vault.open(at: url, with: .recoveryKey(try RecoveryKey(parsing: text)))
        try recovered.changePassphrase(to: passphrase("remembered now"))
        _ = try Vault.open(at: url, with: .passphrase(passphrase("remembered now")))

        try recovered.removeRecoveryKey()
        expectVaultError(.noRecoveryKey) {
            _ = try Vault.open(at: url, with: .recoveryKey(try RecoveryKey(parsing: text)))
        }
    }

    @Test func anotherVaultsRecoveryKeyDoesNotOpen() throws {
        _ = try makeVault(at: url, payloads: ["a"])
        _ = try Vault.open(at: url, with: .passphrase(passphrase())).createRecoveryKey()
        let otherURL = directory.path("other.coffer")
        _ = try makeVault(at: otherURL, payloads: ["b"])
        let (foreignKey, _) = try Vault.open(at: otherURL, with: .passphrase(passphrase())).createRecoveryKey()
        expectVaultError(.wrongRecoveryKey) { _ = try Vault.open(at: url, with: .recoveryKey(foreignKey)) }
    }
}

@Suite struct SessionTests {
    let directory = TemporaryDirectory()
    var url: URL { directory.path("vault.coffer") }
    var sessions: URL { directory.path("run/coffer") }

    @Test func sessionOpensWithoutThePassphraseUntilItExpires() throws {
        _ = try makeVault(at: url, payloads: ["a"])
        let start = Date()
        let token = try Vault.open(at: url, with: .passphrase(passphrase())).createSession(
            lifetime: 900, directory: sessions, now: start)
        let parsed = try SessionToken(parsing: token.exportText)
        let opened = try Vault.open(
            at: url, with: .session(parsed, directory: sessions), now: start.addingTimeInterval(60))
        #expect(opened.recordCount == 1)
        #expect(mode(sessions) == 0o700)
        let files = try FileManager.default.contentsOfDirectory(atPath: sessions.path)
        #expect(files.count == 1)
        #expect(mode(sessions.appendingPathComponent(files[0])) == 0o600)

        expectVaultError(.sessionExpired) {
            _ = try Vault.open(at: url, with: .session(parsed, directory: sessions), now: start.addingTimeInterval(901))
        }
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: sessions.path).isEmpty,
            "the expired session file is wiped")
        expectVaultError(.sessionNotFound) { _ = try Vault.open(at: url, with: .session(parsed, directory: sessions)) }
    }

    @Test func aSessionLastsAtLeastItsWholeLifetime() throws {
        _ = try makeVault(at: url, payloads: ["a"])
        let start = Date(timeIntervalSince1970: 1_800_000_000.9)  // a fractional second
        let token = try Vault.open(at: url, with: .passphrase(passphrase())).createSession(
            lifetime: 60, directory: sessions, now: start)
        _ = try Vault.open(at: url, with: .session(token, directory: sessions), now: start.addingTimeInterval(59.95))
        expectVaultError(.sessionExpired) {
            _ = try Vault.open(at: url, with: .session(token, directory: sessions), now: start.addingTimeInterval(61))
        }
    }

    @Test func movingTheExpiryOrTheVaultBreaksTheSession() throws {
        _ = try makeVault(at: url, payloads: ["a"])
        let token = try Vault.open(at: url, with: .passphrase(passphrase())).createSession(
            lifetime: 60, directory: sessions)
        let file = sessions.appendingPathComponent(
            try FileManager.default.contentsOfDirectory(atPath: sessions.path)[0])
        var bytes = try Data(contentsOf: file)
        bytes[28 + 4] &+= 1  // push the expiry (bytes 28..<36) days into the future
        try bytes.write(to: file)
        expectVaultError(.sessionInvalid) { _ = try Vault.open(at: url, with: .session(token, directory: sessions)) }

        let otherURL = directory.path("other.coffer")
        _ = try makeVault(at: otherURL, payloads: ["b"])
        let otherToken = try Vault.open(at: otherURL, with: .passphrase(passphrase())).createSession(
            lifetime: 60, directory: sessions)
        expectVaultError(.sessionInvalid) {
            _ = try Vault.open(at: url, with: .session(otherToken, directory: sessions))
        }
        expectVaultError(.sessionInvalid) { _ = try SessionToken(parsing: "cs1_not-a-token") }
    }

    @Test func lockRemovesEverySessionOfTheVault() throws {
        _ = try makeVault(at: url, payloads: ["a"])
        let vault = try Vault.open(at: url, with: .passphrase(passphrase()))
        let tokens = try (0..<3).map { _ in try vault.createSession(lifetime: 60, directory: sessions) }
        #expect(SessionStore.removeAll(vaultID: vault.id, directory: sessions) == 3)
        for token in tokens {
            expectVaultError(.sessionNotFound) {
                _ = try Vault.open(at: url, with: .session(token, directory: sessions))
            }
        }
    }

    @Test func refusesASessionDirectoryOthersCanRead() throws {
        _ = try makeVault(at: url, payloads: ["a"])
        try FileManager.default.createDirectory(at: sessions, withIntermediateDirectories: true)
        chmod(sessions.path, 0o755)
        let vault = try Vault.open(at: url, with: .passphrase(passphrase()))
        expectVaultError(.insecureDirectory) { _ = try vault.createSession(lifetime: 60, directory: sessions) }
    }
}

/// Nothing readable on disk: the canaries go in as payloads and must not be found, in any
/// common encoding, in the vault, its WAL and shared-memory files, or the session directory.
@Suite struct LeakTests {
    let directory = TemporaryDirectory()
    var url: URL { directory.path("private/vault.coffer") }

    static let canaries = ["CANARY-ALPHA-7f3e", "Canary Bank Savings", "£4,321.09", "2026-11-22"]

    static func encodings(of canary: String) -> [[UInt8]] {
        let utf8 = Array(canary.utf8)
        let hexLower = Array(utf8.map { String(format: "%02x", $0) }.joined().utf8)
        let hexUpper = Array(utf8.map { String(format: "%02X", $0) }.joined().utf8)
        return [
            utf8, Array(canary.data(using: .utf16LittleEndian)!), Array(canary.data(using: .utf16BigEndian)!), hexLower,
            hexUpper,
        ]
    }

    static func scan(_ files: [URL]) throws -> [String] {
        var hits: [String] = []
        for file in files {
            let contents = try Data(contentsOf: file)
            for canary in canaries {
                for encoding in encodings(of: canary) where contents.range(of: Data(encoding)) != nil {
                    hits.append("\(file.lastPathComponent): \(canary)")
                }
            }
        }
        return hits
    }

    static func allFiles(under directory: URL) -> [URL] {
        let enumerator = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: [.isRegularFileKey])!
        return enumerator.compactMap { $0 as? URL }.filter {
            (try? $0.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true
        }
    }

    @Test func noCanaryInAnyFileAndEveryFileIsPrivate() throws {
        let vault = try Vault.create(at: url, passphrase: passphrase(), parameters: testParameters)
        let sessions = directory.path("run/coffer")
        var ids: [RecordID] = []
        for (index, canary) in Self.canaries.enumerated() {
            let id = RecordID.random()
            ids.append(id)
            try vault.apply([.put(id, Data("{\"name\":\"\(canary)\",\"n\":\(index)}".utf8))])
        }
        try vault.apply([.put(ids[0], Data("updated \(Self.canaries[1])".utf8)), .delete(ids[2])])
        _ = try vault.createSession(lifetime: 60, directory: sessions)

        // While the vault is open its WAL and shared-memory files exist: scan them too.
        let walURL = URL(fileURLWithPath: url.path + "-wal")
        let shmURL = URL(fileURLWithPath: url.path + "-shm")
        #expect(FileManager.default.fileExists(atPath: walURL.path))
        let files = Self.allFiles(under: directory.url)
        #expect(files.contains { $0.lastPathComponent.hasSuffix(".session") })
        #expect(try Self.scan(files) == [])
        // The scan covered a vault that really holds the canaries (so a clean scan means something).
        #expect(vault.recordCount == Self.canaries.count - 1)
        #expect(String(decoding: vault.record(ids[0])!.payload, as: UTF8.self).contains(Self.canaries[1]))

        #expect(mode(url.deletingLastPathComponent()) == 0o700)
        for file in [url, walURL, shmURL] { #expect(mode(file) == 0o600, "\(file.lastPathComponent)") }
        #expect(mode(sessions) == 0o700)

        // The scan itself can find a canary: a plaintext control file is caught.
        let control = directory.path("control.txt")
        try Data(Self.canaries[2].utf8).write(to: control)
        #expect(try Self.scan([control]) == ["control.txt: \(Self.canaries[2])"])
    }
}

/// The vault file and vectors built by scripts/make-vectors.py from the spec alone.
@Suite struct SpecFixtureTests {
    struct Vectors: Decodable {
        struct Record: Decodable {
            let vaultId, recordId: String; let version: UInt64;
            let recordKey, nonce, payload, associatedData, padded, sealed: String
        }
        struct VaultFixture: Decodable {
            struct Entry: Decodable { let id: String; let version: UInt64; let payload: String }
            let file, passphrase, vaultId, header: String; let commitCounter: UInt64; let records: [Entry]
        }
        let records: [Record]
        let vault: VaultFixture
    }

    static let vectorsDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../Specs/vectors").standardized
    static let vectors = try! JSONDecoder().decode(
        Vectors.self, from: Data(contentsOf: vectorsDirectory.appendingPathComponent("vault-v1.json")))

    func bytes(_ hex: String) -> [UInt8] { [UInt8](hexString: hex)! }

    @Test func recordSealingMatchesTheSpec() throws {
        for vector in Self.vectors.records {
            let vaultID = VaultID(unchecked: bytes(vector.vaultId))
            let id = try RecordID(bytes(vector.recordId))
            #expect(
                RecordCipher.associatedData(vaultID: vaultID, id: id, version: vector.version).hexString
                    == vector.associatedData)
            #expect(
                Padding.pad(bytes(vector.payload), blockSize: RecordCipher.paddingBlockSize).hexString == vector.padded)
            let recordKey = try SymmetricKey(SecureBytes(copying: bytes(vector.recordKey)))
            // Through the path every open takes: the batch opener.
            let sealed = bytes(vector.sealed)
            func open(version: UInt64) -> [UInt8]? {
                var plain: [UInt8] = []
                let row = SealedRow(id: id, storedVersion: Int64(version), entry: nil, range: 0..<sealed.count)
                return RecordCipher.openAll(sealed, rows: [row], into: &plain, key: recordKey, vaultID: vaultID)[0].map
                { Array(plain[$0]) }
            }
            #expect(open(version: vector.version) == bytes(vector.payload))
            #expect(open(version: vector.version + 1) == nil)
        }
    }

    @Test func theIndependentlyBuiltVaultOpens() throws {
        let fixture = Self.vectors.vault
        let directory = TemporaryDirectory()
        let copy = directory.path("fixture.coffer")
        try FileManager.default.copyItem(at: Self.vectorsDirectory.appendingPathComponent(fixture.file), to: copy)
        let vault = try Vault.open(at: copy, with: .passphrase(passphrase(fixture.passphrase)))
        #expect(vault.id.hex == fixture.vaultId)
        #expect(vault.commitCounter == fixture.commitCounter)
        #expect(vault.records.map { $0.id.hex } == fixture.records.map(\.id).sorted())
        for entry in fixture.records {
            let record = vault.record(try RecordID(hex: entry.id))
            #expect(record?.version == entry.version)
            #expect(record.map { Array($0.payload) } == bytes(entry.payload))
        }
        // And it stays writable by this implementation.
        try vault.apply([.put(.random(), Data("added by Swift".utf8))])
        #expect(
            try Vault.open(at: copy, with: .passphrase(passphrase(fixture.passphrase))).recordCount == fixture.records
                .count + 1)
    }

    @Test func headerEncodingRoundTrips() throws {
        let header = try VaultHeader.decode(bytes(Self.vectors.vault.header))
        #expect(header.encoded().hexString == Self.vectors.vault.header)
    }
}

/// Header format 2 and commit record format 2, built by scripts/make-vectors.py from the spec
/// alone: the passphrase slot, the X25519 recovery slot (and the recovery key's printed form,
/// which fixes its bit order), the certified key history and the device id all read as written.
@Suite struct FormatTwoVectorTests {
    struct Vectors: Decodable {
        struct VaultFixture: Decodable {
            struct Entry: Decodable { let id: String; let version: UInt64; let payload: String }
            let file, passphrase, recoveryKey, recoveryPublicKey, vaultId, header, deviceId: String
            let keyGeneration: UInt32; let signingKeys: [String]; let commitCounter: UInt64; let records: [Entry]
        }
        let vault: VaultFixture
    }

    static let vectors = try! JSONDecoder().decode(
        Vectors.self, from: Data(contentsOf: SpecFixtureTests.vectorsDirectory.appendingPathComponent("vault-v2.json")))

    func bytes(_ hex: String) -> [UInt8] { [UInt8](hexString: hex)! }

    func copyOfFixture(_ directory: TemporaryDirectory) throws -> URL {
        let copy = directory.path("fixture-v2.coffer")
        try FileManager.default.copyItem(
            at: SpecFixtureTests.vectorsDirectory.appendingPathComponent(Self.vectors.vault.file), to: copy)
        return copy
    }

    @Test func theIndependentlyBuiltFormatTwoVaultOpensWithEitherKey() throws {
        let fixture = Self.vectors.vault
        let directory = TemporaryDirectory()
        let copy = try copyOfFixture(directory)
        let recoveryKey = try RecoveryKey(parsing: fixture.recoveryKey)
        #expect(recoveryKey.displayText == fixture.recoveryKey)
        #expect(
            recoveryKey.agreementKey(vaultID: VaultID(unchecked: bytes(fixture.vaultId))).publicKey.bytes.hexString
                == fixture.recoveryPublicKey)
        for credential in [Credential.passphrase(try passphrase(fixture.passphrase)), .recoveryKey(recoveryKey)] {
            let vault = try Vault.open(at: copy, with: credential)
            #expect(
                vault.id.hex == fixture.vaultId && vault.formatVersion == 2
                    && vault.keyGeneration == fixture.keyGeneration)
            #expect(vault.commitCounter == fixture.commitCounter)
            #expect(vault.deviceID?.hex == fixture.deviceId)
            #expect(vault.keyHistory.map { $0.signingKey.bytes.hexString } == fixture.signingKeys)
            #expect(vault.keyHistory.map(\.number) == [1, 2])
            for entry in fixture.records {
                let record = vault.record(try RecordID(hex: entry.id))
                #expect(record?.version == entry.version)
                #expect(record.map { Array($0.payload) } == bytes(entry.payload))
            }
        }
        #expect(throws: VaultError.self) {
            try Vault.open(at: copy, with: .passphrase(try passphrase("not the fixture passphrase")))
        }
        // It stays writable, and a rekey keeps its history and recovery key.
        let vault = try Vault.open(at: copy, with: .passphrase(try passphrase(fixture.passphrase)))
        try vault.apply([.put(.random(), Data("added by Swift".utf8))])
        _ = try vault.rekey()
        let reopened = try Vault.open(at: copy, with: .recoveryKey(recoveryKey))
        #expect(
            reopened.keyGeneration == 3
                && reopened.keyHistory.prefix(2).map { $0.signingKey.bytes.hexString } == fixture.signingKeys)
        #expect(reopened.recordCount == fixture.records.count + 1)
    }

    @Test func formatTwoHeaderEncodingRoundTrips() throws {
        let header = try VaultHeader.decode(bytes(Self.vectors.vault.header))
        #expect(header.formatVersion == 2 && header.generation == 2)
        #expect(header.encoded().hexString == Self.vectors.vault.header)
    }
}

/// The bulk paths agree with the one-record paths they stand in for.
@Suite struct BulkPathTests {
    @Test func recordsOpenedTogetherGiveWhatWasSealed() throws {
        let key = SymmetricKey.random(), vaultID = VaultID.random()
        var buffer: [UInt8] = [], rows: [SealedRow] = [], payloads: [Data] = []
        for index in 0..<2000 {
            let id = RecordID.random(), payload = Data(SecureRandom.bytes(count: index % 300))
            var (sealed, _) = RecordCipher.seal(
                payload, id: id, version: UInt64(index % 3 + 1), key: key, vaultID: vaultID)
            if index % 97 == 0 { sealed[sealed.count / 2] ^= 1 }  // damaged: must come back nil
            rows.append(
                SealedRow(
                    id: id, storedVersion: Int64(index % 3 + 1), entry: nil,
                    range: buffer.count..<buffer.count + sealed.count))
            buffer += sealed
            payloads.append(payload)
        }
        var plain: [UInt8] = []
        let opened = RecordCipher.openAll(buffer, rows: rows, into: &plain, key: key, vaultID: vaultID).map {
            $0.map { Data(plain[$0]) }
        }
        for index in rows.indices {
            #expect(opened[index] == (index % 97 == 0 ? nil : payloads[index]))
        }
        // The associated data binds each payload to its id and version, as `seal` wrote them.
        let replayed = rows.map {
            SealedRow(id: $0.id, storedVersion: $0.storedVersion + 1, entry: nil, range: $0.range)
        }
        #expect(
            RecordCipher.openAll(buffer, rows: replayed, into: &plain, key: key, vaultID: vaultID).allSatisfy {
                $0 == nil
            })
        let swapped = rows.map {
            SealedRow(id: RecordID.random(), storedVersion: $0.storedVersion, entry: nil, range: $0.range)
        }
        #expect(
            RecordCipher.openAll(buffer, rows: swapped, into: &plain, key: key, vaultID: vaultID).allSatisfy {
                $0 == nil
            })
    }
}

@Suite struct BatchWriteTests {
    @Test func repeatedIdsInOneBatchEndInTheirLastState() throws {
        let directory = TemporaryDirectory()
        let url = directory.path("batch.coffer")
        let vault = try Vault.create(at: url, passphrase: passphrase(), parameters: testParameters)
        let a = RecordID.random(), b = RecordID.random(), c = RecordID.random()
        try vault.apply([
            .put(a, Data("first".utf8)), .put(b, Data("b".utf8)), .put(a, Data("second".utf8)), .delete(b),
            .put(c, Data("c".utf8)),
        ])
        #expect(vault.record(a) == VaultRecord(id: a, version: 2, payload: Data("second".utf8)))
        #expect(vault.record(b) == nil)
        #expect(vault.record(c)?.version == 1)
        #expect(throws: VaultError.self) {
            try vault.apply([.put(RecordID.random(), Data("x".utf8)), .delete(RecordID.random())])
        }
        let reopened = try Vault.open(at: url, with: .passphrase(passphrase()))
        #expect(reopened.records == vault.records)
        #expect(reopened.records.count == 2, "the refused batch wrote nothing")
    }
}

/// The format 3 fixture, built by scripts/make-vectors.py from Specs/vault-format.md §8 alone:
/// this implementation must read it (gapped page numbers, a record on a page of its own) and
/// reproduce its row names, and can write to it.
@Suite struct FormatThreeVectorTests {
    struct Vectors: Decodable {
        struct Record: Decodable {
            let id: String
            let version: UInt64
            let payload: String
            let group: UInt64
            let page: UInt32
            let pageLocator: String
        }
        struct Fixture: Decodable {
            let file, passphrase, vaultId, header, deviceId, locatorKey: String
            let commitCounter: UInt64
            let pages: Int
            let indexLocators: [String: String]
            let records: [Record]
        }
        let vault: Fixture
    }

    static let vectors = try! JSONDecoder().decode(
        Vectors.self,
        from: Data(contentsOf: SpecFixtureTests.vectorsDirectory.appendingPathComponent("vault-v3.json")))

    @Test func theIndependentlyBuiltFormatThreeVaultOpens() throws {
        let fixture = Self.vectors.vault
        let directory = TemporaryDirectory()
        let copy = directory.path("fixture.coffer")
        try FileManager.default.copyItem(
            at: SpecFixtureTests.vectorsDirectory.appendingPathComponent(fixture.file), to: copy)
        let vault = try Vault.open(at: copy, with: .passphrase(passphrase(fixture.passphrase)))
        #expect(vault.formatVersion == 3)
        #expect(vault.id.hex == fixture.vaultId)
        #expect(vault.commitCounter == fixture.commitCounter)
        #expect(vault.deviceID?.hex == fixture.deviceId)
        #expect(vault.pageCount == fixture.pages)
        #expect(vault.records.map { $0.id.hex } == fixture.records.map(\.id).sorted())
        for entry in fixture.records {
            let id = try RecordID(hex: entry.id)
            let record = vault.record(id)
            #expect(record?.version == entry.version)
            #expect(record.map { $0.payload.hexString } == entry.payload)
            #expect(vault.pageLocators(of: id)?.page.hexString == entry.pageLocator)
            #expect(vault.pageLocators(of: id)?.index.hexString == fixture.indexLocators[String(entry.group)])
            let locator = PageLayout.locator(
                .page, group: PageGroup(rawValue: entry.group), number: entry.page, key: vault.operationalKeys.locator)
            #expect(locator.hexString == entry.pageLocator)
        }
        // And it stays writable: a new record, one changed, and the large one deleted.
        let large = try RecordID(hex: fixture.records.max { $0.payload.count < $1.payload.count }!.id)
        let changed = try RecordID(hex: fixture.records[0].id)
        try vault.apply([
            .put(.random(), Data("added by Swift".utf8)), .put(changed, Data("changed".utf8)), .delete(large),
        ])
        let reopened = try Vault.open(at: copy, with: .passphrase(passphrase(fixture.passphrase)))
        #expect(reopened.recordCount == fixture.records.count)
        #expect(reopened.record(changed)?.version == fixture.records[0].version + 1)
        #expect(reopened.record(large) == nil)
        #expect(try reopened.verify().commitCounter == fixture.commitCounter + 1)
    }
}
