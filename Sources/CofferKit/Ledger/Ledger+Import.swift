import FinanceCore
import Foundation
import VaultStore

/// Getting data in: Coffer's own JSON export, bank statements, and the rule sets that place
/// statement lines in categories. Every import is one change (one undo); a refused import
/// writes nothing.
extension Ledger {
    // MARK: JSON export

    /// Whether the vault holds nothing a person put in (the default categories aside).
    public var holdsNoUserData: Bool {
        accounts.isEmpty && updates.isEmpty && transactions.isEmpty && incomeSources.isEmpty && goals.isEmpty
            && clients.isEmpty
            && invoices.isEmpty && categoryRates.isEmpty && ruleSets.isEmpty && budgetCategories.allSatisfy(\.isDefault)
    }

    // MARK: Statements

    /// Descriptions become notes: no control characters, at most 200 characters, and without the
    /// quote the CSV export puts before a cell a spreadsheet would run as a formula.
    public static func cleaned(_ row: StatementLayout.Row) -> StatementLayout.Row {
        func cleaned(_ text: String, limit: Int) -> String {
            var text = text
            if text.hasPrefix("'"), let next = text.unicodeScalars.dropFirst().first,
                CSVExport.formulaStarts.contains(next)
            {
                text.removeFirst()
            }
            // Printable ASCII holds no control character and has one scalar a byte.
            if text.isPrintableASCII {
                return text.utf8.count <= limit ? text : String(decoding: text.utf8.prefix(limit), as: UTF8.self)
            }
            return String(
                String.UnicodeScalarView(text.unicodeScalars.filter { !CharacterSet.controlCharacters.contains($0) })
                    .prefix(limit))
        }
        // The payee and the description share a note of 200 characters.
        let payee = cleaned(row.payee, limit: 80)
        return StatementLayout.Row(
            line: row.line, date: row.date, amount: row.amount,
            description: cleaned(row.description, limit: 200 - (payee.isEmpty ? 0 : payee.unicodeScalars.count + 3)),
            payee: payee,
            balance: row.balance, rowHash: row.rowHash)
    }

    /// Where an hledger or ledger account name lands (`expenses:food:groceries`): the category,
    /// goal or income source named by its last segment, else by the one before it, and so on
    /// (case-insensitive, exact). Under `income`/`revenue(s)` income sources are tried first,
    /// under `assets` goals, otherwise categories. `expenses:unknown` and `income:unknown`
    /// (hledger's defaults) are Uncategorised; nil when nothing matches.
    public func place(forLedgerAccount name: String) -> Transaction.Target? {
        let segments = name.split(separator: ":").map { $0.trimmingCharacters(in: .whitespaces) }
        guard let top = segments.first?.lowercased() else { return nil }
        if segments.count == 2, segments[1].lowercased() == "unknown" { return .uncategorised }
        func same(_ a: String, _ b: String) -> Bool { a.caseInsensitiveCompare(b) == .orderedSame }
        let lookups: [(String) -> Transaction.Target?] = [
            { segment in self.incomeSources.first { same($0.name, segment) }.map { .source($0.id) } },
            { segment in self.goals.first { same($0.name, segment) }.map { .goal($0.id) } },
            { segment in self.budgetCategories.first { same($0.name, segment) }.map { .category($0.id) } },
        ]
        let order =
            ["income", "revenue", "revenues"].contains(top)
            ? [0, 2, 1] : top == "assets" ? [1, 2, 0] : [2, 1, 0]
        for segment in segments.dropFirst(segments.count > 1 ? 1 : 0).reversed() {
            for index in order {
                if let found = lookups[index](segment) { return found }
            }
        }
        return nil
    }

