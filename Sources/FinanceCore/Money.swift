import Foundation

/// An exact amount in a vault's currency, as integer minor units (pence, cents). Never a
/// floating-point number; arithmetic is checked and reports overflow instead of wrapping.
public struct Money: Hashable, Comparable, Sendable {
    public let minorUnits: Int64

    public init(minorUnits: Int64) { self.minorUnits = minorUnits }

    public static let zero = Money(minorUnits: 0)

    public static func < (lhs: Money, rhs: Money) -> Bool { lhs.minorUnits < rhs.minorUnits }

    public func adding(_ other: Money) throws -> Money {
        let (sum, overflow) = minorUnits.addingReportingOverflow(other.minorUnits)
        guard !overflow else { throw FinanceError(.overflow, "The total is too large to represent.") }
        return Money(minorUnits: sum)
    }

    public func subtracting(_ other: Money) throws -> Money {
        let (difference, overflow) = minorUnits.subtractingReportingOverflow(other.minorUnits)
        guard !overflow else { throw FinanceError(.overflow, "The difference is too large to represent.") }
        return Money(minorUnits: difference)
    }

    public static func sum<S: Sequence>(_ amounts: S) throws -> Money where S.Element == Money {
        try amounts.reduce(.zero) { try $0.adding($1) }
    }

    public var negated: Money { Money(minorUnits: -minorUnits) }
    public var isNegative: Bool { minorUnits < 0 }
}

/// Largest amount accepted from input: a trillion in major units leaves ample headroom for
/// sums and projections inside 64-bit minor units.
let maximumInputMajorUnits: Int64 = 1_000_000_000_000

