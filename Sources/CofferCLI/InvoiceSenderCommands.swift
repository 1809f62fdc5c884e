import ArgumentParser
import CofferKit
import FinanceCore
import Foundation

extension InvoiceCommands {
    /// `coffer invoice sender set|show`: who sends the invoices.
    struct Sender: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "sender", abstract: "Who sends the invoices: printed on every invoice and reminder.",
            subcommands: [Set.self, Show.self], defaultSubcommand: Show.self)

        struct Set: ParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "set",
                abstract: "Set the sender's details (an empty value clears a field).",
                discussion:
                    "Name, email and tax number are one line each; the address, payment instructions and bank details may span lines. Only the options given change."
            )
            @OptionGroup var options: VaultOptions
            @Option(help: "Your or your business's name.") var name: String?
            @Option(help: "Postal address (line breaks kept).") var address: String?
            @Option(help: "Email address.") var email: String?
            @Option(help: "Tax or VAT registration number.") var taxNumber: String?
            @Option(help: "How to pay, e.g. \"Bank transfer within 14 days\".") var paymentInstructions: String?
            @Option(help: "The account to pay into (line breaks kept).") var bankDetails: String?
            @Option(help: ArgumentHelp("What tax is called on invoices: VAT or Tax.", valueName: "VAT|Tax"))
            var taxLabel: String?
            @Option(
                help: ArgumentHelp(
                    "Reference format for new invoices, e.g. INV-{YYYY}-{0000} (default INV-{0000}).",
                    valueName: "format"))
            var numberFormat: String?
            @OptionGroup var report: ReportOptions

            func run() throws {
                let label = try taxLabel.map { text -> InvoiceSender.TaxLabel in
                    guard let label = InvoiceSender.TaxLabel(rawValue: text.lowercased()) else {
                        throw CLIError(
                            .invalidInput, "Give --tax-label VAT or Tax, not '\(text)'. Nothing was changed.")
                    }
                    return label
                }
                let format = try numberFormat.map { text in
                    try CommandContext.input { try InvoiceNumberFormat(parsing: text) }
                }
                let ledger = try options.openLedger()
                var sender = ledger.invoiceSender
                if let name { sender.name = name }
                if let address { sender.address = address }
                if let email { sender.email = email }
                if let taxNumber { sender.taxNumber = taxNumber }
                if let paymentInstructions { sender.paymentInstructions = paymentInstructions }
                if let bankDetails { sender.bankDetails = bankDetails }
                if let label { sender.taxLabel = label }
                if let format { sender.numberFormat = format }
                let given = [name, address, email, taxNumber, paymentInstructions, bankDetails, taxLabel, numberFormat]
                guard given.contains(where: { $0 != nil }) else {
                    throw CLIError(
                        .invalidInput, "Say what to set, e.g. --name or --bank-details. Nothing was changed.")
                }
                try ledger.saveInvoiceSender(sender)
                if report.json { return try Output.json(Shown(ledger.invoiceSender)) }
                Output.line("Saved the invoice sender.")
                Show.print(ledger.invoiceSender)
                Output.advice("Undo with: coffer undo")
            }
        }

        struct Show: ParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "show", abstract: "Show the sender's details.")
            @OptionGroup var options: VaultOptions
            @OptionGroup var report: ReportOptions

            func run() throws {
                let ledger = try options.openLedger()
                if report.json { return try Output.json(Shown(ledger.invoiceSender)) }
                guard ledger.invoiceSenderRecord != nil else {
                    Output.line("No sender yet: invoices show no name, address or bank details.")
                    Output.advice(
                        "Set one: coffer invoice sender set --name \"Your Name\" --address \"…\" --bank-details \"…\"")
                    return
                }
                Self.print(ledger.invoiceSender)
            }

            static func print(_ sender: InvoiceSender) {
                let rows: [(String, String?)] = [
                    ("Name", sender.name), ("Address", sender.address), ("Email", sender.email),
                    ("\(sender.taxLabel.title) number", sender.taxNumber),
                    ("Payment instructions", sender.paymentInstructions), ("Bank details", sender.bankDetails),
                    ("Tax label", sender.taxLabel.title), ("Number format", sender.numberFormat.pattern),
                ]
                for (label, value) in rows {
                    let lines = (value ?? "—").split(separator: "\n", omittingEmptySubsequences: false)
                    for (index, line) in lines.enumerated() {
                        Output.line(
                            (index == 0 ? label + ":" : "").padding(toLength: 22, withPad: " ", startingAt: 0)
                                + TextSafety.printable(String(line)))
                    }
                }
            }
        }

        /// `{"name", "address", "email", "taxNumber", "paymentInstructions", "bankDetails", "taxLabel",
        /// "numberFormat"}`; absent fields are null.
        struct Shown: Encodable {
            @NullEncoded var name: String?
            @NullEncoded var address: String?
            @NullEncoded var email: String?
            @NullEncoded var taxNumber: String?
            @NullEncoded var paymentInstructions: String?
            @NullEncoded var bankDetails: String?
            let taxLabel, numberFormat: String

            init(_ sender: InvoiceSender) {
                name = sender.name
                address = sender.address
                email = sender.email
                taxNumber = sender.taxNumber
                paymentInstructions = sender.paymentInstructions
                bankDetails = sender.bankDetails
                taxLabel = sender.taxLabel.title
                numberFormat = sender.numberFormat.pattern
            }
        }
    }
}
