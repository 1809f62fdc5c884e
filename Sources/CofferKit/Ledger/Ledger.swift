import FinanceCore
import Foundation
import VaultStore

/// The unit of work: an open vault seen as finance data. Decodes every record once; writes each
/// change together with a change-log entry that holds the previous payload of every record it
/// touches, so `undo` restores them exactly and `changes` lists what changed when. Every rule
/// that spans records (unique names, cascades, guards, numbering) lives in its extensions
/// (`Ledger+Accounts`, `+Budget`, `+Invoices`, `+Settings`), so each front end gets the same ones.
public final class Ledger {
    public let vault: Vault
    public private(set) var settings: VaultSettings?
    /// The settings record's id, for rewriting it.
    public private(set) var settingsID: UUID?
    public private(set) var accounts: [Account] = []
    public private(set) var updates: [ValueUpdate] = []
    public private(set) var categoryRates: [UUID: CategoryRate] = [:]
    /// Oldest first.
    public private(set) var changes: [(id: UUID, entry: ChangeEntry)] = []
    /// Bank statement settings (`coffer import profile`), by name.
    public var importProfiles: [ImportProfile] { importProfilesByName.elements() }
    private var importProfilesByName = SortedOnFirstRead<ImportProfile>(\.name)
    /// Private free-text notes (`coffer note`), by title.
    public var notes: [Note] { notesByTitle.elements() }
    private var notesByTitle = SortedOnFirstRead<Note>(\.title)
    /// Rent, salary, subscriptions and retainers (`coffer recurring`), by name.
    public var recurringItems: [RecurringItem] { recurringItemsByName.elements() }
    private var recurringItemsByName = SortedOnFirstRead<RecurringItem>(\.name)
    /// What `redo` can make again, the next one last (the most recently undone).
    public private(set) var undoneChanges: [(id: UUID, undone: UndoneChange)] = []
    public private(set) var backupTargets: [UUID: BackupTarget] = [:]
    public private(set) var backupState: (id: UUID, state: BackupState)?
    public private(set) var budgetCategories: [BudgetCategory] = []
    public private(set) var incomeSources: [IncomeSource] = []
    public private(set) var transactions: [Transaction] = []
    /// Whether the vault holds any spending or income: also those not read when the vault was
    /// opened for a view (`LedgerView`).
    public var hasTransactions: Bool {
        readsPartially ? summaryRecord!.summary.transactions > 0 : !transactions.isEmpty
    }
    public private(set) var goals: [SavingsGoal] = []
    /// By name.
    public var clients: [Client] { clientsByName.elements() }
    private var clientsByName = SortedOnFirstRead<Client>(\.name)
    public private(set) var invoices: [Invoice] = []
    /// Whether the vault holds any invoice: also those not read when it was opened for a view.
    public var hasInvoices: Bool { !invoices.isEmpty || RecordGrouping.holds(.invoices, vault.groups) }
    public private(set) var invoiceCounter: (id: UUID, counter: InvoiceCounter)?
    /// Who sends the invoices (`coffer invoice sender`), once set.
    public private(set) var invoiceSenderRecord: (id: UUID, sender: InvoiceSender)?
    /// By name.
    public var ruleSets: [CategoryRuleSet] { ruleSetsByName.elements() }
    private var ruleSetsByName = SortedOnFirstRead<CategoryRuleSet>(\.name)
    /// This device's place in a sync folder (nil until `sync init` or `device join`).
    public private(set) var syncState: (id: UUID, state: SyncState)?
    public private(set) var syncIndex: (id: UUID, data: SyncIndexData)?
    /// Values that lost concurrent edits, oldest first.
    public private(set) var syncConflicts: [(id: UUID, conflict: SyncConflict)] = []
    /// What a view needs of the records it does not read (`LedgerSummary`), refreshed by every write.
    public internal(set) var summaryRecord: (id: UUID, summary: LedgerSummary)?
    /// The view the vault was opened for, if only part of it was read.
    let view: LedgerView?
    /// Whether the views were built from part of the vault and its summary: only when
    /// that record describes the vault's current commit (`Ledger.open(_:for:)`).
    public private(set) var readsPartially = false
    /// Every record by kind, in the vault's id order: what the views above are built from.
    var parts = Parts()

