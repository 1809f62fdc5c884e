import CofferKit
import FinanceCore
import Foundation
import Hummingbird
import Plot

/// Assets (seed 000): categories with their total and share, their accounts, and an account's
/// page with its history and every dated value, where updating the value is the one primary
/// action. Adding, closing and reopening are changes in `coffer log`, undone by Undo.
enum AssetsPages {
    static func add(to router: Router<WebContext>, _ state: WebState) {
        router.get("/assets") { _, context in try await list(state, context) }
        router.get("/accounts/:id") { _, context in try await detail(state, context, id: accountID(context)) }
        router.post("/accounts") { _, context in
            struct Form: Decodable {
                let name: String, category: String, kind: String, value: String?, date: String?
            }
            let today = state.today
            let form = try context.decodeForm(Form.self)
            return try await WebVault.change(
                state, context, back: "/assets",
                again: { try await list(state, context, banner: $0) }
            ) { ledger in
                let value = try (form.value ?? "").isEmpty ? nil : ledger.currency.parse(form.value!)
                let date = try (form.date ?? "").isEmpty ? today : CalendarDate(parsing: form.date!)
                let account = try ledger.addAccount(
                    name: form.name, category: form.category, kind: form.kind == "liability" ? .liability : .asset,
                    value: value.map { ($0, date) }, today: today)
                return .init(text: "Added \(account.name) (\(account.category)).", undoable: true)
            }
        }
        router.post("/accounts/:id/value") { _, context in
            struct Form: Decodable { let amount: String, date: String?, note: String?, confirm: String? }
            let id = try accountID(context)
            let today = state.today
            let form = try context.decodeForm(Form.self)
            let day = try (form.date ?? "").isEmpty ? today : parsedDate(form.date!)
            return try await WebVault.change(
                state, context, view: .recordingValue(on: day, today: today), back: "/accounts/\(id.uuidString)",
                again: { try await detail(state, context, id: id, banner: $0) }
            ) { ledger in
                let account = try existing(id, in: ledger)
                let amount = try ledger.currency.parse(form.amount)
                let note = (form.note ?? "").isEmpty ? nil : form.note
                try WebVault.ask(
                    EntryDoubts.value(
                        amount, previous: ledger.portfolio.value(of: account, on: day), account: account.name,
                        currency: ledger.currency) + EntryDoubts.future(day, today: today),
                    confirmed: form.confirm)
                try ledger.recordValue(of: account, amount: amount, on: day, note: note)
                return .init(
                    text: "\(account.name): \(ledger.currency.format(amount)) on \(day).", undoable: true)
            }
        }
        for (action, verb) in [("close", "Closed"), ("reopen", "Reopened")] {
            router.post("/accounts/:id/\(action)") { _, context in
                let id = try accountID(context)
                let today = state.today
                return try await WebVault.change(
                    state, context, back: "/accounts/\(id.uuidString)",
                    again: { try await detail(state, context, id: id, banner: $0) }
                ) { ledger in
                    let account = try existing(id, in: ledger)
                    if action == "close" {
                        try ledger.closeAccount(account, on: today)
                    } else {
                        try ledger.reopenAccount(account)
                    }
                    return .init(text: "\(verb) \(account.name).", undoable: true)
                }
            }
        }
    }

    static func accountID(_ context: WebContext) throws -> UUID {
        guard let text = context.parameters.get("id"), let id = UUID(uuidString: text) else {
            throw WebRefusal(status: .notFound, message: "There is no such account.")
        }
        return id
    }

    static func existing(_ id: UUID, in ledger: Ledger) throws -> Account {
        guard let account = ledger.account(withID: id) else {
            throw WebRefusal(status: .notFound, message: "There is no such account.")
        }
        return account
    }

    static func parsedDate(_ text: String) throws -> CalendarDate {
        do {
            return try CalendarDate(parsing: text)
        } catch {
            throw WebRefusal(status: .badRequest, message: "Enter the date as YYYY-MM-DD. Nothing was changed.")
        }
    }

    static func list(_ state: WebState, _ context: WebContext, banner: Layout.Banner? = nil) async throws -> Response {
        let today = state.today
        return try await WebVault.page(state, context, view: .overview(on: today), banner: banner) { ledger, banner in
            let report = try ledger.overview(on: today)
            let money = { (value: Money) in report.currency.format(value) }
            let categories = Set(ledger.accounts.map(\.category)).sorted()
            return Layout.page(
                title: "Assets", area: .assets, csrf: context.csrf, banner: banner,
                .group(
                    .h1("Assets"),
                    .p(.class("muted"), HTMLText.node("Net worth \(money(report.totals.netWorth)) on \(today)")),
                    .if(
                        report.accounts.isEmpty,
                        .p("No accounts yet: add what you own (a current account, savings, a home) and what you owe.")),
                    .forEach(report.distribution) { category in
                        .section(
                            .h2(HTMLText.node(category.name)),
                            .p(.class("muted"), HTMLText.node(categoryLine(category, money: money))),
                            accountTable(
                                report.accounts.filter { $0.account.category == category.name && $0.isOpen },
                                money: money))
                    },
                    .if(
                        report.accounts.contains { !$0.isOpen },
                        .section(.h2("Closed"), accountTable(report.accounts.filter { !$0.isOpen }, money: money))),
                    .section(
                        .id("add"),
                        .h2("Add an account"),
                        .form(
                            .action("/accounts"), .method(.post),
                            Layout.csrfField(context.csrf),
                            Layout.field("Name", name: "name"),
                            Layout.field(
                                "Category", name: "category", hint: "For example Cash, Investments, Property.",
                                extra: [.attribute(named: "list", value: "categories")]),
                            categoryChoices(categories),
                            .fieldset(
                                .element(named: "legend", text: "It is"),
                                .input(.type(.radio), .name("kind"), .id("k-asset"), .value("asset"), .checked(true)),
                                .label(.for("k-asset"), "something I own"),
                                .input(.type(.radio), .name("kind"), .id("k-liability"), .value("liability")),
                                .label(.for("k-liability"), "something I owe")),
                            Layout.field("Value now (optional)", name: "value", required: false),
                            .button(.type(.submit), .text("Add account"))
                        ))
                ))
        }
    }

