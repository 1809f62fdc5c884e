import ArgumentParser
import CofferKit
import FinanceCore
import Foundation
import VaultStore

extension CommandContext {
    /// "Enter a name" / "Enter an amount", as the Budget design words them.
    static func name(_ text: String, what: String = "name") throws -> String {
        try input { try Account.validatedName(text, what: what) }
    }

    static func positiveAmount(_ text: String, ledger: Ledger) throws -> Money {
        let amount = try input { try ledger.currency.parse(text) }
        guard amount > .zero else { throw CLIError(.invalidInput, "Enter an amount above zero: '\(text)' is not. Nothing was changed.") }
        return amount
    }
}

enum FrequencyOption: String, ExpressibleByArgument, CaseIterable {
    case monthly, biweekly, variable
}

/// `coffer income add|list|edit|remove`.
struct IncomeCommands: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "income", abstract: "Income sources: what you expect to earn each month.",
        subcommands: [Add.self, List.self, Edit.self, Remove.self])

    static func frequency(_ option: FrequencyOption, anchor: String?, today: CalendarDate) throws -> IncomeFrequency {
        switch option {
        case .monthly, .variable:
            guard anchor == nil else { throw CLIError(.invalidInput, "--anchor goes with --frequency biweekly. Nothing was changed.") }
            return option == .monthly ? .monthly : .variable
        case .biweekly:
            return .biweekly(anchor: try CommandContext.date(anchor, default: today))
        }
    }

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Add an income source.")
        @OptionGroup var options: VaultOptions
        @Argument var name: String
        @Argument(help: "How much each payment is (a variable source: a typical month).") var amount: String
        @Option(help: "monthly, biweekly (every 14 days from --anchor) or variable.") var frequency: FrequencyOption
        @Option(help: ArgumentHelp("A bi-weekly source's pay date to count from (default today).", valueName: "date")) var anchor: String?

        func run() throws {
            let name = try CommandContext.name(self.name)
            let ledger = try options.openLedger()
            let amount = try CommandContext.positiveAmount(self.amount, ledger: ledger)
            let frequency = try IncomeCommands.frequency(self.frequency, anchor: anchor, today: try CommandContext.today())
            guard !ledger.incomeSources.contains(where: { $0.name.caseInsensitiveCompare(name) == .orderedSame }) else {
                throw CLIError(.invalidInput, "An income source called '\(name)' already exists. Nothing was changed.")
            }
            let source = IncomeSource(name: name, amount: amount, frequency: frequency)
            try ledger.commit("Added income source \(name)", puts: [(source.id, .incomeSource(source))])
            Output.line("Added \(name): \(ledger.currency.format(amount)) · \(frequency.name).")
            Output.line("Next: coffer earn AMOUNT \"\(name)\" when it arrives · coffer budget")
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List income sources and this month's expected total.")
        @OptionGroup var options: VaultOptions
        @OptionGroup var report: ReportOptions
        struct Row: Encodable { let name, amount, frequency: String; let anchor: String?; let expectedThisMonth: String }

        func run() throws {
            let ledger = try options.openLedger()
            let month = BudgetMonth(containing: try CommandContext.today())
            let money = ledger.currency.decimalString
            let rows = try ledger.incomeSources.sorted { $0.name < $1.name }.map { source -> Row in
                var anchor: String?
                if case .biweekly(let date) = source.frequency { anchor = date.description }
                return Row(name: source.name, amount: money(source.amount), frequency: source.frequency.name, anchor: anchor,
                           expectedThisMonth: money(try source.expected(in: month)))
            }
            let total = try Money.sum(try ledger.incomeSources.map { try $0.expected(in: month) })
            if report.json { return try Output.json(["month": AnyEncodable(month.description), "total": AnyEncodable(money(total)), "sources": AnyEncodable(rows)]) }
            guard !rows.isEmpty else {
                Output.line("Set up your income — add your income sources to start tracking where your money goes:")
                Output.line("  coffer income add Salary 2500 --frequency monthly")
                return
            }
            Output.line("Total this month  \(ledger.currency.format(total))")
            Render.table(ledger.incomeSources.sorted { $0.name < $1.name }.map { source in
                [source.name, ledger.currency.format(source.amount), source.frequency.name.capitalized]
            }, rightAligned: [1]).forEach { Output.line($0) }
        }
    }

    struct Edit: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Change an income source's name, amount or frequency.")
        @OptionGroup var options: VaultOptions
        @Argument var name: String
        @Option(name: .customLong("name"), help: "A new name.") var newName: String?
        @Option(help: "A new amount.") var amount: String?
        @Option(help: "A new frequency.") var frequency: FrequencyOption?
        @Option(help: ArgumentHelp("A new bi-weekly anchor date.", valueName: "date")) var anchor: String?

        func run() throws {
            let ledger = try options.openLedger()
            var source = try Ledger.match(name, among: ledger.incomeSources, name: \.name, what: "income source", addHint: "coffer income add NAME AMOUNT --frequency monthly")
            guard newName != nil || amount != nil || frequency != nil || anchor != nil else {
                throw CLIError(.invalidInput, "Say what to change: --name, --amount, --frequency or --anchor. Nothing was changed.")
            }
            if let newName { source.name = try CommandContext.name(newName) }
            if let amount { source.amount = try CommandContext.positiveAmount(amount, ledger: ledger) }
            if let frequency {
                source.frequency = try IncomeCommands.frequency(frequency, anchor: anchor, today: try CommandContext.today())
            } else if let anchor {
                guard case .biweekly = source.frequency else { throw CLIError(.invalidInput, "--anchor applies to bi-weekly sources. Nothing was changed.") }
                source.frequency = .biweekly(anchor: try CommandContext.date(anchor, default: try CommandContext.today()))
            }
            try ledger.commit("Edited income source \(source.name)", puts: [(source.id, .incomeSource(source))])
            Output.line("\(source.name): \(ledger.currency.format(source.amount)) · \(source.frequency.name).")
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove an income source (income already recorded stays).")
        @OptionGroup var options: VaultOptions
        @Argument var name: String
        func run() throws {
            let ledger = try options.openLedger()
            let source = try Ledger.match(name, among: ledger.incomeSources, name: \.name, what: "income source", addHint: "coffer income add NAME AMOUNT --frequency monthly")
            try ledger.commit("Removed income source \(source.name)", deletes: [source.id])
            Output.line("Removed \(source.name); income already recorded from it still counts. Undo with: coffer undo")
        }
    }
}

