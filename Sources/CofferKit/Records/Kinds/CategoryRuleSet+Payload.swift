import FinanceCore
import Foundation

/// Kind 15, category rule set: how statement import places rows. The record id is the set's id.
///
/// Payload versions:
/// - v1: name `string`, count `uvarint`, then per rule in order: pattern `string`, target
///   (`Transaction.Target.WireTag` then its `uuid`; category, income source or savings goal
///   only: a rule never targets uncategorised).
/// - v2 (current): v1, with after each rule's target the text it reads (`Field` tag) and its
///   amount range, minimum then maximum, each `optional<svarint>`. A v1 rule reads either text
///   (it had only the description, which a v1 import's note was) and any amount.
extension CategoryRuleSet: RecordPayload {
    static let recordKind = RecordKind.categoryRuleSet

    func encodeFields(into writer: inout PayloadWriter) {
        writer.string(name)
        writer.list(rules) { writer, rule in
            writer.string(rule.pattern)
            writer.target(rule.target)
            writer.tag(rule.field)
            writer.optional(rule.minimum) { $0.money($1) }
            writer.optional(rule.maximum) { $0.money($1) }
        }
    }

    static func decodeFields(version: UInt8, from reader: inout PayloadReader, id: UUID) throws -> CategoryRuleSet {
        let name = try reader.string()
        let rules = try reader.list { reader in
            var rule = Rule(pattern: try reader.string(), target: try reader.target(allowingUncategorised: false))
            if version >= 2 {
                rule.field = try reader.tag(Rule.Field.self)
                rule.minimum = try reader.optional { try $0.money() }
                rule.maximum = try reader.optional { try $0.money() }
            }
            return rule
        }
        return CategoryRuleSet(id: id, name: name, rules: rules)
    }
}
