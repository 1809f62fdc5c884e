import CofferTestSupport
import FinanceCore
import Foundation
import Testing
import VaultCrypto
import VaultStore

@testable import CofferKit

/// `SyncService.upToDate` answers a sync with nothing to do from the sync state alone. It must
/// never answer when the full sync would do or report something: every change to the vault or
/// to the folder (new, planted, replaced, missing or duplicated files, new keys) sends the
/// sync the full way. (`SyncSimulation` also checks, at every sync of the convergence runs,
/// that whenever it answers the full sync agrees.)
@Suite struct SyncUpToDateTests {
    let passphrase = "sync attack passphrase"
    let today = date("2026-11-24")
    typealias Pair = SyncAttackTests.Pair

    func upToDate(_ ledger: Ledger, folder: URL? = nil) -> SyncReport? {
        SyncService.upToDate(ledger.vault.unlockedFile, folder: folder)
    }

    /// Both devices synced until neither has anything to do.
    func settled() throws -> Pair {
        let pair = try Pair(passphrase: passphrase, today: today)
        for _ in 0..<2 {
            _ = try SyncService.sync(pair.a)
            _ = try SyncService.sync(pair.b)
        }
        #expect(upToDate(pair.a) != nil)
        #expect(upToDate(pair.b) != nil)
        return pair
    }

    @Test func aWriteOnEitherSideIsNeverMissed() throws {
        let pair = try settled()
        try pair.a.recordValue(of: try pair.a.account(named: "Savings"), amount: Money(minorUnits: 300), on: today)
        #expect(upToDate(pair.a) == nil, "a local write waits to be published")
        #expect(try SyncService.sync(pair.a).published.count == 1)
        #expect(upToDate(pair.a) != nil)
        #expect(upToDate(pair.b) == nil, "a new file from A waits to be merged")
        #expect(try SyncService.sync(pair.b).merged.count == 1)
        #expect(upToDate(pair.b) != nil)
        _ = try pair.b.undo()
        #expect(upToDate(pair.b) == nil, "an undo is a write to publish")
    }

    @Test func aLocalOnlyWriteIsRecordedByTheNextFullSync() throws {
        let pair = try settled()
        // A write of a local kind (a backup's bookkeeping: nothing to publish) still moves the
        // commit counter; the next full sync publishes nothing and records where it left the vault.
        try pair.a.writeWithoutHistory([(UUID(), .backupState(BackupState(lastSequence: 1, verified: [])))])
        #expect(upToDate(pair.a) == nil)
        let report = try SyncService.sync(pair.a)
        #expect(report.published.isEmpty)
        #expect(upToDate(pair.a) != nil, "the sync recorded the commit it left the vault at")
    }

    /// Another process writes to the vault while a sync runs: the sync's own write carries that
    /// commit along, unpublished, so the sync must not record the vault as synced.
    @Test func aWriteByAnotherProcessDuringASyncIsNeverHidden() throws {
        let pair = try settled()
        let credential = Credential.passphrase(try Passphrase(passphrase))
        let otherProcess = try Ledger(vault: Vault.open(at: pair.a.vault.url, with: credential))
        try pair.b.recordValue(of: try pair.b.account(named: "Savings"), amount: Money(minorUnits: 250), on: today)
        _ = try SyncService.sync(pair.b)  // something for A to merge
        try otherProcess.recordValue(
            of: try otherProcess.account(named: "Savings"), amount: Money(minorUnits: 300), on: today)
        let report = try SyncService.sync(pair.a)  // A's handle predates the other process's write
        #expect(report.merged.count == 1)
        let reopened = try Ledger(vault: Vault.open(at: pair.a.vault.url, with: credential))
        #expect(upToDate(reopened) == nil, "an unpublished write is waiting")
        #expect(try SyncService.sync(reopened).published.count == 1)
        #expect(upToDate(reopened) != nil)
    }

    @Test func anotherFolderIsNeverAnsweredFor() throws {
        let pair = try settled()
        #expect(upToDate(pair.a, folder: pair.folder) != nil)
        #expect(upToDate(pair.a, folder: pair.directory.path("elsewhere")) == nil)
    }

