import Foundation

/// The accounts a transaction or an invoice payment moved money between, when the user said
/// (`spend --from`, `earn --into`, `save --from --to`, `invoice pay --into`). The flow moves
/// the accounts' values without a value update being typed; a value typed later stays the
/// source of truth, and what it differs by is the unexplained rest (`coffer reconcile`).
public struct AccountFlow: Hashable, Sendable {
    /// The account the money left (spending, saving), nil when it came from outside.
    public var from: UUID?
    /// The account the money arrived in (income, saving, a payment), nil when it left.
    public var to: UUID?
    /// Its place among value updates, from the counter `ValueUpdate.sequence` uses: a value typed
    /// before the flow (same date or not) is moved by it, a value typed after it already holds it.
    public var order: UInt64

    public init(from: UUID? = nil, to: UUID? = nil, order: UInt64) {
        self.from = from
        self.to = to
        self.order = order
    }

    /// Both ends, as movements of `amount` (positive) on `date`; `source` is the transaction or
    /// invoice that moved it.
    public func movements(of amount: Money, on date: CalendarDate, source: UUID) -> [AccountMovement] {
        var result: [AccountMovement] = []
        if let from {
            result.append(
                AccountMovement(accountID: from, date: date, order: order, change: amount.negated, source: source))
        }
        if let to {
            result.append(AccountMovement(accountID: to, date: date, order: order, change: amount, source: source))
        }
        return result
    }
}

/// Money arriving in (positive) or leaving (negative) one account on a date.
public struct AccountMovement: Hashable, Sendable {
    public let accountID: UUID
    public let date: CalendarDate
    public let order: UInt64
    /// In money terms: paying into a credit card (a liability) is positive and lowers what is owed.
    public let change: Money
    /// The transaction or invoice that moved it.
    public let source: UUID

    public init(accountID: UUID, date: CalendarDate, order: UInt64, change: Money, source: UUID) {
        self.accountID = accountID
        self.date = date
        self.order = order
        self.change = change
        self.source = source
    }

    /// Every account's values as flows leave them: the typed updates, and after each movement a
    /// derived update (`movedBy` set) holding the value before it plus the movement. A typed update
    /// resets the running value, so it stays the source of truth; a movement of an account that no
    /// longer exists is left out. Order: date, then the shared counter; on a tie (two devices'
    /// counters) the typed value first.
    public static func values(
        updates: [ValueUpdate], movements: [AccountMovement], kinds: [UUID: AccountKind]
    ) -> [ValueUpdate] {
        guard !movements.isEmpty else { return updates }
        let moving = Dictionary(grouping: movements.filter { kinds[$0.accountID] != nil }, by: \.accountID)
        var result = updates.filter { moving[$0.accountID] == nil }
        let typedByAccount = Dictionary(grouping: updates.filter { moving[$0.accountID] != nil }, by: \.accountID)
        for (accountID, movements) in moving {
            let typed = typedByAccount[accountID] ?? []
            result += typed
            enum Step {
                case typed(ValueUpdate)
                case moved(AccountMovement)
                var key: (CalendarDate, UInt64, Int) {
                    switch self {
                    case .typed(let update): (update.date, update.sequence, 0)
                    case .moved(let movement): (movement.date, movement.order, 1)
                    }
                }
            }
            let steps = (typed.map(Step.typed) + movements.map(Step.moved)).sorted { $0.key < $1.key }
            let owed = kinds[accountID] == .liability
            var running = Money.zero
            var seen: [UUID: Int] = [:]
            for step in steps {
                switch step {
                case .typed(let update): running = update.amount
                case .moved(let movement):
                    // What a liability holds is owed: money arriving lowers it.
                    guard
                        let next = try? (owed ? running.subtracting(movement.change) : running.adding(movement.change))
                    else { continue }
                    running = next
                    // One source can move an account twice only through a sync repair; each keeps an id of its own.
                    let repeatCount = seen[movement.source, default: 0]
                    seen[movement.source] = repeatCount + 1
                    result.append(
                        ValueUpdate(
                            id: derivedID(movement.source, accountID, repeatCount), accountID: accountID,
                            date: movement.date, amount: running, sequence: movement.order, movedBy: movement.source))
                }
            }
        }
        return result
    }

    /// A stable id for the value a movement leaves: the source's id mixed with the account's,
    /// so the two ends of a transfer differ.
    static func derivedID(_ source: UUID, _ account: UUID, _ repeatCount: Int) -> UUID {
        var bytes = source.uuid
        withUnsafeMutableBytes(of: &bytes) { target in
            withUnsafeBytes(of: account.uuid) { mixed in
                for index in 0..<16 { target[index] ^= mixed[index] }
            }
            target[15] ^= UInt8(truncatingIfNeeded: repeatCount)
        }
        return UUID(uuid: bytes)
    }
}

/// An optional value kept behind one reference: for a field most values leave empty (a
/// transaction's flow), which would otherwise make every copy of the struct holding it larger —
/// measured on `coffer update` at 100k transactions, which copies them several times.
@propertyWrapper
public struct Boxed<Wrapped: Hashable & Sendable>: Hashable, Sendable {
    private final class Storage: Sendable {
        let value: Wrapped
        init(_ value: Wrapped) { self.value = value }
    }

    private var storage: Storage?

    public init(wrappedValue: Wrapped?) { storage = wrappedValue.map(Storage.init) }

    public var wrappedValue: Wrapped? {
        get { storage?.value }
        set { storage = newValue.map(Storage.init) }
    }

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.wrappedValue == rhs.wrappedValue }
    public func hash(into hasher: inout Hasher) { hasher.combine(wrappedValue) }
}
