import CofferTestSupport
import FinanceCore
import Foundation
import Testing
import VaultCrypto
import VaultStore

@testable import CofferKit

/// Whoever holds the sync folder (the sync provider, a thief of the USB stick, another local
/// user) attacks it: every file altered, truncated, replayed, reordered, renamed, duplicated,
/// planted or taken from another vault is refused with its reason, nothing of it reaches the
/// vault, and everything genuine still merges.
@Suite struct SyncAttackTests {
    let passphrase = "sync attack passphrase"
    let today = date("2026-11-24")

    /// Two devices on one folder: A made it, B joined; A then publishes `count` more files.
    final class Pair: @unchecked Sendable {
        let directory = TemporaryDirectory()
        var a: Ledger
        var b: Ledger
        var folder: URL { directory.path("folder") }
        var aFiles: URL { folder.appendingPathComponent(a.syncState!.state.device.hex) }

        init(passphrase: String, today: CalendarDate) throws {
            a = try Ledger.create(
                at: directory.path("a.coffer"), passphrase: try Passphrase(passphrase), parameters: testParameters,
                currency: .gbp)
            try a.addAccount(
                name: "Savings", category: "Cash", kind: .asset, value: (Money(minorUnits: 100), today), today: today)
            _ = try SyncService.initialize(a, folder: directory.path("folder"), deviceName: "laptop")
            b = try SyncService.join(
                folder: directory.path("folder"), vault: directory.path("b.coffer"),
                credential: .passphrase(try Passphrase(passphrase)), deviceName: "desktop"
            ).ledger
        }

        /// A writes a value and publishes it: A's next change file.
        func publish(_ minor: Int64, today: CalendarDate) throws -> URL {
            try a.recordValue(of: try a.account(named: "Savings"), amount: Money(minorUnits: minor), on: today)
            let sequence = try SyncService.sync(a).published.last!.sequence
            return aFiles.appendingPathComponent(SyncFolder.changesName(sequence, epoch: 1))
        }

        var bValues: [Int64] { b.updates.map(\.amount.minorUnits).sorted() }
    }

    func problems(_ report: SyncReport) -> [SyncFileProblem] { report.problems.map(\.problem) }

