import CofferTestSupport
import Foundation
import Testing

@testable import FinanceCore

func pounds(_ value: Int64) -> Money { Money(minorUnits: value * 100) }

/// Builds accounts and updates with a running entry sequence, as the vault would.
struct Builder {
    var accounts: [Account] = []
    var updates: [ValueUpdate] = []
    var rates: [String: GrowthRate] = [:]

    @discardableResult
    mutating func account(
        _ name: String, _ category: String, _ kind: AccountKind = .asset, rate: GrowthRate? = nil,
        closed: String? = nil
    ) -> Account {
        let account = Account(
            name: name, category: category, kind: kind, growthRate: rate, created: date("2024-01-01"),
            closed: closed.map(date))
        accounts.append(account)
        return account
    }

    mutating func update(_ account: Account, _ day: String, _ amount: Money) {
        updates.append(
            ValueUpdate(accountID: account.id, date: date(day), amount: amount, sequence: UInt64(updates.count + 1)))
    }

    var portfolio: Portfolio { Portfolio(currency: .gbp, accounts: accounts, updates: updates, categoryRates: rates) }
}

@Suite struct PlainTextWealthTestSet3 {
    /// Two accounts, monthly updates in £100 steps through 2025: A on the 1st from £1,000,
    /// B on the 15th from £500.
    static func portfolio() -> Portfolio {
        var builder = Builder()
        let a = builder.account("Account A", "Savings")
        let b = builder.account("Account B", "Investments")
        for month in 0..<12 {
            builder.update(a, String(format: "2025-%02d-01", month + 1), pounds(1000 + 100 * Int64(month)))
            builder.update(b, String(format: "2025-%02d-15", month + 1), pounds(500 + 100 * Int64(month)))
        }
        return builder.portfolio
    }

    @Test func exactTotalsAtEveryMonthEnd() throws {
        let portfolio = Self.portfolio()
        for month in 0..<12 {
            let monthEnd = date(String(format: "2025-%02d-01", month + 1)).endOfMonth
            #expect(try portfolio.totals(on: monthEnd).netWorth == pounds(1500 + 200 * Int64(month)), "\(monthEnd)")
        }
        let series = try NetWorth(portfolio: portfolio, invoices: [], includeReceivables: false).monthEndSeries(
            through: date("2025-12-31"))
        #expect(series.map(\.netWorth) == (0..<12).map { pounds(1500 + 200 * Int64($0)) })
        #expect(series.first?.date == date("2025-01-31"))
    }

    @Test func historyHasOnePointPerUpdateDate() throws {
        let history = try NetWorth(portfolio: Self.portfolio(), invoices: [], includeReceivables: false).history(
            through: date("2025-12-31"))
        #expect(history.count == 24)
        // On the 1st only A has moved (B still at last month's value); on the 15th B catches up.
        #expect(history[0] == .init(date: date("2025-01-01"), netWorth: pounds(1000)))
        #expect(history[1] == .init(date: date("2025-01-15"), netWorth: pounds(1500)))
        #expect(history[2] == .init(date: date("2025-02-01"), netWorth: pounds(1600)))
        #expect(history[23] == .init(date: date("2025-12-15"), netWorth: pounds(2100 + 1600)))
        #expect(
            try NetWorth(portfolio: Self.portfolio(), invoices: [], includeReceivables: false).history(
                through: date("2025-01-10")
            ).count == 1)
    }
}

