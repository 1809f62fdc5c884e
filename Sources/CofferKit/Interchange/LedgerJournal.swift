import FinanceCore
import Foundation

/// A plain-text accounting journal that both `ledger` and `hledger` read, written as an hledger
/// user would write it (Specs/cli.md, "Export and import"): its `Assets` + `Liabilities` balance
/// is Coffer's net worth on every day, and its `Income` and `Expenses` are Coffer's budget.
///
/// - each value update posts the change in the account's value against `Equity:Revaluation` and
///   asserts the new value (`= GBP 1250.50`), so both tools check the journal against Coffer; a
///   value typed after flows posts only what they left unexplained;
/// - a transaction or payment that moved money posts to the accounts it moved, in the order
///   Coffer applied it among the value updates (so same-day assertions hold);
/// - closing an account posts its value away against `Equity:Closed accounts`;
/// - a sent invoice posts its total to `Assets:Receivable:CLIENT` against `Income:Invoices`;
///   payments move it to the account they were paid into (or `Equity:Invoice payments` when
///   Coffer was not told) and voids back out of `Income:Invoices` (if receivables count in net
///   worth; if not, a payment into an account arrives from `Equity:Invoice payments`);
/// - budget transactions read `payee | note`, post to `Income:SOURCE` or `Expenses:TYPE:CATEGORY`
///   against `Equity:Budget`, and savings to `Assets:Savings:GOAL` against `Assets:Earmarked`.
///
/// Amounts use the ISO code as commodity (`GBP -20.00`), which both tools parse the same way.
public enum LedgerJournal {
    /// The counter-account of budget income and spending: equity, so it moves no report's
    /// net worth and `is` shows the budget's income and expenses.
    static let budgetAccount = "Equity:Budget"
    /// The counter-account of budget savings. Savings earmark money that Coffer already counts
    /// in the accounts' values, so the earmark is taken back out of Assets here and `bs` still
    /// totals the net worth.
    static let earmarkedAccount = "Assets:Earmarked"
    /// Where invoice payments go when Coffer was not told the account they were paid into (that
    /// account's value update carries the money): they leave Assets through equity.
    static let invoicePaymentsAccount = "Equity:Invoice payments"
    static let invoiceIncomeAccount = "Income:Invoices"

    struct Posting {
        let account: String
        let amount: Money?
        var assertion: Money? = nil
    }