    @Test func alteredBytesAnywhereAreRefusedAndNothingIsApplied() throws {
        let pair = try Pair(passphrase: passphrase, today: today)
        let file = try pair.publish(200, today: today)
        let original = try Data(contentsOf: file)
        // A flipped bit in the header, in the sealed body, and in the signature.
        for offset in [30, 57 + 40, original.count - 3] {
            var bytes = original
            bytes[offset] ^= 0x01
            try bytes.write(to: file)
            let report = try SyncService.sync(pair.b)
            #expect(!problems(report).isEmpty, "flip at \(offset)")
            #expect(
                problems(report).allSatisfy {
                    [.badSignature, .misnamed(""), .doesNotOpen].contains($0) || "\($0)".contains("replayed")
                }, "\(problems(report))")
            #expect(pair.bValues == [100], "nothing from an altered file is applied")
        }
        try original.write(to: file)
        #expect(try SyncService.sync(pair.b).problems.isEmpty)
        #expect(pair.bValues == [100, 200], "the genuine file still merges")
    }

    @Test func aReplayedOrRenamedFileIsRefused() throws {
        let pair = try Pair(passphrase: passphrase, today: today)
        let first = try pair.publish(200, today: today)
        _ = try SyncService.sync(pair.b)
        // File #2 replayed as #3: its contents say #2.
        let replay = pair.aFiles.appendingPathComponent(SyncFolder.changesName(3, epoch: 1))
        try FileManager.default.copyItem(at: first, to: replay)
        let report = try SyncService.sync(pair.b)
        #expect(problems(report).count == 1)
        guard case .misnamed = problems(report).first else {
            Issue.record("\(problems(report))")
            return
        }
        try FileManager.default.removeItem(at: replay)
        #expect(try SyncService.sync(pair.b).problems.isEmpty)
        #expect(pair.bValues == [100, 200], "applied once")
        // Planted in another device's folder as its next file: the laptop, reading the desktop's
        // files, refuses its own file there (its contents name the laptop).
        let bFiles = pair.folder.appendingPathComponent(pair.b.syncState!.state.device.hex)
        try FileManager.default.copyItem(
            at: first, to: bFiles.appendingPathComponent(SyncFolder.changesName(1, epoch: 1)))
        let moved = try SyncService.sync(pair.a)
        guard case .misnamed = problems(moved).first, problems(moved).count == 1 else {
            Issue.record("\(problems(moved))")
            return
        }
        #expect(pair.a.updates.map(\.amount.minorUnits).sorted() == [100, 200])
    }

    @Test func aFileWithAGapBeforeItWaitsAndAHiddenFileIsMergedWhenItComesBack() throws {
        let pair = try Pair(passphrase: passphrase, today: today)
        let second = try pair.publish(200, today: today)
        _ = try pair.publish(300, today: today)
        let aside = pair.directory.path("aside")
        try FileManager.default.moveItem(at: second, to: aside)
        let report = try SyncService.sync(pair.b)
        #expect(report.waiting.count == 1, "\(report.waiting)")
        #expect(report.waiting.first?.contains("waits for #2") == true)
        #expect(pair.bValues == [100], "#3 is not applied over the gap")
        try FileManager.default.moveItem(at: aside, to: second)
        let after = try SyncService.sync(pair.b)
        #expect(after.waiting.isEmpty)
        #expect(pair.bValues == [100, 200, 300])
    }

    @Test func aTruncatedOrPartlySyncedFileIsIncompleteUntilItIsWhole() throws {
        let pair = try Pair(passphrase: passphrase, today: today)
        let file = try pair.publish(200, today: today)
        let whole = try Data(contentsOf: file)
        for length in [0, 10, 56, 57, 600, whole.count - 1] {
            try whole.prefix(length).write(to: file)
            let report = try SyncService.sync(pair.b)
            #expect(problems(report) == [.incomplete], "length \(length)")
            #expect(pair.bValues == [100])
        }
        // Longer than its header says: damaged, not incomplete.
        try (whole + Data([0])).write(to: file)
        #expect(problems(try SyncService.sync(pair.b)) == [.damaged])
        try whole.write(to: file)
        _ = try SyncService.sync(pair.b)
        #expect(pair.bValues == [100, 200])
    }

    @Test func copiesASyncToolMadeAreIgnoredAndNeverAppliedTwice() throws {
        let pair = try Pair(passphrase: passphrase, today: today)
        let file = try pair.publish(200, today: today)
        for name in [
            "00000001-0000000000000002 (1).cfsync",
            "00000001-0000000000000002.sync-conflict-20261124-101010-ABCDEF.cfsync",
            "00000001-0000000000000002 (conflicted copy).cfsync",
        ] {
            try FileManager.default.copyItem(at: file, to: pair.aFiles.appendingPathComponent(name))
        }
        let report = try SyncService.sync(pair.b)
        #expect(report.copies.count == 3)
        #expect(report.problems.isEmpty)
        #expect(pair.bValues == [100, 200], "applied once")
        #expect(try SyncService.sync(pair.b).merged.isEmpty)
    }

    @Test func aFileFromAnotherVaultIsRefused() throws {
        let pair = try Pair(passphrase: passphrase, today: today)
        let other = try Pair(passphrase: passphrase, today: today)
        let theirs = try other.publish(999, today: today)
        // Planted under A's name, with the next sequence A would use.
        try FileManager.default.copyItem(
            at: theirs, to: pair.aFiles.appendingPathComponent(SyncFolder.changesName(2, epoch: 1)))
        #expect(problems(try SyncService.sync(pair.b)) == [.otherVault])
        #expect(pair.bValues == [100])
        // Its keys file is refused too, by name, and stops nothing (SyncPlantedFileTests).
        let theirKeys = try #require(try SyncFolder(url: other.folder, epoch: 1).list().keys[1]?.first)
        try FileManager.default.copyItem(
            at: theirKeys, to: pair.folder.appendingPathComponent(theirKeys.lastPathComponent))
        let report = try SyncService.sync(pair.b)
        #expect(problems(report) == [.otherVault, .otherVault], "\(report.problems)")
        #expect(report.problems.first?.file == theirKeys.lastPathComponent)
    }

    /// A device that is not enrolled, or enrolled by someone without the vault's keys, or a file
    /// sealed and signed by an outsider who copied the format: all refused.
    @Test func aPlantedDeviceCannotEnrolOrPublish() throws {
        let pair = try Pair(passphrase: passphrase, today: today)
        let keys = SyncKeys(pair.a.vault.backupKeys)
        let intruder = SyncDeviceID.random()
        let intruderKey = SigningKey.generate()
        let directory = pair.folder.appendingPathComponent(intruder.hex)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        // Its enrolment is signed with its own key, not the vault's; the sealing key is guessed.
        let enrolment = SyncEnvelope.seal(
            kind: .enrolment,
            body: SyncEnrolment(publicKey: intruderKey.publicKey.bytes, name: "intruder", enrolled: 0).encoded(),
            keys: keys, device: intruder, sequence: 0, signer: intruderKey)
        try Data(enrolment).write(to: directory.appendingPathComponent(SyncFolder.enrolmentName(1)))
        let payload = RecordCodec.encode(
            .account(Account(name: "Planted", category: "Cash", kind: .asset, created: today)))
        let changes = SyncChanges(
            published: 0, seen: [intruder: 0],
            operations: [SyncOperation(record: .random(), clock: 1 << 40, base: .zero, payload: payload)])
        let file = SyncEnvelope.seal(
            kind: .changes, body: changes.encoded(), keys: keys, device: intruder, sequence: 1, signer: intruderKey)
        try Data(file).write(to: directory.appendingPathComponent(SyncFolder.changesName(1, epoch: 1)))
        let report = try SyncService.sync(pair.b)
        #expect(
            problems(report).map(\.description).sorted()
                == [SyncFileProblem.badSignature.description, SyncFileProblem.unknownDevice.description].sorted(),
            "\(problems(report))")
        #expect(!pair.b.accounts.contains { $0.name == "Planted" })
        #expect(pair.b.syncState!.state.devices[intruder] == nil)
    }

    /// A member's device key signing a file that smuggles a local record (another device's
    /// sync state) is refused too: no file can plant bookkeeping.
    @Test func aFileCarryingLocalBookkeepingIsRefused() throws {
        let pair = try Pair(passphrase: passphrase, today: today)
        let keys = SyncKeys(pair.a.vault.backupKeys)
        let state = pair.a.syncState!.state
        let payload = RecordCodec.encode(.syncState(pair.b.syncState!.state))
        let changes = SyncChanges(
            published: 0, seen: [state.device: 1],
            operations: [SyncOperation(record: .random(), clock: 1 << 40, base: .zero, payload: payload)])
        let file = SyncEnvelope.seal(
            kind: .changes, body: changes.encoded(), keys: keys, device: state.device, sequence: 2,
            signer: state.signingKey)
        try Data(file).write(to: pair.aFiles.appendingPathComponent(SyncFolder.changesName(2, epoch: 1)))
        #expect(problems(try SyncService.sync(pair.b)) == [.damaged])
    }

    /// A newer Coffer's write type in a genuine file: the file waits (a later Coffer merges it),
    /// is not called forged, and nothing after it from that device is applied out of order.
    @Test func aNewerCoffersChangeFileWaitsForAnUpgrade() throws {
        let pair = try Pair(passphrase: passphrase, today: today)
        let keys = SyncKeys(pair.a.vault.backupKeys)
        let state = pair.a.syncState!.state
        var writer = PayloadWriter()
        writer.signed(0)
        writer.list([(state.device, UInt64(1))]) { writer, entry in
            writer.raw(entry.0.bytes)
            writer.unsigned(entry.1)
        }
        writer.unsigned(1)
        writer.raw(RecordID.random().bytes)
        writer.unsigned(1 << 40)
        writer.unsigned(0)
        writer.byte(7)  // a write type no Coffer of this version knows
        let file = SyncEnvelope.seal(
            kind: .changes, body: writer.bytes, keys: keys, device: state.device, sequence: 2,
            signer: state.signingKey)
        try Data(file).write(to: pair.aFiles.appendingPathComponent(SyncFolder.changesName(2, epoch: 1)))
        let report = try SyncService.sync(pair.b)
        #expect(problems(report) == [.newerFormat])
        #expect(problems(report).allSatisfy { $0.isTransient })
    }

    @Test func joiningWithTheWrongPassphraseOrAnAlteredKeysFileBuildsNothing() throws {
        let pair = try Pair(passphrase: passphrase, today: today)
        let target = pair.directory.path("c.coffer")
        #expect(throws: VaultError.self) {
            try SyncService.join(
                folder: pair.folder, vault: target, credential: .passphrase(try Passphrase("not the passphrase")),
                deviceName: "phone")
        }
        let keysFile = try #require(try SyncFolder(url: pair.folder, epoch: 1).list().keys[1]?.first)
        var bytes = try Data(contentsOf: keysFile)
        bytes[40] ^= 0x01
        try bytes.write(to: keysFile)
        #expect(throws: (any Error).self) {
            try SyncService.join(
                folder: pair.folder, vault: target, credential: .passphrase(try Passphrase(passphrase)),
                deviceName: "phone")
        }
        #expect(!FileManager.default.fileExists(atPath: target.path), "nothing is left behind")
    }
}

