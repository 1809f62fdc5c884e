import CofferKit
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import VaultStore

/// One request's context: the form it posted, once the guard has checked its CSRF token.
struct WebContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    /// The POST body (application/x-www-form-urlencoded), at most `WebGuard.bodyLimit` bytes.
    var form = ""
    var csrf = ""
    /// The request's path, where a form asked to confirm posts again.
    var path = ""

    init(source: Source) { coreContext = .init(source: source) }

    /// The posted fields in order, but the CSRF token and an earlier confirmation: what a form
    /// asked to confirm posts again.
    var postedFields: [(String, String)] {
        // x-www-form-urlencoded writes a space as "+", a plus as "%2B".
        let items = URLComponents(string: "?" + form.replacingOccurrences(of: "+", with: "%20"))?.queryItems ?? []
        return items.filter { $0.name != "csrf" && $0.name != "confirm" }.map { ($0.name, $0.value ?? "") }
    }

    /// The posted form's fields; a field missing or of the wrong shape is a 400.
    func decodeForm<Form: Decodable>(_ type: Form.Type) throws -> Form {
        do {
            return try URLEncodedFormDecoder().decode(Form.self, from: form)
        } catch {
            throw WebRefusal(status: .badRequest, message: "The form is missing a field. Nothing was changed.")
        }
    }
}

/// Why a request was refused, with the HTTP status Specs/web.md gives it.
struct WebRefusal: Error {
    let status: HTTPResponse.Status
    let message: String
}

/// Every request passes here first (Specs/web.md, "Security"): the Host is one of this
/// server's own names (else 421: DNS rebinding), the browser session's cookie is present
/// (else 401 and no data), a POST comes from this origin with the session's CSRF token (else
/// 403), its body is small (else 413). Every response, refusals included, gets the headers.
struct WebGuard: RouterMiddleware {
    typealias Context = WebContext
    /// A form is a few fields: 64 KiB is far more than any needs.
    static let bodyLimit = 64 * 1024
    let state: WebState

    func handle(_ request: Request, context: WebContext, next: (Request, WebContext) async throws -> Response)
        async throws -> Response
    {
        var response: Response
        do {
            response = try await checked(request, context: context, next: next)
        } catch let refusal as WebRefusal {
            response = Pages.refusal(refusal, state: state, signedIn: state.session(cookie: cookie(request)) != nil)
        } catch let error as HTTPResponseError {
            let message =
                error.status == .contentTooLarge
                ? "That form was larger than any Coffer sends (64 KiB at most). Nothing was changed."
                : "That request could not be read. Nothing was changed."
            response = Pages.refusal(
                WebRefusal(status: error.status, message: message), state: state,
                signedIn: state.session(cookie: cookie(request)) != nil)
        }
        Self.secure(&response.headers)
        return response
    }

    private func checked(
        _ request: Request, context: WebContext, next: (Request, WebContext) async throws -> Response
    ) async throws -> Response {
        let host = request.head.authority ?? ""
        guard allowedHosts.contains(host) else {
            throw WebRefusal(
                status: .misdirectedRequest, message: "This server answers only to 127.0.0.1, localhost and [::1].")
        }
        guard request.method == .get || request.method == .post else {
            throw WebRefusal(status: .methodNotAllowed, message: "Only GET and POST are used here.")
        }
        let path = request.uri.path
        if request.method == .get, path.hasPrefix("/static/") { return try await next(request, context) }
        var context = context
        if request.method == .post {
            try checkOrigin(request, host: host)
            context.form = try await formBody(request)
            context.path = request.uri.path
        }
        if path == "/session" { return try await next(request, context) }
        guard let session = state.session(cookie: cookie(request)) else {
            if request.method == .get { return Pages.connect(state: state) }
            throw WebRefusal(status: .unauthorized, message: "This browser has not connected to this server.")
        }
        if request.method == .post {
            let field = (try? URLEncodedFormDecoder().decode(CSRFField.self, from: context.form))?.csrf ?? ""
            guard constantTimeEqual(Array(field.utf8), Array(session.csrf.utf8)) else {
                throw WebRefusal(
                    status: .forbidden,
                    message:
                        "That form did not come from this page (its token is missing or wrong). Nothing was changed."
                )
            }
        }
        context.csrf = session.csrf
        state.noteRequest()
        return try await next(request, context)
    }

    private var allowedHosts: Set<String> {
        let port = state.port
        return ["127.0.0.1:\(port)", "localhost:\(port)", "[::1]:\(port)"]
    }

    private func cookie(_ request: Request) -> String? {
        request.cookies[state.cookieName]?.value
    }

    /// A POST must come from a page of this origin: its `Origin` is this server, or (a browser
    /// sends `Origin: null` under `Referrer-Policy: no-referrer`, or none) `Sec-Fetch-Site`, which
    /// no page can set, says same-origin.
    private func checkOrigin(_ request: Request, host: String) throws {
        let refused = WebRefusal(
            status: .forbidden, message: "That form came from another site. Nothing was changed.")
        if let origin = request.headers[.origin], origin != "null" {
            guard origin == "http://\(host)" else { throw refused }
        } else {
            guard request.headers[HTTPField.Name("Sec-Fetch-Site")!] == "same-origin" else { throw refused }
        }
    }

    private func formBody(_ request: Request) async throws -> String {
        let buffer = try await request.body.collect(upTo: Self.bodyLimit)
        return String(buffer: buffer)
    }

    private struct CSRFField: Decodable { let csrf: String }

    /// The headers on every response.
    static func secure(_ headers: inout HTTPFields) {
        headers[.contentSecurityPolicy] = "default-src 'self'; frame-ancestors 'none'; form-action 'self'"
        headers[.cacheControl] = "no-store"
        headers[HTTPField.Name("Referrer-Policy")!] = "no-referrer"
        headers[HTTPField.Name("X-Content-Type-Options")!] = "nosniff"
        headers[HTTPField.Name("Cross-Origin-Opener-Policy")!] = "same-origin"
        headers[HTTPField.Name("Cross-Origin-Resource-Policy")!] = "same-origin"
    }
}
