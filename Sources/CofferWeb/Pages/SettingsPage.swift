import CofferKit
import FinanceCore
import Foundation
import Hummingbird
import Plot

/// Settings: the currency, whether unpaid invoices count in net worth, the growth rates
/// projections use (per category or account), and the import rules and profiles kept in the
/// vault. Each change is one entry in `coffer log`, as `coffer settings` and `coffer growth set`.
enum SettingsPage {
    static func add(to router: Router<WebContext>, _ state: WebState) {
        router.get("/settings") { _, context in try await show(state, context) }
        router.post("/settings/receivables") { _, context in
            struct Form: Decodable { let receivables: String }
            let form = try context.decodeForm(Form.self)
            return try await WebVault.change(
                state, context, back: "/settings", again: { try await show(state, context, banner: $0) }
            ) { ledger in
                guard ["on", "off"].contains(form.receivables) else {
                    throw CofferError(.invalidInput, "Choose on or off.")
                }
                try ledger.setIncludeReceivables(form.receivables == "on")
                return .init(
                    text:
                        form.receivables == "on"
                        ? "Unpaid sent invoices now count in net worth as Invoices receivable."
                        : "Unpaid invoices no longer count in net worth.",
                    undoable: true)
            }
        }
        router.post("/settings/growth") { _, context in
            struct Form: Decodable { let target: String, rate: String }
            let form = try context.decodeForm(Form.self)
            return try await WebVault.change(
                state, context, back: "/settings", again: { try await show(state, context, banner: $0) }
            ) { ledger in
                let rate = try GrowthRate(parsing: form.rate)
                switch try ledger.setGrowthRate(rate, for: form.target) {
                case .category(let name):
                    return .init(
                        text: "\(name): \(rate) a year (accounts with their own rate keep it).", undoable: true)
                case .account(let name): return .init(text: "\(name): \(rate) a year.", undoable: true)
                }
            }
        }
    }

    static func show(_ state: WebState, _ context: WebContext, banner: Layout.Banner? = nil) async throws -> Response {
        try await WebVault.page(state, context, view: nil, banner: banner) { ledger, banner in
            let settings = ledger.currentSettings
            let portfolio = ledger.portfolio
            let open = ledger.accounts.filter { $0.closed == nil }
            let categoryRates = ledger.categoryRates.values.sorted { $0.category < $1.category }
            return Layout.page(
                title: "Settings", area: .settings, csrf: context.csrf, banner: banner,
                .group(
                    .h1("Settings"),
                    .section(
                        .h2("Currency"),
                        .p(HTMLText.node("\(settings.currency.code): amounts are kept in it, to the minor unit.")),
                        .p(.class("hint"), .text("It is chosen when the vault is made (coffer init --currency)."))),
                    .section(
                        .h2("Invoices in net worth"),
                        .form(
                            .action("/settings/receivables"), .method(.post), Layout.csrfField(context.csrf),
                            .fieldset(
                                .element(named: "legend", text: "Count unpaid sent invoices as Invoices receivable"),
                                .input(
                                    .type(.radio), .name("receivables"), .id("r-on"), .value("on"),
                                    .checked(settings.includeReceivables)),
                                .label(.for("r-on"), "on"),
                                .input(
                                    .type(.radio), .name("receivables"), .id("r-off"), .value("off"),
                                    .checked(!settings.includeReceivables)),
                                .label(.for("r-off"), "off")),
                            .button(.type(.submit), .class("secondary"), .text("Save")))),
                    .section(
                        .h2("Growth rates"),
                        .p(
                            .text(
                                "Projections grow each account at its own yearly rate, else its category's, else 0%. Assumptions, not guarantees."
                            )),
                        .if(
                            !categoryRates.isEmpty,
                            ReportHTML.table(
                                caption: "Categories", header: ["Category", "Rate"],
                                rows: categoryRates.map { [$0.category, $0.rate.description] })),
                        .if(
                            !open.isEmpty,
                            ReportHTML.table(
                                caption: "Each open account", header: ["Account", "Category", "Rate", "From"],
                                rows: open.map { account in
                                    let source = ledger.growthRateSource(of: account)
                                    return [
                                        account.name, account.category, portfolio.rate(for: account).description,
                                        source == "none" ? "default 0%" : source,
                                    ]
                                })),
                        .form(
                            .action("/settings/growth"), .method(.post), Layout.csrfField(context.csrf),
                            Layout.field(
                                "Category or account", name: "target",
                                hint: "A category, or an account (the first letters are enough)."),
                            Layout.field("Yearly rate", name: "rate", hint: "For example 4.5% or -1%."),
                            .button(.type(.submit), .text("Set rate")))),
                    .section(
                        .h2("Import rules"),
                        .if(
                            ledger.ruleSets.isEmpty,
                            .p(.text("No import rules yet: coffer import rules add NAME PATTERN CATEGORY makes one."))),
                        .forEach(ledger.ruleSets) { set in
                            ReportHTML.table(
                                caption: "Rules \(set.name) (first match wins)", header: ["Pattern", "Sets"],
                                rows: set.rules.map { [$0.pattern, ledger.label(of: $0.target)] })
                        }),
                    .section(
                        .h2("Import profiles"),
                        .if(
                            ledger.importProfiles.isEmpty,
                            .p(
                                .text(
                                    "No import profiles yet: coffer import csv FILE … --save-profile NAME remembers a bank's columns."
                                ))),
                        .if(
                            !ledger.importProfiles.isEmpty,
                            ReportHTML.table(
                                caption: "Saved profiles", header: ["Profile", "Into", "Account", "Rules"],
                                rows: ledger.importProfiles.map {
                                    [$0.name, $0.destination?.rawValue ?? "", $0.account ?? "", $0.ruleSet ?? ""]
                                })))
                ))
        }
    }
}
