import ArgumentParser
import CofferKit
import FinanceCore
import Foundation
import VaultCrypto
import VaultStore

/// `coffer demo`: a vault shaped like the Plain Text Wealth test set 1, then its overview.
struct Demo: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Create a demo vault (7 accounts, six months of monthly values) and show its overview.",
        discussion: """
            Without --vault or COFFER_VAULT it goes to demo.coffer beside the default vault, never the \
            default vault itself. The passphrase comes from the usual sources; without one it is 'demo', \
            which is printed. Not for real money.
            """)
    @OptionGroup var options: VaultOptions

    static let demoPassphrase = "demo"

    /// `--vault` or `COFFER_VAULT` when given; otherwise `demo.coffer` beside the default vault,
    /// so a demo never becomes the vault every later command opens.
    var demoURL: URL {
        let explicit = !(options.vault ?? "").isEmpty || !(options.environment["COFFER_VAULT"] ?? "").isEmpty
        return explicit
            ? options.vaultURL : options.vaultURL.deletingLastPathComponent().appendingPathComponent("demo.coffer")
    }

    func run() throws {
        let url = demoURL
        let today = try CommandContext.today()
        let passphrase: Passphrase
        let announcedPassphrase: Bool
        if options.passphraseFile != nil || options.passphraseCommand != nil
            || options.environment["COFFER_PASSPHRASE"] != nil
        {
            passphrase = try options.currentPassphrase(prompt: "Passphrase: ")
            announcedPassphrase = false
        } else {
            passphrase = try Passphrase(Self.demoPassphrase)
            announcedPassphrase = true
        }
        if FileManager.default.fileExists(atPath: url.path) {
            throw CLIError(
                .invalidInput, "A vault already exists at \(url.path); nothing was changed.",
                hint: "Pick a new path for the demo: coffer demo --vault /tmp/demo.coffer")
        }
        let ledger = try Ledger.create(
            at: url, passphrase: passphrase, parameters: KDFProfile.interactive.parameters, currency: .gbp,
            guard: options.rollbackGuard)
        try ledger.addDemoData(today: today)
        Output.line(
            "Created a demo vault at \(url.path) (Argon2id interactive\(announcedPassphrase ? ", passphrase '\(Self.demoPassphrase)'" : ""))."
        )
        Output.line()
        try Overview.parse(["--vault", url.path]).render(ledger: ledger, date: today, json: false)
        Output.advice("Try: COFFER_VAULT=\(url.path) coffer assets")
        if url != options.vaultURL { Output.line("(Your own vault, \(options.vaultURL.path), was not touched.)") }
    }
}
