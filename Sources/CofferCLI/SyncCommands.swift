import ArgumentParser
import CofferKit
import Foundation
import VaultStore

/// `coffer sync …`: several devices, one vault, through any synced folder.
struct SyncCommands: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync",
        abstract: "Sync this vault with your other devices through a folder (Syncthing, Dropbox, a USB stick…).",
        discussion: """
            Every change is encrypted and signed before it reaches the folder; the folder's holder learns \
            no names, amounts, dates or kinds of record. Coffer only ever adds new files there.
            """,
        subcommands: [SyncNow.self, SyncInit.self, SyncStatusCommand.self, SyncConflicts.self, SyncCompact.self],
        defaultSubcommand: SyncNow.self)

    /// The text every sync prints: what went out, what came in, what needs attention.
    static func show(_ report: SyncReport) {
        report.summaryLines.forEach { Output.line($0) }
        if report.conflicts > 0 { Terminal.note("hint: See them with: coffer sync conflicts") }
        report.attentionLines.forEach { Terminal.note($0) }
    }

    /// Another device replaced the vault's keys: take them on with the passphrase, keeping
    /// every change made here (the old file is kept beside the vault).
    static func adopt(_ ledger: Ledger, options: VaultOptions, because error: CofferError) throws -> SyncReport {
        Terminal.note(
            "\(error.message) Taking on the new keys: this copy is rebuilt from the folder and its own changes merged in."
        )
        let credential = try options.credential(
            allowSession: false, prompt: "Passphrase of the vault (its keys were changed on another device): ")
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "yyyyMMdd-HHmmss"
        // Two key changes taken on within one second (or a name already there) get a number.
        let stem = ledger.vault.url.path + ".before-new-keys-\(formatter.string(from: Date()))"
        var kept = URL(fileURLWithPath: stem)
        for number in 2...1000 where FileManager.default.fileExists(atPath: kept.path) {
            kept = URL(fileURLWithPath: "\(stem)-\(number)")
        }
        let (adopted, adoptedReport, merged) = try SyncService.adoptNewKeys(
            ledger, credential: credential, keptAt: kept, guard: options.rollbackGuard)
        Output.line(
            "Took on key generation \(adopted.vault.keyGeneration): this copy was rebuilt from the folder, with \(merged.taken) record\(merged.taken == 1 ? "" : "s") of its own merged back."
        )
        Output.line("The copy under the old keys is kept at \(kept.path): delete it once you are satisfied.")
        var report = adoptedReport
        report.conflicts += merged.conflicts
        return report
    }

    /// Exit 65 after the work is done when a file was refused as forged, altered or misplaced:
    /// a script must notice, even though everything else was merged.
    static func finish(_ report: SyncReport) throws {
        let rejected = report.rejectedCount
        guard rejected == 0 else {
            throw CLIError(
                .damaged,
                "\(rejected) file\(rejected == 1 ? " was" : "s were") rejected (listed above); everything else was merged.",
                hint: "Nothing was applied from them. Remove them from the folder if you know where they came from.")
        }
    }
}

struct SyncNow: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "now",
        abstract: "Publish this device's changes and merge everyone else's (the default: coffer sync [DIR]).")
    @OptionGroup var options: VaultOptions
    @Argument(help: "The sync folder (default: the one `sync init` or `device join` remembered).") var folder: String?
    @Flag(help: "Print JSON instead of text.") var json = false

    func run() throws {
        let named = folder.map { URL(fileURLWithPath: $0) }
        let report: SyncReport
        if let open = CommandSession.ledger(at: options.vaultURL) {
            report = try sync(open, folder: named)  // inside a shell: the vault is open already
        } else {
            let file = try options.unlockVaultFile()
            report = try SyncService.upToDate(file, folder: named) ?? sync(Ledger(vault: file.open()), folder: named)
        }
        if json { try Output.json(SyncJSON.Report(report)) } else { SyncCommands.show(report) }
        try SyncCommands.finish(report)
    }

    private func sync(_ ledger: Ledger, folder: URL?) throws -> SyncReport {
        do {
            return try SyncService.sync(ledger, folder: folder)
        } catch let error as CofferError where error.code == .keysChanged {
            // Taking on new keys rebuilds the vault file: not under a shell that holds it open.
            guard CommandSession.ledger(at: options.vaultURL) == nil else {
                throw CLIError(
                    .noPermission, error.message, hint: "Leave the shell (exit) and run: coffer sync")
            }
            return try SyncCommands.adopt(ledger, options: options, because: error)
        }
    }
}

