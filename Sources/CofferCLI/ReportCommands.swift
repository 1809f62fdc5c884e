import ArgumentParser
import CofferKit
import FinanceCore
import Foundation
import VaultStore

/// `coffer overview` (and `coffer` alone): where am I, in one screen.
struct Overview: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "overview",
        abstract: "Net worth, change since last month, one projection, where it sits, top assets.")
    @OptionGroup var options: VaultOptions
    @OptionGroup var report: ReportOptions
    @Option(
        name: .customLong("as-of"),
        help: ArgumentHelp("Show the overview as it was on this date, YYYY-MM-DD.", valueName: "date"))
    var asOf: String?

    func run() throws {
        let date = try CommandContext.date(asOf, default: try CommandContext.today())
        try render(
            ledger: try options.openLedger(for: .overview(on: date)), date: date, json: report.json)
    }

    func render(ledger: Ledger, date: CalendarDate, json: Bool) throws {
        let report = try ledger.overview(on: date)
        if json { return try Output.json(report) }
        let currency = report.currency
        let totals = report.totals
        let style = Style.current()
        guard !report.isEmpty else {
            Output.line(style.bold("Net worth  \(currency.format(.zero))"))
            Output.line()
            Output.line("No accounts yet — add your first one:")
            Output.line("  coffer account add \"Current account\" --category Cash --value 1200")
            Output.line(
                "Suggested categories: \(Account.defaultAssetCategories.joined(separator: ", ")); owed: \(Account.defaultLiabilityCategories.joined(separator: ", "))."
            )
            // A vault used for its budget or invoices alone still shows them.
            showOtherParts(report, ledger: ledger)
            return
        }
        Output.line(style.bold("Net worth  \(currency.format(totals.netWorth))"))
        if let change = report.changeSinceLastMonth {
            let magnitude = Money(minorUnits: Int64(clamping: change.minorUnits.magnitude))
            Output.line(
                "as of \(date) · \(style.change(currency.format(magnitude), negative: change.isNegative, zero: change == .zero)) since last month"
            )
        } else {
            Output.line("as of \(date) · no month to compare with yet (the first values are under a month old)")
        }
        if totals.liabilities != .zero {
            Output.line(
                style.dim("assets \(currency.format(totals.assets)) − owed \(currency.format(totals.liabilities))"))
        }
        if totals.receivable > .zero {
            Output.line(
                style.dim(
                    "including invoices receivable \(currency.format(totals.receivable)) (coffer settings --receivables off to leave them out)"
                ))
        }
        let recent = report.history.suffix(13)
        if recent.count >= 3 {
            Output.line(
                "\(Render.sparkline(recent.map(\.netWorth.minorUnits)))  month ends since \(recent.first!.date)")
        }
        Output.line()
        Output.line(
            "In \(report.projectionYears) year: \(currency.format(report.projected)) at your growth rates. Assumptions, not guarantees."
        )

        let assets = report.distribution.filter { $0.kind == .asset }
        if !assets.isEmpty {
            Output.line()
            Output.line(style.bold("Where it sits"))
            let barWidth = max(8, min(24, style.width - 60))
            Render.table(
                assets.map {
                    [
                        $0.name, currency.format($0.total), Render.percent(perMille: $0.sharePerMille),
                        Render.bar(perMille: $0.sharePerMille, width: barWidth),
                    ]
                },
                rightAligned: [1, 2, 3]  // the bar is fixed width: never cut
            ).forEach { Output.line($0) }
        }
        let owed = report.distribution.filter { $0.kind == .liability }
        if !owed.isEmpty {
            Output.line("  Owed: " + owed.map { "\($0.name) \(currency.format($0.total))" }.joined(separator: " · "))
        }
        if !report.topAssets.isEmpty {
            Output.line()
            Output.line(style.bold("Top assets"))
            let nameWidth = max(12, style.width - 40)
            Render.table(
                report.topAssets.map {
                    [Render.truncated($0.account.name, to: nameWidth), $0.account.category, currency.format($0.value!)]
                },
                rightAligned: [2]
            ).forEach { Output.line($0) }
        }
        showOtherParts(report, ledger: ledger)
        Output.advice("Next: coffer update NAME AMOUNT · coffer assets · coffer projection")
    }
}

