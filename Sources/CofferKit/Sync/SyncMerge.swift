import Foundation
import VaultCrypto
import VaultStore

/// The merge of other devices' change files into one copy of the vault: files read in causal
/// order (a file only after everything its publisher had seen), each write kept when its stamp
/// is the newest, and every value that loses a concurrent edit kept as a conflict. A pure
/// computation over the records it is given: `SyncService` writes the result in one transaction.
struct SyncMerge {
    /// The value a record ends up with: its payload (nil: deleted) and the stamp of that write,
    /// and where what its check found is in `checked` (kept apart: a record is large, and a
    /// joining device's merge holds every record of the vault here).
    struct Value {
        var payload: [UInt8]?
        var stamp: SyncStamp
        fileprivate var checkedAt: Int
    }

    /// What checking a write's payload found, worked out on every core as a file is read: its
    /// page group and digest (nil for a delete). Small: a joining device holds one per record.
    struct Checked {
        var group: PageGroup
        var digest: PayloadDigest?
    }

    /// A change file read and checked, waiting for its turn. A joining device streams its
    /// snapshot's records straight into the new vault: what the merge gets of it is the writes
    /// other files touch too, and `omitted` says how many writes and which newest clock were not
    /// given (none of which any other file names, so none can lose or win against anything).
    struct Loaded {
        var sequence: UInt64
        var changes: SyncChanges
        var checked: [Checked]
        var records: [FinanceRecord?]
        var omitted: (count: Int, clock: UInt64) = (0, 0)
    }

    private(set) var state: SyncState
    private(set) var index: SyncIndex
    private(set) var values: [RecordID: Value] = [:]
    /// The ids of `values` in the order they first took one: a joining device writes its
    /// records in the order the folder's files hold them (a snapshot's is the archive's order).
    private(set) var order: [RecordID] = []
    private var checked: [Checked] = []
    /// The decoded records, beside `checked`, when the merge keeps them.
    private var records: [FinanceRecord?] = []
    /// Whether decoded records are kept (`record(of:)`): a sync writes them through the ledger;
    /// a join writes payloads alone, and would hold a whole vault of records for nothing.
    private let keepsRecords: Bool
    private(set) var conflicts: [SyncConflict] = []
    private(set) var report = SyncReport()
    /// How many files and writes were applied from each device.
    private var counts: [SyncDeviceID: (files: Int, changes: Int)] = [:]
    let keys: SyncKeys
    let listing: SyncFolder.Listing
    private let stored: (RecordID) -> [UInt8]?
    private let now: Date
    /// Files read ahead of the merge (`preloadAll`), by file: read again they would cost twice.
    private var preloaded: [URL: Result<Loaded, SyncFileProblem>] = [:]

    init(
        state: SyncState, index: SyncIndex, keys: SyncKeys, listing: SyncFolder.Listing,
        now: Date, keepsRecords: Bool = true, stored: @escaping (RecordID) -> [UInt8]?
    ) {
        self.keepsRecords = keepsRecords
        self.state = state
        self.index = index
        self.keys = keys
        self.listing = listing
        self.stored = stored
        self.now = now
    }

    private func current(_ id: RecordID) -> (payload: [UInt8]?, stamp: SyncStamp) {
        if let value = values[id] { return (value.payload, value.stamp) }
        return (stored(id), index.stamp(id))
    }

    private func name(of device: SyncDeviceID) -> String {
        device == state.device ? state.deviceName : state.devices[device]?.name ?? device.short
    }

    private mutating func problem(_ file: URL, _ problem: SyncFileProblem) {
        let relative = file.deletingLastPathComponent().lastPathComponent + "/" + file.lastPathComponent
        report.problems.append(.init(file: relative, problem: problem))
    }

