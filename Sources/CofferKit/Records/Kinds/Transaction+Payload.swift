import FinanceCore
import Foundation

/// Kind 10, budget transaction. The record id is the transaction's id.
///
/// Payload versions:
/// - v1: amount `svarint` (positive), type tag (`TransactionType.wireTag`), target
///   (`Transaction.Target.WireTag` then its `uuid`; category, income source or savings goal
///   only), note `optional<string>`, date `date`, entry sequence `uvarint`.
/// - v2 (current): v1's fields, where the target may also be uncategorised (no id), then origin
///   `optional<(account string, row digest bytes)>`; added with statement import. A v1 payload
///   upgrades with no origin (entered by hand).
extension Transaction: RecordPayload {
    static let recordKind = RecordKind.transaction

    func encodeFields(into writer: inout PayloadWriter) {
        writer.money(amount)
        writer.tag(type)
        writer.target(target)
        writer.optional(note) { $0.string($1) }
        writer.date(date)
        writer.unsigned(sequence)
        writer.optional(origin) { writer, origin in
            writer.string(origin.account)
            writer.bytes(origin.rowHash)
        }
    }

    static func decodeFields(version: UInt8, from reader: inout PayloadReader, id: UUID) throws -> Transaction {
        let amount = try reader.money()
        let type: TransactionType = try reader.tag()
        let target = try reader.target(allowingUncategorised: version >= 2)
        let note = try reader.optional { try $0.string() }
        let date = try reader.date(), sequence = try reader.unsigned()
        let origin: StatementOrigin?
        switch version {
        case 1: origin = nil
        case 2: origin = try reader.optional { StatementOrigin(account: try $0.string(), rowHash: try $0.bytes()) }
        default: throw PayloadReader.malformed
        }
        return Transaction(
            id: id, amount: amount, type: type, target: target, note: note, date: date, sequence: sequence,
            origin: origin)
    }
}
