import FinanceCore
import Foundation

/// A rule set as a text file, to move it between vaults or keep it under version control:
///
///     # Coffer rule set: bank
///     TESCO<TAB>category<TAB>Groceries
///     /UNIQLO|ZARA/<TAB>category<TAB>Shopping
///     payroll<TAB>source<TAB>Salary
///
/// One rule per line, in order (the first match wins): pattern, what it places in (`category`,
/// `goal` or `source`) and that place's name, separated by tabs (patterns may hold spaces).
/// Blank lines and lines starting with `#` are skipped; the `# Coffer rule set: NAME` line names
/// the set. Places are found by name in the vault that imports it.
public enum RuleSetFile {
    public struct Line: Sendable, Equatable {
        public let number: Int
        public let pattern: String
        public let kind: String
        public let place: String
    }

    static let header = "# Coffer rule set: "
    public static let kinds = ["category", "goal", "source"]

    public static func encode(_ set: CategoryRuleSet, describe: (Transaction.Target) -> (kind: String, name: String))
        -> String
    {
        var text =
            header + set.name + "\n# pattern<TAB>category|goal|source<TAB>name; the first rule that matches wins\n"
        for rule in set.rules {
            let place = describe(rule.target)
            text += "\(rule.pattern)\t\(place.kind)\t\(place.name)\n"
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
            guard fields.count == 3, !fields[0].isEmpty, !fields[2].isEmpty else {
                throw CofferError(
                    .invalidInput,
                    "line \(index + 1): a rule is a pattern, category|goal|source and a name, separated by tabs.")
            }
            guard kinds.contains(fields[1].lowercased()) else {
                throw CofferError(
                    .invalidInput,
                    "line \(index + 1): '\(fields[1])' is not category, goal or source.")
            }
            lines.append(Line(number: index + 1, pattern: fields[0], kind: fields[1].lowercased(), place: fields[2]))
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
                let pattern = try CategoryRuleSet.Rule.validated(Account.validatedName(line.pattern, what: "pattern"))
                let target: Transaction.Target =
                    switch line.kind {
                    case "category": .category(try category(named: line.place).id)
                    case "goal": .goal(try goal(named: line.place).id)
                    default: .source(try incomeSource(named: line.place).id)
                    }
                return CategoryRuleSet.Rule(pattern: pattern, target: target)
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
