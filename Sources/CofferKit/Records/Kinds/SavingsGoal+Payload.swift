import FinanceCore
import Foundation

/// Kind 11, savings goal. The record id is the goal's id.
///
/// Payload versions:
/// - v1: name `string`, target amount `optional<svarint>`, target date `optional<date>`.
/// - v2 (current): v1's fields, then the savings account that holds it `optional<uuid>`; added
///   with flows. A v1 payload upgrades with none.
extension SavingsGoal: RecordPayload {
    static let recordKind = RecordKind.savingsGoal

    func encodeFields(into writer: inout PayloadWriter) {
        writer.string(name)
        writer.optional(target) { $0.money($1) }
        writer.optional(targetDate) { $0.date($1) }
        writer.optional(account) { $0.uuid($1) }
    }

    static func decodeFields(version: UInt8, from reader: inout PayloadReader, id: UUID) throws -> SavingsGoal {
        let name = try reader.string()
        let target = try reader.optional { try $0.money() }
        let targetDate = try reader.optional { try $0.date() }
        return SavingsGoal(
            id: id, name: name, target: target, targetDate: targetDate,
            account: version >= 2 ? try reader.optional { try $0.uuid() } : nil)
    }
}