    public init(vault: Vault) throws {
        // A vault left holding part of itself (after a bulk load) is read whole again first.
        if vault.isPartial { _ = try vault.verify() }
        self.vault = vault
        self.view = nil
        vault.grouping = RecordGrouping.grouping
        try reload()
    }

    /// A ledger of a vault opened for `view` (`Ledger.open(_:for:)`).
    init(vault: Vault, view: LedgerView) throws {
        self.vault = vault
        self.view = vault.isPartial ? view : nil
        vault.grouping = RecordGrouping.grouping
        try reload()
    }

    /// Decodes every record read; for a view, the change log's entries are left as they are (a
    /// write from a view numbers its entry after the summary's, and a month's log can hold an
    /// import's list of a million records).
    func reload() throws {
        let skipping: RecordKind? = view == nil ? nil : .change
        install(try vault.withPayloads { try Parts.decoding($0, skipping: skipping) })
    }

    /// The most records a write touches for the ledger to patch its views rather than decode
    /// every record again (decoding on both cores measured faster than merging a larger batch
    /// in on one).
    static let smallWrite = 256

    /// The records after a small write: the ones it touched replaced in place, so a `coffer
    /// update` on a large vault stays quick. Nil for a large write, which reloads.
    func parts(after puts: [(UUID, FinanceRecord)], deletes: [UUID]) -> Parts? {
        guard puts.count + deletes.count <= Self.smallWrite else { return nil }
        var next = parts.removing(Set(puts.map(\.0) + deletes))
        // Of two puts of one id, the later wins, as in the vault.
        var last: [UUID: Int] = [:]
        for (index, put) in puts.enumerated() { last[put.0] = index }
        for (index, (id, record)) in puts.enumerated() where last[id] == index {
            next.add(id, record, keepingOrder: true)
        }
        return next
    }

