import Foundation

public struct Client: Identifiable, Hashable, Sendable {
    public let id: UUID
    public var name: String
    public var email: String?
    public var address: String?
    /// Default payment terms in days (due date = issue date + terms).
    public var termsDays: Int
    /// The account this client's payments arrive in unless `invoice pay --into` says otherwise.
    public var account: UUID?

    public init(
        id: UUID = RecordIDs.next(), name: String, email: String? = nil, address: String? = nil, termsDays: Int = 30,
        account: UUID? = nil
    ) {
        self.id = id
        self.account = account
        self.name = name
        self.email = email
        self.address = address
        self.termsDays = termsDays
    }
}

/// A quantity with up to three decimals (2.5 hours), as thousandths: exact, like money.
public struct Quantity: Hashable, Sendable, CustomStringConvertible {
    public let thousandths: Int64

    public init(thousandths: Int64) { self.thousandths = thousandths }

    public init(parsing text: String) throws {
        let invalid = FinanceError(.invalidAmount, "Enter a quantity such as 1, 2.5 or 0.25: '\(text)' is not one.")
        let parts = text.trimmingCharacters(in: .whitespaces).split(separator: ".", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count),
            parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy { $0.isASCII && $0.isNumber } }),
            parts[0].count <= 7
        else { throw invalid }
        guard parts.count == 1 || parts[1].count <= 3 else {
            throw FinanceError(
                .invalidAmount, "Enter a quantity with at most three decimals: '\(text)' has \(parts[1].count).")
        }
        let value =
            Int64(parts[0])! * 1000
            + (parts.count == 2 ? Int64(parts[1].padding(toLength: 3, withPad: "0", startingAt: 0))! : 0)
        guard value > 0 else { throw FinanceError(.invalidAmount, "Enter a quantity above zero: '\(text)' is not.") }
        thousandths = value
    }

    public var description: String {
        let whole = thousandths / 1000, fraction = thousandths % 1000
        guard fraction != 0 else { return "\(whole)" }
        var digits = String(format: "%03lld", fraction)
        while digits.hasSuffix("0") { digits.removeLast() }
        return "\(whole).\(digits)"
    }
}

/// One line of an invoice. A charge adds quantity × unit price; a discount takes an amount (or a
/// share of the charges) off before tax; a credit (a deposit already received, say) takes an
/// amount off after tax. Discount and credit amounts are kept positive, as typed: the sign is the
/// kind's.
public struct LineItem: Hashable, Sendable {
    public enum Kind: String, Sendable, CaseIterable { case charge, discount, credit }

    public var kind: Kind
    public var description: String
    public var quantity: Quantity
    /// A charge's unit price, or the amount a discount or credit takes off (positive).
    public var unitPrice: Money
    /// A discount given as a share of the charges (basis points: 10% = 1000), instead of an amount.
    public var shareBasisPoints: Int?

    public init(
        description: String, quantity: Quantity, unitPrice: Money, kind: Kind = .charge, shareBasisPoints: Int? = nil
    ) {
        self.kind = kind
        self.description = description
        self.quantity = quantity
        self.unitPrice = unitPrice
        self.shareBasisPoints = shareBasisPoints
    }

    /// A discount of a fixed amount or (with `share`) of a share of the charges.
    public static func discount(_ description: String, amount: Money = .zero, share: Int? = nil) -> LineItem {
        LineItem(
            description: description, quantity: Quantity(thousandths: 1000), unitPrice: amount, kind: .discount,
            shareBasisPoints: share)
    }

    public static func credit(_ description: String, amount: Money) -> LineItem {
        LineItem(description: description, quantity: Quantity(thousandths: 1000), unitPrice: amount, kind: .credit)
    }

    /// The line's signed amount: quantity × unit price, rounded half away from zero to the minor
    /// unit, negative for a discount or credit; a share discount takes its share of `charges`.
    public func total(charges: Money = .zero) throws -> Money {
        if let shareBasisPoints, kind == .discount {
            return try Invoice.roundedProduct(charges.minorUnits, times: -Int64(shareBasisPoints), over: 10_000)
        }
        let amount = try Invoice.roundedProduct(unitPrice.minorUnits, times: quantity.thousandths, over: 1000)
        return kind == .charge ? amount : try Money.zero.subtracting(amount)
    }
}

public struct Payment: Hashable, Sendable {
    public var date: CalendarDate
    public var amount: Money
    /// The account it was paid into (`invoice pay --into`): its `to`, whose value rises by the amount.
    public var flow: AccountFlow?
    public init(date: CalendarDate, amount: Money, flow: AccountFlow? = nil) {
        self.date = date
        self.amount = amount
        self.flow = flow
    }
}