/// What happens to a synced vault when its keys change.
@Suite struct SyncKeyChangeTests {
    let passphrase = "sync attack passphrase"
    let today = date("2026-11-24")

    @Test func aNewPassphraseThatKeepsTheMasterKeyJoinsThroughItsOwnKeysFile() throws {
        let pair = try SyncAttackTests.Pair(passphrase: passphrase, today: today)
        _ = try pair.a.vault.changePassphrase(to: try Passphrase("a brand new passphrase"), keepMasterKey: true)
        _ = try SyncService.sync(pair.a)
        #expect(try SyncFolder(url: pair.folder, epoch: 1).list().keys[1]?.count == 2, "one keys file per header")
        let joined = try SyncService.join(
            folder: pair.folder, vault: pair.directory.path("c.coffer"),
            credential: .passphrase(try Passphrase("a brand new passphrase")), deviceName: "phone")
        #expect(joined.ledger.accounts.map(\.name) == ["Savings"])
    }

    /// A rekeyed copy starts the folder's next epoch under its new keys (the others move with the
    /// passphrase); it can also start afresh in another folder. Either way the copy left behind
    /// with the old keys (lost, stolen) can neither read nor write what follows.
    @Test func aRekeyedCopyStartsTheNextEpochAndCanStartANewFolder() throws {
        let pair = try SyncAttackTests.Pair(passphrase: passphrase, today: today)
        _ = try pair.a.vault.rekey()
        try pair.a.recordValue(of: try pair.a.account(named: "Savings"), amount: Money(minorUnits: 777), on: today)
        let founded = try SyncService.sync(pair.a)
        #expect(founded.published.first?.sequence == 1, "epoch 2 starts with the whole vault")
        #expect(
            try SyncFolder(url: pair.folder, epoch: 2).list().otherEpochs[1]?[pair.a.syncState!.state.device] == nil)
        #expect(throws: CofferError.self) {
            try SyncService.initialize(pair.a, folder: pair.directory.path("new"), deviceName: "laptop")
        }
        _ = try SyncService.initialize(
            pair.a, folder: pair.directory.path("new"), deviceName: "laptop", replacingFolder: true)
        let joined = try SyncService.join(
            folder: pair.directory.path("new"), vault: pair.directory.path("c.coffer"),
            credential: .passphrase(try Passphrase(passphrase)), deviceName: "desktop")
        #expect(joined.ledger.updates.map(\.amount.minorUnits).sorted() == [100, 777])
        #expect(joined.ledger.vault.keyGeneration == 2)

        // The device left behind (lost, stolen) still holds generation 1's keys: it can neither
        // read the new folder nor write into it.
        let lost = pair.b
        #expect(throws: CofferError.self) { try SyncService.sync(lost, folder: pair.directory.path("new")) }
        let oldKeys = SyncKeys(lost.vault.backupKeys)
        let newFolder = try SyncFolder(url: pair.directory.path("new"), epoch: 2).list()
        for (_, files) in newFolder.changes {
            for (_, file) in files {
                let envelope = try SyncEnvelope.parse(try SyncFolder.read(file), vaultID: oldKeys.vaultID)
                #expect(throws: SyncFileProblem.newerGeneration(2)) { try envelope.open(oldKeys) }
            }
        }
        let state = lost.syncState!.state
        let forged = SyncEnvelope.seal(
            kind: .changes,
            body: SyncChanges(published: 0, seen: [state.device: 0], operations: []).encoded(), keys: oldKeys,
            device: state.device, sequence: 1, signer: state.signingKey)
        let planted = pair.directory.path("new").appendingPathComponent(state.device.hex)
        try FileManager.default.createDirectory(at: planted, withIntermediateDirectories: true)
        try Data(forged).write(to: planted.appendingPathComponent(SyncFolder.changesName(1, epoch: 2)))
        #expect(try SyncService.sync(joined.ledger).problems.map(\.problem) == [.unknownDevice])
    }
}