extension Currency {
    /// Parses what a person types: `1234.56`, `1,234.56`, `£1,234.5`, `-20`, `GBP 12`, `-£3`;
    /// and, where the currency is written with a decimal comma (`writesDecimalComma`) or the
    /// locale is (`decimalComma`), `12,50` and `1.234,56` too. Refuses shorthand (`20k`),
    /// exponents, `NaN`, misplaced separators, a comma that could be either mark (`1,234` in
    /// EUR) and more decimals than the currency has, each with a message that quotes the input.
    public func parse(_ input: String, decimalComma: Bool? = nil) throws -> Money {
        // Fast path for the plain form exports are made of: [-]digits[.fraction].
        if let parsed = input.utf8.withContiguousStorageIfAvailable({ plainDecimal($0) }), let money = parsed {
            return money
        }
        let quoted = "'\(input)'"
        var text = Substring(input.trimmingCharacters(in: .whitespaces))
        guard !text.isEmpty else { throw FinanceError(.invalidAmount, "Enter an amount, such as 1234.56.") }

        var negative = false
        func takeSign() {
            if let first = text.first, first == "-" || first == "+" || first == "\u{2212}" {
                negative = first != "+"
                text = text.dropFirst()
            }
        }
        let spaces: Set<Character> = [" ", "\u{A0}", "\u{202F}"]
        let markers = [code, displaySymbol, symbol]
        func takeCurrency() {
            for marker in markers where text.uppercased().hasPrefix(marker.uppercased()) {
                text = text.dropFirst(marker.count).drop { spaces.contains($0) }
                return
            }
        }
        takeSign()
        takeCurrency()
        if !negative { takeSign() }
        // As amounts are shown in many locales: `12,50 €`, `1.234,56 EUR` (no-break spaces too).
        for marker in markers where text.uppercased().hasSuffix(marker.uppercased()) {
            text = text.dropLast(marker.count)
            while let last = text.last, spaces.contains(last) { text = text.dropLast() }
            break
        }
        // Digits grouped in threes as locales show them (1 234,56 · 1’234.50): the marks go.
        let groupMarks: Set<Character> = [" ", "\u{A0}", "\u{202F}", "’", "'"]
        let characters = Array(text)
        var ungrouped = ""
        for (index, character) in characters.enumerated() {
            let group = characters.dropFirst(index + 1).prefix(4)
            if groupMarks.contains(character), index > 0, characters[index - 1].isNumber,
                group.prefix(3).count == 3, group.prefix(3).allSatisfy(\.isNumber),
                group.count < 4 || !group.last!.isNumber
            {
                continue
            }
            ungrouped.append(character)
        }
        text = Substring(ungrouped)

        let allowed = Set("0123456789,.")
        guard !text.isEmpty, text.allSatisfy(allowed.contains) else {
            if let last = text.last, "kKmMbB".contains(last), text.dropLast().allSatisfy({ allowed.contains($0) }) {
                throw FinanceError(
                    .invalidAmount,
                    "Enter the full amount, not shorthand: \(quoted) uses '\(last)'; write 20000 rather than 20k.")
            }
            throw FinanceError(.invalidAmount, "Enter an amount such as 1234.56: \(quoted) is not a number.")
        }
        // With a decimal comma, the last separator, when a comma, is the decimal mark and points
        // group thousands: read it as the point-decimal form below reads it, the messages naming
        // the marks as typed.
        var (mark, markName, groupMark, groupName) = (".", "decimal point", ",", "comma")
        if text.last(where: { $0 == "," || $0 == "." }) == ",",
            decimalComma ?? (writesDecimalComma || Self.personNumericLocale?.decimalSeparator == ",")
        {
            (mark, markName, groupMark, groupName) = (",", "decimal comma", ".", "point")
            let decimals = text.split(separator: ",", omittingEmptySubsequences: false).last!
            if decimals.count == 3, !text.contains("."), minorDigits < 3 {
                throw FinanceError(
                    .invalidAmount,
                    "\(quoted) could be a thousands comma or a decimal comma in \(code): write \(text.replacingOccurrences(of: ",", with: "")) or \(text.replacingOccurrences(of: ",", with: ".")),00."
                )
            }
            text = Substring(String(text.map { $0 == "," ? "." : $0 == "." ? "," : $0 }))
        }
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count <= 2 else {
            throw FinanceError(
                .invalidAmount, "Enter an amount with at most one \(markName): \(quoted) has \(parts.count - 1).")
        }
        let whole = parts[0]
        let fraction = parts.count == 2 ? parts[1] : ""
        guard !fraction.contains(",") else {
            throw FinanceError(
                .invalidAmount,
                "Enter an amount such as 1234\(mark)56: \(quoted) has a \(groupName) after the \(markName).")
        }
        if parts.count == 2, fraction.isEmpty {
            throw FinanceError(.invalidAmount, "Enter digits after the \(markName): \(quoted) ends with '\(mark)'.")
        }
        guard !whole.isEmpty else {
            let typed = mark + fraction
            throw FinanceError(
                .invalidAmount, "Enter a digit before the \(markName): write 0\(typed) rather than \(typed).")
        }
        let groups = whole.split(separator: ",", omittingEmptySubsequences: false)
        if groups.count > 1 {
            let wellGrouped = (1...3).contains(groups[0].count) && groups.dropFirst().allSatisfy { $0.count == 3 }
            guard wellGrouped else {
                if parts.count == 1, groups.count == 2, groups[1].count >= 1,
                    groups[1].count <= minorDigits
                {
                    throw FinanceError(
                        .invalidAmount,
                        "Use a point for decimals: \(quoted) looks like a decimal comma; write \(groups[0]).\(groups[1])."
                    )
                }
                throw FinanceError(
                    .invalidAmount,
                    "Enter an amount such as 1\(groupMark)234\(mark)56: the thousands separators in \(quoted) are misplaced."
                )
            }
        }
        guard fraction.count <= minorDigits else {
            throw FinanceError(
                .invalidAmount,
                minorDigits == 0
                    ? "\(code) has no minor units: enter a whole amount, not \(quoted)."
                    : "Enter at most \(minorDigits) decimal places for \(code): \(quoted) has \(fraction.count).")
        }
        let digits = groups.joined()
        guard digits.count <= 13, let major = Int64(digits), major <= maximumInputMajorUnits else {
            throw FinanceError(
                .invalidAmount, "\(quoted) is too large: Coffer accepts amounts up to 1,000,000,000,000.")
        }
        let minor = Int64(fraction.padding(toLength: minorDigits, withPad: "0", startingAt: 0)) ?? 0
        let units = major * unitsPerMajor + minor
        return Money(minorUnits: negative ? -units : units)
    }