/// An invoice: a claim to money. Status draft → sent → paid, or void; "overdue" is derived
/// (sent, unpaid, due before today) and never stored; "paid" is derived from payments.
public struct Invoice: Identifiable, Hashable, Sendable {
    public enum StoredStatus: String, Sendable, CaseIterable { case draft, sent, void }

    public enum Status: String, Sendable {
        case draft, sent, overdue, paid, void

        /// A word and a symbol, so status never rests on colour.
        public var badge: String {
            switch self {
            case .draft: "○ draft"
            case .sent: "◷ sent"
            case .overdue: "⚠ overdue"
            case .paid: "✓ paid"
            case .void: "✗ void"
            }
        }
    }

    public let id: UUID
    public let number: Int
    public var clientID: UUID
    public var items: [LineItem]
    /// Tax in basis points (20% = 2000), on the subtotal.
    public var taxBasisPoints: Int?
    public var issued: CalendarDate
    public var due: CalendarDate
    public var notes: String?
    public var stored: StoredStatus
    public var sentOn: CalendarDate?
    public var voidedOn: CalendarDate?
    public var payments: [Payment]
    /// The reference printed on it (`INV-2026-0007`), fixed when it was created, so a number
    /// format changed later never renumbers an issued invoice.
    public var reference: String
    /// The days a payment reminder was sent (`invoice remind`), oldest first.
    public var reminders: [CalendarDate]

    public init(
        id: UUID = RecordIDs.next(), number: Int, clientID: UUID, items: [LineItem], taxBasisPoints: Int? = nil,
        issued: CalendarDate,
        due: CalendarDate, notes: String? = nil, stored: StoredStatus = .draft, sentOn: CalendarDate? = nil,
        voidedOn: CalendarDate? = nil, payments: [Payment] = [], reference: String? = nil,
        reminders: [CalendarDate] = []
    ) {
        self.id = id
        self.number = number
        self.clientID = clientID
        self.items = items
        self.taxBasisPoints = taxBasisPoints
        self.issued = issued
        self.due = due
        self.notes = notes
        self.stored = stored
        self.sentOn = sentOn
        self.voidedOn = voidedOn
        self.payments = payments
        self.reference = reference ?? InvoiceNumberFormat.standard.reference(number: number, issued: issued)
        self.reminders = reminders
    }

    /// The charge lines' total, before discounts.
    // The sums below loop rather than filter and map: net worth history asks them of every
    // invoice at every month end, and arrays made for each ask showed in the overview's profile.
    public func charges() throws -> Money {
        var sum = Money.zero
        for item in items where item.kind == .charge { sum = try sum.adding(try item.total()) }
        return sum
    }

    /// A line's signed amount on this invoice (a share discount takes its share of the charges).
    public func amount(of item: LineItem) throws -> Money {
        try item.total(charges: item.shareBasisPoints == nil ? .zero : try charges())
    }

    /// Charges less discounts: what tax is charged on.
    public func subtotal() throws -> Money { try sum { $0 != .credit } }

    /// The credit lines' total (zero or negative), taken off after tax.
    public func credits() throws -> Money { try sum { $0 == .credit } }

    /// The lines of the kinds `included` keeps, each as `amount(of:)` gives it.
    private func sum(_ included: (LineItem.Kind) -> Bool) throws -> Money {
        var charges: Money?
        var sum = Money.zero
        for item in items where included(item.kind) {
            if item.shareBasisPoints != nil, charges == nil { charges = try self.charges() }
            sum = try sum.adding(try item.total(charges: item.shareBasisPoints == nil ? .zero : charges ?? .zero))
        }
        return sum
    }

    /// Refuses lines that cannot make an invoice: no charge, a discount share outside 0–100%, an
    /// amount at or below zero on a discount or credit, discounts larger than the charges, or
    /// credits larger than what is owed.
    public func checkLines() throws {
        guard items.contains(where: { $0.kind == .charge }) else {
            throw FinanceError(.invalidAmount, "An invoice needs at least one item (a charge, not only discounts).")
        }
        for item in items where item.kind != .charge {
            if let share = item.shareBasisPoints {
                guard (1...10_000).contains(share) else {
                    throw FinanceError(.invalidAmount, "A discount's share must be above 0% and at most 100%.")
                }
            } else if item.unitPrice <= .zero {
                throw FinanceError(.invalidAmount, "Enter a \(item.kind.rawValue) amount above zero.")
            }
        }
        guard try subtotal() >= .zero else {
            throw FinanceError(
                .invalidAmount, "The discounts are larger than the charges; the subtotal would be below zero.")
        }
        guard try total() >= .zero else {
            throw FinanceError(
                .invalidAmount, "The credits are larger than the amount due; the total would be below zero.")
        }
    }

