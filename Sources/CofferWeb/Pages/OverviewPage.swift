import CofferKit
import FinanceCore
import Foundation
import Hummingbird
import Plot

/// Overview (seeds 000/001): the net-worth hero with its date, the change since last month, the
/// one-year projection (assumptions, not guarantees), where it sits (a chart and its figures),
/// the top assets, the month's budget left and the last backup's age. `?as-of=DATE`.
enum OverviewPage {
    static func add(to router: Router<WebContext>, _ state: WebState) {
        router.get("/") { request, context in
            let asOfText = request.uri.queryParameters["as-of"].map(String.init)
            let day: CalendarDate
            do {
                day = try asOfText.map { try CalendarDate(parsing: $0) } ?? state.today
            } catch {
                throw WebRefusal(
                    status: .badRequest, message: "Enter the date as YYYY-MM-DD: '\(asOfText ?? "")' is not one.")
            }
            let now = Date(), today = state.today
            // Backup ages count whole days from now: the same data serves for the minute.
            let key = "overview \(day) \(today) \(Int(now.timeIntervalSince1970) / 60)"
            return try await WebVault.page(
                state, context, key: key, view: .overview(on: day), compute: { try $0.overview(on: day, now: now) }
            ) { report, banner in
                Layout.page(
                    title: "Overview", area: .overview, csrf: context.csrf, banner: banner,
                    content(report, today: today))
            }
        }
    }

    static func content(_ report: OverviewReport, today: CalendarDate) -> Node<HTML.BodyContext> {
        let money = { (value: Money) in report.currency.format(value) }
        guard !report.isEmpty else {
            return .group(
                .h1("Overview"),
                .div(
                    .class("card"),
                    .h2("Nothing here yet"),
                    .p("Add what you own and what you owe, and Coffer shows your net worth here."),
                    .p(.a(.href("/assets#add"), .text("Add your first account")))))
        }
        return .group(
            .section(
                .class("hero"), .attribute(named: "aria-labelledby", value: "worth"),
                .h1(.id("worth"), "Net worth"),
                .p(.class("figure"), HTMLText.node(money(report.totals.netWorth))),
                .p(
                    .class("muted"),
                    .text(report.asOf == today ? "As of today, \(report.asOf)" : "As of \(report.asOf)")),
                .p(changeNode(report.changeSinceLastMonth, money: money)),
                .p(
                    HTMLText.node(
                        "In \(report.projectionYears) year: \(money(report.projected)) at your growth rates. "),
                    .strong("Assumptions, not guarantees."))
            ),
            .form(
                .class("inline"), .action("/"), .method(.get),
                .div(
                    .class("field"),
                    .label(.for("f-as-of"), .text("Show another day")),
                    .input(.type(.date), .name("as-of"), .id("f-as-of"), .value(report.asOf.description))),
                .div(.class("field"), .button(.type(.submit), .class("secondary"), .text("Show")))
            ),
            .div(
                .class("cards"),
                budgetCard(report, money: money),
                backupCard(report),
                .unwrap(report.receivables) { receivables in
                    .div(
                        .class("card"), .h2("Invoices"),
                        .p(HTMLText.node("\(money(receivables.outstanding)) outstanding")),
                        .if(
                            receivables.overdue > .zero,
                            .p(.strong(HTMLText.node("\(money(receivables.overdue)) overdue")))))
                }
            ),
            .if(
                !report.distribution.isEmpty,
                .section(
                    .h2("Where it sits"),
                    ReportHTML.barChart(
                        id: "distribution",
                        caption: "Each category's total on \(report.asOf); amounts owed are listed without a bar.",
                        rows: report.distribution.map {
                            (
                                $0.name, $0.kind == .asset ? $0.total.minorUnits : 0,
                                "\(money($0.total))\($0.kind == .liability ? " owed" : "")"
                            )
                        }),
                    ReportHTML.table(
                        caption: "Categories", header: ["Category", "Total", "Share"],
                        rows: report.distribution.map {
                            [
                                $0.name + ($0.kind == .liability ? " (owed)" : ""), money($0.total),
                                PerMille.text($0.sharePerMille),
                            ]
                        })
                )),
            .if(
                !report.topAssets.isEmpty,
                .section(
                    .h2("Top assets"),
                    .table(
                        .caption("The largest open assets"),
                        .thead(.tr(.th("Account"), .th("Category"), .th(.class("amount"), "Value"))),
                        .tbody(
                            .forEach(report.topAssets) { line in
                                .tr(
                                    .td(
                                        .a(
                                            .href("/accounts/\(line.account.id.uuidString)"),
                                            HTMLText.node(line.account.name))),
                                    .td(HTMLText.node(line.account.category)),
                                    .td(.class("amount"), HTMLText.node(line.value.map(money) ?? "")))
                            })
                    ))
            )
        )
    }

    private static func changeNode(_ change: Money?, money: (Money) -> String) -> Node<HTML.BodyContext> {
        guard let change else { return .text("No change to show yet: the vault has less than a month of history.") }
        if change == .zero { return .text("No change since last month.") }
        let word = change.isNegative ? "Down" : "Up"
        return .span(
            .class(change.isNegative ? "down" : "up"),
            HTMLText.node("\(word) \(money(change.isNegative ? change.negated : change)) since last month"))
    }

    private static func budgetCard(_ report: OverviewReport, money: (Money) -> String) -> Node<HTML.BodyContext> {
        guard let budget = report.budget else {
            return .div(
                .class("card"), .h2("This month"),
                .p("No budget yet."), .p(.a(.href("/budget"), .text("Log a spend or add your income"))))
        }
        return .div(
            .class("card"), .h2(.text(budget.month.title)),
            .p(.strong(HTMLText.node("\(money(budget.remaining)) left"))),
            .p(HTMLText.node("\(money(budget.income)) in · \(money(budget.spent)) spent")),
            .p(.a(.href("/budget?month=\(budget.month)"), .text("See the month"))))
    }

    private static func backupCard(_ report: OverviewReport) -> Node<HTML.BodyContext> {
        let latest = report.backups.compactMap { backup in backup.days.map { (backup, $0) } }.min { $0.1 < $1.1 }
        return .div(
            .class("card"), .h2("Backups"),
            .p(
                .text(
                    latest.map { "Last verified backup: \($0.0.ageText ?? "")." }
                        ?? "No verified backup yet.")),
            .if(latest.map { $0.0.isStale } ?? true, .p(.strong("Make a backup soon."))))
    }
}