    /// `-1234.56` read straight from its bytes: an optional minus, at most 13 digits, and at
    /// most this currency's number of decimals after a point. Nil for anything else, which the
    /// general parser then accepts or explains.
    func plainDecimal(_ bytes: UnsafeBufferPointer<UInt8>) -> Money? {
        var index = 0, negative = false
        if bytes.first == UInt8(ascii: "-") { negative = true; index = 1 }
        var major: Int64 = 0, wholeDigits = 0
        while index < bytes.count, (48...57).contains(bytes[index]) {
            // Longer numbers go to the general parser, which explains the limit; stopping here
            // also keeps `major` far from overflowing.
            guard wholeDigits < 13 else { return nil }
            major = major * 10 + Int64(bytes[index] - 48)
            wholeDigits += 1
            index += 1
        }
        guard wholeDigits >= 1, major <= maximumInputMajorUnits else { return nil }
        var minor: Int64 = 0, fractionDigits = 0
        if index < bytes.count {
            guard bytes[index] == UInt8(ascii: "."), index + 1 < bytes.count else { return nil }
            index += 1
            while index < bytes.count {
                guard (48...57).contains(bytes[index]), fractionDigits < minorDigits else { return nil }
                minor = minor * 10 + Int64(bytes[index] - 48)
                fractionDigits += 1
                index += 1
            }
        }
        for _ in fractionDigits..<minorDigits { minor *= 10 }
        let units = major * unitsPerMajor + minor
        return Money(minorUnits: negative ? -units : units)
    }

    /// "1234.56" / "-20.00": for JSON and exports, always with the currency's digits.
    public func decimalString(_ money: Money) -> String {
        let magnitude = money.minorUnits.magnitude
        let major = magnitude / UInt64(unitsPerMajor)
        let sign = money.minorUnits < 0 ? "-" : ""
        guard minorDigits > 0 else { return "\(sign)\(major)" }
        let minor = String(magnitude % UInt64(unitsPerMajor))
        return "\(sign)\(major).\(String(repeating: "0", count: minorDigits - minor.count))\(minor)"
    }

    /// For people, by Foundation's currency formatting in `displayLocale`: "£1,234.56" and
    /// "-£20.00" for GBP, "1.234,56 €" for EUR, "¥1,235" for JPY, each as its own locale writes
    /// it (or as the person's locale does, when set). Always the currency's minor digits.
    public func format(_ money: Money) -> String {
        let number = NSDecimalNumber(
            mantissa: money.minorUnits.magnitude, exponent: Int16(-minorDigits), isNegative: money.isNegative)
        return CurrencyFormatters.shared.string(number, in: self) ?? "\(code) \(decimalString(money))"
    }

    /// A change as people read it without colour: `+£120.00`, `-£40.00`.
    public func formatSigned(_ money: Money) -> String {
        money.isNegative ? "-" + format(money.negated) : "+" + format(money)
    }
}

/// NumberFormatters are costly to make and not safe to share across threads unguarded: one per
/// currency and locale, behind a lock.
final class CurrencyFormatters: @unchecked Sendable {
    static let shared = CurrencyFormatters()
    private let lock = NSLock()
    private var formatters: [String: NumberFormatter] = [:]

    /// The symbol Foundation shows for the currency in its display locale (`£`, `€`, `£GB`, `CHF`).
    func symbol(for currency: Currency) -> String {
        string(NSDecimalNumber.zero, in: currency).map { shown in
            String(shown.filter { !$0.isNumber && !",.-−\u{A0}\u{202F} ’'".contains($0) })
        } ?? currency.symbol
    }

    func string(_ number: NSDecimalNumber, in currency: Currency) -> String? {
        let locale = currency.displayLocale
        let key = currency.code + "|" + locale.identifier
        lock.lock()
        defer { lock.unlock() }
        if let formatter = formatters[key] { return formatter.string(from: number) }
        let formatter = NumberFormatter()
        formatter.locale = locale
        formatter.numberStyle = .currency
        formatter.currencyCode = currency.code
        formatter.minimumFractionDigits = currency.minorDigits
        formatter.maximumFractionDigits = currency.minorDigits
        formatters[key] = formatter
        return formatter.string(from: number)
    }
}
