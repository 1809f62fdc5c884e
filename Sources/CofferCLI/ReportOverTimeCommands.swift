import ArgumentParser
import CofferKit
import FinanceCore
import Foundation

/// `coffer report cashflow|categories|year|networth|invoices|html`: how things moved, month by
/// month. Every figure is the one `coffer budget --month` or `coffer overview --as-of` gives
/// for that month or day.
struct ReportCommands: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report",
        abstract: "Reports over time: income and spending, categories by month, the year, net worth, invoices.",
        discussion:
            "Each takes --from/--to (YYYY-MM) or --months N (default: the 12 months to this one), and --json.",
        subcommands: [Cashflow.self, Categories.self, Year.self, NetWorthMonths.self, Invoices.self, HTMLReport.self])

    // MARK: income vs spending

    struct Cashflow: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "cashflow",
            abstract: "Income, spending and the net for each month.")
        @OptionGroup var options: VaultOptions
        @OptionGroup var range: ReportRangeOptions
        @OptionGroup var report: ReportOptions
        @Flag(help: "Tables only, no chart.") var noChart = false

        struct Row: Encodable {
            let month, income, spent, net, savings: String
            init(month: String, income: String, spent: String, net: String, savings: String) {
                (self.month, self.income, self.spent, self.net, self.savings) = (month, income, spent, net, savings)
            }
            init(_ row: Ledger.CashflowRow, money: (Money) -> String) {
                self.init(
                    month: row.month.description, income: money(row.income), spent: money(row.spent),
                    net: money(row.net), savings: money(row.savings))
            }
        }
        struct Shown: Encodable {
            let from, to, currency: String
            let months: [Row]
            let total: Row
        }

        func run() throws {
            let ledger = try options.openLedger()
            let span = try range.resolved()
            let rows = try ledger.cashflow(span)
            let currency = ledger.currency
            let money = currency.decimalString
            let total = Row(
                month: "total", income: money(try Money.sum(rows.map(\.income))),
                spent: money(try Money.sum(rows.map(\.spent))), net: money(try Money.sum(rows.map(\.net))),
                savings: money(try Money.sum(rows.map(\.savings))))
            if report.json {
                return try Output.json(
                    Shown(
                        from: span.first.description, to: span.last.description, currency: currency.code,
                        months: rows.map { Row($0, money: money) }, total: total))
            }
            Output.line(Style.current().bold("Income and spending, \(span.first.title) to \(span.last.title)"))
            if Chart.drawn(json: false, plain: noChart) {
                Output.line("Spending each month (bars; the table below gives every figure):")
                Chart.bars(
                    rows.map { ($0.month.shortTitle, $0.spent.minorUnits, currency.format($0.spent)) },
                    width: Style.current().fitWidth
                ).forEach { Output.line("  " + $0) }
                Output.line()
            }
            Render.table(
                [["Month", "Income", "Spent", "Net", "Saved"]]
                    + rows.map {
                        [
                            $0.month.shortTitle, currency.format($0.income), currency.format($0.spent),
                            currency.format($0.net), currency.format($0.savings),
                        ]
                    }
                    + [
                        [
                            "Total", currency.format(try Money.sum(rows.map(\.income))),
                            currency.format(try Money.sum(rows.map(\.spent))),
                            currency.format(try Money.sum(rows.map(\.net))),
                            currency.format(try Money.sum(rows.map(\.savings))),
                        ]
                    ], rightAligned: [1, 2, 3, 4], droppable: [4]
            ).forEach { Output.line($0) }
            let net = try Money.sum(rows.map(\.net)), months = "\(rows.count) month\(rows.count == 1 ? "" : "s")"
            Output.line(
                net.isNegative
                    ? "Over \(months) you spent \(currency.format(net.negated)) more than came in."
                    : "Over \(months) \(currency.format(net)) more came in than was spent.")
        }
    }

    // MARK: categories over the months

    struct Categories: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "categories",
            abstract: "Each category's spending month by month, with Needs, Wants and Savings subtotals.",
            discussion: "Like hledger bal -M. --category keeps one category; --type one budget type.")
        @OptionGroup var options: VaultOptions
        @OptionGroup var range: ReportRangeOptions
        @Option(help: ArgumentHelp("Only this category (name or unique prefix).", valueName: "name")) var category:
            String?
        @Option(help: ArgumentHelp("Only needs, wants or savings.", valueName: "type")) var type: BudgetType?
        @OptionGroup var report: ReportOptions
        @Flag(help: "Tables only, no chart.") var noChart = false

        struct Row: Encodable {
            let name: String
            @NullEncoded var type: String?
            let amounts: [String]
            let total, average: String
        }
        struct Subtotal: Encodable { let type: String; let amounts: [String]; let total: String }
        struct Shown: Encodable {
            let from, to, currency: String
            let months: [String]
            let categories: [Row]
            let subtotals: [Subtotal]
            let spent: Subtotal
        }

        func run() throws {
            let ledger = try options.openLedger()
            let span = try range.resolved()
            let grid = try ledger.categoryGrid(span)
            let currency = ledger.currency
            var rows = grid.rows
            if let category {
                // A goal's row is `Goal: NAME`; a goal is named as a category would be.
                let goal = (try? ledger.goal(named: category)).map { "Goal: \($0.name)" }
                let wanted =
                    try (try? ledger.category(named: category).name) ?? goal
                    ?? ledger.category(named: category).name
                rows = rows.filter { $0.name == wanted }
            }
            if let type { rows = rows.filter { $0.type == type } }
            let subtotals = grid.subtotals.filter { type == nil || $0.type == type }
            let average = { (total: Money) in Money(minorUnits: total.minorUnits / Int64(grid.months.count)) }
            if report.json {
                let money = currency.decimalString
                return try Output.json(
                    Shown(
                        from: span.first.description, to: span.last.description, currency: currency.code,
                        months: grid.months.map(\.description),
                        categories: rows.map {
                            Row(
                                name: $0.name, type: $0.type?.rawValue, amounts: $0.amounts.map(money),
                                total: money($0.total), average: money(average($0.total)))
                        },
                        subtotals: subtotals.map {
                            Subtotal(type: $0.type.rawValue, amounts: $0.amounts.map(money), total: money($0.total))
                        },
                        spent: Subtotal(type: "spent", amounts: grid.spent.map(money), total: money(grid.total))))
            }
            Output.line(Style.current().bold("Spending by category, \(span.first.title) to \(span.last.title)"))
            if rows.count == 1, Chart.drawn(json: false, plain: noChart) {
                Output.line("\(rows[0].name) each month (bars; the table below gives every figure):")
                Chart.bars(
                    zip(grid.months, rows[0].amounts).map {
                        ($0.shortTitle, $1.minorUnits, currency.format($1))
                    }, width: Style.current().fitWidth
                ).forEach { Output.line("  " + $0) }
                Output.line()
            }
            guard !rows.isEmpty else {
                Output.line("No spending \(category.map { "on \($0) " } ?? "")in these months.")
                return
            }
            // Months across like hledger bal -M; a narrow terminal drops the earliest months first.
            let header = ["Category"] + grid.months.map(\.shortTitle) + ["Total", "Average"]
            var table = [header]
            for type in BudgetType.allCases where self.type == nil || self.type == type {
                let inType = rows.filter { $0.type == type }
                guard !inType.isEmpty else { continue }
                table += inType.map { row in
                    [row.name] + row.amounts.map(currency.format) + [
                        currency.format(row.total), currency.format(average(row.total)),
                    ]
                }
                if category == nil, let subtotal = subtotals.first(where: { $0.type == type }) {
                    table.append(
                        ["\(type.title) total"] + subtotal.amounts.map(currency.format) + [
                            currency.format(subtotal.total), currency.format(average(subtotal.total)),
                        ])
                }
            }
            if let uncategorised = rows.first(where: { $0.type == nil }) {
                table.append(
                    [uncategorised.name] + uncategorised.amounts.map(currency.format) + [
                        currency.format(uncategorised.total), currency.format(average(uncategorised.total)),
                    ])
            }
            if category == nil && type == nil {
                table.append(
                    ["Spent"] + grid.spent.map(currency.format) + [
                        currency.format(grid.total), currency.format(average(grid.total)),
                    ])
            }
            let monthColumns = Array(1...grid.months.count)
            Render.table(
                table, rightAligned: Set(1..<header.count), droppable: [header.count - 1] + monthColumns
            ).forEach { Output.line($0) }
        }
    }

    // MARK: the year

    struct Year: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "year",
            abstract: "A year in one screen: income, spending, saving rate, top categories, net worth, invoices.",
            discussion: """
                A calendar year by default; --start-month 4 (or report.year_start = 4 in the configuration file) \
                for a tax year from April. --from/--to or --months N sum up any range of months the same way, \
                as every other report takes.
                """
        )
        @OptionGroup var options: VaultOptions
        @Option(help: ArgumentHelp("The year (the one it starts in; default: the year under way).", valueName: "year"))
        var year: Int?
        @Option(help: ArgumentHelp("The month the year starts in, 1 to 12 (default 1).", valueName: "month"))
        var startMonth: Int?
        @OptionGroup var range: ReportRangeOptions
        @OptionGroup var report: ReportOptions

        struct Category: Encodable { let name, total: String }
        struct NetWorthLine: Encodable {
            let start, end, change: String
            @NullEncoded var changePercent: Decimal?
        }
        struct InvoiceLine: Encodable { let invoiced, received: String }
        struct Shown: Encodable {
            /// Null, as is the start month, for a range given with --from/--to/--months.
            @NullEncoded var year: String?
            let from, to: String
            @NullEncoded var startMonth: Int?
            let currency, income, spent, net, savings: String
            @NullEncoded var savingsRate: Decimal?
            let months: [Cashflow.Row]
            let topCategories: [Category]
            let netWorth: NetWorthLine
            let invoices: InvoiceLine
        }

        func run() throws {
            let ledger = try options.openLedger()
            let today = try CommandContext.today()
            let summary: Ledger.YearSummary, start: Int?
            if range.isGiven {
                guard year == nil, startMonth == nil else {
                    throw CLIError(
                        .invalidInput, "Give --year/--start-month or --from/--to/--months, not both.",
                        hint:
                            "coffer report year --year 2025 --start-month 4 · coffer report year --from 2025-06 --to 2026-05"
                    )
                }
                (summary, start) = (try ledger.summary(of: range.resolved(), today: today), nil)
            } else {
                let month = startMonth ?? Configuration.current.yearStartMonth ?? 1
                guard (1...12).contains(month) else {
                    throw CLIError(.invalidInput, "--start-month is a month, 1 to 12 (4 for April).")
                }
                // The year under way: the one whose start is the latest on or before today.
                let chosen = year ?? (today.month >= month ? today.year : today.year - 1)
                (summary, start) = (try ledger.yearSummary(chosen, startMonth: month, today: today), month)
            }
            let currency = ledger.currency
            let money = currency.decimalString
            if report.json {
                return try Output.json(
                    Shown(
                        year: summary.title, from: summary.range.first.description,
                        to: summary.range.last.description, startMonth: start, currency: currency.code,
                        income: money(summary.income), spent: money(summary.spent), net: money(summary.net),
                        savings: money(summary.savings), savingsRate: summary.savingsRate.map(Render.percentNumber),
                        months: summary.months.map { Cashflow.Row($0, money: money) },
                        topCategories: summary.topCategories.map { Category(name: $0.name, total: money($0.total)) },
                        netWorth: NetWorthLine(
                            start: money(summary.netWorthStart), end: money(summary.netWorthEnd),
                            change: money(summary.netWorthChange.amount),
                            changePercent: summary.netWorthChange.perMille.map(Render.percentNumber)),
                        invoices: InvoiceLine(invoiced: money(summary.invoiced), received: money(summary.received))))
            }
            let style = Style.current()
            Output.line(
                style.bold(summary.title.map { "Year \($0)" } ?? "\(summary.range.months.count) months")
                    + "  \(summary.range.first.title) to \(summary.range.last.title)")
            Render.table(
                [
                    ["Income", currency.format(summary.income)],
                    ["Spent", currency.format(summary.spent)],
                    ["Net", currency.format(summary.net)],
                    ["Set aside", currency.format(summary.savings)],
                    [
                        "Kept of income",
                        summary.savingsRate.map { Render.percent(perMille: $0) } ?? "no income",
                    ],
                ], rightAligned: [1]
            ).forEach { Output.line($0) }
            if !summary.topCategories.isEmpty {
                Output.line()
                Output.line("Spent most on")
                Render.table(
                    summary.topCategories.map { [$0.name, currency.format($0.total)] }, rightAligned: [1]
                ).forEach { Output.line($0) }
            }
            Output.line()
            let change = summary.netWorthChange
            Output.line(
                "Net worth \(currency.format(summary.netWorthStart)) → \(currency.format(summary.netWorthEnd)) "
                    + "(\(currency.formatSigned(change.amount))\(change.perMille.map { ", " + Render.percent(perMille: $0) } ?? ""))"
            )
            if summary.invoiced != .zero || summary.received != .zero {
                Output.line(
                    "Invoiced \(currency.format(summary.invoiced)) · received \(currency.format(summary.received))")
            }
        }
    }

    // MARK: net worth at month ends

    struct NetWorthMonths: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "networth",
            abstract: "Net worth at each month end, with the change and % change, and each account's values.")
        @OptionGroup var options: VaultOptions
        @OptionGroup var range: ReportRangeOptions
        @OptionGroup var report: ReportOptions
        @Flag(help: "Tables only, no chart.") var noChart = false

        struct Month: Encodable {
            let month, date, netWorth: String
            @NullEncoded var change: String?
            @NullEncoded var changePercent: Decimal?
        }
        struct AccountLine: Encodable {
            let name, category, kind: String
            let values: [String?]
            let change: String
            @NullEncoded var changePercent: Decimal?
        }
        struct Shown: Encodable {
            let from, to, currency: String
            let months: [Month]
            let accounts: [AccountLine]
            @NullEncoded var receivables: [String]?
        }

        func run() throws {
            let ledger = try options.openLedger()
            let span = try range.resolved()
            let today = try CommandContext.today()
            let result = try ledger.netWorthReport(span, today: today)
            let currency = ledger.currency
            let money = currency.decimalString
            if report.json {
                return try Output.json(
                    Shown(
                        from: span.first.description, to: span.last.description, currency: currency.code,
                        months: result.months.map {
                            Month(
                                month: $0.month.description, date: $0.date.description, netWorth: money($0.netWorth),
                                change: $0.change.map { money($0.amount) },
                                changePercent: $0.change?.perMille.map(Render.percentNumber))
                        },
                        accounts: result.accounts.map {
                            AccountLine(
                                name: $0.account.name, category: $0.account.category, kind: $0.account.kind.rawValue,
                                values: $0.values.map { $0.map(money) }, change: money($0.change.amount),
                                changePercent: $0.change.perMille.map(Render.percentNumber))
                        }, receivables: result.receivables?.map(money)))
            }
            let style = Style.current()
            Output.line(style.bold("Net worth at each month end, \(span.first.title) to \(span.last.title)"))
            if let first = result.months.first, let last = result.months.last {
                let change = try Portfolio.Change(then: first.netWorth, now: last.netWorth)
                Output.line(
                    "From \(currency.format(first.netWorth)) on \(first.date) to \(currency.format(last.netWorth)) on \(last.date): "
                        + currency.formatSigned(change.amount)
                        + (change.perMille.map { " (\(Render.percent(perMille: $0)))" } ?? "") + ".")
            }
            if Chart.drawn(json: false, plain: noChart), result.months.count >= 2 {
                Output.line()
                Chart.area(
                    result.months.map(\.netWorth.minorUnits),
                    labels: [span.first.shortTitle, span.last.shortTitle],
                    axis: { currency.format(Money(minorUnits: $0)) }, width: style.fitWidth
                ).forEach { Output.line("  " + $0) }
            }
            Output.line()
            Render.table(
                [["Month end", "Net worth", "Change", "%"]]
                    + result.months.map {
                        [
                            $0.date.description, currency.format($0.netWorth),
                            $0.change.map { currency.formatSigned($0.amount) } ?? "",
                            $0.change?.perMille.map { Render.percent(perMille: $0) } ?? "",
                        ]
                    }, rightAligned: [1, 2, 3], droppable: [3]
            ).forEach { Output.line($0) }
            guard !result.accounts.isEmpty else { return }
            Output.line()
            // As the account list shows them: a liability negative, so paying it down is a rise.
            Output.line("Each account, \(result.months.first!.date) to \(result.months.last!.date)")
            Render.table(
                [["Account", "Category", "Start", "End", "Change", "%"]]
                    + (try result.accounts.map { line in
                        let kind = line.account.kind
                        return [
                            line.account.name, line.account.category,
                            line.values.first.flatMap { $0 }.map { currency.format(kind.counted($0)) } ?? "—",
                            line.values.last.flatMap { $0 }.map { currency.format(kind.counted($0)) } ?? "—",
                        ] + Render.changeCells(try line.change.counted(as: kind), currency: currency)
                    }), rightAligned: [2, 3, 4, 5], droppable: [1, 2, 5]
            ).forEach { Output.line($0) }
            let distribution = try ledger.netWorth.distribution(on: result.months.last!.date)
            if Chart.drawn(json: false, plain: noChart), !distribution.isEmpty {
                Output.line()
                Output.line("Where it sits on \(result.months.last!.date) (bars; the share is beside each):")
                Chart.bars(
                    distribution.map {
                        (
                            $0.name, $0.kind == .asset ? $0.total.minorUnits : 0,
                            "\(currency.format($0.total)) \(Render.percent(perMille: $0.sharePerMille))"
                                + ($0.kind == .liability ? " owed" : "")
                        )
                    }, width: style.fitWidth
                ).forEach { Output.line("  " + $0) }
            }
        }
    }

    // MARK: invoices

    struct Invoices: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "invoices",
            abstract: "Invoiced and received per month, and per client: owed, and days to pay (slowest first).")
        @OptionGroup var options: VaultOptions
        @OptionGroup var range: ReportRangeOptions
        @OptionGroup var report: ReportOptions

        struct Month: Encodable { let month, invoiced, received: String }
        struct Client: Encodable {
            let client, invoiced, received, outstanding: String
            let invoices, paidInvoices: Int
            @NullEncoded var averageDaysToPay: Int?
            @NullEncoded var slowestDaysToPay: Int?
        }
        struct Shown: Encodable {
            let from, to, currency: String
            let months: [Month]
            let clients: [Client]
        }

        func run() throws {
            let ledger = try options.openLedger()
            let span = try range.resolved()
            let today = try CommandContext.today()
            let months = try ledger.invoiceMonths(span)
            let clients = try ledger.clientPayments(span, today: today)
            let currency = ledger.currency
            let money = currency.decimalString
            if report.json {
                return try Output.json(
                    Shown(
                        from: span.first.description, to: span.last.description, currency: currency.code,
                        months: months.map {
                            Month(
                                month: $0.month.description, invoiced: money($0.invoiced), received: money($0.received))
                        },
                        clients: clients.map {
                            Client(
                                client: $0.client, invoiced: money($0.invoiced), received: money($0.received),
                                outstanding: money($0.outstanding), invoices: $0.invoices,
                                paidInvoices: $0.paidInvoices,
                                averageDaysToPay: $0.averageDaysToPay, slowestDaysToPay: $0.slowestDaysToPay)
                        }))
            }
            Output.line(Style.current().bold("Invoices, \(span.first.title) to \(span.last.title)"))
            Render.table(
                [["Month", "Invoiced", "Received"]]
                    + months.map {
                        [$0.month.shortTitle, currency.format($0.invoiced), currency.format($0.received)]
                    }, rightAligned: [1, 2]
            ).forEach { Output.line($0) }
            Output.line()
            guard !clients.isEmpty else { return Output.line("No invoices sent in these months.") }
            Output.line("By client, slowest to pay first")
            Render.table(
                [["Client", "Invoices", "Invoiced", "Received", "Owed", "Days to pay", "Slowest"]]
                    + clients.map {
                        [
                            $0.client, "\($0.invoices)", currency.format($0.invoiced), currency.format($0.received),
                            currency.format($0.outstanding),
                            $0.averageDaysToPay.map { "\($0) days" } ?? "none paid",
                            $0.slowestDaysToPay.map { "\($0) days" } ?? "",
                        ]
                    }, rightAligned: [1, 2, 3, 4, 5, 6], droppable: [6, 1, 3]
            ).forEach { Output.line($0) }
        }
    }
}

