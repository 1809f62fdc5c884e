import CofferTestSupport
import FinanceCore
import Foundation
import PropertyBased
import Testing
import VaultStore

@testable import CofferKit

/// Three devices editing every kind of record offline, syncing in random orders through a
/// simulated sync engine that delays, reorders, hides, duplicates and half-delivers files, while
/// junk and another vault's files are planted in the folders at random moments: after everyone
/// syncs, every device holds the same vault, and every write any device
/// published is in it, was knowingly overwritten, or is kept as a conflict.
@Suite struct SyncConvergenceTests {
    static let steps = Gen.int(in: 0...999).array(of: 20...120)

    /// The fixed cases CI runs: the same plans every time (Xoshiro from a pinned seed).
    @Test func devicesConvergeAndLoseNothing() throws {
        var random = Xoshiro(seed: (0xC0FF_E2, 0x5E_ED, 16, 2026))
        for _ in 0..<6 {
            let seed = Gen.uint64().run(using: &random)
            let plan = Self.steps.run(using: &random)
            do {
                try Self.run(seed: seed, steps: plan)
            } catch {
                Issue.record("seed \(seed), steps \(plan): \(error)")
            }
        }
    }

    /// The long run (`scripts/reliability sync`): COFFER_SYNC_CASES random plans, and a failing
    /// one shrunk to the fewest steps that still fail.
    @Test(.enabled(if: ProcessInfo.processInfo.environment["COFFER_SYNC_CASES"] != nil))
    func randomPlansConvergeAndLoseNothing() async {
        let cases = ProcessInfo.processInfo.environment["COFFER_SYNC_CASES"].flatMap(Int.init) ?? 0
        await propertyCheck(count: cases, input: Gen.uint64(), Self.steps) { seed, steps in
            do {
                try Self.run(seed: seed, steps: steps)
            } catch {
                Issue.record("seed \(seed): \(error)")
            }
        }
    }

    static func run(seed: UInt64, steps: [Int]) throws {
        let simulation = try SyncSimulation(devices: 3, seed: seed)
        for step in steps {
            let device = (step / 10) % 3
            if step >= 998 {
                try simulation.rotate(device)
                continue
            }
            if step >= 960 {
                simulation.plant(device)
                continue
            }
            switch step % 10 {
            case 0..<5: simulation.edit(device)
            case 5, 6: try simulation.sync(device)
            default: simulation.engineStep()
            }
        }
        let rounds = try simulation.converge()
        #expect(rounds <= 4, "converged in \(rounds) rounds")
        // What was planted never stopped a merge; taken out, every device is then idle.
        simulation.removePlanted()
        // Once converged, every device answers from its sync state alone, and agrees with the
        // full sync (checked at every sync of the run).
        let answered = simulation.answeredWithoutReading
        for device in 0..<3 { try simulation.sync(device) }
        #expect(simulation.answeredWithoutReading == answered + 3, "converged devices have nothing to do")
        let exports = try (0..<3).map(simulation.exportJSON)
        #expect(exports[0] == exports[1], "device 0 and 1 hold the same vault")
        #expect(exports[0] == exports[2], "device 0 and 2 hold the same vault")
        // A rotation deletes the old epoch's files this check reads; `SyncYearTests` checks
        // that nothing is lost across one.
        if simulation.rotations == 0 { try checkNothingLost(simulation) }
    }

