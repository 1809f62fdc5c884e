import Foundation
import Testing

@testable import FinanceCore

@Suite struct MoneyParsingTests {
    static let valid: [(String, Int64)] = [
        ("1234.56", 123456), ("1,234.56", 123456), ("£1,234.5", 123450), ("-20", -2000), ("0", 0),
        ("0.01", 1), ("  42  ", 4200), ("+7.5", 750), ("£-3", -300), ("-£3", -300), ("GBP 12", 1200),
        ("12.00 GBP", 1200), ("gbp 1", 100), ("1 234", 123_400), ("1\u{202F}234.50 £", 123_450), ("1’234", 123_400),
        ("1,000,000", 100_000_000), ("999", 99900), ("\u{2212}5", -500),
        ("1000000000000", 100_000_000_000_000), ("12,345,678.9", 1_234_567_890),
    ]

    static let invalid: [(String, String)] = [
        ("", "Enter an amount"), ("20k", "not shorthand"), ("1.5m", "not shorthand"), ("1e5", "is not a number"),
        ("NaN", "is not a number"), ("inf", "is not a number"), ("12,5O", "is not a number"),
        ("12,5", "Use a point for decimals"),
        ("1.234", "at most 2 decimal places"), ("1,23,456", "misplaced"), ("1.2.3", "at most one decimal point"),
        ("12.", "ends with '.'"), (".5", "before the decimal point"), ("£", "is not a number"),
        ("$12", "is not a number"),
        ("--5", "is not a number"), ("1 2345", "is not a number"), ("12.3,4", "comma after the decimal point"),
        ("10000000000000", "too large"), ("0x1F", "is not a number"), ("١٢٣", "is not a number"),
    ]

    @Test(arguments: valid)
    func parsesWhatPeopleType(input: String, minorUnits: Int64) throws {
        #expect(try Currency.gbp.parse(input) == Money(minorUnits: minorUnits))
    }

