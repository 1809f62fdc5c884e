import FinanceCore
import Foundation
import Plot

/// A printable invoice you can send: one self-contained, well-formed XHTML page built with Plot's
/// typed HTML — the sender (name, address, email, tax or VAT number), who it is billed to, the
/// lines with discounts and credits, subtotal, tax, total, payments received and the balance
/// due, reminders sent, how to pay and the notes. Inline styles with a print style sheet; no
/// script, and nothing fetched, so it prints the same anywhere and parses as XML. Every text from
/// the vault goes through `text(_:)`, escaped by construction.
public enum InvoiceHTML {
    public static func render(
        _ invoice: Invoice, client: Client?, sender: InvoiceSender = InvoiceSender(), currency: Currency
    ) throws -> String {
        let money = { (value: Money) in currency.format(value) }
        let label = sender.taxLabel.title
        let lines = try invoice.items.map { ($0, try invoice.amount(of: $0)) }
        let charges = lines.filter { $0.0.kind != .credit }
        let credits = lines.filter { $0.0.kind == .credit }
        let outstanding = try invoice.outstanding()
        let page = HTML(
            .attribute(named: "xmlns", value: "http://www.w3.org/1999/xhtml"),
            .lang(.english),
            .head(
                .encoding(.utf8),
                .element(named: "title", nodes: [text("Invoice \(invoice.reference)")]),
                .meta(.name("viewport"), .content("width=device-width, initial-scale=1")),
                .meta(.name("generator"), .content("Coffer")),
                .style(styleSheet)
            ),
            .body(
                .header(
                    .div(
                        .id("sender"),
                        .if(sender.name != nil, .p(.class("name"), .strong(text(sender.name ?? "")))),
                        multiLine(sender.address, class: "address"),
                        .if(sender.email != nil, .p(.class("email"), text(sender.email ?? ""))),
                        .if(
                            sender.taxNumber != nil,
                            .p(
                                .class("tax-number"),
                                text("\(label) number: "), .span(.id("tax-number"), text(sender.taxNumber ?? ""))))
                    ),
                    .div(
                        .class("heading"),
                        .h1(.id("number"), text("Invoice \(invoice.reference)")),
                        .p(.class("total"), .id("total"), text(money(try invoice.total()))),
                        .p(
                            .class("dates"), text("Issued "), .span(.id("issued"), text(invoice.issued.description)),
                            text(" · due "), .span(.id("due"), text(invoice.due.description)))
                    )
                ),
                .section(
                    .id("billed-to"),
                    .h2("Billed to"),
                    .p(.strong(.id("client"), text(client?.name ?? ""))),
                    multiLine(client?.address, class: "address"),
                    .if(client?.email != nil, .p(.class("email"), text(client?.email ?? "")))
                ),
                .table(
                    .id("items"),
                    .thead(
                        .tr(
                            .th(text("Description")), .th(.class("amount"), text("Quantity")),
                            .th(.class("amount"), text("Unit price")), .th(.class("amount"), text("Amount")))),
                    .tbody(
                        .group(charges.map { line($0.0, amount: $0.1, money: money) }),
                        summaryRow("Subtotal", id: "subtotal", money(try invoice.subtotal())),
                        .if(
                            invoice.taxBasisPoints != nil,
                            summaryRow(
                                "\(label) \(GrowthRate(basisPoints: invoice.taxBasisPoints ?? 0))", id: "tax",
                                money(try invoice.tax()))),
                        .group(credits.map { line($0.0, amount: $0.1, money: money) }),
                        summaryRow("Total", id: "grand-total", money(try invoice.total()), strong: true)
                    )
                ),
                .section(
                    .id("payments"),
                    .if(
                        !invoice.payments.isEmpty,
                        .table(
                            .caption(text("Payments received")),
                            .thead(.tr(.th(text("Date")), .th(.class("amount"), text("Amount")))),
                            .tbody(
                                .group(
                                    invoice.payments.map {
                                        .tr(
                                            .class("payment"), .td(.class("date"), text($0.date.description)),
                                            .td(.class("amount"), text(money($0.amount))))
                                    })))),
                    .p(
                        .class("balance"), .strong(text("Balance due ")),
                        .strong(.id("balance"), text(money(outstanding))))
                ),
                .if(
                    !invoice.reminders.isEmpty,
                    .section(
                        .id("reminders"),
                        .h2("Reminders sent"),
                        .ul(.group(invoice.reminders.map { .li(.class("reminder"), text($0.description)) })))
                ),
                .if(
                    sender.paymentInstructions != nil || sender.bankDetails != nil,
                    .section(
                        .id("how-to-pay"),
                        .h2("How to pay"),
                        multiLine(sender.paymentInstructions, class: "payment-instructions"),
                        multiLine(sender.bankDetails, class: "bank-details"))
                ),
                .if(
                    invoice.notes != nil, .section(.id("notes"), .h2("Notes"), multiLine(invoice.notes, class: "notes"))
                ),
                .footer(.p(text("Invoice \(invoice.reference) from \(sender.name ?? "Coffer").")))
            )
        )
        // Compact: indentation would add white space inside the text of the page.
        return page.render()
    }

