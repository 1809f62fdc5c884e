import Foundation

/// How a date is written in a bank statement: `DD/MM/YYYY`, `MM/DD/YY`, `D MMM YYYY`, ...
///
/// Tokens are `YYYY`, `YY` (2000–2069, else 1900s), `MM`/`M`, `DD`/`D` (one or two digits for the
/// short forms) and `MMM` (an English month name or its first three letters); anything else is
/// matched literally. A time of day after the date (`2025-03-31 14:02`, `2025-03-31T14:02Z`) is
/// ignored: a statement line belongs to a calendar day.
public struct DatePattern: Sendable, Hashable, CustomStringConvertible {
    enum Token: Hashable, Sendable {
        case year4, year2, month, monthName, day
        case literal(Character)
    }

    let tokens: [Token]
    public let description: String

    public static let iso = try! DatePattern("YYYY-MM-DD")

    public init(_ pattern: String) throws {
        var tokens: [Token] = []
        var rest = Substring(Self.fromStrftime(pattern).uppercased())
        while let first = rest.first {
            if rest.hasPrefix("YYYY") {
                tokens.append(.year4); rest = rest.dropFirst(4)
            } else if rest.hasPrefix("YY") {
                tokens.append(.year2); rest = rest.dropFirst(2)
            } else if rest.hasPrefix("MMM") {
                tokens.append(.monthName); rest = rest.drop { $0 == "M" }
            } else if rest.hasPrefix("MM") {
                tokens.append(.month); rest = rest.dropFirst(2)
            } else if first == "M" {
                tokens.append(.month); rest = rest.dropFirst()
            } else if rest.hasPrefix("DD") {
                tokens.append(.day); rest = rest.dropFirst(2)
            } else if first == "D" {
                tokens.append(.day); rest = rest.dropFirst()
            } else if first.isLetter || first.isNumber {
                throw FinanceError(
                    .invalidDate,
                    "A date format is made of YYYY, YY, MM, MMM and DD with separators, such as DD/MM/YYYY: '\(pattern)' uses '\(first)'."
                )
            } else {
                tokens.append(.literal(first)); rest = rest.dropFirst()
            }
        }
        let counts = (
            tokens.filter { $0 == .year4 || $0 == .year2 }.count,
            tokens.filter { $0 == .month || $0 == .monthName }.count,
            tokens.filter { $0 == .day }.count
        )
        guard counts == (1, 1, 1) else {
            throw FinanceError(
                .invalidDate,
                "A date format needs one year, one month and one day, such as DD/MM/YYYY: '\(pattern)' does not have them."
            )
        }
        self.tokens = tokens
        description = pattern
    }

    /// strftime-style formats, as hledger's CSV rules and many exports write them (`%d/%m/%Y`,
    /// `%Y-%m-%d`, `%e %b %Y`, `%-d/%-m/%y`), in this type's own tokens.
    static func fromStrftime(_ pattern: String) -> String {
        guard pattern.contains("%") else { return pattern }
        let directives: [String: String] = [
            "%Y": "YYYY", "%y": "YY", "%m": "MM", "%-m": "M", "%d": "DD", "%-d": "D", "%e": "D",
            "%b": "MMM", "%B": "MMM", "%h": "MMM",
        ]
        var result = "", rest = Substring(pattern)
        while let first = rest.first {
            if first == "%", let match = directives.keys.filter({ rest.hasPrefix($0) }).max(by: { $0.count < $1.count })
            {
                result += directives[match]!
                rest = rest.dropFirst(match.count)
            } else {
                result.append(first)
                rest = rest.dropFirst()
            }
        }
        return result
    }

    static let monthNames = CalendarDate.monthNames.map { $0.lowercased() }

    /// The calendar date `text` shows, or nil when it does not follow the pattern or is not a
    /// real date.
    public func date(from text: String) -> CalendarDate? {
        let trimmed = text.trimmingSpaces
        return trimmed.isPrintableASCII ? plainDate(trimmed) : characterwiseDate(trimmed)
    }