    @Test func everyChangeToTheFolderSendsTheSyncTheFullWay() throws {
        let pair = try settled()
        let aEnrolment = pair.aFiles.appendingPathComponent(SyncFolder.enrolmentName(1))
        let bDirectory = pair.folder.appendingPathComponent(pair.b.syncState!.state.device.hex)
        let bEnrolment = bDirectory.appendingPathComponent(SyncFolder.enrolmentName(1))
        let keysFile = try FileManager.default.contentsOfDirectory(atPath: pair.folder.path)
            .first { $0.hasSuffix(".cfkeys") }.map { pair.folder.appendingPathComponent($0) }!
        let firstChanges = pair.aFiles.appendingPathComponent(SyncFolder.changesName(1, epoch: 1))

        func attempt(_ what: String, change: () throws -> Void, undo: () throws -> Void) throws {
            try change()
            #expect(upToDate(pair.a) == nil, "\(what)")
            try undo()
            #expect(upToDate(pair.a) != nil, "\(what), undone")
        }
        let stranger = pair.folder.appendingPathComponent(SyncDeviceID.random().hex)
        try attempt(
            "a device nobody enrolled puts a file in",
            change: {
                try FileManager.default.createDirectory(at: stranger, withIntermediateDirectories: true)
                try FileManager.default.copyItem(
                    at: firstChanges, to: stranger.appendingPathComponent(SyncFolder.changesName(1, epoch: 1)))
            }, undo: { try FileManager.default.removeItem(at: stranger) })
        let bEnrolmentBytes = try Data(contentsOf: bEnrolment)
        try attempt(
            "B's enrolment replaced by A's",
            change: { try Data(contentsOf: aEnrolment).write(to: bEnrolment) },
            undo: { try bEnrolmentBytes.write(to: bEnrolment) })
        try attempt(
            "B's enrolment cut short",
            change: { try bEnrolmentBytes.prefix(100).write(to: bEnrolment) },
            undo: { try bEnrolmentBytes.write(to: bEnrolment) })
        let keysBytes = try Data(contentsOf: keysFile)
        try attempt(
            "the keys file deleted", change: { try FileManager.default.removeItem(at: keysFile) },
            undo: { try keysBytes.write(to: keysFile) })
        let aEnrolmentBytes = try Data(contentsOf: aEnrolment)
        try attempt(
            "this device's enrolment deleted", change: { try FileManager.default.removeItem(at: aEnrolment) },
            undo: { try aEnrolmentBytes.write(to: aEnrolment) })
        let ahead = pair.aFiles.appendingPathComponent(SyncFolder.changesName(99, epoch: 1))
        try attempt(
            "a file of this device's beyond what it published",
            change: { try FileManager.default.copyItem(at: firstChanges, to: ahead) },
            undo: { try FileManager.default.removeItem(at: ahead) })
        let bAhead = bDirectory.appendingPathComponent(SyncFolder.changesName(7, epoch: 1))
        try attempt(
            "a file of B's beyond what was applied (a gap)",
            change: { try FileManager.default.copyItem(at: firstChanges, to: bAhead) },
            undo: { try FileManager.default.removeItem(at: bAhead) })
        let newer = pair.folder.appendingPathComponent("keys-00000002-00000000.cfkeys")
        try attempt(
            "a keys file of a newer generation",
            change: { try keysBytes.write(to: newer) }, undo: { try FileManager.default.removeItem(at: newer) })

        // A copy a sync tool made is reported, as the full sync reports it.
        let copy = pair.aFiles.appendingPathComponent("00000001-0000000000000001 (1).cfsync")
        try FileManager.default.copyItem(at: firstChanges, to: copy)
        let answered = try #require(upToDate(pair.a))
        #expect(answered.copies == (try SyncService.sync(pair.a)).copies)
        #expect(answered.copies.count == 1)
    }

    @Test func newKeysOnAnotherDeviceAreNeverMissed() throws {
        let pair = try settled()
        pair.a = try Ledger(vault: try Vault.open(at: pair.a.vault.url, with: .passphrase(try Passphrase(passphrase))))
        _ = try SyncService.rotate(pair.a)
        #expect(upToDate(pair.b) == nil)
        #expect(throws: CofferError.self) { try SyncService.sync(pair.b) }
    }

    @Test func aDamagedSyncStateIsNeverAnsweredFrom() throws {
        let pair = try settled()
        let url = pair.a.vault.url
        let stateID = SyncKeys(pair.a.vault.backupKeys).stateRecordID
        #expect(pair.a.syncState?.id == stateID.uuid, "the state lives at its keyed id")
        try flipStoredByte(url, page: pair.a.vault.pageLocators(of: stateID)!.page, fromEnd: 20)
        #expect(upToDate(pair.a) == nil)
        #expect(throws: VaultError.self) { try Vault.open(at: url, with: .passphrase(try Passphrase(passphrase))) }
    }
}
