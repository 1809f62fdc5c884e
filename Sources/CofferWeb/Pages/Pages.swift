import CofferKit
import Foundation
import Hummingbird
import Plot

/// The pages that hold no vault data: connecting a browser, unlocking, and refusals.
enum Pages {
    /// Without the session cookie: 401 and nothing of the vault. The address `coffer web`
    /// printed carries the one-time token in its fragment (never sent to a server, never in a
    /// log or Referer); connect.js posts it. Without JavaScript it can be pasted.
    static func connect(state: WebState) -> Response {
        let page = Layout.page(
            title: "Connect", area: nil, csrf: nil,
            .group(
                .h1("Connect this browser"),
                .p(
                    "Open the address that ",
                    .code("coffer web"),
                    " printed: it carries a one-time token. Or paste the token (the part after #token=) here."),
                .form(
                    .id("connect"), .action("/session"), .method(.post),
                    Layout.field("Token", name: "token", type: .password, extra: [.autocomplete(false)]),
                    .button(.type(.submit), .text("Connect"))
                ),
                .script(.src("/static/connect.js"))
            ))
        return Layout.response(page, status: .unauthorized)
    }

    /// The vault is locked (never unlocked here, or the Lock button was pressed).
    static func unlock(csrf: String, problem: String? = nil, status: HTTPResponse.Status = .ok) -> Response {
        let page = Layout.page(
            title: "Unlock", area: nil, csrf: nil, banner: problem.map { .problem($0) },
            .group(
                .h1("Unlock the vault"),
                .p("The passphrase unlocks the vault in the coffer web process on this computer; it is never stored."),
                .form(
                    .action("/unlock"), .method(.post),
                    Layout.csrfField(csrf),
                    Layout.field(
                        "Passphrase", name: "passphrase", type: .password,
                        extra: [.attribute(named: "autocomplete", value: "current-password")]),
                    .button(.type(.submit), .text("Unlock"))
                )
            ))
        return Layout.response(page, status: status)
    }

    static func refusal(_ refusal: WebRefusal, state: WebState, signedIn: Bool) -> Response {
        let page = Layout.page(
            title: refusal.status.reasonPhrase, area: nil, csrf: nil,
            .group(
                .h1(.text(refusal.status.reasonPhrase)),
                .p(HTMLText.node(refusal.message)),
                .if(signedIn, .p(.a(.href("/"), .text("Back to the overview"))))
            ))
        return Layout.response(page, status: refusal.status)
    }
}