    /// `only` keeps one part: accounts or updates (the net-worth postings), transactions (the
    /// budget flows) or invoices (the receivables).
    public static func render(_ ledger: Ledger, only: ExportSection? = nil) throws -> String {
        let currency = ledger.currency
        let amount = { (money: Money) in "\(currency.code) \(currency.decimalString(money))" }
        // Ordered by date, then by the counter value updates and flows share (so each account's
        // postings on a day come in the order Coffer applied them), then as written.
        var entries: [(date: CalendarDate, rank: UInt64, order: Int, text: String)] = []
        var usedAccounts: [String] = []
        // What `hledger is` shows that Coffer's budget does not count, or the other way round.
        var savingsByMonth: [BudgetMonth: Money] = [:], invoicedByMonth: [BudgetMonth: Money] = [:]
        var order = 0
        func add(_ date: CalendarDate, _ description: String, _ postings: [Posting], rank: UInt64 = 0) {
            order += 1
            usedAccounts += postings.map(\.account)
            // A description opening with "(" would be read as a transaction code: an empty code first.
            var text = "\(date) * \(description.hasPrefix("(") ? "() " : "")\(description)\n"
            for posting in postings {
                text +=
                    "    \(posting.account)" + (posting.amount.map { "    \(amount($0))" } ?? "")
                    + (posting.assertion.map { " = \(amount($0))" } ?? "") + "\n"
            }
            entries.append((date, rank, order, text))
        }

        let portfolio = ledger.portfolio
        // Names that cleaning makes alike ("A:B", "A-B") stay apart, so each account's balance
        // assertions see only its own values.
        var accountNames: [UUID: String] = [:]
        for account in ledger.accounts {
            let path =
                "\(account.kind == .asset ? "Assets" : "Liabilities"):\(segment(account.category)):\(segment(account.name))"
            var unique = path, count = 1
            while accountNames.values.contains(unique) {
                count += 1
                unique = "\(path) (\(count))"
            }
            accountNames[account.id] = unique
        }
        // A receivable or savings pot named like a Coffer account gets an account of its own:
        // the account's balance assertions must see only its values.
        let realAccounts = Set(accountNames.values)
        let apart = { (name: String, tag: String) in realAccounts.contains(name) ? "\(name) (\(tag))" : name }
        let netWorth = only == nil || only == .accounts || only == .updates
        for account in ledger.accounts where netWorth {
            let name = accountNames[account.id]!
            var previous = Money.zero
            let sign: (Money) -> Money = { account.kind == .asset ? $0 : $0.negated }
            for update in portfolio.updates(of: account) where account.closed.map({ update.date < $0 }) ?? true {
                let change = try update.amount.subtracting(previous)
                previous = update.amount
                // A value a flow left is posted by the flow's own transaction, below.
                guard change != .zero, update.movedBy == nil else { continue }
                add(
                    update.date, clean("\(account.name): value update" + (update.note.map { " (\($0))" } ?? "")),
                    [
                        Posting(account: name, amount: sign(change), assertion: sign(update.amount)),
                        Posting(account: "Equity:Revaluation", amount: nil),
                    ], rank: update.sequence)
            }
            if let closed = account.closed, previous != .zero {
                add(
                    closed, clean("\(account.name): closed"),
                    [
                        Posting(account: name, amount: sign(previous.negated), assertion: .zero),
                        Posting(account: "Equity:Closed accounts", amount: nil),
                    ], rank: .max)
            }
        }

        // The postings of a flow's ends on accounts that still exist (money in positive).
        func moved(_ flow: AccountFlow?, _ amount: Money) -> [Posting] {
            guard let flow else { return [] }
            return [(flow.from, amount.negated), (flow.to, amount)].compactMap { id, change in
                id.flatMap { accountNames[$0] }.map { Posting(account: $0, amount: change) }
            }
        }
        let includeReceivables = ledger.settings?.includeReceivables ?? true
        if !includeReceivables, netWorth || only == .invoices {
            // Receivables are not in net worth, so only a payment into an account shows: as money
            // arriving from outside the budget.
            for invoice in ledger.invoices {
                let client = ledger.clients.first { $0.id == invoice.clientID }?.name ?? "Unknown client"
                for payment in invoice.payments {
                    let into = moved(payment.flow, payment.amount)
                    guard !into.isEmpty else { continue }
                    add(
                        payment.date, described(client, "\(invoice.reference) payment"),
                        into + [Posting(account: invoicePaymentsAccount, amount: nil)], rank: payment.flow?.order ?? 0)
                }
            }
        }
        if includeReceivables, only == nil || only == .invoices {
            for invoice in ledger.invoices {
                guard let sentOn = invoice.sentOn else { continue }
                let client = ledger.clients.first { $0.id == invoice.clientID }?.name ?? "Unknown client"
                let receivable = apart("Assets:Receivable:\(segment(client))", "invoices")
                let total = try invoice.total()
                invoicedByMonth[BudgetMonth(containing: sentOn)] = try
                    (invoicedByMonth[BudgetMonth(containing: sentOn)] ?? .zero).adding(total)
                add(
                    sentOn, described(client, "\(invoice.reference) sent"),
                    [Posting(account: receivable, amount: total), Posting(account: invoiceIncomeAccount, amount: nil)])
                for payment in invoice.payments {
                    let into = moved(payment.flow, payment.amount)
                    add(
                        payment.date, described(client, "\(invoice.reference) payment"),
                        [Posting(account: receivable, amount: payment.amount.negated)]
                            + (into.isEmpty ? [Posting(account: invoicePaymentsAccount, amount: nil)] : into),
                        rank: payment.flow?.order ?? 0)
                }
                if let voidedOn = invoice.voidedOn {
                    let outstanding = try invoice.outstanding()
                    invoicedByMonth[BudgetMonth(containing: voidedOn)] = try
                        (invoicedByMonth[BudgetMonth(containing: voidedOn)] ?? .zero).subtracting(outstanding)
                    add(
                        voidedOn, described(client, "\(invoice.reference) voided"),
                        [
                            Posting(account: receivable, amount: outstanding.negated),
                            Posting(account: invoiceIncomeAccount, amount: nil),
                        ])
                }
            }
        }

        let budget = ledger.budget
        for transaction in ledger.transactions.sorted(by: { $0.sequence < $1.sequence })
        where only == nil || only == .transactions {
            let label = ledger.label(of: transaction)
            let account: String
            var counter = budgetAccount
            switch transaction.type {
            case .income: account = "Income:\(segment(label))"
            case .expense:
                account =
                    transaction.target == .uncategorised
                    ? "Expenses:\(segment(label))"
                    : "Expenses:\(budget.budgetType(of: transaction)?.title ?? "Other"):\(segment(label))"
            case .savings:
                account = apart("Assets:Savings:\(segment(label))", "budget")
                counter = earmarkedAccount
                let month = BudgetMonth(containing: transaction.date)
                savingsByMonth[month] = try (savingsByMonth[month] ?? .zero).adding(transaction.amount)
            }
            let posted = transaction.type == .income ? transaction.amount.negated : transaction.amount
            let kind = transaction.type == .expense ? "spending" : transaction.type.rawValue
            let note =
                kind
                + (transaction.origin.map { $0.account.isEmpty ? " from a statement" : " from \($0.account)" } ?? "")
            // Money that moved accounts posts to them; only what no account supplied (or received)
            // goes to the counter-account.
            var postings = [Posting(account: account, amount: posted)]
            let flow = transaction.flow
            let movedFrom = flow?.from.flatMap { accountNames[$0] }, movedTo = flow?.to.flatMap { accountNames[$0] }
            switch transaction.type {
            case .income:
                postings.append(Posting(account: movedTo ?? counter, amount: movedTo == nil ? nil : transaction.amount))
            case .expense:
                postings.append(
                    Posting(account: movedFrom ?? counter, amount: movedFrom == nil ? nil : transaction.amount.negated))
            case .savings:
                postings.append(Posting(account: counter, amount: nil))
                if movedFrom != nil || movedTo != nil {
                    // The earmark stays as it is; the transfer between the accounts is added.
                    postings += moved(flow, transaction.amount)
                    if movedFrom == nil || movedTo == nil {
                        postings.append(
                            Posting(
                                account: budgetAccount,
                                amount: movedFrom == nil ? transaction.amount.negated : transaction.amount))
                    }
                }
            }
            add(
                transaction.date, described(transaction.note ?? label, note), postings,
                rank: flow.map { movedFrom != nil || movedTo != nil ? $0.order : 0 } ?? 0)
        }

        var header = """
            ; Coffer export (ledger journal). Net worth = the balance of Assets and Liabilities:
            ;   ledger -f FILE bal ^Assets ^Liabilities      hledger -f FILE bs
            ; Value updates assert each account's new value. The budget is under Income and
            ; Expenses against \(budgetAccount) (hledger -f FILE is -M); savings are under
            ; Assets:Savings against \(earmarkedAccount), which takes the earmarked money back out of
            ; Assets because the accounts' values already hold it.

            """
        header += differences(savingsByMonth, invoicedByMonth, amount: amount)
        // Every commodity and account declared, as `hledger check --strict` and `ledger --pedantic` ask.
        var declarations = "commodity \(currency.code)\n\n"
        for account in Set(usedAccounts).sorted() { declarations += "account \(account)\n" }
        return header + declarations + "\n"
            + entries.sorted { ($0.date, $0.rank, $0.order) < ($1.date, $1.rank, $1.order) }.map(\.text)
            .joined(separator: "\n")
    }

    /// The header lines that say, month by month, where `hledger is` differs from `coffer budget`.
    static func differences(
        _ savings: [BudgetMonth: Money], _ invoiced: [BudgetMonth: Money], amount: (Money) -> String
    ) -> String {
        var text = ""
        if !savings.isEmpty {
            text += """
                ; hledger is shows less spending than coffer budget: Coffer counts savings in "spent",
                ; here they are assets (Assets:Savings). The difference by month:

                """
            for (month, total) in savings.sorted(by: { $0.key < $1.key }) { text += ";   \(month)  \(amount(total))\n" }
        }
        if !invoiced.isEmpty {
            text += """
                ; hledger is shows more income than coffer budget: \(invoiceIncomeAccount) holds invoices sent (less
                ; voids), which Coffer's budget does not count as income. The difference by month:

                """
            for (month, total) in invoiced.sorted(by: { $0.key < $1.key }) {
                text += ";   \(month)  \(amount(total))\n"
            }
            text += """
                ; Payments leave Assets:Receivable for the account they were paid into, or for
                ; \(invoicePaymentsAccount) where Coffer was not told the account (its value update holds the money).

                """
        }
        return text.isEmpty ? "" : text + "\n"
    }

    /// hledger's `payee | note` description.
    static func described(_ payee: String, _ note: String) -> String { "\(clean(payee)) | \(clean(note))" }

    /// An account-name segment: no ':' (the hierarchy separator), no ';' (a comment), no tabs or
    /// runs of spaces (the amount separator).
    static func segment(_ text: String) -> String {
        let replaced = text.replacingOccurrences(of: ":", with: "-").replacingOccurrences(of: ";", with: ",")
            .replacingOccurrences(of: "\t", with: " ")
        let collapsed = replaced.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
        return collapsed.isEmpty ? "Unnamed" : collapsed
    }

    /// Description text: no ';' (a comment), no line breaks or tabs, and no '|' (which splits
    /// hledger's payee from its note).
    static func clean(_ text: String) -> String {
        text.replacingOccurrences(of: ";", with: ",").replacingOccurrences(of: "\n", with: " ").replacingOccurrences(
            of: "\t", with: " "
        ).replacingOccurrences(of: "|", with: "/")
    }
}