    func install(_ parts: Parts) {
        self.parts = parts
        // The one place each record kind becomes its view (`RecordKind` is the list of kinds).
        let setting = parts.last(.settings) { if case .settings(let value) = $0 { value } else { nil } }
        settings = setting?.value
        settingsID = setting?.id
        accounts = sortedByName(
            parts.values(.account) { if case .account(let value) = $0 { value } else { nil } }.map(\.value), \.name)
        updates = parts.values(.update) { if case .update(let value) = $0 { value } else { nil } }.map(\.value)
        categoryRates = Dictionary(
            parts.values(.categoryRate) { if case .categoryRate(let value) = $0 { value } else { nil } }.map {
                ($0.id, $0.value)
            },
            uniquingKeysWith: { $1 })
        changes = parts.values(.change) { if case .change(let value) = $0 { value } else { nil } }.map {
            (id: $0.id, entry: $0.value)
        }
        // Sequence numbers are a Lamport clock (each change takes the highest seen plus one), so
        // changes merged from several devices sort causally; the ties are concurrent changes.
        .sorted {
            ($0.entry.sequence, $0.entry.timestamp, RecordID(uuid: $0.id))
                < ($1.entry.sequence, $1.entry.timestamp, RecordID(uuid: $1.id))
        }
        backupTargets = Dictionary(
            parts.values(.backupTarget) { if case .backupTarget(let value) = $0 { value } else { nil } }.map {
                ($0.id, $0.value)
            },
            uniquingKeysWith: { $1 })
        backupState = parts.last(.backupState) { if case .backupState(let value) = $0 { value } else { nil } }.map {
            (id: $0.id, state: $0.value)
        }
        let categories = parts.values(.budgetCategory) {
            if case .budgetCategory(let value) = $0 { value } else { nil }
        }.map(\.value)
        // A vault from before budgets shows the default categories it is given at its first change
        // (the same ids: a change that names one writes them first).
        budgetCategories = categories.isEmpty ? Self.defaultCategories : categories
        incomeSources = parts.values(.incomeSource) { if case .incomeSource(let value) = $0 { value } else { nil } }
            .map(\.value)
        transactions = parts.transactions
        goals = parts.values(.savingsGoal) { if case .savingsGoal(let value) = $0 { value } else { nil } }.map(\.value)
        clientsByName.set(parts.values(.client) { if case .client(let value) = $0 { value } else { nil } }.map(\.value))
        invoices = parts.values(.invoice) { if case .invoice(let value) = $0 { value } else { nil } }.map(\.value)
            .sorted { $0.number < $1.number }
        invoiceCounter = parts.last(.invoiceCounter) { if case .invoiceCounter(let value) = $0 { value } else { nil } }
            .map { (id: $0.id, counter: $0.value) }
        invoiceSenderRecord = parts.last(.invoiceSender) {
            if case .invoiceSender(let value) = $0 { value } else { nil }
        }.map { (id: $0.id, sender: $0.value) }
        syncState = parts.last(.syncState) { if case .syncState(let value) = $0 { value } else { nil } }.map {
            (id: $0.id, state: $0.value)
        }
        syncIndex = parts.last(.syncIndex) { if case .syncIndex(let value) = $0 { value } else { nil } }.map {
            (id: $0.id, data: $0.value)
        }
        importProfilesByName.set(
            parts.values(.importProfile) { if case .importProfile(let value) = $0 { value } else { nil } }.map(\.value))
        notesByTitle.set(parts.values(.note) { if case .note(let value) = $0 { value } else { nil } }.map(\.value))
        recurringItemsByName.set(
            parts.values(.recurring) { if case .recurring(let value) = $0 { value } else { nil } }.map(\.value))
        undoneChanges = parts.values(.undoneChange) { if case .undoneChange(let value) = $0 { value } else { nil } }
            .map { (id: $0.id, undone: $0.value) }.sorted {
                ($0.undone.order, RecordID(uuid: $0.id)) < ($1.undone.order, RecordID(uuid: $1.id))
            }
        syncConflicts = parts.values(.syncConflict) { if case .syncConflict(let value) = $0 { value } else { nil } }
            .map { (id: $0.id, conflict: $0.value) }.sorted {
                ($0.conflict.detected, RecordID(uuid: $0.id)) < ($1.conflict.detected, RecordID(uuid: $1.id))
            }
        ruleSetsByName.set(
            parts.values(.categoryRuleSet) { if case .categoryRuleSet(let value) = $0 { value } else { nil } }.map(
                \.value))
        summaryRecord = parts.last(.summary) { if case .summary(let value) = $0 { value } else { nil } }.map {
            (id: $0.id, summary: $0.value)
        }
        movements = Self.movements(of: transactions, invoices)
        // Read for a view: the month ends up to its month come from the summary, and each
        // account starts from its value then; what the records read say before it is counted there.
        let earlier: NetWorth.Earlier? =
            if let view, let summary = summaryRecord?.summary, isCurrent(summary) {
                NetWorth.Earlier(monthEnds: summary.monthEnds, through: view.earlierThrough)
            } else {
                nil
            }
        readsPartially = earlier != nil
        var values = updates, moves = movements
        // A view from the calendar's first month has no month before it to start from.
        if let earlier, earlier.through >= CalendarDate.firstMonthNumber {
            let cutoff = CalendarDate.endOfMonth(number: earlier.through)
            values =
                values.filter { $0.date > cutoff }
                + earlier.figures(atEndOf: earlier.through).values.map {
                    ValueUpdate(id: $0.key, accountID: $0.key, date: cutoff, amount: $0.value, sequence: 0)
                }
            moves = moves.filter { $0.date > cutoff }
        }
        portfolio = Self.portfolio(
            currency: currency, accounts: accounts, updates: values, movements: moves,
            categoryRates: Array(categoryRates.values))
        netWorth = NetWorth(
            portfolio: portfolio, invoices: invoices, includeReceivables: settings?.includeReceivables ?? true,
            earlier: earlier)
        budget = Budget(sources: incomeSources, categories: budgetCategories, goals: goals, transactions: transactions)
    }

    /// Money moved in and out of accounts by `transactions` and invoice payments.
    static func movements(of transactions: [Transaction], _ invoices: [Invoice]) -> [AccountMovement] {
        transactions.flatMap { transaction in
            transaction.flow?.movements(of: transaction.amount, on: transaction.date, source: transaction.id) ?? []
        }
            + invoices.flatMap { invoice in
                invoice.payments.flatMap { $0.flow?.movements(of: $0.amount, on: $0.date, source: invoice.id) ?? [] }
            }
    }

    /// Accounts with their values: each update, and each flow's effect on the value after it.
    static func portfolio(
        currency: Currency, accounts: [Account], updates: [ValueUpdate], movements: [AccountMovement],
        categoryRates: [CategoryRate]
    ) -> Portfolio {
        Portfolio(
            currency: currency, accounts: accounts,
            updates: AccountMovement.values(
                updates: updates, movements: movements,
                kinds: Dictionary(accounts.map { ($0.id, $0.kind) }, uniquingKeysWith: { $1 })),
            categoryRates: Dictionary(categoryRates.map { ($0.category, $0.rate) }, uniquingKeysWith: { $1 }))
    }

