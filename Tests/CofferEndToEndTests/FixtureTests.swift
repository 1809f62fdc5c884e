import CofferTestSupport
import FinanceCore
import Foundation
import Testing
import VaultCrypto
import VaultStore

/// Every archive fixture ever committed must keep verifying and restoring to the same overview.
@Suite struct BackupFixtureTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../Fixtures").standardized

    @Test(arguments: ["backup-v1"])
    func fixtureStillVerifiesAndRestores(name: String) throws {
        let sandbox = Sandbox()
        let folder = Self.fixtures.appendingPathComponent(name)
        let archive = try #require(
            try FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)
                .first { $0.pathExtension == "cbak" })
        let environment = ["COFFER_PASSPHRASE": "fixture passphrase v1", "COFFER_TODAY": "2026-11-22"]

        let signature = try sandbox.run([
            "backup", "verify", archive.path, "--pubkey", folder.appendingPathComponent("coffer.pub").path,
        ])
        #expect(signature.status == 0, "\(signature.stderr)")
        let full = try sandbox.run(["backup", "verify", "--full", archive.path], environment: environment)
        #expect(full.status == 0, "\(full.stderr)")

        let restored = sandbox.directory.path("restored.coffer")
        let restore = try sandbox.run(["restore", archive.path, "--to", restored.path], environment: environment)
        #expect(restore.status == 0, "\(restore.stderr)")
        let overview = try sandbox.run(["overview", "--json", "--vault", restored.path], environment: environment)
        let actual = try JSONSerialization.jsonObject(with: Data(overview.stdout.utf8)) as! [String: Any]
        let expected =
            try JSONSerialization.jsonObject(with: Data(contentsOf: folder.appendingPathComponent("overview.json")))
            as! [String: Any]
        // Every value the reference holds must come back; later versions may add keys.
        for (key, value) in expected {
            #expect(
                NSDictionary(dictionary: [key: actual[key] ?? NSNull()]).isEqual(to: [key: value]),
                "\(key): \(overview.stdout)")
        }
        #expect(
            (actual["accounts"] as? [[String: Any]])?.contains {
                $0["name"] as? String == "Fixture Closed ISA" && $0["closed"] as? Bool == true
            } == true)

        // The archive's value updates are payload version 1; the restore migrated them forward.
        let vault = try Vault.open(at: restored, with: .passphrase(try Passphrase("fixture passphrase v1")))
        let updates = vault.records.filter { $0.payload.first == 3 }
        #expect(updates.count == 43)
        #expect(updates.allSatisfy { $0.payload[1] == 2 }, "every update re-encoded at version 2")
        let shown = try sandbox.run(
            ["account", "show", "Fixture Closed", "--json", "--vault", restored.path], environment: environment)
        let history =
            (try JSONSerialization.jsonObject(with: Data(shown.stdout.utf8)) as! [String: Any])["history"]
            as! [[String: Any]]
        #expect(history.count == 1)
        #expect(history[0]["value"] as? String == "512.34")
        #expect(history[0]["date"] as? String == "2026-06-01")
        #expect(history[0]["note"] == nil || history[0]["note"] is NSNull, "v1 updates have no note")
    }

    /// Restores `name` and checks that each committed report comes back: every key the reference
    /// holds, with its value (later versions may add keys).
    func restoredReportsMatch(_ name: String, reports: [String: [String]]) throws -> Vault {
        let sandbox = Sandbox()
        let folder = Self.fixtures.appendingPathComponent(name)
        let archive = try #require(
            try FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)
                .first { $0.pathExtension == "cbak" })
        let environment = ["COFFER_PASSPHRASE": "fixture passphrase v1", "COFFER_TODAY": "2026-11-22"]
        #expect(
            try sandbox.run([
                "backup", "verify", archive.path, "--pubkey", folder.appendingPathComponent("coffer.pub").path,
            ]).status == 0)
        #expect(try sandbox.run(["backup", "verify", "--full", archive.path], environment: environment).status == 0)
        let restored = sandbox.directory.path("restored.coffer")
        let restore = try sandbox.run(["restore", archive.path, "--to", restored.path], environment: environment)
        #expect(restore.status == 0, "\(restore.stderr)")
        for (file, arguments) in reports {
            let output = try sandbox.run(arguments + ["--json", "--vault", restored.path], environment: environment)
            let actual = try JSONSerialization.jsonObject(with: Data(output.stdout.utf8)) as! [String: Any]
            let expected =
                try JSONSerialization.jsonObject(with: Data(contentsOf: folder.appendingPathComponent(file)))
                as! [String: Any]
            for (key, value) in expected {
                #expect(Self.holds(actual[key] ?? NSNull(), value), "\(file) \(key): \(output.stdout)")
            }
        }
        return try Vault.open(at: restored, with: .passphrase(try Passphrase("fixture passphrase v1")))
    }

    /// Whether `actual` holds everything `expected` does: equal values, where objects (at any
    /// depth, inside arrays too) may carry keys added since the reference was written.
    static func holds(_ actual: Any, _ expected: Any) -> Bool {
        if let expected = expected as? [String: Any] {
            guard let actual = actual as? [String: Any] else { return false }
            return expected.allSatisfy { key, value in holds(actual[key] ?? NSNull(), value) }
        }
        if let expected = expected as? [Any] {
            guard let actual = actual as? [Any], actual.count == expected.count else { return false }
            return zip(actual, expected).allSatisfy { holds($0, $1) }
        }
        switch (actual, expected) {
        case let (actual as String, expected as String): return actual == expected
        case let (actual as NSNumber, expected as NSNumber): return actual.isEqual(to: expected)
        case (is NSNull, is NSNull): return true
        default: return false
        }
    }

    /// Format 2: records in columns after the id table, a change log naming a deleted record.
    @Test func formatTwoFixtureStillRestores() throws {
        let vault = try restoredReportsMatch(
            "backup-v2",
            reports: [
                "overview.json": ["overview"], "budget.json": ["budget"], "invoices.json": ["invoices"],
            ])
        #expect(vault.records.filter { $0.payload.first == 10 }.count == 11)
        #expect(vault.records.filter { $0.payload.first == 5 }.count == 10, "the change log came back")
    }

    /// Format 3 (the id table coded as differences, sequence numbers and times in `n` and `d`
    /// columns) and format 4 (the id table coded in columns): every record's id an ordered one.
    @Test(arguments: ["backup-v3", "backup-v4"])
    func orderedIDFixturesStillRestore(folder: String) throws {
        let vault = try restoredReportsMatch(
            folder,
            reports: [
                "overview.json": ["overview"], "budget.json": ["budget"], "invoices.json": ["invoices"],
            ])
        #expect(vault.records.filter { $0.payload.first == 10 }.count == 11)
        #expect(vault.records.filter { $0.payload.first == 5 }.count == 10, "the change log came back")
        #expect(vault.records.allSatisfy { $0.id.bytes[6] >> 4 == 8 }, "ordered ids, version 8")
    }

    @Test func budgetFixtureWithVersionOneTransactionsStillRestores() throws {
        let vault = try restoredReportsMatch(
            "backup-v1-budget",
            reports: [
                "overview.json": ["overview"], "budget.json": ["budget"],
                "invoices.json": ["invoices"],
            ])
        let transactions = vault.records.filter { $0.payload.first == 10 }
        #expect(transactions.count == 10)
        #expect(
            transactions.allSatisfy { $0.payload[1] == 3 }, "every transaction re-encoded at the current version, 3")
    }
}
