import CofferTestSupport
import FinanceCore
import Foundation
import Testing
import VaultCrypto
import VaultStore

@testable import CofferKit

/// Change files of many puts travel in the backup archive's columns (packed body 2): a whole
/// vault's first publish, and any large batch. What goes in comes out exactly, on a device that
/// joins and on one that syncs; a body a device of the vault sealed with hostile columns is
/// refused as damaged and nothing of it is applied.
@Suite struct SyncColumnsBodyTests {
    let passphrase = "sync columns passphrase"
    let today = date("2026-11-24")

    func spendings(_ count: Int, from first: Int = 0) throws -> [(UUID, FinanceRecord)] {
        try (first..<first + count).map { index in
            let spend = Transaction(
                amount: Money(minorUnits: Int64(index % 977 + 1)), type: .expense, target: .uncategorised,
                note: "Shop \(index % 13) <&> 'quoted'",
                date: try CalendarDate(parsing: "2026-0\(index % 9 + 1)-1\(index % 9)"),
                sequence: UInt64(index + 1))
            return (spend.id, .transaction(spend))
        }
    }

    /// A vault of `count` spendings and an account, its folder made (`sync init`).
    func syncing(_ directory: TemporaryDirectory, spendings count: Int) throws -> Ledger {
        let a = try Ledger.create(
            at: directory.path("a.coffer"), passphrase: try Passphrase(passphrase), parameters: testParameters,
            currency: .gbp)
        try a.addAccount(
            name: "Savings", category: "Cash", kind: .asset, value: (Money(minorUnits: 100), today), today: today)
        try a.commit("Imported", puts: try spendings(count))
        _ = try SyncService.initialize(a, folder: directory.path("folder"), deviceName: "laptop")
        return a
    }

    /// Device B, joined from the folder.
    func join(_ directory: TemporaryDirectory) throws -> Ledger {
        try SyncService.join(
            folder: directory.path("folder"), vault: directory.path("b.coffer"),
            credential: .passphrase(try Passphrase(passphrase)), deviceName: "desktop"
        ).ledger
    }

    func file(_ ledger: Ledger, _ sequence: UInt64, in directory: TemporaryDirectory) -> URL {
        directory.path("folder").appendingPathComponent(ledger.syncState!.state.device.hex)
            .appendingPathComponent(SyncFolder.changesName(sequence, epoch: 1))
    }

    func packed(_ file: URL, keys: SyncKeys) throws -> [UInt8] {
        try SyncEnvelope.parse(try SyncFolder.read(file), vaultID: keys.vaultID).openPacked(keys)
    }

    /// Every record of a ledger that sync carries, by id: what two devices must agree on.
    func shared(_ ledger: Ledger) -> [RecordID: [UInt8]] {
        Dictionary(
            uniqueKeysWithValues: ledger.vault.records.filter { !RecordCodec.isLocal($0.payload) }.map {
                ($0.id, Array($0.payload))
            })
    }

    @Test func aWholeVaultsFirstPublishTravelsInColumnsAndJoinsExactly() throws {
        let directory = TemporaryDirectory()
        let a = try syncing(directory, spendings: 1500)
        let keys = SyncKeys(a.vault.backupKeys)
        #expect(try packed(file(a, 1, in: directory), keys: keys).first == SyncChanges.columnsCodec)
        let b = try join(directory)
        #expect(shared(b) == shared(a))
        #expect(shared(b).count > 1500)
        // What B built is a whole copy: it verifies, and a sync with nothing new has nothing to do.
        _ = try Ledger(vault: Vault.open(at: directory.path("b.coffer"), with: .passphrase(try Passphrase(passphrase))))
        let idle = try SyncService.sync(b)
        #expect(idle.published.isEmpty && idle.problems.isEmpty)
    }

    /// A large batch with deletes (an import undone and another made) goes in columns too, and
    /// the device that merges it ends with A's records exactly, the deleted ones gone.
    @Test func aLargeBatchWithDeletesMergesExactly() throws {
        let directory = TemporaryDirectory()
        let a = try syncing(directory, spendings: 30)
        let b = try join(directory)
        let first = a.transactions.prefix(10).map(\.id)
        try a.commit("Replaced", puts: try spendings(1200, from: 5000), deletes: Array(first))
        let published = try SyncService.sync(a).published
        #expect(published.map(\.changes) == [1200 + 10 + 1])  // the change-log entry is a put too
        let packedBody = try packed(file(a, published[0].sequence, in: directory), keys: SyncKeys(a.vault.backupKeys))
        #expect(packedBody.first == SyncChanges.columnsCodec)
        let changes = try SyncChanges.decode(packed: packedBody)
        #expect(Set(changes.operations.filter { $0.payload == nil }.map(\.record.uuid)) == Set(first))
        let report = try SyncService.sync(b)
        #expect(report.problems.isEmpty)
        #expect(shared(b) == shared(a))
        #expect(!b.transactions.contains { first.contains($0.id) })
    }

