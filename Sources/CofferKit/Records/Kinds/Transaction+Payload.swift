import FinanceCore
import Foundation

/// Kind 10, budget transaction. The record id is the transaction's id.
///
/// Payload versions:
/// - v1: amount `svarint` (positive), type tag (`TransactionType.wireTag`), target
///   (`Transaction.Target.WireTag` then its `uuid`; category, income source or savings goal
///   only), note `optional<string>`, date `date`, entry sequence `uvarint`.
/// - v2: v1's fields, where the target may also be uncategorised (no id), then origin
///   `optional<(account string, row digest bytes)>`; added with statement import. A v1 payload
///   upgrades with no origin (entered by hand).
/// - v3 (current): v2's fields, then the flow `optional<flow>` (from `optional<uuid>`, to
///   `optional<uuid>`, at least one present, order `uvarint`); added with `spend --from` and its
///   kin. A v1 or v2 payload upgrades with none.
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
        writer.flow(flow)
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
        default: origin = try reader.optional { StatementOrigin(account: try $0.string(), rowHash: try $0.bytes()) }
        }
        return Transaction(
            id: id, amount: amount, type: type, target: target, note: note, date: date, sequence: sequence,
            origin: origin, flow: version >= 3 ? try reader.flow() : nil)
    }
}