    /// `date(from:)` of trimmed text, Character by Character.
    func characterwiseDate(_ text: String) -> CalendarDate? {
        var rest = Substring(text)
        return date(
            digits: { range in
                let run = rest.prefix { $0.isASCII && $0.isNumber }.prefix(range.upperBound)
                guard range.contains(run.count), let value = Int(run) else { return nil }
                rest = rest.dropFirst(run.count)
                return value
            },
            word: {
                let word = rest.prefix { $0.isLetter }
                rest = rest.dropFirst(word.count)
                return word.lowercased()
            },
            literal: { character in
                guard rest.first == character else { return false }
                rest = rest.dropFirst()
                return true
            },
            next: { rest.first })
    }

    /// `date(from:)` for printable ASCII, read byte by byte: the same answer without making
    /// Characters (a statement has one date a line).
    func plainDate(_ text: String) -> CalendarDate? {
        var text = text
        return text.withUTF8 { bytes in
            var index = 0
            return date(
                digits: { range in
                    var value = 0, count = 0
                    while count < range.upperBound, index + count < bytes.count,
                        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index + count])
                    {
                        value = value * 10 + Int(bytes[index + count] - UInt8(ascii: "0"))
                        count += 1
                    }
                    guard range.contains(count) else { return nil }
                    index += count
                    return value
                },
                word: {
                    let start = index
                    while index < bytes.count, Character(Unicode.Scalar(bytes[index])).isLetter { index += 1 }
                    return String(decoding: bytes[start..<index], as: UTF8.self).lowercased()
                },
                literal: { character in
                    guard index < bytes.count, character.asciiValue == bytes[index] else { return false }
                    index += 1
                    return true
                },
                next: { index < bytes.count ? Character(Unicode.Scalar(bytes[index])) : nil })
        }
    }

    /// The pattern's tokens read in order by one of the two readers above: `digits` takes a run
    /// of digits whose length is in the range, `word` the letters that follow (lowercased),
    /// `literal` one given character; `next` shows what follows the date, which may only be
    /// the start of a time of day.
    private func date(
        digits: (ClosedRange<Int>) -> Int?, word: () -> String, literal: (Character) -> Bool,
        next: () -> Character?
    ) -> CalendarDate? {
        var year: Int?, month: Int?, day: Int?
        for token in tokens {
            switch token {
            case .year4:
                guard let value = digits(4...4) else { return nil }
                year = value
            case .year2:
                guard let value = digits(2...2) else { return nil }
                year = value < 70 ? 2000 + value : 1900 + value
            case .month:
                guard let value = digits(1...2) else { return nil }
                month = value
            case .day:
                guard let value = digits(1...2) else { return nil }
                day = value
            case .monthName:
                let name = word()
                guard name.count >= 3, let index = Self.monthNames.firstIndex(where: { $0.hasPrefix(name) }) else {
                    return nil
                }
                month = index + 1
            case .literal(let character):
                guard literal(character) else { return nil }
            }
        }
        if let following = next(), following != " " && following != "T" { return nil }
        guard let year, let month, let day else { return nil }
        return try? CalendarDate(year: year, month: month, day: day)
    }
}

extension Currency {
    /// Parses an amount as banks write them: `-1,234.56`, `(12.50)` and `12.50-` for negatives,
    /// `£12`, spaces or apostrophes between thousands, and with `decimalComma` the European
    /// `1.234,56`. Everything else follows `parse(_:)`, whose refusals (too many decimals,
    /// shorthand, exponents) still apply.
    public func parseStatementAmount(_ input: String, decimalComma: Bool) throws -> Money {
        // `-12.50`, which everything below would pass to `parse` unchanged.
        if !decimalComma, let plain = input.utf8.withContiguousStorageIfAvailable(plainDecimal), let money = plain {
            return money
        }
        var text = input.trimmingSpaces
        var negative = false
        if text.hasPrefix("("), text.hasSuffix(")") {
            negative = true
            text = String(text.dropFirst().dropLast()).trimmingCharacters(in: .whitespaces)
        } else if text.count > 1, text.hasSuffix("-") {
            negative = true
            text = String(text.dropLast()).trimmingCharacters(in: .whitespaces)
        }
        // Thousands written with (narrow) no-break spaces, spaces or apostrophes.
        let characters = Array(text)
        text = String(
            characters.enumerated().filter { index, character in
                guard [" ", "\u{00A0}", "\u{202F}", "'", "\u{2019}"].contains(character), index > 0,
                    index + 1 < characters.count
                else { return true }
                return !(characters[index - 1].isNumber && characters[index + 1].isNumber)
            }.map(\.element))
        if decimalComma {
            // Points that group thousands (`1.050`, `12.345,67`) go; the comma becomes the point.
            let whole = text.prefix { $0 != "," }
            let groups = whole.drop { !$0.isNumber }.split(separator: ".", omittingEmptySubsequences: false)
            if groups.count > 1, (1...3).contains(groups[0].count), groups.allSatisfy({ $0.allSatisfy(\.isNumber) }),
                groups.dropFirst().allSatisfy({ $0.count == 3 })
            {
                text = String(text.filter { $0 != "." }.map { $0 == "," ? "." : $0 })
            } else {
                text = String(text.map { $0 == "," ? "." : ($0 == "." ? "," : $0) })
            }
        }
        let value = try parse(text)
        return negative ? value.negated : value
    }
}

