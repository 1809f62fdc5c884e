import CofferTestSupport
import Foundation
import Testing
import VaultCrypto
import VaultStore

@testable import VaultBackup

/// A vault with a few records, and archives of it.
struct Fixture {
    let directory = TemporaryDirectory()
    let vault: Vault
    let payloads: [Data]

    init(records: Int = 12) throws {
        vault = try Vault.create(
            at: directory.path("vault.coffer"), passphrase: try Passphrase("archive passphrase"),
            parameters: KDFProfile.interactive.parameters)
        payloads = (0..<records).map { Data("record \($0) CANARY-ARCHIVE-\($0 % 3)".utf8) }
        try vault.apply(payloads.map { .put(.random(), $0) })
    }

    var records: [(RecordID, Data)] { vault.records.map { ($0.id, $0.payload) } }

    /// Every record an archive holds, by id (as `records` lists them).
    func opened(_ url: URL, keys: BackupKeys? = nil) throws -> (ArchiveContents, [(RecordID, Data)]) {
        var records: [(RecordID, Data)] = []
        let contents = try Archive.open(at: url, keys: keys ?? vault.backupKeys) { records.append(($0, Data($1))) }
        return (contents, records.sorted { $0.0 < $1.0 })
    }
    var publicKey: MinisignPublicKey { MinisignPublicKey(key: vault.backupKeys.signingKey.publicKey) }

    func write(
        sequence: UInt64, created: Date = Date(timeIntervalSince1970: 1_790_000_000), to name: String = "backups"
    ) throws -> URL {
        let destination = directory.path(name)
        try FileManager.default.createDirectory(at: destination, withIntermediateDirectories: true)
        return try Archive.write(
            CollectedRecords(records), netWorth: "GBP 1234.56", appVersion: "test", commitCounter: vault.commitCounter,
            keys: vault.backupKeys, sequence: sequence, created: created.addingTimeInterval(Double(sequence)),
            to: destination
        ).url
    }
}

/// Every single-byte flip, every 256-byte truncation, one byte short, and appended garbage or
/// an appended chunk: the damage every way of reading an archive must refuse.
func damagedCopies(of original: Data) -> [(String, Data)] {
    var variants: [(String, Data)] = []
    for offset in 0..<original.count {
        var flipped = original
        flipped[offset] ^= UInt8(1 << (offset % 8))
        variants.append(("flip at \(offset)", flipped))
    }
    for length in stride(from: 0, to: original.count, by: 256) {
        variants.append(("truncated to \(length)", original.prefix(length)))
    }
    variants.append(("one byte short", original.dropLast()))
    variants.append(("appended garbage", original + Data("garbage".utf8)))
    variants.append(("appended chunk", original + original.suffix(40)))
    return variants
}

@Suite struct ArchiveRoundTripTests {
    @Test func writesVerifiesAndOpens() throws {
        let fixture = try Fixture()
        let url = try fixture.write(sequence: 1)
        #expect(url.lastPathComponent == "coffer-20260921-141321-000001.cbak")
        let info = try Archive.verify(at: url, publicKey: fixture.publicKey)
        #expect(info.sequence == 1 && info.vaultID == fixture.vault.id.hex)

        let (contents, records) = try fixture.opened(url)
        #expect(records.map(\.0) == fixture.records.map(\.0))
        #expect(records.map(\.1) == fixture.records.map(\.1))
        #expect(contents.netWorth == "GBP 1234.56")

        // A fresh machine: only the archive and the passphrase.
        let keys = try Vault.unlockArchivedHeader(
            try Archive.peek(at: url).vaultHeader, credential: .passphrase(try Passphrase("archive passphrase"))
        ).backupKeys
        #expect(try Archive.open(at: url, keys: keys).recordCount == fixture.payloads.count)
        #expect(throws: VaultError.self) {
            try Vault.unlockArchivedHeader(
                try Archive.peek(at: url).vaultHeader, credential: .passphrase(try Passphrase("wrong"))
            ).backupKeys
        }
    }

    @Test func largeArchivesSpanManyChunksAndCompress() throws {
        let fixture = try Fixture(records: 3000)
        let url = try fixture.write(sequence: 1)
        let info = try Archive.verify(at: url, publicKey: fixture.publicKey)
        #expect(info.chunkCount >= 1)
        #expect(try Archive.open(at: url, keys: fixture.vault.backupKeys).recordCount == 3000)
        let rawSize = fixture.records.reduce(0) { $0 + $1.1.count + 20 }
        #expect(info.size < rawSize, "compressed: \(info.size) bytes for \(rawSize) raw")
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/minisign")))
    func theStandardMinisignToolVerifiesIt() throws {
        let fixture = try Fixture()
        let url = try fixture.write(sequence: 7)
        let publicKeyFile = fixture.directory.path("coffer.pub")
        try fixture.publicKey.fileContents.write(to: publicKeyFile, atomically: true, encoding: .utf8)
        func minisign() throws -> (Int32, String) {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/minisign")
            process.arguments = ["-Vm", url.path, "-p", publicKeyFile.path]
            let output = Pipe()
            process.standardOutput = output
            process.standardError = output
            try process.run()
            let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            return (process.terminationStatus, text)
        }
        let (status, output) = try minisign()
        #expect(status == 0, "\(output)")
        #expect(output.contains("seq=7"))
        var bytes = try Data(contentsOf: url)
        bytes[bytes.count / 2] ^= 0x01
        try bytes.write(to: url)
        #expect(try minisign().0 != 0)
    }
}

