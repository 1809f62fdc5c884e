import FinanceCore
import Foundation

/// Kind 4, category rate: a growth rate set for a whole category.
///
/// Payload versions:
/// - v1 (current): category `string`, rate `svarint` (basis points).
extension CategoryRate: RecordPayload {
    static let recordKind = RecordKind.categoryRate

    func encodeFields(into writer: inout PayloadWriter) {
        writer.string(category)
        writer.int(rate.basisPoints)
    }

    static func decodeFields(version: UInt8, from reader: inout PayloadReader, id: UUID) throws -> CategoryRate {
        let category = try reader.string()
        return CategoryRate(category: category, rate: GrowthRate(basisPoints: try reader.int()))
    }
}
