import ArgumentParser
import CofferKit
import FinanceCore
import Foundation
import VaultStore

/// `coffer budget [needs|wants|savings]`: the Budget design's four tabs.
struct BudgetCommands: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "budget",
        abstract: "This month: remaining first, then income vs spent, then recent spending by day.",
        subcommands: [Summary.self, TypeTab.Needs.self, TypeTab.Wants.self, TypeTab.Savings.self],
        defaultSubcommand: Summary.self
    )

    struct MonthOptions: ParsableArguments {
        @Option(help: ArgumentHelp("The month, YYYY-MM (default this month).", valueName: "month")) var month: String?

        func resolve(today: CalendarDate) throws -> BudgetMonth {
            try month.map { text in try CommandContext.input { try BudgetMonth(parsing: text) } }
                ?? BudgetMonth(containing: today)
        }
    }

    struct Report: Encodable {
        struct Category: Encodable { let name, type, total: String; let count: Int; let hidden: Bool }
        struct Goal: Encodable {
            let name, thisMonth, total: String
            @NullEncoded var target: String?
            @NullEncoded var projectedCompletion: String?
            /// The linked savings account and its value today.
            @NullEncoded var account: String?
            @NullEncoded var accountValue: String?
        }
        struct Item: Encodable {
            let id, date, type, amount, label: String
            @NullEncoded var budgetType: String?
            @NullEncoded var note: String?
            /// The accounts the money left and arrived in, when it moved any.
            @NullEncoded var from: String?
            @NullEncoded var to: String?
        }
        let month, currency, income, expectedIncome, spent, remaining, needs, wants, savings, uncategorised: String
        let uncategorisedCount: Int
        let categories: [Category]
        let goals: [Goal]
        let transactions: [Item]
    }

    static func report(_ summary: MonthSummary, ledger: Ledger) -> Report {
        let money = ledger.currency.decimalString
        return Report(
            month: summary.month.description, currency: ledger.currency.code, income: money(summary.income),
            expectedIncome: money(summary.expectedIncome), spent: money(summary.spent),
            remaining: money(summary.remaining),
            needs: money(summary.needs), wants: money(summary.wants), savings: money(summary.savings),
            uncategorised: money(summary.uncategorised), uncategorisedCount: summary.uncategorisedCount,
            categories: summary.categories.map {
                .init(
                    name: $0.category.name, type: $0.category.type.rawValue, total: money($0.total),
                    count: $0.count, hidden: $0.category.isHidden)
            },
            goals: summary.goals.map {
                .init(
                    name: $0.goal.name, thisMonth: money($0.thisMonth), total: money($0.total),
                    target: $0.goal.target.map(money), projectedCompletion: $0.projectedCompletion?.description,
                    account: ledger.account(withID: $0.goal.account)?.name,
                    accountValue: goalAccountValue($0.goal, ledger: ledger).map(money))
            },
            transactions: summary.transactions.map { item($0, ledger: ledger) })
    }

    static func item(_ transaction: Transaction, ledger: Ledger) -> Report.Item {
        .init(
            id: Ledger.shortID(transaction.id), date: transaction.date.description, type: transaction.type.rawValue,
            amount: ledger.currency.decimalString(transaction.amount), label: ledger.label(of: transaction),
            budgetType: ledger.budget.budgetType(of: transaction)?.rawValue, note: transaction.note,
            from: ledger.account(withID: transaction.flow?.from)?.name,
            to: ledger.account(withID: transaction.flow?.to)?.name)
    }

    /// What a goal's linked savings account holds today.
    static func goalAccountValue(_ goal: SavingsGoal, ledger: Ledger) -> Money? {
        guard let account = ledger.account(withID: goal.account), let today = try? CommandContext.today() else {
            return nil
        }
        return ledger.portfolio.value(of: account, on: today) ?? .zero
    }

    /// "Today", "Yesterday", then the date.
    static func dayTitle(_ date: CalendarDate, today: CalendarDate) -> String {
        switch CalendarDate.days(from: date, to: today) {
        case 0: "Today"
        case 1: "Yesterday"
        default:
            "\(CalendarDate.monthNames[date.month - 1].prefix(3)) \(date.day)"
                + (date.year == today.year ? "" : ", \(date.year)")
        }
    }

    /// Recent transactions grouped by day, newest first; the rows indented by `indent` (a day's
    /// title two cells less), fitted to the screen with it.
    static func recentLines(
        _ transactions: [Transaction], ledger: Ledger, today: CalendarDate, limit: Int = 12, indent: String = "  "
    ) -> [String] {
        // One table for every day, so amounts line up down the whole list; day titles go between.
        var titles: [(beforeRow: Int, title: String)] = []
        var currentDay: CalendarDate?
        let budget = ledger.budget
        var rows: [[String]] = []
        for transaction in transactions.prefix(limit) {
            if transaction.date != currentDay {
                currentDay = transaction.date
                titles.append((rows.count, String(indent.dropFirst(2)) + dayTitle(transaction.date, today: today)))
            }
            let sign = transaction.type == .income ? "+" : (transaction.type == .savings ? "→" : "-")
            let kind =
                transaction.type == .income
                ? "Income" : (budget.budgetType(of: transaction)?.title ?? Ledger.uncategorisedName)
            rows.append([
                ledger.label(of: transaction) + (transaction.note.map { " · \($0)" } ?? ""),
                sign + ledger.currency.format(transaction.amount), kind, Ledger.shortID(transaction.id),
            ])
        }
        var lines: [String] = []
        for (index, line) in Render.table(rows, rightAligned: [1], droppable: [2], whole: [3], indent: indent)
            .enumerated()
        {
            if let title = titles.first(where: { $0.beforeRow == index }) { lines.append(title.title) }
            lines.append(line)
        }
        return lines
    }

    struct Summary: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "summary", abstract: "The month at a glance (the default).")
        @OptionGroup var options: VaultOptions
        @OptionGroup var monthOptions: MonthOptions
        @OptionGroup var report: ReportOptions

        func run() throws {
            let today = try CommandContext.today()
            let month = try monthOptions.resolve(today: today)
            let ledger = try options.openLedger()
            let summary = try ledger.budget.summary(for: month)
            if report.json { return try Output.json(BudgetCommands.report(summary, ledger: ledger)) }
            let currency = ledger.currency
            let style = Style.current()
            Output.line(month.title)
            if ledger.incomeSources.isEmpty && summary.transactions.isEmpty {
                Output.line()
                Output.line(style.bold("Set up your income"))
                Output.line("Add your income sources to start tracking where your money goes:")
                Output.line("  coffer income add Salary 2500 --frequency monthly")
                return
            }
            Output.line(style.bold("\(currency.format(summary.remaining)) remaining this month"))
            Output.line()
            Render.table(
                [
                    ["Income", currency.format(summary.income), "expected \(currency.format(summary.expectedIncome))"],
                    [
                        "Spent", currency.format(summary.spent),
                        "needs \(currency.format(summary.needs)) · wants \(currency.format(summary.wants)) · savings \(currency.format(summary.savings))",
                    ],
                ],
                rightAligned: [1], indent: ""
            ).forEach { Output.line($0) }
            if summary.uncategorisedCount > 0 {
                Output.line(
                    "Uncategorised: \(currency.format(summary.uncategorised)) in \(summary.uncategorisedCount) transaction\(summary.uncategorisedCount == 1 ? "" : "s") (counted in spent)"
                )
                Output.line(
                    "  Place them: coffer import recategorise --rules NAME · coffer transaction edit ID --category C")
            }
            Output.line()
            if summary.transactions.filter({ $0.type != .income }).isEmpty {
                Output.line("No expenses this month")
                Output.line("Add your first expense: coffer spend 12.50 Groceries")
            }
            if !summary.transactions.isEmpty {
                Output.line(style.bold("Recent"))
                BudgetCommands.recentLines(summary.transactions, ledger: ledger, today: today, indent: "    ").forEach {
                    Output.line($0)
                }
            }
            Output.advice("Next: coffer spend AMOUNT CATEGORY · coffer budget needs|wants|savings")
        }
    }

    enum TypeTab {
        static func run(_ type: BudgetType, options: VaultOptions, monthOptions: MonthOptions, json: Bool) throws {
            let today = try CommandContext.today()
            let month = try monthOptions.resolve(today: today)
            let ledger = try options.openLedger()
            let summary = try ledger.budget.summary(for: month)
            let lines = summary.categories.filter { $0.category.type == type }
            let budget = ledger.budget
            let recent = summary.transactions.filter { $0.type != .income && budget.budgetType(of: $0) == type }
            let goals = type == .savings ? summary.goals : []
            if json {
                let full = BudgetCommands.report(summary, ledger: ledger)
                return try Output.json(
                    TabReport(
                        month: full.month, type: type.rawValue,
                        total: ledger.currency.decimalString(summary.total(of: type)),
                        categories: full.categories.filter { $0.type == type.rawValue },
                        goals: full.goals, transactions: full.transactions.filter { $0.budgetType == type.rawValue }))
            }
            let currency = ledger.currency
            let style = Style.current()
            Output.line(month.title)
            Output.line(
                style.bold(
                    "\(type.title)  \(currency.format(summary.total(of: type))) \(type == .savings ? "this month" : "spent")"
                ))
            if type == .savings {
                Output.line()
                if goals.isEmpty {
                    Output.line("Start building your future")
                    Output.line(
                        "Add a savings goal to begin tracking what you set aside: coffer goal add \"Emergency Fund\" --target 5000"
                    )
                } else {
                    Output.line(style.bold("Goals"))
                    Render.table(
                        [["Goal", "This month", "Total", "Target", "Reached ~"]]
                            + goals.map { goal in
                                [
                                    goal.goal.name, currency.format(goal.thisMonth), currency.format(goal.total),
                                    goal.goal.target.map { currency.format($0) } ?? "",
                                    goal.projectedCompletion.map { String($0.description.prefix(7)) } ?? "",
                                ]
                            }, rightAligned: [1, 2, 3], droppable: [4, 3]
                    ).forEach { Output.line($0) }
                }
            }
            Output.line()
            Output.line(style.bold("Categories"))
            Render.table(
                lines.map {
                    [
                        "\($0.category.name)\($0.category.isHidden ? " (hidden)" : "")", currency.format($0.total),
                        "\($0.count) transaction\($0.count == 1 ? "" : "s")",
                    ]
                }, rightAligned: [1]
            ).forEach { Output.line($0) }
            Output.line()
            if recent.isEmpty {
                Output.line("No \(type.rawValue) \(type == .savings ? "contributions" : "expenses") this month")
            } else {
                Output.line(style.bold("Recent in \(type.title)"))
                BudgetCommands.recentLines(recent, ledger: ledger, today: today, indent: "    ").forEach {
                    Output.line($0)
                }
            }
            Output.advice(
                type == .savings
                    ? "Next: coffer save AMOUNT GOAL · coffer goal add NAME"
                    : "Next: coffer spend AMOUNT CATEGORY · coffer category add NAME --type \(type.rawValue)")
        }

        struct TabReport: Encodable {
            let month, type, total: String
            let categories: [Report.Category]
            let goals: [Report.Goal]
            let transactions: [Report.Item]
        }

        struct Needs: ParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "needs", abstract: "Needs: categories with totals and counts, recent spending.")
            @OptionGroup var options: VaultOptions
            @OptionGroup var monthOptions: MonthOptions
            @OptionGroup var report: ReportOptions
            func run() throws {
                try TypeTab.run(.needs, options: options, monthOptions: monthOptions, json: report.json)
            }
        }

        struct Wants: ParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "wants", abstract: "Wants: categories with totals and counts, recent spending.")
            @OptionGroup var options: VaultOptions
            @OptionGroup var monthOptions: MonthOptions
            @OptionGroup var report: ReportOptions
            func run() throws {
                try TypeTab.run(.wants, options: options, monthOptions: monthOptions, json: report.json)
            }
        }

        struct Savings: ParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "savings", abstract: "Savings: goals with this month and total, categories, contributions."
            )
            @OptionGroup var options: VaultOptions
            @OptionGroup var monthOptions: MonthOptions
            @OptionGroup var report: ReportOptions
            func run() throws {
                try TypeTab.run(.savings, options: options, monthOptions: monthOptions, json: report.json)
            }
        }
    }
}

