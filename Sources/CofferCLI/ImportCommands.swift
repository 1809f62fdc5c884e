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
        subcommands: [JSON.self, CSVStatement.self, RulesCommands.self, Recategorise.self])

    /// The bytes of FILE, or of standard input for `-`.
    static func read(_ file: String) throws -> Data {
        if file == "-" { return FileHandle.standardInput.readDataToEndOfFile() }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: file, isDirectory: &isDirectory), !isDirectory.boolValue else {
            throw CLIError(.notFound, "No file at \(file). Nothing was imported.")
        }
        guard let contents = FileManager.default.contents(atPath: file) else { throw CLIError(.failure, "Cannot read \(file). Nothing was imported.") }
        return contents
    }

    /// `coffer import json FILE`.
    struct JSON: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "json",
            abstract: "Import Coffer's own JSON export into a vault that holds no data yet (one transaction, undoable).")
        @OptionGroup var options: VaultOptions
        @Argument(help: "The file (- for standard input).") var file: String

        func run() throws {
            let data = try Import.read(file)
            let document: ExportDocument
            do {
                document = try ExportDocumentReader.decode(data)
            } catch {
                throw CLIError(.invalidInput, "\(file) is not a Coffer JSON export: \(Self.describe(error)). Nothing was imported.")
            }
            let (currency, records, counter) = try document.records()
            let ledger = try options.openLedger()
            let userData = ledger.accounts.count + ledger.updates.count + ledger.transactions.count + ledger.incomeSources.count
                + ledger.goals.count + ledger.clients.count + ledger.invoices.count + ledger.categoryRates.count + ledger.ruleSets.count
            guard userData == 0, ledger.budgetCategories.allSatisfy(\.isDefault) else {
                throw CLIError(.invalidInput, "This vault already holds data; import only goes into a new vault. Nothing was imported.",
                               hint: "Create one (coffer init --vault NEW) and import there, or import bank statements with: coffer import csv")
            }
            var puts = records
            let importsCategories = records.contains { if case .budgetCategory = $0.1 { return true } else { return false } }
            let replacedDefaults = importsCategories ? ledger.budgetCategories.map(\.id) : []
            puts.append((ledger.settingsID ?? UUID(), .settings(VaultSettings(currency: currency, includeReceivables: document.includeReceivables))))
            if let counter {
                try ledger.writeWithoutHistory([(ledger.invoiceCounter?.id ?? UUID(), .invoiceCounter(InvoiceCounter(lastNumber: counter)))])
            }
            try ledger.commit("Imported \(records.count) records from \(URL(fileURLWithPath: file).lastPathComponent)", puts: puts, deletes: replacedDefaults)
            Output.line("Imported \(records.count) records (\(currency.code)). Undo with: coffer undo")
            Output.line("Next: coffer overview")
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

    enum Destination: String, ExpressibleByArgument, CaseIterable { case transactions, updates }

    @OptionGroup var options: VaultOptions
    @Argument(help: "The CSV file (- for standard input).") var file: String
    @Option(help: "What each line becomes: transactions (budget) or updates (an account's value on that date).") var into: Destination
    @Option(help: ArgumentHelp("The rule set that places transactions in categories (see coffer import rules).", valueName: "name")) var rules: String?
    @Option(help: ArgumentHelp("The bank account the statement is from: a label that keeps duplicate detection per account for transactions; the Coffer account (required) for updates.", valueName: "name"))
    var account: String?
    @Option(help: ArgumentHelp("The date column: its title or number.", valueName: "column")) var dateColumn: String?
    @Option(help: ArgumentHelp("The signed amount column (for updates: the balance).", valueName: "column")) var amountColumn: String?
    @Option(help: ArgumentHelp("The money-out column, instead of --amount-column.", valueName: "column")) var debitColumn: String?
    @Option(help: ArgumentHelp("The money-in column, instead of --amount-column.", valueName: "column")) var creditColumn: String?
    @Option(help: ArgumentHelp("The description column (payee, memo).", valueName: "column")) var descriptionColumn: String?
    @Option(help: ArgumentHelp("How dates are written, e.g. DD/MM/YYYY, MM/DD/YY, D MMM YYYY (default YYYY-MM-DD).", valueName: "format"))
    var dateFormat: String?
    @Flag(help: "Amounts use a decimal comma: 1.234,56.") var decimalComma = false
    @Option(help: ArgumentHelp("Lines to skip before the header (a bank's preamble).", valueName: "n")) var skipRows = 0
    @Option(help: ArgumentHelp("The separator: , ; or tab (default: guessed from the header).", valueName: "char")) var delimiter: String?
    @Flag(help: "The file has no header row: give columns by number.") var noHeader = false
    @Flag(help: "Flip every amount's sign (card statements that show purchases as positive).") var negate = false
    @Flag(help: "Show what would be added, skipped as duplicate and left uncategorised; write nothing.") var dryRun = false
    @Flag(help: "Import the readable lines and report every line skipped, instead of importing nothing.") var skipInvalid = false
    @OptionGroup var report: ReportOptions

    func validate() throws {
        guard skipRows >= 0 else { throw ValidationError("--skip-rows takes a number of lines, 0 or more.") }
        if (debitColumn == nil) != (creditColumn == nil) { throw ValidationError("Give both --debit-column and --credit-column, or --amount-column.") }
        if amountColumn != nil && debitColumn != nil { throw ValidationError("Give either --amount-column or --debit-column/--credit-column, not both.") }
        if into == .updates {
            if debitColumn != nil { throw ValidationError("Updates are balances: give --amount-column, not --debit-column/--credit-column.") }
            if rules != nil { throw ValidationError("--rules places transactions; updates have no categories.") }
            if account == nil { throw ValidationError("Say which account the balances belong to: --account NAME.") }
        }
        if let delimiter, separator(delimiter) == nil { throw ValidationError("--delimiter takes , ; or tab.") }
    }

    func separator(_ text: String) -> Character? {
        switch text.lowercased() {
        case ",", "comma": ","
        case ";", "semicolon": ";"
        case "\t", "tab", "\\t": "\t"
        default: nil
        }
    }

    static let dateTitles = ["date", "transaction date", "booking date", "posting date", "posted date", "value date", "completed date",
                             "started date", "trans. date", "datum", "buchungstag", "fecha", "data"]
    static let amountTitles = ["amount", "transaction amount", "value", "betrag", "importe", "montant"]
    static let balanceTitles = ["balance", "running balance", "closing balance", "amount", "value", "saldo", "solde"]
    static let debitTitles = ["debit", "debit amount", "paid out", "money out", "withdrawal", "withdrawals", "out"]
    static let creditTitles = ["credit", "credit amount", "paid in", "money in", "deposit", "deposits", "in"]
    static let descriptionTitles = ["description", "transaction description", "payee", "merchant", "name", "details", "narrative",
                                    "memo", "reference", "counterparty", "counter party", "beschreibung", "verwendungszweck", "concepto", "libellé"]

    func layout(for statement: StatementFile) throws -> StatementLayout {
        func resolve(_ spec: String?, flag: String, guesses: [String]) throws -> Int? {
            if let spec { return try statement.column(spec, flag: flag) }
            return statement.guessColumn(guesses)
        }
        func missing(_ what: String, flag: String) -> CLIError {
            CLIError(.invalidInput, "Say which column holds the \(what): --\(flag) TITLE or NUMBER. Nothing was imported.",
                     hint: statement.titles.isEmpty ? "This file has no header row; number columns from 1." : "The columns are: \(statement.describeTitles())")
        }
        guard let date = try resolve(dateColumn, flag: "date-column", guesses: Self.dateTitles) else { throw missing("date", flag: "date-column") }
        let amounts: StatementLayout.Amounts
        if let debitColumn, let creditColumn {
            amounts = .debitCredit(debit: try statement.column(debitColumn, flag: "debit-column"), credit: try statement.column(creditColumn, flag: "credit-column"))
        } else if let amount = try resolve(amountColumn, flag: "amount-column", guesses: into == .updates ? Self.balanceTitles : Self.amountTitles) {
            amounts = .signed(amount)
        } else if into == .transactions, let debit = statement.guessColumn(Self.debitTitles), let credit = statement.guessColumn(Self.creditTitles) {
            amounts = .debitCredit(debit: debit, credit: credit)
        } else {
            throw missing(into == .updates ? "balance" : "amount", flag: "amount-column")
        }
        // A balance's note comes only from a column named for it: a payee is not why a balance changed.
        let description = try resolve(descriptionColumn, flag: "description-column", guesses: into == .updates ? [] : Self.descriptionTitles)
        let pattern = try CommandContext.input { try DatePattern(dateFormat ?? "YYYY-MM-DD") }
        return StatementLayout(date: date, amounts: amounts, description: description, titles: statement.titles,
                               datePattern: pattern, decimalComma: decimalComma, negate: negate)
    }

    func run() throws {
        let data = try Import.read(file)
        let name = file == "-" ? "standard input" : file
        let progress = Progress(enabled: Terminal.standardErrorIsTerminal && !report.json)
        progress.step("Reading \(name)")
        let statement = try StatementFile(data: data, name: name, delimiter: delimiter.flatMap(separator), skipLines: skipRows, hasHeader: !noHeader)
        let layout = try layout(for: statement)
        let ledger = try options.openLedger()

        progress.step("Checking \(statement.records.count) lines")
        var rows: [StatementLayout.Row] = []
        var invalid: [(line: Int, message: String)] = []
        for record in statement.records {
            do {
                rows.append(try layout.row(record.fields, line: record.line, rowHash: record.digest, currency: ledger.currency))
            } catch let error as FinanceError {
                invalid.append((record.line, error.errorDescription ?? "line \(record.line): unreadable"))
            }
        }
        if !invalid.isEmpty && !skipInvalid {
            let shown = invalid.prefix(50).map(\.message) + (invalid.count > 50 ? ["and \(invalid.count - 50) more lines"] : [])
            throw CLIError(.invalidInput, invalid.count == 1 ? "\(invalid[0].message). Nothing was imported."
                                                           : "\(invalid.count) lines cannot be imported. Nothing was imported.",
                           hint: "Fix \(invalid.count == 1 ? "it" : "them") (see --date-format, --decimal-comma, --*-column), or import the rest with --skip-invalid.",
                           details: invalid.count == 1 ? [] : shown)
        }
        let label = try account.map { text in try CommandContext.input { try Account.validatedName(text) } }
        switch into {
        case .transactions: try importTransactions(rows, invalid: invalid, label: label, ledger: ledger, progress: progress)
        case .updates: try importUpdates(rows, invalid: invalid, accountName: label ?? "", ledger: ledger, progress: progress)
        }
    }

    func importTransactions(_ rows: [StatementLayout.Row], invalid: [(line: Int, message: String)], label: String?, ledger: Ledger, progress: Progress) throws {
        let ruleSet = try rules.map { try RulesCommands.find($0, in: ledger) }
        let plan = TransactionImportPlan(rows: rows.map(Self.cleaned), account: label ?? "", existing: ledger.transactions, rules: ruleSet,
                                         categories: ledger.budgetCategories, firstSequence: ledger.nextTransactionSequence)
        let currency = ledger.currency
        var reportRows: [Import.Report.Row] = plan.added.map { added in
            let transaction = added.transaction
            return .init(line: added.line, status: "add", date: transaction.date.description, amount: currency.decimalString(transaction.signedAmount),
                         description: transaction.note, category: BudgetCommands.label(of: transaction, ledger: ledger), message: nil)
        }
        reportRows += plan.duplicates.map { Self.row($0, status: "duplicate", currency: currency) }
        reportRows += plan.zeroAmountLines.map { .init(line: $0, status: "zero", date: nil, amount: nil, description: nil, category: nil, message: nil) }
        reportRows += invalid.map { .init(line: $0.line, status: "invalid", date: nil, amount: nil, description: nil, category: nil, message: $0.message) }
        reportRows.sort { $0.line < $1.line }

        if !dryRun && !plan.added.isEmpty {
            progress.step("Writing \(plan.added.count) transactions in one transaction")
            let puts = plan.added.map { ($0.transaction.id, FinanceRecord.transaction($0.transaction)) }
            try ledger.commit("Imported \(plan.added.count) transactions from \(URL(fileURLWithPath: file).lastPathComponent)", puts: puts)
        }
        progress.finish()
        let result = Import.Report(file: file, into: into.rawValue, account: label, dryRun: dryRun, added: plan.added.count,
                                   duplicates: plan.duplicates.count, uncategorised: plan.uncategorisedCount, skippedInvalid: invalid.count, rows: reportRows)
        if report.json { return try Output.json(result) }
        reportInvalid(invalid)
        if dryRun { printRows(reportRows) }
        let income = plan.added.filter { $0.transaction.type == .income }.count
        let verb = dryRun ? "Would add" : "Added"
        Output.line("\(verb) \(plan.added.count) transaction\(plan.added.count == 1 ? "" : "s")\(label.map { " from \($0)" } ?? "")"
                    + (plan.added.isEmpty ? "" : " (\(income) income, \(plan.added.count - income) spending)")
                    + "; \(plan.duplicates.count) already in the vault; \(plan.uncategorisedCount) \(dryRun ? "would be" : "left") uncategorised.")
        if !plan.zeroAmountLines.isEmpty { Output.line("Skipped \(plan.zeroAmountLines.count) line(s) with a zero amount.") }
        if dryRun {
            Output.line("Dry run: nothing was written.")
        } else if !plan.added.isEmpty {
            Output.line("Undo with: coffer undo")
            if plan.uncategorisedCount > 0 {
                Output.line("Next: coffer transaction list --uncategorised · coffer import rules add NAME PATTERN --category C · coffer import recategorise")
            }
        } else {
            Output.line("Nothing new to import.")
        }
    }

    func importUpdates(_ rows: [StatementLayout.Row], invalid: [(line: Int, message: String)], accountName: String, ledger: Ledger, progress: Progress) throws {
        let account = try ledger.account(named: accountName)
        let plan = UpdateImportPlan(rows: rows.map(Self.cleaned), accountID: account.id,
                                    existing: ledger.updates, firstSequence: ledger.nextUpdateSequence)
        if let closed = account.closed, let late = plan.added.first(where: { $0.update.date >= closed }) {
            throw CLIError(.invalidInput, "line \(late.line): \(account.name) was closed on \(closed). Nothing was imported.",
                           hint: "Reopen it first: coffer account reopen \"\(account.name)\"")
        }
        let currency = ledger.currency
        var reportRows: [Import.Report.Row] = plan.added.map {
            .init(line: $0.line, status: "add", date: $0.update.date.description, amount: currency.decimalString($0.update.amount),
                  description: $0.update.note, category: account.name, message: nil)
        }
        reportRows += plan.duplicates.map { Self.row($0, status: "duplicate", currency: currency) }
        reportRows += plan.superseded.map { Self.row($0, status: "superseded", currency: currency) }
        reportRows += invalid.map { .init(line: $0.line, status: "invalid", date: nil, amount: nil, description: nil, category: nil, message: $0.message) }
        reportRows.sort { $0.line < $1.line }
        if !dryRun && !plan.added.isEmpty {
            progress.step("Writing \(plan.added.count) values in one transaction")
            try ledger.commit("Imported \(plan.added.count) values of \(account.name) from \(URL(fileURLWithPath: file).lastPathComponent)",
                              puts: plan.added.map { ($0.update.id, .update($0.update)) })
        }
        progress.finish()
        let result = Import.Report(file: file, into: into.rawValue, account: account.name, dryRun: dryRun, added: plan.added.count,
                                   duplicates: plan.duplicates.count, uncategorised: 0, skippedInvalid: invalid.count, rows: reportRows)
        if report.json { return try Output.json(result) }
        reportInvalid(invalid)
        if dryRun { printRows(reportRows) }
        Output.line("\(dryRun ? "Would add" : "Added") \(plan.added.count) value\(plan.added.count == 1 ? "" : "s") of \(account.name); "
                    + "\(plan.duplicates.count) already in the vault; \(plan.superseded.count) earlier balance\(plan.superseded.count == 1 ? "" : "s") of the same day skipped.")
        Output.line(dryRun ? "Dry run: nothing was written." : (plan.added.isEmpty ? "Nothing new to import." : "Undo with: coffer undo"))
    }

    /// Descriptions become notes: no control characters, at most 200 characters, and without the
    /// quote `coffer export csv` puts before a cell a spreadsheet would run as a formula.
    static func cleaned(_ row: StatementLayout.Row) -> StatementLayout.Row {
        var description = row.description
        if description.hasPrefix("'"), let next = description.unicodeScalars.dropFirst().first, StatementCSV.formulaStarts.contains(next) {
            description.removeFirst()
        }
        let text = String(String.UnicodeScalarView(description.unicodeScalars.filter { !CharacterSet.controlCharacters.contains($0) }).prefix(200))
        return StatementLayout.Row(line: row.line, date: row.date, amount: row.amount, description: text, rowHash: row.rowHash)
    }

    static func row(_ row: StatementLayout.Row, status: String, currency: Currency) -> Import.Report.Row {
        .init(line: row.line, status: status, date: row.date.description, amount: currency.decimalString(row.amount),
              description: row.description.isEmpty ? nil : row.description, category: nil, message: nil)
    }

    func reportInvalid(_ invalid: [(line: Int, message: String)]) {
        for item in invalid { Terminal.note("Skipped \(item.message)") }
    }

    func printRows(_ rows: [Import.Report.Row]) {
        Output.line("Dry run of \(file):")
        Render.table([["line", "status", "date", "amount", "description", "category"]] + rows.map {
            ["\($0.line)", $0.status, $0.date ?? "", $0.amount ?? "", Render.truncated($0.description ?? $0.message ?? "", to: 48), $0.category ?? ""]
        }, rightAligned: [0, 3]).forEach { Output.line($0) }
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
        subcommands: [Add.self, List.self, Show.self, Remove.self], defaultSubcommand: List.self)

    static func find(_ name: String, in ledger: Ledger) throws -> CategoryRuleSet {
        try Ledger.match(name, among: ledger.ruleSets, name: \.name, what: "rule set", addHint: "coffer import rules add NAME PATTERN --category CATEGORY")
    }

    static func describe(_ target: Transaction.Target, ledger: Ledger) -> (kind: String, name: String) {
        switch target {
        case .category(let id): ("category", ledger.budgetCategories.first { $0.id == id }?.name ?? "(deleted category)")
        case .source(let id): ("source", ledger.incomeSources.first { $0.id == id }?.name ?? "(removed income source)")
        case .goal(let id): ("goal", ledger.goals.first { $0.id == id }?.name ?? "(removed goal)")
        case .uncategorised: ("uncategorised", BudgetCommands.uncategorisedName)
        }
    }

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add a rule to a rule set (created if new): PATTERN → --category, --goal or --source.",
            discussion: "Also accepted: the pattern as --pattern or --match, and the place as a third argument (a category, else a goal, else an income source).")
        @OptionGroup var options: VaultOptions
        @Argument(help: "The rule set.") var name: String
        @Argument(help: "Text in the description, e.g. TESCO, or a wildcard pattern such as \"AMZN*MKTP\".") var pattern: String?
        @Argument(help: ArgumentHelp("Where matching lines go, instead of --category, --goal or --source.", valueName: "place")) var place: String?
        @Option(name: [.customLong("pattern"), .customLong("match")], help: ArgumentHelp("The pattern, instead of the argument.", valueName: "pattern"))
        var patternOption: String?
        @Option(help: "The category for matching spending.") var category: String?
        @Option(help: "The savings goal for matching money set aside.") var goal: String?
        @Option(help: "The income source for matching money coming in.") var source: String?

        func validate() throws {
            guard (pattern == nil) != (patternOption == nil) else {
                throw ValidationError("Give the pattern once: as the argument after NAME, or with --pattern.")
            }
            guard [category, goal, source, place].compactMap({ $0 }).count == 1 else {
                throw ValidationError("Say where matching lines go: exactly one of --category, --goal or --source.")
            }
        }

        func run() throws {
            let setName = try CommandContext.input { try Account.validatedName(name, what: "rule set name") }
            let text = try CommandContext.input { try Account.validatedName(pattern ?? patternOption ?? "", what: "pattern") }
            guard !text.allSatisfy({ $0 == "*" }) else {
                throw CLIError(.invalidInput, "'\(text)' would match every description. Nothing was changed.")
            }
            let ledger = try options.openLedger()
            try ledger.ensureDefaultCategories()
            let target: Transaction.Target
            if let category {
                target = .category(try CategoryCommands.find(category, in: ledger).id)
            } else if let goal {
                target = .goal(try GoalCommands.find(goal, in: ledger).id)
            } else if let source {
                target = .source(try Ledger.match(source, among: ledger.incomeSources, name: \.name, what: "income source",
                                                  addHint: "coffer income add NAME AMOUNT --frequency monthly").id)
            } else {
                target = try Self.resolve(place!, in: ledger)
            }
            var set = ledger.ruleSets.first { $0.name.caseInsensitiveCompare(setName) == .orderedSame } ?? CategoryRuleSet(name: setName)
            let rule = CategoryRuleSet.Rule(pattern: text, target: target)
            guard !set.rules.contains(rule) else {
                Output.line("Rule set \(set.name) already has that rule. Nothing was changed.")
                return
            }
            set.rules.append(rule)
            let label = RulesCommands.describe(target, ledger: ledger).name
            try ledger.commit("Added rule \(text) → \(label) to \(set.name)", puts: [(set.id, .categoryRuleSet(set))])
            Output.line("Rule \(set.rules.count) of \(set.name): \(text) → \(label)")
            Output.line("Use it: coffer import csv FILE --into transactions --rules \"\(set.name)\" · undo with coffer undo")
        }

        /// A place named without saying what it is: a category if one matches, else a goal,
        /// else an income source; nothing matching (or a name shared by two kinds) is refused.
        static func resolve(_ place: String, in ledger: Ledger) throws -> Transaction.Target {
            let found: [Transaction.Target] = [
                (try? CategoryCommands.find(place, in: ledger)).map { .category($0.id) },
                (try? GoalCommands.find(place, in: ledger)).map { .goal($0.id) },
                (try? Ledger.match(place, among: ledger.incomeSources, name: \.name, what: "income source", addHint: "")).map { .source($0.id) },
            ].compactMap { $0 }
            guard found.count == 1 else {
                throw CLIError(.invalidInput, found.isEmpty ? "No category, goal or income source matches '\(place)'. Nothing was changed."
                                                            : "'\(place)' names more than one kind of place. Nothing was changed.",
                               hint: "Say which: --category, --goal or --source.")
            }
            return found[0]
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List rule sets.")
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
            Render.table(rows.map { [$0.name, "\($0.rules) rule\($0.rules == 1 ? "" : "s")"] }, indent: "").forEach { Output.line($0) }
        }
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show a rule set's rules, in the order they are tried.")
        @OptionGroup var options: VaultOptions
        @Argument var name: String
        @OptionGroup var report: ReportOptions
        struct Rule: Encodable { let number: Int; let pattern, kind, target: String }
        struct Shown: Encodable { let name: String; let rules: [Rule] }
        func run() throws {
            let ledger = try options.openLedger()
            let set = try RulesCommands.find(name, in: ledger)
            let rules = set.rules.enumerated().map { index, rule in
                let target = RulesCommands.describe(rule.target, ledger: ledger)
                return Rule(number: index + 1, pattern: rule.pattern, kind: target.kind, target: target.name)
            }
            if report.json { return try Output.json(Shown(name: set.name, rules: rules)) }
            Output.line(set.name)
            Render.table(rules.map { ["\($0.number).", $0.pattern, "→", "\($0.target) (\($0.kind))"] }).forEach { Output.line($0) }
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove a rule set, or one rule of it with --rule N (undoable).")
        @OptionGroup var options: VaultOptions
        @Argument var name: String
        @Option(help: ArgumentHelp("The rule's number, from coffer import rules show.", valueName: "n")) var rule: Int?
        func run() throws {
            let ledger = try options.openLedger()
            var set = try RulesCommands.find(name, in: ledger)
            guard let rule else {
                try ledger.commit("Removed rule set \(set.name)", deletes: [set.id])
                Output.line("Removed rule set \(set.name) (\(set.rules.count) rules). Undo with: coffer undo")
                return
            }
            guard (1...max(1, set.rules.count)).contains(rule), rule <= set.rules.count else {
                throw CLIError(.invalidInput, "\(set.name) has no rule \(rule); it has \(set.rules.count). Nothing was changed.",
                               hint: "See them: coffer import rules show \"\(set.name)\"")
            }
            let removed = set.rules.remove(at: rule - 1)
            try ledger.commit("Removed rule \(removed.pattern) from \(set.name)", puts: [(set.id, .categoryRuleSet(set))])
            Output.line("Removed rule \(rule) (\(removed.pattern)) from \(set.name). Undo with: coffer undo")
        }
    }
}

