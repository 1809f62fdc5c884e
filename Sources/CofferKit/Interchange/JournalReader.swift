import FinanceCore
import Foundation

/// A plain-text accounting journal in the common subset `hledger print` writes (Specs/cli.md,
/// `coffer import ledger`): dated transactions of balanced postings in one commodity, with
/// balance assertions, comments and `account`/`commodity` declarations. Anything else a journal
/// can say (periodic or automated transactions, `include`, prices, other directives) is refused
/// by its line, never half understood.
public struct Journal: Sendable {
    public struct Posting: Sendable {
        public let line: Int
        public let account: String
        public let amount: Money
        /// `= AMOUNT` or `== AMOUNT`: the account's balance after this posting.
        let assertion: Money?
    }

    public struct Entry: Sendable {
        public let line: Int
        public let date: CalendarDate
        /// hledger's payee: the description before `|`, or all of it.
        public let payee: String
        public let postings: [Posting]
    }

    /// In date order; entries of one day in the file's order (as hledger orders them).
    public let entries: [Entry]

    /// Reads `text`, whose amounts must all be in `currency`: every transaction must balance
    /// exactly and every balance assertion hold, as hledger checks them.
    public init(reading text: String, currency: Currency) throws {
        var entries: [Entry] = []
        var open: (line: Int, date: CalendarDate, payee: String, postings: [(Int, String, Money?, Money?)])?
        var inDirective = false
        func close() throws {
            guard let entry = open else { return }
            open = nil
            entries.append(try Self.balanced(entry))
        }
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        for (index, raw) in lines.enumerated() {
            let number = index + 1
            let line = raw.hasSuffix("\r") ? raw.dropLast() : raw
            let content = Self.withoutComment(line)
            if content.allSatisfy(\.isWhitespace) {
                // A comment line inside a transaction belongs to it; a blank line ends it.
                if line.allSatisfy(\.isWhitespace) || line.first.map({ !$0.isWhitespace }) ?? true {
                    try close()
                    inDirective = false
                }
                continue
            }
            if line.first!.isWhitespace {
                if open != nil {
                    open!.postings.append(try Self.posting(content, line: number, currency: currency))
                } else if !inDirective {
                    throw Self.error(number, "an indented line belongs to no transaction")
                }
                continue
            }
            try close()
            inDirective = false
            if line.first!.isNumber {
                let (date, payee) = try Self.header(content, line: number)
                open = (number, date, payee, [])
            } else if ["#", "*", "%"].contains(line.first!) {
                continue  // A comment line, as hledger reads one at the start of a line.
            } else {
                let word = content.split(whereSeparator: \.isWhitespace).first.map(String.init) ?? ""
                guard word == "account" || word == "commodity" else {
                    throw Self.error(
                        number, "\(Self.directiveName(word)) is not supported (Coffer reads what hledger print writes)")
                }
                inDirective = true
            }
        }
        try close()
        self.entries = entries.enumerated().sorted { ($0.element.date, $0.offset) < ($1.element.date, $1.offset) }
            .map(\.element)
        try checkAssertions()
    }

    /// Runs every account's balance through the entries in date order, as hledger does.
    private func checkAssertions() throws {
        var balances: [String: Money] = [:]
        for entry in entries {
            for posting in entry.postings {
                let balance = try (balances[posting.account] ?? .zero).adding(posting.amount)
                balances[posting.account] = balance
                if let asserted = posting.assertion, asserted != balance {
                    throw Self.error(
                        posting.line,
                        "the balance assertion of \(posting.account) does not hold on \(entry.date) (hledger refuses it too)"
                    )
                }
            }
        }
    }

    static func error(_ line: Int, _ message: String) -> CofferError {
        CofferError(.invalidInput, "line \(line): \(message).", kind: "journal")
    }

    static func directiveName(_ word: String) -> String {
        switch word.first {
        case "~": "a periodic transaction (~)"
        case "=": "an automated transaction (=)"
        default: "the '\(word)' directive"
        }
    }

    /// The line without its `;` comment.
    static func withoutComment(_ line: Substring) -> Substring {
        line.firstIndex(of: ";").map { line[..<$0] } ?? line
    }

    /// `DATE[=DATE2] [*|!] [(CODE)] DESCRIPTION`: the date and the payee.
    static func header(_ text: Substring, line: Int) throws -> (CalendarDate, String) {
        let dateText = text.prefix { !$0.isWhitespace }
        let primary = dateText.split(separator: "=", maxSplits: 1).first ?? dateText
        let parts = primary.split(whereSeparator: { $0 == "-" || $0 == "/" || $0 == "." })
        guard parts.count == 3, parts[0].count == 4, (1...2).contains(parts[1].count), (1...2).contains(parts[2].count),
            let year = Int(parts[0]), let month = Int(parts[1]), let day = Int(parts[2]),
            let date = try? CalendarDate(year: year, month: month, day: day)
        else {
            throw error(line, "'\(dateText)' is not a date (YYYY-MM-DD or YYYY/MM/DD)")
        }
        var rest = text.dropFirst(dateText.count).drop(while: \.isWhitespace)
        if let mark = rest.first, mark == "*" || mark == "!" { rest = rest.dropFirst().drop(while: \.isWhitespace) }
        if rest.first == "(", let end = rest.firstIndex(of: ")") {
            rest = rest[rest.index(after: end)...].drop(while: \.isWhitespace)
        }
        let payee = rest.split(separator: "|", maxSplits: 1, omittingEmptySubsequences: false).first ?? rest
        return (date, payee.trimmingCharacters(in: .whitespaces))
    }

