import FinanceCore
import Foundation

/// Money that moves: the accounts transactions and invoice payments move money between, the
/// defaults that spare typing them, and the reconciliation of flows with the values people type.
extension Ledger {
    /// Which account a flow uses: the one named, none, or the default of the category, income
    /// source, goal or client it is for (none if that has no default).
    public enum FlowAccount: Sendable {
        case byDefault
        case none
        case account(Account)

        func resolved(_ defaultAccount: UUID?) -> UUID? {
            switch self {
            case .byDefault: defaultAccount
            case .none: nil
            case .account(let account): account.id
            }
        }
    }

    /// A flow between `from` and `to` on `date`, nil when neither is given. An account that does
    /// not exist (a default left by a deleted account) or was closed by `date` is refused, and
    /// so is money moving from an account into itself.
    func flow(from: UUID? = nil, to: UUID? = nil, on date: CalendarDate) throws -> AccountFlow? {
        guard from != nil || to != nil else { return nil }
        for id in [from, to].compactMap({ $0 }) {
            guard let account = accounts.first(where: { $0.id == id }) else {
                throw CofferError(
                    .noMatch, "The default account of this entry no longer exists; name one, or pass --no-account.",
                    kind: "account")
            }
            if let closed = account.closed, closed <= date {
                throw CofferError(
                    .closed, "\(account.name) was closed on \(closed).", kind: "account", candidates: [account.name])
            }
        }
        if let from, from == to {
            throw CofferError(.invalidInput, "Money cannot move from an account into itself.", kind: "account")
        }
        return AccountFlow(from: from, to: to, order: nextUpdateSequence)
    }

    /// " from Current", " into ISA", " from Current to ISA": how a change's summary names a flow.
    func describe(_ flow: AccountFlow?) -> String {
        guard let flow else { return "" }
        let name = { (id: UUID) in self.accounts.first { $0.id == id }?.name ?? "a deleted account" }
        switch (flow.from, flow.to) {
        case (let from?, let to?): return " from \(name(from)) to \(name(to))"
        case (let from?, nil): return " from \(name(from))"
        case (nil, let to?): return " into \(name(to))"
        case (nil, nil): return ""
        }
    }

    /// The account a default or a flow names, when it still exists.
    public func account(withID id: UUID?) -> Account? {
        id.flatMap { id in accounts.first { $0.id == id } }
    }

    /// Sets (or with nil clears) the account spending in `category` comes from by default.
    public func setDefaultAccount(of category: BudgetCategory, to account: Account?) throws {
        var changed = category
        changed.account = account?.id
        try commit(
            account.map { "Set \(category.name) to spend from \($0.name)" }
                ?? "Cleared the default account of \(category.name)",
            puts: [(category.id, .budgetCategory(changed))])
    }

    // MARK: Reconciliation

    /// One flow into or out of an account, as reconciliation lists it.
    public struct FlowLine: Sendable {
        public let date: CalendarDate
        /// What moved it: "Spent · Groceries · Tesco", "INV-0007 payment · Acme Ltd".
        public let label: String
        /// The change in the account's value (for a liability, in what is owed).
        public let effect: Money
    }

    /// Where an account's value stands against the flows recorded since someone last typed it.
    public struct Reconciliation: Sendable {
        public let account: Account
        /// The latest value typed (or imported), nil if there is none.
        public let lastTyped: ValueUpdate?
        /// What flows had made the value just before it was typed (nil if it had none).
        public let expectedBeforeTyped: Money?
        /// The typed value minus what was expected: what the recorded flows did not explain.
        public let unexplained: Money?
        /// Flows since the last typed value, oldest first.
        public let flows: [FlowLine]
        /// The value now: the last typed value moved by the flows since.
        public let expected: Money
        /// A balance the user read off a statement, and how far it is from `expected`.
        public let statement: Money?
        public let gap: Money?
    }

    public func reconciliation(of account: Account, statement: Money? = nil) throws -> Reconciliation {
        let values = portfolio.updates(of: account)
        let typedIndex = values.lastIndex { $0.movedBy == nil }
        let typed = typedIndex.map { values[$0] }
        let before = typedIndex.flatMap { $0 > 0 ? values[$0 - 1].amount : nil }
        let owed = account.kind == .liability
        let flows = movements.filter { movement in
            guard movement.accountID == account.id else { return false }
            guard let typed else { return true }
            return (movement.date, movement.order) > (typed.date, typed.sequence)
        }
        .sorted { ($0.date, $0.order) < ($1.date, $1.order) }
        .map { movement in
            FlowLine(
                date: movement.date, label: label(ofFlowFrom: movement.source),
                effect: owed ? movement.change.negated : movement.change)
        }
        let expected = values.last?.amount ?? .zero
        return Reconciliation(
            account: account, lastTyped: typed, expectedBeforeTyped: before,
            unexplained: try typed.flatMap { typed in try before.map { try typed.amount.subtracting($0) } },
            flows: flows, expected: expected, statement: statement,
            gap: try statement.map { try $0.subtracting(expected) })
    }

    /// What a value says about itself: the note typed with it, or for a value a flow left, what
    /// moved it ("Spent · Groceries · Tesco").
    public func label(of value: ValueUpdate) -> String? {
        value.movedBy.map(label(ofFlowFrom:)) ?? value.note
    }

    /// What moved money: a transaction ("Spent · Groceries · note") or an invoice payment.
    private func label(ofFlowFrom source: UUID) -> String {
        if let transaction = transactions.first(where: { $0.id == source }) {
            let verb = transaction.type == .income ? "Earned" : (transaction.type == .savings ? "Saved" : "Spent")
            return ([verb, label(of: transaction)] + (transaction.note.map { [$0] } ?? [])).joined(separator: " · ")
        }
        if let invoice = invoices.first(where: { $0.id == source }) {
            return "\(invoice.reference) payment · \(client(of: invoice)?.name ?? "a removed client")"
        }
        return "a removed entry"
    }
}
