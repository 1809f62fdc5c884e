import CofferKit
import FinanceCore
import Foundation
import Hummingbird
import Plot

/// Search across everything, as `coffer search` finds it (case and accents ignored), grouped
/// by kind, each match with where it was found and a link to its screen.
enum SearchPage {
    static let limit = 50

    static func add(to router: Router<WebContext>, _ state: WebState) {
        router.get("/search") { request, context in
            let text = request.uri.queryParameters["q"].map(String.init) ?? ""
            let query: TextQuery?
            do {
                query = text.isEmpty ? nil : try TextQuery(text)
            } catch {
                throw WebRefusal(
                    status: .badRequest,
                    message: "\((error as? LocalizedError)?.errorDescription ?? "That text cannot be searched for.")")
            }
            return try await WebVault.page(state, context, view: nil) { ledger, banner in
                let results = query.map { ledger.search($0, limit: limit) }
                return Layout.page(
                    title: query.map { "Search: \($0.text)" } ?? "Search", area: .search, csrf: context.csrf,
                    banner: banner,
                    .group(
                        .h1("Search"),
                        .form(
                            .class("inline"), .action("/search"), .method(.get),
                            .attribute(named: "role", value: "search"),
                            Layout.field(
                                "Find", name: "q", type: .search, value: text,
                                hint:
                                    "In accounts, transactions, clients, invoices and notes; case and accents ignored."),
                            .button(.type(.submit), .text("Search"))),
                        .unwrap(results) { results in
                            results.total == 0
                                ? .p(HTMLText.node("No matches for '\(query?.text ?? text)'."))
                                : .group(
                                    .p(.attribute(named: "role", value: "status"), .text(matchCount(results.total))),
                                    .forEach(results.groups.filter { $0.total > 0 }) { group in
                                        section(group, ledger: ledger)
                                    })
                        }
                    ))
            }
        }
    }

    private static func matchCount(_ count: Int) -> String { count == 1 ? "1 match." : "\(count) matches." }

    private static func section(_ group: SearchResults.Group, ledger: Ledger) -> Node<HTML.BodyContext> {
        let shown = group.hits.count < group.total ? ", the first \(group.hits.count) shown" : ""
        return .section(
            .h2(.text("\(group.kind.rawValue.capitalized) (\(group.total)\(shown))")),
            .table(
                .thead(.tr(.th("Match"), .th("Found in"), .th("Text"), .th(.class("amount"), "Amount"))),
                .tbody(
                    .forEach(group.hits) { hit in
                        .tr(
                            .td(
                                link(hit, ledger: ledger), .unwrap(hit.date) { .span(.class("muted"), .text(" \($0)")) }
                            ),
                            .td(HTMLText.node(hit.field)),
                            .td(HTMLText.node(hit.snippet)),
                            .td(.class("amount"), HTMLText.node(hit.amount.map(ledger.currency.format) ?? "")))
                    })))
    }

    /// The match's own screen where the web app has one.
    private static func link(_ hit: SearchHit, ledger: Ledger) -> Node<HTML.BodyContext> {
        let label = hit.kind == .invoices ? "\(hit.id) · \(hit.title)" : hit.title
        let path: String?
        switch hit.kind {
        case .accounts: path = ledger.accounts.first { $0.name == hit.id }.map { "/accounts/\($0.id.uuidString)" }
        case .invoices:
            path = ledger.invoices.first { $0.reference == hit.id }.map { "/invoices/\($0.id.uuidString)" }
        case .transactions: path = hit.date.map { "/budget?month=\(BudgetMonth(containing: $0))" }
        case .clients, .notes: path = nil
        }
        guard let path else { return HTMLText.node(label) }
        return .a(.href(path), HTMLText.node(label))
    }
}
