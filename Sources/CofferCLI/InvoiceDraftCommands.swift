import ArgumentParser
import CofferKit
import FinanceCore
import Foundation

/// The lines of an invoice as typed: `--item "DESCRIPTION" QTY PRICE`, `--discount "DESCRIPTION"
/// AMOUNT|PERCENT%` (off before tax) and `--credit "DESCRIPTION" AMOUNT` (off after tax), each
/// repeatable.
struct LineOptions: ParsableArguments {
    @Option(
        name: .customLong("item"), parsing: .upToNextOption,
        help: ArgumentHelp("DESCRIPTION QUANTITY PRICE; repeat for more lines.", valueName: "item"))
    var items: [String] = []
    @Option(
        name: .customLong("discount"), parsing: .upToNextOption,
        help: ArgumentHelp(
            "DESCRIPTION AMOUNT or DESCRIPTION PERCENT% (of the items), taken off before tax; repeatable.",
            valueName: "discount"))
    var discounts: [String] = []
    @Option(
        name: .customLong("credit"), parsing: .upToNextOption,
        help: ArgumentHelp(
            "DESCRIPTION AMOUNT, e.g. a deposit already received, taken off after tax; repeatable.",
            valueName: "credit"))
    var credits: [String] = []

    /// The item lines typed, or nil when no `--item` was given.
    func charges(_ ledger: Ledger) throws -> [LineItem]? {
        guard !items.isEmpty else { return nil }
        guard items.count % 3 == 0 else {
            throw CLIError(
                .invalidInput,
                "Give each line as --item \"DESCRIPTION\" QUANTITY PRICE (e.g. --item \"Design\" 2 150). Nothing was changed."
            )
        }
        return try stride(from: 0, to: items.count, by: 3).map { index in
            LineItem(
                description: items[index],
                quantity: try CommandContext.input { try Quantity(parsing: items[index + 1]) },
                unitPrice: try CommandContext.input { try ledger.currency.parse(items[index + 2]) })
        }
    }

    /// The discount lines typed, or nil when no `--discount` was given.
    func discountLines(_ ledger: Ledger) throws -> [LineItem]? {
        try pairs(discounts, flag: "discount", example: "--discount \"Loyalty\" 10%") { description, amount in
            guard amount.hasSuffix("%") else {
                return .discount(description, amount: try CommandContext.positiveAmount(amount, ledger: ledger))
            }
            // A percentage as a rate is read (two decimals at most), then held to above 0% and at most 100%.
            guard let share = try? GrowthRate(parsing: amount).basisPoints, (1...10_000).contains(share) else {
                throw CLIError(
                    .invalidInput,
                    "A discount is an amount or a share above 0% and at most 100% (two decimals at most): '\(amount)' is not. Nothing was changed."
                )
            }
            return .discount(description, share: share)
        }
    }

    /// The credit lines typed, or nil when no `--credit` was given.
    func creditLines(_ ledger: Ledger) throws -> [LineItem]? {
        try pairs(credits, flag: "credit", example: "--credit \"Deposit received\" 200") { description, amount in
            .credit(description, amount: try CommandContext.positiveAmount(amount, ledger: ledger))
        }
    }

    private func pairs(
        _ values: [String], flag: String, example: String, _ make: (String, String) throws -> LineItem
    ) throws -> [LineItem]? {
        guard !values.isEmpty else { return nil }
        guard values.count % 2 == 0 else {
            throw CLIError(
                .invalidInput,
                "Give each \(flag) as --\(flag) \"DESCRIPTION\" AMOUNT (e.g. \(example)). Nothing was changed.")
        }
        return try stride(from: 0, to: values.count, by: 2).map { try make(values[$0], values[$0 + 1]) }
    }
}

