import FinanceCore
import Foundation

/// Kind 22, recurring item (`coffer recurring`). The record id is the item's id.
///
/// Payload versions:
/// - v1 (current): name `string`, amount `svarint`, entry tag (0 spending, 1 income, 2 saving,
///   each then the category's, source's or goal's `uuid`; 3 invoice, then the client's `uuid` and
///   tax `optional<svarint>` basis points), rule tag (0 monthly, then the day `svarint`, 1–31 or 0
///   for the last day; 1 weekly; 2 bi-weekly; 3 yearly), start `date`, end `optional<date>`, note
///   `optional<string>`, from `optional<uuid>`, to `optional<uuid>`, handled through
///   `optional<date>`.
extension RecurringItem: RecordPayload {
    static let recordKind = RecordKind.recurring

    /// Pinned by value (PayloadPinTests): the tags are stored.
    enum EntryTag: UInt8, CaseIterable {
        case spending = 0
        case income = 1
        case saving = 2
        case invoice = 3
    }

    enum RuleTag: UInt8, CaseIterable {
        case monthly = 0
        case weekly = 1
        case biweekly = 2
        case yearly = 3
    }

    func encodeFields(into writer: inout PayloadWriter) {
        writer.string(name)
        writer.money(amount)
        switch entry {
        case .spending(let category):
            writer.byte(EntryTag.spending.rawValue)
            writer.uuid(category)
        case .income(let source):
            writer.byte(EntryTag.income.rawValue)
            writer.uuid(source)
        case .saving(let goal):
            writer.byte(EntryTag.saving.rawValue)
            writer.uuid(goal)
        case .invoice(let client, let tax):
            writer.byte(EntryTag.invoice.rawValue)
            writer.uuid(client)
            writer.optional(tax) { $0.int($1) }
        }
        switch rule {
        case .monthly(let day):
            writer.byte(RuleTag.monthly.rawValue)
            writer.int(day)
        case .weekly: writer.byte(RuleTag.weekly.rawValue)
        case .biweekly: writer.byte(RuleTag.biweekly.rawValue)
        case .yearly: writer.byte(RuleTag.yearly.rawValue)
        }
        writer.date(start)
        writer.optional(end) { $0.date($1) }
        writer.optional(note) { $0.string($1) }
        writer.optional(from) { $0.uuid($1) }
        writer.optional(to) { $0.uuid($1) }
        writer.optional(handledThrough) { $0.date($1) }
    }

    static func decodeFields(version: UInt8, from reader: inout PayloadReader, id: UUID) throws -> RecurringItem {
        let name = try reader.string(), amount = try reader.money()
        guard let entryTag = EntryTag(rawValue: try reader.byte()) else { throw PayloadReader.malformed }
        let entry: Entry
        switch entryTag {
        case .spending: entry = .spending(category: try reader.uuid())
        case .income: entry = .income(source: try reader.uuid())
        case .saving: entry = .saving(goal: try reader.uuid())
        case .invoice:
            let client = try reader.uuid()
            entry = .invoice(client: client, taxBasisPoints: try reader.optional { try $0.int() })
        }
        guard let ruleTag = RuleTag(rawValue: try reader.byte()) else { throw PayloadReader.malformed }
        let rule: RecurrenceRule
        switch ruleTag {
        case .monthly:
            let day = try reader.int()
            guard (0...31).contains(day) else { throw PayloadReader.malformed }
            rule = .monthly(day: day)
        case .weekly: rule = .weekly
        case .biweekly: rule = .biweekly
        case .yearly: rule = .yearly
        }
        let start = try reader.date(), end = try reader.optional { try $0.date() }
        let note = try reader.optional { try $0.string() }
        let from = try reader.optional { try $0.uuid() }, to = try reader.optional { try $0.uuid() }
        return RecurringItem(
            id: id, name: name, amount: amount, entry: entry, rule: rule, start: start, end: end, note: note,
            from: from, to: to, handledThrough: try reader.optional { try $0.date() })
    }
}
