import CofferTestSupport
import Foundation
import Testing
import VaultCrypto
import VaultStore

/// Kills real `coffer` processes with SIGKILL at random moments during key changes. Whatever the
/// moment, the vault must open with exactly one of the old and new passphrases and hold every
/// record unchanged. `COFFER_CRASH_TRIALS` raises the trial count for longer local runs.
@Suite(.serialized) struct CrashSafetyTests {
    static let trials = Int(ProcessInfo.processInfo.environment["COFFER_CRASH_TRIALS"] ?? "") ?? 30
    static let recordCount = 1500

    struct Outcome { var completed = 0; var interrupted = 0 }

    /// A closed vault with `recordCount` records under "old passphrase", and its payloads.
    func makeBaseVault(in sandbox: Sandbox) throws -> (URL, Set<Data>) {
        let base = sandbox.directory.path("base.coffer")
        let vault = try Vault.create(at: base, passphrase: try Passphrase("old passphrase"), parameters: testParameters)
        let payloads = (0..<Self.recordCount).map { Data("record \($0) with some padding to look like real data".utf8) }
        try vault.apply(payloads.map { .put(.random(), $0) })
        return (base, Set(payloads))
    }

    /// Times one uninterrupted run of `arguments` (after `prepare`, then `afterFullRun`), then
    /// per trial: `prepare`, start, SIGKILL after a random delay up to a little more than that
    /// run took, `check`.
    func killTrials(
        _ sandbox: Sandbox, arguments: [String], environment: [String: String] = [:], prepare: () throws -> Void,
        afterFullRun: () throws -> Void = {}, check: () throws -> Void
    ) throws -> Outcome {
        try prepare()
        let started = Date()
        let full = try sandbox.run(arguments, environment: environment)
        #expect(full.status == 0, "\(full.stderr)")
        let duration = Date().timeIntervalSince(started)
        try afterFullRun()

        var outcome = Outcome()
        for _ in 0..<Self.trials {
            try prepare()
            let child = try sandbox.start(arguments, environment: environment)
            usleep(UInt32(Double.random(in: 0...(duration * 1.1)) * 1_000_000))
            if child.isRunning {
                child.kill()
                outcome.interrupted += 1
            } else {
                outcome.completed += 1
            }
            child.wait()
            try check()
        }
        return outcome
    }