@Suite struct NetWorthRules {
    @Test func asOfDatesBeforeOnAndAfterUpdates() throws {
        var builder = Builder()
        let cash = builder.account("Current account", "Cash")
        builder.update(cash, "2026-03-10", pounds(200))
        builder.update(cash, "2026-04-10", pounds(350))
        let portfolio = builder.portfolio
        #expect(try portfolio.totals(on: date("2026-03-09")).netWorth == .zero)
        #expect(try portfolio.totals(on: date("2026-03-10")).netWorth == pounds(200))
        #expect(try portfolio.totals(on: date("2026-04-09")).netWorth == pounds(200))
        #expect(try portfolio.totals(on: date("2026-04-10")).netWorth == pounds(350))
        #expect(try portfolio.totals(on: date("2030-01-01")).netWorth == pounds(350))
        #expect(
            try NetWorth(portfolio: portfolio, invoices: [], includeReceivables: false).changeSinceLastMonth(
                on: date("2026-04-10")) == pounds(150))
    }

    @Test func sameDayTiesGoToTheLatestEntered() throws {
        var builder = Builder()
        let cash = builder.account("Cash", "Cash")
        builder.update(cash, "2026-05-01", pounds(10))
        builder.update(cash, "2026-05-01", pounds(30))
        builder.update(cash, "2026-04-01", pounds(99))  // entered later, but dated earlier
        #expect(builder.portfolio.value(of: cash, on: date("2026-05-01")) == pounds(30))
        #expect(builder.portfolio.value(of: cash, on: date("2026-04-15")) == pounds(99))
    }

    @Test func liabilitiesSubtract() throws {
        var builder = Builder()
        let house = builder.account("House", "Property")
        let mortgage = builder.account("Mortgage", "Mortgage", .liability)
        builder.update(house, "2026-01-01", pounds(300_000))
        builder.update(mortgage, "2026-01-01", pounds(180_000))
        let totals = try builder.portfolio.totals(on: date("2026-02-01"))
        #expect(totals == .init(assets: pounds(300_000), liabilities: pounds(180_000), netWorth: pounds(120_000)))
    }

    @Test func closedAccountsLeaveTotalsButStayInHistory() throws {
        var builder = Builder()
        let old = builder.account("Old ISA", "Savings", closed: "2026-03-01")
        let cash = builder.account("Cash", "Cash")
        builder.update(old, "2026-01-01", pounds(500))
        builder.update(cash, "2026-02-01", pounds(100))
        let portfolio = builder.portfolio
        #expect(try portfolio.totals(on: date("2026-02-28")).netWorth == pounds(600))
        #expect(try portfolio.totals(on: date("2026-03-01")).netWorth == pounds(100))
        let history = try NetWorth(portfolio: portfolio, invoices: [], includeReceivables: false).history(
            through: date("2026-06-01"))
        #expect(history.map(\.netWorth) == [pounds(500), pounds(600), pounds(100)])
        #expect(try portfolio.distribution(on: date("2026-06-01")).map(\.name) == ["Cash"])
    }
}

@Suite struct DistributionAndProjection {
    @Test func sharesSumToExactlyOneHundredPercent() throws {
        #expect(Portfolio.largestRemainderShares([1, 1, 1], scale: 1000) == [334, 333, 333])
        #expect(Portfolio.largestRemainderShares([0, 0], scale: 1000) == [0, 0])
        #expect(Portfolio.largestRemainderShares([5, -3], scale: 1000) == [1000, 0])
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<200 {
            let values = (0..<Int.random(in: 1...12, using: &generator)).map { _ in
                Int64.random(in: 0...10_000_000, using: &generator)
            }
            let shares = Portfolio.largestRemainderShares(values, scale: 1000)
            #expect(values.allSatisfy { $0 == 0 } ? shares.allSatisfy { $0 == 0 } : shares.reduce(0, +) == 1000)
        }
    }

    @Test func distributionByCategoryLargestFirst() throws {
        var builder = Builder()
        let a = builder.account("ISA", "Investments"), b = builder.account("Pension", "Pensions")
        let c = builder.account("GIA", "investments"), d = builder.account("Card", "Credit cards", .liability)
        builder.update(a, "2026-01-01", pounds(2000))
        builder.update(b, "2026-01-01", pounds(3000))
        builder.update(c, "2026-01-01", pounds(1000))
        builder.update(d, "2026-01-01", pounds(400))
        let distribution = try builder.portfolio.distribution(on: date("2026-01-02"))
        #expect(distribution.map(\.name) == ["Investments", "Pensions", "Credit cards"])
        #expect(distribution.map(\.total) == [pounds(3000), pounds(3000), pounds(400)])
        #expect(distribution.map(\.sharePerMille) == [500, 500, 1000])
        #expect(distribution[0].accountCount == 2)
    }