    /// Tax on the subtotal, rounded half away from zero to the minor unit.
    public func tax() throws -> Money {
        guard let taxBasisPoints else { return .zero }
        return try Self.roundedProduct(try subtotal().minorUnits, times: Int64(taxBasisPoints), over: 10_000)
    }

    /// Subtotal plus tax, less credits.
    public func total() throws -> Money { try subtotal().adding(try tax()).adding(try credits()) }

    public func paid(through date: CalendarDate? = nil) throws -> Money {
        var sum = Money.zero
        for payment in payments where date.map({ payment.date <= $0 }) ?? true { sum = try sum.adding(payment.amount) }
        return sum
    }

    public func outstanding(on date: CalendarDate? = nil) throws -> Money {
        try total().subtracting(try paid(through: date))
    }

    /// The status on `today`.
    public func status(on today: CalendarDate) throws -> Status {
        switch stored {
        case .draft: return .draft
        case .void: return .void
        case .sent:
            if try outstanding() <= .zero { return .paid }
            return due < today ? .overdue : .sent
        }
    }

    /// Whether it is a receivable on `date`: sent by then, not voided by then, not fully paid by then.
    public func isReceivable(on date: CalendarDate) throws -> Bool {
        guard let sentOn, sentOn <= date else { return false }
        if let voidedOn, voidedOn <= date { return false }
        return try outstanding(on: date) > .zero
    }

    /// "Due today", "Due tomorrow", "Due in 3 days", "Overdue by 2 days", "Paid 5 days ago".
    public func relativeDue(on today: CalendarDate) throws -> String {
        switch try status(on: today) {
        case .void: return "Void"
        case .paid:
            let paidOn = payments.map(\.date).max() ?? today
            return Self.ago(CalendarDate.days(from: paidOn, to: today), prefix: "Paid")
        case .draft, .sent, .overdue:
            let days = CalendarDate.days(from: today, to: due)
            switch days {
            case 0: return "Due today"
            case 1: return "Due tomorrow"
            case 2...: return "Due in \(days) days"
            default:
                // Only a sent invoice is overdue: a draft's due date is just past.
                let count = "\(-days) day\(days == -1 ? "" : "s")"
                return stored == .draft ? "Not sent; its due date was \(count) ago" : "Overdue by \(count)"
            }
        }
    }

    static func ago(_ days: Int, prefix: String) -> String {
        switch days {
        case ...0: "\(prefix) today"
        case 1: "\(prefix) yesterday"
        default: "\(prefix) \(days) days ago"
        }
    }

    // MARK: Lifecycle

    public func sending(on date: CalendarDate) throws -> Invoice {
        guard stored == .draft else {
            throw Self.refused(
                "\(reference) is \(stored == .void ? "void" : "already sent"); only a draft can be sent.")
        }
        var sent = self
        sent.stored = .sent
        sent.sentOn = date
        return sent
    }

    public func voiding(on date: CalendarDate) throws -> Invoice {
        guard stored != .void else { throw Self.refused("\(reference) is already void.") }
        guard payments.isEmpty else {
            throw Self.refused("\(reference) has payments recorded; a paid or part-paid invoice cannot be voided.")
        }
        var voided = self
        voided.stored = .void
        voided.voidedOn = date
        return voided
    }

    /// Records a payment; refuses drafts, void and paid invoices, and overpayment.
    public func paying(_ amount: Money, on date: CalendarDate, flow: AccountFlow? = nil) throws -> Invoice {
        guard stored == .sent else {
            throw Self.refused("\(reference) is \(stored.rawValue); only a sent invoice can be paid.")
        }
        let outstanding = try outstanding()
        guard outstanding > .zero else { throw Self.refused("\(reference) is already paid in full.") }
        guard amount > .zero else { throw FinanceError(.invalidAmount, "Enter a payment above zero.") }
        guard amount <= outstanding else {
            throw FinanceError(
                .overpayment, "That is more than is outstanding on \(reference); overpayment is refused.")
        }
        var paid = self
        paid.payments.append(Payment(date: date, amount: amount, flow: flow))
        return paid
    }

