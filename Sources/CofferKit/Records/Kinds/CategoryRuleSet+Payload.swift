import FinanceCore
import Foundation

/// Kind 15, category rule set: how statement import places rows. The record id is the set's id.
///
/// Payload versions:
/// - v1 (current): name `string`, count `uvarint`, then per rule in order: pattern `string`,
///   target (`Transaction.Target.WireTag` then its `uuid`; category, income source or savings
///   goal only: a rule never targets uncategorised).
extension CategoryRuleSet: RecordPayload {
    static let recordKind = RecordKind.categoryRuleSet

    func encodeFields(into writer: inout PayloadWriter) {
        writer.string(name)
        writer.list(rules) { writer, rule in
            writer.string(rule.pattern)
            writer.target(rule.target)
        }
    }

    static func decodeFields(version: UInt8, from reader: inout PayloadReader, id: UUID) throws -> CategoryRuleSet {
        let name = try reader.string()
        let rules = try reader.list { reader in
            Rule(pattern: try reader.string(), target: try reader.target(allowingUncategorised: false))
        }
        return CategoryRuleSet(id: id, name: name, rules: rules)
    }
}
