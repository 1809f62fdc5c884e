import ArgumentParser
import CofferKit
import FinanceCore
import Foundation
import VaultStore

/// `coffer client add|list|show|edit|remove`.
struct ClientCommands: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "client", abstract: "The people and companies you invoice.",
        subcommands: [Add.self, List.self, Show.self, Edit.self, Remove.self])

    static func find(_ name: String, in ledger: Ledger) throws -> Client {
        try Ledger.match(name, among: ledger.clients, name: \.name, what: "client", addHint: "coffer client add NAME --terms 30")
    }

    static func terms(_ days: Int) throws -> Int {
        guard (0...365).contains(days) else { throw CLIError(.invalidInput, "Enter payment terms from 0 to 365 days: \(days) is outside that.") }
        return days
    }

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Add a client.")
        @OptionGroup var options: VaultOptions
        @Argument var name: String
        @Option var email: String?
        @Option var address: String?
        @Option(help: "Default payment terms in days.") var terms: Int = 30
        func run() throws {
            let name = try CommandContext.name(self.name, what: "client name")
            let terms = try ClientCommands.terms(self.terms)
            let ledger = try options.openLedger()
            guard !ledger.clients.contains(where: { $0.name.caseInsensitiveCompare(name) == .orderedSame }) else {
                throw CLIError(.invalidInput, "A client called '\(name)' already exists. Nothing was changed.")
            }
            let client = Client(name: name, email: email, address: address, termsDays: terms)
            try ledger.commit("Added client \(name)", puts: [(client.id, .client(client))])
            Output.line("Added \(name) (terms \(terms) days). Next: coffer invoice new \"\(name)\" --item \"Work\" 1 500")
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List clients with what they owe.")
        @OptionGroup var options: VaultOptions
        @OptionGroup var report: ReportOptions
        struct Row: Encodable { let name: String; let email: String?; let terms: Int; let outstanding: String; let invoices: Int }
        func run() throws {
            let ledger = try options.openLedger()
            let owed = try ledger.clients.map { client -> (Client, Money, Int) in
                let theirs = ledger.invoices.filter { $0.clientID == client.id }
                return (client, try Money.sum(try theirs.filter { $0.stored == .sent }.map { try $0.outstanding() }), theirs.count)
            }
            if report.json {
                return try Output.json(["clients": owed.map { Row(name: $0.0.name, email: $0.0.email, terms: $0.0.termsDays,
                                                                  outstanding: ledger.currency.decimalString($0.1), invoices: $0.2) }])
            }
            guard !owed.isEmpty else {
                Output.line("No clients yet — add one: coffer client add \"Acme Ltd\" --email ap@acme.example --terms 30")
                return
            }
            Render.table([["Client", "Owes", "Invoices", "Terms"]] + owed.map { client, amount, count in
                [client.name, ledger.currency.format(amount), "\(count)", "\(client.termsDays) days"]
            }, rightAligned: [1, 2]).forEach { Output.line($0) }
        }
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show a client and their invoices.")
        @OptionGroup var options: VaultOptions
        @Argument var name: String
        func run() throws {
            let ledger = try options.openLedger()
            let client = try ClientCommands.find(name, in: ledger)
            let today = try CommandContext.today()
            Output.line(Style.current().bold(client.name))
            if let email = client.email { Output.line(email) }
            if let address = client.address { Output.line(address) }
            Output.line("Terms: \(client.termsDays) days")
            Output.line()
            InvoiceCommands.rows(ledger.invoices.filter { $0.clientID == client.id }, ledger: ledger, today: today).forEach { Output.line($0) }
        }
    }

    struct Edit: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Change a client's name, email, address or terms.")
        @OptionGroup var options: VaultOptions
        @Argument var name: String
        @Option(name: .customLong("name")) var newName: String?
        @Option var email: String?
        @Option var address: String?
        @Option var terms: Int?
        func run() throws {
            let ledger = try options.openLedger()
            var client = try ClientCommands.find(name, in: ledger)
            guard newName != nil || email != nil || address != nil || terms != nil else {
                throw CLIError(.invalidInput, "Say what to change: --name, --email, --address or --terms. Nothing was changed.")
            }
            if let newName { client.name = try CommandContext.name(newName, what: "client name") }
            if let email { client.email = email.isEmpty ? nil : email }
            if let address { client.address = address.isEmpty ? nil : address }
            if let terms { client.termsDays = try ClientCommands.terms(terms) }
            try ledger.commit("Edited client \(client.name)", puts: [(client.id, .client(client))])
            Output.line("Updated \(client.name).")
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove a client who has no invoices.")
        @OptionGroup var options: VaultOptions
        @Argument var name: String
        func run() throws {
            let ledger = try options.openLedger()
            let client = try ClientCommands.find(name, in: ledger)
            let count = ledger.invoices.filter { $0.clientID == client.id }.count
            guard count == 0 else {
                throw CLIError(.invalidInput, "\(client.name) has \(count) invoice\(count == 1 ? "" : "s"); a client with invoices cannot be removed. Nothing was changed.")
            }
            try ledger.commit("Removed client \(client.name)", deletes: [client.id])
            Output.line("Removed \(client.name). Undo with: coffer undo")
        }
    }
}

