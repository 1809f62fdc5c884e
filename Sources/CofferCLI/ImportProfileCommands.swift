import ArgumentParser
import CofferKit
import FinanceCore
import Foundation

/// What a bank's statement needs, as `coffer import csv` and `coffer import profile add` take it.
struct StatementOptions: ParsableArguments {
    @Option(
        help:
            "What each line becomes: transactions (budget) or updates (an account's value on that date). Needed unless a profile says it."
    )
    var into: StatementColumns.Destination?
    @Option(
        help: ArgumentHelp(
            "The rule set that places transactions in categories (see coffer import rules).", valueName: "name"))
    var rules: String?
    @Option(
        help: ArgumentHelp(
            "The bank account the statement is from: a label that keeps duplicate detection per account for transactions; the Coffer account (required) for updates.",
            valueName: "name"))
    var account: String?
    @Option(help: ArgumentHelp("The date column: its title or number.", valueName: "column")) var dateColumn: String?
    @Option(help: ArgumentHelp("The signed amount column (for updates: the balance).", valueName: "column"))
    var amountColumn: String?
    @Option(help: ArgumentHelp("The money-out column, instead of --amount-column.", valueName: "column"))
    var debitColumn: String?
    @Option(help: ArgumentHelp("The money-in column, instead of --amount-column.", valueName: "column"))
    var creditColumn: String?
    @Option(help: ArgumentHelp("The description column (memo, reference).", valueName: "column"))
    var descriptionColumn: String?
    @Option(
        help: ArgumentHelp(
            "The payee column, when the statement has one beside the description (found by title otherwise).",
            valueName: "column"))
    var payeeColumn: String?
    @Option(
        help: ArgumentHelp(
            "For transactions: the running balance column; the latest balance becomes --account's value.",
            valueName: "column"))
    var balanceColumn: String?
    @Option(
        help: ArgumentHelp(
            "How dates are written, e.g. DD/MM/YYYY, MM/DD/YY, D MMM YYYY (default YYYY-MM-DD).", valueName: "format"))
    var dateFormat: String?
    @Flag(help: "Amounts use a decimal comma: 1.234,56.") var decimalComma = false
    @Option(
        help: ArgumentHelp(
            "Lines to skip before the header (default: a preamble before the row of titles is found).", valueName: "n"))
    var skipRows: Int?
    @Option(help: ArgumentHelp("The file's text encoding: utf-8 (default), latin1 or cp1252.", valueName: "name"))
    var encoding: StatementFile.Encoding?
    @Option(
        help: ArgumentHelp(
            "The statement's currency; refused unless it is the vault's (Coffer converts nothing).", valueName: "code"))
    var currency: String?
    @Option(help: ArgumentHelp("The separator: , ; or tab (default: guessed from the header).", valueName: "char"))
    var delimiter: String?
    @Flag(help: "The file has no header row: give columns by number.") var noHeader = false
    @Flag(help: "Flip every amount's sign (card statements that show purchases as positive).") var negate = false
    @Option(
        help: ArgumentHelp(
            "An hledger CSV rules file: its fields, skip, separator, date-format, decimal-mark, encoding, currency, description and if/account2 blocks (instead of --rules). A saved profile keeps its text.",
            valueName: "file"))
    var rulesFile: String?

    static func readRulesText(_ path: String) throws -> String {
        guard let text = String(data: try Import.read(path), encoding: .utf8) else {
            throw CLIError(.invalidInput, "\(path) is not UTF-8 text. Nothing was imported.")
        }
        return text.replacingOccurrences(of: "\r\n", with: "\n")
    }

    static func parseRules(_ text: String) throws -> HledgerRules {
        try CLIError.importing {
            try HledgerRules(text)
        } hint: { _ in
            "Coffer reads hledger's skip, fields, separator, date-format, decimal-mark, encoding, currency, description, account1, account2 and if blocks: see coffer help import csv."
        }
    }

    /// The settings as given here, as an unnamed profile.
    var given: ImportProfile {
        var profile = ImportProfile(name: "")
        profile.destination = into
        (profile.account, profile.ruleSet, profile.dateColumn, profile.amountColumn) = (
            account, rules, dateColumn, amountColumn
        )
        (profile.debitColumn, profile.creditColumn, profile.descriptionColumn, profile.dateFormat) = (
            debitColumn, creditColumn, descriptionColumn, dateFormat
        )
        (profile.decimalComma, profile.negate, profile.noHeader) = (decimalComma, negate, noHeader)
        (profile.skipRows, profile.delimiter, profile.currency) = (skipRows, delimiter, currency)
        (profile.payeeColumn, profile.balanceColumn) = (payeeColumn, balanceColumn)
        profile.encoding = encoding ?? .utf8
        return profile
    }

