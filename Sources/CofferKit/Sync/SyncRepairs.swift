import FinanceCore
import Foundation
import VaultStore

/// The rules that span records, re-established after a merge: two devices can each keep a rule
/// that their writes together break (both create "Savings", both issue invoice 7, one deletes a
/// category the other spends in). Each repair is a pure function of the merged records (ties
/// broken by record id), so every device that makes it makes the same one, and it is written as
/// an ordinary change: in the log, undoable, published. Specs/sync-format.md §6 lists them.
enum SyncRepairs {
    /// Repairs what needs it and returns one line per repair.
    static func run(on ledger: Ledger, now: Date) throws -> [String] {
        var lines: [String] = []
        var puts: [UUID: FinanceRecord] = [:]

        // Names are unique per kind, case-insensitively: the record with the lowest id keeps it.
        // (Categories are unique within their type: `scope` keeps those apart.)
        func unique<Item>(
            _ items: [Item], kind: String, id: (Item) -> UUID, name: (Item) -> String,
            scope: (Item) -> String = { _ in "" },
            renamed: (Item, String) -> FinanceRecord
        ) {
            func key(_ item: Item, _ name: String) -> String { scope(item) + "\u{0}" + name.lowercased() }
            var taken = Set(items.map { key($0, name($0)) })
            let groups = Dictionary(grouping: items) { key($0, name($0)) }
            for (_, group) in groups.sorted(by: { $0.key < $1.key }) where group.count > 1 {
                for item in group.sorted(by: { RecordID(uuid: id($0)) < RecordID(uuid: id($1)) }).dropFirst() {
                    var number = 2
                    while taken.contains(key(item, "\(name(item)) (\(number))")) { number += 1 }
                    let newName = "\(name(item)) (\(number))"
                    taken.insert(key(item, newName))
                    puts[id(item)] = renamed(item, newName)
                    lines.append("Two devices each made \(kind) '\(name(item))': the later one is now '\(newName)'.")
                }
            }
        }
        unique(ledger.accounts, kind: "an account", id: \.id, name: \.name) {
            var account = $0
            account.name = $1
            return .account(account)
        }
        unique(ledger.budgetCategories, kind: "a category", id: \.id, name: \.name, scope: { "\($0.type)" }) {
            var category = $0
            category.name = $1
            return .budgetCategory(category)
        }
        unique(ledger.incomeSources, kind: "an income source", id: \.id, name: \.name) {
            var source = $0
            source.name = $1
            return .incomeSource(source)
        }
        unique(ledger.goals, kind: "a goal", id: \.id, name: \.name) {
            var goal = $0
            goal.name = $1
            return .savingsGoal(goal)
        }
        unique(ledger.clients, kind: "a client", id: \.id, name: \.name) {
            var client = $0
            client.name = $1
            return .client(client)
        }
        unique(ledger.ruleSets, kind: "a rule set", id: \.id, name: \.name) {
            var set = $0
            set.name = $1
            return .categoryRuleSet(set)
        }

        // A record deleted on one device while another pointed at it: the deleted record comes
        // back from the change log (the delete's entry holds it); failing that, transactions
        // become uncategorised, as an import with no rule leaves them.
        var restored: [UUID: FinanceRecord] = [:]
        func restore(_ id: UUID, kind: RecordKind) -> Bool {
            if restored[id] != nil { return true }
            for change in ledger.changes.reversed() {
                guard let before = change.entry.before.first(where: { $0.recordID == id }),
                    let payload = before.payload,
                    let record = try? RecordCodec.decode(payload, id: id), record.kind == kind
                else { continue }
                restored[id] = record
                return true
            }
            return false
        }
        let accountIDs = Set(ledger.accounts.map(\.id))
        for update in ledger.updates where !accountIDs.contains(update.accountID) {
            if restore(update.accountID, kind: .account) {
                lines.append("A value was recorded on another device for an account deleted here: the account is back.")
            }
        }
        let clientIDs = Set(ledger.clients.map(\.id))
        for invoice in ledger.invoices where !clientIDs.contains(invoice.clientID) {
            if restore(invoice.clientID, kind: .client) {
                lines.append(
                    "\(invoice.reference) was written on another device for a deleted client: the client is back.")
            }
        }
        let categoryIDs = Set(ledger.budgetCategories.map(\.id)), sourceIDs = Set(ledger.incomeSources.map(\.id))
        let goalIDs = Set(ledger.goals.map(\.id))
        for transaction in ledger.transactions {
            let (target, kind): (UUID?, RecordKind) =
                switch transaction.target {
                case .category(let id): (categoryIDs.contains(id) ? nil : id, .budgetCategory)
                case .source(let id): (sourceIDs.contains(id) ? nil : id, .incomeSource)
                case .goal(let id): (goalIDs.contains(id) ? nil : id, .savingsGoal)
                case .uncategorised: (nil, .transaction)
                }
            guard let target else { continue }
            if restore(target, kind: kind) {
                lines.append("A transaction was recorded on another device in something deleted here: it is back.")
            } else {
                var moved = transaction
                moved.target = .uncategorised
                puts[transaction.id] = .transaction(moved)
                lines.append("A transaction's category was deleted on another device: it is now uncategorised.")
            }
        }
        for (id, record) in restored { puts[id] = record }

        // A value recorded on or after an account's closing date, on another device: the value
        // stands and the account is open again.
        for account in ledger.accounts {
            guard let closed = account.closed,
                ledger.updates.contains(where: { $0.accountID == account.id && $0.date >= closed })
            else { continue }
            var reopened =
                (puts[account.id]).flatMap { if case .account(let value) = $0 { value } else { nil } } ?? account
            reopened.closed = nil
            puts[account.id] = .account(reopened)
            lines.append(
                "\(account.name) was closed on one device and given a later value on another: it is open again.")
        }

        // Invoice numbers are unique: of two with one number, the lower record id keeps it and
        // the other takes the next number free.
        var highest = max(ledger.invoices.map(\.number).max() ?? 0, ledger.invoiceCounter?.counter.lastNumber ?? 0)
        for (number, group) in Dictionary(grouping: ledger.invoices, by: \.number).sorted(by: { $0.key < $1.key })
        where group.count > 1 {
            for invoice in group.sorted(by: { RecordID(uuid: $0.id) < RecordID(uuid: $1.id) }).dropFirst() {
                highest += 1
                let renumbered = Invoice(
                    id: invoice.id, number: highest, clientID: invoice.clientID, items: invoice.items,
                    taxBasisPoints: invoice.taxBasisPoints, issued: invoice.issued, due: invoice.due,
                    notes: invoice.notes,
                    stored: invoice.stored, sentOn: invoice.sentOn, voidedOn: invoice.voidedOn,
                    payments: invoice.payments)
                puts[invoice.id] = .invoice(renumbered)
                lines.append(
                    "Two devices each issued invoice number \(number): the later one is now \(renumbered.reference).")
            }
        }

        if !puts.isEmpty {
            let summary =
                lines.count == 1 ? "After sync: \(lines[0])" : "After sync: \(lines.count) records repaired"
            try ledger.commit(
                summary,
                puts: puts.sorted { RecordID(uuid: $0.key) < RecordID(uuid: $1.key) }.map { ($0.key, $0.value) },
                now: now)
        }
        try repairInvoiceCounter(ledger, highest: highest)
        return lines
    }

    /// One invoice counter, never below the highest number issued: kept outside the log, as
    /// numbering always is. Two devices that created one each keep the lower id's.
    private static func repairInvoiceCounter(_ ledger: Ledger, highest: Int) throws {
        let counters = ledger.vault.records.compactMap { record -> (RecordID, InvoiceCounter)? in
            guard record.payload.first == RecordKind.invoiceCounter.rawValue,
                case .invoiceCounter(let counter)? = try? RecordCodec.decode(Array(record.payload), id: record.id.uuid)
            else { return nil }
            return (record.id, counter)
        }.sorted { $0.0 < $1.0 }
        guard let keep = counters.first else { return }
        let number = max(highest, counters.map(\.1.lastNumber).max() ?? 0)
        guard counters.count > 1 || keep.1.lastNumber < number else { return }
        let record = FinanceRecord.invoiceCounter(InvoiceCounter(lastNumber: number))
        var changes: [RecordChange] = [.put(keep.0, Data(RecordCodec.encode(record)))]
        changes += counters.dropFirst().map { .delete($0.0) }
        try ledger.applyWithoutHistory(
            changes, puts: [(keep.0.uuid, record)], deletes: counters.dropFirst().map { $0.0.uuid })
    }
}
