import CofferTestSupport
import Foundation
import GRDB
import Testing
import VaultCrypto

@testable import VaultStore

/// The security review's attacks on the store (../shared/reviews/security-review.md), each
/// performed as an attacker would and required to fail.
/// Runs `body`, which must be refused with one of `codes`; returns the error for more checks.
@discardableResult
func expectRefused(
    _ codes: Set<VaultError.Code>, _ what: String, sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () throws -> Void
) -> VaultError? {
    do {
        try body()
        Issue.record("\(what)", sourceLocation: sourceLocation)
    } catch let error as VaultError {
        #expect(codes.contains(error.code), "\(what): refused with \(error.code)", sourceLocation: sourceLocation)
        return error
    } catch {
        Issue.record("\(what): unexpected error \(error)", sourceLocation: sourceLocation)
    }
    return nil
}

@Suite struct AttackTests {
    let directory = TemporaryDirectory()
    var url: URL { directory.path("vault.coffer") }
    var sessions: URL { directory.path("run/coffer") }
    var state: URL { directory.path("state") }

    func header() throws -> [UInt8] {
        try withRawDatabase(url) { Array(try Data.fetchOne($0, sql: "SELECT body FROM header")!) }
    }
    func putHeader(_ bytes: [UInt8]) throws {
        try withRawDatabase(url) {
            try $0.execute(sql: "UPDATE header SET body = ? WHERE id = 1", arguments: [Data(bytes)])
        }
    }

    /// F1: with a stolen session (file and token) the attacker holds every key the session has,
    /// and plants a recovery slot of their own. It must never open the vault.
    @Test func f1ASessionCannotPlantAWayBackIn() throws {
        _ = try makeVault(at: url, payloads: ["SecretCanary"])
        let token = try Vault.open(at: url, with: .passphrase(passphrase())).createSession(
            lifetime: 600, directory: sessions)
        let stolen = try SessionStore.unwrapKeys(
            token: token, directory: sessions, header: try VaultHeader.decode(try header()), clock: .system())
        let originalBytes = try header()
        let original = try VaultHeader.decode(originalBytes)

        // The attacker's best move: a recovery slot for a master key they choose, with the
        // header MAC keyed from it. Their key is not the vault's, so the slot opens to the wrong
        // keys: refused as tampered, whatever master key id they write.
        let planted = RecoveryKey.generate()
        let attackerMaster = MasterKeys(master: .random())
        let slot = try RecoverySlot.sealing(
            attackerMaster.master, to: planted.agreementKey(vaultID: original.vaultID).publicKey,
            vaultID: original.vaultID)
        for keyID in [original.masterKeyID, attackerMaster.operational.masterKeyID] {
            let forged = VaultHeader(
                vaultID: original.vaultID, keys: attackerMaster, generation: original.generation,
                passphraseSlot: original.passphraseSlot, recoverySlot: slot, keyHistory: original.keyHistory)
            var bytes = forged.encoded()
            // Put the chosen master key id in place and fix both digests, as a careful attacker would.
            bytes.replaceSubrange(26..<42, with: keyID)
            let body = Array(bytes[..<(bytes.count - 64)])
            let mac = BLAKE2b.hash(body, key: attackerMaster.header)
            bytes = body + mac + BLAKE2b.hash(body + mac)
            try putHeader(bytes)
            expectRefused([.headerTampered, .integrityFailure], "the planted recovery key opened the vault") {
                _ = try Vault.open(at: url, with: .recoveryKey(planted))
            }
        }
        // The stolen keys still read and write (that is what a session is), but the owner's
        // passphrase, once the header is put back, is still the only way in: nothing lasting.
        try putHeader(originalBytes)
        let owner = try Vault.open(at: url, with: .passphrase(passphrase()))
        #expect(owner.records.map(\.payload) == [Data("SecretCanary".utf8)])
        #expect(!stolen.masterKeyID.isEmpty)
    }

