import FinanceCore
import Foundation

/// Clients and invoices: claims to money, numbered once and never reused.
extension Ledger {
    public func client(named name: String) throws -> Client {
        try Self.match(name, among: clients, name: \.name, kind: "client")
    }

    /// The client an invoice is for, when it still exists.
    public func client(of invoice: Invoice) -> Client? { clients.first { $0.id == invoice.clientID } }

    static func requireTerms(_ days: Int) throws {
        guard (0...365).contains(days) else {
            throw CofferError(.invalidInput, "Enter payment terms from 0 to 365 days: \(days) is outside that.")
        }
    }

    @discardableResult
    public func addClient(
        name: String, email: String? = nil, address: String? = nil, termsDays: Int = 30, account: Account? = nil
    ) throws -> Client {
        let name = try Account.validatedName(name, what: "client name")
        try Self.requireTerms(termsDays)
        try Self.requireUnique(name, among: clients, name: \.name, kind: "client")
        let client = Client(name: name, email: email, address: address, termsDays: termsDays, account: account?.id)
        try commit("Added client \(name)", puts: [(client.id, .client(client))])
        return client
    }

    public func saveClient(_ client: Client) throws {
        var client = client
        client.name = try Account.validatedName(client.name, what: "client name")
        try Self.requireTerms(client.termsDays)
        try Self.requireUnique(client.name, among: clients.filter { $0.id != client.id }, name: \.name, kind: "client")
        try commit("Edited client \(client.name)", puts: [(client.id, .client(client))])
    }

    /// Removes a client; one with invoices is refused (the invoices would name nobody).
    public func removeClient(_ client: Client) throws {
        let count = invoices.filter { $0.clientID == client.id }.count
        guard count == 0 else {
            throw CofferError(
                .inUse,
                "\(client.name) has \(count) invoice\(count == 1 ? "" : "s"); a client with invoices cannot be removed.",
                kind: "client", candidates: [client.name])
        }
        try commit("Removed client \(client.name)", deletes: [client.id])
    }

    /// What a client owes (sent invoices' outstanding amounts) and how many invoices they have.
    public func balance(of client: Client) throws -> (outstanding: Money, invoices: Int) {
        let theirs = invoices.filter { $0.clientID == client.id }
        return (try Money.sum(try theirs.filter { $0.stored == .sent }.map { try $0.outstanding() }), theirs.count)
    }

    /// By its reference as printed (`INV-2026-0007`, any case), or by its number: `INV-0007`,
    /// `0007` or `7`.
    public func invoice(_ reference: String) throws -> Invoice {
        let typed = reference.trimmingCharacters(in: .whitespaces)
        if let invoice = invoices.first(where: { $0.reference.caseInsensitiveCompare(typed) == .orderedSame }) {
            return invoice
        }
        let digits = typed.uppercased().replacingOccurrences(of: "INV-", with: "")
        guard let number = Int(digits), let invoice = invoices.first(where: { $0.number == number }) else {
            throw CofferError(.noMatch, "No invoice '\(reference)'.", kind: "invoice")
        }
        return invoice
    }

    /// Who sends the invoices: the vault's profile, or an empty one (tax label "Tax", `INV-{0000}`).
    public var invoiceSender: InvoiceSender { invoiceSenderRecord?.sender ?? InvoiceSender() }

    /// Saves who sends the invoices. Empty text clears a field; one-line fields (name, email, tax
    /// number) are names of at most 100 characters, the others up to 1,000 characters with line
    /// breaks.
    public func saveInvoiceSender(_ sender: InvoiceSender) throws {
        let sender = try Self.checked(sender)
        try commit(
            "Edited the invoice sender", puts: [(invoiceSenderRecord?.id ?? RecordIDs.next(), .invoiceSender(sender))])
    }