/// `device remove`: a new key generation and epoch that the removed device never gets.
@Suite struct SyncDeviceRemovalTests {
    let passphrase = "sync attack passphrase"
    let today = date("2026-11-24")

    @Test func aRemovedDeviceCanNeitherReadNorWriteWhatFollowsAndNothingElseIsLost() throws {
        let pair = try SyncAttackTests.Pair(passphrase: passphrase, today: today)
        let phone = try SyncService.join(
            folder: pair.folder, vault: pair.directory.path("phone.coffer"),
            credential: .passphrase(try Passphrase(passphrase)), deviceName: "phone"
        ).ledger
        _ = try SyncService.sync(pair.a)
        // The desktop edits offline, then the laptop removes the phone.
        try pair.b.recordValue(of: try pair.b.account(named: "Savings"), amount: Money(minorUnits: 4242), on: today)
        #expect(throws: CofferError.self) { try SyncService.removeDevice(named: "laptop", from: pair.a) }
        let rotation = try SyncService.removeDevice(named: "phone", from: pair.a)
        #expect(rotation.generation == 2)
        try pair.a.recordValue(of: try pair.a.account(named: "Savings"), amount: Money(minorUnits: 777), on: today)
        _ = try SyncService.sync(pair.a)

        // The desktop takes on the new keys with the passphrase; its offline edit survives.
        #expect {
            try SyncService.sync(pair.b)
        } throws: { ($0 as? CofferError)?.code == .keysChanged }
        let desktop = try SyncService.adoptNewKeys(
            pair.b, credential: .passphrase(try Passphrase(passphrase)), keptAt: pair.directory.path("b.kept"))
        #expect(desktop.merged.taken > 0)
        _ = try SyncService.sync(pair.a)
        let values = { (ledger: Ledger) in ledger.updates.map(\.amount.minorUnits).sorted() }
        #expect(values(pair.a) == [100, 777, 4242])
        #expect(values(desktop.ledger) == values(pair.a))

