import FinanceCore
import Foundation
import VaultStore

/// A view that needs only part of a vault's records: the setup, this copy's bookkeeping and the
/// summary (`LedgerSummary`); values, flows and invoices from one month on, net worth's earlier
/// month ends coming from the summary; and some months' spending and change log. A ledger read
/// for a view writes only to what it read (and new records), the change log of the months read.
public struct LedgerView: Sendable {
    let selects: @Sendable (PageGroup) -> Bool
    /// Month ends up to and including this month (`CalendarDate.monthNumber`) come from the
    /// summary; values, flows and invoices not settled before the month after are read.
    let earlierThrough: Int

    init(valuesFrom first: Int, spendingIn spending: Set<Int> = [], changesIn changes: Set<Int> = []) {
        earlierThrough = first - 1
        selects = { group in
            let number = Int(group.rawValue & 0x00FF_FFFF_FFFF_FFFF)
            return switch RecordGrouping.Class(rawValue: UInt8(group.rawValue >> 56)) {
            case .setup, .local, .summary, nil: true
            case .values: number >= first
            case .invoices: number == RecordGrouping.openInvoices || number >= first
            case .transactions: spending.contains(number)
            case .changes: changes.contains(number)
            case .notes: false
            }
        }
    }

    /// What the overview of `date` reads: values and flows from the month before `date`'s on
    /// (net worth a month ago is compared with); invoices still open or settled since then
    /// (receivables then and now, what was paid this month); `date`'s month's spending and
    /// income (its budget).
    public static func overview(on date: CalendarDate) -> LedgerView {
        LedgerView(valuesFrom: date.monthNumber - 1, spendingIn: [date.monthNumber])
    }

    /// What recording an account's value on `day` reads (`coffer update`): values, flows and
    /// invoices from the earlier of `day`'s and `today`'s month on (the value it replaces, net
    /// worth today), and the change log of `now`'s month (UTC) and the next, which its change
    /// joins.
    public static func recordingValue(on day: CalendarDate, today: CalendarDate, now: Date = Date()) -> LedgerView {
        let month = RecordGrouping.monthOf(timestamp: Int64(now.timeIntervalSince1970))
        return LedgerView(valuesFrom: min(day.monthNumber, today.monthNumber), changesIn: [month, month + 1])
    }

    /// What recording spending, income or savings on `day` reads (`coffer spend`, `earn`,
    /// `save`): what recording a value reads (the accounts a flow moves, their values now), and
    /// `day`'s month's transactions, whose budget the command shows.
    public static func recordingEntry(on day: CalendarDate, today: CalendarDate, now: Date = Date()) -> LedgerView {
        let month = RecordGrouping.monthOf(timestamp: Int64(now.timeIntervalSince1970))
        return LedgerView(
            valuesFrom: min(day.monthNumber, today.monthNumber), spendingIn: [day.monthNumber],
            changesIn: [month, month + 1])
    }
}

extension Ledger {
    /// Opens `file` for `view`, reading only what it needs when the vault's summary describes
    /// the commit the file is at; otherwise (a vault not written since an older build or an
    /// upgrade, a large write cut off between its two commits) the whole vault.
    public static func open(_ file: UnlockedVaultFile, for view: LedgerView) throws -> Ledger {
        let vault = try file.open(reading: view.selects)
        guard vault.isPartial else { return try Ledger(vault: vault) }
        let ledger = try Ledger(vault: vault, view: view)
        return ledger.readsPartially ? ledger : try Ledger(vault: file.open())
    }
}
