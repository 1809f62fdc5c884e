import FinanceCore

// Every enum a payload stores, with the tag it is stored as. Tags are written in vaults and
// archives, so each is pinned here by value (Specs/record-payloads.md) and never derived from
// declaration order: FinanceCore may reorder or rename its cases, and a case added there does
// not compile until it is given a new tag here. Tags are never reused. A tag a reader does not
// know makes the record malformed (`PayloadReader.malformed`).

/// An enum stored as a one-byte tag and nothing else.
protocol WireTagged: CaseIterable {
    /// The pinned tag: an exhaustive switch, one literal per case.
    var wireTag: UInt8 { get }
}

extension WireTagged {
    /// The case stored as `wireTag`, or nil for a tag no case has.
    init?(wireTag: UInt8) {
        guard let match = Self.allCases.first(where: { $0.wireTag == wireTag }) else { return nil }
        self = match
    }
}

extension AccountKind: WireTagged {
    var wireTag: UInt8 {
        switch self {
        case .asset: 0
        case .liability: 1
        }
    }
}

extension BudgetType: WireTagged {
    var wireTag: UInt8 {
        switch self {
        case .needs: 0
        case .wants: 1
        case .savings: 2
        }
    }
}

extension TransactionType: WireTagged {
    var wireTag: UInt8 {
        switch self {
        case .income: 0
        case .expense: 1
        case .savings: 2
        }
    }
}

extension Invoice.StoredStatus: WireTagged {
    var wireTag: UInt8 {
        switch self {
        case .draft: 0
        case .sent: 1
        case .void: 2
        }
    }
}

extension IncomeFrequency {
    /// The tag of a frequency; a bi-weekly one is followed by its anchor date.
    enum WireTag: UInt8, CaseIterable {
        case monthly = 0
        case biweekly = 1
        case variable = 2
    }

    var wireTag: WireTag {
        switch self {
        case .monthly: .monthly
        case .biweekly: .biweekly
        case .variable: .variable
        }
    }
}

extension Transaction.Target {
    /// The tag of a transaction's or rule's target, followed by the id it points at (none for
    /// uncategorised, which rules and version 1 transactions do not have).
    enum WireTag: UInt8, CaseIterable {
        case category = 0
        case source = 1
        case goal = 2
        case uncategorised = 3
    }

    var wireTag: WireTag {
        switch self {
        case .category: .category
        case .source: .source
        case .goal: .goal
        case .uncategorised: .uncategorised
        }
    }
}

extension PayloadWriter {
    mutating func tag(_ value: some WireTagged) { byte(value.wireTag) }

    mutating func frequency(_ frequency: IncomeFrequency) {
        byte(frequency.wireTag.rawValue)
        if case .biweekly(let anchor) = frequency { date(anchor) }
    }

    mutating func target(_ target: Transaction.Target) {
        byte(target.wireTag.rawValue)
        switch target {
        case .category(let id), .source(let id), .goal(let id): uuid(id)
        case .uncategorised: break
        }
    }
}

extension PayloadReader {
    mutating func tag<Value: WireTagged>(_: Value.Type = Value.self) throws -> Value {
        guard let value = Value(wireTag: try byte()) else { throw Self.malformed }
        return value
    }

    mutating func frequency() throws -> IncomeFrequency {
        guard let tag = IncomeFrequency.WireTag(rawValue: try byte()) else { throw Self.malformed }
        switch tag {
        case .monthly: return .monthly
        case .biweekly: return .biweekly(anchor: try date())
        case .variable: return .variable
        }
    }

    mutating func target(allowingUncategorised: Bool) throws -> Transaction.Target {
        guard let tag = Transaction.Target.WireTag(rawValue: try byte()) else { throw Self.malformed }
        switch tag {
        case .category: return .category(try uuid())
        case .source: return .source(try uuid())
        case .goal: return .goal(try uuid())
        case .uncategorised:
            guard allowingUncategorised else { throw Self.malformed }
            return .uncategorised
        }
    }
}