@Suite struct ArchiveDamageTests {
    /// Every single-byte flip, every 256-byte truncation and appended garbage must fail both
    /// the signature check and full decryption, so neither level can be fooled alone.
    @Test func everyFlipTruncationAndAppendixIsRejectedAtBothLevels() throws {
        let fixture = try Fixture(records: 5)
        let url = try fixture.write(sequence: 1)
        let original = try Data(contentsOf: url)
        let keys = fixture.vault.backupKeys
        let publicKey = fixture.publicKey
        let scratch = fixture.directory.path("backups/coffer-20260921-141321-000001.cbak")
        let variants = damagedCopies(of: original)
        #expect(variants.count > original.count)
        for (label, bytes) in variants {
            try bytes.write(to: scratch)
            #expect(throws: BackupError.self, "signature level, \(label)") {
                try Archive.verify(at: scratch, publicKey: publicKey)
            }
            #expect(throws: (any Error).self, "full level, \(label)") { try Archive.open(at: scratch, keys: keys) }
        }
        try original.write(to: scratch)
        _ = try Archive.open(at: scratch, keys: keys)
    }

    @Test func splicedResignedAndReplayedArchivesAreRejectedWithReasons() throws {
        let fixture = try Fixture()
        let first = try fixture.write(sequence: 1)
        let second = try fixture.write(sequence: 2)
        let a = try Data(contentsOf: first), b = try Data(contentsOf: second)
        let (_, headerLength) = try ArchiveHeader.parse(Array(a))

        // Header of the first, body of the second, kept under the second's name and signature.
        let spliced = a.prefix(headerLength) + b.dropFirst(headerLength)
        try spliced.write(to: second)
        try expectReason("does not match the file") { try Archive.verify(at: second, publicKey: fixture.publicKey) }
        try expectReason("does not authenticate") { try Archive.open(at: second, keys: fixture.vault.backupKeys) }
        try b.write(to: second)

        // Re-signed by someone else's key.
        let intruder = SigningKey.generate()
        let forged = MinisignSignature.sign(
            fileDigest: BLAKE2b.hash(Array(b), outputByteCount: 64), with: intruder,
            trustedComment: try MinisignSignature(
                parsing: String(contentsOf: Archive.signatureURL(for: second), encoding: .utf8)
            ).trustedComment,
            untrustedComment: "forged")
        let goodSignature = try String(contentsOf: Archive.signatureURL(for: second), encoding: .utf8)
        try forged.fileContents.write(to: Archive.signatureURL(for: second), atomically: true, encoding: .utf8)
        try expectReason("signed by another key") { try Archive.verify(at: second, publicKey: fixture.publicKey) }
        try goodSignature.write(to: Archive.signatureURL(for: second), atomically: true, encoding: .utf8)

        // The older archive (and its genuine signature) replayed under the newer one's name.
        try FileManager.default.removeItem(at: second)
        try FileManager.default.removeItem(at: Archive.signatureURL(for: second))
        let replayed = second.deletingLastPathComponent().appendingPathComponent("coffer-20260921-141322-000009.cbak")
        try FileManager.default.copyItem(at: first, to: replayed)
        try FileManager.default.copyItem(at: Archive.signatureURL(for: first), to: Archive.signatureURL(for: replayed))
        try expectReason("replayed under a newer name") {
            try Archive.verify(at: replayed, publicKey: fixture.publicKey)
        }

        // An archive of another vault does not open with this vault's keys.
        let other = try Fixture()
        let foreign = try other.write(sequence: 1)
        try expectReason("another vault") { try Archive.open(at: foreign, keys: fixture.vault.backupKeys) }
        try expectReason("signed by another key") { try Archive.verify(at: foreign, publicKey: fixture.publicKey) }
    }

    func expectReason(_ text: String, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Any)
        throws
    {
        do {
            _ = try body()
            Issue.record("expected a failure mentioning '\(text)'", sourceLocation: sourceLocation)
        } catch let error as BackupError {
            #expect(
                error.errorDescription?.contains(text) == true, "\(error.errorDescription ?? "")",
                sourceLocation: sourceLocation)
        }
    }

    @Test func noPlaintextInArchivesOrSignatures() throws {
        let fixture = try Fixture()
        let url = try fixture.write(sequence: 1)
        for file in [url, Archive.signatureURL(for: url)] {
            let contents = try Data(contentsOf: file)
            for canary in ["CANARY-ARCHIVE", "record 1", "1234.56"] {
                #expect(contents.range(of: Data(canary.utf8)) == nil, "\(canary) in \(file.lastPathComponent)")
                #expect(contents.range(of: canary.data(using: .utf16LittleEndian)!) == nil)
            }
        }
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: url.deletingLastPathComponent().path).sorted()
                == [url.lastPathComponent, url.lastPathComponent + ".minisig"], "no partial files left behind")
    }

    @Test func refusesCompromisedLiblzmaOnlyForThoseVersions() throws {
        try XZ.checkLibrary()  // Debian's 5.4.x here
        #expect(XZ.versionString.hasPrefix("5."))
    }
}

