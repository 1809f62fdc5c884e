import FinanceCore
import Foundation
import VaultStore

/// What `SyncService.mergeCopy` did.
public struct CopyMergeReport: Sendable {
    /// Records written from the copy (added, changed or deleted).
    public var taken: Int = 0
    /// Records both files changed since they parted: the later change kept, the other kept as a conflict.
    public var conflicts: Int = 0
    /// Changes in the copy's log that this vault did not have.
    public var changes: Int = 0
    public var repairs: [String] = []
}

extension SyncService {
    /// Merges a copy of this vault that a sync tool duplicated (`vault (conflicted copy).coffer`,
    /// `vault.sync-conflict-….coffer`) back into it, record by record, with the rules a sync
    /// merge uses. The two files' change logs tell what each did since they parted: a record
    /// only the copy changed is taken from it; one only this vault changed stays; one both
    /// changed keeps the later change and the other is kept as a conflict (`sync conflicts`).
    /// Written as one change (one `undo` reverts it), then the rules that span records are
    /// repaired; published at the next sync like any change. The copy is only read.
    public static func mergeCopy(_ ledger: Ledger, copy: Ledger, name: String, now: Date = Date()) throws
        -> CopyMergeReport
    {
        guard copy.vault.id == ledger.vault.id else {
            throw CofferError(
                .invalidInput, "\(name) is another vault, not a copy of this one.", kind: "vault copy")
        }
        let mine = Set(ledger.changes.map(\.id)), theirs = Set(copy.changes.map(\.id))
        // Seconds since 1970 of the latest change, after the files parted, that touched each record.
        func touched(by entries: [(id: UUID, entry: ChangeEntry)], except common: Set<UUID>) -> [UUID: Int64] {
            var times: [UUID: Int64] = [:]
            for (id, entry) in entries where !common.contains(id) {
                times[id] = max(times[id] ?? .min, entry.timestamp)
                for before in entry.before {
                    times[before.recordID] = max(times[before.recordID] ?? .min, entry.timestamp)
                }
            }
            return times
        }
        let ours = touched(by: ledger.changes, except: theirs)
        let copys = touched(by: copy.changes, except: mine)
        func payloads(_ ledger: Ledger) -> [UUID: [UInt8]] {
            var result: [UUID: [UInt8]] = [:]
            ledger.vault.withPayloads { view in
                for index in 0..<view.count {
                    let payload = view.payload(at: index)
                    guard let kind = payload.first.flatMap(RecordKind.init(rawValue:)), !kind.isLocal else { continue }
                    result[view.id(at: index).uuid] = Array(payload)
                }
            }
            return result
        }
        let here = payloads(ledger), there = payloads(copy)
        var report = CopyMergeReport(changes: theirs.subtracting(mine).count)
        var puts: [(UUID, FinanceRecord)] = []
        var deletes: [UUID] = []
        var conflicts: [SyncConflict] = []
        // Each file's own device id names its side in the conflict listing.
        func side(_ ledger: Ledger) -> SyncDeviceID {
            ledger.syncState?.state.device ?? ledger.vault.deviceID.map { SyncDeviceID(unchecked: $0.bytes) } ?? .zero
        }
        let thisSide = side(ledger), copySide = copy.vault.deviceID.map { SyncDeviceID(unchecked: $0.bytes) } ?? .zero
        func stamp(_ seconds: Int64?, copy: Bool) -> SyncStamp {
            SyncStamp(clock: SyncStamp.clock(milliseconds: (seconds ?? 0) * 1000), device: copy ? copySide : thisSide)
        }
        func take(_ id: UUID, _ payload: [UInt8]?) throws {
            report.taken += 1
            if let payload { puts.append((id, try RecordCodec.decode(payload, id: id))) } else { deletes.append(id) }
        }
        for id in Set(here.keys).union(there.keys).sorted(by: { RecordID(uuid: $0) < RecordID(uuid: $1) }) {
            let mineValue = here[id], theirValue = there[id]
            guard mineValue != theirValue else { continue }
            switch (ours[id], copys[id]) {
            case (nil, .some): try take(id, theirValue)
            case (.some, nil): continue
            case (let oursTime?, let theirsTime?):
                let copyWins = theirsTime > oursTime
                if copyWins { try take(id, theirValue) }
                conflicts.append(
                    SyncConflict(
                        record: id, loser: copyWins ? mineValue : theirValue,
                        loserStamp: stamp(copyWins ? oursTime : theirsTime, copy: !copyWins),
                        winner: copyWins ? theirValue : mineValue,
                        winnerStamp: stamp(max(oursTime, theirsTime), copy: copyWins),
                        detected: Int64(now.timeIntervalSince1970)))
            case (nil, nil):
                // Written outside the change log: numbering takes the higher counter; a record only
                // one file has is kept; otherwise this vault's value stays and the copy's is kept.
                if case .invoiceCounter(let counter)? = theirValue.flatMap({ try? RecordCodec.decode($0, id: id) }),
                    case .invoiceCounter(let current)? = mineValue.flatMap({ try? RecordCodec.decode($0, id: id) })
                {
                    if counter.lastNumber > current.lastNumber { try take(id, theirValue) }
                } else if mineValue == nil {
                    try take(id, theirValue)
                } else if theirValue != nil {
                    conflicts.append(
                        SyncConflict(
                            record: id, loser: theirValue, loserStamp: stamp(nil, copy: true), winner: mineValue,
                            winnerStamp: stamp(nil, copy: false), detected: Int64(now.timeIntervalSince1970)))
                }
            }
        }
        report.conflicts = conflicts.count
        guard report.taken + conflicts.count > 0 else { return report }
        puts += conflicts.map { (RecordIDs.next(), FinanceRecord.syncConflict($0)) }
        try ledger.commit(
            "Merged \(report.taken) record\(report.taken == 1 ? "" : "s") from \(name)", puts: puts, deletes: deletes,
            now: now)
        report.repairs = try SyncRepairs.run(on: ledger, now: now)
        return report
    }
}
