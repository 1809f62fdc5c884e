import ArgumentParser
import CofferKit
import FinanceCore
import Foundation
import VaultStore

/// `coffer import json|csv|rules|recategorise`: getting data in. Every import is one
/// transaction and one undoable change; a file with a bad row writes nothing.
struct Import: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Import Coffer's JSON export, or bank statements (CSV) with category rules kept in the vault.",
        subcommands: [
            JSON.self, CSVStatement.self, ImportLedger.self, ImportProfileCommands.self, RulesCommands.self,
            Recategorise.self,
        ])

    /// The bytes of FILE, or of standard input for `-`.
    static func read(_ file: String) throws -> Data {
        if file == "-" { return FileHandle.standardInput.readDataToEndOfFile() }
        try requireFile(file)
        guard let contents = FileManager.default.contents(atPath: file) else {
            throw CLIError(.failure, "Cannot read \(file). Nothing was imported.")
        }
        return contents
    }

    /// Refuses a path with no file, or a folder.
    static func requireFile(_ file: String) throws {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: file, isDirectory: &isDirectory), !isDirectory.boolValue else {
            throw CLIError(.notFound, "No file at \(file). Nothing was imported.")
        }
    }

    /// `coffer import json FILE`.
    struct JSON: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "json",
            abstract: "Import Coffer's own JSON export into a vault that holds no data yet (one transaction, undoable)."
        )
        @OptionGroup var options: VaultOptions
        @Argument(help: "The file (- for standard input).") var file: String

        func run() throws {
            let source: ExportSource
            if file == "-" {
                source = ExportSource(data: try Import.read(file))
            } else {
                try Import.requireFile(file)
                guard let opened = ExportSource(path: file) else {
                    throw CLIError(.failure, "Cannot read \(file). Nothing was imported.")
                }
                source = opened
            }
            let ledger = try options.openLedger()
            let (count, currency) = try CLIError.importing {
                do {
                    // A command on its own ends here: the records stay on disk. Inside a shell the
                    // next command sees them.
                    return try ledger.importExport(
                        source, from: URL(fileURLWithPath: file).lastPathComponent,
                        thenRead: CommandSession.ledger(at: options.vaultURL) != nil)
                } catch let error as DecodingError {
                    throw CLIError(
                        .invalidInput,
                        "\(file) is not a Coffer JSON export: \(ExportSource.describe(error)). Nothing was imported.")
                }
            } hint: { error in
                error.code == .alreadyExists
                    ? "Create one (coffer init --vault NEW) and import there, or import bank statements with: coffer import csv"
                    : nil
            }
            Output.line("Imported \(count) records (\(currency.code)).")
            Output.advice("Undo with: coffer undo")
            Output.advice("Next: coffer overview")
        }
    }

    /// What `coffer import csv` and `coffer import recategorise` print with `--json`.
    struct Report: Encodable {
        struct Row: Encodable {
            let line: Int
            /// add, duplicate, superseded, zero or invalid.
            let status: String
            let date, amount, description, category: String?
            let message: String?
        }
        let file: String
        let into: String
        let account: String?
        let dryRun: Bool
        let added, duplicates, uncategorised: Int
        let skippedInvalid: Int
        let rows: [Row]
        /// With a balance column: the statement's closing balance, recorded as the account's value
        /// (`recorded`) when `--account` names one of the vault's accounts.
        struct Balance: Encodable {
            let date, amount: String
            let recorded: Bool
        }
        @NullEncoded var closingBalance: Balance? = nil
    }
}

