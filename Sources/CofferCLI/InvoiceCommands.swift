import ArgumentParser
import CofferKit
import FinanceCore
import Foundation

/// `coffer invoice new|edit|delete|duplicate|send|void|show|pay|remind|export|sender`.
struct InvoiceCommands: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "invoice", abstract: "Create and manage one invoice: a claim to money.",
        subcommands: [
            New.self, Edit.self, Delete.self, Duplicate.self, Send.self, Void.self, Show.self, Pay.self, Remind.self,
            Export.self, Sender.self,
        ])

    /// Amount first, client second, status as a word and a symbol, relative due text, and the
    /// invoice number, which stays whole on a narrow screen (the due text goes first).
    static func rows(_ invoices: [Invoice], ledger: Ledger, today: CalendarDate) -> [String] {
        let table = invoices.map { invoice -> [String] in
            let client = ledger.client(of: invoice)?.name ?? "(removed client)"
            let amount = (try? invoice.stored == .sent ? invoice.outstanding() : invoice.total()) ?? .zero
            return [
                ledger.currency.format(amount), client, (try? invoice.status(on: today).badge) ?? "",
                (try? invoice.relativeDue(on: today)) ?? "", invoice.reference,
            ]
        }
        return Render.table(table, rightAligned: [0], droppable: [3], whole: [4])
    }

    struct New: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "new",
            abstract: "Create an invoice (a draft, or sent with --send).",
            discussion:
                "Items: --item \"DESCRIPTION\" QUANTITY PRICE, repeated; --discount \"DESCRIPTION\" AMOUNT|PERCENT% off before tax; --credit \"DESCRIPTION\" AMOUNT off after tax. Due date from --due, else --terms, else the client's terms."
        )
        @OptionGroup var options: VaultOptions
        @Argument(help: "The client (a unique prefix is enough).") var client: String
        @OptionGroup var lines: LineOptions
        @Option(help: "Payment terms in days for this invoice.") var terms: Int?
        @Option(help: ArgumentHelp("Due date, YYYY-MM-DD.", valueName: "date")) var due: String?
        @Option(help: ArgumentHelp("Tax rate, e.g. 20%.", valueName: "rate")) var tax: String?
        @Option(help: ArgumentHelp("Issue date, YYYY-MM-DD (default today).", valueName: "date")) var date: String?
        @Option(help: "Notes printed on the invoice.") var notes: String?
        @Flag(help: "Send it at once (freezes it).") var send = false

        func run() throws {
            guard !lines.items.isEmpty else {
                throw CLIError(
                    .invalidInput,
                    "Give each line as --item \"DESCRIPTION\" QUANTITY PRICE (e.g. --item \"Design\" 2 150). Nothing was changed."
                )
            }
            guard terms == nil || due == nil else {
                throw CLIError(.invalidInput, "Give --terms or --due, not both. Nothing was changed.")
            }
            let today = try CommandContext.today()
            let issued = try CommandContext.date(date, default: today)
            let ledger = try options.openLedger()
            let client = try ledger.client(named: self.client)
            let lines =
                try (self.lines.charges(ledger) ?? []) + (self.lines.discountLines(ledger) ?? [])
                + (self.lines.creditLines(ledger) ?? [])
            let taxPoints = try tax.map { text in try CommandContext.input { try GrowthRate(parsing: text) }.basisPoints
            }
            let dueRule: Ledger.Due =
                try due.map { .on(try CommandContext.date($0, default: issued)) } ?? terms.map { .afterDays($0) }
                ?? .clientTerms
            let invoice = try ledger.createInvoice(
                for: client, items: lines, taxBasisPoints: taxPoints, issued: issued, due: dueRule,
                notes: notes, send: send)
            let total = try invoice.total()
            Output.line(
                "\(ledger.currency.format(total))  \(client.name)  \(invoice.reference)  \(try invoice.status(on: today).badge)  \(try invoice.relativeDue(on: today))"
            )
            Output.advice(
                send
                    ? "Next: coffer invoice remind \(invoice.reference) · coffer invoice export \(invoice.reference) --html FILE"
                    : "Next: coffer invoice send \(invoice.reference)")
        }
    }

    struct Send: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "send",
            abstract: "Mark a draft as sent (its items and amounts are then frozen).")
        @OptionGroup var options: VaultOptions
        @Argument var id: String
        func run() throws {
            let ledger = try options.openLedger()
            let today = try CommandContext.today()
            let sent = try ledger.sendInvoice(try ledger.invoice(id), on: today)
            Output.line(
                "Sent \(sent.reference): \(ledger.currency.format(try sent.total())) · \(try sent.relativeDue(on: today))."
            )
        }
    }

    struct Void: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "void",
            abstract: "Void an invoice with no payments (its number is never reused).")
        @OptionGroup var options: VaultOptions
        @Argument var id: String
        func run() throws {
            let ledger = try options.openLedger()
            let voided = try ledger.voidInvoice(try ledger.invoice(id), on: try CommandContext.today())
            Output.line("Voided \(voided.reference).")
            Output.advice("Undo with: coffer undo")
        }
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "show",
            abstract: "Show an invoice: amount first, client second, dates as text.")
        @OptionGroup var options: VaultOptions
        @OptionGroup var report: ReportOptions
        @Argument var id: String
        func run() throws {
            let ledger = try options.openLedger()
            let today = try CommandContext.today()
            let invoice = try ledger.invoice(id)
            let client = ledger.client(of: invoice)
            let currency = ledger.currency
            if report.json {
                return try Output.json(
                    Shown(
                        row: try InvoiceCommands.row(invoice, ledger: ledger, today: today),
                        notes: NoteCommands.attachedTitles(invoice.id, ledger: ledger)))
            }
            let style = Style.current()
            Output.line(style.bold("\(currency.format(try invoice.total()))  \(client?.name ?? "(removed client)")"))
            Output.line(
                "\(invoice.reference) · \(try invoice.status(on: today).badge) · \(try invoice.relativeDue(on: today)) (due \(invoice.due), issued \(invoice.issued))"
            )
            Output.line()
            let rows = try ledger.statementLines(of: invoice).map { line in
                [line.label, line.detail, (line.role == .payment ? "-" : "") + currency.format(line.amount)]
            }
            Render.table(
                rows, rightAligned: [1, 2]
            ).forEach { Output.line($0) }
            if !invoice.reminders.isEmpty {
                Output.line()
                Output.line("Reminders sent: " + invoice.reminders.map(\.description).joined(separator: ", "))
            }
            if let notes = invoice.notes { Output.line(); Output.line(notes) }
            NoteCommands.printAttached(invoice.id, ledger: ledger)
        }

        /// The row `coffer invoices --json` gives, with the titles of the notes attached.
        struct Shown: Encodable {
            let row: Row
            let notes: [String]
            enum Key: CodingKey { case notes }

            func encode(to encoder: Encoder) throws {
                try row.encode(to: encoder)
                var container = encoder.container(keyedBy: Key.self)
                try container.encode(notes, forKey: .notes)
            }
        }
    }

    struct Pay: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "pay",
            abstract: "Record a payment (the full outstanding amount by default).")
        @OptionGroup var options: VaultOptions
        @Argument var id: String
        @Option(help: "A part payment.") var amount: String?
        @Option(help: ArgumentHelp("The payment date, YYYY-MM-DD (default today).", valueName: "date")) var date:
            String?
        @Option(
            help: ArgumentHelp(
                "The account it was paid into; its value rises in the same change (default: the client's).",
                valueName: "account"))
        var into: String?
        @Flag(help: "Move no account's value, not even the client's default.") var noAccount = false
        @Flag(help: "Record a payment dated in the future or before the invoice was issued without asking.")
        var yes = false
        func run() throws {
            let ledger = try options.openLedger()
            let today = try CommandContext.today()
            let day = try CommandContext.date(date, default: today)
            let invoice = try ledger.invoice(id)
            let account = try FlowAccountOption.resolve(into, noAccount: noAccount, ledger: ledger, flag: "into")
            guard try EntryDoubts.confirm(EntryDoubts.payment(on: day, of: invoice, today: today), yes: yes) else {
                return
            }
            let (paid, amount) = try ledger.recordPayment(
                on: invoice, amount: try amount.map { try CommandContext.positiveAmount($0, ledger: ledger) },
                date: day, into: account)
            let left = try paid.outstanding()
            Output.line(
                left == .zero
                    ? "\(paid.reference) is paid in full. \(try paid.status(on: today).badge)"
                    : "Recorded \(ledger.currency.format(amount)); \(ledger.currency.format(left)) still outstanding on \(paid.reference)."
            )
            EntryOptions.showMoved(paid.payments.last?.flow, on: day, ledger: ledger)
        }
    }

    struct Remind: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "remind",
            abstract: "Print a polite, ready-to-send payment reminder, signed by the sender, and record it.",
            discussion: "The reminder's date is kept on the invoice (coffer undo takes it back); --dry-run only prints."
        )
        @OptionGroup var options: VaultOptions
        @Argument var id: String
        @Flag(help: "Print the reminder without recording it on the invoice.") var dryRun = false
        func run() throws {
            let ledger = try options.openLedger()
            let today = try CommandContext.today()
            let invoice = try ledger.invoice(id)
            let reminder = try ledger.reminder(for: invoice, on: today)
            Output.line("Subject: \(reminder.subject)")
            Output.line()
            reminder.lines.forEach { Output.line(TextSafety.printable($0)) }
            if dryRun { return }
            let reminded = try ledger.recordReminder(on: invoice, date: today)
            // stdout is the reminder to send; what was recorded is said on stderr.
            Terminal.note("Recorded reminder \(reminded.reminders.count) on \(reminded.reference) (\(today)).")
            Output.advice("Undo with: coffer undo")
        }
    }

    struct Export: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "export", abstract: "Write a printable, self-contained HTML invoice.")
        @OptionGroup var options: VaultOptions
        @Argument var id: String
        @Option(help: ArgumentHelp("The HTML file to write.", valueName: "file")) var html: String
        func run() throws {
            let ledger = try options.openLedger()
            let invoice = try ledger.invoice(id)
            let client = ledger.client(of: invoice)
            let page = try InvoiceHTML.render(
                invoice, client: client, sender: ledger.invoiceSender, currency: ledger.currency)
            let url = URL(fileURLWithPath: html)
            try OutputFile.write(Data(page.utf8), to: html)
            if OutputFile.isStandardOutput(html) { return }
            Terminal.note("Note: \(url.path) is not encrypted; it holds this invoice in plain text.")
            Output.line("Wrote \(invoice.reference) to \(url.path).")
        }
    }

    struct Row: Encodable {
        struct Paid: Encodable {
            let date, amount: String
            /// The account it was paid into, when Coffer was told.
            @NullEncoded var into: String?
        }
        let number, client, total, paid, outstanding, issued, due, status, relativeDue: String
        let payments: [Paid]
        /// The days a reminder was sent, oldest first.
        let reminders: [String]
    }

    static func row(_ invoice: Invoice, ledger: Ledger, today: CalendarDate) throws -> Row {
        let money = ledger.currency.decimalString
        return Row(
            number: invoice.reference, client: ledger.client(of: invoice)?.name ?? "",
            total: money(try invoice.total()), paid: money(try invoice.paid()),
            outstanding: money(try invoice.outstanding()),
            issued: invoice.issued.description, due: invoice.due.description,
            status: try invoice.status(on: today).rawValue,
            relativeDue: try invoice.relativeDue(on: today),
            payments: invoice.payments.map {
                .init(
                    date: $0.date.description, amount: money($0.amount),
                    into: ledger.account(withID: $0.flow?.to)?.name)
            },
            reminders: invoice.reminders.map(\.description))
    }
}
