import ArgumentParser
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

    /// The vault's minisign public key, kept beside the vault so archives can be checked
    /// without the passphrase (`vault.coffer.pub`).
    static func publicKeyURL(for vaultURL: URL) -> URL { URL(fileURLWithPath: vaultURL.path + ".pub") }

    static func writePublicKey(_ key: MinisignPublicKey, to url: URL) throws {
        do {
            try Data(key.fileContents.utf8).write(to: url, options: .atomic)
        } catch {
            throw CLIError(.failure, "Cannot write the public key to \(url.path).")
        }
    }

    /// The key archives must be signed with: --pubkey, else the one saved beside the vault.
    static func trustedPublicKey(_ path: String?, vaultURL: URL) throws -> MinisignPublicKey {
        let url = path.map { URL(fileURLWithPath: $0) } ?? publicKeyURL(for: vaultURL)
        guard let data = FileManager.default.contents(atPath: url.path) else {
            throw CLIError(path == nil ? .invalidInput : .notFound,
                           path == nil ? "No public key to check archives against: none saved beside the vault." : "No public key file at \(url.path).",
                           hint: "Pass --pubkey FILE (made with: coffer backup pubkey --out FILE).")
        }
        return try CLIError.wrapping { try MinisignPublicKey(parsing: String(decoding: data, as: UTF8.self)) }
    }

    struct Age: Encodable {
        let path: String
        let lastVerified: String?
        let days: Int?
    }

    /// Backups older than this are called out in the overview and status.
    static let staleAfterDays = 30

    /// The age of the newest verified backup in each destination (saved targets and any folder
    /// backed up to with --to).
    static func ages(ledger: Ledger, now: Date = Date()) -> [Age] {
        let verified = ledger.backupState?.state.verified ?? []
        let paths = Set(ledger.backupTargets.values.map(\.path) + verified.map(\.path)).sorted()
        return paths.map { path in
            let last = verified.first { $0.path == path }
            return Age(path: path, lastVerified: last.map { ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: TimeInterval($0.time))) },
                       days: last.map { Int((now.timeIntervalSince1970 - Double($0.time)) / 86_400) })
        }
    }

    /// Human lines for the overview and status, with a warning when a backup is missing or stale.
    static func ageLines(ledger: Ledger) -> [String] {
        let ages = ages(ledger: ledger)
        guard !ages.isEmpty else {
            return ledger.accounts.isEmpty ? [] : ["No backups yet — make one: coffer backup target add DIR && coffer backup create"]
        }
        return ages.map { age in
            guard let days = age.days else { return "⚠ Never backed up to \(age.path). Run: coffer backup create" }
            let when = days <= 0 ? "today" : (days == 1 ? "1 day ago" : "\(days) days ago")
            return days > staleAfterDays ? "⚠ Last verified backup to \(age.path) was \(when): over \(staleAfterDays) days. Run: coffer backup create"
                                         : "Last verified backup to \(age.path): \(when)"
        }
    }

    static func age(since seconds: Int64, now: Date = Date()) -> String {
        let days = Int((now.timeIntervalSince1970 - Double(seconds)) / 86_400)
        return days <= 0 ? "today" : (days == 1 ? "1 day ago" : "\(days) days ago")
    }

    // MARK: create

    struct Create: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Back up the vault to each destination, then read each archive back and fully verify it.",
            discussion: "Destinations: every --to DIR, else the saved targets (coffer backup target add DIR).")
        @OptionGroup var options: VaultOptions
        @Option(name: .customLong("to"), help: ArgumentHelp("A destination folder (repeatable).", valueName: "dir")) var destinations: [String] = []

        func run() throws {
            let ledger = try options.openLedger()
            let targets = destinations.isEmpty ? ledger.backupTargets.values.map(\.path).sorted() : destinations
            guard !targets.isEmpty else {
                throw CLIError(.invalidInput, "No destination: nothing was written.",
                               hint: "Pass --to DIR, or save one: coffer backup target add DIR")
            }
            let directories = targets.map { URL(fileURLWithPath: $0).standardizedFileURL }
            let progress = Progress(enabled: Terminal.standardErrorIsTerminal)

            var state = ledger.backupState?.state ?? BackupState()
            state.lastSequence += 1
            let sequence = state.lastSequence
            let stateID = ledger.backupState?.id ?? UUID()
            // The sequence is recorded in the vault as soon as the first archive carrying it has its
            // final name, so no two archives share one; when every destination fails, the vault is
            // left exactly as it was.
            var sequenceRecorded = false

            let vault = ledger.vault
            let today = try CommandContext.today()
            let netWorth = "\(ledger.currency.code) \(ledger.currency.decimalString(try ledger.netWorth(on: today).netWorth))"
            let records = vault.records.filter { !RecordCodec.isBackupState($0.payload) }.map { ($0.id, $0.payload) }
            let keys = vault.backupKeys
            let publicKey = MinisignPublicKey(key: keys.signingKey.publicKey)
            try BackupCommands.writePublicKey(publicKey, to: BackupCommands.publicKeyURL(for: options.vaultURL))
            let created = Date()
            var failures = 0
            for directory in directories {
                var isDirectory: ObjCBool = false
                guard FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory), isDirectory.boolValue else {
                    Output.line("FAILED  \(directory.path): no such folder (is the drive mounted?). Nothing was written there.")
                    failures += 1
                    continue
                }
                progress.step("Writing an archive of \(records.count) records to \(directory.path)")
                let url: URL
                do {
                    url = try Archive.write(records: records, netWorth: netWorth, appVersion: Coffer.version, commitCounter: vault.commitCounter,
                                            keys: keys, sequence: sequence, created: created, to: directory)
                } catch let error as BackupError {
                    Output.line("FAILED  \(directory.path): \(error.errorDescription ?? "write failed"). No archive with a final name was left.")
                    failures += 1
                    continue
                }
                if !sequenceRecorded {
                    do {
                        try ledger.writeWithoutHistory([(stateID, .backupState(state))])
                    } catch {
                        Archive.remove(url)
                        throw error
                    }
                    sequenceRecorded = true
                }
                progress.step("Reading it back and verifying it")
                do {
                    _ = try Archive.verify(at: url, publicKey: publicKey)
                    let contents = try Archive.open(at: url, keys: keys)
                    guard contents.recordCount == records.count else { throw BackupError(.damaged, "record count differs") }
                } catch {
                    Archive.remove(url)
                    Output.line("FAILED  \(directory.path): the archive did not verify when read back (\(CLIError(error).message)); it was removed.")
                    failures += 1
                    continue
                }
                state.verified.removeAll { $0.path == directory.path }
                state.verified.append(.init(path: directory.path, sequence: sequence, time: Int64(created.timeIntervalSince1970)))
                let size = (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int) ?? 0
                Output.line("Backup OK  \(url.path)  (\(records.count) records, \(ByteCountFormatter.string(fromByteCount: Int64(size), countStyle: .file)))")
            }
            if sequenceRecorded { try ledger.writeWithoutHistory([(stateID, .backupState(state))]) }
            progress.finish()
            if failures > 0 {
                throw CLIError(.failure, "\(failures) of \(directories.count) backup\(directories.count == 1 ? "" : "s") FAILED.")
            }
            Output.line("Each archive was read back from its folder: signature, every encrypted chunk and every record verified.")
            Output.line("Check one any time without a passphrase: minisign -Vm ARCHIVE -p \(BackupCommands.publicKeyURL(for: options.vaultURL).path)")
        }
    }

    // MARK: verify

    struct VerifyArchive: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "verify",
            abstract: "Check an archive: signature and structure without a passphrase; --full decrypts and checks every record.")
        @OptionGroup var options: VaultOptions
        @Argument(help: "The archive (.cbak); its .minisig must be beside it.") var file: String
        @Option(help: ArgumentHelp("The vault's public key (default: the one saved beside the vault).", valueName: "file")) var pubkey: String?
        @Flag(help: "Also decrypt, decompress and parse every record, and compare with the manifest (needs the passphrase or a session).") var full = false

        func run() throws {
            let url = URL(fileURLWithPath: file)
            guard FileManager.default.fileExists(atPath: url.path) else { throw CLIError(.notFound, "No archive at \(url.path).") }
            let info: ArchiveInfo
            if full, pubkey == nil, !FileManager.default.fileExists(atPath: BackupCommands.publicKeyURL(for: options.vaultURL).path) {
                // A fresh machine: the key that signed it is derived from the passphrase below.
                info = try openFully(url).1
            } else {
                info = try CLIError.wrapping { try Archive.verify(at: url, publicKey: try BackupCommands.trustedPublicKey(pubkey, vaultURL: options.vaultURL)) }
                if full { _ = try openFully(url) }
            }
            Output.line("Archive OK: \(url.lastPathComponent) — sequence \(info.sequence), made \(ISO8601DateFormatter().string(from: info.created)), \(info.size) bytes.")
            Output.line("Proved: signed by this vault's key; header, signed description and chunk framing intact to the last byte.")
            if full {
                Output.line("Proved (--full): every chunk decrypted and authenticated, the content decompressed to its declared size,")
                Output.line("and every record parsed and matched the encrypted manifest (count, kinds, digest).")
            } else {
                Output.line("Not yet proved: that it decrypts and restores. Run with --full for that.")
            }
        }

        /// Full verification: keys from the archive's own vault header and the passphrase (or
        /// this vault's session), then the signature with the key that derives from them.
        func openFully(_ url: URL) throws -> (ArchiveContents, ArchiveInfo) {
            let keys = try BackupCommands.archiveKeys(url, options: options)
            let info = try CLIError.wrapping { try Archive.verify(at: url, publicKey: MinisignPublicKey(key: keys.signingKey.publicKey)) }
            return (try CLIError.wrapping { try Archive.open(at: url, keys: keys) }, info)
        }
    }

    /// The keys of an archive, from its stored vault header and the user's credential.
    static func archiveKeys(_ url: URL, options: VaultOptions) throws -> BackupKeys {
        let header = try CLIError.wrapping { try Archive.archivedVaultHeader(at: url) }
        do {
            return try Vault.backupKeys(fromArchivedHeader: header, credential: options.credential())
        } catch let error as VaultError where error.code == .wrongPassphrase || error.code == .sessionInvalid {
            let made = (try? Archive.verifyStructureOnly(at: url)).map { " It was made on \(ISO8601DateFormatter().string(from: $0.created))." } ?? ""
            throw CLIError(.noPermission, "That passphrase does not open this archive.\(made)",
                           hint: "An archive made before a passphrase change needs the passphrase that was current then.")
        }
    }

    // MARK: list

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List archives in a folder (default: every saved target) with their signature status.")
        @OptionGroup var options: VaultOptions
        @OptionGroup var report: ReportOptions
        @Argument(help: "A folder of archives.") var directory: String?
        @Option(help: ArgumentHelp("The vault's public key (default: the one saved beside the vault).", valueName: "file")) var pubkey: String?

        struct Row: Encodable { let file: String; let sequence: UInt64?; let created: String?; let size: Int; let status: String }

        func run() throws {
            let publicKey = try BackupCommands.trustedPublicKey(pubkey, vaultURL: options.vaultURL)
            let folders: [String]
            if let directory { folders = [directory] } else { folders = try options.openLedger().backupTargets.values.map(\.path).sorted() }
            guard !folders.isEmpty else {
                throw CLIError(.invalidInput, "No folder given and no saved backup targets.", hint: "coffer backup list DIR, or coffer backup target add DIR")
            }
            var rows: [Row] = []
            for folder in folders {
                rows += BackupCommands.inspect(folder: URL(fileURLWithPath: folder), publicKey: publicKey).map {
                    Row(file: $0.url.path, sequence: $0.info?.sequence, created: $0.info.map { ISO8601DateFormatter().string(from: $0.created) },
                        size: $0.size, status: $0.status)
                }
            }
            if report.json { return try Output.json(["archives": rows]) }
            guard !rows.isEmpty else {
                Output.line("No archives in \(folders.joined(separator: ", ")). Make one with: coffer backup create --to DIR")
                return
            }
            Render.table([["Made", "Seq", "Size", "Status", "File"]] + rows.map {
                [$0.created ?? "—", $0.sequence.map(String.init) ?? "—", ByteCountFormatter.string(fromByteCount: Int64($0.size), countStyle: .file),
                 $0.status == "signed" ? "✓ signed" : "✗ \($0.status)", URL(fileURLWithPath: $0.file).lastPathComponent]
            }, rightAligned: [1, 2]).forEach { Output.line($0) }
            Output.line()
            Output.line("Only archives marked ✓ signed are trusted: restored, counted, or kept by prune.")
        }
    }

    struct Inspected {
        let url: URL
        let info: ArchiveInfo?
        let size: Int
        /// signed, damaged, foreign, unsigned, conflicted copy, not an archive
        let status: String
    }

    /// Every archive-like file in a folder, checked against `publicKey`; never trusts a name.
    static func inspect(folder: URL, publicKey: MinisignPublicKey) -> [Inspected] {
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? [])
            .filter { $0.hasSuffix(".cbak") && !$0.hasPrefix(".") }.sorted()
        return names.map { name in
            let url = folder.appendingPathComponent(name)
            let size = (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int) ?? 0
            if name.lowercased().contains("conflict") {
                return Inspected(url: url, info: nil, size: size, status: "conflicted copy")
            }
            do {
                return Inspected(url: url, info: try Archive.verify(at: url, publicKey: publicKey), size: size, status: "signed")
            } catch let error as BackupError {
                let status: String
                switch error.code {
                case .untrusted: status = FileManager.default.fileExists(atPath: url.path + ".minisig") ? "foreign" : "unsigned"
                case .unsupported: status = "newer format"
                default: status = "damaged"
                }
                return Inspected(url: url, info: nil, size: size, status: status)
            } catch {
                return Inspected(url: url, info: nil, size: size, status: "damaged")
            }
        }
    }

    // MARK: prune

    struct Prune: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Delete old archives from a folder by keep rules, using only signed dates and sequence numbers.",
            discussion: "Touches only archives signed by this vault; never the newest one, nor the newest fully verified one.")
        @OptionGroup var options: VaultOptions
        @Argument(help: "The folder to prune.") var directory: String
        @Option(help: "Keep the N newest archives.") var keepLast = 0
        @Option(help: "Keep the newest archive of each of the last N days.") var keepDaily = 0
        @Option(help: "Keep the newest archive of each of the last N weeks.") var keepWeekly = 0
        @Option(help: "Keep the newest archive of each of the last N months.") var keepMonthly = 0
        @Flag(help: "Show what would be kept and removed; remove nothing.") var dryRun = false
        @Option(help: ArgumentHelp("The vault's public key (default: the one saved beside the vault).", valueName: "file")) var pubkey: String?

        func run() throws {
            let policy = RetentionPolicy(keepLast: keepLast, keepDaily: keepDaily, keepWeekly: keepWeekly, keepMonthly: keepMonthly)
            let folder = URL(fileURLWithPath: directory).standardizedFileURL
            let publicKey = try BackupCommands.trustedPublicKey(pubkey, vaultURL: options.vaultURL)
            let ledger = try options.openLedger()
            let protected = Set(ledger.backupState?.state.verified.filter { $0.path == folder.path }.map(\.sequence) ?? [])
            let inspected = BackupCommands.inspect(folder: folder, publicKey: publicKey)
            let signed = inspected.filter { $0.info != nil }
            let keep = try CLIError.wrapping {
                try policy.keep(signed.map { .init(sequence: $0.info!.sequence, created: $0.info!.created) }, protected: protected)
            }
            var removed = 0
            for archive in signed.sorted(by: { $0.info!.sequence > $1.info!.sequence }) {
                let info = archive.info!
                if let reasons = keep[info.sequence] {
                    Output.line("keep    \(archive.url.lastPathComponent)  (\(reasons.joined(separator: ", ")))")
                } else {
                    Output.line("\(dryRun ? "would remove" : "remove")  \(archive.url.lastPathComponent)")
                    if !dryRun { Archive.remove(archive.url) }
                    removed += 1
                }
            }
            for other in inspected where other.info == nil {
                Output.line("ignore  \(other.url.lastPathComponent)  (\(other.status): never touched)")
            }
            Output.line(dryRun ? "Dry run: nothing was removed (\(removed) would be)." : "Removed \(removed) archive\(removed == 1 ? "" : "s").")
        }
    }

    // MARK: pubkey

    struct PublicKey: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "pubkey",
            abstract: "Export the vault's public key in minisign's format, to verify archives without the passphrase.")
        @OptionGroup var options: VaultOptions
        @Option(help: ArgumentHelp("Write it to this file instead of standard output.", valueName: "file")) var out: String?

        func run() throws {
            let vault = try options.openVault()
            let key = MinisignPublicKey(key: vault.backupKeys.signingKey.publicKey)
            try BackupCommands.writePublicKey(key, to: BackupCommands.publicKeyURL(for: options.vaultURL))
            if let out {
                try BackupCommands.writePublicKey(key, to: URL(fileURLWithPath: out))
                Output.line("Wrote the public key to \(out). Verify an archive with: minisign -Vm ARCHIVE -p \(out)")
            } else {
                print(key.fileContents, terminator: "")
            }
        }
    }

    // MARK: targets

    struct Targets: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "target", abstract: "Default backup destinations.", subcommands: [Add.self, Remove.self, List.self])

        struct Add: ParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Save a folder as a default backup destination.")
            @OptionGroup var options: VaultOptions
            @Argument var directory: String
            func run() throws {
                let path = URL(fileURLWithPath: directory).standardizedFileURL.path
                var isDirectory: ObjCBool = false
                guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else {
                    throw CLIError(.invalidInput, "\(path) is not a folder. Nothing was changed.")
                }
                let ledger = try options.openLedger()
                guard !ledger.backupTargets.values.contains(where: { $0.path == path }) else {
                    throw CLIError(.invalidInput, "\(path) is already a backup target. Nothing was changed.")
                }
                try ledger.commit("Added backup target \(path)", puts: [(UUID(), .backupTarget(BackupTarget(path: path)))])
                Output.line("Backups will go to \(path).")
                Output.line("Next: coffer backup create")
            }
        }

        struct Remove: ParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Stop backing up to a folder (its archives stay).")
            @OptionGroup var options: VaultOptions
            @Argument var directory: String
            func run() throws {
                let path = URL(fileURLWithPath: directory).standardizedFileURL.path
                let ledger = try options.openLedger()
                guard let (id, _) = ledger.backupTargets.first(where: { $0.value.path == path }) else {
                    throw CLIError(.invalidInput, "\(path) is not a backup target. Nothing was changed.")
                }
                try ledger.commit("Removed backup target \(path)", deletes: [id])
                Output.line("No longer backing up to \(path); its archives were left in place.")
            }
        }

        struct List: ParsableCommand {
            static let configuration = CommandConfiguration(abstract: "List backup destinations and their last verified backup.")
            @OptionGroup var options: VaultOptions
            @OptionGroup var report: ReportOptions
            struct Row: Encodable { let path: String; let lastVerified: String?; let sequence: UInt64? }
            func run() throws {
                let ledger = try options.openLedger()
                let verified = ledger.backupState?.state.verified ?? []
                let rows = ledger.backupTargets.values.map(\.path).sorted().map { path in
                    let last = verified.first { $0.path == path }
                    return Row(path: path, lastVerified: last.map { ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: TimeInterval($0.time))) },
                               sequence: last?.sequence)
                }
                if report.json { return try Output.json(["targets": rows]) }
                guard !rows.isEmpty else {
                    Output.line("No backup targets yet — add one with: coffer backup target add /media/usb/coffer")
                    return
                }
                Render.table(rows.map { row in
                    [row.path, verified.first { $0.path == row.path }.map { "verified \(BackupCommands.age(since: $0.time)) (#\($0.sequence))" } ?? "never backed up"]
                }).forEach { Output.line($0) }
            }
        }
    }
}