    /// A sender profile with its fields checked and trimmed (`saveInvoiceSender`).
    static func checked(_ sender: InvoiceSender) throws -> InvoiceSender {
        var sender = sender
        func oneLine(_ text: String?, _ what: String) throws -> String? {
            guard let text, !text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else { return nil }
            return try Account.validatedName(text, what: what)
        }
        let multiLine = Self.multiLineText
        sender.name = try oneLine(sender.name, "sender name")
        sender.email = try oneLine(sender.email, "sender email")
        sender.taxNumber = try oneLine(sender.taxNumber, "tax number")
        sender.address = try multiLine(sender.address, "address")
        sender.paymentInstructions = try multiLine(sender.paymentInstructions, "payment instructions")
        sender.bankDetails = try multiLine(sender.bankDetails, "bank details")
        return sender
    }

    /// Text that may hold line breaks and tabs (an address, an invoice's notes): trimmed, nil
    /// when empty, at most 1,000 characters of UTF-8; control characters are refused when the
    /// record is written (`TextSafety.multiLineFields`).
    static func multiLineText(_ text: String?, _ what: String) throws -> String? {
        let trimmed = text?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
        guard !trimmed.isEmpty else { return nil }
        guard trimmed.count <= 1000, !trimmed.unicodeScalars.contains("\u{FFFD}") else {
            throw CofferError(.invalidInput, "The \(what) must be UTF-8 text of at most 1,000 characters.")
        }
        return trimmed
    }

    /// The largest invoice total Coffer takes, in minor units: what the largest typed amount is in
    /// a two-decimal currency, so that adding up every invoice of a vault cannot overflow.
    static let largestInvoiceTotal = Money(minorUnits: 100_000_000_000_000)

    /// Lines with their descriptions checked, and an invoice with them refused unless its
    /// totals make sense (`Invoice.checkLines`) and fit (`largestInvoiceTotal`).
    static func checked(_ invoice: Invoice) throws -> Invoice {
        var invoice = invoice
        invoice.items = try invoice.items.map { item in
            var item = item
            item.description = try Account.validatedName(item.description, what: "item description")
            return item
        }
        invoice.notes = try multiLineText(invoice.notes, "notes")
        if let tax = invoice.taxBasisPoints, tax < 0 {
            throw CofferError(.invalidInput, "A tax rate cannot be negative.")
        }
        guard invoice.due >= invoice.issued else {
            throw CofferError(.invalidInput, "The due date \(invoice.due) is before the issue date \(invoice.issued).")
        }
        do {
            try invoice.checkLines()
            guard try invoice.total() <= largestInvoiceTotal else {
                throw CofferError(.invalidInput, "The invoice's total is larger than Coffer accepts.")
            }
        } catch let error as FinanceError where error.code == .overflow {
            throw CofferError(.invalidInput, "The invoice's amounts are too large to represent.")
        }
        return invoice
    }

    /// How the due date of a new invoice is set.
    public enum Due: Sendable {
        case on(CalendarDate)
        case afterDays(Int)
        /// The client's own payment terms.
        case clientTerms
    }

    /// Creates an invoice under the next number, a draft or (with `send`) sent and frozen. The
    /// number counter moves outside the change log: undo never frees a number for reuse.
    @discardableResult
    public func createInvoice(
        for client: Client, items: [LineItem], taxBasisPoints: Int? = nil, issued: CalendarDate,
        due: Due = .clientTerms,
        notes: String? = nil, send: Bool = false
    ) throws -> Invoice {
        try createInvoice(
            for: client, items: items, taxBasisPoints: taxBasisPoints, issued: issued, due: due, notes: notes,
            send: send, alsoPut: [])
    }

