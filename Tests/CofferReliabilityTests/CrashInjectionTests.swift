import CofferKit
import CofferTestSupport
import FinanceCore
import Foundation
import Testing
import VaultCrypto
import VaultStore

/// SIGKILL at random moments during the operations that write: many small writes, a statement
/// import, a backup, a restore over an existing vault, and pruning. After every kill the vault
/// must open and verify, and hold exactly the writes that reported success (the killed one all or
/// nothing); every file with a final archive name must verify; a restore target must be either
/// the old vault or the fully restored one. `COFFER_CRASH_TRIALS` sets the trials per operation
/// (`scripts/reliability crash` runs 200).
extension CrashSafetyTests {
    static let demoPassphrase = "demo"
    var demoEnvironment: [String: String] { ["COFFER_PASSPHRASE": Self.demoPassphrase, "COFFER_TODAY": "2026-11-22"] }

    /// A demo vault (accounts, a year of budget, invoices) made by the real binary.
    func makeDemoVault(in sandbox: Sandbox, name: String = "base.coffer") throws -> URL {
        let url = sandbox.directory.path(name)
        let result = try sandbox.run(["demo", "--vault", url.path], environment: demoEnvironment)
        #expect(result.status == 0, "\(result.stderr)")
        return url
    }

    /// Opens with the passphrase, runs the full verification and decodes every record.
    func openVerified(_ url: URL, passphrase: String = demoPassphrase) throws -> (Vault, [FinanceRecord]) {
        let vault = try Vault.open(at: url, with: .passphrase(try Passphrase(passphrase)))
        _ = try vault.verify()
        let records = try vault.records.map { try RecordCodec.decode(Array($0.payload), id: $0.id.uuid) }
        return (vault, records)
    }

