import CofferKit
import FinanceCore
import Foundation
import Hummingbird
import Plot

/// Invoices (seed 004): a dashboard (outstanding, overdue, paid this month, ageing, per client)
/// distinct from the list; an invoice's page with its status in words and a symbol, the due date
/// as relative text, its lines and payments, and the one action its status calls for (send a
/// draft, mark a sent one paid, remind); a new invoice; the sendable HTML file.
enum InvoicesPages {
    static func add(to router: Router<WebContext>, _ state: WebState) {
        router.get("/invoices") { _, context in try await dashboard(state, context) }
        router.get("/invoices/list") { request, context in
            try await list(state, context, show: request.uri.queryParameters["show"].map(String.init) ?? "all")
        }
        router.get("/invoices/new") { _, context in try await newInvoice(state, context) }
        router.get("/invoices/:id") { _, context in try await detail(state, context, id: invoiceID(context)) }
        router.get("/invoices/:id/invoice.html") { _, context in try await download(state, context) }
        router.post("/invoices") { _, context in try await create(state, context) }
        router.post("/clients") { _, context in
            struct Form: Decodable { let name: String, email: String?, terms: String? }
            let form = try context.decodeForm(Form.self)
            return try await WebVault.change(
                state, context, back: "/invoices/new",
                again: { try await newInvoice(state, context, banner: $0) }
            ) { ledger in
                let terms = try days(form.terms)
                let email = (form.email ?? "").isEmpty ? nil : form.email
                let client = try ledger.addClient(name: form.name, email: email, termsDays: terms ?? 30)
                return .init(text: "Added client \(client.name) (\(client.termsDays) days to pay).", undoable: true)
            }
        }
        router.post("/invoices/:id/send") { _, context in
            try await onInvoice(state, context) { ledger, invoice, today in
                let sent = try ledger.sendInvoice(invoice, on: today)
                return
                    "Sent \(sent.reference): \(ledger.currency.format(try sent.total())) · \(try sent.relativeDue(on: today))."
            }
        }
        router.post("/invoices/:id/pay") { _, context in
            struct Form: Decodable { let amount: String?, date: String?, into: String?, confirm: String? }
            let form = try context.decodeForm(Form.self)
            let day = try (form.date ?? "").isEmpty ? state.today : AssetsPages.parsedDate(form.date!)
            return try await onInvoice(state, context) { ledger, invoice, today in
                let amount = try (form.amount ?? "").isEmpty ? nil : ledger.currency.parse(form.amount!)
                let into = try flowAccount(form.into, in: ledger)
                try WebVault.ask(EntryDoubts.payment(on: day, of: invoice, today: today), confirmed: form.confirm)
                let (paid, recorded) = try ledger.recordPayment(
                    on: invoice, amount: amount, date: day, into: into)
                let left = try paid.outstanding()
                let intoText = ledger.account(withID: paid.payments.last?.flow?.to).map { " into \($0.name)" } ?? ""
                return left == .zero
                    ? "\(paid.reference) is paid in full (\(ledger.currency.format(recorded))\(intoText))."
                    : "Recorded \(ledger.currency.format(recorded))\(intoText); \(ledger.currency.format(left)) still outstanding on \(paid.reference)."
            }
        }
        router.post("/invoices/:id/remind") { _, context in
            try await onInvoice(state, context) { ledger, invoice, today in
                _ = try ledger.reminder(for: invoice, on: today)
                let reminded = try ledger.recordReminder(on: invoice, date: today)
                return "Recorded reminder \(reminded.reminders.count) on \(reminded.reference) (\(today))."
            }
        }
        router.post("/invoices/:id/void") { _, context in
            try await onInvoice(state, context) { ledger, invoice, today in
                "Voided \(try ledger.voidInvoice(invoice, on: today).reference)."
            }
        }
        router.post("/invoices/:id/delete") { _, context in
            let id = try invoiceID(context)
            return try await WebVault.change(
                state, context, back: "/invoices/list",
                again: { try await detail(state, context, id: id, banner: $0) }
            ) { ledger in
                let invoice = try existing(id, in: ledger)
                try ledger.deleteInvoice(invoice)
                return .init(text: "Deleted draft \(invoice.reference).", undoable: true)
            }
        }
    }

