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

    /// The vault's current minisign public key, kept beside the vault for stock `minisign -V`
    /// (`vault.coffer.pub`). Coffer itself never trusts it over the vault's key history.
    static func publicKeyURL(for vaultURL: URL) -> URL { URL(fileURLWithPath: vaultURL.path + ".pub") }

    static func writePublicKey(_ contents: String, to url: URL) throws {
        try OutputFile.write(Data(contents.utf8), to: url.path)
    }

    /// The keys archives are checked against, and where they came from (every message names it).
    struct Trust {
        let keys: ArchiveTrust
        let source: String

        /// "key 2 of 3, superseded" for a generation of the vault's history.
        func describe(_ generation: UInt32?) -> String {
            guard let generation, let newest = keys.current?.generation else { return "key from \(source)" }
            return "key \(generation) of \(newest)\(generation < newest ? ", superseded" : "")"
        }
    }

    /// Where trust comes from, strongest first: key files the user names (`--pubkey`), else the
    /// vault's own key history, authenticated when the vault is unlocked (`vault`, or a session
    /// or passphrase given without a prompt), else read from its header. The `.pub` beside the
    /// vault is only compared with that history, and a mismatch reported: a swapped `.pub` never
    /// makes an attacker's archives "signed".
    /// Archives in `folders` may extend the history with generations made after this copy's
    /// (`ArchiveTrust.extended(byArchivesIn:)`).
    static func trust(pubkeys: [String], options: VaultOptions, vault: Vault? = nil, folders: [URL]) throws -> Trust {
        if !pubkeys.isEmpty {
            var keys: [MinisignPublicKey] = []
            for path in pubkeys {
                guard let data = FileManager.default.contents(atPath: path) else { throw CLIError(.notFound, "No public key file at \(path).") }
                keys += try CLIError.wrapping { try MinisignPublicKey.parseAll(String(decoding: data, as: UTF8.self)) }
            }
            return Trust(keys: ArchiveTrust(publicKeys: keys), source: pubkeys.joined(separator: ", "))
        }
        let vaultURL = options.vaultURL
        guard FileManager.default.fileExists(atPath: vaultURL.path) else {
            throw CLIError(.notFound, "No vault at \(vaultURL.path) to take this vault's keys from.",
                           hint: "Pass --pubkey FILE (each archive folder holds coffer-VAULTID-key-N.pub), or --vault PATH. On a new machine, `coffer backup verify --full` and `coffer restore` check archives with the passphrase alone.")
        }
        let trust: Trust
        if let vault = try vault ?? (options.hasCredentialWithoutPrompt ? options.openVault() : nil) {
            trust = Trust(keys: ArchiveTrust(vaultID: vault.id, history: vault.keyHistory).extended(byArchivesIn: folders),
                          source: "the key history of \(vaultURL.path)")
        } else {
            let summary = try Vault.summary(at: vaultURL)
            if summary.keyHistory.isEmpty {
                // A format 1 vault has no key history until its first unlock: its .pub is all there is.
                guard let data = FileManager.default.contents(atPath: publicKeyURL(for: vaultURL).path) else {
                    throw CLIError(.invalidInput, "No public key to check archives against: none saved beside the vault.",
                                   hint: "Unlock the vault first (eval \"$(coffer unlock)\"), or pass --pubkey FILE.")
                }
                let key = try CLIError.wrapping { try MinisignPublicKey(parsing: String(decoding: data, as: UTF8.self)) }
                return Trust(keys: ArchiveTrust(publicKeys: [key]), source: publicKeyURL(for: vaultURL).path)
            }
            trust = Trust(keys: ArchiveTrust(vaultID: summary.vaultID, history: summary.keyHistory).extended(byArchivesIn: folders),
                          source: "the key history in \(vaultURL.path)'s header (not unlocked)")
        }
        warnIfPublicKeyFileDiffers(trust, vaultURL: vaultURL)
        warnIfHistoriesConflict(trust.keys)
        return trust
    }

    /// Archives that certify different successors of one key: someone holding that key made
    /// their own. Only the generations everyone agrees on are trusted.
    static func warnIfHistoriesConflict(_ trust: ArchiveTrust) {
        guard let generation = trust.conflictAfter else { return }
        Terminal.note("warning: archives here disagree about which key followed key generation \(generation): someone who held that key certified a successor of their own. Only generations up to \(generation) are trusted; archives signed by a later key list as foreign.")
    }

    /// A `.pub` beside the vault that is not the vault's current key was swapped or is stale.
    static func warnIfPublicKeyFileDiffers(_ trust: Trust, vaultURL: URL) {
        let url = publicKeyURL(for: vaultURL)
        guard let data = FileManager.default.contents(atPath: url.path), let current = trust.keys.current else { return }
        let saved = try? MinisignPublicKey(parsing: String(decoding: data, as: UTF8.self))
        guard saved != current.publicKey else { return }
        Terminal.note("warning: \(url.path) is not this vault's current key\(saved.map { " (it holds key id \($0.keyIDText))" } ?? ""); it was not trusted.")
        Terminal.note("hint: If you did not replace it, someone may have. Rewrite it from the vault: coffer backup pubkey")
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
            let vault = ledger.vault
            let history = vault.keyHistory
            let trust = ArchiveTrust(vaultID: vault.id, history: history).extended(byArchivesIn: directories)

            var state = ledger.backupState?.state ?? BackupState()
            // The next number follows everything this vault signed in any destination, not only what
            // this copy remembers, so no two archives of the vault ever share a number.
            BackupCommands.warnIfHistoriesConflict(trust)
            // Archives of superseded key generations never steer numbering or a refusal: an old
            // key may outlive the vault's trust in it (a session or passphrase from before a rekey).
            let seen = BackupCommands.plausible(directories.flatMap { Archive.signedDescriptions(in: $0, trust: trust) }.filter { !$0.bySupersededKey },
                                                after: state.lastSequence)
            try BackupCommands.checkForForks(seen, lastSequence: state.lastSequence, vault: vault, acceptRollback: options.acceptRollback)
            state.lastSequence = max(state.lastSequence, seen.map(\.sequence).max() ?? 0) + 1
            guard state.lastSequence <= Archive.maximumSequence else {
                throw CLIError(.failure, "This vault's archive numbers are used up (#\(state.lastSequence - 1)); nothing was written.",
                               hint: "Restore the vault from a recent archive: it numbers again from there.")
            }
            let sequence = state.lastSequence
            let stateID = ledger.backupState?.id ?? UUID()
            // The sequence is recorded in the vault as soon as the first archive carrying it has its
            // final name, so no two archives share one; when every destination fails, the vault is
            // left exactly as it was.
            var sequenceRecorded = false

            let today = try CommandContext.today()
            let netWorth = "\(ledger.currency.code) \(ledger.currency.decimalString(try ledger.netWorth.totals(on: today).netWorth))"
            let records = vault.records.filter { !RecordCodec.isBackupState($0.payload) }.map { ($0.id, $0.payload) }
            let keys = vault.backupKeys
            if let current = history.last {
                try BackupCommands.writePublicKey(Archive.publicKeyFileContents(current, vaultID: vault.id), to: BackupCommands.publicKeyURL(for: options.vaultURL))
            }
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
                                            device: vault.deviceID, keys: keys, sequence: sequence, created: created, to: directory)
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
                    _ = try Archive.verify(at: url, trust: trust)
                    let contents = try Archive.open(at: url, keys: keys)
                    guard contents.recordCount == records.count else { throw BackupError(.damaged, "record count differs") }
                    try Archive.writePublicKeys(history, vaultID: vault.id, into: directory)
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

    /// How far past the vault's own count another archive's number may lie and still steer the
    /// numbering: two copies of a vault never drift a million backups apart, while a number
    /// near the limit signed by a stolen key would otherwise use the numbers up.
    static let plausibleSequenceGap: UInt64 = 1_000_000

    /// The descriptions that may steer numbering; the others are named on stderr.
    static func plausible(_ seen: [SignedDescription], after lastSequence: UInt64) -> [SignedDescription] {
        let (kept, ignored) = (seen.filter { $0.sequence <= lastSequence + plausibleSequenceGap }, seen.filter { $0.sequence > lastSequence + plausibleSequenceGap })
        for description in ignored {
            Terminal.note("warning: \(description.url.path) is signed as #\(description.sequence), far past this vault's #\(lastSequence): it was ignored for numbering.")
        }
        return kept
    }

    /// Archives in the destinations that this copy of the vault never recorded. Made by this
    /// copy from a later commit than it now has, they prove the vault file was rolled back (an
    /// older copy put in its place): refused unless `--accept-rollback`. Made by another copy of
    /// the vault, they are a fork: said plainly, and numbering continues after them.
    static func checkForForks(_ seen: [SignedDescription], lastSequence: UInt64, vault: Vault, acceptRollback: Bool) throws {
        let unknown = seen.filter { $0.sequence > lastSequence }.sorted { $0.sequence < $1.sequence }
        let mine = vault.deviceID?.hex
        let ahead = unknown.filter { $0.device != nil && $0.device == mine && ($0.commitCounter ?? 0) > vault.commitCounter }
        if let newest = ahead.last, !acceptRollback {
            throw CLIError(.damaged, "This vault is older than an archive it made: \(newest.url.path) is #\(newest.sequence), made from commit #\(newest.commitCounter ?? 0) of this copy, but the vault is at commit #\(vault.commitCounter). The vault file was rolled back or replaced by an older copy. Nothing was written.",
                           hint: "Restore that archive if it is the newer state (coffer restore), or pass --accept-rollback to back up this older state as #\((unknown.last?.sequence ?? lastSequence) + 1).")
        }
        for description in unknown {
            let maker = description.device.map { $0 == mine ? "this copy of the vault" : "another copy of this vault (device \($0.prefix(8)))" } ?? "a copy of this vault"
            Terminal.note("warning: \(description.url.path) is archive #\(description.sequence), made by \(maker)\(description.commitCounter.map { " from commit #\($0)" } ?? ""), which this vault has no record of: two copies of the vault back up here, or this one was restored from an older state. Numbering continues after it.")
        }
    }

    // MARK: verify

    struct VerifyArchive: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "verify",
            abstract: "Check an archive: signature and structure without a passphrase; --full decrypts and checks every record.",
            discussion: "Checked against every key generation in the vault's own key history (or the --pubkey files).")
        @OptionGroup var options: VaultOptions
        @Argument(help: "The archive (.cbak); its .minisig must be beside it.") var file: String
        @Option(help: ArgumentHelp("A minisign public key file to trust instead of the vault's key history (repeatable).", valueName: "file")) var pubkey: [String] = []
        @Flag(help: "Also decrypt, decompress and parse every record, and compare with the manifest (needs the passphrase or a session).") var full = false

        func run() throws {
            let url = URL(fileURLWithPath: file)
            guard FileManager.default.fileExists(atPath: url.path) else { throw CLIError(.notFound, "No archive at \(url.path).") }
            let info: ArchiveInfo
            let signedBy: String
            if full, pubkey.isEmpty, !FileManager.default.fileExists(atPath: options.vaultURL.path) {
                // A fresh machine: the archive's own key history, unlocked by the passphrase of its time.
                let opened = try BackupCommands.openArchive(url, options: options)
                info = opened.info
                signedBy = "the key its own vault header certifies, opened with your passphrase"
            } else {
                let trust = try BackupCommands.trust(pubkeys: pubkey, options: options, folders: [url.deletingLastPathComponent()])
                info = try CLIError.wrapping { try Archive.verify(at: url, trust: trust.keys) }
                signedBy = "this vault's \(trust.describe(info.generation)), from \(trust.source)"
                if full { _ = try BackupCommands.openArchive(url, options: options) }
            }
            Output.line("Archive OK: \(url.lastPathComponent) — sequence \(info.sequence), made \(ISO8601DateFormatter().string(from: info.created)), \(info.size) bytes.")
            Output.line("Proved: signed by \(signedBy); header, signed description and chunk framing intact to the last byte.")
            if !info.hasSignedName, let signedName = info.signedName { Output.line("Note: it was signed as \(signedName); this file is a renamed copy.") }
            if full {
                Output.line("Proved (--full): every chunk decrypted and authenticated, the content decompressed to its declared size,")
                Output.line("and every record parsed and matched the encrypted manifest (count, kinds, digest).")
            } else {
                Output.line("Not yet proved: that it decrypts and restores. Run with --full for that.")
            }
        }
    }

    /// Opens an archive fully: refused at once without a signature; its signature checked before
    /// any key derivation when a key that may have made it is known (the vault's history, even
    /// unauthenticated, or the key files beside the archives); then its keys derived from its
    /// own vault header and the user's credential (Argon2id bounded), the signature checked with
    /// the key they give, and every chunk and record checked.
    static func openArchive(_ url: URL, options: VaultOptions) throws -> (contents: ArchiveContents, info: ArchiveInfo, keys: BackupKeys) {
        let signature = try CLIError.wrapping { try Archive.signature(for: url) }
        let peek = try CLIError.wrapping { try Archive.peek(at: url) }
        let folder = url.deletingLastPathComponent()
        var checked: ArchiveInfo?
        if let summary = try? Vault.summary(at: options.vaultURL), summary.vaultID.bytes == peek.vaultID, !summary.keyHistory.isEmpty {
            // This vault's own history (and what archives beside it certify) decides, before any
            // key derivation: an archive claiming this vault but signed by another key costs nothing.
            let trust = ArchiveTrust(vaultID: summary.vaultID, history: summary.keyHistory).extended(byArchivesIn: [folder])
            checked = try CLIError.wrapping { try Archive.verify(at: url, trust: trust) }
        } else if let key = Archive.folderPublicKeys(in: folder, vaultID: peek.vaultID).first(where: { $0.keyID == signature.keyID }) {
            _ = try CLIError.wrapping { try Archive.verify(at: url, publicKey: key) }
        }
        let keys: BackupKeys
        do {
            keys = try Vault.backupKeys(fromArchivedHeader: peek.vaultHeader, credential: options.credential())
        } catch let error as VaultError where error.code == .wrongPassphrase || error.code == .sessionInvalid {
            throw CLIError(.noPermission, "That passphrase does not open this archive. It was made on \(ISO8601DateFormatter().string(from: peek.created)).",
                           hint: "An archive made before a passphrase change needs the passphrase that was current then.")
        }
        // Already proved against the vault's history by the key the passphrase derives: not read
        // and hashed a second time.
        let info = try checked.flatMap { MinisignPublicKey(key: keys.signingKey.publicKey).keyID == signature.keyID ? $0 : nil }
            ?? CLIError.wrapping { try Archive.verify(at: url, trust: ArchiveTrust(vaultID: keys.vaultID, history: keys.keyHistory)) }
        return (try CLIError.wrapping { try Archive.open(at: url, keys: keys) }, info, keys)
    }

    // MARK: list

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List archives in a folder (default: every saved target) with their signature status.",
            discussion: "Identity comes from the signed content: copies a sync tool made are listed as copies, and two archives signed with one sequence number as a fork.")
        @OptionGroup var options: VaultOptions
        @OptionGroup var report: ReportOptions
        @Argument(help: "A folder of archives.") var directory: String?
        @Option(help: ArgumentHelp("A minisign public key file to trust instead of the vault's key history (repeatable).", valueName: "file")) var pubkey: [String] = []

        struct Row: Encodable {
            let file: String
            let sequence: UInt64?
            let created: String?
            let size: Int
            let status: String
            let keyGeneration: UInt32?
            let superseded: Bool?
            let copyOf: String?
            let forkWith: [String]?
            let device: String?
            let commit: UInt64?
            let signedName: String?
        }

        func run() throws {
            let folders: [String]
            var vault: Vault?
            if let directory {
                folders = [directory]
            } else {
                let ledger = try options.openLedger()
                vault = ledger.vault
                folders = ledger.backupTargets.values.map(\.path).sorted()
            }
            guard !folders.isEmpty else {
                throw CLIError(.invalidInput, "No folder given and no saved backup targets.", hint: "coffer backup list DIR, or coffer backup target add DIR")
            }
            let trust = try BackupCommands.trust(pubkeys: pubkey, options: options, vault: vault, folders: folders.map { URL(fileURLWithPath: $0) })
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
                    rows.append(Row(file: entry.url.path, sequence: info?.sequence, created: info.map { ISO8601DateFormatter().string(from: $0.created) },
                                    size: entry.size, status: entry.status.name, keyGeneration: info?.generation,
                                    superseded: info?.generation.flatMap { generation in newest.map { generation < $0 } },
                                    copyOf: copyOf, forkWith: forkWith, device: info?.device, commit: info?.commitCounter, signedName: info?.signedName))
                    labels.append(BackupCommands.label(entry, trust: trust))
                }
            }
            if report.json { return try Output.json(["archives": rows]) }
            guard !rows.isEmpty else {
                Output.line("No archives in \(folders.joined(separator: ", ")). Make one with: coffer backup create --to DIR")
                return
            }
            Render.table([["Made", "Seq", "Size", "Status", "File"]] + zip(rows, labels).map { row, label in
                [row.created ?? "—", row.sequence.map(String.init) ?? "—", ByteCountFormatter.string(fromByteCount: Int64(row.size), countStyle: .file),
                 label, TextSafety.printable(URL(fileURLWithPath: row.file).lastPathComponent)]
            }, rightAligned: [1, 2]).forEach { Output.line($0) }
            Output.line()
            Output.line("Checked against \(trust.source). Only archives marked ✓ signed are counted and kept by prune;")
            Output.line("copies are the same signed archive under another name, and a fork is a second archive signed with one number.")
        }
    }

    /// "✓ signed (key 2 of 3, superseded)", "copy of #5", "✗ foreign" …
    static func label(_ entry: BackupFolder.Entry, trust: Trust) -> String {
        switch entry.status {
        case .signed:
            let renamed = entry.info.flatMap { $0.hasSignedName ? nil : $0.signedName }.map { ", signed as \($0)" } ?? ""
            return "✓ signed (\(trust.describe(entry.info?.generation))\(renamed))"
        case .copy(let original): return "copy of #\(entry.info?.sequence ?? 0) (\(TextSafety.printable(original.lastPathComponent)))"
        case .fork: return "⚠ fork: another archive is signed as #\(entry.info?.sequence ?? 0)"
        case .foreign: return "✗ foreign"
        case .unsigned: return "✗ unsigned"
        case .damaged: return "✗ damaged"
        case .newerFormat: return "✗ newer format"
        }
    }

    // MARK: prune

    struct Prune: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Delete old archives from a folder by keep rules, using only signed dates and sequence numbers.",
            discussion: "Touches only distinct archives signed by this vault (any key generation); never the newest one, nor the newest fully verified one. Copies, forks and anything unsigned are never touched.")
        @OptionGroup var options: VaultOptions
        @Argument(help: "The folder to prune.") var directory: String
        @Option(help: "Keep the N newest archives.") var keepLast = 0
        @Option(help: "Keep the newest archive of each of the last N days.") var keepDaily = 0
        @Option(help: "Keep the newest archive of each of the last N weeks.") var keepWeekly = 0
        @Option(help: "Keep the newest archive of each of the last N months.") var keepMonthly = 0
        @Flag(help: "Show what would be kept and removed; remove nothing.") var dryRun = false
        @Option(help: ArgumentHelp("A minisign public key file to trust instead of the vault's key history (repeatable).", valueName: "file")) var pubkey: [String] = []

        func run() throws {
            let policy = RetentionPolicy(keepLast: keepLast, keepDaily: keepDaily, keepWeekly: keepWeekly, keepMonthly: keepMonthly)
            let folder = URL(fileURLWithPath: directory).standardizedFileURL
            let ledger = try options.openLedger()
            let trust = try BackupCommands.trust(pubkeys: pubkey, options: options, vault: ledger.vault, folders: [folder])
            let recorded = ledger.backupState?.state.lastSequence ?? 0
            // A superseded key's archive numbered past anything this vault recorded was not made by
            // the vault (it records every number it issues): never counted, never removed.
            let superseded = Set(trust.keys.keys.filter { $0.supersededAt != nil }.compactMap(\.generation))
            let unrecorded = { (entry: BackupFolder.Entry) in
                entry.info.map { $0.sequence > recorded && $0.generation.map(superseded.contains) == true } ?? false
            }
            let entries = BackupFolder.scan(folder, trust: trust.keys)
            let candidates = entries.filter { $0.status == .signed && !unrecorded($0) }
            let identity = { (info: ArchiveInfo) in info.digest.map { String(format: "%02x", $0) }.joined() }
            let verified = ledger.backupState?.state.verified.filter { $0.path == folder.path } ?? []
            let protected = Set(candidates.compactMap(\.info).filter { info in
                verified.contains { $0.sequence == info.sequence && $0.time == Int64(info.created.timeIntervalSince1970) }
            }.map(identity))
            let keep = try CLIError.wrapping {
                try policy.keep(candidates.compactMap(\.info).map { .init(identity: identity($0), sequence: $0.sequence, created: $0.created) },
                                protected: protected)
            }
            var removed = 0
            for info in candidates.compactMap(\.info).sorted(by: { ($0.sequence, $0.created) > ($1.sequence, $1.created) }) {
                if let reasons = keep[identity(info)] {
                    Output.line("keep    \(TextSafety.printable(info.url.lastPathComponent))  (\(reasons.joined(separator: ", ")))")
                } else {
                    Output.line("\(dryRun ? "would remove" : "remove")  \(TextSafety.printable(info.url.lastPathComponent))")
                    if !dryRun { Archive.remove(info.url) }
                    removed += 1
                }
            }
            for other in entries where other.status != .signed || unrecorded(other) {
                let why = unrecorded(other) ? "signed by a superseded key as a number this vault never issued" : BackupCommands.label(other, trust: trust)
                Output.line("ignore  \(TextSafety.printable(other.url.lastPathComponent))  (\(why): never touched)")
            }
            Output.line(dryRun ? "Dry run: nothing was removed (\(removed) would be)." : "Removed \(removed) archive\(removed == 1 ? "" : "s").")
        }
    }

    // MARK: pubkey

    struct PublicKey: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "pubkey",
            abstract: "Export the vault's public key in minisign's format, to verify archives without the passphrase.",
            discussion: "With --all, every key generation: printed one after another, or with --out DIR one file per generation (minisign reads one key per file).")
        @OptionGroup var options: VaultOptions
        @Option(help: ArgumentHelp("Write it to this file (with --all: into this folder) instead of standard output.", valueName: "path")) var out: String?
        @Flag(help: "Every key generation of the vault, not only the current one.") var all = false

        func run() throws {
            let vault = try options.openVault()
            let history = vault.keyHistory
            let contents = { (generation: KeyGeneration) in Archive.publicKeyFileContents(generation, vaultID: vault.id) }
            guard let current = history.last else { throw CLIError(.damaged, "The vault has no signing key history.") }
            try BackupCommands.writePublicKey(contents(current), to: BackupCommands.publicKeyURL(for: options.vaultURL))
            switch (all, out) {
            case (false, let out?):
                try BackupCommands.writePublicKey(contents(current), to: URL(fileURLWithPath: out))
                Output.line("Wrote the public key to \(out). Verify an archive with: minisign -Vm ARCHIVE -p \(out)")
            case (false, nil):
                print(contents(current), terminator: "")
            case (true, let out?):
                let folder = URL(fileURLWithPath: out)
                var isDirectory: ObjCBool = false
                guard FileManager.default.fileExists(atPath: folder.path, isDirectory: &isDirectory), isDirectory.boolValue else {
                    throw CLIError(.invalidInput, "\(folder.path) is not a folder; with --all, --out names the folder the key files go into.")
                }
                try CLIError.wrapping { try Archive.writePublicKeys(history, vaultID: vault.id, into: folder) }
                for generation in history {
                    Output.line("Wrote key generation \(generation.number) to \(folder.appendingPathComponent(Archive.publicKeyFileName(vaultID: vault.id, generation: generation.number)).path)")
                }
                Output.line("Verify any archive with the file of the generation that signed it: minisign -Vm ARCHIVE -p FILE")
            case (true, nil):
                print(history.map(contents).joined(), terminator: "")
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
                let ledger = try options.openLedger()
                let path = try ledger.addBackupTarget(URL(fileURLWithPath: directory))
                Output.line("Backups will go to \(path).")
                Output.line("Next: coffer backup create")
            }
        }

        struct Remove: ParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Stop backing up to a folder (its archives stay).")
            @OptionGroup var options: VaultOptions
            @Argument var directory: String
            func run() throws {
                let ledger = try options.openLedger()
                let path = try ledger.removeBackupTarget(URL(fileURLWithPath: directory))
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
    @Flag(help: "With --replace, do not ask before replacing a vault with an older archive.") var yes = false

    func run() throws {
        let url = URL(fileURLWithPath: file)
        let destination = URL(fileURLWithPath: target)
        guard FileManager.default.fileExists(atPath: url.path) else { throw CLIError(.notFound, "No archive at \(url.path).") }
        if FileManager.default.fileExists(atPath: destination.path), !replace {
            throw CLIError(.invalidInput, "A vault already exists at \(destination.path); nothing was changed.",
                           hint: "Restore to another path, or add --replace (the old vault is kept beside it).")
        }
        let (contents, info, keys) = try BackupCommands.openArchive(url, options: options)
        if replace, FileManager.default.fileExists(atPath: destination.path), !yes, let reason = olderThanReplacedVault(contents) {
            guard try Terminal.confirm("Archive #\(contents.sequence) of \(ISO8601DateFormatter().string(from: contents.created)) is older than the vault at \(destination.path) (\(reason)). Replace it anyway? (The vault is kept beside it.)",
                                       refusal: "Replacing a vault with an older archive (\(reason))") else {
                throw CLIError(.failure, "Nothing was restored.")
            }
        }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "yyyyMMdd-HHmmss"
        let oldCopy = URL(fileURLWithPath: destination.path + ".before-restore-\(formatter.string(from: Date()))")
        // Backup bookkeeping is not in archives: rebuild it. Sequence numbers continue after every
        // archive of this vault in the archive's folder, so the restored vault never reuses one.
        let folder = url.deletingLastPathComponent().standardizedFileURL
        let trust = ArchiveTrust(vaultID: keys.vaultID, history: keys.keyHistory).extended(byArchivesIn: [folder])
        BackupCommands.warnIfHistoriesConflict(trust)
        // Only the newest known generation numbers: once the vault was rekeyed, an older key
        // (the restored archive's own, perhaps) may be in other hands.
        let newest = trust.current?.generation
        let folderMaximum = BackupCommands.plausible(Archive.signedDescriptions(in: folder, trust: trust)
            .filter { !$0.bySupersededKey && $0.generation == newest }, after: contents.sequence).map(\.sequence).max() ?? 0
        let state = BackupState(lastSequence: max(contents.sequence, folderMaximum), verified: [.init(
            path: folder.path, sequence: contents.sequence, time: Int64(contents.created.timeIntervalSince1970))])
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
                              records: records, replacing: replace, keepingOldAt: oldCopy, guard: options.rollbackGuard)
        Output.line("Restored \(contents.recordCount) records into \(destination.path) from archive #\(contents.sequence) of \(ISO8601DateFormatter().string(from: contents.created)).")
        Output.line("It was built aside and verified before it replaced anything. Net worth then: \(contents.netWorth).")
        if replace, FileManager.default.fileExists(atPath: oldCopy.path) { Output.line("The previous vault is kept at \(oldCopy.path).") }
        if let newest = trust.current?.generation, let generation = info.generation, generation < newest {
            Terminal.note("warning: this archive is signed by key generation \(generation); archives beside it show the vault was rekeyed since (generation \(newest)). Whoever held that old key — a session or the passphrase of that time — could have made it, and can open the restored vault.")
            Terminal.note("hint: Restore the newest archive if you can; otherwise check the restored vault and run: coffer rekey --vault \(destination.path)")
        }
        Output.line("It opens with the passphrase that was current when the archive was made.")
    }
}

extension Restore {
    /// Why the archive holds an older state than the vault it would replace, or nil when it does
    /// not (or the vault cannot be read to tell, as when it is damaged: the reason to restore).
    func olderThanReplacedVault(_ contents: ArchiveContents) -> String? {
        guard let summary = try? Vault.summary(at: URL(fileURLWithPath: target)), summary.vaultID.hex == contents.vaultID,
              let current = try? Ledger(vault: Vault.open(at: URL(fileURLWithPath: target), with: options.credential())) else { return nil }
        if let lastSequence = current.backupState?.state.lastSequence, lastSequence > contents.sequence {
            return "the vault has made archives up to #\(lastSequence) since"
        }
        // The change log is in the archive too: a change the vault has and the archive lacks is
        // work the restore would undo (exact, where comparing clocks would miss the same second).
        let archived = Set(contents.records.filter { RecordCodec.isChange($0.1) }.map(\.0.uuid))
        if current.changes.contains(where: { !archived.contains($0.id) }) {
            return "the vault has changes made after the archive"
        }
        return nil
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
