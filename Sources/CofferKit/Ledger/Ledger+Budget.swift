import FinanceCore
import Foundation
import VaultCrypto
import VaultStore

/// The budget half of the vault: income sources, categories, goals and transactions.
extension Ledger {
    // MARK: Income sources

    public func incomeSource(named name: String) throws -> IncomeSource {
        try Self.match(name, among: incomeSources, name: \.name, kind: "income source")
    }

    @discardableResult
    public func addIncomeSource(name: String, amount: Money, frequency: IncomeFrequency, account: Account? = nil) throws
        -> IncomeSource
    {
        let name = try Account.validatedName(name)
        try Self.requirePositive(amount)
        try Self.requireUnique(name, among: incomeSources, name: \.name, kind: "income source", article: "An")
        let source = IncomeSource(name: name, amount: amount, frequency: frequency, account: account?.id)
        try commit("Added income source \(name)", puts: [(source.id, .incomeSource(source))])
        return source
    }

    /// Writes an edited income source; its name stays unique and its amount above zero.
    public func saveIncomeSource(_ source: IncomeSource) throws {
        var source = source
        source.name = try Account.validatedName(source.name)
        try Self.requirePositive(source.amount)
        try Self.requireUnique(
            source.name, among: incomeSources.filter { $0.id != source.id }, name: \.name, kind: "income source",
            article: "An")
        try commit("Edited income source \(source.name)", puts: [(source.id, .incomeSource(source))])
    }

    /// Removes a source; income already recorded from it still counts.
    public func removeIncomeSource(_ source: IncomeSource) throws {
        try commit("Removed income source \(source.name)", deletes: [source.id])
    }

    // MARK: Categories

    public func category(named name: String, type: BudgetType? = nil, includeHidden: Bool = true) throws
        -> BudgetCategory
    {
        let pool = budgetCategories.filter { (includeHidden || !$0.isHidden) && (type == nil || $0.type == type) }
        return try Self.match(name, among: pool, name: \.name, kind: "category")
    }

    /// Adds a category at the end of its type's list. Names are unique within a type.
    @discardableResult
    public func addCategory(name: String, type: BudgetType, account: Account? = nil) throws -> BudgetCategory {
        let name = try Account.validatedName(name)
        if budgetCategories.contains(where: { $0.type == type && $0.name.caseInsensitiveCompare(name) == .orderedSame })
        {
            throw CofferError(
                .alreadyExists, "\(type.title) already has a category called '\(name)'.", kind: "category",
                candidates: [name])
        }
        let order = (budgetCategories.filter { $0.type == type }.map(\.sortOrder).max() ?? -1) + 1
        let category = BudgetCategory(
            name: name, type: type, sortOrder: order, isDefault: false, account: account?.id)
        try commit("Added category \(name) (\(type.title))", puts: [(category.id, .budgetCategory(category))])
        return category
    }

    public func renameCategory(_ category: BudgetCategory, to newName: String) throws {
        let newName = try Account.validatedName(newName)
        if budgetCategories.contains(where: {
            $0.id != category.id && $0.type == category.type && $0.name.caseInsensitiveCompare(newName) == .orderedSame
        }) {
            throw CofferError(
                .alreadyExists, "\(category.type.title) already has a category called '\(newName)'.", kind: "category",
                candidates: [newName])
        }
        var renamed = category
        renamed.name = newName
        try commit("Renamed category \(category.name) to \(newName)", puts: [(category.id, .budgetCategory(renamed))])
    }

    /// Hides a category from new spending (its past spending still counts), or shows it again.
    public func setCategoryHidden(_ category: BudgetCategory, _ hidden: Bool) throws {
        guard category.isHidden != hidden else {
            throw CofferError(
                .unchanged, "\(category.name) is already \(hidden ? "hidden" : "shown").", kind: "category",
                candidates: [category.name])
        }
        var changed = category
        changed.isHidden = hidden
        try commit(
            "\(hidden ? "Hid" : "Unhid") category \(category.name)", puts: [(category.id, .budgetCategory(changed))])
    }

    /// What deleting a custom category does: its transactions move to its type's "Other"
    /// (created when missing). Default categories can be hidden, not deleted.
    public func categoryDeletion(_ category: BudgetCategory) throws -> (
        other: BudgetCategory, otherIsNew: Bool, moved: [Transaction]
    ) {
        let (other, isNew, moved) = try budget.deletion(of: category)
        return (other, isNew, moved)
    }

    public func deleteCategory(_ category: BudgetCategory) throws {
        let (other, isNew, moved) = try categoryDeletion(category)
        var puts: [(UUID, FinanceRecord)] = moved.map { ($0.id, .transaction($0)) }
        if isNew { puts.append((other.id, .budgetCategory(other))) }
        try commit("Deleted category \(category.name)", puts: puts, deletes: [category.id])
    }