        // The phone, with its old keys and a session's worth of access (no passphrase), cannot
        // take on the new keys, read the new epoch, or get anything of its own accepted.
        #expect(throws: (any Error).self) {
            try SyncService.adoptNewKeys(
                phone, credential: .passphrase(try Passphrase("not the passphrase")),
                keptAt: pair.directory.path("p.kept"))
        }
        let oldKeys = SyncKeys(phone.vault.backupKeys)
        let epoch2 = try SyncFolder(url: pair.folder, epoch: 2).list()
        #expect(!epoch2.changes.isEmpty)
        for file in epoch2.changes.values.flatMap(\.values) {
            let envelope = try SyncEnvelope.parse(try SyncFolder.read(file), vaultID: oldKeys.vaultID)
            #expect(throws: SyncFileProblem.newerGeneration(2)) { try envelope.open(oldKeys) }
        }
        let state = phone.syncState!.state
        let directory = pair.folder.appendingPathComponent(state.device.hex)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        // An enrolment for the new generation, signed with the old vault key it still has.
        let enrolment = SyncEnvelope.seal(
            kind: .enrolment,
            body: SyncEnrolment(publicKey: state.signingKey.publicKey.bytes, name: "phone", enrolled: 0).encoded(),
            keys: oldKeys, device: state.device, sequence: 0, signer: oldKeys.vaultSigning)
        try Data(enrolment).write(to: directory.appendingPathComponent(SyncFolder.enrolmentName(2)))
        let forged = SyncEnvelope.seal(
            kind: .changes, body: SyncChanges(published: 0, seen: [state.device: 0], operations: []).encoded(),
            keys: oldKeys, device: state.device, sequence: 1, signer: state.signingKey)
        try Data(forged).write(to: directory.appendingPathComponent(SyncFolder.changesName(1, epoch: 2)))
        let report = try SyncService.sync(pair.a)
        #expect(
            report.problems.map(\.problem.description).sorted()
                == [SyncFileProblem.olderGeneration(1).description, SyncFileProblem.unknownDevice.description].sorted(),
            "\(report.problems)")
        #expect(values(pair.a) == [100, 777, 4242])
    }

    /// Compaction: a new epoch under new keys holds the whole vault; each device deletes its own
    /// old files as it moves, and a device offline throughout loses nothing.
    @Test func compactionFoldsTheFolderAndAnOfflineDeviceCatchesUp() throws {
        let pair = try SyncAttackTests.Pair(passphrase: passphrase, today: today)
        for minor in 200..<210 {
            try pair.a.recordValue(
                of: try pair.a.account(named: "Savings"), amount: Money(minorUnits: Int64(minor)), on: today)
            _ = try SyncService.sync(pair.a)
        }
        // The desktop publishes once, then is offline: it merges nothing more, and edits.
        try pair.b.recordValue(of: try pair.b.account(named: "Savings"), amount: Money(minorUnits: 998), on: today)
        _ = try SyncService.sync(pair.b)
        try pair.b.recordValue(of: try pair.b.account(named: "Savings"), amount: Money(minorUnits: 999), on: today)
        _ = try SyncService.rotate(pair.a)
        let laptopOld = try SyncFolder(url: pair.folder, epoch: 2).list().otherEpochs[1] ?? [:]
        #expect(laptopOld.keys.count == 1, "only the desktop's old files are left: the laptop deleted its own")
        let desktop = try SyncService.adoptNewKeys(
            pair.b, credential: .passphrase(try Passphrase(passphrase)), keptAt: pair.directory.path("b.kept"))
        _ = try SyncService.sync(pair.a)
        let listing = try SyncFolder(url: pair.folder, epoch: 2).list()
        #expect(listing.otherEpochs.isEmpty, "every old file is gone once every device moved")
        #expect(listing.changes.values.map(\.count).reduce(0, +) <= 3)
        #expect(desktop.ledger.updates.count == pair.a.updates.count)
        #expect(pair.a.updates.map(\.amount.minorUnits).contains(999))
        #expect(pair.a.updates.map(\.amount.minorUnits).contains(998))
    }
}

