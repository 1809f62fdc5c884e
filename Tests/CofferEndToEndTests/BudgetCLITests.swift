import CofferTestSupport
import FinanceCore
import Foundation
import GRDB
import Testing
import VaultCrypto
import VaultStore

/// The Budget design through the real binary, with COFFER_TODAY fixed at 31 January 2025.
@Suite struct BudgetCLITests {
    let sandbox = Sandbox()
    var environment: [String: String] { ["COFFER_PASSPHRASE": "old passphrase", "COFFER_TODAY": "2025-01-31"] }

    @discardableResult
    func coffer(_ arguments: String...) throws -> RunResult {
        let result = try sandbox.run(arguments, environment: environment)
        return result
    }

    func json(_ arguments: String...) throws -> [String: Any] {
        let result = try sandbox.run(arguments + ["--json"], environment: environment)
        #expect(result.status == 0, "\(arguments): \(result.stderr)")
        return try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as! [String: Any]
    }

    @discardableResult
    func ok(_ arguments: String...) throws -> RunResult {
        let result = try sandbox.run(arguments, environment: environment)
        #expect(result.status == 0, "\(arguments): \(result.stderr)")
        return result
    }

    /// The design's January 2025: income 5,000; Rent 800, 8 groceries 245, 3 utilities 155;
    /// 700 of wants; goals 400 / 150 / 100 this month with earlier contributions.
    func enterJanuary() throws {
        _ = try sandbox.initVault()
        try ok("income", "add", "Salary", "5000", "--frequency", "monthly")
        try ok("income", "add", "Freelance", "850", "--frequency", "variable")
        try ok("category", "add", "Rent", "--type", "needs")
        try ok("earn", "5000", "Salary", "--date", "2025-01-01")
        try ok("spend", "800", "Rent", "--date", "2025-01-01")
        for day in ["03", "06", "09", "12", "15", "18", "21"] {
            try ok("spend", "30", "Groceries", "--date", "2025-01-\(day)")
        }
        try ok("spend", "35", "groc", "--note", "Whole Foods", "--date", "2025-01-30")
        for amount in ["50", "55", "50"] { try ok("spend", amount, "Utilities", "--date", "2025-01-10") }
        try ok("spend", "400", "Dining", "--date", "2025-01-12")
        try ok("spend", "300", "Shopping", "--date", "2025-01-20")
        try ok("goal", "add", "Emergency Fund")
        try ok("goal", "add", "Vacation")
        try ok("goal", "add", "Retirement", "--target", "10000")
        for (goal, amount, earlier, months) in [
            ("Emergency", "400", "400", 11), ("Vacation", "150", "150", 5), ("Retirement", "100", "100", 23),
        ] {
            try ok("save", amount, goal, "--date", "2025-01-05")
            for month in 1...months {
                let date = CalendarDate(
                    dayNumber: try CalendarDate(parsing: "2025-01-05").adding(months: -month).dayNumber)
                try ok("save", earlier, goal, "--date", date.description)
            }
        }
    }

    @Test func januaryScreensMatchTheDesign() throws {
        try enterJanuary()
        let budget = try json("budget")
        #expect(budget["month"] as? String == "2025-01")
        #expect(budget["income"] as? String == "5000.00")
        #expect(budget["expectedIncome"] as? String == "5850.00")
        #expect(budget["spent"] as? String == "2550.00")
        #expect(budget["remaining"] as? String == "2450.00")
        #expect(budget["needs"] as? String == "1200.00")
        #expect(budget["wants"] as? String == "700.00")
        #expect(budget["savings"] as? String == "650.00")
        let categories = budget["categories"] as! [[String: Any]]
        func line(_ name: String) -> (String, Int)? {
            categories.first { $0["name"] as? String == name }.map { ($0["total"] as! String, $0["count"] as! Int) }
        }
        #expect(line("Rent")! == ("800.00", 1))
        #expect(line("Groceries")! == ("245.00", 8))
        #expect(line("Utilities")! == ("155.00", 3))
        let goals = Dictionary(
            uniqueKeysWithValues: (budget["goals"] as! [[String: Any]]).map {
                ($0["name"] as! String, ($0["thisMonth"] as! String, $0["total"] as! String))
            })
        #expect(goals["Emergency Fund"]! == ("400.00", "4800.00"))
        #expect(goals["Vacation"]! == ("150.00", "900.00"))
        #expect(goals["Retirement"]! == ("100.00", "2400.00"))

        let human = try coffer("budget")
        #expect(human.stdout.contains("January 2025"))
        #expect(human.stdout.contains("£2,450.00 remaining this month"))
        #expect(human.stdout.contains("Yesterday"))
        #expect(human.stdout.contains("Whole Foods"))
        let needs = try coffer("budget", "needs")
        #expect(needs.stdout.contains("Needs  £1,200.00 spent"))
        #expect(needs.stdout.contains("8 transactions"))
        let savings = try coffer("budget", "savings")
        #expect(savings.stdout.contains("This month") && savings.stdout.contains("Total"), "\(savings.stdout)")
        #expect(savings.stdout.contains("£4,800.00"))
        let overview = try json("overview")
        #expect((overview["budget"] as? [String: String])?["remaining"] == "2450.00")
        #expect(try coffer("income", "list").stdout.contains("Total this month  £5,850.00"))
    }

