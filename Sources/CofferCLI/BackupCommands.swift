import ArgumentParser
import CofferKit
import FinanceCore
import Foundation
import VaultBackup
import VaultCrypto
import VaultStore

/// `coffer backup create|verify|list|prune|pubkey|target`.
struct BackupCommands: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backup",
        abstract: "Compressed, encrypted, signed backups that are read back and verified before they count.",
        subcommands: [Create.self, VerifyArchive.self, List.self, Prune.self, PublicKey.self, Targets.self]
    )

    static func writePublicKey(_ contents: String, to url: URL) throws {
        try OutputFile.write(Data(contents.utf8), to: url.path)
    }

    /// The keys archives are checked against, and where they came from (every message names it).
    struct Trust {
        let resolved: BackupTrust
        var keys: ArchiveTrust { resolved.keys }
        var source: String { resolved.sourceText }

        init(_ trust: BackupTrust) { resolved = trust }

        /// "key 2 of 3, superseded" for a generation of the vault's history.
        func describe(_ generation: UInt32?) -> String { resolved.describe(generation) }
    }

    /// The trust CofferKit resolves (key files, else the vault's history), with its notices shown.
    static func trust(pubkeys: [String], options: VaultOptions, vault: Vault? = nil, folders: [URL]) throws -> Trust {
        // The key history is in the header, which unlocking authenticates: no record is read.
        let vault =
            try vault
            ?? (FileManager.default.fileExists(atPath: options.vaultURL.path) && options.hasCredentialWithoutPrompt
                && pubkeys.isEmpty
                ? options.unlockVaultFile().open(reading: { _ in false }) : nil)
        do {
            return Trust(
                try BackupService.trust(
                    keyFiles: pubkeys, vaultURL: options.vaultURL, vault: vault, folders: folders, notice: show))
        } catch let error as CofferError where error.kind == "vault" {
            throw CLIError(
                .notFound, error.message,
                hint:
                    "Pass --pubkey FILE (each archive folder holds coffer-VAULTID-key-N.pub), or --vault PATH. On a new machine, `coffer backup verify --full` and `coffer restore` check archives with the passphrase alone."
            )
        } catch let error as CofferError where error.kind == "public key" {
            throw CLIError(
                .invalidInput, error.message,
                hint: "Unlock the vault first (eval \"$(coffer unlock)\"), or pass --pubkey FILE.")
        }
    }

    /// Words what the backup service reports, on standard error.
    static func show(_ notice: BackupNotice) {
        switch notice {
        case .historiesConflict(let generation):
            Terminal.note(
                "warning: archives here disagree about which key followed key generation \(generation): someone who held that key certified a successor of their own. Only generations up to \(generation) are trusted; archives signed by a later key list as foreign."
            )
        case .publicKeyFileDiffers(let path, let keyID):
            Terminal.note(
                "warning: \(path) is not this vault's current key\(keyID.map { " (it holds key id \($0))" } ?? ""); it was not trusted."
            )
            Terminal.note(
                "hint: If you did not replace it, someone may have. Rewrite it from the vault: coffer backup pubkey")
        case .implausibleSequenceIgnored(let url, let sequence, let vaultSequence):
            Terminal.note(
                "warning: \(url.path) is signed as #\(sequence), far past this vault's #\(vaultSequence): it was ignored for numbering."
            )
        case .unrecordedArchive(let url, let sequence, let maker, let commit):
            let who =
                switch maker {
                case .thisCopy: "this copy of the vault"
                case .otherCopy(let device): "another copy of this vault (device \(device))"
                case .unknown: "a copy of this vault"
                }
            Terminal.note(
                "warning: \(url.path) is archive #\(sequence), made by \(who)\(commit.map { " from commit #\($0)" } ?? ""), which this vault has no record of: two copies of the vault back up here, or this one was restored from an older state. Numbering continues after it."
            )
        case .restoredFromSupersededKey(let generation, let newest):
            Terminal.note(
                "warning: this archive is signed by key generation \(generation); archives beside it show the vault was rekeyed since (generation \(newest)). Whoever held that old key — a session or the passphrase of that time — could have made it, and can open the restored vault."
            )
        }
    }

    /// Where a backup goes without `--to`: the vault's saved targets and the configuration
    /// file's `backup.targets`, each folder once.
    static func defaultTargets(_ ledger: Ledger) -> [String] {
        ledger.backupDestinations(configured: Configuration.current.backupTargets)
    }

    /// Human lines for the overview and status, with a warning when a backup is missing or stale.
    static func ageLines(_ ages: [BackupAge], ledger: Ledger) -> [String] {
        guard !ages.isEmpty else {
            return ledger.accounts.isEmpty
                ? [] : ["No backups yet — make one: coffer backup target add DIR && coffer backup create"]
        }
        return ages.map { age in
            guard let when = age.ageText else { return "⚠ Never backed up to \(age.path). Run: coffer backup create" }
            return age.isStale
                ? "⚠ Last verified backup to \(age.path) was \(when): over \(BackupAge.staleAfterDays) days. Run: coffer backup create"
                : "Last verified backup to \(age.path): \(when)"
        }
    }

    // MARK: create

    struct Create: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "create",
            abstract: "Back up the vault to each destination, then read each archive back and fully verify it.",
            discussion: """
                Destinations: every --to DIR, else the saved targets (coffer backup target add DIR) \
                and the configuration file's backup.targets.
                """)
        @OptionGroup var options: VaultOptions
        @Option(name: .customLong("to"), help: ArgumentHelp("A destination folder (repeatable).", valueName: "dir"))
        var destinations: [String] = []
        @OptionGroup var report: ReportOptions

        /// One line per destination, as restic's backup summary is one object per run.
        struct JSON: Encodable {
            struct Destination: Encodable {
                let folder: String
                /// `ok`, `missing-folder`, `write-failed` or `verify-failed`.
                var status = "ok"
                var archive: String?
                var records: Int?
                var bytes: Int?
                var reason: String?

                init(folder: URL, outcome: BackupService.Outcome) {
                    self.folder = folder.path
                    switch outcome {
                    case .written(let url, let records, let size):
                        (archive, self.records, bytes) = (url.path, records, size)
                    case .missingFolder: (status, reason) = ("missing-folder", "no such folder")
                    case .writeFailed(let reason): (status, self.reason) = ("write-failed", reason)
                    case .verifyFailed(let reason): (status, self.reason) = ("verify-failed", reason)
                    }
                }
            }
            let destinations: [Destination]
            let failures: Int
            let publicKey: String
            let durationSeconds: Double
        }

        /// When any backup failed: 74 when an archive could not be written or read back, else 73
        /// (a destination folder is missing), sysexits' "I/O error" and "cannot create output".
        static func failIfAny(_ outcomes: [BackupService.Outcome]) throws {
            let failed = outcomes.filter { if case .written = $0 { false } else { true } }
            guard !failed.isEmpty else { return }
            let missingOnly = failed.allSatisfy { if case .missingFolder = $0 { true } else { false } }
            throw CLIError(
                missingOnly ? .cannotCreate : .ioError,
                "\(failed.count) of \(outcomes.count) backup\(outcomes.count == 1 ? "" : "s") FAILED.")
        }

        func run() throws {
            LargeAllocations.mapped()
            let started = Date()
            let today = try CommandContext.today()
            // What the overview reads (net worth on `today` for the manifest, the destinations and
            // bookkeeping); the archive's records are read apart, page by page.
            let ledger = try options.openLedger(for: .overview(on: today))
            let targets = destinations.isEmpty ? BackupCommands.defaultTargets(ledger) : destinations
            guard !targets.isEmpty else {
                throw CLIError(
                    .invalidInput, "No destination: nothing was written.",
                    hint: "Pass --to DIR, or save one: coffer backup target add DIR")
            }
            let progress = Progress(enabled: Terminal.standardErrorIsTerminal)
            if let current = ledger.vault.keyHistory.last {
                try BackupCommands.writePublicKey(
                    Archive.publicKeyFileContents(current, vaultID: ledger.vault.id),
                    to: BackupService.publicKeyURL(for: options.vaultURL))
            }
            let outcomes: [(folder: URL, outcome: BackupService.Outcome)]
            do {
                outcomes = try BackupService.create(
                    ledger, to: targets.map { URL(fileURLWithPath: $0) }, appVersion: Coffer.version,
                    today: today, acceptRollback: options.acceptRollback,
                    progress: progress.step, notice: BackupCommands.show)
            } catch let error as CofferError where error.code == .rolledBack {
                throw CLIError(
                    .damaged, error.message,
                    hint:
                        "Restore that archive if it is the newer state (coffer restore), or pass --accept-rollback to back up this older state as #\(error.candidates.last ?? "next")."
                )
            } catch let error as CofferError where error.kind == "sequence" {
                throw CLIError(
                    .failure, error.message,
                    hint: "Restore the vault from a recent archive: it numbers again from there.")
            }
            let publicKey = BackupService.publicKeyURL(for: options.vaultURL).path
            if report.json {
                let lines = outcomes.map { JSON.Destination(folder: $0.folder, outcome: $0.outcome) }
                try Output.json(
                    JSON(
                        destinations: lines, failures: lines.filter { $0.status != "ok" }.count, publicKey: publicKey,
                        durationSeconds: (Date().timeIntervalSince(started) * 1000).rounded() / 1000))
                progress.finish()
                return try Self.failIfAny(outcomes.map(\.outcome))
            }
            for (folder, outcome) in outcomes {
                switch outcome {
                case .written(let url, let records, let size):
                    Output.line(
                        "Backup OK  \(url.path)  (\(records) records, \(ByteCountFormatter.string(fromByteCount: Int64(size), countStyle: .file)))"
                    )
                case .missingFolder:
                    Output.line(
                        "FAILED  \(folder.path): no such folder (is the drive mounted?). Nothing was written there.")
                case .writeFailed(let reason):
                    Output.line("FAILED  \(folder.path): \(reason). No archive with a final name was left.")
                case .verifyFailed(let reason):
                    Output.line(
                        "FAILED  \(folder.path): the archive did not verify when read back (\(reason)); it was removed."
                    )
                }
            }
            progress.finish()
            try Self.failIfAny(outcomes.map(\.outcome))
            Output.line(
                "Each archive was read back from its folder: signature, every encrypted chunk and every record verified."
            )
            Output.line(
                "Check one any time without a passphrase: minisign -Vm ARCHIVE -p \(publicKey)"
            )
        }
    }

    // MARK: verify

    struct VerifyArchive: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "verify",
            abstract:
                "Check an archive: signature and structure without a passphrase; --full decrypts and checks every record.",
            discussion: "Checked against every key generation in the vault's own key history (or the --pubkey files).")
        @OptionGroup var options: VaultOptions
        @Argument(help: "The archive (.cbak); its .minisig must be beside it.") var file: String
        @Option(
            help: ArgumentHelp(
                "A minisign public key file to trust instead of the vault's key history (repeatable).",
                valueName: "file")) var pubkey: [String] = []
        @Flag(
            help:
                "Also decrypt, decompress and parse every record, and compare with the manifest (needs the passphrase or a session)."
        ) var full = false
        @OptionGroup var report: ReportOptions

        struct JSON: Encodable {
            let archive: String
            let sequence: UInt64
            let created: String
            let bytes: Int
            let signedBy: String
            /// The name it was signed under, when this file is a renamed copy.
            @NullEncoded var signedName: String?
            /// `signature` (signature, header and framing) or `full` (every record too).
            let verified: String
        }

        func run() throws {
            let url = URL(fileURLWithPath: file)
            guard FileManager.default.fileExists(atPath: url.path) else {
                throw CLIError(.notFound, "No archive at \(url.path).")
            }
            let info: ArchiveInfo
            let signedBy: String
            if full, pubkey.isEmpty, !FileManager.default.fileExists(atPath: options.vaultURL.path) {
                // A fresh machine: the archive's own key history, unlocked by the passphrase of its time.
                info = try BackupService.open(BackupCommands.unlockArchive(url, options: options)).info
                signedBy = "the key its own vault header certifies, opened with your passphrase"
            } else {
                let trust = try BackupCommands.trust(
                    pubkeys: pubkey, options: options, folders: [url.deletingLastPathComponent()])
                info = try Archive.verify(at: url, trust: trust.keys)
                signedBy = "this vault's \(trust.describe(info.generation)), from \(trust.source)"
                if full { _ = try BackupService.open(BackupCommands.unlockArchive(url, options: options)) }
            }
            if report.json {
                return try Output.json(
                    JSON(
                        archive: url.path, sequence: info.sequence,
                        created: ISO8601DateFormatter().string(from: info.created), bytes: Int(info.size),
                        signedBy: signedBy, signedName: info.hasSignedName ? nil : info.signedName,
                        verified: full ? "full" : "signature"))
            }
            Output.line(
                "Archive OK: \(url.lastPathComponent) — sequence \(info.sequence), made \(ISO8601DateFormatter().string(from: info.created)), \(info.size) bytes."
            )
            Output.line(
                "Proved: signed by \(signedBy); header, signed description and chunk framing intact to the last byte.")
            if !info.hasSignedName, let signedName = info.signedName {
                Output.line("Note: it was signed as \(signedName); this file is a renamed copy.")
            }
            if full {
                Output.line(
                    "Proved (--full): every chunk decrypted and authenticated, the content decompressed to its declared size,"
                )
                Output.line("and every record parsed and matched the encrypted manifest (count, kinds, digest).")
            } else {
                Output.line("Not yet proved: that it decrypts and restores. Run with --full for that.")
            }
        }
    }

    /// Opens an archive fully through CofferKit: refused before any key derivation when it is
    /// unsigned or signed by none of the keys that may have made it; then one labelled prompt
    /// naming the archive, one key derivation and one read of the archive.
    static func unlockArchive(_ url: URL, options: VaultOptions) throws -> BackupService.UnlockedArchive {
        let archive = try BackupService.inspect(url, vaultURL: options.vaultURL)
        let made = ISO8601DateFormatter().string(from: archive.created)
        let credential = try options.credential(
            prompt: "Passphrase for archive \(url.lastPathComponent) (#\(archive.sequence), made \(made)): ")
        do {
            return try BackupService.unlock(archive, credential: credential)
        } catch let error as CofferError where error.code == .wrongCredential {
            throw CLIError(
                .noPermission, error.message,
                hint: "An archive made before a passphrase change needs the passphrase that was current then.")
        }
    }

    // MARK: list

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list",
            abstract: "List archives in a folder (default: every saved target) with their signature status.",
            discussion:
                "Identity comes from the signed content: copies a sync tool made are listed as copies, and two archives signed with one sequence number as a fork."
        )
        @OptionGroup var options: VaultOptions
        @OptionGroup var report: ReportOptions
        @Argument(help: "A folder of archives.") var directory: String?
        @Option(
            help: ArgumentHelp(
                "A minisign public key file to trust instead of the vault's key history (repeatable).",
                valueName: "file")) var pubkey: [String] = []

        struct Row: Encodable {
            let file: String
            @NullEncoded var sequence: UInt64?
            @NullEncoded var created: String?
            let size: Int
            let status: String
            @NullEncoded var keyGeneration: UInt32?
            @NullEncoded var superseded: Bool?
            @NullEncoded var copyOf: String?
            @NullEncoded var forkWith: [String]?
            @NullEncoded var device: String?
            @NullEncoded var commit: UInt64?
            @NullEncoded var signedName: String?
        }

        func run() throws {
            let folders: [String]
            var vault: Vault?
            if let directory {
                folders = [directory]
            } else {
                let ledger = try options.openLedger()
                vault = ledger.vault
                folders = BackupCommands.defaultTargets(ledger)
            }
            guard !folders.isEmpty else {
                throw CLIError(
                    .invalidInput, "No folder given and no saved backup targets.",
                    hint: "coffer backup list DIR, or coffer backup target add DIR")
            }
            let trust = try BackupCommands.trust(
                pubkeys: pubkey, options: options, vault: vault, folders: folders.map { URL(fileURLWithPath: $0) })
            var rows: [Row] = []
            var labels: [String] = []
            let newest = trust.keys.current?.generation
            for folder in folders {
                for entry in BackupFolder.scan(URL(fileURLWithPath: folder), trust: trust.keys) {
                    var copyOf: String?, forkWith: [String]?
                    switch entry.status {
                    case .copy(let original): copyOf = original.path
                    case .fork(let others): forkWith = others.map(\.path)
                    default: break
                    }
                    let info = entry.info
                    rows.append(
                        Row(
                            file: entry.url.path, sequence: info?.sequence,
                            created: info.map { ISO8601DateFormatter().string(from: $0.created) },
                            size: entry.size, status: entry.status.name, keyGeneration: info?.generation,
                            superseded: info?.generation.flatMap { generation in newest.map { generation < $0 } },
                            copyOf: copyOf, forkWith: forkWith, device: info?.device, commit: info?.commitCounter,
                            signedName: info?.signedName))
                    labels.append(BackupCommands.label(entry, trust: trust))
                }
            }
            if report.json { return try Output.json(["archives": rows]) }
            guard !rows.isEmpty else {
                Output.line(
                    "No archives in \(folders.joined(separator: ", ")). Make one with: coffer backup create --to DIR")
                return
            }
            Render.table(
                [["Made", "Seq", "Size", "Status", "File"]]
                    + zip(rows, labels).map { row, label in
                        [
                            row.created ?? "—", row.sequence.map(String.init) ?? "—",
                            ByteCountFormatter.string(fromByteCount: Int64(row.size), countStyle: .file),
                            label, TextSafety.printable(URL(fileURLWithPath: row.file).lastPathComponent),
                        ]
                    }, rightAligned: [1, 2]
            ).forEach { Output.line($0) }
            Output.line()
            Output.line("Checked against \(trust.source). Only archives marked ✓ signed are counted and kept by prune;")
            Output.line(
                "copies are the same signed archive under another name, and a fork is a second archive signed with one number."
            )
        }
    }

    /// "✓ signed (key 2 of 3, superseded)", "copy of #5", "✗ foreign" …, cleaned for a terminal.
    static func label(_ entry: BackupFolder.Entry, trust: Trust) -> String {
        TextSafety.printable(trust.resolved.label(entry))
    }

    // MARK: prune

    struct Prune: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "prune",
            abstract: "Delete old archives from a folder by keep rules, using only signed dates and sequence numbers.",
            discussion:
                "Touches only distinct archives signed by this vault (any key generation); never the newest one, nor the newest fully verified one. Copies, forks and anything unsigned are never touched."
        )
        @OptionGroup var options: VaultOptions
        @Argument(help: "The folder to prune.") var directory: String
        @Option(help: "Keep the N newest archives.") var keepLast = 0
        @Option(help: "Keep the newest archive of each of the last N days.") var keepDaily = 0
        @Option(help: "Keep the newest archive of each of the last N weeks.") var keepWeekly = 0
        @Option(help: "Keep the newest archive of each of the last N months.") var keepMonthly = 0
        @Flag(help: "Show what would be kept and removed; remove nothing.") var dryRun = false
        @Option(
            help: ArgumentHelp(
                "A minisign public key file to trust instead of the vault's key history (repeatable).",
                valueName: "file")) var pubkey: [String] = []
        @OptionGroup var report: ReportOptions

        struct JSON: Encodable {
            struct Kept: Encodable {
                let archive: String
                let reasons: [String]
            }
            struct Ignored: Encodable {
                let archive: String
                let reason: String
            }
            let dryRun: Bool
            let kept: [Kept]
            /// Removed, or with --dry-run the ones that would be.
            let removed: [String]
            let ignored: [Ignored]
        }

        func validate() throws {
            guard keepLast + keepDaily + keepWeekly + keepMonthly > 0,
                [keepLast, keepDaily, keepWeekly, keepMonthly].allSatisfy({ $0 >= 0 })
            else {
                throw ValidationError(
                    "Give at least one rule: --keep-last, --keep-daily, --keep-weekly or --keep-monthly (positive numbers)."
                )
            }
        }

        func run() throws {
            let policy = RetentionPolicy(
                keepLast: keepLast, keepDaily: keepDaily, keepWeekly: keepWeekly, keepMonthly: keepMonthly)
            let folder = URL(fileURLWithPath: directory).standardizedFileURL
            let ledger = try options.openLedger()
            let trust = try BackupCommands.trust(
                pubkeys: pubkey, options: options, vault: ledger.vault, folders: [folder])
            let plan = try BackupService.planPrune(folder, policy: policy, ledger: ledger, trust: trust.keys)
            if report.json {
                if !dryRun { plan.remove.forEach { Archive.remove($0.url) } }
                return try Output.json(
                    JSON(
                        dryRun: dryRun,
                        kept: plan.keep.map { JSON.Kept(archive: $0.0.url.lastPathComponent, reasons: $0.1) },
                        removed: plan.remove.map(\.url.lastPathComponent),
                        ignored: plan.untouched.map { other, unrecorded in
                            JSON.Ignored(
                                archive: other.url.lastPathComponent,
                                reason: unrecorded
                                    ? "signed by a superseded key as a number this vault never issued"
                                    : BackupCommands.label(other, trust: trust))
                        }))
            }
            for (info, reasons) in plan.keep {
                Output.line(
                    "keep    \(TextSafety.printable(info.url.lastPathComponent))  (\(reasons.joined(separator: ", ")))")
            }
            for info in plan.remove {
                Output.line(
                    "\(dryRun ? "would remove" : "remove")  \(TextSafety.printable(info.url.lastPathComponent))")
                if !dryRun { Archive.remove(info.url) }
            }
            let removed = plan.remove.count
            for (other, unrecorded) in plan.untouched {
                let why =
                    unrecorded
                    ? "signed by a superseded key as a number this vault never issued"
                    : BackupCommands.label(other, trust: trust)
                Output.line("ignore  \(TextSafety.printable(other.url.lastPathComponent))  (\(why): never touched)")
            }
            Output.line(
                dryRun
                    ? "Dry run: nothing was removed (\(removed) would be)."
                    : "Removed \(removed) archive\(removed == 1 ? "" : "s").")
        }
    }

    // MARK: pubkey

    struct PublicKey: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "pubkey",
            abstract: "Export the vault's public key in minisign's format, to verify archives without the passphrase.",
            discussion:
                "With --all, every key generation: printed one after another, or with --out DIR one file per generation (minisign reads one key per file)."
        )
        @OptionGroup var options: VaultOptions
        @Option(
            help: ArgumentHelp(
                "Write it to this file (with --all: into this folder) instead of standard output.", valueName: "path"))
        var out: String?
        @Flag(help: "Every key generation of the vault, not only the current one.") var all = false

        func run() throws {
            let vault = try options.openVault()
            let history = vault.keyHistory
            let contents = { (generation: KeyGeneration) in Archive.publicKeyFileContents(generation, vaultID: vault.id)
            }
            guard let current = history.last else { throw CLIError(.damaged, "The vault has no signing key history.") }
            try BackupCommands.writePublicKey(contents(current), to: BackupService.publicKeyURL(for: options.vaultURL))
            switch (all, out) {
            case (false, let out?):
                try BackupCommands.writePublicKey(contents(current), to: URL(fileURLWithPath: out))
                Output.line("Wrote the public key to \(out). Verify an archive with: minisign -Vm ARCHIVE -p \(out)")
            case (false, nil):
                print(contents(current), terminator: "")
            case (true, let out?):
                let folder = URL(fileURLWithPath: out)
                var isDirectory: ObjCBool = false
                guard FileManager.default.fileExists(atPath: folder.path, isDirectory: &isDirectory),
                    isDirectory.boolValue
                else {
                    throw CLIError(
                        .invalidInput,
                        "\(folder.path) is not a folder; with --all, --out names the folder the key files go into.")
                }
                try Archive.writePublicKeys(history, vaultID: vault.id, into: folder)
                for generation in history {
                    Output.line(
                        "Wrote key generation \(generation.number) to \(folder.appendingPathComponent(Archive.publicKeyFileName(vaultID: vault.id, generation: generation.number)).path)"
                    )
                }
                Output.line(
                    "Verify any archive with the file of the generation that signed it: minisign -Vm ARCHIVE -p FILE")
            case (true, nil):
                print(history.map(contents).joined(), terminator: "")
            }
        }
    }

    // MARK: targets

    struct Targets: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "target", abstract: "Default backup destinations.",
            subcommands: [Add.self, Remove.self, List.self])

        struct Add: ParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "add", abstract: "Save a folder as a default backup destination.")
            @OptionGroup var options: VaultOptions
            @Argument var directory: String
            func run() throws {
                let ledger = try options.openLedger()
                let path = try ledger.addBackupTarget(URL(fileURLWithPath: directory))
                Output.line("Backups will go to \(path).")
                Output.advice("Next: coffer backup create")
            }
        }

        struct Remove: ParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "remove",
                abstract: "Stop backing up to a folder (its archives stay).")
            @OptionGroup var options: VaultOptions
            @Argument var directory: String
            func run() throws {
                let ledger = try options.openLedger()
                let path = try ledger.removeBackupTarget(URL(fileURLWithPath: directory))
                Output.line("No longer backing up to \(path); its archives were left in place.")
            }
        }

        struct List: ParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "list",
                abstract: "List backup destinations and their last verified backup.")
            @OptionGroup var options: VaultOptions
            @OptionGroup var report: ReportOptions
            struct Row: Encodable { let path: String; let lastVerified: String?; let sequence: UInt64? }
            func run() throws {
                let ledger = try options.openLedger()
                let verified = ledger.backupState?.state.verified ?? []
                let rows = ledger.backupTargets.values.map(\.path).sorted().map { path in
                    let last = verified.first { $0.path == path }
                    return Row(
                        path: path,
                        lastVerified: last.map {
                            ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: TimeInterval($0.time)))
                        },
                        sequence: last?.sequence)
                }
                if report.json { return try Output.json(["targets": rows]) }
                guard !rows.isEmpty else {
                    Output.line("No backup targets yet — add one with: coffer backup target add /media/usb/coffer")
                    return
                }
                Render.table(
                    rows.map { row in
                        [
                            row.path,
                            verified.first { $0.path == row.path }.map {
                                "verified \(BackupAge.text(since: $0.time)) (#\($0.sequence))"
                            } ?? "never backed up",
                        ]
                    }
                ).forEach { Output.line($0) }
            }
        }
    }
}

