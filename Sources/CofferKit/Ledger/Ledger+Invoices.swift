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

    /// `INV-0007`, `0007` or `7`.
    public func invoice(_ reference: String) throws -> Invoice {
        let digits = reference.uppercased().replacingOccurrences(of: "INV-", with: "")
        guard let number = Int(digits), let invoice = invoices.first(where: { $0.number == number }) else {
            throw CofferError(.noMatch, "No invoice '\(reference)'.", kind: "invoice")
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
        let items = try items.map { item in
            var item = item
            item.description = try Account.validatedName(item.description, what: "item description")
            return item
        }
        if let taxBasisPoints, taxBasisPoints < 0 { throw CofferError(.invalidInput, "A tax rate cannot be negative.") }
        let dueDate: CalendarDate
        switch due {
        case .on(let date): dueDate = date
        case .afterDays(let days):
            try Self.requireTerms(days)
            dueDate = issued.adding(days: days)
        case .clientTerms: dueDate = issued.adding(days: client.termsDays)
        }
        guard dueDate >= issued else {
            throw CofferError(.invalidInput, "The due date \(dueDate) is before the issue date \(issued).")
        }
        let number = (invoiceCounter?.counter.lastNumber ?? invoices.map(\.number).max() ?? 0) + 1
        var invoice = Invoice(
            number: number, clientID: client.id, items: items, taxBasisPoints: taxBasisPoints, issued: issued,
            due: dueDate,
            notes: try notes.map { try Account.validatedName($0, what: "note") })
        _ = try invoice.total()
        if send { invoice = try invoice.sending(on: issued) }
        try writeWithoutHistory([(invoiceCounter?.id ?? UUID(), .invoiceCounter(InvoiceCounter(lastNumber: number)))])
        try commit(
            "Created \(invoice.reference) for \(client.name)", puts: [(invoice.id, .invoice(invoice))] + alsoPut)
        return invoice
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
