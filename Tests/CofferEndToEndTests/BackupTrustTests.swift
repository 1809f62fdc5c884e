import CofferTestSupport
import Foundation
import Testing
import VaultBackup
import VaultCrypto
import VaultStore

/// Archives across key generations, copies and forks, attacked through the real binary:
/// a swapped `.pub` (F13), a sync tool's copies filling keep slots (F6), two copies of a vault
/// or a rolled-back one reusing sequence numbers (F14), an older archive silently replacing a
/// newer vault (F20), and a planted huge file (F12).
@Suite struct BackupTrustTests {
    let sandbox = Sandbox()
    static let passphrase = "plum quarry velvet orbit"
    var environment: [String: String] { ["COFFER_PASSPHRASE": Self.passphrase, "COFFER_TODAY": "2026-11-22"] }
    var folder: URL { sandbox.directory.path("usb") }

    @discardableResult
    func coffer(_ arguments: [String], _ extra: [String: String] = [:], without: [String] = []) throws -> RunResult {
        var environment = environment.merging(extra) { $1 }
        for name in without { environment.removeValue(forKey: name) }
        return try sandbox.run(arguments, environment: environment)
    }

    func makeVault(_ path: String? = nil) throws {
        let vault = path.map { ["--vault", $0] } ?? []
        #expect(try coffer(["init", "--kdf", "interactive"] + vault).status == 0)
        #expect(try coffer(["account", "add", "Cash", "--category", "Cash", "--value", "100"] + vault).status == 0)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    @discardableResult
    func backup(_ extra: [String] = [], expect status: Int32 = 0) throws -> RunResult {
        let result = try coffer(["backup", "create", "--to", folder.path] + extra)
        #expect(result.status == status, "\(result.stdout)\(result.stderr)")
        return result
    }

    func archives() throws -> [URL] {
        try FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "cbak" }.sorted { $0.lastPathComponent < $1.lastPathComponent }
    }

