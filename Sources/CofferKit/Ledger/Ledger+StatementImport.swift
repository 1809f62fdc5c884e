import Dispatch
import FinanceCore
import Foundation
import Synchronization
import VaultCrypto
import VaultStore

/// A bank statement opened for import (`coffer import csv`): its text read once for the
/// header and once more, on every core, for what needs every line (the one date format that
/// fits every date, the currencies it names, which rows repeat an earlier one). Its records are
/// read a third time only as they are imported, so a statement is never held as rows.
public final class BankStatement: Sendable {
    private let text: StatementText
    /// The header's titles; empty without a header row.
    public let titles: [String]
    /// Lines before the header that were found to be a bank's preamble and skipped.
    public let detectedPreambleLines: Int
    public let layout: StatementLayout
    /// The values of its currency column (given, else found by its title), upper-cased, each
    /// once, in the order the file first names them.
    public let currencies: [String]
    /// Its records after the header, the empty ones aside.
    public let recordCount: Int

    /// Errors are `CofferError`s whose `kind` says what a front end can suggest: "encoding",
    /// "dateFormat" (the candidates are the formats that fit), "column" (the candidates are the
    /// file's columns).
    public init(
        data: Data, name: String, delimiter: Character?, skipLines: Int, hasHeader: Bool,
        encoding: StatementFile.Encoding, detectHeader: Bool, columns: StatementColumns, currencyColumn: Int?
    ) throws {
        let text = try StatementText(
            data: data, name: name, delimiter: delimiter, skipLines: skipLines, hasHeader: hasHeader,
            encoding: encoding, detectHeader: detectHeader)
        let titles = text.titles ?? []
        let currencyColumn = currencyColumn ?? StatementFile.guessColumn(StatementColumns.currencyTitles, in: titles)
        var survey: StatementText.Survey?
        layout = try columns.layout(titles: titles) { dateColumn in
            survey = try text.survey(dateColumn: dateColumn, currencyColumn: currencyColumn)
            return try StatementColumns.dateFormat(among: survey!.fittingDateFormats, firstDates: survey!.firstDates)
        }
        let surveyed = try survey ?? text.survey(dateColumn: nil, currencyColumn: currencyColumn)
        self.text = text
        self.titles = titles
        detectedPreambleLines = text.detectedPreambleLines
        currencies = surveyed.currencies
        recordCount = surveyed.records
    }

    /// Every record, in order, on this thread (for a statement of balances, which is short).
    public func forEachRecord(_ body: (StatementFile.Record) throws -> Void) rethrows {
        for piece in 0..<text.pieceCount { try text.forEachRecord(inPiece: piece, body) }
    }

    /// Each piece converted by `convert` on some core (this thread among them, rather than
    /// wait), at most a few pieces ahead, and handed to `consume` in the file's order.
    func mapPieces<Converted: Sendable>(
        _ convert: @escaping @Sendable (StatementText, Int) -> Converted, consume: (Converted) throws -> Void
    ) throws {
        let count = text.pieceCount, text = text
        var jobs: [SharedJob<Converted>] = []
        func submit() {
            let number = jobs.count
            jobs.append(SharedJob { convert(text, number) })
        }
        while jobs.count < min(count, Self.piecesAhead) { submit() }
        var next = 0
        // Pieces no core has started are not converted after a refusal.
        defer { for job in jobs[next...] { job.cancel() } }
        while next < count {
            let value = jobs[next].result(helpingWith: jobs[(next + 1)...])
            next += 1
            if jobs.count < count { submit() }
            try consume(value)
        }
    }

    /// The refusal of a statement with lines that cannot be read: `kind` "lines", the message
    /// of the one line, or of each of the first 50 as candidates, and a count past them.
    public static func unreadable(_ invalid: [(line: Int, message: String)]) -> CofferError {
        let shown =
            invalid.prefix(50).map(\.message) + (invalid.count > 50 ? ["and \(invalid.count - 50) more lines"] : [])
        return CofferError(
            .invalidInput, invalid.count == 1 ? invalid[0].message : "\(invalid.count) lines cannot be imported",
            kind: "lines", candidates: invalid.count == 1 ? [] : shown)
    }

    /// Pieces converted ahead of the one being imported: enough to keep every core busy.
    static let piecesAhead = 6
}

/// Work started on another core that the thread waiting for it may do itself: the first to
/// claim it runs it. Waiting for one job, a thread runs later ones no core has claimed, so no
/// core waits while there is work (the thread pool keeps one worker per idle core, and the
/// waiting thread's core is not idle).
private final class SharedJob<Value: Sendable>: @unchecked Sendable {
    private static var queued: Int { 0 }
    private static var running: Int { 1 }
    private static var finished: Int { 2 }
    private static var cancelled: Int { 3 }

