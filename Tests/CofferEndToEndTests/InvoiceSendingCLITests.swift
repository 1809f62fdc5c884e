import CofferTestSupport
import FinanceCore
import Foundation
import Testing

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// Invoices a freelancer can send: the sender profile, discounts and credits, the number
/// format, drafts edited, deleted and duplicated, reminders recorded, and the page itself —
/// with hostile text everywhere a client or the sender can type it.
@Suite struct InvoiceSendingCLITests {
    let sandbox = Sandbox()

    func run(_ arguments: [String], today: String = "2026-11-01") throws -> RunResult {
        try sandbox.run(arguments, environment: ["COFFER_PASSPHRASE": "old passphrase", "COFFER_TODAY": today])
    }

    func ok(_ arguments: String..., today: String = "2026-11-01") throws -> String {
        let result = try run(arguments, today: today)
        #expect(result.status == 0, "\(arguments): \(result.stderr)")
        return result.stdout
    }

    func json(_ arguments: String..., today: String = "2026-11-01") throws -> [String: Any] {
        let result = try run(arguments + ["--json"], today: today)
        #expect(result.status == 0, "\(arguments): \(result.stderr)")
        return try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as! [String: Any]
    }

    func refused(_ arguments: String..., today: String = "2026-11-01") throws {
        let result = try run(arguments, today: today)
        #expect(result.status == 64, "\(arguments): \(result.status) \(result.stderr)")
    }

    static let hostileClient = "Acme <script>alert(1)</script> & \"Sons\" ]]>"
    static let hostileAddress = "1 High St\n<img onerror=x>\nLondon & Co ]]>"
    static let hostileItem = "Design &amp; <b>work</b> &bogus; ]]>"
    static let hostileNotes = "Thanks! <!-- & --> 'quoted' ]]>"
    static let hostileSender = "Jane <Doe> & \"Partners\""

    func setUp(sender: Bool = true) throws {
        _ = try sandbox.initVault()
        _ = try ok("client", "add", Self.hostileClient, "--address", Self.hostileAddress, "--terms", "14")
        guard sender else { return }
        _ = try ok(
            "invoice", "sender", "set", "--name", Self.hostileSender, "--address", "2 Low Rd\n<Leeds> & LS1",
            "--email", "jane@example.com", "--tax-number", "GB 123 <456>", "--payment-instructions",
            "Bank transfer within 14 days, quoting the invoice number", "--bank-details",
            "Sort code 12-34-56\nAccount 12345678 & <ref>", "--tax-label", "VAT")
    }