extension ReportCommands {
    /// `coffer report html --out FILE`: the page a person would rather look at.
    struct HTMLReport: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "html",
            abstract: "One self-contained HTML page: the overview, charts and every report's tables.",
            discussion:
                "No network, no JavaScript; prints well. The page is plaintext: the file is written 0600 and the command says so."
        )
        @OptionGroup var options: VaultOptions
        @OptionGroup var range: ReportRangeOptions
        @Option(help: ArgumentHelp("The file to write (- for standard output).", valueName: "file")) var out: String

        func run() throws {
            let ledger = try options.openLedger()
            let page = try ReportHTML.render(ledger, range: try range.resolved(), today: try CommandContext.today())
            try OutputFile.write(Data(page.utf8), to: out)
            if OutputFile.isStandardOutput(out) { return }
            let path = URL(fileURLWithPath: out).path
            Terminal.note(
                "Note: \(path) is not encrypted; it holds your figures in plain text (0600, readable only by you).")
            Output.line("Wrote the report to \(path).")
        }
    }
}

/// `--from`, `--to`, `--months`: which months a report covers.
struct ReportRangeOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp("The first month, YYYY-MM (a YYYY-MM-DD date stands for its month).", valueName: "month"))
    var from: String?
    @Option(help: ArgumentHelp("The last month (default: this month).", valueName: "month")) var to: String?
    @Option(
        help: ArgumentHelp("How many months (default 12), ending with --to or starting with --from.", valueName: "n"))
    var months: Int?

    /// Whether any of the three was given (`report year` takes a year or a range, not both).
    var isGiven: Bool { from != nil || to != nil || months != nil }

    func resolved() throws -> ReportRange {
        let today = try CommandContext.today()
        func month(_ text: String) throws -> BudgetMonth {
            try CommandContext.input {
                text.count > 7
                    ? BudgetMonth(containing: try CalendarDate(parsing: text)) : try BudgetMonth(parsing: text)
            }
        }
        if from != nil && to != nil && months != nil {
            throw CLIError(.invalidInput, "Give two of --from, --to and --months, not all three.")
        }
        if let months, months < 1 { throw CLIError(.invalidInput, "--months takes a number of months, 1 or more.") }
        switch (try from.map(month), try to.map(month)) {
        case (let first?, let last?): return try ReportRange(first: first, last: last)
        case (let first?, nil):
            return try months.map { try ReportRange(first: first, last: first.adding(months: $0 - 1)) }
                ?? ReportRange(first: first, last: max(first, BudgetMonth(containing: today)))
        case (nil, let last):
            return try ReportRange(months: months ?? 12, endingWith: last ?? BudgetMonth(containing: today))
        }
    }
}