    /// A change to one invoice, back on its page.
    private static func onInvoice(
        _ state: WebState, _ context: WebContext,
        _ body: @escaping @Sendable (Ledger, Invoice, CalendarDate) throws -> String
    ) async throws -> Response {
        let id = try invoiceID(context)
        let today = state.today
        return try await WebVault.change(
            state, context, back: "/invoices/\(id.uuidString)",
            again: { try await detail(state, context, id: id, banner: $0) }
        ) { ledger in
            .init(text: try body(ledger, try existing(id, in: ledger), today), undoable: true)
        }
    }

    static func invoiceID(_ context: WebContext) throws -> UUID {
        guard let text = context.parameters.get("id"), let id = UUID(uuidString: text) else {
            throw WebRefusal(status: .notFound, message: "There is no such invoice.")
        }
        return id
    }

    static func existing(_ id: UUID, in ledger: Ledger) throws -> Invoice {
        guard let invoice = ledger.invoices.first(where: { $0.id == id }) else {
            throw WebRefusal(status: .notFound, message: "There is no such invoice.")
        }
        return invoice
    }

    /// The account a payment arrives in: the client's ("default"), none ("none"), or one by id.
    private static func flowAccount(_ choice: String?, in ledger: Ledger) throws -> Ledger.FlowAccount {
        switch choice ?? "default" {
        case "default", "": return .byDefault
        case "none": return .none
        case let text:
            guard let id = UUID(uuidString: text), let account = ledger.account(withID: id) else {
                throw CofferError(.noMatch, "There is no such account.")
            }
            return .account(account)
        }
    }

    private static func days(_ text: String?) throws -> Int? {
        guard let text, !text.isEmpty else { return nil }
        guard let days = Int(text) else {
            throw CofferError(.invalidInput, "Payment terms are a whole number of days: '\(text)' is not.")
        }
        return days
    }

    /// Status as a word with its symbol (never colour alone), then the relative due text.
    private static func chips(_ invoice: Invoice, today: CalendarDate) -> Node<HTML.BodyContext> {
        let status = (try? invoice.status(on: today)) ?? .draft
        return .group(
            .span(.class("chip \(status.rawValue)"), .text(status.badge)), " ",
            .span(.class("muted"), .text((try? invoice.relativeDue(on: today)) ?? "")))
    }

