import ArgumentParser
import CofferKit
import FinanceCore
import Foundation

/// `coffer goal add|list|edit|remove`.
struct GoalCommands: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "goal", abstract: "Savings goals: what you are building.",
        subcommands: [Add.self, List.self, Edit.self, Remove.self])

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "add", abstract: "Add a savings goal.")
        @OptionGroup var options: VaultOptions
        @Argument var name: String
        @Option(help: ArgumentHelp("How much you want to reach.", valueName: "amount")) var target: String?
        @Option(
            name: .customLong("by"), help: ArgumentHelp("When you want to reach it, YYYY-MM-DD.", valueName: "date"))
        var by: String?
        @Option(
            help: ArgumentHelp(
                "The savings account that holds it: save pays into it, and the goal shows its value.",
                valueName: "account"))
        var account: String?
        func run() throws {
            let targetDate = try by.map { try CommandContext.date($0, default: try CommandContext.today()) }
            let ledger = try options.openLedger()
            let goal = try ledger.addGoal(
                name: name, target: try target.map { try CommandContext.positiveAmount($0, ledger: ledger) },
                by: targetDate, account: try account.map { try ledger.account(named: $0, includeClosed: false) })
            let name = goal.name
            Output.line(
                "Added goal \(name)\(goal.target.map { ": \(ledger.currency.format($0))" } ?? "")\(goal.targetDate.map { " by \($0)" } ?? "")."
            )
            Output.advice("Next: coffer save AMOUNT \"\(name)\"")
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list",
            abstract: "List goals with this month, total, target and projected completion.")
        @OptionGroup var options: VaultOptions
        @OptionGroup var report: ReportOptions
        func run() throws {
            let ledger = try options.openLedger()
            let summary = try ledger.budget.summary(for: BudgetMonth(containing: try CommandContext.today()))
            if report.json { return try Output.json(["goals": BudgetCommands.report(summary, ledger: ledger).goals]) }
            guard !summary.goals.isEmpty else {
                Output.line(
                    "Start building your future — add a savings goal: coffer goal add \"Emergency Fund\" --target 5000")
                return
            }
            let currency = ledger.currency
            // Titles above the amounts rather than words beside them, so a narrow screen keeps
            // the amounts and drops the details (by, on track) first.
            Render.table(
                [["Goal", "This month", "Total", "Target", "By", "On track for", "Held in"]]
                    + summary.goals.map { goal in
                        [
                            goal.goal.name, currency.format(goal.thisMonth), currency.format(goal.total),
                            goal.goal.target.map { currency.format($0) } ?? "",
                            goal.goal.targetDate.map { "\($0)" } ?? "",
                            goal.projectedCompletion.map { String($0.description.prefix(7)) } ?? "",
                            ledger.account(withID: goal.goal.account).map { account in
                                "\(account.name) \(currency.format(BudgetCommands.goalAccountValue(goal.goal, ledger: ledger) ?? .zero))"
                            } ?? "",
                        ]
                    }, rightAligned: [1, 2, 3], droppable: [6, 5, 4]
            ).forEach { Output.line($0) }
        }
    }

    struct Edit: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "edit", abstract: "Change a goal's name, target or date.")
        @OptionGroup var options: VaultOptions
        @Argument var name: String
        @Option(name: .customLong("name"), help: "A new name.") var newName: String?
        @Option(help: "A new target amount.") var target: String?
        @Option(name: .customLong("by"), help: ArgumentHelp("A new target date.", valueName: "date")) var by: String?
        @OptionGroup var defaultAccount: DefaultAccountOptions
        func run() throws {
            let ledger = try options.openLedger()
            var goal = try ledger.goal(named: name)
            guard newName != nil || target != nil || by != nil || defaultAccount.given else {
                throw CLIError(
                    .invalidInput, "Say what to change: --name, --target, --by or --account. Nothing was changed.")
            }
            goal.account = try defaultAccount.applied(to: goal.account, ledger: ledger)
            if let newName { goal.name = newName }
            if let target { goal.target = try CommandContext.positiveAmount(target, ledger: ledger) }
            if let by { goal.targetDate = try CommandContext.date(by, default: try CommandContext.today()) }
            try ledger.saveGoal(goal)
            Output.line("Updated \(goal.name).")
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "remove", abstract: "Remove a goal that has no contributions.")
        @OptionGroup var options: VaultOptions
        @Argument var name: String
        func run() throws {
            let ledger = try options.openLedger()
            let goal = try ledger.goal(named: name)
            try ledger.removeGoal(goal)
            Output.line("Removed goal \(goal.name).")
            Output.advice("Undo with: coffer undo")
        }
    }
}