/// Fast entry shared by `spend`, `earn` and `save`: parsing, and the lines they print.
struct EntryOptions: ParsableArguments {
    @Option(parsing: .unconditional, help: ArgumentHelp("A note, e.g. the shop.", valueName: "text")) var note: String?
    @Option(help: ArgumentHelp("The date, YYYY-MM-DD (default today).", valueName: "date")) var date: String?
    @Flag(help: "Record a date in the future without asking.") var yes = false

    func day() throws -> CalendarDate { try CommandContext.date(date, default: try CommandContext.today()) }

    /// The vault as far as an entry on `day` needs it: its month's budget, the accounts' values.
    func openLedger(_ options: VaultOptions, on day: CalendarDate) throws -> Ledger {
        try options.openLedger(for: .recordingEntry(on: day, today: try CommandContext.today()))
    }

    /// Whether to go ahead with an entry on `day` (a future date is asked about).
    func confirmed(_ day: CalendarDate) throws -> Bool {
        try EntryDoubts.confirm(EntryDoubts.future(day, today: try CommandContext.today()), yes: yes)
    }

    static func amount(_ text: String, ledger: Ledger) throws -> Money {
        try CommandContext.positiveAmount(text, ledger: ledger)
    }

    static func show(_ transaction: Transaction, label: String, ledger: Ledger) throws {
        let verb = transaction.type == .income ? "Earned" : (transaction.type == .savings ? "Saved" : "Spent")
        let summary = try ledger.budget.summary(for: BudgetMonth(containing: transaction.date))
        Output.line("\(verb) \(ledger.currency.format(transaction.amount)) · \(label) · \(transaction.date)")
        Output.line("\(ledger.currency.format(summary.remaining)) remaining in \(summary.month.title)")
        showMoved(transaction.flow, on: transaction.date, ledger: ledger)
        Output.advice("Undo with: coffer undo")
    }

