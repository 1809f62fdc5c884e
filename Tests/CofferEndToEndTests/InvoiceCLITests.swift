import CofferTestSupport
import FinanceCore
import Foundation
import GRDB
import Testing
import VaultStore

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// Invoices through the real binary, with COFFER_TODAY moving across the due date.
@Suite struct InvoiceCLITests {
    let sandbox = Sandbox()

    func run(_ arguments: [String], today: String = "2026-11-01") throws -> RunResult {
        try sandbox.run(arguments, environment: ["COFFER_PASSPHRASE": "old passphrase", "COFFER_TODAY": today])
    }

    func ok(_ arguments: String..., today: String = "2026-11-01") throws {
        let result = try run(arguments, today: today)
        #expect(result.status == 0, "\(arguments): \(result.stderr)")
    }

    func json(_ arguments: String..., today: String = "2026-11-01") throws -> [String: Any] {
        let result = try run(arguments + ["--json"], today: today)
        #expect(result.status == 0, "\(arguments): \(result.stderr)")
        return try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as! [String: Any]
    }

    func setUp() throws {
        _ = try sandbox.initVault()
        // With no client yet, the first-run hint starts with adding one (an invoice needs one).
        let first = try run(["invoices"]).stdout
        #expect(first.contains("First add who you invoice: coffer client add NAME"), "\(first)")
        #expect(!first.contains("invoice new CLIENT"))
        try ok("client", "add", "Acme Ltd", "--email", "ap@acme.example", "--address", "1 High St", "--terms", "14")
        #expect(
            try run(["invoices"]).stdout.contains(
                "let's get you paid: coffer invoice new \"Acme Ltd\" --item \"Design work\" 1 500"))
        // 2.5 × 120.00 + 1 × 19.99 = 319.99; 20% tax 64.00 (63.998 rounded half away from zero); total 383.99.
        try ok(
            "invoice", "new", "acme", "--item", "Design <work> & more", "2.5", "120", "--item", "Hosting", "1", "19.99",
            "--tax", "20%", "--send")
    }

    @Test func lifecycleDashboardAndOverview() throws {
        try setUp()
        var list = try json("invoices")
        #expect(list["outstanding"] as? String == "383.99")
        var invoice = (list["invoices"] as! [[String: Any]])[0]
        #expect(invoice["number"] as? String == "INV-0001")
        #expect(invoice["client"] as? String == "Acme Ltd")
        #expect(invoice["total"] as? String == "383.99")
        #expect(invoice["due"] as? String == "2026-11-15")
        #expect(invoice["status"] as? String == "sent")
        #expect(invoice["relativeDue"] as? String == "Due in 14 days")
        for key in ["outstanding", "overdue", "overdueCount", "paidThisMonth", "ageing", "invoices"] {
            #expect(list[key] != nil, "\(key)")
        }

        // Across the due date it becomes overdue, without anything being written.
        list = try json("invoices", today: "2026-11-17")
        invoice = (list["invoices"] as! [[String: Any]])[0]
        #expect(invoice["status"] as? String == "overdue")
        #expect(invoice["relativeDue"] as? String == "Overdue by 2 days")
        #expect(list["overdueCount"] as? Int == 1)
        #expect((list["ageing"] as! [String: String])["days1to30"] == "383.99")
        #expect(
            try run(["invoices", "--overdue"], today: "2026-11-10").stdout.contains(
                "No overdue invoices. All caught up."))

        // Net worth counts it as receivable, and the overview says what is outstanding.
        let overview = try json("overview", today: "2026-11-17")
        #expect(overview["invoicesReceivable"] as? String == "383.99")
        #expect(overview["netWorth"] as? String == "383.99")
        #expect((overview["invoices"] as? [String: Any])?["overdueCount"] as? Int == 1)
        #expect(
            try run(["overview"], today: "2026-11-17").stdout.contains(
                "Invoices: £383.99 outstanding, ⚠ £383.99 overdue (1)"))
        try ok("settings", "--receivables", "off")
        #expect(try json("overview", today: "2026-11-17")["netWorth"] as? String == "0.00")
        #expect(try json("settings")["includeReceivables"] as? Bool == false)
        try ok("settings", "--receivables", "on")
        let settings = try json("settings")
        #expect(settings["includeReceivables"] as? Bool == true)
        #expect(settings["currency"] as? String == "GBP")
        let client = try json("client", "show", "Acme Ltd", today: "2026-11-17")
        #expect(client["name"] as? String == "Acme Ltd")
        #expect(client["termsDays"] as? Int == 14)
        #expect(client["email"] as? String == "ap@acme.example")
        #expect((client["invoices"] as? [[String: Any]])?.map { $0["number"] as? String } == ["INV-0001"])
        #expect((client["invoices"] as? [[String: Any]])?.first?["outstanding"] as? String == "383.99")

        // Partial, then full payment; overpayment refused.
        try ok("invoice", "pay", "INV-0001", "--amount", "100", today: "2026-11-20")
        #expect(
            (try json("invoices", today: "2026-11-20")["invoices"] as! [[String: Any]])[0]["paid"] as? String
                == "100.00")
        #expect(try run(["invoice", "pay", "1", "--amount", "300"], today: "2026-11-20").status == 64)
        // A payment dated before the invoice was issued (2026-11-01) is probably a typo: --yes records it.
        let early = try run(["invoice", "pay", "1", "--amount", "10", "--date", "2026-10-30"], today: "2026-11-20")
        #expect(early.status == 64, "\(early.stderr)")
        #expect(early.stderr.contains("The payment date 2026-10-30 is before INV-0001 was issued (2026-11-01)."))
        #expect(early.stderr.contains("hint: If it is right, run the command again with --yes."))
        try ok("invoice", "pay", "1", "--amount", "10", "--date", "2026-10-30", "--yes", today: "2026-11-20")
        try ok("undo")
        try ok("invoice", "pay", "1", today: "2026-11-25")
        let paid = try json("invoices", today: "2026-11-30")
        #expect((paid["invoices"] as! [[String: Any]])[0]["status"] as? String == "paid")
        #expect((paid["invoices"] as! [[String: Any]])[0]["relativeDue"] as? String == "Paid 5 days ago")
        #expect(paid["paidThisMonth"] as? String == "383.99")
        #expect(try run(["invoice", "void", "1"]).status == 64, "a paid invoice cannot be voided")
        #expect(try run(["client", "remove", "Acme"]).stderr.contains("has 1 invoice"))

        // Undo takes the last payment back.
        try ok("undo")
        #expect(
            (try json("invoices", today: "2026-11-30")["invoices"] as! [[String: Any]])[0]["paid"] as? String
                == "100.00")
    }

    @Test func numbersAreSequentialAndNeverReused() throws {
        try setUp()
        try ok("invoice", "new", "Acme", "--item", "Logo", "1", "300")
        try ok("undo")
        try ok("invoice", "new", "Acme", "--item", "Logo", "1", "300")
        let numbers = (try json("invoices")["invoices"] as! [[String: Any]]).map { $0["number"] as! String }
        #expect(numbers == ["INV-0003", "INV-0001"], "INV-0002 was undone and is never issued again")
        try ok("invoice", "void", "INV-0003")
        #expect((try json("invoices")["invoices"] as! [[String: Any]]).first?["status"] as? String == "void")
    }

    @Test func remindAndHTMLExport() throws {
        try setUp()
        let reminder = try run(["invoice", "remind", "1"], today: "2026-11-17")
        #expect(reminder.stdout.contains("INV-0001"))
        #expect(reminder.stdout.contains("£383.99"))
        #expect(reminder.stdout.contains("overdue by 2 days"))

        let file = sandbox.directory.path("invoice.html")
        try ok("invoice", "export", "1", "--html", file.path)
        #expect(fileMode(file) == 0o600)
        let document = try XMLDocument(data: Data(contentsOf: file), options: [])
        func text(_ xpath: String) throws -> [String] { try document.nodes(forXPath: xpath).compactMap(\.stringValue) }
        #expect(try text("//*[local-name()='title']") == ["Invoice INV-0001"])
        #expect(try text("//*[@id='number']") == ["Invoice INV-0001"])
        #expect(try text("//*[@id='client']") == ["Acme Ltd"])
        #expect(try text("//*[@id='total']") == ["£383.99"])
        #expect(
            try text("//*[@class='description']") == ["Design <work> & more", "Hosting"],
            "escaped text comes back intact")
        #expect(try text("//*[@class='item']/*[@class='amount']") == ["£300.00", "£19.99"])
    }

    @Test func invalidInputExits64AndChangesNothing() throws {
        try setUp()
        let before = try withRawDatabase(sandbox.vault) {
            try Row.fetchAll($0, sql: "SELECT * FROM page ORDER BY locator").map(\.description)
        }
        let attempts: [[String]] = [
            ["client", "add", "Acme Ltd"], ["client", "add", ""], ["client", "add", "X", "--terms", "-3"],
            ["invoice", "new", "Nobody", "--item", "A", "1", "1"], ["invoice", "new", "Acme"],
            ["invoice", "new", "Acme", "--item", "A", "1"],
            ["invoice", "new", "Acme", "--item", "A", "zero", "1"],
            ["invoice", "new", "Acme", "--item", "A", "1", "12,5O"],
            ["invoice", "new", "Acme", "--item", "A", "1", "1", "--tax", "lots"],
            ["invoice", "new", "Acme", "--item", "A", "1", "1", "--terms", "5", "--due", "2026-12-01"],
            ["invoice", "new", "Acme", "--item", "A", "1", "1", "--due", "2020-01-01"], ["invoice", "pay", "INV-0009"],
            ["invoice", "pay", "1", "--amount", "0"], ["invoice", "pay", "1", "--amount", "9999"],
            ["invoice", "send", "1"],
            ["invoice", "remind", "42"], ["invoices", "--client", "Nobody"], ["settings", "--receivables", "maybe"],
        ]
        for arguments in attempts {
            let result = try run(arguments)
            #expect(result.status == 64, "\(arguments): \(result.status) \(result.stderr)")
        }
        let after = try withRawDatabase(sandbox.vault) {
            try Row.fetchAll($0, sql: "SELECT * FROM page ORDER BY locator").map(\.description)
        }
        #expect(before == after)
    }
}
