import CofferTestSupport
import Foundation
import Testing

@testable import FinanceCore

func dollars(_ value: Int64) -> Money { Money(minorUnits: value * 100) }

/// The Budget design's January 2025 screens, built from entered data.
@Suite struct DesignScreensJanuary2025 {
    static func budget() -> Budget {
        var categories = BudgetCategory.defaults()
        let needs = { (name: String) in categories.first { $0.name == name }!.id }
        let dining = categories.first { $0.name == "Dining Out" }!.id
        let shopping = categories.first { $0.name == "Shopping" }!.id
        categories.append(BudgetCategory(name: "Rent", type: .needs, sortOrder: -1, isDefault: false))
        let rent = categories.last!.id
        let salary = IncomeSource(name: "Salary", amount: dollars(5000), frequency: .monthly)
        let freelance = IncomeSource(name: "Freelance", amount: dollars(850), frequency: .variable)
        let emergency = SavingsGoal(name: "Emergency Fund"), vacation = SavingsGoal(name: "Vacation")
        let retirement = SavingsGoal(name: "Retirement", target: dollars(10_000))
        var transactions: [Transaction] = []
        var sequence: UInt64 = 0
        func add(_ amount: Money, _ type: TransactionType, _ target: Transaction.Target, _ day: String) {
            sequence += 1
            transactions.append(
                Transaction(amount: amount, type: type, target: target, date: date(day), sequence: sequence))
        }
        add(dollars(5000), .income, .source(salary.id), "2025-01-01")
        add(dollars(800), .expense, .category(rent), "2025-01-01")
        for (index, cents) in [3000, 3000, 3000, 3000, 3000, 3000, 3000, 3500].enumerated() {  // 8 groceries, $245
            add(
                Money(minorUnits: Int64(cents)), .expense, .category(needs("Groceries")),
                String(format: "2025-01-%02d", 3 + index * 3))
        }
        for amount: Int64 in [50, 55, 50] {
            add(dollars(amount), .expense, .category(needs("Utilities")), "2025-01-10")
        }  // 3, $155
        add(dollars(400), .expense, .category(dining), "2025-01-12")
        add(dollars(300), .expense, .category(shopping), "2025-01-20")
        add(dollars(400), .savings, .goal(emergency.id), "2025-01-05")
        add(dollars(150), .savings, .goal(vacation.id), "2025-01-06")
        add(dollars(100), .savings, .goal(retirement.id), "2025-01-07")
        // Earlier months' contributions, for the cumulative totals.
        for month in 1...11 {
            add(dollars(400), .savings, .goal(emergency.id), String(format: "2024-%02d-05", month))
            add(dollars(100), .savings, .goal(retirement.id), String(format: "2024-%02d-07", month))
        }
        for month in 8...12 { add(dollars(150), .savings, .goal(vacation.id), String(format: "2024-%02d-06", month)) }
        add(dollars(1200), .savings, .goal(retirement.id), "2023-12-31")  // retirement: 1,200 + 11 × 100 + 100 = 2,400
        // A December 2024 expense must not count in January.
        add(dollars(999), .expense, .category(rent), "2024-12-31")
        return Budget(
            sources: [salary, freelance], categories: categories, goals: [emergency, vacation, retirement],
            transactions: transactions)
    }

    @Test func expensesTab() throws {
        let summary = try Self.budget().summary(for: try BudgetMonth(parsing: "2025-01"))
        #expect(summary.income == dollars(5000))
        #expect(summary.spent == dollars(2550))
        #expect(summary.remaining == dollars(2450))
        #expect(summary.expectedIncome == dollars(5850))  // Salary 5,000 monthly + Freelance 850 variable
        #expect(summary.month.title == "January 2025")
    }

    @Test func needsWantsAndSavingsTabs() throws {
        let summary = try Self.budget().summary(for: try BudgetMonth(parsing: "2025-01"))
        #expect(summary.needs == dollars(1200))
        #expect(summary.wants == dollars(700))
        #expect(summary.savings == dollars(650))
        func line(_ name: String) -> (Money, Int)? {
            summary.categories.first { $0.category.name == name }.map { ($0.total, $0.count) }
        }
        #expect(line("Rent")! == (dollars(800), 1))
        #expect(line("Groceries")! == (dollars(245), 8))
        #expect(line("Utilities")! == (dollars(155), 3))
        let goals = Dictionary(uniqueKeysWithValues: summary.goals.map { ($0.goal.name, ($0.thisMonth, $0.total)) })
        #expect(goals["Emergency Fund"]! == (dollars(400), dollars(4800)))
        #expect(goals["Vacation"]! == (dollars(150), dollars(900)))
        #expect(goals["Retirement"]! == (dollars(100), dollars(2400)))
    }

