import CofferTestSupport
import Foundation
import Testing

/// `coffer search`, the `--from/--to/--min/--max/--text` filters of `transaction list` and
/// `invoices`, and the change columns of `account list`, through the real binary.
@Suite struct SearchCLITests {
    let sandbox = Sandbox()

    func run(_ arguments: [String], today: String = "2026-11-22") throws -> RunResult {
        try sandbox.run(arguments, environment: ["COFFER_PASSPHRASE": "old passphrase", "COFFER_TODAY": today])
    }

    func ok(_ arguments: String..., today: String = "2026-11-22") throws {
        let result = try run(arguments, today: today)
        #expect(result.status == 0, "\(arguments): \(result.stderr)")
    }

    func json(_ arguments: String..., today: String = "2026-11-22") throws -> [String: Any] {
        try json(arguments, today: today)
    }

    func json(_ arguments: [String], today: String = "2026-11-22") throws -> [String: Any] {
        let result = try run(arguments + ["--json"], today: today)
        #expect(result.status == 0, "\(arguments): \(result.stderr)")
        return try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as! [String: Any]
    }

    func status(_ arguments: String...) throws -> Int32 { try run(arguments).status }

    /// One record of every kind, each with a word found nowhere else.
    func setUp() throws {
        _ = try sandbox.initVault()
        try ok("account", "add", "Aviva Pension", "--category", "Pensions", "--value", "1000", "--date", "2026-01-01")
        try ok("update", "Aviva Pension", "1100", "--note", "policy PX-4471")
        try ok("client", "add", "Café Noir", "--email", "billing@noir.example", "--address", "2 Rue de l'École")
        try ok(
            "invoice", "new", "Café Noir", "--item", "Logo design", "1", "250", "--notes", "Thanks for the croissants",
            "--date", "2026-11-02")
        try ok("spend", "12.50", "Dining Out", "--note", "Pizza Express", "--date", "2026-11-20")
    }

    func hits(_ text: String, _ extra: String...) throws -> (total: Int, results: [[String: Any]]) {
        let result = try json(["search", text] + extra)
        #expect(result["query"] as? String == text.trimmingCharacters(in: .whitespaces))
        return (result["total"] as! Int, result["results"] as! [[String: Any]])
    }

