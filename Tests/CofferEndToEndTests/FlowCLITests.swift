import CofferTestSupport
import Foundation
import Testing

/// Money that moves, through the real binary: spending, income, saving and invoice payments
/// move the accounts they name (or their defaults) in the same change as the entry, a typed
/// value stays the source of truth, and `reconcile` shows what the flows leave unexplained.
@Suite struct FlowCLITests {
    let sandbox = Sandbox()
    let environment = ["COFFER_PASSPHRASE": "flow passphrase", "COFFER_TODAY": "2026-11-24"]

    @discardableResult
    func ok(_ arguments: String...) throws -> RunResult {
        let result = try sandbox.run(arguments, environment: environment)
        #expect(result.status == 0, "\(arguments): \(result.stderr)")
        return result
    }

    func json(_ arguments: String...) throws -> [String: Any] {
        let result = try sandbox.run(arguments + ["--json"], environment: environment)
        #expect(result.status == 0, "\(arguments): \(result.stderr)")
        return try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
    }

    /// Several commands under one unlock (`coffer batch`), each of which must succeed.
    func setUp(_ lines: [String]) throws {
        let result = try sandbox.run(["batch"], environment: environment, input: lines.joined(separator: "\n") + "\n")
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
    }

    func value(_ account: String) throws -> String? {
        try json("account", "show", account)["value"] as? String
    }

    func netWorth() throws -> String? { try json("overview")["netWorth"] as? String }

    func startVault() throws {
        #expect(try sandbox.run(["init", "--kdf", "interactive"], environment: environment).status == 0)
        try setUp([
            "account add Current --category Cash --value 1000",
            "account add Visa --category \"Credit cards\" --liability --value 200",
            "account add ISA --category Savings --value 5000",
        ])
    }

