import CofferKit
import FinanceCore
import Foundation
import Hummingbird
import Plot

/// Reports: a period summed up as `coffer report year` does it, then the sections of `coffer
/// report html` (net worth at month ends, income and spending, spending by category, invoices),
/// each chart with the table of its figures; the same report as a file to keep.
enum ReportsPage {
    static func add(to router: Router<WebContext>, _ state: WebState) {
        router.get("/reports") { request, context in
            let query = request.uri.queryParameters
            let range = try range(
                from: query["from"].map(String.init), to: query["to"].map(String.init),
                year: query["year"].map(String.init), today: state.today)
            return try await show(state, context, range: range)
        }
        router.get("/reports/report.html") { request, context in
            let query = request.uri.queryParameters
            let today = state.today
            let range = try range(
                from: query["from"].map(String.init), to: query["to"].map(String.init),
                year: query["year"].map(String.init), today: today)
            let page = try await WebVault.withLedger(state, view: nil) {
                try ReportHTML.render($0, range: range.months, today: today)
            }
            return Response(
                status: .ok,
                headers: [
                    .contentType: "text/html; charset=utf-8",
                    .contentDisposition:
                        "attachment; filename=\"coffer-report-\(range.months.first)-\(range.months.last).html\"",
                ],
                body: .init(byteBuffer: ByteBuffer(string: page)))
        }
    }

    /// The months shown, and the calendar year when one was asked for.
    struct Period {
        let months: ReportRange
        let year: Int?

        var query: String { year.map { "year=\($0)" } ?? "from=\(months.first)&to=\(months.last)" }
    }

    /// `?year=YYYY`, or `?from=YYYY-MM&to=YYYY-MM`, else the 12 months ending with this one.
    static func range(from: String?, to: String?, year: String?, today: CalendarDate) throws -> Period {
        do {
            if let year {
                guard let number = Int(year), (1...9998).contains(number) else {
                    throw CofferError(.invalidInput, "'\(year)' is not a year.")
                }
                let first = BudgetMonth(containing: try CalendarDate(year: number, month: 1, day: 1))
                return Period(months: try ReportRange(first: first, last: first.adding(months: 11)), year: number)
            }
            let last = try to.map { try BudgetMonth(parsing: $0) } ?? BudgetMonth(containing: today)
            let first = try from.map { try BudgetMonth(parsing: $0) } ?? last.adding(months: -11)
            return Period(months: try ReportRange(first: first, last: last), year: nil)
        } catch let error as CofferError {
            throw WebRefusal(status: .badRequest, message: "\(error.message) Give months as YYYY-MM.")
        } catch {
            throw WebRefusal(status: .badRequest, message: "Give months as YYYY-MM and a year as YYYY.")
        }
    }

    static func show(_ state: WebState, _ context: WebContext, range period: Period) async throws -> Response {
        let today = state.today
        return try await WebVault.page(state, context, view: nil) { ledger, banner in
            let range = period.months
            let summary = try ledger.summary(
                of: range, title: period.year.map { "\($0)" }, today: today)
            let currency = ledger.currency
            let money = { (value: Money) in currency.format(value) }
            let change = summary.netWorthChange
            let thisYear = today.year
            let choices: [(String, String, Bool)] = [
                (
                    "/reports", "Last 12 months",
                    period.year == nil && range.last == BudgetMonth(containing: today)
                        && range.months.count == 12
                ),
                ("/reports?year=\(thisYear)", "\(thisYear)", period.year == thisYear),
                ("/reports?year=\(thisYear - 1)", "\(thisYear - 1)", period.year == thisYear - 1),
            ]
            let title = period.year.map { "Year \($0)" } ?? "\(range.first.title) to \(range.last.title)"
            return Layout.page(
                title: "Reports, \(title)", area: .reports, csrf: context.csrf, banner: banner,
                .group(
                    .h1(.text("Reports: \(title)")),
                    .ul(
                        .class("tabs"),
                        .forEach(choices) { path, label, current in
                            .li(
                                .a(
                                    .href(path), .if(current, .attribute(named: "aria-current", value: "page")),
                                    .text(label)))
                        }),
                    .form(
                        .class("inline"), .action("/reports"), .method(.get),
                        Layout.field(
                            "From", name: "from", value: range.first.description, hint: "YYYY-MM",
                            extra: [.attribute(named: "inputmode", value: "numeric")]),
                        Layout.field(
                            "To", name: "to", value: range.last.description, hint: "YYYY-MM",
                            extra: [.attribute(named: "inputmode", value: "numeric")]),
                        .button(.type(.submit), .class("secondary"), .text("Show"))),
                    .section(
                        .class("hero"),
                        .h2("The period"),
                        ReportHTML.table(
                            caption: "\(range.first.title) to \(range.last.title)", header: ["", "Amount"],
                            rows: [
                                ["Income", money(summary.income)], ["Spent", money(summary.spent)],
                                ["Net", money(summary.net)], ["Set aside", money(summary.savings)],
                                ["Kept of income", summary.savingsRate.map(PerMille.text) ?? "no income"],
                                [
                                    "Net worth",
                                    "\(money(summary.netWorthStart)) → \(money(summary.netWorthEnd)) (\(currency.formatSigned(change.amount))\(change.perMille.map { ", " + PerMille.text($0) } ?? ""))",
                                ],
                            ]
                                + (summary.invoiced != .zero || summary.received != .zero
                                    ? [["Invoiced", money(summary.invoiced)], ["Received", money(summary.received)]]
                                    : [])),
                        .if(
                            !summary.topCategories.isEmpty,
                            ReportHTML.table(
                                caption: "Spent most on", header: ["Category", "Spent"],
                                rows: summary.topCategories.map { [$0.name, money($0.total)] }))),
                    try ReportHTML.sections(ledger, range: range, today: today),
                    .p(
                        .a(
                            .href("/reports/report.html?\(period.query)"),
                            .attribute(named: "download", value: "report"),
                            .text("Download this report (HTML)")),
                        .span(.class("hint"), .text(" — the file is not encrypted.")))
                ))
        }
    }
}