    static func dashboard(_ state: WebState, _ context: WebContext, banner: Layout.Banner? = nil) async throws
        -> Response
    {
        let today = state.today
        return try await WebVault.page(state, context, view: nil, banner: banner) { ledger, banner in
            let receivables = try Receivables(invoices: ledger.invoices, today: today)
            let money = { (value: Money) in ledger.currency.format(value) }
            let ageing = receivables.ageing
            let buckets: [(String, Money)] = [
                ("Current", ageing.current), ("1–30 days", ageing.days1to30), ("31–60 days", ageing.days31to60),
                ("61–90 days", ageing.days61to90), ("Over 90 days", ageing.over90),
            ]
            let overdue = ledger.invoices.filter { (try? $0.status(on: today)) == .overdue }
            return Layout.page(
                title: "Invoices", area: .invoices, csrf: context.csrf, banner: banner,
                .group(
                    .h1("Invoices"),
                    .p(
                        .a(.href("/invoices/list"), .text("Every invoice")), " · ",
                        .a(.href("/invoices/new"), .text("New invoice"))),
                    .if(
                        ledger.invoices.isEmpty,
                        .p(
                            .text(
                                ledger.clients.isEmpty
                                    ? "No invoices yet. First add who you invoice, then let's get you paid: "
                                    : "No invoices yet — let's get you paid: "),
                            .a(.href("/invoices/new"), .text("create your first invoice")), ".")),
                    .div(
                        .class("cards"),
                        .section(
                            .class("card"), .h2("Outstanding"),
                            .p(.class("figure"), HTMLText.node(money(receivables.outstanding)))),
                        .section(
                            .class("card"), .h2("Overdue"),
                            .p(.class("figure"), HTMLText.node(money(receivables.overdue))),
                            .p(
                                .text(
                                    receivables.overdueCount == 0
                                        ? "No overdue invoices. All caught up."
                                        : "⚠ On \(receivables.overdueCount) invoice\(receivables.overdueCount == 1 ? "" : "s")"
                                ))),
                        .section(
                            .class("card"), .h2("Paid this month"),
                            .p(.class("figure"), HTMLText.node(money(receivables.paidThisMonth))))),
                    .if(!overdue.isEmpty, .section(.h2("Overdue now"), table(overdue, ledger: ledger, today: today))),
                    .section(
                        .h2("Ageing"),
                        .if(
                            receivables.outstanding == .zero,
                            .p(.text("Nothing is owed to you right now."))),
                        .if(
                            receivables.outstanding != .zero,
                            ReportHTML.barChart(
                                id: "ageing", caption: "What is owed, by how long it is past due",
                                rows: buckets.map { ($0.0, $0.1.minorUnits, money($0.1)) })),
                        ReportHTML.table(
                            caption: "Ageing", header: ["Past due", "Owed"],
                            rows: buckets.map { [$0.0, money($0.1)] })),
                    .if(
                        !receivables.byClient.isEmpty,
                        .section(
                            .h2("By client"),
                            ReportHTML.table(
                                caption: "Outstanding by client", header: ["Client", "Outstanding"],
                                rows: receivables.byClient.map { id, owed in
                                    [ledger.clients.first { $0.id == id }?.name ?? "(removed client)", money(owed)]
                                })))
                ))
        }
    }

    private static func table(_ invoices: [Invoice], ledger: Ledger, today: CalendarDate) -> Node<HTML.BodyContext> {
        .table(
            .thead(.tr(.th(.class("amount"), "Amount"), .th("Client"), .th("Status"), .th("Number"))),
            .tbody(
                .forEach(invoices) { invoice in
                    let amount = (try? invoice.stored == .sent ? invoice.outstanding() : invoice.total()) ?? .zero
                    return .tr(
                        .td(.class("amount"), HTMLText.node(ledger.currency.format(amount))),
                        .td(HTMLText.node(ledger.client(of: invoice)?.name ?? "(removed client)")),
                        .td(chips(invoice, today: today)),
                        .td(.a(.href("/invoices/\(invoice.id.uuidString)"), HTMLText.node(invoice.reference))))
                }))
    }

    static func list(_ state: WebState, _ context: WebContext, show: String) async throws -> Response {
        let today = state.today
        return try await WebVault.page(state, context, view: nil) { ledger, banner in
            var shown = ledger.invoices.reversed() as [Invoice]
            switch show {
            case "overdue": shown = shown.filter { (try? $0.status(on: today)) == .overdue }
            case "unpaid": shown = shown.filter { [.sent, .overdue].contains((try? $0.status(on: today)) ?? .draft) }
            default: break
            }
            let filters = [("all", "All"), ("unpaid", "Unpaid"), ("overdue", "Overdue")]
            return Layout.page(
                title: "Every invoice", area: .invoices, csrf: context.csrf, banner: banner,
                .group(
                    .p(.a(.href("/invoices"), .text("← Invoices dashboard"))),
                    .h1("Every invoice"),
                    .ul(
                        .class("tabs"),
                        .forEach(filters) { key, title in
                            .li(
                                .a(
                                    .href("/invoices/list?show=\(key)"),
                                    .if(key == show, .attribute(named: "aria-current", value: "page")),
                                    .text(title)))
                        }),
                    .if(
                        shown.isEmpty,
                        .p(
                            .text(
                                ledger.invoices.isEmpty
                                    ? "No invoices yet."
                                    : (show == "overdue" ? "No overdue invoices. All caught up." : "No invoices match.")
                            ),
                            " ", .a(.href("/invoices/new"), .text("New invoice")))),
                    .if(!shown.isEmpty, table(shown, ledger: ledger, today: today))
                ))
        }
    }

