import FinanceCore
import Foundation

/// Kind 8, budget category. The record id is the category's id.
///
/// Payload versions:
/// - v1: name `string`, type tag (`BudgetType.wireTag`), sort order `svarint`, flags
///   `u8` (bit 1 default, bit 2 hidden; any other bit is malformed).
/// - v2 (current): v1's fields, then the account spending comes from by default
///   `optional<uuid>`; added with flows. A v1 payload upgrades with none.
extension BudgetCategory: RecordPayload {
    static let recordKind = RecordKind.budgetCategory

    private static let defaultFlag: UInt8 = 1
    private static let hiddenFlag: UInt8 = 2

    func encodeFields(into writer: inout PayloadWriter) {
        writer.string(name)
        writer.tag(type)
        writer.int(sortOrder)
        writer.byte((isDefault ? Self.defaultFlag : 0) | (isHidden ? Self.hiddenFlag : 0))
        writer.optional(account) { $0.uuid($1) }
    }

    static func decodeFields(version: UInt8, from reader: inout PayloadReader, id: UUID) throws -> BudgetCategory {
        let name = try reader.string()
        let type: BudgetType = try reader.tag()
        let sortOrder = try reader.int(), flags = try reader.byte()
        guard flags & ~(defaultFlag | hiddenFlag) == 0 else { throw PayloadReader.malformed }
        return BudgetCategory(
            id: id, name: name, type: type, sortOrder: sortOrder,
            isDefault: flags & defaultFlag != 0, isHidden: flags & hiddenFlag != 0,
            account: version >= 2 ? try reader.optional { try $0.uuid() } : nil)
    }
}