    /// The records of a vault by kind, each kind in the vault's id order. Transactions, most of
    /// a vault, are kept decoded in their own array; every other kind as its records. Slices of
    /// the vault are decoded on all cores, each into its own `Parts`, then joined in order.
    struct Parts {
        private(set) var records: [RecordKind: [(id: UUID, record: FinanceRecord)]] = [:]
        var transactions: [Transaction] = []

        /// The records of `kind` as `extract` reads them, in id order.
        func values<T>(_ kind: RecordKind, _ extract: (FinanceRecord) -> T?) -> [(id: UUID, value: T)] {
            (records[kind] ?? []).compactMap { item in extract(item.record).map { (item.id, $0) } }
        }

        /// A kind held once per vault: its record with the highest id, as a full decode finds it.
        func last<T>(_ kind: RecordKind, _ extract: (FinanceRecord) -> T?) -> (id: UUID, value: T)? {
            (records[kind]?.last).flatMap { item in extract(item.record).map { (item.id, $0) } }
        }

        /// The summary replaced by `summary` (the one record of its kind).
        mutating func replaceSummary(_ id: UUID, _ summary: LedgerSummary) {
            records[.summary] = [(id, .summary(summary))]
        }

        /// Adds a record at the end, or with `keepingOrder` at its place in id order.
        mutating func add(_ id: UUID, _ record: FinanceRecord, keepingOrder: Bool = false) {
            func put<T>(_ item: T, _ array: inout [T], _ idOf: (T) -> UUID) {
                guard keepingOrder else { return array.append(item) }
                let key = RecordID(uuid: id)
                var low = 0, high = array.count
                while low < high {
                    let middle = (low + high) / 2
                    if RecordID(uuid: idOf(array[middle])) < key { low = middle + 1 } else { high = middle }
                }
                array.insert(item, at: low)
            }
            if case .transaction(let transaction) = record { return put(transaction, &transactions, \.id) }
            put((id, record), &records[record.kind, default: []], \.id)
        }

        /// These parts without the records `ids` names.
        func removing(_ ids: Set<UUID>) -> Parts {
            var kept = self
            kept.records = records.mapValues { $0.filter { !ids.contains($0.id) } }
            kept.transactions.removeAll { ids.contains($0.id) }
            return kept
        }

        mutating func append(_ other: Parts) {
            for (kind, items) in other.records { records[kind, default: []] += items }
            transactions += other.transactions
        }

        static func decoding(_ records: PayloadView, skipping: RecordKind? = nil) throws -> Parts {
            let chunkSize = 4096
            let chunks = max(1, (records.count + chunkSize - 1) / chunkSize)
            @Sendable func range(_ chunk: Int) -> Range<Int> {
                min(records.count, chunk * chunkSize)..<min(records.count, (chunk + 1) * chunkSize)
            }
            // Transactions, most of a vault, are decoded straight into their final array (each
            // chunk into its own stretch of it), so a million of them never sit in memory twice.
            var slots = [Int](repeating: 0, count: chunks + 1)
            for chunk in 0..<chunks {
                slots[chunk + 1] =
                    slots[chunk]
                    + range(chunk).reduce(0) { $0 + (RecordCodec.isTransaction(records.payload(at: $1)) ? 1 : 0) }
            }
            let firstSlot = slots
            var slices = [Parts](repeating: Parts(), count: chunks)
            var failures = [(RecordID, FinanceError)?](repeating: nil, count: chunks)
            var decodedCount = [Int](repeating: 0, count: chunks)
            var failure: (RecordID, FinanceError)?
            let transactions = [Transaction](unsafeUninitializedCapacity: firstSlot[chunks]) { buffer, initialized in
                slices.withUnsafeMutableBufferPointer { output in
                    failures.withUnsafeMutableBufferPointer { failed in
                        decodedCount.withUnsafeMutableBufferPointer { counted in
                            // Each chunk writes only its own slots.
                            nonisolated(unsafe) let output = output, failed = failed, counted = counted, buffer = buffer
                            DispatchQueue.concurrentPerform(iterations: chunks) { chunk in
                                var parts = Parts()
                                for index in range(chunk) {
                                    if let skipping, records.payload(at: index).first == skipping.rawValue { continue }
                                    let id = records.id(at: index).uuid
                                    do {
                                        let record = try RecordCodec.decode(records.payload(at: index), id: id)
                                        if case .transaction(let transaction) = record {
                                            (buffer.baseAddress! + firstSlot[chunk] + counted[chunk]).initialize(
                                                to: transaction)
                                            counted[chunk] += 1
                                        } else {
                                            parts.add(id, record)
                                        }
                                    } catch {
                                        failed[chunk] = (
                                            records.id(at: index),
                                            error as? FinanceError ?? FinanceError(.invalidRecord, "unreadable")
                                        )
                                        return
                                    }
                                }
                                output[chunk] = parts
                            }
                        }
                    }
                }
                failure = failures.lazy.compactMap { $0 }.first
                guard failure == nil else {
                    for chunk in 0..<chunks {
                        (buffer.baseAddress! + firstSlot[chunk]).deinitialize(count: decodedCount[chunk])
                    }
                    initialized = 0
                    return
                }
                initialized = firstSlot[chunks]
            }
            if let (id, error) = failure {
                throw CofferError(.damaged, "Record \(id.hex) cannot be read: \(error.errorDescription ?? "")")
            }
            var joined = Parts()
            joined.transactions = transactions
            for index in slices.indices {
                joined.append(slices[index])
                slices[index] = Parts()
            }
            return joined
        }
    }