/// A named list of rules that place imported transactions: the first rule whose pattern
/// matches a description decides. Kept inside the vault, since rules reveal merchants and habits.
public struct CategoryRuleSet: Identifiable, Hashable, Sendable {
    public struct Rule: Hashable, Sendable {
        /// Which of a statement line's texts a rule reads.
        public enum Field: String, Hashable, Sendable, CaseIterable {
            /// The description or the payee: either matching is enough.
            case any
            case description
            case payee
        }

        /// Case-insensitive. Between slashes (`/UNIQLO|ZARA/`) a regular expression (Swift Regex
        /// syntax) found anywhere in the text; with `*` (any run) or `?` (one character) a glob
        /// that must match the whole text; otherwise text found anywhere in it.
        public var pattern: String
        /// A category or goal (for money going out) or an income source (for money coming in).
        public var target: Transaction.Target
        public var field: Field
        /// The smallest and largest amount the rule takes, as a positive size whichever way the
        /// money went (a rule's target already says the direction); both inclusive.
        public var minimum: Money?
        public var maximum: Money?

        public init(
            pattern: String, target: Transaction.Target, field: Field = .any, minimum: Money? = nil,
            maximum: Money? = nil
        ) {
            self.pattern = pattern
            self.target = target
            self.field = field
            self.minimum = minimum
            self.maximum = maximum
        }

        /// Whether a line of this size is within the rule's range.
        public func fits(_ amount: Money) -> Bool {
            let size = Money(minorUnits: amount.minorUnits == .min ? .max : abs(amount.minorUnits))
            return (minimum.map { size >= $0 } ?? true) && (maximum.map { size <= $0 } ?? true)
        }

        /// The regular expression between the slashes, when the pattern is one.
        public var regularExpression: String? {
            guard pattern.count >= 3, pattern.hasPrefix("/"), pattern.hasSuffix("/") else { return nil }
            return String(pattern.dropFirst().dropLast())
        }

        /// Refuses a regular expression that does not compile, saying why: a rule that can never
        /// match is refused rather than kept silently useless.
        public static func validated(_ pattern: String) throws -> String {
            let rule = Rule(pattern: pattern, target: .uncategorised)
            if let expression = rule.regularExpression {
                do {
                    _ = try Regex(expression)
                } catch {
                    throw FinanceError(
                        .invalidName, "'\(pattern)' is not a regular expression Coffer can read: \(error).")
                }
            }
            return pattern
        }

        /// A matcher made once per use (a regular expression is compiled once, not per line).
        public func matcher() -> @Sendable (String) -> Bool {
            if let expression = regularExpression {
                guard let regex = try? Regex(expression).ignoresCase() else { return { _ in false } }
                nonisolated(unsafe) let compiled = regex
                return { description in (try? compiled.firstMatch(in: description)) != nil }
            }
            let rule = self
            return { rule.matches($0) }
        }

        public func matches(_ description: String) -> Bool {
            if regularExpression != nil { return matcher()(description) }
            let subject = Array(Self.normalised(description)), wanted = Array(Self.normalised(pattern))
            guard wanted.contains("*") || wanted.contains("?") else {
                return Self.normalised(description).contains(Self.normalised(pattern))
            }
            return Self.glob(wanted[...], subject[...])
        }

