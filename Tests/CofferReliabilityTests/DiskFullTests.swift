import CofferTestSupport
import Foundation
import Testing
import VaultStore

/// Writes and backups that run out of room (a file-size limit, `ulimit -f`, makes every write
/// past it fail the way a full disk does): a clear message, exit 1, and the vault and earlier
/// archives exactly as they were.
@Suite struct DiskFullTests {
    let sandbox = Sandbox()
    var environment: [String: String] { ["COFFER_PASSPHRASE": "demo", "COFFER_TODAY": "2026-11-22"] }

    func makeDemoVault() throws {
        let result = try sandbox.run(["demo", "--vault", sandbox.vault.path], environment: environment)
        #expect(result.status == 0, "\(result.stderr)")
    }

    func listing(_ directory: URL) throws -> [String: Data] {
        var files: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path) {
            files[name] = try Data(contentsOf: directory.appendingPathComponent(name))
        }
        return files
    }

    /// Exit 1 for the vault's own writes; 74 (I/O error) for a backup's, whose output failed.
    func expectCleanFailure(_ result: RunResult, _ what: String, status: Int32 = 1) {
        #expect(result.status == status, "\(what): \(result.stderr)")
        #expect(result.stderr.hasPrefix("error: "), "\(what): \(result.stderr)")
        let said = result.stdout + result.stderr
        #expect(
            said.contains("disk is full") || said.contains("Writing to the disk failed")
                || said.contains("over a file-size limit"),
            "\(what) must say the disk is full (or the file-size limit, which is how these tests fill it): \(said)")
        #expect(
            !result.stderr.contains("Fatal error") && !result.stderr.contains("Stack dump"),
            "\(what) must not crash: \(result.stderr)")
    }

    /// A statement of `lines` transactions.
    func statement(lines: Int) throws -> URL {
        let statement = sandbox.directory.path("big.csv")
        let rows = (0..<lines).map {
            "2026-10-\(String(format: "%02d", $0 % 28 + 1)),-\($0 % 90 + 1).50,A long description for shop number \($0)"
        }
        try (["Date,Amount,Description"] + rows).joined(separator: "\n").write(
            to: statement, atomically: true, encoding: .utf8)
        return statement
    }

    @Test func aWriteThatRunsOutOfRoomChangesNothing() throws {
        try makeDemoVault()
        let statement = try statement(lines: 4000)
        let before = try storedRowsDigest(sandbox.vault)
        let vaultSize = try FileManager.default.attributesOfItem(atPath: sandbox.vault.path)[.size] as! Int
        // Room for the vault as it is, not for what the import adds to it (or to its WAL).
        let limit = (vaultSize / 512 + 64) * 512
        for arguments in [
            ["import", "csv", statement.path, "--into", "transactions", "--account", "Bank"],
            ["update", "Home", "400000"],
        ] {
            let result = try sandbox.run(
                arguments, environment: environment, fileSizeLimit: arguments[0] == "update" ? 512 : limit)
            expectCleanFailure(result, arguments[0])
            #expect(
                try storedRowsDigest(sandbox.vault) == before, "\(arguments[0]) must leave the vault exactly as it was")
        }
        let verify = try sandbox.run(["verify"], environment: environment)
        #expect(verify.status == 0, "\(verify.stderr)")
        // With room again, the same import works.
        #expect(
            try sandbox.run(
                ["import", "csv", statement.path, "--into", "transactions", "--account", "Bank"],
                environment: environment
            ).status == 0)
    }

    @Test func aBackupThatRunsOutOfRoomLeavesEarlierArchivesAndTheVault() throws {
        try makeDemoVault()
        // Enough records that the archive, not the vault's small bookkeeping write, meets the limit.
        #expect(
            try sandbox.run(
                ["import", "csv", statement(lines: 20_000).path, "--into", "transactions", "--account", "Bank"],
                environment: environment
            ).status == 0)
        let usb = sandbox.directory.path("usb")
        try FileManager.default.createDirectory(at: usb, withIntermediateDirectories: true)
        #expect(try sandbox.run(["backup", "create", "--to", usb.path], environment: environment).status == 0)
        let earlier = try listing(usb)
        let archiveSize = earlier.first { $0.key.hasSuffix(".cbak") }!.value.count
        let vaultBefore = try storedRowsDigest(sandbox.vault)
        // Less room than one archive needs.
        let result = try sandbox.run(
            ["backup", "create", "--to", usb.path], environment: environment,
            fileSizeLimit: (archiveSize / 2 / 512) * 512)
        expectCleanFailure(result, "backup create", status: 74)
        #expect(
            result.stdout.contains("FAILED  \(usb.path)"), "the failure must name the destination: \(result.stdout)")
        #expect(try listing(usb) == earlier, "earlier archives unchanged and nothing half-written left behind")
        #expect(try storedRowsDigest(sandbox.vault) == vaultBefore)
        for name in earlier.keys where name.hasSuffix(".cbak") {
            let verify = try sandbox.run(
                ["backup", "verify", usb.appendingPathComponent(name).path, "--full"], environment: environment)
            #expect(verify.status == 0, "\(verify.stderr)")
        }
    }

    /// An export that cannot be made where asked exits 73 (cannot create output); one that runs
    /// out of room while writing exits 74 (I/O error). Neither leaves a file behind.
    @Test func anExportThatCannotBeWrittenSaysWhichWay() throws {
        try makeDemoVault()
        let missing = sandbox.directory.path("not-mounted/export.json")
        let cannot = try sandbox.run(["export", "json", "--out", missing.path], environment: environment)
        #expect(cannot.status == 73, "\(cannot.stderr)")
        #expect(cannot.stderr.hasPrefix("error: Cannot write"))
        #expect(!FileManager.default.fileExists(atPath: missing.deletingLastPathComponent().path))
        // /dev/full: every write fails with "no space left on device".
        guard FileManager.default.fileExists(atPath: "/dev/full") else { return }
        let result = try sandbox.run(["export", "json", "--out", "/dev/full"], environment: environment)
        expectCleanFailure(result, "export json", status: 74)
    }

    /// Standard output on a full disk (`> /dev/full`): every command says so and exits 74 — an
    /// export or a page written as bytes, and the text every command prints — never crashing,
    /// never exiting 0 as if its output had been read, and never touching the vault.
    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/dev/full")))
    func standardOutputOnAFullDiskIsAnError() throws {
        try makeDemoVault()
        #expect(
            try sandbox.run(
                ["import", "rules", "add", "bank", "TESCO", "--category", "Groceries"], environment: environment
            )
            .status == 0)
        let before = try storedRowsDigest(sandbox.vault)
        for arguments in [
            ["export", "json"], ["export", "csv"], ["export", "json", "--out", "-"], ["report", "html", "--out", "-"],
            ["import", "rules", "export", "bank"], ["overview"], ["account", "list", "--json"], ["--help"],
        ] {
            let result = try sandbox.run(arguments, environment: environment, redirected: [1: "/dev/full"])
            expectCleanFailure(result, arguments.joined(separator: " "), status: 74)
            #expect(
                result.stderr.hasPrefix("error: Cannot write to standard output: the disk is full."),
                "\(arguments): \(result.stderr)")
        }
        #expect(try storedRowsDigest(sandbox.vault) == before, "the vault is untouched")
        // Stderr on a full disk has nowhere to report to: the exit status still tells, no crash.
        for (arguments, status) in [(["spnd", "4", "Groceries"], Int32(64)), (["overview"], 0)] {
            let result = try sandbox.run(arguments, environment: environment, redirected: [2: "/dev/full"])
            #expect(result.status == status, "\(arguments) with stderr on /dev/full")
        }
    }
}