    private let state = Atomic<Int>(SharedJob.queued)
    private let work: @Sendable () -> Value
    /// Written once by the thread that runs the job, read after `finished` is seen or `done` waited.
    private var value: Value?
    private let done = DispatchSemaphore(value: 0)

    init(_ work: @escaping @Sendable () -> Value) {
        self.work = work
        DispatchQueue.global(qos: .userInitiated).async { _ = self.runIfUnclaimed() }
    }

    /// Runs the job on this thread unless another has claimed it.
    private func runIfUnclaimed() -> Bool {
        guard state.compareExchange(expected: Self.queued, desired: Self.running, ordering: .acquiring).exchanged
        else { return false }
        value = work()
        state.store(Self.finished, ordering: .releasing)
        done.signal()
        return true
    }

    /// The job's value, running it here if no core has begun it, or else running `others`
    /// not yet begun while it finishes.
    func result(helpingWith others: ArraySlice<SharedJob>) -> Value {
        if !runIfUnclaimed() {
            for other in others where state.load(ordering: .acquiring) != Self.finished {
                _ = other.runIfUnclaimed()
            }
            if state.load(ordering: .acquiring) != Self.finished { done.wait() }
        }
        defer { value = nil }
        return value!
    }

    /// Leaves the job undone if no core has begun it.
    func cancel() {
        _ = state.compareExchange(expected: Self.queued, desired: Self.cancelled, ordering: .relaxed)
    }
}

/// New transactions on their way into a bulk load: checked and encoded a piece at a time on
/// other cores, then added to the pages in the order they came.
private final class TransactionSealing {
    private let writer: BulkRecordWriter
    private var batch: [Transaction] = []
    private var inFlight: [SharedJob<Result<EncodedRecords, any Error>>] = []

    /// Pieces encoding while this thread goes on.
    private static let piecesAhead = 2

    init(into writer: BulkRecordWriter) { self.writer = writer }

    func add(_ transaction: Transaction) { batch.append(transaction) }

    /// Sends the transactions added since the last call to be encoded.
    func submit() throws {
        guard !batch.isEmpty else { return }
        let transactions = batch
        batch = []
        batch.reserveCapacity(transactions.count)
        inFlight.append(
            SharedJob {
                Result {
                    var encoded = EncodedRecords()
                    for transaction in transactions { try encoded.append(transaction.id, .transaction(transaction)) }
                    return encoded
                }
            })
        while inFlight.count > Self.piecesAhead { try append() }
    }

    /// Adds every transaction to the pages.
    func finish() throws {
        try submit()
        while !inFlight.isEmpty { try append() }
    }

    /// Adds the oldest piece's transactions to the pages.
    private func append() throws {
        try inFlight.removeFirst().result(helpingWith: inFlight[...]).get().add(to: writer)
    }
}

/// What importing a statement as budget transactions did (or, in a dry run, would do).
public struct StatementImportResult: Sendable {
    public var added = 0, income = 0, duplicates = 0, uncategorised = 0
    public var zeroAmountLines = 0
    /// Lines an hledger rules file skips.
    public var skippedByRules = 0
    /// Lines that cannot be read (imported without them: `skipInvalid`).
    public var invalid: [(line: Int, message: String)] = []
    /// Each line's outcome, by line, when asked for (`reportLines`).
    public var lines: [StatementLine] = []
    /// The statement's closing balance, when it has a balance column: the balance after the
    /// last line in time, as a row whose amount is that balance.
    public var closingBalance: StatementLayout.Row?
    /// That balance as the account's new value, when the account is one of the vault's and does
    /// not have that value that day already.
    public var recordedBalance: ValueUpdate?
}

/// One line's outcome.
public struct StatementLine: Sendable {
    public enum Status: String, Sendable { case add, duplicate, zero, skipped, invalid }
    public let line: Int
    public let status: Status
    public var date: CalendarDate?
    /// Signed: money in is positive.
    public var amount: Money?
    public var description: String?
    /// Where an added line goes.
    public var category: String?
    public var message: String?
}

extension Ledger {
    /// How a statement is imported as budget transactions.
    public struct StatementImportOptions: Sendable {
        /// Labels the bank account, so lines are matched against earlier imports of it; its
        /// closing balance is recorded when it names one of the vault's accounts.
        public var account: String?
        public var rules: CategoryRuleSet?
        public var hledger: HledgerRules?
        /// Import the readable lines and report the rest, instead of importing nothing.
        public var skipInvalid = false
        public var dryRun = false
        /// Report every line's outcome (`StatementImportResult.lines`).
        public var reportLines = false
        /// Read the vault again after a large import (see `importStatement`).
        public var thenRead = true
        public var fileName: String

