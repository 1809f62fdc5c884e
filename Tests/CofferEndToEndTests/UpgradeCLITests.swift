import CofferTestSupport
import Foundation
import Testing
import VaultStore

/// A vault made by the previous Coffer (format 2, one sealed row per record: the committed
/// fixture, a `coffer demo` vault) is read as it is, and rewritten in format 3 by `coffer upgrade`
/// or by its first write, with nothing lost and the copy kept aside removed once it verifies.
@Suite struct UpgradeCLITests {
    static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../Fixtures/vault-format2/demo.coffer").standardized
    let environment = ["COFFER_PASSPHRASE": "demo", "COFFER_TODAY": "2026-11-24"]

    func sandboxWithFixture() throws -> Sandbox {
        // A copy, made writable: the committed file stays as it is.
        let sandbox = Sandbox()
        try FileManager.default.createDirectory(
            at: sandbox.vault.deletingLastPathComponent(), withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: Self.fixture, to: sandbox.vault)
        return sandbox
    }

    func leftovers(_ sandbox: Sandbox) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: sandbox.vault.deletingLastPathComponent().path)
            .filter { $0.contains("format2") }
    }

    @Test func upgradeRewritesTheVaultAndKeepsEveryRecord() throws {
        let sandbox = try sandboxWithFixture()
        let status = try sandbox.run(["status", "--json"])
        let before = try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as! [String: Any]
        #expect(before["formatVersion"] as? Int == 2)
        #expect(before["records"] as? Int == 87, "a format 2 file shows its rows")
        let overview = try sandbox.run(["overview", "--json"], environment: environment)
        #expect(overview.status == 0, "\(overview.stderr)")
        let exported = try sandbox.run(["export", "json", "--out", "-"], environment: environment)
        #expect(
            try storedRowsDigest(sandbox.vault, legacyTables: true)
                == storedRowsDigest(Self.fixture, legacyTables: true),
            "reading a format 2 vault writes nothing")

        let upgrade = try sandbox.run(["upgrade", "--json"], environment: environment)
        #expect(upgrade.status == 0, "\(upgrade.stderr)")
        let report = try JSONSerialization.jsonObject(with: Data(upgrade.stdout.utf8)) as! [String: Any]
        #expect(report["upgraded"] as? Bool == true)
        #expect(report["from"] as? Int == 2 && report["to"] as? Int == 3)
        #expect(report["records"] as? Int == 87)
        #expect((report["pages"] as? Int ?? 0) >= 1)
        #expect(try leftovers(sandbox).isEmpty, "the copy kept aside goes once the upgrade verifies")

        let after =
            try JSONSerialization.jsonObject(with: Data(try sandbox.run(["status", "--json"]).stdout.utf8))
            as! [String: Any]
        #expect(after["formatVersion"] as? Int == 3)
        #expect(after["records"] is NSNull, "a format 3 file does not show its records")
        #expect(try sandbox.run(["verify"], environment: environment).stdout.contains("87 records verified"))
        #expect(try sandbox.run(["overview", "--json"], environment: environment).stdout == overview.stdout)
        #expect(try sandbox.run(["export", "json", "--out", "-"], environment: environment).stdout == exported.stdout)

        let again = try sandbox.run(["upgrade"], environment: environment)
        #expect(again.status == 0)
        #expect(again.stdout.contains("already in format 3"))
    }

    /// The format 2 file put back after the upgrade is an older copy: refused, naming both formats.
    @Test func theFormatTwoFilePutBackAfterTheUpgradeIsRefused() throws {
        let sandbox = try sandboxWithFixture()
        #expect(try sandbox.run(["upgrade"], environment: environment).status == 0)
        for suffix in ["", "-wal", "-shm"] {
            try? FileManager.default.removeItem(atPath: sandbox.vault.path + suffix)
        }
        try FileManager.default.copyItem(at: Self.fixture, to: sandbox.vault)
        let refused = try sandbox.run(["overview"], environment: environment)
        #expect(refused.status == 65)
        #expect(
            refused.stderr.contains("it is format 2, key generation 1, but format 3, key generation 1 was seen"),
            "\(refused.stderr)")
    }

    @Test func theFirstWriteUpgradesAndASessionCannot() throws {
        let sandbox = try sandboxWithFixture()
        let spend = try sandbox.run(["spend", "3.20", "dining", "--note", "flat white"], environment: environment)
        #expect(spend.status == 0, "\(spend.stderr)")
        let status =
            try JSONSerialization.jsonObject(with: Data(try sandbox.run(["status", "--json"]).stdout.utf8))
            as! [String: Any]
        #expect(status["formatVersion"] as? Int == 3)
        let listed = try sandbox.run(["transaction", "list", "--text", "flat white"], environment: environment)
        #expect(listed.stdout.contains("3.20"), "\(listed.stdout)")
        // 87, the spending and its change-log entry, and the summary the first write makes.
        #expect(try sandbox.run(["verify"], environment: environment).stdout.contains("90 records verified"))
        #expect(try leftovers(sandbox).isEmpty)

        // Unlocking is the passphrase's moment: it upgrades, so the session's writes go to format 3.
        let second = try sandboxWithFixture()
        let unlock = try second.run(["unlock"], environment: environment)
        #expect(unlock.status == 0, "\(unlock.stderr)")
        let unlocked =
            try JSONSerialization.jsonObject(with: Data(try second.run(["status", "--json"]).stdout.utf8))
            as! [String: Any]
        #expect(unlocked["formatVersion"] as? Int == 3)
    }

    @Test func anOldCoffersReaderIsToldTheVaultIsNewer() throws {
        let sandbox = try sandboxWithFixture()
        #expect(try sandbox.run(["upgrade"], environment: environment).status == 0)
        // What the previous Coffer checks first: a migration it does not know means "newer".
        let migrations = try withRawDatabase(sandbox.vault) {
            try String.fetchAll($0, sql: "SELECT identifier FROM grdb_migrations ORDER BY identifier")
        }
        #expect(migrations == ["v1", "v2-pages"])
    }
}
