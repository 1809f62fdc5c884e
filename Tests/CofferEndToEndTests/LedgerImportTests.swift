import CofferTestSupport
import Foundation
import Testing

/// `coffer import ledger`: a journal hledger printed comes into a new vault whose overview and
/// budget match hledger's `bs` and `is`; a journal Coffer cannot take whole changes nothing.
@Suite(.enabled(if: journalToolsInstalled))
struct LedgerImportTests {
    let sandbox = Sandbox()
    let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
        "../Fixtures/ledger/hledger-print.journal"
    ).standardized

    func coffer(_ arguments: [String], vault: URL, today: String = "2026-04-15") throws -> RunResult {
        try sandbox.run(
            arguments + ["--vault", vault.path], environment: ["COFFER_PASSPHRASE": "demo", "COFFER_TODAY": today])
    }

    func newVault() throws -> URL {
        let vault = sandbox.directory.path("v-\(UUID().uuidString).coffer")
        let created = try coffer(["init", "--kdf", "interactive", "--allow-weak-passphrase"], vault: vault)
        #expect(created.status == 0, "\(created.stderr)")
        return vault
    }

    @Test func hledgerPrintImportsWithMatchingReports() throws {
        let vault = try newVault()
        let untouched = try storedRowsDigest(vault)
        let dryRun = try coffer(["import", "ledger", fixture.path, "--dry-run"], vault: vault)
        #expect(
            dryRun.status == 0
                && dryRun.stdout.contains(
                    "Would import 3 accounts with 19 values, 13 transactions, 1 new category and 2 income sources."),
            "\(dryRun.stdout)")
        #expect(try storedRowsDigest(vault) == untouched, "a dry run wrote")
        let imported = try coffer(["import", "ledger", fixture.path, "--json"], vault: vault)
        #expect(imported.status == 0, "\(imported.stderr)")
        let report = try jsonObject(imported.stdout)
        #expect(report["accounts"] as? Int == 3 && report["transactions"] as? Int == 13, "\(report)")

        for month in ["2026-01", "2026-02", "2026-03"] {
            let budget = try jsonObject(try coffer(["budget", "--month", month, "--json"], vault: vault).stdout)
            let income = try sandbox.hledgerReport(fixture, ["is", "-p", month])
            let totals = income.filter { $0.name == "total" }.map(\.amount)
            #expect(totals == [budget["income"] as! String, budget["spent"] as! String], "\(month): \(income)")
            for row in income where row.name.hasPrefix("Expenses:") {
                let name = String(row.name.dropFirst("Expenses:".count))
                let category = (budget["categories"] as! [[String: Any]]).first { $0["name"] as? String == name }
                #expect(category?["total"] as? String == row.amount, "\(month) \(name): \(budget)")
            }
            let overview = try jsonObject(
                try coffer(["overview", "--json"], vault: vault, today: monthEnd(month)).stdout)
            let sheet = try sandbox.hledgerReport(fixture, ["bs", "-e", monthAfter(month)])
            #expect(sheet.last?.name == "Net:" && sheet.last?.amount == overview["netWorth"] as? String, "\(sheet)")
        }
        // New categories go where the defaults would put them, or under Wants.
        let books = try jsonObject(try coffer(["budget", "--month", "2026-02", "--json"], vault: vault).stdout)
        let types = Dictionary(
            uniqueKeysWithValues: (books["categories"] as! [[String: Any]]).map {
                ($0["name"] as! String, $0["type"] as! String)
            })
        #expect(types["Books"] == "wants" && types["Groceries"] == "needs" && types["Dining Out"] == "wants")

        // One change: one undo takes it all back.
        #expect(try coffer(["undo"], vault: vault).status == 0)
        let after = try jsonObject(try coffer(["overview", "--json"], vault: vault).stdout)
        #expect(after["netWorth"] as? String == "0.00", "\(after)")
    }

    @Test(arguments: [
        (
            "2026-01-01 * Opening\n    Assets:Bank    GBP 10.00 = GBP 11.00\n    Equity:Opening\n", "line 2",
            "balance assertion"
        ),
        ("2026-01-01 * Opening\n    Assets:Bank    USD 10.00\n    Equity:Opening\n", "line 2", "USD"),
        (
            "2026-01-01 * Opening\n    Assets:Bank    GBP 10.00\n    Equity:Opening    GBP -9.00\n", "line 1",
            "does not balance"
        ),
        ("include other.journal\n", "line 1", "'include'"),
        ("; a comment\n~ monthly\n    Expenses:Rent    GBP 900\n    Assets:Bank\n", "line 2", "periodic"),
        ("2026-01-01 * Dinner\n    Expenses:Food    GBP 10.00 @ EUR 1.2\n    Assets:Bank\n", "line 2", "prices"),
    ])
    func refusedJournalsChangeNothing(journal: String, line: String, reason: String) throws {
        let vault = try newVault()
        let file = sandbox.directory.path("refused-\(UUID().uuidString).journal")
        try Data(journal.utf8).write(to: file)
        let before = try storedRowsDigest(vault)
        let result = try coffer(["import", "ledger", file.path], vault: vault)
        #expect(result.status == 64, "\(result.stderr)")
        #expect(
            result.stderr.contains("\(line):") && result.stderr.contains(reason)
                && result.stderr.contains("Nothing was imported."), "\(result.stderr)")
        #expect(try storedRowsDigest(vault) == before, "the vault changed")
    }

    @Test func onlyIntoAVaultWithoutData() throws {
        let vault = try newVault()
        #expect(try coffer(["account", "add", "Current", "--category", "Cash"], vault: vault).status == 0)
        let before = try storedRowsDigest(vault)
        let result = try coffer(["import", "ledger", fixture.path], vault: vault)
        #expect(result.status == 64 && result.stderr.contains("already holds data"), "\(result.stderr)")
        #expect(try storedRowsDigest(vault) == before)
        #expect(try coffer(["import", "ledger", "no-such.journal"], vault: vault).status == 66)
    }
}
