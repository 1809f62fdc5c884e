import CofferTestSupport
import Foundation
import Testing

/// What a new vault shows before it has a month of history, and a vault used for one part only.
@Suite struct FirstRunTests {
    let sandbox = Sandbox()
    let environment = ["COFFER_PASSPHRASE": "first run passphrase", "COFFER_TODAY": "2026-11-24"]

    @discardableResult
    func coffer(_ arguments: String...) throws -> RunResult {
        let result = try sandbox.run(arguments, environment: environment)
        #expect(result.status == 0, "\(arguments): \(result.stderr)")
        return result
    }

    /// A value recorded today is not a rise "since last month".
    @Test func aNewVaultHasNoMonthToCompareWith() throws {
        try coffer("init", "--kdf", "interactive")
        try coffer("account", "add", "Home", "--category", "Property", "--value", "210820")
        let overview = try coffer("overview").stdout
        #expect(overview.contains("no month to compare with yet"), "\(overview)")
        #expect(!overview.contains("since last month"), "\(overview)")
        let account = try coffer("account", "show", "Home").stdout
        #expect(account.contains("No month to compare with yet"), "\(account)")
        #expect(!account.contains("since last month"))

        // A month later there is one.
        try coffer("update", "Home", "200000", "--date", "2026-10-01")
        #expect(try coffer("overview").stdout.contains("since last month"))
    }

    /// A vault used for its budget alone: the overview still shows the budget line.
    @Test func aBudgetOnlyVaultShowsItsBudget() throws {
        try coffer("init", "--kdf", "interactive")
        try coffer("spend", "12.50", "Groceries")
        let overview = try coffer("overview").stdout
        #expect(overview.contains("No accounts yet"))
        #expect(overview.contains("Budget: "), "\(overview)")
        #expect(overview.contains("remaining in November 2026"), "\(overview)")
    }
}