    /// The settings given here over a saved profile's: what was given wins, the rest comes from
    /// the profile (an on/off flag can only be turned on).
    static func merged(_ given: ImportProfile, over stored: ImportProfile) -> ImportProfile {
        var merged = stored
        merged.destination = given.destination ?? stored.destination
        merged.account = given.account ?? stored.account
        merged.ruleSet = given.ruleSet ?? stored.ruleSet
        merged.dateColumn = given.dateColumn ?? stored.dateColumn
        merged.amountColumn = given.amountColumn ?? stored.amountColumn
        merged.debitColumn = given.debitColumn ?? stored.debitColumn
        merged.creditColumn = given.creditColumn ?? stored.creditColumn
        merged.descriptionColumn = given.descriptionColumn ?? stored.descriptionColumn
        merged.payeeColumn = given.payeeColumn ?? stored.payeeColumn
        merged.balanceColumn = given.balanceColumn ?? stored.balanceColumn
        merged.dateFormat = given.dateFormat ?? stored.dateFormat
        merged.decimalComma = given.decimalComma || stored.decimalComma
        merged.negate = given.negate || stored.negate
        merged.noHeader = given.noHeader || stored.noHeader
        merged.skipRows = given.skipRows ?? stored.skipRows
        merged.delimiter = given.delimiter ?? stored.delimiter
        merged.encoding = given.encoding != .utf8 ? given.encoding : stored.encoding
        merged.currency = given.currency ?? stored.currency
        return merged
    }

    /// Settings that cannot work together are refused (64) before any file is read.
    static func check(_ settings: ImportProfile, consequence: String = "Nothing was imported.") throws {
        func refuse(_ message: String) -> CLIError { CLIError(.invalidInput, message + " " + consequence) }
        guard let destination = settings.destination else {
            throw refuse("Say what each line becomes: --into transactions or --into updates (or use a --profile).")
        }
        guard (settings.skipRows ?? 0) >= 0 else { throw refuse("--skip-rows takes a number of lines, 0 or more.") }
        if (settings.debitColumn == nil) != (settings.creditColumn == nil) {
            throw refuse("Give both --debit-column and --credit-column, or --amount-column.")
        }
        if settings.amountColumn != nil && settings.debitColumn != nil {
            throw refuse("Give either --amount-column or --debit-column/--credit-column, not both.")
        }
        if destination == .updates {
            if settings.debitColumn != nil {
                throw refuse("Updates are balances: give --amount-column, not --debit-column/--credit-column.")
            }
            if settings.ruleSet != nil || settings.hledgerRules != nil {
                throw refuse("--rules and --rules-file place transactions; updates have no categories.")
            }
            if settings.balanceColumn != nil {
                throw refuse("Updates read the balance from --amount-column; --balance-column is for transactions.")
            }
            if settings.account == nil { throw refuse("Say which account the balances belong to: --account NAME.") }
        }
        if settings.ruleSet != nil && settings.hledgerRules != nil {
            throw refuse("Give --rules or --rules-file, not both.")
        }
        if let delimiter = settings.delimiter, separator(delimiter) == nil {
            throw refuse("--delimiter takes , ; or tab.")
        }
        if let dateFormat = settings.dateFormat { _ = try CommandContext.input { try DatePattern(dateFormat) } }
        if let currency = settings.currency { _ = try CommandContext.input { try Currency.named(currency) } }
    }

    static func separator(_ text: String) -> Character? {
        switch text.lowercased() {
        case ",", "comma": ","
        case ";", "semicolon": ";"
        case "\t", "tab", "\\t": "\t"
        default: nil
        }
    }

    static func columns(_ settings: ImportProfile) -> StatementColumns {
        StatementColumns(
            destination: settings.destination ?? .transactions, date: settings.dateColumn,
            amount: settings.amountColumn, debit: settings.debitColumn, credit: settings.creditColumn,
            description: settings.descriptionColumn, payee: settings.payeeColumn, balance: settings.balanceColumn,
            dateFormat: settings.dateFormat,
            decimalComma: settings.decimalComma, negate: settings.negate)
    }
}