    func listed(_ extra: [String] = [], without: [String] = []) throws -> [String: [String: Any]] {
        let result = try coffer(["backup", "list", folder.path, "--json"] + extra, without: without)
        #expect(result.status == 0, "\(result.stderr)")
        let rows =
            (try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])?["archives"]
            as? [[String: Any]] ?? []
        return Dictionary(
            uniqueKeysWithValues: rows.map { (URL(fileURLWithPath: $0["file"] as! String).lastPathComponent, $0) })
    }

    func copy(_ archive: URL, as name: String, withSignature: Bool = true) throws {
        try FileManager.default.copyItem(at: archive, to: folder.appendingPathComponent(name))
        if withSignature {
            try FileManager.default.copyItem(
                atPath: archive.path + ".minisig", toPath: folder.appendingPathComponent(name).path + ".minisig")
        }
    }

    /// After a rekey, older archives are this vault's, signed by a superseded generation: listed,
    /// verified and pruned as such, and every generation's key is exported for stock minisign.
    @Test func everyKeyGenerationIsRecognised() throws {
        try makeVault()
        try backup()
        try backup()
        #expect(try coffer(["rekey"]).status == 0)
        try backup()
        let names = try archives().map(\.lastPathComponent)
        #expect(names.count == 3)
        let rows = try listed()
        #expect(names.map { rows[$0]?["status"] as? String } == ["signed", "signed", "signed"])
        #expect(names.map { rows[$0]?["keyGeneration"] as? Int } == [1, 1, 2])
        #expect(names.map { rows[$0]?["superseded"] as? Bool } == [true, true, false])
        let human = try coffer(["backup", "list", folder.path])
        #expect(
            human.stdout.contains("✓ signed (key 1 of 2, superseded)")
                && human.stdout.contains("✓ signed (key 2 of 2)"), "\(human.stdout)")

        // Without any passphrase or session: the key history in the vault's header.
        let verified = try coffer(["backup", "verify", try archives()[0].path], without: ["COFFER_PASSPHRASE"])
        #expect(verified.status == 0, "\(verified.stderr)")
        #expect(verified.stdout.contains("key 1 of 2, superseded"), "\(verified.stdout)")
        #expect(try coffer(["backup", "verify", try archives()[0].path, "--full"]).status == 0)

        // The folder holds both keys; pubkey --all writes them for minisign.
        let keys = sandbox.directory.path("keys")
        try FileManager.default.createDirectory(at: keys, withIntermediateDirectories: true)
        #expect(try coffer(["backup", "pubkey", "--all", "--out", keys.path]).status == 0)
        let keyFiles = try FileManager.default.contentsOfDirectory(atPath: keys.path).sorted()
        #expect(
            keyFiles.count == 2 && keyFiles[0].hasSuffix("-key-1.pub") && keyFiles[1].hasSuffix("-key-2.pub"),
            "\(keyFiles)")
        #expect(
            Set(try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".pub") })
                == Set(keyFiles))
        let printed = try coffer(["backup", "pubkey", "--all"])
        #expect(printed.stdout.components(separatedBy: "untrusted comment:").count == 3)
        if FileManager.default.isExecutableFile(atPath: "/usr/bin/minisign") {
            func minisign(_ archive: URL, _ key: String) throws -> Int32 {
                try sandbox.runTool(
                    "/usr/bin/minisign", ["-Vqm", archive.path, "-p", keys.appendingPathComponent(key).path])
            }
            #expect(try minisign(try archives()[0], keyFiles[0]) == 0)
            #expect(try minisign(try archives()[0], keyFiles[1]) != 0)
            #expect(try minisign(try archives()[2], keyFiles[1]) == 0)
        }

        // A file of several keys given with --pubkey is trusted as given.
        let allKeys = sandbox.directory.path("all.pub")
        try printed.stdout.write(to: allKeys, atomically: true, encoding: .utf8)
        let explicit = try listed(["--pubkey", allKeys.path], without: ["COFFER_PASSPHRASE"])
        #expect(names.allSatisfy { explicit[$0]?["status"] as? String == "signed" })

        // Superseded archives are pruned by the same rules.
        #expect(try coffer(["backup", "prune", folder.path, "--keep-last", "1"]).status == 0)
        #expect(try archives().map(\.lastPathComponent) == [names[2]])
    }

    /// Whoever kept a signing key from before a rekey (a stolen session, an old passphrase with an
    /// old archive) cannot pass off new archives: one dated after the rekey is refused, and a
    /// backdated one neither numbers the next archive, nor forces a rollback refusal, nor is
    /// listed as anything but superseded.
    @Test func anOldKeyCannotSteerTheVaultAfterARekey() throws {
        try makeVault()
        try backup()
        let before = try Vault.open(at: sandbox.vault, with: .passphrase(try Passphrase(Self.passphrase)))
        let stolen = before.backupKeys, device = before.deviceID
        #expect(try coffer(["rekey"]).status == 0)
        try backup()
        let forgedLater = try Archive.write(
            CollectedRecords([]), netWorth: "GBP 0.00", appVersion: "attacker", commitCounter: 1, device: device,
            keys: stolen, sequence: 50, created: Date().addingTimeInterval(3600), to: folder
        ).url
        let backdated = try Archive.write(
            CollectedRecords([]), netWorth: "GBP 0.00", appVersion: "attacker", commitCounter: 999_999, device: device,
            keys: stolen, sequence: 1000, created: Date().addingTimeInterval(-3600), to: folder
        ).url
        let refused = try coffer(["backup", "verify", forgedLater.path])
        #expect(
            refused.status == 65 && refused.stderr.contains("after that key was superseded"),
            "\(refused.stdout)\(refused.stderr)")
        // Restore checks it against the vault's history before any key derivation.
        let restored = try coffer(["restore", forgedLater.path, "--to", sandbox.directory.path("forged.coffer").path])
        #expect(
            restored.status == 65 && restored.stderr.contains("after that key was superseded"), "\(restored.stderr)")
        // Before: with a wrong passphrase the answer is still "superseded" (65), not "wrong passphrase"
        // (77), so no key was derived; the signature file alone decided.
        let unkeyed = try coffer(
            ["restore", forgedLater.path, "--to", sandbox.directory.path("forged.coffer").path],
            ["COFFER_PASSPHRASE": "not the passphrase at all"])
        #expect(unkeyed.status == 65 && unkeyed.stderr.contains("after that key was superseded"), "\(unkeyed.stderr)")
        let rows = try listed()
        #expect(rows[forgedLater.lastPathComponent]?["status"] as? String == "foreign")
        #expect(rows[backdated.lastPathComponent]?["superseded"] as? Bool == true)

        let next = try backup()
        #expect(!next.stderr.contains("rolled back"), "a superseded key's archive forced a refusal")
        let names = try archives().map(\.lastPathComponent)
        #expect(names.contains { $0.hasSuffix("-000003.cbak") }, "numbering followed the forged #1000: \(names)")

        // Prune never counts or removes it: the vault never issued #1000.
        let prune = try coffer(["backup", "prune", folder.path, "--keep-last", "1"])
        #expect(prune.status == 0 && prune.stdout.contains("never issued"), "\(prune.stdout)")
        #expect(FileManager.default.fileExists(atPath: backdated.path))
        #expect(try archives().map(\.lastPathComponent).contains { $0.hasSuffix("-000003.cbak") })
    }

    /// A huge signed sequence number is refused, never overflowed into a crash.
    @Test func anAbsurdSequenceNumberIsRefused() throws {
        try makeVault()
        try backup()
        let vault = try Vault.open(at: sandbox.vault, with: .passphrase(try Passphrase(Self.passphrase)))
        let absurd = try Archive.write(
            CollectedRecords([]), netWorth: "GBP 0.00", appVersion: "test", commitCounter: vault.commitCounter,
            device: vault.deviceID, keys: vault.backupKeys, sequence: .max, created: Date(), to: folder
        ).url
        #expect(try coffer(["backup", "verify", absurd.path]).status == 65)
        // The largest number accepted, signed with the current key (a stolen session could):
        // ignored for numbering, so the vault's numbers are never used up.
        let nearLimit = try Archive.write(
            CollectedRecords([]), netWorth: "GBP 0.00", appVersion: "test", commitCounter: vault.commitCounter,
            device: vault.deviceID, keys: vault.backupKeys, sequence: Archive.maximumSequence, created: Date(),
            to: folder
        ).url
        #expect(try coffer(["backup", "verify", nearLimit.path]).status == 0)
        for expected in ["-000002.cbak", "-000003.cbak"] {
            let next = try backup()
            #expect(next.stderr.contains("ignored for numbering"), "\(next.stderr)")
            let names = try archives().map(\.lastPathComponent)
            #expect(names.contains { $0.hasSuffix(expected) }, "\(names)")
        }
    }

    /// F13: a `.pub` swapped for an attacker's key never makes the attacker's archive "signed"
    /// nor the genuine one "foreign", with or without the passphrase; the swap is reported.
    @Test func aSwappedPublicKeyIsReportedAndNeverTrusted() throws {
        try makeVault()
        try backup()
        let genuine = try archives()[0]
        let attacker = sandbox.directory.path("attacker.coffer"),
            attackerFolder = sandbox.directory.path("attacker-usb")
        try FileManager.default.createDirectory(at: attackerFolder, withIntermediateDirectories: true)
        #expect(try coffer(["init", "--kdf", "interactive", "--vault", attacker.path]).status == 0)
        #expect(try coffer(["backup", "create", "--vault", attacker.path, "--to", attackerFolder.path]).status == 0)
        let planted = try FileManager.default.contentsOfDirectory(atPath: attackerFolder.path).first {
            $0.hasSuffix(".cbak")
        }!
        try copy(attackerFolder.appendingPathComponent(planted), as: "coffer-20991231-235959-000099.cbak")
        try FileManager.default.removeItem(atPath: sandbox.vault.path + ".pub")
        try FileManager.default.copyItem(atPath: attacker.path + ".pub", toPath: sandbox.vault.path + ".pub")

        for without in [["COFFER_PASSPHRASE"], []] {
            let verify = try coffer(
                ["backup", "verify", folder.appendingPathComponent("coffer-20991231-235959-000099.cbak").path],
                without: without)
            #expect(verify.status == 65, "the attacker's archive verified: \(verify.stdout)")
            #expect(verify.stderr.contains("is not this vault's current key"), "\(verify.stderr)")
            #expect(try coffer(["backup", "verify", genuine.path], without: without).status == 0)
            let rows = try listed(without: without)
            #expect(rows[genuine.lastPathComponent]?["status"] as? String == "signed")
            #expect(rows["coffer-20991231-235959-000099.cbak"]?["status"] as? String == "foreign")
        }
        // Prune never counts or removes the planted archive.
        #expect(try coffer(["backup", "prune", folder.path, "--keep-last", "1"]).status == 0)
        #expect(try archives().count == 2)
    }

    /// F6: copies a sync tool makes (and an old archive renamed to look newest) are the same
    /// signed archive: listed as copies, never given a keep slot, never touched by prune.
    @Test func copiesNeverTakeAKeepSlot() throws {
        try makeVault()
        for _ in 0..<4 { try backup() }
        let genuine = try archives()
        try copy(genuine[3], as: genuine[3].deletingPathExtension().lastPathComponent + " (1).cbak")
        try copy(
            genuine[3],
            as: genuine[3].deletingPathExtension().lastPathComponent + ".sync-conflict-20261122-101010-ABCDEFG.cbak")
        try copy(genuine[0], as: "coffer-20991231-235959-latest.cbak")
        let rows = try listed()
        #expect(genuine.allSatisfy { rows[$0.lastPathComponent]?["status"] as? String == "signed" })
        let copies = rows.filter { $0.value["status"] as? String == "copy" }
        #expect(copies.count == 3, "\(rows)")
        #expect(copies["coffer-20991231-235959-latest.cbak"]?["copyOf"] as? String == genuine[0].path)

        let prune = try coffer(["backup", "prune", folder.path, "--keep-last", "3"])
        #expect(prune.status == 0, "\(prune.stderr)")
        let left = Set(try archives().map(\.lastPathComponent))
        #expect(
            left.isSuperset(of: genuine[1...].map(\.lastPathComponent)),
            "three distinct archives are kept: \(prune.stdout)")
        #expect(!left.contains(genuine[0].lastPathComponent))
        #expect(left.count == 6, "copies are never touched")
    }

    /// F14: a second copy of the vault backing up to the same folder continues the numbering
    /// and is named; a vault file rolled back behind an archive it made is refused by name.
    @Test func forksAndRollbacksAreNamedNotOverwritten() throws {
        try makeVault()
        try backup()
        let second = sandbox.directory.path("laptop.coffer")
        #expect(try coffer(["restore", try archives()[0].path, "--to", second.path]).status == 0)
        #expect(try coffer(["update", "cash", "200"]).status == 0)
        try backup()
        let fork = try backup(["--vault", second.path])
        #expect(fork.stderr.contains("another copy of this vault"), "\(fork.stderr)")
        let sequences = try listed().values.compactMap { $0["sequence"] as? Int }.sorted()
        #expect(sequences == [1, 2, 3], "no number is used twice")

        // Roll the vault file back on a machine that has no high-water mark for it.
        let older = sandbox.directory.path("older.coffer")
        try FileManager.default.copyItem(at: sandbox.vault, to: older)
        #expect(try coffer(["update", "cash", "300"]).status == 0)
        try backup()
        let newest = try archives().last!
        try FileManager.default.removeItem(at: sandbox.vault)
        try FileManager.default.copyItem(at: older, to: sandbox.vault)
        let fresh = ["XDG_STATE_HOME": sandbox.directory.path("other-machine-state").path]
        let before = try archives()
        let refused = try coffer(["backup", "create", "--to", folder.path], fresh)
        #expect(refused.status == 65)
        #expect(refused.stderr.contains(newest.path) && refused.stderr.contains("rolled back"), "\(refused.stderr)")
        #expect(try archives() == before, "nothing was written")
        #expect(try coffer(["backup", "create", "--to", folder.path, "--accept-rollback"], fresh).status == 0)
        #expect(try archives().last!.lastPathComponent.hasSuffix("-000005.cbak"))
    }

    /// A vault restored from an archive made before a rekey learns the later generations from
    /// the later archives' certified key histories, and numbers after them.
    @Test func aVaultRestoredFromAnOlderGenerationNumbersAfterEveryArchive() throws {
        try makeVault()
        try backup()
        #expect(try coffer(["rekey"]).status == 0)
        try backup()
        let restored = sandbox.directory.path("restored.coffer")
        #expect(try coffer(["restore", try archives()[0].path, "--to", restored.path]).status == 0)
        try backup(["--vault", restored.path])
        let rows = try listed(["--vault", restored.path])
        let byName = try archives().map { rows[$0.lastPathComponent] }
        #expect(byName.map { $0?["sequence"] as? Int } == [1, 2, 3])
        #expect(byName.map { $0?["status"] as? String } == ["signed", "signed", "signed"])
        #expect(byName.map { $0?["keyGeneration"] as? Int } == [1, 2, 1])
    }

    /// F20: replacing a vault with an archive older than it needs --yes without a terminal.
    @Test func anOlderArchiveReplacesAVaultOnlyWhenConfirmed() throws {
        try makeVault()
        try backup()
        #expect(try coffer(["update", "cash", "250"]).status == 0)
        let before = try coffer(["account", "list"]).stdout
        let archive = try archives()[0].path
        let refused = try coffer(["restore", archive, "--to", sandbox.vault.path, "--replace"])
        #expect(refused.status == 64)
        #expect(refused.stderr.contains("older archive") && refused.stderr.contains("--yes"), "\(refused.stderr)")
        #expect(try coffer(["account", "list"]).stdout == before)
        #expect(try coffer(["restore", archive, "--to", sandbox.vault.path, "--replace", "--yes"]).status == 0)
        #expect(try coffer(["account", "list"]).stdout != before)
    }

    /// F12: a planted 3 GB file beside a genuine signature is judged by its structure in a few
    /// small reads: listing the folder stays small in memory.
    @Test func aPlantedHugeFileIsNeverReadWhole() throws {
        try makeVault()
        try backup()
        let huge = folder.appendingPathComponent("coffer-20991231-235959-000009.cbak")
        FileManager.default.createFile(atPath: huge.path, contents: nil)
        let handle = try FileHandle(forWritingTo: huge)
        try handle.truncate(atOffset: 3 << 30)
        try handle.close()
        try FileManager.default.copyItem(atPath: try archives()[0].path + ".minisig", toPath: huge.path + ".minisig")
        defer { try? FileManager.default.removeItem(at: huge) }
        let report = sandbox.directory.path("rss")
        let child = try sandbox.start(
            ["backup", "list", folder.path, "--json"], environment: environment, peakMemoryReport: report)
        let result = try child.result()
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("\"damaged\""))
        let peak =
            Int(try String(contentsOf: report, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines))
            ?? Int.max
        #expect(peak < 512 << 20, "listing peaked at \(peak >> 20) MiB")
    }
}
