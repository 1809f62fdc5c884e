import CofferTestSupport
import FinanceCore
import Foundation
import Testing
import VaultCrypto
import VaultStore

@testable import CofferKit

/// SIGKILL at random moments of `coffer sync` on one of two devices sharing a folder
/// (Specs/sync-format.md §5, §6): while it publishes a large batch of its own edits, and while it
/// merges a large batch of the other device's. After every kill:
///
/// - the killed device's vault opens and fully verifies, holds every one of its own edits, and
///   holds the other device's new edits all or none (a merge is one transaction);
/// - its change files in the folder are numbered 1…n with no gap, and its vault records either
///   all of them or all but the last (published, killed before recording it);
/// - its next `coffer sync` exits 0; after both devices sync twice each, `coffer export json`
///   is byte for byte the same on both and holds every edit that reported success, each device's
///   state records every file in the folder, nothing waits, and no write was published twice
///   (no two of a device's writes to one record replace the same value).
///
/// A kill lands after a random delay between 0 and 1.1 × the time an uninterrupted sync of the
/// same work takes, measured first and again every ten kills (the vaults grow as trials go on);
/// every twenty kills a new pair of devices starts, so long runs stay at a realistic size.
/// `COFFER_CRASH_TRIALS` sets the kills per operation (`scripts/reliability sync` runs more).
@Suite(.serialized) struct SyncCrashTests {
    static let trials = Int(ProcessInfo.processInfo.environment["COFFER_CRASH_TRIALS"] ?? "") ?? 8
    static let passphrase = "demo"
    /// Lines per imported statement: one import is one large batch of new records.
    static let statementLines = 200

    enum Device: String, CaseIterable {
        case laptop, desktop
        var other: Device { self == .laptop ? .desktop : .laptop }
    }

    /// Where the kills left the killed device, judged from the folder and its vault.
    struct Outcome {
        var interrupted = 0, finishedFirst = 0
        var beforePublishing = 0, publishedNotRecorded = 0, recordedNotMerged = 0, mergedNotRepaired = 0
        var repaired = 0
        /// Temporary files a kill left in the folder (`.NAME.random.tmp`, ignored by every reader).
        var temporaryFiles = 0
        var checkedEdits = 0, changeFiles = 0
    }

    /// Two devices' vaults and state directories in one sandbox, sharing one folder, and the note
    /// of every edit each made that reported success.
    final class TwoDevices {
        let sandbox = Sandbox()
        var folder: URL { sandbox.directory.path("Sync/coffer") }
        private(set) var edits: [Device: Set<String>] = [.laptop: [], .desktop: []]
        private var updates: [Device: Int] = [.laptop: 0, .desktop: 0]
        private var statements = 0
        /// Names both devices gave a new account before syncing: after the merge one of the two
        /// keeps it and the other is `NAME (2)` (a repair, published as a second change file).
        private(set) var sharedNames: [String] = []
        private(set) var ids: [Device: SyncDeviceID] = [:]

        func vault(_ device: Device) -> URL { sandbox.directory.path("\(device.rawValue)/vault.coffer") }

        func environment(_ device: Device) -> [String: String] {
            [
                "COFFER_PASSPHRASE": SyncCrashTests.passphrase, "COFFER_TODAY": "2026-11-22",
                "COFFER_VAULT": vault(device).path,
                "XDG_STATE_HOME": sandbox.directory.path("\(device.rawValue)/state").path,
            ]
        }

        func start(_ device: Device, _ arguments: [String]) throws -> Child {
            try sandbox.start(arguments, environment: environment(device))
        }

        @discardableResult
        func run(_ device: Device, _ arguments: [String]) throws -> RunResult {
            try sandbox.run(arguments, environment: environment(device))
        }

        /// The laptop makes a demo vault and the folder; the desktop joins from the folder alone.
        init() throws {
            try FileManager.default.createDirectory(
                at: sandbox.directory.path("laptop"), withIntermediateDirectories: true)
            let demo = try run(.laptop, ["demo", "--vault", vault(.laptop).path])
            #expect(demo.status == 0, "\(demo.stderr)")
            let initialised = try run(.laptop, ["sync", "init", folder.path, "--name", "laptop"])
            #expect(initialised.status == 0, "\(initialised.stderr)")
            let joined = try run(.desktop, ["device", "join", folder.path, "--name", "desktop"])
            #expect(joined.status == 0, "\(joined.stderr)")
            for device in Device.allCases {
                ids[device] = try #require(try open(device).ledger.syncState?.state.device)
            }
        }

