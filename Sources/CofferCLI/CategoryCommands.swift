import ArgumentParser
import CofferKit
import FinanceCore
import Foundation

/// `coffer category add|rename|hide|unhide|delete|move`.
struct CategoryCommands: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "category", abstract: "Budget categories: just names, each under needs, wants or savings.",
        subcommands: [Add.self, List.self, Edit.self, Rename.self, Hide.self, Unhide.self, Delete.self, Move.self])

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "add", abstract: "Add a category.")
        @OptionGroup var options: VaultOptions
        @Argument var name: String
        @Option(help: "needs, wants or savings.") var type: BudgetType
        @Option(help: ArgumentHelp("The account spending in it comes from by default.", valueName: "account"))
        var account: String?
        func run() throws {
            let ledger = try options.openLedger()
            let category = try ledger.addCategory(
                name: name, type: type, account: try account.map { try ledger.account(named: $0, includeClosed: false) }
            )
            Output.line("Added \(category.name) to \(type.title).")
            Output.advice("Next: coffer spend AMOUNT \"\(category.name)\"")
        }
    }

    struct Edit: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "edit",
            abstract: "Set or clear the account spending in a category comes from by default.")
        @OptionGroup var options: VaultOptions
        @Argument var name: String
        @OptionGroup var defaultAccount: DefaultAccountOptions
        func run() throws {
            let ledger = try options.openLedger()
            let category = try ledger.category(named: name)
            guard defaultAccount.given else {
                throw CLIError(.invalidInput, "Say what to change: --account or --no-account. Nothing was changed.")
            }
            let account = ledger.account(withID: try defaultAccount.applied(to: category.account, ledger: ledger))
            try ledger.setDefaultAccount(of: category, to: account)
            Output.line(
                account.map { "Spending in \(category.name) comes from \($0.name) unless --from says otherwise." }
                    ?? "Spending in \(category.name) moves no account unless --from says so.")
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list", abstract: "List categories by type, in order.")
        @OptionGroup var options: VaultOptions
        @OptionGroup var report: ReportOptions
        struct Row: Encodable {
            let name, type: String; let position: Int; let isDefault, hidden: Bool
            /// The account spending in it comes from by default.
            @NullEncoded var account: String?
        }
        func run() throws {
            let ledger = try options.openLedger()
            let rows = BudgetType.allCases.flatMap { type in
                ledger.budget.categories.filter { $0.type == type }.enumerated().map {
                    Row(
                        name: $1.name, type: type.rawValue, position: $0 + 1, isDefault: $1.isDefault,
                        hidden: $1.isHidden, account: ledger.account(withID: $1.account)?.name)
                }
            }
            if report.json { return try Output.json(["categories": rows]) }
            for type in BudgetType.allCases {
                Output.line(type.title)
                Render.table(
                    rows.filter { $0.type == type.rawValue }.map {
                        ["\($0.position).", $0.name, $0.hidden ? "hidden" : "", $0.isDefault ? "" : "custom"]
                    }
                )
                .forEach { Output.line($0) }
            }
        }
    }

    struct Rename: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "rename", abstract: "Rename a category.")
        @OptionGroup var options: VaultOptions
        @Argument var name: String
        @Argument var newName: String
        func run() throws {
            let ledger = try options.openLedger()
            let category = try ledger.category(named: name)
            try ledger.renameCategory(category, to: newName)
            Output.line("Renamed \(category.name) to \(try ledger.category(named: newName, type: category.type).name).")
        }
    }

    struct Hide: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "hide",
            abstract: "Hide a category: not offered for new spending; still counted where used.")
        @OptionGroup var options: VaultOptions
        @Argument var name: String
        func run() throws { try CategoryCommands.setHidden(true, name, options) }
    }

    struct Unhide: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "unhide", abstract: "Show a hidden category again.")
        @OptionGroup var options: VaultOptions
        @Argument var name: String
        func run() throws { try CategoryCommands.setHidden(false, name, options) }
    }

    static func setHidden(_ hidden: Bool, _ name: String, _ options: VaultOptions) throws {
        let ledger = try options.openLedger()
        let category = try ledger.category(named: name)
        try ledger.setCategoryHidden(category, hidden)
        Output.line(
            hidden
                ? "Hid \(category.name). Its past spending still counts; unhide it with: coffer category unhide \"\(category.name)\""
                : "\(category.name) is shown again.")
    }

    struct Delete: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "delete",
            abstract: "Delete a custom category; its transactions move to that type's \"Other\".",
            discussion: "Default categories can be hidden, not deleted. Asks on a terminal; --yes otherwise. Undoable.")
        @OptionGroup var options: VaultOptions
        @Argument var name: String
        @Flag(help: "Do not ask for confirmation.") var yes = false
        func run() throws {
            let ledger = try options.openLedger()
            let category = try ledger.category(named: name)
            let (other, _, moved) = try ledger.categoryDeletion(category)
            let question =
                "Delete \"\(category.name)\"? \(moved.count) transaction\(moved.count == 1 ? "" : "s") will be moved to \"\(other.name)\"."
            if !yes, !(try Terminal.confirm(question, refusal: "Deleting \(category.name)")) {
                Output.line("Kept \(category.name). Nothing was changed.")
                return
            }
            try ledger.deleteCategory(category)
            Output.line(
                "Deleted \(category.name); \(moved.count) transaction\(moved.count == 1 ? "" : "s") moved to \(other.name) (\(other.type.title))."
            )
            Output.advice("Undo with: coffer undo")
        }
    }

    struct Move: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "move",
            abstract: "Move a category to another position in its type's list.")
        @OptionGroup var options: VaultOptions
        @Argument var name: String
        @Argument(help: "The new position, from 1.") var position: Int
        func run() throws {
            let ledger = try options.openLedger()
            let category = try ledger.category(named: name)
            try ledger.moveCategory(category, to: position)
            Output.line("\(category.name) is now number \(position) in \(category.type.title).")
        }
    }
}
