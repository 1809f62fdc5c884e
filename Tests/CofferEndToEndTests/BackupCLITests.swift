import CofferKit
import CofferTestSupport
import FinanceCore
import Foundation
import GRDB
import Testing
import VaultCrypto
import VaultStore

/// Backups through the real binary: create, the standard minisign tool, verify levels, list,
/// restore round trips, damage, wrong and old passphrases, prune, and a canary scan.
@Suite struct BackupCLITests {
    let sandbox = Sandbox()
    var environment: [String: String] { ["COFFER_PASSPHRASE": "demo", "COFFER_TODAY": "2026-11-22"] }
    var usb: URL { sandbox.directory.path("usb") }

    @discardableResult
    func coffer(_ arguments: [String], _ extra: [String: String] = [:]) throws -> RunResult {
        try sandbox.run(arguments, environment: environment.merging(extra) { $1 })
    }

    func makeVaultAndBackup() throws -> URL {
        #expect(try coffer(["demo", "--vault", sandbox.vault.path]).status == 0)
        try FileManager.default.createDirectory(at: usb, withIntermediateDirectories: true)
        #expect(try coffer(["backup", "target", "add", usb.path]).status == 0)
        let created = try coffer(["backup", "create"])
        #expect(created.status == 0, "\(created.stderr)")
        #expect(created.stdout.contains("Backup OK"))
        return try archives().last!
    }

    func archives() throws -> [URL] {
        try FileManager.default.contentsOfDirectory(at: usb, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "cbak" }.sorted { $0.lastPathComponent < $1.lastPathComponent }
    }

    func directoryListing(_ url: URL) throws -> [String: Data] {
        guard FileManager.default.fileExists(atPath: url.path) else { return [:] }
        var listing: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: url.path) {
            listing[name] = FileManager.default.contents(atPath: url.appendingPathComponent(name).path) ?? Data()
        }
        return listing
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/minisign")))
    func minisignVerifiesWithTheExportedKeyAndRejectsAnyChange() throws {
        let archive = try makeVaultAndBackup()
        let publicKey = sandbox.directory.path("coffer.pub")
        #expect(try coffer(["backup", "pubkey", "--out", publicKey.path]).status == 0)
        func minisign() throws -> Int32 {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/minisign")
            process.arguments = ["-Vm", archive.path, "-p", publicKey.path, "-q"]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            process.waitUntilExit()
            return process.terminationStatus
        }
        #expect(try minisign() == 0)
        var bytes = try Data(contentsOf: archive)
        bytes[100] ^= 0x20
        try bytes.write(to: archive)
        #expect(try minisign() != 0)
    }

