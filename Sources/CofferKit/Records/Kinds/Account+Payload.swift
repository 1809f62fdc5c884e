import FinanceCore
import Foundation

/// Kind 2, account. The record id is the account's id.
///
/// Payload versions:
/// - v1 (current): name `string`, category `string`, kind tag (`AccountKind.wireTag`), growth
///   rate `optional<svarint>` (basis points), created `date`, closed `optional<date>`.
extension Account: RecordPayload {
    static let recordKind = RecordKind.account

    func encodeFields(into writer: inout PayloadWriter) {
        writer.string(name)
        writer.string(category)
        writer.tag(kind)
        writer.optional(growthRate) { $0.int($1.basisPoints) }
        writer.date(created)
        writer.optional(closed) { $0.date($1) }
    }

    static func decodeFields(version: UInt8, from reader: inout PayloadReader, id: UUID) throws -> Account {
        let name = try reader.string(), category = try reader.string()
        let kind: AccountKind = try reader.tag()
        let rate = try reader.optional { GrowthRate(basisPoints: try $0.int()) }
        let created = try reader.date()
        let closed = try reader.optional { try $0.date() }
        return Account(
            id: id, name: name, category: category, kind: kind, growthRate: rate, created: created, closed: closed)
    }
}
