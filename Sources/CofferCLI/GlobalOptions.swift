import ArgumentParser
import Foundation
import VaultCrypto
import VaultStore

#if canImport(Glibc)
    import Glibc
#endif

/// Options every vault command takes: where the vault is and how to unlock it.
/// Passphrases never travel in argv: only a file path or a command to run does.
struct VaultOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "The vault file (default: $COFFER_VAULT, else the configuration file's vault, else $XDG_DATA_HOME/coffer/vault.coffer).",
            valueName: "path"))
    var vault: String?

    @Option(name: .long, help: ArgumentHelp("Read the passphrase from the first line of this file.", valueName: "path"))
    var passphraseFile: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Run this shell command and read the passphrase from its output (like restic's --password-command).",
            valueName: "command"))
    var passphraseCommand: String?

    @Option(
        name: .long,
        help: ArgumentHelp("Unlock with the recovery key in this file instead of the passphrase.", valueName: "path"))
    var recoveryKeyFile: String?

    @Flag(
        name: .customLong("recovery-key"),
        help: "Unlock with the recovery key typed at a prompt (not echoed) instead of the passphrase.")
    var recoveryKeyAtPrompt = false

    @Flag(
        name: .long,
        help:
            "Open a vault file older than the one this computer last saw (after a deliberate restore or copy), and remember it as the newest."
    )
    var acceptRollback = false

    var environment: [String: String] { ProcessInfo.processInfo.environment }
    var configuration: Configuration { Configuration.current }

    /// `--vault`, else `COFFER_VAULT`, else the configuration file's `vault`, else
    /// `$XDG_DATA_HOME/coffer/vault.coffer` (`~/.local/share/coffer/vault.coffer` when XDG_DATA_HOME
    /// is unset).
    var vaultURL: URL {
        if let vault, !vault.isEmpty { return URL(fileURLWithPath: vault) }
        if let path = environment["COFFER_VAULT"], !path.isEmpty { return URL(fileURLWithPath: path) }
        if let path = configuration.vault, !path.isEmpty { return URL(fileURLWithPath: path) }
        let dataHome =
            environment["XDG_DATA_HOME"].flatMap { $0.isEmpty ? nil : URL(fileURLWithPath: $0) }
            ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".local/share")
        return dataHome.appendingPathComponent("coffer/vault.coffer")
    }

    var sessionDirectory: URL { SessionStore.defaultDirectory(environment: environment) }

    /// This machine's high-water marks: `$XDG_STATE_HOME/coffer` (else `~/.local/state/coffer`).
    var rollbackGuard: RollbackGuard {
        RollbackGuard(
            directory: RollbackGuard.defaultDirectory(environment: environment), acceptRollback: acceptRollback)
    }

    /// Unlocks the vault without reading its records yet (`UnlockedVaultFile`), for a command
    /// that may answer from one record.
    func unlockVaultFile() throws -> UnlockedVaultFile {
        try requireVault()
        return try withSessionFallback(credential()) {
            try UnlockedVaultFile.unlock(at: vaultURL, with: $0, guard: rollbackGuard)
        }
    }

    /// Opens, unlocks and verifies the vault, checked against this machine's high-water mark.
    func openVault(allowSession: Bool = true) throws -> Vault {
        if let open = CommandSession.ledger(at: vaultURL) { return open.vault }
        try requireVault()
        return try withSessionFallback(credential(allowSession: allowSession)) {
            try Vault.open(at: vaultURL, with: $0, guard: rollbackGuard)
        }
    }

    /// A session that has ended (locked, or its time is up) is no way in any more: at a
    /// terminal the passphrase is asked for instead, as sudo does. Without one, the command
    /// fails (77) as before, so a script never waits.
    private func withSessionFallback<Result>(_ credential: Credential, _ open: (Credential) throws -> Result) throws
        -> Result
    {
        do {
            return try open(credential)
        } catch let error as VaultError
            where error.code == .sessionNotFound || error.code == .sessionExpired
        {
            guard case .session = credential, Terminal.standardInputIsTerminal else { throw error }
            Terminal.note("\(error.errorDescription ?? "The session has ended.") Asking for the passphrase instead.")
            return try open(.passphrase(currentPassphrase(prompt: passphrasePrompt)))
        }
    }

    /// With no vault at the path, says so (exit 66) before any passphrase is asked for.
    func requireVault() throws {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: vaultURL.path, isDirectory: &isDirectory) else {
            throw CLIError(
                .notFound, "No vault at \(Self.display(vaultURL)) — create one with `coffer init`.",
                hint: "Or point at yours with --vault PATH or COFFER_VAULT.")
        }
    }

    /// The passphrase of this vault (which must exist), asked for by its path at a terminal.
    func vaultPassphrase() throws -> Passphrase {
        try requireVault()
        return try currentPassphrase(prompt: passphrasePrompt)
    }

    /// What a prompt for this vault's passphrase says: which file it unlocks.
    var passphrasePrompt: String { "Passphrase for \(Self.display(vaultURL)): " }

    /// A path as a person reads it: the home folder as `~`.
    static func display(_ url: URL) -> String {
        let path = url.standardizedFileURL.path
        let home = URL(
            fileURLWithPath: ProcessInfo.processInfo.environment["HOME"]
                ?? FileManager.default.homeDirectoryForCurrentUser.path
        ).standardizedFileURL.path
        guard home != "/", path.hasPrefix(home + "/") else { return path }
        return "~" + path.dropFirst(home.count)
    }

    /// Whether the vault can be unlocked without asking anyone: a session, a passphrase file,
    /// command or variable, or a recovery key file.
    var hasCredentialWithoutPrompt: Bool {
        recoveryKeyFile != nil || passphraseFile != nil || passphraseCommand != nil
            || !(environment["COFFER_SESSION"] ?? "").isEmpty || environment["COFFER_PASSPHRASE"] != nil
            || configuration.passphraseCommand != nil
    }

    var sessionToken: SessionToken? {
        get throws {
            guard let text = environment["COFFER_SESSION"], !text.isEmpty else { return nil }
            return try SessionToken(parsing: text)
        }
    }

    /// How a command that reads the vault unlocks it: an explicit recovery key or passphrase
    /// source first, then the unlocked session, then `COFFER_PASSPHRASE`, then the terminal.
    func credential(allowSession: Bool = true, prompt: String? = nil) throws -> Credential {
        let prompt = prompt ?? passphrasePrompt
        if let recoveryKeyFile {
            var bytes = try PassphraseSource.readFile(recoveryKeyFile, what: "recovery key")
            defer { secureWipe(&bytes) }
            return .recoveryKey(try RecoveryKey(parsing: String(decoding: bytes, as: UTF8.self)))
        }
        if recoveryKeyAtPrompt { return .recoveryKey(try typedRecoveryKey()) }
        if passphraseFile != nil || passphraseCommand != nil {
            return .passphrase(try currentPassphrase(prompt: prompt))
        }
        if allowSession, let token = try sessionToken {
            return .session(token, directory: sessionDirectory)
        }
        return .passphrase(try currentPassphrase(prompt: prompt))
    }

    /// The recovery key typed at the terminal (as KeePassXC and age ask): a paper key need not be
    /// copied into a plaintext file to be used. Spaces and dashes as printed are accepted.
    func typedRecoveryKey() throws -> RecoveryKey {
        try requireVault()
        guard Terminal.standardInputIsTerminal else {
            throw CLIError(
                .noPermission, "--recovery-key asks for the recovery key at a terminal, and there is none.",
                hint: "In a script, pass it in a file: --recovery-key-file PATH")
        }
        var bytes = try Terminal.readSecretLine(prompt: "Recovery key for \(Self.display(vaultURL)): ")
        defer { secureWipe(&bytes) }
        return try RecoveryKey(parsing: String(decoding: bytes, as: UTF8.self))
    }

    /// The passphrase from `--passphrase-file`, `--passphrase-command`, `COFFER_PASSPHRASE`, the
    /// configuration file's `passphrase_command` or the terminal, in that order. Without any of
    /// them and without a terminal, fails at once.
    func currentPassphrase(prompt: String) throws -> Passphrase {
        let command =
            passphraseCommand
            ?? (passphraseFile == nil && environment["COFFER_PASSPHRASE"] == nil
                ? configuration.passphraseCommand : nil)
        return try PassphraseSource.passphrase(
            file: passphraseFile, command: command,
            environmentVariable: "COFFER_PASSPHRASE", environment: environment,
            prompt: prompt, confirm: false)
    }

    /// A passphrase for a new vault: same sources, but asked twice on a terminal, and refused
    /// when weak unless `allowWeak`.
    func newVaultPassphrase(allowWeak: Bool) throws -> Passphrase {
        try PassphraseSource.newPassphrase(
            file: passphraseFile, command: passphraseCommand,
            environmentVariable: "COFFER_PASSPHRASE", environment: environment,
            prompt: "New passphrase for \(vaultURL.path): ", allowWeak: allowWeak)
    }
}

