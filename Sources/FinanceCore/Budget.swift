import Foundation

/// The Budget design's three kinds of spending.
public enum BudgetType: String, Sendable, CaseIterable, Codable {
    case needs, wants, savings

    public var title: String { rawValue.capitalized }

    /// The design's default categories, created with every vault.
    public var defaultCategories: [String] {
        switch self {
        case .needs: ["Rent/Mortgage", "Groceries", "Utilities", "Insurance", "Transport", "Healthcare"]
        case .wants: ["Dining Out", "Entertainment", "Shopping", "Subscriptions", "Personal Care", "Hobbies"]
        case .savings: ["Emergency Fund", "Retirement", "Vacation", "Large Purchase", "Education", "Investments"]
        }
    }
}

public struct BudgetCategory: Identifiable, Hashable, Sendable {
    public let id: UUID
    public var name: String
    public var type: BudgetType
    public var sortOrder: Int
    /// Defaults (and "Other") can be hidden but not deleted.
    public var isDefault: Bool
    public var isHidden: Bool
    /// The account spending in this category comes from unless `--from` says otherwise.
    public var account: UUID?

    public init(
        id: UUID = RecordIDs.next(), name: String, type: BudgetType, sortOrder: Int, isDefault: Bool,
        isHidden: Bool = false,
        account: UUID? = nil
    ) {
        self.account = account
        self.id = id
        self.name = name
        self.type = type
        self.sortOrder = sortOrder
        self.isDefault = isDefault
        self.isHidden = isHidden
    }

    public static let otherName = "Other"

    /// The design's default lists, in order.
    public static func defaults() -> [BudgetCategory] {
        BudgetType.allCases.flatMap { type in
            type.defaultCategories.enumerated().map {
                BudgetCategory(name: $1, type: type, sortOrder: $0, isDefault: true)
            }
        }
    }
}

public enum IncomeFrequency: Hashable, Sendable {
    case monthly
    /// Every 14 days from the anchor pay date.
    case biweekly(anchor: CalendarDate)
    /// An estimate: counts once a month in expected income.
    case variable

    public var name: String {
        switch self {
        case .monthly: "monthly"
        case .biweekly: "biweekly"
        case .variable: "variable"
        }
    }
}

public struct IncomeSource: Identifiable, Hashable, Sendable {
    public let id: UUID
    public var name: String
    public var amount: Money
    public var frequency: IncomeFrequency
    /// The account this income is paid into unless `--into` says otherwise.
    public var account: UUID?

    public init(
        id: UUID = RecordIDs.next(), name: String, amount: Money, frequency: IncomeFrequency, account: UUID? = nil
    ) {
        self.account = account
        self.id = id
        self.name = name
        self.amount = amount
        self.frequency = frequency
    }

    /// Paydays of a bi-weekly source in `month`: two, or three in some months.
    public func paydays(in month: BudgetMonth) -> [CalendarDate] {
        switch frequency {
        case .monthly, .variable: return []
        case .biweekly(let anchor):
            let start = month.first.dayNumber, end = month.last.dayNumber
            // The first payday on or after the month's first day, stepping 14 days from the anchor.
            let offset = ((start - anchor.dayNumber) % 14 + 14) % 14
            let first = offset == 0 ? start : start + 14 - offset
            return stride(from: first, through: end, by: 14).map(CalendarDate.init(dayNumber:))
        }
    }

    /// What this source is expected to bring in `month`.
    public func expected(in month: BudgetMonth) throws -> Money {
        switch frequency {
        case .monthly, .variable: return amount
        case .biweekly:
            let count = Int64(paydays(in: month).count)
            let (product, overflow) = amount.minorUnits.multipliedReportingOverflow(by: count)
            guard !overflow else { throw FinanceError(.overflow, "Expected income is too large to represent.") }
            return Money(minorUnits: product)
        }
    }
}

public enum TransactionType: String, Sendable, CaseIterable {
    case income, expense, savings
}

/// Money in (from an income source), out (to a category), or set aside (to a goal or a
/// savings category). Amounts are positive; the type says which way.
public struct Transaction: Identifiable, Hashable, Sendable {
    public enum Target: Hashable, Sendable {
        case category(UUID)
        case source(UUID)
        case goal(UUID)
        /// Imported from a statement with no rule to place it: spending counts in the month's
        /// `spent` (and income in `income`) and is listed until someone recategorises it.
        case uncategorised

        /// Whether a statement line of this signed amount may go here: income sources take
        /// money in, categories and goals money out.
        public func fits(_ amount: Money) -> Bool {
            switch self {
            case .source: amount > .zero
            case .category, .goal: amount < .zero
            case .uncategorised: false
            }
        }
    }

    public let id: UUID
    public var amount: Money
    public var type: TransactionType
    public var target: Target
    public var note: String?
    public var date: CalendarDate
    /// Entry order, for listing same-day transactions newest first.
    public var sequence: UInt64
    /// Where an imported transaction came from, so importing the same statement again adds
    /// nothing; nil for transactions entered by hand.
    public var origin: StatementOrigin?
    /// The accounts it moved money between, when the user said (`spend --from` and so on).
    @Boxed public var flow: AccountFlow?

