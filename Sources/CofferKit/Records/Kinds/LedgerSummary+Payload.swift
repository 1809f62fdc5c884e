import FinanceCore
import Foundation

/// What a command that reads part of a vault (`LedgerView`) needs of the rest, as the vault held
/// it at one commit: net worth's month ends (`MonthEnds`), and the highest numbers written so
/// far, which a new change, value or transaction numbers after. Derived: every write of the
/// ledger refreshes it in the same transaction, stamped with the commit it describes, so a
/// summary of any other commit (a crash between the two commits of a large write, a write that
/// was not the ledger's) is never used; the view reads the whole vault instead.
public struct LedgerSummary: Hashable, Sendable {
    /// The vault's commit counter once the write that made this summary is committed.
    public var commit: UInt64
    /// The grouping (`RecordGrouping.version`) every record of the vault was placed by.
    public var grouping: UInt8
    /// The highest change-log sequence written.
    public var lastChange: UInt64
    /// The highest entry order of a value update or a flow written.
    public var lastValueOrder: UInt64
    /// The highest transaction sequence written.
    public var lastTransaction: UInt64
    /// How many budget transactions the vault holds (whether it holds any decides what the
    /// overview shows, and those that move an account sit with that account's values).
    public var transactions: UInt64
    public var monthEnds: MonthEnds

    public init(
        commit: UInt64, grouping: UInt8, lastChange: UInt64, lastValueOrder: UInt64, lastTransaction: UInt64,
        transactions: UInt64, monthEnds: MonthEnds
    ) {
        self.commit = commit
        self.grouping = grouping
        self.lastChange = lastChange
        self.lastValueOrder = lastValueOrder
        self.lastTransaction = lastTransaction
        self.transactions = transactions
        self.monthEnds = monthEnds
    }
}

/// Kind 24, ledger summary. **Local**: derived from this copy's records, so sync, archives and
/// exports leave it out.
///
/// Payload versions:
/// - v1 (current): commit `uvarint`, grouping `u8`, last change `uvarint`, last value order
///   `uvarint`, last transaction `uvarint`, transactions `uvarint`, first sent month `optional<varint>`, count `uvarint`,
///   then per month in ascending order: month `varint` (`year × 12 + month − 1`), receivable
///   `money`, count `uvarint`, then per account whose value changed: account id `uuid`, value at
///   the month's end `money`.
extension LedgerSummary: RecordPayload {
    static let recordKind = RecordKind.summary

    func encodeFields(into writer: inout PayloadWriter) {
        writer.unsigned(commit)
        writer.byte(grouping)
        writer.unsigned(lastChange)
        writer.unsigned(lastValueOrder)
        writer.unsigned(lastTransaction)
        writer.unsigned(transactions)
        writer.optional(monthEnds.firstSentMonth) { $0.int($1) }
        writer.list(monthEnds.months) { writer, month in
            writer.int(month.month)
            writer.money(month.receivable)
            writer.list(month.values) { writer, item in
                writer.uuid(item.accountID)
                writer.money(item.value)
            }
        }
    }

    static func decodeFields(version: UInt8, from reader: inout PayloadReader, id: UUID) throws -> LedgerSummary {
        let commit = try reader.unsigned()
        let grouping = try reader.byte()
        let lastChange = try reader.unsigned()
        let lastValueOrder = try reader.unsigned()
        let lastTransaction = try reader.unsigned()
        let transactions = try reader.unsigned()
        let firstSent = try reader.optional { try $0.int() }
        let months = try reader.list { reader in
            let month = try reader.int()
            let receivable = try reader.money()
            let values = try reader.list { MonthEnds.AccountValue(accountID: try $0.uuid(), value: try $0.money()) }
            return MonthEnds.Month(month: month, values: values, receivable: receivable)
        }
        guard zip(months, months.dropFirst()).allSatisfy({ $0.month < $1.month }) else {
            throw FinanceError(.invalidRecord, "The month ends are out of order.")
        }
        return LedgerSummary(
            commit: commit, grouping: grouping, lastChange: lastChange, lastValueOrder: lastValueOrder,
            lastTransaction: lastTransaction, transactions: transactions,
            monthEnds: MonthEnds(months: months, firstSentMonth: firstSent))
    }
}
