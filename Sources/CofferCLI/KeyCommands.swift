import ArgumentParser
import Foundation
import VaultCrypto
import VaultStore

/// `coffer passphrase change`.
struct PassphraseCommands: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "passphrase",
        abstract: "Manage the vault's passphrase.",
        subcommands: [Change.self]
    )

    struct Change: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Change the passphrase (instant: the master key is re-wrapped, records are untouched).",
            discussion: """
                Needs the current passphrase (or --recovery-key-file), never just a session. The new one is \
                asked twice on a terminal, or read from --new-passphrase-file or COFFER_NEW_PASSPHRASE.
                """
        )

        @OptionGroup var options: VaultOptions

        @Option(help: ArgumentHelp("Read the new passphrase from the first line of this file.", valueName: "path"))
        var newPassphraseFile: String?

        @Option(help: "Also change the key-derivation profile: interactive, moderate or sensitive.")
        var kdf: KDFProfile?

        func run() throws {
            let vault = try Vault.open(at: options.vaultURL, with: options.credential(allowSession: false))
            let newPassphrase = try PassphraseSource.passphrase(
                file: newPassphraseFile, command: nil, environmentVariable: "COFFER_NEW_PASSPHRASE",
                environment: options.environment, prompt: "New passphrase: ", confirm: true)
            try vault.changePassphrase(to: newPassphrase, parameters: kdf?.parameters)
            Output.line("Passphrase changed. The old passphrase no longer opens this vault.")
            Output.line("Key derivation: \(vault.kdfParameters.humanDescription)")
            Output.line("Unlocked sessions stay valid until they expire; lock them with: coffer lock")
        }
    }
}

/// `coffer rekey`.
struct Rekey: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Replace the master key and re-encrypt every record, in one atomic step.",
        discussion: """
            Use it when the master key may have leaked (a session file or memory copied). Needs the current \
            passphrase. Ends every session for this vault, and removes the recovery key (create a new one after).
            """
    )

    @OptionGroup var options: VaultOptions

    func run() throws {
        let passphrase = try options.currentPassphrase(prompt: "Passphrase: ")
        let vault = try Vault.open(at: options.vaultURL, with: .passphrase(passphrase))
        let droppedRecovery = try vault.rekey(passphrase: passphrase)
        let locked = SessionStore.removeAll(vaultID: vault.id, directory: options.sessionDirectory)
        Output.line("Rekeyed: a new master key now protects all \(vault.recordCount) record\(vault.recordCount == 1 ? "" : "s").")
        if locked > 0 { Output.line("Ended \(locked) unlocked session\(locked == 1 ? "" : "s"); unlock again to continue.") }
        if droppedRecovery {
            Output.line("The old recovery key no longer works.")
            Output.line("Next: coffer recovery-key create")
        }
    }
}

/// `coffer recovery-key create|remove`.
struct RecoveryKeyCommands: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "recovery-key",
        abstract: "Manage the recovery key: a second way in, for when the passphrase is forgotten.",
        subcommands: [Create.self, Remove.self]
    )

    struct Create: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create a recovery key (shown once) or replace the existing one.",
            discussion: "Needs the passphrase, never just a session. Open the vault with it later using --recovery-key-file FILE."
        )

        @OptionGroup var options: VaultOptions

        func run() throws {
            let vault = try Vault.open(at: options.vaultURL, with: options.credential(allowSession: false))
            let replaced = vault.hasRecoveryKey
            let recoveryKey = try vault.createRecoveryKey()
            Output.line("Recovery key — shown only this once. Write it on paper and keep it away from this computer:")
            Output.line()
            Output.line("    \(recoveryKey.displayText)")
            Output.line()
            Output.line("Anyone holding it can open this vault without the passphrase.")
            if replaced { Output.line("The previous recovery key no longer works.") }
            Output.line("To use it: save it in a file and pass --recovery-key-file FILE (e.g. coffer passphrase change --recovery-key-file FILE).")
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove the recovery key; only the passphrase will open the vault.")

        @OptionGroup var options: VaultOptions

        func run() throws {
            let vault = try Vault.open(at: options.vaultURL, with: options.credential(allowSession: false))
            guard vault.hasRecoveryKey else {
                throw CLIError(.invalidInput, "This vault has no recovery key; nothing was changed.",
                               hint: "Create one with: coffer recovery-key create")
            }
            try vault.removeRecoveryKey()
            Output.line("Recovery key removed: only the passphrase opens this vault now.")
        }
    }
}
