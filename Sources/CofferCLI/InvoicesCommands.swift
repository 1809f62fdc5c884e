import ArgumentParser
import CofferKit
import FinanceCore
import Foundation

/// `coffer invoices [--overdue|--unpaid|--client NAME] [--from/--to/--min/--max/--text]` and
/// `coffer invoices dashboard`.
struct InvoicesCommands: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "invoices", abstract: "The invoice list (management) and its dashboard (insight).",
        subcommands: [List.self, Dashboard.self], defaultSubcommand: List.self)

    struct Report: Encodable {
        struct Ageing: Encodable { let current, days1to30, days31to60, days61to90, over90: String }
        struct ClientLine: Encodable { let client, outstanding: String }
        let outstanding, overdue: String
        let overdueCount: Int
        let paidThisMonth: String
        let ageing: Ageing
        let clients: [ClientLine]
        let invoices: [InvoiceCommands.Row]
    }

    static func report(_ invoices: [Invoice], all: [Invoice], ledger: Ledger, today: CalendarDate) throws -> Report {
        let receivables = try Receivables(invoices: all, today: today)
        let money = ledger.currency.decimalString
        let ageing = receivables.ageing
        return Report(
            outstanding: money(receivables.outstanding), overdue: money(receivables.overdue),
            overdueCount: receivables.overdueCount,
            paidThisMonth: money(receivables.paidThisMonth),
            ageing: .init(
                current: money(ageing.current), days1to30: money(ageing.days1to30),
                days31to60: money(ageing.days31to60),
                days61to90: money(ageing.days61to90), over90: money(ageing.over90)),
            clients: receivables.byClient.map { id, owed in
                .init(client: ledger.clients.first { $0.id == id }?.name ?? "", outstanding: money(owed))
            },
            invoices: try invoices.map { try InvoiceCommands.row($0, ledger: ledger, today: today) })
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "List invoices, newest first.")
        @OptionGroup var options: VaultOptions
        @OptionGroup var report: ReportOptions
        @Flag(help: "Only overdue invoices.") var overdue = false
        @Flag(help: "Only sent, unpaid invoices.") var unpaid = false
        @Option(help: "Only this client's invoices.") var client: String?
        @OptionGroup var filter: FilterOptions

        func run() throws {
            let ledger = try options.openLedger()
            let today = try CommandContext.today()
            var shown = ledger.invoices.reversed() as [Invoice]
            if overdue { shown = try shown.filter { try $0.status(on: today) == .overdue } }
            if unpaid { shown = try shown.filter { [.sent, .overdue].contains(try $0.status(on: today)) } }
            if let client {
                let found = try ledger.client(named: client)
                shown = shown.filter { $0.clientID == found.id }
            }
            shown = try ledger.filtered(shown, by: try filter.resolve(ledger))
            if report.json {
                return try Output.json(
                    try InvoicesCommands.report(shown, all: ledger.invoices, ledger: ledger, today: today))
            }
            guard !ledger.invoices.isEmpty else {
                // An invoice needs a client: with none yet, the first step is adding one.
                if let client = ledger.clients.first {
                    Output.line(
                        "No invoices yet — let's get you paid: coffer invoice new \"\(client.name)\" --item \"Design work\" 1 500"
                    )
                } else {
                    Output.line(
                        "No invoices yet. First add who you invoice: coffer client add NAME [--email E] [--terms DAYS]")
                    Output.line("then: coffer invoice new NAME --item \"Design work\" 1 500")
                }
                return
            }
            guard !shown.isEmpty else {
                Output.line(overdue ? "No overdue invoices. All caught up." : "No invoices match.")
                return
            }
            InvoiceCommands.rows(shown, ledger: ledger, today: today).forEach { Output.line($0) }
            Output.advice("Next: coffer invoice show INV-NNNN · coffer invoices dashboard")
        }
    }

    struct Dashboard: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "dashboard",
            abstract: "Outstanding, overdue, paid this month, ageing, per client.")
        @OptionGroup var options: VaultOptions
        @OptionGroup var report: ReportOptions
        func run() throws {
            let ledger = try options.openLedger()
            let today = try CommandContext.today()
            let full = try InvoicesCommands.report(ledger.invoices, all: ledger.invoices, ledger: ledger, today: today)
            if report.json { return try Output.json(full) }
            let currency = ledger.currency
            let receivables = try Receivables(invoices: ledger.invoices, today: today)
            Output.line(Style.current().bold("\(currency.format(receivables.outstanding)) outstanding"))
            Output.line(
                receivables.overdueCount == 0
                    ? "No overdue invoices. All caught up."
                    : "⚠ \(currency.format(receivables.overdue)) overdue on \(receivables.overdueCount) invoice\(receivables.overdueCount == 1 ? "" : "s")"
            )
            Output.line("\(currency.format(receivables.paidThisMonth)) paid this month")
            Output.line()
            Output.line("Ageing")
            let ageing = receivables.ageing
            Render.table(
                [
                    ["Current", currency.format(ageing.current)], ["1–30 days", currency.format(ageing.days1to30)],
                    ["31–60 days", currency.format(ageing.days31to60)],
                    ["61–90 days", currency.format(ageing.days61to90)],
                    ["Over 90 days", currency.format(ageing.over90)],
                ], rightAligned: [1]
            ).forEach { Output.line($0) }
            if !full.clients.isEmpty {
                Output.line()
                Output.line("By client")
                Render.table(
                    receivables.byClient.map { id, owed in
                        [ledger.clients.first { $0.id == id }?.name ?? "", currency.format(owed)]
                    },
                    rightAligned: [1]
                ).forEach { Output.line($0) }
            }
            Output.advice("Next: coffer invoices --overdue · coffer invoice remind INV-NNNN")
        }
    }
}