/// `coffer category add|rename|hide|unhide|delete|move`.
struct CategoryCommands: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "category", abstract: "Budget categories: just names, each under needs, wants or savings.",
        subcommands: [Add.self, List.self, Rename.self, Hide.self, Unhide.self, Delete.self, Move.self])

    static func find(_ name: String, in ledger: Ledger) throws -> BudgetCategory {
        try ledger.ensureDefaultCategories()
        return try Ledger.match(name, among: ledger.budgetCategories, name: \.name, what: "category", addHint: "coffer category add NAME --type needs")
    }

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Add a category.")
        @OptionGroup var options: VaultOptions
        @Argument var name: String
        @Option(help: "needs, wants or savings.") var type: BudgetType
        func run() throws {
            let name = try CommandContext.name(self.name)
            let ledger = try options.openLedger()
            try ledger.ensureDefaultCategories()
            guard !ledger.budgetCategories.contains(where: { $0.type == type && $0.name.caseInsensitiveCompare(name) == .orderedSame }) else {
                throw CLIError(.invalidInput, "\(type.title) already has a category called '\(name)'. Nothing was changed.")
            }
            let order = (ledger.budgetCategories.filter { $0.type == type }.map(\.sortOrder).max() ?? -1) + 1
            let category = BudgetCategory(name: name, type: type, sortOrder: order, isDefault: false)
            try ledger.commit("Added category \(name) (\(type.title))", puts: [(category.id, .budgetCategory(category))])
            Output.line("Added \(name) to \(type.title). Next: coffer spend AMOUNT \"\(name)\"")
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List categories by type, in order.")
        @OptionGroup var options: VaultOptions
        @OptionGroup var report: ReportOptions
        struct Row: Encodable { let name, type: String; let position: Int; let isDefault, hidden: Bool }
        func run() throws {
            let ledger = try options.openLedger()
            try ledger.ensureDefaultCategories()
            let rows = BudgetType.allCases.flatMap { type in
                ledger.budget.categories.filter { $0.type == type }.enumerated().map {
                    Row(name: $1.name, type: type.rawValue, position: $0 + 1, isDefault: $1.isDefault, hidden: $1.isHidden)
                }
            }
            if report.json { return try Output.json(["categories": rows]) }
            for type in BudgetType.allCases {
                Output.line(type.title)
                Render.table(rows.filter { $0.type == type.rawValue }.map { ["\($0.position).", $0.name, $0.hidden ? "hidden" : "", $0.isDefault ? "" : "custom"] })
                    .forEach { Output.line($0) }
            }
        }
    }

    struct Rename: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Rename a category.")
        @OptionGroup var options: VaultOptions
        @Argument var name: String
        @Argument var newName: String
        func run() throws {
            let newName = try CommandContext.name(self.newName)
            let ledger = try options.openLedger()
            var category = try CategoryCommands.find(name, in: ledger)
            let old = category.name
            category.name = newName
            try ledger.commit("Renamed category \(old) to \(newName)", puts: [(category.id, .budgetCategory(category))])
            Output.line("Renamed \(old) to \(newName).")
        }
    }

    struct Hide: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Hide a category: not offered for new spending; still counted where used.")
        @OptionGroup var options: VaultOptions
        @Argument var name: String
        func run() throws { try CategoryCommands.setHidden(true, name, options) }
    }

    struct Unhide: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show a hidden category again.")
        @OptionGroup var options: VaultOptions
        @Argument var name: String
        func run() throws { try CategoryCommands.setHidden(false, name, options) }
    }

    static func setHidden(_ hidden: Bool, _ name: String, _ options: VaultOptions) throws {
        let ledger = try options.openLedger()
        var category = try find(name, in: ledger)
        guard category.isHidden != hidden else {
            throw CLIError(.invalidInput, "\(category.name) is already \(hidden ? "hidden" : "shown"). Nothing was changed.")
        }
        category.isHidden = hidden
        try ledger.commit("\(hidden ? "Hid" : "Unhid") category \(category.name)", puts: [(category.id, .budgetCategory(category))])
        Output.line(hidden ? "Hid \(category.name). Its past spending still counts; unhide it with: coffer category unhide \"\(category.name)\""
                           : "\(category.name) is shown again.")
    }

    struct Delete: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Delete a custom category; its transactions move to that type's \"Other\".",
            discussion: "Default categories can be hidden, not deleted. Asks on a terminal; --yes otherwise. Undoable.")
        @OptionGroup var options: VaultOptions
        @Argument var name: String
        @Flag(help: "Do not ask for confirmation.") var yes = false
        func run() throws {
            let ledger = try options.openLedger()
            let category = try CategoryCommands.find(name, in: ledger)
            let (other, isNew, moved) = try CommandContext.input { try ledger.budget.deletion(of: category) }
            let question = "Delete \"\(category.name)\"? \(moved.count) transaction\(moved.count == 1 ? "" : "s") will be moved to \"\(other.name)\"."
            if !yes, !(try Terminal.confirm(question, refusal: "Deleting \(category.name)")) {
                Output.line("Kept \(category.name). Nothing was changed.")
                return
            }
            var puts: [(UUID, FinanceRecord)] = moved.map { ($0.id, .transaction($0)) }
            if isNew { puts.append((other.id, .budgetCategory(other))) }
            try ledger.commit("Deleted category \(category.name)", puts: puts, deletes: [category.id])
            Output.line("Deleted \(category.name); \(moved.count) transaction\(moved.count == 1 ? "" : "s") moved to \(other.name) (\(other.type.title)).")
            Output.line("Undo with: coffer undo")
        }
    }

    struct Move: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Move a category to another position in its type's list.")
        @OptionGroup var options: VaultOptions
        @Argument var name: String
        @Argument(help: "The new position, from 1.") var position: Int
        func run() throws {
            let ledger = try options.openLedger()
            let category = try CategoryCommands.find(name, in: ledger)
            var siblings = ledger.budget.categories.filter { $0.type == category.type }
            guard (1...siblings.count).contains(position) else {
                throw CLIError(.invalidInput, "Enter a position from 1 to \(siblings.count). Nothing was changed.")
            }
            siblings.removeAll { $0.id == category.id }
            siblings.insert(category, at: position - 1)
            let puts: [(UUID, FinanceRecord)] = siblings.enumerated().compactMap { index, sibling in
                guard sibling.sortOrder != index else { return nil }
                var moved = sibling
                moved.sortOrder = index
                return (moved.id, .budgetCategory(moved))
            }
            try ledger.commit("Moved category \(category.name) to position \(position)", puts: puts)
            Output.line("\(category.name) is now number \(position) in \(category.type.title).")
        }
    }
}

