import FinanceCore
import Foundation
import Plot

/// `coffer report html`: one self-contained page — the overview, net worth and spending charts
/// as inline SVG, and the tables of the text reports — built with Plot's typed HTML, so every
/// text from the vault is escaped by construction. No script, no font, no image or style sheet
/// is fetched: it opens offline and prints (a print style sheet drops the colours and keeps each
/// table on its page). Every chart has a caption that says what it shows and the table after it
/// gives every figure.
public enum ReportHTML {
    public static func render(_ ledger: Ledger, range: ReportRange, today: CalendarDate) throws -> String {
        let period = "\(range.first.title) to \(range.last.title)"
        let page = HTML(
            .lang(.english),
            .head(
                .encoding(.utf8),
                .element(named: "title", text: "Coffer report, \(period)"),
                .meta(.name("viewport"), .content("width=device-width, initial-scale=1")),
                .meta(.name("generator"), .content("Coffer")),
                .style(styleSheet)
            ),
            .body(
                .header(
                    .h1("Coffer report"),
                    .p(
                        .class("period"),
                        HTMLText.node("\(period) · made \(today) · plaintext: keep it as safe as the vault"))
                ),
                try sections(ledger, range: range, today: today),
                .footer(
                    .p(
                        "Made by Coffer from the vault on \(today). Figures agree with coffer budget and coffer overview."
                    ))
            )
        )
        return page.render(indentedBy: .spaces(1))
    }

    /// The report's sections — the overview, net worth at month ends, income and spending,
    /// spending by category, invoices — as the file and the web app's Reports page show them.
    package static func sections(_ ledger: Ledger, range: ReportRange, today: CalendarDate) throws
        -> Node<HTML.BodyContext>
    {
        let currency = ledger.currency
        let money = { (value: Money) in currency.format(value) }
        let totals = try ledger.netWorth.totals(on: today)
        let cashflow = try ledger.cashflow(range)
        let grid = try ledger.categoryGrid(range)
        let worth = try ledger.netWorthReport(range, today: today)
        let invoiceMonths = try ledger.invoiceMonths(range)
        let clients = try ledger.clientPayments(range, today: today)
        let distribution = try ledger.netWorth.distribution(on: today)
        let period = "\(range.first.title) to \(range.last.title)"
        return .group(
            .section(
                .id("overview"),
                .h2("Overview on \(today.description)"),
                .table(
                    .class("summary"),
                    .tbody(
                        summaryRow("Net worth", money(totals.netWorth)),
                        summaryRow("Assets", money(totals.assets)),
                        summaryRow("Owed", money(totals.liabilities)),
                        .if(
                            totals.receivable != .zero,
                            summaryRow("Of which invoices receivable", money(totals.receivable)))
                    )
                ),
                .if(
                    !distribution.isEmpty,
                    .group(
                        barChart(
                            id: "distribution",
                            caption:
                                "Where net worth sits on \(today): each category's total, owed amounts listed without a bar.",
                            rows: distribution.map {
                                (
                                    $0.name, $0.kind == .asset ? $0.total.minorUnits : 0,
                                    "\(money($0.total))\($0.kind == .liability ? " owed" : "")"
                                )
                            }),
                        table(
                            caption: "Where it sits",
                            header: ["Category", "Total", "Share"],
                            rows: distribution.map {
                                [$0.name, money($0.total), PerMille.text($0.sharePerMille)]
                            })
                    )
                )
            ),
            .section(
                .id("networth"),
                .h2("Net worth at each month end"),
                lineChart(
                    caption: worth.months.first.map { first in
                        "Net worth at each month end, \(period): from \(money(first.netWorth)) to \(money(worth.months.last!.netWorth))."
                    } ?? "",
                    points: worth.months.map { ($0.month, $0.netWorth.minorUnits) },
                    format: { money(Money(minorUnits: $0)) }),
                table(
                    caption: "Net worth at each month end",
                    header: ["Month end", "Net worth", "Change", "%"],
                    rows: worth.months.map {
                        [
                            $0.date.description, money($0.netWorth),
                            $0.change.map { currency.formatSigned($0.amount) } ?? "",
                            $0.change?.perMille.map(PerMille.text) ?? "",
                        ]
                    }),
                .if(
                    !worth.accounts.isEmpty,
                    table(
                        caption: "Each account over the period",
                        header: ["Account", "Category", "Start", "End", "Change", "%"],
                        // As the CLI shows them: a liability negative, so paying it down is a rise.
                        rows: try worth.accounts.map { line in
                            let kind = line.account.kind
                            let change = try line.change.counted(as: kind)
                            return [
                                line.account.name, line.account.category,
                                line.values.first.flatMap { $0 }.map { money(kind.counted($0)) } ?? "—",
                                line.values.last.flatMap { $0 }.map { money(kind.counted($0)) } ?? "—",
                                currency.formatSigned(change.amount),
                                change.perMille.map(PerMille.text) ?? "",
                            ]
                        }))
            ),
            .section(
                .id("cashflow"),
                .h2("Income and spending"),
                barChart(
                    id: "spending",
                    caption: "Spending each month, \(period).",
                    rows: cashflow.map { ($0.month.shortTitle, $0.spent.minorUnits, money($0.spent)) }),
                table(
                    caption: "Income, spending and the net each month",
                    header: ["Month", "Income", "Spent", "Net", "Set aside"],
                    rows: cashflow.map {
                        [$0.month.shortTitle, money($0.income), money($0.spent), money($0.net), money($0.savings)]
                    })
            ),
            .section(
                .id("categories"),
                .h2("Spending by category"),
                table(
                    caption: "Each category's spending each month",
                    header: ["Category"] + grid.months.map(\.shortTitle) + ["Total"],
                    rows: grid.rows.map { [$0.name] + $0.amounts.map(money) + [money($0.total)] }
                        + grid.subtotals.map {
                            ["\($0.type.title) total"] + $0.amounts.map(money) + [money($0.total)]
                        }
                        + [["Spent"] + grid.spent.map(money) + [money(grid.total)]])
            ),
            .if(
                ledger.invoices.contains { $0.sentOn != nil },
                .section(
                    .id("invoices"),
                    .h2("Invoices"),
                    table(
                        caption: "Invoiced and received each month",
                        header: ["Month", "Invoiced", "Received"],
                        rows: invoiceMonths.map { [$0.month.shortTitle, money($0.invoiced), money($0.received)] }),
                    table(
                        caption: "By client, slowest to pay first",
                        header: ["Client", "Invoices", "Invoiced", "Owed", "Average days to pay"],
                        rows: clients.map {
                            [
                                $0.client, "\($0.invoices)", money($0.invoiced), money($0.outstanding),
                                $0.averageDaysToPay.map { "\($0)" } ?? "none paid",
                            ]
                        })
                )
            )
        )
    }