    static func detail(_ state: WebState, _ context: WebContext, id: UUID, banner: Layout.Banner? = nil) async throws
        -> Response
    {
        let today = state.today
        return try await WebVault.page(state, context, view: nil, banner: banner) { ledger, banner in
            let invoice = try existing(id, in: ledger)
            let currency = ledger.currency
            let money = { (value: Money) in currency.format(value) }
            let status = try invoice.status(on: today)
            let path = "/invoices/\(invoice.id.uuidString)"
            let client = ledger.client(of: invoice)
            let reminder = try? ledger.reminder(for: invoice, on: today)
            let rows = try ledger.statementLines(of: invoice).map { line in
                [line.label, line.detail, (line.role == .payment ? "−" : "") + money(line.amount)]
            }
            let unpaid = status == .sent || status == .overdue
            return Layout.page(
                title: invoice.reference, area: .invoices, csrf: context.csrf, banner: banner,
                .group(
                    .p(.a(.href("/invoices/list"), .text("← Every invoice"))),
                    .section(
                        .class("hero"),
                        .h1(HTMLText.node("\(invoice.reference) · \(client?.name ?? "(removed client)")")),
                        .p(.class("figure"), HTMLText.node(money(try invoice.total()))),
                        .p(chips(invoice, today: today)),
                        .p(.class("muted"), .text("Issued \(invoice.issued) · due \(invoice.due)"))),
                    .if(
                        status == .draft,
                        .form(
                            .action("\(path)/send"), .method(.post), Layout.csrfField(context.csrf),
                            .p(.class("hint"), .text("Sending freezes its lines and amounts.")),
                            .button(.type(.submit), .text("Mark as sent")))),
                    .if(
                        unpaid,
                        payForm(invoice, ledger: ledger, client: client, path: path, today: today, csrf: context.csrf)),
                    ReportHTML.table(caption: "Lines", header: ["Item", "", "Amount"], rows: rows),
                    .if(
                        !invoice.reminders.isEmpty,
                        .p(.text("Reminders sent: " + invoice.reminders.map(\.description).joined(separator: ", ")))),
                    .unwrap(invoice.notes) { .p(.class("note"), HTMLText.node($0)) },
                    .unwrap(reminder) { reminder in
                        .section(
                            .h2("A reminder to send"),
                            .p(.class("hint"), .text("Copy it into an email, then record that you sent it.")),
                            .p(.strong("Subject: "), HTMLText.node(reminder.subject)),
                            .element(
                                named: "pre",
                                nodes: [.class("message"), HTMLText.node(reminder.lines.joined(separator: "\n"))]),
                            .form(
                                .action("\(path)/remind"), .method(.post), Layout.csrfField(context.csrf),
                                .button(.type(.submit), .class("secondary"), .text("Record that I sent it"))))
                    },
                    .p(
                        .a(
                            .href("\(path)/invoice.html"), .attribute(named: "download", value: ""),
                            .text("Download the invoice to send (HTML)")),
                        .span(.class("hint"), .text(" — the file is not encrypted."))),
                    .if(
                        status == .draft,
                        .form(
                            .action("\(path)/delete"), .method(.post), Layout.csrfField(context.csrf),
                            .button(.type(.submit), .class("secondary"), .text("Delete this draft")))),
                    .if(
                        unpaid && invoice.payments.isEmpty,
                        .form(
                            .action("\(path)/void"), .method(.post), Layout.csrfField(context.csrf),
                            .button(.type(.submit), .class("secondary"), .text("Void this invoice"))))
                ))
        }
    }

