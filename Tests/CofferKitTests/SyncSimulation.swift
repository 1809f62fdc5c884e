import CofferTestSupport
import FinanceCore
import Foundation
import Testing
import VaultCrypto
import VaultStore

@testable import CofferKit

/// Several devices, each with its own vault file and its own copy of the sync folder, and a
/// simulated file-sync engine between the copies that delays, reorders, hides, duplicates with
/// `(1)` names and delivers files half-written, as Syncthing or Dropbox may.
final class SyncSimulation {
    typealias Generator = SeededGenerator

    let directory = TemporaryDirectory()
    let passphrase = "sync simulation passphrase"
    var ledgers: [Ledger] = []
    var random: Generator
    /// Simulated time: every edit and sync moves it on, so clocks differ as on real machines.
    var now = Date(timeIntervalSince1970: 1_800_000_000)
    var today: CalendarDate { CalendarDate(dayNumber: Int(now.timeIntervalSince1970) / 86_400) }
    /// Files Coffer created, by path relative to a folder, and the device whose folder it was made in.
    var origins: [String: Int] = [:]
    /// (file, device) not yet delivered whole.
    var pending = Set<Pair>()
    /// Files hidden from a device for a while.
    var hidden = Set<Pair>()
    struct Pair: Hashable { let file: String; let device: Int }
    /// Key rotations so far (each deletes old epochs' files, which the lost-write check reads).
    var rotations = 0
    /// What `plant` put in a device's folder: never carried by the engine, never Coffer's.
    var planted = Set<Pair>()
    /// Another vault syncing through a folder of its own, whose files are planted here.
    private lazy var elsewhere: (folder: URL, device: String)? = {
        guard
            let ledger = try? Ledger.create(
                at: directory.path("elsewhere.coffer"), passphrase: try Passphrase(passphrase),
                parameters: testParameters, currency: .gbp),
            (try? ledger.addAccount(
                name: "Elsewhere", category: "Cash", kind: .asset, value: (Money(minorUnits: 1), today), today: today))
                != nil,
            (try? SyncService.initialize(ledger, folder: directory.path("elsewhere"), deviceName: "x")) != nil
        else { return nil }
        return (directory.path("elsewhere"), ledger.syncState!.state.device.hex)
    }()

    init(devices: Int, seed: UInt64) throws {
        random = Generator(state: seed)
        let first = try Ledger.create(
            at: vaultURL(0), passphrase: try Passphrase(passphrase), parameters: testParameters, currency: .gbp)
        try first.addAccount(
            name: "Savings", category: "Savings", kind: .asset, value: (Money(minorUnits: 10_000), today), today: today)
        ledgers.append(first)
        for device in 0..<devices {
            try FileManager.default.createDirectory(at: folder(device), withIntermediateDirectories: true)
        }
        _ = try SyncService.initialize(first, folder: folder(0), deviceName: "device0", now: tick())
        for device in 1..<devices {
            collect()
            deliverEverything()
            let (ledger, _) = try SyncService.join(
                folder: folder(device), vault: vaultURL(device), credential: .passphrase(try Passphrase(passphrase)),
                deviceName: "device\(device)", now: tick())
            ledgers.append(ledger)
        }
        collect()
    }

    func vaultURL(_ device: Int) -> URL { directory.path("vault\(device).coffer") }
    func folder(_ device: Int) -> URL { directory.path("folder\(device)") }

    func tick() -> Date {
        now += Double(Int.random(in: 1...90_000, using: &random)) / 1000
        return now
    }

    // MARK: The engine

    /// Registers files Coffer made in any folder, to be carried to every other.
    func collect() {
        for device in ledgers.indices.isEmpty ? [0] : Array(0..<max(ledgers.count, 1)) {
            for file in files(in: folder(device))
            where origins[file] == nil && !planted.contains(Pair(file: file, device: device)) {
                origins[file] = device
                for other in 0..<deviceCount where other != device { pending.insert(Pair(file: file, device: other)) }
            }
        }
    }

    var deviceCount: Int {
        (try? FileManager.default.contentsOfDirectory(atPath: directory.url.path))?.filter { $0.hasPrefix("folder") }
            .count ?? 0
    }

