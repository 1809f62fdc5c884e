import FinanceCore
import Foundation

/// Reports over time: the same figures `coffer budget --month` and `coffer overview --as-of`
/// give for one month or one day, laid side by side. Each is computed from those same
/// definitions (`Budget.summary(for:)`, `NetWorth.totals(on:)`), so no report can disagree with
/// them about a month.
public struct ReportRange: Sendable, Equatable {
    public let first: BudgetMonth
    public let last: BudgetMonth

    public init(first: BudgetMonth, last: BudgetMonth) throws {
        guard !(last < first) else {
            throw CofferError(.invalidInput, "The range ends (\(last)) before it starts (\(first)).")
        }
        guard Self.count(first, last) <= 1200 else {
            throw CofferError(.invalidInput, "A report covers at most 100 years.")
        }
        self.first = first
        self.last = last
    }

    /// The `count` months ending with `last`.
    public init(months count: Int, endingWith last: BudgetMonth) throws {
        guard (1...1200).contains(count) else {
            throw CofferError(.invalidInput, "A report covers 1 to 1200 months.")
        }
        try self.init(first: last.adding(months: -(count - 1)), last: last)
    }

    public var months: [BudgetMonth] {
        (0..<Self.count(first, last)).map { first.adding(months: $0) }
    }

    static func count(_ first: BudgetMonth, _ last: BudgetMonth) -> Int {
        (last.year - first.year) * 12 + last.month - first.month + 1
    }
}

extension BudgetMonth {
    public func adding(months: Int) -> BudgetMonth { BudgetMonth(containing: first.adding(months: months)) }
}

extension Ledger {
    // MARK: Income and spending

    public struct CashflowRow: Sendable, Equatable {
        public let month: BudgetMonth
        public let income: Money
        public let spent: Money
        /// Income minus spending: the month's `remaining` in `coffer budget`.
        public let net: Money
        /// Of the spending, what was set aside (savings categories and goals).
        public let savings: Money
    }

    /// Income, spending and the net for each month of `range`.
    public func cashflow(_ range: ReportRange) throws -> [CashflowRow] {
        let budget = self.budget
        return try range.months.map { month in
            let summary = try budget.summary(for: month)
            return CashflowRow(
                month: month, income: summary.income, spent: summary.spent, net: summary.remaining,
                savings: summary.savings)
        }
    }

    // MARK: Categories over the months

    public struct CategoryRow: Sendable, Equatable {
        public let name: String
        /// nil for Uncategorised.
        public let type: BudgetType?
        public let amounts: [Money]
        public let total: Money
    }

    public struct CategoryGrid: Sendable {
        public let months: [BudgetMonth]
        /// Categories used in the range, in the budget's order, then Uncategorised if used.
        public let rows: [CategoryRow]
        /// Needs, Wants and Savings, each month (Uncategorised is in none of them).
        public let subtotals: [(type: BudgetType, amounts: [Money], total: Money)]
        /// Every month's `spent`.
        public let spent: [Money]
        public let total: Money
    }

    /// Each category's spending in each month of `range`, like `hledger bal -M`.
    public func categoryGrid(_ range: ReportRange) throws -> CategoryGrid {
        let budget = self.budget
        let summaries = try range.months.map { try budget.summary(for: $0) }
        var rows: [CategoryRow] = []
        for category in budget.categories {
            let amounts = summaries.map { summary in
                summary.categories.first { $0.category.id == category.id }?.total ?? .zero
            }
            guard amounts.contains(where: { $0 != .zero }) else { continue }
            rows.append(
                CategoryRow(name: category.name, type: category.type, amounts: amounts, total: try Money.sum(amounts)))
        }
        // Goals are savings without a category: one row each.
        for goal in budget.goals {
            let amounts = summaries.map { summary in summary.goals.first { $0.goal.id == goal.id }?.thisMonth ?? .zero }
            guard amounts.contains(where: { $0 != .zero }) else { continue }
            rows.append(
                CategoryRow(
                    name: "Goal: \(goal.name)", type: .savings, amounts: amounts, total: try Money.sum(amounts)))
        }
        let uncategorised = summaries.map(\.uncategorised)
        if uncategorised.contains(where: { $0 != .zero }) {
            rows.append(
                CategoryRow(
                    name: Self.uncategorisedName, type: nil, amounts: uncategorised,
                    total: try Money.sum(uncategorised)))
        }
        let subtotals = try BudgetType.allCases.map { type in
            let amounts = summaries.map { $0.total(of: type) }
            return (type, amounts, try Money.sum(amounts))
        }
        let spent = summaries.map(\.spent)
        return CategoryGrid(
            months: range.months, rows: rows, subtotals: subtotals, spent: spent, total: try Money.sum(spent))
    }

