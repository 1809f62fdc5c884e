import ArgumentParser
import CofferKit
import FinanceCore
import Foundation

/// `coffer import ledger FILE`: a journal as `hledger print` writes it, into a vault that holds
/// no data yet, as one undoable change.
struct ImportLedger: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ledger",
        abstract:
            "Import an hledger or ledger journal (as hledger print writes it) into a vault that holds no data yet.",
        discussion: """
            Assets and Liabilities accounts become accounts, valued at each day's balance; Expenses become \
            budget categories and Income income sources, each posting a transaction; Equity only balances. \
            Every transaction must balance and every balance assertion hold; amounts must be in the vault's \
            currency. One unreadable line imports nothing.
            """)

    /// What `--json` prints.
    struct Report: Encodable {
        let file: String
        let dryRun: Bool
        let accounts, values, categories, incomeSources, transactions: Int
    }

    @OptionGroup var options: VaultOptions
    @Argument(help: "The journal (- for standard input).") var file: String
    @Flag(help: "Say what would be imported; write nothing.") var dryRun = false
    @OptionGroup var report: ReportOptions

    func run() throws {
        let data = try Import.read(file)
        guard let text = String(data: data, encoding: .utf8) else {
            throw CLIError(.invalidInput, "\(file) is not UTF-8 text. Nothing was imported.")
        }
        let ledger = try options.openLedger()
        let plan = try CLIError.importing {
            try ledger.planJournalImport(Journal(reading: text, currency: ledger.currency))
        } hint: { error in
            switch error.kind {
            case "currency":
                "Import it into a vault kept in \(error.candidates.first ?? "its currency"): coffer init --currency \(error.candidates.first ?? "CODE") --vault PATH"
            case "vault data": "Create one (coffer init --vault NEW) and import there."
            default: nil
            }
        }
        if !dryRun { try ledger.importJournal(plan, from: URL(fileURLWithPath: file).lastPathComponent) }
        let result = Report(
            file: file, dryRun: dryRun, accounts: plan.accounts.count, values: plan.updates.count,
            categories: plan.categories.count, incomeSources: plan.sources.count,
            transactions: plan.transactions.count)
        if report.json { return try Output.json(result) }
        let counted = { (count: Int, one: String, many: String) in "\(count) \(count == 1 ? one : many)" }
        Output.line(
            "\(dryRun ? "Would import" : "Imported") \(counted(result.accounts, "account", "accounts")) with "
                + "\(counted(result.values, "value", "values")), \(counted(result.transactions, "transaction", "transactions")), "
                + "\(counted(result.categories, "new category", "new categories")) and \(counted(result.incomeSources, "income source", "income sources"))."
        )
        if dryRun {
            Output.line("Dry run: nothing was written.")
        } else {
            Output.advice("Undo with: coffer undo")
            Output.advice("Next: coffer overview · coffer budget")
        }
    }
}
