import ArgumentParser
import CofferKit
import FinanceCore
import Foundation
import VaultCrypto
import VaultStore

/// `coffer init`: creates a new, empty vault.
struct Init: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "init",
        abstract: "Create a new vault.",
        discussion:
            "Asks for the new passphrase twice on a terminal, or reads it from --passphrase-file, --passphrase-command or COFFER_PASSPHRASE."
    )

    @OptionGroup var options: VaultOptions

    @Option(help: "How hard the passphrase is to guess by brute force: interactive, moderate or sensitive.")
    var kdf: KDFProfile = .moderate

    @Flag(help: "Accept a passphrase shorter than 10 characters or easy to guess.")
    var allowWeakPassphrase = false

    @Option(
        help: ArgumentHelp(
            "The vault's currency, an ISO code such as GBP, EUR or USD (default: your locale's, else GBP).",
            valueName: "code"))
    var currency: String?

    func run() throws {
        let url = options.vaultURL
        guard !FileManager.default.fileExists(atPath: url.path) else {
            throw CLIError(
                .invalidInput, "A vault already exists at \(url.path); nothing was changed.",
                hint: "Use it (coffer status), or choose another path with --vault PATH.")
        }
        let currency =
            try currency.map { code in try CommandContext.input { try Currency.named(code) } } ?? Currency.default()
        let passphrase = try options.newVaultPassphrase(allowWeak: allowWeakPassphrase)
        let vault = try Ledger.create(
            at: url, passphrase: passphrase, parameters: kdf.parameters, currency: currency,
            guard: options.rollbackGuard
        ).vault
        Output.line("Created an empty vault at \(vault.url.path)")
        Output.line("Currency: \(currency.code) · key derivation: \(vault.kdfParameters.humanDescription)")
        Output.advice("Next: unlock it for this shell with  eval \"$(coffer unlock)\"")
        Output.advice(
            "      add your first account with     coffer account add \"Current account\" --category Cash --value 1200")
        Output.advice("      and set up a recovery key with  coffer recovery-key create")
    }
}