    /// Every write in every change file: the record's final value, or overwritten by a write
    /// whose author had seen it, or kept as a conflict on every device.
    static func checkNothingLost(_ simulation: SyncSimulation) throws {
        let ledger = simulation.ledgers[0]
        let keys = SyncKeys(ledger.vault.backupKeys)
        struct Write {
            let operation: SyncOperation; let stamp: SyncStamp; let sequence: UInt64; let seen: [SyncDeviceID: UInt64]
        }
        var writes: [RecordID: [Write]] = [:]
        let listing = try SyncFolder(url: simulation.folder(0), epoch: 1).list()
        for (device, files) in listing.changes {
            for (sequence, file) in files {
                let envelope = try SyncEnvelope.parse(try SyncFolder.read(file), vaultID: keys.vaultID)
                let changes = try envelope.openChanges(keys)
                for operation in changes.operations {
                    writes[operation.record, default: []].append(
                        Write(
                            operation: operation, stamp: SyncStamp(clock: operation.clock, device: device),
                            sequence: sequence, seen: changes.seen))
                }
            }
        }
        let finalIndex = try SyncService.index(of: ledger)
        let kept = simulation.ledgers.map { ledger in Set(ledger.syncConflicts.map { $0.conflict.loserStamp }) }
        var lost: [String] = []
        for (record, list) in writes {
            let final = finalIndex.stamp(record)
            let finalPayload = ledger.vault.record(record).map { Array($0.payload) }
            func accounted(_ write: Write) -> Bool {
                write.stamp == final || write.operation.payload == finalPayload
                    || list.contains { later in
                        later.stamp.device == write.stamp.device
                            ? later.sequence > write.sequence : (later.seen[write.stamp.device] ?? 0) >= write.sequence
                    } || kept.allSatisfy { $0.contains(write.stamp) }
            }
            // A value is lost only if no write of it is accounted for: two devices making the
            // same edit (both deleting a record) lose nothing when one of the two is kept.
            for write in list
            where !list.contains(where: { $0.operation.payload == write.operation.payload && accounted($0) }) {
                lost.append(
                    "\(record.hex.prefix(8)) by \(write.stamp.device.short) #\(write.sequence): kept on \(kept.map { $0.contains(write.stamp) })"
                )
            }
        }
        #expect(lost.isEmpty, "writes neither present, knowingly overwritten, nor kept: \(lost)")
        if !lost.isEmpty, ProcessInfo.processInfo.environment["COFFER_SYNC_DEBUG"] != nil {
            for (index, ledger) in simulation.ledgers.enumerated() {
                print("device \(index) \(ledger.syncState!.state.device.short)")
                for entry in ledger.syncConflicts {
                    let c = entry.conflict
                    print(
                        "  conflict \(RecordID(uuid: c.record).hex.prefix(8)) loser \(c.loserStamp.device.short)@\(c.loserStamp.clock) \(c.loser.map { try! RecordCodec.decode($0, id: c.record) }.map { "\($0)" }?.prefix(120) ?? "deleted") winner \(c.winnerStamp.device.short)@\(c.winnerStamp.clock) \(c.winner.map { try! RecordCodec.decode($0, id: c.record) }.map { "\($0)" }?.prefix(120) ?? "deleted")"
                    )
                }
                for change in ledger.changes { print("  log #\(change.entry.sequence) \(change.entry.summary)") }
            }
            for (record, list) in writes where lost.contains(where: { $0.hasPrefix(record.hex.prefix(8)) }) {
                for write in list {
                    print(
                        "write \(write.stamp.device.short)#\(write.sequence)@\(write.stamp.clock) base \(write.operation.base.device.short)@\(write.operation.base.clock) seen \(write.seen.map { "\($0.key.short):\($0.value)" }) \(write.operation.payload.map { "\(try! RecordCodec.decode($0, id: record.uuid))".prefix(100) } ?? "deleted")"
                    )
                }
            }
        }
    }
}

/// The issue's "done when": two machines' worth of state share a folder for a simulated year of
/// daily edits on both, each offline for weeks at a time, with a key rotation (compaction) in the
/// middle, and converge with nothing lost: every record either device ever made is on both.
@Suite struct SyncYearTests {
    @Test func aYearOfDailyEditsOnTwoDevicesOfflineForWeeksConverges() throws {
        let simulation = try SyncSimulation(devices: 2, seed: 2026)
        var made = Set<UUID>()
        var offlineUntil = [0, 0]
        func records(_ ledger: Ledger) -> Set<UUID> {
            Set(
                ledger.vault.records.filter { record in
                    guard let kind = record.payload.first.flatMap(RecordKind.init(rawValue:)) else { return false }
                    return !kind.isLocal && kind != .invoiceCounter
                }.map(\.id.uuid))
        }
        for day in 0..<365 {
            simulation.now = Date(timeIntervalSince1970: 1_800_000_000 + Double(day) * 86_400)
            for device in 0..<2 {
                if day >= offlineUntil[device], Int.random(in: 0..<40, using: &simulation.random) == 0 {
                    offlineUntil[device] = day + Int.random(in: 7...28, using: &simulation.random)
                }
                for _ in 0..<Int.random(in: 0...3, using: &simulation.random) {
                    simulation.edit(device, additive: true)
                }
                made.formUnion(records(simulation.ledgers[device]))
                if day >= offlineUntil[device] { try simulation.sync(device) }
            }
            if day == 180 { try simulation.rotate(0) }
            for _ in 0..<6 { simulation.engineStep() }
        }
        _ = try simulation.converge()
        let exports = try (0..<2).map(simulation.exportJSON)
        #expect(exports[0] == exports[1])
        for device in 0..<2 {
            let missing = made.subtracting(records(simulation.ledgers[device]))
            #expect(missing.isEmpty, "device \(device) lacks \(missing.count) of \(made.count) records made this year")
            #expect(simulation.ledgers[device].vault.keyGeneration == 2)
        }
        #expect(made.count > 500, "a year's worth: \(made.count) records")
    }
}