struct SyncInit: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "init", abstract: "Make DIR this vault's sync folder, and publish the vault into it.",
        discussion: "Then on each other device: coffer device join DIR")
    @OptionGroup var options: VaultOptions
    @Argument(help: "The folder your sync tool shares between devices (created if missing).") var folder: String
    @Option(help: "This device's name, shown on the others (default: the host name).") var name: String?
    @Flag(help: "Leave the current sync folder and start afresh in DIR (after this vault's keys changed).")
    var replaceFolder = false

    func run() throws {
        let ledger = try options.openLedger()
        let url = URL(fileURLWithPath: folder).standardizedFileURL
        let report = try SyncService.initialize(
            ledger, folder: url, deviceName: name ?? ledger.syncState?.state.deviceName ?? DeviceCommands.hostName,
            replacingFolder: replaceFolder)
        Output.line(
            "\(url.path) is now this vault's sync folder; this device is '\(ledger.syncState!.state.deviceName)'.")
        SyncCommands.show(report)
        Terminal.note("hint: On each other device: coffer device join \(url.path)")
        try SyncCommands.finish(report)
    }
}

struct SyncCompact: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "compact",
        abstract: "Fold the folder's change files into one publish under new keys (needs the passphrase).",
        discussion: """
            Replaces the vault's master key (as coffer rekey does) and starts the folder's next epoch with the \
            whole vault in it; each device moves to it at its next sync (asking for the passphrase once) and \
            deletes its own old files. Safe while devices are offline: whatever they changed meanwhile is merged \
            when they move.
            """)
    @OptionGroup var options: VaultOptions

    func run() throws {
        let passphrase = try options.vaultPassphrase()
        let ledger = try Ledger(
            vault: Vault.open(at: options.vaultURL, with: .passphrase(passphrase), guard: options.rollbackGuard))
        let rotation = try SyncService.rotate(ledger)
        Output.line(
            "Compacted: the folder's epoch \(rotation.generation) holds the whole vault under new keys; this device's old files are gone."
        )
        SyncCommands.show(rotation.report)
        Terminal.note("hint: Each other device moves at its next coffer sync (it asks for the passphrase once).")
        try SyncCommands.finish(rotation.report)
    }
}

struct SyncStatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "What waits to be published and merged, per device, and when each was last heard from.")
    @OptionGroup var options: VaultOptions
    @Argument(help: "The sync folder (default: the remembered one).") var folder: String?
    @Flag(help: "Print JSON instead of text.") var json = false

    func run() throws {
        let ledger = try options.openLedger()
        let status = try SyncService.status(ledger, folder: folder.map { URL(fileURLWithPath: $0) })
        if json { return try Output.json(SyncJSON.Status(status)) }
        Output.line("Sync folder: \(status.folder) (key generation \(status.keyGeneration))")
        if let newer = status.newerKeyGeneration {
            Output.line(
                "The vault's keys were replaced on another device (key generation \(newer)): the next coffer sync takes them on, with the passphrase."
            )
        }
        Output.line(
            status.localChanges == 0
                ? "To publish: nothing."
                : "To publish: \(status.localChanges) record\(status.localChanges == 1 ? "" : "s") changed here.")
        let rows = status.devices.map { device in
            [
                device.name + (device.isThisDevice ? " (this device)" : ""), device.id.prefix(8).description,
                device.lastHeard.map(DeviceCommands.ago) ?? "never",
                device.isThisDevice
                    ? "#\(device.sequence) published"
                    : "\(device.filesToMerge) file\(device.filesToMerge == 1 ? "" : "s") to merge",
            ]
        }
        Render.table([["DEVICE", "ID", "LAST HEARD FROM", "PENDING"]] + rows).forEach { Output.line($0) }
        if status.openConflicts > 0 {
            Output.line(
                "\(status.openConflicts) kept conflict\(status.openConflicts == 1 ? "" : "s"): coffer sync conflicts")
        }
        for copy in status.copies { Terminal.note("ignored: \(copy): a copy made by a sync tool, not by Coffer") }
    }
}

