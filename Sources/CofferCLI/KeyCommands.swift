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
            commandName: "change",
            abstract: "Change the passphrase, and replace the master key so the old passphrase is revoked.",
            discussion: """
                Needs the current passphrase (or the recovery key: --recovery-key, --recovery-key-file), never just a session. The new one is \
                asked twice on a terminal, or read from --new-passphrase-file or COFFER_NEW_PASSPHRASE. \
                By default the master key is replaced and every record re-encrypted (as `coffer rekey` does): \
                the old passphrase then opens neither this vault nor any archive made from now on. \
                --keep-master-key only re-wraps the master key (instant), and revokes nothing: the old \
                passphrase still opens every older archive, and with one of them, this vault's data.
                """
        )

        @OptionGroup var options: VaultOptions

        @Option(help: ArgumentHelp("Read the new passphrase from the first line of this file.", valueName: "path"))
        var newPassphraseFile: String?

        @Option(help: "Also change the key-derivation profile: interactive, moderate or sensitive.")
        var kdf: KDFProfile?

        @Flag(
            help:
                "Only re-wrap the master key (instant). The old passphrase is NOT revoked: with any older archive or copy of the vault it still opens your data."
        )
        var keepMasterKey = false

        @Flag(help: "Accept a new passphrase shorter than 10 characters or easy to guess.")
        var allowWeakPassphrase = false

        func run() throws {
            let vault = try options.openVault(allowSession: false)
            let newPassphrase = try PassphraseSource.newPassphrase(
                file: newPassphraseFile, command: nil, environmentVariable: "COFFER_NEW_PASSPHRASE",
                environment: options.environment, prompt: "New passphrase for \(options.vaultURL.path): ",
                allowWeak: allowWeakPassphrase)
            let report = try vault.changePassphrase(
                to: newPassphrase, parameters: kdf?.parameters, keepMasterKey: keepMasterKey)
            if keepMasterKey {
                Output.line("Passphrase changed. The master key was only re-wrapped (--keep-master-key).")
                Output.line(
                    "Revoked: nothing. The old passphrase no longer opens this vault file as it is now, but it still opens"
                )
                Output.line(
                    "every archive made before today and any older copy of this vault file, and with one of those, this"
                )
                Output.line("vault's current data. Replace the master key to revoke it: coffer rekey")
                Output.line("Unlocked sessions stay valid until they expire; lock them with: coffer lock")
            } else {
                Output.line(
                    "Passphrase changed, and the master key replaced (key generation \(report.generation)): all \(vault.recordCount) record\(vault.recordCount == 1 ? "" : "s") re-encrypted."
                )
                Output.line("Revoked: the old passphrase no longer opens this vault, nor any archive made from now on.")
                Output.line(
                    "Not revoked: archives made before today still open with the old passphrase: they hold the data of their time."
                )
                KeyChangeMessages.afterNewMasterKey(report, vault: vault, options: options)
            }
            Output.line("Key derivation: \(vault.kdfParameters.humanDescription)")
        }
    }
}

/// Lines every master-key replacement prints: sessions, recovery key, next step.
enum KeyChangeMessages {
    /// `offerRecoveryKey`: at a terminal, when the recovery key was dropped, ask to make a new one
    /// at once (the vault is open with the passphrase, which creating one needs).
    static func afterNewMasterKey(
        _ report: KeyChangeReport, vault: Vault, options: VaultOptions, offerRecoveryKey: Bool = false
    ) {
        let locked = SessionStore.removeAll(vaultID: vault.id, directory: options.sessionDirectory)
        if locked > 0 {
            Output.line("Ended \(locked) unlocked session\(locked == 1 ? "" : "s"); unlock again to continue.")
        }
        if report.recoveryKeyKept { Output.line("The recovery key still works.") }
        if report.recoveryKeyDropped {
            Output.line(
                "The recovery key was of an older kind that cannot follow a new master key without itself: it no longer works."
            )
            if offerRecoveryKey, Terminal.standardInputIsTerminal,
                (try? Terminal.confirm("Make a new recovery key now?", refusal: "A recovery key")) == true,
                let (recoveryKey, _) = try? vault.createRecoveryKey()
            {
                RecoveryKeyCommands.Create.show(recoveryKey)
            } else {
                Output.advice("Next: coffer recovery-key create")
            }
        }
        Output.line(
            "Archives made from now on are signed with the new key; older ones still verify as this vault's (coffer backup list)."
        )
    }
}