/// A device killed after publishing a change file and before recording it (Specs/sync-format.md
/// §5), reproduced exactly: its sync state and index are put back as they were before the
/// publish. The next sync reads its own file back: nothing is published twice or lost.
@Suite struct SyncPublishRecoveryTests {
    @Test func aFilePublishedButNotRecordedIsReadBackNotSentTwice() throws {
        let today = date("2026-11-24")
        let pair = try SyncAttackTests.Pair(passphrase: "sync recovery passphrase", today: today)
        let stateBefore = try #require(pair.a.syncState), indexBefore = try #require(pair.a.syncIndex)
        let file = try pair.publish(200, today: today)
        #expect(file.lastPathComponent == SyncFolder.changesName(2, epoch: 1))
        // The kill: the vault never recorded #2.
        try pair.a.writeWithoutHistory([
            (stateBefore.id, .syncState(stateBefore.state)), (indexBefore.id, .syncIndex(indexBefore.data)),
        ])
        #expect(pair.a.syncState?.state.published == 1)
        try pair.a.recordValue(of: try pair.a.account(named: "Savings"), amount: Money(minorUnits: 300), on: today)
        let report = try SyncService.sync(pair.a)
        #expect(report.published.map(\.sequence) == [3], "#2 is recorded, not published again")
        #expect(report.published.first?.changes == 2, "only the new value and its log entry")
        #expect(pair.a.syncState?.state.published == 3)
        _ = try SyncService.sync(pair.b)
        #expect(pair.bValues == [100, 200, 300])
        #expect(try SyncService.sync(pair.a).published.isEmpty, "nothing left to publish")
    }

