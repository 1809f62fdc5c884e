import FinanceCore
import Foundation

/// A printable, self-contained invoice page: well-formed XHTML with inline styles, no scripts
/// and nothing fetched, so it prints the same anywhere and parses as XML.
public enum InvoiceHTML {
    /// Control characters (from a vault written before they were refused) would make the
    /// document malformed XML: replaced before escaping.
    static func escape(_ text: String) -> String {
        TextSafety.printable(text).replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(
            of: "<", with: "&lt;"
        )
        .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }

    public static func render(_ invoice: Invoice, client: Client?, currency: Currency) throws -> String {
        let money = { (value: Money) in escape(currency.format(value)) }
        var rows = ""
        for item in invoice.items {
            rows +=
                "<tr class=\"item\"><td class=\"description\">\(escape(item.description))</td><td class=\"quantity\">\(item.quantity)</td>"
                + "<td class=\"price\">\(money(item.unitPrice))</td><td class=\"amount\">\(money(try item.total()))</td></tr>\n"
        }
        let tax =
            invoice.taxBasisPoints.map {
                "<tr><td colspan=\"3\">Tax \(GrowthRate(basisPoints: $0))</td><td class=\"amount\">\((try? money(invoice.tax())) ?? "")</td></tr>"
            } ?? ""
        let address =
            client?.address.map {
                "<p class=\"address\">\(escape($0).replacingOccurrences(of: "\n", with: "<br/>"))</p>"
            } ?? ""
        return """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE html>
            <html xmlns="http://www.w3.org/1999/xhtml" lang="en">
            <head>
            <meta charset="utf-8"/>
            <title>Invoice \(invoice.reference)</title>
            <style>
            body { font-family: -apple-system, "Helvetica Neue", Arial, sans-serif; color: #111; margin: 3em; }
            h1 { font-size: 1.6em; margin-bottom: 0.2em; }
            .total { font-size: 2em; font-weight: 800; font-variant-numeric: tabular-nums; }
            table { border-collapse: collapse; width: 100%; margin-top: 2em; }
            th, td { text-align: left; padding: 0.4em; border-bottom: 1px solid #ccc; }
            td.amount, td.price, td.quantity, th.amount { text-align: right; font-variant-numeric: tabular-nums; }
            @media print { body { margin: 1.5cm; } }
            </style>
            </head>
            <body>
            <h1 id="number">Invoice \(invoice.reference)</h1>
            <p class="total" id="total">\(money(try invoice.total()))</p>
            <p>Billed to <strong id="client">\(escape(client?.name ?? ""))</strong></p>
            \(address)
            <p>Issued <span id="issued">\(invoice.issued)</span> · due <span id="due">\(invoice.due)</span></p>
            <table>
            <thead><tr><th>Description</th><th class="amount">Quantity</th><th class="amount">Unit price</th><th class="amount">Amount</th></tr></thead>
            <tbody>
            \(rows)<tr><td colspan="3">Subtotal</td><td class="amount">\(money(try invoice.subtotal()))</td></tr>
            \(tax)
            <tr><td colspan="3"><strong>Total</strong></td><td class="amount"><strong>\(money(try invoice.total()))</strong></td></tr>
            </tbody>
            </table>
            \(invoice.notes.map { "<p class=\"notes\">\(escape($0))</p>" } ?? "")
            </body>
            </html>

            """
    }
}
