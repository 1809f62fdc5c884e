import FinanceCore
import Foundation

/// Recurring items: rent, salary, subscriptions and retainers that come back on a schedule.
/// Nothing is recorded until someone confirms it; missed occurrences are listed, never invented.
extension Ledger {
    /// A recurring item by name (exact, else a unique prefix) or by the first characters of its id.
    public func recurringItem(named name: String) throws -> RecurringItem {
        let wanted = name.lowercased()
        if wanted.count >= 4, wanted.allSatisfy(\.isHexDigit),
            case let byID = recurringItems.filter({ Self.shortID($0.id).hasPrefix(wanted) }), byID.count == 1,
            !recurringItems.contains(where: { $0.name.caseInsensitiveCompare(name) == .orderedSame })
        {
            return byID[0]
        }
        return try Self.match(name, among: recurringItems, name: \.name, kind: "recurring item")
    }

    /// Adds a recurring item; its first occurrence is the first on or after `start`.
    @discardableResult
    public func addRecurring(_ item: RecurringItem) throws -> RecurringItem {
        let item = try checked(item, among: recurringItems)
        try commit("Added recurring \(item.name) (\(item.rule.name))", puts: [(item.id, .recurring(item))])
        return item
    }

    /// Writes an edited recurring item (its amount, accounts, end or note), checked as a new one is.
    public func saveRecurring(_ item: RecurringItem) throws {
        let item = try checked(item, among: recurringItems.filter { $0.id != item.id })
        try commit("Edited recurring \(item.name)", puts: [(item.id, .recurring(item))])
    }

    private func checked(_ item: RecurringItem, among others: [RecurringItem]) throws -> RecurringItem {
        var item = item
        item.name = try Account.validatedName(item.name, what: "name")
        item.note = try item.note.map { try Account.validatedName($0, what: "note") }
        try Self.requirePositive(item.amount)
        try Self.requireUnique(item.name, among: others, name: \.name, kind: "recurring item")
        if case .monthly(let day) = item.rule, !(0...31).contains(day) {
            throw CofferError(.invalidInput, "Enter a day of the month from 1 to 31, or last: \(day) is not one.")
        }
        if let end = item.end, end < item.start {
            throw CofferError(.invalidInput, "The end date \(end) is before the start date \(item.start).")
        }
        if let from = item.from, from == item.to {
            throw CofferError(.invalidInput, "Money cannot move from an account into itself.", kind: "account")
        }
        switch item.entry {
        case .income where item.from != nil:
            throw CofferError(.invalidInput, "Income arrives in an account (--into); it leaves none.")
        case .spending where item.to != nil:
            throw CofferError(.invalidInput, "Spending leaves an account (--from); it arrives in none.")
        case .invoice where item.from != nil || item.to != nil:
            throw CofferError(
                .invalidInput, "A retainer's invoice moves no account; its payment does (invoice pay --into).")
        default: break
        }
        return item
    }

    /// Removes a recurring item; what it recorded stays.
    public func removeRecurring(_ item: RecurringItem) throws {
        try commit("Removed recurring \(item.name)", deletes: [item.id])
    }

    /// One occurrence of a recurring item.
    public struct Occurrence: Sendable {
        public let item: RecurringItem
        public let date: CalendarDate
    }

    /// What is due: occurrences before `today` not recorded or skipped (missed), today's, and
    /// the next `days` days', each oldest first.
    public func upcoming(today: CalendarDate, days: Int) -> (
        missed: [Occurrence], due: [Occurrence], soon: [Occurrence]
    ) {
        let all = recurringItems.flatMap { item in
            item.pending(through: today.adding(days: days)).map { Occurrence(item: item, date: $0) }
        }
        .sorted { ($0.date, $0.item.name) < ($1.date, $1.item.name) }
        return (all.filter { $0.date < today }, all.filter { $0.date == today }, all.filter { $0.date > today })
    }