        /// One `coffer update` on the device's own dates (no two edits share a value); its note.
        @discardableResult
        func update(_ device: Device) throws -> String {
            updates[device]! += 1
            let number = updates[device]!
            let date = try CalendarDate(year: device == .laptop ? 2000 : 2010, month: 1, day: 1).adding(days: number)
            let note = "\(device.rawValue) update \(number)"
            let result = try run(
                device,
                // --yes: after killed writes, the value can be ten times the last one that landed.
                ["update", "Marcus Easy Access", "\(number).25", "--date", date.description, "--note", note, "--yes"])
            #expect(result.status == 0, "\(result.stderr)")
            if result.status == 0 { edits[device]!.insert(note) }
            return note
        }

        /// Imports a statement of `statementLines` transactions, each with its own note; the notes.
        @discardableResult
        func importStatement(_ device: Device) throws -> Set<String> {
            statements += 1
            let statement = sandbox.directory.path("statement-\(statements).csv")
            let notes = (0..<SyncCrashTests.statementLines).map {
                "\(device.rawValue) statement \(statements) line \($0)"
            }
            let rows = notes.enumerated().map { line, note in
                "2026-10-\(String(format: "%02d", line % 28 + 1)),-\(line % 90 + 1).\(String(format: "%02d", line % 100)),\(note)"
            }
            try (["Date,Amount,Description"] + rows).joined(separator: "\n").write(
                to: statement, atomically: true, encoding: .utf8)
            let result = try run(
                device, ["import", "csv", statement.path, "--into", "transactions", "--account", "Bank"])
            #expect(result.status == 0, "\(result.stderr)")
            if result.status == 0 { edits[device]!.formUnion(notes) }
            return Set(notes)
        }

        /// The same new account name on both devices, each before it merged the other's.
        func addAccountOnBoth(first: Device) throws {
            let name = "Shared pot \(sharedNames.count + 1)"
            sharedNames.append(name)
            for device in [first, first.other] {
                let result = try run(device, ["account", "add", name, "--category", "Savings", "--value", "10"])
                #expect(result.status == 0, "\(result.stderr)")
            }
        }

