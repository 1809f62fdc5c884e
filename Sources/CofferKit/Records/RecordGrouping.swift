import FinanceCore
import Foundation
import VaultStore

/// Which page group each record is stored in (Specs/vault-format.md, "Format 3"; the numbers are
/// listed in Specs/record-payloads.md and pinned, since they name where records already are).
///
/// A group is a class in the top byte and, for records that pile up over the years, the month
/// they belong to (`year × 12 + month − 1`) below it: the setup of the vault (accounts,
/// categories, clients, settings) sits apart from the values, transactions, invoices and change
/// log of each month, so a command that needs this month and the setup reads little else.
public enum RecordGrouping {
    /// The top byte of a group.
    public enum Class: UInt8, CaseIterable, Sendable {
        case setup = 1
        case local = 2
        case values = 3
        case transactions = 4
        case invoices = 5
        case changes = 6
        case notes = 7
    }

    public static func group(_ groupClass: Class, month: Int = 0) -> PageGroup {
        PageGroup(rawValue: UInt64(groupClass.rawValue) << 56 | UInt64(max(0, month)))
    }

    static func month(_ date: CalendarDate) -> Int { date.year * 12 + date.month - 1 }

    /// The grouping the vault writes with. A payload this build cannot decode goes with the
    /// setup, where every command reads it.
    public static let grouping: PageGrouping = { id, payload in
        guard let record = try? RecordCodec.decode(payload, id: id.uuid) else { return group(.setup) }
        return group(of: record)
    }

    public static func group(of record: FinanceRecord) -> PageGroup {
        switch record {
        case .update(let update): group(.values, month: month(update.date))
        // A transaction that moves an account's value is part of that value's history, which the
        // net worth reads in every month: it goes with the values, not with its month's spending.
        case .transaction(let transaction) where transaction.flow != nil:
            group(.values, month: month(transaction.date))
        case .transaction(let transaction): group(.transactions, month: month(transaction.date))
        case .invoice(let invoice): group(.invoices, month: month(invoice.issued))
        case .change(let change): group(.changes, month: monthOf(timestamp: change.timestamp))
        case .note: group(.notes)
        case .backupState, .syncState, .syncIndex, .syncConflict, .undoneChange: group(.local)
        case .settings, .account, .categoryRate, .backupTarget, .budgetCategory, .incomeSource, .savingsGoal, .client,
            .invoiceCounter, .categoryRuleSet, .importProfile, .recurring, .invoiceSender:
            group(.setup)
        }
    }

    /// What the overview reads: everything but the spending and income of months other than
    /// `date`'s (which only the budget of those months and the reports use), the change log and
    /// the notes.
    public static func overview(on date: CalendarDate) -> @Sendable (PageGroup) -> Bool {
        let thisMonth = group(.transactions, month: month(date))
        return { group in
            switch Class(rawValue: UInt8(group.rawValue >> 56)) {
            case .transactions: group == thisMonth
            case .changes, .notes: false
            case .setup, .local, .values, .invoices, nil: true
            }
        }
    }

    /// Whether the vault holds any spending or income, read or not.
    static func holdsTransactions(_ groups: [PageGroup]) -> Bool {
        groups.contains { $0.rawValue >> 56 == UInt64(Class.transactions.rawValue) }
    }

    /// The UTC month of a Unix time, without Foundation's calendar (Howard Hinnant's civil date).
    static func monthOf(timestamp: Int64) -> Int {
        let days = timestamp >= 0 ? timestamp / 86_400 : (timestamp - 86_399) / 86_400
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        return Int(year) * 12 + Int(month) - 1
    }
}