    /// The value now of each account a flow moved (as of the flow's date when that is later). A
    /// value typed after a backdated flow is the truth and already holds it: said, so that a
    /// value that did not move is not a surprise.
    static func showMoved(_ flow: AccountFlow?, on date: CalendarDate, ledger: Ledger) {
        guard let flow else { return }
        let asOf = max((try? CommandContext.today()) ?? date, date)
        for account in [flow.from, flow.to].compactMap({ ledger.account(withID: $0) }) {
            let value = ledger.portfolio.value(of: account, on: asOf) ?? .zero
            let laterTyped = ledger.portfolio.updates(of: account).first {
                $0.movedBy == nil && $0.date <= asOf && ($0.date, $0.sequence) > (date, flow.order)
            }
            Output.line(
                "\(account.name): \(ledger.currency.format(value))"
                    + (laterTyped.map {
                        " (the value typed on \($0.date) already holds this; see coffer reconcile \"\(account.name)\")"
                    } ?? ""))
        }
    }
}

/// `--account` and `--no-account` on `category`, `income`, `goal` and `client`: the account their
/// entries move by default.
struct DefaultAccountOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The account its entries move by default.", valueName: "account")) var account: String?
    @Flag(help: "Clear the default account.") var noAccount = false

    var given: Bool { account != nil || noAccount }

    /// The default after this edit: `current` unless one of the options was given.
    func applied(to current: UUID?, ledger: Ledger) throws -> UUID? {
        if noAccount {
            guard account == nil else {
                throw ValidationError("--account and --no-account contradict each other; give one.")
            }
            return nil
        }
        return try account.map { try ledger.account(named: $0, includeClosed: false).id } ?? current
    }
}