/// `coffer goal add|list|edit|remove`.
struct GoalCommands: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "goal", abstract: "Savings goals: what you are building.", subcommands: [Add.self, List.self, Edit.self, Remove.self])

    static func find(_ name: String, in ledger: Ledger) throws -> SavingsGoal {
        try Ledger.match(name, among: ledger.goals, name: \.name, what: "goal", addHint: "coffer goal add NAME --target AMOUNT")
    }

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Add a savings goal.")
        @OptionGroup var options: VaultOptions
        @Argument var name: String
        @Option(help: ArgumentHelp("How much you want to reach.", valueName: "amount")) var target: String?
        @Option(name: .customLong("by"), help: ArgumentHelp("When you want to reach it, YYYY-MM-DD.", valueName: "date")) var by: String?
        func run() throws {
            let name = try CommandContext.name(self.name)
            let ledger = try options.openLedger()
            guard !ledger.goals.contains(where: { $0.name.caseInsensitiveCompare(name) == .orderedSame }) else {
                throw CLIError(.invalidInput, "A goal called '\(name)' already exists. Nothing was changed.")
            }
            let goal = SavingsGoal(name: name, target: try target.map { try CommandContext.positiveAmount($0, ledger: ledger) },
                                   targetDate: try by.map { try CommandContext.date($0, default: try CommandContext.today()) })
            try ledger.commit("Added goal \(name)", puts: [(goal.id, .savingsGoal(goal))])
            Output.line("Added goal \(name)\(goal.target.map { ": \(ledger.currency.format($0))" } ?? "")\(goal.targetDate.map { " by \($0)" } ?? "").")
            Output.line("Next: coffer save AMOUNT \"\(name)\"")
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List goals with this month, total, target and projected completion.")
        @OptionGroup var options: VaultOptions
        @OptionGroup var report: ReportOptions
        func run() throws {
            let ledger = try options.openLedger()
            let summary = try ledger.budget.summary(for: BudgetMonth(containing: try CommandContext.today()))
            if report.json { return try Output.json(["goals": BudgetCommands.report(summary, ledger: ledger).goals]) }
            guard !summary.goals.isEmpty else {
                Output.line("Start building your future — add a savings goal: coffer goal add \"Emergency Fund\" --target 5000")
                return
            }
            let currency = ledger.currency
            Render.table(summary.goals.map { goal in
                [goal.goal.name, "\(currency.format(goal.thisMonth)) this month", "\(currency.format(goal.total)) total",
                 goal.goal.target.map { "of \(currency.format($0))" } ?? "",
                 goal.goal.targetDate.map { "by \($0)" } ?? "", goal.projectedCompletion.map { "on track for \($0.description.prefix(7))" } ?? ""]
            }, rightAligned: [1, 2]).forEach { Output.line($0) }
        }
    }

    struct Edit: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Change a goal's name, target or date.")
        @OptionGroup var options: VaultOptions
        @Argument var name: String
        @Option(name: .customLong("name"), help: "A new name.") var newName: String?
        @Option(help: "A new target amount.") var target: String?
        @Option(name: .customLong("by"), help: ArgumentHelp("A new target date.", valueName: "date")) var by: String?
        func run() throws {
            let ledger = try options.openLedger()
            var goal = try GoalCommands.find(name, in: ledger)
            guard newName != nil || target != nil || by != nil else {
                throw CLIError(.invalidInput, "Say what to change: --name, --target or --by. Nothing was changed.")
            }
            if let newName { goal.name = try CommandContext.name(newName) }
            if let target { goal.target = try CommandContext.positiveAmount(target, ledger: ledger) }
            if let by { goal.targetDate = try CommandContext.date(by, default: try CommandContext.today()) }
            try ledger.commit("Edited goal \(goal.name)", puts: [(goal.id, .savingsGoal(goal))])
            Output.line("Updated \(goal.name).")
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove a goal that has no contributions.")
        @OptionGroup var options: VaultOptions
        @Argument var name: String
        func run() throws {
            let ledger = try options.openLedger()
            let goal = try GoalCommands.find(name, in: ledger)
            let contributions = ledger.transactions.filter { $0.target == .goal(goal.id) }.count
            guard contributions == 0 else {
                throw CLIError(.invalidInput, "\(goal.name) has \(contributions) contribution\(contributions == 1 ? "" : "s"); removing it would orphan them. Nothing was changed.",
                               hint: "Delete them first (coffer transaction list), or keep the goal.")
            }
            try ledger.commit("Removed goal \(goal.name)", deletes: [goal.id])
            Output.line("Removed goal \(goal.name). Undo with: coffer undo")
        }
    }
}

