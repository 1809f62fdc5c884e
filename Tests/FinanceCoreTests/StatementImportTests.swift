import CofferTestSupport
import FinanceCore
import Foundation
import Testing

@Suite struct StatementImportTests {

    @Test(arguments: [
        ("DD/MM/YYYY", "03/04/2025", "2025-04-03"), ("MM/DD/YYYY", "04/03/2025", "2025-04-03"),
        ("D/M/YY", "3/4/25", "2025-04-03"),
        ("DD.MM.YYYY", "03.04.2025", "2025-04-03"), ("YYYYMMDD", "20250403", "2025-04-03"),
        ("D MMM YYYY", "3 Apr 2025", "2025-04-03"),
        ("DD-MMM-YY", "03-APR-99", "1999-04-03"), ("YYYY-MM-DD", "2025-04-03 14:02:11", "2025-04-03"),
        ("YYYY-MM-DD", "2025-04-03T14:02:11Z", "2025-04-03"), ("D MMM YYYY", "3 September 2025", "2025-09-03"),
        ("%d/%m/%Y", "03/04/2025", "2025-04-03"), ("%m/%d/%y", "04/03/25", "2025-04-03"),
        ("%Y-%m-%d", "2025-04-03", "2025-04-03"),
        ("%e %b %Y", "3 Apr 2025", "2025-04-03"), ("%-d.%-m.%Y", "3.4.2025", "2025-04-03"),
    ])
    func datePatterns(pattern: String, text: String, expected: String) throws {
        #expect(try DatePattern(pattern).date(from: text)?.description == expected)
    }

    @Test func datePatternsRefuseWhatTheyDoNotDescribe() throws {
        #expect(try DatePattern("DD/MM/YYYY").date(from: "31/02/2025") == nil, "not a real date")
        #expect(try DatePattern("DD/MM/YYYY").date(from: "2025-02-03") == nil)
        #expect(try DatePattern("DD/MM/YYYY").date(from: "03/04/2025x") == nil)
        #expect(try DatePattern("MM/DD/YYYY").date(from: "13/01/2025") == nil)
        #expect(DatePattern.iso.date(from: "") == nil)
        #expect(throws: FinanceError.self) { try DatePattern("DD/MM") }
        #expect(throws: FinanceError.self) { try DatePattern("DD/MM/YYYY/YY") }
        #expect(throws: FinanceError.self) { try DatePattern("DD/MM/QQQQ") }
    }