    /// Reads every device's enrolment for this key generation into `state.devices`.
    mutating func readEnrolments() {
        for (device, files) in listing.enrolments.sorted(by: { $0.key < $1.key }) where device != state.device {
            guard let file = files[keys.generation] else { continue }
            do throws(SyncFileProblem) {
                let envelope = try SyncEnvelope.parse(
                    try SyncFolder.read(file, limit: SyncService.enrolmentLimit), vaultID: keys.vaultID)
                guard envelope.kind == .enrolment, envelope.device == device, envelope.sequence == 0 else {
                    throw .misnamed("it is not \(device.short)'s enrolment")
                }
                guard let certifier = keys.vaultKey(ofGeneration: envelope.generation) else {
                    throw envelope.generation > keys.generation
                        ? .newerGeneration(envelope.generation) : .olderGeneration(envelope.generation)
                }
                try envelope.verify(certifier)
                let body = try envelope.open(keys)
                guard let enrolment = try? SyncEnrolment.decode(body) else { throw .damaged }
                var known =
                    state.devices[device]
                    ?? SyncState.KnownDevice(
                        name: enrolment.name, publicKey: enrolment.publicKey, applied: 0, lastHeard: 0)
                if known.publicKey != enrolment.publicKey, known.applied > 0 {
                    throw .badSignature  // a second enrolment for a device already known under another key
                }
                known.name = enrolment.name
                known.publicKey = enrolment.publicKey
                if known.lastHeard == 0 { known.lastHeard = enrolment.enrolled }
                state.devices[device] = known
            } catch {
                problem(file, error)
            }
        }
    }

    /// Applies every file that is ready, in causal order, until none is.
    mutating func run() {
        let others = listing.changes.keys.filter { $0 != state.device }.sorted()
        var blocked = Set<SyncDeviceID>()
        var loaded: [SyncDeviceID: Loaded] = [:]
        var progress = true
        while progress {
            progress = false
            for device in others where !blocked.contains(device) {
                guard let known = state.devices[device] else {
                    blocked.insert(device)
                    if let first = listing.changes[device]?.sorted(by: { $0.key < $1.key }).first {
                        problem(first.value, .unknownDevice)
                    }
                    continue
                }
                while true {
                    let next = state.devices[device]!.applied + 1
                    if loaded[device]?.sequence != next {
                        guard let file = listing.changes[device]?[next] else { break }
                        do throws(SyncFileProblem) {
                            if let read = preloaded.removeValue(forKey: file) {
                                loaded[device] = try read.get()
                            } else {
                                loaded[device] = try load(file, device: device, sequence: next, key: known.publicKey)
                            }
                        } catch {
                            problem(file, error)
                            blocked.insert(device)
                            break
                        }
                    }
                    let file = loaded[device]!
                    guard isReady(file.changes, from: device) else { break }
                    apply(file, from: device)
                    loaded[device] = nil
                    progress = true
                }
            }
        }
        for device in others where !blocked.contains(device) {
            guard let known = state.devices[device], let files = listing.changes[device] else { continue }
            let next = known.applied + 1
            if let pending = loaded[device] {
                let missing = pending.changes.seen.filter { entry in
                    entry.key != device && applied(entry.key) < entry.value
                }.map { entry in
                    entry.key == state.device
                        ? "this device's #\(entry.value), which this copy never published (restored from an older copy?)"
                        : "\(name(of: entry.key))'s #\(entry.value)"
                }.sorted()
                report.waiting.append(
                    "\(name(of: device)) #\(pending.sequence) waits for \(missing.joined(separator: ", ")) (not in the folder yet)"
                )
            } else if let later = files.keys.filter({ $0 > next }).min() {
                report.waiting.append(
                    "\(name(of: device)) #\(later) waits for #\(next), which is not in the folder yet")
            }
        }
        for (device, count) in counts.sorted(by: { $0.key < $1.key }) {
            report.merged.append(.init(device: name(of: device), files: count.files, changes: count.changes))
        }
    }

    private func applied(_ device: SyncDeviceID) -> UInt64 {
        device == state.device ? state.published : state.devices[device]?.applied ?? 0
    }

    private func isReady(_ changes: SyncChanges, from device: SyncDeviceID) -> Bool {
        changes.seen.allSatisfy { $0.key == device || applied($0.key) >= $0.value }
    }