    @Test func aSmallPublishKeepsTheWholeBody() throws {
        let directory = TemporaryDirectory()
        let a = try syncing(directory, spendings: 10)
        try a.recordValue(of: try a.account(named: "Savings"), amount: Money(minorUnits: 300), on: today)
        let sequence = try SyncService.sync(a).published.last!.sequence
        #expect(try packed(file(a, sequence, in: directory), keys: SyncKeys(a.vault.backupKeys)).first == 0)
    }

    /// The parts of a packed body 2: its columns and its rest (`u64 length ‖ xz`), as written.
    func parts(_ packed: [UInt8]) -> (columns: [UInt8], rest: [UInt8]) {
        let length = Int(packed[1..<9].withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(as: UInt64.self)) })
        return (Array(packed[9..<9 + length]), Array(packed[(9 + length)...]))
    }

    func body(_ columns: [UInt8], _ rest: [UInt8]) -> [UInt8] {
        var packed: [UInt8] = [SyncChanges.columnsCodec]
        withUnsafeBytes(of: UInt64(columns.count).littleEndian) { packed += $0 }
        return packed + columns + rest
    }

    func operations(_ records: [(UUID, FinanceRecord)]) -> [SyncOperation] {
        records.map {
            SyncOperation(
                record: RecordID(uuid: $0.0), clock: 1 << 40, base: .zero, payload: RecordCodec.encode($0.1))
        }
    }

    @Test func hostileColumnsAreRefusedAsDamaged() throws {
        let device = SyncDeviceID.random()
        let puts = operations(try spendings(1100))
        let changes = SyncChanges(published: 0, seen: [device: 0], operations: puts)
        let good = try changes.packed()
        #expect(good.first == SyncChanges.columnsCodec)
        let decoded = try SyncChanges.decode(packed: good)
        #expect(
            Dictionary(uniqueKeysWithValues: decoded.operations.map { ($0.record, $0) })
                == Dictionary(uniqueKeysWithValues: puts.map { ($0.record, $0) }))
        #expect(decoded.seen == changes.seen)

        // A delete naming a record the columns hold: one id written twice.
        var twice = puts
        twice.append(SyncOperation(record: puts[7].record, clock: 1 << 41, base: .zero, payload: nil))
        let twiceBody = try SyncChanges(published: 0, seen: [device: 0], operations: twice).packed()
        // Stamps for another count of records than the columns hold.
        let more = try SyncChanges(published: 0, seen: [device: 0], operations: operations(try spendings(1101)))
            .packed()
        let (columns, rest) = parts(good)
        var flipped = columns
        flipped[flipped.count / 2] ^= 0x40
        var longer = good
        longer.replaceSubrange(1..<9, with: withUnsafeBytes(of: UInt64(good.count).littleEndian) { Array($0) })
        let hostile: [(String, [UInt8])] = [
            ("a delete of a record in the columns", twiceBody),
            ("stamps for one more record", body(columns, parts(more).rest)),
            ("columns of one more record", body(parts(more).columns, rest)),
            ("altered columns", body(flipped, rest)),
            ("cut short", Array(good.dropLast())),
            ("a byte more", good + [0]),
            ("a columns length past the end", longer),
            ("no rest", body(columns, [])),
            ("codec byte alone", [SyncChanges.columnsCodec]),
        ]
        for (what, bytes) in hostile {
            #expect(throws: SyncFileProblem.damaged, "\(what)") { try SyncChanges.decode(packed: bytes) }
        }
    }

    /// A device of the vault sealing and signing a body with hostile columns: refused with its
    /// reason, nothing of it applied, and the device's later files wait behind it.
    @Test func aSignedFileWithHostileColumnsIsRefused() throws {
        let directory = TemporaryDirectory()
        let a = try syncing(directory, spendings: 10)
        let b = try join(directory)
        let before = shared(b)
        let keys = SyncKeys(a.vault.backupKeys)
        let state = a.syncState!.state
        var puts = operations(try spendings(1100, from: 100))
        puts.append(SyncOperation(record: puts[3].record, clock: 1 << 41, base: .zero, payload: nil))
        let file = SyncEnvelope.seal(
            kind: .changes,
            packed: try SyncChanges(published: 0, seen: [state.device: 1], operations: puts).packed(), keys: keys,
            device: state.device, sequence: 2, signer: state.signingKey)
        try Data(file).write(to: self.file(a, 2, in: directory))
        let report = try SyncService.sync(b)
        #expect(report.problems.map(\.problem) == [.damaged])
        #expect(shared(b) == before)
    }

    // MARK: A joining device streams the snapshot

    /// Joins from the folder as `name`, streamed (as `device join` does) and the ordinary way.
    func joinBothWays(_ directory: TemporaryDirectory, name: String) throws -> (
        streamed: SyncJoin, streamedLedger: Ledger, merged: SyncJoin, mergedLedger: Ledger
    ) {
        let now = Date()  // one clock for both: a join's starts at its time
        func join(_ file: String, streaming: Bool) throws -> (SyncJoin, Ledger) {
            let joined = try SyncService.joinCopy(
                folder: directory.path("folder"), vault: directory.path(file),
                credential: .passphrase(try Passphrase(passphrase)), deviceName: name, guard: nil, now: now,
                streaming: streaming)
            let ledger = try Ledger(
                vault: Vault.open(at: directory.path(file), with: .passphrase(try Passphrase(passphrase))))
            return (joined, ledger)
        }
        let (streamed, streamedLedger) = try join("\(name)-streamed.coffer", streaming: true)
        let (merged, mergedLedger) = try join("\(name)-merged.coffer", streaming: false)
        return (streamed, streamedLedger, merged, mergedLedger)
    }

    /// What two copies joined from one folder must agree on: the records, the sync index (every
    /// stamp, and each digest that of the payload the copy holds, under its own index's key),
    /// the conflicts kept, and what was applied from each device (`other`, joined second, also
    /// knows `one`, which enrolled first).
    func expectSameJoin(_ one: Ledger, _ other: Ledger) throws {
        #expect(shared(one) == shared(other))
        let (oneIndex, otherIndex) = (try SyncService.index(of: one), try SyncService.index(of: other))
        #expect(oneIndex.ids == otherIndex.ids && oneIndex.entries.map(\.stamp) == otherIndex.entries.map(\.stamp))
        for (ledger, index) in [(one, oneIndex), (other, otherIndex)] {
            let digests = index.ids.map { ledger.vault.record($0).map { index.digester.digest(of: Array($0.payload)) } }
            #expect(index.entries.map(\.digest) == digests)
        }
        func kept(_ ledger: Ledger) -> [SyncConflict] {
            ledger.syncConflicts.map(\.conflict).map {
                var conflict = $0
                conflict.detected = 0
                return conflict
            }.sorted { ($0.record.uuidString, $0.loserStamp.clock) < ($1.record.uuidString, $1.loserStamp.clock) }
        }
        #expect(kept(one) == kept(other))
        func applied(_ ledger: Ledger) -> [SyncDeviceID: UInt64] {
            ledger.syncState!.state.devices.mapValues(\.applied)
        }
        #expect(applied(one) == applied(other).filter { $0.key != one.syncState!.state.device })
        #expect(one.syncState!.state.clock == other.syncState!.state.clock)
    }

    /// The snapshot's records that no later file names go straight into the new vault; those a
    /// later file of the same device edits or deletes, and those another device edited at the
    /// same time (a conflict), go through the merge. The copy is the one the ordinary build
    /// makes, stamp for stamp and conflict for conflict.
    @Test func aStreamedJoinBuildsTheCopyTheMergeBuilds() throws {
        let directory = TemporaryDirectory()
        let a = try syncing(directory, spendings: 1500)
        let c = try join(directory)
        let spends = a.transactions.sorted { $0.sequence < $1.sequence }
        // A edits two and deletes two; C edits one of A's two at the same time, and another.
        _ = try a.editTransaction(spends[0], .init(amount: Money(minorUnits: 4111)))
        _ = try a.editTransaction(spends[1], .init(note: "Edited on A"))
        try a.deleteTransaction(spends[2])
        try a.deleteTransaction(spends[3])
        let onC = c.transactions
        _ = try c.editTransaction(onC.first { $0.id == spends[0].id }!, .init(amount: Money(minorUnits: 4222)))
        _ = try c.editTransaction(onC.first { $0.id == spends[4].id }!, .init(note: "Edited on C"))
        _ = try SyncService.sync(a)
        _ = try SyncService.sync(c)
        let joined = try joinBothWays(directory, name: "phone")
        #expect(joined.streamed.streamedRecords > 1400)
        #expect(joined.merged.streamedRecords == 0)
        #expect(joined.streamed.recordCount == joined.merged.recordCount)
        #expect(joined.streamed.report.merged == joined.merged.report.merged)
        #expect(joined.streamed.report.conflicts == joined.merged.report.conflicts)
        #expect(joined.streamed.report.conflicts >= 1)
        try expectSameJoin(joined.streamedLedger, joined.mergedLedger)
        // And both agree with A once A has merged C's edits.
        _ = try SyncService.sync(a)
        #expect(shared(joined.streamedLedger) == shared(a))
        #expect(!joined.streamedLedger.transactions.contains { $0.id == spends[2].id || $0.id == spends[3].id })
    }

    /// Seals `operations` as device `state`'s change file `sequence` in the folder, replacing it.
    func plant(
        _ operations: [SyncOperation], seen: [SyncDeviceID: UInt64], as state: SyncState, sequence: UInt64,
        keys: SyncKeys, in directory: TemporaryDirectory, of ledger: Ledger
    ) throws {
        let file = SyncEnvelope.seal(
            kind: .changes, packed: try SyncChanges(published: 0, seen: seen, operations: operations).packed(),
            keys: keys, device: state.device, sequence: sequence, signer: state.signingKey)
        try Data(file).write(to: self.file(ledger, sequence, in: directory))
    }

    /// A snapshot with one record of a newer Coffer's version, and one that waits for a file
    /// that never came: nothing of either is written (both are found after records were
    /// already streamed), and the join reports what the ordinary build does.
    @Test func aSnapshotThatCannotBeAppliedStreamsNothing() throws {
        for kind in ["a newer record", "waits for a missing file"] {
            let directory = TemporaryDirectory()
            let a = try syncing(directory, spendings: 10)
            let keys = SyncKeys(a.vault.backupKeys)
            let state = a.syncState!.state
            // More than a batch: the first is in the pages when the second's record is found.
            var puts = operations(try spendings(5000, from: 100))
            var seen = [state.device: UInt64(0)]
            if kind == "a newer record" {
                puts[4500].payload![1] = 0xFE
            } else {
                seen[SyncDeviceID.random()] = 3
            }
            try plant(puts, seen: seen, as: state, sequence: 1, keys: keys, in: directory, of: a)
            let joined = try joinBothWays(directory, name: "phone")
            #expect(joined.streamed.streamedRecords == 0, "\(kind)")
            #expect(joined.streamed.report.problems == joined.merged.report.problems, "\(kind)")
            #expect(joined.streamed.report.waiting == joined.merged.report.waiting, "\(kind)")
            #expect(
                kind == "a newer record"
                    ? joined.streamed.report.problems.map(\.problem) == [.newerRecord]
                    : joined.streamed.report.waiting.count == 1, "\(kind)")
            #expect(joined.streamedLedger.transactions.isEmpty, "\(kind)")
            try expectSameJoin(joined.streamedLedger, joined.mergedLedger)
        }
    }

    /// A snapshot of several batches with deletes of its own and clocks ahead of the joining
    /// device's, beside junk larger than it at the next number and past a gap: streamed all the
    /// same, and the copy is the one the merge builds (tombstones, clock and the junk's report).
    @Test func aSnapshotOfManyBatchesWithDeletesStreamsPastLargerJunk() throws {
        let directory = TemporaryDirectory()
        let a = try syncing(directory, spendings: 10)
        let keys = SyncKeys(a.vault.backupKeys)
        let state = a.syncState!.state
        let ahead: UInt64 = 1 << 60
        var writes = operations(try spendings(5000, from: 100)).map {
            SyncOperation(record: $0.record, clock: ahead + 7, base: .zero, payload: $0.payload)
        }
        writes += (0..<20).map { _ in
            SyncOperation(record: RecordID(uuid: UUID()), clock: ahead + 9, base: .zero, payload: nil)
        }
        try plant(writes, seen: [state.device: 0], as: state, sequence: 1, keys: keys, in: directory, of: a)
        let size = try FileManager.default.attributesOfItem(atPath: file(a, 1, in: directory).path)[.size] as! Int
        for sequence in [2, 9] as [UInt64] {
            try Data(SecureRandom.bytes(count: size + 4096)).write(to: file(a, sequence, in: directory))
        }
        let joined = try joinBothWays(directory, name: "phone")
        #expect(joined.streamed.streamedRecords == 5000)
        #expect(joined.streamed.report.problems == joined.merged.report.problems)
        #expect(joined.streamed.report.problems.count == 1)
        #expect(joined.streamed.report.merged == joined.merged.report.merged)
        #expect(joined.streamed.report.merged.map(\.changes) == [5020])
        #expect(joined.streamedLedger.syncState!.state.clock == ahead + 9)
        let index = try SyncService.index(of: joined.streamedLedger)
        #expect(index.entries.count { $0.digest == nil } == 20)
        try expectSameJoin(joined.streamedLedger, joined.mergedLedger)
    }
}