/// `--from`/`--into`/`--to`: the account a flow uses, or none with `--no-account`, or the default.
enum FlowAccountOption {
    static func resolve(_ name: String?, noAccount: Bool, ledger: Ledger, flag: String) throws -> Ledger.FlowAccount {
        if noAccount {
            guard name == nil else {
                throw ValidationError("--\(flag) and --no-account contradict each other; give one.")
            }
            return .none
        }
        return try name.map { .account(try ledger.account(named: $0)) } ?? .byDefault
    }
}

/// `coffer spend AMOUNT CATEGORY`.
struct Spend: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "spend",
        abstract: "Log spending in a category (its type — needs, wants or savings — comes from the category).")
    @OptionGroup var options: VaultOptions
    @Argument(help: "How much, e.g. 12.50.") var amount: String
    @Argument(help: "The category (a unique prefix is enough).") var category: String
    @Option(help: "Only look in categories of this type: needs, wants or savings.") var type: BudgetType?
    @Option(
        help: ArgumentHelp(
            "The account the money left; its value falls (default: the category's).", valueName: "account"))
    var from: String?
    @Flag(help: "Move no account's value, not even the category's default.") var noAccount = false
    @OptionGroup var entry: EntryOptions

    func run() throws {
        let day = try entry.day()
        let ledger = try entry.openLedger(options, on: day)
        let amount = try EntryOptions.amount(self.amount, ledger: ledger)
        let found = try ledger.category(named: category, type: type, includeHidden: false)
        let account = try FlowAccountOption.resolve(from, noAccount: noAccount, ledger: ledger, flag: "from")
        guard try entry.confirmed(day) else { return }
        let transaction = try ledger.spend(amount, in: found, on: day, note: entry.note, from: account)
        try EntryOptions.show(transaction, label: "\(found.name) (\(found.type.title))", ledger: ledger)
    }
}