    /// Each flow moves its accounts in the entry's own change: one undo takes back both.
    @Test func flowsMoveAccountsAndOneUndoRevertsBoth() throws {
        try startVault()
        var shown = try ok("spend", "20", "Groceries", "--from", "Current").stdout
        #expect(shown.contains("Current: £980.00"), "\(shown)")
        #expect(try value("Current") == "980.00")
        // Spending on a credit card raises what is owed.
        try ok("spend", "50", "Dining", "--from", "Visa")
        #expect(try value("Visa") == "250.00")
        try ok("income", "add", "Salary", "2500", "--frequency", "monthly")
        try ok("earn", "2500", "Salary", "--into", "Current")
        #expect(try value("Current") == "3480.00")
        try ok("goal", "add", "Holiday", "--target", "3000")
        shown = try ok("save", "300", "Holiday", "--from", "Current", "--to", "ISA").stdout
        #expect(shown.contains("Current: £3,180.00") && shown.contains("ISA: £5,300.00"), "\(shown)")
        #expect(try netWorth() == "8230.00", "a transfer between accounts moves no net worth; 1000-200+5000-20-50+2500")

        let undone = try ok("undo").stdout
        #expect(undone.contains("Saved £300.00 towards Holiday from Current to ISA"), "\(undone)")
        #expect(try value("Current") == "3480.00" && value("ISA") == "5000.00", "one undo reverts both accounts")
        let month = try json("budget")
        #expect(month["savings"] as? String == "0.00", "and the transaction with them")
        try ok("redo")
        #expect(try value("Current") == "3180.00" && value("ISA") == "5300.00")

        // Deleting the transaction takes its movement with it.
        let list = try json("transaction", "list")
        let groceries = try #require(
            (list["transactions"] as? [[String: Any]])?.first { $0["label"] as? String == "Groceries" })
        #expect(groceries["from"] as? String == "Current", "a transaction names the account it moved")
        try ok("transaction", "delete", groceries["id"] as! String, "--yes")
        #expect(try value("Current") == "3200.00")
    }

    /// An account forgotten at entry is added by editing the transaction; the amount edited
    /// later moves the account with it; `--no-account` takes the movement away.
    @Test func editingATransactionMovesItsAccounts() throws {
        try startVault()
        try ok("spend", "20", "Groceries", "--note", "forgot the card")
        let list = try json("transaction", "list")
        let id = try #require((list["transactions"] as? [[String: Any]])?.first?["id"] as? String)
        try ok("transaction", "edit", id, "--from", "Current")
        #expect(try value("Current") == "980.00")
        try ok("transaction", "edit", id, "--amount", "25")
        #expect(try value("Current") == "975.00")
        let wrongWay = try sandbox.run(["transaction", "edit", id, "--into", "ISA"], environment: environment)
        #expect(wrongWay.status == 64 && wrongWay.stderr.contains("Spending leaves"), "\(wrongWay.stderr)")
        try ok("transaction", "edit", id, "--no-account")
        #expect(try value("Current") == "1000.00")
        try ok("undo")
        #expect(try value("Current") == "975.00")
    }

    /// Defaults per category, income source, goal and client keep entry one short command;
    /// `--no-account` and a named account override them.
    @Test func defaultsKeepEntryShortAndCanBeOverridden() throws {
        try startVault()
        try setUp([
            "category edit Groceries --account Visa",
            "income add Salary 2500 --frequency monthly --account Current",
            "goal add Holiday --account ISA",
            "client add Acme --account Current",
        ])
        try ok("spend", "30", "Groceries")
        #expect(try value("Visa") == "230.00")
        try ok("spend", "10", "Groceries", "--from", "Current")
        #expect(try value("Visa") == "230.00" && value("Current") == "990.00")
        try ok("spend", "5", "Groceries", "--no-account")
        #expect(try value("Visa") == "230.00" && value("Current") == "990.00")
        try ok("earn", "2500", "Salary")
        #expect(try value("Current") == "3490.00")
        try ok("save", "100", "Holiday")
        #expect(try value("ISA") == "5100.00")
        let goals = try json("goal", "list")["goals"] as? [[String: Any]]
        #expect(goals?.first?["account"] as? String == "ISA" && goals?.first?["accountValue"] as? String == "5100.00")
        #expect(try ok("goal", "list").stdout.contains("ISA £5,100.00"), "the goal shows its account's value")

        let contradiction = try sandbox.run(
            ["spend", "1", "Groceries", "--from", "Current", "--no-account"], environment: environment)
        #expect(contradiction.status == 64 && contradiction.stderr.contains("contradict"), "\(contradiction.stderr)")
        let itself = try sandbox.run(
            ["save", "1", "Holiday", "--from", "ISA"], environment: environment)
        #expect(itself.status == 64 && itself.stderr.contains("into itself"), "\(itself.stderr)")
        try ok("category", "edit", "Groceries", "--no-account")
        try ok("spend", "7", "Groceries")
        #expect(try value("Visa") == "230.00", "a cleared default moves nothing")

        // A deleted account stops being anyone's default, in the same undoable change.
        try ok("account", "delete", "ISA", "--yes")
        try ok("save", "1", "Holiday")
        try ok("undo")
        try ok("undo")
        #expect(try value("ISA") == "5100.00")
        try ok("save", "1", "Holiday")
        #expect(try value("ISA") == "5101.00", "undo gave the goal its account back")

        // A closed account takes no flows.
        try ok("account", "close", "Current", "--date", "2026-11-20")
        let closed = try sandbox.run(["spend", "1", "Groceries", "--from", "Current"], environment: environment)
        #expect(closed.status == 64, "\(closed.stderr)")
        #expect(closed.stderr.contains("closed"), "\(closed.stderr)")
    }

    /// The done-when of the issue: a paid invoice raises net worth by exactly its amount when
    /// receivables do not count, and turns the receivable into cash (no change) when they do.
    @Test func anInvoicePaidIntoAnAccountNeverLowersNetWorth() throws {
        try startVault()
        try setUp([
            "client add Acme --account Current",
            "invoice new Acme --item Design 1 1200 --send",
            "invoice new Acme --item Logo 1 300 --send",
        ])
        let counted = try #require(try netWorth())
        #expect(counted == "7300.00", "1000 - 200 + 5000 + 1500 receivable")
        let paid = try ok("invoice", "pay", "1", "--amount", "200").stdout
        #expect(paid.contains("Current: £1,200.00"), "\(paid)")
        #expect(try netWorth() == counted, "the receivable turned into cash")
        try ok("invoice", "pay", "1")
        #expect(try netWorth() == counted && value("Current") == "2200.00")
        let shown = try ok("invoice", "show", "1").stdout
        #expect(
            shown.contains("into Current") && shown.contains("-£200.00") && shown.contains("-£1,000.00"), "\(shown)")
        #expect(shown.contains("Outstanding") && shown.contains("£0.00"), "\(shown)")

        try ok("settings", "--receivables", "off")
        let before = try #require(try netWorth())
        try ok("invoice", "pay", "2", "--into", "ISA")
        #expect(try netWorth() == "\(Int(Double(before)! + 300)).00", "net worth rose by exactly the payment")
        #expect(try value("ISA") == "5300.00")
        try ok("undo")
        #expect(try netWorth() == before && value("ISA") == "5000.00", "one undo reverts the payment and the account")
    }

    /// A payment dated before a value typed later is already in that value: the account does not
    /// move again, and the command says so instead of printing a value the account never had.
    @Test func aBackdatedFlowSaysTheTypedValueHoldsIt() throws {
        try startVault()
        try setUp(["update Current 1500 --yes"])
        let shown = try ok("spend", "20", "Groceries", "--from", "Current", "--date", "2026-11-10").stdout
        #expect(
            shown.contains("Current: £1,500.00 (the value typed on 2026-11-24 already holds this"), "\(shown)")
        #expect(try value("Current") == "1500.00")
        let after = try ok("spend", "5", "Groceries", "--from", "Current").stdout
        #expect(after.contains("Current: £1,495.00\n"), "\(after)")
    }

    /// A value typed after flows is the truth; `reconcile` lists the flows since and the gap.
    @Test func aTypedValueStaysTheTruthAndReconcileShowsTheGap() throws {
        try startVault()
        try setUp([
            "spend 20 Groceries --from Current --note Tesco",
            "spend 30 Dining --from Current",
        ])
        let update = try ok("update", "Current", "940").stdout
        #expect(update.contains("was £950.00"), "the value before the update includes the flows: \(update)")
        #expect(try value("Current") == "940.00")
        try ok("spend", "15", "Groceries", "--from", "Current", "--note", "Lidl")
        #expect(try value("Current") == "925.00", "a flow after the typed value moves it")

        let report = try json("reconcile", "Current", "--balance", "920")
        let last = try #require(report["lastUpdate"] as? [String: Any])
        #expect(last["value"] as? String == "940.00" && last["expected"] as? String == "950.00")
        #expect(last["unexplained"] as? String == "-10.00")
        let flows = try #require(report["flows"] as? [[String: Any]])
        #expect(flows.count == 1 && flows[0]["change"] as? String == "-15.00", "\(flows)")
        #expect((flows[0]["label"] as? String)?.contains("Lidl") == true)
        #expect(report["expected"] as? String == "925.00" && report["flowsTotal"] as? String == "-15.00")
        #expect(report["balance"] as? String == "920.00" && report["gap"] as? String == "-5.00")
        let text = try ok("reconcile", "Current").stdout
        #expect(text.contains("-£10.00 unexplained") && text.contains("Lidl") && text.contains("Expected now: £925.00"))

        // A liability reconciles in what is owed.
        try ok("spend", "40", "Dining", "--from", "Visa")
        let visa = try json("reconcile", "Visa")
        #expect(visa["expected"] as? String == "240.00" && visa["flowsTotal"] as? String == "40.00", "\(visa)")
    }

    /// The JSON export carries every link, and a vault imported from it has the same values.
    @Test func theJSONExportCarriesTheLinks() throws {
        try startVault()
        try setUp([
            "client add Acme --account Current",
            "category edit Groceries --account Visa",
            "spend 20 Groceries",
            "invoice new Acme --item Design 1 100 --send",
            "invoice pay 1",
        ])
        let export = sandbox.directory.path("export.json")
        try ok("export", "json", "--out", export.path)
        let text = try String(contentsOf: export, encoding: .utf8)
        #expect(text.contains("\"flow\"") && text.contains("\"version\" : 4"), "\(text.prefix(300))")
        let copy = sandbox.directory.path("copy.coffer")
        #expect(
            try sandbox.run(["init", "--kdf", "interactive", "--vault", copy.path], environment: environment).status
                == 0)
        #expect(
            try sandbox.run(["import", "json", export.path, "--vault", copy.path], environment: environment).status == 0
        )
        for account in ["Current", "Visa"] {
            let there = try sandbox.run(
                ["account", "show", account, "--json", "--vault", copy.path], environment: environment)
            #expect(there.stdout.contains("\"value\" : \"\(try value(account)!)\""), "\(account): \(there.stdout)")
        }
        try sandbox.run(["spend", "1", "Groceries", "--vault", copy.path], environment: environment)
        let visa = try sandbox.run(
            ["account", "show", "Visa", "--json", "--vault", copy.path], environment: environment)
        #expect(visa.stdout.contains("\"value\" : \"221.00\""), "the category's default came across: \(visa.stdout)")
    }
}
