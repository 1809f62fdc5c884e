import ArgumentParser
import FinanceCore
import Foundation
import VaultBackup
import VaultCrypto
import VaultStore

#if canImport(Glibc)
    import Glibc
#endif

/// `coffer`: the root command.
public struct Coffer: ParsableCommand {
    public static let version = "0.1.0"

    /// `coffer --version`: Coffer's, then the C libraries it runs with (a liblzma or SQLite
    /// with a known flaw shows at a glance).
    static var versionWithLibraries: String {
        "\(version)\nlibsodium \(SodiumLibrary.versionString), SQLite \(SQLiteLibrary.versionString), liblzma \(XZ.versionString)"
    }

    public static let configuration = CommandConfiguration(
        commandName: "coffer",
        abstract: "A private, offline, encrypted vault for your finances.",
        discussion: """
            Exit codes: 0 ok · 1 other failure · 64 invalid usage or input (nothing written) · \
            65 damaged or tampered vault · 66 vault not found · 73 cannot create an output · \
            74 I/O error writing an output · 77 wrong passphrase, no session, or session expired · \
            78 bad configuration file. Defaults: ~/.config/coffer/config.toml (flag > environment > file).
            """,
        version: versionWithLibraries,
        subcommands: [
            Overview.self, AccountCommands.self, Update.self, Reconcile.self, Assets.self, GrowthCommands.self,
            Projection.self,
            ReportCommands.self,
            BudgetCommands.self, Spend.self, Earn.self, Save.self, IncomeCommands.self, CategoryCommands.self,
            GoalCommands.self, RecurringCommands.self, Upcoming.self,
            TransactionCommands.self, ClientCommands.self, InvoiceCommands.self, InvoicesCommands.self, Search.self,
            Settings.self, NoteCommands.self, Export.self, Import.self,
            Log.self, Undo.self, Redo.self, Demo.self, BackupCommands.self, Restore.self, SyncCommands.self,
            DeviceCommands.self,
            MergeCopy.self,
            Init.self, Unlock.self, Lock.self, Status.self, Verify.self, Upgrade.self,
            PassphraseCommands.self, Rekey.self, RecoveryKeyCommands.self, Shell.self, Batch.self, Web.self,
        ],
        defaultSubcommand: Overview.self
    )

    public init() {}

    /// Runs `coffer` with `arguments` (the process's own when nil) and exits with the
    /// documented status. Core dumps are disabled and the umask tightened before anything else,
    /// so no secret can reach a core file and nothing is created readable by others.
    public static func runAndExit(_ arguments: [String]? = nil) -> Never {
        ProcessHardening.disableCoreDumps()
        ProcessHardening.replaceCrashReporter()
        umask(0o077)
        // Past a file-size limit (`ulimit -f`) the kernel would kill us with SIGXFSZ mid-write;
        // ignored, the write fails with EFBIG instead, and the error path reports it and rolls back.
        signal(SIGXFSZ, SIG_IGN)
        Currency.userLocale = PersonLocale.fromEnvironment(for: "LC_MONETARY")
        Currency.userNumericLocale = PersonLocale.fromEnvironment(for: "LC_NUMERIC")
        do {
            // A known-compromised liblzma is refused before anything else runs.
            try XZ.checkLibrary()
        } catch {
            Glibc.exit(report(CLIError(error)))
        }
        Glibc.exit(execute(arguments ?? Array(CommandLine.arguments.dropFirst())))
    }

    /// Runs one command line (the words after `coffer`) and returns its exit status, its error
    /// reported on stderr: the process's one command, or each line of a shell or batch.
    /// Output that could not be written (stdout on a full disk) fails the command with 74: a
    /// script must not take a lost report or export for a good one. A command that failed anyway
    /// keeps its own error and status.
    static func execute(_ arguments: [String]) -> Int32 {
        let status = parseAndRun(arguments)
        do {
            try Output.flush()
        } catch {
            return status == ExitStatus.ok.rawValue ? report(CLIError(error)) : status
        }
        return status
    }