/// `coffer restore FILE --to PATH [--replace]`.
struct Restore: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Restore an archive into a vault: fully verified, built aside, checked, then moved into place.",
        discussion: "Refuses to overwrite a vault without --replace; with it the old one is kept as PATH.before-restore-TIME.")
    @OptionGroup var options: VaultOptions
    @Argument(help: "The archive (.cbak).") var file: String
    @Option(name: .customLong("to"), help: ArgumentHelp("Where the restored vault goes.", valueName: "path")) var target: String
    @Flag(help: "Replace an existing vault at --to (kept as PATH.before-restore-TIME).") var replace = false

    func run() throws {
        let url = URL(fileURLWithPath: file)
        let destination = URL(fileURLWithPath: target)
        guard FileManager.default.fileExists(atPath: url.path) else { throw CLIError(.notFound, "No archive at \(url.path).") }
        if FileManager.default.fileExists(atPath: destination.path), !replace {
            throw CLIError(.invalidInput, "A vault already exists at \(destination.path); nothing was changed.",
                           hint: "Restore to another path, or add --replace (the old vault is kept beside it).")
        }
        let keys = try BackupCommands.archiveKeys(url, options: options)
        _ = try CLIError.wrapping { try Archive.verify(at: url, publicKey: MinisignPublicKey(key: keys.signingKey.publicKey)) }
        let contents = try CLIError.wrapping { try Archive.open(at: url, keys: keys) }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "yyyyMMdd-HHmmss"
        let oldCopy = URL(fileURLWithPath: destination.path + ".before-restore-\(formatter.string(from: Date()))")
        // Backup bookkeeping is not in archives: rebuild it. Sequence numbers continue from this
        // archive, which was just fully verified where it lies.
        let state = BackupState(lastSequence: contents.sequence, verified: [.init(
            path: url.deletingLastPathComponent().standardizedFileURL.path, sequence: contents.sequence,
            time: Int64(contents.created.timeIntervalSince1970))])
        // Migrate every payload to the current version as it goes in (one transaction).
        let migrated = try contents.records.map { id, payload -> (RecordID, Data) in
            do {
                return (id, Data(try RecordCodec.upgraded(Array(payload), id: id.uuid)))
            } catch {
                throw CLIError(.damaged, "Record \(id.hex) in the archive cannot be read; nothing was restored.")
            }
        }
        let records = migrated + [(RecordID(uuid: UUID()), Data(RecordCodec.encode(.backupState(state))))]
        _ = try Vault.restore(at: destination, headerBytes: contents.vaultHeader, credential: try options.credential(),
                              records: records, replacing: replace, keepingOldAt: oldCopy)
        Output.line("Restored \(contents.recordCount) records into \(destination.path) from archive #\(contents.sequence) of \(ISO8601DateFormatter().string(from: contents.created)).")
        Output.line("It was built aside and verified before it replaced anything. Net worth then: \(contents.netWorth).")
        if replace, FileManager.default.fileExists(atPath: oldCopy.path) { Output.line("The previous vault is kept at \(oldCopy.path).") }
        Output.line("It opens with the passphrase that was current when the archive was made.")
    }
}

/// Step messages on stderr for long work, only when someone is watching a terminal.
struct Progress {
    let enabled: Bool
    let started = Date()
    func step(_ text: String) { if enabled { Terminal.note("… \(text)") } }
    func finish() { if enabled { Terminal.note(String(format: "… done in %.1f s", Date().timeIntervalSince(started))) } }
}

extension CLIError {
    /// Runs `body`, turning a BackupError into the documented exit code.
    static func wrapping<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as BackupError {
            throw CLIError(error)
        }
    }
}