    /// F2: after a passphrase change, the header of an older archive or copy is put back; the
    /// old passphrase must not open today's data.
    @Test func f2AnOlderHeaderPutBackDoesNotLetTheOldPassphraseIn() throws {
        _ = try makeVault(at: url, payloads: ["before"])
        let oldHeader = try header()
        let vault = try Vault.open(at: url, with: .passphrase(passphrase()))
        try vault.changePassphrase(to: passphrase("a new passphrase"))
        try vault.apply([.put(RecordID.random(), Data("AfterChangeCanary".utf8))])
        try putHeader(oldHeader)
        expectRefused(
            [.integrityFailure, .headerTampered], "the old passphrase opened the vault through an older header"
        ) { _ = try Vault.open(at: url, with: .passphrase(passphrase())) }
    }

    @Test func f2KeepingTheMasterKeyStillCatchesAnOlderHeaderInTheFile() throws {
        _ = try makeVault(at: url, payloads: ["before"])
        let vault = try Vault.open(at: url, with: .passphrase(passphrase()))
        try vault.apply([.put(RecordID.random(), Data("x".utf8))])  // format 2, commit names the header
        let oldHeader = try header()
        try vault.changePassphrase(to: passphrase("a new passphrase"), keepMasterKey: true)
        try putHeader(oldHeader)
        expectVaultError(.headerTampered) { _ = try Vault.open(at: url, with: .passphrase(passphrase())) }
    }

    /// The recovery key: removed, then its header put back.
    @Test func f2ARemovedRecoveryKeyStaysRemovedWhenItsHeaderIsPutBack() throws {
        _ = try makeVault(at: url, payloads: ["data"])
        let vault = try Vault.open(at: url, with: .passphrase(passphrase()))
        let (recoveryKey, _) = try vault.createRecoveryKey()
        let withRecovery = try header()
        try vault.removeRecoveryKey()
        try putHeader(withRecovery)
        expectRefused([.integrityFailure, .headerTampered], "the removed recovery key opened the vault") {
            _ = try Vault.open(at: url, with: .recoveryKey(recoveryKey))
        }
    }

    /// F3 and F21: triggers planted in the file would make writes vanish; the file is refused.
    @Test func f3PlantedTriggersAreRefusedOnOpen() throws {
        _ = try makeVault(at: url, payloads: ["Before"])
        try withRawDatabase(url) { db in
            try db.execute(
                sql: """
                    CREATE TRIGGER t1 BEFORE INSERT ON page BEGIN SELECT RAISE(IGNORE); END;
                    CREATE TRIGGER t4 BEFORE UPDATE ON commit_record BEGIN SELECT RAISE(IGNORE); END;
                    """)
        }
        let error = expectRefused([.schemaTampered], "a vault with planted triggers opened") {
            _ = try Vault.open(at: url, with: .passphrase(passphrase()))
        }
        #expect((error?.errorDescription ?? "").contains("trigger"))
        for plant in [
            "CREATE VIEW v AS SELECT * FROM page", "CREATE INDEX i ON page(sealed)",
            "ALTER TABLE page ADD COLUMN extra",
        ] {
            let copy = directory.path("plant-\(UUID().uuidString).coffer")
            _ = try makeVault(at: copy, payloads: ["x"])
            try withRawDatabase(copy) { try $0.execute(sql: plant) }
            expectVaultError(.schemaTampered) { _ = try Vault.open(at: copy, with: .passphrase(passphrase())) }
        }
    }

    /// F7: every unexpected slot kind/KDF pair is a damaged header (65), never a crash.
    @Test func f7HostileSlotPairsAreDamagedHeaders() throws {
        _ = try makeVault(at: url, payloads: ["x"])
        let bytes = try header()
        for (kind, kdf) in [(1, 2), (1, 3), (2, 1), (1, 0), (0, 1), (3, 1), (2, 9), (255, 255)] as [(UInt8, UInt8)] {
            var edited = bytes
            edited[47] = kind
            edited[48] = kdf
            let body = Array(edited[..<(edited.count - 32)])
            edited = body + BLAKE2b.hash(body)
            #expect(throws: VaultError.self) { _ = try VaultHeader.decode(edited) }
            try putHeader(edited)
            for credential in [Credential.passphrase(passphrase()), .recoveryKey(RecoveryKey.generate())] {
                expectRefused([.headerDamaged, .unsafeParameters], "a header with slot \(kind)/\(kdf) opened") {
                    _ = try Vault.open(at: url, with: credential)
                }
            }
            expectVaultError(.headerDamaged) { _ = try Vault.summary(at: url) }
        }
    }