    @Test(arguments: [
        ("-1,234.56", false, -123_456), ("(12.50)", false, -1_250), ("12.50-", false, -1_250), ("£-3", false, -300),
        ("\u{2212}5", false, -500), ("1'234.50", false, 123_450), ("1.234,56", true, 123_456), ("-12,5", true, -1_250),
        ("1 234,56", true, 123_456), ("-1.050", true, -105_000), ("12.345.678,9", true, 1_234_567_890),
        ("1\u{202F}234,56", true, 123_456), ("+7", false, 700), ("0.00", false, 0),
    ])
    func statementAmounts(text: String, decimalComma: Bool, minorUnits: Int64) throws {
        #expect(
            try Currency.gbp.parseStatementAmount(text, decimalComma: decimalComma) == Money(minorUnits: minorUnits))
    }

    @Test func statementAmountsKeepTheStrictRules() {
        for text in ["abc", "1.005", "20k", "1e5", "12,50", "", "1 2 3.4.5"] {
            #expect(throws: FinanceError.self, "\(text)") {
                try Currency.gbp.parseStatementAmount(text, decimalComma: false)
            }
        }
        // With a decimal comma, a point only groups thousands: 1.5 and 1.2345 are not amounts.
        for text in ["1,234.56", "1.5", "1.2345", "1.234.56"] {
            #expect(throws: FinanceError.self, "\(text)") {
                try Currency.gbp.parseStatementAmount(text, decimalComma: true)
            }
        }
    }

    @Test func rulesMatchSubstringsAndWildcardsAndRespectDirection() {
        let groceries = UUID(), salary = UUID(), goal = UUID()
        let set = CategoryRuleSet(
            name: "main",
            rules: [
                .init(pattern: "tesco", target: .category(groceries)),
                .init(pattern: "AMZN*MKTP*", target: .category(groceries)),
                .init(pattern: "acme", target: .source(salary)),
                .init(pattern: "transfer to isa", target: .goal(goal)),
            ])
        #expect(set.target(for: "TESCO STORES 1234", amount: Money(minorUnits: -100)) == .category(groceries))
        #expect(
            set.target(for: "Tesco  refund", amount: Money(minorUnits: 100)) == nil,
            "a category rule places only money going out")
        #expect(set.target(for: "AMZN Mktp UK*2X4", amount: Money(minorUnits: -1)) == .category(groceries))
        #expect(
            set.target(for: "PAYPAL *AMZN MKTP", amount: Money(minorUnits: -1)) == nil,
            "a wildcard pattern matches the whole description")
        #expect(set.target(for: "ACME LTD PAYROLL", amount: Money(minorUnits: 250_000)) == .source(salary))
        #expect(set.target(for: "ACME LTD PAYROLL", amount: Money(minorUnits: -5)) == nil)
        #expect(
            set.target(for: "Transfer  to   ISA", amount: Money(minorUnits: -5)) == .goal(goal),
            "white space runs count as one")
        #expect(CategoryRuleSet.Rule(pattern: "a?c", target: .goal(goal)).matches("ABC"))
        #expect(!CategoryRuleSet.Rule(pattern: "a?c", target: .goal(goal)).matches("AC"))
        #expect(
            CategoryRuleSet.Rule(pattern: "*a*b*c*", target: .goal(goal)).matches(
                String(repeating: "a", count: 5000) + "bc"))
    }

    func row(_ line: Int, _ day: String, _ amount: Int64, _ text: String, hash: UInt8) -> StatementLayout.Row {
        StatementLayout.Row(
            line: line, date: date(day), amount: Money(minorUnits: amount), description: text, rowHash: [hash])
    }

    @Test func identicalLinesAreDistinctButOverlapsAreNot() {
        let groceries = BudgetCategory(name: "Groceries", type: .needs, sortOrder: 0, isDefault: true)
        let rules = CategoryRuleSet(name: "r", rules: [.init(pattern: "shop", target: .category(groceries.id))])
        let first = TransactionImportPlan(
            rows: [
                row(2, "2025-02-02", -300, "COFFEE", hash: 1), row(3, "2025-02-02", -300, "COFFEE", hash: 2),
                row(4, "2025-02-03", -900, "SHOP", hash: 3),
            ],
            account: "Joint", existing: [], rules: rules, categories: [groceries], firstSequence: 10)
        #expect(first.added.count == 3)
        #expect(first.added.map(\.transaction.sequence) == [10, 11, 12])
        #expect(first.added.map(\.transaction.target) == [.uncategorised, .uncategorised, .category(groceries.id)])
        #expect(first.uncategorisedCount == 2)
        let stored = first.added.map(\.transaction)

        // An overlapping export with different row digests: matched by date, amount and description.
        let second = TransactionImportPlan(
            rows: [
                row(2, "2025-02-02", -300, "coffee", hash: 9), row(3, "2025-02-02", -300, "COFFEE", hash: 8),
                row(4, "2025-02-02", -300, "COFFEE", hash: 7), row(5, "2025-02-04", -100, "NEW", hash: 6),
            ],
            account: "JOINT", existing: stored, rules: nil, categories: [], firstSequence: 13)
        #expect(second.duplicates.map(\.line) == [2, 3])
        #expect(second.added.map(\.line) == [4, 5])

        // Another account's statement shares nothing with this one.
        let other = TransactionImportPlan(
            rows: [row(2, "2025-02-02", -300, "COFFEE", hash: 1)], account: "Other", existing: stored,
            rules: nil, categories: [], firstSequence: 1)
        #expect(other.added.count == 1)

        // A stored transaction edited since still matches its own row by digest.
        var edited = stored
        edited[2].amount = Money(minorUnits: 950)
        let again = TransactionImportPlan(
            rows: [row(4, "2025-02-03", -900, "SHOP", hash: 3)], account: "Joint", existing: edited,
            rules: nil, categories: [], firstSequence: 1)
        #expect(again.added.isEmpty)

        let zero = TransactionImportPlan(
            rows: [row(2, "2025-02-02", 0, "INFO", hash: 5)], account: "", existing: [], rules: nil, categories: [],
            firstSequence: 1)
        #expect(zero.added.isEmpty && zero.zeroAmountLines == [2])
    }

    @Test func balancesKeepTheLastValueOfEachDay() {
        let account = UUID()
        // Newest first, as most banks export.
        let plan = UpdateImportPlan(
            rows: [
                row(2, "2025-01-31", 194_480, "", hash: 1), row(3, "2025-01-15", 200_000, "", hash: 2),
                row(4, "2025-01-15", 0, "", hash: 3),
            ],
            accountID: account,
            existing: [
                ValueUpdate(
                    accountID: account, date: date("2025-01-31"), amount: Money(minorUnits: 194_480), sequence: 1)
            ],
            firstSequence: 2)
        #expect(plan.added.map(\.line) == [3])
        #expect(plan.added.first?.update.amount == Money(minorUnits: 200_000))
        #expect(plan.duplicates.map(\.line) == [2])
        #expect(plan.superseded.map(\.line) == [4])
    }

    @Test func linesNameTheirLineAndColumn() throws {
        let layout = StatementLayout(
            date: 0, amounts: .signed(2), description: 1, titles: ["Date", "Description", "Amount"])
        #expect(throws: FinanceError.self) {
            try layout.row(["2025-01-01", "x", "abc"], line: 14, rowHash: [], currency: .gbp)
        }
        do {
            _ = try layout.row(["2025-01-01", "x", "abc"], line: 14, rowHash: [], currency: .gbp)
        } catch let error as FinanceError {
            #expect(error.errorDescription == "line 14: 'abc' is not an amount (column 3 \"Amount\")")
        }
        let split = StatementLayout(date: 0, amounts: .debitCredit(debit: 1, credit: 2), description: nil, negate: true)
        #expect(
            try split.row(["2025-01-01", "5.00", ""], line: 2, rowHash: [], currency: .gbp).amount
                == Money(minorUnits: 500), "negated")
        #expect(throws: FinanceError.self) {
            try split.row(["2025-01-01", "5.00", "1.00"], line: 2, rowHash: [], currency: .gbp)
        }
    }

    @Test func uncategorisedSpendingCountsInSpentButNoType() throws {
        let groceries = BudgetCategory(name: "Groceries", type: .needs, sortOrder: 0, isDefault: true)
        let budget = Budget(
            sources: [], categories: [groceries], goals: [],
            transactions: [
                Transaction(
                    amount: Money(minorUnits: 1_000), type: .expense, target: .category(groceries.id),
                    date: date("2025-01-02"), sequence: 1),
                Transaction(
                    amount: Money(minorUnits: 250), type: .expense, target: .uncategorised, date: date("2025-01-03"),
                    sequence: 2),
                Transaction(
                    amount: Money(minorUnits: 5_000), type: .income, target: .uncategorised, date: date("2025-01-04"),
                    sequence: 3),
            ])
        let summary = try budget.summary(for: BudgetMonth(parsing: "2025-01"))
        #expect(summary.spent == Money(minorUnits: 1_250))
        #expect(summary.needs == Money(minorUnits: 1_000))
        #expect(summary.uncategorised == Money(minorUnits: 250) && summary.uncategorisedCount == 1)
        #expect(summary.income == Money(minorUnits: 5_000))
        #expect(summary.remaining == Money(minorUnits: 3_750))
    }
}