        public init(fileName: String) { self.fileName = fileName }
    }

    /// Imports a statement's lines as budget transactions, as one change: lines already in the
    /// vault (`StatementMatcher`) and zero amounts are skipped, `rules` (or an hledger rules
    /// file's `account2`) place the rest, and what nothing places is Uncategorised; a balance
    /// column's closing balance becomes the account's value. The lines are converted on every
    /// core and matched in order; a long statement is sealed into pages as it is read
    /// (`Vault.writeInBulk`), after which the ledger reads the vault again only with `thenRead`
    /// (without it this ledger describes the vault before the import and must not be used
    /// again). A line that cannot be read, without `skipInvalid`, or an `account2` that names
    /// nothing in the vault, writes nothing: `CofferError` with `kind` "lines" (the messages
    /// as candidates, at most 50, and a count past them) or "ledger account" (the names).
    public func importStatement(_ statement: BankStatement, _ options: StatementImportOptions, now: Date = Date())
        throws -> StatementImportResult
    {
        let label = try options.account.map { try Account.validatedName($0) }
        let balanceAccount = label.flatMap { try? account(named: $0) }
        var matcher = StatementMatcher(account: label ?? "", existing: transactions)
        // Digests are matched before facts across the whole file: a first pass when there is anything to match.
        if !matcher.isEmpty {
            var pass = StatementPass(ledger: self, statement: statement, options: options, label: label ?? "")
            try pass.run { row in
                _ = matcher.takeByDigest(row)
                return false
            }
            matcher.matchFactsAfterDigests()
        }
        var pass = StatementPass(ledger: self, statement: statement, options: options, label: label ?? "")
        // A long statement goes into a vault already in pages, in bulk: nothing is written before
        // the last line is read and found good.
        guard !options.dryRun, statement.recordCount > Self.smallWrite, !readsPartially, !vault.needsUpgrade,
            let current = summaryRecord, isCurrent(current.summary)
        else {
            var added: [(UUID, FinanceRecord)] = []
            try pass.run({ matcher.isDuplicate($0) }, adding: { added.append(($0.id, .transaction($0))) })
            var result = try pass.finish(balanceAccount: balanceAccount)
            if !options.dryRun, let write = result.puts(added) {
                try seedDefaultCategoriesBeforeFirstChange()
                try commit("Imported \(result.added) transactions from \(options.fileName)", puts: write, now: now)
            }
            result.lines.sort { $0.line < $1.line }
            return result
        }
        let seedsCategories = parts.records[.budgetCategory]?.isEmpty ?? true
        var result = StatementImportResult()
        let before = parts
        do {
            try vault.writeInBulk { writer in
                // Every record is new: undo deletes each.
                var created: [ChangeEntry.Before] = []
                created.reserveCapacity(statement.recordCount + 1)
                var lastSequence: UInt64 = 0
                // Encoded on other cores a piece at a time, and sealed here in order.
                let sealing = TransactionSealing(into: writer)
                try pass.run(
                    { matcher.isDuplicate($0) },
                    adding: { transaction in
                        sealing.add(transaction)
                        created.append(.init(recordID: transaction.id, payload: nil))
                        lastSequence = transaction.sequence
                    }, afterEachPiece: sealing.submit)
                try sealing.finish()
                result = try pass.finish(balanceAccount: balanceAccount)
                guard result.added > 0 || result.recordedBalance != nil else { throw NothingNew() }
                var next = current.summary
                if let closing = result.recordedBalance {
                    try FinanceRecord.update(closing).checkText()
                    try RecordCodec.encode(.update(closing)).withUnsafeBytes {
                        try writer.append(
                            RecordID(uuid: closing.id), group: RecordGrouping.group(of: .update(closing)), payload: $0)
                    }
                    created.append(.init(recordID: closing.id, payload: nil))
                    // A closing balance moves the month ends from its month.
                    if let withBalance = parts(after: [(closing.id, .update(closing))], deletes: []) {
                        next.lastValueOrder = max(next.lastValueOrder, closing.sequence)
                        install(withBalance)
                        next.monthEnds = try next.monthEnds.recomputed(
                            from: closing.date.monthNumber, portfolio: portfolio, invoices: invoices)
                    }
                }
                let entry = ChangeEntry(
                    sequence: max(changes.last?.entry.sequence ?? 0, current.summary.lastChange) + 1,
                    timestamp: Int64(now.timeIntervalSince1970),
                    summary: "Imported \(result.added) transactions from \(options.fileName)", before: created)
                // The summary raised as `write` raises it.
                next.lastChange = entry.sequence
                next.lastTransaction = max(next.lastTransaction, lastSequence)
                next.transactions += UInt64(result.added)
                next.commit = vault.commitCounter + 1
                var changes: [RecordChange] = undoneChanges.map { .delete(RecordID(uuid: $0.id)) }
                if seedsCategories {
                    // Setup, as when a vault is made: outside the change, so undo keeps them.
                    changes += Self.defaultCategories.map {
                        .put(RecordID(uuid: $0.id), Data(RecordCodec.encode(.budgetCategory($0))))
                    }
                }
                changes.append(.put(RecordID(uuid: RecordIDs.next()), Data(RecordCodec.encode(.change(entry)))))
                changes.append(.put(RecordID(uuid: current.id), Data(RecordCodec.encode(.summary(next)))))
                return changes
            }
        } catch is NothingNew {
            install(before)
            result.lines.sort { $0.line < $1.line }
            return result
        } catch {
            install(before)
            throw error
        }
        if options.thenRead {
            _ = try vault.verify()
            try reload()
        }
        result.lines.sort { $0.line < $1.line }
        return result
    }