        /// Lower case, with runs of white space as one space: statements pad descriptions.
        static func normalised(_ text: String) -> String {
            text.lowercased().collapsingWhiteSpace
        }

        static func glob(_ pattern: ArraySlice<Character>, _ subject: ArraySlice<Character>) -> Bool {
            // Iterative wildcard matching with one backtrack point: linear in practice.
            var p = pattern.startIndex, s = subject.startIndex
            var star: (p: Int, s: Int)?
            while s < subject.endIndex {
                if p < pattern.endIndex, pattern[p] == "?" || pattern[p] == subject[s] {
                    p += 1
                    s += 1
                } else if p < pattern.endIndex, pattern[p] == "*" {
                    star = (p, s)
                    p += 1
                } else if let last = star {
                    p = last.p + 1
                    s = last.s + 1
                    star = (last.p, last.s + 1)
                } else {
                    return false
                }
            }
            while p < pattern.endIndex, pattern[p] == "*" { p += 1 }
            return p == pattern.endIndex
        }
    }

    public let id: UUID
    public var name: String
    public var rules: [Rule]

    public init(id: UUID = RecordIDs.next(), name: String, rules: [Rule] = []) {
        self.id = id
        self.name = name
        self.rules = rules
    }

    /// Where a statement line with this description, payee and signed amount belongs: the
    /// first rule, in order, that matches its text, fits the direction (income sources take
    /// money in, categories and goals money out) and the amount range, or nil. Later rules are
    /// not tried: order a set from the most particular rule to the most general.
    public func target(for description: String, payee: String = "", amount: Money) -> Transaction.Target? {
        placer()(description, payee, amount)
    }

    /// `target(for:payee:amount:)` with every rule's matcher made once: for placing many lines.
    public func placer() -> (_ description: String, _ payee: String, _ amount: Money) -> Transaction.Target? {
        let compiled = rules.map { ($0, $0.matcher()) }
        return { description, payee, amount in
            compiled.first { rule, matches in
                guard rule.target.fits(amount), rule.fits(amount) else { return false }
                switch rule.field {
                case .any: return matches(description) || (!payee.isEmpty && matches(payee))
                case .description: return matches(description)
                case .payee: return matches(payee)
                }
            }?.0.target
        }
    }
}

/// Which columns of a statement hold what (0-based), and how its dates and amounts are written.
public struct StatementLayout: Sendable {
    public enum Amounts: Sendable {
        /// One signed column.
        case signed(Int)
        /// Money out in one column and money in in another, both written as positive numbers.
        case debitCredit(debit: Int, credit: Int)
    }

    public var date: Int
    public var amounts: Amounts
    public var description: Int?
    /// Who the money went to or came from, when the statement has its own column for it.
    public var payee: Int?
    /// The account's balance after the line, when the statement shows it.
    public var balance: Int?
    /// Column titles for messages, when the file has a header row.
    public var titles: [String]
    public var datePattern: DatePattern
    public var decimalComma: Bool
    /// Flip every sign: for card statements that show purchases as positive amounts.
    public var negate: Bool

    public init(
        date: Int, amounts: Amounts, description: Int?, payee: Int? = nil, balance: Int? = nil,
        titles: [String] = [], datePattern: DatePattern = .iso, decimalComma: Bool = false, negate: Bool = false
    ) {
        self.date = date
        self.amounts = amounts
        self.description = description
        self.payee = payee
        self.balance = balance
        self.titles = titles
        self.datePattern = datePattern
        self.decimalComma = decimalComma
        self.negate = negate
    }

    func columnName(_ index: Int) -> String {
        let title = index < titles.count ? titles[index].trimmingCharacters(in: .whitespaces) : ""
        return title.isEmpty ? "column \(index + 1)" : "column \(index + 1) \"\(title)\""
    }

    /// One parsed statement line; the amount is signed (income positive).
    public struct Row: Sendable, Hashable {
        public let line: Int
        public let date: CalendarDate
        public let amount: Money
        public let description: String
        /// Empty when the statement has no payee column.
        public let payee: String
        public let balance: Money?
        public let rowHash: [UInt8]