    // MARK: The year

    public struct YearSummary: Sendable {
        /// `2025` for a calendar year, `2025/26` for one that starts in another month; nil for a
        /// range of months that is no year (`report year --from 2025-06 --to 2026-05`).
        public let title: String?
        public let range: ReportRange
        public let income: Money
        public let spent: Money
        public let net: Money
        public let savings: Money
        /// Net over income, in tenths of a percent (nil without income).
        public let savingsRate: Int?
        public let months: [CashflowRow]
        /// The categories spent on most, largest first (at most five).
        public let topCategories: [(name: String, total: Money)]
        public let netWorthStart: Money
        public let netWorthEnd: Money
        public let netWorthChange: Portfolio.Change
        /// Invoices sent and money received for them in the year (or range).
        public let invoiced: Money
        public let received: Money
    }

    /// The year starting in month `startMonth` of `year` (1: the calendar year; 4: a UK tax
    /// year, April to March).
    public func yearSummary(_ year: Int, startMonth: Int, today: CalendarDate) throws -> YearSummary {
        guard (1...12).contains(startMonth) else {
            throw CofferError(.invalidInput, "A year starts in month 1 to 12.")
        }
        guard (1...9998).contains(year) else { throw CofferError(.invalidInput, "\(year) is not a year Coffer keeps.") }
        let first = BudgetMonth(containing: try CalendarDate(year: year, month: startMonth, day: 1))
        let title = startMonth == 1 ? "\(year)" : "\(year)/\(String(format: "%02d", (year + 1) % 100))"
        return try summary(of: ReportRange(first: first, last: first.adding(months: 11)), title: title, today: today)
    }

    /// Any range of months summed up the way a year is, so `report year` answers for the range
    /// every other report takes. Net worth is taken the day before the range starts and on its
    /// last day (or `today`, when the range is not over).
    public func summary(of range: ReportRange, title: String? = nil, today: CalendarDate) throws -> YearSummary {
        let months = try cashflow(range)
        let income = try Money.sum(months.map(\.income)), spent = try Money.sum(months.map(\.spent))
        let net = try income.subtracting(spent)
        let grid = try categoryGrid(range)
        let top = grid.rows.sorted { $0.total > $1.total }.prefix(5).map { ($0.name, $0.total) }
        let netWorth = self.netWorth
        let end = min(range.last.last, today)
        let startValue = try netWorth.totals(on: range.first.first.adding(days: -1)).netWorth
        let endValue = try netWorth.totals(on: end).netWorth
        let invoicing = try invoiceMonths(range)
        return YearSummary(
            title: title, range: range, income: income, spent: spent, net: net,
            savings: try Money.sum(months.map(\.savings)),
            savingsRate: income > .zero ? PerMille.of(net, in: income) : nil,
            months: months, topCategories: Array(top), netWorthStart: startValue, netWorthEnd: endValue,
            netWorthChange: try Portfolio.Change(then: startValue, now: endValue),
            invoiced: try Money.sum(invoicing.map(\.invoiced)), received: try Money.sum(invoicing.map(\.received)))
    }

    // MARK: Net worth at month ends

    public struct NetWorthMonth: Sendable, Equatable {
        public let month: BudgetMonth
        /// The month's last day, or `today` in the month under way.
        public let date: CalendarDate
        public let netWorth: Money
        /// Since the month before (nil for the range's first month).
        public let change: Portfolio.Change?
    }

    public struct AccountValues: Sendable {
        public let account: Account
        /// The value at each month's `date` (nil before its first value, or once closed).
        public let values: [Money?]
        /// From the first month end of the range to the last.
        public let change: Portfolio.Change
    }

    public struct NetWorthReport: Sendable {
        public let months: [NetWorthMonth]
        public let accounts: [AccountValues]
        /// Unpaid sent invoices at each month end, when they count in net worth.
        public let receivables: [Money]?
    }

