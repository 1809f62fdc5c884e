import CofferTestSupport
import Foundation
import Testing

@testable import FinanceCore

/// Schedules fall where a calendar says (month ends, leap days), and account values follow flows
/// with a typed value as the truth.
@Suite struct RecurringScheduleTests {
    func item(_ rule: RecurrenceRule, start: String, end: String? = nil, handled: String? = nil) -> RecurringItem {
        RecurringItem(
            name: "Rent", amount: Money(minorUnits: 100), entry: .spending(category: UUID()), rule: rule,
            start: date(start), end: end.map(date), handledThrough: handled.map(date))
    }

    @Test func monthlyOnTheThirtyFirstTakesEachMonthsLastDay() {
        let dates = item(.monthly(day: 31), start: "2027-01-15").occurrences(through: date("2027-05-31"))
        #expect(dates.map(\.description) == ["2027-01-31", "2027-02-28", "2027-03-31", "2027-04-30", "2027-05-31"])
        let leap = item(.monthly(day: 30), start: "2028-02-01").occurrences(through: date("2028-03-31"))
        #expect(leap.map(\.description) == ["2028-02-29", "2028-03-30"])
        let last = item(.monthly(day: 0), start: "2026-11-30").occurrences(through: date("2027-02-28"))
        #expect(last.map(\.description) == ["2026-11-30", "2026-12-31", "2027-01-31", "2027-02-28"])
    }

    @Test func aMonthlyDayBeforeTheStartBeginsNextMonth() {
        let dates = item(.monthly(day: 1), start: "2026-11-24").occurrences(through: date("2027-01-01"))
        #expect(dates.map(\.description) == ["2026-12-01", "2027-01-01"])
        let december = item(.monthly(day: 5), start: "2026-12-10").occurrences(through: date("2027-02-05"))
        #expect(december.map(\.description) == ["2027-01-05", "2027-02-05"], "the year rolls over")
    }

    @Test func weeklyBiweeklyAndYearlyCountFromTheStart() {
        #expect(
            item(.weekly, start: "2026-11-02").occurrences(through: date("2026-11-23")).map(\.description) == [
                "2026-11-02", "2026-11-09", "2026-11-16", "2026-11-23",
            ])
        #expect(
            item(.biweekly, start: "2026-11-02").occurrences(through: date("2026-12-14")).map(\.description) == [
                "2026-11-02", "2026-11-16", "2026-11-30", "2026-12-14",
            ])
        #expect(
            item(.yearly, start: "2024-02-29").occurrences(through: date("2028-03-01")).map(\.description) == [
                "2024-02-29", "2025-02-28", "2026-02-28", "2027-02-28", "2028-02-29",
            ])
    }

    @Test func pendingLeavesOutWhatWasHandledAndWhatIsPastTheEnd() {
        let rent = item(.monthly(day: 1), start: "2026-01-01", end: "2026-04-15", handled: "2026-02-01")
        #expect(rent.pending(through: date("2026-12-31")).map(\.description) == ["2026-03-01", "2026-04-01"])
        #expect(item(.weekly, start: "2026-01-01").occurrences(through: date("2999-12-31"), limit: 5).count == 5)
    }
}

@Suite struct AccountFlowTests {
    let current = UUID(), card = UUID(), source = UUID()

    func typed(_ account: UUID, _ day: String, _ amount: Int64, sequence: UInt64) -> ValueUpdate {
        ValueUpdate(accountID: account, date: date(day), amount: Money(minorUnits: amount), sequence: sequence)
    }

    func values(_ updates: [ValueUpdate], _ movements: [AccountMovement]) -> Portfolio {
        let accounts = [
            Account(id: current, name: "Current", category: "Cash", kind: .asset, created: date("2026-01-01")),
            Account(id: card, name: "Visa", category: "Credit cards", kind: .liability, created: date("2026-01-01")),
        ]
        return Portfolio(
            currency: .gbp, accounts: accounts,
            updates: AccountMovement.values(
                updates: updates, movements: movements, kinds: [current: .asset, card: .liability]))
    }

    @Test func aTypedValueIsTheTruthAndFlowsAfterItMoveIt() {
        let flows =
            AccountFlow(from: current, order: 2).movements(
                of: Money(minorUnits: 2_000), on: date("2026-11-10"), source: source)
            + AccountFlow(from: current, order: 4).movements(
                of: Money(minorUnits: 500), on: date("2026-11-20"), source: UUID())
        let portfolio = values(
            [
                typed(current, "2026-11-01", 100_000, sequence: 1),
                // Typed after the first flow (sequence 3 > order 2), dated the same day: it holds it.
                typed(current, "2026-11-10", 97_000, sequence: 3),
            ], flows)
        let account = portfolio.accounts[0]
        #expect(portfolio.value(of: account, on: date("2026-11-09")) == Money(minorUnits: 100_000))
        #expect(portfolio.value(of: account, on: date("2026-11-10")) == Money(minorUnits: 97_000))
        #expect(portfolio.value(of: account, on: date("2026-11-20")) == Money(minorUnits: 96_500))
        let derived = portfolio.updates(of: account).filter { $0.movedBy != nil }
        #expect(derived.count == 2 && derived[0].movedBy == source)
    }

    @Test func aLiabilityOwesMoreWhenSpentFromAndLessWhenPaidInto() throws {
        let spend = AccountFlow(from: card, order: 2).movements(
            of: Money(minorUnits: 5_000), on: date("2026-11-02"), source: UUID())
        let pay = AccountFlow(from: current, to: card, order: 3).movements(
            of: Money(minorUnits: 20_000), on: date("2026-11-03"), source: UUID())
        let portfolio = values(
            [typed(card, "2026-11-01", 20_000, sequence: 1), typed(current, "2026-11-01", 100_000, sequence: 1)],
            spend + pay)
        #expect(portfolio.value(of: portfolio.accounts[1], on: date("2026-11-02")) == Money(minorUnits: 25_000))
        #expect(portfolio.value(of: portfolio.accounts[1], on: date("2026-11-03")) == Money(minorUnits: 5_000))
        #expect(portfolio.value(of: portfolio.accounts[0], on: date("2026-11-03")) == Money(minorUnits: 80_000))
        #expect(
            try portfolio.totals(on: date("2026-11-03")).netWorth == Money(minorUnits: 75_000),
            "paying a card from an account moves no net worth")
    }

    @Test func aFlowOfAnAccountThatIsGoneMovesNothing() {
        let portfolio = values(
            [typed(current, "2026-11-01", 100, sequence: 1)],
            AccountFlow(from: UUID(), order: 2).movements(
                of: Money(minorUnits: 50), on: date("2026-11-02"), source: UUID()))
        #expect(portfolio.value(of: portfolio.accounts[0], on: date("2026-11-30")) == Money(minorUnits: 100))
    }
}