    @Test(arguments: invalid)
    func refusesWithAMessageThatQuotesTheInput(input: String, expected: String) {
        do {
            let parsed = try Currency.gbp.parse(input)
            Issue.record("'\(input)' parsed as \(parsed)")
        } catch let error as FinanceError {
            #expect(error.code == .invalidAmount)
            let message = error.errorDescription ?? ""
            #expect(message.contains(expected), "\(message)")
            if !input.trimmingCharacters(in: .whitespaces).isEmpty {
                #expect(message.contains("'\(input)'") || message.contains(input), "\(message)")
            }
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test func tableIsLargeEnough() { #expect(Self.valid.count + Self.invalid.count >= 25) }

    @Test func currenciesWithoutMinorUnits() throws {
        let yen = try Currency.named("jpy")
        #expect(try yen.parse("¥1,500") == Money(minorUnits: 1500))
        #expect(throws: FinanceError(.invalidAmount, "")) { try yen.parse("1.5") }
        // A comma that groups nothing, in a currency without decimals, is refused (it crashed once).
        #expect(throws: FinanceError(.invalidAmount, "")) { try yen.parse("1,5") }
        #expect(throws: FinanceError(.invalidAmount, "")) { try yen.parseStatementAmount("15,5", decimalComma: false) }
        #expect(yen.decimalString(Money(minorUnits: 1500)) == "1500")
        #expect(throws: FinanceError(.unknownCurrency, "")) { try Currency.named("XYZ") }
    }

    @Test func formatting() {
        let gbp = Currency.gbp
        #expect(gbp.decimalString(Money(minorUnits: 245000)) == "2450.00")
        #expect(gbp.decimalString(Money(minorUnits: -5)) == "-0.05")
        #expect(gbp.format(Money(minorUnits: 123456789)) == "£1,234,567.89")
        #expect(gbp.format(Money(minorUnits: -2000)) == "-£20.00")
        #expect(gbp.format(.zero) == "£0.00")
    }

    @Test func arithmeticIsChecked() throws {
        #expect(try Money(minorUnits: 5).adding(Money(minorUnits: 7)) == Money(minorUnits: 12))
        #expect(throws: FinanceError(.overflow, "")) { try Money(minorUnits: .max).adding(Money(minorUnits: 1)) }
        #expect(throws: FinanceError(.overflow, "")) { try Money(minorUnits: .min).subtracting(Money(minorUnits: 1)) }
        #expect(try Money.sum([Money(minorUnits: 1), Money(minorUnits: 2), Money(minorUnits: -3)]) == .zero)
    }
}

@Suite struct CalendarDateTests {
    @Test func parsesISODatesAndRefusesOthers() throws {
        #expect(try CalendarDate(parsing: "2024-02-29").description == "2024-02-29")
        for bad in ["2023-02-29", "2026-13-01", "2026-1-5", "05/01/2026", "yesterday", "", "2026-04-31", "２０２６-01-01"] {
            #expect(throws: FinanceError(.invalidDate, "")) { try CalendarDate(parsing: bad) }
        }
    }

    @Test func dayNumbersRoundTrip() throws {
        #expect(try CalendarDate(parsing: "1970-01-01").dayNumber == 0)
        #expect(try CalendarDate(parsing: "2000-03-01").dayNumber == 11017)
        for number in stride(from: -1000, to: 30000, by: 37) {
            #expect(CalendarDate(dayNumber: number).dayNumber == number)
        }
    }

    @Test func monthArithmeticClampsToTheMonthEnd() throws {
        let endOfJanuary = try CalendarDate(parsing: "2024-01-31")
        #expect(endOfJanuary.adding(months: 1).description == "2024-02-29")
        #expect(endOfJanuary.adding(months: 13).description == "2025-02-28")
        #expect(endOfJanuary.adding(months: -2).description == "2023-11-30")
        #expect(try CalendarDate(parsing: "2026-03-15").endOfMonth.description == "2026-03-31")
        // Past the calendar's first or last year, arithmetic stops at its edge (it used to trap:
        // the overview of a day in January of year 1 asks for the month before).
        let first = try CalendarDate(parsing: "0001-01-20")
        #expect(first.adding(months: -1).description == "0001-01-20")
        #expect(first.adding(days: -400).description == "0001-01-01")
        #expect(try CalendarDate(parsing: "9999-12-31").adding(days: 1).description == "9999-12-31")
        #expect(try CalendarDate(parsing: "9999-11-30").adding(months: 3).description == "9999-12-30")
        #expect(
            CalendarDate(dayNumber: .min).description == "0001-01-01"
                && CalendarDate(dayNumber: .max).description == "9999-12-31")
        #expect(
            CalendarDate.days(
                from: try CalendarDate(parsing: "2026-01-01"), to: try CalendarDate(parsing: "2026-03-01")) == 59)
    }
}

/// The plain-decimal and canonical-date fast paths give exactly what the general parsers give.
@Suite struct FastPathTests {
    @Test func plainDecimalsAgreeWithTheGeneralParser() throws {
        let gbp = Currency.gbp, jpy = try Currency.named("JPY")
        for (text, minor) in [
            ("0", 0), ("-0", 0), ("12", 1200), ("12.5", 1250), ("12.50", 1250), ("-12.05", -1205), ("007", 700),
            ("1000000000000", 100_000_000_000_000),
        ] as [(String, Int64)] {
            #expect(try gbp.parse(text) == Money(minorUnits: minor), "\(text)")
        }
        #expect(try jpy.parse("1250") == Money(minorUnits: 1250))
        for text in ["1.", ".5", "-", "1.005", "10000000000000", "1..2", "1.2.3", "12a", "", " 1", "1,000.5"] {
            #expect(
                (try? gbp.parse(text)) == (try? gbp.parse(" " + text + " ")),
                "\(text): the fast path must not change the answer")
        }
        #expect(throws: FinanceError.self) { try jpy.parse("12.5") }
        #expect(throws: FinanceError.self) { try gbp.parse("1.005") }
        #expect(throws: FinanceError.self) { try gbp.parse("10000000000000") }
        // Digits enough to overflow Int64 while being read (a crash found by the bad-input table).
        for text in ["99999999999999999999", "-99999999999999999999", String(repeating: "9", count: 400) + ".99"] {
            #expect(throws: FinanceError.self, "\(text.prefix(24))") { try gbp.parse(text) }
        }
    }

