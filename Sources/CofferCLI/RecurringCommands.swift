import ArgumentParser
import CofferKit
import FinanceCore
import Foundation

/// `coffer recurring add|list|remove`.
struct RecurringCommands: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "recurring",
        abstract: "Rent, salary, subscriptions and retainers: entries that come back on a schedule.",
        discussion: """
            Nothing is recorded on its own: `coffer upcoming` lists what is due and `coffer upcoming confirm` \
            records it. Missed occurrences are listed, never invented.
            """,
        subcommands: [Add.self, List.self, Edit.self, Remove.self])

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "add",
            abstract: "Add a recurring item: spending in a category, income, saving, or a retainer invoice.")
        @OptionGroup var options: VaultOptions
        @Argument(help: "Its name (an invoice's line description).") var name: String
        @Argument(help: "How much each time.") var amount: String
        @Option(help: "Spending in this category.") var category: String?
        @Option(help: "Income from this source.") var source: String?
        @Option(help: "Saving towards this goal.") var goal: String?
        @Option(help: "A draft invoice to this client (a retainer).") var client: String?
        @Option(help: ArgumentHelp("The invoice's tax rate, e.g. 20%.", valueName: "rate")) var tax: String?
        @Option(help: "monthly, weekly, biweekly or yearly.") var every: String
        @Option(
            help: ArgumentHelp(
                "Monthly: the day of the month, 1–31 or last (a shorter month takes its last day; default: the start's).",
                valueName: "day"))
        var day: String?
        @Option(help: ArgumentHelp("The first occurrence is on or after it (default today).", valueName: "date"))
        var start: String?
        @Option(help: ArgumentHelp("No occurrence after it.", valueName: "date")) var end: String?
        @Option(help: ArgumentHelp("The account the money leaves (default: the category's).", valueName: "account"))
        var from: String?
        @Option(help: ArgumentHelp("The account income arrives in (default: the source's).", valueName: "account"))
        var into: String?
        @Option(help: ArgumentHelp("The account saving goes to (default: the goal's).", valueName: "account"))
        var to: String?
        @Option(parsing: .unconditional, help: "A note on each entry (default: the name).") var note: String?

        func run() throws {
            let today = try CommandContext.today()
            let startDate = try CommandContext.date(start, default: today)
            let rule = try RecurringCommands.rule(every, day: day, start: startDate)
            let ledger = try options.openLedger()
            let given = [category, source, goal, client].compactMap { $0 }
            guard given.count == 1 else {
                throw CLIError(
                    .invalidInput,
                    "Say what it records with exactly one of --category, --source, --goal or --client. Nothing was changed."
                )
            }
            guard tax == nil || client != nil else {
                throw CLIError(.invalidInput, "--tax applies to invoices (--client). Nothing was changed.")
            }
            for (flag, given, fits) in [
                ("--into", into != nil, source != nil), ("--to", to != nil, goal != nil),
                ("--from", from != nil, category != nil || goal != nil),
            ] where given && !fits {
                throw CLIError(
                    .invalidInput,
                    "\(flag) does not apply here: --from is for spending and saving, --into for income, --to for saving. Nothing was changed."
                )
            }
            let entry: RecurringItem.Entry
            if let category {
                entry = .spending(category: try ledger.category(named: category, includeHidden: false).id)
            } else if let source {
                entry = .income(source: try ledger.incomeSource(named: source).id)
            } else if let goal {
                entry = .saving(goal: try ledger.goal(named: goal).id)
            } else {
                entry = .invoice(
                    client: try ledger.client(named: client!).id,
                    taxBasisPoints: try tax.map { text in try CommandContext.input { try GrowthRate(parsing: text) } }?
                        .basisPoints)
            }
            let account = { (name: String?) in try name.map { try ledger.account(named: $0, includeClosed: false).id } }
            let item = try ledger.addRecurring(
                RecurringItem(
                    name: name, amount: try CommandContext.positiveAmount(amount, ledger: ledger), entry: entry,
                    rule: rule, start: startDate, end: try end.map { try CommandContext.date($0, default: today) },
                    note: note, from: try account(from), to: try account(into ?? to)))
            let next = item.pending(through: today.adding(days: 400)).first
            Output.line(
                "Added \(item.name): \(ledger.currency.format(item.amount)) \(RecurringCommands.describe(item.rule))"
                    + (next.map { ", next due \($0)" } ?? ""))
            Output.advice("Next: coffer upcoming · coffer upcoming confirm \"\(item.name)\" when it happens")
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list", abstract: "List recurring items with their next due date.")
        @OptionGroup var options: VaultOptions
        @OptionGroup var report: ReportOptions

        struct Row: Encodable {
            let id, name, amount, kind, target, every, start: String
            @NullEncoded var day: String?
            @NullEncoded var end: String?
            @NullEncoded var next: String?
            @NullEncoded var handledThrough: String?
        }

        func run() throws {
            let ledger = try options.openLedger()
            let today = try CommandContext.today()
            let rows = ledger.recurringItems.map { item in
                var day: String?
                if case .monthly(let value) = item.rule { day = value == 0 ? "last" : "\(value)" }
                let (kind, target) = RecurringCommands.what(item, ledger: ledger)
                return Row(
                    id: Ledger.shortID(item.id), name: item.name, amount: ledger.currency.decimalString(item.amount),
                    kind: kind, target: target, every: item.rule.name, start: item.start.description, day: day,
                    end: item.end?.description,
                    next: item.pending(through: today.adding(days: 800)).first?.description,
                    handledThrough: item.handledThrough?.description)
            }
            if report.json { return try Output.json(["recurring": rows]) }
            guard !rows.isEmpty else {
                Output.line(
                    "No recurring items yet — add rent: coffer recurring add Rent 1200 --category Rent --every monthly --day 1"
                )
                return
            }
            Render.table(
                [["Name", "Amount", "Every", "For", "Next"]]
                    + zip(ledger.recurringItems, rows).map { item, row in
                        [
                            row.name, ledger.currency.format(item.amount), RecurringCommands.describe(item.rule),
                            "\(row.kind) · \(row.target)", row.next ?? "ended",
                        ]
                    }, rightAligned: [1], droppable: [3, 2]
            ).forEach { Output.line($0) }
        }
    }

    struct Edit: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "edit",
            abstract: "Change a recurring item's amount, accounts, end date or note (from its next occurrence on).")
        @OptionGroup var options: VaultOptions
        @Argument(help: "Its name or id.") var name: String
        @Option(help: "A new amount.") var amount: String?
        @Option(help: ArgumentHelp("The account the money leaves.", valueName: "account")) var from: String?
        @Option(help: ArgumentHelp("The account income arrives in.", valueName: "account")) var into: String?
        @Option(help: ArgumentHelp("The account saving goes to.", valueName: "account")) var to: String?
        @Flag(help: "Name no account: the target's default decides.") var noAccount = false
        @Option(help: ArgumentHelp("No occurrence after it.", valueName: "date")) var end: String?
        @Flag(help: "Remove the end date.") var noEnd = false
        @Option(parsing: .unconditional, help: "A new note.") var note: String?

        func run() throws {
            let ledger = try options.openLedger()
            var item = try ledger.recurringItem(named: name)
            guard
                amount != nil || from != nil || into != nil || to != nil || noAccount || end != nil || noEnd
                    || note != nil
            else {
                throw CLIError(
                    .invalidInput,
                    "Say what to change: --amount, --from, --into, --to, --no-account, --end, --no-end or --note. Nothing was changed."
                )
            }
            if noAccount, from != nil || into != nil || to != nil {
                throw CLIError(.invalidInput, "--no-account contradicts --from, --into and --to. Nothing was changed.")
            }
            if noEnd, end != nil {
                throw CLIError(.invalidInput, "--no-end contradicts --end. Nothing was changed.")
            }
            if let amount { item.amount = try CommandContext.positiveAmount(amount, ledger: ledger) }
            let account = { (name: String) in try ledger.account(named: name, includeClosed: false).id }
            if noAccount { (item.from, item.to) = (nil, nil) }
            if let from { item.from = try account(from) }
            if let target = into ?? to { item.to = try account(target) }
            if noEnd { item.end = nil }
            if let end { item.end = try CommandContext.date(end, default: try CommandContext.today()) }
            if let note { item.note = note }
            try ledger.saveRecurring(item)
            Output.line(
                "Updated \(item.name): \(ledger.currency.format(item.amount)) \(RecurringCommands.describe(item.rule))."
            )
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "remove", abstract: "Remove a recurring item (what it recorded stays).")
        @OptionGroup var options: VaultOptions
        @Argument var name: String
        func run() throws {
            let ledger = try options.openLedger()
            let item = try ledger.recurringItem(named: name)
            try ledger.removeRecurring(item)
            Output.line("Removed \(item.name). What it recorded stays.")
            Output.advice("Undo with: coffer undo")
        }
    }

    static func rule(_ every: String, day: String?, start: CalendarDate) throws -> RecurrenceRule {
        let rule: RecurrenceRule
        switch every.lowercased() {
        case "monthly":
            guard let day else { return .monthly(day: start.day) }
            if day.lowercased() == "last" { return .monthly(day: 0) }
            guard let number = Int(day), (1...31).contains(number) else {
                throw CLIError(.invalidInput, "Enter --day from 1 to 31, or last: '\(day)' is not one.")
            }
            return .monthly(day: number)
        case "weekly": rule = .weekly
        case "biweekly", "fortnightly": rule = .biweekly
        case "yearly", "annually": rule = .yearly
        default:
            throw CLIError(.invalidInput, "Enter --every monthly, weekly, biweekly or yearly: '\(every)' is not one.")
        }
        guard day == nil else {
            throw CLIError(
                .invalidInput,
                "--day applies to monthly items; \(rule.name) ones fall on the start date's weekday or day.")
        }
        return rule
    }

    /// "monthly on the 1st", "monthly on the last day", "every 2 weeks".
    static func describe(_ rule: RecurrenceRule) -> String {
        switch rule {
        case .monthly(let day): day == 0 ? "monthly on the last day" : "monthly on day \(day)"
        case .weekly: "weekly"
        case .biweekly: "every 2 weeks"
        case .yearly: "yearly"
        }
    }

    /// What an item records, as a kind and a name: ("spending", "Rent/Mortgage").
    static func what(_ item: RecurringItem, ledger: Ledger) -> (kind: String, target: String) {
        switch item.entry {
        case .spending(let id):
            ("spending", ledger.budgetCategories.first { $0.id == id }?.name ?? "(deleted category)")
        case .income(let id): ("income", ledger.incomeSources.first { $0.id == id }?.name ?? "(removed source)")
        case .saving(let id): ("saving", ledger.goals.first { $0.id == id }?.name ?? "(removed goal)")
        case .invoice(let id, _): ("invoice", ledger.clients.first { $0.id == id }?.name ?? "(removed client)")
        }
    }
}