    /// `createInvoice`, writing `alsoPut` in the same change (a recurring item's progress).
    func createInvoice(
        for client: Client, items: [LineItem], taxBasisPoints: Int?, issued: CalendarDate, due: Due,
        notes: String?, send: Bool, alsoPut: [(UUID, FinanceRecord)]
    ) throws -> Invoice {
        guard !items.isEmpty else { throw CofferError(.invalidInput, "An invoice needs at least one item.") }
        let dueDate: CalendarDate
        switch due {
        case .on(let date): dueDate = date
        case .afterDays(let days):
            try Self.requireTerms(days)
            dueDate = issued.adding(days: days)
        case .clientTerms: dueDate = issued.adding(days: client.termsDays)
        }
        let number = (invoiceCounter?.counter.lastNumber ?? invoices.map(\.number).max() ?? 0) + 1
        let reference = invoiceSender.numberFormat.reference(number: number, issued: issued)
        guard !invoices.contains(where: { $0.reference.caseInsensitiveCompare(reference) == .orderedSame }) else {
            throw CofferError(
                .invalidInput,
                "The number format makes \(reference), which an earlier invoice already has: change it with coffer invoice sender set --number-format."
            )
        }
        var invoice = try Self.checked(
            Invoice(
                number: number, clientID: client.id, items: items, taxBasisPoints: taxBasisPoints, issued: issued,
                due: dueDate, notes: notes, reference: reference))
        if send { invoice = try invoice.sending(on: issued) }
        try writeWithoutHistory([
            (invoiceCounter?.id ?? RecordIDs.next(), .invoiceCounter(InvoiceCounter(lastNumber: number)))
        ])
        try commit(
            "Created \(invoice.reference) for \(client.name)", puts: [(invoice.id, .invoice(invoice))] + alsoPut)
        return invoice
    }

    /// Changes a draft: its lines (all of them, when given), tax, due date, notes or client. A
    /// sent or void invoice is refused: it is frozen.
    @discardableResult
    public func editInvoice(
        _ invoice: Invoice, items: [LineItem]? = nil, taxBasisPoints: Int?? = nil, due: CalendarDate? = nil,
        notes: String?? = nil, client: Client? = nil
    ) throws -> Invoice {
        let edited = try Self.checked(
            invoice.editing(
                items: items, taxBasisPoints: taxBasisPoints, due: due, notes: notes, clientID: client?.id))
        try commit("Edited \(edited.reference)", puts: [(edited.id, .invoice(edited))])
        return edited
    }

    /// Deletes a draft; its number is never issued again (undo brings it back).
    public func deleteInvoice(_ invoice: Invoice) throws {
        try invoice.checkDraft()
        try commit("Deleted draft \(invoice.reference)", deletes: [invoice.id])
    }

    /// A new draft with the same client, lines, tax and notes under the next number, issued on
    /// `issued`, due as many days later as the original.
    @discardableResult
    public func duplicateInvoice(_ invoice: Invoice, issued: CalendarDate) throws -> Invoice {
        guard let client = client(of: invoice) else {
            throw CofferError(.invalidInput, "\(invoice.reference)'s client was removed, so it cannot be duplicated.")
        }
        return try createInvoice(
            for: client, items: invoice.items, taxBasisPoints: invoice.taxBasisPoints, issued: issued,
            due: .on(issued.adding(days: CalendarDate.days(from: invoice.issued, to: invoice.due))),
            notes: invoice.notes)
    }

    /// Records on the invoice that a payment reminder was sent on `date` (sent, unpaid invoices).
    @discardableResult
    public func recordReminder(on invoice: Invoice, date: CalendarDate) throws -> Invoice {
        let reminded = try invoice.reminding(on: date)
        try commit("Recorded a reminder on \(reminded.reference)", puts: [(reminded.id, .invoice(reminded))])
        return reminded
    }

    /// Marks a draft sent: its items and amounts are frozen from then on.
    @discardableResult
    public func sendInvoice(_ invoice: Invoice, on date: CalendarDate) throws -> Invoice {
        let sent = try invoice.sending(on: date)
        try commit("Sent \(sent.reference)", puts: [(sent.id, .invoice(sent))])
        return sent
    }

