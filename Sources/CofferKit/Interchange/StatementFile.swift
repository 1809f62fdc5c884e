import FinanceCore
import Foundation

/// What a bank statement may be (`BankStatement` reads one): UTF-8 with or without a
/// byte-order mark (or ISO-8859-1 or Windows-1252, when said), `,` `;` or tab separated, rows
/// read by `CSVRows`: quoted fields with embedded separators, quotes and line breaks. Each
/// record keeps the line of the file it starts on, so errors can name it. With a header and no
/// lines to skip given, the header is the first of the first 30 rows whose titles name a date
/// and an amount (or money in and out); the rows before it are the preamble.
public enum StatementFile {
    public struct Record: Sendable {
        public let line: Int
        public let fields: [String]
        /// BLAKE2b-128 of the raw fields and of how many identical records came before it in
        /// this file: re-importing the file finds every row again, while two identical rows
        /// (two coffees on one day) stay two.
        public let digest: [UInt8]
    }

    /// The text encodings banks export in: UTF-8 (the default), ISO-8859-1 and Windows-1252
    /// (German and older exports), decoded with Foundation.
    public enum Encoding: String, Sendable, CaseIterable {
        case utf8 = "utf-8"
        case latin1
        case cp1252

        var foundation: String.Encoding {
            switch self {
            case .utf8: .utf8
            case .latin1: .isoLatin1
            case .cp1252: .windowsCP1252
            }
        }
    }

    /// How many line breaks a field holds: none unless one of its bytes is a control
    /// character or outside ASCII, which sends it to the Character-wise count.
    static func lineBreaks(in field: String) -> Int {
        guard field.utf8.contains(where: { $0 < 0x20 || $0 > 0x7E }) else { return 0 }
        return field.reduce(0) { $0 + ($1.isNewline ? 1 : 0) }
    }

    /// The separator used most on the first line that has any, outside quotes; a comma when
    /// none is. `--delimiter` overrides it.
    static func guessDelimiter(_ text: String, skipLines: Int) -> Character {
        // Line by line from the top, not the whole file split at once: the answer is near the start.
        var rest = Substring(text), number = 0
        while true {
            let end = rest.firstIndex(where: \.isNewline)
            let line = rest[..<(end ?? rest.endIndex)]
            if number >= skipLines, !line.trimmingCharacters(in: .whitespaces).isEmpty {
                var counts: [Character: Int] = [:]
                var quoted = false
                for character in line {
                    if character == "\"" {
                        quoted.toggle()
                    } else if !quoted, ",;\t".contains(character) {
                        counts[character, default: 0] += 1
                    }
                }
                if let best = counts.max(by: {
                    ($0.value, $0.key == "," ? 1 : 0) < ($1.value, $1.key == "," ? 1 : 0)
                }) {
                    return best.key
                }
            }
            guard let end else { break }
            rest = rest[rest.index(after: end)...]
            number += 1
        }
        return ","
    }

    /// The first column whose title is one of `candidates` (in the order given); failing that,
    /// the first whose title holds one of them as whole words (`Betrag (EUR)` is an amount,
    /// `Transaction Date` a date).
    static func guessColumn(_ candidates: [String], in titles: [String]) -> Int? {
        for candidate in candidates {
            if let index = titles.firstIndex(where: { normalised($0) == candidate }) { return index }
        }
        for candidate in candidates {
            let wanted = words(candidate)
            if let index = titles.firstIndex(where: { title in
                let have = words(title)
                return have.count > wanted.count
                    && (0...(have.count - wanted.count)).contains { Array(have[$0..<$0 + wanted.count]) == wanted }
            }) {
                return index
            }
        }
        return nil
    }

    /// A title's words, lowercased, without brackets and punctuation: `Betrag (EUR)` → betrag, eur.
    static func words(_ title: String) -> [String] {
        title.lowercased().split { !$0.isLetter && !$0.isNumber && $0 != "." }.map {
            String($0).trimmingCharacters(in: CharacterSet(charactersIn: "."))
        }.filter { !$0.isEmpty }
    }

    static func normalised(_ title: String) -> String {
        title.trimmingCharacters(in: .whitespacesAndNewlines).lowercased().split(whereSeparator: \.isWhitespace).joined(
            separator: " ")
    }
}

