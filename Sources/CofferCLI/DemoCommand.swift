import ArgumentParser
import CofferKit
import FinanceCore
import Foundation
import VaultCrypto
import VaultStore

/// `coffer demo`: a vault shaped like the Plain Text Wealth test set 1, then its overview.
struct Demo: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Create a demo vault (7 accounts, six months of monthly values) and show its overview.",
        discussion: """
            Without --vault or COFFER_VAULT it goes to demo.coffer beside the default vault, never the \
            default vault itself. The passphrase comes from the usual sources; without one it is 'demo', \
            which is printed. Not for real money.
            """)
    @OptionGroup var options: VaultOptions

    static let demoPassphrase = "demo"

    /// Name, category, kind, starting value in pounds, monthly step.
    static let accounts: [(String, String, AccountKind, Int64, Int64)] = [
        ("Barclays Current Account", "Cash", .asset, 2_350, 120),
        ("Marcus Easy Access", "Savings", .asset, 8_000, 250),
        ("Home", "Property", .asset, 325_000, 500),
        ("Vanguard Stocks & Shares ISA", "Investments", .asset, 18_400, 610),
        ("Aviva Workplace Pension", "Pensions", .asset, 41_200, 900),
        ("Coinbase Bitcoin", "Crypto", .asset, 1_900, -85),
        ("Nationwide Mortgage", "Mortgage", .liability, 182_000, -650),
    ]

    /// `--vault` or `COFFER_VAULT` when given; otherwise `demo.coffer` beside the default vault,
    /// so a demo never becomes the vault every later command opens.
    var demoURL: URL {
        let explicit = !(options.vault ?? "").isEmpty || !(options.environment["COFFER_VAULT"] ?? "").isEmpty
        return explicit ? options.vaultURL : options.vaultURL.deletingLastPathComponent().appendingPathComponent("demo.coffer")
    }

    func run() throws {
        let url = demoURL
        let today = try CommandContext.today()
        let passphrase: Passphrase
        let announcedPassphrase: Bool
        if options.passphraseFile != nil || options.passphraseCommand != nil || options.environment["COFFER_PASSPHRASE"] != nil {
            passphrase = try options.currentPassphrase(prompt: "Passphrase: ")
            announcedPassphrase = false
        } else {
            passphrase = try Passphrase(Self.demoPassphrase)
            announcedPassphrase = true
        }
        if FileManager.default.fileExists(atPath: url.path) {
            throw CLIError(.invalidInput, "A vault already exists at \(url.path); nothing was changed.",
                           hint: "Pick a new path for the demo: coffer demo --vault /tmp/demo.coffer")
        }
        let vault = try Vault.create(at: url, passphrase: passphrase, parameters: KDFProfile.interactive.parameters, guard: options.rollbackGuard)
        let ledger = try Ledger(vault: vault)
        try ledger.writeWithoutHistory([(UUID(), .settings(VaultSettings(currency: .gbp)))]
            + BudgetCategory.defaults().map { ($0.id, .budgetCategory($0)) })

        var puts: [(UUID, FinanceRecord)] = []
        var sequence: UInt64 = 0
        let firstMonth = today.adding(months: -5)
        for (name, category, kind, start, step) in Self.accounts {
            let account = Account(name: name, category: category, kind: kind, created: firstMonth)
            puts.append((account.id, .account(account)))
            for month in 0..<6 {
                sequence += 1
                let day = month == 5 ? today : firstMonth.adding(months: month)
                let update = ValueUpdate(accountID: account.id, date: day, amount: Money(minorUnits: (start + step * Int64(month)) * 100 + Int64(month * 37)),
                                         sequence: sequence)
                puts.append((update.id, .update(update)))
            }
        }
        for (category, rate) in [("Investments", 500), ("Pensions", 450), ("Savings", 375), ("Mortgage", -300)] {
            puts.append((UUID(), .categoryRate(CategoryRate(category: category, rate: GrowthRate(basisPoints: rate)))))
        }
        // A month of budget: salary in, the month's spending so far, two goals.
        let salary = IncomeSource(name: "Salary", amount: Money(minorUnits: 320_000), frequency: .monthly)
        let emergency = SavingsGoal(name: "Emergency Fund", target: Money(minorUnits: 1_000_000))
        let holiday = SavingsGoal(name: "Holiday")
        puts += [(salary.id, .incomeSource(salary)), (emergency.id, .savingsGoal(emergency)), (holiday.id, .savingsGoal(holiday))]
        let monthStart = BudgetMonth(containing: today).first
        let categories = Dictionary(uniqueKeysWithValues: ledger.budgetCategories.map { ($0.name, $0.id) })
        var entries: [(Int64, TransactionType, Transaction.Target, String?)] = [
            (320_000, .income, .source(salary.id), nil), (125_000, .expense, .category(categories["Rent/Mortgage"]!), nil),
            (6_240, .expense, .category(categories["Groceries"]!), "Tesco"), (4_180, .expense, .category(categories["Utilities"]!), nil),
            (2_850, .expense, .category(categories["Dining Out"]!), nil), (1_099, .expense, .category(categories["Subscriptions"]!), nil),
            (40_000, .savings, .goal(emergency.id), nil), (10_000, .savings, .goal(holiday.id), nil),
        ]
        if today.day > 7 { entries.append((5_320, .expense, .category(categories["Groceries"]!), "Sainsbury's")) }
        for (index, entry) in entries.enumerated() {
            let day = min(today, monthStart.adding(days: index))
            let transaction = Transaction(amount: Money(minorUnits: entry.0), type: entry.1, target: entry.2, note: entry.3, date: day,
                                          sequence: UInt64(index + 1))
            puts.append((transaction.id, .transaction(transaction)))
        }
        try ledger.commit("Created the demo accounts and budget", puts: puts)
        Output.line("Created a demo vault at \(url.path) (Argon2id interactive\(announcedPassphrase ? ", passphrase '\(Self.demoPassphrase)'" : "")).")
        Output.line()
        try Overview.parse(["--vault", url.path]).render(ledger: ledger, date: today, json: false)
        Output.line("Try: COFFER_VAULT=\(url.path) coffer assets")
        if url != options.vaultURL { Output.line("(Your own vault, \(options.vaultURL.path), was not touched.)") }
    }
}