        /// A sync that must succeed with nothing rejected or left waiting.
        func sync(_ device: Device, _ why: String) throws {
            let result = try run(device, ["sync"])
            #expect(
                result.status == 0, "\(why): coffer sync on the \(device) exited \(result.status): \(result.stderr)")
            #expect(
                !result.stderr.contains("waiting") && !result.stderr.contains("rejected"),
                "\(why): coffer sync on the \(device): \(result.stderr)")
        }

        /// The sequence numbers of the device's change files in the folder, sorted, and how many
        /// temporary files are beside them.
        func changeFiles(of device: Device) -> (sequences: [UInt64], temporary: Int) {
            let directory = folder.appendingPathComponent(ids[device]!.hex)
            let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
            let sequences = names.compactMap { name -> UInt64? in
                // `00000001-SEQUENCE.cfsync`: epoch 1 (the vault's first key generation).
                guard name.count == 9 + 16 + ".cfsync".count, name.hasPrefix("00000001-"), name.hasSuffix(".cfsync")
                else { return nil }
                return UInt64(name.dropFirst(9).prefix(16))
            }
            return (sequences.sorted(), names.filter { $0.hasPrefix(".") }.count)
        }

        /// Opens with the passphrase, runs the full verification and decodes every record (the
        /// ledger does); the notes of every transaction and value update.
        func open(_ device: Device) throws -> (vault: Vault, ledger: Ledger, notes: Set<String>) {
            let vault = try Vault.open(at: vault(device), with: .passphrase(try Passphrase(SyncCrashTests.passphrase)))
            _ = try vault.verify()
            let ledger = try Ledger(vault: vault)
            let notes = ledger.transactions.compactMap(\.note) + ledger.updates.compactMap(\.note)
            return (vault, ledger, Set(notes))
        }

        /// A write names the value it replaced (its base): a device publishing one write twice
        /// (its own file read back wrongly, or not at all) names the same base twice.
        struct Replaced: Hashable {
            let record: RecordID
            let base: SyncStamp
        }
        /// Per device, every write in its change files checked so far and the file it is in, and
        /// the last file checked (files are immutable, so each is read once).
        var replaced: [Device: [Replaced: UInt64]] = [.laptop: [:], .desktop: [:]]
        var checkedThrough: [Device: UInt64] = [.laptop: 0, .desktop: 0]
    }

    /// Every string under a `"note"` key anywhere in an export.
    static func notes(inExport text: String) throws -> Set<String> {
        var notes = Set<String>()
        func walk(_ value: Any) {
            if let object = value as? [String: Any] {
                for (key, value) in object {
                    if key == "note", let note = value as? String { notes.insert(note) } else { walk(value) }
                }
            } else if let array = value as? [Any] {
                array.forEach(walk)
            }
        }
        walk(try JSONSerialization.jsonObject(with: Data(text.utf8)))
        return notes
    }

    /// Per trial: `prepare` makes the edits (returning the other device's edits that the killed
    /// device has not merged yet), then `coffer sync` on `killed` is started and SIGKILLed after a
    /// random delay; then the checks above. Every eleventh round (the first included) is not
    /// killed: it measures the kill window for the next ten.
    func killTrials(killed: Device, prepare: (TwoDevices) throws -> Set<String>) throws -> Outcome {
        var devices = try TwoDevices()
        var pair = (edits: 0, files: 0)
        let other = killed.other
        var outcome = Outcome()
        var window: TimeInterval = 0
        var round = 0
        while outcome.interrupted + outcome.finishedFirst < Self.trials {
            let reference = round % 11 == 0
            if round > 0 && round % 22 == 0 {
                outcome.checkedEdits += pair.edits
                outcome.changeFiles += pair.files
                devices = try TwoDevices()
            }
            round += 1
            let remote = try prepare(devices)
            let (filesBefore, temporaryBefore) = devices.changeFiles(of: killed)

            let started = Date()
            let child = try devices.start(killed, ["sync"])
            if reference {
                let result = try child.result()
                #expect(result.status == 0, "the uninterrupted sync failed: \(result.stderr)")
                window = Date().timeIntervalSince(started)
            } else {
                usleep(UInt32(Double.random(in: 0...(window * 1.1)) * 1_000_000))
                let running = child.isRunning
                child.kill()
                let status = child.wait()
                if running {
                    outcome.interrupted += 1
                } else {
                    outcome.finishedFirst += 1
                    #expect(status == 0, "a sync that was not killed failed with \(status)")
                }
            }

            // Straight after the kill: a whole vault, nothing of its own lost, the merge all or nothing.
            let (_, ledger, notes) = try devices.open(killed)
            let missing = devices.edits[killed]!.subtracting(notes)
            #expect(missing.isEmpty, "the killed device lost its own edits: \(missing.sorted().prefix(5))")
            let earlier = devices.edits[other]!.subtracting(remote).subtracting(notes)
            #expect(earlier.isEmpty, "the killed device lost edits it had merged before: \(earlier.sorted().prefix(5))")
            let merged = remote.intersection(notes).count
            #expect(
                merged == 0 || merged == remote.count,
                "a merge was half applied: \(merged) of the other device's \(remote.count) new edits")
            let (sequences, temporary) = devices.changeFiles(of: killed)
            #expect(
                sequences == (0..<sequences.count).map { UInt64($0 + 1) },
                "the killed device's change files have a gap: \(sequences)")
            let recorded = try #require(ledger.syncState?.state.published)
            #expect(
                UInt64(sequences.count) == recorded || UInt64(sequences.count) == recorded + 1,
                "\(sequences.count) change files in the folder, \(recorded) recorded in the vault")
            outcome.temporaryFiles += temporary - temporaryBefore
            if !reference {
                if sequences.count == filesBefore.count {
                    outcome.beforePublishing += 1
                } else if UInt64(sequences.count) > recorded {
                    outcome.publishedNotRecorded += 1
                } else if merged == 0 {
                    outcome.recordedNotMerged += 1
                } else if ledger.accounts.filter({ $0.name == devices.sharedNames.last }).count == 2 {
                    outcome.mergedNotRepaired += 1
                } else {
                    outcome.repaired += 1
                }
            }

            // Half the time another edit before the next sync, and half the time the other device
            // syncs first (it merges a file the killed device may not have recorded yet).
            if Bool.random() { try devices.update(killed) }
            if Bool.random() { try devices.sync(other, "the other device's sync after the kill") }
            try devices.sync(killed, "the next sync after the kill")
            try devices.sync(other, "converging")
            try devices.sync(killed, "converging")
            try devices.sync(other, "converging")

            let exports = try Device.allCases.map { device in
                let result = try devices.run(device, ["export", "json", "--out", "-"])
                #expect(result.status == 0, "\(result.stderr)")
                return result.stdout
            }
            #expect(exports[0] == exports[1], "the two devices hold different vaults after syncing twice each")
            let exported = try Self.notes(inExport: exports[0])
            let everyEdit = devices.edits[.laptop]!.union(devices.edits[.desktop]!)
            #expect(
                everyEdit.isSubset(of: exported),
                "edits that reported success are not in the export: \(everyEdit.subtracting(exported).sorted().prefix(5))"
            )
            pair = (everyEdit.count, try checkFolder(devices))
        }
        outcome.checkedEdits += pair.edits
        outcome.changeFiles += pair.files
        return outcome
    }

    /// Both devices after converging: each records every file of its own and every file of the
    /// other's, has nothing left to publish, and neither published a write twice.
    /// Returns how many change files the folder holds.
    func checkFolder(_ devices: TwoDevices) throws -> Int {
        var files: [Device: [UInt64]] = [:]
        for device in Device.allCases {
            let sequences = devices.changeFiles(of: device).sequences
            #expect(
                sequences == (0..<sequences.count).map { UInt64($0 + 1) },
                "the \(device)'s change files are not numbered 1…n: \(sequences)")
            files[device] = sequences
        }
        var keys: SyncKeys?
        for device in Device.allCases {
            let (vault, ledger, _) = try devices.open(device)
            let state = try #require(ledger.syncState?.state)
            #expect(state.published == UInt64(files[device]!.count), "the \(device) does not record all its files")
            #expect(
                state.devices[devices.ids[device.other]!]?.applied == UInt64(files[device.other]!.count),
                "the \(device) has not merged every file of the \(device.other)")
            let unpublished = SyncService.localWrites(ledger, index: try SyncService.index(of: ledger))
            #expect(unpublished.isEmpty, "the \(device) still has \(unpublished.count) writes to publish")
            let names = ledger.accounts.map(\.name)
            for shared in devices.sharedNames {
                #expect(
                    names.filter { $0 == shared }.count == 1 && names.filter { $0 == "\(shared) (2)" }.count == 1,
                    "the \(device) does not hold both accounts named '\(shared)', one of them renamed")
            }
            keys = keys ?? SyncKeys(vault.backupKeys)
        }
        let sealing = try #require(keys)
        for device in Device.allCases {
            let id = devices.ids[device]!
            let directory = devices.folder.appendingPathComponent(id.hex)
            for sequence in files[device]! where sequence > devices.checkedThrough[device]! {
                let bytes = try SyncFolder.read(
                    directory.appendingPathComponent(SyncFolder.changesName(sequence, epoch: 1)))
                let envelope = try SyncEnvelope.parse(bytes, vaultID: sealing.vaultID)
                let changes = try envelope.openChanges(sealing)
                #expect(envelope.device == id && envelope.sequence == sequence)
                #expect(changes.seen[id] == sequence - 1)
                for operation in changes.operations {
                    let key = TwoDevices.Replaced(record: operation.record, base: operation.base)
                    if let first = devices.replaced[device]![key] {
                        Issue.record(
                            "the \(device) published a write to \(operation.record.hex.prefix(8)) twice: in #\(first) and #\(sequence)"
                        )
                    }
                    devices.replaced[device]![key] = sequence
                }
                devices.checkedThrough[device] = sequence
            }
        }
        return files.values.map(\.count).reduce(0, +)
    }

    static func figures(_ outcome: Outcome) -> String {
        "\(outcome.interrupted) killed mid-run, \(outcome.finishedFirst) finished first; killed before publishing \(outcome.beforePublishing), published but not yet recorded \(outcome.publishedNotRecorded), recorded but not merged \(outcome.recordedNotMerged), merged but not repaired \(outcome.mergedNotRepaired), merged and repaired \(outcome.repaired); \(outcome.temporaryFiles) temporary files left; every next sync exited 0; \(outcome.checkedEdits) edits in both devices' identical exports, \(outcome.changeFiles) change files numbered without gaps, none published twice"
    }

    @Test func killedPublishLeavesNothingHalfDoneAndTheNextSyncCompletes() throws {
        let outcome = try killTrials(killed: .laptop) { devices in
            // The desktop's small edits wait in the folder; the laptop publishes a statement.
            try devices.addAccountOnBoth(first: .desktop)
            let remote = Set([try devices.update(.desktop), try devices.update(.desktop)])
            try devices.sync(.desktop, "publishing the desktop's edits")
            try devices.importStatement(.laptop)
            try devices.update(.laptop)
            return remote
        }
        #expect(outcome.interrupted > 0, "some kills must land mid-sync")
        print("sync publish: \(Self.figures(outcome))")
    }

    @Test func killedMergeLeavesNothingHalfDoneAndTheNextSyncCompletes() throws {
        let outcome = try killTrials(killed: .desktop) { devices in
            // The laptop publishes two statements in two files; the desktop has small edits of its own.
            var remote = Set<String>()
            try devices.addAccountOnBoth(first: .laptop)
            for _ in 0..<2 {
                remote.formUnion(try devices.importStatement(.laptop))
                remote.insert(try devices.update(.laptop))
                try devices.sync(.laptop, "publishing the laptop's edits")
            }
            try devices.update(.desktop)
            try devices.update(.desktop)
            return remote
        }
        #expect(outcome.interrupted > 0, "some kills must land mid-sync")
        print("sync merge: \(Self.figures(outcome))")
    }
}
