import CofferTestSupport
import Foundation
import Testing

/// Bank statements in the shapes banks export them, through the real binary.
@Suite struct CSVImportTests {
    let sandbox = Sandbox()
    let environment = ["COFFER_PASSPHRASE": "old passphrase", "COFFER_TODAY": "2025-03-20"]
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
        "../Fixtures/csv"
    ).standardized

    func fixture(_ name: String) -> String { Self.fixtures.appendingPathComponent(name).path }

    @discardableResult
    func coffer(_ arguments: String...) throws -> RunResult { try sandbox.run(arguments, environment: environment) }

    func json(_ arguments: String...) throws -> [String: Any] {
        let result = try sandbox.run(arguments + ["--json"], environment: environment)
        #expect(result.status == 0, "\(arguments): \(result.stderr)")
        return (try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]) ?? [:]
    }

    func rows(_ report: [String: Any]) -> [[String: Any]] { report["rows"] as? [[String: Any]] ?? [] }

    func setUp() throws {
        _ = try sandbox.initVault()
        #expect(try coffer("income", "add", "Salary", "2500", "--frequency", "monthly").status == 0)
        for (pattern, category) in [
            ("TESCO", "Groceries"), ("NETFLIX*", "Subscriptions"), ("rent", "Rent/Mortgage"), ("rewe", "Groceries"),
            ("Miete", "Rent/Mortgage"), ("water", "Utilities"),
        ] {
            #expect(try coffer("import", "rules", "add", "bank", pattern, "--category", category).status == 0)
        }
        for pattern in ["payroll", "gehalt", "employer"] {
            #expect(try coffer("import", "rules", "add", "bank", pattern, "--source", "Salary").status == 0)
        }
    }

    @Test func commaSeparatedWithBOMQuotesLineBreaksAndBlankLines() throws {
        try setUp()
        let report = try json(
            "import", "csv", fixture("uk-comma-bom-crlf.csv"), "--into", "transactions", "--account", "Current",
            "--rules", "bank", "--date-format", "DD/MM/YYYY")
        #expect(report["added"] as? Int == 6)
        #expect(report["uncategorised"] as? Int == 1)
        let added = rows(report).filter { $0["status"] as? String == "add" }
        #expect(
            added.map { $0["line"] as? Int } == [2, 3, 4, 5, 7, 8], "lines count the line break inside the quoted field"
        )
        #expect(
            added.map { $0["description"] as? String } == [
                "TESCO STORES 3297, LONDON", "TESCO STORES 3297, LONDON", "ACME LTD \"PAYROLL\"",
                "PRET A MANGER KINGS CROSS", "NETFLIX.COM", "RENT JANUARY",
            ])
        #expect(
            added.map { $0["category"] as? String } == [
                "Groceries", "Groceries", "Salary", "Uncategorised", "Subscriptions", "Rent/Mortgage",
            ])
        #expect(
            added.map { $0["amount"] as? String } == ["-42.10", "-42.10", "2500.00", "-6.45", "-10.99", "-1250.00"])

        let budget = try json("budget", "--month", "2025-01")
        #expect(budget["income"] as? String == "2500.00")
        #expect(budget["spent"] as? String == "1351.64", "uncategorised spending counts in spent")
        #expect(budget["uncategorised"] as? String == "6.45")
        #expect(budget["uncategorisedCount"] as? Int == 1)
        #expect(budget["needs"] as? String == "1334.20")

        // Importing the same file again adds nothing.
        let again = try json(
            "import", "csv", fixture("uk-comma-bom-crlf.csv"), "--into", "transactions", "--account", "Current",
            "--rules", "bank", "--date-format", "DD/MM/YYYY")
        #expect(again["added"] as? Int == 0)
        #expect(again["duplicates"] as? Int == 6)
    }

    @Test func semicolonDecimalCommaDebitCreditAndPreamble() throws {
        try setUp()
        let report = try json(
            "import", "csv", fixture("de-semicolon-decimal-comma.csv"), "--into", "transactions", "--account",
            "Girokonto",
            "--rules", "bank", "--skip-rows", "3", "--date-format", "DD.MM.YYYY", "--decimal-comma",
            "--date-column", "Buchungstag", "--description-column", "Verwendungszweck",
            "--debit-column", "Soll", "--credit-column", "Haben")
        let added = rows(report).filter { $0["status"] as? String == "add" }
        #expect(added.map { $0["line"] as? Int } == [5, 6, 7])
        #expect(added.map { $0["amount"] as? String } == ["-23.45", "3100.00", "-1050.00"])
        #expect(added.map { $0["description"] as? String } == ["REWE Markt; Berlin", "Gehalt Januar", "Miete"])
        #expect(added.map { $0["category"] as? String } == ["Groceries", "Salary", "Rent/Mortgage"])
        #expect(report["uncategorised"] as? Int == 0)
    }

    /// The German file again with none of the flags it needed: the preamble, the date format and
    /// the columns (Soll/Haben, Verwendungszweck) are found from the file itself.
    @Test func detectionFindsThePreambleDatesAndColumns() throws {
        try setUp()
        let report = try json(
            "import", "csv", fixture("de-semicolon-decimal-comma.csv"), "--into", "transactions", "--account",
            "Girokonto", "--rules", "bank", "--decimal-comma")
        let added = rows(report).filter { $0["status"] as? String == "add" }
        #expect(added.map { $0["line"] as? Int } == [5, 6, 7])
        #expect(added.map { $0["amount"] as? String } == ["-23.45", "3100.00", "-1050.00"])
        #expect(added.map { $0["date"] as? String } == ["2025-01-02", "2025-01-04", "2025-01-15"])

        // Month-first dates with a day above 12 need no --date-format either.
        let american = try json(
            "import", "csv", fixture("us-debit-credit-newest-first.csv"), "--into", "transactions", "--dry-run")
        #expect(
            rows(american).filter { $0["status"] as? String == "add" }.map { $0["date"] as? String } == [
                "2025-01-31", "2025-01-15",
            ])

        // Every day at 12 or below: either reading fits, so one line asks which, instead of a guess.
        let ambiguous = try coffer("import", "csv", fixture("uk-comma-bom-crlf.csv"), "--into", "transactions")
        #expect(ambiguous.status == 64, "\(ambiguous.stderr)")
        #expect(ambiguous.stderr.contains("The dates could be DD/MM/YYYY or MM/DD/YYYY"), "\(ambiguous.stderr)")
        #expect(ambiguous.stderr.contains("hint: Say which: --date-format DD/MM/YYYY or --date-format MM/DD/YYYY."))
        #expect(ambiguous.stderr.components(separatedBy: "Nothing was imported.").count == 2, "said once")
        #expect(ambiguous.stderr.components(separatedBy: "error:").count == 2, "one error, not one per line")
    }

    /// A Latin-1 file is decoded with --encoding; `Betrag (EUR)` is the amount by its words; its
    /// `Währung` column says EUR, which a GBP vault refuses rather than book euros as pounds.
    @Test func encodingCurrencyAndTitlesByWord() throws {
        try setUp()
        let file = fixture("de-latin1-betrag-currency.csv")
        let foreign = try coffer(
            "import", "csv", file, "--into", "transactions", "--encoding", "latin1", "--decimal-comma")
        #expect(foreign.status == 64, "\(foreign.stderr)")
        #expect(
            foreign.stderr.contains(
                "This statement is in EUR, but the vault keeps its money in GBP. Coffer converts no currencies, so nothing was imported."
            ), "\(foreign.stderr)")
        #expect(foreign.stderr.contains("coffer init --currency EUR"))
        let stated = try coffer(
            "import", "csv", fixture("us-debit-credit-newest-first.csv"), "--into", "transactions", "--currency", "USD")
        #expect(stated.status == 64 && stated.stderr.contains("in USD"), "\(stated.stderr)")
        #expect(try json("budget", "--month", "2025-01")["spent"] as? String == "0.00", "nothing was booked")

        let euro = sandbox.directory.path("euro.coffer").path
        #expect(try coffer("init", "--vault", euro, "--currency", "EUR", "--kdf", "interactive").status == 0)
        let undecoded = try coffer("import", "csv", file, "--into", "transactions", "--vault", euro, "--decimal-comma")
        #expect(undecoded.status == 64 && undecoded.stderr.contains("--encoding cp1252"), "\(undecoded.stderr)")
        let report = try json(
            "import", "csv", file, "--into", "transactions", "--vault", euro, "--encoding", "latin1", "--decimal-comma")
        let added = rows(report).filter { $0["status"] as? String == "add" }
        #expect(added.map { $0["description"] as? String } == ["Bäckerei Müller", "Gehalt Januar", "Straßenbahn Köln"])
        #expect(added.map { $0["amount"] as? String } == ["-4.20", "3100.00", "-2.90"])
        #expect(added.map { $0["line"] as? Int } == [5, 6, 7])
    }

    /// A first import saves its settings as a profile (in the vault); next month's statement
    /// needs only `--profile`; profiles are listed, shown, replaced, overridden by a flag, removed.
    @Test func aProfileRemembersABanksSettings() throws {
        try setUp()
        let january = try json(
            "import", "csv", fixture("de-semicolon-decimal-comma.csv"), "--into", "transactions", "--account",
            "Girokonto", "--rules", "bank", "--decimal-comma", "--save-profile", "DKB")
        #expect(january["added"] as? Int == 3)
        let shown = try json("import", "profile", "show", "DKB")
        let settings = shown["settings"] as? [String: String] ?? [:]
        #expect(settings["into"] == "transactions" && settings["account"] == "Girokonto" && settings["rules"] == "bank")
        #expect(settings["decimalComma"] == "true")
        #expect(settings["dateFormat"] == "DD.MM.YYYY", "the format found in January is kept: \(settings)")

        // February: the same bank, nothing but the profile (here the same file: all duplicates).
        let february = try json("import", "csv", fixture("de-semicolon-decimal-comma.csv"), "--profile", "DKB")
        #expect(february["added"] as? Int == 0 && february["duplicates"] as? Int == 3, "\(february)")
        #expect(february["account"] as? String == "Girokonto")
        // A flag given with the profile wins over it.
        let other = try json(
            "import", "csv", fixture("de-semicolon-decimal-comma.csv"), "--profile", "DKB", "--account", "Tagesgeld",
            "--dry-run")
        #expect(other["account"] as? String == "Tagesgeld" && other["added"] as? Int == 3)

        // Made from flags; a second of the same name is refused unless --replace.
        #expect(
            try coffer(
                "import", "profile", "add", "Chase", "--into", "transactions", "--date-format", "MM/DD/YYYY",
                "--rules", "bank"
            ).status == 0)
        let again = try coffer("import", "profile", "add", "chase", "--into", "updates", "--account", "Checking")
        #expect(again.status == 64 && again.stderr.contains("already exists"), "\(again.stderr)")
        #expect(try coffer("import", "profile", "add", "chase", "--into", "transactions", "--replace").status == 0)
        let list = try json("import", "profile", "list")
        #expect((list["profiles"] as? [[String: Any]])?.map { $0["name"] as? String } == ["Chase", "DKB"])
        #expect(
            try json("import", "profile", "show", "Chase")["settings"] as? [String: String] == ["into": "transactions"])
        #expect(
            try coffer("import", "profile", "add", "Bad", "--into", "updates").status == 64, "updates need --account")
        #expect(try coffer("import", "profile", "remove", "Chase").status == 0)
        #expect(try coffer("import", "csv", fixture("one-bad-row.csv"), "--profile", "Chase").status == 64)
        #expect(try coffer("undo").status == 0)
        #expect((try json("import", "profile", "list")["profiles"] as? [[String: Any]])?.count == 2, "undone")
    }

    /// A pattern between slashes is a regular expression; one that does not compile is refused.
    @Test func regularExpressionRules() throws {
        try setUp()
        #expect(try coffer("import", "rules", "add", "shops", "/UNIQLO|ZARA/", "--category", "Shopping").status == 0)
        let broken = try coffer("import", "rules", "add", "shops", "/(unclosed/", "--category", "Shopping")
        #expect(broken.status == 64 && broken.stderr.contains("is not a regular expression"), "\(broken.stderr)")
        let statement = sandbox.directory.path("shops.csv")
        try Data(
            "Date,Description,Amount\n2025-01-02,ZARA Oxford St,-40.00\n2025-01-03,uniqlo ginza,-20.00\n2025-01-04,ZARAGOZA CAFE,-3.00\n"
                .utf8
        )
        .write(to: statement)
        // Plain text would match ZARAGOZA too; the expression says where the word ends.
        #expect(try coffer("import", "rules", "remove", "shops").status == 0)
        #expect(
            try coffer("import", "rules", "add", "shops", "/\\b(UNIQLO|ZARA)\\b/", "--category", "Shopping").status == 0
        )
        let report = try json("import", "csv", statement.path, "--into", "transactions", "--rules", "shops")
        #expect(
            rows(report).map { $0["category"] as? String } == ["Shopping", "Shopping", "Uncategorised"], "\(report)")
    }

    /// A rule set moves between vaults as a text file: exported, imported by place names, the
    /// same rules in the same order; a bad line or an unknown place imports nothing.
    @Test func ruleSetsMoveAsTextFiles() throws {
        try setUp()
        let exported = try coffer("import", "rules", "export", "bank")
        #expect(exported.status == 0 && exported.stdout.hasPrefix("# Coffer rule set: bank\n"), "\(exported.stdout)")
        #expect(exported.stdout.contains("TESCO\tcategory\tGroceries\n"))
        let file = sandbox.directory.path("bank.rules.txt")
        try Data(exported.stdout.utf8).write(to: file)

        let other = sandbox.directory.path("other.coffer").path
        #expect(try coffer("init", "--vault", other, "--kdf", "interactive").status == 0)
        let missingSource = try coffer("import", "rules", "import", file.path, "--vault", other)
        #expect(missingSource.status == 64 && missingSource.stderr.contains("Salary"), "\(missingSource.stderr)")
        #expect(try coffer("income", "add", "Salary", "2500", "--frequency", "monthly", "--vault", other).status == 0)
        let imported = try coffer("import", "rules", "import", file.path, "--vault", other)
        #expect(imported.status == 0, "\(imported.stderr)")
        let mine = try coffer("import", "rules", "show", "bank", "--json").stdout
        let theirs = try coffer("import", "rules", "show", "bank", "--json", "--vault", other).stdout
        #expect(mine == theirs, "the same rules in the same order")
        #expect(try coffer("import", "rules", "import", file.path, "--vault", other).status == 64, "exists already")
        #expect(try coffer("import", "rules", "import", file.path, "--vault", other, "--replace").status == 0)

        let broken = sandbox.directory.path("broken.txt")
        try Data("TESCO\tcategory\tGroceries\nlidl groceries\n/(x/\tcategory\tGroceries\n".utf8).write(to: broken)
        let refused = try coffer("import", "rules", "import", broken.path, "--as", "new", "--vault", other)
        #expect(refused.status == 64 && refused.stderr.contains("line 2"), "\(refused.stderr)")
        try Data("TESCO\tcategory\tGroceries\n/(x/\tcategory\tGroceries\n".utf8).write(to: broken)
        let badPattern = try coffer("import", "rules", "import", broken.path, "--as", "new", "--vault", other)
        #expect(badPattern.status == 64 && badPattern.stderr.contains("line 2"), "\(badPattern.stderr)")
        #expect(!(try coffer("import", "rules", "list", "--vault", other).stdout.contains("new")), "nothing imported")
    }

    /// The done-criterion of the interop issue: three banks' January statements imported with
    /// flags and --save-profile, then February's with the profile alone. The UK February has no
    /// day above 12, so only the profile knows its date format; a running balance becomes the
    /// named account's value.
    @Test func threeBanksImportMonthlyWithAProfileAlone() throws {
        try setUp()
        for name in ["Current", "Checking"] {
            #expect(
                try coffer("account", "add", name, "--category", "Cash", "--value", "1", "--date", "2025-01-01").status
                    == 0)
        }
        let banks: [(profile: String, january: String, flags: [String], february: String)] = [
            (
                "Barclays", "uk-comma-bom-crlf.csv", ["--account", "Current", "--date-format", "DD/MM/YYYY"],
                "uk-comma-bom-crlf-feb.csv"
            ),
            (
                "Chase", "us-debit-credit-newest-first.csv", ["--account", "Checking"],
                "us-debit-credit-newest-first-feb.csv"
            ),
            (
                "DKB", "de-semicolon-decimal-comma.csv", ["--account", "Girokonto", "--decimal-comma"],
                "de-semicolon-decimal-comma-feb.csv"
            ),
        ]
        for bank in banks {
            let arguments = ["import", "csv", fixture(bank.january), "--into", "transactions", "--rules", "bank"]
            let january = try sandbox.run(
                arguments + bank.flags + ["--save-profile", bank.profile, "--json"], environment: environment)
            #expect(january.status == 0, "\(bank.profile) January: \(january.stderr)")
        }
        let uk = try json("import", "csv", fixture("uk-comma-bom-crlf-feb.csv"), "--profile", "Barclays")
        #expect(uk["added"] as? Int == 4 && uk["duplicates"] as? Int == 1, "\(uk)")
        #expect(uk["uncategorised"] as? Int == 0)
        #expect(
            rows(uk).filter { $0["status"] as? String == "add" }.map { $0["date"] as? String } == [
                "2025-02-03", "2025-02-05", "2025-02-10", "2025-02-12",
            ], "read as DD/MM/YYYY, the profile's format")
        let ukBalance = uk["closingBalance"] as? [String: Any]
        #expect(ukBalance?["amount"] as? String == "4357.37" && ukBalance?["recorded"] as? Bool == true)

        let us = try json("import", "csv", fixture("us-debit-credit-newest-first-feb.csv"), "--profile", "Chase")
        #expect(us["added"] as? Int == 2 && us["uncategorised"] as? Int == 0, "\(us)")
        #expect(rows(us).map { $0["category"] as? String } == ["Utilities", "Salary"])
        #expect(
            (us["closingBalance"] as? [String: Any])?["date"] as? String == "2025-02-28", "the newest line's balance")

        let de = try json("import", "csv", fixture("de-semicolon-decimal-comma-feb.csv"), "--profile", "DKB")
        #expect(de["added"] as? Int == 3 && de["uncategorised"] as? Int == 0, "\(de)")
        #expect(rows(de).map { $0["amount"] as? String } == ["-31.20", "3100.00", "-1050.00"], "decimal comma kept")
        #expect(de["closingBalance"] is NSNull, "no balance column, none recorded")

        // The balances landed as the accounts' values, and February's budget holds all three banks.
        let accounts = try sandbox.run(["account", "list", "--json"], environment: environment).stdout
        #expect(accounts.contains("4357.37") && accounts.contains("3883.70"), "\(accounts)")
        let budget = try json("budget", "--month", "2025-02")
        #expect(budget["income"] as? String == "7600.00", "2,500 + 2,000 + 3,100: \(budget)")
    }

    /// Rules may read the payee or the description and take only an amount range; the first
    /// rule that matches places the line. Payee and description make the note `payee | description`.
    @Test func rulesReadThePayeeAndAmountRanges() throws {
        try setUp()
        #expect(
            try coffer("account", "add", "Current", "--category", "Cash", "--value", "1000", "--date", "2025-01-01")
                .status == 0)
        for rule in [
            ["AMAZON", "--field", "payee", "--max", "100", "--category", "Shopping"],
            ["AMAZON", "--field", "payee", "--min", "100.01", "--category", "Entertainment"],
            ["amazon", "--field", "description", "--category", "Hobbies"],
            ["employer", "--field", "payee", "--source", "Salary"],
        ] {
            let added = try sandbox.run(["import", "rules", "add", "shop"] + rule, environment: environment)
            #expect(added.status == 0, "\(rule): \(added.stderr)")
        }
        for (bad, why) in [
            (["--min", "50", "--max", "10"], "above its maximum"), (["--min=-5"], "without a sign"),
            (["--field", "memo"], "memo"),
        ] {
            let refused = try sandbox.run(
                ["import", "rules", "add", "shop", "X", "--category", "Shopping"] + bad, environment: environment)
            #expect(refused.status == 64 && refused.stderr.contains(why), "\(bad): \(refused.stderr)")
        }
        let report = try json(
            "import", "csv", fixture("payee-description-balance.csv"), "--into", "transactions", "--rules", "shop",
            "--account", "Current")
        let added = rows(report)
        #expect(added.map { $0["category"] as? String } == ["Shopping", "Entertainment", "Hobbies", "Salary"])
        #expect(added.first?["description"] as? String == "AMAZON | Order 123 books", "\(added)")
        let balance = report["closingBalance"] as? [String: Any]
        #expect(balance?["amount"] as? String == "3018.00" && balance?["recorded"] as? Bool == true)
        #expect(try coffer("account", "list").stdout.contains("£3,018.00"))
        // One undo takes back the transactions and the balance together.
        #expect(try coffer("undo").status == 0)
        #expect(try coffer("account", "list").stdout.contains("£1,000.00"))

        // The text file keeps what each rule reads and its range.
        let exported = try coffer("import", "rules", "export", "shop").stdout
        #expect(exported.contains("AMAZON\tcategory\tShopping\tpayee\tamount ..100.00\n"), "\(exported)")
        #expect(exported.contains("AMAZON\tcategory\tEntertainment\tpayee\tamount 100.01..\n"))
        let file = sandbox.directory.path("shop.txt")
        try Data(exported.utf8).write(to: file)
        #expect(try coffer("import", "rules", "import", file.path, "--as", "copy").status == 0)
        let original = try json("import", "rules", "show", "shop")["rules"] as? [[String: Any]] ?? []
        let copy = try json("import", "rules", "show", "copy")["rules"] as? [[String: Any]] ?? []
        #expect(
            original.map { "\($0["field"]!)\($0["minimum"]!)\($0["maximum"]!)" }
                == copy.map {
                    "\($0["field"]!)\($0["minimum"]!)\($0["maximum"]!)"
                })
        #expect(original.count == 4 && original[0]["maximum"] as? String == "100.00")
        try Data("X\tcategory\tShopping\tamount 5..x\n".utf8).write(to: file)
        let unreadable = try coffer("import", "rules", "import", file.path, "--as", "bad")
        #expect(unreadable.status == 64 && unreadable.stderr.contains("line 1"), "\(unreadable.stderr)")
    }

    /// An hledger rules file, written the way hledger's manual writes them, read as it is: the
    /// same statement through hledger (`print -O csv`) and through Coffer puts every line in the
    /// same place with the same description, and the line hledger skips Coffer skips too.
    @Test(
        .enabled(
            if: FileManager.default.isExecutableFile(atPath: "/usr/bin/hledger"),
            "hledger is not installed (scripts/setup installs it)"))
    func hledgerRulesFilesAgreeWithHledger() throws {
        try setUp()
        let statement = sandbox.directory.path("barclays.csv")
        try Data(
            """
            Date,Description,Amount,Balance
            03/01/2025,TESCO STORES 3297,-42.10,1957.90
            05/01/2025,ACME LTD PAYROLL,2500.00,4457.90
            07/01/2025,PRET A MANGER,-6.45,4451.45
            10/01/2025,NETFLIX.COM,-10.99,4440.46
            12/01/2025,RENT JANUARY,-1250.00,3190.46
            14/01/2025,SPOTIFY,-9.99,3180.47
            15/01/2025,TRANSFER TO SAVINGS,-500.00,2680.47
            16/01/2025,RENT DEPOSIT REFUND,-100.00,2580.47

            """.utf8
        ).write(to: statement)
        let rules = sandbox.directory.path("barclays.rules")
        try Data(
            """
            # hledger CSV rules for a Barclays current account
            skip 1
            fields date, description, amount, balance
            date-format %d/%m/%Y
            currency £
            account1 assets:bank:barclays

            if TESCO
             account2 expenses:food:groceries

            # any of these
            if
            NETFLIX
            SPOTIFY
             account2 expenses:subscriptions
             comment  streaming

            if %description PAYROLL
             account2 income:salary
             description Salary (%description)

            # both must match
            if RENT
            & JANUARY
             account2 expenses:rent/mortgage

            if TRANSFER TO SAVINGS
             skip

            """.utf8
        ).write(to: rules)

        let report = try json(
            "import", "csv", statement.path, "--rules-file", rules.path, "--save-profile", "barclays")
        #expect(report["added"] as? Int == 7 && report["account"] as? String == "assets:bank:barclays", "\(report)")
        #expect(rows(report).filter { $0["status"] as? String == "skipped" }.map { $0["line"] as? Int } == [8])

        // hledger's own reading of the same two files.
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/hledger")
        process.arguments = ["-f", statement.path, "--rules-file", rules.path, "print", "-O", "csv"]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        let hledgerLines = output.split(separator: "\n").dropFirst().map {
            $0.dropFirst().dropLast().components(separatedBy: "\",\"")
        }.filter { $0.count > 8 && $0[7] != "assets:bank:barclays" }
        // (date, description, where: the account's last part, "unknown" for none)
        let theirs = hledgerLines.map { "\($0[1]) \($0[5]) → \($0[7].split(separator: ":").last!.lowercased())" }
        let listed = try json("transaction", "list", "--month", "2025-01")["transactions"] as? [[String: Any]] ?? []
        let ours = listed.map { transaction in
            let label = (transaction["label"] as? String ?? "").lowercased()
            return "\(transaction["date"]!) \(transaction["note"]!) → \(label == "uncategorised" ? "unknown" : label)"
        }
        #expect(theirs.count == 7)
        #expect(Set(ours) == Set(theirs), "Coffer: \(ours.sorted())\nhledger: \(theirs.sorted())")

        // The profile keeps the rules file: next month needs only --profile.
        let february = sandbox.directory.path("barclays-feb.csv")
        try Data(
            "Date,Description,Amount,Balance\n03/02/2025,TESCO STORES 3297,-20.00,2560.47\n05/02/2025,ACME LTD PAYROLL,2500.00,5060.47\n"
                .utf8
        ).write(to: february)
        let next = try json("import", "csv", february.path, "--profile", "barclays")
        #expect(rows(next).map { $0["category"] as? String } == ["Groceries", "Salary"], "\(next)")
        #expect(rows(next).last?["description"] as? String == "Salary (ACME LTD PAYROLL)")
        let shown = try coffer("import", "profile", "show", "barclays").stdout
        #expect(shown.contains("an hledger rules file"), "\(shown)")
    }

    /// What Coffer does not read is refused by name with its line, and nothing is imported; an
    /// account2 the vault has no place for is refused, every such account named at once.
    @Test func hledgerRulesItCannotReadAreRefusedByName() throws {
        try setUp()
        let statement = sandbox.directory.path("s.csv")
        try Data("2025-01-02,SHOP,-5.00\n2025-01-03,VET,-40.00\n2025-01-04,GIFT,20.00\n".utf8).write(to: statement)
        let rules = sandbox.directory.path("s.rules")
        for (text, expected) in [
            ("fields date, description, amount\ninclude common.rules\n", "line 2 of the rules file: 'include'"),
            ("fields date, description, amount\nbalance-type ==*\n", "'balance-type'"),
            ("fields date, description, amount\nif,account2\nSHOP,expenses:shopping\n", "'if' tables"),
            ("fields date, description, amount\nif SHOP\n account1 assets:other\n", "'account1' inside"),
            ("fields date, description, amount\nif (SHOP\n account2 expenses:x\n", "not a regular expression"),
            ("skip 1\n", "no 'fields' line"),
            ("fields date, description\n", "which field is the amount"),
            ("fields date, description, amount\namount %3 * -1\n", "only as one field"),
        ] {
            try Data(text.utf8).write(to: rules)
            let refused = try coffer("import", "csv", statement.path, "--rules-file", rules.path)
            #expect(refused.status == 64 && refused.stderr.contains(expected), "\(text): \(refused.stderr)")
            #expect(refused.stderr.contains("Nothing was imported"))
        }
        try Data(
            "fields date, description, amount\nif VET\n account2 expenses:pets\nif GIFT\n account2 income:gifts\nif SHOP\n account2 expenses:shopping\n"
                .utf8
        ).write(to: rules)
        let unknown = try coffer("import", "csv", statement.path, "--rules-file", rules.path)
        #expect(
            unknown.status == 64 && unknown.stderr.contains("expenses:pets, income:gifts"), "\(unknown.stderr)")
        #expect(try coffer("import", "csv", statement.path, "--rules-file", rules.path, "--rules", "bank").status == 64)
        #expect(
            (try json("transaction", "list", "--month", "2025-01")["transactions"] as? [Any] ?? []).isEmpty,
            "nothing was imported")
        // A currency other than the vault's, as hledger writes it, is refused; a symbol gets no
        // hint to make a vault in it (init takes codes).
        try Data("fields date, description, amount\ncurrency USD\n".utf8).write(to: rules)
        let dollars = try coffer("import", "csv", statement.path, "--rules-file", rules.path)
        #expect(dollars.status == 64 && dollars.stderr.contains("converts no currencies"), "\(dollars.stderr)")
        #expect(dollars.stderr.contains("coffer init --currency USD"))
        try Data("fields date, description, amount\ncurrency $\n".utf8).write(to: rules)
        let symbol = try coffer("import", "csv", statement.path, "--rules-file", rules.path)
        #expect(symbol.status == 64 && !symbol.stderr.contains("--currency $"), "\(symbol.stderr)")

        // A profile is checked as the import would be: when it is saved, not next month.
        try Data("fields date, description, amount\nif VET\n account2 expenses:pets\n".utf8).write(to: rules)
        for (arguments, why) in [
            (["--rules", "nosuch"], "nosuch"), (["--currency", "USD"], "could never import"),
            (["--rules", "bank", "--rules-file", rules.path], "not both"),
        ] {
            let refused = try sandbox.run(
                ["import", "profile", "add", "p", "--into", "transactions"] + arguments, environment: environment)
            #expect(refused.status == 64 && refused.stderr.contains(why), "\(arguments): \(refused.stderr)")
            #expect(!refused.stderr.contains("imported"), "a profile imports nothing: \(refused.stderr)")
        }
        #expect(try coffer("import", "profile", "add", "p", "--rules-file", rules.path).status == 0)
        #expect(try coffer("import", "profile", "show", "p", "--json").stdout.contains("account2 expenses:pets"))
    }

    @Test func debitCreditFoundByTitleNewestFirstAndZeroLines() throws {
        try setUp()
        let report = try json(
            "import", "csv", fixture("us-debit-credit-newest-first.csv"), "--into", "transactions", "--rules", "bank",
            "--date-format", "MM/DD/YYYY")
        let byStatus = Dictionary(grouping: rows(report)) { $0["status"] as? String ?? "" }
        #expect(byStatus["add"]?.map { $0["amount"] as? String } == ["-55.20", "2000.00"])
        #expect(byStatus["add"]?.map { $0["date"] as? String } == ["2025-01-31", "2025-01-15"])
        #expect(byStatus["zero"]?.map { $0["line"] as? Int } == [4])

        // The same statement's balances as the account's value history: one value a day.
        #expect(try coffer("account", "add", "Checking", "--category", "Cash").status == 0)
        let values = try json(
            "import", "csv", fixture("us-debit-credit-newest-first.csv"), "--into", "updates", "--account", "Checking",
            "--date-format", "MM/DD/YYYY")
        let statuses = rows(values).map { "\($0["line"] as? Int ?? 0):\($0["status"] as? String ?? "")" }
        #expect(
            statuses == ["2:add", "3:add", "4:superseded"], "on 15 January the opening 0.00 came before the 2000.00")
        let account = try json("account", "show", "Checking")
        #expect(account["value"] as? String == "1944.80", "\(account)")
        #expect(
            try json(
                "import", "csv", fixture("us-debit-credit-newest-first.csv"), "--into", "updates", "--account",
                "Checking",
                "--date-format", "MM/DD/YYYY")["added"] as? Int == 0)
    }

    @Test func overlappingStatementsAddNothingTwice() throws {
        try setUp()
        let first = try json(
            "import", "csv", fixture("overlap-jan-feb.csv"), "--into", "transactions", "--account", "Joint")
        #expect(first["added"] as? Int == 5)
        let second = try json(
            "import", "csv", fixture("overlap-feb-mar.csv"), "--into", "transactions", "--account", "joint")
        // Two of the three coffees of 2 February and the salary were already there.
        #expect(second["added"] as? Int == 2)
        #expect(second["duplicates"] as? Int == 3)
        #expect(
            rows(second).filter { $0["status"] as? String == "add" }.map { $0["description"] as? String } == [
                "COFFEE SHOP", "GYM",
            ])
        #expect(try json("budget", "--month", "2025-02")["spent"] as? String == "9.00")

        // Another account's statement with the same lines is its own.
        #expect(
            try json(
                "import", "csv", fixture("overlap-jan-feb.csv"), "--into", "transactions", "--account", "Other bank")[
                    "added"] as? Int == 5)

        // A transaction corrected after import is still recognised by its row.
        let listed = try json("transaction", "list", "--month", "2025-03")
        let gym = (listed["transactions"] as? [[String: Any]])?.first { $0["note"] as? String == "GYM" }
        let id = try #require(gym?["id"] as? String)
        #expect(try coffer("transaction", "edit", id, "--date", "2025-03-02", "--amount", "31").status == 0)
        #expect(
            try json("import", "csv", fixture("overlap-feb-mar.csv"), "--into", "transactions", "--account", "Joint")[
                "added"] as? Int == 0)
    }

    @Test func dryRunWritesNothing() throws {
        try setUp()
        let before = try storedRowsDigest(sandbox.vault)
        let result = try coffer(
            "import", "csv", fixture("uk-comma-bom-crlf.csv"), "--into", "transactions", "--rules", "bank",
            "--date-format", "DD/MM/YYYY", "--dry-run")
        #expect(result.status == 0)
        #expect(result.stdout.contains("Would add 6 transactions"))
        #expect(result.stdout.contains("1 would be uncategorised"))
        #expect(result.stdout.contains("PRET A MANGER KINGS CROSS"))
        #expect(result.stdout.contains("Dry run: nothing was written."))
        #expect(try storedRowsDigest(sandbox.vault) == before)
        #expect(try coffer("import", "recategorise", "--dry-run").status == 0)
        #expect(try storedRowsDigest(sandbox.vault) == before)
    }

    @Test func oneBadRowAbortsTheWholeImport() throws {
        try setUp()
        let before = try storedRowsDigest(sandbox.vault)
        let result = try coffer("import", "csv", fixture("one-bad-row.csv"), "--into", "transactions")
        #expect(result.status == 64)
        #expect(result.stderr.contains("line 4: 'abc' is not an amount (column 3 \"Amount\")"), "\(result.stderr)")
        #expect(result.stderr.contains("Nothing was imported"))
        #expect(try storedRowsDigest(sandbox.vault) == before)

        let skipping = try coffer(
            "import", "csv", fixture("one-bad-row.csv"), "--into", "transactions", "--skip-invalid")
        #expect(skipping.status == 0)
        #expect(skipping.stderr.contains("Skipped line 4: 'abc' is not an amount"))
        #expect(skipping.stdout.contains("Added 3 transactions"))

        // Every bad line is named, each with its column.
        let bad = sandbox.directory.path("bad.csv")
        try Data("Date,Description,Amount\n2025-01-01,A,1.005\n2025-02-30,B,1\n2025-01-02,C\n".utf8).write(to: bad)
        let several = try coffer("import", "csv", bad.path, "--into", "transactions")
        #expect(several.status == 64)
        for expected in [
            "line 2: '1.005' is not an amount",
            "line 3: '2025-02-30' is not a date in the format YYYY-MM-DD (column 1 \"Date\")",
            "line 4: has 2 columns; column 3 \"Amount\" is missing",
        ] {
            #expect(several.stderr.contains(expected), "\(several.stderr)")
        }
        let unclosed = sandbox.directory.path("unclosed.csv")
        try Data("Date,Description,Amount\n2025-01-01,A,-1\n2025-01-03,\"D,-2\n2025-01-04,E,-3\n".utf8).write(
            to: unclosed)
        let open = try coffer("import", "csv", unclosed.path, "--into", "transactions")
        #expect(open.status == 64)
        #expect(open.stderr.contains("line 3: a quoted field is never closed"), "\(open.stderr)")
        #expect(
            try coffer("import", "csv", sandbox.directory.path("missing.csv").path, "--into", "transactions").status
                == 66)
        let afterSkipping = try storedRowsDigest(sandbox.vault)
        let empty = sandbox.directory.path("empty.csv")
        try Data().write(to: empty)
        let nothing = try coffer("import", "csv", empty.path, "--into", "transactions")
        #expect(nothing.status == 64 && nothing.stderr.contains("holds no lines to import"))
        let binary = sandbox.directory.path("binary.csv")
        try Data([0x44, 0x61, 0xff, 0xfe, 0x0a]).write(to: binary)
        #expect(try coffer("import", "csv", binary.path, "--into", "transactions").stderr.contains("is not UTF-8 text"))
        #expect(try storedRowsDigest(sandbox.vault) == afterSkipping)
        #expect(try coffer("import", "csv", bad.path, "--into", "updates").status == 64, "updates need --account")
    }

    @Test func rulesLiveInTheVaultAndRecategorise() throws {
        try setUp()
        let shown = try json("import", "rules", "show", "bank")
        let rules = shown["rules"] as? [[String: Any]] ?? []
        #expect(rules.count == 9)
        #expect(rules.first?["pattern"] as? String == "TESCO" && rules.first?["target"] as? String == "Groceries")
        #expect(try coffer("import", "rules", "add", "bank", "x", "--category", "Nope").status == 64)
        #expect(try coffer("import", "rules", "add", "bank", "*", "--category", "Groceries").status == 64)
        // The other spellings: --pattern/--match, and the place as a third argument.
        #expect(
            try coffer("import", "rules", "add", "alt", "--pattern", "SPOTIFY", "--category", "Subscriptions").status
                == 0)
        #expect(
            try coffer("import", "rules", "add", "alt", "--match", "DELIVEROO", "--category", "Dining Out").status == 0)
        #expect(try coffer("import", "rules", "add", "alt", "WAITROSE", "Groceries").status == 0)
        #expect(try coffer("import", "rules", "add", "alt", "ACME", "Salary").status == 0)
        #expect(try coffer("import", "rules", "add", "alt", "X", "Nowhere").status == 64)
        #expect(
            try coffer("import", "rules", "add", "alt", "X", "--pattern", "Y", "--category", "Groceries").status == 64)
        let alt = (try json("import", "rules", "show", "alt")["rules"] as? [[String: Any]] ?? []).map {
            "\($0["pattern"]!)→\($0["target"]!):\($0["kind"]!)"
        }
        #expect(
            alt == [
                "SPOTIFY→Subscriptions:category", "DELIVEROO→Dining Out:category", "WAITROSE→Groceries:category",
                "ACME→Salary:source",
            ])
        #expect(try coffer("import", "rules", "remove", "alt").status == 0)

        #expect(
            try coffer(
                "import", "csv", fixture("uk-comma-bom-crlf.csv"), "--into", "transactions", "--date-format",
                "DD/MM/YYYY"
            ).status == 0)
        var budget = try json("budget", "--month", "2025-01")
        #expect(
            budget["uncategorisedCount"] as? Int == 5,
            "no --rules: all five purchases wait in Uncategorised (the salary too, as income)")
        #expect(budget["spent"] as? String == "1351.64")
        #expect(budget["income"] as? String == "2500.00")
        let waiting = try coffer("transaction", "list", "--uncategorised")
        #expect(waiting.stdout.contains("PRET A MANGER"))

        let moved = try json("import", "recategorise", "--rules", "bank")
        #expect(moved["recategorised"] as? Int == 5)
        #expect(moved["stillUncategorised"] as? Int == 1)
        budget = try json("budget", "--month", "2025-01")
        #expect(budget["uncategorisedCount"] as? Int == 1)
        #expect(budget["needs"] as? String == "1334.20")

        let list = try json("transaction", "list", "--uncategorised")
        let pret = try #require((list["transactions"] as? [[String: Any]])?.first?["id"] as? String)
        #expect(try coffer("transaction", "edit", pret, "--category", "Dining Out").status == 0)
        budget = try json("budget", "--month", "2025-01")
        #expect(budget["uncategorisedCount"] as? Int == 0)
        #expect(budget["wants"] as? String == "17.44")
        #expect(budget["spent"] as? String == "1351.64")

        #expect(try coffer("import", "rules", "remove", "bank", "--rule", "1").status == 0)
        #expect((try json("import", "rules", "show", "bank")["rules"] as? [Any])?.count == 8)
        #expect(try coffer("import", "rules", "remove", "bank", "--rule", "42").status == 64)
        #expect(try coffer("undo").status == 0)
        #expect((try json("import", "rules", "show", "bank")["rules"] as? [Any])?.count == 9)
        #expect(try coffer("import", "rules", "remove", "bank").status == 0)
        #expect(try coffer("import", "rules", "list").stdout.contains("No rule sets yet"))

        // The rules are inside the encrypted vault, not in plain text anywhere in the file.
        let bytes = try Data(contentsOf: sandbox.vault)
        #expect(bytes.range(of: Data("NETFLIX".utf8)) == nil && bytes.range(of: Data("Gehalt".utf8)) == nil)
    }

    @Test func csvExportRoundTripsTransactionsAndQuotes() throws {
        try setUp()
        #expect(
            try coffer(
                "import", "csv", fixture("uk-comma-bom-crlf.csv"), "--into", "transactions", "--account", "Current",
                "--rules", "bank", "--date-format", "DD/MM/YYYY"
            ).status == 0)
        #expect(
            try coffer("account", "add", "Savings", "--category", "Savings", "--value", "1000", "--date", "2025-01-01")
                .status == 0)
        let exported = sandbox.directory.path("all.csv")
        let export = try coffer("export", "csv", "--out", exported.path)
        #expect(export.status == 0 && export.stderr.contains("not encrypted"))
        #expect(fileMode(exported) == 0o600)
        let text = try String(contentsOf: exported, encoding: .utf8)
        #expect(text.hasPrefix("record,id,date,name,category,type,amount,currency,description,status,reference,due\n"))
        #expect(text.contains(",\"TESCO STORES 3297, LONDON\","))
        #expect(text.contains(",\"ACME LTD \"\"PAYROLL\"\"\","))
        #expect(text.contains("\naccount,") && text.contains("\nupdate,"))

        let only = try coffer("export", "csv", "--only", "transactions")
        #expect(!only.stdout.contains("\naccount,") && only.stderr.isEmpty, "stdout gets no warning")
        let transactionsFile = sandbox.directory.path("transactions.csv")
        try Data(only.stdout.utf8).write(to: transactionsFile)

        let other = sandbox.directory.path("other.coffer")
        #expect(
            try sandbox.run(["init", "--kdf", "interactive", "--vault", other.path], environment: environment).status
                == 0)
        let imported = try sandbox.run(
            ["import", "csv", transactionsFile.path, "--into", "transactions", "--vault", other.path, "--json"],
            environment: environment)
        #expect(imported.status == 0, "\(imported.stderr)")
        let before = try json("budget", "--month", "2025-01")
        let after =
            try JSONSerialization.jsonObject(
                with: Data(
                    try sandbox.run(
                        ["budget", "--month", "2025-01", "--json", "--vault", other.path],
                        environment: environment
                    ).stdout.utf8)) as? [String: Any]
        #expect(after?["spent"] as? String == before["spent"] as? String)
        #expect(after?["income"] as? String == before["income"] as? String)
    }
}