    /// A mark that no longer parses (damaged, or edited to switch the check off) is refused like a
    /// rollback, not silently ignored; accepting starts a new mark from the file found.
    @Test func anUnreadableMarkIsRefusedNotIgnored() throws {
        let guarded = RollbackGuard(directory: state)
        _ = try makeVault(at: url, payloads: ["one"])
        let vault = try Vault.open(at: url, with: .passphrase(passphrase()), guard: guarded)
        let markFile = state.appendingPathComponent("marks/\(vault.id.hex).json")
        #expect(FileManager.default.fileExists(atPath: markFile.path))
        try Data("{}".utf8).write(to: markFile)
        expectVaultError(.rolledBack) { _ = try Vault.open(at: url, with: .passphrase(passphrase()), guard: guarded) }
        let saved = try Data(contentsOf: markFile)
        for replacement in ["folder", "link to /dev/null"] {
            try FileManager.default.removeItem(at: markFile)
            if replacement == "folder" {
                try FileManager.default.createDirectory(at: markFile, withIntermediateDirectories: false)
            } else {
                try FileManager.default.createSymbolicLink(atPath: markFile.path, withDestinationPath: "/dev/null")
            }
            expectVaultError(.rolledBack) {
                _ = try Vault.open(at: url, with: .passphrase(passphrase()), guard: guarded)
            }
        }
        try FileManager.default.removeItem(at: markFile)
        try saved.write(to: markFile)
        try expectAcceptedRollbackOpens(guarded)
    }

    /// Accepted on purpose, the file opens, and the mark follows it: the next guarded open passes.
    func expectAcceptedRollbackOpens(_ guarded: RollbackGuard) throws {
        var accepting = guarded
        accepting.acceptRollback = true
        _ = try Vault.open(at: url, with: .passphrase(passphrase()), guard: accepting)
        _ = try Vault.open(at: url, with: .passphrase(passphrase()), guard: guarded)
    }

    /// F11: an archived header asking for more Argon2id work than Coffer ever writes is refused
    /// before Argon2id runs: with a wrong passphrase the answer is still "unsafe", not "wrong".
    @Test func f11AnArchivedHeaderAskingForMoreWorkIsRefusedBeforeArgon2id() throws {
        _ = try makeVault(at: url, payloads: ["x"])
        // Opslimit 5; memlimit 2 GiB (little-endian at 57).
        for (offset, value) in [(49, UInt8(5)), (60, UInt8(0x80))] {
            var edited = try header()
            edited[offset] = value
            let body = Array(edited.dropLast(32))
            edited = body + BLAKE2b.hash(body)
            expectVaultError(.unsafeParameters) {
                _ = try Vault.unlockArchivedHeader(
                    edited, credential: .passphrase(passphrase("not the passphrase at all"))
                ).backupKeys
            }
        }
    }

    /// F14 and item 5: an older copy of the whole file, or a forked one, against the mark.
    @Test func wholeFileRollbackAndForksAreDetectedAgainstTheMark() throws {
        let guarded = RollbackGuard(directory: state)
        _ = try makeVault(at: url, payloads: ["one"])
        let old = try Data(contentsOf: url)
        let forkURL = directory.path("fork.coffer")
        try Vault.open(at: url, with: .passphrase(passphrase()), guard: guarded).apply([
            .put(RecordID.random(), Data("two".utf8))
        ])
        // A copy of the file as it is now, changed separately: a fork at the same counter later.
        try FileManager.default.copyItem(at: url, to: forkURL)
        try Vault.open(at: url, with: .passphrase(passphrase()), guard: guarded).apply([
            .put(RecordID.random(), Data("three".utf8))
        ])
        try Vault.open(at: forkURL, with: .passphrase(passphrase())).apply([
            .put(RecordID.random(), Data("elsewhere".utf8))
        ])

        try old.write(to: url)
        for suffix in ["-wal", "-shm"] { unlink(url.path + suffix) }
        expectVaultError(.rolledBack) { _ = try Vault.open(at: url, with: .passphrase(passphrase()), guard: guarded) }
        expectVaultError(.rolledBack) {
            _ = try Vault.open(at: forkURL, with: .passphrase(passphrase()), guard: guarded)
        }
        try expectAcceptedRollbackOpens(guarded)
    }