/// An archive built by scripts/make-vectors.py from Specs/backup-format.md alone (secretstream,
/// xz, the export layout, minisign's format written out in Python): Coffer verifies it with the
/// public key file beside it and opens it with the passphrase of its archived header.
@Suite struct ArchiveVectorTests {
    struct Vectors: Decodable {
        struct ArchiveFixture: Decodable {
            struct Entry: Decodable { let id: String; let payload: String }
            let file, publicKey, passphrase, netWorth, trustedComment: String
            let sequence, created, commitCounter: UInt64
            let records: [Entry]
        }
        let archive: ArchiveFixture
    }

    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
        "../../Specs/vectors"
    ).standardized
    static let vectors = try! JSONDecoder().decode(
        Vectors.self, from: Data(contentsOf: directory.appendingPathComponent("vault-v2.json")))

    @Test func theIndependentlyBuiltArchiveVerifiesAndOpens() throws {
        let fixture = Self.vectors.archive
        let url = Self.directory.appendingPathComponent(fixture.file)
        let publicKey = try MinisignPublicKey(
            parsing: String(contentsOf: Self.directory.appendingPathComponent(fixture.publicKey), encoding: .utf8))
        let info = try Archive.verify(at: url, publicKey: publicKey)
        #expect(info.sequence == fixture.sequence && UInt64(info.created.timeIntervalSince1970) == fixture.created)
        #expect(info.hasSignedName && info.commitCounter == fixture.commitCounter && info.device != nil)

        let keys = try Vault.unlockArchivedHeader(
            try Archive.peek(at: url).vaultHeader, credential: .passphrase(try Passphrase(fixture.passphrase))
        ).backupKeys
        #expect(keys.keyHistory.count == 2)
        #expect(
            try Archive.verify(at: url, trust: ArchiveTrust(vaultID: keys.vaultID, history: keys.keyHistory)).generation
                == 2)
        var records: [(RecordID, Data)] = []
        let contents = try Archive.open(at: url, keys: keys) { records.append(($0, Data($1))) }
        #expect(records.map { $0.0.hex } == fixture.records.map(\.id))
        #expect(
            records.map { Data($0.1).map { String(format: "%02x", $0) }.joined() }
                == fixture.records.map(\.payload))
        #expect(contents.netWorth == fixture.netWorth && contents.commitCounter == fixture.commitCounter)
        #expect(
            try MinisignSignature(parsing: String(contentsOf: Archive.signatureURL(for: url), encoding: .utf8))
                .trustedComment == fixture.trustedComment)
    }
}

/// Archive format 2 built by `scripts/make-vectors.py` from Specs/backup-format.md alone: the id
/// table (with an id only the change log names), blocks in columns, a whole-payload block and a
/// kind 0 block. Coffer verifies it and rebuilds every payload byte for byte.
@Suite struct ArchiveFormatTwoVectorTests {
    struct Vector: Decodable {
        struct Record: Decodable {
            let id: String
            let payload: String
        }
        let file: String
        let publicKey: String
        let passphrase: String
        let sequence: UInt64
        let records: [Record]
        let netWorth: String
        let commitCounter: UInt64
    }

