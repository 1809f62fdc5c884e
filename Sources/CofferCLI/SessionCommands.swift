import ArgumentParser
import Foundation
import VaultCrypto
import VaultStore

/// `coffer unlock`: pays the Argon2id cost once and starts a session.
struct Unlock: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unlock",
        abstract: "Unlock the vault for a while, so later commands need no passphrase.",
        discussion: """
            Prints `export COFFER_SESSION=...` on standard output; run it as eval "$(coffer unlock)". \
            The vault's working keys are kept only wrapped by that session secret, in \
            $XDG_RUNTIME_DIR/coffer (else $TMPDIR/coffer-UID or /tmp/coffer-UID). The session slides \
            with use, as sudo's does: it ends after --timeout without a command, or at --max-age after \
            unlocking whatever the use, or at `coffer lock`, or when the computer restarts.
            """
    )

    @OptionGroup var options: VaultOptions

    @Option(
        help: ArgumentHelp(
            "Idle time after which the session ends; each command restarts it. E.g. 90s, 15m, 2h, 1h30m.",
            valueName: "duration")
    )
    var timeout: String?

    @Option(
        name: .customLong("max-age"),
        help: ArgumentHelp(
            "The most a session lasts however much it is used (at most 24h; default 8h, or --timeout if longer).",
            valueName: "duration")
    )
    var maxAge: String?

    func run() throws {
        // Each setting from its flag, else the configuration file; say which when they clash.
        let idleSetting =
            timeout.map { ($0, "--timeout") }
            ?? options.configuration.sessionTimeout.map {
                ($0, "session.timeout in the configuration file")
            }
        let ageSetting =
            maxAge.map { ($0, "--max-age") }
            ?? options.configuration.sessionMaxAge.map {
                ($0, "session.max_age in the configuration file")
            }
        var idle = try Duration.parse(idleSetting?.0 ?? "15m")
        let lifetime = try ageSetting.map { try Duration.parse($0.0) } ?? max(idle, Duration.defaultMaximumAge)
        if idleSetting == nil { idle = min(idle, lifetime) }  // the default idle time never outlasts a cap given
        if idle > lifetime {
            throw CLIError(
                .invalidInput,
                "The idle timeout (\(Duration.format(idle)), \(idleSetting?.1 ?? "the default")) is longer than the maximum age (\(Duration.format(lifetime)), \(ageSetting?.1 ?? "the default")).",
                hint: "Make the maximum age at least as long as the idle timeout.")
        }
        let vault = try options.openVault(allowSession: false)
        let token = try vault.createSession(
            lifetime: lifetime, idleTimeout: idle, directory: options.sessionDirectory)
        Output.line("export COFFER_SESSION=\"\(token.exportText)\"")
        Terminal.note(
            idle == lifetime
                ? "Unlocked for \(Duration.format(lifetime)). Lock it again with: coffer lock"
                : "Unlocked until \(Duration.format(idle)) without use, at most \(Duration.format(lifetime)). Lock it again with: coffer lock"
        )
        if Terminal.standardOutputIsTerminal {
            // Printed to a terminal, the export line did nothing: say how to apply it.
            Terminal.note("To use the session in this shell, run: eval \"$(coffer unlock)\"")
        }
    }
}

/// `coffer lock`: ends sessions.
struct Lock: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lock",
        abstract: "End the unlocked session (and every other session for this vault).",
        discussion: """
            Sessions are found by the vault id in the vault's header; for a vault that was moved or \
            is damaged, by the id this computer last saw at its path. --all ends every session of \
            every vault.
            """
    )

    @OptionGroup var options: VaultOptions
    @Flag(help: "End every session in the session directory, of any vault.") var all = false

    func run() throws {
        let directory = options.sessionDirectory
        var removed = 0
        if let token = try? options.sessionToken, SessionStore.remove(token: token, directory: directory) {
            removed += 1
        }
        if all {
            removed += SessionStore.removeEverySession(directory: directory)
            Output.line(
                removed == 0
                    ? "No sessions to lock."
                    : "Locked: removed \(removed) session\(removed == 1 ? "" : "s") (every vault).")
            return nextHint()
        }
        let path = options.vaultURL.path
        do {
            let summary = try Vault.summary(at: options.vaultURL)
            removed += SessionStore.removeAll(vaultID: summary.vaultID, directory: directory)
        } catch {
            // The vault cannot be read (moved, damaged, planted): end the sessions of the vault its
            // header still names, and of every vault this computer last saw at this path.
            let candidates =
                ([Vault.unverifiedVaultID(at: options.vaultURL)].compactMap { $0 }
                    + options.rollbackGuard.vaultIDs(lastSeenAt: path))
            var seen = Set<String>()
            for vaultID in candidates where seen.insert(vaultID.hex).inserted {
                removed += SessionStore.removeAll(vaultID: vaultID, directory: directory)
            }
            Terminal.note("warning: \(CLIError(error).message)")
            let left = SessionStore.remainingSessions(directory: directory)
            if !left.isEmpty {
                Output.line(
                    removed == 0
                        ? "Nothing was locked."
                        : "Locked: removed \(removed) session\(removed == 1 ? "" : "s") of the vault last seen at \(path)."
                )
                throw CLIError(
                    .failure,
                    "\(left.count) session\(left.count == 1 ? "" : "s") of other vaults (or of this one, if it was never opened on this computer) remain: \(left.map(\.url.lastPathComponent).joined(separator: ", ")).",
                    hint: "End every session with: coffer lock --all")
            }
        }
        Output.line(
            removed == 0
                ? "No unlocked session to lock." : "Locked: removed \(removed) session\(removed == 1 ? "" : "s").")
        nextHint()
    }

    private func nextHint() {
        if options.environment["COFFER_SESSION"] != nil {
            Output.advice("Next: unset COFFER_SESSION")
        }
    }
}

/// Session lengths such as `90s`, `15m`, `2h` or `1h30m`.
enum Duration {
    static let maximum: TimeInterval = 24 * 3600
    /// How long a session lasts at most when `--max-age` is not given.
    static let defaultMaximumAge: TimeInterval = 8 * 3600

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
