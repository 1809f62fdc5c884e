import FinanceCore
import Foundation
import VaultStore

/// Every write refreshes the vault's summary (`LedgerSummary`) in its own transaction, so a view
/// that reads part of the vault (`LedgerView`) can take the rest from it.
extension Ledger {
    /// Whether `summary` describes the vault as it is: written with its current commit, every
    /// record placed by today's grouping.
    func isCurrent(_ summary: LedgerSummary) -> Bool {
        summary.commit == vault.commitCounter && summary.grouping == RecordGrouping.version
    }

    /// The first month whose month ends `record` counts in; nil when it counts in none. An
    /// account counts in every one (its kind decides which way flows move it).
    static func firstMonthCounted(_ record: FinanceRecord) -> Int? {
        switch record {
        case .update(let update): update.date.monthNumber
        case .transaction(let transaction) where transaction.flow != nil: transaction.date.monthNumber
        case .invoice(let invoice): invoice.eventDates.map(\.monthNumber).min()
        case .account: .min
        default: nil
        }
    }

    /// The summary's highest numbers, raised by what `puts` write.
    static func raising(_ summary: LedgerSummary, by puts: [(UUID, FinanceRecord)]) -> LedgerSummary {
        var raised = summary
        for (_, record) in puts {
            switch record {
            case .change(let entry): raised.lastChange = max(raised.lastChange, entry.sequence)
            case .update(let update): raised.lastValueOrder = max(raised.lastValueOrder, update.sequence)
            case .transaction(let transaction):
                raised.lastTransaction = max(raised.lastTransaction, transaction.sequence)
                if let flow = transaction.flow { raised.lastValueOrder = max(raised.lastValueOrder, flow.order) }
            case .invoice(let invoice):
                for order in invoice.payments.compactMap(\.flow?.order) {
                    raised.lastValueOrder = max(raised.lastValueOrder, order)
                }
            default: break
            }
        }
        return raised
    }

    /// Writes `changes` (`puts` and `deletes` are the same, decoded, for the views) and the
    /// refreshed summary in one transaction. A vault whose summary is missing or from an earlier
    /// grouping has its misplaced records put again with it, which moves them. A ledger read for
    /// a view writes only what its view read: records of the months it holds, and new ones.
    func write(_ changes: [RecordChange], puts: [(UUID, FinanceRecord)], deletes: [UUID]) throws {
        if vault.needsUpgrade { try vault.upgrade() }
        // Another process may commit between this ledger's reading and its write: the vault then
        // writes on top of what is on disk, and this ledger's views, which lack that commit, are
        // read again before they make anything (the summary it wrote then names a commit that is
        // not the file's, and is not used).
        var expected = vault.commitCounter + 1
        func readAgainIfAnotherProcessWrote() throws -> Bool {
            guard vault.commitCounter != expected else { return false }
            try reload()
            return true
        }
        let existing = summaryRecord
        let current = existing.flatMap { isCurrent($0.summary) ? $0.summary : nil }
        // A large write is followed by a reload: the summary is then made afresh, as cheaply as
        // working out what the write changed.
        let large = puts.count + deletes.count > Self.smallWrite
        // From which month the figures change: every month when there are none to keep.
        var start: Int? = current == nil || large ? .min : nil
        // Transactions written less those they replace or delete (the last put of an id counts).
        var transactionsAdded = 0
        if current != nil, !large {
            func widen(_ record: FinanceRecord?) {
                guard let record, let month = Self.firstMonthCounted(record) else { return }
                start = min(start ?? month, month)
            }
            var final: [UUID: FinanceRecord?] = [:]
            for (id, record) in puts { final[id] = record }
            for id in deletes { final[id] = .some(nil) }
            for (id, record) in final {
                let old = vault.record(RecordID(uuid: id)).flatMap {
                    try? RecordCodec.decode(Array($0.payload), id: id)
                }
                widen(old)
                widen(record)
                if case .transaction = old { transactionsAdded -= 1 }
                if case .transaction = record { transactionsAdded += 1 }
            }
        }
        if readsPartially, let view, (start ?? .max) <= view.earlierThrough || large {
            throw CofferError(
                .failed,
                "This change reaches records this command did not read; nothing was changed.")
        }
        let moved: [RecordChange] =
            existing?.summary.grouping == RecordGrouping.version
            ? []
            : vault.recordsOutsideTheirGroup().compactMap { id in vault.record(id).map { .put(id, $0.payload) } }
        let recordID = existing?.id ?? RecordIDs.next()
        func refreshed() throws -> RecordChange {
            var base: LedgerSummary
            if let current, !large {
                base = Self.raising(current, by: puts)
                base.transactions = UInt64(max(0, Int(current.transactions) + transactionsAdded))
            } else {
                // Made from the records, each number no lower than one written before.
                base = LedgerSummary(
                    commit: 0, grouping: RecordGrouping.version,
                    lastChange: max(self.changes.last?.entry.sequence ?? 0, current?.lastChange ?? 0),
                    lastValueOrder: max(nextUpdateSequence - 1, current?.lastValueOrder ?? 0),
                    lastTransaction: max(nextTransactionSequence - 1, current?.lastTransaction ?? 0),
                    transactions: UInt64(transactions.count), monthEnds: .empty)
            }
            var next = base
            next.commit = vault.commitCounter + 1
            next.grouping = RecordGrouping.version
            if let start {
                next.monthEnds = try base.monthEnds.recomputed(
                    from: start == .min ? nil : start, portfolio: portfolio, invoices: invoices)
            }
            summaryRecord = (recordID, next)
            return .put(RecordID(uuid: recordID), Data(RecordCodec.encode(.summary(next))))
        }
        if let next = parts(after: puts, deletes: deletes) {
            // The figures are of the records after the write: its views are built first.
            let before = parts
            install(next)
            do {
                try vault.apply(moved + changes + [try refreshed()])
            } catch {
                install(before)
                throw error
            }
            if try readAgainIfAnotherProcessWrote() { return }
        } else {
            try vault.apply(moved.isEmpty ? changes : moved + changes)
            try reload()
            // A second commit: were it cut off, the summary would name an earlier commit and not be used.
            expected = vault.commitCounter + 1
            try vault.apply([try refreshed()])
            if try readAgainIfAnotherProcessWrote() { return }
        }
        parts.replaceSummary(recordID, summaryRecord!.summary)
    }
}
