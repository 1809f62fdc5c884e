import CofferKit
import FinanceCore
import Foundation
import VaultCrypto
import VaultStore

/// What the server holds: the vault's keys (nil while locked), the one-time launch token, the
/// one browser session it was exchanged for, and when the last request came. Shared by every
/// connection, so every field is behind one lock.
final class WebState: @unchecked Sendable {
    let settings: WebServer.Settings
    let marker: HeldKeysMarker
    /// Vault work runs here: pages side by side (each reads the file with its own connection),
    /// a change or an unlock alone, after every read before it and before any after (a barrier),
    /// so two writes never interleave and no page reads half of one.
    let vaultQueue = DispatchQueue(label: "coffer.web.vault", attributes: .concurrent)

    private let lock = NSLock()
    private var heldKeys: HeldKeys?
    private var tokenSpent = false
    private var browser: BrowserSession?
    private var lastRequest = Date()
    private var openerFile: URL?
    private var boundPort = 0
    private var lastViews: [String: LastView] = [:]
    private var backup = BackupProgress(running: false, steps: [])
    /// 32 random bytes in hex: printed once, spent on first use.
    let launchToken = SecureRandom.bytes(count: 32).hexString

    /// A page's data as computed at one state of the vault file (its commit record's digest).
    struct LastView {
        let state: [UInt8]
        let value: any Sendable
    }

    /// So many pages' data are kept at most: the last of each kind a person looks at.
    static let lastViewLimit = 16

    /// What `key`'s page computed when the file was at `state`; nil when the file has moved on
    /// (a write here, by the CLI or a sync), or it was never computed.
    func lastView<T: Sendable>(_ key: String, at state: [UInt8], as: T.Type) -> T? {
        lock.withLock {
            guard let view = lastViews[key], constantTimeEqual(view.state, state) else { return nil }
            return view.value as? T
        }
    }

    func keepView(_ key: String, at state: [UInt8], _ value: any Sendable) {
        lock.withLock {
            if lastViews[key] == nil, lastViews.count >= Self.lastViewLimit { lastViews.removeAll() }
            lastViews[key] = LastView(state: state, value: value)
        }
    }

    /// The steps of the backup being made (or of the last one): the Backups page shows the
    /// newest while it waits, from `/backups/progress`.
    struct BackupProgress: Encodable, Sendable {
        var running: Bool
        var steps: [String]
    }

    var backupProgress: BackupProgress { lock.withLock { backup } }

    func backupStarted() { lock.withLock { backup = BackupProgress(running: true, steps: []) } }

    func backupStep(_ step: String) { lock.withLock { backup.steps.append(step) } }

    func backupEnded() { lock.withLock { backup.running = false } }

    struct BrowserSession {
        /// The cookie's value.
        let id: String
        /// Every form carries it; a POST without it is refused.
        let csrf: String
        /// What the last change said, shown once on the next page with its Undo control.
        var notice: Notice?
    }

    struct Notice {
        let text: String
        let undoable: Bool
        /// Where the browser goes next when the change made a page of its own (a new invoice).
        var location: String? = nil
        /// Said as a problem (a backup that failed somewhere), not as done.
        var problem = false
    }

    init(settings: WebServer.Settings, marker: HeldKeysMarker) {
        self.settings = settings
        self.marker = marker
        self.heldKeys = settings.keys
    }

    var port: Int {
        get { lock.withLock { boundPort } }
        set { lock.withLock { boundPort = newValue } }
    }

    var cookieName: String { "coffer-\(port)" }

    var keys: HeldKeys? { lock.withLock { heldKeys } }

    func hold(_ keys: HeldKeys) { lock.withLock { heldKeys = keys } }

    /// The Lock button: the keys are dropped (sodium_free wipes them) with every page's data
    /// kept from them; the server goes on, asking for the passphrase again.
    func lockVault() {
        lock.withLock {
            heldKeys = nil
            lastViews = [:]
        }
    }

    func wipe() {
        lock.withLock {
            heldKeys = nil
            lastViews = [:]
            browser = nil
            if let openerFile { try? FileManager.default.removeItem(at: openerFile) }
        }
    }

    func noteRequest() { lock.withLock { lastRequest = Date() } }

    var idleFor: TimeInterval { lock.withLock { Date().timeIntervalSince(lastRequest) } }

    /// Exchanges the launch token for the browser session, once: a second use, or a wrong
    /// token, gets nil.
    func exchange(token: String) -> BrowserSession? {
        lock.withLock {
            guard !tokenSpent, constantTimeEqual(Array(token.utf8), Array(launchToken.utf8)) else { return nil }
            tokenSpent = true
            if let openerFile { try? FileManager.default.removeItem(at: openerFile) }
            let session = BrowserSession(
                id: SecureRandom.bytes(count: 32).hexString, csrf: SecureRandom.bytes(count: 32).hexString)
            browser = session
            return session
        }
    }

    /// The session whose cookie this is.
    func session(cookie: String?) -> BrowserSession? {
        lock.withLock {
            guard let cookie, let browser, constantTimeEqual(Array(cookie.utf8), Array(browser.id.utf8)) else {
                return nil
            }
            return browser
        }
    }

    func setNotice(_ notice: Notice?) { lock.withLock { browser?.notice = notice } }

    /// The notice to show once.
    func takeNotice() -> Notice? {
        lock.withLock {
            defer { browser?.notice = nil }
            return browser?.notice
        }
    }

    /// A private page that sends the browser on to `address` (for xdg-open, whose arguments
    /// other users can read); removed when the token is spent or the server ends.
    func writeOpener(_ address: String) throws -> URL {
        let file = settings.sessionDirectory.appendingPathComponent(
            "web-\(SecureRandom.bytes(count: 8).hexString).html")
        let page = """
            <!doctype html><meta charset="utf-8"><title>Coffer</title>
            <meta http-equiv="refresh" content="0;url=\(address)">
            <p><a href="\(address)">Open Coffer</a></p>
            """
        guard
            FileManager.default.createFile(
                atPath: file.path, contents: Data(page.utf8), attributes: [.posixPermissions: 0o600])
        else {
            throw CofferError(.failed, "The page that opens the browser could not be written.")
        }
        lock.withLock { openerFile = file }
        return file
    }

    /// Today: COFFER_TODAY's day when set, else the clock's.
    var today: CalendarDate { settings.today ?? .today() }
}