    /// A table wider than a phone scrolls inside its own region, which the keyboard can reach,
    /// and the page itself never scrolls sideways.
    static func wide(_ label: String, _ table: Node<HTML.BodyContext>) -> Node<HTML.BodyContext> {
        .div(
            .class("wide"), .attribute(named: "tabindex", value: "0"), .attribute(named: "role", value: "region"),
            .attribute(named: "aria-label", value: HTMLText.attribute(label)), table)
    }

    static func summaryRow(_ label: String, _ value: String) -> Node<HTML.TableContext> {
        .tr(.th(HTMLText.node(label)), .td(.class("amount"), HTMLText.node(value)))
    }

    /// A table with every figure; one of more than three columns scrolls in its own region
    /// when wider than the screen.
    package static func table(caption: String, header: [String], rows: [[String]]) -> Node<HTML.BodyContext> {
        let table: Node<HTML.BodyContext> = .table(
            .caption(HTMLText.node(caption)),
            .thead(.tr(.group(header.map { .th(HTMLText.node($0)) }))),
            .tbody(
                .group(
                    rows.map { row in
                        .tr(
                            .group(
                                row.enumerated().map { index, cell in
                                    index == 0
                                        ? .th(.attribute(named: "scope", value: "row"), HTMLText.node(cell))
                                        : .td(HTMLText.node(cell))
                                }))
                    }))
        )
        return header.count > 3 ? wide(caption, table) : table
    }

    /// Horizontal bars as SVG, each labelled with its value in text.
    package static func barChart(id: String, caption: String, rows: [(label: String, value: Int64, text: String)])
        -> Node<HTML.BodyContext>
    {
        let largest = max(1, rows.map(\.value).max() ?? 1)
        let rowHeight = 22, labelWidth = 150, barWidth = 420, width = 760
        let height = rowHeight * rows.count + 8
        var shapes: [Node<HTML.BodyContext>] = []
        for (index, row) in rows.enumerated() {
            let y = index * rowHeight + 4
            let length = row.value <= 0 ? 0 : max(1, Int(Double(row.value) / Double(largest) * Double(barWidth)))
            shapes.append(svgText(row.label, x: 0, y: y + 15, anchor: "start"))
            shapes.append(
                .element(
                    named: "rect",
                    nodes: [
                        .attribute(named: "x", value: "\(labelWidth)"), .attribute(named: "y", value: "\(y)"),
                        .attribute(named: "width", value: "\(length)"), .attribute(named: "height", value: "16"),
                        .attribute(named: "class", value: "bar"),
                    ]))
            shapes.append(svgText(row.text, x: labelWidth + length + 6, y: y + 15, anchor: "start"))
        }
        return figure(id: id, caption: caption, width: width, height: height, shapes: shapes)
    }