    public var currency: Currency { settings?.currency ?? .gbp }

    /// Net-worth and budget views, built once per reload rather than on every use.
    public private(set) var portfolio = Portfolio(currency: .gbp, accounts: [], updates: [])
    public private(set) var budget = Budget(sources: [], categories: [], goals: [], transactions: [])
    /// Net worth as every report gives it: accounts, plus receivables unless settings leave them out.
    public private(set) var netWorth = NetWorth(
        portfolio: Portfolio(currency: .gbp, accounts: [], updates: []), invoices: [], includeReceivables: true)

    /// In the vault's id order, as they are read back once written.
    static let defaultCategories = BudgetCategory.defaults().sorted {
        RecordID(uuid: $0.id) < RecordID(uuid: $1.id)
    }

    /// The design's default categories are part of a vault's setup: written with the vault, or
    /// on a vault from before budgets, outside the change log just before its first change (so
    /// reading never writes, and undo never takes them away).
    func seedDefaultCategoriesBeforeFirstChange() throws {
        guard parts.records[.budgetCategory]?.isEmpty ?? true else { return }
        try writeWithoutHistory(Self.defaultCategories.map { ($0.id, .budgetCategory($0)) })
    }

    /// After every transaction's (those not read too, when the vault was read for a view).
    public var nextTransactionSequence: UInt64 {
        max(transactions.map(\.sequence).max() ?? 0, readsPartially ? summaryRecord!.summary.lastTransaction : 0) + 1
    }

    /// Money moved in and out of accounts by transactions and invoice payments (`AccountFlow`).
    public private(set) var movements: [AccountMovement] = []

    /// The next entry-order number for a value update or a flow (they share one counter, so a
    /// value typed after a flow holds it and one typed before is moved by it).
    public var nextUpdateSequence: UInt64 {
        max(
            updates.map(\.sequence).max() ?? 0, movements.map(\.order).max() ?? 0,
            readsPartially ? summaryRecord!.summary.lastValueOrder : 0) + 1
    }

    /// Writes `puts` and `deletes` and a change-log entry describing them, in one transaction.
    /// A new change forgets what could be redone (as every editor does): redoing an old change
    /// on top of a new one would mix two histories.
    public func commit(_ summary: String, puts: [(UUID, FinanceRecord)] = [], deletes: [UUID] = [], now: Date = Date())
        throws
    {
        for (_, record) in puts { try record.checkText() }
        try seedDefaultCategoriesBeforeFirstChange()
        let touched = puts.map(\.0) + deletes
        let entry = ChangeEntry(
            // After any entry written with it (a merge brings other files' entries), so undo takes this first.
            sequence: max(
                changes.last?.entry.sequence ?? 0, readsPartially ? summaryRecord!.summary.lastChange : 0,
                puts.compactMap { if case .change(let entry) = $0.1 { entry.sequence } else { nil } }.max() ?? 0) + 1,
            timestamp: Int64(now.timeIntervalSince1970),
            summary: summary,
            before: touched.map {
                .init(recordID: $0, payload: vault.record(RecordID(uuid: $0)).map { Array($0.payload) })
            })
        let forgotten = undoneChanges.map(\.id)
        var recordChanges: [RecordChange] = puts.map { .put(RecordID(uuid: $0.0), Data(RecordCodec.encode($0.1))) }
        recordChanges += (deletes + forgotten).map { .delete(RecordID(uuid: $0)) }
        let changeID = RecordIDs.next()
        recordChanges.append(.put(RecordID(uuid: changeID), Data(RecordCodec.encode(.change(entry)))))
        try write(recordChanges, puts: puts + [(changeID, .change(entry))], deletes: deletes + forgotten)
    }

