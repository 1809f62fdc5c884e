import ArgumentParser
import CofferKit
import FinanceCore
import Foundation
import VaultStore

/// `coffer account add|list|show|rename|close|reopen|delete`.
struct AccountCommands: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "account",
        abstract: "Add and manage accounts: anything with a value, from a current account to a mortgage.",
        subcommands: [Add.self, List.self, Show.self, Rename.self, Close.self, Reopen.self, Delete.self]
    )

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "add",
            abstract: "Add an account.",
            discussion: """
                Categories are free text; suggested: \(Account.defaultAssetCategories.joined(separator: ", ")); \
                for liabilities \(Account.defaultLiabilityCategories.joined(separator: ", ")).
                """
        )
        @OptionGroup var options: VaultOptions
        @Argument(help: "The account's name (unique, case-insensitive).") var name: String
        @Option(help: "Its category, e.g. Cash, Savings, Investments, Pensions, Property, Mortgage.") var category:
            String
        @Flag(help: "Money owed (a mortgage, loan or card) rather than owned.") var liability = false
        @Option(help: ArgumentHelp("Its yearly growth rate for projections, e.g. 4.5%.", valueName: "rate")) var growth:
            String?
        @Option(
            parsing: .unconditional,
            help: ArgumentHelp("Its value now (or on --date); may be negative.", valueName: "amount")) var value:
            String?
        @Option(help: ArgumentHelp("The date of --value, as YYYY-MM-DD (default today).", valueName: "date")) var date:
            String?

        func run() throws {
            let today = try CommandContext.today()
            let rate = try growth.map { text in try CommandContext.input { try GrowthRate(parsing: text) } }
            guard value != nil || date == nil else {
                throw CLIError(.invalidInput, "--date goes with --value. Nothing was changed.")
            }
            let ledger = try options.openLedger()
            let amount = try value.map { text in try CommandContext.input { try ledger.currency.parse(text) } }
            let valueDate = try CommandContext.date(date, default: today)
            let account = try ledger.addAccount(
                name: name, category: category, kind: liability ? .liability : .asset, growthRate: rate,
                value: amount.map { ($0, valueDate) }, today: today)
            let currency = ledger.currency
            Output.line(
                "Added \(account.name) (\(account.category)\(liability ? ", liability" : ""))\(amount.map { ": \(currency.format($0)) on \(valueDate)" } ?? ".")"
            )
            Output.advice(amount == nil ? "Next: coffer update \"\(account.name)\" AMOUNT" : "Next: coffer overview")
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list",
            abstract: "List accounts with their current values and change over a month and a year, and each category's."
        )
        @OptionGroup var options: VaultOptions
        @OptionGroup var report: ReportOptions

        /// Change over the last month and year; null where there is nothing to compare with.
        struct Changes: Encodable {
            @NullEncoded var change1m: String?
            @NullEncoded var changePercent1m: Decimal?
            @NullEncoded var change1y: String?
            @NullEncoded var changePercent1y: Decimal?

            init(_ month: Portfolio.Change?, _ year: Portfolio.Change?, currency: Currency) {
                change1m = month.map { currency.decimalString($0.amount) }
                changePercent1m = month?.perMille.map(Render.percentNumber)
                change1y = year.map { currency.decimalString($0.amount) }
                changePercent1y = year?.perMille.map(Render.percentNumber)
            }
        }

        struct Row: Encodable {
            let name, category, kind: String
            @NullEncoded var value: String?
            @NullEncoded var growth: String?
            let closed: Bool
            @NullEncoded var updated: String?
        }

        struct CategoryRow: Encodable {
            let name, kind, value: String
            let accounts: Int
        }

        /// A row and its changes as one JSON object.
        struct WithChanges<Fields: Encodable>: Encodable {
            let fields: Fields
            let changes: Changes

            func encode(to encoder: Encoder) throws {
                try fields.encode(to: encoder)
                try changes.encode(to: encoder)
            }
        }

        func run() throws {
            let ledger = try options.openLedger()
            let today = try CommandContext.today()
            let portfolio = ledger.portfolio
            let currency = ledger.currency
            let (monthAgo, yearAgo) = (today.adding(months: -1), today.adding(months: -12))
            let accountChanges = try ledger.accounts.map { account in
                (
                    try portfolio.change(of: account, on: today, since: monthAgo),
                    try portfolio.change(of: account, on: today, since: yearAgo)
                )
            }
            let rows = ledger.accounts.map { account in
                Row(
                    name: account.name, category: account.category, kind: account.kind.rawValue,
                    value: portfolio.value(of: account, on: today).map(currency.decimalString),
                    growth: account.growthRate?.description,
                    closed: account.closed.map { $0 <= today } ?? false,
                    updated: portfolio.updates(of: account).last(where: { $0.date <= today })?.date.description)
            }
            let categories = try portfolio.distribution(on: today)
            let categoryChanges = try categories.map { category in
                (
                    try portfolio.change(ofCategory: category.name, kind: category.kind, on: today, since: monthAgo),
                    try portfolio.change(ofCategory: category.name, kind: category.kind, on: today, since: yearAgo)
                )
            }
            if report.json {
                return try Output.json([
                    "accounts": AnyEncodable(
                        zip(rows, accountChanges).map {
                            WithChanges(fields: $0, changes: Changes($1.0, $1.1, currency: currency))
                        }),
                    "categories": AnyEncodable(
                        zip(categories, categoryChanges).map { category, change in
                            WithChanges(
                                fields: CategoryRow(
                                    name: category.name, kind: category.kind.rawValue,
                                    value: currency.decimalString(category.total), accounts: category.accountCount),
                                changes: Changes(change.0, change.1, currency: currency))
                        }),
                ])
            }
            guard !rows.isEmpty else {
                Output.line(
                    "No accounts yet — add one with: coffer account add \"Current account\" --category Cash --value 1200"
                )
                return
            }
            // A liability reads as a negative amount here, so its changes are turned the same way:
            // a debt paid down shows as a rise, as it raises net worth.
            func changeCells(_ change: Portfolio.Change?, _ kind: AccountKind) throws -> [String] {
                Render.changeCells(try change?.counted(as: kind), currency: currency)
            }
            var table = [
                ["Account", "Category", "Value", "1m change", "1m %", "1y change", "1y %", "Updated", "Status"]
            ]
            for (row, (account, change)) in zip(rows, zip(ledger.accounts, accountChanges)) {
                let value =
                    portfolio.value(of: account, on: today).map { currency.format(account.kind.counted($0)) } ?? "—"
                table.append(
                    [row.name, row.category, value] + (try changeCells(change.0, account.kind))
                        + (try changeCells(change.1, account.kind)) + [
                            row.updated ?? "never",
                            row.closed ? "closed" : (account.kind == .liability ? "owed" : "open"),
                        ])
            }
            // The change columns go first on a narrow screen, the year's before the month's.
            Render.table(table, rightAligned: [2, 3, 4, 5, 6], droppable: [6, 5, 4, 3, 8, 7]).forEach {
                Output.line($0)
            }
            if !categories.isEmpty {
                Output.line()
                var totals = [["Category", "Value", "1m change", "1m %", "1y change", "1y %"]]
                for (category, change) in zip(categories, categoryChanges) {
                    totals.append(
                        [category.name, currency.format(category.kind.counted(category.total))]
                            + (try changeCells(change.0, category.kind)) + (try changeCells(change.1, category.kind)))
                }
                Render.table(totals, rightAligned: [1, 2, 3, 4, 5], droppable: [5, 4, 3, 2]).forEach {
                    Output.line($0)
                }
            }
            Output.advice("Next: coffer update NAME AMOUNT · coffer account show NAME")
        }
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "show", abstract: "Show one account: value, change, history.")
        @OptionGroup var options: VaultOptions
        @OptionGroup var report: ReportOptions
        @Argument(help: "The account (a unique prefix is enough).") var name: String

        struct Report: Encodable {
            struct Entry: Encodable {
                let date: String
                let value: String
                @NullEncoded var note: String?
                /// True for a value a flow left (`note` then says what moved it), false for one typed.
                let moved: Bool
            }
            let name, category, kind: String
            @NullEncoded var value: String?
            /// Null before the account has a month of history to compare with.
            @NullEncoded var changeSinceLastMonth: String?
            let growth: String
            @NullEncoded var closed: String?
            let history: [Entry]
            /// Titles of the notes attached to the account.
            let notes: [String]
        }

        func run() throws {
            let ledger = try options.openLedger()
            let today = try CommandContext.today()
            let account = try ledger.account(named: name)
            let portfolio = ledger.portfolio
            let currency = ledger.currency
            let current = portfolio.value(of: account, on: today)
            let monthAgo = portfolio.value(of: account, on: today.adding(months: -1)) ?? .zero
            let change = try (current ?? .zero).subtracting(monthAgo)
            let history = portfolio.updates(of: account).filter { $0.date <= today }
            if report.json {
                return try Output.json(
                    Report(
                        name: account.name, category: account.category, kind: account.kind.rawValue,
                        value: current.map(currency.decimalString),
                        changeSinceLastMonth: history.first.map { $0.date <= today.adding(months: -1) } == true
                            ? currency.decimalString(change) : nil,
                        growth: portfolio.rate(for: account).description, closed: account.closed?.description,
                        history: history.map {
                            .init(
                                date: $0.date.description, value: currency.decimalString($0.amount),
                                note: ledger.label(of: $0), moved: $0.movedBy != nil)
                        }, notes: NoteCommands.attachedTitles(account.id, ledger: ledger)))
            }
            let style = Style.current()
            Output.line(
                style.bold(account.name)
                    + style.dim(
                        "  \(account.category) · \(account.kind == .asset ? "asset" : "liability")\(account.closed.map { " · closed \($0)" } ?? "")"
                    ))
            Output.line(
                style.bold(current.map(currency.format) ?? "No value yet") + (current == nil ? "" : "  as of \(today)"))
            if let first = history.first?.date, first <= today.adding(months: -1) {
                Output.line(
                    "\(style.change(currency.format(Money(minorUnits: Int64(clamping: change.minorUnits.magnitude))), negative: change.isNegative, zero: change == .zero)) since last month"
                )
            } else if current != nil {
                Output.line("No month to compare with yet (its first value is under a month old)")
            }
            Output.line("Growth rate \(portfolio.rate(for: account)) a year (for projections)")
            NoteCommands.printAttached(account.id, ledger: ledger)
            if !history.isEmpty {
                Output.line()
                Output.line("History  \(Render.sparkline(history.map(\.amount.minorUnits)))")
                var rows: [[String]] = []
                var previous: Money?
                for update in history.suffix(24) {
                    let delta =
                        previous.map {
                            (try? update.amount.subtracting($0)).map {
                                ($0.isNegative ? "" : "+") + currency.format($0)
                            } ?? ""
                        } ?? ""
                    rows.append([
                        update.date.description, currency.format(update.amount), delta, ledger.label(of: update) ?? "",
                    ])
                    previous = update.amount
                }
                Render.table(rows, rightAligned: [1, 2]).forEach { Output.line($0) }
            }
            Output.advice("Next: coffer update \"\(account.name)\" AMOUNT")
        }
    }

    struct Rename: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "rename", abstract: "Rename an account.")
        @OptionGroup var options: VaultOptions
        @Argument var name: String
        @Argument(help: "The new name.") var newName: String

        func run() throws {
            let ledger = try options.openLedger()
            let account = try ledger.account(named: name)
            try ledger.renameAccount(account, to: newName)
            Output.line("Renamed \(account.name) to \(try ledger.account(named: newName).name).")
        }
    }

    struct Close: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "close",
            abstract: "Close an account: it leaves the totals from that date but stays in history.")
        @OptionGroup var options: VaultOptions
        @Argument var name: String
        @Option(help: ArgumentHelp("The closing date, YYYY-MM-DD (default today).", valueName: "date")) var date:
            String?

        func run() throws {
            let closing = try CommandContext.date(date, default: try CommandContext.today())
            let ledger = try options.openLedger()
            let account = try ledger.account(named: name)
            try ledger.closeAccount(account, on: closing)
            Output.line(
                "Closed \(account.name) on \(closing). It no longer counts towards your net worth from that date.")
            Output.advice("Undo with: coffer undo")
        }
    }

    struct Reopen: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "reopen", abstract: "Reopen a closed account.")
        @OptionGroup var options: VaultOptions
        @Argument var name: String

        func run() throws {
            let ledger = try options.openLedger()
            let account = try ledger.account(named: name)
            try ledger.reopenAccount(account)
            Output.line("Reopened \(account.name).")
        }
    }

    struct Delete: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "delete",
            abstract: "Delete an account and its history (undoable with coffer undo).",
            discussion:
                "Asks for confirmation on a terminal; pass --yes otherwise. To keep the history, close it instead."
        )
        @OptionGroup var options: VaultOptions
        @Argument var name: String
        @Flag(help: "Do not ask for confirmation.") var yes = false

        func run() throws {
            let ledger = try options.openLedger()
            let account = try ledger.account(named: name)
            let updates = ledger.updates(of: account)
            if !yes,
                !(try Terminal.confirm(
                    "Delete \(account.name) and its \(updates.count) value update\(updates.count == 1 ? "" : "s")?",
                    refusal: "Deleting \(account.name)"))
            {
                Output.line("Kept \(account.name). Nothing was changed.")
                return
            }
            try ledger.deleteAccount(account)
            Output.line("Deleted \(account.name) and \(updates.count) value update\(updates.count == 1 ? "" : "s").")
            Output.advice("Changed your mind? coffer undo")
        }
    }
}