/// `coffer earn AMOUNT SOURCE`.
struct Earn: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "earn", abstract: "Log income received from one of your income sources.")
    @OptionGroup var options: VaultOptions
    @Argument(help: "How much.") var amount: String
    @Argument(help: "The income source (a unique prefix is enough).") var source: String
    @Option(
        help: ArgumentHelp(
            "The account it was paid into; its value rises (default: the source's).", valueName: "account"))
    var into: String?
    @Flag(help: "Move no account's value, not even the source's default.") var noAccount = false
    @OptionGroup var entry: EntryOptions

    func run() throws {
        let day = try entry.day()
        let ledger = try entry.openLedger(options, on: day)
        let amount = try EntryOptions.amount(self.amount, ledger: ledger)
        let found = try ledger.incomeSource(named: source)
        let account = try FlowAccountOption.resolve(into, noAccount: noAccount, ledger: ledger, flag: "into")
        guard try entry.confirmed(day) else { return }
        try EntryOptions.show(
            try ledger.earn(amount, from: found, on: day, note: entry.note, into: account), label: found.name,
            ledger: ledger)
    }
}

/// `coffer save AMOUNT GOAL`.
struct Save: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "save", abstract: "Set money aside towards a savings goal.")
    @OptionGroup var options: VaultOptions
    @Argument(help: "How much.") var amount: String
    @Argument(help: "The goal (a unique prefix is enough).") var goal: String
    @Option(help: ArgumentHelp("The account the money left; its value falls.", valueName: "account")) var from: String?
    @Option(
        help: ArgumentHelp("The account it went into; its value rises (default: the goal's).", valueName: "account"))
    var to: String?
    @Flag(help: "Move no account's value, not even the goal's default.") var noAccount = false
    @OptionGroup var entry: EntryOptions

    func run() throws {
        let day = try entry.day()
        let ledger = try entry.openLedger(options, on: day)
        let amount = try EntryOptions.amount(self.amount, ledger: ledger)
        let found = try ledger.goal(named: goal)
        let source = try FlowAccountOption.resolve(from, noAccount: noAccount, ledger: ledger, flag: "from")
        let target = try FlowAccountOption.resolve(to, noAccount: noAccount, ledger: ledger, flag: "to")
        guard try entry.confirmed(day) else { return }
        try EntryOptions.show(
            try ledger.save(amount, towards: found, on: day, note: entry.note, from: source, to: target),
            label: found.name, ledger: ledger)
    }
}

extension BudgetType: ExpressibleByArgument {}