    /// Moves a category to `position` (from 1) in its type's list.
    public func moveCategory(_ category: BudgetCategory, to position: Int) throws {
        var siblings = budget.categories.filter { $0.type == category.type }
        guard (1...siblings.count).contains(position) else {
            throw CofferError(.invalidInput, "Enter a position from 1 to \(siblings.count).")
        }
        siblings.removeAll { $0.id == category.id }
        siblings.insert(category, at: position - 1)
        let puts: [(UUID, FinanceRecord)] = siblings.enumerated().compactMap { index, sibling in
            guard sibling.sortOrder != index else { return nil }
            var moved = sibling
            moved.sortOrder = index
            return (moved.id, .budgetCategory(moved))
        }
        try commit("Moved category \(category.name) to position \(position)", puts: puts)
    }

    // MARK: Goals

    public func goal(named name: String) throws -> SavingsGoal {
        try Self.match(name, among: goals, name: \.name, kind: "goal")
    }

    @discardableResult
    public func addGoal(name: String, target: Money? = nil, by date: CalendarDate? = nil, account: Account? = nil)
        throws
        -> SavingsGoal
    {
        let name = try Account.validatedName(name)
        try Self.requireUnique(name, among: goals, name: \.name, kind: "goal")
        if let target { try Self.requirePositive(target) }
        let goal = SavingsGoal(name: name, target: target, targetDate: date, account: account?.id)
        try commit("Added goal \(name)", puts: [(goal.id, .savingsGoal(goal))])
        return goal
    }

    public func saveGoal(_ goal: SavingsGoal) throws {
        var goal = goal
        goal.name = try Account.validatedName(goal.name)
        if let target = goal.target { try Self.requirePositive(target) }
        try Self.requireUnique(goal.name, among: goals.filter { $0.id != goal.id }, name: \.name, kind: "goal")
        try commit("Edited goal \(goal.name)", puts: [(goal.id, .savingsGoal(goal))])
    }

    /// Removes a goal; one with contributions is refused, since they would point at nothing.
    public func removeGoal(_ goal: SavingsGoal) throws {
        let contributions = transactions.filter { $0.target == .goal(goal.id) }.count
        guard contributions == 0 else {
            throw CofferError(
                .inUse,
                "\(goal.name) has \(contributions) contribution\(contributions == 1 ? "" : "s"); removing it would orphan them.",
                kind: "goal", candidates: [goal.name])
        }
        try commit("Removed goal \(goal.name)", deletes: [goal.id])
    }

    // MARK: Transactions

    /// Spending in a category: its type (needs, wants or savings) comes from the category. The
    /// money leaves `from` (by default the category's account).
    @discardableResult
    public func spend(
        _ amount: Money, in category: BudgetCategory, on date: CalendarDate, note: String? = nil,
        from: FlowAccount = .byDefault
    ) throws -> Transaction {
        try record(
            category.type == .savings ? .savings : .expense, amount, target: .category(category.id),
            label: "\(category.name) (\(category.type.title))", on: date, note: note,
            flow: try flow(from: from.resolved(category.account), on: date))
    }

    /// Income, paid `into` an account (by default the source's).
    @discardableResult
    public func earn(
        _ amount: Money, from source: IncomeSource, on date: CalendarDate, note: String? = nil,
        into: FlowAccount = .byDefault
    ) throws -> Transaction {
        try record(
            .income, amount, target: .source(source.id), label: source.name, on: date, note: note,
            flow: try flow(to: into.resolved(source.account), on: date))
    }

    /// Money set aside for a goal: it may leave `from` and arrive in `to` (by default the goal's
    /// savings account).
    @discardableResult
    public func save(
        _ amount: Money, towards goal: SavingsGoal, on date: CalendarDate, note: String? = nil,
        from: FlowAccount = .byDefault, to: FlowAccount = .byDefault
    ) throws -> Transaction {
        try record(
            .savings, amount, target: .goal(goal.id), label: goal.name, on: date, note: note,
            flow: try flow(from: from.resolved(nil), to: to.resolved(goal.account), on: date))
    }

    /// Records a transaction, and `alsoPut` in the same change (a recurring item's progress).
    func record(
        _ type: TransactionType, _ amount: Money, target: Transaction.Target, label: String, on date: CalendarDate,
        note: String?, flow: AccountFlow?, alsoPut: [(UUID, FinanceRecord)] = []
    ) throws -> Transaction {
        try Self.requirePositive(amount)
        let note = try note.map { try Account.validatedName($0, what: "note") }
        let transaction = Transaction(
            amount: amount, type: type, target: target, note: note, date: date, sequence: nextTransactionSequence,
            flow: flow)
        let verb = type == .income ? "Earned" : (type == .savings ? "Saved" : "Spent")
        let preposition = type == .income ? "from" : (type == .savings ? "towards" : "on")
        try commit(
            "\(verb) \(currency.format(amount)) \(preposition) \(label)\(describe(flow))",
            puts: [(transaction.id, .transaction(transaction))] + alsoPut)
        return transaction
    }