    func files(in folder: URL) -> [String] {
        guard let enumerator = FileManager.default.enumerator(atPath: folder.path) else { return [] }
        return enumerator.compactMap { $0 as? String }.filter {
            ($0.hasSuffix(".cfsync") || $0.hasSuffix(".cfkeys")) && !$0.contains(" (") && !$0.hasPrefix(".")
                && !$0.contains("/.")
        }.sorted()
    }

    private func copy(_ file: String, to device: Int, prefix: Int? = nil, name: String? = nil) {
        guard let origin = origins[file] else { return }
        let source = folder(origin).appendingPathComponent(file)
        let target = folder(device).appendingPathComponent(name ?? file)
        // Deleted at its origin (old epochs after a key rotation): the engine deletes it too.
        guard var bytes = try? Data(contentsOf: source) else {
            try? FileManager.default.removeItem(at: target)
            return
        }
        if let prefix { bytes = bytes.prefix(prefix) }
        try? FileManager.default.createDirectory(
            at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
        try? FileManager.default.removeItem(at: target)
        try? bytes.write(to: target)
    }

    /// One thing the engine does: deliver, half-deliver, duplicate, hide or unhide a file.
    func engineStep() {
        if !hidden.isEmpty, Int.random(in: 0..<4, using: &random) == 0 {
            let pair = hidden.sorted { ($0.file, $0.device) < ($1.file, $1.device) }.randomElement(using: &random)!
            hidden.remove(pair)
            copy(pair.file, to: pair.device)
            return
        }
        guard
            let pair = pending.sorted(by: { ($0.file, $0.device) < ($1.file, $1.device) }).randomElement(using: &random)
        else { return }
        switch Int.random(in: 0..<10, using: &random) {
        case 0:
            // Half-written under its final name; the rest arrives later.
            let size = (try? Data(contentsOf: folder(origins[pair.file]!).appendingPathComponent(pair.file)).count) ?? 0
            copy(pair.file, to: pair.device, prefix: Int.random(in: 0..<max(size, 1), using: &random))
        case 1:
            // A conflict copy with a `(1)` name, besides the real one.
            let name = pair.file.replacingOccurrences(of: ".cfsync", with: " (1).cfsync")
            copy(pair.file, to: pair.device, name: name)
            copy(pair.file, to: pair.device)
            pending.remove(pair)
        case 2:
            // Delivered, then hidden for a while (a sync tool rescanning, a folder unmounted).
            if pair.file.hasSuffix(".cfsync"), !pair.file.contains("enrol") {
                pending.remove(pair)
                hidden.insert(pair)
            }
        default:
            copy(pair.file, to: pair.device)
            pending.remove(pair)
        }
    }

    /// Someone who can write `device`'s folder plants something in it: another vault's keys
    /// file or device, junk or an empty file under a Coffer name, a directory or a link where a
    /// file belongs, or junk under the name another device publishes under next.
    func plant(_ device: Int) {
        let folder = folder(device)
        func hex(_ count: Int) -> String {
            (0..<count).map { _ in String(UInt8.random(in: 0...255, using: &random), radix: 16) }
                .map { $0.count == 1 ? "0" + $0 : $0 }.joined()
        }
        let junk = Data(
            (0..<Int.random(in: 0...900, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) })
        var made: [String] = []
        func put(_ name: String, _ contents: Data? = nil) {
            let target = folder.appendingPathComponent(name)
            try? FileManager.default.createDirectory(
                at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
            guard !FileManager.default.fileExists(atPath: target.path) else { return }
            try? (contents ?? junk).write(to: target)
            made.append(name)
        }
        switch Int.random(in: 0..<7, using: &random) {
        case 0, 1:
            guard let elsewhere, let names = files(in: elsewhere.folder).randomElement(using: &random) else { return }
            put(names, try? Data(contentsOf: elsewhere.folder.appendingPathComponent(names)))
        case 2: put("keys-0000000\(Int.random(in: 1...3, using: &random))-\(hex(4)).cfkeys")
        case 3:
            let stranger = hex(16)
            put("\(stranger)/\(SyncFolder.enrolmentName(1))")
            put("\(stranger)/\(SyncFolder.changesName(1, epoch: 1))", Data())
        case 4:
            let name = "keys-00000001-\(hex(4)).cfkeys"
            try? FileManager.default.createDirectory(
                at: folder.appendingPathComponent(name + "/inside"), withIntermediateDirectories: true)
            made.append(name)
        case 5:
            let name = "keys-00000001-\(hex(4)).cfkeys"
            try? FileManager.default.createSymbolicLink(
                at: folder.appendingPathComponent(name), withDestinationURL: URL(fileURLWithPath: "/dev/zero"))
            made.append(name)
        default:
            // Under another device's next name: the engine later delivers the real one over it.
            guard let other = ledgers.indices.filter({ $0 != device }).randomElement(using: &random),
                let state = ledgers[other].syncState?.state
            else { return }
            let epoch = SyncKeys(ledgers[other].vault.backupKeys).generation
            put("\(state.device.hex)/\(SyncFolder.changesName(state.published + 1, epoch: epoch))")
        }
        for name in made { planted.insert(Pair(file: name, device: device)) }
    }

    /// Takes out what `plant` left that Coffer's own files have not replaced since.
    func removePlanted() {
        for pair in planted where origins[pair.file] == nil {
            try? FileManager.default.removeItem(at: folder(pair.device).appendingPathComponent(pair.file))
        }
        planted.removeAll()
    }

    func deliverEverything() {
        for pair in pending.union(hidden) { copy(pair.file, to: pair.device) }
        pending.removeAll()
        hidden.removeAll()
    }

    // MARK: The devices

    /// Syncs a device; when another device replaced the keys, it takes them on (passphrase).
    @discardableResult
    func sync(_ device: Int) throws -> SyncReport {
        let now = tick()
        let quick = SyncService.upToDate(ledgers[device].vault.unlockedFile, now: now)
        let commit = ledgers[device].vault.commitCounter
        let report: SyncReport
        do {
            report = try SyncService.sync(ledgers[device], now: now)
        } catch let error as CofferError where error.code == .keysChanged {
            let kept = directory.path("kept-\(device)-\(UUID().uuidString)")
            let adopted = try SyncService.adoptNewKeys(
                ledgers[device], credential: .passphrase(try Passphrase(passphrase)), keptAt: kept, now: tick())
            try? FileManager.default.removeItem(at: kept)
            ledgers[device] = adopted.ledger
            report = adopted.report
        }
        if let quick { checkNothingToDo(device, quick: quick, full: report, commitBefore: commit) }
        collect()
        return report
    }

    /// How many syncs the answer from the sync state alone (`SyncService.upToDate`) settled.
    var answeredWithoutReading = 0

    /// When the sync state alone says there is nothing to do, the full sync must agree: nothing
    /// published, merged, repaired, waiting or refused, and nothing written to the vault.
    private func checkNothingToDo(_ device: Int, quick: SyncReport, full: SyncReport, commitBefore: UInt64) {
        answeredWithoutReading += 1
        let idle =
            full.published.isEmpty && full.merged.isEmpty && full.repairs.isEmpty && full.problems.isEmpty
            && full.waiting.isEmpty && full.conflicts == 0 && full.copies == quick.copies
        if !idle || ledgers[device].vault.commitCounter != commitBefore {
            Issue.record("device \(device): up to date by its sync state, but the full sync did \(full)")
        }
    }

    /// The device replaces the vault's keys and starts the folder's next epoch (`sync compact`):
    /// it needs the passphrase, so its ledger is reopened with it first.
    func rotate(_ device: Int) throws {
        rotations += 1
        let vault = try Vault.open(at: ledgers[device].vault.url, with: .passphrase(try Passphrase(passphrase)))
        ledgers[device] = try Ledger(vault: vault)
        _ = try SyncService.rotate(ledgers[device], now: tick())
        collect()
    }

    /// Every device syncs, the engine carries everything, again, until a round publishes nothing.
    func converge() throws -> Int {
        for round in 1...8 {
            deliverEverything()
            var published = 0
            for device in ledgers.indices { published += try sync(device).published.count }
            deliverEverything()
            if published == 0 { return round }
        }
        return 9
    }

    func exportJSON(_ device: Int) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        return String(decoding: try encoder.encode(ExportDocument(ledger: ledgers[device], only: nil)), as: UTF8.self)
    }

    /// A random edit of a random kind of record, as a person would make it; a refusal (a name
    /// taken, nothing to delete) is part of the game and writes nothing.
    /// `additive`: only edits that never delete a record (no deletes, no undo), so every record
    /// ever made must still be there at the end.
    func edit(_ device: Int, additive: Bool = false) {
        let ledger = ledgers[device]
        let date = today
        now = tick()
        func pick<T>(_ items: [T]) -> T? { items.randomElement(using: &random) }
        let amount = Money(minorUnits: Int64.random(in: 1...500_000, using: &random))
        let names = ["Savings", "ISA", "Pension", "Car", "Boat", "House", "Crypto"]
        let choices = additive ? [0, 1, 2, 3, 5, 6, 8, 9, 10, 11, 12, 13, 14, 15, 16, 18] : Array(0..<20)
        do {
            switch choices.randomElement(using: &random)! {
            case 0:
                _ = try ledger.addAccount(
                    name: pick(names)!, category: pick(["Cash", "Property"])!, kind: .asset, value: (amount, date),
                    today: date)
            case 1, 2:
                if let account = pick(ledger.accounts.filter { $0.closed == nil }) {
                    try ledger.recordValue(of: account, amount: amount, on: date)
                }
            case 3:
                if let account = pick(ledger.accounts) {
                    try ledger.renameAccount(account, to: pick(names)! + " \(Int.random(in: 1...3, using: &random))")
                }
            case 4:
                if let account = pick(ledger.accounts) { try ledger.deleteAccount(account) }
            case 5:
                if let account = pick(ledger.accounts.filter { $0.closed == nil }) {
                    try ledger.closeAccount(account, on: date)
                }
            case 6:
                _ = try ledger.addCategory(name: pick(["Dining", "Books", "Gym", "Travel"])!, type: .wants)
            case 7:
                if let category = pick(ledger.budgetCategories.filter { !$0.isDefault }) {
                    try ledger.deleteCategory(category)
                }
            case 8, 9:
                if let category = pick(ledger.budgetCategories) { try ledger.spend(amount, in: category, on: date) }
            case 10:
                _ = try ledger.addIncomeSource(
                    name: pick(["Salary", "Rent", "Tips"])!, amount: amount, frequency: .monthly)
            case 11:
                if let source = pick(ledger.incomeSources) { try ledger.earn(amount, from: source, on: date) }
            case 12:
                _ = try ledger.addGoal(name: pick(["Holiday", "Car", "Roof"])!, target: amount)
            case 13:
                if let goal = pick(ledger.goals) { try ledger.save(amount, towards: goal, on: date) }
            case 14:
                _ = try ledger.addClient(name: pick(["Acme", "Globex", "Initech"])!)
            case 15:
                if let client = pick(ledger.clients) {
                    _ = try ledger.createInvoice(
                        for: client,
                        items: [
                            LineItem(description: "Work", quantity: Quantity(thousandths: 1000), unitPrice: amount)
                        ],
                        issued: date, send: Bool.random(using: &random))
                }
            case 16:
                if let invoice = pick(ledger.invoices.filter { $0.stored == .sent }) {
                    _ = try ledger.recordPayment(on: invoice, date: date)
                }
            case 17:
                if let transaction = pick(ledger.transactions) {
                    if Bool.random(using: &random) {
                        try ledger.deleteTransaction(transaction)
                    } else {
                        _ = try ledger.editTransaction(
                            transaction, Ledger.TransactionEdit(note: "edited \(Int.random(in: 1...9, using: &random))")
                        )
                    }
                }
            case 18:
                try ledger.setIncludeReceivables(Bool.random(using: &random))
            default:
                _ = try ledger.undo()
            }
        } catch is CofferError {
        } catch is FinanceError {
        } catch {
            Issue.record("device \(device): unexpected \(error)")
        }
    }
}