/// A statement's column titles (none without a header row), and the columns found by them.
struct StatementTitles: Sendable {
    let titles: [String]

    /// A column given as a 1-based number or a header title (case-insensitive).
    func column(_ spec: String, flag: String) throws -> Int {
        let trimmed = spec.trimmingCharacters(in: .whitespaces)
        if let number = Int(trimmed) {
            guard number >= 1 else {
                throw CofferError(.invalidInput, "--\(flag) \(spec): columns are numbered from 1.")
            }
            return number - 1
        }
        guard !titles.isEmpty else {
            throw CofferError(
                .invalidInput, "--\(flag) '\(spec)': the file has no header row, so give the column's number.")
        }
        guard
            let index = titles.firstIndex(where: { StatementFile.normalised($0) == StatementFile.normalised(trimmed) })
        else {
            throw CofferError(
                .invalidInput, "--\(flag) '\(spec)': no column has that title.", kind: "column",
                candidates: describedTitles)
        }
        return index
    }

    func guessColumn(_ candidates: [String]) -> Int? {
        StatementFile.guessColumn(candidates, in: titles)
    }

    /// Each column as its number and title: `1 "Date"`.
    var describedTitles: [String] {
        titles.enumerated().map { "\($0.offset + 1) \"\($0.element.trimmingCharacters(in: .whitespaces))\"" }
    }

}

/// How a statement's columns map onto dates and amounts: given by title or number, or found by
/// the titles banks use (in several languages).
public struct StatementColumns: Sendable {
    public enum Destination: String, Sendable, CaseIterable { case transactions, updates }

    public var destination: Destination
    public var date: String?
    /// The signed amount (for updates: the balance).
    public var amount: String?
    public var debit: String?
    public var credit: String?
    public var description: String?
    public var payee: String?
    /// For transactions: the running balance after each line.
    public var balance: String?
    /// How dates are written, e.g. DD/MM/YYYY (default YYYY-MM-DD).
    public var dateFormat: String?
    public var decimalComma = false
    public var negate = false

    public init(
        destination: Destination, date: String? = nil, amount: String? = nil, debit: String? = nil,
        credit: String? = nil,
        description: String? = nil, payee: String? = nil, balance: String? = nil, dateFormat: String? = nil,
        decimalComma: Bool = false, negate: Bool = false
    ) {
        self.destination = destination
        self.date = date
        self.amount = amount
        self.debit = debit
        self.credit = credit
        self.description = description
        self.payee = payee
        self.balance = balance
        self.dateFormat = dateFormat
        self.decimalComma = decimalComma
        self.negate = negate
    }

    static let dateTitles = [
        "date", "transaction date", "booking date", "posting date", "posted date", "value date", "completed date",
        "started date", "trans. date", "datum", "buchungstag", "fecha", "data",
    ]
    static let amountTitles = ["amount", "transaction amount", "value", "betrag", "importe", "montant"]
    static let balanceTitles = ["balance", "running balance", "closing balance", "amount", "value", "saldo", "solde"]
    static let debitTitles = [
        "debit", "debit amount", "paid out", "money out", "withdrawal", "withdrawals", "out", "soll", "ausgang",
    ]
    static let creditTitles = [
        "credit", "credit amount", "paid in", "money in", "deposit", "deposits", "in", "haben", "eingang",
    ]
    /// A running balance beside each line's amount (for transactions).
    static let runningBalanceTitles = [
        "balance", "running balance", "balance after", "closing balance", "saldo", "kontostand", "solde",
    ]
    /// Titles that name who was paid, as opposed to what the line says.
    static let payeeTitles = [
        "payee", "merchant", "counterparty", "counter party", "beneficiary", "payee name", "merchant name",
        "empfänger", "zahlungsempfänger", "auftraggeber", "beguenstigter/zahlungspflichtiger",
        "begünstigter/zahlungspflichtiger", "bénéficiaire",
    ]
    static let currencyTitles = ["currency", "ccy", "währung", "waehrung", "devise", "moneda", "valuta"]
    static let descriptionTitles = [
        "description", "transaction description", "payee", "merchant", "name", "details", "narrative",
        "memo", "reference", "counterparty", "counter party", "beschreibung", "verwendungszweck", "empfänger",
        "zahlungsempfänger", "auftraggeber", "buchungstext", "concepto", "libellé",
    ]

