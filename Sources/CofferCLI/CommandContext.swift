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
    func openLedger() throws -> Ledger {
        if let open = CommandSession.ledger(at: vaultURL) { return open }
        return try Ledger(vault: openVault())
    }
}

/// `--json` on every report.
struct ReportOptions: ParsableArguments {
    @Flag(help: "Print JSON instead of text (amounts as decimal strings).")
    var json = false
}