    /// Reads ahead of the merge, which then takes them from here, each enrolled device's change
    /// files but `except` from its first on while they follow one another and read (the merge
    /// never comes past a gap or a refused file: nothing planted beyond one is read); returns
    /// the ids their writes name. A file that does not read is reported only if the merge comes
    /// to it, as it would have been.
    mutating func preloadAll(except: URL) -> Set<RecordID> {
        var touched = Set<RecordID>()
        for (device, files) in listing.changes where device != state.device {
            guard let key = state.devices[device]?.publicKey else { continue }
            var sequence = (state.devices[device]?.applied ?? 0) + 1
            while let file = files[sequence] {
                defer { sequence += 1 }
                guard file != except else { continue }
                let result = Result { () throws(SyncFileProblem) in
                    try load(file, device: device, sequence: sequence, key: key)
                }
                preloaded[file] = result
                guard case .success(let loaded) = result else { break }
                for operation in loaded.changes.operations { touched.insert(operation.record) }
            }
        }
        return touched
    }

    /// Each enrolled device's change files from its first on while they follow one another:
    /// the only ones the merge can come to.
    var reachableChanges: [(file: URL, device: SyncDeviceID, sequence: UInt64)] {
        listing.changes.filter { $0.key != state.device }.flatMap { device, files in
            guard state.devices[device] != nil else { return [(file: URL, device: SyncDeviceID, sequence: UInt64)]() }
            var run: [(file: URL, device: SyncDeviceID, sequence: UInt64)] = []
            var sequence = (state.devices[device]?.applied ?? 0) + 1
            while let file = files[sequence] {
                run.append((file, device, sequence))
                sequence += 1
            }
            return run
        }
    }

    /// Gives the merge a file already read (a joining device's streamed snapshot, its writes
    /// that other files touch), its writes checked here.
    mutating func preload(
        _ file: URL, sequence: UInt64, changes: SyncChanges, omitted: (count: Int, clock: UInt64)
    ) {
        preloaded[file] = Result { () throws(SyncFileProblem) in
            let (checked, records) = try check(changes.operations)
            return Loaded(sequence: sequence, changes: changes, checked: checked, records: records, omitted: omitted)
        }
    }

    private func load(_ file: URL, device: SyncDeviceID, sequence: UInt64, key: [UInt8]) throws(SyncFileProblem)
        -> Loaded
    {
        let changes = try Self.openChanges(file, device: device, sequence: sequence, key: key, keys: keys) {
            (envelope) throws(SyncFileProblem) in try envelope.openChanges(keys)
        }
        guard changes.seen[device] == sequence - 1 else { throw .damaged }
        let (checked, records) = try check(changes.operations)
        return Loaded(sequence: sequence, changes: changes, checked: checked, records: records)
    }

    /// A change file's envelope read, checked against its name and signature, and its body
    /// decoded by `body`.
    static func openChanges<Body>(
        _ file: URL, device: SyncDeviceID, sequence: UInt64, key: [UInt8], keys: SyncKeys,
        body: (SyncEnvelope) throws(SyncFileProblem) -> Body
    ) throws(SyncFileProblem) -> Body {
        let envelope = try SyncEnvelope.parse(try SyncFolder.read(file), vaultID: keys.vaultID)
        guard envelope.kind == .changes, envelope.device == device, envelope.sequence == sequence,
            envelope.epoch == keys.generation
        else {
            throw .misnamed(
                "its contents are \(envelope.device == device ? "" : "another device's ")#\(envelope.sequence), its name says #\(sequence)"
            )
        }
        try envelope.verify(SigningPublicKey(unchecked: key))
        return try body(envelope)
    }

