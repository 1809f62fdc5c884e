import ArgumentParser
import CofferKit
import FinanceCore
import Foundation

/// `coffer reconcile ACCOUNT [--balance AMOUNT] [--json]`.
struct Reconcile: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reconcile",
        abstract: "List the flows since an account's value was last typed, and what they leave unexplained.",
        discussion: """
            Spending, income, saving and invoice payments recorded with an account (--from, --into, --to, \
            or the defaults set with --account) move its value. A value typed with `coffer update` stays the \
            source of truth: the difference between it and what the flows had made the value is shown as \
            unexplained. --balance compares the value with a figure from a statement without recording it.
            """)
    @OptionGroup var options: VaultOptions
    @OptionGroup var report: ReportOptions
    @Argument(help: "The account (a unique prefix of at least 3 letters is enough).") var account: String
    @Option(help: ArgumentHelp("A balance read off a statement, to compare with.", valueName: "amount"))
    var balance: String?

    struct Report: Encodable {
        struct Typed: Encodable {
            let date, value: String
            @NullEncoded var expected: String?
            @NullEncoded var unexplained: String?
        }
        struct Flow: Encodable { let date, label, change: String }
        let account, currency: String
        @NullEncoded var lastUpdate: Typed?
        let flows: [Flow]
        let flowsTotal: String
        let expected: String
        @NullEncoded var balance: String?
        @NullEncoded var gap: String?
    }

    func run() throws {
        let ledger = try options.openLedger()
        let found = try ledger.account(named: account)
        let statement = try balance.map { text in try CommandContext.input { try ledger.currency.parse(text) } }
        let result = try ledger.reconciliation(of: found, statement: statement)
        let money = ledger.currency.decimalString
        let total = try Money.sum(result.flows.map(\.effect))
        if report.json {
            return try Output.json(
                Report(
                    account: found.name, currency: ledger.currency.code,
                    lastUpdate: result.lastTyped.map {
                        .init(
                            date: $0.date.description, value: money($0.amount),
                            expected: result.expectedBeforeTyped.map(money), unexplained: result.unexplained.map(money))
                    },
                    flows: result.flows.map {
                        .init(date: $0.date.description, label: $0.label, change: money($0.effect))
                    },
                    flowsTotal: money(total), expected: money(result.expected), balance: statement.map(money),
                    gap: result.gap.map(money)))
        }
        let currency = ledger.currency
        let owed = found.kind == .liability ? " owed" : ""
        if let typed = result.lastTyped {
            Output.line("\(found.name): \(currency.format(typed.amount))\(owed) typed on \(typed.date)")
            if let expected = result.expectedBeforeTyped, let unexplained = result.unexplained {
                Output.line(
                    unexplained == .zero
                        ? "  The recorded flows explained it exactly."
                        : "  The flows before it had made it \(currency.format(expected)): \(currency.formatSigned(unexplained)) unexplained."
                )
            }
        } else {
            Output.line("\(found.name) has no typed value yet; the flows start from zero.")
        }
        if result.flows.isEmpty {
            Output.line("No flows since.")
        } else {
            Output.line("Flows since:")
            Render.table(
                result.flows.map { ["\($0.date)", $0.label, currency.formatSigned($0.effect)] }, rightAligned: [2]
            ).forEach { Output.line($0) }
        }
        Output.line("Expected now: \(currency.format(result.expected))\(owed)")
        if let statement, let gap = result.gap {
            Output.line(
                gap == .zero
                    ? "The statement's \(currency.format(statement)) matches."
                    : "The statement says \(currency.format(statement)): \(currency.formatSigned(gap)) unexplained.")
            if gap != .zero {
                Output.advice(
                    "Record the statement's figure with: coffer update \"\(found.name)\" \(currency.decimalString(statement))"
                )
            }
        }
    }
}
