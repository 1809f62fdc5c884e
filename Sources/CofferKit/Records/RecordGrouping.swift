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
    /// Raised whenever a record kind moves to another group: a vault's summary names
    /// the version its records were placed by, and a view reads part of a vault only when it is
    /// this one (the next write moves records placed by an earlier one, `Ledger`).
    /// 1: invoices by the month issued. 2: invoices still open apart, the others by the month
    /// they were settled in (`Invoice.settledOn`); large changes apart; the summary.
    public static let version: UInt8 = 2

    /// The top byte of a group.
    public enum Class: UInt8, CaseIterable, Sendable {
        case setup = 1
        case local = 2
        case values = 3
        case transactions = 4
        case invoices = 5
        case changes = 6
        case notes = 7
        case summary = 8
    }

    public static func group(_ groupClass: Class, month: Int = 0) -> PageGroup {
        PageGroup(rawValue: UInt64(groupClass.rawValue) << 56 | UInt64(max(0, month)))
    }

    /// The invoices still open: month 0, which no date has (years start at 1).
    static let openInvoices = 0
    /// Added to the month of a change of more than `largeChange` records.
    static let largeChanges = 1 << 40
    static let largeChange = 256

    /// The grouping the vault writes with. A payload this build cannot decode goes with the
    /// setup, where every command reads it.
    public static let grouping: PageGrouping = { id, payload in
        guard let record = try? RecordCodec.decode(payload, id: id.uuid) else { return group(.setup) }
        return group(of: record)
    }

    public static func group(of record: FinanceRecord) -> PageGroup {
        switch record {
        case .update(let update): group(.values, month: update.date.monthNumber)
        // A transaction that moves an account's value is part of that value's history, which the
        // net worth reads in every month: it goes with the values, not with its month's spending.
        case .transaction(let transaction) where transaction.flow != nil:
            group(.values, month: transaction.date.monthNumber)
        case .transaction(let transaction): group(.transactions, month: transaction.date.monthNumber)
        // An invoice still owed (or a draft) may count on any later day; one settled counts on
        // no day after it was settled, so a view of one month needs it only if settled since.
        case .invoice(let invoice): group(.invoices, month: invoice.settledOn?.monthNumber ?? openInvoices)
        // A change of many records (an import) apart from the month's small ones, which a small
        // write reads to add its own.
        case .change(let change):
            group(
                .changes,
                month: monthOf(timestamp: change.timestamp) + (change.before.count > largeChange ? largeChanges : 0))
        case .note: group(.notes)
        case .backupState, .syncState, .syncIndex, .syncConflict, .undoneChange: group(.local)
        case .summary: group(.summary)
        case .settings, .account, .categoryRate, .backupTarget, .budgetCategory, .incomeSource, .savingsGoal, .client,
            .invoiceCounter, .categoryRuleSet, .importProfile, .recurring, .invoiceSender:
            group(.setup)
        }
    }

    /// Whether `groups` hold any of a class of records, read or not.
    static func holds(_ groupClass: Class, _ groups: [PageGroup]) -> Bool {
        groups.contains { $0.rawValue >> 56 == UInt64(groupClass.rawValue) }
    }

    /// The UTC month of a Unix time, through `CalendarDate`'s civil-date arithmetic (clamped to
    /// the years a calendar date holds, since a payload's time is not to be trusted).
    static func monthOf(timestamp: Int64) -> Int {
        let seconds = min(max(timestamp, -400_000_000_000), 400_000_000_000)  // ±12,700 years: no overflow
        let days = Int(seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400)
        return CalendarDate(dayNumber: days).monthNumber
    }
}
