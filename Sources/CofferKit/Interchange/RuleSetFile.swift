import FinanceCore
import Foundation

/// A rule set as a text file, to move it between vaults or keep it under version control:
///
///     # Coffer rule set: bank
///     TESCO<TAB>category<TAB>Groceries
///     /UNIQLO|ZARA/<TAB>category<TAB>Shopping
///     payroll<TAB>source<TAB>Salary
///     AMAZON<TAB>category<TAB>Shopping<TAB>payee<TAB>amount 0..50
///
/// One rule per line, in order (the first match wins): pattern, what it places in (`category`,
/// `goal` or `source`) and that place's name, separated by tabs (patterns may hold spaces); then,
/// optionally, `payee` or `description` (the text the pattern reads; default either) and
/// `amount MIN..MAX` (sizes in the vault's currency, either end may be left out). Blank lines and
/// lines starting with `#` are skipped; the `# Coffer rule set: NAME` line names the set. Places
/// are found by name in the vault that imports it.
public enum RuleSetFile {
    public struct Line: Sendable, Equatable {
        public let number: Int
        public let pattern: String
        public let kind: String
        public let place: String
        public var field = CategoryRuleSet.Rule.Field.any
        public var minimum: String?
        public var maximum: String?
    }

    static let header = "# Coffer rule set: "
    public static let kinds = ["category", "goal", "source"]

    public static func encode(
        _ set: CategoryRuleSet, currency: Currency, describe: (Transaction.Target) -> (kind: String, name: String)
    ) -> String {
        var text =
            header + set.name
            + "\n# pattern<TAB>category|goal|source<TAB>name[<TAB>payee|description][<TAB>amount MIN..MAX];"
            + " the first rule that matches wins\n"
        for rule in set.rules {
            let place = describe(rule.target)
            text += "\(rule.pattern)\t\(place.kind)\t\(place.name)"
            if rule.field != .any { text += "\t\(rule.field.rawValue)" }
            if rule.minimum != nil || rule.maximum != nil {
                let end = { (money: Money?) in money.map { currency.decimalString($0) } ?? "" }
                text += "\tamount \(end(rule.minimum))..\(end(rule.maximum))"
            }
            text += "\n"
        }
        return text
    }

    /// The set's name (from its header line, if any) and its rules; a line that is not three
    /// tab-separated fields, or names another kind of place, is refused with its number.
    public static func decode(_ text: String) throws -> (name: String?, lines: [Line]) {
        var name: String?
        var lines: [Line] = []
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.hasSuffix("\r") ? raw.dropLast() : raw
            if line.hasPrefix(header) {
                name = String(line.dropFirst(header.count)).trimmingCharacters(in: .whitespaces)
                continue
            }
            if line.trimmingCharacters(in: .whitespaces).isEmpty || line.hasPrefix("#") { continue }
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map {
                $0.trimmingCharacters(in: .whitespaces)
            }
            func refuse(_ message: String) -> CofferError {
                CofferError(.invalidInput, "line \(index + 1): \(message)")
            }
            guard (3...5).contains(fields.count), !fields[0].isEmpty, !fields[2].isEmpty else {
                throw refuse("a rule is a pattern, category|goal|source and a name, separated by tabs.")
            }
            guard kinds.contains(fields[1].lowercased()) else {
                throw refuse("'\(fields[1])' is not category, goal or source.")
            }
            var rule = Line(number: index + 1, pattern: fields[0], kind: fields[1].lowercased(), place: fields[2])
            for option in fields.dropFirst(3) {
                if let field = CategoryRuleSet.Rule.Field(rawValue: option.lowercased()), field != .any {
                    rule.field = field
                } else if option.lowercased().hasPrefix("amount "), let range = option.range(of: "..") {
                    let low = option[option.index(option.startIndex, offsetBy: 7)..<range.lowerBound]
                        .trimmingCharacters(in: .whitespaces)
                    let high = option[range.upperBound...].trimmingCharacters(in: .whitespaces)
                    guard !low.isEmpty || !high.isEmpty else { throw refuse("'\(option)' gives no amount.") }
                    (rule.minimum, rule.maximum) = (low.isEmpty ? nil : low, high.isEmpty ? nil : high)
                } else {
                    throw refuse("'\(option)' is neither payee, description nor amount MIN..MAX.")
                }
            }
            lines.append(rule)
        }
        return (name, lines)
    }
}

extension Ledger {
    /// Imports a rule set from `RuleSetFile` lines as one undoable change: every pattern checked
    /// and every place found first, so a bad line writes nothing. An existing set of that name is
    /// refused unless `replacing`, which keeps its id.
    public func importRuleSet(named name: String, lines: [RuleSetFile.Line], replacing: Bool) throws
        -> CategoryRuleSet
    {
        let name = try Account.validatedName(name, what: "rule set name")
        let rules = try lines.map { line -> CategoryRuleSet.Rule in
            do {
                let target: Transaction.Target =
                    switch line.kind {
                    case "category": .category(try category(named: line.place).id)
                    case "goal": .goal(try goal(named: line.place).id)
                    default: .source(try incomeSource(named: line.place).id)
                    }
                return try Self.checked(
                    CategoryRuleSet.Rule(
                        pattern: line.pattern, target: target, field: line.field,
                        minimum: try line.minimum.map { try currency.parse($0) },
                        maximum: try line.maximum.map { try currency.parse($0) }))
            } catch let error as CofferError {
                throw CofferError(
                    error.code, "line \(line.number): \(error.message)", kind: error.kind, candidates: error.candidates,
                    wanted: error.wanted)
            } catch let error as FinanceError {
                throw CofferError(.invalidInput, "line \(line.number): \(error.errorDescription ?? "invalid")")
            }
        }
        var set = CategoryRuleSet(name: name, rules: rules)
        if let existing = ruleSets.first(where: { $0.name.caseInsensitiveCompare(name) == .orderedSame }) {
            guard replacing else {
                throw CofferError(
                    .alreadyExists, "A rule set called '\(existing.name)' already exists.", kind: "rule set")
            }
            set = CategoryRuleSet(id: existing.id, name: existing.name, rules: rules)
        }
        try commit(
            "Imported rule set \(set.name) (\(rules.count) rule\(rules.count == 1 ? "" : "s"))",
            puts: [(set.id, .categoryRuleSet(set))])
        return set
    }
}