    /// What one confirmed occurrence recorded.
    public enum Recorded: Sendable {
        case transaction(Transaction)
        case invoice(Invoice)
    }

    /// Records every occurrence of `items` due on or before `today`, oldest first, each in a
    /// change of its own (so each can be undone), dated its due date; each item remembers how far
    /// it got in the same change. Every occurrence is checked first (its category, source, goal or
    /// client still there, its accounts open on its date), so a refusal records none of them.
    public func confirm(_ items: [RecurringItem], today: CalendarDate) throws -> [(
        item: RecurringItem, date: CalendarDate, recorded: Recorded
    )] {
        for item in items {
            for date in item.pending(through: today) { _ = try record(item, on: date, checkOnly: true) }
        }
        var result: [(RecurringItem, CalendarDate, Recorded)] = []
        for var item in items {
            for date in item.pending(through: today) {
                item.handledThrough = date
                if let recorded = try record(item, on: date, checkOnly: false) { result.append((item, date, recorded)) }
            }
        }
        return result
    }

    /// Passes over the oldest occurrence due on or before `today` without recording it.
    @discardableResult
    public func skip(_ item: RecurringItem, today: CalendarDate) throws -> CalendarDate {
        guard let date = item.pending(through: today).first else {
            throw CofferError(.unchanged, "\(item.name) has nothing due to skip.", kind: "recurring item")
        }
        var skipped = item
        skipped.handledThrough = date
        try commit("Skipped \(item.name) due \(date)", puts: [(item.id, .recurring(skipped))])
        return date
    }

    /// Records one occurrence; with `checkOnly`, only makes the checks recording would.
    private func record(_ item: RecurringItem, on date: CalendarDate, checkOnly: Bool) throws -> Recorded? {
        let progress: [(UUID, FinanceRecord)] = [(item.id, .recurring(item))]
        func existing<Value>(_ id: UUID, in values: [Value], _ idOf: (Value) -> UUID, kind: String) throws -> Value {
            guard let value = values.first(where: { idOf($0) == id }) else {
                throw CofferError(
                    .noMatch,
                    "The \(kind) of recurring \(item.name) no longer exists; remove the item and add it again.",
                    kind: kind)
            }
            return value
        }
        let note = item.note ?? item.name
        switch item.entry {
        case .spending(let categoryID):
            let category = try existing(categoryID, in: budgetCategories, \.id, kind: "category")
            let flow = try flow(from: item.from ?? category.account, on: date)
            if checkOnly { return nil }
            return .transaction(
                try record(
                    category.type == .savings ? .savings : .expense, item.amount, target: .category(category.id),
                    label: "\(category.name) (\(category.type.title))", on: date, note: note, flow: flow,
                    alsoPut: progress))
        case .income(let sourceID):
            let source = try existing(sourceID, in: incomeSources, \.id, kind: "income source")
            let flow = try flow(to: item.to ?? source.account, on: date)
            if checkOnly { return nil }
            return .transaction(
                try record(
                    .income, item.amount, target: .source(source.id), label: source.name, on: date, note: note,
                    flow: flow, alsoPut: progress))
        case .saving(let goalID):
            let goal = try existing(goalID, in: goals, \.id, kind: "goal")
            let flow = try flow(from: item.from, to: item.to ?? goal.account, on: date)
            if checkOnly { return nil }
            return .transaction(
                try record(
                    .savings, item.amount, target: .goal(goal.id), label: goal.name, on: date, note: note, flow: flow,
                    alsoPut: progress))
        case .invoice(let clientID, let tax):
            let client = try existing(clientID, in: clients, \.id, kind: "client")
            if checkOnly { return nil }
            return .invoice(
                try createInvoice(
                    for: client,
                    items: [
                        LineItem(description: item.name, quantity: Quantity(thousandths: 1000), unitPrice: item.amount)
                    ],
                    taxBasisPoints: tax, issued: date, due: .clientTerms, notes: item.note, send: false,
                    alsoPut: progress))
        }
    }
}
