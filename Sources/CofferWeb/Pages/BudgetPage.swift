import CofferKit
import FinanceCore
import Foundation
import Hummingbird
import Plot

/// Budget (seed 002): the month view — what is left, income against spending, the entries by
/// day — with Needs / Wants / Savings as tabs, goals with their progress, a month switcher, and
/// the quick entry of a spend, an earning or a saving, matched by prefix as the CLI does.
enum BudgetPage {
    static func add(to router: Router<WebContext>, _ state: WebState) {
        router.get("/budget") { request, context in
            let query = request.uri.queryParameters
            return try await show(
                state, context, month: query["month"].map(String.init), tab: query["tab"].map(String.init))
        }
        router.post("/budget/entries") { _, context in
            struct Form: Decodable {
                let kind: String, amount: String, what: String, date: String?, note: String?, confirm: String?
            }
            let form = try context.decodeForm(Form.self)
            let today = state.today
            let day = try (form.date ?? "").isEmpty ? today : AssetsPages.parsedDate(form.date!)
            let month = BudgetMonth(containing: day)
            return try await WebVault.change(
                state, context, view: .recordingEntry(on: day, today: today), back: "/budget?month=\(month)",
                again: { try await show(state, context, month: month.description, tab: nil, banner: $0) }
            ) { ledger in
                let amount = try ledger.currency.parse(form.amount)
                let note = (form.note ?? "").isEmpty ? nil : form.note
                try WebVault.ask(EntryDoubts.future(day, today: today), confirmed: form.confirm)
                let transaction: Transaction
                let label: String
                switch form.kind {
                case "earn":
                    let source = try ledger.incomeSource(named: form.what)
                    transaction = try ledger.earn(amount, from: source, on: day, note: note)
                    label = source.name
                case "save":
                    let goal = try ledger.goal(named: form.what)
                    transaction = try ledger.save(amount, towards: goal, on: day, note: note)
                    label = goal.name
                default:
                    let category = try ledger.category(named: form.what, includeHidden: false)
                    transaction = try ledger.spend(amount, in: category, on: day, note: note)
                    label = "\(category.name) (\(category.type.title))"
                }
                let verb = form.kind == "earn" ? "Earned" : (form.kind == "save" ? "Saved" : "Spent")
                let summary = try ledger.budget.summary(for: BudgetMonth(containing: transaction.date))
                return .init(
                    text:
                        "\(verb) \(ledger.currency.format(transaction.amount)) · \(label) · \(transaction.date). \(ledger.currency.format(summary.remaining)) left in \(summary.month.title).",
                    undoable: true)
            }
        }
    }

    static func show(
        _ state: WebState, _ context: WebContext, month monthText: String?, tab: String?,
        banner: Layout.Banner? = nil
    ) async throws -> Response {
        let today = state.today
        let month: BudgetMonth
        do {
            month = try monthText.map { try BudgetMonth(parsing: $0) } ?? BudgetMonth(containing: today)
        } catch {
            throw WebRefusal(
                status: .badRequest, message: "Enter the month as YYYY-MM: '\(monthText ?? "")' is not one.")
        }
        let type = BudgetType.allCases.first { $0.rawValue == tab } ?? .needs
        let day = month.contains(today) ? today : month.last
        return try await WebVault.page(state, context, view: .recordingEntry(on: day, today: today), banner: banner) {
            ledger, banner in
            let summary = try ledger.budget.summary(for: month)
            return Layout.page(
                title: "Budget, \(month.title)", area: .budget, csrf: context.csrf, banner: banner,
                content(ledger, summary, type: type, day: day, csrf: context.csrf))
        }
    }