/// `coffer restore FILE --to PATH [--replace]`.
struct Restore: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "restore",
        abstract: "Restore an archive into a vault: fully verified, built aside, checked, then moved into place.",
        discussion:
            "Refuses to overwrite a vault without --replace; with it the old one is kept as PATH.before-restore-TIME.")
    @OptionGroup var options: VaultOptions
    @Argument(help: "The archive (.cbak).") var file: String
    @Option(name: .customLong("to"), help: ArgumentHelp("Where the restored vault goes.", valueName: "path"))
    var target: String
    @Flag(help: "Replace an existing vault at --to (kept as PATH.before-restore-TIME).") var replace = false
    @Flag(help: "With --replace, do not ask before replacing a vault with an older archive.") var yes = false
    @OptionGroup var report: ReportOptions

    struct JSON: Encodable {
        let vault: String
        let archive: String
        let sequence: UInt64
        let created: String
        let records: Int
        let netWorth: String
        /// Where the vault it replaced was kept (with --replace).
        @NullEncoded var previousVaultKeptAt: String?
    }

    func run() throws {
        LargeAllocations.mapped()
        let url = URL(fileURLWithPath: file)
        let destination = URL(fileURLWithPath: target)
        guard FileManager.default.fileExists(atPath: url.path) else {
            throw CLIError(.notFound, "No archive at \(url.path).")
        }
        if FileManager.default.fileExists(atPath: destination.path), !replace {
            throw CLIError(
                .invalidInput, "A vault already exists at \(destination.path); nothing was changed.",
                hint: "Restore to another path, or add --replace (the old vault is kept beside it).")
        }
        let unlocked = try BackupCommands.unlockArchive(url, options: options)
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "yyyyMMdd-HHmmss"
        let oldCopy = URL(fileURLWithPath: destination.path + ".before-restore-\(formatter.string(from: Date()))")
        var superseded = false
        let opened = try BackupService.restore(
            unlocked, to: destination, replacing: replace, keepingOldAt: oldCopy, guard: options.rollbackGuard,
            confirmingOlder: yes
                ? nil
                : { opened, reason in
                    guard
                        try Terminal.confirm(
                            "Archive #\(opened.contents.sequence) of \(ISO8601DateFormatter().string(from: opened.contents.created)) is older than the vault at \(destination.path) (\(reason)). Replace it anyway? (The vault is kept beside it.)",
                            refusal: "Replacing a vault with an older archive (\(reason))")
                    else {
                        throw CLIError(.failure, "Nothing was restored.")
                    }
                }
        ) { notice in
            if case .restoredFromSupersededKey = notice { superseded = true }
            BackupCommands.show(notice)
        }
        let contents = opened.contents
        if report.json {
            return try Output.json(
                JSON(
                    vault: destination.path, archive: url.path, sequence: contents.sequence,
                    created: ISO8601DateFormatter().string(from: contents.created), records: contents.recordCount,
                    netWorth: contents.netWorth,
                    previousVaultKeptAt: replace && FileManager.default.fileExists(atPath: oldCopy.path)
                        ? oldCopy.path : nil))
        }
        Output.line(
            "Restored \(contents.recordCount) records into \(destination.path) from archive #\(contents.sequence) of \(ISO8601DateFormatter().string(from: contents.created))."
        )
        Output.line(
            "It was built aside and verified before it replaced anything. Net worth then: \(contents.netWorth).")
        if replace, FileManager.default.fileExists(atPath: oldCopy.path) {
            Output.line("The previous vault is kept at \(oldCopy.path).")
        }
        if superseded {
            Terminal.note(
                "hint: Restore the newest archive if you can; otherwise check the restored vault and run: coffer rekey --vault \(destination.path)"
            )
        }
        Output.line("It opens with the passphrase that was current when the archive was made.")
    }
}

/// Step messages on stderr for long work, only when someone is watching a terminal.
struct Progress {
    let enabled: Bool
    let started = Date()
    func step(_ text: String) { if enabled { Terminal.note("… \(text)") } }
    func finish() {
        if enabled { Terminal.note(String(format: "… done in %.1f s", Date().timeIntervalSince(started))) }
    }
}
