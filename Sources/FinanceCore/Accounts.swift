import Foundation

public enum AccountKind: String, Sendable, Codable, CaseIterable {
    case asset
    case liability

    /// A value as it counts in net worth: a liability's is what is owed, so it counts negative.
    /// Screens show accounts this way (the account list, the net worth report), so a debt paid
    /// down reads as a rise there, as it raises net worth.
    public func counted(_ value: Money) -> Money { self == .liability ? value.negated : value }
}

/// An annual growth rate in basis points (hundredths of a percent): 4.5% is 450. Exact, so a
/// projection computed today and next year from the same inputs gives the same pence.
public struct GrowthRate: Hashable, Sendable, Comparable, CustomStringConvertible {
    public let basisPoints: Int

    public init(basisPoints: Int) { self.basisPoints = basisPoints }

    public static let zero = GrowthRate(basisPoints: 0)

    /// Parses `4.5%`, `4.5`, `-2%`, `0.25%`: a percentage with at most two decimals, from
    /// -100% to +100%.
    public init(parsing text: String) throws {
        var body = text.trimmingCharacters(in: .whitespaces)
        if body.hasSuffix("%") { body.removeLast() }
        let invalid = FinanceError(.invalidRate, "Enter a yearly rate such as 4.5% or -1%: '\(text)' is not one.")
        var negative = false
        if body.hasPrefix("-") || body.hasPrefix("+") {
            negative = body.hasPrefix("-")
            body.removeFirst()
        }
        let parts = body.split(separator: ".", omittingEmptySubsequences: false)
        guard !body.isEmpty, parts.count <= 2,
            parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy { $0.isASCII && $0.isNumber } })
        else {
            throw invalid
        }
        guard parts.count == 1 || parts[1].count <= 2 else {
            throw FinanceError(.invalidRate, "Enter a rate with at most two decimals: '\(text)' has \(parts[1].count).")
        }
        guard parts[0].count <= 3, let whole = Int(parts[0]) else { throw invalid }
        let fraction = parts.count == 2 ? Int(parts[1].padding(toLength: 2, withPad: "0", startingAt: 0))! : 0
        let points = whole * 100 + fraction
        guard points <= 10_000 else {
            throw FinanceError(.invalidRate, "A yearly rate is between -100% and 100%: '\(text)' is outside that.")
        }
        basisPoints = negative ? -points : points
    }

    public static func < (lhs: GrowthRate, rhs: GrowthRate) -> Bool { lhs.basisPoints < rhs.basisPoints }

    /// "4.5%", "-1%", "0.25%".
    public var description: String {
        let sign = basisPoints < 0 ? "-" : ""
        let magnitude = abs(basisPoints)
        let fraction = magnitude % 100
        guard fraction != 0 else { return "\(sign)\(magnitude / 100)%" }
        let decimals = fraction % 10 == 0 ? "\(fraction / 10)" : String(format: "%02d", fraction)
        return "\(sign)\(magnitude / 100).\(decimals)%"
    }
}

/// Something with a value that changes over time: a current account, a pension, a mortgage.
public struct Account: Identifiable, Hashable, Sendable {
    public let id: UUID
    public var name: String
    /// Free text; `Account.defaultCategories` are offered.
    public var category: String
    public var kind: AccountKind
    /// Overrides the category's rate in projections.
    public var growthRate: GrowthRate?
    public var created: CalendarDate
    /// From this date on the account no longer counts towards totals; it stays in history.
    public var closed: CalendarDate?

    public init(
        id: UUID = RecordIDs.next(), name: String, category: String, kind: AccountKind, growthRate: GrowthRate? = nil,
        created: CalendarDate, closed: CalendarDate? = nil
    ) {
        self.id = id
        self.name = name
        self.category = category
        self.kind = kind
        self.growthRate = growthRate
        self.created = created
        self.closed = closed
    }

    public static let defaultAssetCategories = [
        "Cash", "Savings", "Investments", "Pensions", "Property", "Crypto", "Other",
    ]
    public static let defaultLiabilityCategories = ["Mortgage", "Loans", "Credit cards"]

    /// Whether the account counts towards totals on `date`.
    public func isOpen(on date: CalendarDate) -> Bool { closed.map { date < $0 } ?? true }

    /// Names are trimmed, non-empty, at most 100 characters and without control characters.
    public static func validatedName(_ text: String, what: String = "account name") throws -> String {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty else { throw FinanceError(.invalidName, "Enter a \(what); it cannot be empty.") }
        guard trimmed.count <= 100 else {
            throw FinanceError(.invalidName, "A \(what) has at most 100 characters; this one has \(trimmed.count).")
        }
        guard !trimmed.unicodeScalars.contains(where: { CharacterSet.controlCharacters.contains($0) }) else {
            throw FinanceError(.invalidName, "A \(what) cannot contain control characters such as tabs or line breaks.")
        }
        // U+FFFD is what bytes that are not UTF-8 become on the command line: a name typed in
        // another encoding would otherwise be stored already garbled.
        guard !trimmed.unicodeScalars.contains("\u{FFFD}") else {
            throw FinanceError(
                .invalidName,
                "A \(what) must be UTF-8 text; this one has bytes in another encoding (shown as �). Retype it, or convert with iconv."
            )
        }
        return trimmed
    }
}

/// The value of an account on a date. For a liability, the amount owed, as a positive number.
public struct ValueUpdate: Identifiable, Hashable, Sendable {
    public let id: UUID
    public let accountID: UUID
    public var date: CalendarDate
    public var amount: Money
    /// Entry order: among updates on the same date the one entered last wins.
    public var sequence: UInt64
    /// Why the value changed ("annual statement", "sold shares"); added in payload version 2.
    public var note: String?
    /// The transaction or invoice whose flow left this value (`AccountMovement.values`); nil for a
    /// value someone typed or imported. Derived values are computed, never stored.
    public var movedBy: UUID?

    public init(
        id: UUID = RecordIDs.next(), accountID: UUID, date: CalendarDate, amount: Money, sequence: UInt64,
        note: String? = nil,
        movedBy: UUID? = nil
    ) {
        self.id = id
        self.accountID = accountID
        self.date = date
        self.amount = amount
        self.sequence = sequence
        self.note = note
        self.movedBy = movedBy
    }

    /// The rule from the Plain Text Wealth design: latest by date, ties broken by entry order.
    static func isLater(_ a: ValueUpdate, than b: ValueUpdate) -> Bool {
        (a.date, a.sequence) > (b.date, b.sequence)
    }
}