    /// Net worth at each month end of `range` (a month not over yet ends `today`), with the
    /// change from the month before, and each account's value at those dates.
    public func netWorthReport(_ range: ReportRange, today: CalendarDate) throws -> NetWorthReport {
        let netWorth = self.netWorth
        let portfolio = self.portfolio
        let dates = range.months.map { min($0.last, today) }
        var months: [NetWorthMonth] = []
        var previous = try netWorth.totals(on: range.first.first.adding(days: -1)).netWorth
        for (index, month) in range.months.enumerated() {
            let value = try netWorth.totals(on: dates[index]).netWorth
            months.append(
                NetWorthMonth(
                    month: month, date: dates[index], netWorth: value,
                    change: index == 0 ? nil : try Portfolio.Change(then: previous, now: value)))
            previous = value
        }
        let accounts = try self.accounts.compactMap { account -> AccountValues? in
            let values = dates.map { date in
                account.isOpen(on: date) ? portfolio.value(of: account, on: date) : nil
            }
            guard values.contains(where: { $0 != nil }) else { return nil }
            return AccountValues(
                account: account, values: values,
                change: try Portfolio.Change(
                    then: values.first.flatMap { $0 } ?? .zero, now: values.last.flatMap { $0 } ?? .zero))
        }
        let receivables =
            netWorth.includesReceivables && !invoices.isEmpty
            ? try dates.map { try netWorth.receivable(on: $0) } : nil
        return NetWorthReport(months: months, accounts: accounts, receivables: receivables)
    }

    // MARK: Invoices

    public struct InvoiceMonth: Sendable, Equatable {
        public let month: BudgetMonth
        /// Totals of invoices sent in the month (voided ones left out).
        public let invoiced: Money
        /// Payments received in the month.
        public let received: Money
    }

    public struct ClientPayments: Sendable {
        public let client: String
        public let invoiced: Money
        public let received: Money
        public let outstanding: Money
        public let invoices: Int
        /// Invoices paid in full in the range.
        public let paidInvoices: Int
        /// Days from issue to the last payment, on average over the invoices paid in full.
        public let averageDaysToPay: Int?
        public let slowestDaysToPay: Int?
    }

    public func invoiceMonths(_ range: ReportRange) throws -> [InvoiceMonth] {
        let sent = invoices.filter { $0.sentOn != nil && $0.voidedOn == nil }
        return try range.months.map { month in
            InvoiceMonth(
                month: month,
                invoiced: try Money.sum(sent.filter { month.contains($0.sentOn!) }.map { try $0.total() }),
                received: try Money.sum(sent.flatMap(\.payments).filter { month.contains($0.date) }.map(\.amount)))
        }
    }

    /// Per client, the invoices sent in `range`: what was invoiced, received and is still
    /// owed, and how long the ones paid in full took, slowest payer first.
    public func clientPayments(_ range: ReportRange, today: CalendarDate) throws -> [ClientPayments] {
        let inRange = invoices.filter { invoice in
            guard let sentOn = invoice.sentOn, invoice.voidedOn == nil else { return false }
            return sentOn >= range.first.first && sentOn <= range.last.last
        }
        let rows = try Dictionary(grouping: inRange, by: \.clientID).map { clientID, invoices -> ClientPayments in
            var days: [Int] = []
            for invoice in invoices where try invoice.outstanding(on: today) == .zero {
                if let last = invoice.payments.map(\.date).max() {
                    days.append(last.dayNumber - invoice.issued.dayNumber)
                }
            }
            return ClientPayments(
                client: clients.first { $0.id == clientID }?.name ?? "(removed client)",
                invoiced: try Money.sum(invoices.map { try $0.total() }),
                received: try Money.sum(invoices.map { try $0.paid(through: today) }),
                outstanding: try Money.sum(invoices.map { try $0.outstanding(on: today) }),
                invoices: invoices.count, paidInvoices: days.count,
                averageDaysToPay: days.isEmpty ? nil : Int((Double(days.reduce(0, +)) / Double(days.count)).rounded()),
                slowestDaysToPay: days.max())
        }
        return rows.sorted {
            ($0.averageDaysToPay ?? -1, $0.client) > ($1.averageDaysToPay ?? -1, $1.client)
        }
    }
}
