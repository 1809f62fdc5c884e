import CofferTestSupport
import Foundation
import GRDB
import Testing
import VaultCrypto

@testable import VaultStore

/// Restoring from an archived header: one unlock, then a vault built and opened with the keys it
/// already holds. Argon2id is counted, because a restore on a fresh machine at the "sensitive"
/// profile pays seconds and a gigabyte for every extra run.
@Suite struct RestoreTests {
    let directory = TemporaryDirectory()
    var url: URL { directory.path("vault.coffer") }
    var sessions: URL { directory.path("sessions") }

    /// The header and records an archive of a fresh vault would hold.
    func archived(_ payloads: [String] = ["first", "second", "third"]) throws -> (
        header: [UInt8], records: [(RecordID, Data)], vault: Vault
    ) {
        _ = try makeVault(at: url, payloads: payloads)
        let vault = try Vault.open(at: url, with: .passphrase(passphrase()))
        return (vault.backupKeys.headerBytes, vault.records.map { ($0.id, $0.payload) }, vault)
    }

    func counting<T>(_ body: () throws -> T) rethrows -> (T, derivations: Int) {
        let counter = Argon2id.DerivationCounter()
        let result = try Argon2id.$derivations.withValue(counter) { try body() }
        return (result, counter.value)
    }

    @Test func oneUnlockRestoresAndOpensWithOneArgon2idRun() throws {
        let (header, records, original) = try archived()
        let target = directory.path("restored.coffer")
        let guarded = RollbackGuard(directory: directory.path("state"))
        let (restored, derivations) = try counting {
            let unlocked = try Vault.unlockArchivedHeader(header, credential: .passphrase(passphrase()))
            #expect(unlocked.canRestore)
            #expect(unlocked.backupKeys.vaultID == original.id && unlocked.backupKeys.headerBytes == header)
            return try Vault.restore(
                at: target, unlocked: unlocked, records: records, replacing: false, keepingOldAt: nil, guard: guarded)
        }
        #expect(derivations == 1, "the passphrase is stretched once for the whole restore")
        #expect(restored.id == original.id && restored.canChangeKeys)
        #expect(restored.records.map(\.payload) == original.records.map(\.payload))
        #expect(restored.deviceID != original.deviceID, "the restored file is a new copy of the vault")
        #expect(try restored.verify().recordCount == records.count)

        // The restored vault keeps the passphrase's key: a rekey needs no second run either.
        let (_, rekeyDerivations) = try counting { try restored.rekey() }
        #expect(rekeyDerivations == 0)
        let reopened = try Vault.open(at: target, with: .passphrase(passphrase()), guard: guarded)
        #expect(reopened.records.count == records.count && reopened.keyGeneration == 2)
    }

