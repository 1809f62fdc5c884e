import ArgumentParser
import CofferKit
import FinanceCore
import Foundation

/// `coffer client add|list|show|edit|remove`.
struct ClientCommands: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "client", abstract: "The people and companies you invoice.",
        subcommands: [Add.self, List.self, Show.self, Edit.self, Remove.self])

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "add", abstract: "Add a client.")
        @OptionGroup var options: VaultOptions
        @Argument var name: String
        @Option var email: String?
        @Option var address: String?
        @Option(help: "Default payment terms in days.") var terms: Int = 30
        @Option(help: ArgumentHelp("The account their payments arrive in by default.", valueName: "account"))
        var account: String?
        func run() throws {
            let ledger = try options.openLedger()
            let client = try ledger.addClient(
                name: name, email: email, address: address, termsDays: terms,
                account: try account.map { try ledger.account(named: $0, includeClosed: false) })
            Output.line("Added \(client.name) (terms \(terms) days).")
            Output.advice("Next: coffer invoice new \"\(client.name)\" --item \"Work\" 1 500")
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list", abstract: "List clients with what they owe.")
        @OptionGroup var options: VaultOptions
        @OptionGroup var report: ReportOptions
        struct Row: Encodable {
            let name: String; let email: String?; let terms: Int; let outstanding: String; let invoices: Int
            /// The account their payments arrive in by default.
            @NullEncoded var account: String?
        }
        func run() throws {
            let ledger = try options.openLedger()
            let owed = try ledger.clients.map { client -> (Client, Money, Int) in
                let balance = try ledger.balance(of: client)
                return (client, balance.outstanding, balance.invoices)
            }
            if report.json {
                return try Output.json([
                    "clients": owed.map {
                        Row(
                            name: $0.0.name, email: $0.0.email, terms: $0.0.termsDays,
                            outstanding: ledger.currency.decimalString($0.1), invoices: $0.2,
                            account: ledger.account(withID: $0.0.account)?.name)
                    }
                ])
            }
            guard !owed.isEmpty else {
                Output.line(
                    "No clients yet — add one: coffer client add \"Acme Ltd\" --email ap@acme.example --terms 30")
                return
            }
            Render.table(
                [["Client", "Owes", "Invoices", "Terms"]]
                    + owed.map { client, amount, count in
                        [client.name, ledger.currency.format(amount), "\(count)", "\(client.termsDays) days"]
                    }, rightAligned: [1, 2]
            ).forEach { Output.line($0) }
        }
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "show", abstract: "Show a client and their invoices.")
        @OptionGroup var options: VaultOptions
        @Argument var name: String
        @OptionGroup var report: ReportOptions

        struct JSON: Encodable {
            let name: String
            @NullEncoded var email: String?
            @NullEncoded var address: String?
            let termsDays: Int
            @NullEncoded var account: String?
            let invoices: [InvoiceCommands.Row]
            /// Titles of the notes attached to the client.
            let notes: [String]
        }

        func run() throws {
            let ledger = try options.openLedger()
            let client = try ledger.client(named: name)
            let today = try CommandContext.today()
            let invoices = ledger.invoices.filter { $0.clientID == client.id }
            if report.json {
                return try Output.json(
                    JSON(
                        name: client.name, email: client.email, address: client.address, termsDays: client.termsDays,
                        account: ledger.account(withID: client.account)?.name,
                        invoices: try invoices.map { try InvoiceCommands.row($0, ledger: ledger, today: today) },
                        notes: NoteCommands.attachedTitles(client.id, ledger: ledger)))
            }
            Output.line(Style.current().bold(client.name))
            if let email = client.email { Output.line(email) }
            if let address = client.address { Output.line(address) }
            Output.line("Terms: \(client.termsDays) days")
            NoteCommands.printAttached(client.id, ledger: ledger)
            Output.line()
            InvoiceCommands.rows(invoices, ledger: ledger, today: today).forEach { Output.line($0) }
        }
    }

    struct Edit: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "edit", abstract: "Change a client's name, email, address or terms.")
        @OptionGroup var options: VaultOptions
        @Argument var name: String
        @Option(name: .customLong("name")) var newName: String?
        @Option var email: String?
        @Option var address: String?
        @Option var terms: Int?
        @OptionGroup var defaultAccount: DefaultAccountOptions
        func run() throws {
            let ledger = try options.openLedger()
            var client = try ledger.client(named: name)
            guard newName != nil || email != nil || address != nil || terms != nil || defaultAccount.given else {
                throw CLIError(
                    .invalidInput,
                    "Say what to change: --name, --email, --address, --terms or --account. Nothing was changed.")
            }
            client.account = try defaultAccount.applied(to: client.account, ledger: ledger)
            if let newName { client.name = newName }
            if let email { client.email = email.isEmpty ? nil : email }
            if let address { client.address = address.isEmpty ? nil : address }
            if let terms { client.termsDays = terms }
            try ledger.saveClient(client)
            Output.line("Updated \(client.name).")
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "remove", abstract: "Remove a client who has no invoices.")
        @OptionGroup var options: VaultOptions
        @Argument var name: String
        func run() throws {
            let ledger = try options.openLedger()
            let client = try ledger.client(named: name)
            try ledger.removeClient(client)
            Output.line("Removed \(client.name).")
            Output.advice("Undo with: coffer undo")
        }
    }
}
