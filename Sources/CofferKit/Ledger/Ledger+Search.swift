import FinanceCore
import Foundation

/// The kinds of record `search` reads, in the order it shows them.
public enum SearchKind: String, CaseIterable, Sendable {
    case accounts, transactions, clients, invoices, notes
}

/// One place a search text was found.
public struct SearchHit: Sendable {
    public let kind: SearchKind
    /// How commands name the record: an account's or client's name, a transaction's short id,
    /// an invoice's number.
    public let id: String
    /// What the record is, for a person: the account, the transaction's category, the client.
    public let title: String
    /// Which field matched: name, category, note, payee, description, source, goal, email…
    public let field: String
    /// The matched text with a little around it, on one line.
    public let snippet: String
    public let date: CalendarDate?
    public let amount: Money?
}

/// What a search found, kind by kind.
public struct SearchResults: Sendable {
    public struct Group: Sendable {
        public let kind: SearchKind
        /// Every match of this kind; `hits` holds at most the limit of them.
        public let total: Int
        public let hits: [SearchHit]
    }

    public let groups: [Group]
    public var total: Int { groups.reduce(0) { $0 + $1.total } }
}

/// Search and filters over the records already decoded in memory: nothing is read again from
/// the vault, so a search of 100k transactions costs a pass over strings.
extension Ledger {
    /// Finds `query` in the records of `kinds`, each group in a stable order (transactions and
    /// invoices newest first, accounts and clients by name), at most `limit` hits per kind.
    public func search(_ query: TextQuery, in kinds: [SearchKind] = SearchKind.allCases, limit: Int = .max)
        -> SearchResults
    {
        SearchResults(
            groups: Self.searchSources.filter { kinds.contains($0.kind) }.map { kind, find in
                let (total, hits) = find(self, query, limit)
                return .init(kind: kind, total: total, hits: hits)
            })
    }

    /// Each kind of record search reads, with what finds it: a new kind becomes searchable with
    /// one entry here (and a case of `SearchKind`).
    private static let searchSources:
        [(kind: SearchKind, find: @Sendable (Ledger, TextQuery, Int) -> (total: Int, hits: [SearchHit]))] = [
            (.accounts, { $0.accountHits($1, limit: $2) }),
            (.transactions, { $0.transactionHits($1, limit: $2) }),
            (.clients, { $0.clientHits($1, limit: $2) }),
            (.invoices, { $0.invoiceHits($1, limit: $2) }),
            (.notes, { $0.noteHits($1, limit: $2) }),
        ]

    /// A record's first field (in `fields`' order) holding the query.
    private static func firstMatch(_ query: TextQuery, in fields: [(String, String?)]) -> (
        field: String, snippet: String
    )? {
        for case (let field, let text?) in fields {
            if let range = query.range(in: text) { return (field, TextQuery.snippet(of: text, around: range)) }
        }
        return nil
    }

    private static func limited(_ hits: [SearchHit], _ limit: Int) -> (Int, [SearchHit]) {
        (hits.count, Array(hits.prefix(limit)))
    }

    private func accountHits(_ query: TextQuery, limit: Int) -> (Int, [SearchHit]) {
        var hits: [SearchHit] = []
        for account in accounts {
            if let (field, snippet) = Self.firstMatch(
                query, in: [("name", account.name), ("category", account.category)])
            {
                hits.append(
                    .init(
                        kind: .accounts, id: account.name, title: account.name, field: field, snippet: snippet,
                        date: nil, amount: nil))
            }
            // Why a value changed ("policy 12345", "annual statement"), newest first.
            for update in portfolio.updates(of: account).reversed() {
                guard let (field, snippet) = Self.firstMatch(query, in: [("value note", update.note)]) else { continue }
                hits.append(
                    .init(
                        kind: .accounts, id: account.name, title: account.name, field: field, snippet: snippet,
                        date: update.date, amount: update.amount))
            }
        }
        return Self.limited(hits, limit)
    }

    /// Which targets' names (category, income source, goal) hold the query, with the field and
    /// snippet: worked out once per search rather than once per transaction.
    private func matchingTargets(_ query: TextQuery) -> [Transaction.Target: (field: String, snippet: String)] {
        var found: [Transaction.Target: (field: String, snippet: String)] = [:]
        let names: [(Transaction.Target, String, String)] =
            budgetCategories.map { (.category($0.id), "category", $0.name) }
            + incomeSources.map { (.source($0.id), "source", $0.name) }
            + goals.map { (.goal($0.id), "goal", $0.name) } + [(.uncategorised, "category", Self.uncategorisedName)]
        for (target, field, name) in names {
            if let match = Self.firstMatch(query, in: [(field, name)]) { found[target] = match }
        }
        return found
    }