/// Where passphrases come from. Kept apart from the options so the rules are in one place.
enum PassphraseSource {
    static let noSourceHint = """
        Supply it with --passphrase-file PATH, --passphrase-command CMD or COFFER_PASSPHRASE, \
        or unlock a session first: eval "$(coffer unlock)"
        """

    static func passphrase(
        file: String?, command: String?, environmentVariable: String,
        environment: [String: String], prompt: String, confirm: Bool
    ) throws -> Passphrase {
        var bytes = try passphraseBytes(
            file: file, command: command, environmentVariable: environmentVariable,
            environment: environment, prompt: prompt, confirm: confirm)
        defer { secureWipe(&bytes) }
        return try passphrase(from: bytes)
    }

    /// A new passphrase (asked twice on a terminal), refused when it is weak unless `allowWeak`.
    static func newPassphrase(
        file: String?, command: String?, environmentVariable: String,
        environment: [String: String], prompt: String, allowWeak: Bool
    ) throws -> Passphrase {
        var bytes = try passphraseBytes(
            file: file, command: command, environmentVariable: environmentVariable,
            environment: environment, prompt: prompt, confirm: true)
        defer { secureWipe(&bytes) }
        let passphrase = try passphrase(from: bytes)
        if !allowWeak, let weakness = PassphraseStrength.weakness(of: String(decoding: bytes, as: UTF8.self)) {
            throw CLIError(
                .invalidInput, "That passphrase is too weak: \(weakness). Nothing was changed.",
                hint:
                    "Anyone with a copy of the vault can try passphrases offline. Use four or more random words, or pass --allow-weak-passphrase if you accept the risk."
            )
        }
        return passphrase
    }

