import CofferTestSupport
import Foundation
import Testing

/// The exported journal parses in both ledger and hledger, and their Assets + Liabilities
/// balance equals Coffer's own net worth.
@Suite(.enabled(if: journalToolsInstalled))
struct LedgerExportTests {
    let sandbox = Sandbox()
    let environment = ["COFFER_PASSPHRASE": "demo", "COFFER_TODAY": "2026-11-22"]

    func tool(_ path: String, _ arguments: [String]) throws -> (Int32, String) { try sandbox.tool(path, arguments) }

    /// The last amount a `bal` report prints (its total, or the only account's balance).
    func total(_ report: String) -> String? {
        guard
            let line = report.split(separator: "\n").map({ $0.trimmingCharacters(in: .whitespaces) }).last(where: {
                $0.hasPrefix("GBP")
            })
        else {
            return nil
        }
        return line.split(separator: " ").prefix(2).joined(separator: " ")
    }

    /// A note opening with "(" is not taken for a transaction code by either tool.
    @Test func aNoteInBracketsStaysTheDescription() throws {
        let vault = sandbox.directory.path("brackets.coffer").path
        #expect(try sandbox.run(["demo", "--vault", vault], environment: environment).status == 0)
        #expect(
            try sandbox.run(
                ["spend", "5", "Groceries", "--note", "(REF1) toys", "--vault", vault], environment: environment
            ).status == 0)
        let journal = sandbox.directory.path("brackets.journal")
        #expect(
            try sandbox.run(["export", "ledger", "--out", journal.path, "--vault", vault], environment: environment)
                .status == 0)
        let (status, printed) = try tool("/usr/bin/hledger", ["-f", journal.path, "print", "-O", "csv", "desc:REF1"])
        #expect(status == 0 && printed.contains("\"*\",\"\",\"(REF1) toys"), "no code, the note whole: \(printed)")
        let (_, payees) = try tool(
            "/usr/bin/ledger", ["-f", journal.path, "reg", "@REF1", "--format", "%(code)|%(payee)\n"])
        #expect(payees.hasPrefix("|(REF1) toys"), "\(payees)")
    }

    @Test func balancesMatchCoffersNetWorth() throws {
        let vault = sandbox.directory.path("v.coffer")
        let steps: [[String]] = [
            ["demo"],
            [
                "account", "add", "Old ISA: closed; really", "--category", "Savings", "--value", "1234.56", "--date",
                "2026-07-01",
            ],
            ["account", "close", "Old ISA", "--date", "2026-10-01"],
            ["client", "add", "Acme  Ltd"],
            [
                "invoice", "new", "Acme", "--item", "Design", "2.5", "120", "--tax", "20%", "--date", "2026-11-01",
                "--send",
            ],
            ["invoice", "pay", "1", "--amount", "100"],
            ["invoice", "new", "Acme", "--item", "Logo", "1", "300", "--send"],
            ["invoice", "new", "Acme", "--item", "Draft only", "1", "999"],
            ["invoice", "new", "Acme", "--item", "Cancelled", "1", "50", "--send"],
            ["invoice", "void", "4"], ["update", "Coinbase", "0"],
            [
                "import", "csv",
                URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
                    "../Fixtures/csv/uk-comma-bom-crlf.csv"
                ).path,
                "--into", "transactions", "--date-format", "DD/MM/YYYY",
            ],
        ]
        for step in steps {
            let result = try sandbox.run(step + ["--vault", vault.path], environment: environment)
            #expect(result.status == 0, "\(step): \(result.stderr)")
        }
        let journal = sandbox.directory.path("coffer.journal")
        #expect(
            try sandbox.run(
                ["export", "ledger", "--out", journal.path, "--vault", vault.path], environment: environment
            ).status == 0)
        let overview =
            try JSONSerialization.jsonObject(
                with: Data(
                    try sandbox.run(["overview", "--json", "--vault", vault.path], environment: environment).stdout.utf8
                )) as! [String: Any]
        let netWorth = "GBP \(overview["netWorth"] as! String)"

        let (ledgerStatus, ledgerOutput) = try tool(
            "/usr/bin/ledger", ["-f", journal.path, "bal", "^Assets", "^Liabilities"])
        #expect(ledgerStatus == 0, "\(ledgerOutput)")
        #expect(total(ledgerOutput) == netWorth, "ledger: \(ledgerOutput)")
        let (hledgerStatus, hledgerOutput) = try tool(
            "/usr/bin/hledger", ["-f", journal.path, "bal", "^Assets", "^Liabilities"])
        #expect(hledgerStatus == 0, "\(hledgerOutput)")
        #expect(total(hledgerOutput) == netWorth, "hledger: \(hledgerOutput)")
        // Every account and commodity is declared: both tools' strict modes accept the file.
        let (strictStatus, strictOutput) = try tool("/usr/bin/hledger", ["-f", journal.path, "check", "--strict"])
        #expect(strictStatus == 0, "hledger check --strict: \(strictOutput)")
        let (pedanticStatus, pedanticOutput) = try tool(
            "/usr/bin/ledger", ["-f", journal.path, "--pedantic", "bal", "^Assets", "^Liabilities"])
        #expect(pedanticStatus == 0 && total(pedanticOutput) == netWorth, "ledger --pedantic: \(pedanticOutput)")
        let (_, receivable) = try tool("/usr/bin/ledger", ["-f", journal.path, "bal", "^Assets:Receivable"])
        #expect(total(receivable) == "GBP \(overview["invoicesReceivable"] as! String)")

        // Only the budget flows: imported spending no rule placed sits under Expenses:Uncategorised.
        let flows = sandbox.directory.path("flows.journal")
        #expect(
            try sandbox.run(
                ["export", "ledger", "--only", "transactions", "--out", flows.path, "--vault", vault.path],
                environment: environment
            ).status == 0)
        for path in ["/usr/bin/ledger", "/usr/bin/hledger"] {
            let (checked, checkOutput) =
                path.hasSuffix("hledger")
                ? try tool(path, ["-f", flows.path, "check", "--strict"])
                : try tool(path, ["-f", flows.path, "--pedantic", "bal"])
            #expect(checked == 0, "\(path) strict: \(checkOutput)")
            let (status, output) = try tool(path, ["-f", flows.path, "bal", "^Expenses:Uncategorised"])
            #expect(status == 0 && total(output) == "GBP 1351.64", "\(path): \(output)")
            // Savings earmark money under Assets and take it back out: the budget flows add nothing
            // to net worth.
            let (_, assets) = try tool(path, ["-f", flows.path, "bal", "^Assets", "^Liabilities"])
            #expect(
                assets.split(separator: "\n").last?.trimmingCharacters(in: .whitespaces) == "0",
                "\(path): no net worth in a transactions-only journal: \(assets)")
        }
    }
}