        public init(
            line: Int, date: CalendarDate, amount: Money, description: String, payee: String = "",
            balance: Money? = nil, rowHash: [UInt8]
        ) {
            self.line = line
            self.date = date
            self.amount = amount
            self.description = description
            self.payee = payee
            self.balance = balance
            self.rowHash = rowHash
        }

        /// What the line's transaction keeps as its note: the payee and the description, in
        /// hledger's `payee | note` order, or whichever of them there is.
        public var note: String {
            switch (payee.isEmpty, description.isEmpty) {
            case (true, _): description
            case (false, true): payee
            case (false, false): "\(payee) | \(description)"
            }
        }
    }

    /// Reads one line's fields. Errors name the line and the column:
    /// `line 14: 'abc' is not an amount (column 3 "Amount")`.
    public func row(_ fields: [String], line: Int, rowHash: [UInt8], currency: Currency) throws -> Row {
        func field(_ index: Int) throws -> String {
            guard index < fields.count else {
                throw FinanceError(
                    .invalidAmount,
                    "line \(line): has \(fields.count) column\(fields.count == 1 ? "" : "s"); \(columnName(index)) is missing"
                )
            }
            return fields[index].trimmingSpacesAndNewlines
        }
        let dateText = try field(date)
        guard let day = datePattern.date(from: dateText) else {
            let message =
                dateText.isEmpty ? "the date is empty" : "'\(dateText)' is not a date in the format \(datePattern)"
            throw FinanceError(.invalidDate, "line \(line): \(message) (\(columnName(date)))")
        }
        func amount(_ index: Int) throws -> Money? {
            let text = try field(index)
            guard !text.isEmpty else { return nil }
            do {
                return try currency.parseStatementAmount(text, decimalComma: decimalComma)
            } catch let error as FinanceError {
                let reason = error.errorDescription.map(Self.reason) ?? ""
                throw FinanceError(
                    .invalidAmount, "line \(line): '\(text)' is not an amount\(reason) (\(columnName(index)))")
            }
        }
        var value: Money
        switch amounts {
        case .signed(let index):
            guard let parsed = try amount(index) else {
                throw FinanceError(.invalidAmount, "line \(line): the amount is empty (\(columnName(index)))")
            }
            value = parsed
        case .debitCredit(let debitColumn, let creditColumn):
            let debit = try amount(debitColumn), credit = try amount(creditColumn)
            switch (debit.flatMap { $0 == .zero ? nil : $0 }, credit.flatMap { $0 == .zero ? nil : $0 }) {
            case (let out?, nil): value = Money(minorUnits: -abs(out.minorUnits))
            case (nil, let income?): value = Money(minorUnits: abs(income.minorUnits))
            case (nil, nil): value = .zero
            case (_?, _?):
                throw FinanceError(
                    .invalidAmount,
                    "line \(line): both \(columnName(debitColumn)) and \(columnName(creditColumn)) hold an amount")
            }
        }
        if negate { value = value.negated }
        func text(_ index: Int?) throws -> String {
            try index.map { try field($0) }?.collapsingWhiteSpace ?? ""
        }
        return Row(
            line: line, date: day, amount: value, description: try text(description), payee: try text(payee),
            balance: try balance.flatMap { try amount($0) }, rowHash: rowHash)
    }

    /// Rows oldest first: newest-first files (most banks) are reversed.
    public static func chronological(_ rows: [Row]) -> [Row] {
        guard let first = rows.first, let last = rows.last, first.date > last.date else { return rows }
        return rows.reversed()
    }

    /// The balance after the last line in time, as a row whose amount is that balance.
    public static func closingBalance(_ rows: [Row]) -> Row? {
        guard let last = chronological(rows).last(where: { $0.balance != nil }), let balance = last.balance else {
            return nil
        }
        return Row(line: last.line, date: last.date, amount: balance, description: "", rowHash: last.rowHash)
    }

    /// The parse message as a reason after "is not an amount", unless it only says that again.
    static func reason(_ message: String) -> String {
        guard !message.contains("is not a number"), !message.hasPrefix("Enter an amount,") else { return "" }
        let text = message.hasSuffix(".") ? String(message.dropLast()) : message
        return ": " + text.prefix(1).lowercased() + text.dropFirst()
    }
}