/// `coffer update NAME AMOUNT`: the 30-second job.
struct Update: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "update",
        abstract: "Record an account's value (today, or on --date).",
        discussion:
            "NAME matches exactly, else by a unique case-insensitive prefix. For a liability, enter the amount owed."
    )
    @OptionGroup var options: VaultOptions
    @Argument(help: "The account (a unique prefix is enough).") var name: String
    @Argument(help: "Its value, e.g. 1234.56 or £1,234.56.") var amount: String
    @Option(help: ArgumentHelp("The date of the value, YYYY-MM-DD (default today).", valueName: "date")) var date:
        String?
    @Option(
        parsing: .unconditional, help: ArgumentHelp("Why it changed, e.g. \"annual statement\".", valueName: "text"))
    var note: String?
    @Flag(
        help: "Record a value ten times off the current one, of the other sign, or dated in the future without asking.")
    var yes = false

    func run() throws {
        let today = try CommandContext.today()
        let day = try CommandContext.date(date, default: today)
        let ledger = try options.openLedger(for: .recordingValue(on: day, today: today))
        let amount = try CommandContext.input { try ledger.currency.parse(self.amount) }
        let account = try ledger.account(named: name)
        let previous = ledger.portfolio.value(of: account, on: day)
        let currency = ledger.currency
        let doubts =
            EntryDoubts.value(amount, previous: previous, account: account.name, currency: currency)
            + EntryDoubts.future(day, today: today)
        guard try EntryDoubts.confirm(doubts, yes: yes) else { return }
        try ledger.recordValue(of: account, amount: amount, on: day, note: note)
        var line = "\(account.name): \(currency.format(amount)) on \(day)"
        if let previous, let delta = try? amount.subtracting(previous) {
            line += " (was \(currency.format(previous)), \(delta.isNegative ? "" : "+")\(currency.format(delta)))"
        }
        Output.line(line)
        Output.line("Net worth: \(currency.format(try ledger.netWorth.totals(on: today).netWorth)) as of \(today)")
        Output.advice("Next: coffer overview · undo with coffer undo")
    }
}