/// `coffer import profile add|list|show|remove`: a bank's statement settings, kept encrypted in
/// the vault, so next month's import is `coffer import csv FILE --profile NAME`.
struct ImportProfileCommands: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "profile",
        abstract: "Keep a bank's statement settings (columns, formats, account, rules) under a name.",
        subcommands: [Add.self, List.self, Show.self, Remove.self])

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "add",
            abstract: "Save statement settings under NAME (or, with --replace, in place of the saved ones).",
            discussion: "Or save them from a first import: coffer import csv FILE ... --save-profile NAME")
        @OptionGroup var options: VaultOptions
        @Argument(help: "The profile's name, e.g. the bank's.") var name: String
        @OptionGroup var statement: StatementOptions
        @Flag(help: "Replace the profile of that name.") var replace = false

        func run() throws {
            var profile = statement.given
            if let path = statement.rulesFile {
                let text = try StatementOptions.readRulesText(path)
                profile = StatementOptions.merged(profile, over: try StatementOptions.parseRules(text).profile)
                profile.hledgerRules = text
            }
            profile.name = name
            try StatementOptions.check(profile, consequence: "Nothing was changed.")
            let ledger = try options.openLedger()
            // What import csv would refuse is refused now, not next month.
            if let ruleSet = profile.ruleSet { _ = try ledger.ruleSet(named: ruleSet) }
            if let code = profile.currency, code.uppercased() != ledger.currency.code {
                throw CLIError(
                    .invalidInput,
                    "This vault keeps its money in \(ledger.currency.code); a profile for statements in \(code.uppercased()) could never import. Nothing was changed."
                )
            }
            let saved = try ledger.saveImportProfile(profile, replacing: replace)
            Output.line("Saved import profile \(saved.name).")
            Output.advice("Next: coffer import csv FILE --profile \(saved.name) · undo with coffer undo")
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list", abstract: "List the saved import profiles.")
        @OptionGroup var options: VaultOptions
        @OptionGroup var report: ReportOptions

        func run() throws {
            let ledger = try options.openLedger()
            if report.json {
                return try Output.json(["profiles": ledger.importProfiles.map(ImportProfileCommands.json)])
            }
            guard !ledger.importProfiles.isEmpty else {
                Output.line("No import profiles yet.")
                Output.advice("Next: coffer import csv FILE --into transactions ... --save-profile NAME")
                return
            }
            Render.table(
                [["Profile", "Into", "Account", "Rules"]]
                    + ledger.importProfiles.map {
                        [$0.name, $0.destination?.rawValue ?? "", $0.account ?? "", $0.ruleSet ?? ""]
                    }
            ).forEach { Output.line($0) }
        }
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "show", abstract: "Show every setting of one import profile.")
        @OptionGroup var options: VaultOptions
        @Argument var name: String
        @OptionGroup var report: ReportOptions

        func run() throws {
            let profile = try options.openLedger().importProfile(named: name)
            let json = ImportProfileCommands.json(profile)
            if report.json { return try Output.json(json) }
            Output.line(profile.name)
            // A rules file's text is shown by its size; --json gives it whole.
            let shown = json.settings.map { key, value in
                [
                    key,
                    key == "hledgerRules"
                        ? "an hledger rules file (\(value.split(separator: "\n").count) lines)" : value,
                ]
            }
            Render.table(shown.sorted { $0[0] < $1[0] }).forEach { Output.line($0) }
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "remove", abstract: "Remove an import profile (undoable).")
        @OptionGroup var options: VaultOptions
        @Argument var name: String

        func run() throws {
            let ledger = try options.openLedger()
            let profile = try ledger.importProfile(named: name)
            try ledger.removeImportProfile(profile)
            Output.line("Removed import profile \(profile.name).")
            Output.advice("Undo with: coffer undo")
        }
    }

    /// `{"name", "settings": {"into", "account", "rules", "dateColumn", ...}}`: only what was set,
    /// by the names of the `import csv` options.
    struct JSON: Encodable {
        let name: String
        let settings: [String: String]
    }

    static func json(_ profile: ImportProfile) -> JSON {
        let pairs: [(String, String?)] = [
            ("into", profile.destination?.rawValue), ("account", profile.account), ("rules", profile.ruleSet),
            ("dateColumn", profile.dateColumn), ("amountColumn", profile.amountColumn),
            ("debitColumn", profile.debitColumn), ("creditColumn", profile.creditColumn),
            ("descriptionColumn", profile.descriptionColumn), ("payeeColumn", profile.payeeColumn),
            ("balanceColumn", profile.balanceColumn), ("hledgerRules", profile.hledgerRules),
            ("dateFormat", profile.dateFormat),
            ("decimalComma", profile.decimalComma ? "true" : nil), ("negate", profile.negate ? "true" : nil),
            ("noHeader", profile.noHeader ? "true" : nil), ("skipRows", profile.skipRows.map(String.init)),
            ("delimiter", profile.delimiter), ("encoding", profile.encoding == .utf8 ? nil : profile.encoding.rawValue),
            ("currency", profile.currency),
        ]
        return JSON(
            name: profile.name,
            settings: Dictionary(uniqueKeysWithValues: pairs.compactMap { key, value in value.map { (key, $0) } }))
    }
}