/// `coffer import csv FILE --into transactions|updates`.
struct CSVStatement: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "csv",
        abstract: "Import a bank statement (CSV) as budget transactions or as an account's values.",
        discussion: """
            Columns are found by their titles (Date, Amount, Debit/Credit, Description, ...) or given with the \
            --*-column options, by title or by number from 1. Money in (positive) is income, money out is \
            spending; --rules places each line in a category, and what no rule places is Uncategorised. \
            Lines already in the vault (the same row, or the same date, amount and description in the same \
            account) are skipped, so importing an overlapping statement adds nothing twice. One bad line \
            stops the whole import unless --skip-invalid.
            """)

    @OptionGroup var options: VaultOptions
    @Argument(help: "The CSV file (- for standard input).") var file: String
    @OptionGroup var statement: StatementOptions
    @Option(
        help: ArgumentHelp(
            "Use the settings saved under this name (coffer import profile); options given here win.",
            valueName: "name"))
    var profile: String?
    @Option(
        help: ArgumentHelp(
            "After a successful import, save these settings as a profile, so next month needs only --profile NAME.",
            valueName: "name"))
    var saveProfile: String?
    @Flag(help: "Show what would be added, skipped as duplicate and left uncategorised; write nothing.") var dryRun =
        false
    @Flag(help: "Import the readable lines and report every line skipped, instead of importing nothing.")
    var skipInvalid = false
    @OptionGroup var report: ReportOptions

    /// Coffer keeps one currency per vault and converts nothing (the Budget design): a statement
    /// in another currency, by --currency or by its own currency column, is refused, never booked
    /// as if it were the vault's.
    func checkCurrency(
        _ statement: BankStatement, vault: Currency, settings: ImportProfile, hledger: HledgerRules?
    ) throws {
        var found: [String] = []
        if let currency = settings.currency {
            found.append(try CommandContext.input { try Currency.named(currency) }.code)
        }
        // hledger's `currency` may be a symbol: the vault's own symbol is the vault's currency.
        if let currency = hledger?.currency {
            found.append(currency == vault.symbol ? vault.code : ((try? Currency.named(currency))?.code ?? currency))
        }
        found += statement.currencies
        guard let other = found.first(where: { $0 != vault.code }) else { return }
        throw CLIError(
            .invalidInput,
            "This statement is in \(other), but the vault keeps its money in \(vault.code). Coffer converts no currencies, so nothing was imported.",
            // A symbol (`$`) names no one currency: the hint needs a code `init` takes.
            hint: (try? Currency.named(other)).map {
                "Import it into a vault kept in \($0.code): coffer init --currency \($0.code) --vault PATH"
            })
    }

    func run() throws {
        // A profile's settings come from the vault: it is opened first when one is named.
        // Settings come from a saved profile, then an hledger rules file, then the flags given.
        var base = ImportProfile(name: "")
        var opened: Ledger?
        if let profile {
            let ledger = try options.openLedger()
            opened = ledger
            base = try ledger.importProfile(named: profile)
        }
        // A rules file given now, else the one the profile keeps.
        let rulesText = try statement.rulesFile.map(StatementOptions.readRulesText) ?? base.hledgerRules
        let hledger = try rulesText.map(StatementOptions.parseRules)
        if let hledger { base = StatementOptions.merged(hledger.profile, over: base) }
        var settings = StatementOptions.merged(statement.given, over: base)
        settings.hledgerRules = rulesText
        try StatementOptions.check(settings)
        let into = settings.destination ?? .transactions
        let progress = Progress(enabled: Terminal.standardErrorIsTerminal && !report.json)
        let (ledger, bankStatement) = try open(settings: settings, hledger: hledger, opened: opened, progress: progress)
        switch into {
        case .transactions:
            try importTransactions(
                bankStatement, ledger: ledger, settings: settings, hledger: hledger, progress: progress)
        case .updates:
            try importUpdates(
                bankStatement, hledger: hledger, accountName: settings.account ?? "", ledger: ledger,
                progress: progress)
        }
        if let saveProfile, !dryRun {
            // The date format found in this file is kept: next month's may not tell it (no day above 12).
            var saved = settings
            saved.name = saveProfile
            saved.destination = into
            let datePattern = bankStatement.layout.datePattern
            if saved.dateFormat == nil, datePattern != .iso { saved.dateFormat = datePattern.description }
            let profile = try ledger.saveImportProfile(saved, replacing: true)
            Terminal.note(
                "Saved import profile \(profile.name). Next time: coffer import csv FILE --profile \(profile.name)")
        } else if saveProfile != nil {
            Terminal.note("A dry run saves no profile: run it again without --dry-run to save it.")
        }
    }

    /// Reads the statement's header and surveys its lines (opening the vault, when no profile
    /// has, once the file is known to read), and checks its currency.
    func open(settings: ImportProfile, hledger: HledgerRules?, opened: Ledger?, progress: Progress) throws -> (
        ledger: Ledger, statement: BankStatement
    ) {
        let name = file == "-" ? "standard input" : file
        progress.step("Reading \(name)")
        let statement = try CLIError.importing {
            try BankStatement(
                data: try Import.read(file), name: name,
                delimiter: settings.delimiter.flatMap(StatementOptions.separator),
                skipLines: settings.skipRows ?? 0, hasHeader: !settings.noHeader, encoding: settings.encoding,
                detectHeader: settings.skipRows == nil, columns: StatementOptions.columns(settings),
                currencyColumn: hledger?.currencyColumn)
        } hint: { error in
            switch error.kind {
            case "encoding":
                settings.encoding == .utf8
                    ? "Say its encoding: --encoding cp1252 (Windows, most European banks) or --encoding latin1."
                    : "Try the other: --encoding utf-8, latin1 or cp1252."
            case "dateFormat":
                "Say which: " + error.candidates.map { "--date-format \($0)" }.joined(separator: " or ") + "."
            case "column":
                error.candidates.isEmpty
                    ? "This file has no header row; number columns from 1."
                    : "The columns are: \(error.candidates.joined(separator: ", "))"
            default: nil
            }
        }
        if statement.detectedPreambleLines > 0 {
            Output.advice(
                "Found the titles on line \(statement.detectedPreambleLines + 1); skipped the \(statement.detectedPreambleLines) line\(statement.detectedPreambleLines == 1 ? "" : "s") before them."
            )
        }
        if settings.dateFormat == nil, statement.layout.datePattern != .iso {
            Output.advice("Dates read as \(statement.layout.datePattern) (the only way every date in the file reads).")
        }
        let ledger = try opened ?? options.openLedger()
        try checkCurrency(statement, vault: ledger.currency, settings: settings, hledger: hledger)
        return (ledger, statement)
    }

    /// A refusal of the import as a whole: lines that cannot be read, or a rules file's
    /// `account2` names this vault does not have.
    static func refusal(_ error: CofferError) -> CLIError? {
        switch error.kind {
        case "lines":
            return CLIError(
                .invalidInput, "\(error.message). Nothing was imported.",
                hint:
                    "Fix \(error.candidates.isEmpty ? "it" : "them") (see --date-format, --decimal-comma, --*-column), or import the rest with --skip-invalid.",
                details: error.candidates)
        case "ledger account":
            let unknown = error.candidates
            return CLIError(
                .invalidInput,
                "The rules file places lines in \(unknown.joined(separator: ", ")), which name\(unknown.count == 1 ? "s" : "") no category, goal or income source of this vault. Nothing was imported.",
                hint:
                    "Add \(unknown.count == 1 ? "it" : "them") (coffer category add NAME --type needs|wants, coffer income add NAME …), or change account2 to one this vault has: its last part is matched by name."
            )
        default: return nil
        }
    }

    func importTransactions(
        _ statement: BankStatement, ledger: Ledger, settings: ImportProfile, hledger: HledgerRules?, progress: Progress
    ) throws {
        var request = Ledger.StatementImportOptions(fileName: URL(fileURLWithPath: file).lastPathComponent)
        request.account = settings.account
        request.rules = try settings.ruleSet.map { try ledger.ruleSet(named: $0) }
        request.hledger = hledger
        request.skipInvalid = skipInvalid
        request.dryRun = dryRun
        // Each line's outcome is shown only with --json or --dry-run: a large import makes none.
        request.reportLines = report.json || dryRun
        // Read again only for what comes after: a profile to save, or the shell's next command.
        request.thenRead = saveProfile != nil || CommandSession.ledger(at: options.vaultURL) != nil
        // Lines are checked and written in one pass: a line that cannot be read rolls it back.
        progress.step(
            dryRun
                ? "Checking \(statement.recordCount) lines"
                : "Importing \(statement.recordCount) lines in one transaction")
        let imported: StatementImportResult
        do {
            imported = try ledger.importStatement(statement, request)
        } catch let error as CofferError {
            throw Self.refusal(error) ?? error
        }
        progress.finish()
        let label = try settings.account.map { try Account.validatedName($0) }
        let currency = ledger.currency
        let reportRows = imported.lines.map { line in
            Import.Report.Row(
                line: line.line, status: line.status.rawValue, date: line.date?.description,
                amount: line.amount.map { currency.decimalString($0) }, description: line.description,
                category: line.category, message: line.message)
        }
        let recorded = imported.recordedBalance
        let result = Import.Report(
            file: file, into: "transactions", account: label, dryRun: dryRun, added: imported.added,
            duplicates: imported.duplicates, uncategorised: imported.uncategorised,
            skippedInvalid: imported.invalid.count, rows: reportRows,
            closingBalance: imported.closingBalance.map {
                .init(
                    date: $0.date.description, amount: currency.decimalString($0.amount),
                    recorded: recorded != nil && !dryRun)
            })
        if report.json { return try Output.json(result) }
        reportInvalid(imported.invalid)
        if dryRun { printRows(reportRows) }
        let verb = dryRun ? "Would add" : "Added"
        Output.line(
            "\(verb) \(imported.added) transaction\(imported.added == 1 ? "" : "s")\(label.map { " from \($0)" } ?? "")"
                + (imported.added == 0
                    ? "" : " (\(imported.income) income, \(imported.added - imported.income) spending)")
                + "; \(imported.duplicates) already in the vault; \(imported.uncategorised) \(dryRun ? "would be" : "left") uncategorised."
        )
        if imported.zeroAmountLines > 0 {
            Output.line("Skipped \(imported.zeroAmountLines) line(s) with a zero amount.")
        }
        if imported.skippedByRules > 0 {
            Output.line("Skipped \(imported.skippedByRules) line(s) the rules file skips.")
        }
        let balanceAccount = label.flatMap { try? ledger.account(named: $0) }
        if let recorded, let account = balanceAccount {
            Output.line(
                "\(dryRun ? "Would record" : "Recorded") \(account.name)'s closing balance: \(currency.format(recorded.amount)) on \(recorded.date)."
            )
        } else if let shown = imported.closingBalance, balanceAccount == nil {
            Output.advice(
                "The statement closes at \(currency.format(shown.amount)) on \(shown.date). To keep it as an account's value, name the account: --account NAME."
            )
        }
        if dryRun {
            Output.line("Dry run: nothing was written.")
        } else if imported.added > 0 || recorded != nil {
            Output.advice("Undo with: coffer undo")
            if imported.uncategorised > 0 {
                Output.advice(
                    "Next: coffer transaction list --uncategorised · coffer import rules add NAME PATTERN --category C · coffer import recategorise"
                )
            }
        } else {
            Output.line("Nothing new to import.")
        }
    }

    /// A statement of balances, read as rows (it is short: a balance a line): the readable ones,
    /// and those that cannot be read.
    func readRows(_ statement: BankStatement, hledger: HledgerRules?, currency: Currency) throws -> (
        rows: [StatementLayout.Row], invalid: [(line: Int, message: String)]
    ) {
        var rows: [StatementLayout.Row] = []
        var invalid: [(line: Int, message: String)] = []
        let reader = hledger?.reader()
        var ended = false
        statement.forEachRecord { record in
            WorkProgress.report(.checking, rows.count + invalid.count + 1, of: statement.recordCount)
            if ended { return }
            var description: String?
            switch reader?(record.fields) {
            case .end?:
                ended = true
                return
            case .skip?: return
            case .keep(let text, _)?: description = text
            case nil: break
            }
            do {
                let row = try statement.layout.row(
                    record.fields, line: record.line, rowHash: record.digest, currency: currency)
                rows.append(
                    description.map {
                        StatementLayout.Row(
                            line: row.line, date: row.date, amount: row.amount, description: $0, payee: row.payee,
                            balance: row.balance, rowHash: row.rowHash)
                    } ?? row)
            } catch let error as FinanceError {
                invalid.append((record.line, error.errorDescription ?? "line \(record.line): unreadable"))
            } catch {
                invalid.append((record.line, "line \(record.line): unreadable"))
            }
        }
        return (rows, invalid)
    }

    func importUpdates(
        _ statement: BankStatement, hledger: HledgerRules?, accountName: String, ledger: Ledger, progress: Progress
    ) throws {
        progress.step("Checking \(statement.recordCount) lines")
        let (rows, invalid) = try readRows(statement, hledger: hledger, currency: ledger.currency)
        if !invalid.isEmpty && !skipInvalid { throw Self.refusal(BankStatement.unreadable(invalid))! }
        let account = try ledger.account(named: accountName)
        let plan = try ledger.planUpdateImport(rows, account: account)
        let currency = ledger.currency
        // Each line's outcome is shown only with --json or --dry-run: a large import makes none.
        var reportRows: [Import.Report.Row] = []
        if report.json || dryRun {
            reportRows = plan.added.map {
                .init(
                    line: $0.line, status: "add", date: $0.update.date.description,
                    amount: currency.decimalString($0.update.amount),
                    description: $0.update.note, category: account.name, message: nil)
            }
            reportRows += plan.duplicates.map { Self.row($0, status: "duplicate", currency: currency) }
            reportRows += plan.superseded.map { Self.row($0, status: "superseded", currency: currency) }
            reportRows += invalid.map {
                .init(
                    line: $0.line, status: "invalid", date: nil, amount: nil, description: nil, category: nil,
                    message: $0.message)
            }
            reportRows.sort { $0.line < $1.line }
        }
        if !dryRun && !plan.added.isEmpty {
            progress.step("Writing \(plan.added.count) values in one transaction")
            try ledger.importUpdates(plan, of: account, from: URL(fileURLWithPath: file).lastPathComponent)
        }
        progress.finish()
        let result = Import.Report(
            file: file, into: "updates", account: account.name, dryRun: dryRun, added: plan.added.count,
            duplicates: plan.duplicates.count, uncategorised: 0, skippedInvalid: invalid.count, rows: reportRows)
        if report.json { return try Output.json(result) }
        reportInvalid(invalid)
        if dryRun { printRows(reportRows) }
        Output.line(
            "\(dryRun ? "Would add" : "Added") \(plan.added.count) value\(plan.added.count == 1 ? "" : "s") of \(account.name); "
                + "\(plan.duplicates.count) already in the vault; \(plan.superseded.count) earlier balance\(plan.superseded.count == 1 ? "" : "s") of the same day skipped."
        )
        if dryRun {
            Output.line("Dry run: nothing was written.")
        } else if plan.added.isEmpty {
            Output.line("Nothing new to import.")
        } else {
            Output.advice("Undo with: coffer undo")
        }
    }

    static func row(_ row: StatementLayout.Row, status: String, currency: Currency) -> Import.Report.Row {
        .init(
            line: row.line, status: status, date: row.date.description, amount: currency.decimalString(row.amount),
            description: row.description.isEmpty ? nil : row.description, category: nil, message: nil)
    }

    func reportInvalid(_ invalid: [(line: Int, message: String)]) {
        for item in invalid { Terminal.note("Skipped \(item.message)") }
    }

    func printRows(_ rows: [Import.Report.Row]) {
        Output.line("Dry run of \(file):")
        Render.table(
            [["line", "status", "date", "amount", "description", "category"]]
                + rows.map {
                    [
                        "\($0.line)", $0.status, $0.date ?? "", $0.amount ?? "",
                        Render.truncated($0.description ?? $0.message ?? "", to: 48), $0.category ?? "",
                    ]
                }, rightAligned: [0, 3]
        ).forEach { Output.line($0) }
        Output.line()
    }
}