    /// A line over a shaded area, one point per month, with the y axis labelled at its lowest
    /// and highest values and the x axis at the first and last months.
    package static func lineChart(
        caption: String, points: [(month: BudgetMonth, value: Int64)], format: (Int64) -> String
    )
        -> Node<HTML.BodyContext>
    {
        guard points.count >= 2, let low = points.map(\.value).min(), let high = points.map(\.value).max() else {
            return .p(HTMLText.node(caption))
        }
        let width = 760, height = 260, left = 110, right = 20, top = 16, bottom = 36
        let plotWidth = Double(width - left - right), plotHeight = Double(height - top - bottom)
        let span = Double(max(1, high - low))
        let coordinates = points.enumerated().map { index, point in
            (
                Double(left) + plotWidth * Double(index) / Double(points.count - 1),
                Double(top) + plotHeight * (1 - Double(point.value - low) / span)
            )
        }
        let line = coordinates.enumerated().map { ($0 == 0 ? "M" : "L") + String(format: "%.1f %.1f", $1.0, $1.1) }
            .joined(separator: " ")
        let base = Double(top) + plotHeight
        let area =
            line + String(format: " L%.1f %.1f L%.1f %.1f Z", coordinates.last!.0, base, coordinates.first!.0, base)
        let shapes: [Node<HTML.BodyContext>] = [
            .element(
                named: "path", nodes: [.attribute(named: "d", value: area), .attribute(named: "class", value: "area")]),
            .element(
                named: "path", nodes: [.attribute(named: "d", value: line), .attribute(named: "class", value: "line")]),
            .element(
                named: "path",
                nodes: [
                    .attribute(
                        named: "d", value: "M\(left) \(top) L\(left) \(Int(base)) L\(width - right) \(Int(base))"),
                    .attribute(named: "class", value: "axis"),
                ]),
            svgText(format(high), x: left - 6, y: top + 5, anchor: "end"),
            svgText(format(low), x: left - 6, y: Int(base), anchor: "end"),
            svgText(points.first!.month.shortTitle, x: left, y: height - 10, anchor: "start"),
            svgText(points.last!.month.shortTitle, x: width - right, y: height - 10, anchor: "end"),
        ]
        return figure(id: "networth-chart", caption: caption, width: width, height: height, shapes: shapes)
    }

    package static func figure(id: String, caption: String, width: Int, height: Int, shapes: [Node<HTML.BodyContext>])
        -> Node<HTML.BodyContext>
    {
        .element(
            named: "figure",
            nodes: [
                .id(id),
                // A phone scrolls the chart at a readable size (the web app's style sheet).
                .div(
                    .class("chart"), .attribute(named: "tabindex", value: "0"),
                    .attribute(named: "role", value: "region"),
                    .attribute(named: "aria-label", value: HTMLText.attribute(caption)),
                    .element(
                        named: "svg",
                        nodes: [
                            .attribute(named: "xmlns", value: "http://www.w3.org/2000/svg"),
                            .attribute(named: "viewBox", value: "0 0 \(width) \(height)"),
                            .attribute(named: "role", value: "img"),
                            .attribute(named: "aria-label", value: HTMLText.attribute(caption)),
                            .element(named: "title", text: caption),
                        ] + shapes)),
                .element(named: "figcaption", text: caption),
            ])
    }

    package static func svgText(_ text: String, x: Int, y: Int, anchor: String) -> Node<HTML.BodyContext> {
        .element(
            named: "text",
            nodes: [
                .attribute(named: "x", value: "\(x)"), .attribute(named: "y", value: "\(y)"),
                .attribute(named: "text-anchor", value: anchor), HTMLText.node(text),
            ])
    }

    static let styleSheet = """
        body { font-family: system-ui, -apple-system, "Helvetica Neue", Arial, sans-serif; color: #111; margin: 2em auto; max-width: 60em; padding: 0 1em; }
        h1 { margin-bottom: 0.2em; } .period { color: #555; margin-top: 0; }
        section { margin: 2.5em 0; }
        table { border-collapse: collapse; margin: 1em 0; font-variant-numeric: tabular-nums; }
        caption { text-align: left; font-weight: 600; padding-bottom: 0.4em; }
        th, td { padding: 0.25em 0.8em; border-bottom: 1px solid #ddd; }
        td, .amount { text-align: right; } th { text-align: left; }
        .wide { overflow-x: auto; }
        figure { margin: 1em 0; } svg { width: 100%; height: auto; max-width: 760px; }
        svg text { font-size: 12px; fill: #222; }
        .bar { fill: #3b6ea5; } .area { fill: #3b6ea5; fill-opacity: 0.18; } .line { fill: none; stroke: #3b6ea5; stroke-width: 2; }
        .axis { fill: none; stroke: #888; stroke-width: 1; }
        figcaption { color: #444; font-size: 0.9em; }
        footer { color: #666; font-size: 0.85em; border-top: 1px solid #ddd; padding-top: 1em; }
        @media print {
          body { margin: 0; max-width: none; color: #000; }
          .bar { fill: #555; } .area { fill: #999; } .line { stroke: #000; }
          section, table, figure { break-inside: avoid; }
          a { color: inherit; text-decoration: none; }
        }
        """
}
