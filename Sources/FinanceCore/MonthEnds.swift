import Foundation

/// Each account's value and the receivables at the end of every month something changed:
/// figures derived from a vault's value updates, flows and invoices, kept so that net worth at
/// last year's month ends does not need last year's records. `NetWorth` answers from them for
/// month ends up to a chosen month and from the records it has for later days; both give the
/// same figures (tested against a full computation).
///
/// A month is `CalendarDate.monthNumber`. Values are stored for the months an account's value
/// changed, the receivable for every stored month; between stored months nothing changed.
public struct MonthEnds: Hashable, Sendable {
    public struct AccountValue: Hashable, Sendable {
        public let accountID: UUID
        public let value: Money

        public init(accountID: UUID, value: Money) {
            self.accountID = accountID
            self.value = value
        }
    }

    public struct Month: Hashable, Sendable {
        public let month: Int
        /// The accounts whose value changed in the month, with their value at its end.
        public let values: [AccountValue]
        /// Unpaid sent invoices at the month's end (`Receivables.receivable`).
        public let receivable: Money

        public init(month: Int, values: [AccountValue], receivable: Money) {
            self.month = month
            self.values = values
            self.receivable = receivable
        }
    }

    /// Ascending by month.
    public let months: [Month]
    /// The month the first invoice was sent in, if any (net worth counts from it when it
    /// counts receivables).
    public let firstSentMonth: Int?

    public init(months: [Month], firstSentMonth: Int?) {
        self.months = months
        self.firstSentMonth = firstSentMonth
    }

    public static let empty = MonthEnds(months: [], firstSentMonth: nil)

    /// The figures for `portfolio` and `invoices`: from scratch when `start` is nil; otherwise
    /// this summary's months before `start` are kept and later ones computed again, which needs
    /// every value update and flow dated in `start`'s month or later and every invoice not
    /// settled before it (`Invoice.settledOn`) — and this summary right for the months before.
    public func recomputed(from start: Int?, portfolio: Portfolio, invoices: [Invoice]) throws -> MonthEnds {
        let kept = start.map { start in months.filter { $0.month < start } } ?? []
        var values: [Int: [AccountValue]] = [:]
        for account in portfolio.accounts {
            // Updates come in (date, entry) order: each month keeps its last.
            var lastInMonth: [Int: Money] = [:]
            for update in portfolio.updates(of: account) where update.date.monthNumber >= start ?? .min {
                lastInMonth[update.date.monthNumber] = update.amount
            }
            for (month, value) in lastInMonth {
                values[month, default: []].append(AccountValue(accountID: account.id, value: value))
            }
        }
        // Each invoice's part of the receivable changes only in the months of its own dates:
        // added up as changes from month to month, so no invoice is asked about every month.
        var receivableChanges: [Int: Money] = [:]
        var firstSent = start.flatMap { start in firstSentMonth.flatMap { $0 < start ? $0 : nil } }
        for invoice in invoices {
            if let sent = invoice.sentOn?.monthNumber, sent >= (start ?? .min) {
                firstSent = min(firstSent ?? sent, sent)
            }
            var points = Set(invoice.eventDates.map(\.monthNumber).filter { $0 >= (start ?? .min) })
            if let start { points.insert(start) }
            var before = Money.zero
            for month in points.sorted() {
                let end = CalendarDate.endOfMonth(number: month)
                let part = try invoice.isReceivable(on: end) ? try invoice.outstanding(on: end) : .zero
                receivableChanges[month] = try (receivableChanges[month] ?? .zero).adding(part.subtracting(before))
                before = part
            }
        }
        // Every invoice not settled before `start` is counted whole at `start`: the sum starts at zero.
        var receivable = Money.zero
        var computed: [Month] = []
        for month in Set(values.keys).union(receivableChanges.keys).sorted() {
            receivable = try receivable.adding(receivableChanges[month] ?? .zero)
            let changed = (values[month] ?? []).sorted { RecordOrder.precedes($0.accountID, $1.accountID) }
            // A month where only receivables were asked about and nothing moved is not kept.
            if changed.isEmpty, receivable == (computed.last?.receivable ?? kept.last?.receivable ?? .zero) { continue }
            computed.append(Month(month: month, values: changed, receivable: receivable))
        }
        return MonthEnds(months: kept + computed, firstSentMonth: firstSent)
    }

    /// The first month any of `accounts` has a value in.
    public func firstValueMonth(of accounts: Set<UUID>) -> Int? {
        months.first { $0.values.contains { accounts.contains($0.accountID) } }?.month
    }
}

/// The order record ids are stored in: their bytes, compared as unsigned numbers.
enum RecordOrder {
    static func precedes(_ a: UUID, _ b: UUID) -> Bool {
        withUnsafeBytes(of: a.uuid) { left in
            withUnsafeBytes(of: b.uuid) { right in left.lexicographicallyPrecedes(right) }
        }
    }
}

extension CalendarDate {
    /// Months since the start of year 0 (`year × 12 + month − 1`): one number per month, in order.
    public var monthNumber: Int { year * 12 + month - 1 }

    /// The month number of January of year 1, the calendar's first.
    public static let firstMonthNumber = 12

    /// The first day of month `number` (`monthNumber`), clamped to the calendar's years.
    public static func firstOfMonth(number: Int) -> CalendarDate {
        let clamped = min(max(number, firstMonthNumber), 9999 * 12 + 11)
        return try! CalendarDate(year: clamped / 12, month: clamped % 12 + 1, day: 1)
    }

    /// The last day of month `number`, clamped likewise.
    public static func endOfMonth(number: Int) -> CalendarDate { firstOfMonth(number: number).endOfMonth }
}

extension Invoice {
    /// Every day something happened to it that changes whether, or how much, it is owed.
    public var eventDates: [CalendarDate] { [sentOn, voidedOn].compactMap { $0 } + payments.map(\.date) }

    /// The last day anything happened to an invoice that is finished: voided, or sent and paid in
    /// full. From then on it is never a receivable again (`isReceivable`), whatever the date
    /// asked about. Nil while it is a draft or still owed, or when it was voided without a date
    /// (which `isReceivable` does not count as voided).
    public var settledOn: CalendarDate? {
        switch stored {
        case .draft: return nil
        case .void: return voidedOn == nil ? nil : eventDates.max()
        case .sent:
            guard let owed = try? outstanding(), owed <= .zero else { return nil }
            return eventDates.max() ?? issued
        }
    }
}