/// `coffer import rules add|list|show|remove`: named rule sets, stored encrypted in the vault.
struct RulesCommands: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rules",
        abstract: "Category rules for imports: description pattern → category, kept inside the vault.",
        discussion: """
            A pattern matches a description anywhere in it, ignoring case; with * (any run) or ? (one character) it \
            must match the whole description. The first matching rule wins. Rules to a category or goal place money \
            going out; rules to an income source place money coming in.
            """,
        subcommands: [Add.self, List.self, Show.self, Remove.self, Export.self, ImportFile.self],
        defaultSubcommand: List.self)

    /// `coffer import rules export NAME [--out FILE]`: the set as a tab-separated text file.
    struct Export: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "export",
            abstract: "Write a rule set as a text file (one rule a line: pattern, category|goal|source, name).",
            discussion: "The file is plaintext: it shows the merchants your rules name.")
        @OptionGroup var options: VaultOptions
        @Argument var name: String
        @Option(help: ArgumentHelp("Where to write it (default: standard output).", valueName: "file")) var out = "-"

        func run() throws {
            let ledger = try options.openLedger()
            let set = try ledger.ruleSet(named: name)
            let text = RuleSetFile.encode(set, currency: ledger.currency, describe: ledger.describe)
            try OutputFile.write(Data(text.utf8), to: out)
            if !OutputFile.isStandardOutput(out) {
                Output.line("Wrote \(set.rules.count) rule\(set.rules.count == 1 ? "" : "s") of \(set.name) to \(out).")
            }
        }
    }

    /// `coffer import rules import FILE [--as NAME] [--replace]`.
    struct ImportFile: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "import",
            abstract: "Read a rule set from a text file written by rules export (or by hand), as one undoable change.")
        @OptionGroup var options: VaultOptions
        @Argument(help: "The file (- for standard input).") var file: String
        @Option(name: .customLong("as"), help: ArgumentHelp("The set's name (default: the file's).", valueName: "name"))
        var name: String?
        @Flag(help: "Replace the rule set of that name.") var replace = false

        func run() throws {
            guard let text = String(data: try Import.read(file), encoding: .utf8) else {
                throw CLIError(.invalidInput, "\(file) is not UTF-8 text. Nothing was imported.")
            }
            let (named, lines) = try CLIError.importing {
                try RuleSetFile.decode(text)
            } hint: { _ in
                "Each line: PATTERN<TAB>category|goal|source<TAB>NAME (see coffer import rules export)."
            }
            guard let setName = name ?? named else {
                throw CLIError(
                    .invalidInput, "The file does not name its rule set. Nothing was imported.",
                    hint: "Name it: --as NAME")
            }
            let ledger = try options.openLedger()
            let set = try ledger.importRuleSet(named: setName, lines: lines, replacing: replace)
            Output.line("Imported rule set \(set.name): \(set.rules.count) rule\(set.rules.count == 1 ? "" : "s").")
            Output.advice("Next: coffer import csv FILE --rules \"\(set.name)\" · undo with coffer undo")
        }
    }

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "add",
            abstract: "Add a rule to a rule set (created if new): PATTERN → --category, --goal or --source.",
            discussion:
                "Also accepted: the pattern as --pattern or --match, and the place as a third argument (a category, else a goal, else an income source)."
        )
        @OptionGroup var options: VaultOptions
        @Argument(help: "The rule set.") var name: String
        @Argument(help: "Text in the description, e.g. TESCO, or a wildcard pattern such as \"AMZN*MKTP\".")
        var pattern: String?
        @Argument(
            help: ArgumentHelp(
                "Where matching lines go, instead of --category, --goal or --source.", valueName: "place")) var place:
            String?
        @Option(
            name: [.customLong("pattern"), .customLong("match")],
            help: ArgumentHelp("The pattern, instead of the argument.", valueName: "pattern"))
        var patternOption: String?
        @Option(help: "The category for matching spending.") var category: String?
        @Option(help: "The savings goal for matching money set aside.") var goal: String?
        @Option(help: "The income source for matching money coming in.") var source: String?
        @Option(
            help: ArgumentHelp(
                "The text the pattern reads: payee, description, or any (default: either).", valueName: "text"))
        var field: CategoryRuleSet.Rule.Field = .any
        @Option(help: ArgumentHelp("Only lines of at least this size (either direction).", valueName: "amount"))
        var min: String?
        @Option(help: ArgumentHelp("Only lines of at most this size (either direction).", valueName: "amount"))
        var max: String?

        func validate() throws {
            guard (pattern == nil) != (patternOption == nil) else {
                throw ValidationError("Give the pattern once: as the argument after NAME, or with --pattern.")
            }
            guard [category, goal, source, place].compactMap({ $0 }).count == 1 else {
                throw ValidationError("Say where matching lines go: exactly one of --category, --goal or --source.")
            }
        }

        func run() throws {
            let ledger = try options.openLedger()
            let target: Transaction.Target
            if let category {
                target = .category(try ledger.category(named: category).id)
            } else if let goal {
                target = .goal(try ledger.goal(named: goal).id)
            } else if let source {
                target = .source(try ledger.incomeSource(named: source).id)
            } else {
                target = try ledger.place(named: place!)
            }
            let text = pattern ?? patternOption ?? ""
            let size = { (text: String?) in
                try text.map { text in try CommandContext.input { try ledger.currency.parse(text) } }
            }
            let rule = CategoryRuleSet.Rule(
                pattern: text, target: target, field: field, minimum: try size(min), maximum: try size(max))
            let (set, added) = try ledger.addRule(to: name, rule)
            guard added else {
                Output.line("Rule set \(set.name) already has that rule. Nothing was changed.")
                return
            }
            Output.line(
                "Rule \(set.rules.count) of \(set.name): \(Show.condition(of: rule, currency: ledger.currency)) → \(ledger.describe(target).name)"
            )
            Output.line(
                "Use it: coffer import csv FILE --into transactions --rules \"\(set.name)\" · undo with coffer undo")
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list", abstract: "List rule sets.")
        @OptionGroup var options: VaultOptions
        @OptionGroup var report: ReportOptions
        struct Row: Encodable { let name: String; let rules: Int }
        func run() throws {
            let ledger = try options.openLedger()
            let rows = ledger.ruleSets.map { Row(name: $0.name, rules: $0.rules.count) }
            if report.json { return try Output.json(rows) }
            guard !rows.isEmpty else {
                Output.line("No rule sets yet. Add one: coffer import rules add NAME PATTERN --category CATEGORY")
                return
            }
            Render.table(rows.map { [$0.name, "\($0.rules) rule\($0.rules == 1 ? "" : "s")"] }, indent: "").forEach {
                Output.line($0)
            }
        }
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "show",
            abstract: "Show a rule set's rules, in the order they are tried.")
        @OptionGroup var options: VaultOptions
        @Argument var name: String
        @OptionGroup var report: ReportOptions
        struct Rule: Encodable {
            let number: Int
            let pattern, field, kind, target: String
            @NullEncoded var minimum: String?
            @NullEncoded var maximum: String?
            let condition: String
        }
        struct Shown: Encodable { let name: String; let rules: [Rule] }
        func run() throws {
            let ledger = try options.openLedger()
            let set = try ledger.ruleSet(named: name)
            let currency = ledger.currency
            let rules = set.rules.enumerated().map { index, rule in
                let target = ledger.describe(rule.target)
                return Rule(
                    number: index + 1, pattern: rule.pattern, field: rule.field.rawValue, kind: target.kind,
                    target: target.name, minimum: rule.minimum.map { currency.decimalString($0) },
                    maximum: rule.maximum.map { currency.decimalString($0) },
                    condition: Self.condition(of: rule, currency: currency))
            }
            if report.json { return try Output.json(Shown(name: set.name, rules: rules)) }
            Output.line("\(set.name) (tried in order; the first rule that matches places the line)")
            Render.table(rules.map { ["\($0.number).", $0.condition, "→", "\($0.target) (\($0.kind))"] }).forEach {
                Output.line($0)
            }
        }

        /// A rule's test in words: `payee ~ AMAZON, £0.00 to £50.00`.
        static func condition(of rule: CategoryRuleSet.Rule, currency: Currency) -> String {
            var text = rule.field == .any ? rule.pattern : "\(rule.field.rawValue) ~ \(rule.pattern)"
            switch (rule.minimum, rule.maximum) {
            case (let low?, let high?): text += ", \(currency.format(low)) to \(currency.format(high))"
            case (let low?, nil): text += ", \(currency.format(low)) or more"
            case (nil, let high?): text += ", up to \(currency.format(high))"
            case (nil, nil): break
            }
            return text
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "remove",
            abstract: "Remove a rule set, or one rule of it with --rule N (undoable).")
        @OptionGroup var options: VaultOptions
        @Argument var name: String
        @Option(help: ArgumentHelp("The rule's number, from coffer import rules show.", valueName: "n")) var rule: Int?
        func run() throws {
            let ledger = try options.openLedger()
            let set = try ledger.ruleSet(named: name)
            guard let rule else {
                try ledger.removeRuleSet(set)
                Output.line("Removed rule set \(set.name) (\(set.rules.count) rules).")
                Output.advice("Undo with: coffer undo")
                return
            }
            let removed = try ledger.removeRule(rule, from: set)
            Output.line("Removed rule \(rule) (\(removed.pattern)) from \(set.name).")
            Output.advice("Undo with: coffer undo")
        }
    }
}

