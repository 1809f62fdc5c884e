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

    public static let configuration = CommandConfiguration(
        commandName: "coffer",
        abstract: "A private, offline, encrypted vault for your finances.",
        discussion: """
            Exit codes: 0 ok · 1 other failure · 64 invalid usage or input (nothing written) · \
            65 damaged or tampered vault · 66 vault not found · 77 wrong passphrase, no session, or session expired.
            """,
        version: version,
        subcommands: [
            Overview.self, AccountCommands.self, Update.self, Assets.self, GrowthCommands.self, Projection.self,
            BudgetCommands.self, Spend.self, Earn.self, Save.self, IncomeCommands.self, CategoryCommands.self,
            GoalCommands.self,
            TransactionCommands.self, ClientCommands.self, InvoiceCommands.self, InvoicesCommands.self, Settings.self,
            Export.self, Import.self,
            Log.self, Undo.self, Demo.self, BackupCommands.self, Restore.self, SyncCommands.self, DeviceCommands.self,
            MergeCopy.self,
            Init.self, Unlock.self, Lock.self, Status.self, Verify.self,
            PassphraseCommands.self, Rekey.self, RecoveryKeyCommands.self,
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
        do {
            // A known-compromised liblzma is refused before anything else runs.
            try XZ.checkLibrary()
            let given = arguments ?? Array(CommandLine.arguments.dropFirst())
            var command = try parseAsRoot(GlobalOptionPlacement.normalise(given))
            try command.run()
            Glibc.exit(ExitStatus.ok.rawValue)
        } catch let error where CLIError.maps(error) {
            report(CLIError(error))
        } catch {
            // Argument parsing errors, --help and --version: ArgumentParser's words and exit codes
            // (64 for usage errors, 0 for help), printed here so that an argument's control
            // characters, which the message quotes, never reach the terminal raw.
            let code = exitCode(for: error).rawValue
            let message = fullMessage(for: error)
            if !message.isEmpty {
                if code == 0 { Output.line(message) } else { Terminal.note(message) }
            }
            Glibc.exit(code)
        }
    }

    private static func report(_ error: CLIError) -> Never {
        Terminal.note("coffer: \(error.message)")
        for detail in error.details { Terminal.note("  - \(detail)") }
        if let hint = error.hint { Terminal.note(hint) }
        Glibc.exit(error.status.rawValue)
    }
}

/// Standard output for results; one place so commands stay short, and so no control character
/// stored by an older Coffer (or arriving in a file name) reaches a terminal raw.
enum Output {
    static func line(_ text: String = "") { print(TextSafety.printable(text, keeping: Style.sequences)) }

    static func json<Value: Encodable>(_ value: Value) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        print(String(decoding: try encoder.encode(value), as: UTF8.self))
    }
}
