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

    /// `--version` names the C libraries too: a flawed liblzma or SQLite shows at a glance.
    @Test func theVersionNamesTheLibraries() throws {
        let lines = try coffer("--version").stdout.split(separator: "\n").map(String.init)
        #expect(lines.first?.split(separator: ".").count == 3, "\(lines)")
        let libraries = try #require(lines.dropFirst().first)
        #expect(libraries.hasPrefix("libsodium 1."), "\(libraries)")
        #expect(libraries.contains(", SQLite 3."))
        #expect(libraries.contains(", liblzma 5."))
    }

    /// An overdrawn account: a negative value reaches `update` and `account add --value` as an
    /// amount, not as an unknown option; crossing zero is asked about (--yes without a terminal).
    @Test func negativeValuesAreAmounts() throws {
        try coffer("init", "--kdf", "interactive")
        try coffer("account", "add", "Current", "--category", "Cash", "--value", "-50")
        try coffer("update", "Current", "-120.50", "--note", "-card-")
        let crossing = try sandbox.run(["update", "Current", "30"], environment: environment)
        #expect(crossing.status == 64 && crossing.stderr.contains("the other sign"), "\(crossing.stderr)")
        try coffer("update", "Current", "30", "--yes")
        let history = try coffer("account", "show", "Current", "--json").stdout
        for value in ["-50.00", "-120.50", "30.00"] { #expect(history.contains("\"\(value)\""), "\(history)") }
    }

    /// A value recorded today is not a rise "since last month".
    @Test func aNewVaultHasNoMonthToCompareWith() throws {
        let created = try coffer("init", "--kdf", "interactive")
        #expect(!created.stdout.contains("coffer account add"), "advice is for stderr at a terminal: \(created.stdout)")
        try coffer("account", "add", "Home", "--category", "Property", "--value", "210820")
        // JSON says so too: the key is there, and null.
        let overviewJSON = try coffer("overview", "--json").stdout
        #expect(overviewJSON.contains("\"changeSinceLastMonth\" : null"), "\(overviewJSON)")
        let accountJSON = try coffer("account", "show", "Home", "--json").stdout
        #expect(accountJSON.contains("\"changeSinceLastMonth\" : null") && accountJSON.contains("\"closed\" : null"))
        let listJSON = try coffer("account", "list", "--json").stdout
        #expect(listJSON.contains("\"growth\" : null"), "\(listJSON)")
        try coffer("client", "add", "Acme")
        #expect(try coffer("client", "show", "Acme", "--json").stdout.contains("\"address\" : null"))
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

    /// A EUR vault takes amounts as people there write them.
    @Test func aEuroVaultTakesADecimalComma() throws {
        try coffer("init", "--kdf", "interactive", "--currency", "EUR")
        try coffer("spend", "12,50", "Groceries")
        try coffer("account", "add", "Girokonto", "--category", "Cash", "--value", "1.234,56")
        let budget = try coffer("budget", "--json").stdout
        #expect(budget.contains(#""spent" : "12.50""#), "\(budget)")
        #expect(try coffer("account", "show", "Girokonto", "--json").stdout.contains(#""value" : "1234.56""#))
        let ambiguous = try sandbox.run(["spend", "1,234", "Groceries"], environment: environment)
        #expect(ambiguous.status == 64)
        #expect(ambiguous.stderr.contains("could be a thousands comma or a decimal comma"), "\(ambiguous.stderr)")
    }

    /// LC_NUMERIC alone says how numbers are typed (a decimal comma in a GBP vault), as the C
    /// library reads it (LC_ALL before it, LANG after); LC_MONETARY says how amounts are shown,
    /// and no longer how they are typed.
    @Test func theNumericLocaleReadsADecimalComma() throws {
        try coffer("init", "--kdf", "interactive")
        func spend(_ amount: String, _ locale: [String: String]) throws -> RunResult {
            try sandbox.run(["spend", amount, "Groceries"], environment: environment.merging(locale) { $1 })
        }
        let numeric = try spend("12,50", ["LC_NUMERIC": "de_DE.UTF-8"])
        #expect(numeric.status == 0 && numeric.stdout.contains("£12.50"), "shown as GBP is: \(numeric)")
        #expect(try spend("1,50", ["LC_ALL": "en_GB.UTF-8", "LC_NUMERIC": "de_DE.UTF-8"]).status == 64)
        #expect(try spend("1,50", ["LC_NUMERIC": "en_GB.UTF-8", "LANG": "de_DE.UTF-8"]).status == 64)
        #expect(try spend("1,50", ["LC_MONETARY": "de_DE.UTF-8"]).status == 64)
        #expect(try spend("2,50", ["LANG": "de_DE.UTF-8"]).status == 0)
        #expect(try coffer("budget", "--json").stdout.contains(#""spent" : "15.00""#))
        // Read with a decimal comma, a refusal names decimal commas.
        let refused = try spend("12,5,0", ["LC_NUMERIC": "de_DE.UTF-8"])
        #expect(refused.stderr.contains("at most one decimal comma: '12,5,0' has 2."), "\(refused.stderr)")
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

/// Colour: `--color=auto|always|never` first, then NO_COLOR, then CLICOLOR_FORCE, then whether
/// stdout is a terminal. Here stdout is a file, so `auto` alone never colours.
@Suite struct ColourTests {
    let sandbox = Sandbox()
    let environment = ["COFFER_PASSPHRASE": "colour passphrase", "COFFER_TODAY": "2026-11-24"]
    let escape = "\u{1B}["

    func overview(_ arguments: [String] = [], _ extra: [String: String] = [:]) throws -> RunResult {
        try sandbox.run(["overview"] + arguments, environment: environment.merging(extra) { $1 })
    }

    @Test func theFlagThenTheEnvironmentDecide() throws {
        #expect(try sandbox.run(["init", "--kdf", "interactive"], environment: environment).status == 0)
        #expect(
            try sandbox.run(
                ["account", "add", "Home", "--category", "Property", "--value", "1000"], environment: environment
            ).status == 0)
        #expect(!(try overview().stdout.contains(escape)), "auto, into a file: no colour")
        #expect(try overview(["--color=always"]).stdout.contains(escape))
        #expect(try overview(["--color", "always"], ["NO_COLOR": "1"]).stdout.contains(escape), "the flag first")
        #expect(try overview([], ["CLICOLOR_FORCE": "1"]).stdout.contains(escape))
        #expect(!(try overview([], ["CLICOLOR_FORCE": "0"]).stdout.contains(escape)))
        #expect(!(try overview([], ["CLICOLOR_FORCE": "1", "NO_COLOR": "1"]).stdout.contains(escape)))
        #expect(!(try overview(["--color=never"], ["CLICOLOR_FORCE": "1"]).stdout.contains(escape)))
        let wrong = try overview(["--color=sometimes"])
        #expect(wrong.status == 64)
        #expect(wrong.stderr.contains("--color takes auto, always or never"))
        #expect(!(try overview(["--color=always", "--json"]).stdout.contains(escape)), "JSON never carries colour")
    }
}