    /// Whether a row reads as a header: a date title and an amount (or money out and in) title.
    static func looksLikeHeader(_ fields: [String]) -> Bool {
        guard fields.count >= 2, StatementFile.guessColumn(dateTitles, in: fields) != nil else { return false }
        return StatementFile.guessColumn(amountTitles + balanceTitles, in: fields) != nil
            || (StatementFile.guessColumn(debitTitles, in: fields) != nil
                && StatementFile.guessColumn(creditTitles, in: fields) != nil)
    }

    /// The formats dates are tried in when none is given: ISO first, then day-first and
    /// month-first with each separator, then with month names.
    static let candidateDateFormats = [
        "YYYY-MM-DD", "DD/MM/YYYY", "MM/DD/YYYY", "DD.MM.YYYY", "DD-MM-YYYY", "MM-DD-YYYY", "YYYY/MM/DD",
        "DD/MM/YY", "MM/DD/YY", "DD.MM.YY", "D MMM YYYY", "MMM D, YYYY", "DD-MMM-YYYY", "YYYYMMDD",
    ]

    /// The one format every date in the column follows, given those that fit every date and the
    /// first 50 dates. Several that fit equally (no day above 12 tells DD/MM from MM/DD) is
    /// refused with one line saying which to choose, rather than a guess; none that fits leaves
    /// the default, whose errors name each line.
    static func dateFormat(among fitting: [DatePattern], firstDates dates: [String]) throws -> DatePattern? {
        guard fitting.count > 1 else { return fitting.first }
        // Formats that read every date the same way are one answer (DD/MM/YY and DD/MM/YYYY never both fit).
        let readings = Dictionary(grouping: fitting) { pattern in dates.prefix(50).map { pattern.date(from: $0)! } }
        guard readings.count > 1 else { return fitting.first }
        let names = fitting.map(\.description)
        throw CofferError(
            .invalidInput,
            "The dates could be \(names.joined(separator: " or ")): no day is above 12, so the file does not say which.",
            kind: "dateFormat", candidates: names)
    }

    /// The layout for a statement with these titles (empty without a header); `detectDates`
    /// finds the format of the dates in a column, when none is given. A column that cannot be
    /// found is refused, naming the flag that gives it (`kind` "column", the file's columns as
    /// candidates).
    func layout(titles: [String], detectDates: (Int) throws -> DatePattern?) throws -> StatementLayout {
        let statement = StatementTitles(titles: titles)
        func resolve(_ spec: String?, flag: String, guesses: [String]) throws -> Int? {
            if let spec { return try statement.column(spec, flag: flag) }
            return statement.guessColumn(guesses)
        }
        func missing(_ what: String, flag: String) -> CofferError {
            CofferError(
                .invalidInput, "Say which column holds the \(what): --\(flag) TITLE or NUMBER.", kind: "column",
                candidates: statement.describedTitles)
        }
        guard let date = try resolve(date, flag: "date-column", guesses: Self.dateTitles) else {
            throw missing("date", flag: "date-column")
        }
        let amounts: StatementLayout.Amounts
        if let debit, let credit {
            amounts = .debitCredit(
                debit: try statement.column(debit, flag: "debit-column"),
                credit: try statement.column(credit, flag: "credit-column"))
        } else if let column = try resolve(
            amount, flag: "amount-column", guesses: destination == .updates ? Self.balanceTitles : Self.amountTitles)
        {
            amounts = .signed(column)
        } else if destination == .transactions, let debit = statement.guessColumn(Self.debitTitles),
            let credit = statement.guessColumn(Self.creditTitles)
        {
            amounts = .debitCredit(debit: debit, credit: credit)
        } else {
            throw missing(destination == .updates ? "balance" : "amount", flag: "amount-column")
        }
        // A balance's note comes only from a column named for it: a payee is not why a balance changed.
        let payee = try resolve(payee, flag: "payee-column", guesses: destination == .updates ? [] : Self.payeeTitles)
        var description = try resolve(
            description, flag: "description-column",
            guesses: destination == .updates ? [] : Self.descriptionTitles)
        if self.description == nil, description == payee {
            // The payee's column was the only description found: look for another.
            description = StatementFile.guessColumn(
                Self.descriptionTitles.filter { !Self.payeeTitles.contains($0) },
                in: statement.titles.enumerated().map { $0.offset == payee ? "" : $0.element })
        }
        var balance: Int?
        if destination == .transactions {
            balance = try resolve(self.balance, flag: "balance-column", guesses: Self.runningBalanceTitles)
            if case .signed(let column) = amounts, column == balance { balance = nil }
        }
        let pattern =
            try dateFormat.map { try DatePattern($0) } ?? detectDates(date) ?? .iso
        return StatementLayout(
            date: date, amounts: amounts, description: description, payee: payee, balance: balance,
            titles: statement.titles, datePattern: pattern, decimalComma: decimalComma, negate: negate)
    }
}