    /// The screen's one primary action for a sent invoice: the whole outstanding amount by
    /// default, into the client's account unless another is chosen.
    private static func payForm(
        _ invoice: Invoice, ledger: Ledger, client: Client?, path: String, today: CalendarDate, csrf: String
    ) -> Node<HTML.BodyContext> {
        let outstanding = ledger.currency.decimalString((try? invoice.outstanding()) ?? .zero)
        let clientAccount = ledger.account(withID: client?.account)
        var options: [Node<HTML.BodyContext>] = [
            option(
                "default",
                clientAccount.map { "The client's account (\($0.name))" } ?? "No account (the client has none)")
        ]
        options += ledger.accounts.filter { $0.closed == nil && $0.kind == .asset }.map {
            option($0.id.uuidString, $0.name)
        }
        options.append(option("none", "No account"))
        return .form(
            .action("\(path)/pay"), .method(.post), Layout.csrfField(csrf),
            Layout.field(
                "Amount paid", name: "amount", value: outstanding, hint: "Less than the whole for a part payment.",
                extra: [.attribute(named: "inputmode", value: "decimal")]),
            Layout.field("Date paid", name: "date", type: .date, value: today.description),
            .div(
                .class("field"),
                .label(.for("f-into"), .text("Paid into")),
                .element(named: "select", nodes: [.attribute(named: "name", value: "into"), .id("f-into")] + options)),
            .button(.type(.submit), .text("Mark paid")))
    }

    private static func option(_ value: String, _ label: String) -> Node<HTML.BodyContext> {
        .element(named: "option", nodes: [.attribute(named: "value", value: value), HTMLText.node(label)])
    }

    /// The same self-contained HTML as `coffer invoice export`, as a download to send.
    private static func download(_ state: WebState, _ context: WebContext) async throws -> Response {
        let id = try invoiceID(context)
        let (name, page) = try await WebVault.withLedger(state, view: nil) { ledger in
            let invoice = try existing(id, in: ledger)
            return (
                invoice.reference,
                try InvoiceHTML.render(
                    invoice, client: ledger.client(of: invoice), sender: ledger.invoiceSender,
                    currency: ledger.currency)
            )
        }
        let safeName = String(name.map { $0.isLetter || $0.isNumber || $0 == "-" ? $0 : "_" })
        return Response(
            status: .ok,
            headers: [
                .contentType: "text/html; charset=utf-8",
                .contentDisposition: "attachment; filename=\"\(safeName).html\"",
            ],
            body: .init(byteBuffer: ByteBuffer(string: page)))
    }

    static let lineRows = 1...3

