import ArgumentParser
import CofferKit
import FinanceCore
import Foundation

extension SearchKind: ExpressibleByArgument {
    /// `account` as well as `accounts`: either reads naturally after `--kind`.
    public init?(argument: String) {
        let word = argument.lowercased()
        guard let kind = Self(rawValue: word) ?? Self(rawValue: word + "s") else { return nil }
        self = kind
    }
}

/// `coffer search TEXT [--kind K]... [--limit N] [--json]`.
struct Search: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "search",
        abstract: "Find text in accounts, transactions, clients, invoices and notes, and say where it is.",
        discussion: """
            Case and accents are ignored ("cafe" finds "Café"). Transactions and invoices are listed \
            newest first, notes by their last edit, accounts and clients by name; at most --limit per kind. \
            No match is exit 0.
            """)
    @OptionGroup var options: VaultOptions
    @OptionGroup var report: ReportOptions
    @Argument(help: "The text to find (anywhere inside a field).") var text: String
    @Option(
        help: ArgumentHelp(
            "Only these kinds: accounts, transactions, clients, invoices, notes (repeatable).", valueName: "kind"))
    var kind: [SearchKind] = []
    @Option(help: ArgumentHelp("At most this many matches per kind (0 for all).", valueName: "n")) var limit = 50

    struct Report: Encodable {
        struct Hit: Encodable {
            let kind, id, title, field, snippet: String
            @NullEncoded var date: String?
            @NullEncoded var amount: String?
        }
        let query: String
        let total: Int
        let counts: [String: Int]
        let results: [Hit]
    }

    func run() throws {
        let query = try CommandContext.input { try TextQuery(text) }
        guard limit >= 0 else {
            throw CLIError(.invalidInput, "--limit is a number of matches, 0 or more: \(limit) is not.")
        }
        let ledger = try options.openLedger()
        let results = ledger.search(
            query, in: kind.isEmpty ? SearchKind.allCases : kind, limit: limit == 0 ? .max : limit)
        let currency = ledger.currency
        if report.json {
            return try Output.json(
                Report(
                    query: query.text, total: results.total,
                    counts: Dictionary(uniqueKeysWithValues: results.groups.map { ($0.kind.rawValue, $0.total) }),
                    results: results.groups.flatMap(\.hits).map {
                        .init(
                            kind: $0.kind.rawValue, id: $0.id, title: $0.title, field: $0.field, snippet: $0.snippet,
                            date: $0.date?.description, amount: $0.amount.map(currency.decimalString))
                    }))
        }
        guard results.total > 0 else {
            Output.line("No matches for '\(query.text)'.")
            return
        }
        let style = Style.current()
        for group in results.groups where group.total > 0 {
            let shown = group.hits.count < group.total ? ", \(group.hits.count) shown" : ""
            Output.line(style.bold("\(group.kind.rawValue.capitalized) (\(group.total)\(shown))"))
            // Columns: what, where it matched, the text around it, then the details (date, amount,
            // id); on a narrow screen the date and where it matched go first, the id stays whole
            // (the hints ask for it).
            let rows = group.hits.map { hit in
                [
                    hit.title, hit.field, hit.snippet, hit.date?.description ?? "",
                    hit.amount.map(currency.format) ?? "", hit.id == hit.title ? "" : hit.id,
                ]
            }
            Render.table(rows, rightAligned: [4], droppable: [3, 1], whole: [5]).forEach { Output.line($0) }
        }
        Output.advice("Next: coffer transaction list --text TEXT · coffer invoices --text TEXT")
    }
}

/// `--from/--to/--min/--max/--text` on `transaction list` and `invoices`: every bound inclusive,
/// sizes without a sign, the text found as `coffer search` finds it.
struct FilterOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Only from this date on, YYYY-MM-DD (inclusive).", valueName: "date")) var from: String?
    @Option(help: ArgumentHelp("Only up to this date, YYYY-MM-DD (inclusive).", valueName: "date")) var to: String?
    @Option(
        name: .customLong("min"), parsing: .unconditional,
        help: ArgumentHelp("Only amounts of at least this size, without a sign (inclusive).", valueName: "amount"))
    var minimum: String?
    @Option(
        name: .customLong("max"), parsing: .unconditional,
        help: ArgumentHelp("Only amounts of at most this size, without a sign (inclusive).", valueName: "amount"))
    var maximum: String?
    @Option(help: ArgumentHelp("Only records holding this text (as coffer search finds it).", valueName: "text"))
    var text: String?

    var isEmpty: Bool { from == nil && to == nil && minimum == nil && maximum == nil && text == nil }

    func resolve(_ ledger: Ledger) throws -> RecordFilter {
        func size(_ text: String?, _ flag: String) throws -> Money? {
            guard let text else { return nil }
            let amount = try CommandContext.input { try ledger.currency.parse(text) }
            guard !amount.isNegative else {
                throw CLIError(.invalidInput, "\(flag) is a size, without a sign: '\(text)' has one.")
            }
            return amount
        }
        let minimum = try size(minimum, "--min"), maximum = try size(maximum, "--max")
        return try CommandContext.input {
            try RecordFilter(
                from: try from.map { try CalendarDate(parsing: $0) }, to: try to.map { try CalendarDate(parsing: $0) },
                minimum: minimum, maximum: maximum, text: try text.map { try TextQuery($0) })
        }
    }
}