    @Test func searchFindsAWordInEveryKindAndSaysWhere() throws {
        try setUp()
        let cases: [(query: String, kind: String, id: String, field: String, snippet: String)] = [
            ("pension", "accounts", "Aviva Pension", "name", "Aviva Pension"),
            ("PX-4471", "accounts", "Aviva Pension", "value note", "policy PX-4471"),
            ("noir.example", "clients", "Café Noir", "email", "billing@noir.example"),
            ("logo", "invoices", "INV-0001", "item", "Logo design"),
            ("croissant", "invoices", "INV-0001", "notes", "Thanks for the croissants"),
            ("pizza", "transactions", "", "note", "Pizza Express"),
            ("dining", "transactions", "", "category", "Dining Out"),
        ]
        for item in cases {
            let (total, results) = try hits(item.query)
            #expect(total == 1, "\(item.query): \(results)")
            let hit = try #require(results.first)
            #expect(hit["kind"] as? String == item.kind, "\(item.query)")
            if !item.id.isEmpty { #expect(hit["id"] as? String == item.id, "\(item.query)") }
            #expect(hit["field"] as? String == item.field, "\(item.query)")
            #expect(hit["snippet"] as? String == item.snippet, "\(item.query)")
        }
        // The keys are always there; date and amount null where a record has none.
        let (_, invoice) = try hits("logo")
        #expect(invoice[0]["date"] as? String == "2026-11-02")
        #expect(invoice[0]["amount"] as? String == "250.00")
        #expect(invoice[0]["title"] as? String == "Café Noir")
        let (_, spending) = try hits("pizza")
        #expect(spending[0]["amount"] as? String == "-12.50")
        #expect(spending[0]["date"] as? String == "2026-11-20")
        #expect(spending[0]["title"] as? String == "Dining Out")
        let (_, client) = try hits("billing")
        #expect(client[0]["date"] is NSNull && client[0]["amount"] is NSNull)

        // Text: a section per kind with the field that matched.
        let text = try run(["search", "noir"])
        #expect(text.status == 0)
        #expect(text.stdout.contains("Clients (1)") && text.stdout.contains("Invoices (1)"), "\(text.stdout)")
        #expect(text.stdout.contains("client") && text.stdout.contains("Café Noir"))
    }

    /// An imported note is `PAYEE | DESCRIPTION`: the field says which half matched.
    @Test func importedNotesSayPayeeOrDescription() throws {
        _ = try sandbox.initVault()
        let statement = sandbox.directory.path("statement.csv")
        try "Date,Payee,Description,Amount\n2026-11-03,Crêperie Bretonne,Card payment lunch,-14.20\n".write(
            to: statement, atomically: true, encoding: .utf8)
        try ok("import", "csv", statement.path, "--into", "transactions")
        let (_, payee) = try hits("creperie")
        #expect(payee.first?["field"] as? String == "payee")
        #expect(payee.first?["snippet"] as? String == "Crêperie Bretonne | Card payment lunch")
        let (_, description) = try hits("LUNCH")
        #expect(description.first?["field"] as? String == "description")
        #expect(description.first?["amount"] as? String == "-14.20")
        let (_, category) = try hits("uncategorised")
        #expect(category.first?["field"] as? String == "category")
    }

    @Test func caseAndAccentsAreIgnored() throws {
        try setUp()
        for query in ["ecole", "ÉCOLE", "École", "rue de l'ecole"] {
            let (total, results) = try hits(query)
            #expect(total == 1, "\(query)")
            #expect(results.first?["field"] as? String == "address", "\(query)")
        }
        // "cafe" finds the client by name and the invoice by its client, in kind order.
        let (total, results) = try hits("CAFE")
        #expect(total == 2)
        #expect(results.map { $0["kind"] as? String } == ["clients", "invoices"])
        #expect(results.last?["field"] as? String == "client")
        #expect(try hits("PIZZA express").total == 1)
    }

    @Test func kindsLimitsCountsAndNoMatch() throws {
        try setUp()
        for (day, amount) in [("2026-11-03", "3"), ("2026-11-10", "4"), ("2026-11-05", "5")] {
            try ok("spend", amount, "Groceries", "--note", "Coffee beans", "--date", day)
        }
        let limited = try json(["search", "coffee", "--limit", "2"])
        #expect(limited["total"] as? Int == 3)
        #expect((limited["counts"] as? [String: Int])?["transactions"] == 3)
        let dates = (limited["results"] as! [[String: Any]]).map { $0["date"] as? String }
        #expect(dates == ["2026-11-10", "2026-11-05"], "newest first")
        #expect(try hits("coffee", "--limit", "0").results.count == 3)
        #expect(try run(["search", "coffee", "--limit", "1"]).stdout.contains("Transactions (3, 1 shown)"))

        let clientsOnly = try json(["search", "noir", "--kind", "clients"])
        #expect((clientsOnly["results"] as! [[String: Any]]).map { $0["kind"] as? String } == ["clients"])
        #expect(clientsOnly["counts"] as? [String: Int] == ["clients": 1])

        let none = try run(["search", "zebra"])
        #expect(none.status == 0)
        #expect(none.stdout == "No matches for 'zebra'.\n")
        #expect(try hits("zebra").total == 0)

        #expect(try status("search", "") == 64)
        #expect(try status("search", "   ") == 64)
        #expect(try status("search", "x", "--limit", "-1") == 64)
        #expect(try status("search", "x", "--kind", "notebooks") == 64)
    }

    @Test func transactionListFilters() throws {
        _ = try sandbox.initVault()
        for (day, amount, note) in [
            ("2026-10-31", "10", "Bakery"), ("2026-11-01", "15", "Bakery"), ("2026-11-15", "20", "Café"),
            ("2026-11-30", "25", "Bakery"), ("2026-12-01", "5", "Bakery"),
        ] {
            try ok("spend", amount, "Groceries", "--note", note, "--date", day, today: "2026-12-05")
        }
        func dates(_ arguments: String...) throws -> [String] {
            let result = try json(["transaction", "list"] + arguments, today: "2026-12-05")
            return (result["transactions"] as! [[String: Any]]).map { $0["date"] as! String }
        }
        // Boundaries are inclusive, and a range spans months.
        #expect(try dates("--from", "2026-11-01", "--to", "2026-11-30") == ["2026-11-30", "2026-11-15", "2026-11-01"])
        #expect(
            try dates("--from", "2026-10-31") == ["2026-12-01", "2026-11-30", "2026-11-15", "2026-11-01", "2026-10-31"])
        #expect(try dates("--to", "2026-10-31") == ["2026-10-31"])
        let ranged = try json(["transaction", "list", "--from", "2026-11-01"], today: "2026-12-05")
        #expect(ranged["month"] is NSNull && ranged["from"] as? String == "2026-11-01" && ranged["to"] is NSNull)
        // Sizes, inclusive, across every month with a range; within the month with --month.
        #expect(
            try dates("--from", "2026-01-01", "--min", "10", "--max", "20") == [
                "2026-11-15", "2026-11-01", "2026-10-31",
            ])
        #expect(try dates("--month", "2026-11", "--min", "20") == ["2026-11-30", "2026-11-15"])
        // Text as search finds it: in the note (accents ignored) or the category.
        #expect(try dates("--month", "2026-11", "--text", "CAFE") == ["2026-11-15"])
        #expect(try dates("--month", "2026-11", "--text", "grocer").count == 3)
        // Without --month or a range, a filter looks at every month, as hledger does: October's
        // and November's bakery are found from December.
        #expect(try dates("--text", "bakery") == ["2026-12-01", "2026-11-30", "2026-11-01", "2026-10-31"])
        #expect(try dates("--min", "15", "--max", "20") == ["2026-11-15", "2026-11-01"])
        #expect(try json(["transaction", "list", "--text", "bakery"], today: "2026-12-05")["month"] is NSNull)
        #expect(
            try run(["transaction", "list", "--text", "zebra"], today: "2026-12-05").stdout
                == "No transactions match.\n")
        #expect(
            try run(["transaction", "list", "--month", "2026-10", "--text", "café"], today: "2026-12-05").stdout
                == "No transactions in October 2026 match.\n")
        for bad in [
            ["--from", "2026-02-30"], ["--to", "yesterday"], ["--month", "2026-11", "--from", "2026-11-01"],
            ["--from", "2026-12-01", "--to", "2026-11-01"], ["--min", "20", "--max", "10"], ["--min", "-5"],
            ["--max", "lots"], ["--text", ""],
        ] {
            #expect(try run(["transaction", "list"] + bad, today: "2026-12-05").status == 64, "\(bad)")
        }
    }

    @Test func invoiceListFilters() throws {
        _ = try sandbox.initVault()
        try ok("client", "add", "Acme Ltd")
        try ok("client", "add", "Globex")
        try ok("invoice", "new", "Acme", "--item", "Audit", "1", "100", "--date", "2026-09-30", "--send")
        try ok("invoice", "new", "Acme", "--item", "Design", "2", "150", "--date", "2026-10-01", "--send")
        try ok("invoice", "new", "Globex", "--item", "Design review", "1", "500", "--date", "2026-10-31")
        func numbers(_ arguments: String...) throws -> [String] {
            let result = try json(["invoices"] + arguments)
            // The summary always covers every invoice; the list honours the filters.
            #expect(result["outstanding"] as? String == "400.00")
            return (result["invoices"] as! [[String: Any]]).map { $0["number"] as! String }
        }
        #expect(try numbers("--from", "2026-10-01", "--to", "2026-10-31") == ["INV-0003", "INV-0002"])
        #expect(try numbers("--to", "2026-09-30") == ["INV-0001"])
        #expect(try numbers("--min", "300", "--max", "500") == ["INV-0003", "INV-0002"])
        #expect(try numbers("--max", "100") == ["INV-0001"])
        #expect(try numbers("--text", "design") == ["INV-0003", "INV-0002"])
        #expect(try numbers("--text", "globex") == ["INV-0003"])
        #expect(try numbers("--text", "inv-0001") == ["INV-0001"])
        #expect(try numbers("--client", "Acme", "--text", "design") == ["INV-0002"])
        #expect(try run(["invoices", "--text", "zebra"]).stdout == "No invoices match.\n")
        for bad in [["--from", "2026-13-01"], ["--from", "2026-11-01", "--to", "2026-10-01"], ["--min", "-1"]] {
            #expect(try run(["invoices"] + bad).status == 64, "\(bad)")
        }
    }

    /// The change columns agree with the values put in, and each category with its accounts.
    @Test func accountListShowsChangeOverAMonthAndAYear() throws {
        _ = try sandbox.initVault()
        try ok("account", "add", "Savings A", "--category", "Savings", "--value", "1000", "--date", "2025-11-22")
        try ok("update", "Savings A", "1200", "--date", "2026-10-22")
        try ok("update", "Savings A", "1500")
        try ok("account", "add", "Savings B", "--category", "Savings", "--value", "500", "--date", "2025-06-01")
        try ok("update", "Savings B", "450", "--date", "2026-11-01")
        try ok(
            "account", "add", "Loan", "--category", "Loans", "--liability", "--value", "2000", "--date", "2026-10-01")
        try ok("update", "Loan", "1500")
        try ok("account", "add", "Empty", "--category", "Cash", "--value", "0", "--date", "2026-10-01")
        try ok("update", "Empty", "50")
        try ok("account", "add", "New", "--category", "Cash", "--value", "70", "--date", "2026-11-10")

        let list = try json("account", "list")
        let accounts = Dictionary(
            uniqueKeysWithValues: (list["accounts"] as! [[String: Any]]).map { ($0["name"] as! String, $0) })
        func check(_ row: [String: Any]?, _ m: String?, _ mp: Double?, _ y: String?, _ yp: Double?) {
            #expect(row?["change1m"] as? String == m, "\(String(describing: row))")
            #expect((row?["changePercent1m"] as? NSNumber)?.doubleValue == mp, "\(String(describing: row))")
            #expect(row?["change1y"] as? String == y, "\(String(describing: row))")
            #expect((row?["changePercent1y"] as? NSNumber)?.doubleValue == yp, "\(String(describing: row))")
            for key in ["change1m", "changePercent1m", "change1y", "changePercent1y"] {
                #expect(row?.keys.contains(key) == true, "\(key)")
            }
        }
        check(accounts["Savings A"], "300.00", 25, "500.00", 50)
        check(accounts["Savings B"], "-50.00", -10, "-50.00", -10)
        // A liability in its own terms (the amount owed): a debt paid down is a negative change.
        check(accounts["Loan"], "-500.00", -25, nil, nil)
        // From zero: a change, but no percentage of nothing; not there a month ago: null.
        check(accounts["Empty"], "50.00", nil, nil, nil)
        check(accounts["New"], nil, nil, nil, nil)
        #expect(accounts["Savings A"]?["value"] as? String == "1500.00")

        let categories = Dictionary(
            uniqueKeysWithValues: (list["categories"] as! [[String: Any]]).map { ($0["name"] as! String, $0) })
        #expect(categories["Savings"]?["value"] as? String == "1950.00")
        #expect(categories["Savings"]?["accounts"] as? Int == 2)
        check(categories["Savings"], "250.00", 14.7, "450.00", 30)  // 250 of 1,700: 14.705…%
        // A category's change is of its total, so the account added since counts in full.
        #expect(categories["Cash"]?["value"] as? String == "120.00")
        check(categories["Cash"], "120.00", nil, nil, nil)
        check(categories["Loans"], "-500.00", -25, nil, nil)
        // Each category's value is the sum of its accounts' values.
        for (name, category) in categories {
            let members = accounts.values.filter { $0["category"] as? String == name }
            let sum = members.compactMap { Decimal(string: $0["value"] as? String ?? "") }.reduce(0, +)
            #expect(Decimal(string: category["value"] as! String) == sum, "\(name)")
        }

        // The same figures as the other reports: each category's total as `assets` gives it, and
        // the categories' changes add up to the overview's change in net worth.
        let assets = try json("assets")
        for row in assets["categories"] as! [[String: Any]] {
            #expect(categories[row["name"] as! String]?["value"] as? String == row["total"] as? String, "\(row)")
        }
        let signed = categories.values.map { category -> Decimal in
            let change = Decimal(string: category["change1m"] as! String)!
            return category["kind"] as? String == "liability" ? -change : change
        }
        let overview = try json("overview")
        #expect(Decimal(string: overview["changeSinceLastMonth"] as! String) == signed.reduce(0, +))

        // Text: the liability reads as a negative amount, so paying it down shows as a rise.
        let text = try run(["account", "list"]).stdout
        let loan = try #require(text.split(separator: "\n").first { $0.contains("Loan ") })
        #expect(loan.contains("-£1,500.00") && loan.contains("+£500.00") && loan.contains("+25.0%"), "\(loan)")
        #expect(text.contains("Category") && text.contains("1m change") && text.contains("1y %"))
    }
}