    /// Writes records without a change-log entry: setup made with the vault, and bookkeeping undo
    /// must never take back (the invoice counter, backup state).
    package func writeWithoutHistory(_ puts: [(UUID, FinanceRecord)]) throws {
        for (_, record) in puts { try record.checkText() }
        try write(puts.map { .put(RecordID(uuid: $0.0), Data(RecordCodec.encode($0.1))) }, puts: puts, deletes: [])
    }

    /// Writes changes made elsewhere (merged from a sync folder) and bookkeeping, without a
    /// change-log entry: `puts` and `deletes` are the same writes, decoded, for the views.
    package func applyWithoutHistory(_ changes: [RecordChange], puts: [(UUID, FinanceRecord)], deletes: [UUID]) throws {
        try write(changes, puts: puts, deletes: deletes)
    }

    /// Reverts the most recent change: every record it touched goes back to its previous
    /// payload (or away, if the change created it), and its log entry is removed. The records as
    /// the change left them are kept (locally) so that `redo` can make it again.
    @discardableResult
    public func undo() throws -> ChangeEntry? {
        guard let last = changes.last else { return nil }
        let undone = UndoneChange(
            change: last.entry, order: (undoneChanges.last?.undone.order ?? 0) + 1,
            after: last.entry.before.map {
                .init(
                    recordID: $0.recordID, payload: vault.record(RecordID(uuid: $0.recordID)).map { Array($0.payload) })
            })
        try replace(with: last.entry.before, removing: last.id, adding: (RecordIDs.next(), .undoneChange(undone)))
        return last.entry
    }

    /// Makes the most recently undone change again, with its log entry, so `undo` can take it back
    /// once more. Refused when one of its records changed since the undo (a sync brought a change,
    /// say): redoing would overwrite that.
    @discardableResult
    public func redo() throws -> ChangeEntry? {
        guard let last = undoneChanges.last else { return nil }
        for before in last.undone.change.before
        where vault.record(RecordID(uuid: before.recordID)).map({ Array($0.payload) }) != before.payload {
            throw CofferError(
                .conflict,
                "'\(last.undone.change.summary)' cannot be redone: a record it touched has changed since the undo.")
        }
        let entry = ChangeEntry(
            sequence: (changes.last?.entry.sequence ?? 0) + 1, timestamp: last.undone.change.timestamp,
            summary: last.undone.change.summary, before: last.undone.change.before)
        try replace(with: last.undone.after, removing: last.id, adding: (RecordIDs.next(), .change(entry)))
        return entry
    }

    /// Puts each record back to `payloads` (deleting those that were absent), removes one log
    /// record and adds another, in one transaction: the shared step of undo and redo.
    private func replace(
        with payloads: [ChangeEntry.Before], removing logRecord: UUID, adding added: (UUID, FinanceRecord)
    ) throws {
        var recordChanges: [RecordChange] = payloads.map { record in
            let id = RecordID(uuid: record.recordID)
            if let payload = record.payload { return .put(id, Data(payload)) }
            return .delete(id)
        }
        recordChanges.append(.delete(RecordID(uuid: logRecord)))
        recordChanges.append(.put(RecordID(uuid: added.0), Data(RecordCodec.encode(added.1))))
        let restored = try payloads.compactMap { record in
            try record.payload.map { (record.recordID, try RecordCodec.decode($0, id: record.recordID)) }
        }
        try write(
            recordChanges, puts: restored + [added],
            deletes: payloads.filter { $0.payload == nil }.map(\.recordID) + [logRecord])
    }

    // MARK: Finding things by name