/// What importing statement rows as budget transactions would do: new transactions, rows that
/// are already in the vault, and how many land in Uncategorised.
public struct TransactionImportPlan: Sendable {
    public struct Added: Sendable {
        public let line: Int
        public let transaction: Transaction
    }

    public let added: [Added]
    /// Lines already in the vault: the same row digest, or the same date, amount and
    /// description in the same account.
    public let duplicates: [StatementLayout.Row]
    public let zeroAmountLines: [Int]

    public var uncategorisedCount: Int { added.count { $0.transaction.target == .uncategorised } }

    /// Matches `rows` against `existing`. Identical rows within one file are distinct
    /// transactions (two coffees on one day), so matching counts occurrences: a statement that
    /// overlaps an earlier one adds only the rows the earlier one did not have.
    /// `placed` gives some lines' places by line number (an hledger rules file's `account2`);
    /// a place that does not fit the line's direction leaves it to `rules`, then Uncategorised.
    public init(
        rows: [StatementLayout.Row], account: String, existing: [Transaction], rules: CategoryRuleSet?,
        placed: [Int: Transaction.Target] = [:], categories: [BudgetCategory], firstSequence: UInt64,
        newID: () -> UUID = UUID.init
    ) {
        var matcher = StatementMatcher(account: account, existing: existing)
        for row in rows where row.amount != .zero { _ = matcher.takeByDigest(row) }
        matcher.matchFactsAfterDigests()
        var duplicates: [StatementLayout.Row] = []
        var zero: [Int] = []
        var added: [Added] = []
        var sequence = firstSequence
        let place = rules?.placer()
        for row in rows {
            if row.amount == .zero {
                zero.append(row.line)
                continue
            }
            if matcher.isDuplicate(row) {
                duplicates.append(row)
                continue
            }
            let target =
                placed[row.line].flatMap { $0.fits(row.amount) ? $0 : nil }
                ?? place?(row.description, row.payee, row.amount)
            added.append(
                Added(
                    line: row.line,
                    transaction: Self.transaction(
                        for: row, account: account, id: newID(), sequence: sequence, placedAt: target,
                        categories: categories)))
            sequence += 1
        }
        self.added = added
        self.duplicates = duplicates
        self.zeroAmountLines = zero
    }

    /// The transaction a new statement line becomes: money in is income, money out spending,
    /// Uncategorised unless `target` places it.
    public static func transaction(
        for row: StatementLayout.Row, account: String, id: UUID, sequence: UInt64, placedAt target: Transaction.Target?,
        categories: [BudgetCategory]
    ) -> Transaction {
        let unplaced = Transaction(
            id: id, amount: Money(minorUnits: abs(row.amount.minorUnits)),
            type: row.amount > .zero ? .income : .expense,
            target: .uncategorised, note: row.note.isEmpty ? nil : row.note, date: row.date,
            sequence: sequence, origin: StatementOrigin(account: account, rowHash: row.rowHash))
        return target.map { unplaced.placed(at: $0, categories: categories) } ?? unplaced
    }
}

/// Tells which statement lines the vault already holds, a line at a time, so a statement need
/// not be held whole: a line is a duplicate when an earlier import of the same account had the
/// same row (its digest), or failing that the same date, amount and description. Identical
/// rows within one file are distinct transactions (two coffees on one day), so each
/// transaction matches one line at most, and a statement that overlaps an earlier one adds
/// only the rows the earlier one did not have.
///
/// Digests are matched before facts across the whole statement: every line (zero amounts
/// aside) goes through `takeByDigest`, then `matchFactsAfterDigests`, then every line again
/// through `isDuplicate`, in the same order.
public struct StatementMatcher: Sendable {
    /// The account's transactions that came from statements.
    private let pool: [Transaction]
    private var byDigest: [[UInt8]: [Int]] = [:]
    private var taken = Set<Int>()
    private var byFacts: [Facts: Int] = [:]

