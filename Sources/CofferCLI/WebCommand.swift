import ArgumentParser
import FinanceCore
import Foundation
import VaultStore

/// What `coffer web` hands to the web face: the command line parsed and the vault found (and
/// unlocked, when a credential needs nobody to type it). The `coffer` program sets `serve`, so
/// that CofferCLI and CofferWeb, two faces, know nothing of each other.
public struct WebLaunch: Sendable {
    public let vaultURL: URL
    public let sessionDirectory: URL
    public let rollbackGuard: RollbackGuard
    /// 0: any free port.
    public let port: Int
    public let openBrowser: Bool
    public let idleTimeout: TimeInterval
    /// Nil: the page asks for the passphrase.
    public let keys: HeldKeys?
    /// COFFER_TODAY, for reproducible tests and demos; nil: the clock's day.
    public let today: CalendarDate?
    /// The configuration file's `backup.targets`, beside the vault's saved ones.
    public let configuredBackupTargets: [String]
    public let appVersion: String
}

/// `coffer web`: the vault in a browser, on this machine only.
public struct Web: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "web",
        abstract: "Open the vault in your browser, served on this computer only (127.0.0.1 and ::1).",
        discussion: """
            Prints `Open http://127.0.0.1:PORT/#token=...` and opens it with xdg-open (unless --no-open). \
            The token works once: the first page to use it gets a session cookie, and nobody else can. \
            The page asks for the passphrase unless one is given as for any command (a session, \
            --passphrase-file, COFFER_PASSPHRASE ...). The keys stay in this process, never in the browser. \
            It runs until Ctrl-C, `coffer lock`, or --timeout without a request (default 15m). \
            Exit codes: 64 port in use or bad option, 66 no vault, 77 wrong passphrase.
            """
    )

    /// Set by the `coffer` program: serves until the end (Ctrl-C, `coffer lock`, the timeout).
    nonisolated(unsafe) public static var serve: ((WebLaunch) throws -> Void)?

    @OptionGroup var options: VaultOptions
    @Option(help: ArgumentHelp("Listen on this port (default: a free one).", valueName: "port")) var port: Int?
    @Flag(help: "Print the address, do not open a browser.") var noOpen = false
    @Option(
        help: ArgumentHelp("End after this long without a request, e.g. 15m, 1h (default 15m).", valueName: "duration"))
    var timeout: String?

    public init() {}

    public func run() throws {
        if let port, !(1...65535).contains(port) {
            throw CLIError(.invalidInput, "A port is a number from 1 to 65535: \(port) is not one.")
        }
        let idle = try Duration.parse(timeout ?? "15m")
        let today = try CommandContext.today()
        try options.requireVault()
        guard let serve = Self.serve else {
            throw CLIError(.failure, "This coffer was built without its web face.")
        }
        try serve(
            WebLaunch(
                vaultURL: options.vaultURL, sessionDirectory: options.sessionDirectory,
                rollbackGuard: options.rollbackGuard, port: port ?? 0, openBrowser: !noOpen, idleTimeout: idle,
                keys: try heldKeys(),
                today: (options.environment["COFFER_TODAY"] ?? "").isEmpty ? nil : today,
                configuredBackupTargets: Configuration.current.backupTargets, appVersion: Coffer.version))
    }

    /// The keys, when the vault opens without a prompt (a session, a passphrase file or
    /// command, COFFER_PASSPHRASE): a wrong one fails now (77). A session that has ended is no
    /// error here: the page asks for the passphrase instead.
    private func heldKeys() throws -> HeldKeys? {
        guard options.hasCredentialWithoutPrompt else { return nil }
        do {
            let credential = try options.credential()
            return try UnlockedVaultFile.unlock(at: options.vaultURL, with: credential, guard: options.rollbackGuard)
                .holdKeys()
        } catch let error as VaultError where error.code == .sessionNotFound || error.code == .sessionExpired {
            Terminal.note("\(error.errorDescription ?? "The session has ended.") The page will ask for the passphrase.")
            return nil
        }
    }
}
