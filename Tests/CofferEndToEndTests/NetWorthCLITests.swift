import CofferTestSupport
import FinanceCore
import Foundation
import GRDB
import Testing
import VaultCrypto
import VaultStore

/// The net-worth job through the real binary, with a fixed COFFER_TODAY.
@Suite struct NetWorthCLITests {
    let sandbox = Sandbox()
    var environment: [String: String] { ["COFFER_PASSPHRASE": "old passphrase", "COFFER_TODAY": "2026-11-22"] }

    @discardableResult
    func coffer(_ arguments: String...) throws -> RunResult { try sandbox.run(arguments, environment: environment) }

    func json(_ arguments: String...) throws -> [String: Any] {
        let result = try sandbox.run(arguments + ["--json"], environment: environment)
        #expect(result.status == 0, "\(result.stderr)")
        return try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as! [String: Any]
    }

    func recordsDigest() throws -> [UInt8] { try storedRowsDigest(sandbox.vault) }

    func setUpAccounts() throws {
        _ = try sandbox.initVault()
        #expect(try coffer("init").status == 64)
        #expect(
            try coffer(
                "account", "add", "Marcus Savings", "--category", "Savings", "--value", "1,200", "--date", "2026-10-22"
            ).status == 0)
        #expect(try coffer("account", "add", "Monzo", "--category", "Cash", "--value", "£300.50").status == 0)
        #expect(
            try coffer("account", "add", "Mortgage", "--category", "Mortgage", "--liability", "--value", "1000").status
                == 0)
        #expect(
            try coffer(
                "account", "add", "Vanguard ISA", "--category", "Investments", "--growth", "5%", "--value", "10000"
            ).status == 0)
    }

    /// One definition of net worth: the overview's figure, its history's point for the same
    /// day, the distribution (assets minus owed), the projection's starting point and the
    /// account list all agree, with invoice receivables counted and with them left out.
    @Test(arguments: [true, false]) func everyReportGivesTheSameNetWorth(receivables: Bool) throws {
        try setUpAccounts()
        #expect(try coffer("client", "add", "Acme", "--terms", "14").status == 0)
        #expect(
            try coffer("invoice", "new", "Acme", "--item", "Design", "2", "150", "--date", "2026-11-01", "--send")
                .status == 0)
        #expect(try coffer("invoice", "pay", "1", "--amount", "100", "--date", "2026-11-10").status == 0)
        #expect(try coffer("settings", "--receivables", receivables ? "on" : "off").status == 0)
        let accountsOnly = Decimal(string: "10500.50")!  // 1,200 + 300.50 + 10,000 − 1,000
        let expected = receivables ? accountsOnly + 200 : accountsOnly

        let overview = try json("overview")
        func decimal(_ value: Any?) -> Decimal? { (value as? String).flatMap { Decimal(string: $0) } }
        #expect(decimal(overview["netWorth"]) == expected)
        let history = try #require(overview["history"] as? [[String: Any]])
        #expect(history.last?["date"] as? String == "2026-11-22")
        #expect(
            decimal(history.last?["netWorth"]) == expected, "the history's point for today is the overview's figure")
        let categories = try #require(overview["categories"] as? [[String: Any]])
        func total(_ rows: [[String: Any]], _ kind: String) -> Decimal {
            rows.filter { $0["kind"] as? String == kind }.compactMap { decimal($0["total"]) }.reduce(0, +)
        }
        #expect(
            total(categories, "asset") - total(categories, "liability") == expected, "the distribution adds up to it")
        #expect(categories.contains { $0["name"] as? String == "Invoices receivable" } == receivables)
        let shares = categories.filter { $0["kind"] as? String == "asset" }.compactMap { $0["share"] as? Double }
            .reduce(0, +)
        #expect(abs(shares - 100) < 0.001, "asset shares are shares of the assets net worth counts")

        let assets = try #require(try json("assets")["categories"] as? [[String: Any]])
        #expect(total(assets, "asset") - total(assets, "liability") == expected)
        let projection = try json("projection")
        #expect(decimal(projection["netWorth"]) == expected, "the projection starts from the same figure")
        #expect(decimal(overview["assets"]).map { $0 - (decimal(overview["liabilities"]) ?? 0) } == expected)
    }

    @Test func addUpdateAndOverview() throws {
        try setUpAccounts()
        let update = try coffer("update", "marc", "1250.50")
        #expect(update.status == 0, "\(update.stderr)")
        #expect(update.stdout.contains("Marcus Savings: £1,250.50 on 2026-11-22 (was £1,200.00, +£50.50)"))

        let overview = try json("overview")
        #expect(overview["asOf"] as? String == "2026-11-22")
        #expect(overview["currency"] as? String == "GBP")
        #expect(overview["netWorth"] as? String == "10551.00")  // 1250.50 + 300.50 + 10000 - 1000
        #expect(overview["assets"] as? String == "11551.00")
        #expect(overview["liabilities"] as? String == "1000.00")
        #expect(overview["changeSinceLastMonth"] as? String == "9351.00")  // a month ago only Marcus (1200) existed
        let projection = overview["projection"] as! [String: Any]
        #expect(projection["years"] as? Int == 1)
        #expect(projection["netWorth"] as? String == "11062.62")  // ISA 10,511.62 at 5%; the rest at 0%
        let categories = overview["categories"] as! [[String: Any]]
        #expect(categories.map { $0["name"] as! String } == ["Investments", "Savings", "Cash", "Mortgage"])
        let tenths = categories.filter { $0["kind"] as? String == "asset" }.map {
            Int((($0["share"] as! NSNumber).doubleValue * 10).rounded())
        }
        #expect(tenths.reduce(0, +) == 1000, "asset shares add up to exactly 100.0%")
        #expect((categories[0]["share"] as! NSNumber).doubleValue == 86.6)
        let accounts = overview["accounts"] as! [[String: Any]]
        #expect(Set(accounts.map { $0["name"] as! String }) == ["Marcus Savings", "Monzo", "Mortgage", "Vanguard ISA"])
        #expect(accounts.first { $0["name"] as? String == "Mortgage" }?["kind"] as? String == "liability")
        #expect(accounts.allSatisfy { $0["closed"] as? Bool == false })

        let human = try coffer()  // `coffer` alone is the overview
        #expect(human.status == 0)
        #expect(human.stdout.contains("Net worth  £10,551.00"))
        #expect(human.stdout.contains("Assumptions, not guarantees"))
        #expect(!(human.stdout + human.stderr).contains("Next:"), "advice only for a terminal")
        #expect(!human.stdout.contains("\u{1B}["), "no colour codes when stdout is not a terminal")

        let history = overview["history"] as! [[String: String]]
        #expect(
            history == [
                ["date": "2026-10-31", "netWorth": "1200.00"], ["date": "2026-11-22", "netWorth": "10551.00"],
            ])

        let past = try json("overview", "--as-of", "2026-11-01")
        #expect(past["netWorth"] as? String == "1200.00")
    }

    @Test func invalidInputExits64AndChangesNothing() throws {
        try setUpAccounts()
        let before = try recordsDigest()
        let attempts: [[String]] = [
            ["update", "M", "10"],  // ambiguous: Marcus, Monzo, Mortgage
            ["update", "Nobody", "10"],
            ["update", "Monzo", "20k"],
            ["update", "Monzo", "12,5O"],
            ["update", "Monzo", "1.234"],
            ["update", "Monzo", "10", "--date", "2026-02-30"],
            ["account", "add", "monzo", "--category", "Cash"],  // duplicate, case-insensitive
            ["account", "add", "", "--category", "Cash"],
            ["account", "add", "X", "--category", "Cash", "--growth", "lots"],
            ["account", "delete", "Monzo"],  // no terminal, no --yes
            ["projection", "--years", "0"],
            ["overview", "--as-of", "yesterday"],
        ]
        for arguments in attempts {
            let result = try sandbox.run(arguments, environment: environment)
            #expect(result.status == 64, "\(arguments): \(result.stderr)")
            #expect(result.stderr.hasPrefix("error: "), "\(arguments)")
        }
        let ambiguous = try coffer("update", "M", "10")
        #expect(ambiguous.stderr.contains("Marcus Savings, Monzo, Mortgage"))
        #expect(
            try sandbox.run(["overview"], environment: environment.merging(["COFFER_TODAY": "soon"]) { $1 }).status
                == 64)
        #expect(try recordsDigest() == before, "a refused command must leave the vault byte-for-byte unchanged")
        // A unique prefix picks an account from three letters on; fewer are refused even when unique.
        let short = try sandbox.run(["update", "Va", "10"], environment: environment)
        #expect(short.status == 64)
        #expect(short.stderr.contains("too short to choose an account"), "\(short.stderr)")
        #expect(try coffer("update", "Van", "1100").status == 0)
        #expect(try json("account", "show", "Vanguard ISA")["value"] as? String == "1100.00")
    }

    @Test func undoIsRepeatableAndLogListsChanges() throws {
        try setUpAccounts()
        #expect(try coffer("update", "Monzo", "999").status == 0)
        #expect(try coffer("account", "delete", "Vanguard", "--yes").status == 0)
        #expect(try json("overview")["netWorth"] as? String == "1199.00")  // 1200 + 999 - 1000

        let log = try json("log")["changes"] as! [[String: Any]]
        #expect(
            log.map { $0["summary"] as! String }.prefix(2) == [
                "Deleted Vanguard ISA", "Updated Monzo to £999.00 on 2026-11-22",
            ])

        let undo = try coffer("undo")
        #expect(undo.stdout.contains("Undone: Deleted Vanguard ISA"))
        let restored = try json("overview")["netWorth"] as? String
        #expect(restored == "11199.00", "1200 + 999 - 1000 + 10000")
        #expect(try coffer("undo").status == 0)
        let reverted = try json("overview")["netWorth"] as? String
        #expect(reverted == "10500.50", "Monzo back to 300.50")
        for _ in 0..<4 { #expect(try coffer("undo").status == 0) }
        #expect(try coffer("undo").stdout.contains("Nothing to undo"))
        #expect(try coffer("overview").stdout.contains("No accounts yet"))
    }

    @Test func closeReopenAssetsAndGrowth() throws {
        try setUpAccounts()
        #expect(try coffer("account", "close", "Monzo").status == 0)
        #expect(try json("overview")["netWorth"] as? String == "10200.00")
        #expect(try coffer("update", "Monzo", "5").status == 64, "a closed account takes no new values")
        #expect(try coffer("account", "reopen", "Monzo").status == 0)
        #expect(try coffer("account", "rename", "Monzo", "Monzo Current").status == 0)

        let assets = try json("assets")["categories"] as! [[String: Any]]
        #expect(assets.first?["name"] as? String == "Investments")
        let category = try json("assets", "Savings")
        #expect((category["accounts"] as! [[String: Any]]).first?["name"] as? String == "Marcus Savings")

        #expect(try coffer("growth", "set", "Savings", "4%").status == 0)
        let rates = try json("growth", "list")["accounts"] as! [[String: String]]
        #expect(rates.first { $0["account"] == "Marcus Savings" }?["rate"] == "4%")
        #expect(rates.first { $0["account"] == "Vanguard ISA" }?["source"] == "account")
        let projection = try json("projection")["projections"] as! [[String: Any]]
        #expect(projection.map { $0["years"] as! Int } == [1, 5, 10])
        #expect(try coffer("projection").stdout.contains("Assumptions, not guarantees"))

        #expect(try coffer("update", "Marcus", "1300", "--note", "annual statement").status == 0)
        let noted = try json("account", "show", "Marcus")["history"] as! [[String: Any]]
        #expect(noted.last?["note"] as? String == "annual statement")
        let shown = try coffer("account", "show", "marcus")
        #expect(shown.stdout.contains("£1,200.00"))
        #expect(shown.stdout.contains("annual statement"))
        #expect(shown.stdout.contains("History"))
    }

    @Test func demoVaultShowsItsOverview() throws {
        let path = sandbox.directory.path("demo.coffer").path
        let demo = try sandbox.run(["demo", "--vault", path], environment: ["COFFER_TODAY": "2026-11-22"])
        #expect(demo.status == 0, "\(demo.stderr)")
        #expect(demo.stdout.contains("passphrase 'demo'"))
        #expect(demo.stdout.contains("Net worth  £"))
        let overview = try sandbox.run(
            ["overview", "--json", "--vault", path],
            environment: ["COFFER_PASSPHRASE": "demo", "COFFER_TODAY": "2026-11-22"])
        let decoded = try JSONSerialization.jsonObject(with: Data(overview.stdout.utf8)) as! [String: Any]
        #expect((decoded["accounts"] as! [Any]).count == 7)
        #expect(try sandbox.run(["demo", "--vault", path]).status == 64, "never overwrites a vault")
    }

    @Test func namesAndAmountsWrittenThroughTheCLINeverReachTheDisk() throws {
        _ = try sandbox.initVault()
        let canaries = ["Zebra Canary Bank", "Quokka Holdings", "987654.32"]
        #expect(
            try coffer("account", "add", canaries[0], "--category", canaries[1], "--value", canaries[2]).status == 0)
        #expect(try coffer("update", "Zebra", "123456.78").status == 0)
        #expect(try sandbox.run(["unlock"], environment: environment).status == 0)
        var files: [URL] = []
        for directory in [sandbox.vault.deletingLastPathComponent(), sandbox.sessions] {
            files += try FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)
        }
        #expect(files.contains { $0.pathExtension == "session" })
        for file in files {
            let contents = try Data(contentsOf: file)
            for canary in canaries + ["123456.78", "12345678", "Savings"] {
                for encoded in [
                    Data(canary.utf8), canary.data(using: .utf16LittleEndian)!,
                    Data(Array(canary.utf8).map { String(format: "%02x", $0) }.joined().utf8),
                ] {
                    #expect(contents.range(of: encoded) == nil, "\(canary) found in \(file.lastPathComponent)")
                }
            }
        }
    }
}