    /// Formats 2, 3 (the id table coded as differences, `n` in layouts) and 4 (the id table coded
    /// in columns), each built by scripts/make-vectors.py from Specs/backup-format.md alone.
    @Test(arguments: ["archive-v2.json", "archive-v3.json", "archive-v4.json"])
    func theIndependentlyBuiltColumnArchivesOpen(vectorFile: String) throws {
        let directory = ArchiveVectorTests.directory
        let vector = try JSONDecoder().decode(
            Vector.self, from: Data(contentsOf: directory.appendingPathComponent(vectorFile)))
        let url = directory.appendingPathComponent(vector.file)
        let publicKey = try MinisignPublicKey(
            parsing: String(contentsOf: directory.appendingPathComponent(vector.publicKey), encoding: .utf8))
        #expect(try Archive.verify(at: url, publicKey: publicKey).sequence == vector.sequence)
        let keys = try Vault.unlockArchivedHeader(
            try Archive.peek(at: url).vaultHeader, credential: .passphrase(try Passphrase(vector.passphrase))
        ).backupKeys
        var records: [(String, String)] = []
        let contents = try Archive.open(at: url, keys: keys) { id, payload in
            records.append((id.hex, payload.map { String(format: "%02x", $0) }.joined()))
        }
        #expect(records.map(\.0) == vector.records.map(\.id))
        #expect(records.map(\.1) == vector.records.map(\.payload))
        #expect(contents.netWorth == vector.netWorth && contents.commitCounter == vector.commitCounter)
    }
}

/// Learning later key generations from archives' certified histories, attacked.
@Suite struct KeyHistoryLearningTests {
    /// Two copies of a vault rekeyed separately certify two different second generations (as
    /// whoever kept the first key could): only the agreed first generation is trusted, and the
    /// conflict is reported, so neither chain can make the other's archives foreign silently.
    @Test func conflictingSuccessorsAreNotLearnt() throws {
        let fixture = try Fixture()
        let firstHistory = fixture.vault.keyHistory
        let copy = fixture.directory.path("copy.coffer")
        try FileManager.default.copyItem(at: fixture.directory.path("vault.coffer"), to: copy)
        _ = try fixture.vault.rekey()
        _ = try fixture.write(sequence: 2)
        let other = try Vault.open(at: copy, with: .passphrase(try Passphrase("archive passphrase")))
        _ = try other.rekey()
        let folder = fixture.directory.path("backups")
        let trust = ArchiveTrust(vaultID: fixture.vault.id, history: firstHistory)
        #expect(trust.extended(byArchivesIn: [folder]).keys.count == 2, "one chain alone is learnt")
        _ = try Archive.write(
            CollectedRecords([]), netWorth: "GBP 0.00", appVersion: "test", commitCounter: 1, keys: other.backupKeys,
            sequence: 3, created: Date(timeIntervalSince1970: 1_790_000_100), to: folder)
        let learnt = trust.extended(byArchivesIn: [folder])
        #expect(learnt.keys.count == 1 && learnt.conflictAfter == 1)
    }

    /// An archive signed by a superseded key with a time after the rekey was not made by the vault.
    @Test func aSupersededKeyCannotSignLaterArchives() throws {
        let fixture = try Fixture()
        let stolen = fixture.vault.backupKeys
        _ = try fixture.vault.rekey()
        let trust = ArchiveTrust(vaultID: fixture.vault.id, history: fixture.vault.keyHistory)
        let folder = fixture.directory.path("backups")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let later = try Archive.write(
            CollectedRecords([]), netWorth: "GBP 0.00", appVersion: "attacker", commitCounter: 1, keys: stolen,
            sequence: 9, created: Date().addingTimeInterval(3600), to: folder
        ).url
        #expect(throws: BackupError.self) { try Archive.verify(at: later, trust: trust) }
        #expect(Archive.signedDescriptions(in: folder, trust: trust).isEmpty)
        let earlier = try Archive.write(
            CollectedRecords([]), netWorth: "GBP 0.00", appVersion: "attacker", commitCounter: 1, keys: stolen,
            sequence: 8, created: Date().addingTimeInterval(-3600), to: folder
        ).url
        #expect(try Archive.verify(at: earlier, trust: trust).generation == 1)
        #expect(Archive.signedDescriptions(in: folder, trust: trust).map(\.bySupersededKey) == [true])
    }
}
