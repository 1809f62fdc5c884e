import Foundation
import VaultStore

/// What `sync status` shows: what waits in each direction, per device.
public struct SyncStatus: Sendable {
    public struct Device: Sendable {
        public let id: String
        public let name: String
        public let isThisDevice: Bool
        /// When it last published (its own clock), nil if never.
        public let lastHeard: Date?
        /// Its last change file applied here (for this device: the last it published).
        public let sequence: UInt64
        /// Its change files in the folder not yet merged here.
        public let filesToMerge: Int
    }

    public let folder: String
    public let keyGeneration: UInt32
    /// Set when another device replaced the vault's keys: the next sync takes them on.
    public let newerKeyGeneration: UInt32?
    /// Records written here since the last publish.
    public let localChanges: Int
    public let devices: [Device]
    /// Conflicts kept and not restored.
    public let openConflicts: Int
    /// Copies a sync tool made, ignored.
    public let copies: [String]
}

extension SyncService {
    /// Reads the folder and this device's state; writes nothing.
    public static func status(_ ledger: Ledger, folder named: URL? = nil, now: Date = Date()) throws -> SyncStatus {
        let (stored, located) = try syncFolder(of: ledger, named: named)
        let keys = SyncKeys(ledger.vault.backupKeys)
        let folder = SyncFolder(url: located.url, epoch: keys.generation)
        var listing = try folder.list()
        _ = screenKeys(&listing, keys: keys)
        var merge = SyncMerge(
            state: stored, index: SyncIndex(), keys: keys, listing: listing, now: now,
            stored: { _ in nil })
        merge.readEnrolments()
        let state = merge.state
        var devices = [
            SyncStatus.Device(
                id: state.device.hex, name: state.deviceName, isThisDevice: true,
                lastHeard: state.published == 0
                    ? nil : Date(timeIntervalSince1970: TimeInterval(state.clock >> 16) / 1000),
                sequence: state.published, filesToMerge: 0)
        ]
        let others = Set(state.devices.keys).union(listing.changes.keys).subtracting([state.device]).sorted()
        for id in others {
            let known = state.devices[id]
            let applied = known?.applied ?? 0
            devices.append(
                SyncStatus.Device(
                    id: id.hex, name: known?.name ?? "(not enrolled) \(id.short)", isThisDevice: false,
                    lastHeard: known.flatMap {
                        $0.lastHeard == 0 ? nil : Date(timeIntervalSince1970: TimeInterval($0.lastHeard))
                    },
                    sequence: applied, filesToMerge: listing.changes[id]?.keys.filter { $0 > applied }.count ?? 0))
        }
        return SyncStatus(
            folder: folder.url.path, keyGeneration: keys.generation,
            newerKeyGeneration: listing.keys.keys.max().flatMap { $0 > keys.generation ? $0 : nil },
            localChanges: localWrites(ledger, index: try index(of: ledger)).count, devices: devices,
            openConflicts: ledger.syncConflicts.filter { !$0.conflict.restored }.count, copies: listing.copies)
    }

    /// A kept conflict, described for a listing.
    public struct ConflictSummary: Sendable {
        /// 1-based, oldest first: what `restoreConflict` takes.
        public let number: Int
        public let record: String
        public let loser: String
        public let winner: String
        public let loserDevice: String
        public let winnerDevice: String
        public let loserTime: Date
        public let winnerTime: Date
        public let detected: Date
        public let restored: Bool
        /// What the lost value had that the kept one does not, field by field.
        public let fields: [FieldDifference]
    }