    /// What importing statement balances as an account's values would add; values on or after
    /// a closed account's closing date are refused.
    public func planUpdateImport(_ rows: [StatementLayout.Row], account: Account) throws -> UpdateImportPlan {
        let plan = UpdateImportPlan(
            rows: rows.map(Self.cleaned), accountID: account.id, existing: updates, firstSequence: nextUpdateSequence)
        if let closed = account.closed, let late = plan.added.first(where: { $0.update.date >= closed }) {
            throw CofferError(
                .closed, "line \(late.line): \(account.name) was closed on \(closed).", kind: "account",
                candidates: [account.name])
        }
        return plan
    }

    public func importUpdates(_ plan: UpdateImportPlan, of account: Account, from fileName: String) throws {
        guard !plan.added.isEmpty else { return }
        try commit(
            "Imported \(plan.added.count) values of \(account.name) from \(fileName)",
            puts: plan.added.map { ($0.update.id, .update($0.update)) })
    }

    // MARK: Import profiles

    public func importProfile(named name: String) throws -> ImportProfile {
        try Self.match(name, among: importProfiles, name: \.name, kind: "import profile", minimumPrefix: 3)
    }

    /// Saves `profile` under its name: a new one, or (`replacing`) in place of the one of that
    /// name, keeping its id. One undoable change.
    public func saveImportProfile(_ profile: ImportProfile, replacing: Bool) throws -> ImportProfile {
        let name = try Account.validatedName(profile.name, what: "profile name")
        var saved = profile
        saved.name = name
        if let existing = importProfiles.first(where: { $0.name.caseInsensitiveCompare(name) == .orderedSame }) {
            guard replacing else {
                throw CofferError(
                    .alreadyExists, "An import profile called '\(existing.name)' already exists.",
                    kind: "import profile")
            }
            saved = ImportProfile(id: existing.id, name: existing.name)
            saved.copySettings(from: profile)
        }
        try commit(
            "\(saved.id == profile.id ? "Saved" : "Replaced") import profile \(name)",
            puts: [(saved.id, .importProfile(saved))])
        return saved
    }

    public func removeImportProfile(_ profile: ImportProfile) throws {
        try commit("Removed import profile \(profile.name)", deletes: [profile.id])
    }

    // MARK: Rule sets

    public func ruleSet(named name: String) throws -> CategoryRuleSet {
        try Self.match(name, among: ruleSets, name: \.name, kind: "rule set")
    }

    /// The rule set to recategorise with: the one named, else the only one there is.
    public func ruleSetToApply(named name: String?) throws -> CategoryRuleSet {
        if let name { return try ruleSet(named: name) }
        guard ruleSets.count == 1 else {
            throw CofferError(
                ruleSets.isEmpty ? .noMatch : .ambiguous,
                ruleSets.isEmpty ? "There are no rule sets yet." : "Say which rule set to use.",
                kind: "rule set", candidates: ruleSets.map(\.name))
        }
        return ruleSets[0]
    }

    /// A place named without saying what it is: a category if one matches, else a goal, else
    /// an income source; nothing matching, or a name two kinds share, is refused.
    public func place(named name: String) throws -> Transaction.Target {
        let found: [Transaction.Target] = [
            (try? category(named: name)).map { .category($0.id) },
            (try? goal(named: name)).map { .goal($0.id) },
            (try? incomeSource(named: name)).map { .source($0.id) },
        ].compactMap { $0 }
        guard found.count == 1 else {
            throw CofferError(
                found.isEmpty ? .noMatch : .ambiguous,
                found.isEmpty
                    ? "No category, goal or income source matches '\(name)'."
                    : "'\(name)' names more than one kind of place.",
                kind: "place")
        }
        return found[0]
    }

    /// What a rule or transaction target is, and its name.
    public func describe(_ target: Transaction.Target) -> (kind: String, name: String) {
        switch target {
        case .category(let id): ("category", budgetCategories.first { $0.id == id }?.name ?? "(deleted category)")
        case .source(let id): ("source", incomeSources.first { $0.id == id }?.name ?? "(removed income source)")
        case .goal(let id): ("goal", goals.first { $0.id == id }?.name ?? "(removed goal)")
        case .uncategorised: ("uncategorised", Self.uncategorisedName)
        }
    }