    /// A header of an older key generation at a path that has seen a newer one is refused
    /// before any key work (it would open only with a revoked passphrase).
    @Test func anOlderKeyGenerationAtTheSamePathIsRefusedBeforeUnlocking() throws {
        let guarded = RollbackGuard(directory: state)
        _ = try makeVault(at: url, payloads: ["one"])
        let old = try Data(contentsOf: url)
        do {
            let vault = try Vault.open(at: url, with: .passphrase(passphrase()), guard: guarded)
            try vault.changePassphrase(to: passphrase("a new passphrase"))
        }
        try old.write(to: url)
        for suffix in ["-wal", "-shm"] { unlink(url.path + suffix) }
        let error = expectRefused([.rolledBack], "an older key generation opened") {
            _ = try Vault.open(at: url, with: .passphrase(passphrase()), guard: guarded)
        }
        #expect((error?.errorDescription ?? "").contains("key generation 1"))
    }

    /// The clocks at unlock in the session tests, and `seconds` later by both clocks.
    let sessionStart = SessionClock(now: Date(), uptime: 1_000, bootID: Array(repeating: 7, count: 16))
    func at(_ seconds: TimeInterval) -> SessionClock {
        SessionClock(
            now: sessionStart.now.addingTimeInterval(seconds), uptime: 1_000 + seconds, bootID: sessionStart.bootID)
    }

    /// A session slides with use (`--timeout` is idle time) but never past its end (`--max-age`),
    /// by either clock; and the end, bound into the AEAD, cannot be pushed out by editing the file.
    @Test func aSessionSlidesWithUseButNeverPastItsEnd() throws {
        _ = try makeVault(at: url, payloads: ["a"])
        let vault = try Vault.open(at: url, with: .passphrase(passphrase()))
        let header = try VaultHeader.decode(try self.header())
        let token = try SessionStore.create(
            keys: vault.operationalKeys, vaultID: vault.id, generation: vault.keyGeneration,
            lifetime: 300, idleTimeout: 60, directory: sessions, clock: sessionStart)
        // Used every 50 s, it outlives its first 60 s several times over...
        for seconds in stride(from: 50.0, through: 250, by: 50) {
            _ = try SessionStore.unwrapKeys(token: token, directory: sessions, header: header, clock: at(seconds))
        }
        // ...but not its end, however recently it was used.
        _ = try SessionStore.unwrapKeys(token: token, directory: sessions, header: header, clock: at(299))
        expectVaultError(.sessionExpired) {
            _ = try SessionStore.unwrapKeys(token: token, directory: sessions, header: header, clock: at(301))
        }

        // Left alone for longer than the idle time, it ends, by the boot clock too when the wall
        // clock is turned back.
        let idle = try SessionStore.create(
            keys: vault.operationalKeys, vaultID: vault.id, generation: vault.keyGeneration,
            lifetime: 300, idleTimeout: 60, directory: sessions, clock: sessionStart)
        _ = try SessionStore.unwrapKeys(token: idle, directory: sessions, header: header, clock: at(40))
        let wallClockBack = SessionClock(now: sessionStart.now, uptime: 1_000 + 40 + 61, bootID: sessionStart.bootID)
        expectVaultError(.sessionExpired) {
            _ = try SessionStore.unwrapKeys(token: idle, directory: sessions, header: header, clock: wallClockBack)
        }

        // Editing the end (bytes 64..<72 of a format 3 file) breaks the session rather than extending it.
        let edited = try SessionStore.create(
            keys: vault.operationalKeys, vaultID: vault.id, generation: vault.keyGeneration,
            lifetime: 300, idleTimeout: 60, directory: sessions, clock: sessionStart)
        let file = SessionStore.fileURL(id: edited.id, directory: sessions)
        var bytes = try Data(contentsOf: file)
        #expect(bytes.count == SessionStore.fileByteCount && Array(bytes.prefix(8)) == Array("CFRSESS3".utf8))
        bytes[64 + 4] &+= 1
        try bytes.write(to: file)
        expectVaultError(.sessionInvalid) {
            _ = try SessionStore.unwrapKeys(token: edited, directory: sessions, header: header, clock: at(10))
        }
    }