extension Overview {
    /// The lines for the vault's other parts: this month's budget, invoices, backups.
    func showOtherParts(_ report: OverviewReport, ledger: Ledger) {
        let currency = report.currency
        if let month = report.budget {
            Output.line()
            Output.line("Budget: \(currency.format(month.remaining)) remaining in \(month.month.title) (coffer budget)")
        }
        if let receivables = report.receivables {
            Output.line(
                "Invoices: \(currency.format(receivables.outstanding)) outstanding"
                    + (receivables.overdueCount > 0
                        ? ", ⚠ \(currency.format(receivables.overdue)) overdue (\(receivables.overdueCount))"
                        : ", none overdue")
                    + " (coffer invoices dashboard)")
        }
        let backups = BackupCommands.ageLines(report.backups, ledger: ledger)
        if !backups.isEmpty {
            Output.line()
            backups.forEach { Output.line($0) }
        }
    }
}

/// `coffer assets [CATEGORY]`: categories, then the accounts in one.
struct Assets: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "assets",
        abstract: "Categories with totals and shares; or the accounts in one category.")
    @OptionGroup var options: VaultOptions
    @OptionGroup var report: ReportOptions
    @Argument(help: "A category to list the accounts of.") var category: String?

    struct Row: Encodable { let name, kind, total: String; let share: Decimal; let accounts: Int }
    struct AccountRow: Encodable { let name: String; let value: String; let share: Decimal }
    struct CategoryReport: Encodable { let category: String; let accounts: [AccountRow] }

    func run() throws {
        let today = try CommandContext.today()
        let ledger = try options.openLedger()
        let portfolio = ledger.portfolio
        let currency = ledger.currency
        let distribution = try ledger.netWorth.distribution(on: today)
        if let category {
            let members = ledger.accounts.filter {
                $0.category.caseInsensitiveCompare(category) == .orderedSame && $0.isOpen(on: today)
            }
            guard !members.isEmpty else {
                let known = distribution.map(\.name)
                throw CLIError(
                    .invalidInput, "No open accounts in a category called '\(category)'.",
                    hint: known.isEmpty
                        ? "Add one with: coffer account add NAME --category \(category)"
                        : "Categories: \(known.joined(separator: ", "))")
            }
            let valued = members.map { ($0, portfolio.value(of: $0, on: today) ?? .zero) }.sorted { $0.1 > $1.1 }
            let shares = Portfolio.shares(valued.map(\.1))
            if report.json {
                return try Output.json(
                    CategoryReport(
                        category: members[0].category,
                        accounts: zip(valued, shares).map {
                            AccountRow(
                                name: $0.0.name, value: currency.decimalString($0.1),
                                share: Render.percentNumber(perMille: $1))
                        }))
            }
            Output.line(Style.current().bold(members[0].category))
            Render.table(
                zip(valued, shares).map { [$0.0.name, currency.format($0.1), Render.percent(perMille: $1)] },
                rightAligned: [1, 2]
            ).forEach { Output.line($0) }
            Output.advice("Next: coffer account show NAME · coffer update NAME AMOUNT")
            return
        }
        if report.json {
            return try Output.json([
                "categories": distribution.map {
                    Row(
                        name: $0.name, kind: $0.kind.rawValue, total: currency.decimalString($0.total),
                        share: Render.percentNumber(perMille: $0.sharePerMille), accounts: $0.accountCount)
                }
            ])
        }
        guard !distribution.isEmpty else {
            Output.line(
                "No accounts yet — add one with: coffer account add \"Current account\" --category Cash --value 1200")
            return
        }
        let rows = distribution.map {
            [
                $0.name + ($0.kind == .liability ? " (owed)" : ""), currency.format($0.total),
                Render.percent(perMille: $0.sharePerMille),
                "\($0.accountCount) account\($0.accountCount == 1 ? "" : "s")",
            ]
        }
        Render.table([["Category", "Total", "Share", ""]] + rows, rightAligned: [1, 2]).forEach { Output.line($0) }
        Output.line()
        Output.line("Shares are of total assets (or of total owed); they add up to 100%.")
        Output.advice("Next: coffer assets CATEGORY")
    }
}

/// Type-erased Encodable for small mixed JSON objects.
struct AnyEncodable: Encodable {
    let value: any Encodable
    init(_ value: any Encodable) { self.value = value }
    func encode(to encoder: Encoder) throws { try value.encode(to: encoder) }
}

extension Portfolio {
    /// Shares of a list of amounts, in tenths of a percent, summing to 100%.
    static func shares(_ amounts: [Money]) -> [Int] {
        Portfolio.perMilleShares(amounts.map(\.minorUnits))
    }
}

