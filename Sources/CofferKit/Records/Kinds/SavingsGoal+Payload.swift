import FinanceCore
import Foundation

/// Kind 11, savings goal. The record id is the goal's id.
///
/// Payload versions:
/// - v1 (current): name `string`, target amount `optional<svarint>`, target date `optional<date>`.
extension SavingsGoal: RecordPayload {
    static let recordKind = RecordKind.savingsGoal

    func encodeFields(into writer: inout PayloadWriter) {
        writer.string(name)
        writer.optional(target) { $0.money($1) }
        writer.optional(targetDate) { $0.date($1) }
    }

    static func decodeFields(version: UInt8, from reader: inout PayloadReader, id: UUID) throws -> SavingsGoal {
        let name = try reader.string()
        let target = try reader.optional { try $0.money() }
        return SavingsGoal(id: id, name: name, target: target, targetDate: try reader.optional { try $0.date() })
    }
}
