import ArgumentParser
import CofferKit
import FinanceCore
import Foundation

/// `coffer export json [--only SECTION] [--out FILE|-]`.
struct Export: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract:
            "Export your data in an open format: JSON (imported back with coffer import json), CSV, or a ledger journal.",
        discussion: "Writing to a file warns that the file is not encrypted; files are created 0600.")
    @OptionGroup var options: VaultOptions
    @Argument(
        help:
            "The format: json (Coffer's own, importable), csv (one table for spreadsheets) or ledger (a journal for ledger and hledger)."
    )
    var format: ExportFormat
    @Option(help: "Only one part: accounts, updates, transactions or invoices.") var only: ExportSection?
    @Option(help: ArgumentHelp("Write to this file; - or nothing for standard output.", valueName: "file")) var out:
        String?

    enum ExportFormat: String, ExpressibleByArgument { case json, csv, ledger }

    func run() throws {
        let ledger = try options.openLedger()
        let data: Data
        switch format {
        case .json:
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            data = try encoder.encode(ExportDocument(ledger: ledger, only: only)) + Data("\n".utf8)
        case .csv:
            data = try CSVExport.render(ledger, only: only, today: try CommandContext.today())
        case .ledger:
            data = Data(try LedgerJournal.render(ledger, only: only).utf8)
        }
        let out = out ?? "-"
        try OutputFile.write(data, to: out)
        guard !OutputFile.isStandardOutput(out) else { return }
        Terminal.note(
            "Note: \(out) is not encrypted: it holds your data in plain text. Keep it safe, or delete it when done.")
        Output.line("Exported to \(out).")
    }
}

extension ExportSection: ExpressibleByArgument {}
