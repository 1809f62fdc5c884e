import FinanceCore

/// The polite payment reminder for a sent, unpaid invoice, signed by the sender: the same words
/// whichever face shows it (the CLI prints it, the web app shows it to copy).
public struct InvoiceReminder: Sendable {
    public let subject: String
    /// The message's lines in order; an empty string is a blank line between paragraphs.
    public let lines: [String]
}

extension Ledger {
    /// The reminder for `invoice` on `today`; refused when it is not sent and unpaid.
    public func reminder(for invoice: Invoice, on today: CalendarDate) throws -> InvoiceReminder {
        let status = try invoice.status(on: today)
        guard status == .sent || status == .overdue else {
            throw CofferError(
                .invalidInput, "\(invoice.reference) is \(status.rawValue): there is nothing to remind about.")
        }
        let sender = invoiceSender
        let when = try invoice.relativeDue(on: today).lowercased()
        let earlier = invoice.reminders.last.map { " I last wrote about it on \($0)." } ?? ""
        var lines = [
            "Hello \(client(of: invoice)?.name ?? ""),", "",
            "I hope you are well. This is a friendly reminder that invoice \(invoice.reference) for \(currency.format(try invoice.outstanding())), issued on \(invoice.issued), is \(when) (due \(invoice.due)).\(earlier)",
            "If you have already paid, thank you, and please ignore this message. Otherwise I would be grateful if you could arrange payment at your earliest convenience.",
        ]
        for details in [sender.paymentInstructions, sender.bankDetails].compactMap({ $0 }) {
            lines += ["", details]
        }
        lines += ["", "Kind regards"] + [sender.name, sender.email].compactMap { $0 }
        return InvoiceReminder(subject: "Payment reminder — \(invoice.reference)", lines: lines)
    }
}