    @Test func emptyStatesSpeakTheDesignsWords() throws {
        _ = try sandbox.initVault()
        #expect(try coffer("budget").stdout.contains("Set up your income"))
        try ok("income", "add", "Salary", "2000", "--frequency", "biweekly", "--anchor", "2025-01-03")
        #expect(try coffer("budget").stdout.contains("No expenses this month"))
        #expect(try json("budget")["expectedIncome"] as? String == "6000.00", "three paydays in January 2025")
        #expect(try coffer("budget", "savings").stdout.contains("Start building your future"))
    }

    @Test func categoryRulesThroughTheCLI() throws {
        _ = try sandbox.initVault()
        try ok("category", "add", "Pet Supplies", "--type", "wants")
        try ok("spend", "12", "Pet", "--date", "2025-01-10")
        try ok("spend", "8", "Pet", "--date", "2025-01-11")
        let refused = try coffer("category", "delete", "Groceries", "--yes")
        #expect(refused.status == 64)
        #expect(refused.stderr.contains("can be hidden, not deleted"))
        let deleted = try coffer("category", "delete", "Pet Supplies", "--yes")
        #expect(deleted.status == 0, "\(deleted.stderr)")
        #expect(deleted.stdout.contains("2 transactions moved to Other (Wants)"))
        let categories = try json("budget")["categories"] as! [[String: Any]]
        #expect(
            categories.contains {
                $0["name"] as? String == "Other" && $0["type"] as? String == "wants" && $0["count"] as? Int == 2
            })
        try ok("undo")
        #expect(
            (try json("budget")["categories"] as! [[String: Any]]).contains {
                $0["name"] as? String == "Pet Supplies" && $0["count"] as? Int == 2
            })
        // redo makes the deletion again; undo takes it back once more; a second redo has nothing.
        #expect(try ok("redo").stdout.contains("Redone: "))
        #expect(
            !(try json("budget")["categories"] as! [[String: Any]]).contains { $0["name"] as? String == "Pet Supplies" }
        )
        try ok("undo")
        try ok("spend", "3", "Pet", "--date", "2025-01-12")
        #expect(try ok("redo").stdout.contains("Nothing to redo."), "a new change forgets what could be redone")
        try ok("undo")

        try ok("spend", "25", "Hobbies", "--date", "2025-01-15")
        try ok("category", "hide", "Hobbies")
        #expect(try coffer("spend", "5", "Hobbies").status == 64, "a hidden category takes no new spending")
        let january = try json("budget")
        #expect(january["wants"] as? String == "45.00", "hidden, but its January spending still counts")
        #expect(
            (january["categories"] as! [[String: Any]]).contains {
                $0["name"] as? String == "Hobbies" && $0["hidden"] as? Bool == true
            })
        try ok("category", "move", "Healthcare", "1")
        let listed = try json("category", "list")["categories"] as! [[String: Any]]
        #expect(listed.first { $0["type"] as? String == "needs" }?["name"] as? String == "Healthcare")
    }

    @Test func invalidInputExits64AndChangesNothing() throws {
        try enterJanuary()
        let before = try withRawDatabase(sandbox.vault) { db in
            try Row.fetchAll(db, sql: "SELECT * FROM page ORDER BY locator").map { $0.description }
        }
        let attempts: [[String]] = [
            ["spend", "", "Groceries"], ["spend", "abc", "Groceries"], ["spend", "-5", "Groceries"],
            ["spend", "0", "Groceries"],
            ["spend", "5", "Nowhere"], ["spend", "5", "Re"],  // Rent/Mortgage, Rent... ambiguous "Re"
            ["spend", "5", "Groceries", "--date", "2025-13-01"], ["earn", "5", "Nobody"], ["save", "5", "Moon"],
            ["income", "add", "Salary", "1", "--frequency", "monthly"],
            ["income", "add", "X", "1", "--frequency", "weekly"],
            ["income", "add", " ", "1", "--frequency", "monthly"],
            ["income", "add", "Y", "1", "--frequency", "monthly", "--anchor", "2025-01-01"],
            ["category", "add", "Rent", "--type", "needs"], ["category", "add", "Z", "--type", "luxuries"],
            ["goal", "add", "Vacation"], ["goal", "remove", "Vacation"], ["budget", "--month", "2025-1"],
            ["transaction", "delete", "zzzz", "--yes"], ["transaction", "edit", "zz"],
        ]
        for arguments in attempts {
            let result = try sandbox.run(arguments, environment: environment)
            #expect(result.status == 64, "\(arguments): \(result.status) \(result.stderr)")
        }
        let after = try withRawDatabase(sandbox.vault) { db in
            try Row.fetchAll(db, sql: "SELECT * FROM page ORDER BY locator").map { $0.description }
        }
        #expect(before == after, "refused commands leave every record as it was")
    }

    @Test func transactionsCanBeEditedDeletedAndUndone() throws {
        _ = try sandbox.initVault()
        try ok("spend", "12.50", "Groceries", "--date", "2025-01-30")
        let items = try json("transaction", "list")["transactions"] as! [[String: Any]]
        let id = items[0]["id"] as! String
        try ok("transaction", "edit", id, "--amount", "15", "--category", "Dining")
        #expect(try json("budget")["wants"] as? String == "15.00")
        try ok("transaction", "delete", id, "--yes")
        #expect(try json("budget")["spent"] as? String == "0.00")
        try ok("undo")
        try ok("undo")
        #expect(try json("budget")["needs"] as? String == "12.50", "two undos: back to the original groceries spend")
    }
}