    static func newInvoice(_ state: WebState, _ context: WebContext, banner: Layout.Banner? = nil) async throws
        -> Response
    {
        let today = state.today
        return try await WebVault.page(state, context, view: nil, banner: banner) { ledger, banner in
            let clients = ledger.clients.sorted { $0.name < $1.name }
            return Layout.page(
                title: "New invoice", area: .invoices, csrf: context.csrf, banner: banner,
                .group(
                    .p(.a(.href("/invoices"), .text("← Invoices dashboard"))),
                    .h1("New invoice"),
                    .if(clients.isEmpty, .p(.text("An invoice goes to a client: add who you invoice first."))),
                    .if(
                        !clients.isEmpty,
                        .form(
                            .action("/invoices"), .method(.post), Layout.csrfField(context.csrf),
                            .div(
                                .class("field"),
                                .label(.for("f-client"), .text("Client")),
                                .element(
                                    named: "select",
                                    nodes: [.attribute(named: "name", value: "client"), .id("f-client")]
                                        + clients.map {
                                            option($0.id.uuidString, "\($0.name) (\($0.termsDays) days to pay)")
                                        })),
                            .forEach(Array(lineRows)) { row in
                                .fieldset(
                                    .element(named: "legend", text: "Line \(row)\(row == 1 ? "" : " (optional)")"),
                                    Layout.field("Description", name: "d\(row)", required: row == 1),
                                    Layout.field(
                                        "Quantity", name: "q\(row)", value: row == 1 ? "1" : nil, required: row == 1,
                                        extra: [.attribute(named: "inputmode", value: "decimal")]),
                                    Layout.field(
                                        "Unit price", name: "p\(row)", required: row == 1,
                                        extra: [.attribute(named: "inputmode", value: "decimal")]))
                            },
                            Layout.field("Tax rate (optional)", name: "tax", required: false, hint: "For example 20%."),
                            Layout.field(
                                "Issued", name: "issued", type: .date, value: today.description, required: false),
                            Layout.field(
                                "Due (optional)", name: "due", type: .date, required: false,
                                hint: "Empty: the client's payment terms after the issue date."),
                            Layout.field("Notes printed on it (optional)", name: "notes", required: false),
                            .div(
                                .class("field"),
                                .input(.type(.checkbox), .name("send"), .id("f-send"), .value("yes")),
                                .label(.for("f-send"), .class("check"), .text(" Mark it as sent now (freezes it)"))),
                            .button(.type(.submit), .text("Create invoice")))),
                    .section(
                        .h2("Add a client"),
                        .form(
                            .action("/clients"), .method(.post), Layout.csrfField(context.csrf),
                            Layout.field("Client name", name: "name"),
                            Layout.field("Email (optional)", name: "email", type: .email, required: false),
                            Layout.field(
                                "Days to pay", name: "terms", value: "30", required: false,
                                extra: [.attribute(named: "inputmode", value: "numeric")]),
                            .button(.type(.submit), .class(clients.isEmpty ? "" : "secondary"), .text("Add client"))))
                ))
        }
    }

    private static func create(_ state: WebState, _ context: WebContext) async throws -> Response {
        struct Form: Decodable {
            let client: String
            let d1: String, q1: String?, p1: String?
            let d2: String?, q2: String?, p2: String?
            let d3: String?, q3: String?, p3: String?
            let tax: String?, issued: String?, due: String?, notes: String?, send: String?
        }
        let form = try context.decodeForm(Form.self)
        let today = state.today
        let issued = try (form.issued ?? "").isEmpty ? today : AssetsPages.parsedDate(form.issued!)
        let due = try (form.due ?? "").isEmpty ? nil : AssetsPages.parsedDate(form.due!)
        let typed = [(form.d1, form.q1, form.p1), (form.d2 ?? "", form.q2, form.p2), (form.d3 ?? "", form.q3, form.p3)]
        return try await WebVault.change(
            state, context, back: "/invoices",
            again: { try await newInvoice(state, context, banner: $0) }
        ) { ledger in
            guard let clientID = UUID(uuidString: form.client),
                let client = ledger.clients.first(where: { $0.id == clientID })
            else { throw CofferError(.noMatch, "There is no such client.") }
            let items = try typed.filter { !$0.0.isEmpty || !($0.2 ?? "").isEmpty }.map {
                description, quantity, price in
                guard !description.isEmpty else {
                    throw CofferError(.invalidInput, "Each line with a price needs a description.")
                }
                return LineItem(
                    description: description,
                    quantity: try Quantity(parsing: (quantity ?? "").isEmpty ? "1" : quantity!),
                    unitPrice: try ledger.currency.parse(price ?? ""))
            }
            let tax = try (form.tax ?? "").isEmpty ? nil : GrowthRate(parsing: form.tax!).basisPoints
            let notes = (form.notes ?? "").isEmpty ? nil : form.notes
            let invoice = try ledger.createInvoice(
                for: client, items: items, taxBasisPoints: tax, issued: issued,
                due: due.map { .on($0) } ?? .clientTerms, notes: notes, send: form.send == "yes")
            return .init(
                text:
                    "Created \(invoice.reference) for \(client.name): \(ledger.currency.format(try invoice.total())) · \(try invoice.status(on: today).badge) · \(try invoice.relativeDue(on: today)).",
                undoable: true, location: "/invoices/\(invoice.id.uuidString)")
        }
    }
}
