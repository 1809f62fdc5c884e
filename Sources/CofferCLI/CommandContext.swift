import ArgumentParser
import CofferKit
import FinanceCore
import Foundation
import VaultStore

/// What finance commands share: today's date (overridable with COFFER_TODAY for reproducible
/// tests and demos), the ledger of the open vault, and parsing of user input into exit-64 errors.
enum CommandContext {
    static func today(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> CalendarDate {
        guard let text = environment["COFFER_TODAY"], !text.isEmpty else { return .today() }
        do {
            return try CalendarDate(parsing: text)
        } catch {
            throw CLIError(.invalidInput, "COFFER_TODAY must be a date as YYYY-MM-DD: '\(text)' is not one.")
        }
    }

    static func date(_ text: String?, default fallback: CalendarDate) throws -> CalendarDate {
        guard let text else { return fallback }
        return try input { try CalendarDate(parsing: text) }
    }

    /// Runs a parse of user input; its FinanceError becomes exit 64 with nothing written.
    static func input<T>(_ parse: () throws -> T) throws -> T {
        do {
            return try parse()
        } catch let error as FinanceError {
            throw CLIError(.invalidInput, error.errorDescription ?? "Invalid input.", hint: "Nothing was changed.")
        }
    }
}

extension CommandContext {
    /// "Enter a name" / "Enter an amount", as the Budget design words them.
    static func name(_ text: String, what: String = "name") throws -> String {
        try input { try Account.validatedName(text, what: what) }
    }

    static func positiveAmount(_ text: String, ledger: Ledger) throws -> Money {
        let amount = try input { try ledger.currency.parse(text) }
        guard amount > .zero else {
            throw CLIError(.invalidInput, "Enter an amount above zero: '\(text)' is not. Nothing was changed.")
        }
        return amount
    }
}

extension VaultOptions {
    /// The ledger of the vault. Inside a shell, the vault already open.
    func openLedger() throws -> Ledger {
        if let open = CommandSession.ledger(at: vaultURL) { return open }
        return try Ledger(vault: openVault())
    }

    /// The ledger of the vault for `view`: only the records it needs, when the vault allows
    /// (`Ledger.open(_:for:)`); it cannot write. Inside a shell, the vault already open.
    func openLedger(for view: LedgerView) throws -> Ledger {
        if let open = CommandSession.ledger(at: vaultURL) { return open }
        return try Ledger.open(unlockVaultFile(), for: view)
    }
}

/// `--json` on every report.
struct ReportOptions: ParsableArguments {
    @Flag(help: "Print JSON instead of text (amounts as decimal strings).")
    var json = false
}

/// Entries that are probably slips of the finger: a value ten times off, a sign flipped, a date
/// in the future, a payment before its invoice. At a terminal each doubt is said and the person
/// asked; without one the command needs `--yes`, so a script never records a typo unseen.
extension EntryDoubts {
    /// True to go ahead; false when the person said no (already told nothing was recorded).
    static func confirm(_ doubts: [String], yes: Bool) throws -> Bool {
        guard !doubts.isEmpty, !yes else { return true }
        guard Terminal.standardInputIsTerminal else {
            throw CLIError(
                .invalidInput, "\(doubts.joined(separator: " ")) Nothing was changed.",
                hint: "If it is right, run the command again with --yes.")
        }
        doubts.forEach { Terminal.note($0) }
        guard try Terminal.confirm("Record it anyway?", refusal: "This entry") else {
            Output.line("Not recorded. Nothing was changed.")
            return false
        }
        return true
    }
}