    @Test func aRecoveryKeyRestoresWithoutArgon2id() throws {
        _ = try makeVault(at: url, payloads: ["kept"])
        let vault = try Vault.open(at: url, with: .passphrase(passphrase()))
        let (recoveryKey, _) = try vault.createRecoveryKey()
        let target = directory.path("restored.coffer")
        let (restored, derivations) = try counting {
            try Vault.restore(
                at: target,
                unlocked: Vault.unlockArchivedHeader(
                    vault.backupKeys.headerBytes, credential: .recoveryKey(recoveryKey)),
                records: vault.records.map { ($0.id, $0.payload) }, replacing: false, keepingOldAt: nil)
        }
        #expect(derivations == 0)
        #expect(restored.records.map(\.payload) == [Data("kept".utf8)])
        #expect(
            try Vault.open(at: target, with: .passphrase(passphrase())).recordCount == 1,
            "the passphrase of the archive opens it")
    }

    /// A session gives the archive's keys (to check and open it) but never the master key: it
    /// cannot build a vault, and nothing is written.
    @Test func aSessionUnlocksTheArchiveButCannotRestore() throws {
        let (header, records, vault) = try archived()
        let token = try vault.createSession(lifetime: 600, directory: sessions)
        let (unlocked, derivations) = try counting {
            try Vault.unlockArchivedHeader(header, credential: .session(token, directory: sessions))
        }
        #expect(derivations == 0)
        #expect(!unlocked.canRestore)
        #expect(unlocked.backupKeys.signingKey.publicKey == vault.backupKeys.signingKey.publicKey)
        let target = directory.path("restored.coffer")
        expectVaultError(.passphraseRequired) {
            _ = try Vault.restore(at: target, unlocked: unlocked, records: records, replacing: false, keepingOldAt: nil)
        }
        #expect(!FileManager.default.fileExists(atPath: target.path))
    }

    @Test func aWrongPassphraseOrAnEditedHeaderIsRefusedBeforeAnythingIsBuilt() throws {
        let (header, _, _) = try archived()
        expectVaultError(.wrongPassphrase) {
            _ = try Vault.unlockArchivedHeader(header, credential: .passphrase(passphrase("not it")))
        }
        var edited = try VaultHeader.decode(header)
        edited = VaultHeader(
            vaultID: edited.vaultID, keys: MasterKeys(master: .random()), generation: edited.generation,
            passphraseSlot: edited.passphraseSlot, recoverySlot: edited.recoverySlot, keyHistory: edited.keyHistory)
        expectVaultError(.headerTampered) {
            _ = try Vault.unlockArchivedHeader(edited.encoded(), credential: .passphrase(passphrase()))
        }
    }

    /// Replacing: the old vault is kept beside it, and the rollback guard takes the restore as
    /// the deliberate rollback it is.
    @Test func replacingKeepsTheOldVaultAndResetsTheMark() throws {
        let guarded = RollbackGuard(directory: directory.path("state"))
        let (header, records, vault) = try archived(["archived"])
        try vault.apply([.put(.random(), Data("after the archive".utf8))])
        _ = try Vault.open(at: url, with: .passphrase(passphrase()), guard: guarded)
        let oldCopy = directory.path("vault.coffer.before-restore")
        let restored = try Vault.restore(
            at: url, unlocked: Vault.unlockArchivedHeader(header, credential: .passphrase(passphrase())),
            records: records, replacing: true, keepingOldAt: oldCopy, guard: guarded)
        #expect(restored.recordCount == 1)
        #expect(try Vault.open(at: oldCopy, with: .passphrase(passphrase())).recordCount == 2)
        #expect(try Vault.open(at: url, with: .passphrase(passphrase()), guard: guarded).recordCount == 1)
    }

    /// Files in the directory apart from the test's own: what a restore left behind.
    func leftovers(besides kept: Set<String>) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.url.path).filter { !kept.contains($0) }.sorted()
    }

    /// A streamed restore writes nothing where the vault goes until it is moved there, and a
    /// vault built aside that is never moved (the caller changed its mind, or failed) is gone.
    @Test func aVaultBuiltAsideIsNowhereUntilMovedAndGoneIfDropped() throws {
        let (header, records, original) = try archived()
        let unlocked = try Vault.unlockArchivedHeader(header, credential: .passphrase(passphrase()))
        let target = directory.path("restored.coffer")
        let before = Set(try FileManager.default.contentsOfDirectory(atPath: directory.url.path))
        do {
            let built = try Vault.restoreAside(at: target, unlocked: unlocked, replacing: false) { writer in
                for (id, payload) in records {
                    try payload.withUnsafeBytes { try writer.append(id, group: .unsorted, payload: $0) }
                }
            }
            #expect(!FileManager.default.fileExists(atPath: target.path))
            #expect(try leftovers(besides: before).count == 1, "the vault under its temporary name")
            _ = built
        }
        #expect(try leftovers(besides: before).isEmpty, "dropped unmoved: deleted")

        let guarded = RollbackGuard(directory: directory.path("state"))
        let built = try Vault.restoreAside(at: target, unlocked: unlocked, replacing: false) { writer in
            for (id, payload) in records {
                try payload.withUnsafeBytes { try writer.append(id, group: .unsorted, payload: $0) }
            }
        }
        try built.moveIntoPlace(replacing: false, keepingOldAt: nil, guard: guarded)
        #expect(try leftovers(besides: before.union(["state"])) == ["restored.coffer"])
        let restored = try Vault.open(at: target, with: .passphrase(passphrase()), guard: guarded)
        #expect(restored.records.map(\.payload) == original.records.map(\.payload))
        #expect(try restored.verify().recordCount == records.count)
        let journal = try DatabaseQueue(path: target.path).read { try String.fetchOne($0, sql: "PRAGMA journal_mode") }
        #expect(journal == "wal", "built without a journal, then switched to WAL like every vault")
    }

    /// An id given twice is refused by name, and nothing is left: not at the target, not aside,
    /// not the folders made to hold it.
    @Test func anIdGivenTwiceBuildsNothing() throws {
        let (header, records, _) = try archived()
        let unlocked = try Vault.unlockArchivedHeader(header, credential: .passphrase(passphrase()))
        let target = directory.path("new/deeper/restored.coffer")
        let before = Set(try FileManager.default.contentsOfDirectory(atPath: directory.url.path))
        let twice = records + [(records[1].0, Data("another payload".utf8))]
        do {
            _ = try Vault.restore(at: target, unlocked: unlocked, records: twice, replacing: false, keepingOldAt: nil)
            Issue.record("a repeated id was restored")
        } catch let error as VaultError {
            #expect(error.code == .duplicateRecord && (error.errorDescription ?? "").contains(records[1].0.hex))
        }
        #expect(try leftovers(besides: before).isEmpty)
    }
}