/// `coffer growth set|list`.
struct GrowthCommands: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "growth",
        abstract: "The yearly growth rates projections use: per category, or per account.",
        subcommands: [Set.self, List.self]
    )

    struct Set: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "set",
            abstract: "Set a category's or an account's yearly rate, e.g. coffer growth set Pensions 5%.",
            discussion: "An account's own rate wins over its category's; without either, 0%.")
        @OptionGroup var options: VaultOptions
        @Argument(help: "A category, or an account (a unique prefix is enough).") var target: String
        @Argument(help: "The yearly rate, e.g. 4.5% or -1%.") var rate: String

        func run() throws {
            let rate = try CommandContext.input { try GrowthRate(parsing: self.rate) }
            let ledger = try options.openLedger()
            switch try ledger.setGrowthRate(rate, for: target) {
            case .category(let name): Output.line("\(name): \(rate) a year (accounts with their own rate keep it).")
            case .account(let name): Output.line("\(name): \(rate) a year.")
            }
            Output.advice("Next: coffer projection")
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list",
            abstract: "Show the rate each account grows at, and where it comes from.")
        @OptionGroup var options: VaultOptions
        @OptionGroup var report: ReportOptions

        struct Row: Encodable { let account, category, rate, source: String }

        func run() throws {
            let ledger = try options.openLedger()
            let portfolio = ledger.portfolio
            let rows = ledger.accounts.filter { $0.closed == nil }.map { account in
                Row(
                    account: account.name, category: account.category, rate: portfolio.rate(for: account).description,
                    source: ledger.growthRateSource(of: account))
            }
            if report.json {
                return try Output.json([
                    "categories": ledger.categoryRates.values.sorted { $0.category < $1.category }
                        .map { ["category": $0.category, "rate": $0.rate.description] },
                    "accounts": rows.map {
                        ["account": $0.account, "category": $0.category, "rate": $0.rate, "source": $0.source]
                    },
                ])
            }
            let categoryRates = ledger.categoryRates.values.sorted { $0.category < $1.category }
            if !categoryRates.isEmpty {
                Output.line("Categories: " + categoryRates.map { "\($0.category) \($0.rate)" }.joined(separator: " · "))
            }
            Render.table(
                [["Account", "Category", "Rate", "From"]]
                    + rows.map { [$0.account, $0.category, $0.rate, $0.source == "none" ? "default 0%" : $0.source] },
                rightAligned: [2]
            ).forEach { Output.line($0) }
            Output.advice("Next: coffer growth set CATEGORY|ACCOUNT RATE · coffer projection")
        }
    }
}

/// `coffer projection [--years N]`.
struct Projection: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "projection",
        abstract: "Where your net worth heads at your growth rates: 1, 5 and 10 years (or --years N).")
    @OptionGroup var options: VaultOptions
    @OptionGroup var report: ReportOptions
    @Option(help: "Project this many years instead of 1, 5 and 10.") var years: Int?

    struct Row: Encodable { let years: Int; let netWorth: String }

    func run() throws {
        if let years, !(1...50).contains(years) {
            throw CLIError(.invalidInput, "Project between 1 and 50 years: \(years) is outside that.")
        }
        let today = try CommandContext.today()
        let ledger = try options.openLedger()
        let currency = ledger.currency
        let horizons = years.map { [$0] } ?? [1, 5, 10]
        let netWorth = ledger.netWorth
        let rows = try horizons.map {
            Row(years: $0, netWorth: currency.decimalString(try netWorth.projected(years: $0, from: today)))
        }
        if report.json {
            return try Output.json([
                "asOf": AnyEncodable(today.description),
                "netWorth": AnyEncodable(currency.decimalString(try netWorth.totals(on: today).netWorth)),
                "projections": AnyEncodable(rows), "note": AnyEncodable("Assumptions, not guarantees"),
            ])
        }
        Output.line("Net worth today  \(currency.format(try netWorth.totals(on: today).netWorth))")
        Render.table(
            try horizons.map {
                ["In \($0) year\($0 == 1 ? "" : "s")", currency.format(try netWorth.projected(years: $0, from: today))]
            },
            rightAligned: [1]
        ).forEach { Output.line($0) }
        Output.line()
        Output.line(
            "Assumptions, not guarantees: each account compounds monthly at its rate (coffer growth list); no new saving or spending."
        )
        Output.advice("Next: coffer growth set CATEGORY|ACCOUNT RATE")
    }
}