    /// A decimal comma where the currency (or the locale) is written with one; never where it is
    /// not, and never when the comma could be either mark.
    @Test func aDecimalCommaWhereTheCurrencyWritesOne() throws {
        let eur = try Currency.named("EUR"), sek = try Currency.named("SEK"), gbp = Currency.gbp
        #expect(eur.writesDecimalComma && sek.writesDecimalComma)
        let usd = try Currency.named("USD")
        #expect(!gbp.writesDecimalComma && !usd.writesDecimalComma)
        #expect(try eur.parse("12,50") == Money(minorUnits: 1250))
        #expect(try eur.parse("12,5") == Money(minorUnits: 1250))
        #expect(try eur.parse("1.234,56") == Money(minorUnits: 123_456))
        #expect(try eur.parse("€1.234.567,89") == Money(minorUnits: 123_456_789))
        #expect(try eur.parse("-3,10") == Money(minorUnits: -310))
        #expect(try eur.parse("1,234.56") == Money(minorUnits: 123_456), "a point last: the point is the decimal mark")
        #expect(try sek.parse("99,90") == Money(minorUnits: 9990))
        #expect(throws: FinanceError.self) { try eur.parse("1,234") }  // a thousands comma, or a decimal one?
        #expect(throws: FinanceError.self) { try eur.parse("12,505") }
        #expect(throws: FinanceError.self) { try eur.parse("1.23,45") }  // points must group thousands
        #expect(throws: FinanceError.self) { try gbp.parse("12,50") }
        #expect(try gbp.parse("12,50", decimalComma: true) == Money(minorUnits: 1250), "a comma locale")
        do {
            _ = try eur.parse("1,234")
        } catch let error as FinanceError {
            #expect(error.errorDescription?.contains("write 1234 or 1.234,00") == true, "\(error)")
        }
    }

    /// Read with a decimal comma, a refused amount is explained in the marks it was typed with:
    /// `12,5,0` has two decimal commas, not "2 decimal points".
    @Test(arguments: [
        ("12,5,0", "at most one decimal comma: '12,5,0' has 2."), ("12,", "Enter digits after the decimal comma"),
        ("12,", "ends with ','."), (",5", "before the decimal comma: write 0,5 rather than ,5."),
        ("1.23,45", "such as 1.234,56: the thousands separators in '1.23,45' are misplaced."),
    ])
    func aDecimalCommaIsNamedAsTyped(input: String, expected: String) throws {
        do {
            let parsed = try Currency.named("EUR").parse(input)
            Issue.record("'\(input)' parsed as \(parsed)")
        } catch let error as FinanceError {
            #expect(error.errorDescription?.contains(expected) == true, "\(error.errorDescription ?? "")")
            #expect(error.errorDescription?.contains("decimal point") == false, "\(error.errorDescription ?? "")")
        }
    }

    @Test func anImpossibleDateSaysWhatIsWrongWithIt() {
        func message(_ text: String) -> String {
            do {
                _ = try CalendarDate(parsing: text)
                return ""
            } catch { return (error as? FinanceError)?.errorDescription ?? "" }
        }
        #expect(message("2026-13-01").contains("there is no month 13"), "\(message("2026-13-01"))")
        #expect(message("2026-00-10").contains("there is no month 0"))
        #expect(message("2026-02-30").contains("February 2026 has no day 30"))
    }

    @Test func canonicalDatesAgreeWithTheGeneralParser() throws {
        #expect(try CalendarDate(parsing: "2024-02-29").description == "2024-02-29")
        for text in ["2025-02-29", "2025-13-01", "2025-00-10", "2025-1-01", "20250101", "2025/01/01", "2025-01-0a"] {
            #expect(throws: FinanceError.self, "\(text)") { try CalendarDate(parsing: text) }
        }
    }
}