    /// Exact case-insensitive match, else the unique case-insensitive prefix of at least
    /// `minimumPrefix` characters; otherwise refused with the candidates, so nothing is written
    /// on a guess.
    static func match<Item>(
        _ wanted: String, among items: [Item], name: (Item) -> String, kind: String, minimumPrefix: Int = 1
    ) throws -> Item {
        let text = wanted.trimmingCharacters(in: .whitespaces)
        if let exact = items.first(where: { name($0).caseInsensitiveCompare(text) == .orderedSame }) { return exact }
        let matches = text.isEmpty ? [] : items.filter { name($0).lowercased().hasPrefix(text.lowercased()) }
        if !matches.isEmpty, text.count < minimumPrefix {
            throw CofferError(
                .ambiguous,
                "'\(wanted)' is too short to choose \(kind == "account" ? "an" : "a") \(kind) (type at least \(minimumPrefix) letters, or the whole name): it starts \(matches.map(name).joined(separator: ", ")).",
                kind: kind, candidates: matches.map(name))
        }
        if matches.count == 1 { return matches[0] }
        if matches.isEmpty {
            throw CofferError(
                .noMatch, "No \(kind) matches '\(wanted)'.", kind: kind,
                candidates: items.map(name).sorted { $0.localizedCaseInsensitiveCompare($1) == .orderedAscending },
                wanted: text)
        }
        let names = matches.map(name).sorted { $0.localizedCaseInsensitiveCompare($1) == .orderedAscending }
        throw CofferError(
            .ambiguous, "'\(wanted)' matches \(matches.count) \(plural(kind)): \(names.joined(separator: ", ")).",
            kind: kind, candidates: names)
    }

    /// The plural of a kind of record, as messages name them.
    package static func plural(_ kind: String) -> String {
        switch kind {
        case "category": "categories"
        case "income source": "income sources"
        default: kind.hasSuffix("s") ? kind + "es" : kind + "s"
        }
    }

    /// Refuses a second record of `kind` called `name` (names are unique, case-insensitively).
    static func requireUnique<Item>(
        _ name: String, among items: [Item], name itemName: (Item) -> String, kind: String,
        article: String = "A"
    ) throws {
        if let existing = items.first(where: { itemName($0).caseInsensitiveCompare(name) == .orderedSame }) {
            throw CofferError(
                .alreadyExists, "\(article) \(kind) called '\(itemName(existing))' already exists.", kind: kind,
                candidates: [itemName(existing)])
        }
    }

    func categoryRateRecord(for category: String) -> (UUID, CategoryRate)? {
        categoryRates.first { $0.value.category.caseInsensitiveCompare(category) == .orderedSame }.map {
            ($0.key, $0.value)
        }
    }
}

/// A view sorted by name the first time it is read. A locale-aware comparison costs about 20 µs
/// on Linux (ICU through CoreFoundation): sorting fifty clients took 3 ms of every command that
/// opened the ledger, while most commands never read them.
struct SortedOnFirstRead<Element> {
    private var stored: [Element] = []
    private var isSorted = true
    private let name: (Element) -> String

    init(_ name: @escaping (Element) -> String) { self.name = name }

    mutating func set(_ elements: [Element]) {
        stored = elements
        isSorted = elements.count < 2
    }

    mutating func elements() -> [Element] {
        if !isSorted {
            stored = sortedByName(stored, name)
            isSorted = true
        }
        return stored
    }
}

/// `elements` sorted by the `localizedCaseInsensitiveCompare` of their names, in about n such
/// comparisons rather than n log n: a lowercase order is tried first and checked pair by pair,
/// and kept only if every pair is strictly in order, which makes it the one sorted order.
/// Otherwise (a locale that orders some letters differently, two names it holds equal) the
/// full sort runs.
func sortedByName<Element>(_ elements: [Element], _ name: (Element) -> String) -> [Element] {
    guard elements.count > 1 else { return elements }
    let lowercased = elements.map { name($0).lowercased() }
    let guess = elements.indices.sorted { lowercased[$0] < lowercased[$1] }.map { elements[$0] }
    if zip(guess, guess.dropFirst()).allSatisfy({
        name($0.0).localizedCaseInsensitiveCompare(name($0.1)) == .orderedAscending
    }) {
        return guess
    }
    return elements.sorted { name($0).localizedCaseInsensitiveCompare(name($1)) == .orderedAscending }
}
