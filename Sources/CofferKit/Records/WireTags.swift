import FinanceCore

// Every enum a payload stores, with the tag it is stored as. Tags are written in vaults and
// archives, so each is pinned here by value (Specs/record-payloads.md) and never derived from
// declaration order: FinanceCore may reorder or rename its cases, and a case added there does
// not compile until `wireTag` gives it a new tag here (PayloadPinTests then fails until the tag is
// pinned and read back). Tags are never reused. A tag a reader does not know makes the record
// malformed (`PayloadReader.malformed`), never some other case.

/// An enum stored as a one-byte tag and nothing else: `wireTag` and `init?(wireTag:)` are two
/// exhaustive switches with the same literals (a test checks them against each other for every
/// byte, and pins every value).
protocol WireTagged: CaseIterable {
    var wireTag: UInt8 { get }
    /// The case stored as `wireTag`, or nil for a tag no case has.
    init?(wireTag: UInt8)
}

extension AccountKind: WireTagged {
    var wireTag: UInt8 {
        switch self {
        case .asset: 0
        case .liability: 1
        }
    }

    init?(wireTag: UInt8) {
        switch wireTag {
        case 0: self = .asset
        case 1: self = .liability
        default: return nil
        }
    }
}

extension CategoryRuleSet.Rule.Field: WireTagged {
    var wireTag: UInt8 {
        switch self {
        case .any: 0
        case .description: 1
        case .payee: 2
        }
    }

    init?(wireTag: UInt8) {
        switch wireTag {
        case 0: self = .any
        case 1: self = .description
        case 2: self = .payee
        default: return nil
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

    init?(wireTag: UInt8) {
        switch wireTag {
        case 0: self = .needs
        case 1: self = .wants
        case 2: self = .savings
        default: return nil
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

    init?(wireTag: UInt8) {
        switch wireTag {
        case 0: self = .income
        case 1: self = .expense
        case 2: self = .savings
        default: return nil
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

    init?(wireTag: UInt8) {
        switch wireTag {
        case 0: self = .draft
        case 1: self = .sent
        case 2: self = .void
        default: return nil
        }
    }
}

extension LineItem.Kind: WireTagged {
    var wireTag: UInt8 {
        switch self {
        case .charge: 0
        case .discount: 1
        case .credit: 2
        }
    }

    init?(wireTag: UInt8) {
        switch wireTag {
        case 0: self = .charge
        case 1: self = .discount
        case 2: self = .credit
        default: return nil
        }
    }
}

extension InvoiceSender.TaxLabel: WireTagged {
    var wireTag: UInt8 {
        switch self {
        case .tax: 0
        case .vat: 1
        }
    }

    init?(wireTag: UInt8) {
        switch wireTag {
        case 0: self = .tax
        case 1: self = .vat
        default: return nil
        }
    }
}

extension Note.Attachment.Kind: WireTagged {
    var wireTag: UInt8 {
        switch self {
        case .account: 0
        case .client: 1
        case .invoice: 2
        }
    }

    init?(wireTag: UInt8) {
        switch wireTag {
        case 0: self = .account
        case 1: self = .client
        case 2: self = .invoice
        default: return nil
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
