import CofferTestSupport
import FinanceCore
import Foundation
import Testing
import VaultBackup
import VaultCrypto
import VaultStore

@testable import CofferKit

/// The backup and restore protocols without the binary.
@Suite struct BackupServiceTests {
    let today = date("2026-11-22")
    let passphrase = "backup service passphrase"

    func makeLedger(in directory: TemporaryDirectory) throws -> Ledger {
        let ledger = try Ledger.create(
            at: directory.path("v.coffer"), passphrase: try Passphrase(passphrase), parameters: testParameters,
            currency: .gbp)
        try ledger.addAccount(
            name: "Savings", category: "Savings", kind: .asset, value: (Money(minorUnits: 100_000), today), today: today
        )
        return ledger
    }

    @Test func archivesNumberOnRecordAndPruneKeepsTheNewest() throws {
        let directory = TemporaryDirectory()
        let ledger = try makeLedger(in: directory)
        let folder = directory.path("backups")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        var archives: [URL] = []
        for second in 0..<3 {
            let outcomes = try BackupService.create(
                ledger, to: [folder, directory.path("not-mounted")], appVersion: "test", today: today,
                acceptRollback: false,
                now: Date(timeIntervalSince1970: 1_800_000_000 + Double(second) * 86_400)
            ) { _ in }
            guard case .written(let archive, _, _) = outcomes[0].outcome, case .missingFolder = outcomes[1].outcome
            else {
                Issue.record("\(outcomes)")
                return
            }
            archives.append(archive)
        }
        #expect(ledger.backupState?.state.lastSequence == 3, "each archive's number is recorded in the vault")
        #expect(ledger.backupState?.state.verified.map(\.sequence) == [3])

        let trust = ArchiveTrust(vaultID: ledger.vault.id, history: ledger.vault.keyHistory)
        let plan = try BackupService.planPrune(
            folder, policy: RetentionPolicy(keepLast: 1), ledger: ledger, trust: trust)
        #expect(plan.keep.map(\.archive.sequence) == [3])
        #expect(plan.remove.map(\.sequence) == [2, 1])
        // A copy a sync tool made is never counted or removed.
        try FileManager.default.copyItem(at: archives[0], to: folder.appendingPathComponent("copy.cbak"))
        try FileManager.default.copyItem(
            at: URL(fileURLWithPath: archives[0].path + ".minisig"),
            to: folder.appendingPathComponent("copy.cbak.minisig"))
        let again = try BackupService.planPrune(
            folder, policy: RetentionPolicy(keepLast: 1), ledger: ledger, trust: trust)
        #expect(again.untouched.contains { $0.entry.url.lastPathComponent == "copy.cbak" })
        #expect(!again.remove.contains { $0.url.lastPathComponent == "copy.cbak" })
    }

