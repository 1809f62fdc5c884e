import FinanceCore
import Foundation

/// Accounts and their values: the net-worth half of the vault.
extension Ledger {
    /// The account called `name`: an exact case-insensitive match, else the only account whose
    /// name starts with it.
    /// An account by its exact name, or a unique prefix of at least 3 letters: a value typed
    /// for "M" must not land on whichever account happens to start with it.
    public func account(named name: String, includeClosed: Bool = true) throws -> Account {
        try Self.match(
            name, among: includeClosed ? accounts : accounts.filter { $0.closed == nil }, name: \.name, kind: "account",
            minimumPrefix: 3)
    }

    /// Adds an account, with its first value when one is given. Names are unique.
    @discardableResult
    public func addAccount(
        name: String, category: String, kind: AccountKind, growthRate: GrowthRate? = nil,
        value: (amount: Money, date: CalendarDate)? = nil, today: CalendarDate
    ) throws -> Account {
        let name = try Account.validatedName(name)
        let category = try Account.validatedName(category, what: "category")
        try Self.requireUnique(name, among: accounts, name: \.name, kind: "account", article: "An")
        let account = Account(
            name: name, category: category, kind: kind, growthRate: growthRate,
            created: min(today, value?.date ?? today))
        var puts: [(UUID, FinanceRecord)] = [(account.id, .account(account))]
        if let value {
            let update = ValueUpdate(
                accountID: account.id, date: value.date, amount: value.amount, sequence: nextUpdateSequence)
            puts.append((update.id, .update(update)))
        }
        try commit("Added \(kind == .liability ? "liability" : "account") \(name)", puts: puts)
        return account
    }

    /// Records what an account is worth on `date` (for a liability, what is owed). A closed
    /// account takes no values from its closing date on.
    @discardableResult
    public func recordValue(of account: Account, amount: Money, on date: CalendarDate, note: String? = nil) throws
        -> ValueUpdate
    {
        let note = try note.map { try Account.validatedName($0, what: "note") }
        if let closed = account.closed, closed <= date {
            throw CofferError(
                .closed, "\(account.name) was closed on \(closed).", kind: "account", candidates: [account.name])
        }
        let update = ValueUpdate(
            accountID: account.id, date: date, amount: amount, sequence: nextUpdateSequence, note: note)
        try commit(
            "Updated \(account.name) to \(currency.format(amount)) on \(date)", puts: [(update.id, .update(update))])
        return update
    }

    public func renameAccount(_ account: Account, to newName: String) throws {
        let newName = try Account.validatedName(newName)
        try Self.requireUnique(
            newName, among: accounts.filter { $0.id != account.id }, name: \.name, kind: "account", article: "An")
        var renamed = account
        renamed.name = newName
        try commit("Renamed \(account.name) to \(newName)", puts: [(account.id, .account(renamed))])
    }

    /// Closes an account: it leaves the totals from `date` on and stays in history.
    public func closeAccount(_ account: Account, on date: CalendarDate) throws {
        if let closed = account.closed {
            throw CofferError(
                .closed, "\(account.name) is already closed (\(closed)).", kind: "account", candidates: [account.name])
        }
        var closing = account
        closing.closed = date
        try commit("Closed \(account.name)", puts: [(account.id, .account(closing))])
    }

    public func reopenAccount(_ account: Account) throws {
        guard account.closed != nil else {
            throw CofferError(.unchanged, "\(account.name) is not closed.", kind: "account", candidates: [account.name])
        }
        var reopened = account
        reopened.closed = nil
        try commit("Reopened \(account.name)", puts: [(account.id, .account(reopened))])
    }

    /// The value updates that go with an account when it is deleted.
    public func updates(of account: Account) -> [ValueUpdate] { updates.filter { $0.accountID == account.id } }

    /// Deletes an account and, with it, every value update it has (one undoable change). Whatever
    /// named it as the default account of its entries names none from then on; flows already
    /// recorded keep their link, which moves nothing once the account is gone.
    public func deleteAccount(_ account: Account) throws {
        func unlinked<Item: Identifiable>(
            _ items: [Item], _ link: WritableKeyPath<Item, UUID?>, _ record: (Item) -> FinanceRecord
        ) -> [(UUID, FinanceRecord)] where Item.ID == UUID {
            items.filter { $0[keyPath: link] == account.id }.map { item in
                var item = item
                item[keyPath: link] = nil
                return (item.id, record(item))
            }
        }
        let puts =
            unlinked(budgetCategories, \.account, FinanceRecord.budgetCategory)
            + unlinked(incomeSources, \.account, FinanceRecord.incomeSource)
            + unlinked(goals, \.account, FinanceRecord.savingsGoal) + unlinked(clients, \.account, FinanceRecord.client)
        // A recurring item that named it moves none (or its target's default) from then on.
        let recurring = recurringItems.compactMap { item -> (UUID, FinanceRecord)? in
            guard item.from == account.id || item.to == account.id else { return nil }
            var item = item
            if item.from == account.id { item.from = nil }
            if item.to == account.id { item.to = nil }
            return (item.id, .recurring(item))
        }
        try commit(
            "Deleted \(account.name)", puts: puts + recurring, deletes: [account.id] + updates(of: account).map(\.id))
    }

    /// Where a growth rate went: a whole category, or one account (whose own rate wins).
    public enum GrowthTarget: Equatable, Sendable {
        case category(String)
        case account(String)
    }

    /// Sets the yearly growth rate projections use. `target` names a category when an account
    /// uses it, it already has a rate, or it is a suggested category; otherwise an account.
    @discardableResult
    public func setGrowthRate(_ rate: GrowthRate, for target: String) throws -> GrowthTarget {
        let existing = categoryRateRecord(for: target)
        let isCategory =
            accounts.contains { $0.category.caseInsensitiveCompare(target) == .orderedSame } || existing != nil
            || (Account.defaultAssetCategories + Account.defaultLiabilityCategories).contains {
                $0.caseInsensitiveCompare(target) == .orderedSame
            }
        guard isCategory else {
            var account = try account(named: target)
            account.growthRate = rate
            try commit("Set \(account.name) growth to \(rate)", puts: [(account.id, .account(account))])
            return .account(account.name)
        }
        let name = accounts.first { $0.category.caseInsensitiveCompare(target) == .orderedSame }?.category ?? target
        try commit(
            "Set \(name) growth to \(rate)",
            puts: [(existing?.0 ?? RecordIDs.next(), .categoryRate(CategoryRate(category: name, rate: rate)))])
        return .category(name)
    }

    /// Where an account's growth rate comes from, for showing it.
    public func growthRateSource(of account: Account) -> String {
        account.growthRate != nil ? "account" : (categoryRateRecord(for: account.category) != nil ? "category" : "none")
    }
}
