import Foundation

/// Accounts' values, totals, distribution and projections, computed from accounts and their
/// value updates; net worth as reported, with receivables and its history, is `NetWorth`. Pure:
/// the same inputs give the same figures, to the penny.
public struct Portfolio: Sendable {
    public let currency: Currency
    public let accounts: [Account]
    /// Category rates, keyed by lower-cased category name.
    public let categoryRates: [String: GrowthRate]
    /// Per account, its updates sorted by (date, sequence).
    private let updatesByAccount: [UUID: [ValueUpdate]]

    public init(
        currency: Currency, accounts: [Account], updates: [ValueUpdate], categoryRates: [String: GrowthRate] = [:]
    ) {
        self.currency = currency
        self.accounts = accounts
        self.categoryRates = Dictionary(categoryRates.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { $1 })
        self.updatesByAccount = Dictionary(grouping: updates, by: \.accountID)
            .mapValues { $0.sorted { ValueUpdate.isLater($1, than: $0) } }
    }

    public func updates(of account: Account) -> [ValueUpdate] { updatesByAccount[account.id] ?? [] }

    /// The account's value on `date`: its latest update on or before that date (nil if none).
    public func value(of account: Account, on date: CalendarDate) -> Money? {
        let updates = updates(of: account)
        // Binary search for the last update dated on or before `date`.
        var low = 0, high = updates.count
        while low < high {
            let middle = (low + high) / 2
            if updates[middle].date <= date { low = middle + 1 } else { high = middle }
        }
        return low == 0 ? nil : updates[low - 1].amount
    }

    public struct Totals: Equatable, Sendable {
        public let assets: Money
        public let liabilities: Money
        public let netWorth: Money
    }

    /// Active assets minus active liabilities on `date`. Accounts closed on or before `date`
    /// do not count; accounts with no update yet count as zero.
    public func totals(on date: CalendarDate) throws -> Totals {
        var assets = Money.zero, liabilities = Money.zero
        for account in accounts where account.isOpen(on: date) {
            guard let value = value(of: account, on: date) else { continue }
            switch account.kind {
            case .asset: assets = try assets.adding(value)
            case .liability: liabilities = try liabilities.adding(value)
            }
        }
        return Totals(assets: assets, liabilities: liabilities, netWorth: try assets.subtracting(liabilities))
    }

    // MARK: Change

    /// How a value moved between two dates: `amount` is now minus then, in the value's own
    /// terms (for a liability, the amount owed: a fall is a debt paid down).
    public struct Change: Equatable, Sendable {
        public let then: Money
        public let now: Money
        public let amount: Money
        /// `amount` as tenths of a percent of the size of `then`, rounded half away from zero;
        /// nil when `then` is zero (no percentage of nothing).
        public let perMille: Int?

        public init(then: Money, now: Money) throws {
            self.then = then
            self.now = now
            amount = try now.subtracting(then)
            perMille = PerMille.of(amount, in: then)
        }

        /// The change of the value as it counts in net worth (`AccountKind.counted`): a
        /// liability's turns, so paying down a debt is a rise in amount and percentage.
        public func counted(as kind: AccountKind) throws -> Change {
            try Change(then: kind.counted(then), now: kind.counted(now))
        }
    }

    /// The account's change from `earlier` to `date`; nil when it had no value on either day
    /// (it did not exist yet then, or has no value at all).
    public func change(of account: Account, on date: CalendarDate, since earlier: CalendarDate) throws -> Change? {
        guard let now = value(of: account, on: date), let then = value(of: account, on: earlier) else { return nil }
        return try Change(then: then, now: now)
    }

    /// The change of a category's total (its accounts of `kind` open on each day, as in
    /// `distribution`), so accounts added or closed in between count; nil when none of its
    /// accounts had a value on `earlier`.
    public func change(
        ofCategory category: String, kind: AccountKind, on date: CalendarDate, since earlier: CalendarDate
    )
        throws -> Change?
    {
        let members = accounts.filter {
            $0.kind == kind && $0.category.caseInsensitiveCompare(category) == .orderedSame
        }
        guard members.contains(where: { $0.isOpen(on: earlier) && value(of: $0, on: earlier) != nil }) else {
            return nil
        }
        func total(on day: CalendarDate) throws -> Money {
            try Money.sum(members.filter { $0.isOpen(on: day) }.map { value(of: $0, on: day) ?? .zero })
        }
        return try Change(then: try total(on: earlier), now: try total(on: date))
    }

    // MARK: Distribution

    public struct CategoryTotal: Equatable, Sendable {
        public let name: String
        public let kind: AccountKind
        public let total: Money
        /// Share of the kind's total (assets or liabilities) in tenths of a percent: 1000 = 100%.
        public let sharePerMille: Int
        public let accountCount: Int
    }