    public init(
        id: UUID = RecordIDs.next(), amount: Money, type: TransactionType, target: Target, note: String? = nil,
        date: CalendarDate, sequence: UInt64, origin: StatementOrigin? = nil, flow: AccountFlow? = nil
    ) {
        self.flow = flow
        self.id = id
        self.amount = amount
        self.type = type
        self.target = target
        self.note = note
        self.date = date
        self.sequence = sequence
        self.origin = origin
    }

    /// Income positive, spending and saving negative: how a bank statement shows it.
    public var signedAmount: Money { type == .income ? amount : amount.negated }
}

/// The statement row a transaction was imported from.
public struct StatementOrigin: Hashable, Sendable {
    /// The bank account the statement belongs to (`--account`), as typed; compared without case.
    public var account: String
    /// A digest of the row's raw fields and its occurrence among identical rows of its file.
    public var rowHash: [UInt8]

    public init(account: String, rowHash: [UInt8]) {
        self.account = account
        self.rowHash = rowHash
    }
}

public struct SavingsGoal: Identifiable, Hashable, Sendable {
    public let id: UUID
    public var name: String
    public var target: Money?
    public var targetDate: CalendarDate?
    /// The savings account that holds this goal's money: `save` pays into it unless `--to` says
    /// otherwise, and the goal shows its value.
    public var account: UUID?

    public init(
        id: UUID = RecordIDs.next(), name: String, target: Money? = nil, targetDate: CalendarDate? = nil,
        account: UUID? = nil
    ) {
        self.account = account
        self.id = id
        self.name = name
        self.target = target
        self.targetDate = targetDate
    }
}

/// A calendar month.
public struct BudgetMonth: Hashable, Comparable, Sendable, CustomStringConvertible {
    public let year: Int
    public let month: Int

    public init(containing date: CalendarDate) {
        year = date.year
        month = date.month
    }

    /// Parses `YYYY-MM`.
    public init(parsing text: String) throws {
        let parts = text.split(separator: "-")
        guard parts.count == 2, parts[0].count == 4, parts[1].count == 2, let year = Int(parts[0]),
            let month = Int(parts[1]),
            (1...12).contains(month), (1...9999).contains(year)
        else {
            throw FinanceError(.invalidDate, "Enter a month as YYYY-MM, such as 2025-01: '\(text)' is not one.")
        }
        self.year = year
        self.month = month
    }

    public var first: CalendarDate { try! CalendarDate(year: year, month: month, day: 1) }
    public var last: CalendarDate { first.endOfMonth }
    public func contains(_ date: CalendarDate) -> Bool { date.year == year && date.month == month }
    public var description: String { String(format: "%04d-%02d", year, month) }
    public var title: String { "\(CalendarDate.monthNames[month - 1]) \(year)" }
    /// `Nov 2026`, for table columns and chart axes.
    public var shortTitle: String { "\(CalendarDate.monthNames[month - 1].prefix(3)) \(year)" }
    public static func < (lhs: BudgetMonth, rhs: BudgetMonth) -> Bool { (lhs.year, lhs.month) < (rhs.year, rhs.month) }
}

/// One month of the budget: the numbers behind the Expenses, Needs, Wants and Savings tabs.
public struct MonthSummary: Sendable {
    public struct CategoryLine: Sendable, Equatable {
        public let category: BudgetCategory
        public let total: Money
        public let count: Int
    }

    public struct GoalLine: Sendable, Equatable {
        public let goal: SavingsGoal
        public let thisMonth: Money
        /// Every contribution up to the end of the month.
        public let total: Money
        /// When the target is reached at the average monthly contribution so far; nil without a
        /// target, without contributions, or once reached.
        public let projectedCompletion: CalendarDate?
    }

    public let month: BudgetMonth
    public let income: Money
    public let expectedIncome: Money
    public let needs: Money
    public let wants: Money
    public let savings: Money
    /// Spending no rule has placed yet; part of `spent`, in none of needs, wants or savings.
    public let uncategorised: Money
    public let uncategorisedCount: Int
    public let spent: Money
    public let remaining: Money
    /// Categories used this month, or visible, with totals and counts.
    public let categories: [CategoryLine]
    public let goals: [GoalLine]
    /// This month's transactions, newest first.
    public let transactions: [Transaction]

    public func total(of type: BudgetType) -> Money {
        switch type {
        case .needs: needs
        case .wants: wants
        case .savings: savings
        }
    }
}

/// The whole budget: sources, categories, goals and transactions.
public struct Budget: Sendable {
    public let sources: [IncomeSource]
    public let categories: [BudgetCategory]
    public let goals: [SavingsGoal]
    public let transactions: [Transaction]