    static func text<Context>(_ value: String) -> Node<Context> { HTMLText.node(value) }

    /// A paragraph keeping the text's line breaks, or nothing for no text.
    static func multiLine(_ value: String?, class name: String) -> Node<HTML.BodyContext> {
        guard let value else { return .empty }
        let lines = value.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        return .p(
            .class(name),
            .group(lines.enumerated().map { index, line in index == 0 ? text(line) : .group(.br(), text(line)) }))
    }

    static func line(_ item: LineItem, amount: Money, money: (Money) -> String) -> Node<HTML.TableContext> {
        let share = item.shareBasisPoints.map { " (\(GrowthRate(basisPoints: $0)))" } ?? ""
        return .tr(
            .class(item.kind == .charge ? "item" : item.kind.rawValue),
            .td(.class("description"), text(item.description + share)),
            .td(.class("quantity"), text(item.kind == .charge ? item.quantity.description : "")),
            .td(.class("price"), text(item.kind == .charge ? money(item.unitPrice) : "")),
            .td(.class("amount"), text(money(amount))))
    }

    static func summaryRow(_ label: String, id: String, _ value: String, strong: Bool = false)
        -> Node<HTML.TableContext>
    {
        .tr(
            .class("summary"),
            .th(.attribute(named: "colspan", value: "3"), .attribute(named: "scope", value: "row"), text(label)),
            .td(.class("amount"), .id(id), strong ? .strong(text(value)) : text(value)))
    }

    static let styleSheet = """
        body { font-family: -apple-system, "Helvetica Neue", Arial, sans-serif; color: #111; margin: 3em auto; max-width: 52em; padding: 0 1.5em; line-height: 1.4; }
        header { display: flex; justify-content: space-between; gap: 2em; align-items: flex-start; }
        header .heading { text-align: right; }
        h1 { font-size: 1.6em; margin: 0 0 0.2em; }
        h2 { font-size: 0.8em; text-transform: uppercase; letter-spacing: 0.08em; color: #555; margin: 2em 0 0.4em; }
        p { margin: 0.2em 0; }
        .total { font-size: 2em; font-weight: 800; font-variant-numeric: tabular-nums; }
        .address, .payment-instructions, .bank-details, .notes { white-space: normal; }
        table { border-collapse: collapse; width: 100%; margin-top: 2em; }
        caption { text-align: left; font-weight: 600; padding-bottom: 0.4em; }
        th, td { text-align: left; padding: 0.4em; border-bottom: 1px solid #ccc; vertical-align: top; }
        td.amount, td.price, td.quantity, th.amount, tr.summary td { text-align: right; font-variant-numeric: tabular-nums; }
        tr.summary th { text-align: right; font-weight: normal; }
        tr.discount td, tr.credit td { color: #444; font-style: italic; }
        .balance { font-size: 1.3em; margin-top: 1em; text-align: right; }
        footer { margin-top: 3em; color: #666; font-size: 0.8em; }
        @media print { body { margin: 1.5cm; max-width: none; padding: 0; } tr { page-break-inside: avoid; } footer { display: none; } }
        """
}