    /// Ends a bulk load that turned out to add nothing, so it writes nothing.
    private struct NothingNew: Error {}

    /// The balance in `row` as a new value of `account`, or nil when the account already has
    /// that value that day. Refused for a closed account.
    func closingBalance(_ row: StatementLayout.Row, account: Account) throws -> ValueUpdate? {
        try planUpdateImport([row], account: account).added.first?.update
    }
}

/// One reading of a statement's lines for import: converted on every core, then, in order,
/// passed through the rules file, matched, placed and made into transactions.
private struct StatementPass {
    let ledger: Ledger
    let statement: BankStatement
    let options: Ledger.StatementImportOptions
    let label: String
    var result = StatementImportResult()
    /// Rows in the file's order, for the closing balance: the first and last, and the first
    /// and last with a balance.
    private var first, last, firstWithBalance, lastWithBalance: StatementLayout.Row?
    private var unknownAccounts = Set<String>()
    private var places: [String: Transaction.Target?] = [:]
    private var sequence: UInt64
    private var ids: [UUID] = []
    private var nextID = 0

    init(ledger: Ledger, statement: BankStatement, options: Ledger.StatementImportOptions, label: String) {
        self.ledger = ledger
        self.statement = statement
        self.options = options
        self.label = label
        sequence = ledger.nextTransactionSequence
    }

    /// A record as a worker leaves it: its row (cleaned, unless a rules file may still change
    /// its description) or why it cannot be read, and its fields when a rules file reads them.
    struct Converted: Sendable {
        let line: Int
        let fields: [String]?
        let row: StatementLayout.Row?
        let failure: String?
    }

