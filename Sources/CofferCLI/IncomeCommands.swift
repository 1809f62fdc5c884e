import ArgumentParser
import CofferKit
import FinanceCore
import Foundation

enum FrequencyOption: String, ExpressibleByArgument, CaseIterable {
    case monthly, biweekly, variable
}

/// `coffer income add|list|edit|remove`.
struct IncomeCommands: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "income", abstract: "Income sources: what you expect to earn each month.",
        subcommands: [Add.self, List.self, Edit.self, Remove.self])

    static func frequency(_ option: FrequencyOption, anchor: String?, today: CalendarDate) throws -> IncomeFrequency {
        switch option {
        case .monthly, .variable:
            guard anchor == nil else {
                throw CLIError(.invalidInput, "--anchor goes with --frequency biweekly. Nothing was changed.")
            }
            return option == .monthly ? .monthly : .variable
        case .biweekly:
            return .biweekly(anchor: try CommandContext.date(anchor, default: today))
        }
    }

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "add", abstract: "Add an income source.")
        @OptionGroup var options: VaultOptions
        @Argument var name: String
        @Argument(help: "How much each payment is (a variable source: a typical month).") var amount: String
        @Option(help: "monthly, biweekly (every 14 days from --anchor) or variable.") var frequency: FrequencyOption
        @Option(help: ArgumentHelp("A bi-weekly source's pay date to count from (default today).", valueName: "date"))
        var anchor: String?
        @Option(help: ArgumentHelp("The account it is paid into by default.", valueName: "account")) var account:
            String?

        func run() throws {
            let frequency = try IncomeCommands.frequency(
                self.frequency, anchor: anchor, today: try CommandContext.today())
            let ledger = try options.openLedger()
            let amount = try CommandContext.positiveAmount(self.amount, ledger: ledger)
            let source = try ledger.addIncomeSource(
                name: name, amount: amount, frequency: frequency,
                account: try account.map { try ledger.account(named: $0, includeClosed: false) })
            Output.line("Added \(source.name): \(ledger.currency.format(amount)) · \(frequency.name).")
            Output.advice("Next: coffer earn AMOUNT \"\(source.name)\" when it arrives · coffer budget")
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list",
            abstract: "List income sources and this month's expected total.")
        @OptionGroup var options: VaultOptions
        @OptionGroup var report: ReportOptions
        struct Row: Encodable {
            let name, amount, frequency: String
            @NullEncoded var anchor: String?
            let expectedThisMonth: String
            /// The account it is paid into by default.
            @NullEncoded var account: String?
        }

        func run() throws {
            let ledger = try options.openLedger()
            let month = BudgetMonth(containing: try CommandContext.today())
            let money = ledger.currency.decimalString
            let rows = try ledger.incomeSources.sorted { $0.name < $1.name }.map { source -> Row in
                var anchor: String?
                if case .biweekly(let date) = source.frequency { anchor = date.description }
                return Row(
                    name: source.name, amount: money(source.amount), frequency: source.frequency.name, anchor: anchor,
                    expectedThisMonth: money(try source.expected(in: month)),
                    account: ledger.account(withID: source.account)?.name)
            }
            let total = try Money.sum(try ledger.incomeSources.map { try $0.expected(in: month) })
            if report.json {
                return try Output.json([
                    "month": AnyEncodable(month.description), "total": AnyEncodable(money(total)),
                    "sources": AnyEncodable(rows),
                ])
            }
            guard !rows.isEmpty else {
                Output.line("Set up your income — add your income sources to start tracking where your money goes:")
                Output.line("  coffer income add Salary 2500 --frequency monthly")
                return
            }
            Output.line("Total this month  \(ledger.currency.format(total))")
            Render.table(
                ledger.incomeSources.sorted { $0.name < $1.name }.map { source in
                    [source.name, ledger.currency.format(source.amount), source.frequency.name.capitalized]
                }, rightAligned: [1]
            ).forEach { Output.line($0) }
        }
    }

    struct Edit: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "edit",
            abstract: "Change an income source's name, amount or frequency.")
        @OptionGroup var options: VaultOptions
        @Argument var name: String
        @Option(name: .customLong("name"), help: "A new name.") var newName: String?
        @Option(help: "A new amount.") var amount: String?
        @Option(help: "A new frequency.") var frequency: FrequencyOption?
        @Option(help: ArgumentHelp("A new bi-weekly anchor date.", valueName: "date")) var anchor: String?
        @OptionGroup var defaultAccount: DefaultAccountOptions

        func run() throws {
            let ledger = try options.openLedger()
            var source = try ledger.incomeSource(named: name)
            guard newName != nil || amount != nil || frequency != nil || anchor != nil || defaultAccount.given else {
                throw CLIError(
                    .invalidInput,
                    "Say what to change: --name, --amount, --frequency, --anchor or --account. Nothing was changed."
                )
            }
            source.account = try defaultAccount.applied(to: source.account, ledger: ledger)
            if let newName { source.name = newName }
            if let amount { source.amount = try CommandContext.positiveAmount(amount, ledger: ledger) }
            if let frequency {
                source.frequency = try IncomeCommands.frequency(
                    frequency, anchor: anchor, today: try CommandContext.today())
            } else if let anchor {
                guard case .biweekly = source.frequency else {
                    throw CLIError(.invalidInput, "--anchor applies to bi-weekly sources. Nothing was changed.")
                }
                source.frequency = .biweekly(
                    anchor: try CommandContext.date(anchor, default: try CommandContext.today()))
            }
            try ledger.saveIncomeSource(source)
            Output.line("\(source.name): \(ledger.currency.format(source.amount)) · \(source.frequency.name).")
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "remove",
            abstract: "Remove an income source (income already recorded stays).")
        @OptionGroup var options: VaultOptions
        @Argument var name: String
        func run() throws {
            let ledger = try options.openLedger()
            let source = try ledger.incomeSource(named: name)
            try ledger.removeIncomeSource(source)
            Output.line("Removed \(source.name); income already recorded from it still counts.")
            Output.advice("Undo with: coffer undo")
        }
    }
}
