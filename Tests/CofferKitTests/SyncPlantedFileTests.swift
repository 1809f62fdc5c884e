import CofferTestSupport
import FinanceCore
import Foundation
import Testing
import VaultCrypto

@testable import CofferKit
@testable import VaultStore

#if canImport(Glibc)
    import Glibc
#endif

/// Anyone who can write the sync folder plants something in it: another vault's files, junk, an
/// empty file, a directory or a link where a file belongs, a pipe, thousands of files. Each is
/// reported once per sync, everything genuine merges, and no device is ever stopped by it (only
/// `sync init` refuses a folder that holds another vault).
@Suite struct SyncPlantedFileTests {
    let passphrase = "sync attack passphrase"
    let today = date("2026-11-24")
    typealias Pair = SyncAttackTests.Pair

    /// Plants with `plant`, then: A publishes and B merges (both syncs succeed), the planted file
    /// is reported by B as `expected` on this sync and the next, and a later file still merges.
    func plantedFileNeverStopsASync(
        _ plant: (Pair) throws -> Void, expected: (SyncFileProblem) -> Bool,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let pair = try Pair(passphrase: passphrase, today: today)
        try plant(pair)
        _ = try pair.publish(200, today: today)
        let report = try SyncService.sync(pair.b)
        #expect(pair.bValues == [100, 200], "the genuine file merged", sourceLocation: sourceLocation)
        #expect(
            report.problems.count == 1 && report.problems.allSatisfy { expected($0.problem) },
            "\(report.problems)", sourceLocation: sourceLocation)
        let again = try SyncService.sync(pair.b)
        #expect(
            again.problems.map(\.file) == report.problems.map(\.file), "reported again, once",
            sourceLocation: sourceLocation)
        _ = try pair.publish(300, today: today)
        _ = try SyncService.sync(pair.b)
        #expect(pair.bValues == [100, 200, 300], sourceLocation: sourceLocation)
    }

    func otherVault() throws -> Pair { try Pair(passphrase: passphrase, today: today) }

    func keysFile(of pair: Pair) throws -> URL {
        try #require(try SyncFolder(url: pair.folder, epoch: 1).list().keys[1]?.first)
    }

    @Test func anotherVaultsKeysFileIsRefused() throws {
        let other = try otherVault()
        try plantedFileNeverStopsASync(
            { pair in
                let theirs = try keysFile(of: other)
                try FileManager.default.copyItem(
                    at: theirs, to: pair.folder.appendingPathComponent(theirs.lastPathComponent))
            }, expected: { $0 == .otherVault })
    }

    @Test func anotherVaultsEnrolmentIsRefused() throws {
        let other = try otherVault()
        try plantedFileNeverStopsASync(
            { pair in
                // Their device's enrolment, as if it were a device of ours.
                let theirs = pair.folder.appendingPathComponent(other.aFiles.lastPathComponent)
                try FileManager.default.createDirectory(at: theirs, withIntermediateDirectories: true)
                try FileManager.default.copyItem(
                    at: other.aFiles.appendingPathComponent(SyncFolder.enrolmentName(1)),
                    to: theirs.appendingPathComponent(SyncFolder.enrolmentName(1)))
            }, expected: { $0 == .otherVault })
    }

    /// Under the desktop's name, as its next file: the laptop refuses it and still merges the
    /// rest; the desktop, whose name it took, removes it and publishes its own there.
    @Test func anotherVaultsChangeFileIsRefused() throws {
        let pair = try Pair(passphrase: passphrase, today: today)
        let other = try otherVault()
        let theirs = try other.publish(999, today: today)
        let bFiles = pair.folder.appendingPathComponent(pair.b.syncState!.state.device.hex)
        try FileManager.default.copyItem(
            at: theirs, to: bFiles.appendingPathComponent(SyncFolder.changesName(1, epoch: 1)))
        try pair.b.recordValue(of: try pair.b.account(named: "Savings"), amount: Money(minorUnits: 150), on: today)
        _ = try pair.publish(200, today: today)
        let laptop = try SyncService.sync(pair.a)
        #expect(laptop.problems.map(\.problem) == [.otherVault], "\(laptop.problems)")
        let desktop = try SyncService.sync(pair.b)
        #expect(desktop.problems.map(\.problem) == [.otherVault] && desktop.published.map(\.sequence) == [1])
        #expect(pair.bValues == [100, 150, 200])
        #expect(try SyncService.sync(pair.a).problems.isEmpty)
        #expect(pair.a.updates.map(\.amount.minorUnits).sorted() == [100, 150, 200])
    }

    @Test func aKeysFileUnderAnotherGenerationsNameIsRefused() throws {
        try plantedFileNeverStopsASync(
            { pair in
                // This vault's own header, named as if the keys were replaced (generation 9).
                let ours = try keysFile(of: pair)
                let name = ours.lastPathComponent.replacingOccurrences(of: "keys-00000001-", with: "keys-00000009-")
                try FileManager.default.copyItem(at: ours, to: pair.folder.appendingPathComponent(name))
            },
            expected: {
                if case .misnamed = $0 { return true }
                return false
            })
    }

    @Test func junkUnderAKeysNameIsRefused() throws {
        try plantedFileNeverStopsASync(
            { pair in
                try Data(SecureRandom.bytes(count: 3000)).write(
                    to: pair.folder.appendingPathComponent("keys-00000002-0badf00d.cfkeys"))
            }, expected: { $0 == .damaged })
    }

    @Test func aHostileHeaderUnderAKeysNameIsRefused() throws {
        try plantedFileNeverStopsASync(
            { pair in
                // The keys magic, then a vault header that claims 65,535 generations of history.
                var bytes = Array("CFRSKEY1".utf8) + Array("CFRVAULT".utf8) + [0, 3]
                bytes += [UInt8](repeating: 0xFF, count: 4096)
                try Data(bytes).write(to: pair.folder.appendingPathComponent("keys-00000001-00000000.cfkeys"))
            }, expected: { $0 == .damaged })
    }

    @Test func anEmptyKeysFileWaits() throws {
        let pair = try Pair(passphrase: passphrase, today: today)
        let empty = pair.folder.appendingPathComponent("keys-00000002-00000000.cfkeys")
        FileManager.default.createFile(atPath: empty.path, contents: Data())
        _ = try pair.publish(200, today: today)
        let report = try SyncService.sync(pair.b)
        #expect(pair.bValues == [100, 200])
        #expect(report.problems.map(\.problem) == [.incomplete] && report.rejectedCount == 0, "\(report.problems)")
    }

    @Test func aDirectoryWhereAFileBelongsIsRefused() throws {
        try plantedFileNeverStopsASync(
            { pair in
                try FileManager.default.createDirectory(
                    at: pair.folder.appendingPathComponent("keys-00000001-00000000.cfkeys/inside"),
                    withIntermediateDirectories: true)
            }, expected: { $0 == .notAFile })
    }

    @Test func aLinkIsNotFollowed() throws {
        try plantedFileNeverStopsASync(
            { pair in
                // To a device that never ends: read, it would fill memory.
                try FileManager.default.createSymbolicLink(
                    at: pair.folder.appendingPathComponent("keys-00000001-00000000.cfkeys"),
                    withDestinationURL: URL(fileURLWithPath: "/dev/zero"))
            }, expected: { $0 == .notAFile })
    }

    @Test func aPipeIsNotWaitedOn() throws {
        try plantedFileNeverStopsASync(
            { pair in
                // A pipe no one writes: opened for reading the ordinary way, it blocks for ever.
                let device = pair.folder.appendingPathComponent(SyncDeviceID.random().hex)
                try FileManager.default.createDirectory(at: device, withIntermediateDirectories: true)
                #expect(mkfifo(device.appendingPathComponent(SyncFolder.enrolmentName(1)).path, 0o600) == 0)
            }, expected: { $0 == .notAFile })
    }

    @Test func thousandsOfPlantedFilesAreEachReported() throws {
        let pair = try Pair(passphrase: passphrase, today: today)
        let junk = Data(SecureRandom.bytes(count: 100))
        for number in 0..<1500 {
            try junk.write(
                to: pair.folder.appendingPathComponent(
                    "keys-00000001-\(String(format: "%08x", number)).cfkeys"))
        }
        let stranger = pair.folder.appendingPathComponent(SyncDeviceID.random().hex)
        try FileManager.default.createDirectory(at: stranger, withIntermediateDirectories: true)
        for number in 1...1500 {
            try junk.write(to: stranger.appendingPathComponent(SyncFolder.changesName(UInt64(number), epoch: 1)))
        }
        _ = try pair.publish(200, today: today)
        let report = try SyncService.sync(pair.b)
        #expect(pair.bValues == [100, 200])
        #expect(report.problems.filter { $0.problem == .damaged }.count == 1500)
        #expect(report.problems.filter { $0.problem == .unknownDevice }.count == 1, "a stranger's files, once")
    }

    /// A file planted under the name this device publishes under next: no one can use it, and
    /// it would take the name. The device removes it, says so, and publishes its own there.
    @Test func aFilePlantedUnderThisDevicesNextNameIsReplacedByItsOwn() throws {
        let pair = try Pair(passphrase: passphrase, today: today)
        let other = try otherVault()
        let theirs = try other.publish(999, today: today)
        let next = pair.aFiles.appendingPathComponent(SyncFolder.changesName(2, epoch: 1))
        try FileManager.default.copyItem(at: theirs, to: next)
        try pair.a.recordValue(of: try pair.a.account(named: "Savings"), amount: Money(minorUnits: 200), on: today)
        let laptop = try SyncService.sync(pair.a)
        #expect(laptop.problems.map(\.problem) == [.otherVault], "\(laptop.problems)")
        #expect(laptop.published.map(\.sequence) == [2])
        #expect(try SyncService.sync(pair.b).problems.isEmpty)
        #expect(pair.bValues == [100, 200])
        // Its enrolment replaced by junk: put right the same way, and the desktop still reads it.
        let enrolment = pair.aFiles.appendingPathComponent(SyncFolder.enrolmentName(1))
        try FileManager.default.removeItem(at: enrolment)
        try Data(SecureRandom.bytes(count: 700)).write(to: enrolment)
        #expect(try SyncService.sync(pair.a).problems.map(\.problem) == [.damaged])
        _ = try pair.publish(300, today: today)
        #expect(try SyncService.sync(pair.b).problems.isEmpty)
        #expect(pair.bValues == [100, 200, 300])
    }

    /// The same file planted while the sync runs, after the folder was listed: the name is found
    /// taken only as the change file goes in. The planted file is removed and reported, this
    /// device's own goes in its place; a file this device signed there (another sync of this
    /// device got there first) is left as it is, and this sync stops.
    @Test func aFilePlantedUnderTheNextNameDuringTheSyncIsReplaced() throws {
        let pair = try Pair(passphrase: passphrase, today: today)
        let other = try otherVault()
        let theirs = try other.publish(999, today: today)
        let state = try #require(pair.a.syncState?.state)
        let keys = SyncKeys(pair.a.vault.backupKeys)
        let folder = SyncFolder(url: pair.folder, epoch: keys.generation)
        let next = pair.aFiles.appendingPathComponent(SyncFolder.changesName(2, epoch: keys.generation))
        let own = SyncEnvelope.seal(
            kind: .changes, packed: try SyncChanges(published: 0, seen: [:], operations: []).packed(), keys: keys,
            device: state.device, sequence: 2, signer: state.signingKey)
        for planted in ["another vault's", "directory", "link"] {
            switch planted {
            case "directory": try FileManager.default.createDirectory(at: next, withIntermediateDirectories: false)
            case "link": try FileManager.default.createSymbolicLink(at: next, withDestinationURL: theirs)
            default: try FileManager.default.copyItem(at: theirs, to: next)
            }
            var problems: [SyncReport.Problem] = []
            try SyncService.publishOwn(own, sequence: 2, state: state, keys: keys, folder: folder, planted: &problems)
            #expect(problems.count == 1, "\(planted): \(problems)")
            #expect(try Data(contentsOf: next) == Data(own), "\(planted): its own file went in")
            #expect(FileManager.default.fileExists(atPath: theirs.path), "a link's target is left alone")
            try FileManager.default.removeItem(at: next)
        }
        try Data(own).write(to: next)
        var problems: [SyncReport.Problem] = []
        #expect(throws: CofferError.self) {
            try SyncService.publishOwn(
                SecureRandom.bytes(count: 64), sequence: 2, state: state, keys: keys, folder: folder,
                planted: &problems)
        }
        #expect(problems.isEmpty)
        #expect(try Data(contentsOf: next) == Data(own), "this device's own file is never removed")
    }

    /// An enrolment name taken after the listing: junk there is removed and reported, and this
    /// device's enrolment goes in; its own enrolment there is kept.
    @Test func anEnrolmentNameTakenDuringTheSyncIsPutRight() throws {
        let pair = try Pair(passphrase: passphrase, today: today)
        let state = try #require(pair.a.syncState?.state)
        let keys = SyncKeys(pair.a.vault.backupKeys)
        let folder = SyncFolder(url: pair.folder, epoch: keys.generation)
        let enrolment = pair.aFiles.appendingPathComponent(SyncFolder.enrolmentName(keys.generation))
        let genuine = try Data(contentsOf: enrolment)
        try FileManager.default.removeItem(at: enrolment)
        let listed = try folder.list()
        try Data(SecureRandom.bytes(count: 700)).write(to: enrolment)
        var problems: [SyncReport.Problem] = []
        try SyncService.publishEnrolment(
            state, keys: keys, folder: folder, listing: listed, now: Date(), planted: &problems)
        #expect(problems.map(\.problem) == [.damaged], "\(problems)")
        try SyncService.ownEnrolmentIsIntact(enrolment, state: state, keys: keys)
        try FileManager.default.removeItem(at: enrolment)
        try genuine.write(to: enrolment)
        problems = []
        try SyncService.publishEnrolment(
            state, keys: keys, folder: folder, listing: listed, now: Date(), planted: &problems)
        #expect(problems.isEmpty)
        #expect(try Data(contentsOf: enrolment) == genuine)
        _ = try pair.publish(200, today: today)
        #expect(try SyncService.sync(pair.b).problems.isEmpty)
        #expect(pair.bValues == [100, 200])
    }

    /// A device joining a folder with another vault's keys file in it joins this vault.
    @Test func joiningPastAnotherVaultsKeysFile() throws {
        let pair = try Pair(passphrase: passphrase, today: today)
        let other = try Pair(passphrase: "another vault's passphrase", today: today)
        // Renamed to a newer generation than this vault's, so it is tried first.
        let theirs = try keysFile(of: other)
        try FileManager.default.copyItem(
            at: theirs,
            to: pair.folder.appendingPathComponent(
                theirs.lastPathComponent.replacingOccurrences(of: "keys-00000001-", with: "keys-00000007-")))
        let joined = try SyncService.join(
            folder: pair.folder, vault: pair.directory.path("c.coffer"),
            credential: .passphrase(try Passphrase(passphrase)), deviceName: "phone")
        #expect(joined.ledger.vault.id == pair.a.vault.id)
        #expect(joined.ledger.updates.map(\.amount.minorUnits) == [100])
    }

    /// What anyone who can read the folder can make: a header of this vault's id, with a master
    /// key and key history of their own, whose recovery slot is sealed to the recovery key's
    /// public half (in every keys file), planted as generation `generation`.
    func forgeRecoveryHeader(in folder: URL, generation: UInt32) throws {
        var recipient: KeyAgreementPublicKey?
        var vaultID: VaultID?
        for file in try SyncFolder(url: folder, epoch: 0).list().keys.values.flatMap({ $0 }) {
            let header = try VaultHeader.decode(Array([UInt8](try Data(contentsOf: file)).dropFirst(8)))
            vaultID = header.vaultID
            if case .sealed(let key, _, _)? = header.recoverySlot { recipient = key }
        }
        let id = try #require(vaultID), to = try #require(recipient)
        let master = SymmetricKey.random()
        let keys = MasterKeys(master: master)
        let salt = Salt.random()
        let kek = try MasterKeys.deriveKEK(
            passphrase: try Passphrase("the attacker's own"), salt: salt, parameters: testParameters)
        let signing = keys.operational.signing
        let header = VaultHeader(
            vaultID: id, keys: keys, generation: generation,
            passphraseSlot: PassphraseSlot.wrapping(
                master, kek: kek, parameters: testParameters, salt: salt, vaultID: id),
            recoverySlot: try RecoverySlot.sealing(master, to: to, vaultID: id),
            keyHistory: (1...generation).map {
                KeyGeneration.certified(number: $0, created: 0, signingKey: signing.publicKey, by: signing, vaultID: id)
            })
        let bytes = header.encoded()
        try Data(SyncService.keysMagic + bytes).write(
            to: folder.appendingPathComponent(SyncFolder.keysName(generation, header: bytes)))
    }

    /// A keys file forged for the recovery key is never taken for the vault's: a device joining
    /// with the recovery key refuses the folder (which history is genuine cannot be told), one
    /// joining with the passphrase joins the vault, and the forgery stops no sync.
    @Test func aKeysFileForgedForTheRecoveryKeyIsNeverJoined() throws {
        let pair = try Pair(passphrase: passphrase, today: today)
        let (recoveryKey, _) = try pair.a.vault.createRecoveryKey()
        _ = try SyncService.sync(pair.a)  // the header with the recovery slot
        try forgeRecoveryHeader(in: pair.folder, generation: 5)
        let synced = try SyncService.sync(pair.a)
        #expect(synced.problems.contains { "\($0.problem)".contains("not this vault's keys") }, "\(synced.problems)")
        #expect(throws: CofferError.self) {
            try SyncService.join(
                folder: pair.folder, vault: pair.directory.path("c.coffer"), credential: .recoveryKey(recoveryKey),
                deviceName: "new laptop")
        }
        #expect(!FileManager.default.fileExists(atPath: pair.directory.path("c.coffer").path))
        let joined = try SyncService.join(
            folder: pair.folder, vault: pair.directory.path("d.coffer"),
            credential: .passphrase(try Passphrase(passphrase)), deviceName: "new desktop")
        #expect(joined.ledger.vault.keyGeneration == 1 && joined.ledger.updates.map(\.amount.minorUnits) == [100])
    }

    /// After a genuine key change, a device taking on the new keys with the recovery key takes
    /// the genuine ones, not a newer generation planted for the recovery key.
    @Test func takingOnNewKeysPassesOverAForgedNewerGeneration() throws {
        let pair = try Pair(passphrase: passphrase, today: today)
        let (recoveryKey, _) = try pair.a.vault.createRecoveryKey()
        _ = try SyncService.sync(pair.a)
        _ = try SyncService.sync(pair.b)
        try forgeRecoveryHeader(in: pair.folder, generation: 9)
        _ = try pair.a.vault.rekey()
        _ = try SyncService.sync(pair.a)
        #expect(throws: CofferError.self) { try SyncService.sync(pair.b) }  // keys changed: generation 2
        let adopted = try SyncService.adoptNewKeys(
            pair.b, credential: .recoveryKey(recoveryKey), keptAt: pair.directory.path("b.kept"))
        #expect(adopted.ledger.vault.keyGeneration == 2)
        #expect(adopted.ledger.vault.backupKeys.keyHistory == pair.a.vault.backupKeys.keyHistory)
    }

    /// This device's own directory replaced by a link to another device's, or by a file: the
    /// other device's files are never touched, and this device publishes into a real directory.
    @Test func aLinkOrAFileInPlaceOfThisDevicesDirectoryHarmsNoOne() throws {
        let pair = try Pair(passphrase: passphrase, today: today)
        _ = try pair.publish(200, today: today)
        _ = try SyncService.sync(pair.b)
        let bFiles = pair.folder.appendingPathComponent(pair.b.syncState!.state.device.hex)
        try pair.b.recordValue(of: try pair.b.account(named: "Savings"), amount: Money(minorUnits: 150), on: today)
        _ = try SyncService.sync(pair.b)
        let before = try FileManager.default.contentsOfDirectory(atPath: bFiles.path).sorted()
        try FileManager.default.removeItem(at: pair.aFiles)
        try FileManager.default.createSymbolicLink(at: pair.aFiles, withDestinationURL: bFiles)
        _ = try pair.publish(300, today: today)
        #expect(try FileManager.default.contentsOfDirectory(atPath: bFiles.path).sorted() == before)
        #expect(SyncFolder.isRealDirectory(pair.aFiles))
        _ = try SyncService.sync(pair.b)
        #expect(pair.bValues == [100, 150, 200, 300])
        // A file in its place: moved aside, and the device publishes again.
        try FileManager.default.removeItem(at: pair.aFiles)
        try Data("planted".utf8).write(to: pair.aFiles)
        _ = try pair.publish(400, today: today)
        _ = try SyncService.sync(pair.b)
        #expect(pair.bValues == [100, 150, 200, 300, 400])
    }

    /// This device's enrolment spoiled: the sync that answers from the state alone does not
    /// call that up to date; the full sync puts it back.
    @Test func aSpoiledOwnEnrolmentIsNotUpToDate() throws {
        let pair = try Pair(passphrase: passphrase, today: today)
        _ = try SyncService.sync(pair.a)
        #expect(SyncService.upToDate(pair.a.vault.unlockedFile) != nil)
        let enrolment = pair.aFiles.appendingPathComponent(SyncFolder.enrolmentName(1))
        try FileManager.default.removeItem(at: enrolment)
        try Data(SecureRandom.bytes(count: 700)).write(to: enrolment)
        #expect(SyncService.upToDate(pair.a.vault.unlockedFile) == nil)
        _ = try SyncService.sync(pair.a)
        #expect(SyncService.upToDate(pair.a.vault.unlockedFile) != nil)
        _ = try pair.publish(200, today: today)
        _ = try SyncService.sync(pair.b)
        #expect(pair.bValues == [100, 200])
    }

    /// This device's keys file with other bytes under its name (as a header made to match the
    /// 32 bits of digest the name holds would be): not counted as its own, not up to date, and
    /// put back byte for byte by the next sync.
    @Test func anImpostorUnderThisDevicesKeysNameIsReplacedByItsOwn() throws {
        let pair = try Pair(passphrase: passphrase, today: today)
        _ = try SyncService.sync(pair.a)
        let ours = try keysFile(of: pair)
        let genuine = try Data(contentsOf: ours)
        var impostor = genuine
        impostor[impostor.count / 2] ^= 0x01
        try impostor.write(to: ours)
        let listing = try SyncFolder(url: pair.folder, epoch: 1).list()  // unscreened: as if it had passed
        #expect(
            !SyncService.ownKeysFileIsIntact(
                SyncFolder(url: pair.folder, epoch: 1), listing: listing, generation: 1,
                header: pair.a.vault.backupKeys.headerBytes))
        #expect(SyncService.upToDate(pair.a.vault.unlockedFile) == nil)
        _ = try SyncService.sync(pair.a)
        #expect(try Data(contentsOf: ours) == genuine)
        #expect(SyncService.upToDate(pair.a.vault.unlockedFile) != nil)
    }

    /// A keys file or an enrolment larger than any Coffer writes is refused unread: 64 KiB at
    /// most, however large a (sparse) planted file claims to be.
    @Test func oversizedKeysFilesAndEnrolmentsAreRefusedUnread() throws {
        let pair = try Pair(passphrase: passphrase, today: today)
        var keys = SyncService.keysMagic + Array(try Data(contentsOf: try keysFile(of: pair))).dropFirst(8)
        keys += [UInt8](repeating: 0, count: (64 << 10) + 1 - keys.count)
        try Data(keys).write(to: pair.folder.appendingPathComponent("keys-00000001-00000001.cfkeys"))
        let stranger = pair.folder.appendingPathComponent(SyncDeviceID.random().hex)
        try FileManager.default.createDirectory(at: stranger, withIntermediateDirectories: true)
        let enrolment = stranger.appendingPathComponent(SyncFolder.enrolmentName(1))
        FileManager.default.createFile(atPath: enrolment.path, contents: Data(SyncEnvelope.magic))
        let handle = try FileHandle(forWritingTo: enrolment)
        try handle.truncate(atOffset: 1 << 30)  // a gibibyte of holes
        try handle.close()
        _ = try pair.publish(200, today: today)
        let report = try SyncService.sync(pair.b)
        #expect(pair.bValues == [100, 200])
        #expect(report.problems.map(\.problem) == [.damaged, .damaged], "\(report.problems)")
    }

    /// A join tries at most `joinAttempts` headers with the passphrase (an Argon2id run each),
    /// newest first; junk and headers renamed to another generation cost none and are passed over.
    @Test func aJoinTriesABoundedNumberOfPlantedHeaders() throws {
        let pair = try Pair(passphrase: passphrase, today: today)
        let ours = try keysFile(of: pair)
        for generation in 2...30 {
            try FileManager.default.copyItem(
                at: ours,
                to: pair.folder.appendingPathComponent(
                    ours.lastPathComponent.replacingOccurrences(
                        of: "keys-00000001-", with: "keys-\(String(format: "%08d", generation))-")))
        }
        let joined = try SyncService.join(
            folder: pair.folder, vault: pair.directory.path("c.coffer"),
            credential: .passphrase(try Passphrase(passphrase)), deviceName: "phone")
        #expect(joined.ledger.vault.id == pair.a.vault.id)
        // Headers that need the credential, planted at newer generations than the vault's: the
        // join stops after so many and says the passphrase did not open them.
        _ = try pair.a.vault.createRecoveryKey()
        _ = try SyncService.sync(pair.a)  // a header with a recovery slot, for the forger to read
        for generation in 2...UInt32(SyncService.joinAttempts + 1) {
            try forgeRecoveryHeader(in: pair.folder, generation: generation)
        }
        #expect(throws: VaultError.self) {
            try SyncService.join(
                folder: pair.folder, vault: pair.directory.path("d.coffer"),
                credential: .passphrase(try Passphrase(passphrase)), deviceName: "tablet")
        }
    }
}