    public init(account: String, existing: [Transaction]) {
        let accountKey = account.lowercased()
        pool = existing.filter { $0.origin.map { $0.account.lowercased() == accountKey } ?? false }
        for (index, transaction) in pool.enumerated() {
            byDigest[transaction.origin!.rowHash, default: []].append(index)
        }
    }

    /// Whether there is nothing to match against: every line is new.
    public var isEmpty: Bool { pool.isEmpty }

    /// Whether `row` repeats a row imported before, which it then takes.
    public mutating func takeByDigest(_ row: StatementLayout.Row) -> Bool {
        guard let index = byDigest[row.rowHash]?.first(where: { !taken.contains($0) }) else { return false }
        taken.insert(index)
        return true
    }

    /// Leaves the transactions no digest took to be matched by their facts, and starts the
    /// second pass.
    public mutating func matchFactsAfterDigests() {
        for (index, transaction) in pool.enumerated() where !taken.contains(index) {
            byFacts[Facts(transaction.date, transaction.signedAmount, transaction.note ?? ""), default: 0] += 1
        }
        taken.removeAll()
    }

    /// In the second pass: whether the vault already holds `row`.
    public mutating func isDuplicate(_ row: StatementLayout.Row) -> Bool {
        guard !pool.isEmpty else { return false }
        if takeByDigest(row) { return true }
        // Nothing to match against (a first import) makes no Facts: they normalise the note.
        guard !byFacts.isEmpty, case let facts = Facts(row.date, row.amount, row.note), let count = byFacts[facts],
            count > 0
        else { return false }
        byFacts[facts] = count - 1
        return true
    }

    struct Facts: Hashable {
        let date: CalendarDate
        let amount: Money
        let description: String
        init(_ date: CalendarDate, _ amount: Money, _ description: String) {
            self.date = date
            self.amount = amount
            self.description = CategoryRuleSet.Rule.normalised(description)
        }
    }
}

/// What importing statement rows as an account's value history would do. A statement's
/// balance column holds several values a day; the day's last one (in time, whichever way the
/// file is sorted) is the value that day.
public struct UpdateImportPlan: Sendable {
    public struct Added: Sendable {
        public let line: Int
        public let update: ValueUpdate
    }

    public let added: [Added]
    /// Lines whose date and value the account already has.
    public let duplicates: [StatementLayout.Row]
    /// Earlier balances of a day that a later line of the same day replaces.
    public let superseded: [StatementLayout.Row]

    public init(rows: [StatementLayout.Row], accountID: UUID, existing: [ValueUpdate], firstSequence: UInt64) {
        let chronological = StatementLayout.chronological(rows)
        var lastOfDay: [CalendarDate: StatementLayout.Row] = [:]
        var superseded: [StatementLayout.Row] = []
        for row in chronological {
            if let earlier = lastOfDay[row.date] { superseded.append(earlier) }
            lastOfDay[row.date] = row
        }
        let known = Set(existing.filter { $0.accountID == accountID }.map { "\($0.date)|\($0.amount.minorUnits)" })
        var added: [Added] = [], duplicates: [StatementLayout.Row] = []
        var sequence = firstSequence
        for row in lastOfDay.values.sorted(by: { $0.date < $1.date }) {
            if known.contains("\(row.date)|\(row.amount.minorUnits)") {
                duplicates.append(row)
                continue
            }
            added.append(
                Added(
                    line: row.line,
                    update: ValueUpdate(
                        accountID: accountID, date: row.date, amount: row.amount, sequence: sequence,
                        note: row.description.isEmpty ? nil : row.description)))
            sequence += 1
        }
        self.added = added
        self.duplicates = duplicates.sorted { $0.line < $1.line }
        self.superseded = superseded.sorted { $0.line < $1.line }
    }
}

extension Transaction {
    /// This transaction moved to `target`, its type following: income from a source, savings to
    /// a goal or a savings category, spending otherwise.
    public func placed(at target: Target, categories: [BudgetCategory]) -> Transaction {
        var placed = self
        placed.target = target
        switch target {
        case .source: placed.type = .income
        case .goal: placed.type = .savings
        case .category(let id): placed.type = categories.first { $0.id == id }?.type == .savings ? .savings : .expense
        case .uncategorised: placed.type = signedAmount > .zero ? .income : .expense
        }
        return placed
    }
}
