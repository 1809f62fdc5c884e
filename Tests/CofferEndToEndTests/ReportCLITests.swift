import CofferTestSupport
import Foundation
import Testing

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// Reports over time, through the real binary: every figure agrees with `coffer budget --month`
/// and `coffer overview --as-of` for every month, and the questions the reports exist for have
/// answers (eating out each month, net worth since the start, the slowest client).
@Suite struct ReportCLITests {
    let sandbox = Sandbox()
    let passphrase = "report passphrase"

    @discardableResult
    func coffer(_ arguments: [String], today: String = "2026-05-20") throws -> RunResult {
        let result = try sandbox.run(
            arguments, environment: ["COFFER_PASSPHRASE": passphrase, "COFFER_TODAY": today])
        #expect(result.status == 0, "\(arguments): \(result.stderr)")
        return result
    }

    func json(_ arguments: [String], today: String = "2026-05-20") throws -> [String: Any] {
        let result = try coffer(arguments + ["--json"], today: today)
        return (try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]) ?? [:]
    }

    /// January to May 2026: two accounts valued as time goes, spending in three categories,
    /// salary, savings to a goal, and two clients: one paying in 10 days, one in 45.
    func setUp() throws {
        _ = try sandbox.initVault(passphrase: passphrase)
        try coffer(
            ["account", "add", "Current", "--category", "Cash", "--value", "1000", "--date", "2026-01-05"],
            today: "2026-01-05")
        try coffer(
            [
                "account", "add", "Visa", "--category", "Credit card", "--liability", "--value", "200", "--date",
                "2026-01-05",
            ], today: "2026-01-05")
        for (account, value, date) in [
            ("Current", "1200", "2026-02-10"), ("Current", "900", "2026-03-15"), ("Visa", "350", "2026-03-20"),
            ("Current", "1500", "2026-04-20"),
        ] {
            try coffer(["update", account, value, "--date", date, "--yes"], today: date)
        }
        try coffer(["income", "add", "Salary", "2000", "--frequency", "monthly"])
        try coffer(["goal", "add", "Holiday"])
        for (command, date) in [
            (["spend", "12.50", "Dining Out"], "2026-01-10"), (["spend", "30", "Dining Out"], "2026-03-02"),
            (["spend", "18.20", "Dining Out"], "2026-03-28"), (["spend", "80", "Groceries"], "2026-02-03"),
            (["spend", "20", "Groceries"], "2026-04-01"), (["spend", "45", "Utilities"], "2026-05-02"),
            (["earn", "2000", "Salary"], "2026-01-25"), (["earn", "2000", "Salary"], "2026-02-25"),
            (["earn", "2100", "Salary"], "2026-03-25"), (["save", "100", "Holiday"], "2026-02-15"),
            (["save", "150", "Holiday"], "2026-04-15"),
        ] {
            try coffer(command + ["--date", date, "--yes"], today: date)
        }
        try coffer(["client", "add", "Quick Co"], today: "2026-02-01")
        try coffer(["client", "add", "Slow Ltd"], today: "2026-02-01")
        try coffer(["invoice", "new", "quick", "--item", "Design", "1", "400", "--send"], today: "2026-02-01")
        try coffer(["invoice", "new", "slow", "--item", "Build", "2", "300", "--send"], today: "2026-02-01")
        try coffer(["invoice", "new", "slow", "--item", "Support", "1", "100", "--send"], today: "2026-04-01")
        try coffer(["invoice", "pay", "INV-0001", "--date", "2026-02-11"], today: "2026-02-11")
        try coffer(["invoice", "pay", "INV-0002", "--date", "2026-03-18"], today: "2026-03-18")
    }

    static let months = ["2026-01", "2026-02", "2026-03", "2026-04", "2026-05"]

    @Test func everyReportAgreesWithTheBudgetAndTheOverviewEveryMonth() throws {
        try setUp()
        let range = ["--from", "2026-01", "--to", "2026-05"]
        let cashflow = try json(["report", "cashflow"] + range)["months"] as? [[String: Any]] ?? []
        let categories = try json(["report", "categories"] + range)
        let grid = categories["categories"] as? [[String: Any]] ?? []
        let worth = try json(["report", "networth"] + range)["months"] as? [[String: Any]] ?? []
        #expect(cashflow.count == 5 && worth.count == 5)
        for (index, month) in Self.months.enumerated() {
            let budget = try json(["budget", "--month", month])
            #expect(cashflow[index]["month"] as? String == month)
            #expect(cashflow[index]["income"] as? String == budget["income"] as? String, "\(month) income")
            #expect(cashflow[index]["spent"] as? String == budget["spent"] as? String, "\(month) spent")
            #expect(cashflow[index]["net"] as? String == budget["remaining"] as? String, "\(month) net")
            for line in budget["categories"] as? [[String: Any]] ?? [] {
                let name = line["name"] as? String ?? ""
                let row = grid.first { $0["name"] as? String == name }
                let shown = (row?["amounts"] as? [String])?[index] ?? "0.00"
                #expect(shown == line["total"] as? String, "\(month) \(name)")
            }
            for type in ["needs", "wants", "savings"] {
                let subtotal = (categories["subtotals"] as? [[String: Any]])?.first { $0["type"] as? String == type }
                #expect((subtotal?["amounts"] as? [String])?[index] == budget[type] as? String, "\(month) \(type)")
            }
            // Net worth at the month end (the 20th in May, today) is the overview's on that day.
            let end = worth[index]["date"] as? String ?? ""
            #expect(end == (index == 4 ? "2026-05-20" : Self.monthEnds[index]))
            let overview = try json(["overview", "--as-of", end])
            #expect(worth[index]["netWorth"] as? String == overview["netWorth"] as? String, "net worth on \(end)")
        }
        // The month-to-month change is the difference, and its percentage of where it started:
        // January ends at 1,000 − 200 = 800; February at 1,200 − 200 + INV-0002's 600 receivable.
        #expect(worth[0]["netWorth"] as? String == "800.00" && worth[1]["netWorth"] as? String == "1600.00")
        #expect(worth[1]["change"] as? String == "800.00" && worth[1]["changePercent"] as? Double == 100)
        #expect(worth[0]["change"] is NSNull)
    }

    static let monthEnds = ["2026-01-31", "2026-02-28", "2026-03-31", "2026-04-30"]

    @Test func theQuestionsReportsAnswer() throws {
        try setUp()
        // What did I spend on eating out each month this year?
        let dining = try json(["report", "categories", "--category", "dining", "--from", "2026-01"])
        let row = (dining["categories"] as? [[String: Any]])?.first
        #expect(row?["name"] as? String == "Dining Out")
        #expect(row?["amounts"] as? [String] == ["12.50", "0.00", "48.20", "0.00", "0.00"], "\(dining)")
        #expect(row?["total"] as? String == "60.70")
        let text = try coffer(["report", "categories", "--category", "Dining Out", "--from", "2026-01"]).stdout
        #expect(text.contains("Dining Out") && text.contains("£48.20") && text.contains("£60.70"), "\(text)")

        // How has my net worth moved since I started?
        let worth = try json(["report", "networth", "--from", "2026-01"])
        let accounts = worth["accounts"] as? [[String: Any]] ?? []
        let current = accounts.first { $0["name"] as? String == "Current" }
        #expect(current?["values"] as? [String] == ["1000.00", "1200.00", "900.00", "1500.00", "1500.00"])
        #expect(current?["change"] as? String == "500.00" && current?["changePercent"] as? Double == 50)

        // Which client pays slowest?
        let invoices = try json(["report", "invoices", "--from", "2026-01"])
        let clients = invoices["clients"] as? [[String: Any]] ?? []
        #expect(clients.map { $0["client"] as? String } == ["Slow Ltd", "Quick Co"], "slowest first")
        #expect(clients.first?["averageDaysToPay"] as? Int == 45 && clients.last?["averageDaysToPay"] as? Int == 10)
        #expect(clients.first?["outstanding"] as? String == "100.00" && clients.first?["invoices"] as? Int == 2)
        let months = invoices["months"] as? [[String: Any]] ?? []
        #expect(months[1]["invoiced"] as? String == "1000.00" && months[1]["received"] as? String == "400.00")
        #expect(months[2]["received"] as? String == "600.00")
    }

    @Test func aYearIsACalendarOrATaxYear() throws {
        try setUp()
        let year = try json(["report", "year", "--year", "2026"])
        #expect(year["year"] as? String == "2026" && year["from"] as? String == "2026-01")
        #expect(year["income"] as? String == "6100.00" && year["spent"] as? String == "455.70", "\(year)")
        #expect(year["net"] as? String == "5644.30")
        let top = (year["topCategories"] as? [[String: Any]])?.first
        #expect(top?["name"] as? String == "Goal: Holiday" && top?["total"] as? String == "250.00")
        let netWorth = year["netWorth"] as? [String: Any]
        // 1,500 − 350, and INV-0003's 100 still owed (receivables count in net worth).
        #expect(netWorth?["start"] as? String == "0.00" && netWorth?["end"] as? String == "1250.00", "\(year)")
        #expect((year["invoices"] as? [String: Any])?["received"] as? String == "1000.00")

        // A UK tax year, from April: 2025/26 holds January to March 2026.
        let tax = try json(["report", "year", "--year", "2025", "--start-month", "4"])
        #expect(tax["year"] as? String == "2025/26" && tax["to"] as? String == "2026-03")
        #expect(tax["income"] as? String == "6100.00")
        // The configuration file sets the start month.
        let config = sandbox.directory.path("config/coffer")
        try FileManager.default.createDirectory(at: config, withIntermediateDirectories: true)
        try Data("[report]\nyear_start = 4\n".utf8).write(to: config.appendingPathComponent("config.toml"))
        let configured = try sandbox.run(
            ["report", "year", "--json"],
            environment: [
                "COFFER_PASSPHRASE": passphrase, "COFFER_TODAY": "2026-05-20",
                "XDG_CONFIG_HOME": sandbox.directory.path("config").path,
            ])
        #expect(configured.status == 0 && configured.stdout.contains("\"year\" : \"2026/27\""), "\(configured)")

        // Any range of months, as every report takes: the figures agree with cashflow's for it.
        let range = try json(["report", "year", "--from", "2026-02", "--to", "2026-04"])
        #expect(range["year"] is NSNull && range["startMonth"] is NSNull, "\(range)")
        #expect(range["from"] as? String == "2026-02" && range["to"] as? String == "2026-04")
        let cashflow = try json(["report", "cashflow", "--from", "2026-02", "--to", "2026-04"])
        let total = cashflow["total"] as? [String: Any]
        #expect(range["income"] as? String == "4100.00" && range["income"] as? String == total?["income"] as? String)
        #expect(
            range["spent"] as? String == total?["spent"] as? String
                && range["net"] as? String == total?["net"] as? String)
        // Net worth the day before the range and on its last day, as the overview gives it then.
        let rangeWorth = range["netWorth"] as? [String: Any]
        #expect(rangeWorth?["start"] as? String == "800.00", "\(range)")
        for (key, day) in [("start", "2026-01-31"), ("end", "2026-04-30")] {
            let overview = try json(["overview", "--as-of", day])
            #expect(rangeWorth?[key] as? String == overview["netWorth"] as? String, "\(key): \(range)")
        }
        let lastThree = try json(["report", "year", "--months", "3"])
        #expect(lastThree["from"] as? String == "2026-03" && lastThree["to"] as? String == "2026-05")
        #expect(try coffer(["report", "year", "--months", "3"]).stdout.hasPrefix("3 months  March 2026 to May 2026"))
        let both = try sandbox.run(
            ["report", "year", "--year", "2026", "--months", "3"], environment: ["COFFER_PASSPHRASE": passphrase])
        #expect(both.status == 64 && both.stderr.hasPrefix("error: Give --year/--start-month or --from/--to/--months"))
    }

    @Test func rangesAreCheckedAndChartsStayOffInAPipe() throws {
        try setUp()
        for bad in [
            ["--from", "2026-05", "--to", "2026-01"], ["--from", "2026-01", "--to", "2026-02", "--months", "2"],
            ["--months", "0"], ["--from", "2026-13"],
        ] {
            let refused = try sandbox.run(
                ["report", "cashflow"] + bad, environment: ["COFFER_PASSPHRASE": passphrase])
            #expect(refused.status == 64, "\(bad): \(refused.stderr)")
        }
        let twelve = try json(["report", "cashflow"])
        #expect((twelve["months"] as? [Any])?.count == 12 && twelve["to"] as? String == "2026-05")
        // Into a pipe, tables only: no chart characters.
        for command in [
            ["report", "cashflow"], ["report", "networth"], ["report", "categories", "--category", "Dining Out"],
        ] {
            let shown = try coffer(command + ["--from", "2026-01"]).stdout
            #expect(!shown.contains("█") && !shown.contains("│"), "\(command): \(shown)")
        }
    }

    /// A liability's change reads the same in the account list and the net worth report over the
    /// same month (today a month end, so the list's month and the report's two month ends meet):
    /// on screen both show it as it counts in net worth, negative, so paying down the demo's
    /// mortgage is a rise; in JSON both give the amount owed and its change.
    @Test func aLiabilitysChangeAgreesBetweenAccountListAndNetWorth() throws {
        let environment = ["COFFER_PASSPHRASE": "demo", "COFFER_TODAY": "2026-10-31"]
        #expect(try sandbox.run(["demo", "--vault", sandbox.vault.path], environment: environment).status == 0)
        func run(_ arguments: [String]) throws -> String {
            let result = try sandbox.run(arguments, environment: environment)
            #expect(result.status == 0, "\(arguments): \(result.stderr)")
            return result.stdout
        }
        /// The mortgage's row: its signed amounts and percentages, in order.
        func mortgage(_ text: String, after heading: String = "") throws -> [String] {
            let section = text.components(separatedBy: heading).last ?? text
            let row = try #require(section.split(separator: "\n").first { $0.contains("Nationwide Mortgage") })
            return row.split(separator: " ").map(String.init).filter {
                $0.range(of: #"^[+-](£[\d,.]+|[\d.]+%)$"#, options: .regularExpression) != nil
            }
        }
        let list = try mortgage(run(["account", "list"]))
        let report = try mortgage(run(["report", "networth", "--months", "2"]), after: "Each account")
        // The list: value, 1m change, 1m %; the report: start, end, change, %.
        #expect(list.count == 3 && report.count == 4, "\(list) \(report)")
        #expect(list[0].hasPrefix("-£") && report[1] == list[0], "the same value owed, negative: \(list) \(report)")
        #expect(report[2] == list[1] && report[3] == list[2], "the same change: \(list) \(report)")
        #expect(list[1].hasPrefix("+£") && list[2].hasPrefix("+"), "paying down is a rise: \(list)")

        func account(_ json: String, _ key: String) throws -> [String: Any] {
            let object = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any]
            let accounts = object?[key] as? [[String: Any]] ?? []
            return try #require(accounts.first { $0["name"] as? String == "Nationwide Mortgage" })
        }
        let listed = try account(run(["account", "list", "--json"]), "accounts")
        let reported = try account(run(["report", "networth", "--months", "2", "--json"]), "accounts")
        #expect(listed["change1m"] as? String == reported["change"] as? String, "\(listed) \(reported)")
        #expect(listed["changePercent1m"] as? Double == reported["changePercent"] as? Double)
        #expect(listed["value"] as? String == (reported["values"] as? [String])?.last)
        #expect(
            "+£" + (listed["change1m"] as? String ?? "").dropFirst() == list[1],
            "JSON gives the amount owed, the screen what it counts for: \(listed) \(list)")
    }

    /// One page: written 0600, said to be plaintext, parsed as XML with the same figures as the
    /// reports, nothing fetched, no script, hostile names escaped; and drawn by Chromium.
    @Test func theHTMLReportIsOneSelfContainedPage() throws {
        try setUp()
        try coffer(["account", "add", "<script>alert(1)</script> & Co", "--category", "Cash", "--value", "5"])
        // Text that looks like an entity stays text (an unescaped `&bogus;` would break the XML).
        try coffer(["account", "add", "R&D; &amp; &bogus;", "--category", "Cash", "--value", "6"])
        let page = sandbox.directory.path("report.html")
        let written = try coffer(["report", "html", "--out", page.path, "--from", "2026-01"])
        #expect(written.stderr.contains("not encrypted"), "\(written.stderr)")
        let mode = (try FileManager.default.attributesOfItem(atPath: page.path)[.posixPermissions] as? Int) ?? 0
        #expect(mode == 0o600)
        let html = try String(contentsOf: page, encoding: .utf8)
        #expect(!html.contains("<script"), "no script, and the hostile name is escaped")
        #expect(html.contains("&lt;script&gt;alert(1)&lt;/script&gt; &amp; Co"))
        for attribute in ["src=", "href=", "@import", "url("] {
            #expect(!html.contains(attribute), "nothing is fetched: \(attribute)")
        }
        #expect(html.contains("R&amp;D; &amp;amp; &amp;bogus;"), "entity-like text escaped")
        let parsed = try HTMLTables(html)
        #expect(
            parsed.tables.values.contains { $0.contains { $0.contains("R&D; &amp; &bogus;") } },
            "and read back as the name it is")
        #expect(parsed.svgCount >= 3, "net worth, distribution and spending charts")
        let monthly = try #require(parsed.tables["Income, spending and the net each month"])
        #expect(monthly.map(\.first) == ["Month", "Jan 2026", "Feb 2026", "Mar 2026", "Apr 2026", "May 2026"])
        let march = try #require(monthly.first { $0.first == "Mar 2026" })
        let budget = try json(["budget", "--month", "2026-03"])
        #expect(
            march[1] == "£" + Self.grouped(budget["income"] as? String)
                && march[2] == "£" + Self.grouped(budget["spent"] as? String))
        #expect(html.contains("@media print"))

        // A write that fails half way (a page of 20 years is larger than the file size limit,
        // which the vault's own files stay under, as a full disk would) leaves no
        // temporary file: its name ends in .tmp, which the leak scan reads, and none is left.
        let cut = sandbox.directory.path("cut.html")
        let failed = try sandbox.run(
            ["report", "html", "--out", cut.path, "--months", "240"], environment: ["COFFER_PASSPHRASE": passphrase],
            fileSizeLimit: 65_536)
        #expect(failed.status == 74, "\(failed.status): \(failed.stderr)")
        let left = try FileManager.default.contentsOfDirectory(atPath: sandbox.directory.url.path)
        #expect(!left.contains { $0.hasSuffix(".tmp") || $0.hasPrefix(".cut") || $0 == "cut.html" }, "\(left)")

        let image = try Chromium.screenshot(page, sandbox: sandbox, size: "1000,2400")
        #expect(image.map { $0.count > 20_000 } ?? true, "a drawn page, not a blank one")
    }

    static func grouped(_ decimal: String?) -> String {
        guard let decimal, let point = decimal.firstIndex(of: ".") else { return decimal ?? "" }
        var whole = String(decimal[..<point])
        var groups: [String] = []
        while whole.count > 3 {
            groups.insert(String(whole.suffix(3)), at: 0)
            whole.removeLast(3)
        }
        groups.insert(whole, at: 0)
        return groups.joined(separator: ",") + decimal[point...]
    }
}