    func copyVault(_ source: URL, to target: URL) throws {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: target.path + suffix) }
        try FileManager.default.copyItem(at: source, to: target)
    }

    /// Every `coffer-*.cbak` in `directory` must pass `coffer backup verify` (signature, header,
    /// framing) against `publicKey`. Returns how many there were.
    @discardableResult
    func expectEveryArchiveVerifies(in directory: URL, publicKey: URL, sandbox: Sandbox) throws -> Int {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        let archives = names.filter { $0.hasPrefix("coffer-") && $0.hasSuffix(".cbak") }
        for name in archives {
            let result = try sandbox.run([
                "backup", "verify", directory.appendingPathComponent(name).path, "--pubkey", publicKey.path,
            ])
            #expect(result.status == 0, "\(name) has a final archive name but does not verify: \(result.stderr)")
        }
        return archives.count
    }

    @Test func killedSmallWritesKeepEveryWriteThatSucceeded() throws {
        let sandbox = Sandbox()
        let vault = try makeDemoVault(in: sandbox)
        var written = 0
        /// One `coffer update` whose note names it; returns its status.
        func update(_ number: Int) throws -> Child {
            let date = try CalendarDate(year: 2000, month: 1, day: 1).adding(days: number)
            return try sandbox.start(
                [
                    // --yes: after killed writes, the value can be ten times the last one that landed.
                    "update", "Marcus Easy Access", "\(number).25", "--date", date.description, "--note",
                    "write \(number)", "--yes",
                    "--vault", vault.path,
                ], environment: demoEnvironment)
        }
        let started = Date()
        #expect(try update(written).result().status == 0)
        let duration = Date().timeIntervalSince(started)
        var succeeded: Set<String> = ["write 0"], maybe: Set<String> = []
        var killed = 0
        for _ in 0..<Self.trials {
            for _ in 0..<Int.random(in: 0...2) {
                written += 1
                let result = try update(written).result()
                #expect(result.status == 0, "\(result.stderr)")
                succeeded.insert("write \(written)")
            }
            written += 1
            let child = try update(written)
            usleep(UInt32(Double.random(in: 0...(duration * 1.1)) * 1_000_000))
            if child.isRunning { killed += 1 }
            child.kill()
            if child.wait() == 0 { succeeded.insert("write \(written)") } else { maybe.insert("write \(written)") }

            let (_, records) = try openVerified(vault)
            let notes = Set(
                records.compactMap { record -> String? in
                    if case .update(let update) = record, let note = update.note, note.hasPrefix("write ") {
                        return note
                    }
                    return nil
                })
            #expect(
                succeeded.isSubset(of: notes),
                "a write that reported success is missing: \(succeeded.subtracting(notes).sorted())")
            #expect(notes.isSubset(of: succeeded.union(maybe)))
            succeeded.formUnion(notes.intersection(maybe))  // a killed write that landed is now simply present
        }
        #expect(killed > 0, "some kills must land mid-write")
        print(
            "small writes: \(Self.trials) kills attempted, \(killed) mid-write, \(succeeded.count) writes present and verified"
        )
    }

    @Test func killedStatementImportIsAllOrNothing() throws {
        let sandbox = Sandbox()
        let base = try makeDemoVault(in: sandbox)
        let lines = 3000
        let statement = sandbox.directory.path("statement.csv")
        let rows = (0..<lines).map {
            "2026-10-\(String(format: "%02d", $0 % 28 + 1)),-\($0 % 90 + 1).\(String(format: "%02d", $0 % 100)),Shop \($0)"
        }
        try (["Date,Amount,Description"] + rows).joined(separator: "\n").write(
            to: statement, atomically: true, encoding: .utf8)
        let before = try openVerified(base).1.filter { if case .transaction = $0 { true } else { false } }.count
        var landed = 0
        let outcome = try killRepeatedly(
            sandbox, base: base,
            arguments: ["import", "csv", statement.path, "--into", "transactions", "--account", "Bank"],
            environment: demoEnvironment
        ) { url in
            let count = try openVerified(url).1.filter { if case .transaction = $0 { true } else { false } }.count
            #expect(
                count == before || count == before + lines,
                "an import must land whole or not at all: \(count - before) of \(lines)")
            if count == before + lines { landed += 1 }
        }
        #expect(outcome.interrupted > 0)
        print(
            "import: \(outcome.interrupted) killed, \(outcome.completed) finished first; \(landed) trials ended imported"
        )
    }

    @Test func killedBackupLeavesNoArchiveThatFailsVerification() throws {
        let sandbox = Sandbox()
        let base = try makeDemoVault(in: sandbox)
        let basePayloads = Set(try openVerified(base).0.records.map(\.payload))
        let target = sandbox.directory.path("trial.coffer"), destination = sandbox.directory.path("usb")
        let publicKey = URL(fileURLWithPath: target.path + ".pub")
        var complete = 0
        let outcome = try killTrials(
            sandbox, arguments: ["backup", "create", "--to", destination.path, "--vault", target.path],
            environment: demoEnvironment,
            prepare: {
                try copyVault(base, to: target)
                try? FileManager.default.removeItem(at: destination)
                try FileManager.default.createDirectory(at: destination, withIntermediateDirectories: true)
            },
            afterFullRun: {
                let archives = try expectEveryArchiveVerifies(in: destination, publicKey: publicKey, sandbox: sandbox)
                #expect(archives == 1)
            },
            check: {
                let payloads = Set(try openVerified(target).0.records.map(\.payload))
                #expect(basePayloads.isSubset(of: payloads), "a backup must leave every record as it was")
                if FileManager.default.fileExists(atPath: publicKey.path) {
                    complete += try expectEveryArchiveVerifies(in: destination, publicKey: publicKey, sandbox: sandbox)
                } else {
                    let names = try FileManager.default.contentsOfDirectory(atPath: destination.path)
                    #expect(
                        !names.contains { $0.hasSuffix(".cbak") },
                        "an archive under its final name before the public key exists")
                }
            })
        #expect(outcome.interrupted > 0)
        print(
            "backup create: \(outcome.interrupted) killed mid-run of \(Self.trials); \(complete) archives under final names, all verified"
        )
    }

    @Test func killedRestoreLeavesTheOldVaultOrTheRestoredOne() throws {
        let sandbox = Sandbox()
        let source = try makeDemoVault(in: sandbox, name: "source.coffer")
        let usb = sandbox.directory.path("usb")
        try FileManager.default.createDirectory(at: usb, withIntermediateDirectories: true)
        #expect(
            try sandbox.run(
                ["backup", "create", "--to", usb.path, "--vault", source.path], environment: demoEnvironment
            ).status == 0)
        let archive = usb.appendingPathComponent(
            try FileManager.default.contentsOfDirectory(atPath: usb.path).first { $0.hasSuffix(".cbak") }!)
        let sourceVault = try openVerified(source).0
        // What an archive holds: a restored vault makes its own bookkeeping (backup state, summary).
        func finances(_ vault: Vault) -> Set<Data> {
            Set(vault.records.map(\.payload).filter { !RecordCodec.isLocal($0) })
        }
        let sourcePayloads = finances(sourceVault)

        // The vault being replaced: another vault, with one account.
        let old = sandbox.directory.path("old.coffer")
        #expect(
            try sandbox.run(
                ["init", "--kdf", "interactive", "--allow-weak-passphrase", "--vault", old.path],
                environment: demoEnvironment
            ).status == 0)
        #expect(
            try sandbox.run(
                ["account", "add", "Old Savings", "--category", "Savings", "--vault", old.path],
                environment: demoEnvironment
            ).status == 0)
        let oldDigest = try storedRowsDigest(old)
        let place = sandbox.directory.path("restore-here")
        let target = place.appendingPathComponent("vault.coffer")
        var restored = 0, kept = 0
        let outcome = try killTrials(
            sandbox, arguments: ["restore", archive.path, "--to", target.path, "--replace"],
            environment: demoEnvironment,
            prepare: {
                try? FileManager.default.removeItem(at: place)
                try FileManager.default.createDirectory(at: place, withIntermediateDirectories: true)
                try copyVault(old, to: target)
            },
            check: {
                #expect(FileManager.default.fileExists(atPath: target.path), "the restore target must never be missing")
                if try storedRowsDigest(target) == oldDigest {
                    kept += 1
                    return
                }
                let (vault, _) = try openVerified(target)
                #expect(
                    vault.id == sourceVault.id && finances(vault) == sourcePayloads,
                    "the target is neither the old vault nor the fully restored one")
                restored += 1
                let saved = try FileManager.default.contentsOfDirectory(atPath: place.path).filter {
                    $0.contains(".before-restore-") && !$0.hasSuffix("-wal") && !$0.hasSuffix("-shm")
                }
                #expect(saved.count == 1, "the replaced vault must be kept aside")
                if let saved = saved.first {
                    let savedDigest = try storedRowsDigest(place.appendingPathComponent(saved))
                    #expect(savedDigest == oldDigest, "the vault kept aside must be the old one, unchanged")
                }
            })
        #expect(outcome.interrupted > 0)
        print(
            "restore --replace: \(outcome.interrupted) killed mid-run of \(Self.trials); old vault kept \(kept), fully restored \(restored)"
        )
    }

    @Test func killedPruneLeavesOnlyArchivesThatVerify() throws {
        let sandbox = Sandbox()
        let vault = try makeDemoVault(in: sandbox)
        let publicKey = URL(fileURLWithPath: vault.path + ".pub")
        let template = sandbox.directory.path("template"), destination = sandbox.directory.path("usb")
        try FileManager.default.createDirectory(at: template, withIntermediateDirectories: true)
        for _ in 0..<6 {
            #expect(
                try sandbox.run(
                    ["backup", "create", "--to", template.path, "--vault", vault.path], environment: demoEnvironment
                ).status == 0)
        }
        var kept: Set<String> = []
        let outcome = try killTrials(
            sandbox, arguments: ["backup", "prune", destination.path, "--keep-last", "2", "--vault", vault.path],
            environment: demoEnvironment,
            prepare: {
                try? FileManager.default.removeItem(at: destination)
                try FileManager.default.copyItem(at: template, to: destination)
            },
            afterFullRun: {
                let archives = try expectEveryArchiveVerifies(in: destination, publicKey: publicKey, sandbox: sandbox)
                #expect(archives == 2)
                kept = Set(
                    try FileManager.default.contentsOfDirectory(atPath: destination.path).filter {
                        $0.hasSuffix(".cbak")
                    })
            },
            check: {
                let remaining = try expectEveryArchiveVerifies(in: destination, publicKey: publicKey, sandbox: sandbox)
                #expect(remaining >= 2 && remaining <= 6)
                let names = Set(try FileManager.default.contentsOfDirectory(atPath: destination.path))
                #expect(kept.isSubset(of: names), "the archives the policy keeps must never be removed")
                _ = try openVerified(vault)
            })
        #expect(outcome.interrupted > 0)
        print("backup prune: \(outcome.interrupted) killed mid-run of \(Self.trials); every remaining archive verified")
    }
}
