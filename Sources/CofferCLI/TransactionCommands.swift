import ArgumentParser
import CofferKit
import FinanceCore
import Foundation

/// `coffer transaction list|edit|delete`.
struct TransactionCommands: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "transaction", abstract: "Budget transactions: list, correct, delete (all undoable).",
        subcommands: [List.self, Edit.self, Delete.self])

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list",
            abstract:
                "List a month's transactions, newest first; a --from/--to range's, or with --text, --min or --max every month's (unless --month is given)."
        )
        @OptionGroup var options: VaultOptions
        @OptionGroup var monthOptions: BudgetCommands.MonthOptions
        @OptionGroup var filter: FilterOptions
        @OptionGroup var report: ReportOptions
        @Option(help: "Only this category.") var category: String?
        @Flag(help: "Every uncategorised transaction, of any month (unless --month is given).") var uncategorised =
            false
        func run() throws {
            let today = try CommandContext.today()
            if monthOptions.month != nil, filter.from != nil || filter.to != nil {
                throw CLIError(
                    .invalidInput, "--month and --from/--to both choose the dates: give one or the other.")
            }
            let ledger = try options.openLedger()
            let within = try filter.resolve(ledger)
            let summary = try ledger.budget.summary(for: try monthOptions.resolve(today: today))
            // One month unless a range is given; a filter (--text, --min, --max) or --uncategorised
            // without --month looks at every month, as hledger's queries do: a search that quietly
            // looked at this month only would say "no match" about tacos bought in March.
            let spansMonths = monthOptions.month == nil && (!filter.isEmpty || uncategorised)
            var transactions =
                spansMonths
                ? ledger.transactions.sorted { ($0.date, $0.sequence) > ($1.date, $1.sequence) } : summary.transactions
            if uncategorised { transactions = transactions.filter { $0.target == .uncategorised } }
            if let category {
                let found = try ledger.category(named: category)
                transactions = transactions.filter { $0.target == .category(found.id) }
            }
            transactions = ledger.filtered(transactions, by: within)
            if report.json {
                return try Output.json([
                    "month": AnyEncodable(spansMonths ? nil : summary.month.description),
                    "from": AnyEncodable(within.from?.description), "to": AnyEncodable(within.to?.description),
                    "transactions": AnyEncodable(transactions.map { BudgetCommands.item($0, ledger: ledger) }),
                ])
            }
            guard !transactions.isEmpty else {
                if !filter.isEmpty {
                    Output.line("No transactions\(spansMonths ? "" : " in \(summary.month.title)") match.")
                } else if uncategorised {
                    Output.line("No uncategorised transactions.")
                } else {
                    Output.line(
                        "No transactions in \(summary.month.title)\(category.map { " for \($0)" } ?? ""). Add one: coffer spend AMOUNT CATEGORY"
                    )
                }
                return
            }
            BudgetCommands.recentLines(transactions, ledger: ledger, today: today, limit: .max).forEach {
                Output.line($0)
            }
            Output.advice(
                uncategorised
                    ? "Next: coffer transaction edit ID --category C · coffer import recategorise --rules NAME"
                    : "Next: coffer transaction edit ID --amount A · coffer transaction delete ID")
        }
    }

    struct Edit: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "edit",
            abstract: "Correct a transaction's amount, date, note or category.")
        @OptionGroup var options: VaultOptions
        @Argument(help: "The id shown by coffer transaction list (its first characters are enough).") var id: String
        @Option(help: "A new amount.") var amount: String?
        @Option(help: ArgumentHelp("A new date, YYYY-MM-DD.", valueName: "date")) var date: String?
        @Option(help: "A new note.") var note: String?
        @Option(help: "A new category (for spending).") var category: String?
        @Option(help: "A new income source (for income).") var source: String?
        @Option(help: ArgumentHelp("The account the money left (spending, saving).", valueName: "account"))
        var from: String?
        @Option(help: ArgumentHelp("The account it arrived in (income, saving).", valueName: "account"))
        var into: String?
        @Flag(help: "Move no account: the transaction stops moving the accounts it named.") var noAccount = false
        func run() throws {
            let ledger = try options.openLedger()
            let transaction = try ledger.transaction(withID: id)
            guard
                amount != nil || date != nil || note != nil || category != nil || source != nil || from != nil
                    || into != nil || noAccount
            else {
                throw CLIError(
                    .invalidInput,
                    "Say what to change: --amount, --date, --note, --category, --source, --from, --into or --no-account. Nothing was changed."
                )
            }
            if noAccount, from != nil || into != nil {
                throw CLIError(
                    .invalidInput, "--no-account contradicts --from and --into; give one. Nothing was changed.")
            }
            let none: Ledger.FlowAccount? = noAccount ? Ledger.FlowAccount.none : nil
            let edit = Ledger.TransactionEdit(
                amount: try amount.map { try CommandContext.positiveAmount($0, ledger: ledger) },
                date: try date.map { try CommandContext.date($0, default: transaction.date) }, note: note,
                category: try category.map { try ledger.category(named: $0) },
                source: try source.map { try ledger.incomeSource(named: $0) },
                from: try from.map { .account(try ledger.account(named: $0)) }
                    ?? (noAccount && transaction.type != .income ? none : nil),
                to: try into.map { .account(try ledger.account(named: $0)) }
                    ?? (noAccount && transaction.type != .expense ? none : nil))
            let edited = try ledger.editTransaction(transaction, edit)
            Output.line(
                "Updated: \(ledger.label(of: edited)) \(ledger.currency.format(edited.amount)) on \(edited.date).")
        }
    }

    struct Delete: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "delete",
            abstract: "Delete a transaction (asks on a terminal; --yes otherwise; undoable).")
        @OptionGroup var options: VaultOptions
        @Argument var id: String
        @Flag(help: "Do not ask for confirmation.") var yes = false
        func run() throws {
            let ledger = try options.openLedger()
            let transaction = try ledger.transaction(withID: id)
            let label =
                "\(ledger.label(of: transaction)) \(ledger.currency.format(transaction.amount)) on \(transaction.date)"
            if !yes, !(try Terminal.confirm("Delete \(label)?", refusal: "Deleting a transaction")) {
                Output.line("Kept it. Nothing was changed.")
                return
            }
            try ledger.deleteTransaction(transaction)
            Output.line("Deleted \(label).")
            Output.advice("Undo with: coffer undo")
        }
    }
}