    public init(
        sources: [IncomeSource], categories: [BudgetCategory], goals: [SavingsGoal], transactions: [Transaction]
    ) {
        self.sources = sources
        self.categories = categories.sorted {
            ($0.type.rawValue, $0.sortOrder, $0.name) < ($1.type.rawValue, $1.sortOrder, $1.name)
        }
        self.goals = goals.sorted { $0.name.localizedCaseInsensitiveCompare($1.name) == .orderedAscending }
        self.transactions = transactions
    }

    public func category(_ id: UUID) -> BudgetCategory? { categories.first { $0.id == id } }

    /// The type a transaction counts under: its category's, or savings for a goal.
    public func budgetType(of transaction: Transaction) -> BudgetType? {
        switch transaction.target {
        case .category(let id): category(id)?.type
        case .goal: .savings
        case .source, .uncategorised: nil
        }
    }

    public func summary(for month: BudgetMonth) throws -> MonthSummary {
        let inMonth = transactions.filter { month.contains($0.date) }.sorted {
            ($0.date, $0.sequence) > ($1.date, $1.sequence)
        }
        var income = Money.zero
        var totals: [BudgetType: Money] = [.needs: .zero, .wants: .zero, .savings: .zero]
        var byCategory: [UUID: (Money, Int)] = [:]
        var uncategorised = Money.zero, uncategorisedCount = 0
        for transaction in inMonth {
            if transaction.type == .income {
                income = try income.adding(transaction.amount)
                continue
            }
            if transaction.target == .uncategorised {
                uncategorised = try uncategorised.adding(transaction.amount)
                uncategorisedCount += 1
                continue
            }
            guard let type = budgetType(of: transaction) else { continue }
            totals[type] = try totals[type]!.adding(transaction.amount)
            if case .category(let id) = transaction.target {
                let current = byCategory[id] ?? (.zero, 0)
                byCategory[id] = (try current.0.adding(transaction.amount), current.1 + 1)
            }
        }
        let expected = try Money.sum(try sources.map { try $0.expected(in: month) })
        let spent = try Money.sum([totals[.needs]!, totals[.wants]!, totals[.savings]!, uncategorised])
        // Visible categories always; hidden ones only in months where they were used.
        let lines = categories.filter { !$0.isHidden || byCategory[$0.id] != nil }.map {
            MonthSummary.CategoryLine(
                category: $0, total: byCategory[$0.id]?.0 ?? .zero, count: byCategory[$0.id]?.1 ?? 0)
        }
        return MonthSummary(
            month: month, income: income, expectedIncome: expected, needs: totals[.needs]!, wants: totals[.wants]!,
            savings: totals[.savings]!, uncategorised: uncategorised, uncategorisedCount: uncategorisedCount,
            spent: spent, remaining: try income.subtracting(spent),
            categories: lines, goals: try goals.map { try goalLine($0, month: month) }, transactions: inMonth)
    }

    func goalLine(_ goal: SavingsGoal, month: BudgetMonth) throws -> MonthSummary.GoalLine {
        let contributions = transactions.filter { $0.target == .goal(goal.id) && $0.date <= month.last }
        let total = try Money.sum(contributions.map(\.amount))
        let thisMonth = try Money.sum(contributions.filter { month.contains($0.date) }.map(\.amount))
        var completion: CalendarDate?
        if let target = goal.target, total < target, let firstDate = contributions.map(\.date).min(), total > .zero {
            let months = max(1, (month.year - firstDate.year) * 12 + month.month - firstDate.month + 1)
            let perMonth = total.minorUnits / Int64(months)
            if perMonth > 0 {
                let needed = (target.minorUnits - total.minorUnits + perMonth - 1) / perMonth
                completion = month.last.adding(months: Int(min(needed, 1200))).endOfMonth
            }
        }
        return MonthSummary.GoalLine(goal: goal, thisMonth: thisMonth, total: total, projectedCompletion: completion)
    }

    /// Deleting a custom category: its transactions move to its type's "Other" (created when
    /// missing). Returns the moved transactions and the "Other" category (new or existing).
    public func deletion(of category: BudgetCategory) throws -> (
        other: BudgetCategory, isNew: Bool, moved: [Transaction]
    ) {
        guard !category.isDefault else {
            throw FinanceError(.invalidName, "\(category.name) is a default category: it can be hidden, not deleted.")
        }
        let existing = categories.first {
            $0.type == category.type && $0.name.caseInsensitiveCompare(BudgetCategory.otherName) == .orderedSame
        }
        let other =
            existing
            ?? BudgetCategory(
                name: BudgetCategory.otherName, type: category.type,
                sortOrder: (categories.filter { $0.type == category.type }.map(\.sortOrder).max() ?? 0) + 1,
                isDefault: true)
        let moved = transactions.filter { $0.target == .category(category.id) }.map { transaction -> Transaction in
            var moved = transaction
            moved.target = .category(other.id)
            return moved
        }
        return (other, existing == nil, moved)
    }
}
