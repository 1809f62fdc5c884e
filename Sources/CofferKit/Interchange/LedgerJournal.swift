import FinanceCore
import Foundation

/// A plain-text accounting journal that both `ledger` and `hledger` read, whose
/// `Assets` + `Liabilities` balance is Coffer's net worth (Specs/cli.md, "Export and import"):
///
/// - each value update posts the change in the account's value against `Equity:Revaluation`;
/// - closing an account posts its value away against `Equity:Closed accounts`;
/// - a sent invoice posts its total to `Assets:Invoices receivable:CLIENT` against
///   `Income:Invoices`; payments and voids take it back out (if receivables count in net worth);
/// - budget transactions post to `Income:…` / `Expenses:TYPE:…` / `Savings:…` against
///   `Budget:Cash flow`, a separate tree that leaves the net-worth accounts untouched.
///
/// Amounts use the ISO code as commodity (`GBP -20.00`), which both tools parse the same way.
public enum LedgerJournal {
    /// `only` keeps one part: accounts or updates (the net-worth postings), transactions (the
    /// budget flows) or invoices (the receivables).
    public static func render(_ ledger: Ledger, only: ExportSection? = nil) throws -> String {
        let currency = ledger.currency
        let amount = { (money: Money) in "\(currency.code) \(currency.decimalString(money))" }
        var entries: [(date: CalendarDate, order: Int, text: String)] = []
        var usedAccounts: [String] = []
        var order = 0
        func add(_ date: CalendarDate, _ payee: String, _ postings: [(String, Money?)]) {
            order += 1
            usedAccounts += postings.map(\.0)
            var text = "\(date) * \(clean(payee))\n"
            for (account, money) in postings {
                text += "    \(account)" + (money.map { "    \(amount($0))" } ?? "") + "\n"
            }
            entries.append((date, order, text))
        }

        let portfolio = ledger.portfolio
        let netWorth = only == nil || only == .accounts || only == .updates
        for account in ledger.accounts where netWorth {
            let root = account.kind == .asset ? "Assets" : "Liabilities"
            let name = "\(root):\(segment(account.category)):\(segment(account.name))"
            var previous = Money.zero
            let sign: (Money) -> Money = { account.kind == .asset ? $0 : $0.negated }
            for update in portfolio.updates(of: account) where account.closed.map({ update.date < $0 }) ?? true {
                let change = try update.amount.subtracting(previous)
                previous = update.amount
                guard change != .zero else { continue }
                add(
                    update.date, "\(account.name): value update" + (update.note.map { " (\($0))" } ?? ""),
                    [(name, sign(change)), ("Equity:Revaluation", nil)])
            }
            if let closed = account.closed, previous != .zero {
                add(
                    closed, "\(account.name): closed",
                    [(name, sign(previous.negated)), ("Equity:Closed accounts", nil)])
            }
        }

        if ledger.settings?.includeReceivables ?? true, only == nil || only == .invoices {
            for invoice in ledger.invoices {
                guard let sentOn = invoice.sentOn else { continue }
                let client = ledger.clients.first { $0.id == invoice.clientID }?.name ?? "Unknown client"
                let receivable = "Assets:Invoices receivable:\(segment(client))"
                add(
                    sentOn, "\(invoice.reference) sent to \(client)",
                    [(receivable, try invoice.total()), ("Income:Invoices", nil)])
                for payment in invoice.payments {
                    add(
                        payment.date, "\(invoice.reference) payment",
                        [(receivable, payment.amount.negated), ("Equity:Invoice payments", nil)])
                }
                if let voidedOn = invoice.voidedOn {
                    add(
                        voidedOn, "\(invoice.reference) voided",
                        [(receivable, try invoice.outstanding().negated), ("Income:Invoices", nil)])
                }
            }
        }

        let budget = ledger.budget
        for transaction in ledger.transactions.sorted(by: { $0.sequence < $1.sequence })
        where only == nil || only == .transactions {
            let label = ledger.label(of: transaction)
            let account: String
            switch transaction.type {
            case .income: account = "Income:\(segment(label))"
            case .expense:
                account =
                    transaction.target == .uncategorised
                    ? "Expenses:\(segment(label))"
                    : "Expenses:\(budget.budgetType(of: transaction)?.title ?? "Other"):\(segment(label))"
            case .savings: account = "Savings:\(segment(label))"
            }
            let posted = transaction.type == .income ? transaction.amount.negated : transaction.amount
            add(
                transaction.date, label + (transaction.note.map { " (\($0))" } ?? ""),
                [(account, posted), ("Budget:Cash flow", nil)])
        }

        let header = """
            ; Coffer export (ledger journal). Net worth = the balance of Assets and Liabilities:
            ;   ledger -f FILE bal ^Assets ^Liabilities      hledger -f FILE bal ^Assets ^Liabilities
            ; Budget flows are under Income, Expenses and Savings against Budget:Cash flow.

            """
        // Every commodity and account declared, as `hledger check --strict` and `ledger --pedantic` ask.
        var declarations = "commodity \(currency.code)\n\n"
        for account in Set(usedAccounts).sorted() { declarations += "account \(account)\n" }
        return header + declarations + "\n"
            + entries.sorted { ($0.date, $0.order) < ($1.date, $1.order) }.map(\.text).joined(separator: "\n")
    }

    /// An account-name segment: no ':' (the hierarchy separator), no ';' (a comment), no tabs or
    /// runs of spaces (the amount separator).
    static func segment(_ text: String) -> String {
        let replaced = text.replacingOccurrences(of: ":", with: "-").replacingOccurrences(of: ";", with: ",")
            .replacingOccurrences(of: "\t", with: " ")
        let collapsed = replaced.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
        return collapsed.isEmpty ? "Unnamed" : collapsed
    }

    static func clean(_ text: String) -> String {
        text.replacingOccurrences(of: ";", with: ",").replacingOccurrences(of: "\n", with: " ").replacingOccurrences(
            of: "\t", with: " ")
    }
}