    public static func conflicts(_ ledger: Ledger) -> [ConflictSummary] {
        let state = ledger.syncState?.state
        func device(_ id: SyncDeviceID) -> String {
            id == state?.device ? (state?.deviceName ?? id.short) : state?.devices[id]?.name ?? id.short
        }
        var names: [UUID: String] = [:]
        for account in ledger.accounts { names[account.id] = account.name }
        for category in ledger.budgetCategories { names[category.id] = category.name }
        for source in ledger.incomeSources { names[source.id] = source.name }
        for goal in ledger.goals { names[goal.id] = goal.name }
        for client in ledger.clients { names[client.id] = client.name }
        return ledger.syncConflicts.enumerated().map { offset, entry in
            let conflict = entry.conflict
            let decode = { (payload: [UInt8]?) in payload.flatMap { try? RecordCodec.decode($0, id: conflict.record) } }
            let lost = decode(conflict.loser), kept = decode(conflict.winner)
            let record = lost ?? kept
            return ConflictSummary(
                number: offset + 1, record: record.map(describe) ?? "a deleted record",
                loser: conflict.loser == nil ? "deleted" : "edited",
                winner: conflict.winner == nil ? "deleted" : "edited",
                loserDevice: device(conflict.loserStamp.device), winnerDevice: device(conflict.winnerStamp.device),
                loserTime: conflict.loserStamp.date, winnerTime: conflict.winnerStamp.date,
                detected: Date(timeIntervalSince1970: TimeInterval(conflict.detected)), restored: conflict.restored,
                fields: (conflict.loser != nil && lost == nil) || (conflict.winner != nil && kept == nil)
                    ? []  // a value of a kind this version cannot read: nothing to compare
                    : RecordFields.differences(lost: lost, kept: kept, currency: ledger.currency, name: { names[$0] }))
        }
    }

    /// Puts a conflict's losing value back (or deletes the record, if the losing write was a
    /// delete), as an ordinary change: undoable, and published at the next sync.
    public static func restoreConflict(_ ledger: Ledger, number: Int, now: Date = Date()) throws -> ConflictSummary {
        let all = conflicts(ledger)
        guard number >= 1, number <= all.count else {
            throw CofferError(
                .noMatch, "There is no conflict #\(number) (there are \(all.count)).", kind: "conflict")
        }
        let (id, conflict) = ledger.syncConflicts[number - 1]
        guard !conflict.restored else {
            throw CofferError(.unchanged, "Conflict #\(number) was already restored.", kind: "conflict")
        }
        var marked = conflict
        marked.restored = true
        var puts: [(UUID, FinanceRecord)] = [(id, .syncConflict(marked))]
        var deletes: [UUID] = []
        if let loser = conflict.loser {
            puts.append((conflict.record, try RecordCodec.decode(loser, id: conflict.record)))
        } else if ledger.vault.record(RecordID(uuid: conflict.record)) != nil {
            deletes.append(conflict.record)
        }
        let summary = all[number - 1]
        try ledger.commit(
            "Restored \(summary.record) as \(summary.loserDevice) had it", puts: puts, deletes: deletes, now: now)
        return summary
    }

    /// "account 'Savings'": what a record is, in a person's words.
    static func describe(_ record: FinanceRecord) -> String {
        switch record {
        case .settings: "the settings"
        case .account(let value): "account '\(value.name)'"
        case .update(let value): "a value of \(value.date)"
        case .categoryRate(let value): "the growth rate of '\(value.category)'"
        case .change(let value): "the log entry '\(value.summary)'"
        case .backupTarget(let value): "backup target \(value.path)"
        case .budgetCategory(let value): "category '\(value.name)'"
        case .incomeSource(let value): "income source '\(value.name)'"
        case .transaction(let value): "transaction \(Ledger.shortID(value.id)) of \(value.date)"
        case .savingsGoal(let value): "goal '\(value.name)'"
        case .client(let value): "client '\(value.name)'"
        case .invoice(let value): "invoice \(value.reference)"
        case .invoiceCounter: "the invoice counter"
        case .invoiceSender: "the invoice sender"
        case .categoryRuleSet(let value): "rule set '\(value.name)'"
        case .importProfile(let value): "import profile '\(value.name)'"
        case .note(let value): "note '\(value.title)'"
        case .recurring(let value): "recurring item '\(value.name)'"
        case .backupState, .syncState, .syncIndex, .syncConflict, .undoneChange, .summary: "bookkeeping"
        }
    }
}