    /// Every payload decoded and checked on all cores (a whole vault, for a device that
    /// joins); the first problem in file order is the file's.
    private func check(_ operations: [SyncOperation]) throws(SyncFileProblem) -> ([Checked], [FinanceRecord?]) {
        let count = operations.count
        var checked = [Checked](repeating: Checked(group: .unsorted), count: count)
        var records = [FinanceRecord?](repeating: nil, count: keepsRecords ? count : 0)
        var problems = [SyncFileProblem?](repeating: nil, count: count)
        let digester = index.digester
        checked.withUnsafeMutableBufferPointer { checked in
            records.withUnsafeMutableBufferPointer { records in
                problems.withUnsafeMutableBufferPointer { problems in
                    // Each chunk writes only its own indices.
                    nonisolated(unsafe) let (checked, records, problems) = (checked, records, problems)
                    let chunkSize = 2048
                    DispatchQueue.concurrentPerform(iterations: (count + chunkSize - 1) / chunkSize) { chunk in
                        for position in chunk * chunkSize..<min(count, (chunk + 1) * chunkSize) {
                            let operation = operations[position]
                            guard let payload = operation.payload else { continue }
                            do throws(SyncFileProblem) {
                                let record = try payload.withUnsafeBytes { bytes in
                                    Result { () throws(SyncFileProblem) in try Self.record(bytes, id: operation.record)
                                    }
                                }.get()
                                checked[position] = Checked(
                                    group: RecordGrouping.group(of: record), digest: digester.digest(of: payload))
                                if !records.isEmpty { records[position] = record }
                            } catch {
                                problems[position] = error
                            }
                        }
                    }
                }
            }
        }
        if let problem = problems.lazy.compactMap({ $0 }).first { throw problem }
        return (checked, records)
    }

    /// A write's record, decoded and checked as any record written here is.
    static func record(_ payload: UnsafeRawBufferPointer, id: RecordID) throws(SyncFileProblem) -> FinanceRecord {
        guard let kind = payload.first.flatMap(RecordKind.init(rawValue:)), payload.count >= 2 else {
            throw .newerRecord
        }
        guard !kind.isLocal else { throw .damaged }
        guard payload[1] <= kind.currentVersion else { throw .newerRecord }
        guard let record = try? RecordCodec.decode(payload, id: id.uuid),
            (try? record.checkText()) != nil
        else { throw .damaged }
        return record
    }

    private mutating func apply(_ file: Loaded, from device: SyncDeviceID) {
        let (changes, found, decoded, sequence) = (file.changes, file.checked, file.records, file.sequence)
        state.clock = max(state.clock, file.omitted.clock)
        values.reserveCapacity(values.count + changes.operations.count)
        checked.reserveCapacity(checked.count + changes.operations.count)
        for (position, (operation, found)) in zip(changes.operations, found).enumerated() {
            let stamp = SyncStamp(clock: operation.clock, device: device)
            let now = current(operation.record)
            state.clock = max(state.clock, operation.clock)
            guard stamp != now.stamp else { continue }
            let concurrent = operation.base != now.stamp
            if stamp > now.stamp {
                if concurrent, now.payload != operation.payload, now.payload != nil || now.stamp != .zero {
                    conflicts.append(
                        SyncConflict(
                            record: operation.record.uuid, loser: now.payload, loserStamp: now.stamp,
                            winner: operation.payload, winnerStamp: stamp,
                            detected: Int64(self.now.timeIntervalSince1970)))
                }
                if values.updateValue(
                    Value(payload: operation.payload, stamp: stamp, checkedAt: checked.count), forKey: operation.record)
                    == nil
                {
                    order.append(operation.record)
                }
                checked.append(found)
                if keepsRecords { records.append(decoded[position]) }
            } else if now.payload != operation.payload {
                conflicts.append(
                    SyncConflict(
                        record: operation.record.uuid, loser: operation.payload, loserStamp: stamp,
                        winner: now.payload, winnerStamp: now.stamp, detected: Int64(self.now.timeIntervalSince1970)))
            }
        }
        state.devices[device]!.applied = sequence
        state.devices[device]!.lastHeard = max(state.devices[device]!.lastHeard, changes.published / 1000)
        counts[device, default: (0, 0)].files += 1
        counts[device, default: (0, 0)].changes += changes.operations.count + file.omitted.count
    }

