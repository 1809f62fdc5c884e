import FinanceCore
import Foundation
import VaultCrypto

/// A record as named fields with their values, so two values of one record can be compared field
/// by field (a sync conflict's lost and kept values). Read through reflection, so every kind and
/// every field a kind gains later is covered without a list to keep up to date.
enum RecordFields {
    /// A field's value for a person (`£41.11`, `'Puffin Pot'`, the name of the account an id
    /// names) and for a program (amounts as decimal strings, ids as UUIDs).
    struct Value: Equatable {
        let text: String
        let plain: String
        static let none = Value(text: "none", plain: "")
    }

    /// `record`'s fields, by dotted path (`amount`, `items[1].unitPrice`), in declaration order.
    static func fields(of record: FinanceRecord, currency: Currency, name: (UUID) -> String?) -> [(String, Value)] {
        var fields: [(String, Value)] = []
        guard let payload = Mirror(reflecting: record).children.first?.value else { return fields }
        flatten(payload, path: "", currency: currency, name: name, into: &fields)
        return fields
    }

    private static func flatten(
        _ value: Any, path: String, currency: Currency, name: (UUID) -> String?, into fields: inout [(String, Value)]
    ) {
        if let leaf = leaf(value, currency: currency, name: name) {
            fields.append((path, leaf))
            return
        }
        let mirror = Mirror(reflecting: value)
        switch mirror.displayStyle {
        case .optional:
            guard let wrapped = mirror.children.first?.value else { return fields.append((path, .none)) }
            flatten(wrapped, path: path, currency: currency, name: name, into: &fields)
        case .collection, .set:
            let elements = mirror.children.map(\.value)
            if elements.isEmpty { return fields.append((path, .none)) }
            for (index, element) in elements.enumerated() {
                flatten(element, path: "\(path)[\(index + 1)]", currency: currency, name: name, into: &fields)
            }
        case .enum:
            // A case with a value (`.category(id)`): the case, then what it holds.
            guard let child = mirror.children.first, let label = child.label else {
                return fields.append((path, Value(text: "\(value)", plain: "\(value)")))
            }
            var inner: [(String, Value)] = []
            flatten(child.value, path: "", currency: currency, name: name, into: &inner)
            if inner.count == 1, inner[0].0.isEmpty {
                let held = inner[0].1
                return fields.append(
                    (path, Value(text: "\(label) \(held.text)", plain: "\(label):\(held.plain)")))
            }
            let prefix = path.isEmpty ? label : "\(path).\(label)"
            fields += inner.map { (join(prefix, $0.0), $0.1) }
        default:
            let children = mirror.children.filter { $0.label != nil }
            if children.isEmpty { return fields.append((path, Value(text: "\(value)", plain: "\(value)"))) }
            for child in children {
                flatten(child.value, path: join(path, child.label!), currency: currency, name: name, into: &fields)
            }
        }
    }

    private static func join(_ path: String, _ label: String) -> String {
        path.isEmpty ? label : label.isEmpty ? path : "\(path).\(label)"
    }

    /// Values read whole: money, text, dates, ids, numbers, and the small types that say
    /// themselves (a rate, a quantity, a month).
    private static func leaf(_ value: Any, currency: Currency, name: (UUID) -> String?) -> Value? {
        switch value {
        case let money as Money: return Value(text: currency.format(money), plain: currency.decimalString(money))
        case let text as String: return Value(text: "'\(text)'", plain: text)
        case let id as UUID: return Value(text: name(id).map { "'\($0)'" } ?? id.uuidString, plain: id.uuidString)
        case let flag as Bool: return Value(text: flag ? "yes" : "no", plain: flag ? "true" : "false")
        case let number as any BinaryInteger: return Value(text: "\(number)", plain: "\(number)")
        case let bytes as [UInt8]: return Value(text: "\(bytes.count) bytes", plain: bytes.hexString)
        case let said as CustomStringConvertible where Mirror(reflecting: value).displayStyle == .struct:
            return Value(text: said.description, plain: said.description)
        default: return nil
        }
    }

    /// The fields whose values differ between `lost` and `kept` (nil: the record deleted).
    static func differences(
        lost: FinanceRecord?, kept: FinanceRecord?, currency: Currency, name: (UUID) -> String?
    ) -> [FieldDifference] {
        guard let lost, let kept else {
            return [
                FieldDifference(
                    field: "record", lost: lost == nil ? "deleted" : "edited", kept: kept == nil ? "deleted" : "edited",
                    lostText: lost == nil ? "deleted" : "edited", keptText: kept == nil ? "deleted" : "edited")
            ]
        }
        let before = fields(of: lost, currency: currency, name: name)
        let after = Dictionary(
            fields(of: kept, currency: currency, name: name), uniquingKeysWith: { first, _ in first })
        var seen = Set<String>()
        var differences: [FieldDifference] = []
        for (field, value) in before {
            seen.insert(field)
            let other = after[field] ?? .none
            if other != value { differences.append(.init(field: field, lost: value, kept: other)) }
        }
        for (field, value) in fields(of: kept, currency: currency, name: name) where !seen.contains(field) {
            differences.append(.init(field: field, lost: .none, kept: value))
        }
        return differences
    }
}

/// One field a sync conflict's lost and kept values differ in.
public struct FieldDifference: Sendable, Equatable {
    public let field: String
    /// For programs: amounts as decimal strings, ids as UUIDs; "" for a field one side lacks.
    public let lost: String
    public let kept: String
    /// For people: amounts in the currency, texts quoted, ids by the name of what they name.
    public let lostText: String
    public let keptText: String

    init(field: String, lost: RecordFields.Value, kept: RecordFields.Value) {
        self.init(field: field, lost: lost.plain, kept: kept.plain, lostText: lost.text, keptText: kept.text)
    }

    init(field: String, lost: String, kept: String, lostText: String, keptText: String) {
        self.field = field
        self.lost = lost
        self.kept = kept
        self.lostText = lostText
        self.keptText = keptText
    }

    /// `amount £41.11 → kept £42.22`.
    public var line: String {
        field == "record" ? "\(lostText) → kept \(keptText)" : "\(field) \(lostText) → kept \(keptText)"
    }
}