/// `coffer invoice new|send|void|show|pay|remind|export`.
struct InvoiceCommands: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "invoice", abstract: "Create and manage one invoice: a claim to money.",
        subcommands: [New.self, Send.self, Void.self, Show.self, Pay.self, Remind.self, Export.self])

    /// `INV-0007`, `0007` or `7`.
    static func find(_ reference: String, in ledger: Ledger) throws -> Invoice {
        let digits = reference.uppercased().replacingOccurrences(of: "INV-", with: "")
        guard let number = Int(digits), let invoice = ledger.invoices.first(where: { $0.number == number }) else {
            throw CLIError(.invalidInput, "No invoice '\(reference)'. Nothing was changed.", hint: "List them with: coffer invoices")
        }
        return invoice
    }

    /// Amount first, client second, status as a word and a symbol, relative due text.
    static func rows(_ invoices: [Invoice], ledger: Ledger, today: CalendarDate) -> [String] {
        let table = invoices.map { invoice -> [String] in
            let client = ledger.clients.first { $0.id == invoice.clientID }?.name ?? "(removed client)"
            let amount = (try? invoice.stored == .sent ? invoice.outstanding() : invoice.total()) ?? .zero
            return [ledger.currency.format(amount), client, (try? invoice.status(on: today).badge) ?? "",
                    (try? invoice.relativeDue(on: today)) ?? "", invoice.reference]
        }
        return Render.table(table, rightAligned: [0])
    }

    struct New: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create an invoice (a draft, or sent with --send).",
            discussion: "Items: --item \"DESCRIPTION\" QUANTITY PRICE, repeated. Due date from --due, else --terms, else the client's terms.")
        @OptionGroup var options: VaultOptions
        @Argument(help: "The client (a unique prefix is enough).") var client: String
        @Option(name: .customLong("item"), parsing: .upToNextOption, help: ArgumentHelp("DESCRIPTION QUANTITY PRICE; repeat for more lines.", valueName: "item"))
        var items: [String] = []
        @Option(help: "Payment terms in days for this invoice.") var terms: Int?
        @Option(help: ArgumentHelp("Due date, YYYY-MM-DD.", valueName: "date")) var due: String?
        @Option(help: ArgumentHelp("Tax rate, e.g. 20%.", valueName: "rate")) var tax: String?
        @Option(help: ArgumentHelp("Issue date, YYYY-MM-DD (default today).", valueName: "date")) var date: String?
        @Option(help: "Notes printed on the invoice.") var notes: String?
        @Flag(help: "Send it at once (freezes it).") var send = false

        func run() throws {
            guard !items.isEmpty, items.count % 3 == 0 else {
                throw CLIError(.invalidInput, "Give each line as --item \"DESCRIPTION\" QUANTITY PRICE (e.g. --item \"Design\" 2 150). Nothing was changed.")
            }
            guard terms == nil || due == nil else { throw CLIError(.invalidInput, "Give --terms or --due, not both. Nothing was changed.") }
            let today = try CommandContext.today()
            let issued = try CommandContext.date(date, default: today)
            let ledger = try options.openLedger()
            let client = try ClientCommands.find(self.client, in: ledger)
            let lines = try stride(from: 0, to: items.count, by: 3).map { index in
                LineItem(description: try CommandContext.name(items[index], what: "item description"),
                         quantity: try CommandContext.input { try Quantity(parsing: items[index + 1]) },
                         unitPrice: try CommandContext.input { try ledger.currency.parse(items[index + 2]) })
            }
            let taxPoints = try tax.map { text -> Int in
                let rate = try CommandContext.input { try GrowthRate(parsing: text) }
                guard rate.basisPoints >= 0 else { throw CLIError(.invalidInput, "A tax rate cannot be negative: '\(text)'.") }
                return rate.basisPoints
            }
            let dueDate = try due.map { try CommandContext.date($0, default: issued) } ?? issued.adding(days: try ClientCommands.terms(terms ?? client.termsDays))
            guard dueDate >= issued else { throw CLIError(.invalidInput, "The due date \(dueDate) is before the issue date \(issued). Nothing was changed.") }
            let number = (ledger.invoiceCounter?.counter.lastNumber ?? ledger.invoices.map(\.number).max() ?? 0) + 1
            var invoice = Invoice(number: number, clientID: client.id, items: lines, taxBasisPoints: taxPoints, issued: issued, due: dueDate,
                                  notes: try notes.map { try CommandContext.name($0, what: "note") })
            let total = try invoice.total()
            if send { invoice = try invoice.sending(on: issued) }
            // The counter moves outside the change log: undo never frees a number for reuse.
            try ledger.writeWithoutHistory([(ledger.invoiceCounter?.id ?? UUID(), .invoiceCounter(InvoiceCounter(lastNumber: number)))])
            try ledger.commit("Created \(invoice.reference) for \(client.name)", puts: [(invoice.id, .invoice(invoice))])
            Output.line("\(ledger.currency.format(total))  \(client.name)  \(invoice.reference)  \(try invoice.status(on: today).badge)  \(try invoice.relativeDue(on: today))")
            Output.line(send ? "Next: coffer invoice remind \(invoice.reference) · coffer invoice export \(invoice.reference) --html FILE"
                             : "Next: coffer invoice send \(invoice.reference)")
        }
    }

    struct Send: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Mark a draft as sent (its items and amounts are then frozen).")
        @OptionGroup var options: VaultOptions
        @Argument var id: String
        func run() throws {
            let ledger = try options.openLedger()
            let today = try CommandContext.today()
            let sent = try CommandContext.input { try InvoiceCommands.find(id, in: ledger).sending(on: today) }
            try ledger.commit("Sent \(sent.reference)", puts: [(sent.id, .invoice(sent))])
            Output.line("Sent \(sent.reference): \(ledger.currency.format(try sent.total())) · \(try sent.relativeDue(on: today)).")
        }
    }

    struct Void: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Void an invoice with no payments (its number is never reused).")
        @OptionGroup var options: VaultOptions
        @Argument var id: String
        func run() throws {
            let ledger = try options.openLedger()
            let voided = try CommandContext.input { try InvoiceCommands.find(id, in: ledger).voiding(on: try CommandContext.today()) }
            try ledger.commit("Voided \(voided.reference)", puts: [(voided.id, .invoice(voided))])
            Output.line("Voided \(voided.reference). Undo with: coffer undo")
        }
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show an invoice: amount first, client second, dates as text.")
        @OptionGroup var options: VaultOptions
        @OptionGroup var report: ReportOptions
        @Argument var id: String
        func run() throws {
            let ledger = try options.openLedger()
            let today = try CommandContext.today()
            let invoice = try InvoiceCommands.find(id, in: ledger)
            let client = ledger.clients.first { $0.id == invoice.clientID }
            let currency = ledger.currency
            if report.json { return try Output.json(try InvoiceCommands.row(invoice, ledger: ledger, today: today)) }
            let style = Style.current()
            Output.line(style.bold("\(currency.format(try invoice.total()))  \(client?.name ?? "(removed client)")"))
            Output.line("\(invoice.reference) · \(try invoice.status(on: today).badge) · \(try invoice.relativeDue(on: today)) (due \(invoice.due), issued \(invoice.issued))")
            Output.line()
            Render.table(invoice.items.map { [$0.description, "\($0.quantity) × \(currency.format($0.unitPrice))", currency.format((try? $0.total()) ?? .zero)] }
                         + [["Subtotal", "", currency.format(try invoice.subtotal())]]
                         + (invoice.taxBasisPoints.map { [["Tax \(GrowthRate(basisPoints: $0))", "", currency.format((try? invoice.tax()) ?? .zero)]] } ?? [])
                         + [["Total", "", currency.format(try invoice.total())]]
                         + (invoice.payments.isEmpty ? [] : invoice.payments.map { ["Paid \($0.date)", "", "-" + currency.format($0.amount)] }
                            + [["Outstanding", "", currency.format(try invoice.outstanding())]]),
                         rightAligned: [1, 2]).forEach { Output.line($0) }
            if let notes = invoice.notes { Output.line(); Output.line(notes) }
        }
    }

    struct Pay: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Record a payment (the full outstanding amount by default).")
        @OptionGroup var options: VaultOptions
        @Argument var id: String
        @Option(help: "A part payment.") var amount: String?
        @Option(help: ArgumentHelp("The payment date, YYYY-MM-DD (default today).", valueName: "date")) var date: String?
        func run() throws {
            let ledger = try options.openLedger()
            let today = try CommandContext.today()
            let day = try CommandContext.date(date, default: today)
            let invoice = try InvoiceCommands.find(id, in: ledger)
            let amount = try amount.map { try CommandContext.positiveAmount($0, ledger: ledger) } ?? (try invoice.outstanding())
            let paid = try CommandContext.input { try invoice.paying(amount, on: day) }
            try ledger.commit("Recorded payment of \(ledger.currency.format(amount)) on \(paid.reference)", puts: [(paid.id, .invoice(paid))])
            let left = try paid.outstanding()
            Output.line(left == .zero ? "\(paid.reference) is paid in full. \(try paid.status(on: today).badge)"
                                      : "Recorded \(ledger.currency.format(amount)); \(ledger.currency.format(left)) still outstanding on \(paid.reference).")
        }
    }

    struct Remind: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print a polite, ready-to-send payment reminder.")
        @OptionGroup var options: VaultOptions
        @Argument var id: String
        func run() throws {
            let ledger = try options.openLedger()
            let today = try CommandContext.today()
            let invoice = try InvoiceCommands.find(id, in: ledger)
            let status = try invoice.status(on: today)
            guard status == .sent || status == .overdue else {
                throw CLIError(.invalidInput, "\(invoice.reference) is \(status.rawValue): there is nothing to remind about.")
            }
            let client = ledger.clients.first { $0.id == invoice.clientID }
            let when = try invoice.relativeDue(on: today).lowercased()
            Output.line("Subject: Payment reminder — \(invoice.reference)")
            Output.line()
            Output.line("Hello \(client?.name ?? ""),")
            Output.line()
            Output.line("I hope you are well. This is a friendly reminder that invoice \(invoice.reference) for \(ledger.currency.format(try invoice.outstanding())), issued on \(invoice.issued), is \(when) (due \(invoice.due)).")
            Output.line("If you have already paid, thank you, and please ignore this message. Otherwise I would be grateful if you could arrange payment at your earliest convenience.")
            Output.line()
            Output.line("Kind regards")
        }
    }

    struct Export: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Write a printable, self-contained HTML invoice.")
        @OptionGroup var options: VaultOptions
        @Argument var id: String
        @Option(help: ArgumentHelp("The HTML file to write.", valueName: "file")) var html: String
        func run() throws {
            let ledger = try options.openLedger()
            let invoice = try InvoiceCommands.find(id, in: ledger)
            let client = ledger.clients.first { $0.id == invoice.clientID }
            let page = try InvoiceHTML.render(invoice, client: client, currency: ledger.currency)
            let url = URL(fileURLWithPath: html)
            try OutputFile.write(Data(page.utf8), to: html)
            if OutputFile.isStandardOutput(html) { return }
            Terminal.note("Note: \(url.path) is not encrypted; it holds this invoice in plain text.")
            Output.line("Wrote \(invoice.reference) to \(url.path).")
        }
    }

    struct Row: Encodable {
        let number, client, total, paid, outstanding, issued, due, status, relativeDue: String
    }

    static func row(_ invoice: Invoice, ledger: Ledger, today: CalendarDate) throws -> Row {
        let money = ledger.currency.decimalString
        return Row(number: invoice.reference, client: ledger.clients.first { $0.id == invoice.clientID }?.name ?? "",
                   total: money(try invoice.total()), paid: money(try invoice.paid()), outstanding: money(try invoice.outstanding()),
                   issued: invoice.issued.description, due: invoice.due.description, status: try invoice.status(on: today).rawValue,
                   relativeDue: try invoice.relativeDue(on: today))
    }
}

