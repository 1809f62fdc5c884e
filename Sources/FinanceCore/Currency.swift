import Foundation

/// An ISO 4217 currency: its code, how many minor-unit digits it has, and the symbol people
/// type. One currency per vault; Coffer converts nothing.
public struct Currency: Hashable, Sendable, CustomStringConvertible {
    public let code: String
    public let minorDigits: Int
    public let symbol: String

    /// The person's locale for money shown, when the front end found one in the environment
    /// (`LC_ALL`, `LC_MONETARY`, `LANG`, not C or POSIX): amounts are then shown by its
    /// conventions. Nil: each currency's own (`homeLocale`). Set once at start-up.
    nonisolated(unsafe) public static var userLocale: Locale?

    /// The person's locale for numbers typed (`LC_ALL`, `LC_NUMERIC`, `LANG`, as the C library
    /// picks `LC_NUMERIC`): where its decimal mark is a comma, `parse` reads `12,50` as twelve
    /// fifty in any currency. Set once at start-up.
    nonisolated(unsafe) public static var userNumericLocale: Locale?

    /// A locale for the code run inside `$scopedLocale.withValue(.some(locale)) { … }` only,
    /// before `userLocale`: how tests show amounts in a locale without changing the process's,
    /// which other tests running at the same time read.
    @TaskLocal public static var scopedLocale: Locale?? = nil

    /// The locale amounts are shown in, when the person has one (`userLocale`, unless scoped).
    static var personLocale: Locale? { scopedLocale ?? userLocale }

    /// The locale numbers are typed in, when the person has one (`userNumericLocale`, unless scoped).
    static var personNumericLocale: Locale? { scopedLocale ?? userNumericLocale }

    /// The symbol amounts are shown with in the display locale (Foundation's: `£`, `€`, `CHF`).
    public var displaySymbol: String { CurrencyFormatters.shared.symbol(for: self) }

    /// The locale amounts of this currency are shown in.
    public var displayLocale: Locale { Self.personLocale ?? Locale(identifier: homeLocale) }

    /// The locale whose conventions are the currency's own (`en_GB` for GBP, `de_DE` for EUR,
    /// `ja_JP` for JPY): amounts are shown as there unless the person's locale says otherwise.
    public var homeLocale: String { Self.homeLocales[code] ?? "en_GB" }

    private static let homeLocales = [
        "GBP": "en_GB", "EUR": "de_DE", "USD": "en_US", "CAD": "en_CA", "AUD": "en_AU", "NZD": "en_NZ",
        "CHF": "de_CH", "SEK": "sv_SE", "NOK": "nb_NO", "DKK": "da_DK", "PLN": "pl_PL", "CZK": "cs_CZ",
        "INR": "en_IN", "CNY": "zh_CN", "HKD": "en_HK", "SGD": "en_SG", "ZAR": "en_ZA", "BRL": "pt_BR",
        "MXN": "es_MX", "JPY": "ja_JP", "KRW": "ko_KR", "ISK": "is_IS",
    ]

    public var description: String { code }

    /// Whether most of the locales that use this currency write a decimal comma (Foundation's
    /// locale data: EUR, SEK, NOK, DKK, PLN, CZK, BRL, ISK do; GBP, USD, CHF, ZAR do not), so that
    /// `12,50` typed for it means twelve fifty.
    public var writesDecimalComma: Bool { Self.decimalCommaCurrencies.contains(code) }

    private static let decimalCommaCurrencies: Set<String> = {
        var marks: [String: (comma: Int, point: Int)] = [:]
        for identifier in Locale.availableIdentifiers {
            let locale = Locale(identifier: identifier)
            guard let code = locale.currency?.identifier, let separator = locale.decimalSeparator else { continue }
            var count = marks[code] ?? (0, 0)
            if separator == "," { count.comma += 1 } else if separator == "." { count.point += 1 }
            marks[code] = count
        }
        return Set(marks.filter { $0.value.comma > $0.value.point }.keys)
    }()

    /// Currencies Coffer knows. `symbol` is what people type (and what `parse` accepts); display
    /// uses Foundation's symbol in the display locale.
    public static let known: [Currency] = [
        Currency(code: "GBP", minorDigits: 2, symbol: "£"),
        Currency(code: "EUR", minorDigits: 2, symbol: "€"),
        Currency(code: "USD", minorDigits: 2, symbol: "$"),
        Currency(code: "CAD", minorDigits: 2, symbol: "CA$"),
        Currency(code: "AUD", minorDigits: 2, symbol: "A$"),
        Currency(code: "NZD", minorDigits: 2, symbol: "NZ$"),
        Currency(code: "CHF", minorDigits: 2, symbol: "CHF"),
        Currency(code: "SEK", minorDigits: 2, symbol: "kr"),
        Currency(code: "NOK", minorDigits: 2, symbol: "kr"),
        Currency(code: "DKK", minorDigits: 2, symbol: "kr"),
        Currency(code: "PLN", minorDigits: 2, symbol: "zł"),
        Currency(code: "CZK", minorDigits: 2, symbol: "Kč"),
        Currency(code: "INR", minorDigits: 2, symbol: "₹"),
        Currency(code: "CNY", minorDigits: 2, symbol: "CN¥"),
        Currency(code: "HKD", minorDigits: 2, symbol: "HK$"),
        Currency(code: "SGD", minorDigits: 2, symbol: "S$"),
        Currency(code: "ZAR", minorDigits: 2, symbol: "R"),
        Currency(code: "BRL", minorDigits: 2, symbol: "R$"),
        Currency(code: "MXN", minorDigits: 2, symbol: "MX$"),
        Currency(code: "JPY", minorDigits: 0, symbol: "¥"),
        Currency(code: "KRW", minorDigits: 0, symbol: "₩"),
        Currency(code: "ISK", minorDigits: 0, symbol: "kr"),
    ]

    public static let gbp = known[0]

    public static func named(_ code: String) throws -> Currency {
        let upper = code.uppercased()
        guard let currency = known.first(where: { $0.code == upper }) else {
            throw FinanceError(
                .unknownCurrency,
                "'\(code)' is not a currency Coffer knows; use an ISO code such as \(known.prefix(4).map(\.code).joined(separator: ", "))."
            )
        }
        return currency
    }

    /// The currency of `locale`, else GBP.
    public static func `default`(for locale: Locale = .current) -> Currency {
        locale.currency.flatMap { try? named($0.identifier) } ?? .gbp
    }

    var unitsPerMajor: Int64 {
        (0..<minorDigits).reduce(1) { value, _ in value * 10 }
    }
}