    @Test func restoreOpensWithTheArchivesPassphraseOnceAndBuildsTheSameVault() throws {
        let directory = TemporaryDirectory()
        let ledger = try makeLedger(in: directory)
        let folder = directory.path("backups")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let outcomes = try BackupService.create(
            ledger, to: [folder], appVersion: "test", today: today, acceptRollback: false
        ) { _ in }
        guard case .written(let archive, _, _) = outcomes[0].outcome else {
            Issue.record("\(outcomes)")
            return
        }

        let inspected = try BackupService.inspect(archive, vaultURL: nil)
        #expect(inspected.sequence == 1)
        do {
            _ = try BackupService.open(inspected, credential: .passphrase(try Passphrase("not the passphrase")))
            Issue.record("a wrong passphrase opened the archive")
        } catch let error as CofferError {
            #expect(error.code == .wrongCredential)
        }
        let opened = try BackupService.open(inspected, credential: .passphrase(try Passphrase(passphrase)))
        #expect(
            BackupService.olderThanVault(at: ledger.vault.url, archive: opened) == nil,
            "nothing changed since the archive")
        try ledger.recordValue(of: try ledger.account(named: "Savings"), amount: Money(minorUnits: 5), on: today)
        #expect(
            BackupService.olderThanVault(at: ledger.vault.url, archive: opened)
                == "the vault has changes made after the archive")

        try BackupService.restore(
            BackupService.unlock(inspected, credential: .passphrase(try Passphrase(passphrase))),
            to: directory.path("restored.coffer"), replacing: false, keepingOldAt: nil, guard: nil
        ) { _ in }
        let restored = try Ledger(
            vault: Vault.open(at: directory.path("restored.coffer"), with: .passphrase(try Passphrase(passphrase))))
        #expect(restored.vault.id == ledger.vault.id && restored.accounts.map(\.name) == ["Savings"])
        #expect(try restored.netWorth.totals(on: today).netWorth == Money(minorUnits: 100_000))
        #expect(restored.backupState?.state.lastSequence == 1, "numbering continues after the restored archive")

        // Replacing the vault, which has a change the archive lacks: the restore asks before it
        // builds anything; a refusal leaves the vault and its folder as they were.
        struct Refused: Error {}
        let unlocked = try BackupService.unlock(inspected, credential: .passphrase(try Passphrase(passphrase)))
        let oldCopy = directory.path("v.coffer.before-restore")
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.url.path).sorted()
        var asked: [String] = []
        #expect(throws: Refused.self) {
            try BackupService.restore(
                unlocked, to: ledger.vault.url, replacing: true, keepingOldAt: oldCopy, guard: nil,
                confirmingOlder: { _, reason in
                    asked.append(reason)
                    #expect(
                        try FileManager.default.contentsOfDirectory(atPath: directory.url.path).sorted() == files,
                        "nothing is built before the answer")
                    throw Refused()
                }
            ) { _ in }
        }
        #expect(asked == ["the vault has changes made after the archive"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path).sorted() == files)
        let kept = try Ledger(vault: Vault.open(at: ledger.vault.url, with: .passphrase(try Passphrase(passphrase))))
        #expect(kept.changes.count == ledger.changes.count, "the newer vault is untouched")

        try BackupService.restore(
            unlocked, to: ledger.vault.url, replacing: true, keepingOldAt: oldCopy, guard: nil,
            confirmingOlder: { _, _ in }
        ) { _ in }
        let replaced = try Ledger(
            vault: Vault.open(at: ledger.vault.url, with: .passphrase(try Passphrase(passphrase))))
        #expect(replaced.changes.count == ledger.changes.count - 1, "the change made after the archive is gone")
        #expect(try Vault.open(at: oldCopy, with: .passphrase(try Passphrase(passphrase))).id == ledger.vault.id)
    }

    /// Every record of the vault, as its pages hold it, except this copy's own bookkeeping.
    static func records(of vault: Vault) throws -> [RecordID: [UInt8]] {
        var records: [RecordID: [UInt8]] = [:]
        try vault.forEachRecord { id, payload in
            if !RecordCodec.isLocal(payload) { records[id] = Array(payload) }
        }
        return records
    }

    /// A restore of tens of thousands of records (many column blocks, many pages) brings every
    /// record back byte for byte.
    @Test func aLargeRestoreBringsBackEveryRecord() throws {
        let directory = TemporaryDirectory()
        let ledger = try makeLedger(in: directory)
        var random = SeededGenerator(state: 3)
        var options = Ledger.StatementImportOptions(fileName: "long.csv")
        options.account = "Current"
        _ = try ledger.importStatement(
            try StatementStreamTests.open(
                StatementStreamTests.statementText(40_000, newestFirst: false, using: &random)),
            options)
        let folder = directory.path("backups")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let outcomes = try BackupService.create(
            ledger, to: [folder], appVersion: "test", today: today, acceptRollback: false
        ) { _ in }
        guard case .written(let archive, let count, _) = outcomes[0].outcome else {
            Issue.record("\(outcomes)")
            return
        }
        #expect(count > 40_000, "tens of thousands of records")
        let unlocked = try BackupService.unlock(
            BackupService.inspect(archive, vaultURL: nil), credential: .passphrase(try Passphrase(passphrase)))
        try BackupService.restore(
            unlocked, to: directory.path("restored.coffer"), replacing: false, keepingOldAt: nil, guard: nil
        ) { _ in }
        let restored = try Vault.open(
            at: directory.path("restored.coffer"), with: .passphrase(try Passphrase(passphrase)))
        #expect(try Self.records(of: restored) == Self.records(of: ledger.vault))
    }

    /// An archive holding a record this Coffer cannot read (authentic, but not a record) restores
    /// nothing, and says which record it is.
    @Test func anUnreadableRecordInAnArchiveRestoresNothing() throws {
        let directory = TemporaryDirectory()
        let ledger = try makeLedger(in: directory)
        let records = CollectedRecords()
        var bad = RecordID.random()
        for (id, payload) in try Self.records(of: ledger.vault) { payload.withUnsafeBytes { records.append(id, $0) } }
        for number in 0..<20_000 {
            let id = RecordID.random()
            // A transaction (kind 10, version 3) whose fields end after one byte.
            let payload: [UInt8] =
                number == 12_345
                ? [10, 3, 0x80]
                : RecordCodec.encode(
                    .settings(VaultSettings(currency: .gbp)))
            if number == 12_345 { bad = id }
            payload.withUnsafeBytes { records.append(id, $0) }
        }
        let vault = ledger.vault
        let made = try Archive.make(
            records, netWorth: "GBP 1000.00", appVersion: "test", commitCounter: vault.commitCounter,
            keys: vault.backupKeys, sequence: 1, created: Date(timeIntervalSince1970: 1_800_000_000))
        let folder = directory.path("backups")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let archive = try Archive.write(made, to: folder)
        let unlocked = try BackupService.unlock(
            BackupService.inspect(archive, vaultURL: nil), credential: .passphrase(try Passphrase(passphrase)))
        let target = directory.path("restored.coffer")
        let error = #expect(throws: CofferError.self) {
            try BackupService.restore(unlocked, to: target, replacing: false, keepingOldAt: nil, guard: nil) { _ in }
        }
        #expect(error?.code == .damaged)
        #expect(error?.errorDescription?.contains(bad.hex) == true)
        #expect(!FileManager.default.fileExists(atPath: target.path))
    }

    @Test func anArchiveSignedByAnotherVaultsKeyIsRefusedBeforeAnyKeyWork() throws {
        let directory = TemporaryDirectory()
        let ledger = try makeLedger(in: directory)
        let other = try Ledger.create(
            at: directory.path("other.coffer"), passphrase: try Passphrase(passphrase), parameters: testParameters,
            currency: .gbp)
        let folder = directory.path("backups")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        _ = try BackupService.create(ledger, to: [folder], appVersion: "test", today: today, acceptRollback: false) {
            _ in
        }
        let archive = try #require(
            try FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)
                .first { $0.pathExtension == "cbak" })
        // Re-sign the archive with the other vault's key: its header still claims the first vault.
        let comment = try MinisignSignature(
            parsing: String(contentsOf: URL(fileURLWithPath: archive.path + ".minisig"), encoding: .utf8)
        )
        .trustedComment
        let forged = MinisignSignature.sign(
            fileDigest: BLAKE2b.hash(Array(try Data(contentsOf: archive)), outputByteCount: 64),
            with: other.vault.backupKeys.signingKey, trustedComment: comment, untrustedComment: "planted")
        try forged.fileContents.write(
            to: URL(fileURLWithPath: archive.path + ".minisig"), atomically: true, encoding: .utf8)
        #expect(throws: BackupError.self) { _ = try BackupService.inspect(archive, vaultURL: ledger.vault.url) }
    }
}
