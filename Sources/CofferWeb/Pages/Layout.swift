import CofferKit
import Foundation
import Hummingbird
import Plot

/// The frame every page shares: the skip link, the three main areas and the rest of the
/// screens, the Lock button, the notice of the last change with its Undo control, then the
/// page. Vault text only ever enters through `HTMLText` (text nodes and attribute values).
enum Layout {
    enum Area: String, CaseIterable {
        case overview, assets, budget, invoices, reports, backups, search, settings

        var title: String { self == .backups ? "Backups & devices" : rawValue.capitalized }

        var path: String { self == .overview ? "/" : "/\(rawValue)" }
    }

    /// What the page says at its top: the last change (with Undo) or why a form was refused.
    enum Banner {
        case done(String, undoable: Bool)
        case problem(String)
        /// An entry that is probably a slip: said, with the same form posted again to confirm.
        case doubt(String, action: String, fields: [(String, String)])
    }

    static func page(
        title: String, area: Area?, csrf: String?, banner: Banner? = nil, _ content: Node<HTML.BodyContext>
    ) -> String {
        let html = HTML(
            .lang(.english),
            .head(
                .encoding(.utf8),
                .element(named: "title", text: "\(title) · Coffer"),
                .meta(.name("viewport"), .content("width=device-width, initial-scale=1")),
                .meta(.name("color-scheme"), .content("light dark")),
                .link(.rel(.stylesheet), .href("/static/coffer.css")),
                .link(.rel(.icon), .href("/static/icon.svg"), .type("image/svg+xml")),
                .script(.src("/static/busy.js"), .attribute(named: "defer", value: "defer"))
            ),
            .body(
                .a(.class("skip"), .href("#main"), .text("Skip to the page")),
                .header(
                    .class("top"),
                    .p(.class("brand"), .text("Coffer")),
                    .if(csrf != nil, navigation(current: area)),
                    .unwrap(csrf) { token in
                        .form(
                            .class("lock"), .action("/lock"), .method(.post),
                            csrfField(token),
                            .button(.type(.submit), .text("Lock"))
                        )
                    }
                ),
                .main(
                    .id("main"),
                    .unwrap(banner) { bannerNode($0, csrf: csrf) },
                    content
                )
            )
        )
        return html.render()
    }

    private static func navigation(current: Area?) -> Node<HTML.BodyContext> {
        .nav(
            .attribute(named: "aria-label", value: "Screens"),
            .ul(
                .forEach(Area.allCases) { area in
                    .li(
                        .a(
                            .href(area.path),
                            .if(area == current, .attribute(named: "aria-current", value: "page")),
                            .text(area.title)))
                }))
    }

    private static func bannerNode(_ banner: Banner, csrf: String?) -> Node<HTML.BodyContext> {
        switch banner {
        case .done(let text, let undoable):
            return .div(
                .class("banner done"), .attribute(named: "role", value: "status"),
                .p(HTMLText.node(text)),
                .if(
                    undoable && csrf != nil,
                    .form(
                        .action("/undo"), .method(.post), csrfField(csrf ?? ""),
                        .button(.type(.submit), .class("secondary"), .text("Undo")))))
        case .problem(let text):
            return .div(
                .class("banner problem"), .attribute(named: "role", value: "alert"),
                .p(.strong("Not done: "), HTMLText.node(text)))
        case .doubt(let text, let action, let fields):
            return .div(
                .class("banner problem"), .attribute(named: "role", value: "alert"),
                .p(.strong("Check this first: "), HTMLText.node(text), " Nothing was recorded yet."),
                .form(
                    .action(HTMLText.attribute(action)), .method(.post), csrfField(csrf ?? ""),
                    .forEach(fields) { name, value in
                        .input(.type(.hidden), .name(HTMLText.attribute(name)), .value(HTMLText.attribute(value)))
                    },
                    .input(.type(.hidden), .name("confirm"), .value("yes")),
                    .button(.type(.submit), .text("Record it anyway"))))
        }
    }

    static func csrfField(_ token: String) -> Node<HTML.FormContext> {
        .input(.type(.hidden), .name("csrf"), .value(token))
    }

    /// A labelled field: every control has a visible label tied to it.
    static func field(
        _ label: String, name: String, type: HTMLInputType = .text, value: String? = nil, required: Bool = true,
        hint: String? = nil, extra: [Attribute<HTML.InputContext>] = []
    ) -> Node<HTML.FormContext> {
        var inputAttributes: [Attribute<HTML.InputContext>] = [.type(type), .name(name), .id("f-\(name)")]
        if let value { inputAttributes.append(.value(HTMLText.attribute(value))) }
        if required { inputAttributes.append(.required(true)) }
        if hint != nil { inputAttributes.append(.attribute(named: "aria-describedby", value: "h-\(name)")) }
        inputAttributes += extra
        return .div(
            .class("field"),
            .label(.for("f-\(name)"), .text(label)),
            .unwrap(hint) { .p(.class("hint"), .id("h-\(name)"), HTMLText.node($0)) },
            .selfClosedElement(named: "input", attributes: inputAttributes)
        )
    }

    static func response(_ page: String, status: HTTPResponse.Status = .ok) -> Response {
        Response(
            status: status, headers: [.contentType: "text/html; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(string: page)))
    }
}
