import Foundation

/// A calendar date with no time of day or time zone: the day a value was true, a payment was
/// due. Two people in different zones agree on it, and arithmetic on it never crosses midnight.
public struct CalendarDate: Hashable, Comparable, Sendable, CustomStringConvertible {
    public let year: Int
    public let month: Int
    public let day: Int

    public init(year: Int, month: Int, day: Int) throws {
        guard (1...9999).contains(year), (1...12).contains(month),
            (1...Self.daysIn(month: month, year: year)).contains(day)
        else {
            throw FinanceError(.invalidDate, "\(year)-\(month)-\(day) is not a date in the calendar.")
        }
        self.year = year
        self.month = month
        self.day = day
    }

    /// Parses `YYYY-MM-DD` (ISO 8601), the one format that reads the same everywhere.
    public init(parsing text: String) throws {
        // Fast path for the canonical form, which bulk imports are made of.
        if text.utf8.count == 10, let parsed = text.utf8.withContiguousStorageIfAvailable(Self.canonical),
            let date = parsed
        {
            self = date
            return
        }
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let parts = trimmed.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
            parts.allSatisfy({ $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }),
            let year = Int(parts[0]), let month = Int(parts[1]), let day = Int(parts[2])
        else {
            throw FinanceError(.invalidDate, "Enter a date as YYYY-MM-DD, such as 2026-03-31: '\(text)' is not one.")
        }
        guard (1...12).contains(month) else {
            throw FinanceError(
                .invalidDate, "'\(text)' is not a real date: there is no month \(month) (months run from 01 to 12).")
        }
        do {
            try self.init(year: year, month: month, day: day)
        } catch {
            throw FinanceError(
                .invalidDate, "'\(text)' is not a real date: \(Self.monthNames[month - 1]) \(year) has no day \(day).")
        }
    }

    /// `YYYY-MM-DD` read straight from its bytes; nil for anything else (the general parser
    /// then explains what is wrong).
    private static func canonical(_ bytes: UnsafeBufferPointer<UInt8>) -> CalendarDate? {
        guard bytes.count == 10, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-") else { return nil }
        func number(_ range: Range<Int>) -> Int? {
            var value = 0
            for index in range {
                let digit = Int(bytes[index]) - 48
                guard (0...9).contains(digit) else { return nil }
                value = value * 10 + digit
            }
            return value
        }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10) else { return nil }
        return try? CalendarDate(year: year, month: month, day: day)
    }

    public var description: String {
        String(format: "%04d-%02d-%02d", year, month, day)
    }

    public static func < (lhs: CalendarDate, rhs: CalendarDate) -> Bool {
        (lhs.year, lhs.month, lhs.day) < (rhs.year, rhs.month, rhs.day)
    }

    public static let monthNames = [
        "January", "February", "March", "April", "May", "June", "July", "August",
        "September", "October", "November", "December",
    ]

    static func isLeap(_ year: Int) -> Bool { year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: isLeap(year) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days since 1970-01-01 (Howard Hinnant's days_from_civil).
    public var dayNumber: Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146097 + dayOfEra - 719468
    }

    /// The day `dayNumber` days after 1970-01-01, clamped to the calendar's years (1 to 9999):
    /// arithmetic that would leave them stops at their first or last day.
    public init(dayNumber: Int) {
        let z = min(max(dayNumber, Self.firstDayNumber), Self.lastDayNumber) + 719468
        let era = (z >= 0 ? z : z - 146096) / 146097
        let dayOfEra = z - era * 146097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        try! self.init(year: yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month: month, day: day)
    }

    public func adding(days: Int) -> CalendarDate { CalendarDate(dayNumber: dayNumber + days) }

    /// The same day `months` later (or earlier), clamped to the month's last day: 31 January
    /// plus one month is 28 or 29 February; and to the calendar's years, like `adding(days:)`.
    public func adding(months: Int) -> CalendarDate {
        let total = min(max(year * 12 + (month - 1) + months, 12), 9999 * 12 + 11)
        let newYear = total / 12, newMonth = total % 12 + 1
        return try! CalendarDate(
            year: newYear, month: newMonth, day: min(day, Self.daysIn(month: newMonth, year: newYear)))
    }

    /// 0001-01-01 and 9999-12-31 as day numbers.
    static let firstDayNumber = -719_162
    static let lastDayNumber = 2_932_896

    public var endOfMonth: CalendarDate {
        try! CalendarDate(year: year, month: month, day: Self.daysIn(month: month, year: year))
    }

    public static func days(from start: CalendarDate, to end: CalendarDate) -> Int { end.dayNumber - start.dayNumber }

    /// Today in the user's time zone.
    public static func today(calendar: Calendar = .current, now: Date = Date()) -> CalendarDate {
        let parts = calendar.dateComponents([.year, .month, .day], from: now)
        return try! CalendarDate(year: parts.year!, month: parts.month!, day: parts.day!)
    }
}
