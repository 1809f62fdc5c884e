import FinanceCore
import Foundation

/// The demo vault's data: shaped like the Plain Text Wealth test set 1 (seven accounts, six
/// months of monthly values), with a month of budget and two goals.
extension Ledger {
    /// Name, category, kind, starting value in pounds, monthly step.
    static let demoAccounts: [(String, String, AccountKind, Int64, Int64)] = [
        ("Barclays Current Account", "Cash", .asset, 2_350, 120),
        ("Marcus Easy Access", "Savings", .asset, 8_000, 250),
        ("Home", "Property", .asset, 325_000, 500),
        ("Vanguard Stocks & Shares ISA", "Investments", .asset, 18_400, 610),
        ("Aviva Workplace Pension", "Pensions", .asset, 41_200, 900),
        ("Coinbase Bitcoin", "Crypto", .asset, 1_900, -85),
        ("Nationwide Mortgage", "Mortgage", .liability, 182_000, -650),
    ]

    /// Adds the demo accounts, values, growth rates and budget as one change ending on `today`.
    public func addDemoData(today: CalendarDate) throws {
        var puts: [(UUID, FinanceRecord)] = []
        var accountIDs: [String: UUID] = [:]
        var sequence: UInt64 = 0
        let firstMonth = today.adding(months: -5)
        for (name, category, kind, start, step) in Self.demoAccounts {
            let account = Account(name: name, category: category, kind: kind, created: firstMonth)
            puts.append((account.id, .account(account)))
            accountIDs[name] = account.id
            for month in 0..<6 {
                sequence += 1
                let day = month == 5 ? today : firstMonth.adding(months: month)
                let amount = Money(minorUnits: (start + step * Int64(month)) * 100 + Int64(month * 37))
                let update = ValueUpdate(accountID: account.id, date: day, amount: amount, sequence: sequence)
                puts.append((update.id, .update(update)))
            }
        }
        for (category, rate) in [("Investments", 500), ("Pensions", 450), ("Savings", 375), ("Mortgage", -300)] {
            puts.append(
                (RecordIDs.next(), .categoryRate(CategoryRate(category: category, rate: GrowthRate(basisPoints: rate))))
            )
        }
        // A month of budget: salary in, the month's spending so far, two goals. Salary is paid into
        // the current account and the emergency fund is held in the easy-access savings account.
        let current = accountIDs["Barclays Current Account"], savings = accountIDs["Marcus Easy Access"]
        let salary = IncomeSource(
            name: "Salary", amount: Money(minorUnits: 320_000), frequency: .monthly, account: current)
        let emergency = SavingsGoal(name: "Emergency Fund", target: Money(minorUnits: 1_000_000), account: savings)
        let holiday = SavingsGoal(name: "Holiday")
        puts += [
            (salary.id, .incomeSource(salary)), (emergency.id, .savingsGoal(emergency)),
            (holiday.id, .savingsGoal(holiday)),
        ]
        let monthStart = BudgetMonth(containing: today).first
        let categories = Dictionary(budgetCategories.map { ($0.name, $0.id) }, uniquingKeysWith: { first, _ in first })
        func categoryID(_ name: String) throws -> UUID {
            guard let id = categories[name] else {
                throw CofferError(.noMatch, "No category \(name) for the demo.", kind: "category")
            }
            return id
        }
        func category(_ name: String) throws -> Transaction.Target { .category(try categoryID(name)) }
        var entries: [(Int64, TransactionType, Transaction.Target, String?)] = [
            (320_000, .income, .source(salary.id), nil), (125_000, .expense, try category("Rent/Mortgage"), nil),
            (6_240, .expense, try category("Groceries"), "Tesco"), (4_180, .expense, try category("Utilities"), nil),
            (2_850, .expense, try category("Dining Out"), nil), (1_099, .expense, try category("Subscriptions"), nil),
            (40_000, .savings, .goal(emergency.id), nil), (10_000, .savings, .goal(holiday.id), nil),
        ]
        if today.day > 7 { entries.append((5_320, .expense, try category("Groceries"), "Sainsbury's")) }
        for (index, entry) in entries.enumerated() {
            let day = min(today, monthStart.adding(days: index))
            let transaction = Transaction(
                amount: Money(minorUnits: entry.0), type: entry.1, target: entry.2, note: entry.3, date: day,
                sequence: UInt64(index + 1))
            puts.append((transaction.id, .transaction(transaction)))
        }
        // Rent and salary come back each month; this month's are already recorded above.
        for var item in [
            RecurringItem(
                name: "Rent", amount: Money(minorUnits: 125_000),
                entry: .spending(category: try categoryID("Rent/Mortgage")), rule: .monthly(day: 1),
                start: monthStart, from: current),
            RecurringItem(
                name: "Salary", amount: Money(minorUnits: 320_000), entry: .income(source: salary.id),
                rule: .monthly(day: 1), start: monthStart),
        ] {
            item.handledThrough = item.occurrences(through: today).last
            puts.append((item.id, .recurring(item)))
        }
        try commit("Created the demo accounts and budget", puts: puts)
    }
}