extension InvoiceCommands {
    struct Edit: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "edit",
            abstract: "Change a draft: its lines, tax, due date, notes or client.",
            discussion:
                "Each of --item, --discount and --credit replaces all the lines of its kind. Sent and void invoices are frozen (64)."
        )
        @OptionGroup var options: VaultOptions
        @Argument var id: String
        @OptionGroup var lines: LineOptions
        @Flag(help: "Remove every discount line.") var noDiscounts = false
        @Flag(help: "Remove every credit line.") var noCredits = false
        @Option(help: ArgumentHelp("Tax rate, e.g. 20%.", valueName: "rate")) var tax: String?
        @Flag(help: "No tax line.") var noTax = false
        @Option(help: ArgumentHelp("Due date, YYYY-MM-DD.", valueName: "date")) var due: String?
        @Option(help: "Notes printed on the invoice.") var notes: String?
        @Flag(help: "Remove the notes.") var noNotes = false
        @Option(help: "Bill another client.") var client: String?

        func run() throws {
            guard !(tax != nil && noTax), !(notes != nil && noNotes),
                !(lines.discounts.isEmpty == false && noDiscounts), !(lines.credits.isEmpty == false && noCredits)
            else {
                throw CLIError(.invalidInput, "Give a value or its --no- flag, not both. Nothing was changed.")
            }
            let ledger = try options.openLedger()
            let invoice = try ledger.invoice(id)
            try CommandContext.input { try invoice.checkDraft() }
            let charges = try lines.charges(ledger)
            let discounts = noDiscounts ? [] : try lines.discountLines(ledger)
            let credits = noCredits ? [] : try lines.creditLines(ledger)
            var items: [LineItem]?
            if charges != nil || discounts != nil || credits != nil {
                func kept(_ kind: LineItem.Kind) -> [LineItem] { invoice.items.filter { $0.kind == kind } }
                items = (charges ?? kept(.charge)) + (discounts ?? kept(.discount)) + (credits ?? kept(.credit))
            }
            let taxPoints: Int?? =
                noTax
                ? .some(nil)
                : try tax.map { text in try CommandContext.input { try GrowthRate(parsing: text) }.basisPoints }
            let dueDate = try due.map { try CommandContext.date($0, default: invoice.due) }
            let newNotes: String?? = noNotes ? .some(nil) : notes.map { .some($0) }
            let newClient = try client.map { try ledger.client(named: $0) }
            guard items != nil || taxPoints != nil || dueDate != nil || newNotes != nil || newClient != nil else {
                throw CLIError(
                    .invalidInput, "Say what to change, e.g. --item, --discount, --tax or --due. Nothing was changed.")
            }
            let edited = try ledger.editInvoice(
                invoice, items: items, taxBasisPoints: taxPoints, due: dueDate, notes: newNotes, client: newClient)
            Output.line(
                "Edited \(edited.reference): \(ledger.currency.format(try edited.total())) for \(ledger.client(of: edited)?.name ?? "(removed client)")."
            )
            Output.advice("Undo with: coffer undo · Next: coffer invoice send \(edited.reference)")
        }
    }

    struct Delete: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "delete",
            abstract: "Delete a draft (its number is never reused; undoable).",
            discussion: "Asks for confirmation on a terminal; pass --yes otherwise. Sent invoices are voided instead.")
        @OptionGroup var options: VaultOptions
        @Argument var id: String
        @Flag(help: "Do not ask for confirmation.") var yes = false

        func run() throws {
            let ledger = try options.openLedger()
            let invoice = try ledger.invoice(id)
            try CommandContext.input { try invoice.checkDraft() }
            if !yes,
                !(try Terminal.confirm("Delete draft \(invoice.reference)?", refusal: "Deleting \(invoice.reference)"))
            {
                Output.line("Kept \(invoice.reference). Nothing was changed.")
                return
            }
            try ledger.deleteInvoice(invoice)
            Output.line("Deleted draft \(invoice.reference); its number is not issued again.")
            Output.advice("Changed your mind? coffer undo")
        }
    }

    struct Duplicate: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "duplicate",
            abstract: "Make a new draft with the same client, lines, tax and notes under the next number.")
        @OptionGroup var options: VaultOptions
        @Argument var id: String
        @Option(help: ArgumentHelp("Issue date of the copy, YYYY-MM-DD (default today).", valueName: "date"))
        var date: String?

        func run() throws {
            let ledger = try options.openLedger()
            let today = try CommandContext.today()
            let original = try ledger.invoice(id)
            let copy = try ledger.duplicateInvoice(original, issued: try CommandContext.date(date, default: today))
            Output.line(
                "Created \(copy.reference), a copy of \(original.reference): \(ledger.currency.format(try copy.total())) · \(try copy.relativeDue(on: today))."
            )
            Output.advice("Next: coffer invoice edit \(copy.reference) · coffer invoice send \(copy.reference)")
        }
    }
}