    /// Per-category totals on `date`, largest first within assets, then liabilities. Shares of
    /// each kind sum to exactly 100.0% (largest-remainder rounding to 0.1%); a kind whose total
    /// is zero or negative has all shares 0.
    public func distribution(on date: CalendarDate) throws -> [CategoryTotal] {
        var result: [CategoryTotal] = []
        for kind in AccountKind.allCases {
            var totals: [String: (name: String, total: Money, count: Int)] = [:]
            for account in accounts where account.kind == kind && account.isOpen(on: date) {
                let key = account.category.lowercased()
                let current = totals[key] ?? (account.category, .zero, 0)
                totals[key] = (
                    current.name, try current.total.adding(value(of: account, on: date) ?? .zero), current.count + 1
                )
            }
            let ordered = totals.values.sorted { ($0.total, $1.name) > ($1.total, $0.name) }
            let shares = Self.perMilleShares(ordered.map(\.total.minorUnits))
            result += zip(ordered, shares).map {
                CategoryTotal(name: $0.name, kind: kind, total: $0.total, sharePerMille: $1, accountCount: $0.count)
            }
        }
        return result
    }

    /// Shares in tenths of a percent that sum to exactly 100.0% (see `largestRemainderShares`).
    public static func perMilleShares(_ values: [Int64]) -> [Int] { largestRemainderShares(values, scale: 1000) }

    /// Integer shares of `scale` proportional to `values` that sum to exactly `scale`: floors
    /// first, then the remaining units to the largest remainders (ties to the earlier item).
    static func largestRemainderShares(_ values: [Int64], scale: Int) -> [Int] {
        let total = values.reduce(Int64(0)) { $0 &+ max($1, 0) }
        guard total > 0 else { return values.map { _ in 0 } }
        let exact = values.map { Decimal(max($0, 0)) * Decimal(scale) / Decimal(total) }
        var floors = exact.map { value -> Int in
            var copy = value, rounded = Decimal()
            NSDecimalRound(&rounded, &copy, 0, .down)
            return NSDecimalNumber(decimal: rounded).intValue
        }
        let remainders = zip(exact, floors).map { $0 - Decimal($1) }
        var missing = scale - floors.reduce(0, +)
        for index in remainders.indices.sorted(by: { (remainders[$0], $1) > (remainders[$1], $0) }) where missing > 0 {
            floors[index] += 1
            missing -= 1
        }
        return floors
    }

    // MARK: Projection

    /// The rate an account grows at: its own, else its category's, else 0%.
    public func rate(for account: Account) -> GrowthRate {
        account.growthRate ?? categoryRates[account.category.lowercased()] ?? .zero
    }

    /// Every open account compounded monthly at its rate for `years` from its value on `date`,
    /// assets minus liabilities. Each account is rounded to the minor unit (half away from
    /// zero) before summing. Assumptions, not guarantees.
    public func projectedNetWorth(years: Int, from date: CalendarDate) throws -> Money {
        var total = Money.zero
        for account in accounts where account.isOpen(on: date) {
            guard let value = value(of: account, on: date) else { continue }
            let projected = try Self.compound(value, rate: rate(for: account), months: 12 * years)
            total = account.kind == .asset ? try total.adding(projected) : try total.subtracting(projected)
        }
        return total
    }

    /// value × (1 + rate/12)^months, exact in Decimal, rounded once at the end.
    public static func compound(_ value: Money, rate: GrowthRate, months: Int) throws -> Money {
        let monthlyFactor = 1 + Decimal(rate.basisPoints) / 120_000
        var result = Decimal(value.minorUnits) * pow(monthlyFactor, months)
        var rounded = Decimal()
        NSDecimalRound(&rounded, &result, 0, .plain)
        guard rounded.magnitude < Decimal(Int64.max) else {
            throw FinanceError(.overflow, "The projection is too large to represent.")
        }
        return Money(minorUnits: NSDecimalNumber(decimal: rounded).int64Value)
    }
}

/// Shares and changes in tenths of a percent, the one way every report, table and JSON key
/// rounds them: half away from zero.
public enum PerMille {
    /// `part` as tenths of a percent of the size of `whole`; nil when `whole` is zero (no
    /// percentage of nothing).
    public static func of(_ part: Money, in whole: Money) -> Int? {
        guard whole != .zero else { return nil }
        var exact = Decimal(part.minorUnits) * 1000 / Decimal(whole.minorUnits).magnitude
        var rounded = Decimal()
        NSDecimalRound(&rounded, &exact, 0, .plain)
        return Int(clamping: NSDecimalNumber(decimal: rounded).int64Value)
    }

    /// `45.3%`, `-0.5%`.
    public static func text(_ perMille: Int) -> String {
        "\(perMille < 0 ? "-" : "")\(perMille.magnitude / 10).\(perMille.magnitude % 10)%"
    }
}