/// `coffer import recategorise`: runs a rule set over the transactions still in Uncategorised.
struct Recategorise: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "recategorise", abstract: "Place uncategorised transactions with a rule set (one undoable change).",
        aliases: ["recategorize"])
    @OptionGroup var options: VaultOptions
    @Option(help: ArgumentHelp("The rule set (needed when there is more than one).", valueName: "name")) var rules: String?
    @Flag(help: "Show what would move; write nothing.") var dryRun = false
    @OptionGroup var report: ReportOptions

    struct Moved: Encodable { let id, date, amount: String; let description: String?; let category: String }
    struct Result: Encodable { let rules: String; let dryRun: Bool; let recategorised, stillUncategorised: Int; let transactions: [Moved] }

    func run() throws {
        let ledger = try options.openLedger()
        let set: CategoryRuleSet
        if let rules {
            set = try RulesCommands.find(rules, in: ledger)
        } else if ledger.ruleSets.count == 1 {
            set = ledger.ruleSets[0]
        } else {
            throw CLIError(.invalidInput, ledger.ruleSets.isEmpty ? "There are no rule sets yet. Nothing was changed."
                                                                 : "Say which rule set to use: --rules NAME. Nothing was changed.",
                           hint: ledger.ruleSets.isEmpty ? "Add one: coffer import rules add NAME PATTERN --category CATEGORY"
                                                         : "Rule sets: \(ledger.ruleSets.map(\.name).joined(separator: ", "))")
        }
        let waiting = ledger.transactions.filter { $0.target == .uncategorised }
        var moved: [Transaction] = []
        for transaction in waiting {
            guard let target = set.target(for: transaction.note ?? "", amount: transaction.signedAmount) else { continue }
            moved.append(transaction.placed(at: target, categories: ledger.budgetCategories))
        }
        if !dryRun && !moved.isEmpty {
            try ledger.commit("Recategorised \(moved.count) transactions with \(set.name)", puts: moved.map { ($0.id, .transaction($0)) })
        }
        let currency = ledger.currency
        let rows = moved.sorted { ($0.date, $0.sequence) < ($1.date, $1.sequence) }.map { transaction in
            Moved(id: BudgetCommands.shortID(transaction.id), date: transaction.date.description, amount: currency.decimalString(transaction.signedAmount),
                  description: transaction.note, category: BudgetCommands.label(of: transaction, ledger: ledger))
        }
        if report.json {
            return try Output.json(Result(rules: set.name, dryRun: dryRun, recategorised: moved.count, stillUncategorised: waiting.count - moved.count,
                                          transactions: rows))
        }
        Render.table(rows.map { [$0.date, $0.amount, Render.truncated($0.description ?? "", to: 48), "→ \($0.category)"] },
                     rightAligned: [1]).forEach { Output.line($0) }
        Output.line("\(dryRun ? "Would place" : "Placed") \(moved.count) of \(waiting.count) uncategorised transactions with \(set.name); "
                    + "\(waiting.count - moved.count) remain uncategorised.")
        Output.line(dryRun ? "Dry run: nothing was written." : (moved.isEmpty ? "Nothing was changed." : "Undo with: coffer undo"))
    }
}
