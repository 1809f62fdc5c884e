import FinanceCore
import Foundation

/// What importing a journal adds to a vault: accounts with their values, budget categories and
/// income sources, and the budget's transactions (Specs/cli.md, `coffer import ledger`).
public struct JournalImportPlan: Sendable {
    public fileprivate(set) var accounts: [Account] = []
    public fileprivate(set) var updates: [ValueUpdate] = []
    /// Only the categories the journal needs that the vault does not have yet.
    public fileprivate(set) var categories: [BudgetCategory] = []
    public fileprivate(set) var sources: [IncomeSource] = []
    public fileprivate(set) var transactions: [Transaction] = []
}

extension Ledger {
    /// How a journal's accounts become Coffer's: `Assets:…` and `Liabilities:…` are accounts,
    /// `Expenses:…` budget categories, `Income:…` income sources; `Equity:…` only balances.
    enum JournalAccount {
        case account(AccountKind), expense, income, equity

        init(_ name: String, line: Int) throws {
            let top = (name.split(separator: ":").first ?? "").lowercased()
            if top.hasPrefix("asset") {
                self = .account(.asset)
            } else if top.hasPrefix("liabilit") {
                self = .account(.liability)
            } else if top.hasPrefix("expense") {
                self = .expense
            } else if top.hasPrefix("income") || top.hasPrefix("revenue") {
                self = .income
            } else if top.hasPrefix("equity") {
                self = .equity
            } else {
                throw Journal.error(line, "'\(name)' is under none of Assets, Liabilities, Income, Expenses and Equity")
            }
        }
    }

    /// What importing `journal` would add. Only a vault that holds no data yet takes a journal:
    /// its accounts' values are the journal's balances, which a vault with values would contradict.
    public func planJournalImport(_ journal: Journal) throws -> JournalImportPlan {
        guard holdsNoUserData else {
            throw CofferError(
                .alreadyExists, "This vault already holds data; import only goes into a new vault.", kind: "vault data")
        }
        var plan = JournalImportPlan()
        var kinds: [String: JournalAccount] = [:]
        var balances: [String: Money] = [:]
        var valued: [String: Money] = [:]
        var accountIDs: [String: UUID] = [:]
        var updateSequence = nextUpdateSequence, transactionSequence = nextTransactionSequence
        var categories = budgetCategories
        var sourceIndex: [String: Int] = [:]

        /// Each day an account's balance changed ends in a value update of that day's balance.
        func recordValues(on date: CalendarDate) {
            for (name, balance) in balances.sorted(by: { $0.key < $1.key }) where valued[name] != balance {
                valued[name] = balance
                guard case .account(let kind) = kinds[name], let id = accountIDs[name] else { continue }
                plan.updates.append(
                    ValueUpdate(
                        accountID: id, date: date, amount: kind == .asset ? balance : balance.negated,
                        sequence: updateSequence))
                updateSequence += 1
            }
        }

        for (index, entry) in journal.entries.enumerated() {
            let note = Self.journalNote(entry.payee)
            for posting in entry.postings {
                if kinds[posting.account] == nil {
                    kinds[posting.account] = try JournalAccount(posting.account, line: posting.line)
                }
                switch kinds[posting.account]! {
                case .account(let kind):
                    if accountIDs[posting.account] == nil {
                        let account = try Self.journalAccount(posting.account, kind: kind, created: entry.date)
                        accountIDs[posting.account] = account.id
                        plan.accounts.append(account)
                    }
                    balances[posting.account] = try (balances[posting.account] ?? .zero).adding(posting.amount)
                case .expense:
                    guard posting.amount > .zero else {
                        guard posting.amount != .zero else { continue }
                        throw Journal.error(
                            posting.line,
                            "money back into \(posting.account) (a refund) has no place in Coffer's budget, which records spending only"
                        )
                    }
                    let (target, type) = try Self.journalCategory(posting.account, in: &categories, plan: &plan)
                    plan.transactions.append(
                        Transaction(
                            amount: posting.amount, type: type == .savings ? .savings : .expense, target: target,
                            note: note, date: entry.date, sequence: transactionSequence))
                    transactionSequence += 1
                case .income:
                    guard posting.amount < .zero else {
                        guard posting.amount != .zero else { continue }
                        throw Journal.error(
                            posting.line,
                            "money out of \(posting.account) has no place in Coffer's budget, which records income only"
                        )
                    }
                    let name = try Self.journalName(posting.account.split(separator: ":").dropFirst(), or: "Income")
                    let target: Transaction.Target
                    if name.caseInsensitiveCompare(Self.uncategorisedName) == .orderedSame {
                        target = .uncategorised
                    } else {
                        // A source's amount is its latest payment, a variable source's estimate.
                        let source = IncomeSource(
                            id: sourceIndex[name].map { plan.sources[$0].id } ?? RecordIDs.next(), name: name,
                            amount: posting.amount.negated, frequency: .variable)
                        if let at = sourceIndex[name] {
                            plan.sources[at] = source
                        } else {
                            sourceIndex[name] = plan.sources.count
                            plan.sources.append(source)
                        }
                        target = .source(source.id)
                    }
                    plan.transactions.append(
                        Transaction(
                            amount: posting.amount.negated, type: .income, target: target, note: note,
                            date: entry.date, sequence: transactionSequence))
                    transactionSequence += 1
                case .equity: continue
                }
            }
            let next = journal.entries.dropFirst(index + 1).first
            if next?.date != entry.date { recordValues(on: entry.date) }
        }
        plan.accounts = try Self.uniquelyNamed(plan.accounts, journalNames: accountIDs)
        return plan
    }

