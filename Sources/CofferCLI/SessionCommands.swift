import ArgumentParser
import Foundation
import VaultCrypto
import VaultStore

/// `coffer unlock`: pays the Argon2id cost once and starts a session.
struct Unlock: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Unlock the vault for a while, so later commands need no passphrase.",
        discussion: """
            Prints `export COFFER_SESSION=...` on standard output; run it as eval "$(coffer unlock)". \
            The master key is kept only wrapped by that session secret, in $XDG_RUNTIME_DIR/coffer \
            (else $TMPDIR/coffer-UID or /tmp/coffer-UID), until the timeout or `coffer lock`.
            """
    )

    @OptionGroup var options: VaultOptions

    @Option(help: ArgumentHelp("How long the session lasts, e.g. 90s, 15m, 2h, 1h30m (at most 24h).", valueName: "duration"))
    var timeout: String = "15m"

    func run() throws {
        let lifetime = try Duration.parse(timeout)
        let vault = try options.openVault(allowSession: false)
        let token = try vault.createSession(lifetime: lifetime, directory: options.sessionDirectory)
        Output.line("export COFFER_SESSION=\"\(token.exportText)\"")
        Terminal.note("Unlocked for \(Duration.format(lifetime)). Lock it again with: coffer lock")
        if Terminal.standardOutputIsTerminal {
            // Printed to a terminal, the export line did nothing: say how to apply it.
            Terminal.note("To use the session in this shell, run: eval \"$(coffer unlock)\"")
        }
    }
}

/// `coffer lock`: ends sessions.
struct Lock: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "End the unlocked session (and every other session for this vault)."
    )

    @OptionGroup var options: VaultOptions

    func run() throws {
        var removed = 0
        if let token = try? options.sessionToken, SessionStore.remove(token: token, directory: options.sessionDirectory) {
            removed += 1
        }
        if let summary = try? Vault.summary(at: options.vaultURL) {
            removed += SessionStore.removeAll(vaultID: summary.vaultID, directory: options.sessionDirectory)
        }
        Output.line(removed == 0 ? "No unlocked session to lock." : "Locked: removed \(removed) session\(removed == 1 ? "" : "s").")
        if options.environment["COFFER_SESSION"] != nil {
            Output.line("Next: unset COFFER_SESSION")
        }
    }
}

/// Session lengths such as `90s`, `15m`, `2h` or `1h30m`.
enum Duration {
    static let maximum: TimeInterval = 24 * 3600

    static func parse(_ text: String) throws -> TimeInterval {
        let invalid = CLIError(.invalidInput, "Enter a duration such as 90s, 15m, 2h or 1h30m: '\(text)' is not one.")
        var total: TimeInterval = 0
        var digits = ""
        var sawUnit = false
        for character in text.lowercased() {
            if character.isASCII, character.isNumber {
                digits.append(character)
                continue
            }
            let unit: TimeInterval
            switch character {
            case "s": unit = 1
            case "m": unit = 60
            case "h": unit = 3600
            default: throw invalid
            }
            guard let value = Int(digits), digits.count <= 6 else { throw invalid }
            total += TimeInterval(value) * unit
            digits = ""
            sawUnit = true
        }
        guard sawUnit, digits.isEmpty else { throw invalid }
        guard total >= 1, total <= maximum else {
            throw CLIError(.invalidInput, "A session lasts between 1s and 24h; '\(text)' is outside that.")
        }
        return total
    }

    static func format(_ interval: TimeInterval) -> String {
        let seconds = Int(interval.rounded())
        let (hours, minutes, rest) = (seconds / 3600, seconds % 3600 / 60, seconds % 60)
        var parts: [String] = []
        if hours > 0 { parts.append("\(hours)h") }
        if minutes > 0 { parts.append("\(minutes)m") }
        if rest > 0 || parts.isEmpty { parts.append("\(rest)s") }
        return parts.joined()
    }
}
