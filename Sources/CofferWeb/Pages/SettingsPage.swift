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
        addImportRoutes(to: router, state)
    }

    /// Import rules and profiles, as `coffer import rules add|remove` and `import profile remove`.
    private static func addImportRoutes(to router: Router<WebContext>, _ state: WebState) {
        router.post("/settings/rules") { _, context in
            struct Form: Decodable { let set, pattern, place, field: String }
            let form = try context.decodeForm(Form.self)
            return try await WebVault.change(
                state, context, back: "/settings#rules", again: { try await show(state, context, banner: $0) }
            ) { ledger in
                guard let field = CategoryRuleSet.Rule.Field(rawValue: form.field) else {
                    throw CofferError(.invalidInput, "Choose payee, description or any.")
                }
                let target = try ledger.place(named: form.place)
                let rule = CategoryRuleSet.Rule(pattern: form.pattern, target: target, field: field)
                let (set, added) = try ledger.addRule(to: form.set, rule)
                guard added else {
                    throw CofferError(.unchanged, "Rule set \(set.name) already has that rule.")
                }
                return .init(
                    text: "Rule \(set.rules.count) of \(set.name): \(rule.pattern) → \(ledger.describe(target).name).",
                    undoable: true)
            }
        }
        router.post("/settings/rules/remove") { _, context in
            struct Form: Decodable { let set: String, rule: Int }
            let form = try context.decodeForm(Form.self)
            return try await WebVault.change(
                state, context, back: "/settings#rules", again: { try await show(state, context, banner: $0) }
            ) { ledger in
                let set = try ledger.ruleSet(named: form.set)
                let removed = try ledger.removeRule(form.rule, from: set)
                return .init(text: "Removed rule \(form.rule) (\(removed.pattern)) from \(set.name).", undoable: true)
            }
        }
        router.post("/settings/profiles/remove") { _, context in
            struct Form: Decodable { let name: String }
            let form = try context.decodeForm(Form.self)
            return try await WebVault.change(
                state, context, back: "/settings#profiles", again: { try await show(state, context, banner: $0) }
            ) { ledger in
                let profile = try ledger.importProfile(named: form.name)
                try ledger.removeImportProfile(profile)
                return .init(text: "Removed import profile \(profile.name).", undoable: true)
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
                    rulesSection(ledger, csrf: context.csrf),
                    profilesSection(ledger, csrf: context.csrf)
                ))
        }
    }

    /// Each set's rules in the order they are tried, each with its Remove control, and the form
    /// that adds one (the place matched by its first letters, as the CLI does).
    private static func rulesSection(_ ledger: Ledger, csrf: String) -> Node<HTML.BodyContext> {
        .section(
            .id("rules"),
            .h2("Import rules"),
            .p(
                .class("hint"),
                .text("An import places a statement line by the first rule whose pattern its text holds.")),
            .if(ledger.ruleSets.isEmpty, .p(.text("No import rules yet: add one below."))),
            .forEach(ledger.ruleSets) { set in
                .table(
                    .class("stack"),
                    .caption(HTMLText.node("Rules \(set.name) (first match wins)")),
                    .thead(.tr(.th("Rule"), .th("Pattern"), .th("Reads"), .th("Sets"), .th(.text("Remove")))),
                    .tbody(
                        .forEach(Array(set.rules.enumerated())) { index, rule in
                            .tr(
                                .td(.text("\(index + 1)")),
                                .td(HTMLText.node(rule.pattern)),
                                .td(.text(rule.field.rawValue)),
                                .td(HTMLText.node(ledger.label(of: rule.target))),
                                .td(
                                    .form(
                                        .class("inline"), .action("/settings/rules/remove"), .method(.post),
                                        Layout.csrfField(csrf),
                                        .input(.type(.hidden), .name("set"), .value(HTMLText.attribute(set.name))),
                                        .input(.type(.hidden), .name("rule"), .value("\(index + 1)")),
                                        .button(
                                            .type(.submit), .class("secondary"), .text("Remove"),
                                            .span(
                                                .class("visually-hidden"),
                                                HTMLText.node(" rule \(index + 1) of \(set.name)"))))))
                        }))
            },
            .form(
                .action("/settings/rules"), .method(.post), Layout.csrfField(csrf),
                .fieldset(
                    .element(named: "legend", text: "Add a rule"),
                    Layout.field(
                        "Rule set", name: "set", value: ledger.ruleSets.first?.name,
                        hint: "A new name makes a new set."),
                    Layout.field(
                        "Pattern", name: "pattern", hint: "Text the line holds, such as TESCO, or AMZN*MKTP."),
                    Layout.field(
                        "Into", name: "place",
                        hint: "A category, else a savings goal, else an income source (the first letters are enough)."),
                    .div(
                        .class("field"),
                        .label(.for("f-field"), .text("Reads")),
                        .element(
                            named: "select",
                            nodes: [.attribute(named: "name", value: "field"), .id("f-field")]
                                + [("any", "payee or description"), ("payee", "payee"), ("description", "description")]
                                .map { value, label in
                                    .element(
                                        named: "option",
                                        nodes: [.attribute(named: "value", value: value), .text(label)])
                                })),
                    .button(.type(.submit), .text("Add rule")))))
    }

    private static func profilesSection(_ ledger: Ledger, csrf: String) -> Node<HTML.BodyContext> {
        .section(
            .id("profiles"),
            .h2("Import profiles"),
            .if(
                ledger.importProfiles.isEmpty,
                .p(
                    .text(
                        "No import profiles yet: coffer import csv FILE … --save-profile NAME remembers a bank's columns."
                    ))),
            .if(
                !ledger.importProfiles.isEmpty,
                .table(
                    .class("stack"),
                    .caption("Saved profiles"),
                    .thead(.tr(.th("Profile"), .th("Into"), .th("Account"), .th("Rules"), .th(.text("Remove")))),
                    .tbody(
                        .forEach(ledger.importProfiles) { profile in
                            .tr(
                                .td(HTMLText.node(profile.name)),
                                .td(.text(profile.destination?.rawValue ?? "")),
                                .td(HTMLText.node(profile.account ?? "")),
                                .td(HTMLText.node(profile.ruleSet ?? "")),
                                .td(
                                    .form(
                                        .class("inline"), .action("/settings/profiles/remove"), .method(.post),
                                        Layout.csrfField(csrf),
                                        .input(.type(.hidden), .name("name"), .value(HTMLText.attribute(profile.name))),
                                        .button(
                                            .type(.submit), .class("secondary"), .text("Remove"),
                                            .span(.class("visually-hidden"), HTMLText.node(" profile \(profile.name)")))
                                    )))
                        }))))
    }
}