    /// A session file written by the previous version (format 2: a fixed expiry) still opens
    /// until that expiry, and does not slide.
    @Test func aFormatTwoSessionOpensUntilItsFixedExpiry() throws {
        _ = try makeVault(at: url, payloads: ["a"])
        let vault = try Vault.open(at: url, with: .passphrase(passphrase()))
        let token = try SessionStore.create(
            keys: vault.operationalKeys, vaultID: vault.id, generation: vault.keyGeneration,
            lifetime: 60, directory: sessions, clock: sessionStart)
        // Rewrite it as format 2: the same sealed keys, re-sealed under the format 2 associated data.
        let file = SessionStore.fileURL(id: token.id, directory: sessions)
        let current = Array(try Data(contentsOf: file))
        let header = try VaultHeader.decode(try self.header())
        let keysFile = Array(current[SessionStore.clearByteCount...])
        let plain = try XChaCha20Poly1305.openSecret(
            XChaCha20Poly1305.SealedBox(combined: keysFile), key: token.secret,
            associatedData: Array(current[..<8]) + token.id + current[8..<SessionStore.clearByteCount])
        let clear = Array("CFRSESS2".utf8) + current[8..<SessionStore.fixedExpiryClearByteCount]
        let sealed = plain.withUnsafeBytes {
            XChaCha20Poly1305.seal($0, key: token.secret, associatedData: Array(clear[..<8]) + token.id + clear[8...])
        }
        try Data(clear + sealed.combined).write(to: file)
        _ = try SessionStore.unwrapKeys(token: token, directory: sessions, header: header, clock: at(50))
        #expect(
            Array(try Data(contentsOf: file).prefix(8)) == Array("CFRSESS2".utf8), "a format 2 file is not rewritten")
        expectVaultError(.sessionExpired) {
            _ = try SessionStore.unwrapKeys(token: token, directory: sessions, header: header, clock: at(61))
        }
    }

    /// F10: a session outlives neither its time by the boot clock nor a restart, whatever the
    /// wall clock says; expired files are wiped when sessions are next used.
    @Test func f10TurningTheWallClockBackDoesNotReviveASession() throws {
        _ = try makeVault(at: url, payloads: ["a"])
        let vault = try Vault.open(at: url, with: .passphrase(passphrase()))
        let start = SessionClock(now: Date(), uptime: 1_000, bootID: Array(repeating: 7, count: 16))
        let token = try SessionStore.create(
            keys: vault.operationalKeys, vaultID: vault.id, generation: vault.keyGeneration,
            lifetime: 60, directory: sessions, clock: start)
        let header = try VaultHeader.decode(try self.header())
        // The wall clock turned back an hour, but 61 s have passed since boot: expired.
        let later = SessionClock(now: start.now.addingTimeInterval(-3600), uptime: 1_061, bootID: start.bootID)
        expectVaultError(.sessionExpired) {
            _ = try SessionStore.unwrapKeys(token: token, directory: sessions, header: header, clock: later)
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: sessions.path).isEmpty, "the expired file is wiped")

        let second = try SessionStore.create(
            keys: vault.operationalKeys, vaultID: vault.id, generation: vault.keyGeneration,
            lifetime: 60, directory: sessions, clock: start)
        let rebooted = SessionClock(
            now: start.now.addingTimeInterval(5), uptime: 5, bootID: Array(repeating: 8, count: 16))
        expectVaultError(.sessionExpired) {
            _ = try SessionStore.unwrapKeys(token: second, directory: sessions, header: header, clock: rebooted)
        }

        // Expired files of other sessions go too, whenever any session is used.
        _ = try SessionStore.create(
            keys: vault.operationalKeys, vaultID: vault.id, generation: vault.keyGeneration,
            lifetime: 1, directory: sessions, clock: start)
        let live = try SessionStore.create(
            keys: vault.operationalKeys, vaultID: vault.id, generation: vault.keyGeneration,
            lifetime: 600, directory: sessions, clock: start)
        let soon = SessionClock(now: start.now.addingTimeInterval(30), uptime: 1_030, bootID: start.bootID)
        _ = try SessionStore.unwrapKeys(token: live, directory: sessions, header: header, clock: soon)
        #expect(try FileManager.default.contentsOfDirectory(atPath: sessions.path).count == 1)
    }
}