/// Fuzzing's way in to the statement importers: what an import does with a file before it
/// opens the vault, under one of a few column settings chosen by the first byte, or (the last
/// two choices) an hledger rules file, then a zero byte, then the statement it reads; or a
/// journal for `import ledger`.
package func fuzzStatementImport(_ bytes: [UInt8]) {
    guard let first = bytes.first else { return }
    let choice = Int(first) % (fuzzingColumnSets.count + 2)
    if choice == fuzzingColumnSets.count { return fuzzHledgerRules(bytes.dropFirst()) }
    if choice == fuzzingColumnSets.count + 1 {
        if let text = String(validating: bytes.dropFirst(), as: UTF8.self) {
            _ = try? Journal(reading: text, currency: .gbp)
        }
        return
    }
    let (columns, skipRows, hasHeader) = fuzzingColumnSets[choice]
    guard
        let statement = try? BankStatement(
            data: Data(bytes.dropFirst()), name: "input", delimiter: nil, skipLines: skipRows, hasHeader: hasHeader,
            encoding: .utf8, detectHeader: hasHeader && skipRows == 0, columns: columns, currencyColumn: nil)
    else { return }
    statement.forEachRecord { record in
        _ = try? statement.layout.row(record.fields, line: record.line, rowHash: record.digest, currency: .gbp)
    }
}

private func fuzzHledgerRules(_ bytes: ArraySlice<UInt8>) {
    let parts = bytes.split(separator: 0, maxSplits: 1, omittingEmptySubsequences: false)
    guard parts.count == 2, let text = String(validating: parts[0], as: UTF8.self),
        let rules = try? HledgerRules(text)
    else { return }
    let profile = rules.profile
    let columns = StatementColumns(
        destination: .transactions, date: profile.dateColumn, amount: profile.amountColumn,
        debit: profile.debitColumn, credit: profile.creditColumn, balance: profile.balanceColumn,
        dateFormat: profile.dateFormat, decimalComma: profile.decimalComma)
    guard
        let statement = try? BankStatement(
            data: Data(parts[1]), name: "input",
            delimiter: profile.delimiter.flatMap { $0.count == 1 ? $0.first : nil }, skipLines: profile.skipRows ?? 0,
            hasHeader: false, encoding: profile.encoding, detectHeader: false, columns: columns,
            currencyColumn: rules.currencyColumn)
    else { return }
    let reader = rules.reader()
    statement.forEachRecord { record in
        guard case .keep = reader(record.fields) else { return }
        _ = try? statement.layout.row(record.fields, line: record.line, rowHash: record.digest, currency: .gbp)
    }
}

private let fuzzingColumnSets: [(StatementColumns, Int, Bool)] = [
    (StatementColumns(destination: .transactions), 0, true),
    (StatementColumns(destination: .updates), 0, true),
    (StatementColumns(destination: .transactions, dateFormat: "DD/MM/YYYY", decimalComma: true), 0, true),
    (StatementColumns(destination: .transactions, date: "1", amount: "2"), 0, false),
    (StatementColumns(destination: .transactions, dateFormat: "%e %b %Y"), 1, true),
]
