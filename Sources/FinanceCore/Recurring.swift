import Foundation

/// How often a recurring item falls due.
public enum RecurrenceRule: Hashable, Sendable {
    /// Each month on `day` (1–31); a month shorter than that takes its last day. Day 0 is "the
    /// last day of every month".
    case monthly(day: Int)
    /// Every 7 days from the start date.
    case weekly
    /// Every 14 days from the start date.
    case biweekly
    /// Each year on the start date's month and day (29 February: the 28th in other years).
    case yearly

    public var name: String {
        switch self {
        case .monthly: "monthly"
        case .weekly: "weekly"
        case .biweekly: "biweekly"
        case .yearly: "yearly"
        }
    }
}

/// Rent, salary, a subscription, a retainer: an entry that comes back on a schedule. Nothing is
/// recorded on its own (the Budget design rules automation out): `coffer upcoming` lists what is
/// due and `upcoming confirm` records it. Occurrences are handled in date order; `handledThrough`
/// is the last one recorded or skipped.
public struct RecurringItem: Identifiable, Hashable, Sendable {
    /// What each occurrence records.
    public enum Entry: Hashable, Sendable {
        case spending(category: UUID)
        case income(source: UUID)
        case saving(goal: UUID)
        /// A draft invoice of one line (the item's name, quantity 1, the amount) for a retainer.
        case invoice(client: UUID, taxBasisPoints: Int?)
    }

    public let id: UUID
    public var name: String
    public var amount: Money
    public var entry: Entry
    public var rule: RecurrenceRule
    /// The first occurrence is on or after it (for weekly, bi-weekly and yearly: on it).
    public var start: CalendarDate
    /// No occurrence after it.
    public var end: CalendarDate?
    public var note: String?
    /// The accounts each occurrence moves; nil leaves the category's, source's, goal's or
    /// client's default to decide.
    public var from: UUID?
    public var to: UUID?
    public var handledThrough: CalendarDate?

    public init(
        id: UUID = RecordIDs.next(), name: String, amount: Money, entry: Entry, rule: RecurrenceRule,
        start: CalendarDate,
        end: CalendarDate? = nil, note: String? = nil, from: UUID? = nil, to: UUID? = nil,
        handledThrough: CalendarDate? = nil
    ) {
        self.id = id
        self.name = name
        self.amount = amount
        self.entry = entry
        self.rule = rule
        self.start = start
        self.end = end
        self.note = note
        self.from = from
        self.to = to
        self.handledThrough = handledThrough
    }

    /// Every occurrence from `start` through `last`, oldest first (at most `limit`, so a daily
    /// walk over decades cannot run away).
    public func occurrences(through last: CalendarDate, limit: Int = 10_000) -> [CalendarDate] {
        let stop = min(last, end ?? last)
        var result: [CalendarDate] = []
        var index = 0
        while result.count < limit, let next = occurrence(index), next <= stop {
            result.append(next)
            index += 1
        }
        return result
    }

    /// The occurrences not yet recorded or skipped, through `last`.
    public func pending(through last: CalendarDate) -> [CalendarDate] {
        occurrences(through: last).filter { date in handledThrough.map { date > $0 } ?? true }
    }

    /// The `index`th occurrence (from 0).
    func occurrence(_ index: Int) -> CalendarDate? {
        switch rule {
        case .weekly: return start.adding(days: 7 * index)
        case .biweekly: return start.adding(days: 14 * index)
        case .yearly:
            return Self.clamped(year: start.year + index, month: start.month, day: start.day)
        case .monthly(let day):
            // The first month is the start's if its occurrence is not before the start.
            guard let first = Self.monthly(day, in: start.year, start.month) else { return nil }
            let offset = first < start ? 1 : 0
            let months = start.month - 1 + index + offset
            return Self.monthly(day, in: start.year + months / 12, months % 12 + 1)
        }
    }

    static func monthly(_ day: Int, in year: Int, _ month: Int) -> CalendarDate? {
        day == 0
            ? Self.clamped(year: year, month: month, day: 31)
            : Self.clamped(year: year, month: month, day: day)
    }

    /// `day` of the month, or the month's last day when it is shorter; nil past the years a
    /// calendar date can hold, which ends the walk.
    static func clamped(year: Int, month: Int, day: Int) -> CalendarDate? {
        try? CalendarDate(year: year, month: month, day: min(day, CalendarDate.daysIn(month: month, year: year)))
    }
}