    /// The decoded record of a value (nil for a delete, and when the merge keeps no records).
    func record(of value: Value) -> FinanceRecord? { keepsRecords ? records[value.checkedAt] : nil }

    /// The page group of a value's record.
    func group(of value: Value) -> PageGroup { checked[value.checkedAt].group }

    /// The index after the merge: every merged record at its winning stamp (a joining device's
    /// snapshot records that no other file touches, which never were values, are added as it
    /// is encoded: `SyncIndex.encoded(adding:)`).
    func mergedIndex() -> SyncIndex {
        // The digests were taken as each file was read, on every core.
        let entries = values.map { id, value in
            (id, SyncIndex.Entry(stamp: value.stamp, digest: checked[value.checkedAt].digest))
        }
        var merged = index
        merged.update(unsorted: entries)
        return merged
    }
}

/// What `device join` built: the new copy, how many records it holds, this device's name in the
/// folder, and what the merge did.
public struct SyncJoin: Sendable {
    public let vault: URL
    public let recordCount: Int
    public let deviceName: String
    public let report: SyncReport
    /// How many records came straight from the folder's snapshot (`SyncService.buildJoin`).
    let streamedRecords: Int
}

/// What a sync did, for the front end to tell.
public struct SyncReport: Sendable {
    public struct Merged: Sendable, Equatable {
        public let device: String
        public let files: Int
        public let changes: Int
    }
    public struct Problem: Sendable, Equatable {
        /// `device-dir/file-name`, relative to the folder.
        public let file: String
        public let problem: SyncFileProblem
    }
    public struct Published: Sendable, Equatable {
        public let sequence: UInt64
        public let changes: Int
    }

    public var published: [Published] = []
    public var merged: [Merged] = []
    /// Values that lost a concurrent edit in this sync (kept: `sync conflicts`).
    public var conflicts: Int = 0
    /// What the rules that span records changed after the merge, one line each.
    public var repairs: [String] = []
    public var problems: [Problem] = []
    /// Files held back until what they depend on arrives.
    public var waiting: [String] = []
    /// Copies a sync tool made, ignored.
    public var copies: [String] = []

    public init() {}
}

extension SyncReport {
    /// What went out, what came in, what was repaired and resolved: the result, one line each.
    public var summaryLines: [String] {
        var lines = published.map {
            "Published \($0.changes) change\($0.changes == 1 ? "" : "s") (#\($0.sequence))."
        }
        lines += merged.map {
            "Merged \($0.changes) change\($0.changes == 1 ? "" : "s") from \($0.device) (\($0.files) file\($0.files == 1 ? "" : "s"))."
        }
        if published.isEmpty, merged.isEmpty { lines.append("Up to date: nothing to publish or merge.") }
        lines += repairs.map { "Repaired: \($0)" }
        if conflicts > 0 {
            lines.append(
                "\(conflicts) concurrent edit\(conflicts == 1 ? "" : "s") resolved; the losing value\(conflicts == 1 ? " is" : "s are") kept."
            )
        }
        return lines
    }

    /// Files that wait, were rejected or ignored, one line each (file names as found).
    public var attentionLines: [String] {
        waiting.map { "waiting: \($0)" }
            + problems.map { "\($0.problem == .incomplete ? "waiting" : "rejected"): \($0.file): \($0.problem)" }
            + copies.map { "ignored: \($0): a copy made by a sync tool, not by Coffer" }
    }

    /// Files refused as forged, altered or misplaced (not those that only wait).
    public var rejectedCount: Int { problems.filter { !$0.problem.isTransient }.count }
}

extension SyncStatus {
    /// "just now", "5 min ago", "3 h ago", "2 days ago".
    public static func ago(_ date: Date, now: Date = Date()) -> String {
        let seconds = Int(now.timeIntervalSince(date))
        switch seconds {
        case ..<60: return "just now"
        case ..<3600: return "\(seconds / 60) min ago"
        case ..<86400: return "\(seconds / 3600) h ago"
        default: return "\(seconds / 86400) day\(seconds / 86400 == 1 ? "" : "s") ago"
        }
    }
}