/// `coffer import recategorise`: runs a rule set over the transactions still in Uncategorised.
struct Recategorise: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "recategorise",
        abstract: "Place uncategorised transactions with a rule set (one undoable change).",
        aliases: ["recategorize"])
    @OptionGroup var options: VaultOptions
    @Option(help: ArgumentHelp("The rule set (needed when there is more than one).", valueName: "name")) var rules:
        String?
    @Flag(help: "Show what would move; write nothing.") var dryRun = false
    @OptionGroup var report: ReportOptions

    struct Moved: Encodable { let id, date, amount: String; let description: String?; let category: String }
    struct Result: Encodable {
        let rules: String; let dryRun: Bool; let recategorised, stillUncategorised: Int; let transactions: [Moved]
    }

    func run() throws {
        let ledger = try options.openLedger()
        let set = try ledger.ruleSetToApply(named: rules)
        let (waitingCount, moved) = ledger.recategorisation(with: set)
        if !dryRun { try ledger.recategorise(moved, with: set) }
        let currency = ledger.currency
        let rows = moved.sorted { ($0.date, $0.sequence) < ($1.date, $1.sequence) }.map { transaction in
            Moved(
                id: Ledger.shortID(transaction.id), date: transaction.date.description,
                amount: currency.decimalString(transaction.signedAmount),
                description: transaction.note, category: ledger.label(of: transaction))
        }
        if report.json {
            return try Output.json(
                Result(
                    rules: set.name, dryRun: dryRun, recategorised: moved.count,
                    stillUncategorised: waitingCount - moved.count,
                    transactions: rows))
        }
        Render.table(
            rows.map { [$0.date, $0.amount, Render.truncated($0.description ?? "", to: 48), "→ \($0.category)"] },
            rightAligned: [1]
        ).forEach { Output.line($0) }
        Output.line(
            "\(dryRun ? "Would place" : "Placed") \(moved.count) of \(waitingCount) uncategorised transactions with \(set.name); "
                + "\(waitingCount - moved.count) remain uncategorised.")
        if dryRun {
            Output.line("Dry run: nothing was written.")
        } else if moved.isEmpty {
            Output.line("Nothing was changed.")
        } else {
            Output.advice("Undo with: coffer undo")
        }
    }
}
extension StatementColumns.Destination: ExpressibleByArgument {}
extension StatementFile.Encoding: ExpressibleByArgument {}
extension CategoryRuleSet.Rule.Field: ExpressibleByArgument {}