    private static func passphraseBytes(
        file: String?, command: String?, environmentVariable: String,
        environment: [String: String], prompt: String, confirm: Bool
    ) throws -> [UInt8] {
        var bytes: [UInt8]
        if let file {
            bytes = firstLine(try readFile(file, what: "passphrase"))
        } else if let command {
            bytes = firstLine(try run(command))
        } else if let value = environment[environmentVariable] {
            // The same rule as files and the prompt: the first line, without its line break.
            bytes = firstLine(Array(value.utf8))
        } else if Terminal.standardInputIsTerminal {
            bytes = try Terminal.readSecretLine(prompt: prompt)
            if confirm {
                var again = try Terminal.readSecretLine(prompt: "Repeat it: ")
                defer { secureWipe(&again) }
                guard again == bytes else {
                    secureWipe(&bytes)
                    throw CLIError(.invalidInput, "The two passphrases do not match. Nothing was changed.")
                }
            }
        } else {
            throw CLIError(
                .noPermission, "A passphrase is needed and there is no terminal to ask on.", hint: noSourceHint)
        }
        return bytes
    }

    private static func passphrase(from bytes: [UInt8]) throws -> Passphrase {
        guard !bytes.isEmpty else {
            throw CLIError(.invalidInput, "The passphrase is empty. Nothing was changed.")
        }
        do {
            return try Passphrase(utf8Bytes: bytes)
        } catch {
            throw CLIError(.invalidInput, "The passphrase is not valid UTF-8 text. Nothing was changed.")
        }
    }

    /// The content up to the first line break: files written by editors end in a newline that
    /// is not part of the passphrase.
    static func firstLine(_ bytes: [UInt8]) -> [UInt8] {
        var line = bytes.prefix { $0 != UInt8(ascii: "\n") }.map { $0 }
        if line.last == UInt8(ascii: "\r") { line.removeLast() }
        var original = bytes
        secureWipe(&original)
        return line
    }

    static func readFile(_ path: String, what: String) throws -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw CLIError(.invalidInput, "Cannot read the \(what) file \(path): it does not exist or is not readable.")
        }
        return Array(data)
    }

    /// Our environment minus Coffer's own secrets: what a program Coffer starts (a passphrase
    /// command, an editor) gets.
    static var environmentWithoutSecrets: [String: String] {
        ProcessInfo.processInfo.environment.filter {
            !["COFFER_SESSION", "COFFER_PASSPHRASE", "COFFER_NEW_PASSPHRASE"].contains($0.key)
        }
    }

    /// Runs `command` with /bin/sh; its stdout is the secret, its stderr goes to ours.
    static func run(_ command: String) throws -> [UInt8] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", command]
        process.environment = environmentWithoutSecrets
        let output = Pipe()
        process.standardOutput = output
        process.standardInput = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            throw CLIError(.noPermission, "Cannot run the passphrase command.", hint: noSourceHint)
        }
        var data = output.fileHandleForReading.readDataToEndOfFile()
        defer { data.resetBytes(in: 0..<data.count) }
        process.waitUntilExit()
        var bytes = Array(data)
        guard process.terminationStatus == 0 else {
            secureWipe(&bytes)
            throw CLIError(
                .noPermission, "The passphrase command failed with exit status \(process.terminationStatus).")
        }
        return bytes
    }
}

extension KDFProfile: ExpressibleByArgument {}

/// Human descriptions shared by several commands.
extension Argon2idParameters {
    var humanDescription: String {
        let name = profile?.rawValue ?? "custom"
        return "Argon2id \(name) (\(opsLimit) passes, \(memLimit >> 20) MiB)"
    }
}