/// `coffer invoices [--overdue|--unpaid|--client NAME]` and `coffer invoices dashboard`.
struct InvoicesCommands: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "invoices", abstract: "The invoice list (management) and its dashboard (insight).",
        subcommands: [List.self, Dashboard.self], defaultSubcommand: List.self)

    struct Report: Encodable {
        struct Ageing: Encodable { let current, days1to30, days31to60, days61to90, over90: String }
        struct ClientLine: Encodable { let client, outstanding: String }
        let outstanding, overdue: String
        let overdueCount: Int
        let paidThisMonth: String
        let ageing: Ageing
        let clients: [ClientLine]
        let invoices: [InvoiceCommands.Row]
    }

    static func report(_ invoices: [Invoice], all: [Invoice], ledger: Ledger, today: CalendarDate) throws -> Report {
        let receivables = try Receivables(invoices: all, today: today)
        let money = ledger.currency.decimalString
        let ageing = receivables.ageing
        return Report(outstanding: money(receivables.outstanding), overdue: money(receivables.overdue), overdueCount: receivables.overdueCount,
                      paidThisMonth: money(receivables.paidThisMonth),
                      ageing: .init(current: money(ageing.current), days1to30: money(ageing.days1to30), days31to60: money(ageing.days31to60),
                                    days61to90: money(ageing.days61to90), over90: money(ageing.over90)),
                      clients: receivables.byClient.map { id, owed in .init(client: ledger.clients.first { $0.id == id }?.name ?? "", outstanding: money(owed)) },
                      invoices: try invoices.map { try InvoiceCommands.row($0, ledger: ledger, today: today) })
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "List invoices, newest first.")
        @OptionGroup var options: VaultOptions
        @OptionGroup var report: ReportOptions
        @Flag(help: "Only overdue invoices.") var overdue = false
        @Flag(help: "Only sent, unpaid invoices.") var unpaid = false
        @Option(help: "Only this client's invoices.") var client: String?

        func run() throws {
            let ledger = try options.openLedger()
            let today = try CommandContext.today()
            var shown = ledger.invoices.reversed() as [Invoice]
            if overdue { shown = try shown.filter { try $0.status(on: today) == .overdue } }
            if unpaid { shown = try shown.filter { [.sent, .overdue].contains(try $0.status(on: today)) } }
            if let client {
                let found = try ClientCommands.find(client, in: ledger)
                shown = shown.filter { $0.clientID == found.id }
            }
            if report.json { return try Output.json(try InvoicesCommands.report(shown, all: ledger.invoices, ledger: ledger, today: today)) }
            guard !ledger.invoices.isEmpty else {
                Output.line("No invoices yet — let's get you paid: coffer invoice new CLIENT --item \"Design work\" 1 500")
                return
            }
            guard !shown.isEmpty else {
                Output.line(overdue ? "No overdue invoices. All caught up." : "No invoices match.")
                return
            }
            InvoiceCommands.rows(shown, ledger: ledger, today: today).forEach { Output.line($0) }
            Output.line()
            Output.line("Next: coffer invoice show INV-NNNN · coffer invoices dashboard")
        }
    }

    struct Dashboard: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Outstanding, overdue, paid this month, ageing, per client.")
        @OptionGroup var options: VaultOptions
        @OptionGroup var report: ReportOptions
        func run() throws {
            let ledger = try options.openLedger()
            let today = try CommandContext.today()
            let full = try InvoicesCommands.report(ledger.invoices, all: ledger.invoices, ledger: ledger, today: today)
            if report.json { return try Output.json(full) }
            let currency = ledger.currency
            let receivables = try Receivables(invoices: ledger.invoices, today: today)
            Output.line(Style.current().bold("\(currency.format(receivables.outstanding)) outstanding"))
            Output.line(receivables.overdueCount == 0 ? "No overdue invoices. All caught up."
                                                      : "⚠ \(currency.format(receivables.overdue)) overdue on \(receivables.overdueCount) invoice\(receivables.overdueCount == 1 ? "" : "s")")
            Output.line("\(currency.format(receivables.paidThisMonth)) paid this month")
            Output.line()
            Output.line("Ageing")
            let ageing = receivables.ageing
            Render.table([["Current", currency.format(ageing.current)], ["1–30 days", currency.format(ageing.days1to30)],
                          ["31–60 days", currency.format(ageing.days31to60)], ["61–90 days", currency.format(ageing.days61to90)],
                          ["Over 90 days", currency.format(ageing.over90)]], rightAligned: [1]).forEach { Output.line($0) }
            if !full.clients.isEmpty {
                Output.line()
                Output.line("By client")
                Render.table(receivables.byClient.map { id, owed in [ledger.clients.first { $0.id == id }?.name ?? "", currency.format(owed)] },
                             rightAligned: [1]).forEach { Output.line($0) }
            }
            Output.line()
            Output.line("Next: coffer invoices --overdue · coffer invoice remind INV-NNNN")
        }
    }
}

/// `coffer settings [--receivables on|off]`.
struct Settings: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show or change vault settings.")
    @OptionGroup var options: VaultOptions
    @Option(help: "Count unpaid sent invoices in net worth as \"Invoices receivable\": on or off.") var receivables: Toggle?

    enum Toggle: String, ExpressibleByArgument { case on, off }

    func run() throws {
        let ledger = try options.openLedger()
        var settings = ledger.settings ?? VaultSettings(currency: ledger.currency)
        if let receivables {
            settings.includeReceivables = receivables == .on
            try ledger.commit("Turned invoices receivable \(receivables.rawValue)", puts: [(ledger.settingsID ?? UUID(), .settings(settings))])
        }
        Output.line("Currency              \(settings.currency.code)")
        Output.line("Invoices receivable   \(settings.includeReceivables ? "on (unpaid sent invoices count in net worth)" : "off")")
    }
}