/// `coffer upcoming [--days N]`, `upcoming confirm [ID|--all]`, `upcoming skip ID`.
struct Upcoming: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "upcoming",
        abstract: "What recurring items are due: missed, today, and the next days; confirm records them.",
        subcommands: [List.self, Confirm.self, Skip.self], defaultSubcommand: List.self)

    struct Occurrence: Encodable {
        let id, name, date, amount, kind, target: String
    }

    static func json(_ occurrence: Ledger.Occurrence, ledger: Ledger) -> Occurrence {
        let (kind, target) = RecurringCommands.what(occurrence.item, ledger: ledger)
        return Occurrence(
            id: Ledger.shortID(occurrence.item.id), name: occurrence.item.name, date: occurrence.date.description,
            amount: ledger.currency.decimalString(occurrence.item.amount), kind: kind, target: target)
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list", abstract: "List what is due (the default).")
        @OptionGroup var options: VaultOptions
        @OptionGroup var report: ReportOptions
        @Option(help: ArgumentHelp("How many days ahead to look (default 14).", valueName: "n")) var days = 14

        func run() throws {
            guard (0...366).contains(days) else {
                throw CLIError(.invalidInput, "Enter --days from 0 to 366: \(days) is outside that.")
            }
            let ledger = try options.openLedger()
            let today = try CommandContext.today()
            let (missed, due, soon) = ledger.upcoming(today: today, days: days)
            if report.json {
                return try Output.json([
                    "today": AnyEncodable(today.description), "days": AnyEncodable(days),
                    "missed": AnyEncodable(missed.map { Upcoming.json($0, ledger: ledger) }),
                    "due": AnyEncodable(due.map { Upcoming.json($0, ledger: ledger) }),
                    "upcoming": AnyEncodable(soon.map { Upcoming.json($0, ledger: ledger) }),
                ])
            }
            guard !ledger.recurringItems.isEmpty else {
                Output.line(
                    "No recurring items yet — add one: coffer recurring add Rent 1200 --category Rent --every monthly")
                return
            }
            func section(_ title: String, _ occurrences: [Ledger.Occurrence]) {
                guard !occurrences.isEmpty else { return }
                Output.line(title)
                Render.table(
                    occurrences.map {
                        let (kind, target) = RecurringCommands.what($0.item, ledger: ledger)
                        return [
                            $0.date.description, $0.item.name, ledger.currency.format($0.item.amount),
                            "\(kind) · \(target)",
                        ]
                    }, rightAligned: [2], droppable: [3]
                ).forEach { Output.line($0) }
            }
            section("Missed (not recorded; confirm or skip each):", missed)
            section("Due today:", due)
            section("In the next \(days) days:", soon)
            if missed.isEmpty && due.isEmpty && soon.isEmpty { Output.line("Nothing due in the next \(days) days.") }
            if !missed.isEmpty || !due.isEmpty {
                Output.advice("Record them with: coffer upcoming confirm --all (or confirm NAME, skip NAME)")
            }
        }
    }

    struct Confirm: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "confirm",
            abstract: "Record what is due (each occurrence its own undoable change, dated its due date).")
        @OptionGroup var options: VaultOptions
        @OptionGroup var report: ReportOptions
        @Argument(help: "A recurring item's name or id; every occurrence of it due by today.") var id: String?
        @Flag(help: "Every item with something due by today, missed ones too.") var all = false

        struct Recorded: Encodable {
            let id, name, date, amount: String
            @NullEncoded var transaction: String?
            @NullEncoded var invoice: String?
        }

        func run() throws {
            guard (id != nil) != all else {
                throw CLIError(
                    .invalidInput, "Say what to confirm: a recurring item's name, or --all. Nothing was changed.")
            }
            let ledger = try options.openLedger()
            let today = try CommandContext.today()
            let items = try id.map { [try ledger.recurringItem(named: $0)] } ?? ledger.recurringItems
            var recorded: [Recorded] = []
            for (item, date, entry) in try ledger.confirm(items, today: today) {
                var row = Recorded(
                    id: Ledger.shortID(item.id), name: item.name, date: date.description,
                    amount: ledger.currency.decimalString(item.amount))
                switch entry {
                case .transaction(let transaction): row.transaction = Ledger.shortID(transaction.id)
                case .invoice(let invoice): row.invoice = invoice.reference
                }
                recorded.append(row)
                if !report.json {
                    Output.line(
                        "Recorded \(item.name) \(ledger.currency.format(item.amount)) due \(date)"
                            + (row.invoice.map { " as draft \($0)" } ?? ""))
                }
            }
            if report.json { return try Output.json(["recorded": recorded]) }
            if recorded.isEmpty {
                Output.line("Nothing is due by \(today).")
            } else {
                Output.advice("Each is its own change: coffer undo takes back the last one.")
            }
        }
    }

    struct Skip: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "skip",
            abstract: "Pass over the oldest due occurrence of an item without recording it.")
        @OptionGroup var options: VaultOptions
        @Argument(help: "A recurring item's name or id.") var id: String
        func run() throws {
            let ledger = try options.openLedger()
            let item = try ledger.recurringItem(named: id)
            let date = try ledger.skip(item, today: try CommandContext.today())
            Output.line("Skipped \(item.name) due \(date); nothing was recorded for it.")
            Output.advice("Undo with: coffer undo")
        }
    }
}