    /// `ACCOUNT[  AMOUNT][ = ASSERTION]`: the account ends at two spaces or a tab.
    static func posting(_ text: Substring, line: Int, currency: Currency) throws -> (Int, String, Money?, Money?) {
        var body = text.drop(while: \.isWhitespace)
        if let mark = body.first, mark == "*" || mark == "!" { body = body.dropFirst().drop(while: \.isWhitespace) }
        var account = body, rest = Substring("")
        if let gap = body.range(of: "  ") ?? body.range(of: "\t") {
            let tab = body[..<gap.lowerBound].firstIndex(of: "\t") ?? gap.lowerBound
            account = body[..<tab]
            rest = body[tab...].drop(while: \.isWhitespace)
        }
        account = Substring(account.trimmingCharacters(in: .whitespaces))
        if let first = account.first, first == "(" || first == "[" {
            throw error(line, "virtual postings (\(account)) are not supported")
        }
        guard !rest.contains("@") else { throw error(line, "prices (@) are not supported") }
        var amountText = rest, assertionText: Substring?
        if let equals = rest.firstIndex(of: "=") {
            amountText = rest[..<equals]
            var assertion = rest[rest.index(after: equals)...]
            if assertion.first == "=" { assertion = assertion.dropFirst() }
            guard assertion.first != "*" else {
                throw error(line, "balance assertions that include subaccounts (=*) are not supported")
            }
            assertionText = assertion
        }
        let amount = try amountText.allSatisfy(\.isWhitespace) ? nil : money(amountText, line: line, currency: currency)
        guard amount != nil || assertionText == nil else {
            throw error(line, "balance assignments (a posting with only = AMOUNT) are not supported")
        }
        return (line, String(account), amount, try assertionText.map { try money($0, line: line, currency: currency) })
    }

    /// `GBP 1250.50`, `£1,250.50`, `-£12.00`, `£-12`, `1250.50 GBP`: the commodity must be the
    /// vault's currency, by code or symbol; Coffer converts no currencies.
    static func money(_ text: Substring, line: Int, currency: Currency) throws -> Money {
        var rest = Substring(text.trimmingCharacters(in: .whitespaces))
        let quoted = "'\(rest)'"
        var negative = false
        func takeSign() {
            if let sign = rest.first, sign == "-" || sign == "+" {
                negative = negative != (sign == "-")
                rest = rest.dropFirst().drop(while: \.isWhitespace)
            }
        }
        takeSign()
        let isNumeric = { (character: Character) in character.isNumber || character == "." || character == "," }
        var commodity: Substring
        if let first = rest.first, isNumeric(first) {
            let number = rest.prefix(while: isNumeric)
            commodity = Substring(rest.dropFirst(number.count).trimmingCharacters(in: .whitespaces))
            rest = number
        } else {
            commodity = rest.prefix { !isNumeric($0) && !$0.isWhitespace && $0 != "-" && $0 != "+" }
            rest = rest.dropFirst(commodity.count).drop(while: \.isWhitespace)
            takeSign()
        }
        if commodity.hasPrefix("\""), commodity.hasSuffix("\""), commodity.count > 1 {
            commodity = commodity.dropFirst().dropLast()
        }
        guard !commodity.isEmpty else {
            throw error(line, "\(quoted) names no commodity, so Coffer cannot tell it is \(currency.code)")
        }
        guard commodity == currency.code || commodity == currency.symbol else {
            let other =
                Currency.known.first { $0.code == commodity || $0.symbol == commodity }?.code ?? String(commodity)
            throw CofferError(
                .invalidInput,
                "line \(line): this journal has amounts in \(other), but the vault keeps its money in \(currency.code). Coffer converts no currencies.",
                kind: "currency", candidates: [other])
        }
        guard !rest.isEmpty, rest.allSatisfy(isNumeric) else { throw error(line, "\(quoted) is not an amount") }
        do {
            let value = try currency.parse(String(rest), decimalComma: currency.writesDecimalComma)
            return negative ? value.negated : value
        } catch let failure as FinanceError {
            throw error(line, "\(quoted) is not an amount: \(failure.errorDescription ?? "unreadable")")
        }
    }

    /// A transaction whose postings sum to zero, its one posting without an amount inferred.
    static func balanced(
        _ entry: (line: Int, date: CalendarDate, payee: String, postings: [(Int, String, Money?, Money?)])
    ) throws -> Entry {
        guard !entry.postings.isEmpty else { throw error(entry.line, "the transaction has no postings") }
        let sum = try Money.sum(entry.postings.compactMap(\.2))
        let missing = entry.postings.filter { $0.2 == nil }
        guard missing.count <= 1 else {
            throw error(missing[1].0, "only one posting of a transaction can leave its amount out")
        }
        guard !missing.isEmpty || sum == .zero else {
            throw error(entry.line, "the transaction does not balance: its postings do not add up to zero")
        }
        return Entry(
            line: entry.line, date: entry.date, payee: entry.payee,
            postings: entry.postings.map {
                Posting(line: $0.0, account: $0.1, amount: $0.2 ?? sum.negated, assertion: $0.3)
            })
    }
}
