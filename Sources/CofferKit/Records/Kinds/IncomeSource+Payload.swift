import FinanceCore
import Foundation

/// Kind 9, income source. The record id is the source's id.
///
/// Payload versions:
/// - v1 (current): name `string`, amount `svarint`, frequency tag (`IncomeFrequency.WireTag`;
///   a bi-weekly one is followed by its anchor pay `date`).
extension IncomeSource: RecordPayload {
    static let recordKind = RecordKind.incomeSource

    func encodeFields(into writer: inout PayloadWriter) {
        writer.string(name)
        writer.money(amount)
        writer.frequency(frequency)
    }

    static func decodeFields(version: UInt8, from reader: inout PayloadReader, id: UUID) throws -> IncomeSource {
        let name = try reader.string(), amount = try reader.money()
        return IncomeSource(id: id, name: name, amount: amount, frequency: try reader.frequency())
    }
}