    /// Reads every line; `isDuplicate` is asked about each readable line with a new amount, and
    /// `adding` given each new transaction.
    mutating func run(
        _ isDuplicate: (StatementLayout.Row) throws -> Bool, adding: ((Transaction) throws -> Void)? = nil,
        afterEachPiece: () throws -> Void = {}
    ) throws {
        let layout = statement.layout, currency = ledger.currency
        let keepsFields = options.hledger != nil
        let reader = options.hledger?.reader()
        let placer = options.rules?.placer()
        let categories = ledger.budgetCategories
        let total = statement.recordCount
        var done = 0, ended = false
        try statement.mapPieces({ text, number -> [Converted] in
            var converted: [Converted] = []
            text.forEachRecord(inPiece: number) { record in
                do {
                    let row = try layout.row(
                        record.fields, line: record.line, rowHash: record.digest, currency: currency)
                    converted.append(
                        Converted(
                            line: record.line, fields: keepsFields ? record.fields : nil,
                            row: keepsFields ? row : Ledger.cleaned(row), failure: nil))
                } catch {
                    converted.append(
                        Converted(
                            line: record.line, fields: keepsFields ? record.fields : nil, row: nil,
                            failure: (error as? FinanceError)?.errorDescription ?? "line \(record.line): unreadable"))
                }
            }
            return converted
        }) { (converted: [Converted]) in
            for item in converted {
                done += 1
                WorkProgress.report(.checking, done, of: total)
                if ended { continue }
                var row = item.row
                var account: String?
                if let reader, let fields = item.fields {
                    switch reader(fields) {
                    case .end:
                        ended = true
                        continue
                    case .skip:
                        result.skippedByRules += 1
                        report(StatementLine(line: item.line, status: .skipped))
                        continue
                    case .keep(let description, let account2):
                        account = account2
                        if let description, let read = row {
                            row = StatementLayout.Row(
                                line: read.line, date: read.date, amount: read.amount, description: description,
                                payee: read.payee, balance: read.balance, rowHash: read.rowHash)
                        }
                    }
                }
                let placedAt = account.flatMap { place(forLedgerAccount: $0) }
                guard let read = row else {
                    let message = item.failure ?? "line \(item.line): unreadable"
                    result.invalid.append((item.line, message))
                    report(StatementLine(line: item.line, status: .invalid, message: message))
                    continue
                }
                let cleaned = keepsFields ? Ledger.cleaned(read) : read
                if first == nil { first = cleaned }
                last = cleaned
                if cleaned.balance != nil {
                    if firstWithBalance == nil { firstWithBalance = cleaned }
                    lastWithBalance = cleaned
                }
                if cleaned.amount == .zero {
                    result.zeroAmountLines += 1
                    report(StatementLine(line: item.line, status: .zero))
                    continue
                }
                if try isDuplicate(cleaned) {
                    result.duplicates += 1
                    report(
                        StatementLine(
                            line: cleaned.line, status: .duplicate, date: cleaned.date, amount: cleaned.amount,
                            description: cleaned.description.isEmpty ? nil : cleaned.description))
                    continue
                }
                guard let adding else { continue }
                if nextID == ids.count { (ids, nextID) = (RecordIDs.next(count: 4096), 0) }
                let target =
                    placedAt.flatMap { $0.fits(cleaned.amount) ? $0 : nil }
                    ?? placer?(cleaned.description, cleaned.payee, cleaned.amount)
                let transaction = TransactionImportPlan.transaction(
                    for: cleaned, account: label, id: ids[nextID], sequence: sequence, placedAt: target,
                    categories: categories)
                sequence += 1
                nextID += 1
                result.added += 1
                if transaction.type == .income { result.income += 1 }
                if transaction.target == .uncategorised { result.uncategorised += 1 }
                try adding(transaction)
                if options.reportLines {
                    result.lines.append(
                        StatementLine(
                            line: item.line, status: .add, date: transaction.date, amount: transaction.signedAmount,
                            description: transaction.note, category: ledger.label(of: transaction)))
                }
            }
            try afterEachPiece()
        }
    }

    private mutating func report(_ line: StatementLine) {
        if options.reportLines { result.lines.append(line) }
    }

    /// Where an `account2` lands, each name looked up once; one that names nothing is kept to
    /// be refused at the end, all of them in one error.
    private mutating func place(forLedgerAccount name: String) -> Transaction.Target? {
        if let known = places[name] { return known }
        let found = ledger.place(forLedgerAccount: name)
        if found == nil { unknownAccounts.insert(name) }
        places[name] = found
        return found
    }

    /// The result, once every line is read: refused for unreadable lines (without
    /// `skipInvalid`) or `account2` names the vault does not have; with the closing balance.
    mutating func finish(balanceAccount: Account?) throws -> StatementImportResult {
        let invalid = result.invalid
        if !invalid.isEmpty && !options.skipInvalid { throw BankStatement.unreadable(invalid) }
        guard unknownAccounts.isEmpty else {
            throw CofferError(
                .noMatch, "The rules file places lines in accounts that name nothing in the vault.",
                kind: "ledger account", candidates: unknownAccounts.sorted())
        }
        // The last line in time: the file's last, unless it runs newest first.
        let newestFirst = first.map { first in last.map { first.date > $0.date } ?? false } ?? false
        if let closing = newestFirst ? firstWithBalance : lastWithBalance, let balance = closing.balance {
            result.closingBalance = StatementLayout.Row(
                line: closing.line, date: closing.date, amount: balance, description: "", rowHash: closing.rowHash)
        }
        if let balanceAccount, let closing = result.closingBalance {
            result.recordedBalance = try ledger.closingBalance(closing, account: balanceAccount)
        }
        return result
    }
}

extension StatementImportResult {
    /// What an ordinary write of the result puts: the new transactions and the recorded
    /// balance; nil when there is nothing to write.
    func puts(_ added: [(UUID, FinanceRecord)]) -> [(UUID, FinanceRecord)]? {
        guard !added.isEmpty || recordedBalance != nil else { return nil }
        return added + (recordedBalance.map { [($0.id, .update($0))] } ?? [])
    }
}