    /// `killTrials` on a fresh copy of `base` per trial, calling `check` on the copy.
    func killRepeatedly(
        _ sandbox: Sandbox, base: URL, arguments: [String], environment: [String: String] = [:],
        check: (URL) throws -> Void
    ) throws -> Outcome {
        let target = sandbox.directory.path("trial.coffer")
        return try killTrials(
            sandbox, arguments: arguments + ["--vault", target.path], environment: environment,
            prepare: {
                for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: target.path + suffix) }
                try FileManager.default.copyItem(at: base, to: target)
                // Each trial starts from the base again, which this machine's high-water mark
                // (raised by the trial before) would refuse as a rollback before any work.
                try? FileManager.default.removeItem(at: sandbox.directory.path(".local/state/coffer/marks"))
            },
            afterFullRun: { try check(target) }, check: { try check(target) })
    }

    @Test func killedPassphraseChangeLeavesExactlyOnePassphraseWorking() throws {
        let sandbox = Sandbox()
        let (base, payloads) = try makeBaseVault(in: sandbox)
        let oldFile = sandbox.directory.secretFile("old", "old passphrase\n")
        let newFile = sandbox.directory.secretFile("new", "new passphrase\n")
        var opened = (old: 0, new: 0)
        let outcome = try killRepeatedly(
            sandbox, base: base,
            arguments: ["passphrase", "change", "--passphrase-file", oldFile, "--new-passphrase-file", newFile]
        ) { url in
            let withOld = try? Vault.open(at: url, with: .passphrase(try Passphrase("old passphrase")))
            let withNew = try? Vault.open(at: url, with: .passphrase(try Passphrase("new passphrase")))
            #expect((withOld == nil) != (withNew == nil), "exactly one passphrase must open the vault")
            if withOld != nil { opened.old += 1 } else { opened.new += 1 }
            let vault = try #require(withOld ?? withNew)
            #expect(Set(vault.records.map(\.payload)) == payloads)
            _ = try vault.verify()
        }
        #expect(outcome.interrupted > 0, "some kills must land before the command finished")
        print(
            "passphrase change: \(outcome.interrupted) killed, \(outcome.completed) finished first; old opened \(opened.old), new \(opened.new)"
        )
    }

    /// The upgrade of a format 2 vault (the committed demo vault) killed at random: the file is
    /// the old format 2 vault or the upgraded one, every record there either way, and a copy kept
    /// aside by an interrupted upgrade is itself the old vault whole.
    @Test func killedUpgradeLeavesTheOldVaultOrTheNewOne() throws {
        let sandbox = Sandbox()
        // A copy: even opening a file lets SQLite touch its header, and the committed one stays as it is.
        let base = sandbox.directory.path("demo-format2.coffer")
        try FileManager.default.copyItem(
            at: URL(fileURLWithPath: #filePath).deletingLastPathComponent()
                .appendingPathComponent("../Fixtures/vault-format2/demo.coffer").standardized,
            to: base)
        let passphrase = try Passphrase("demo")
        let records = try Vault.open(at: base, with: .passphrase(passphrase)).records
        var formats = (old: 0, new: 0)
        let outcome = try killRepeatedly(
            sandbox, base: base, arguments: ["upgrade"], environment: ["COFFER_PASSPHRASE": "demo"]
        ) { url in
            let vault = try Vault.open(at: url, with: .passphrase(passphrase))
            #expect(vault.records == records)
            _ = try vault.verify()
            if vault.formatVersion == 3 { formats.new += 1 } else { formats.old += 1 }
            let aside = URL(fileURLWithPath: url.path + ".format2-copy")
            if FileManager.default.fileExists(atPath: aside.path),
                let copy = try? Vault.open(at: aside, with: .passphrase(passphrase))
            {
                #expect(copy.records == records && copy.formatVersion == 2)
            }
            try? FileManager.default.removeItem(at: aside)
        }
        #expect(outcome.interrupted > 0)
        print(
            "upgrade: \(outcome.interrupted) killed, \(outcome.completed) finished first; old \(formats.old), new \(formats.new)"
        )
    }

    @Test func killedRekeyLeavesEveryRecordIntact() throws {
        let sandbox = Sandbox()
        let (base, payloads) = try makeBaseVault(in: sandbox)
        let passphraseFile = sandbox.directory.secretFile("old", "old passphrase\n")
        let baseCiphertexts = try withRawDatabase(base) { try Set(Data.fetchAll($0, sql: "SELECT sealed FROM page")) }
        var rekeyed = 0
        let outcome = try killRepeatedly(
            sandbox, base: base, arguments: ["rekey", "--passphrase-file", passphraseFile]
        ) { url in
            let vault = try Vault.open(at: url, with: .passphrase(try Passphrase("old passphrase")))
            #expect(Set(vault.records.map(\.payload)) == payloads)
            _ = try vault.verify()
            // All old pages or all new ones: never a mixture.
            let ciphertexts = try withRawDatabase(url) { try Set(Data.fetchAll($0, sql: "SELECT sealed FROM page")) }
            let unchanged = ciphertexts.intersection(baseCiphertexts).count
            #expect(unchanged == 0 || unchanged == baseCiphertexts.count)
            if unchanged == 0 { rekeyed += 1 }
        }
        #expect(outcome.interrupted > 0)
        print(
            "rekey: \(outcome.interrupted) killed, \(outcome.completed) finished first; \(rekeyed) trials ended rekeyed"
        )
    }
}