    /// The categories already used, offered as the field is typed in.
    private static func categoryChoices(_ names: [String]) -> Node<HTML.FormContext> {
        let options: [Node<HTML.FormContext>] = names.map { name in
            .element(
                named: "option",
                nodes: [Node<HTML.FormContext>.attribute(named: "value", value: HTMLText.attribute(name))])
        }
        return .element(named: "datalist", nodes: [Node<HTML.FormContext>.id("categories")] + options)
    }

    private static func categoryLine(_ category: Portfolio.CategoryTotal, money: (Money) -> String) -> String {
        let owed = category.kind == .liability ? " owed" : ""
        let accounts = "\(category.accountCount) account\(category.accountCount == 1 ? "" : "s")"
        return "\(money(category.total))\(owed) · \(PerMille.text(category.sharePerMille)) · \(accounts)"
    }

    private static func accountTable(_ lines: [OverviewReport.AccountLine], money: @escaping (Money) -> String)
        -> Node<HTML.BodyContext>
    {
        .table(
            .thead(.tr(.th("Account"), .th(.class("amount"), "Value"))),
            .tbody(
                .forEach(lines) { line in
                    .tr(
                        .td(
                            .a(.href("/accounts/\(line.account.id.uuidString)"), HTMLText.node(line.account.name)),
                            .if(line.account.kind == .liability, .span(.class("muted"), " (owed)"))),
                        .td(.class("amount"), HTMLText.node(line.value.map(money) ?? "no value yet")))
                }))
    }

    static func detail(_ state: WebState, _ context: WebContext, id: UUID, banner: Layout.Banner? = nil) async throws
        -> Response
    {
        let today = state.today
        return try await WebVault.page(state, context, view: nil, banner: banner) { ledger, banner in
            let account = try existing(id, in: ledger)
            let money = { (value: Money) in ledger.currency.format(value) }
            let updates = ledger.portfolio.updates(of: account).sorted {
                ($0.date, $0.sequence) > ($1.date, $1.sequence)
            }
            let current = ledger.portfolio.value(of: account, on: today)
            var monthly: [(month: BudgetMonth, value: Int64)] = []
            for update in updates.reversed() {
                let month = BudgetMonth(containing: update.date)
                if monthly.last?.month == month { monthly.removeLast() }
                monthly.append((month, update.amount.minorUnits))
            }
            let path = "/accounts/\(account.id.uuidString)"
            return Layout.page(
                title: account.name, area: .assets, csrf: context.csrf, banner: banner,
                .group(
                    .p(.a(.href("/assets"), .text("← Assets"))),
                    .h1(HTMLText.node(account.name)),
                    .p(
                        .class("muted"),
                        HTMLText.node(
                            "\(account.category) · \(account.kind == .liability ? "owed" : "owned")\(account.closed.map { " · closed \($0)" } ?? "")"
                        )),
                    .section(
                        .class("hero"),
                        .p(.class("figure"), HTMLText.node(current.map(money) ?? "No value yet")),
                        .p(.class("muted"), .text("On \(today)")),
                        .if(
                            account.closed == nil,
                            .form(
                                .action("\(path)/value"), .method(.post),
                                Layout.csrfField(context.csrf),
                                Layout.field(
                                    account.kind == .liability ? "Amount owed now" : "Value now", name: "amount",
                                    hint: "For example 1234.56",
                                    extra: [.attribute(named: "inputmode", value: "decimal")]),
                                Layout.field("Date", name: "date", type: .date, value: today.description),
                                Layout.field("Note (optional)", name: "note", required: false),
                                .button(.type(.submit), .text("Update value"))
                            ))
                    ),
                    .if(
                        monthly.count >= 2,
                        ReportHTML.lineChart(
                            caption: "\(account.name)'s value at the last update of each month",
                            points: monthly, format: { money(Money(minorUnits: $0)) })),
                    .section(
                        .h2("Every value"),
                        .if(updates.isEmpty, .p("No value recorded yet.")),
                        .if(
                            !updates.isEmpty,
                            .table(
                                .thead(.tr(.th("Date"), .th(.class("amount"), "Value"), .th("Note"))),
                                .tbody(
                                    .forEach(updates) { update in
                                        .tr(
                                            .td(.text(update.date.description)),
                                            .td(.class("amount"), HTMLText.node(money(update.amount))),
                                            .td(
                                                HTMLText.node(
                                                    update.note ?? (update.movedBy != nil ? "moved by an entry" : ""))))
                                    })))
                    ),
                    .form(
                        .action("\(path)/\(account.closed == nil ? "close" : "reopen")"), .method(.post),
                        Layout.csrfField(context.csrf),
                        .button(
                            .type(.submit), .class("secondary"),
                            .text(account.closed == nil ? "Close this account" : "Reopen this account")))
                ))
        }
    }
}
