import CofferKit
import FinanceCore
import Foundation
import Hummingbird
import VaultCrypto
import VaultStore

/// The routes (Specs/web.md): GET shows, POST changes, each change one entry in `coffer log`.
enum WebRoutes {
    static func router(_ state: WebState) -> Router<WebContext> {
        let router = Router(context: WebContext.self)
        router.add(middleware: WebGuard(state: state))
        router.get("/static/coffer.css") { _, _ in StaticFiles.response(StaticFiles.styleSheet, type: "text/css") }
        router.get("/static/connect.js") { _, _ in
            StaticFiles.response(StaticFiles.connectScript, type: "text/javascript")
        }
        router.get("/static/busy.js") { _, _ in StaticFiles.response(StaticFiles.busyScript, type: "text/javascript") }
        router.get("/static/icon.svg") { _, _ in StaticFiles.response(StaticFiles.icon, type: "image/svg+xml") }
        router.post("/session") { _, context in try connect(state, context) }
        router.post("/unlock") { _, context in try await unlock(state, context) }
        router.post("/lock") { _, context in
            state.lockVault()
            return Pages.unlock(csrf: context.csrf, problem: nil)
        }
        router.post("/undo") { _, context in
            try await WebVault.change(state, context, back: "/") { ledger in
                guard let entry = try ledger.undo() else {
                    throw CofferError(.unchanged, "There is nothing to undo.")
                }
                return .init(text: "Undone: \(entry.summary).", undoable: false)
            }
        }
        OverviewPage.add(to: router, state)
        AssetsPages.add(to: router, state)
        BudgetPage.add(to: router, state)
        InvoicesPages.add(to: router, state)
        ReportsPage.add(to: router, state)
        BackupsPage.add(to: router, state)
        DevicesSection.add(to: router, state)
        SearchPage.add(to: router, state)
        SettingsPage.add(to: router, state)
        return router
    }

    /// The token from the printed address, exchanged once for the session cookie.
    private static func connect(_ state: WebState, _ context: WebContext) throws -> Response {
        struct Form: Decodable { let token: String }
        let token = (try? URLEncodedFormDecoder().decode(Form.self, from: context.form))?.token ?? ""
        guard let session = state.exchange(token: token) else {
            throw WebRefusal(
                status: .unauthorized,
                message: "That token is wrong or was already used. Run coffer web again for a new address.")
        }
        var response = Response(status: .seeOther, headers: [.location: "/"])
        response.setCookie(
            Cookie(name: state.cookieName, value: session.id, path: "/", httpOnly: true, sameSite: .strict))
        return response
    }

    /// The passphrase typed in the page; Argon2id runs off the server's threads.
    private static func unlock(_ state: WebState, _ context: WebContext) async throws -> Response {
        struct Form: Decodable { let passphrase: String }
        guard state.keys == nil else { return Response(status: .seeOther, headers: [.location: "/"]) }
        var typed = Array(((try? URLEncodedFormDecoder().decode(Form.self, from: context.form))?.passphrase ?? "").utf8)
        defer { secureWipe(&typed) }
        let passphrase: Passphrase
        do {
            passphrase = try Passphrase(utf8Bytes: typed)
        } catch {
            return Pages.unlock(csrf: context.csrf, problem: "Enter the vault's passphrase.", status: .badRequest)
        }
        do {
            let keys = try await WebVault.onVaultQueue(state) {
                try UnlockedVaultFile.unlock(
                    at: state.settings.vaultURL, with: .passphrase(passphrase), guard: state.settings.rollbackGuard
                ).holdKeys()
            }
            state.hold(keys)
            return Response(status: .seeOther, headers: [.location: "/"])
        } catch let error as VaultError where error.code == .wrongPassphrase {
            return Pages.unlock(
                csrf: context.csrf, problem: "That passphrase does not open this vault.", status: .forbidden)
        }
    }
}