    /// Writes a plan as one change.
    public func importJournal(_ plan: JournalImportPlan, from fileName: String) throws {
        var puts: [(UUID, FinanceRecord)] = plan.accounts.map { ($0.id, .account($0)) }
        puts += plan.updates.map { ($0.id, .update($0)) }
        puts += plan.categories.map { ($0.id, .budgetCategory($0)) }
        puts += plan.sources.map { ($0.id, .incomeSource($0)) }
        puts += plan.transactions.map { ($0.id, .transaction($0)) }
        try commit(
            "Imported \(plan.accounts.count) accounts and \(plan.transactions.count) transactions from \(fileName)",
            puts: puts)
    }

    /// A payee as a note: no control characters, at most 100 characters, none when empty.
    static func journalNote(_ payee: String) -> String? {
        let text = String(
            String.UnicodeScalarView(payee.unicodeScalars.filter { !CharacterSet.controlCharacters.contains($0) })
                .prefix(100)
        ).trimmingCharacters(in: .whitespaces)
        return text.isEmpty ? nil : text
    }

    /// Segments of a journal name as one Coffer name: joined by ` / `, or `fallback` when none.
    static func journalName(_ segments: ArraySlice<Substring>, or fallback: String) throws -> String {
        try Account.validatedName(segments.isEmpty ? fallback : segments.joined(separator: " / "), what: "name")
    }

    /// `Assets:CATEGORY:NAME…`: the category is the segment after the top level, the name the
    /// rest; `Assets:NAME` goes in category Other.
    static func journalAccount(_ name: String, kind: AccountKind, created: CalendarDate) throws -> Account {
        let segments = name.split(separator: ":").dropFirst()
        let category = segments.count >= 2 ? String(segments.first!) : "Other"
        return Account(
            name: try journalName(segments.count >= 2 ? segments.dropFirst() : segments, or: name),
            category: try Account.validatedName(category, what: "category"), kind: kind, created: created)
    }

    /// Names Coffer would take for one (they compare without case) become the accounts' whole
    /// journal names, which are unique.
    static func uniquelyNamed(_ accounts: [Account], journalNames: [String: UUID]) throws -> [Account] {
        let byID = Dictionary(uniqueKeysWithValues: journalNames.map { ($0.value, $0.key) })
        let counts = Dictionary(grouping: accounts, by: { $0.name.lowercased() }).mapValues(\.count)
        let renamed = try accounts.map { account in
            var account = account
            if counts[account.name.lowercased()]! > 1 {
                account.name = try Account.validatedName(byID[account.id]!, what: "account name")
            }
            return account
        }
        let clashing = Dictionary(grouping: renamed, by: { $0.name.lowercased() }).filter { $0.value.count > 1 }
        guard let clash = clashing.first else { return renamed }
        throw CofferError(
            .invalidInput,
            "The journal's accounts \(clash.value.map { byID[$0.id]! }.sorted().joined(separator: " and ")) differ only in case; Coffer's names do not.",
            kind: "journal")
    }

    /// `Expenses:Needs|Wants|Savings:NAME` in that type; `Expenses:NAME` in the type of a
    /// default category of that name, else Wants; `Expenses:Uncategorised` uncategorised. An
    /// existing category of that name and type is used, else one is created.
    static func journalCategory(
        _ account: String, in categories: inout [BudgetCategory], plan: inout JournalImportPlan
    ) throws -> (Transaction.Target, BudgetType?) {
        var segments = account.split(separator: ":").dropFirst()
        var type = segments.count >= 2 ? BudgetType(rawValue: segments.first!.lowercased()) : nil
        if type != nil { segments = segments.dropFirst() }
        let name = try journalName(segments, or: BudgetCategory.otherName)
        if type == nil {
            if name.caseInsensitiveCompare(uncategorisedName) == .orderedSame { return (.uncategorised, nil) }
            type =
                BudgetType.allCases.first { candidate in
                    candidate.defaultCategories.contains { $0.caseInsensitiveCompare(name) == .orderedSame }
                } ?? .wants
        }
        if let existing = categories.first(where: {
            $0.type == type && $0.name.caseInsensitiveCompare(name) == .orderedSame
        }) {
            return (.category(existing.id), type)
        }
        let category = BudgetCategory(
            name: name, type: type!,
            sortOrder: (categories.filter { $0.type == type }.map(\.sortOrder).max() ?? -1) + 1, isDefault: false)
        categories.append(category)
        plan.categories.append(category)
        return (.category(category.id), type)
    }
}
