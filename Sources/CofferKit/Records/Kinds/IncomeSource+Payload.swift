import FinanceCore
import Foundation

/// Kind 9, income source. The record id is the source's id.
///
/// Payload versions:
/// - v1: name `string`, amount `svarint`, frequency tag (`IncomeFrequency.WireTag`;
///   a bi-weekly one is followed by its anchor pay `date`).
/// - v2 (current): v1's fields, then the account it is paid into by default `optional<uuid>`;
///   added with flows. A v1 payload upgrades with none.
extension IncomeSource: RecordPayload {
    static let recordKind = RecordKind.incomeSource

    func encodeFields(into writer: inout PayloadWriter) {
        writer.string(name)
        writer.money(amount)
        writer.frequency(frequency)
        writer.optional(account) { $0.uuid($1) }
    }

    static func decodeFields(version: UInt8, from reader: inout PayloadReader, id: UUID) throws -> IncomeSource {
        let name = try reader.string(), amount = try reader.money()
        let frequency = try reader.frequency()
        return IncomeSource(
            id: id, name: name, amount: amount, frequency: frequency,
            account: version >= 2 ? try reader.optional { try $0.uuid() } : nil)
    }
}