    @Test func senderDiscountsCreditsPaymentsAndThePage() throws {
        try setUp()
        let sender = try json("invoice", "sender", "show")
        #expect(sender["name"] as? String == Self.hostileSender)
        #expect(sender["address"] as? String == "2 Low Rd\n<Leeds> & LS1", "line breaks kept")
        #expect(sender["taxLabel"] as? String == "VAT" && sender["numberFormat"] as? String == "INV-{0000}")
        #expect(sender["taxNumber"] as? String == "GB 123 <456>")

        // 2.5 × 120 + 19.99 = 319.99; 10% off 32.00 (31.999); subtotal 287.99; VAT 57.60 (57.598);
        // less the 50.00 deposit: 295.59.
        _ = try ok(
            "invoice", "new", "acme", "--item", Self.hostileItem, "2.5", "120", "--item", "Hosting", "1", "19.99",
            "--discount", "Loyalty", "10%", "--credit", "Deposit received", "50", "--tax", "20%", "--notes",
            Self.hostileNotes, "--send")
        let shown = try ok("invoice", "show", "1")
        #expect(shown.contains("VAT 20%") && shown.contains("£57.60"), "\(shown)")
        #expect(shown.contains("Subtotal") && shown.contains("£287.99") && shown.contains("-£32.00"))
        #expect(try json("invoice", "show", "1")["total"] as? String == "295.59")
        _ = try ok("invoice", "pay", "1", "--amount", "100", "--date", "2026-11-05", today: "2026-11-06")

        let file = sandbox.directory.path("invoice.html")
        _ = try ok("invoice", "export", "1", "--html", file.path, today: "2026-11-06")
        let html = try String(contentsOf: file, encoding: .utf8)
        #expect(!html.contains("<script") && !html.contains("<img") && !html.contains("<b>"), "escaped")
        #expect(!html.contains("&bogus;") && html.contains("&amp;bogus;"), "an entity-like text is escaped too")
        #expect(!html.contains("src=") && !html.contains("href="), "nothing fetched")
        #expect(html.contains("@media print"))

        let document = try XMLDocument(data: Data(contentsOf: file), options: [])
        func text(_ xpath: String) throws -> [String] { try document.nodes(forXPath: xpath).compactMap(\.stringValue) }
        func one(_ id: String) throws -> String? { try text("//*[@id='\(id)']").first }
        #expect(try one("client") == Self.hostileClient, "hostile text comes back intact")
        #expect(
            try text("//*[@id='billed-to']/*[@class='address']") == [
                Self.hostileAddress.replacingOccurrences(of: "\n", with: "")
            ])
        #expect(try text("//*[@id='billed-to']/*[@class='address']/*[local-name()='br']").count == 2, "line breaks")
        #expect(try text("//*[@id='sender']/*[@class='name']") == [Self.hostileSender])
        #expect(try one("tax-number") == "GB 123 <456>")
        #expect(try text("//*[@class='tax-number']") == ["VAT number: GB 123 <456>"])
        #expect(try text("//*[@class='bank-details']") == ["Sort code 12-34-56Account 12345678 & <ref>"])
        #expect(
            try text("//*[@class='payment-instructions']") == [
                "Bank transfer within 14 days, quoting the invoice number"
            ])
        #expect(try text("//*[@class='notes']") == [Self.hostileNotes])
        #expect(
            try text("//*[@class='description']") == [Self.hostileItem, "Hosting", "Loyalty (10%)", "Deposit received"])
        #expect(try text("//*[@class='discount']/*[@class='amount']") == ["-£32.00"])
        #expect(try text("//*[@class='credit']/*[@class='amount']") == ["-£50.00"])
        #expect(try one("subtotal") == "£287.99")
        #expect(try one("tax") == "£57.60")
        #expect(try text("//*[@id='tax']/../*[local-name()='th']") == ["VAT 20%"])
        #expect(try one("grand-total") == "£295.59" && one("total") == "£295.59")
        #expect(try text("//*[@class='payment']/*") == ["2026-11-05", "£100.00"])
        #expect(try one("balance") == "£195.59")
        #expect(try text("//*[local-name()='title']") == ["Invoice INV-0001"])

        let image = try Chromium.screenshot(file, sandbox: sandbox, size: "1000,1400")
        #expect(image.map { $0.count > 20_000 } ?? true, "a drawn page, not a blank one")

        // Tax instead of VAT by the setting; a field cleared with an empty value.
        _ = try ok("invoice", "sender", "set", "--tax-label", "Tax", "--tax-number", "")
        _ = try ok("invoice", "export", "1", "--html", file.path, today: "2026-11-06")
        let relabelled = try XMLDocument(data: Data(contentsOf: file), options: [])
        #expect(
            try relabelled.nodes(forXPath: "//*[@id='tax']/../*[local-name()='th']").compactMap(\.stringValue) == [
                "Tax 20%"
            ])
        #expect(try relabelled.nodes(forXPath: "//*[@id='tax-number']").isEmpty)
        #expect(try json("invoice", "sender", "show")["taxNumber"] is NSNull)

        try refused("invoice", "sender", "set", "--tax-label", "GST")
        try refused("invoice", "sender", "set", "--name", "Jane\u{1B}[2J")
        try refused("invoice", "sender", "set")
    }

    @Test func totalsBelowZeroAndBadLinesAreRefused() throws {
        try setUp(sender: false)
        try refused("invoice", "new", "acme", "--item", "A", "1", "100", "--credit", "Deposit", "150")
        try refused("invoice", "new", "acme", "--item", "A", "1", "100", "--discount", "Too much", "101")
        try refused("invoice", "new", "acme", "--item", "A", "1", "100", "--discount", "Half", "150%")
        try refused("invoice", "new", "acme", "--item", "A", "1", "100", "--discount", "Nothing")
        try refused("invoice", "new", "acme", "--item", "A", "1", "100", "--credit", "Minus", "-5")
        #expect((try json("invoices")["invoices"] as? [[String: Any]])?.isEmpty == true, "nothing was written")
        // A fixed discount and a credit to exactly zero are allowed: 100 - 20 + 20% tax 16 - 96 = 0.
        _ = try ok(
            "invoice", "new", "acme", "--item", "A", "1", "100", "--discount", "Friends", "20", "--credit", "Paid",
            "96",
            "--tax", "20%")
        #expect(try json("invoice", "show", "1")["total"] as? String == "0.00")
    }

    @Test func theNumberFormatIsFixedWhenAnInvoiceIsMade() throws {
        try setUp(sender: false)
        _ = try ok("invoice", "new", "acme", "--item", "A", "1", "10")
        _ = try ok("invoice", "sender", "set", "--number-format", "INV-{YYYY}-{0000}")
        #expect(
            try ok("invoice", "new", "acme", "--item", "B", "1", "20", today: "2027-01-03").contains("INV-2027-0002"))
        _ = try ok("invoice", "sender", "set", "--number-format", "Q{00}")
        _ = try ok("invoice", "new", "acme", "--item", "C", "1", "30")
        let numbers = (try json("invoices")["invoices"] as! [[String: Any]]).map { $0["number"] as? String }
        #expect(Set(numbers) == ["INV-0001", "INV-2027-0002", "Q03"], "earlier references are never renumbered")
        // By the reference as printed (any case) or by the number alone.
        #expect(try json("invoice", "show", "inv-2027-0002")["total"] as? String == "20.00")
        #expect(try json("invoice", "show", "2")["number"] as? String == "INV-2027-0002")
        #expect(try json("invoice", "show", "Q03")["total"] as? String == "30.00")
        #expect(try json("invoice", "show", "INV-0001")["total"] as? String == "10.00")
        for bad in ["INV", "INV-{000}-{00}", "INV {0000}", "INV-{YY}-{0000}", "{0000}<script>", "{0000000000}"] {
            try refused("invoice", "sender", "set", "--number-format", bad)
        }
        #expect(try json("invoice", "sender", "show")["numberFormat"] as? String == "Q{00}")
    }

    @Test func draftsAreEditedDeletedAndDuplicated() throws {
        try setUp(sender: false)
        _ = try ok("invoice", "new", "acme", "--item", "Design", "2", "100", "--tax", "20%", "--notes", "First")
        _ = try ok("invoice", "edit", "1", "--item", "Design", "3", "100", "--discount", "Loyalty", "10%")
        var shown = try json("invoice", "show", "1")
        #expect(shown["total"] as? String == "324.00", "(300 - 30) × 1.2")
        _ = try ok("invoice", "edit", "1", "--no-tax", "--due", "2026-12-24", "--notes", "Second")
        shown = try json("invoice", "show", "1")
        #expect(shown["total"] as? String == "270.00" && shown["due"] as? String == "2026-12-24")
        _ = try ok("invoice", "edit", "1", "--no-discounts")
        #expect(try json("invoice", "show", "1")["total"] as? String == "300.00", "the items are kept")
        try refused("invoice", "edit", "1")
        try refused("invoice", "edit", "1", "--credit", "Too much", "301")
        try refused("invoice", "edit", "1", "--tax", "5%", "--no-tax")
        _ = try ok("undo")
        #expect(try json("invoice", "show", "1")["total"] as? String == "270.00", "undo takes the edit back")

        // Duplicate: a new draft, next number, same lines; dated --date and due as many days later.
        _ = try ok("invoice", "duplicate", "1", "--date", "2026-11-10")
        let copy = try json("invoice", "show", "2")
        #expect(copy["status"] as? String == "draft" && copy["total"] as? String == "270.00")
        #expect(copy["issued"] as? String == "2026-11-10" && copy["due"] as? String == "2027-01-02")

        // Delete a draft (confirm with --yes when not at a terminal); its number is never reused.
        try refused("invoice", "delete", "2")
        _ = try ok("invoice", "delete", "2", "--yes")
        try refused("invoice", "show", "2")
        _ = try ok("undo")
        #expect(try json("invoice", "show", "2")["status"] as? String == "draft", "undo brings it back")
        _ = try ok("invoice", "delete", "2", "--yes")
        #expect(try ok("invoice", "new", "acme", "--item", "X", "1", "5").contains("INV-0003"))

        // Sent (or void) invoices are frozen: edit and delete exit 64 and change nothing.
        _ = try ok("invoice", "send", "1")
        try refused("invoice", "edit", "1", "--notes", "Changed")
        try refused("invoice", "delete", "1", "--yes")
        _ = try ok("invoice", "void", "3")
        try refused("invoice", "edit", "3", "--notes", "Changed")
        #expect(try json("invoice", "show", "1")["total"] as? String == "270.00")
    }

    @Test func remindersAreRecordedSignedAndUndoable() throws {
        try setUp()
        _ = try ok("invoice", "new", "acme", "--item", "Design", "1", "500")
        try refused("invoice", "remind", "1")
        _ = try ok("invoice", "send", "1")
        let dry = try ok("invoice", "remind", "1", "--dry-run", today: "2026-11-20")
        #expect(dry.contains("Kind regards\n\(Self.hostileSender)\njane@example.com"), "\(dry)")
        #expect(dry.contains("Sort code 12-34-56"), "how to pay")
        #expect((try json("invoice", "show", "1")["reminders"] as? [String]) == [], "--dry-run records nothing")
        let first = try run(["invoice", "remind", "1"], today: "2026-11-20")
        #expect(first.status == 0 && first.stderr.contains("Recorded reminder 1 on INV-0001"), "\(first.stderr)")
        let second = try ok("invoice", "remind", "1", today: "2026-11-27")
        #expect(second.contains("I last wrote about it on 2026-11-20."))
        #expect((try json("invoice", "show", "1")["reminders"] as? [String]) == ["2026-11-20", "2026-11-27"])
        #expect(try ok("invoice", "show", "1").contains("Reminders sent: 2026-11-20, 2026-11-27"))
        let file = sandbox.directory.path("reminded.html")
        _ = try ok("invoice", "export", "1", "--html", file.path)
        let page = try XMLDocument(data: Data(contentsOf: file), options: [])
        #expect(
            try page.nodes(forXPath: "//*[@class='reminder']").compactMap(\.stringValue) == [
                "2026-11-20", "2026-11-27",
            ])
        _ = try ok("undo")
        #expect((try json("invoice", "show", "1")["reminders"] as? [String]) == ["2026-11-20"])
        _ = try ok("invoice", "pay", "1", today: "2026-11-28")
        try refused("invoice", "remind", "1", today: "2026-11-29")
    }

    /// What review found: notes keep their line breaks; a total too large is refused (64) before
    /// it can stop the reports; a draft past its due date is not "overdue"; `remind` keeps its
    /// advice off a pipe; an edited export that the command line would refuse is refused too.
    @Test func reviewFindingsStayFixed() throws {
        _ = try sandbox.initVault()
        _ = try ok("client", "add", "Acme")
        _ = try ok("invoice", "new", "Acme", "--item", "Work", "1", "100", "--notes", "Line one\n\tLine two")
        let shown = try ok("invoice", "show", "1")
        #expect(shown.contains("Line one") && shown.contains("Line two"), "\(shown)")
        try refused("invoice", "new", "Acme", "--item", "x", "9999", "1000000000000", "--tax", "100%")
        #expect((try json("invoices")["invoices"] as? [Any])?.count == 1, "nothing was written")
        let draft = try ok("invoices", today: "2026-12-31")
        #expect(draft.contains("○ draft") && !draft.contains("Overdue"), "\(draft)")
        _ = try ok("invoice", "send", "1")
        let reminder = try run(["invoice", "remind", "1"], today: "2026-12-31")
        #expect(reminder.status == 0 && !reminder.stderr.contains("Undo with"), "\(reminder.stderr)")
        #expect(reminder.stderr.contains("Recorded reminder 1"), "the fact is still said: \(reminder.stderr)")

        // An export edited to hold what the command line refuses does not import.
        let export = sandbox.directory.path("export.json")
        _ = try ok("export", "json", "--out", export.path)
        var document = try JSONSerialization.jsonObject(with: Data(contentsOf: export)) as! [String: Any]
        var invoices = document["invoices"] as! [[String: Any]]
        var credited = invoices[0]
        var lines = credited["items"] as! [[String: Any]]
        lines.append(["description": "Deposit", "quantity": "1", "unitPrice": "500.00", "kind": "credit"])
        credited["items"] = lines
        for (name, edited) in [
            ("a credit above the total", [credited]),
            ("two invoices with one number", [invoices[0], invoices[0].merging(["id": UUID().uuidString]) { $1 }]),
        ] {
            document["invoices"] = edited
            let file = sandbox.directory.path("edited.json")
            try JSONSerialization.data(withJSONObject: document).write(to: file)
            let copy = sandbox.directory.path("copy-\(UUID().uuidString).coffer").path
            _ = try ok("init", "--kdf", "interactive", "--vault", copy)
            let imported = try run(["import", "json", file.path, "--vault", copy])
            #expect(imported.status == 64 && imported.stderr.contains("invoices["), "\(name): \(imported.stderr)")
        }
        // A counter below the file's numbers is raised: the next number is never one in use.
        invoices = document["invoices"] as! [[String: Any]]
        document["invoices"] = [invoices[0]]
        document["invoiceCounter"] = 0
        let file = sandbox.directory.path("counter.json")
        try JSONSerialization.data(withJSONObject: document).write(to: file)
        let copy = sandbox.directory.path("counter.coffer").path
        _ = try ok("init", "--kdf", "interactive", "--vault", copy)
        _ = try ok("import", "json", file.path, "--vault", copy)
        let next = try ok("invoice", "new", "Acme", "--item", "More", "1", "5", "--vault", copy)
        #expect(next.contains("INV-0002"), "\(next)")
    }
}