    private static func content(
        _ ledger: Ledger, _ summary: MonthSummary, type: BudgetType, day: CalendarDate, csrf: String
    ) -> Node<HTML.BodyContext> {
        let money = { (value: Money) in ledger.currency.format(value) }
        let month = summary.month
        let previous = BudgetMonth(containing: month.first.adding(days: -1))
        let next = BudgetMonth(containing: month.last.adding(days: 1))
        let byDay = Dictionary(grouping: summary.transactions, by: \.date).sorted { $0.key > $1.key }
        let categories = summary.categories.filter { $0.category.type == type }
        return .group(
            .nav(
                .attribute(named: "aria-label", value: "Months"), .class("inline"),
                .a(.href("/budget?month=\(previous)"), .text("← \(previous.title)")),
                .a(.href("/budget?month=\(next)"), .text("\(next.title) →"))),
            .section(
                .class("hero"), .attribute(named: "aria-labelledby", value: "left"),
                .h1(.id("left"), .text("Left in \(month.title)")),
                .p(.class("figure"), HTMLText.node(money(summary.remaining))),
                .p(HTMLText.node("\(money(summary.income)) in · \(money(summary.spent)) spent"))),
            .section(
                .h2("Log an entry"),
                .form(
                    .action("/budget/entries"), .method(.post),
                    Layout.csrfField(csrf),
                    .fieldset(
                        .element(named: "legend", text: "What happened"),
                        .input(.type(.radio), .name("kind"), .id("e-spend"), .value("spend"), .checked(true)),
                        .label(.for("e-spend"), "Spent"),
                        .input(.type(.radio), .name("kind"), .id("e-earn"), .value("earn")),
                        .label(.for("e-earn"), "Earned"),
                        .input(.type(.radio), .name("kind"), .id("e-save"), .value("save")),
                        .label(.for("e-save"), "Saved")),
                    Layout.field(
                        "Amount", name: "amount", hint: "For example 12.50",
                        extra: [.attribute(named: "inputmode", value: "decimal")]),
                    Layout.field(
                        "Category, income source or goal", name: "what",
                        hint: "The first letters are enough, as in the CLI: gro for Groceries."),
                    Layout.field("Date", name: "date", type: .date, value: day.description),
                    Layout.field("Note (optional)", name: "note", required: false),
                    .button(.type(.submit), .text("Log it"))
                )),
            .section(
                .h2("By type"),
                .ul(
                    .class("tabs"),
                    .forEach(BudgetType.allCases) { each in
                        .li(
                            .a(
                                .href("/budget?month=\(month)&tab=\(each.rawValue)#types"),
                                .if(each == type, .attribute(named: "aria-current", value: "page")),
                                HTMLText.node("\(each.title) \(money(summary.total(of: each)))")))
                    }),
                .div(
                    .id("types"),
                    .if(
                        categories.isEmpty,
                        .p(.text("Nothing in \(type.title) in \(month.title) yet: log a spend above."))),
                    .if(
                        !categories.isEmpty,
                        .table(
                            .caption(.text("\(type.title) in \(month.title)")),
                            .thead(
                                .tr(.th("Category"), .th(.class("amount"), "Spent"), .th(.class("amount"), "Entries"))),
                            .tbody(
                                .forEach(categories) { line in
                                    .tr(
                                        .td(HTMLText.node(line.category.name)),
                                        .td(.class("amount"), HTMLText.node(money(line.total))),
                                        .td(.class("amount"), .text("\(line.count)")))
                                }))))),
            .if(
                !summary.goals.isEmpty,
                .section(
                    .h2("Goals"),
                    .forEach(summary.goals) { line in
                        .div(
                            .class("field"),
                            .p(
                                .strong(HTMLText.node(line.goal.name)), " ",
                                HTMLText.node(
                                    "\(money(line.total)) saved\(line.goal.target.map { " of \(money($0))" } ?? "") · \(money(line.thisMonth)) this month"
                                )),
                            .unwrap(line.goal.target) { target in
                                .element(
                                    named: "progress",
                                    nodes: [
                                        .attribute(named: "max", value: "\(max(1, target.minorUnits))"),
                                        .attribute(
                                            named: "value",
                                            value: "\(min(max(0, line.total.minorUnits), target.minorUnits))"),
                                        .attribute(
                                            named: "aria-label", value: HTMLText.attribute("\(line.goal.name) progress")
                                        ),
                                    ])
                            })
                    })),
            .section(
                .h2("Entries"),
                .if(
                    byDay.isEmpty,
                    .p(
                        .text(
                            "No entries in \(month.title) yet. Log what you spend and earn, and this month's picture builds up here."
                        ))),
                .forEach(byDay) { date, entries in
                    .group(
                        .element(named: "h3", text: date.description),
                        .table(
                            .tbody(
                                .forEach(entries.sorted { $0.sequence > $1.sequence }) { entry in
                                    .tr(
                                        .td(HTMLText.node(ledger.label(of: entry))),
                                        .td(HTMLText.node(entry.note ?? "")),
                                        .td(
                                            .class("amount"),
                                            HTMLText.node(
                                                entry.type == .income
                                                    ? "+\(money(entry.amount))" : "−\(money(entry.amount))")))
                                })))
                })
        )
    }
}