struct SyncConflicts: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "conflicts", abstract: "List values that lost a concurrent edit, and put one back.",
        subcommands: [SyncConflictsList.self, SyncConflictsRestore.self], defaultSubcommand: SyncConflictsList.self)
}

struct SyncConflictsList: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "List kept conflicts, oldest first.")
    @OptionGroup var options: VaultOptions
    @Flag(help: "Print JSON instead of text.") var json = false

    func run() throws {
        let ledger = try options.openLedger()
        let conflicts = SyncService.conflicts(ledger)
        if json { return try Output.json(["conflicts": conflicts.map(SyncJSON.Conflict.init)]) }
        guard !conflicts.isEmpty else {
            return Output.line("No conflicts: no two devices edited the same record at once.")
        }
        let formatter = ISO8601DateFormatter()
        let rows = conflicts.map {
            [
                "#\($0.number)", $0.record,
                "\($0.loserDevice) \($0.loser) \(formatter.string(from: $0.loserTime))",
                "\($0.winnerDevice) \($0.winner) \(formatter.string(from: $0.winnerTime))",
                $0.restored ? "restored" : "",
            ]
        }
        let lines = Render.table([["", "RECORD", "LOST", "KEPT", ""]] + rows)
        Output.line(lines[0])
        for (conflict, line) in zip(conflicts, lines.dropFirst()) {
            Output.line(line)
            for difference in conflict.fields { Output.line("      \(difference.line)") }
        }
        Terminal.note("hint: Put a losing value back with: coffer sync conflicts restore N")
    }
}

struct SyncConflictsRestore: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "restore", abstract: "Put conflict N's losing value back (undoable; published at the next sync).")
    @OptionGroup var options: VaultOptions
    @Argument(help: "The conflict's number, from `coffer sync conflicts`.") var number: Int

    func run() throws {
        let ledger = try options.openLedger()
        let restored = try SyncService.restoreConflict(ledger, number: number)
        Output.line("Restored \(restored.record) as \(restored.loserDevice) had it.")
        Output.advice("Undo with: coffer undo")
    }
}

/// The JSON shapes of sync commands (Specs/cli.md).
enum SyncJSON {
    struct Report: Encodable {
        struct Published: Encodable { let sequence: UInt64; let changes: Int }
        struct Merged: Encodable { let device: String; let files: Int; let changes: Int }
        struct Problem: Encodable { let file: String; let reason: String; let rejected: Bool }
        let published: [Published]
        let merged: [Merged]
        let conflicts: Int
        let repairs: [String]
        let waiting: [String]
        let problems: [Problem]
        let ignored: [String]

        init(_ report: SyncReport) {
            published = report.published.map { Published(sequence: $0.sequence, changes: $0.changes) }
            merged = report.merged.map { Merged(device: $0.device, files: $0.files, changes: $0.changes) }
            conflicts = report.conflicts
            repairs = report.repairs
            waiting = report.waiting
            problems = report.problems.map {
                Problem(file: $0.file, reason: $0.problem.description, rejected: !$0.problem.isTransient)
            }
            ignored = report.copies
        }
    }

    struct Status: Encodable {
        struct Device: Encodable {
            let id: String
            let name: String
            let thisDevice: Bool
            let lastHeard: String?
            let sequence: UInt64
            let filesToMerge: Int

            private enum CodingKeys: String, CodingKey {
                case id, name, thisDevice, lastHeard, sequence, filesToMerge
            }

            /// `lastHeard` is always present: null for a device never heard from.
            func encode(to encoder: Encoder) throws {
                var container = encoder.container(keyedBy: CodingKeys.self)
                try container.encode(id, forKey: .id)
                try container.encode(name, forKey: .name)
                try container.encode(thisDevice, forKey: .thisDevice)
                try container.encode(lastHeard, forKey: .lastHeard)
                try container.encode(sequence, forKey: .sequence)
                try container.encode(filesToMerge, forKey: .filesToMerge)
            }
        }
        let folder: String
        let keyGeneration: UInt32
        let newerKeyGeneration: UInt32?
        let localChanges: Int
        let devices: [Device]
        let openConflicts: Int
        let ignored: [String]