    func json(_ result: RunResult, sourceLocation: SourceLocation = #_sourceLocation) throws -> [String: Any] {
        #expect(result.status == 0, "\(result.stderr)", sourceLocation: sourceLocation)
        return try #require(
            try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any],
            sourceLocation: sourceLocation)
    }

    /// What a script reads, as Specs/cli.md gives it: create, verify, prune and restore each
    /// print one JSON object on stdout and nothing else there.
    @Test func everyBackupCommandSpeaksJSON() throws {
        _ = try makeVaultAndBackup()
        let created = try json(try coffer(["backup", "create", "--json"]))
        let destination = try #require((created["destinations"] as? [[String: Any]])?.first)
        #expect(destination["status"] as? String == "ok")
        #expect(destination["folder"] as? String == usb.path)
        #expect((destination["records"] as? Int ?? 0) > 0)
        #expect(created["failures"] as? Int == 0)
        let archive = try #require(destination["archive"] as? String)
        #expect(FileManager.default.fileExists(atPath: archive))

        let verified = try json(try coffer(["backup", "verify", "--full", "--json", archive]))
        #expect(verified["verified"] as? String == "full")
        #expect(verified["sequence"] as? Int == 2)
        #expect(verified["archive"] as? String == archive)
        #expect(try json(try coffer(["backup", "verify", "--json", archive]))["verified"] as? String == "signature")

        let pruned = try json(try coffer(["backup", "prune", usb.path, "--keep-last", "1", "--dry-run", "--json"]))
        #expect(pruned["dryRun"] as? Bool == true)
        #expect(
            (pruned["kept"] as? [[String: Any]])?.map { $0["archive"] as? String } == [
                URL(fileURLWithPath: archive).lastPathComponent
            ])
        #expect((pruned["removed"] as? [String])?.count == 1)
        #expect(try archives().count == 2, "a dry run removes nothing")

        let target = sandbox.directory.path("restored.coffer")
        let restored = try json(try coffer(["restore", archive, "--to", target.path, "--json"]))
        #expect(restored["vault"] as? String == target.path)
        #expect(restored["sequence"] as? Int == 2)
        #expect((restored["netWorth"] as? String)?.hasPrefix("GBP ") == true)
        #expect(restored["previousVaultKeptAt"] is NSNull || restored["previousVaultKeptAt"] == nil)

        let failed = try coffer(["backup", "create", "--to", sandbox.directory.path("not-mounted").path, "--json"])
        #expect(failed.status == 73, "a destination folder that is not there: cannot create output")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(failed.stdout.utf8)) as? [String: Any])
        #expect((report["destinations"] as? [[String: Any]])?.first?["status"] as? String == "missing-folder")
        #expect(failed.stderr.hasPrefix("error: "))
    }

    @Test func restoreRoundTripGivesIdenticalRecordsAndOverview() throws {
        let archive = try makeVaultAndBackup()
        #expect(try coffer(["backup", "verify", archive.path]).stdout.contains("Archive OK"))
        let full = try coffer(["backup", "verify", "--full", archive.path])
        #expect(full.status == 0)
        #expect(full.stdout.contains("every record parsed"))
        let list = try coffer(["backup", "list", "--json"])
        let rows =
            (try JSONSerialization.jsonObject(with: Data(list.stdout.utf8)) as! [String: Any])["archives"]
            as! [[String: Any]]
        #expect(rows.map { $0["status"] as! String } == ["signed"])
        for key in ["copyOf", "forkWith"] {
            #expect(rows[0].keys.contains(key) && rows[0][key] is NSNull, "\(key) is there, as null: \(rows[0])")
        }

        let restoredPath = sandbox.directory.path("fresh/restored.coffer")
        let restore = try coffer(["restore", archive.path, "--to", restoredPath.path])
        #expect(restore.status == 0, "\(restore.stderr)")
        let original = try coffer(["overview", "--json"]).stdout
        let restored = try coffer(["overview", "--json", "--vault", restoredPath.path]).stdout
        #expect(original == restored)
        // Every record but the backup bookkeeping (which archives leave out and restore rebuilds).
        let before = try Vault.open(at: sandbox.vault, with: .passphrase(try Passphrase("demo"))).records.filter {
            !RecordCodec.isLocal($0.payload)
        }
        let after = try Vault.open(at: restoredPath, with: .passphrase(try Passphrase("demo"))).records.filter {
            !RecordCodec.isLocal($0.payload)
        }
        #expect(before.map(\.id) == after.map(\.id))
        #expect(before.map(\.payload) == after.map(\.payload))

        // --replace keeps the old vault beside the new one.
        #expect(try coffer(["restore", archive.path, "--to", restoredPath.path]).status == 64)
        #expect(try coffer(["restore", archive.path, "--to", restoredPath.path, "--replace"]).status == 0)
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: restoredPath.deletingLastPathComponent().path)
                .contains { $0.hasPrefix("restored.coffer.before-restore-") })
    }

    @Test func damagedArchivesExit65AndRestoreWritesNothing() throws {
        let archive = try makeVaultAndBackup()
        let original = try Data(contentsOf: archive)
        let target = sandbox.directory.path("target")
        try FileManager.default.createDirectory(at: target, withIntermediateDirectories: true)
        try Data("existing vault bytes".utf8).write(to: target.appendingPathComponent("vault.coffer"))
        let before = try directoryListing(target)
        var damaged: [(String, Data)] = stride(from: 0, to: original.count, by: max(1, original.count / 12)).map {
            offset in
            var bytes = original
            bytes[offset] ^= 0x01
            return ("flip at \(offset)", bytes)
        }
        damaged.append(("truncated", original.prefix(original.count - 300)))
        damaged.append(("appended", original + Data(repeating: 0, count: 10)))
        for (label, bytes) in damaged {
            try bytes.write(to: archive)
            let verify = try coffer(["backup", "verify", archive.path])
            #expect(verify.status == 65, "\(label): \(verify.stderr)")
            let restore = try coffer([
                "restore", archive.path, "--to", target.appendingPathComponent("vault.coffer").path, "--replace",
            ])
            #expect(restore.status == 65 || restore.status == 77, "\(label): \(restore.status) \(restore.stderr)")
            #expect(try directoryListing(target) == before, "\(label): the restore target must be untouched")
        }
        try original.write(to: archive)
        #expect(try coffer(["backup", "verify", "--full", archive.path]).status == 0)
    }

    /// Every offset of a minimal archive, flipped, through the real binary: always exit 65.
    @Test func everySingleByteFlipExits65ThroughTheCLI() throws {
        #expect(try coffer(["init", "--kdf", "interactive", "--allow-weak-passphrase"]).status == 0)
        try FileManager.default.createDirectory(at: usb, withIntermediateDirectories: true)
        #expect(try coffer(["backup", "create", "--to", usb.path]).status == 0)
        let archive = try archives()[0]
        let original = try Data(contentsOf: archive)
        #expect(original.count < 1500, "a small archive: \(original.count) bytes")
        var failures: [Int] = []
        for offset in 0..<original.count {
            var bytes = original
            bytes[offset] ^= 0x80
            try bytes.write(to: archive)
            if try sandbox.run(["backup", "verify", archive.path], environment: environment).status != 65 {
                failures.append(offset)
            }
        }
        for length in stride(from: 0, to: original.count, by: 256) {
            try original.prefix(length).write(to: archive)
            if try sandbox.run(["backup", "verify", archive.path], environment: environment).status != 65 {
                failures.append(-length)
            }
        }
        #expect(failures.isEmpty, "offsets not rejected with 65: \(failures)")
    }

    @Test func anArchiveMadeBeforeAPassphraseChangeAsksForTheOldOne() throws {
        let archive = try makeVaultAndBackup()
        #expect(try coffer(["passphrase", "change"], ["COFFER_NEW_PASSPHRASE": "a brand new passphrase"]).status == 0)
        let withNew = try coffer(
            ["restore", archive.path, "--to", sandbox.directory.path("r.coffer").path],
            ["COFFER_PASSPHRASE": "a brand new passphrase"])
        #expect(withNew.status == 77)
        #expect(withNew.stderr.contains("before a passphrase change"))
        #expect(try coffer(["restore", archive.path, "--to", sandbox.directory.path("r.coffer").path]).status == 0)
    }

    @Test func pruneKeepsByRulesAndNeverTrustsForgedFiles() throws {
        _ = try makeVaultAndBackup()
        for _ in 0..<3 {
            usleep(1_100_000)  // distinct second-resolution names
            #expect(try coffer(["backup", "create"]).status == 0)
        }
        let legitimate = try archives()
        #expect(legitimate.count == 4)
        // Forged "newer" files: unsigned, a copy signed by nobody, and a conflicted copy.
        try Data("not an archive".utf8).write(to: usb.appendingPathComponent("coffer-20991231-235959-999999.cbak"))
        try FileManager.default.copyItem(
            at: legitimate[0], to: usb.appendingPathComponent("coffer-20991231-235958-999998.cbak"))
        try FileManager.default.copyItem(
            at: legitimate[1], to: usb.appendingPathComponent("coffer-20261122-000000-000002 (conflicted copy).cbak"))

        // And a genuine archive of another vault, with its own valid signature.
        let otherVault = sandbox.directory.path("other.coffer")
        let otherUSB = sandbox.directory.path("other-usb")
        try FileManager.default.createDirectory(at: otherUSB, withIntermediateDirectories: true)
        #expect(try coffer(["demo", "--vault", otherVault.path]).status == 0)
        #expect(try coffer(["backup", "create", "--to", otherUSB.path, "--vault", otherVault.path]).status == 0)
        let foreign = try FileManager.default.contentsOfDirectory(at: otherUSB, includingPropertiesForKeys: nil).first {
            $0.pathExtension == "cbak"
        }!
        try FileManager.default.copyItem(
            at: foreign, to: usb.appendingPathComponent("coffer-20991231-235957-999997.cbak"))
        try FileManager.default.copyItem(
            at: URL(fileURLWithPath: foreign.path + ".minisig"),
            to: usb.appendingPathComponent("coffer-20991231-235957-999997.cbak.minisig"))

        let listed = try coffer(["backup", "list", "--json"])
        let statuses = Dictionary(
            uniqueKeysWithValues: ((try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as! [String: Any])[
                "archives"] as! [[String: Any]])
                .map { (URL(fileURLWithPath: $0["file"] as! String).lastPathComponent, $0["status"] as! String) })
        #expect(statuses["coffer-20991231-235959-999999.cbak"] == "unsigned")
        #expect(statuses["coffer-20991231-235958-999998.cbak"] == "unsigned")
        #expect(
            statuses["coffer-20261122-000000-000002 (conflicted copy).cbak"] == "unsigned",
            "a copy without its signature proves nothing")
        #expect(statuses["coffer-20991231-235957-999997.cbak"] == "foreign")
        #expect(legitimate.allSatisfy { statuses[$0.lastPathComponent] == "signed" })

        let dryRun = try coffer(["backup", "prune", usb.path, "--keep-last", "1", "--dry-run"])
        #expect(dryRun.status == 0)
        #expect(dryRun.stdout.contains("would remove"))
        #expect(try archives().count == 8, "a dry run removes nothing")

        let prune = try coffer(["backup", "prune", usb.path, "--keep-last", "1"])
        #expect(prune.status == 0, "\(prune.stderr)")
        let left = Set(try archives().map(\.lastPathComponent))
        #expect(left.contains(legitimate[3].lastPathComponent), "the newest verified archive is kept")
        #expect(!left.contains(legitimate[0].lastPathComponent) && !left.contains(legitimate[1].lastPathComponent))
        #expect(
            left.contains("coffer-20991231-235959-999999.cbak") && left.contains("coffer-20991231-235958-999998.cbak")
                && left.contains("coffer-20991231-235957-999997.cbak"), "forged and foreign files are never touched")
        #expect(try coffer(["backup", "prune", usb.path]).status == 64, "no rule keeps nothing: refused")
    }

    @Test func overviewAndStatusShowBackupAge() throws {
        _ = try makeVaultAndBackup()
        let overview = try coffer(["overview"])
        #expect(overview.stdout.contains("Last verified backup to \(usb.path): today"))
        let json =
            try JSONSerialization.jsonObject(with: Data(try coffer(["overview", "--json"]).stdout.utf8))
            as! [String: Any]
        #expect((json["backups"] as! [[String: Any]]).first?["days"] as? Int == 0)
    }

    @Test func noPlaintextInTheDestinationFolder() throws {
        _ = try makeVaultAndBackup()
        for file in try FileManager.default.contentsOfDirectory(at: usb, includingPropertiesForKeys: nil) {
            let contents = try Data(contentsOf: file)
            for canary in ["Barclays", "Aviva Workplace Pension", "Mortgage", "229584"] {
                #expect(contents.range(of: Data(canary.utf8)) == nil, "\(canary) in \(file.lastPathComponent)")
                #expect(contents.range(of: canary.data(using: .utf16LittleEndian)!) == nil)
            }
        }
    }
}