    /// Items and amounts can change only while it is a draft: once sent, correct by voiding and
    /// issuing a new invoice.
    public func editing(
        items: [LineItem]?, taxBasisPoints: Int??, due: CalendarDate?, notes: String??, clientID: UUID? = nil
    ) throws -> Invoice {
        try checkDraft()
        var edited = self
        if let clientID { edited.clientID = clientID }
        if let items { edited.items = items }
        if let taxBasisPoints { edited.taxBasisPoints = taxBasisPoints }
        if let due { edited.due = due }
        if let notes { edited.notes = notes }
        return edited
    }

    /// Refuses anything but a draft: once sent, an invoice is frozen (void it and issue a new one),
    /// and only a draft can be edited or deleted.
    public func checkDraft() throws {
        guard stored == .draft else {
            throw Self.refused(
                stored == .void
                    ? "\(reference) is void; only a draft can be changed or deleted."
                    : "\(reference) was sent, so it is frozen: void it and issue a new invoice to correct it.")
        }
    }

    /// Records that a payment reminder was sent on `date`: sent invoices with money outstanding only.
    public func reminding(on date: CalendarDate) throws -> Invoice {
        guard stored == .sent, try outstanding() > .zero else {
            throw Self.refused(
                "\(reference) is \(stored == .sent ? "paid" : stored.rawValue): there is nothing to remind about.")
        }
        var reminded = self
        reminded.reminders.append(date)
        return reminded
    }

    static func refused(_ message: String) -> FinanceError { FinanceError(.invalidTransition, message) }

    /// value × numerator / denominator, rounded half away from zero, exactly (128-bit).
    static func roundedProduct(_ value: Int64, times numerator: Int64, over denominator: Int64) throws -> Money {
        let product = value.multipliedFullWidth(by: numerator)
        let wide = (Int128(product.high) << 64) | Int128(product.low)
        let (quotient, remainder) = wide.quotientAndRemainder(dividingBy: Int128(denominator))
        var rounded = quotient
        if 2 * abs(remainder) >= Int128(denominator) { rounded += wide < 0 ? -1 : 1 }
        guard let result = Int64(exactly: rounded) else {
            throw FinanceError(.overflow, "The invoice total is too large to represent.")
        }
        return Money(minorUnits: result)
    }
}

/// The receivables dashboard: insight, distinct from the list.
public struct Receivables: Sendable {
    public struct Ageing: Equatable, Sendable {
        public var current = Money.zero
        public var days1to30 = Money.zero
        public var days31to60 = Money.zero
        public var days61to90 = Money.zero
        public var over90 = Money.zero
    }

    public let outstanding: Money
    public let overdue: Money
    public let overdueCount: Int
    public let paidThisMonth: Money
    public let ageing: Ageing
    /// Client id → outstanding, largest first.
    public let byClient: [(UUID, Money)]

    public init(invoices: [Invoice], today: CalendarDate) throws {
        var outstanding = Money.zero, overdue = Money.zero, overdueCount = 0, paid = Money.zero
        var ageing = Ageing()
        var byClient: [UUID: Money] = [:]
        for invoice in invoices {
            for payment in invoice.payments where payment.date.year == today.year && payment.date.month == today.month {
                paid = try paid.adding(payment.amount)
            }
            let status = try invoice.status(on: today)
            guard status == .sent || status == .overdue else { continue }
            let owed = try invoice.outstanding()
            outstanding = try outstanding.adding(owed)
            byClient[invoice.clientID] = try (byClient[invoice.clientID] ?? .zero).adding(owed)
            let late = CalendarDate.days(from: invoice.due, to: today)
            switch late {
            case ...0: ageing.current = try ageing.current.adding(owed)
            case 1...30: ageing.days1to30 = try ageing.days1to30.adding(owed)
            case 31...60: ageing.days31to60 = try ageing.days31to60.adding(owed)
            case 61...90: ageing.days61to90 = try ageing.days61to90.adding(owed)
            default: ageing.over90 = try ageing.over90.adding(owed)
            }
            if status == .overdue {
                overdue = try overdue.adding(owed)
                overdueCount += 1
            }
        }
        self.outstanding = outstanding
        self.overdue = overdue
        self.overdueCount = overdueCount
        self.paidThisMonth = paid
        self.ageing = ageing
        self.byClient = byClient.sorted { $0.value > $1.value }.map { ($0.key, $0.value) }
    }

    /// Receivables on `date` for net worth: sent, not void, not fully paid by then.
    public static func receivable(_ invoices: [Invoice], on date: CalendarDate) throws -> Money {
        try Money.sum(try invoices.filter { try $0.isReceivable(on: date) }.map { try $0.outstanding(on: date) })
    }
}
