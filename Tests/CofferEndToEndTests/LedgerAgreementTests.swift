import CofferTestSupport
import Foundation
import Testing

/// The exported journal agrees with Coffer month by month: `hledger is` with `coffer budget`,
/// `hledger bs` with `coffer overview`, and where a figure differs the journal's header says
/// by how much.
@Suite(.enabled(if: journalToolsInstalled))
struct LedgerAgreementTests {
    let sandbox = Sandbox()

    func coffer(_ arguments: [String], vault: URL, today: String = "2026-11-22") throws -> RunResult {
        let result = try sandbox.run(
            arguments + ["--vault", vault.path], environment: ["COFFER_PASSPHRASE": "demo", "COFFER_TODAY": today])
        #expect(result.status == 0, "\(arguments): \(result.stderr)")
        return result
    }

    @Test func hledgerReportsAgreeWithOverviewAndBudgetEveryMonth() throws {
        let vault = sandbox.directory.path("v.coffer")
        for step: [String] in [
            ["init", "--kdf", "interactive", "--allow-weak-passphrase"],
            ["account", "add", "Current", "--category", "Cash", "--value", "1000", "--date", "2026-08-01"],
            [
                "account", "add", "Visa", "--category", "Credit cards", "--liability", "--value", "200", "--date",
                "2026-08-01",
            ],
            ["account", "add", "Holiday", "--category", "Savings", "--value", "400", "--date", "2026-08-02"],
            // Names the journal would make alike: a client's receivable, and two names cleaned alike.
            ["account", "add", "Acme Ltd", "--category", "Receivable", "--value", "10", "--date", "2026-08-02"],
            ["account", "add", "Bonds A:B", "--category", "Investments", "--value", "20", "--date", "2026-08-02"],
            ["account", "add", "Bonds A-B", "--category", "Investments", "--value", "30", "--date", "2026-08-02"],
            ["update", "Bonds A-B", "35", "--date", "2026-10-02", "--yes"],
            ["update", "Current", "1250.50", "--date", "2026-09-01", "--yes"],
            ["update", "Visa", "350", "--date", "2026-09-15", "--yes"],
            ["update", "Current", "900", "--date", "2026-10-01", "--yes"],
            ["update", "Visa", "0", "--date", "2026-10-20", "--yes"],
            ["update", "Current", "1111.11", "--date", "2026-11-03", "--yes"],
            ["income", "add", "Salary", "2000", "--frequency", "monthly"],
            ["earn", "2000", "Salary", "--date", "2026-08-25", "--note", "ACME PAYROLL"],
            ["earn", "2000", "Salary", "--date", "2026-09-25"], ["earn", "2100", "Salary", "--date", "2026-10-24"],
            ["spend", "45.10", "Groceries", "--date", "2026-08-03", "--note", "Tesco"],
            ["spend", "800", "Rent", "--date", "2026-09-01"], ["spend", "61.20", "Groceries", "--date", "2026-09-12"],
            ["spend", "30", "Dining Out", "--date", "2026-10-05", "--note", "Pizza | night"],
            ["spend", "12.99", "Subscriptions", "--date", "2026-11-02"],
            ["spend", "75", "Emergency Fund", "--date", "2026-10-11"],
            // A goal named like the savings account: its pot must not upset the account's assertions.
            ["goal", "add", "Holiday", "--target", "1000"], ["save", "100", "Holiday", "--date", "2026-09-10"],
            ["save", "50", "Holiday", "--date", "2026-11-10"],
            ["client", "add", "Acme Ltd"],
            ["invoice", "new", "Acme", "--item", "Design", "1", "300", "--date", "2026-09-05", "--send"],
            ["invoice", "pay", "1", "--date", "2026-10-02"],
            ["invoice", "new", "Acme", "--item", "Logo", "1", "120", "--date", "2026-10-06", "--send"],
            // Flows: after a value typed the same day (Current on 09-01, Visa on 10-20), a transfer
            // between two accounts, a value typed after flows (only the rest is unexplained), and
            // a part payment into an account.
            ["spend", "20", "Groceries", "--date", "2026-09-01", "--from", "Current"],
            ["spend", "40", "Dining Out", "--date", "2026-10-20", "--from", "Visa"],
            ["earn", "500", "Salary", "--date", "2026-10-24", "--into", "Current", "--note", "Bonus"],
            ["save", "60", "Holiday", "--date", "2026-10-15", "--from", "Current", "--to", "Holiday"],
            ["update", "Current", "1500", "--date", "2026-10-30", "--yes"],
            ["invoice", "pay", "2", "--amount", "50", "--date", "2026-11-05", "--into", "Current"],
        ] {
            _ = try coffer(step, vault: vault)
        }
        let journal = sandbox.directory.path("coffer.journal")
        _ = try coffer(["export", "ledger", "--out", journal.path], vault: vault)
        let text = try String(contentsOf: journal, encoding: .utf8)
        #expect(text.contains("    Assets:Cash:Current    GBP 250.50 = GBP 1250.50\n"), "\(text)")
        #expect(text.contains("    Liabilities:Credit cards:Visa    GBP -150.00 = GBP -350.00\n"))
        #expect(text.contains("2026-10-05 * Pizza / night | spending\n    Expenses:Wants:Dining Out    GBP 30.00\n"))
        #expect(text.contains("    Assets:Savings:Holiday (budget)    GBP 100.00\n"))
        #expect(text.contains("    Assets:Receivable:Acme Ltd (invoices)    GBP 300.00\n"))
        // Flows post to the accounts they moved, in Coffer's order among the assertions.
        #expect(
            text.contains(
                "2026-09-01 * Groceries | spending\n    Expenses:Needs:Groceries    GBP 20.00\n    Assets:Cash:Current    GBP -20.00\n"
            ), "\(text)")
        #expect(text.contains("    Liabilities:Credit cards:Visa    GBP -40.00\n"))
        #expect(
            text.contains(
                "INV-0002 payment\n    Assets:Receivable:Acme Ltd (invoices)    GBP -50.00\n    Assets:Cash:Current    GBP 50.00\n"
            ))
        // Typed on 10-30 after 900 + 500 - 60 of flows: only 160 is unexplained.
        #expect(text.contains("    Assets:Cash:Current    GBP 160.00 = GBP 1500.00\n"), "\(text)")
        #expect(
            text.contains("account Assets:Investments:Bonds A-B\n")
                && text.contains("account Assets:Investments:Bonds A-B (2)\n"))

        // Both tools accept the journal strictly, and hledger checks every balance assertion.
        let (strict, strictOutput) = try sandbox.tool("/usr/bin/hledger", ["-f", journal.path, "check", "--strict"])
        #expect(strict == 0, "\(strictOutput)")
        let (pedantic, pedanticOutput) = try sandbox.tool("/usr/bin/ledger", ["-f", journal.path, "--pedantic", "bal"])
        #expect(pedantic == 0, "\(pedanticOutput)")

        for month in ["2026-08", "2026-09", "2026-10", "2026-11"] {
            let budget = try jsonObject(try coffer(["budget", "--month", month, "--json"], vault: vault).stdout)
            let income = try sandbox.hledgerReport(journal, ["is", "-p", month])
            let totals = income.filter { $0.name == "total" }.map(\.amount)
            #expect(totals.count == 2, "\(month): \(income)")
            // Revenues: the budget's income, and invoices the header accounts for.
            let invoiced = income.first { $0.name == "Income:Invoices" }?.amount ?? "0.00"
            #expect(minus(totals[0], invoiced) == budget["income"] as? String, "\(month) income: \(income)")
            if invoiced != "0.00" { #expect(text.contains(";   \(month)  GBP \(invoiced)\n"), "\(month)") }
            // Expenses: the budget's spending without its savings, which the header accounts for.
            let savings = budget["savings"] as! String
            #expect(totals[1] == minus(budget["spent"] as! String, savings), "\(month) expenses: \(income)")
            if savings != "0.00" { #expect(text.contains(";   \(month)  GBP \(savings)\n"), "\(month)") }
            for category in budget["categories"] as! [[String: Any]] where category["type"] as? String != "savings" {
                let account = "Expenses:\((category["type"] as! String).capitalized):\(category["name"] as! String)"
                let total = category["total"] as! String
                #expect(
                    (income.first { $0.name == account }?.amount ?? "0.00") == total, "\(month) \(account): \(income)")
            }
            // Net worth at the month's end.
            let overview = try jsonObject(
                try coffer(["overview", "--json"], vault: vault, today: monthEnd(month)).stdout)
            let sheet = try sandbox.hledgerReport(journal, ["bs", "-e", monthAfter(month)])
            #expect(
                sheet.last?.name == "Net:" && sheet.last?.amount == overview["netWorth"] as? String,
                "\(month): \(sheet)")
        }
    }
}