    /// Voids an invoice with no payments; its number is never reused.
    @discardableResult
    public func voidInvoice(_ invoice: Invoice, on date: CalendarDate) throws -> Invoice {
        let voided = try invoice.voiding(on: date)
        try commit("Voided \(voided.reference)", puts: [(voided.id, .invoice(voided))])
        return voided
    }

    /// Records a payment: the whole outstanding amount unless `amount` says less. Overpayment is
    /// refused. The money arrives `into` an account (by default the client's), whose value rises
    /// in the same change: a receivable turns into cash.
    @discardableResult
    public func recordPayment(
        on invoice: Invoice, amount: Money? = nil, date: CalendarDate, into: FlowAccount = .byDefault
    ) throws -> (invoice: Invoice, amount: Money) {
        if let amount { try Self.requirePositive(amount) }
        let amount = try amount ?? invoice.outstanding()
        let flow = try flow(to: into.resolved(client(of: invoice)?.account), on: date)
        let paid = try invoice.paying(amount, on: date, flow: flow)
        try commit(
            "Recorded payment of \(currency.format(amount)) on \(paid.reference)\(describe(flow))",
            puts: [(paid.id, .invoice(paid))])
        return (paid, amount)
    }
}

/// One line of an invoice as a person reads it on screen (`coffer invoice show`, the web app's
/// invoice page): each face lays the lines out, in this order, and signs a payment its own way.
public struct InvoiceStatementLine: Sendable, Equatable {
    public enum Role: Sendable, Equatable {
        /// A charge, discount or credit the invoice lists.
        case item
        case subtotal, tax, total
        /// Money received: `amount` is taken off what is owed.
        case payment
        /// What is still owed after the payments (only once there is one).
        case outstanding
    }

    public let role: Role
    /// The item's description, or what the sum is ("Subtotal", "VAT 20%", "Paid 2026-12-01 into Current").
    public let label: String
    /// Quantity × unit price for a charge, the kind (and share) of a discount or credit; empty for sums.
    public let detail: String
    public let amount: Money
}

extension Ledger {
    /// The invoice's lines in reading order: charges and discounts, the subtotal, the tax,
    /// credits, the total, then each payment and what is outstanding.
    public func statementLines(of invoice: Invoice) throws -> [InvoiceStatementLine] {
        let money = { (value: Money) in self.currency.format(value) }
        func line(_ item: LineItem) -> InvoiceStatementLine {
            let amount = (try? invoice.amount(of: item)) ?? .zero
            switch item.kind {
            case .charge:
                return .init(
                    role: .item, label: item.description, detail: "\(item.quantity) × \(money(item.unitPrice))",
                    amount: amount)
            case .discount, .credit:
                let share = item.shareBasisPoints.map { " \(GrowthRate(basisPoints: $0))" } ?? ""
                return .init(role: .item, label: item.description, detail: item.kind.rawValue + share, amount: amount)
            }
        }
        var lines = invoice.items.filter { $0.kind != .credit }.map(line)
        lines.append(.init(role: .subtotal, label: "Subtotal", detail: "", amount: try invoice.subtotal()))
        if let rate = invoice.taxBasisPoints {
            let label = "\(invoiceSender.taxLabel.title) \(GrowthRate(basisPoints: rate))"
            lines.append(.init(role: .tax, label: label, detail: "", amount: try invoice.tax()))
        }
        lines += invoice.items.filter { $0.kind == .credit }.map(line)
        lines.append(.init(role: .total, label: "Total", detail: "", amount: try invoice.total()))
        for payment in invoice.payments {
            let into = account(withID: payment.flow?.to).map { " into \($0.name)" } ?? ""
            lines.append(
                .init(role: .payment, label: "Paid \(payment.date)\(into)", detail: "", amount: payment.amount))
        }
        if !invoice.payments.isEmpty {
            lines.append(.init(role: .outstanding, label: "Outstanding", detail: "", amount: try invoice.outstanding()))
        }
        return lines
    }
}