    @Test func goalsProjectTheirCompletion() throws {
        let summary = try Self.budget().summary(for: try BudgetMonth(parsing: "2025-01"))
        let retirement = summary.goals.first { $0.goal.name == "Retirement" }!
        // 2,400 over 14 months (Dec 2023 – Jan 2025) = 171.42/month; 7,600 to go → 45 months.
        #expect(retirement.projectedCompletion == date("2028-10-31"))
        #expect(
            summary.goals.first { $0.goal.name == "Vacation" }!.projectedCompletion == nil, "no target, no projection")
    }
}

@Suite struct BiweeklyIncome {
    func paydays(_ anchor: String, _ month: String) throws -> [String] {
        IncomeSource(name: "Pay", amount: dollars(1000), frequency: .biweekly(anchor: date(anchor)))
            .paydays(in: try BudgetMonth(parsing: month)).map(\.description)
    }

    @Test func monthsWithTwoAndThreePaydays() throws {
        #expect(try paydays("2025-01-03", "2025-01") == ["2025-01-03", "2025-01-17", "2025-01-31"])
        #expect(try paydays("2025-01-03", "2025-02") == ["2025-02-14", "2025-02-28"])
        #expect(
            try paydays("2025-01-03", "2024-12") == ["2024-12-06", "2024-12-20"],
            "months before the anchor follow the same rhythm")
        let source = IncomeSource(name: "Pay", amount: dollars(1000), frequency: .biweekly(anchor: date("2025-01-03")))
        #expect(try source.expected(in: try BudgetMonth(parsing: "2025-01")) == dollars(3000))
        #expect(try source.expected(in: try BudgetMonth(parsing: "2025-02")) == dollars(2000))
    }

    @Test func monthBoundariesAndLeapYears() throws {
        #expect(
            try paydays("2024-02-01", "2024-02") == ["2024-02-01", "2024-02-15", "2024-02-29"],
            "29 February 2024 is a payday")
        #expect(try paydays("2024-02-29", "2024-03") == ["2024-03-14", "2024-03-28"])
        #expect(
            try paydays("2025-12-19", "2026-01") == ["2026-01-02", "2026-01-16", "2026-01-30"], "across a year boundary"
        )
        #expect(
            try paydays("2026-01-31", "2026-01") == ["2026-01-03", "2026-01-17", "2026-01-31"],
            "the anchor on the month's last day")
    }
}

@Suite struct CategoryRules {
    @Test func deletingACustomCategoryMovesItsTransactionsToOther() throws {
        var categories = BudgetCategory.defaults()
        let pets = BudgetCategory(name: "Pet Supplies", type: .wants, sortOrder: 9, isDefault: false)
        categories.append(pets)
        let transactions = (1...2).map {
            Transaction(
                amount: dollars($0), type: .expense, target: .category(pets.id), date: date("2025-01-0\($0)"),
                sequence: UInt64($0))
        }
        let budget = Budget(sources: [], categories: categories, goals: [], transactions: transactions)
        let (other, isNew, moved) = try budget.deletion(of: pets)
        #expect(isNew && other.name == "Other" && other.type == .wants && other.isDefault)
        #expect(moved.count == 2 && moved.allSatisfy { $0.target == .category(other.id) })
    }

    @Test func defaultsHideButCannotBeDeleted() throws {
        let budget = Budget(sources: [], categories: BudgetCategory.defaults(), goals: [], transactions: [])
        #expect(throws: FinanceError.self) { try budget.deletion(of: budget.categories[0]) }
    }

    @Test func hiddenCategoriesStillCountInMonthsWhereTheyWereUsed() throws {
        var categories = BudgetCategory.defaults()
        let index = categories.firstIndex { $0.name == "Hobbies" }!
        categories[index].isHidden = true
        let hobbies = categories[index]
        let spend = Transaction(
            amount: dollars(60), type: .expense, target: .category(hobbies.id), date: date("2025-01-10"), sequence: 1)
        let budget = Budget(sources: [], categories: categories, goals: [], transactions: [spend])
        let january = try budget.summary(for: try BudgetMonth(parsing: "2025-01"))
        #expect(january.wants == dollars(60))
        #expect(january.categories.contains { $0.category.name == "Hobbies" && $0.total == dollars(60) })
        let february = try budget.summary(for: try BudgetMonth(parsing: "2025-02"))
        #expect(!february.categories.contains { $0.category.name == "Hobbies" }, "hidden and unused: not listed")
    }

    @Test func defaultListsMatchTheDesign() {
        let defaults = BudgetCategory.defaults()
        #expect(defaults.count == 18)
        #expect(
            defaults.filter { $0.type == .needs }.map(\.name) == [
                "Rent/Mortgage", "Groceries", "Utilities", "Insurance", "Transport", "Healthcare",
            ])
        #expect(defaults.allSatisfy { $0.isDefault })
    }
}