    @Test func projectionsMatchHandComputedCompounding() throws {
        // £10,000 at 5%/year compounded monthly: 10000 × (1 + 0.05/12)^(12n).
        let base = pounds(10_000)
        let five = GrowthRate(basisPoints: 500)
        #expect(try Portfolio.compound(base, rate: five, months: 12) == Money(minorUnits: 1_051_162))
        #expect(try Portfolio.compound(base, rate: five, months: 60) == Money(minorUnits: 1_283_359))
        #expect(try Portfolio.compound(base, rate: five, months: 120) == Money(minorUnits: 1_647_009))
        #expect(try Portfolio.compound(base, rate: .zero, months: 120) == base)

        var builder = Builder()
        let isa = builder.account("ISA", "Investments")  // category rate 3.75%
        let savings = builder.account("Savings", "Savings", rate: GrowthRate(basisPoints: 500))
        let loan = builder.account("Car loan", "Loans", .liability, rate: GrowthRate(basisPoints: -200))
        let cash = builder.account("Cash", "Cash")  // no rate: 0%
        builder.rates = ["investments": try GrowthRate(parsing: "3.75%")]
        builder.update(isa, "2026-01-01", pounds(200_000))
        builder.update(savings, "2026-01-01", pounds(10_000))
        builder.update(loan, "2026-01-01", pounds(25_000))
        builder.update(cash, "2026-01-01", pounds(1_000))
        let portfolio = builder.portfolio
        // One year: ISA at its category's 3.75%, savings at its own 5% (£10,511.62), the loan
        // shrinking at -2% (£24,504.56), cash flat.
        #expect(
            try portfolio.projectedNetWorth(years: 1, from: date("2026-01-01"))
                == Money(
                    minorUnits: try Portfolio.compound(pounds(200_000), rate: GrowthRate(basisPoints: 375), months: 12)
                        .minorUnits
                        + 1_051_162 - 2_450_456 + 100_000))
        #expect(
            try Portfolio.compound(pounds(200_000), rate: GrowthRate(basisPoints: 375), months: 60)
                == Money(minorUnits: 24_117_553))
        #expect(portfolio.rate(for: cash) == .zero)
        #expect(portfolio.rate(for: isa).description == "3.75%")
    }

    @Test func growthRateParsing() throws {
        #expect(try GrowthRate(parsing: "4.5%").basisPoints == 450)
        #expect(try GrowthRate(parsing: "-1").basisPoints == -100)
        #expect(try GrowthRate(parsing: "0.25%").description == "0.25%")
        #expect(try GrowthRate(parsing: "4.5").description == "4.5%")
        for bad in ["", "%", "abc", "4.555%", "101%", "1e2", "4,5%"] {
            #expect(throws: FinanceError(.invalidRate, "")) { try GrowthRate(parsing: bad) }
        }
    }
}

/// Every percentage is tenths of a percent rounded half away from zero, and keeps its sign even
/// below one percent.
@Suite struct PerMilleTests {
    @Test func roundsHalfAwayFromZeroAndKeepsTheSign() {
        let money = { (minorUnits: Int64) in Money(minorUnits: minorUnits) }
        #expect(PerMille.of(money(2150), in: money(30850)) == 70, "6.969…% is 7.0%")
        #expect(PerMille.of(money(-5), in: money(1000)) == -5)
        #expect(PerMille.of(money(1), in: money(2000)) == 1, "0.05% rounds away from zero")
        #expect(PerMille.of(money(1), in: money(-2000)) == 1, "a share of the size of a negative whole")
        #expect(PerMille.of(money(1), in: .zero) == nil)
        #expect(PerMille.text(-5) == "-0.5%" && PerMille.text(453) == "45.3%" && PerMille.text(0) == "0.0%")
    }
}
