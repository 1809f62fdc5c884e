import FinanceCore
import Foundation

/// "Where am I", in one value: what the overview screen shows on a date, for every face. Its
/// JSON form is `coffer overview --json`'s contract (Specs/cli.md), amounts as decimal strings.
public struct OverviewReport: Sendable {
    public struct AccountLine: Sendable {
        public let account: Account
        /// Nil before the account's first value.
        public let value: Money?
        public let isOpen: Bool
    }

    public struct BudgetLine: Sendable {
        public let month: BudgetMonth
        public let income: Money
        public let spent: Money
        public let remaining: Money
    }

    public let asOf: CalendarDate
    public let currency: Currency
    public let totals: NetWorth.Totals
    /// Nil before the vault has a month of history: there is nothing to compare with.
    public let changeSinceLastMonth: Money?
    public let projectionYears: Int
    /// Net worth in `projectionYears` at the growth rates: assumptions, not guarantees.
    public let projected: Money
    /// Categories with totals and shares, assets largest first, then liabilities.
    public let distribution: [Portfolio.CategoryTotal]
    /// Every account, with its value on `asOf`.
    public let accounts: [AccountLine]
    /// The five largest open assets on `asOf`.
    public let topAssets: [AccountLine]
    /// Outstanding and overdue invoices on `asOf` (nil without invoices).
    public let receivables: Receivables?
    /// `asOf`'s month (nil without income sources or transactions: no budget kept).
    public let budget: BudgetLine?
    public let backups: [BackupAge]
    /// Net worth at each month end up to `asOf` (the last point is `asOf` itself).
    public let history: [NetWorth.Point]

    /// No accounts and nothing receivable: the screen says what to do first.
    public var isEmpty: Bool { accounts.isEmpty && totals.receivable <= .zero }
}

extension Ledger {
    /// The overview on `date` (a ledger opened for `LedgerView.overview(on: date)` or whole).
    public func overview(on date: CalendarDate, now: Date = Date()) throws -> OverviewReport {
        let netWorth = self.netWorth
        let portfolio = self.portfolio
        let lines = accounts.map { account in
            OverviewReport.AccountLine(
                account: account, value: portfolio.value(of: account, on: date), isOpen: account.isOpen(on: date))
        }
        let top = lines.filter { $0.account.kind == .asset && $0.isOpen && $0.value != nil }
            .sorted { $0.value! > $1.value! }.prefix(5)
        let budget: OverviewReport.BudgetLine? =
            incomeSources.isEmpty && !hasTransactions
            ? nil
            : try {
                let summary = try self.budget.summary(for: BudgetMonth(containing: date))
                return .init(
                    month: summary.month, income: summary.income, spent: summary.spent, remaining: summary.remaining)
            }()
        return OverviewReport(
            asOf: date, currency: currency, totals: try netWorth.totals(on: date),
            changeSinceLastMonth: netWorth.hasAMonthOfHistory(on: date)
                ? try netWorth.changeSinceLastMonth(on: date) : nil,
            projectionYears: 1, projected: try netWorth.projected(years: 1, from: date),
            distribution: try netWorth.distribution(on: date), accounts: lines, topAssets: Array(top),
            receivables: hasInvoices ? try Receivables(invoices: invoices, today: date) : nil,
            budget: budget, backups: backupAges(now: now), history: try netWorth.monthEndSeries(through: date))
    }
}

extension OverviewReport: Encodable {
    private struct Contract: Encodable {
        struct Projection: Encodable { let years: Int; let netWorth: String }
        struct Category: Encodable { let name, kind, total: String; let share: Decimal; let accounts: Int }
        struct AccountRow: Encodable {
            let name, category, kind: String
            let value: String?
            let closed: Bool
            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: CodingKeys.self)
                try container.encode(name, forKey: .name)
                try container.encode(category, forKey: .category)
                try container.encode(kind, forKey: .kind)
                try container.encode(value, forKey: .value)  // null before the first value
                try container.encode(closed, forKey: .closed)
            }
            enum CodingKeys: String, CodingKey { case name, category, kind, value, closed }
        }
        struct Point: Encodable { let date, netWorth: String }
        struct InvoiceLine: Encodable { let outstanding, overdue: String; let overdueCount: Int }
        struct BudgetLine: Encodable { let month, income, spent, remaining: String }
        let asOf, currency, netWorth, assets, liabilities: String
        let changeSinceLastMonth: String?
        let invoicesReceivable: String
        let invoices: InvoiceLine?
        let projection: Projection
        let categories: [Category]
        let accounts: [AccountRow]
        let backups: [BackupAge]
        let budget: BudgetLine?
        let history: [Point]

        enum CodingKeys: String, CodingKey {
            case asOf, currency, netWorth, assets, liabilities, changeSinceLastMonth, invoicesReceivable, invoices,
                projection, categories, accounts, backups, budget, history
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(asOf, forKey: .asOf)
            try container.encode(currency, forKey: .currency)
            try container.encode(netWorth, forKey: .netWorth)
            try container.encode(assets, forKey: .assets)
            try container.encode(liabilities, forKey: .liabilities)
            try container.encode(changeSinceLastMonth, forKey: .changeSinceLastMonth)  // null: no month yet
            try container.encode(invoicesReceivable, forKey: .invoicesReceivable)
            try container.encodeIfPresent(invoices, forKey: .invoices)
            try container.encode(projection, forKey: .projection)
            try container.encode(categories, forKey: .categories)
            try container.encode(accounts, forKey: .accounts)
            try container.encode(backups, forKey: .backups)
            try container.encodeIfPresent(budget, forKey: .budget)
            try container.encode(history, forKey: .history)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        let money = currency.decimalString
        try Contract(
            asOf: asOf.description, currency: currency.code, netWorth: money(totals.netWorth),
            assets: money(totals.assets), liabilities: money(totals.liabilities),
            changeSinceLastMonth: changeSinceLastMonth.map(money), invoicesReceivable: money(totals.receivable),
            invoices: receivables.map {
                .init(outstanding: money($0.outstanding), overdue: money($0.overdue), overdueCount: $0.overdueCount)
            },
            projection: .init(years: projectionYears, netWorth: money(projected)),
            categories: distribution.map {
                .init(
                    name: $0.name, kind: $0.kind.rawValue, total: money($0.total),
                    share: Decimal($0.sharePerMille) / 10, accounts: $0.accountCount)
            },
            accounts: accounts.map {
                .init(
                    name: $0.account.name, category: $0.account.category, kind: $0.account.kind.rawValue,
                    value: $0.value.map(money), closed: !$0.isOpen)
            },
            backups: backups,
            budget: budget.map {
                .init(
                    month: $0.month.description, income: money($0.income), spent: money($0.spent),
                    remaining: money($0.remaining))
            },
            history: history.map { .init(date: $0.date.description, netWorth: money($0.netWorth)) }
        ).encode(to: encoder)
    }
}