/// The tables of an HTML page by caption (rows of cell texts), read with Foundation's XML
/// parser: the page must be well-formed to be read at all.
struct HTMLTables {
    var tables: [String: [[String]]] = [:]
    var svgCount = 0

    init(_ html: String) throws {
        final class Reader: NSObject, XMLParserDelegate {
            var tables: [String: [[String]]] = [:]
            var svgCount = 0
            var caption: String?
            var rows: [[String]] = []
            var row: [String]?
            var text = ""
            func parser(
                _ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
                attributes: [String: String] = [:]
            ) {
                switch name {
                case "table": (caption, rows) = (nil, [])
                case "tr": row = []
                case "td", "th", "caption": text = ""
                case "svg": svgCount += 1
                default: break
                }
            }
            func parser(_ parser: XMLParser, foundCharacters string: String) { text += string }
            func parser(
                _ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?
            ) {
                switch name {
                case "caption": caption = text.trimmingCharacters(in: .whitespacesAndNewlines)
                case "td", "th": row?.append(text.trimmingCharacters(in: .whitespacesAndNewlines))
                case "tr": if let row { rows.append(row) }
                case "table": if let caption { tables[caption] = rows }
                default: break
                }
            }
        }
        let reader = Reader()
        let parser = XMLParser(data: Data(html.replacingOccurrences(of: "<!DOCTYPE html>", with: "").utf8))
        parser.delegate = reader
        guard parser.parse() else {
            throw CocoaError(.fileReadCorruptFile, userInfo: [NSDebugDescriptionErrorKey: "\(parser.parserError!)"])
        }
        tables = reader.tables
        svgCount = reader.svgCount
    }
}
