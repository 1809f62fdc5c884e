import Foundation

/// Net worth as Coffer reports it everywhere — overview, history, distribution, projection,
/// exports and every `--json` shape: open accounts' values, plus unpaid sent invoices as
/// "Invoices receivable" when the vault counts them. One definition, so no two reports can
/// disagree about the same day.
public struct NetWorth: Sendable {
    /// The name receivables go under in the distribution.
    public static let receivablesCategory = "Invoices receivable"

    public let portfolio: Portfolio
    public let invoices: [Invoice]
    public let includesReceivables: Bool
    /// Where month ends up to a month come from when the records before them were not read.
    public let earlier: Earlier?

    /// Month ends up to and including month `through` (`CalendarDate.monthNumber`) answered from
    /// `monthEnds`; the portfolio and invoices then need to hold only what changes later days
    /// (each account's value at the end of `through` as its first value).
    public struct Earlier: Sendable {
        public let monthEnds: MonthEnds
        public let through: Int
        /// Every account's value and the receivable at the end of each month listed up to
        /// `through`, added up once: a chart asks for every month end.
        let figures: [(month: Int, values: [UUID: Money], receivable: Money)]

        public init(monthEnds: MonthEnds, through: Int) {
            self.monthEnds = monthEnds
            self.through = through
            var figures: [(month: Int, values: [UUID: Money], receivable: Money)] = []
            var values: [UUID: Money] = [:]
            for entry in monthEnds.months where entry.month <= through {
                for item in entry.values { values[item.accountID] = item.value }
                figures.append((entry.month, values, entry.receivable))
            }
            self.figures = figures
        }

        /// The figures at the end of `month`: those of the last month listed up to it.
        public func figures(atEndOf month: Int) -> (values: [UUID: Money], receivable: Money) {
            var low = 0, high = figures.count
            while low < high {
                let middle = (low + high) / 2
                if figures[middle].month <= month { low = middle + 1 } else { high = middle }
            }
            return low == 0 ? ([:], .zero) : (figures[low - 1].values, figures[low - 1].receivable)
        }
    }

    public init(portfolio: Portfolio, invoices: [Invoice], includeReceivables: Bool, earlier: Earlier? = nil) {
        self.portfolio = portfolio
        self.invoices = includeReceivables ? invoices : []
        self.includesReceivables = includeReceivables
        self.earlier = earlier
    }

    public struct Totals: Equatable, Sendable {
        /// Accounts' assets plus receivables.
        public let assets: Money
        public let liabilities: Money
        public let receivable: Money
        public let netWorth: Money
    }

    public func totals(on date: CalendarDate) throws -> Totals {
        if let earlier, date.monthNumber <= earlier.through { return try totals(atMonthEnd: date, from: earlier) }
        let accounts = try portfolio.totals(on: date)
        let receivable = try receivable(on: date)
        return Totals(
            assets: try accounts.assets.adding(receivable), liabilities: accounts.liabilities, receivable: receivable,
            netWorth: try accounts.netWorth.adding(receivable))
    }

    private func totals(atMonthEnd date: CalendarDate, from earlier: Earlier) throws -> Totals {
        guard date == date.endOfMonth else {
            throw FinanceError(.invalidDate, "Net worth on \(date) needs records that were not read.")
        }
        let figures = earlier.figures(atEndOf: date.monthNumber)
        var assets = Money.zero, liabilities = Money.zero
        for account in portfolio.accounts where account.isOpen(on: date) {
            guard let value = figures.values[account.id] else { continue }
            switch account.kind {
            case .asset: assets = try assets.adding(value)
            case .liability: liabilities = try liabilities.adding(value)
            }
        }
        let receivable = includesReceivables ? figures.receivable : .zero
        assets = try assets.adding(receivable)
        return Totals(
            assets: assets, liabilities: liabilities, receivable: receivable,
            netWorth: try assets.subtracting(liabilities))
    }

    /// Unpaid sent invoices on `date` (zero when receivables are left out).
    public func receivable(on date: CalendarDate) throws -> Money {
        invoices.isEmpty ? .zero : try Receivables.receivable(invoices, on: date)
    }

    /// Net worth on `date` minus net worth on the same day a month earlier.
    public func changeSinceLastMonth(on date: CalendarDate) throws -> Money {
        try totals(on: date).netWorth.subtracting(try totals(on: date.adding(months: -1)).netWorth)
    }