    /// Eight hex digits that name a record to people (`transaction edit ID`): the first eight of
    /// a random id's, and for an ordered id (`RecordIDs`, whose first digits are the time it was
    /// made, shared by every record made within weeks) eight of its two words mixed, so that
    /// neighbours look nothing alike and a mistyped digit names no other record.
    public static func shortID(_ id: UUID) -> String {
        let recordID = RecordID(uuid: id)
        let shown = (RecordIDs.isOrdered(id) ? recordID.mixed : recordID.high) >> 32
        return withUnsafeBytes(of: UInt32(shown).bigEndian) { Array($0) }.hexString
    }

    /// The transaction whose id starts with `id` (at least four characters, and only one match).
    public func transaction(withID id: String) throws -> Transaction {
        let wanted = id.lowercased()
        let matches = transactions.filter {
            Self.shortID($0.id).hasPrefix(wanted) || $0.id.uuidString.lowercased() == wanted
        }
        guard wanted.count >= 4, matches.count == 1 else {
            throw CofferError(
                matches.count > 1 ? .ambiguous : .noMatch,
                matches.count > 1
                    ? "'\(id)' matches \(matches.count) transactions; give more of the id."
                    : "No transaction has the id '\(id)'.", kind: "transaction")
        }
        return matches[0]
    }

    /// What a transaction is for: its category, income source or goal.
    public func label(of transaction: Transaction) -> String { label(of: transaction.target) }

    /// A category's, income source's or goal's name (an import rule's target too).
    public func label(of target: Transaction.Target) -> String {
        switch target {
        case .category(let id): budgetCategories.first { $0.id == id }?.name ?? "(deleted category)"
        case .source(let id): incomeSources.first { $0.id == id }?.name ?? "(removed income source)"
        case .goal(let id): goals.first { $0.id == id }?.name ?? "(removed goal)"
        case .uncategorised: Self.uncategorisedName
        }
    }

    public static let uncategorisedName = "Uncategorised"

    /// A correction to a transaction; nil fields stay as they are.
    public struct TransactionEdit: Sendable {
        public var amount: Money?
        public var date: CalendarDate?
        public var note: String?
        public var category: BudgetCategory?
        public var source: IncomeSource?
        /// New ends for its flow; nil keeps each end as it is.
        public var from: FlowAccount?
        public var to: FlowAccount?
        public init(
            amount: Money? = nil, date: CalendarDate? = nil, note: String? = nil, category: BudgetCategory? = nil,
            source: IncomeSource? = nil, from: FlowAccount? = nil, to: FlowAccount? = nil
        ) {
            self.from = from
            self.to = to
            self.amount = amount
            self.date = date
            self.note = note
            self.category = category
            self.source = source
        }
    }

    /// Corrects a transaction. Only spending goes in a category (which sets its type), only
    /// income comes from a source.
    @discardableResult
    public func editTransaction(_ transaction: Transaction, _ edit: TransactionEdit) throws -> Transaction {
        var edited = transaction
        if let amount = edit.amount {
            try Self.requirePositive(amount)
            edited.amount = amount
        }
        if let date = edit.date { edited.date = date }
        if let note = edit.note { edited.note = try Account.validatedName(note, what: "note") }
        if let category = edit.category {
            let placeable: Bool
            switch transaction.target {
            case .category: placeable = true
            case .uncategorised: placeable = transaction.type != .income
            case .source, .goal: placeable = false
            }
            guard placeable else { throw CofferError(.invalidInput, "Only spending has a category.", kind: "category") }
            edited.target = .category(category.id)
            edited.type = category.type == .savings ? .savings : .expense
        }
        if let source = edit.source {
            guard transaction.type == .income else {
                throw CofferError(.invalidInput, "Only income comes from a source.", kind: "income source")
            }
            edited.target = .source(source.id)
        }
        if edit.from != nil || edit.to != nil {
            // Spending only leaves an account and income only arrives in one; saving does both.
            if edit.from != nil, transaction.type == .income {
                throw CofferError(.invalidInput, "Income arrives in an account (--into); it leaves none.")
            }
            if edit.to != nil, transaction.type == .expense {
                throw CofferError(.invalidInput, "Spending leaves an account (--from); it arrives in none.")
            }
            let from = edit.from.map { $0.resolved(nil) } ?? transaction.flow?.from
            let to = edit.to.map { $0.resolved(nil) } ?? transaction.flow?.to
            // A flow keeps its place among typed values; a new one takes the next.
            edited.flow = try flow(from: from, to: to, on: edited.date).map { flow in
                var flow = flow
                flow.order = transaction.flow?.order ?? flow.order
                return flow
            }
        }
        try commit("Edited transaction \(Self.shortID(transaction.id))", puts: [(transaction.id, .transaction(edited))])
        return edited
    }

    public func deleteTransaction(_ transaction: Transaction) throws {
        try commit(
            "Deleted transaction \(label(of: transaction)) \(currency.format(transaction.amount)) on \(transaction.date)",
            deletes: [transaction.id])
    }

    static func requirePositive(_ amount: Money) throws {
        guard amount > .zero else { throw CofferError(.invalidInput, "Enter an amount above zero.") }
    }
}
