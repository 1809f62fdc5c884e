import FinanceCore
import Foundation
import VaultCrypto
import VaultStore

/// End-to-end encrypted sync through a folder any file-sync tool carries (Specs/sync-format.md).
/// Each device publishes its new writes as immutable, sealed, signed change files and merges
/// everyone else's; concurrent edits of a record resolve to the newest stamp on every device and
/// the losing value is kept (`SyncConflict`); rules that span records are repaired after each
/// merge as ordinary, undoable changes.
public enum SyncService {
    static let keysMagic = Array("CFRSKEY1".utf8)

    // MARK: Setting up

    /// Makes `folder` this vault's sync folder (created if missing), enrols this device and
    /// publishes every record, then merges whatever the folder already holds for this vault.
    /// With `replacingFolder`, a vault that already syncs leaves its folder (its sync state and
    /// index are dropped; its kept conflicts stay) and starts afresh in `folder` as a new device
    /// (the other devices then join that folder).
    public static func initialize(
        _ ledger: Ledger, folder: URL, deviceName: String, replacingFolder: Bool = false, now: Date = Date()
    ) throws -> SyncReport {
        if let existing = ledger.syncState {
            guard replacingFolder else {
                throw CofferError(
                    .alreadyExists, "This vault already syncs through \(existing.state.folder).",
                    kind: "sync folder", candidates: [existing.state.folder])
            }
            guard existing.state.folder != folder.path else {
                throw CofferError(.invalidInput, "The new sync folder must be another folder than \(folder.path).")
            }
        }
        let name = try deviceNameChecked(deviceName)
        let keys = SyncKeys(ledger.vault.backupKeys)
        do {
            try FileManager.default.createDirectory(
                at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw CofferError(.failed, "Could not create the sync folder \(folder.path).")
        }
        let syncFolder = SyncFolder(url: folder, epoch: keys.generation)
        let listing = try syncFolder.list()
        try checkKeys(listing, keys: keys, folder: syncFolder)
        if let newest = listing.keys.keys.max(), newest > keys.generation {
            throw CofferError(
                .invalidInput,
                "\(folder.path) holds key generation \(newest) of this vault, newer than this copy's \(keys.generation): join it instead (device join)."
            )
        }
        try enrolAfresh(ledger, keys: keys, folder: folder, name: name)
        return try sync(ledger, folder: folder, now: now)
    }

    /// A new device identity in `folder` (new id and key, nothing published or applied yet) and
    /// no index, so the next publish sends every record; kept conflicts stay.
    private static func enrolAfresh(_ ledger: Ledger, keys: SyncKeys, folder: URL, name: String) throws {
        let state = SyncState(
            device: .random(), deviceName: name, signingSeed: SecureRandom.bytes(count: 32), folder: folder.path,
            published: 0, clock: ledger.syncState?.state.clock ?? 0, devices: [:])
        var write = Bookkeeping(ledger, keys: keys, state: state, index: nil)
        if let dropped = ledger.syncIndex?.id { write.delete(dropped) }
        try write.apply(to: ledger)
    }

    /// Builds a new copy of the vault at `vault` from the folder alone: the keys file unlocked
    /// with the passphrase (or recovery key), every device's changes merged, this device
    /// enrolled. Nothing is left at `vault` unless it all succeeds.
    public static func join(
        folder: URL, vault url: URL, credential: Credential, deviceName: String,
        guard rollbackGuard: RollbackGuard? = nil, now: Date = Date()
    ) throws -> (ledger: Ledger, report: SyncReport) {
        try join(
            folder: folder, vault: url, credential: credential, deviceName: deviceName, trusting: nil,
            guard: rollbackGuard, now: now)
    }

    private static func isWrongCredential(_ error: Error) -> Bool {
        guard let error = error as? VaultError else { return false }
        return error.code == .wrongPassphrase || error.code == .wrongRecoveryKey
    }

    /// At most so many keys files are tried with the credential (each costs an Argon2id run):
    /// the newest generations first, so a folder full of planted headers costs a bounded time
    /// (and more than so many planted at newer generations than the vault's stop a join).
    static let joinAttempts = 8

    /// `trusting`: the keys of a copy that takes on new keys (`adoptNewKeys`): only keys files
    /// whose key history extends theirs are tried, so a header planted by someone who can read
    /// the folder (who can seal a master key of their own to the recovery key's public half)
    /// is never unlocked.
    static func join(
        folder: URL, vault url: URL, credential: Credential, deviceName: String, trusting: SyncKeys?,
        guard rollbackGuard: RollbackGuard?, now: Date
    ) throws -> (ledger: Ledger, report: SyncReport) {
        let (joined, unlocked) = try build(
            folder: folder, vault: url, credential: credential, deviceName: deviceName, trusting: trusting,
            guard: rollbackGuard, now: now)
        return (try Ledger(vault: Vault.open(at: url, unlocked: unlocked, guard: rollbackGuard)), joined.report)
    }

    /// `join` without opening the copy it built: what `device join` needs, which only tells
    /// what was built (reading a whole vault back would take longer than building it did).
    public static func joinCopy(
        folder: URL, vault url: URL, credential: Credential, deviceName: String,
        guard rollbackGuard: RollbackGuard? = nil, now: Date = Date()
    ) throws -> SyncJoin {
        try joinCopy(
            folder: folder, vault: url, credential: credential, deviceName: deviceName, guard: rollbackGuard, now: now,
            streaming: true)
    }

    /// `streaming: false`: built the ordinary way even from a snapshot (`buildJoin`), which the
    /// streamed build must match exactly.
    static func joinCopy(
        folder: URL, vault url: URL, credential: Credential, deviceName: String,
        guard rollbackGuard: RollbackGuard?, now: Date, streaming: Bool
    ) throws -> SyncJoin {
        try build(
            folder: folder, vault: url, credential: credential, deviceName: deviceName, trusting: nil,
            guard: rollbackGuard, now: now, streaming: streaming
        ).joined
    }

    private static func build(
        folder: URL, vault url: URL, credential: Credential, deviceName: String, trusting: SyncKeys?,
        guard rollbackGuard: RollbackGuard?, now: Date, streaming: Bool = true
    ) throws -> (joined: SyncJoin, unlocked: ArchiveUnlock) {
        let name = try deviceNameChecked(deviceName)
        guard !FileManager.default.fileExists(atPath: url.path) else {
            throw CofferError(.alreadyExists, "A vault already exists at \(url.path); nothing was changed.")
        }
        guard FileManager.default.fileExists(atPath: folder.path) else {
            throw CofferError(.fileNotFound, "No sync folder at \(folder.path).")
        }
        var everything = try SyncFolder(url: folder, epoch: 0).list()
        guard !everything.keys.isEmpty else {
            throw CofferError(
                .fileNotFound,
                "\(folder.path) is not a Coffer sync folder (it holds no keys file): run sync init on a device that has the vault."
            )
        }
        // The newest generation whose header the credential opens: a planted keys file (another
        // vault's, junk) never stops a join. One file per header of a generation (a passphrase
        // change that kept the master key adds one).
        if let trusting { _ = screenKeys(&everything, keys: trusting) }
        var unlocked: ArchiveUnlock?
        var generation: UInt32 = 0
        var refusals: [UInt32: Error] = [:]
        var attempts = 0
        for (number, files) in everything.keys.sorted(by: { $0.key > $1.key }) where unlocked == nil {
            for file in files where unlocked == nil && attempts < joinAttempts {
                do {
                    // Junk, and a header renamed to another generation, cost no key derivation.
                    let read = try readKeysFile(file)
                    guard read.generation == number else {
                        throw CofferError(
                            .damaged, "A keys file of key generation \(number) holds another generation's header.")
                    }
                    attempts += 1
                    (unlocked, generation) = (
                        try Vault.unlockArchivedHeader(read.header, credential: credential, now: now), number
                    )
                } catch {
                    // A wrong passphrase is the likelier story than a damaged file (which may be planted).
                    if refusals[number] == nil || isWrongCredential(error) { refusals[number] = error }
                }
            }
        }
        guard let unlocked else {
            let wrongCredential = refusals.sorted { $0.key > $1.key }.first { isWrongCredential($0.value) }
            guard
                let refusal = wrongCredential?.value
                    ?? everything.keys.keys.sorted().reversed().lazy
                    .compactMap({ refusals[$0] }).first
            else {
                throw CofferError(.fileNotFound, "\(folder.path) holds no keys file of the vault to join.")
            }
            throw refusal
        }
        let keys = SyncKeys(unlocked.backupKeys)
        // This vault's keys of a newer generation that the credential does not open (a passphrase
        // changed with the rekey): joining the old one would only be undone at the next sync.
        let refused = screenKeys(&everything, keys: keys)
        // Two key histories for this vault id: one was planted. A passphrase slot cannot be
        // forged without the passphrase, but anyone can seal a master key of their own to the
        // recovery key's public half: with the recovery key, which one is genuine cannot be told.
        if case .recoveryKey = credential, trusting == nil,
            refused.contains(where: {
                if case .foreignKeys = $0.problem { return true }
                return false
            })
        {
            throw CofferError(
                .damaged,
                "\(folder.path) holds keys files of this vault with two different key histories: one was planted. Join with the vault's passphrase, which a planted keys file cannot answer to; nothing was changed."
            )
        }
        if let newer = everything.keys.keys.filter({ $0 > generation }).max(), let refusal = refusals[newer] {
            throw refusal
        }
        let sync = SyncFolder(url: folder, epoch: generation)
        let listing = try sync.list()
        let state = SyncState(
            device: .random(), deviceName: name, signingSeed: SecureRandom.bytes(count: 32), folder: folder.path,
            published: 0, clock: SyncStamp.clock(at: now), devices: [:])
        let joined = try buildJoin(
            at: url, unlocked: unlocked, keys: keys, listing: listing, state: state, now: now, streaming: streaming)
        let (merge, recordCount) = (joined.merge, joined.recordCount)
        // Checked by opening it as it was built, as a restore is: not read again.
        try joined.built.moveIntoPlace(replacing: false, keepingOldAt: nil, guard: rollbackGuard)
        var report = merge.report
        report.conflicts = merge.conflicts.count
        report.copies = listing.copies
        var planted: [SyncReport.Problem] = []
        try publishEnrolment(merge.state, keys: keys, folder: sync, listing: listing, now: now, planted: &planted)
        report.problems = planted + report.problems
        return (
            SyncJoin(
                vault: url, recordCount: recordCount, deviceName: name, report: report,
                streamedRecords: joined.streamed),
            unlocked
        )
    }

    // MARK: Syncing

    /// Publishes this device's writes since its last sync, merges every other device's, repairs
    /// what the merge broke across records, and publishes the repairs.
    /// When this copy's keys are newer than the folder's (after `removeDevice`, `rotate` or a
    /// rekey), it starts the folder's new epoch: enrols afresh and publishes the whole vault
    /// under the new keys, then deletes its files of the old epoch. When the folder's are newer,
    /// it throws `.keysChanged`: `adoptNewKeys` takes them on.
    public static func sync(_ ledger: Ledger, folder named: URL? = nil, now: Date = Date()) throws -> SyncReport {
        let (stored, located) = try syncFolder(of: ledger, named: named)
        let keys = SyncKeys(ledger.vault.backupKeys)
        let folder = SyncFolder(url: located.url, epoch: keys.generation)
        var listing = try folder.list()
        let refusedKeys = screenKeys(&listing, keys: keys)
        let newest = listing.keys.keys.max() ?? keys.generation
        if newest > keys.generation {
            throw CofferError(
                .keysChanged,
                "The vault's keys were replaced on another device (key generation \(newest); this copy has \(keys.generation)).",
                kind: "sync folder")
        }
        var founded = false
        if newest < keys.generation {
            try enrolAfresh(ledger, keys: keys, folder: folder.url, name: stored.deviceName)
            founded = true
        }
        defer { if founded { removeFiles(of: stored.device, before: keys.generation, in: folder) } }
        var planted: [SyncReport.Problem] = []
        try publishKeys(ledger, keys: keys, folder: folder, listing: listing)
        try publishEnrolment(
            ledger.syncState!.state, keys: keys, folder: folder, listing: listing, now: now, planted: &planted)
        folder.removeLeftoverTemporaries(of: ledger.syncState!.state.device, olderThan: 3600, now: Date())
        // Decoded once: each step below updates it and writes it with what it did.
        var index = try index(of: ledger)
        try recoverUnrecordedPublishes(ledger, keys: keys, listing: listing, index: &index, planted: &planted)
        var report = SyncReport()
        report.copies = listing.copies
        if let published = try publish(
            ledger, keys: keys, folder: folder, index: &index, now: now, planted: &planted)
        {
            report.published.append(published)
            listing = try folder.list()
            _ = screenKeys(&listing, keys: keys)
        }
        var merge = SyncMerge(
            state: ledger.syncState!.state, index: index, keys: keys, listing: listing,
            now: now, stored: { id in ledger.vault.record(id).map { Array($0.payload) } })
        merge.readEnrolments()
        merge.run()
        try write(merge, into: ledger, keys: keys, index: &index)
        report.merged = merge.report.merged
        report.waiting = merge.report.waiting
        report.conflicts = merge.conflicts.count
        // Every full sync repairs, not only one that merged something: a sync killed between
        // its merge and its repairs leaves them to the next one (which may merge nothing).
        let before = ledger.vault.commitCounter
        report.repairs = try SyncRepairs.run(on: ledger, now: now)
        if ledger.vault.commitCounter != before,
            let published = try publish(
                ledger, keys: keys, folder: folder, index: &index, now: now, planted: &planted)
        {
            report.published.append(published)
        }
        report.problems = refusedKeys + planted + merge.report.problems
        try recordSyncedCommit(ledger, keys: keys, index: index)
        return report
    }

    /// This device's sync state and its folder (`named`, else the remembered one), which must be there.
    static func syncFolder(of ledger: Ledger, named: URL?) throws -> (state: SyncState, folder: SyncFolder) {
        guard let stored = ledger.syncState else {
            throw CofferError(.noMatch, "This vault has no sync folder yet.", kind: "sync folder")
        }
        let folder = SyncFolder(url: named ?? URL(fileURLWithPath: stored.state.folder), epoch: 0)
        guard FileManager.default.fileExists(atPath: folder.url.path) else {
            throw CofferError(.fileNotFound, "The sync folder \(folder.url.path) is not there (not mounted?).")
        }
        return (stored.state, folder)
    }

    /// The merge's writes, index, state and conflicts, in one transaction; nothing at all when
    /// the merge changed nothing (a sync with nothing new writes nothing).
    private static func write(_ merge: SyncMerge, into ledger: Ledger, keys: SyncKeys, index: inout SyncIndex) throws {
        guard !merge.values.isEmpty || !merge.conflicts.isEmpty || merge.state != ledger.syncState?.state else {
            return
        }
        index = merge.mergedIndex()
        var changes: [RecordChange] = []
        var puts: [(UUID, FinanceRecord)] = []
        var deletes: [UUID] = []
        for (id, value) in merge.values.sorted(by: { $0.key < $1.key }) {
            let stored = ledger.vault.record(id).map { Array($0.payload) }
            guard stored != value.payload else { continue }
            if let payload = value.payload, let record = merge.record(of: value) {
                changes.append(.put(id, Data(payload)))
                puts.append((id.uuid, record))
            } else if stored != nil {
                changes.append(.delete(id))
                deletes.append(id.uuid)
            }
        }
        var write = Bookkeeping(ledger, keys: keys, state: merge.state, index: index)
        for conflict in merge.conflicts { write.put(RecordIDs.next(), .syncConflict(conflict)) }
        write.changes = changes + write.changes
        write.puts = puts + write.puts
        write.deletes = deletes + write.deletes
        try write.apply(to: ledger)
    }

    /// One write of this device's sync bookkeeping: its state, at its keyed id (moved there
    /// from the random id an earlier copy gave it), and, when given, its index. The state is
    /// unsettled (no commit recorded) unless `settled`: only the end of a complete sync
    /// (`recordSyncedCommit`) settles it, so a sync killed anywhere before that, or a state
    /// written by setting up, never lets the next sync answer from the state alone.
    struct Bookkeeping {
        var changes: [RecordChange] = []
        var puts: [(UUID, FinanceRecord)] = []
        var deletes: [UUID] = []

        init(_ ledger: Ledger, keys: SyncKeys, state: SyncState, index: SyncIndex?, settled: Bool = false) {
            var state = state
            state.syncedCommit = settled ? ledger.vault.commitCounter + 1 : 0  // every write is one commit
            state.syncedFile = ledger.vault.deviceID?.bytes ?? []
            let stateID = keys.stateRecordID.uuid
            if let old = ledger.syncState?.id, old != stateID { delete(old) }
            put(stateID, .syncState(state))
            if let index { put(ledger.syncIndex?.id ?? RecordIDs.next(), .syncIndex(index.encoded())) }
        }

        mutating func put(_ id: UUID, _ record: FinanceRecord) {
            changes.append(.put(RecordID(uuid: id), Data(RecordCodec.encode(record))))
            puts.append((id, record))
        }

        mutating func delete(_ id: UUID) {
            changes.append(.delete(RecordID(uuid: id)))
            deletes.append(id)
        }

        func apply(to ledger: Ledger) throws {
            for (_, record) in puts { try record.checkText() }
            try ledger.applyWithoutHistory(changes, puts: puts, deletes: deletes)
        }
    }

    /// At the end of a complete sync, the state names the commit the vault is left at, so the
    /// next sync with nothing to do can tell (one small write, when the state does not name it
    /// already). Only when nothing is left unpublished: another process may have written to
    /// the vault while this sync ran (its write reached this process with the sync's own), and
    /// that write waits for the next sync, which must then take the full way.
    private static func recordSyncedCommit(_ ledger: Ledger, keys: SyncKeys, index: SyncIndex) throws {
        guard let state = ledger.syncState?.state,
            state.syncedCommit != ledger.vault.commitCounter || state.syncedFile != ledger.vault.deviceID?.bytes
                || ledger.syncState?.id != keys.stateRecordID.uuid,
            localWrites(ledger, index: index).isEmpty
        else { return }
        try Bookkeeping(ledger, keys: keys, state: state, index: nil, settled: true).apply(to: ledger)
    }

    static func index(of ledger: Ledger) throws -> SyncIndex {
        try ledger.syncIndex.map { try SyncIndex(decoding: $0.data) } ?? SyncIndex()
    }

    /// This device's writes since its last publish: every record whose payload digest differs
    /// from the index's, and every indexed record that is gone. Local kinds never leave.
    static func localWrites(_ ledger: Ledger, index: SyncIndex) -> [SyncOperation] {
        var operations: [SyncOperation] = []
        var editTimes: [RecordID: Int64] = [:]
        var seen = Set<RecordID>()
        ledger.vault.withPayloads { view in
            for position in 0..<view.count {
                let payload = view.payload(at: position)
                guard let kind = payload.first.flatMap(RecordKind.init(rawValue:)), !kind.isLocal else { continue }
                let id = view.id(at: position)
                seen.insert(id)
                let entry = index.entry(id)
                if let digest = entry?.digest, digest == index.digester.digest(payload) { continue }
                if kind == .change, case .change(let change)? = try? RecordCodec.decode(payload, id: id.uuid) {
                    let milliseconds = change.timestamp * 1000
                    editTimes[id] = max(editTimes[id] ?? 0, milliseconds)
                    for before in change.before {
                        let touched = RecordID(uuid: before.recordID)
                        editTimes[touched] = max(editTimes[touched] ?? 0, milliseconds)
                    }
                }
                operations.append(
                    SyncOperation(record: id, clock: 0, base: entry?.stamp ?? .zero, payload: Array(payload)))
            }
        }
        for (id, entry) in zip(index.ids, index.entries) where entry.digest != nil && !seen.contains(id) {
            operations.append(SyncOperation(record: id, clock: 0, base: entry.stamp, payload: nil))
        }
        return operations.map { operation in
            var operation = operation
            operation.clock = editTimes[operation.record].map { SyncStamp.clock(milliseconds: $0) } ?? 0
            return operation
        }
    }

    /// Publishes this device's local writes as its next change file, then records them as
    /// published. Returns nil when there is nothing to publish.
    private static func publish(
        _ ledger: Ledger, keys: SyncKeys, folder: SyncFolder, index: inout SyncIndex, now: Date,
        planted: inout [SyncReport.Problem]
    ) throws -> SyncReport.Published? {
        guard var state = ledger.syncState?.state else { return nil }
        var operations = localWrites(ledger, index: index)
        guard !operations.isEmpty else { return nil }
        let wall = state.tick(now: now)
        for position in operations.indices {
            // The edit's own time where the change log knows it, never before the value it replaced.
            let edited = operations[position].clock == 0 ? wall : min(operations[position].clock, wall)
            operations[position].clock = max(edited, operations[position].base.clock + 1)
            state.clock = max(state.clock, operations[position].clock)
        }
        operations.sort { $0.record < $1.record }
        let sequence = state.published + 1
        let changes = SyncChanges(
            published: Int64(now.timeIntervalSince1970 * 1000), seen: state.appliedVector, operations: operations)
        let file = SyncEnvelope.seal(
            kind: .changes, packed: try changes.packed(), keys: keys, device: state.device, sequence: sequence,
            signer: state.signingKey)
        try publishOwn(file, sequence: sequence, state: state, keys: keys, folder: folder, planted: &planted)
        state.published = sequence
        index.update(published(operations, by: state.device, digester: index.digester))
        try Bookkeeping(ledger, keys: keys, state: state, index: index).apply(to: ledger)
        return SyncReport.Published(sequence: sequence, changes: operations.count)
    }

    /// How many times a file of this device's goes in under its name when something else took it first.
    static let publishAttempts = 3

    /// Publishes this device's change file `sequence` (`publishReclaiming`); one this device
    /// signed already there means another sync of this device published it, which this one
    /// leaves alone (`alreadyExists`).
    static func publishOwn(
        _ file: [UInt8], sequence: UInt64, state: SyncState, keys: SyncKeys, folder: SyncFolder,
        planted: inout [SyncReport.Problem]
    ) throws {
        try publishReclaiming(
            file, named: SyncFolder.changesName(sequence, epoch: keys.generation), state: state, folder: folder,
            planted: &planted, ownIsPublished: false
        ) { taken throws(SyncFileProblem) in
            let envelope = try SyncEnvelope.parse(try SyncFolder.read(taken), vaultID: keys.vaultID)
            guard envelope.device == state.device, envelope.sequence == sequence else {
                throw .misnamed("it is not this device's change file #\(sequence)")
            }
            try envelope.verify(state.signingKey.publicKey)
        }
    }

    /// Publishes a file under one of this device's names. A file that took the name after the
    /// folder was listed (planted while this sync ran) is removed, reported, and `file` published
    /// in its place; one that `checkOwn` finds this device's own is left as it is, and counts as
    /// published if `ownIsPublished` (else the sync stops: `alreadyExists`).
    private static func publishReclaiming(
        _ file: [UInt8], named name: String, state: SyncState, folder: SyncFolder,
        planted: inout [SyncReport.Problem], ownIsPublished: Bool,
        checkOwn: (URL) throws(SyncFileProblem) -> Void
    ) throws {
        for attempt in 1...publishAttempts {
            do {
                return try folder.publish(file, named: name, in: state.device)
            } catch let error as CofferError where error.code == .alreadyExists && attempt < publishAttempts {
                let taken = folder.device(state.device).appendingPathComponent(name)
                do throws(SyncFileProblem) {
                    try checkOwn(taken)
                } catch {
                    removePlanted(taken, error, into: &planted)
                    continue
                }
                if ownIsPublished { return }
                throw error
            }
        }
    }

    private static func published(
        _ operations: [SyncOperation], by device: SyncDeviceID, digester: PayloadDigester
    ) -> [RecordID: SyncIndex.Entry] {
        Dictionary(
            operations.map {
                (
                    $0.record,
                    SyncIndex.Entry(
                        stamp: SyncStamp(clock: $0.clock, device: device),
                        digest: $0.payload.map { digester.digest(of: $0) })
                )
            }, uniquingKeysWith: { $1 })
    }

    /// A file under one of this device's own names that it did not sign was planted: no other
    /// device can use it, and left there it would take the name this device publishes under next.
    /// It is removed (reported as rejected), and this device's own goes in its place.
    private static func removePlanted(_ file: URL, _ problem: SyncFileProblem, into planted: inout [SyncReport.Problem])
    {
        let relative = file.deletingLastPathComponent().lastPathComponent + "/" + file.lastPathComponent
        planted.append(.init(file: relative, problem: problem))
        SyncFolder.free(file)
    }

    /// A change file of this device's that its state does not record (killed after publishing,
    /// before recording): its writes are marked published, so they are not sent twice.
    private static func recoverUnrecordedPublishes(
        _ ledger: Ledger, keys: SyncKeys, listing: SyncFolder.Listing, index: inout SyncIndex,
        planted: inout [SyncReport.Problem]
    ) throws {
        guard var state = ledger.syncState?.state,
            let own = listing.changes[state.device]?.filter({ $0.key > state.published }), !own.isEmpty
        else { return }
        let signer = state.signingKey.publicKey
        for sequence in own.keys.sorted() {
            guard sequence == state.published + 1 else { break }
            let envelope: SyncEnvelope
            do throws(SyncFileProblem) {
                envelope = try SyncEnvelope.parse(try SyncFolder.read(own[sequence]!), vaultID: keys.vaultID)
                guard envelope.device == state.device, envelope.sequence == sequence else {
                    throw .misnamed("it is not this device's change file #\(sequence)")
                }
                try envelope.verify(signer)
            } catch {
                removePlanted(own[sequence]!, error, into: &planted)
                break
            }
            // Signed by this device: its own, which it must be able to read.
            guard let changes = try? envelope.openChanges(keys) else {
                throw CofferError(
                    .damaged,
                    "This device's own change file #\(sequence) in the sync folder is unusable; nothing was changed.")
            }
            index.update(published(changes.operations, by: state.device, digester: index.digester))
            state.clock = max(state.clock, changes.operations.map(\.clock).max() ?? 0)
            state.published = sequence
        }
        guard state != ledger.syncState?.state else { return }
        try Bookkeeping(ledger, keys: keys, state: state, index: index).apply(to: ledger)
    }

    static func publishEnrolment(
        _ state: SyncState, keys: SyncKeys, folder: SyncFolder, listing: SyncFolder.Listing, now: Date,
        planted: inout [SyncReport.Problem]
    ) throws {
        if let existing = listing.enrolments[state.device]?[keys.generation] {
            do throws(SyncFileProblem) {
                try ownEnrolmentIsIntact(existing, state: state, keys: keys)
                return
            } catch {
                removePlanted(existing, error, into: &planted)
            }
        }
        let enrolment = SyncEnrolment(
            publicKey: state.signingKey.publicKey.bytes, name: state.deviceName,
            enrolled: Int64(now.timeIntervalSince1970))
        let file = SyncEnvelope.seal(
            kind: .enrolment, body: enrolment.encoded(), keys: keys, device: state.device, sequence: 0,
            signer: keys.vaultSigning)
        try publishReclaiming(
            file, named: SyncFolder.enrolmentName(keys.generation), state: state, folder: folder, planted: &planted,
            ownIsPublished: true
        ) { taken throws(SyncFileProblem) in try ownEnrolmentIsIntact(taken, state: state, keys: keys) }
    }

    /// A keys file is a vault header: a few kilobytes at most (64 KiB holds a key history of
    /// about 600 generations), whatever a planted one claims.
    static let keysFileLimit = 64 << 10

    /// The folder's keys files that are this vault's, kept in `listing`; every other one taken
    /// out and returned as a problem: another vault's, junk, not a file, a header whose key
    /// history this vault's keys did not certify, or one under another generation's name.
    /// Whatever someone who can write the folder puts there, the sync goes on without it.
    static func screenKeys(_ listing: inout SyncFolder.Listing, keys: SyncKeys) -> [SyncReport.Problem] {
        var problems: [SyncReport.Problem] = []
        for (generation, files) in listing.keys {
            var kept: [URL] = []
            for file in files {
                do throws(SyncFileProblem) {
                    try checkKeysFile(file, generation: generation, keys: keys)
                    kept.append(file)
                } catch {
                    problems.append(.init(file: file.lastPathComponent, problem: error))
                }
            }
            listing.keys[generation] = kept.isEmpty ? nil : kept
        }
        return problems.sorted { $0.file < $1.file }
    }

    private static func checkKeysFile(_ file: URL, generation: UInt32, keys: SyncKeys) throws(SyncFileProblem) {
        let bytes = try SyncFolder.read(file, limit: keysFileLimit)
        guard !bytes.isEmpty else { throw .incomplete }
        guard bytes.starts(with: keysMagic) else {
            throw keysMagic.starts(with: bytes) ? .incomplete : .damaged
        }
        let header = Array(bytes.dropFirst(keysMagic.count))
        // Decoding checks the key history's chain of certificates.
        guard let (vaultID, history) = try? Vault.keyHistory(ofHeader: header) else { throw .damaged }
        guard vaultID == keys.vaultID else { throw .otherVault }
        guard (history.last?.number ?? 1) == generation,
            SyncFolder.keysName(generation, header: header) == file.lastPathComponent
        else { throw .misnamed("it holds another vault header than its name says") }
        guard !history.isEmpty || keys.history.isEmpty else {
            throw .foreignKeys("it has no key history (a format 1 header), and this vault's has one")
        }
        let shared = min(history.count, keys.history.count)
        guard
            zip(history.prefix(shared), keys.history.prefix(shared)).allSatisfy({
                $0.number == $1.number && $0.signingKey == $1.signingKey
            })
        else { throw .foreignKeys("its key history was not certified by this vault's keys") }
    }

    /// `sync init`: every keys file already in the folder must be this vault's (the one place
    /// another vault's files stop anything: a folder is not shared between two vaults).
    static func checkKeys(_ listing: SyncFolder.Listing, keys: SyncKeys, folder: SyncFolder) throws {
        for files in listing.keys.values {
            for file in files {
                guard try readKeysFile(file).vaultID == keys.vaultID else {
                    throw CofferError(.inUse, "\(folder.url.path) is the sync folder of another vault.")
                }
            }
        }
    }

    /// This copy's vault header, so a new device can join with the passphrase of today. Its
    /// name is the header's: a file planted under it (`listing` is screened, so it is not there)
    /// is removed first; it was reported with the keys files refused.
    private static func publishKeys(_ ledger: Ledger, keys: SyncKeys, folder: SyncFolder, listing: SyncFolder.Listing)
        throws
    {
        let header = ledger.vault.backupKeys.headerBytes
        let name = SyncFolder.keysName(keys.generation, header: header)
        // The name holds 32 bits of the header's digest: an impostor could be made to match it.
        // Only this device's own bytes under its name will do.
        guard !ownKeysFileIsIntact(folder, listing: listing, generation: keys.generation, header: header) else {
            return
        }
        SyncFolder.free(folder.url.appendingPathComponent(name))
        try folder.publish(keysMagic + header, named: name, in: nil)
    }

    /// Whether the folder holds this header, byte for byte, under its name.
    static func ownKeysFileIsIntact(
        _ folder: SyncFolder, listing: SyncFolder.Listing, generation: UInt32, header: [UInt8]
    ) -> Bool {
        let name = SyncFolder.keysName(generation, header: header)
        guard let file = (listing.keys[generation] ?? []).first(where: { $0.lastPathComponent == name }),
            let bytes = try? SyncFolder.read(file, limit: keysFileLimit)
        else { return false }
        return bytes == keysMagic + header
    }

    /// Whether this device's enrolment of `keys`' generation in the folder is its own: signed by
    /// the vault's key, naming this device and its public key.
    static func ownEnrolmentIsIntact(_ file: URL, state: SyncState, keys: SyncKeys) throws(SyncFileProblem) {
        let envelope = try SyncEnvelope.parse(try SyncFolder.read(file, limit: enrolmentLimit), vaultID: keys.vaultID)
        guard envelope.kind == .enrolment, envelope.device == state.device, envelope.sequence == 0 else {
            throw .misnamed("it is not this device's enrolment")
        }
        try envelope.verify(keys.vaultSigning.publicKey)
        guard let enrolment = try? SyncEnrolment.decode(try envelope.open(keys)),
            enrolment.publicKey == state.signingKey.publicKey.bytes
        else { throw .badSignature }
    }

    /// An enrolment is a key and a name: a few hundred bytes, whatever a planted one claims.
    static let enrolmentLimit = 64 << 10

    static func readKeysFile(_ file: URL) throws -> (vaultID: VaultID, generation: UInt32, header: [UInt8]) {
        let bytes: [UInt8]
        do throws(SyncFileProblem) {
            bytes = try SyncFolder.read(file, limit: keysFileLimit)
        } catch {
            throw CofferError(.damaged, "The keys file \(file.lastPathComponent) cannot be read.")
        }
        guard bytes.starts(with: keysMagic) else {
            throw CofferError(.damaged, "The keys file \(file.lastPathComponent) is not a Coffer keys file.")
        }
        let header = Array(bytes.dropFirst(keysMagic.count))
        do {
            let (vaultID, history) = try Vault.keyHistory(ofHeader: header)
            return (vaultID, history.last?.number ?? 1, header)
        } catch {
            throw CofferError(.damaged, "The keys file \(file.lastPathComponent) is damaged.")
        }
    }

    private static func deviceNameChecked(_ name: String) throws -> String {
        let trimmed = name.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty, trimmed.count <= 64 else {
            throw CofferError(.invalidInput, "A device name has 1 to 64 characters.")
        }
        try FinanceRecord.syncState(
            SyncState(
                device: .zero, deviceName: trimmed, signingSeed: [], folder: "", published: 0, clock: 0, devices: [:])
        ).checkText()
        return trimmed
    }
}
