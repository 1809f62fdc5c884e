import CofferKit
import FinanceCore
import Foundation
import Hummingbird
import VaultStore

/// Every request reads the vault file as it is now, with the held keys, on the vault queue: the
/// page never shows a stale copy, and a write never lands on an older state than the file's (a
/// CLI write in between is simply part of what the next request reads).
enum WebVault {
    /// Runs `body` on the vault queue, off the server's event loops (Argon2id, a large vault):
    /// alongside other reads, or `exclusive`ly (a change, an unlock).
    static func onVaultQueue<T: Sendable>(
        _ state: WebState, exclusive: Bool = true, _ body: @escaping @Sendable () throws -> T
    ) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            state.vaultQueue.async(flags: exclusive ? .barrier : []) {
                continuation.resume(with: Result { try body() })
            }
        }
    }

    /// The ledger as `view` needs it (the whole vault when nil); `exclusive` for a change.
    static func withLedger<T: Sendable>(
        _ state: WebState, view: LedgerView?, exclusive: Bool = false, _ body: @escaping @Sendable (Ledger) throws -> T
    ) async throws -> T {
        guard let keys = state.keys else { throw Locked() }
        return try await onVaultQueue(state, exclusive: exclusive) {
            let file = try UnlockedVaultFile.unlock(
                at: state.settings.vaultURL, with: .held(keys), guard: state.settings.rollbackGuard)
            let ledger = try view.map { try Ledger.open(file, for: $0) } ?? Ledger(vault: file.open())
            return try body(ledger)
        }
    }

    /// What `compute` makes of the ledger as `view` needs it, reused while the file stays at
    /// the state it was computed at: each request still unlocks the file and authenticates its
    /// commit record (a CLI write, a sync, a rollback or a rekey is seen at once), but a page
    /// asked for again over an unchanged vault is not read and computed again. `key` names the
    /// page and everything else its data depends on.
    static func reading<T: Sendable>(
        _ state: WebState, key: String, view: LedgerView?, _ compute: @escaping @Sendable (Ledger) throws -> T
    ) async throws -> T {
        guard let keys = state.keys else { throw Locked() }
        return try await onVaultQueue(state, exclusive: false) {
            let file = try UnlockedVaultFile.unlock(
                at: state.settings.vaultURL, with: .held(keys), guard: state.settings.rollbackGuard)
            let current = try file.currentState()
            if let kept = state.lastView(key, at: current, as: T.self) { return kept }
            let ledger = try view.map { try Ledger.open(file, for: $0) } ?? Ledger(vault: file.open())
            let value = try compute(ledger)
            // A write between the two reads makes `value` newer than `current`, never older:
            // `current` does not come back (the high-water mark refuses it), so it is not shown.
            state.keepView(key, at: current, value)
            return value
        }
    }

    struct Locked: Error {}

    /// An entry that is probably a slip (EntryDoubts), posted without Record it anyway.
    struct Doubted: Error { let doubts: [String] }

    /// Asks before an entry the CLI would ask about, unless the form already said yes.
    static func ask(_ doubts: [String], confirmed: String?) throws {
        guard doubts.isEmpty || confirmed == "yes" else { throw Doubted(doubts: doubts) }
    }

    /// 409: an entry that is probably a slip, not recorded; the page asks to confirm it.
    static let doubted = HTTPResponse.Status.conflict

    /// 423: the page asks for the passphrase first.
    static let locked = HTTPResponse.Status(code: 423, reasonPhrase: "Locked")

    /// A page: its HTML, or the unlock page while locked, or the refusal its error calls for.
    static func page(
        _ state: WebState, _ context: WebContext, view: LedgerView?, status: HTTPResponse.Status = .ok,
        banner: Layout.Banner? = nil,
        _ render: @escaping @Sendable (Ledger, Layout.Banner?) throws -> String
    ) async throws -> Response {
        let banner = banner ?? takeBanner(state)
        do {
            return Layout.response(try await withLedger(state, view: view) { try render($0, banner) }, status: status)
        } catch {
            return try refusal(for: error, state, context)
        }
    }

    /// A page drawn from data `compute` makes, kept while the vault is unchanged (`reading`).
    static func page<T: Sendable>(
        _ state: WebState, _ context: WebContext, key: String, view: LedgerView?,
        compute: @escaping @Sendable (Ledger) throws -> T, _ render: (T, Layout.Banner?) throws -> String
    ) async throws -> Response {
        let banner = takeBanner(state)
        do {
            return Layout.response(try render(try await reading(state, key: key, view: view, compute), banner))
        } catch {
            return try refusal(for: error, state, context)
        }
    }

    /// The last change's notice, shown once.
    private static func takeBanner(_ state: WebState) -> Layout.Banner? {
        state.takeNotice().map {
            $0.problem ? Layout.Banner.problem($0.text) : Layout.Banner.done($0.text, undoable: $0.undoable)
        }
    }

    /// A change: made in one unit of work (one `coffer log` entry), then the browser is sent to
    /// `back` (303) where the notice and its Undo show. Refused input re-renders `back`'s page
    /// with the reason, via `again`, and the vault is exactly as it was.
    static func change(
        _ state: WebState, _ context: WebContext, view: LedgerView? = nil, back: String,
        again: ((Layout.Banner) async throws -> Response)? = nil,
        _ body: @escaping @Sendable (Ledger) throws -> WebState.Notice
    ) async throws -> Response {
        do {
            let notice = try await withLedger(state, view: view, exclusive: true, body)
            state.setNotice(notice)
            return Response(status: .seeOther, headers: [.location: notice.location ?? back])
        } catch let doubted as Doubted {
            let banner = Layout.Banner.doubt(
                doubted.doubts.joined(separator: " "), action: context.path, fields: context.postedFields)
            guard let again else {
                throw WebRefusal(status: Self.doubted, message: doubted.doubts.joined(separator: " "))
            }
            var response = try await again(banner)
            response.status = Self.doubted
            return response
        } catch let error where inputProblem(error) != nil {
            let text = inputProblem(error)!
            guard let again else { throw WebRefusal(status: .badRequest, message: text) }
            var response = try await again(.problem(text))
            response.status = .badRequest
            return response
        } catch {
            return try refusal(for: error, state, context)
        }
    }

    /// What a person typed that a rule refused, in words for the page; nil for other errors.
    static func inputProblem(_ error: Error) -> String? {
        switch error {
        case let error as CofferError
        where [.invalidInput, .noMatch, .ambiguous, .alreadyExists, .inUse, .unchanged, .closed].contains(error.code):
            let candidates =
                error.candidates.isEmpty ? "" : " Choose one of: \(error.candidates.joined(separator: ", "))."
            return "\(error.message)\(candidates) Nothing was changed."
        case let error as FinanceError where error.code != .invalidRecord && error.code != .overflow:
            return "\(error.errorDescription ?? "That value is not valid.") Nothing was changed."
        case is DecodingError:
            return "The form is missing a field. Nothing was changed."
        default:
            return nil
        }
    }

    /// Locked, keys changed elsewhere, a rolled-back or damaged file: said on the page with its
    /// status; nothing was written.
    static func refusal(for error: Error, _ state: WebState, _ context: WebContext) throws -> Response {
        switch error {
        case is Locked:
            return Pages.unlock(csrf: context.csrf, status: Self.locked)
        case let error as VaultError where error.code == .sessionInvalid:
            state.lockVault()
            return Pages.unlock(
                csrf: context.csrf,
                problem: "The vault's keys were changed elsewhere (a new passphrase or a rekey): unlock it again.",
                status: Self.locked)
        case let refusal as WebRefusal:
            throw refusal
        case let error as VaultError:
            throw WebRefusal(
                status: .conflict,
                message: "\(error.errorDescription ?? "The vault cannot be read.") Nothing was changed.")
        default:
            if let text = inputProblem(error) { throw WebRefusal(status: .badRequest, message: text) }
            throw WebRefusal(
                status: .internalServerError,
                message: "\(error.localizedDescription) Nothing was changed.")
        }
    }
}