/// `coffer transaction list|edit|delete`.
struct TransactionCommands: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "transaction", abstract: "Budget transactions: list, correct, delete (all undoable).",
        subcommands: [List.self, Edit.self, Delete.self])

    static func find(_ id: String, in ledger: Ledger) throws -> Transaction {
        let wanted = id.lowercased()
        let matches = ledger.transactions.filter { BudgetCommands.shortID($0.id).hasPrefix(wanted) || $0.id.uuidString.lowercased() == wanted }
        guard wanted.count >= 4, matches.count == 1 else {
            throw CLIError(.invalidInput, matches.isEmpty ? "No transaction has the id '\(id)'. Nothing was changed."
                                                          : "'\(id)' matches \(matches.count) transactions; give more of the id. Nothing was changed.",
                           hint: "Ids are shown by: coffer transaction list")
        }
        return matches[0]
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List a month's transactions, newest first.")
        @OptionGroup var options: VaultOptions
        @OptionGroup var monthOptions: BudgetCommands.MonthOptions
        @OptionGroup var report: ReportOptions
        @Option(help: "Only this category.") var category: String?
        @Flag(help: "Every uncategorised transaction, of any month (unless --month is given).") var uncategorised = false
        func run() throws {
            let today = try CommandContext.today()
            let ledger = try options.openLedger()
            let summary = try ledger.budget.summary(for: try monthOptions.resolve(today: today))
            var transactions = summary.transactions
            if uncategorised {
                let pool = monthOptions.month == nil ? ledger.transactions.sorted { ($0.date, $0.sequence) > ($1.date, $1.sequence) } : transactions
                transactions = pool.filter { $0.target == .uncategorised }
                if report.json {
                    let items = transactions.map { BudgetCommands.item($0, ledger: ledger) }
                    return try Output.json(["month": AnyEncodable(monthOptions.month == nil ? nil : summary.month.description), "transactions": AnyEncodable(items)])
                }
                guard !transactions.isEmpty else {
                    Output.line("No uncategorised transactions.")
                    return
                }
                BudgetCommands.recentLines(transactions, ledger: ledger, today: today, limit: .max).forEach { Output.line($0) }
                Output.line()
                Output.line("Next: coffer transaction edit ID --category C · coffer import recategorise --rules NAME")
                return
            }
            if let category {
                let found = try CategoryCommands.find(category, in: ledger)
                transactions = transactions.filter { $0.target == .category(found.id) }
            }
            if report.json {
                let items = BudgetCommands.report(summary, ledger: ledger).transactions
                let wanted = Set(transactions.map { BudgetCommands.shortID($0.id) })
                return try Output.json(["month": AnyEncodable(summary.month.description), "transactions": AnyEncodable(items.filter { wanted.contains($0.id) })])
            }
            guard !transactions.isEmpty else {
                Output.line("No transactions in \(summary.month.title)\(category.map { " for \($0)" } ?? ""). Add one: coffer spend AMOUNT CATEGORY")
                return
            }
            BudgetCommands.recentLines(transactions, ledger: ledger, today: today, limit: .max).forEach { Output.line($0) }
            Output.line()
            Output.line("Next: coffer transaction edit ID --amount A · coffer transaction delete ID")
        }
    }

    struct Edit: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Correct a transaction's amount, date, note or category.")
        @OptionGroup var options: VaultOptions
        @Argument(help: "The id shown by coffer transaction list (its first characters are enough).") var id: String
        @Option(help: "A new amount.") var amount: String?
        @Option(help: ArgumentHelp("A new date, YYYY-MM-DD.", valueName: "date")) var date: String?
        @Option(help: "A new note.") var note: String?
        @Option(help: "A new category (for spending).") var category: String?
        @Option(help: "A new income source (for income).") var source: String?
        func run() throws {
            let ledger = try options.openLedger()
            var transaction = try TransactionCommands.find(id, in: ledger)
            guard amount != nil || date != nil || note != nil || category != nil || source != nil else {
                throw CLIError(.invalidInput, "Say what to change: --amount, --date, --note, --category or --source. Nothing was changed.")
            }
            if let amount { transaction.amount = try CommandContext.positiveAmount(amount, ledger: ledger) }
            if let date { transaction.date = try CommandContext.date(date, default: transaction.date) }
            if let note { transaction.note = try CommandContext.name(note, what: "note") }
            if let category {
                let placeable: Bool
                switch transaction.target {
                case .category: placeable = true
                case .uncategorised: placeable = transaction.type != .income
                case .source, .goal: placeable = false
                }
                guard placeable else {
                    throw CLIError(.invalidInput, "Only spending has a category. Nothing was changed.",
                                   hint: transaction.type == .income ? "Income comes from a source: --source NAME" : nil)
                }
                let found = try CategoryCommands.find(category, in: ledger)
                transaction.target = .category(found.id)
                transaction.type = found.type == .savings ? .savings : .expense
            }
            if let source {
                guard transaction.type == .income else {
                    throw CLIError(.invalidInput, "Only income comes from a source. Nothing was changed.", hint: "Spending goes in a category: --category NAME")
                }
                let found = try Ledger.match(source, among: ledger.incomeSources, name: \.name, what: "income source",
                                             addHint: "coffer income add NAME AMOUNT --frequency monthly")
                transaction.target = .source(found.id)
            }
            try ledger.commit("Edited transaction \(BudgetCommands.shortID(transaction.id))", puts: [(transaction.id, .transaction(transaction))])
            Output.line("Updated: \(BudgetCommands.label(of: transaction, ledger: ledger)) \(ledger.currency.format(transaction.amount)) on \(transaction.date).")
        }
    }

    struct Delete: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete a transaction (asks on a terminal; --yes otherwise; undoable).")
        @OptionGroup var options: VaultOptions
        @Argument var id: String
        @Flag(help: "Do not ask for confirmation.") var yes = false
        func run() throws {
            let ledger = try options.openLedger()
            let transaction = try TransactionCommands.find(id, in: ledger)
            let label = "\(BudgetCommands.label(of: transaction, ledger: ledger)) \(ledger.currency.format(transaction.amount)) on \(transaction.date)"
            if !yes, !(try Terminal.confirm("Delete \(label)?", refusal: "Deleting a transaction")) {
                Output.line("Kept it. Nothing was changed.")
                return
            }
            try ledger.commit("Deleted transaction \(label)", deletes: [transaction.id])
            Output.line("Deleted \(label). Undo with: coffer undo")
        }
    }
}
