import ArgumentParser
import CofferKit
import FinanceCore
import Foundation

/// `coffer settings [--receivables on|off]`.
struct Settings: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "settings", abstract: "Show or change vault settings.")
    @OptionGroup var options: VaultOptions
    @Option(help: "Count unpaid sent invoices in net worth as \"Invoices receivable\": on or off.") var receivables:
        Toggle?

    @OptionGroup var report: ReportOptions

    enum Toggle: String, ExpressibleByArgument { case on, off }

    struct JSON: Encodable {
        let currency: String
        let includeReceivables: Bool
    }

    func run() throws {
        let ledger = try options.openLedger()
        if let receivables { try ledger.setIncludeReceivables(receivables == .on) }
        let settings = ledger.currentSettings
        if report.json {
            return try Output.json(
                JSON(currency: settings.currency.code, includeReceivables: settings.includeReceivables))
        }
        Output.line("Currency              \(settings.currency.code)")
        Output.line(
            "Invoices receivable   \(settings.includeReceivables ? "on (unpaid sent invoices count in net worth)" : "off")"
        )
    }
}
