import FinanceCore

/// Entries that are probably a slip — a date in the future, a value ten times off the last
/// one or of the other sign, a payment dated before its invoice — said in words, so that every
/// face asks before recording them (the CLI's prompt or `--yes`, the web page's Record it
/// anyway). Asking is the face's; what is doubted is decided here once.
public enum EntryDoubts {
    public static func future(_ day: CalendarDate, today: CalendarDate) -> [String] {
        day > today ? ["\(day) is in the future (today is \(today))."] : []
    }

    /// A new value more than ten times the current one or under a tenth of it, or of the other
    /// sign. Zero is never doubted: an account paid off or emptied is common.
    public static func value(_ new: Money, previous: Money?, account: String, currency: Currency) -> [String] {
        guard let previous, previous != .zero, new != .zero else { return [] }
        let (was, now) = (currency.format(previous), currency.format(new))
        if previous.isNegative != new.isNegative {
            return ["\(now) has the other sign from \(account)'s current value (\(was))."]
        }
        let (old, value) = (previous.minorUnits.magnitude, new.minorUnits.magnitude)
        if value / 10 > old || (value * 10 < old) {
            let ratio = value > old ? "more than ten times" : "less than a tenth of"
            return ["\(now) is \(ratio) \(account)'s current value (\(was))."]
        }
        return []
    }

    /// A payment dated in the future or before the invoice was issued.
    public static func payment(on day: CalendarDate, of invoice: Invoice, today: CalendarDate) -> [String] {
        future(day, today: today)
            + (day < invoice.issued
                ? ["The payment date \(day) is before \(invoice.reference) was issued (\(invoice.issued))."] : [])
    }
}