    /// A publish killed before its link leaves `.NAME.RANDOM.tmp` in the device's directory:
    /// the device's next full sync removes its own once they are an hour old (a younger one may
    /// be another sync of the same device at work), and never another device's.
    @Test func temporaryFilesAKilledPublishLeftAreRemovedByTheDevice() throws {
        let today = date("2026-11-24")
        let pair = try SyncAttackTests.Pair(passphrase: "sync recovery passphrase", today: today)
        let bFiles = pair.folder.appendingPathComponent(pair.b.syncState!.state.device.hex)
        func temporary(_ directory: URL, _ name: String, age: TimeInterval) throws -> URL {
            let file = directory.appendingPathComponent(name)
            try Data(repeating: 7, count: 600).write(to: file)
            try FileManager.default.setAttributes(
                [.modificationDate: Date().addingTimeInterval(-age)], ofItemAtPath: file.path)
            return file
        }
        let old = try temporary(pair.aFiles, ".00000001-0000000000000002.cfsync.a1b2c3d4e5f6.tmp", age: 7200)
        let young = try temporary(pair.aFiles, ".00000001-0000000000000003.cfsync.0a0b0c0d0e0f.tmp", age: 60)
        let others = try temporary(bFiles, ".00000001-0000000000000002.cfsync.ffeeddccbbaa.tmp", age: 7200)
        try pair.a.recordValue(of: try pair.a.account(named: "Savings"), amount: Money(minorUnits: 300), on: today)
        #expect(try SyncService.sync(pair.a).published.count == 1)
        #expect(!FileManager.default.fileExists(atPath: old.path))
        #expect(FileManager.default.fileExists(atPath: young.path))
        #expect(FileManager.default.fileExists(atPath: others.path), "only a device cleans its own directory")
    }
}