    /// Adds a rule to the set called `setName` (created if new). Returns the set, and whether
    /// the rule was new (a rule already there changes nothing).
    public func addRule(to setName: String, _ given: CategoryRuleSet.Rule) throws -> (
        set: CategoryRuleSet, added: Bool
    ) {
        let setName = try Account.validatedName(setName, what: "rule set name")
        let rule = try Self.checked(given)
        let pattern = rule.pattern
        var set =
            ruleSets.first { $0.name.caseInsensitiveCompare(setName) == .orderedSame } ?? CategoryRuleSet(name: setName)
        guard !set.rules.contains(rule) else { return (set, false) }
        set.rules.append(rule)
        try commit(
            "Added rule \(pattern) → \(describe(rule.target).name) to \(set.name)",
            puts: [(set.id, .categoryRuleSet(set))])
        return (set, true)
    }

    /// A rule as it may be kept: a pattern that is a name-like text and, between slashes, a
    /// regular expression that compiles; not one that matches everything (unless an amount
    /// range narrows it); a range whose ends are positive and in order.
    static func checked(_ rule: CategoryRuleSet.Rule) throws -> CategoryRuleSet.Rule {
        var checked = rule
        checked.pattern = try CategoryRuleSet.Rule.validated(Account.validatedName(rule.pattern, what: "pattern"))
        guard !checked.pattern.allSatisfy({ $0 == "*" }) || rule.minimum != nil || rule.maximum != nil else {
            throw CofferError(.invalidInput, "'\(checked.pattern)' would match every description.")
        }
        if [rule.minimum, rule.maximum].contains(where: { $0.map { $0 < .zero } ?? false }) {
            throw CofferError(
                .invalidInput,
                "An amount range is of sizes (0 or more) whichever way the money went: give it without a sign.")
        }
        if let minimum = rule.minimum, let maximum = rule.maximum, minimum > maximum {
            throw CofferError(.invalidInput, "The range's minimum is above its maximum.")
        }
        return checked
    }

    public func removeRuleSet(_ set: CategoryRuleSet) throws {
        try commit("Removed rule set \(set.name)", deletes: [set.id])
    }

    /// Removes rule `number` (from 1) of a set.
    @discardableResult
    public func removeRule(_ number: Int, from set: CategoryRuleSet) throws -> CategoryRuleSet.Rule {
        guard (1...max(1, set.rules.count)).contains(number), number <= set.rules.count else {
            throw CofferError(
                .noMatch, "\(set.name) has no rule \(number); it has \(set.rules.count).", kind: "rule",
                candidates: [set.name])
        }
        var changed = set
        let removed = changed.rules.remove(at: number - 1)
        try commit("Removed rule \(removed.pattern) from \(set.name)", puts: [(set.id, .categoryRuleSet(changed))])
        return removed
    }

    /// The uncategorised transactions a rule set would place, placed.
    public func recategorisation(with set: CategoryRuleSet) -> (waiting: Int, moved: [Transaction]) {
        let waiting = transactions.filter { $0.target == .uncategorised }
        let place = set.placer()
        let moved = waiting.compactMap { transaction in
            // An imported note is `payee | description` when the statement had both.
            let note = transaction.note ?? ""
            let parts = note.split(separator: " | ", maxSplits: 1).map(String.init)
            return place(parts.count == 2 ? parts[1] : note, parts.count == 2 ? parts[0] : "", transaction.signedAmount)
                .map {
                    transaction.placed(at: $0, categories: budgetCategories)
                }
        }
        return (waiting.count, moved)
    }

    public func recategorise(_ moved: [Transaction], with set: CategoryRuleSet) throws {
        guard !moved.isEmpty else { return }
        try commit(
            "Recategorised \(moved.count) transactions with \(set.name)", puts: moved.map { ($0.id, .transaction($0)) })
    }
}