/// `coffer rekey`.
struct Rekey: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rekey",
        abstract: "Replace the master key and re-encrypt every record, in one atomic step.",
        discussion: """
            Use it when the master key may have leaked (a session file or memory copied). Needs the current \
            passphrase. Ends every session for this vault. The passphrase keeps working; so does the recovery \
            key, except one made by Coffer's first format, which cannot follow a new master key: rekey says \
            so before it acts. At a terminal it says what will change and asks first (--yes skips the \
            question); when the recovery key stops working, it offers to make a new one.
            """
    )

    @OptionGroup var options: VaultOptions

    @Flag(help: "Do not ask; needed without a terminal when the recovery key would stop working.")
    var yes = false

    func run() throws {
        let passphrase = try options.vaultPassphrase()
        let vault = try Vault.open(at: options.vaultURL, with: .passphrase(passphrase), guard: options.rollbackGuard)
        guard try confirm(vault) else { return Output.line("Kept the master key: nothing was changed.") }
        let report = try vault.rekey()
        Output.line(
            "Rekeyed: a new master key (key generation \(report.generation)) now protects all \(vault.recordCount) record\(vault.recordCount == 1 ? "" : "s")."
        )
        Output.line(
            "Revoked: the old master key (and every session and leaked copy of it) opens neither this vault nor any archive made from now on."
        )
        KeyChangeMessages.afterNewMasterKey(report, vault: vault, options: options, offerRecoveryKey: !yes)
    }

    /// Says, before anything changes, what the rekey will end and what keeps working; asks at a
    /// terminal (false: the person said no). Losing the recovery key without a terminal needs --yes.
    private func confirm(_ vault: Vault) throws -> Bool {
        let dropsRecoveryKey = vault.rekeyDropsRecoveryKey
        var plan = [
            "Rekeying replaces the master key and re-encrypts all \(vault.recordCount) record\(vault.recordCount == 1 ? "" : "s").",
            "Every unlocked session of this vault will end. The passphrase keeps working.",
        ]
        if dropsRecoveryKey {
            plan.append(
                "The recovery key will STOP WORKING: it is of Coffer's first kind, which cannot follow a new master key without itself."
            )
        } else if vault.hasRecoveryKey {
            plan.append("The recovery key keeps working.")
        }
        guard !yes else { return true }
        if !Terminal.standardInputIsTerminal {
            guard dropsRecoveryKey else { return true }
            throw CLIError(
                .invalidInput,
                "Rekeying would make the recovery key stop working, and needs confirmation. Nothing was changed.",
                hint:
                    "Add --yes to go ahead, then make a new recovery key: coffer recovery-key create. Or rekey with the recovery key: coffer passphrase change --recovery-key"
            )
        }
        plan.forEach { Terminal.note($0) }
        return try Terminal.confirm("Rekey now?", refusal: "Rekeying")
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
            commandName: "create",
            abstract: "Create a recovery key (shown once) or replace the existing one.",
            discussion: """
                Needs the passphrase, never just a session. Open the vault with it later by typing it (--recovery-key) or from a file (--recovery-key-file FILE). \
                Replacing a recovery key also replaces the master key, so the old recovery key is revoked.
                """
        )

        @OptionGroup var options: VaultOptions

        func run() throws {
            let vault = try options.openVault(allowSession: false)
            let replaced = vault.hasRecoveryKey
            let (recoveryKey, report) = try vault.createRecoveryKey()
            Self.show(recoveryKey)
            if replaced {
                Output.line("The master key was replaced (key generation \(report.generation)).")
                Output.line(
                    "Revoked: the previous recovery key opens neither this vault nor any archive made from now on.")
                Output.line(
                    "Not revoked: archives made before today still open with the previous recovery key: they hold the data of their time."
                )
                let locked = SessionStore.removeAll(vaultID: vault.id, directory: options.sessionDirectory)
                if locked > 0 {
                    Output.line("Ended \(locked) unlocked session\(locked == 1 ? "" : "s"); unlock again to continue.")
                }
            }
        }

        static func show(_ recoveryKey: RecoveryKey) {
            Output.line("Recovery key — shown only this once. Write it on paper and keep it away from this computer:")
            Output.line()
            Output.line("    \(recoveryKey.displayText)")
            Output.line()
            Output.line(
                "Anyone holding it can open this vault without the passphrase. It keeps working after passphrase changes and rekeys."
            )
            Output.line(
                "To use it: coffer passphrase change --recovery-key, and type it at the prompt (or --recovery-key-file FILE in a script)."
            )
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "remove",
            abstract: "Remove the recovery key and replace the master key, so the removed key is revoked.",
            discussion: "Needs the passphrase, which keeps working.")

        @OptionGroup var options: VaultOptions

        func run() throws {
            let vault = try options.openVault(allowSession: false)
            guard vault.hasRecoveryKey else {
                throw CLIError(
                    .invalidInput, "This vault has no recovery key; nothing was changed.",
                    hint: "Create one with: coffer recovery-key create")
            }
            let report = try vault.removeRecoveryKey()
            Output.line(
                "Recovery key removed, and the master key replaced (key generation \(report.generation)): only the passphrase opens this vault now."
            )
            Output.line("Revoked: the removed recovery key opens neither this vault nor any archive made from now on.")
            Output.line(
                "Not revoked: archives made before today still open with the removed recovery key: they hold the data of their time."
            )
            KeyChangeMessages.afterNewMasterKey(report, vault: vault, options: options)
        }
    }
}