    private static func parseAndRun(_ arguments: [String]) -> Int32 {
        var given = arguments
        let quiet = Output.quiet, color = Style.choice
        Output.quiet = GlobalOptionPlacement.takeQuiet(from: &given) || quiet
        defer { (Output.quiet, Style.choice) = (quiet, color) }
        do {
            try Configuration.loadOnce()
            Style.choice = try GlobalOptionPlacement.takeColor(from: &given) ?? color
            let normalised = CommandWords.passingNegativeAmounts(GlobalOptionPlacement.normalise(given))
            try CommandWords.check(normalised)
            var command = try parseAsRoot(normalised)
            try ProgressMeter.shared.tracking { try command.run() }
            return ExitStatus.ok.rawValue
        } catch let error where CLIError.maps(error) {
            return report(CLIError(error))
        } catch {
            // Argument parsing errors, --help and --version: ArgumentParser's words and exit codes
            // (64 for usage errors, 0 for help), printed here so that an argument's control
            // characters, which the message quotes, never reach the terminal raw.
            let code = exitCode(for: error).rawValue
            var message = fullMessage(for: error)
            // `coffer --bogus` named no command: overview (the default) is not what was asked for.
            if code != 0, given.first?.hasPrefix("-") == true, !given.contains("overview"),
                message.hasPrefix("Error: Unknown option"), !message.contains("Did you mean")
            {
                message =
                    (message.split(separator: "\n").first.map(String.init) ?? message)
                    + "\nSee 'coffer --help' for the commands, and 'coffer COMMAND --help' for their options."
            }
            if code == 0 {
                if !message.isEmpty { Output.line(message) }
            } else {
                ErrorReport.parserMessage(message)
            }
            return code
        }
    }

    /// Reports an error in the one style and returns its exit status.
    static func report(_ error: CLIError) -> Int32 {
        ErrorReport.write(error.message, details: error.details, hint: error.hint)
        return error.status.rawValue
    }
}

/// The person's locale for one category, as the C library would choose it (`LC_ALL`, then the
/// category — `LC_MONETARY` for amounts shown, `LC_NUMERIC` for numbers typed — then `LANG`);
/// none for C and POSIX, where each currency's own conventions apply.
enum PersonLocale {
    static func fromEnvironment(
        for category: String, _ environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> Locale? {
        let value = ["LC_ALL", category, "LANG"].lazy.compactMap { environment[$0] }.first { !$0.isEmpty }
        guard let value else { return nil }
        let name = String(value.prefix { $0 != "." && $0 != "@" })
        guard !["C", "POSIX"].contains(name), Locale.availableIdentifiers.contains(name) else { return nil }
        return Locale(identifier: name)
    }
}

/// Every error in one style, on stderr (age's): `error: WHAT`, its details indented under it,
/// then `hint: …` lines saying what to do.
enum ErrorReport {
    static func write(_ message: String, details: [String] = [], hint: String?) {
        Terminal.note("error: \(message)")
        for detail in details { Terminal.note("  - \(detail)") }
        for line in (hint ?? "").split(separator: "\n", omittingEmptySubsequences: true) {
            Terminal.note(CommandSession.asTypedHere(line.hasPrefix("hint: ") ? String(line) : "hint: \(line)"))
        }
    }

    /// ArgumentParser's usage errors (`Error: Unknown option '--mnth'. Did you mean '--month'?`,
    /// then `Usage: …` and `See '… --help' for more information.`) in the same style.
    static func parserMessage(_ message: String) {
        var lines = message.split(separator: "\n", omittingEmptySubsequences: true).map {
            $0.trimmingCharacters(in: .whitespaces)
        }
        guard !lines.isEmpty else { return }
        var first = lines.removeFirst()
        if first.hasPrefix("Error: ") { first.removeFirst("Error: ".count) }
        write(first, hint: lines.joined(separator: "\n"))
    }
}

/// Standard output for results; one place so commands stay short, and so no control character
/// stored by an older Coffer (or arriving in a file name) reaches a terminal raw.
enum Output {
    /// `-q`/`--quiet`: no advice (`Next:`, `Undo with:`) even at a terminal.
    nonisolated(unsafe) static var quiet = false

    /// At a terminal, prose longer than the screen is broken at spaces (a word or amount is
    /// never split across lines); into a pipe, lines stay whole.
    static func line(_ text: String = "") {
        ProgressMeter.shared.clearLine()
        let safe = TextSafety.printable(text, keeping: Style.sequences)
        guard let width = Terminal.outputWidth else { return print(safe) }
        for part in safe.split(separator: "\n", omittingEmptySubsequences: false) {
            DisplayWidth.wrapped(String(part), to: width).forEach { print($0) }
        }
    }

    /// What to try next (`Next: …`, `Undo with: …`): advice for a person at a terminal, so it
    /// goes to stderr, only when stderr is a terminal and not under `--quiet`. Standard output
    /// carries only the data, whatever reads it.
    static func advice(_ text: String) {
        guard !quiet, Terminal.standardErrorIsTerminal else { return }
        Terminal.note(CommandSession.asTypedHere(text))
    }

    static func json<Value: Encodable>(_ value: Value) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        print(String(decoding: try encoder.encode(value), as: UTF8.self))
    }
}