    /// Where a transaction holds the query: its note first (for a statement import, `PAYEE |
    /// DESCRIPTION`: the field says which half), then its category, source or goal.
    private static func match(
        _ transaction: Transaction, _ query: TextQuery,
        targets: [Transaction.Target: (field: String, snippet: String)]
    ) -> (field: String, snippet: String)? {
        if let note = transaction.note, let range = query.range(in: note) {
            var field = "note"
            if transaction.origin != nil, let separator = note.range(of: " | ") {
                field = range.lowerBound < separator.lowerBound ? "payee" : "description"
            }
            return (field, TextQuery.snippet(of: note, around: range))
        }
        return targets[transaction.target]
    }

    /// Whether `match` would find anything, without making its snippet.
    private static func matches(
        _ transaction: Transaction, _ query: TextQuery,
        targets: [Transaction.Target: (field: String, snippet: String)]
    ) -> Bool {
        transaction.note.map(query.matches) == true || (!targets.isEmpty && targets[transaction.target] != nil)
    }

    private func transactionHits(_ query: TextQuery, limit: Int) -> (Int, [SearchHit]) {
        let targets = matchingTargets(query)
        // Which transactions match, first; the snippets only for those shown.
        let all = transactions
        let found = all.indices.filter { Self.matches(all[$0], query, targets: targets) }
        let newestFirst = found.sorted {
            let (a, b) = (all[$0], all[$1])
            return (a.date, a.sequence) > (b.date, b.sequence)
        }
        return (
            found.count,
            newestFirst.prefix(limit).compactMap { index in
                let transaction = all[index]
                return Self.match(transaction, query, targets: targets).map {
                    SearchHit(
                        kind: .transactions, id: Self.shortID(transaction.id), title: label(of: transaction),
                        field: $0.field, snippet: $0.snippet, date: transaction.date, amount: transaction.signedAmount)
                }
            }
        )
    }

    private func clientHits(_ query: TextQuery, limit: Int) -> (Int, [SearchHit]) {
        Self.limited(
            clients.compactMap { client in
                Self.firstMatch(
                    query, in: [("name", client.name), ("email", client.email), ("address", client.address)]
                )
                .map {
                    SearchHit(
                        kind: .clients, id: client.name, title: client.name, field: $0.field,
                        snippet: $0.snippet, date: nil, amount: nil)
                }
            }, limit)
    }

    /// Client names by id, looked up once per search rather than once per invoice.
    private var clientNames: [UUID: String] {
        Dictionary(clients.map { ($0.id, $0.name) }, uniquingKeysWith: { first, _ in first })
    }

    /// An invoice's searchable fields, in the order a match is reported.
    private static func fields(of invoice: Invoice, clientNames: [UUID: String]) -> [(String, String?)] {
        [("reference", invoice.reference), ("client", clientNames[invoice.clientID])]
            + invoice.items.map { ("item", $0.description) } + [("notes", invoice.notes)]
    }

    private func invoiceHits(_ query: TextQuery, limit: Int) -> (Int, [SearchHit]) {
        let names = clientNames
        return Self.limited(
            invoices.reversed().compactMap { invoice in
                Self.firstMatch(query, in: Self.fields(of: invoice, clientNames: names)).map {
                    SearchHit(
                        kind: .invoices, id: invoice.reference, title: names[invoice.clientID] ?? "",
                        field: $0.field, snippet: $0.snippet, date: invoice.issued, amount: try? invoice.total())
                }
            }, limit)
    }

    /// Notes by title, then body ("where did I write my pension number"), newest edit first; the
    /// snippet is the text around the match, as for every kind.
    private func noteHits(_ query: TextQuery, limit: Int) -> (Int, [SearchHit]) {
        Self.limited(
            notes.sorted { $0.updated > $1.updated }.compactMap { note in
                Self.firstMatch(query, in: [("title", note.title), ("body", note.body)]).map {
                    SearchHit(
                        kind: .notes, id: note.title, title: note.title, field: $0.field, snippet: $0.snippet,
                        date: note.created, amount: nil)
                }
            }, limit)
    }

    // MARK: Filters

    /// The transactions within `filter`: dates, size, and its text found as `search` finds it.
    public func filtered(_ transactions: [Transaction], by filter: RecordFilter) -> [Transaction] {
        let targets = filter.text.map(matchingTargets) ?? [:]
        return transactions.filter { transaction in
            filter.admits(date: transaction.date, amount: transaction.amount)
                && filter.text.map { Self.matches(transaction, $0, targets: targets) } ?? true
        }
    }

    /// The invoices within `filter`: issued in its dates, totals in its range, its text in the
    /// reference, client, items or notes.
    public func filtered(_ invoices: [Invoice], by filter: RecordFilter) throws -> [Invoice] {
        let names = clientNames
        return try invoices.filter { invoice in
            try filter.admits(date: invoice.issued, amount: invoice.total())
                && filter.text.map { Self.firstMatch($0, in: Self.fields(of: invoice, clientNames: names)) != nil }
                    ?? true
        }
    }
}