        init(_ status: SyncStatus) {
            let formatter = ISO8601DateFormatter()
            folder = status.folder
            keyGeneration = status.keyGeneration
            newerKeyGeneration = status.newerKeyGeneration
            localChanges = status.localChanges
            devices = status.devices.map {
                Device(
                    id: $0.id, name: $0.name, thisDevice: $0.isThisDevice,
                    lastHeard: $0.lastHeard.map(formatter.string),
                    sequence: $0.sequence, filesToMerge: $0.filesToMerge)
            }
            openConflicts = status.openConflicts
            ignored = status.copies
        }

        private enum CodingKeys: String, CodingKey {
            case folder, keyGeneration, newerKeyGeneration, localChanges, devices, openConflicts, ignored
        }

        /// `newerKeyGeneration` is always present: null unless another device replaced the keys.
        func encode(to encoder: Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(folder, forKey: .folder)
            try container.encode(keyGeneration, forKey: .keyGeneration)
            try container.encode(newerKeyGeneration, forKey: .newerKeyGeneration)
            try container.encode(localChanges, forKey: .localChanges)
            try container.encode(devices, forKey: .devices)
            try container.encode(openConflicts, forKey: .openConflicts)
            try container.encode(ignored, forKey: .ignored)
        }
    }

    struct Conflict: Encodable {
        let number: Int
        let record: String
        let lost: String
        let lostOn: String
        let lostAt: String
        let kept: String
        let keptOn: String
        let keptAt: String
        let restored: Bool
        let fields: [Field]

        struct Field: Encodable { let field, lost, kept: String }

        init(_ summary: SyncService.ConflictSummary) {
            let formatter = ISO8601DateFormatter()
            number = summary.number
            record = summary.record
            lost = summary.loser
            lostOn = summary.loserDevice
            lostAt = formatter.string(from: summary.loserTime)
            kept = summary.winner
            keptOn = summary.winnerDevice
            keptAt = formatter.string(from: summary.winnerTime)
            restored = summary.restored
            fields = summary.fields.map { Field(field: $0.field, lost: $0.lost, kept: $0.kept) }
        }
    }
}

/// `coffer merge FILE`: a copy of the vault a sync tool duplicated, merged back.
struct MergeCopy: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "merge",
        abstract: "Merge back a copy of this vault that a sync tool duplicated (vault (conflicted copy).coffer).",
        discussion: """
            Record by record: what only the copy changed is taken, what only this vault changed stays, and when \
            both changed a record the later change wins and the other is kept (coffer sync conflicts). One \
            change: coffer undo reverts it. The copy is only read; delete it yourself afterwards.
            """)
    @OptionGroup var options: VaultOptions
    @Argument(help: "The duplicated vault file.") var file: String

    func run() throws {
        let url = URL(fileURLWithPath: file)
        guard FileManager.default.fileExists(atPath: url.path) else {
            throw CLIError(.notFound, "No vault copy at \(url.path).")
        }
        guard url.standardizedFileURL.path != options.vaultURL.standardizedFileURL.path else {
            throw CLIError(.invalidInput, "\(url.path) is the vault itself; give the copy to merge.")
        }
        let ledger = try options.openLedger()
        // The copy is read with the same credential; its own high-water mark is not this file's.
        let copy = try Ledger(vault: Vault.open(at: url, with: options.credential()))
        let report = try SyncService.mergeCopy(ledger, copy: copy, name: url.lastPathComponent)
        guard report.taken + report.conflicts > 0 else {
            return Output.line("Nothing to merge: \(url.lastPathComponent) holds nothing this vault does not.")
        }
        Output.line(
            "Merged \(report.taken) record\(report.taken == 1 ? "" : "s") from \(url.lastPathComponent) (\(report.changes) change\(report.changes == 1 ? "" : "s") made there)."
        )
        if report.conflicts > 0 {
            Output.line(
                "\(report.conflicts) record\(report.conflicts == 1 ? "" : "s") changed in both: the later change kept, the other kept as a conflict."
            )
            Terminal.note("hint: See them with: coffer sync conflicts")
        }
        for repair in report.repairs { Output.line("Repaired: \(repair)") }
        Output.line("The copy was only read: delete it when you are satisfied.")
        Output.advice("Undo with: coffer undo")
    }
}