    /// Whether anything was recorded a month before `date` or earlier: otherwise the change
    /// since last month is only the vault's first values, not a change.
    public func hasAMonthOfHistory(on date: CalendarDate) -> Bool {
        firstDate.map { $0 <= date.adding(months: -1) } ?? false
    }

    /// The first account value or sent invoice (counted in net worth), if any. From month-end
    /// figures, the first day of its month: both uses ask only which month it was in, or whether
    /// it was at least a month before a day after that month.
    private var firstDate: CalendarDate? {
        let firstAccountDate = portfolio.accounts.compactMap { portfolio.updates(of: $0).first?.date }.min()
        let firstInvoiceDate = invoices.compactMap(\.sentOn).min()
        var earliest = [firstAccountDate, firstInvoiceDate].compactMap { $0 }.min()
        if let earlier {
            let months = [
                earlier.monthEnds.firstValueMonth(of: Set(portfolio.accounts.map(\.id))),
                includesReceivables ? earlier.monthEnds.firstSentMonth : nil,
            ].compactMap { $0 }.filter { $0 <= earlier.through }
            if let month = months.min() {
                let firstDay = CalendarDate.firstOfMonth(number: month)
                earliest = min(earliest ?? firstDay, firstDay)
            }
        }
        return earliest
    }

    public struct Point: Equatable, Sendable {
        public let date: CalendarDate
        public let netWorth: Money
    }

    /// One point per date on which any value changed, an account closed, or (when counted) an
    /// invoice was sent, paid or voided, up to `date`.
    public func history(through date: CalendarDate) throws -> [Point] {
        let accountDates =
            portfolio.accounts.flatMap { portfolio.updates(of: $0).map(\.date) }
            + portfolio.accounts.compactMap(\.closed)
        let invoiceDates = invoices.flatMap { [$0.sentOn, $0.voidedOn].compactMap { $0 } + $0.payments.map(\.date) }
        return try Set(accountDates + invoiceDates).filter { $0 <= date }.sorted().map {
            Point(date: $0, netWorth: try totals(on: $0).netWorth)
        }
    }

    /// Net worth at each month end from the first value's month to `date`'s month, the last
    /// point being `date` itself: evenly spaced, for charts.
    public func monthEndSeries(through date: CalendarDate) throws -> [Point] {
        guard let first = firstDate, first <= date else {
            return []
        }
        var points: [Point] = []
        var monthEnd = first.endOfMonth
        while monthEnd < date {
            points.append(Point(date: monthEnd, netWorth: try totals(on: monthEnd).netWorth))
            monthEnd = monthEnd.adding(days: 1).endOfMonth
        }
        points.append(Point(date: date, netWorth: try totals(on: date).netWorth))
        return points
    }

    /// Per-category totals on `date`, receivables counted as an asset category of their own, so
    /// the asset shares are shares of the same assets the net worth adds up.
    public func distribution(on date: CalendarDate) throws -> [Portfolio.CategoryTotal] {
        let accounts = try portfolio.distribution(on: date)
        let receivable = try receivable(on: date)
        guard receivable != .zero else { return accounts }
        var assets = accounts.filter { $0.kind == .asset }.map { ($0.name, $0.total, $0.accountCount) }
        let count = invoices.filter { (try? $0.isReceivable(on: date)) == true }.count
        assets.append((Self.receivablesCategory, receivable, count))
        assets.sort { ($0.1, $1.0) > ($1.1, $0.0) }
        let shares = Portfolio.perMilleShares(assets.map(\.1.minorUnits))
        return zip(assets, shares).map {
            Portfolio.CategoryTotal(name: $0.0, kind: .asset, total: $0.1, sharePerMille: $1, accountCount: $0.2)
        }
            + accounts.filter { $0.kind == .liability }
    }

    /// Where net worth heads in `years`: every open account compounded at its rate (see
    /// `Portfolio.projectedNetWorth`), receivables carried at face value. Starts from exactly
    /// `totals(on: date).netWorth`.
    public func projected(years: Int, from date: CalendarDate) throws -> Money {
        try portfolio.projectedNetWorth(years: years, from: date).adding(try receivable(on: date))
    }
}
