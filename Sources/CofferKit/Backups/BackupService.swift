import FinanceCore
import Foundation
import VaultBackup
import VaultCrypto
import VaultStore

/// What a backup or restore found that the user should hear about. The service states the
/// facts; each front end words them.
public enum BackupNotice: Sendable, Equatable {
    /// Archives certify different successors of one key generation: someone who held that key
    /// made their own. Only generations up to `generation` are trusted.
    case historiesConflict(afterGeneration: UInt32)
    /// The `.pub` beside the vault is not its current key (it was swapped, or is stale).
    case publicKeyFileDiffers(path: String, savedKeyID: String?)
    /// An archive signed far past the vault's own count was left out of numbering.
    case implausibleSequenceIgnored(archive: URL, sequence: UInt64, vaultSequence: UInt64)
    /// An archive of this vault the vault has no record of: a fork, or a restore from older.
    case unrecordedArchive(archive: URL, sequence: UInt64, madeBy: ArchiveMaker, commit: UInt64?)
    /// The restored archive is signed by a superseded key generation.
    case restoredFromSupersededKey(generation: UInt32, newest: UInt32)
}

/// Who made an archive, as its signed description says.
public enum ArchiveMaker: Sendable, Equatable {
    case thisCopy
    /// Another copy of the vault; the first characters of its device id.
    case otherCopy(device: String)
    case unknown
}

/// The keys archives are checked against, and where they came from.
public struct BackupTrust: Sendable {
    public let keys: ArchiveTrust
    public enum Source: Sendable, Equatable {
        /// Key files the user named.
        case keyFiles([String])
        /// The vault's key history, authenticated by unlocking it.
        case vaultHistory(path: String)
        /// The key history in the vault's header, read without unlocking.
        case vaultHeader(path: String)
        /// A format 1 vault's `.pub` beside it (its only key until its first unlock).
        case publicKeyFile(path: String)
    }
    public let source: Source
}

/// The backup and restore protocols: which number an archive gets and when it is recorded,
/// what is read back before an archive counts, which keys decide what is genuine, and how a
/// restore builds a vault from one archive with one passphrase prompt, one key derivation and
/// one read of the archive.
public enum BackupService {
    /// The vault's current minisign public key, kept beside the vault for stock `minisign -V`
    /// (`vault.coffer.pub`). Coffer itself never trusts it over the vault's key history.
    public static func publicKeyURL(for vaultURL: URL) -> URL { URL(fileURLWithPath: vaultURL.path + ".pub") }

    // MARK: Trust

    /// Where trust comes from, strongest first: key files the user names, else the vault's own
    /// key history, authenticated when `vault` is open, else read from its header. The `.pub`
    /// beside the vault is only compared with that history (a swapped `.pub` never makes an
    /// attacker's archives "signed"). Archives in `folders` may extend the history with
    /// generations made after this copy's.
    public static func trust(
        keyFiles: [String], vaultURL: URL, vault: Vault?, folders: [URL], notice: (BackupNotice) -> Void
    ) throws -> BackupTrust {
        if !keyFiles.isEmpty {
            var keys: [MinisignPublicKey] = []
            for path in keyFiles {
                guard let data = FileManager.default.contents(atPath: path) else {
                    throw CofferError(.fileNotFound, "No public key file at \(path).")
                }
                keys += try MinisignPublicKey.parseAll(String(decoding: data, as: UTF8.self))
            }
            return BackupTrust(keys: ArchiveTrust(publicKeys: keys), source: .keyFiles(keyFiles))
        }
        guard FileManager.default.fileExists(atPath: vaultURL.path) else {
            throw CofferError(
                .fileNotFound, "No vault at \(vaultURL.path) to take this vault's keys from.", kind: "vault")
        }
        let trust: BackupTrust
        if let vault {
            trust = BackupTrust(
                keys: ArchiveTrust(vaultID: vault.id, history: vault.keyHistory).extended(byArchivesIn: folders),
                source: .vaultHistory(path: vaultURL.path))
        } else {
            let summary = try Vault.summary(at: vaultURL)
            if summary.keyHistory.isEmpty {
                let url = publicKeyURL(for: vaultURL)
                guard let data = FileManager.default.contents(atPath: url.path) else {
                    throw CofferError(
                        .invalidInput, "No public key to check archives against: none saved beside the vault.",
                        kind: "public key")
                }
                return BackupTrust(
                    keys: ArchiveTrust(publicKeys: [
                        try MinisignPublicKey(parsing: String(decoding: data, as: UTF8.self))
                    ]),
                    source: .publicKeyFile(path: url.path))
            }
            trust = BackupTrust(
                keys: ArchiveTrust(vaultID: summary.vaultID, history: summary.keyHistory).extended(
                    byArchivesIn: folders),
                source: .vaultHeader(path: vaultURL.path))
        }
        let url = publicKeyURL(for: vaultURL)
        if let data = FileManager.default.contents(atPath: url.path), let current = trust.keys.current {
            let saved = try? MinisignPublicKey(parsing: String(decoding: data, as: UTF8.self))
            if saved != current.publicKey {
                notice(.publicKeyFileDiffers(path: url.path, savedKeyID: saved?.keyIDText))
            }
        }
        if let generation = trust.keys.conflictAfter { notice(.historiesConflict(afterGeneration: generation)) }
        return trust
    }

    // MARK: Numbering

    /// How far past the vault's own count another archive's number may lie and still steer the
    /// numbering: two copies of a vault never drift a million backups apart, while a number
    /// near the limit signed by a stolen key would otherwise use the numbers up.
    static let plausibleSequenceGap: UInt64 = 1_000_000

    static func plausible(_ seen: [SignedDescription], after lastSequence: UInt64, notice: (BackupNotice) -> Void)
        -> [SignedDescription]
    {
        for description in seen where description.sequence > lastSequence + plausibleSequenceGap {
            notice(
                .implausibleSequenceIgnored(
                    archive: description.url, sequence: description.sequence, vaultSequence: lastSequence))
        }
        return seen.filter { $0.sequence <= lastSequence + plausibleSequenceGap }
    }

    /// Archives in the destinations this copy never recorded. Made by this copy from a later
    /// commit than it now has, they prove the vault file was rolled back: refused unless
    /// `acceptRollback`. Made by another copy, they are a fork: reported, and numbering goes on.
    static func checkForForks(
        _ seen: [SignedDescription], lastSequence: UInt64, vault: Vault, acceptRollback: Bool,
        notice: (BackupNotice) -> Void
    ) throws {
        let unknown = seen.filter { $0.sequence > lastSequence }.sorted { $0.sequence < $1.sequence }
        let mine = vault.deviceID?.hex
        let ahead = unknown.filter {
            $0.device != nil && $0.device == mine && ($0.commitCounter ?? 0) > vault.commitCounter
        }
        if let newest = ahead.last, !acceptRollback {
            throw CofferError(
                .rolledBack,
                "This vault is older than an archive it made: \(newest.url.path) is #\(newest.sequence), made from commit #\(newest.commitCounter ?? 0) of this copy, but the vault is at commit #\(vault.commitCounter). The vault file was rolled back or replaced by an older copy. Nothing was written.",
                kind: "archive", candidates: [newest.url.path, "\((unknown.last?.sequence ?? lastSequence) + 1)"])
        }
        for description in unknown {
            let maker: ArchiveMaker =
                description.device.map { $0 == mine ? .thisCopy : .otherCopy(device: String($0.prefix(8))) } ?? .unknown
            notice(
                .unrecordedArchive(
                    archive: description.url, sequence: description.sequence, madeBy: maker,
                    commit: description.commitCounter))
        }
    }

    // MARK: Create

    /// What happened in one destination.
    public enum Outcome: Sendable {
        case written(archive: URL, records: Int, size: Int)
        case missingFolder
        case writeFailed(String)
        /// The archive was written but did not verify when read back; it was removed.
        case verifyFailed(String)
    }

    /// Backs the vault up to each folder: the next number after everything this vault signed
    /// anywhere, recorded as soon as the first archive carrying it has its final name (so no two
    /// archives share one, and a vault every destination failed for is left as it was); each
    /// archive read back, fully verified and opened before it counts.
    public static func create(
        _ ledger: Ledger, to folders: [URL], appVersion: String, today: CalendarDate,
        acceptRollback: Bool, now: Date = Date(), progress: (String) -> Void = { _ in },
        notice: (BackupNotice) -> Void
    ) throws -> [(folder: URL, outcome: Outcome)] {
        let directories = folders.map(\.standardizedFileURL)
        let vault = ledger.vault
        let history = vault.keyHistory
        let trust = ArchiveTrust(vaultID: vault.id, history: history).extended(byArchivesIn: directories)
        if let generation = trust.conflictAfter { notice(.historiesConflict(afterGeneration: generation)) }
        var state = ledger.backupState?.state ?? BackupState()
        // Archives of superseded key generations never steer numbering or a refusal: an old key
        // may outlive the vault's trust in it.
        let seen = plausible(
            directories.flatMap { Archive.signedDescriptions(in: $0, trust: trust) }.filter { !$0.bySupersededKey },
            after: state.lastSequence, notice: notice)
        try checkForForks(
            seen, lastSequence: state.lastSequence, vault: vault, acceptRollback: acceptRollback, notice: notice)
        state.lastSequence = max(state.lastSequence, seen.map(\.sequence).max() ?? 0) + 1
        guard state.lastSequence <= Archive.maximumSequence else {
            throw CofferError(
                .failed, "This vault's archive numbers are used up (#\(state.lastSequence - 1)); nothing was written.",
                kind: "sequence")
        }
        let sequence = state.lastSequence
        let stateID = ledger.backupState?.id ?? RecordIDs.next()
        var sequenceRecorded = false
        let netWorth =
            "\(ledger.currency.code) \(ledger.currency.decimalString(try ledger.netWorth.totals(on: today).netWorth))"
        let keys = vault.backupKeys
        // One archive for every destination: the records as this commit holds them, read page by
        // page, compressed and sealed once (the counter moves on once the sequence is recorded).
        // The records are let go before any archive is read back: both at once would double
        // the memory.
        let folders = directories.filter { directory in
            var isDirectory: ObjCBool = false
            return FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory)
                && isDirectory.boolValue
        }
        var made: Archive.Made?
        if !folders.isEmpty {
            progress("Reading the vault's records")
            let records = CollectedRecords(expecting: vault.committedRecordCount)
            try vault.forEachRecord { id, payload in
                if !RecordCodec.isLocal(payload) { records.append(id, payload) }
            }
            progress("Compressing and sealing an archive of \(records.count) records")
            do {
                made = try Archive.make(
                    consume records, layouts: ArchiveLayouts.all, netWorth: netWorth, appVersion: appVersion,
                    commitCounter: vault.commitCounter, device: vault.deviceID, keys: keys, sequence: sequence,
                    created: now)
            } catch let error as BackupError {
                return directories.map {
                    ($0, folders.contains($0) ? .writeFailed(error.errorDescription ?? "write failed") : .missingFolder)
                }
            }
        }
        var results = [Outcome?](repeating: nil, count: directories.count)
        var written: [(position: Int, url: URL, recordCount: Int)] = []
        for (position, directory) in directories.enumerated() {
            guard let made, folders.contains(directory) else {
                results[position] = .missingFolder
                continue
            }
            progress("Writing \(made.name) to \(directory.path)")
            let url: URL
            do {
                url = try Archive.write(made, to: directory)
            } catch let error as BackupError {
                results[position] = .writeFailed(error.errorDescription ?? "write failed")
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
            written.append((position, url, made.recordCount))
        }
        made = nil
        for (position, url, recordCount) in written {
            let directory = directories[position]
            progress("Reading \(url.lastPathComponent) back and verifying it")
            do {
                let (contents, _) = try Archive.open(at: url, keys: keys, trust: trust)
                guard contents.recordCount == recordCount else { throw BackupError(.damaged, "record count differs") }
                try Archive.writePublicKeys(history, vaultID: vault.id, into: directory)
            } catch {
                Archive.remove(url)
                results[position] = .verifyFailed((error as? LocalizedError)?.errorDescription ?? "\(error)")
                continue
            }
            state.verified.removeAll { $0.path == directory.path }
            state.verified.append(
                .init(path: directory.path, sequence: sequence, time: Int64(now.timeIntervalSince1970)))
            let size = (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int) ?? 0
            results[position] = .written(archive: url, records: recordCount, size: size)
        }
        let outcomes = zip(directories, results).map { (folder: $0, outcome: $1!) }
        if sequenceRecorded { try ledger.writeWithoutHistory([(stateID, .backupState(state))]) }
        return outcomes
    }

    // MARK: Prune

    /// What pruning a folder keeps (with why), removes, and never touches.
    public struct PrunePlan: Sendable {
        /// Newest first.
        public let keep: [(archive: ArchiveInfo, reasons: [String])]
        /// Newest first.
        public let remove: [ArchiveInfo]
        /// Copies, forks, foreign, unsigned and damaged files, and archives a superseded key
        /// signed under a number this vault never issued: never counted, never removed.
        public let untouched: [(entry: BackupFolder.Entry, unrecordedBySupersededKey: Bool)]
    }

    /// Which archives in `folder` a retention policy keeps. Only distinct archives signed by
    /// this vault count; the newest one, and the newest fully verified one, are always kept. A
    /// superseded key's archive numbered past anything this vault recorded was not made by the
    /// vault (it records every number it issues), so it is neither counted nor removed.
    public static func planPrune(_ folder: URL, policy: RetentionPolicy, ledger: Ledger, trust: ArchiveTrust) throws
        -> PrunePlan
    {
        let folder = folder.standardizedFileURL
        let recorded = ledger.backupState?.state.lastSequence ?? 0
        let superseded = Set(trust.keys.filter { $0.supersededAt != nil }.compactMap(\.generation))
        let unrecorded = { (entry: BackupFolder.Entry) in
            entry.info.map { $0.sequence > recorded && $0.generation.map(superseded.contains) == true } ?? false
        }
        let entries = BackupFolder.scan(folder, trust: trust)
        let candidates = entries.filter { $0.status == .signed && !unrecorded($0) }.compactMap(\.info)
        let identity = { (info: ArchiveInfo) in info.digest.hexString }
        let verified = ledger.backupState?.state.verified.filter { $0.path == folder.path } ?? []
        let protected = Set(
            candidates.filter { info in
                verified.contains {
                    $0.sequence == info.sequence && $0.time == Int64(info.created.timeIntervalSince1970)
                }
            }.map(identity))
        let keep = try policy.keep(
            candidates.map { .init(identity: identity($0), sequence: $0.sequence, created: $0.created) },
            protected: protected)
        let newestFirst = candidates.sorted { ($0.sequence, $0.created) > ($1.sequence, $1.created) }
        return PrunePlan(
            keep: newestFirst.compactMap { info in keep[identity(info)].map { (info, $0) } },
            remove: newestFirst.filter { keep[identity($0)] == nil },
            untouched: entries.filter { $0.status != .signed || unrecorded($0) }.map { ($0, unrecorded($0)) })
    }

    // MARK: Restore

    /// An archive looked at before any key work: its signed header and signature, and the keys
    /// (the vault's history, or the key files beside it) that must have signed it.
    public struct ArchiveToOpen: Sendable {
        public let url: URL
        public let created: Date
        public let sequence: UInt64
        let peek: Archive.Peek
        /// Trust known before the passphrase: the signature's key must be in it.
        let knownTrust: ArchiveTrust?
    }

    /// Reads an archive's signature and header (small reads) and, when this vault's history or
    /// the key files in its folder say which keys may have made it, refuses at once an archive
    /// whose signed description none of them signed (or a superseded key signed after its
    /// time): it costs no key derivation and no read of the archive's body.
    public static func inspect(_ url: URL, vaultURL: URL?) throws -> ArchiveToOpen {
        guard FileManager.default.fileExists(atPath: url.path) else {
            throw CofferError(.fileNotFound, "No archive at \(url.path).")
        }
        let signature = try Archive.signature(for: url)
        let peek = try Archive.peek(at: url)
        let folder = url.deletingLastPathComponent()
        var known: ArchiveTrust?
        if let vaultURL, let summary = try? Vault.summary(at: vaultURL), summary.vaultID.bytes == peek.vaultID,
            !summary.keyHistory.isEmpty
        {
            known = ArchiveTrust(vaultID: summary.vaultID, history: summary.keyHistory).extended(byArchivesIn: [folder])
        } else if let key = Archive.folderPublicKeys(in: folder, vaultID: peek.vaultID).first(where: {
            $0.keyID == signature.keyID
        }) {
            known = ArchiveTrust(publicKeys: [key])
        }
        if let known { try Archive.checkSignedDescription(of: url, peek: peek, trust: known) }
        return ArchiveToOpen(url: url, created: peek.created, sequence: peek.sequence, peek: peek, knownTrust: known)
    }

    /// An archive whose own vault header is unlocked (`unlock(_:credential:)`): the keys to
    /// check and open it, and the master key to rebuild its vault, with no further key work.
    public struct UnlockedArchive: Sendable {
        public let archive: ArchiveToOpen
        let unlock: ArchiveUnlock
        /// The keys that may have signed it: those known before the passphrase when they hold
        /// the key its header gives (they carry when each generation was superseded), else its
        /// header's own history.
        let trust: ArchiveTrust
        public var keys: BackupKeys { unlock.backupKeys }
    }

    /// An archive read whole and checked: what its manifest and signature say, and the ids of
    /// the change-log entries it holds (what `olderThanVault` compares with a vault's history).
    public struct OpenedArchive: Sendable {
        public let contents: ArchiveContents
        public let info: ArchiveInfo
        let changeIDs: Set<UUID>
        let unlock: ArchiveUnlock
        public var keys: BackupKeys { unlock.backupKeys }
    }

    /// Unlocks the archive's own vault header with `credential`: one key derivation, bounded.
    public static func unlock(_ archive: ArchiveToOpen, credential: Credential) throws -> UnlockedArchive {
        let unlock: ArchiveUnlock
        do {
            unlock = try Vault.unlockArchivedHeader(archive.peek.vaultHeader, credential: credential)
        } catch let error as VaultError where error.code == .wrongPassphrase || error.code == .sessionInvalid {
            throw CofferError(
                .wrongCredential,
                "That passphrase does not open this archive. It was made on \(ISO8601DateFormatter().string(from: archive.created)).",
                kind: "archive")
        }
        let keys = unlock.backupKeys
        let signer = MinisignPublicKey(key: keys.signingKey.publicKey)
        let trust =
            archive.knownTrust.flatMap { known in known.keys.contains { $0.publicKey == signer } ? known : nil }
            ?? ArchiveTrust(vaultID: keys.vaultID, history: keys.keyHistory)
        return UnlockedArchive(archive: archive, unlock: unlock, trust: trust)
    }

    /// Unlocks the archive (`unlock(_:credential:)`) and reads it once (`open(_:)`).
    public static func open(_ archive: ArchiveToOpen, credential: Credential) throws -> OpenedArchive {
        try open(unlock(archive, credential: credential))
    }

    /// Reads an unlocked archive once: signature, every chunk and every record checked, in the
    /// memory of one block; nothing kept but the change log's ids.
    public static func open(_ unlocked: UnlockedArchive) throws -> OpenedArchive {
        try read(unlocked, visit: nil)
    }

    /// Reads an unlocked archive once, handing every record to `visit` (its payload valid only
    /// during the call).
    private static func read(
        _ unlocked: UnlockedArchive, visit: ((RecordID, UnsafeRawBufferPointer) throws -> Void)?
    ) throws -> OpenedArchive {
        var changeIDs = Set<UUID>()
        let (contents, info) = try Archive.open(
            at: unlocked.archive.url, keys: unlocked.keys, trust: unlocked.trust,
            visit: { id, payload in
                if RecordCodec.isChange(payload) { changeIDs.insert(id.uuid) }
                try visit?(id, payload)
            })
        return OpenedArchive(contents: contents, info: info, changeIDs: changeIDs, unlock: unlocked.unlock)
    }

    /// Why the archive holds an older state than the vault at `target`, or nil when it does not
    /// (or when the vault there is another vault, or cannot be read: the reason to restore).
    /// Opened with the archive's own keys, so it costs no key derivation; a vault whose keys
    /// changed since (a passphrase change or rekey) is newer than the archive by that alone.
    public static func olderThanVault(at target: URL, archive opened: OpenedArchive) -> String? {
        guard let summary = try? Vault.summary(at: target), summary.vaultID == opened.keys.vaultID else { return nil }
        let current: Ledger
        do {
            current = try Ledger(vault: Vault.open(at: target, unlocked: opened.unlock))
        } catch let error as VaultError where error.code == .wrongPassphrase {
            return "the vault's keys were changed after the archive was made"
        } catch {
            return nil
        }
        if let lastSequence = current.backupState?.state.lastSequence, lastSequence > opened.contents.sequence {
            return "the vault has made archives up to #\(lastSequence) since"
        }
        // The change log is in the archive too: a change the vault has and the archive lacks is
        // work the restore would undo (exact, where comparing clocks would miss the same second).
        if current.changes.contains(where: { !opened.changeIDs.contains($0.id) }) {
            return "the vault has changes made after the archive"
        }
        return nil
    }

    /// Restores an unlocked archive to `target` in one pass: every record read from the
    /// archive, checked, migrated to its current version (only if older) and sealed into the
    /// new vault's pages as it comes, built aside; backup bookkeeping rebuilt so numbering
    /// continues after every archive of this vault in the archive's folder (only the newest
    /// known key generation numbers); the new vault checked, then moved into place (with
    /// `replacing`, the old vault kept at `keepingOldAt`). Nothing is at `target` before the
    /// whole archive has verified.
    ///
    /// With `confirmingOlder`, an existing vault at `target` holding a newer state than the
    /// archive (`olderThanVault`) is replaced only if it returns without throwing; what it
    /// throws leaves everything as it was. It is asked before anything is built (the archive is
    /// then read twice: once to compare, once to restore), so a question left unanswered, or a
    /// process stopped at it, leaves nothing behind.
    @discardableResult
    public static func restore(
        _ unlocked: UnlockedArchive, to target: URL, replacing: Bool, keepingOldAt oldCopy: URL?,
        guard rollbackGuard: RollbackGuard?,
        confirmingOlder: ((_ archive: OpenedArchive, _ reason: String) throws -> Void)? = nil,
        notice: (BackupNotice) -> Void
    ) throws -> OpenedArchive {
        let folder = unlocked.archive.url.deletingLastPathComponent().standardizedFileURL
        let trust = ArchiveTrust(vaultID: unlocked.keys.vaultID, history: unlocked.keys.keyHistory).extended(
            byArchivesIn: [folder])
        let newest = trust.current?.generation
        if let confirmingOlder, replacing, let summary = try? Vault.summary(at: target),
            summary.vaultID == unlocked.keys.vaultID
        {
            let compared = try open(unlocked)
            if let reason = olderThanVault(at: target, archive: compared) { try confirmingOlder(compared, reason) }
        }
        var opened: OpenedArchive?
        let built = try Vault.restoreAside(at: target, unlocked: unlocked.unlock, replacing: replacing) { writer in
            let records = RestoredRecords(into: writer)
            let read = try read(unlocked) { id, payload in try records.add(id, payload) }
            try records.finish()
            opened = read
            let contents = read.contents
            if let generation = trust.conflictAfter { notice(.historiesConflict(afterGeneration: generation)) }
            let folderMaximum =
                plausible(
                    Archive.signedDescriptions(in: folder, trust: trust).filter {
                        !$0.bySupersededKey && $0.generation == newest
                    },
                    after: contents.sequence, notice: notice
                ).map(\.sequence).max() ?? 0
            let state = FinanceRecord.backupState(
                BackupState(
                    lastSequence: max(contents.sequence, folderMaximum),
                    verified: [
                        .init(
                            path: folder.path, sequence: contents.sequence,
                            time: Int64(contents.created.timeIntervalSince1970))
                    ]))
            try RecordCodec.encode(state).withUnsafeBytes {
                try writer.append(RecordID(uuid: RecordIDs.next()), group: RecordGrouping.group(of: state), payload: $0)
            }
        }
        guard let opened else { preconditionFailure("a vault built aside has read its archive") }
        try built.moveIntoPlace(replacing: replacing, keepingOldAt: oldCopy, guard: rollbackGuard)
        if let newest, let generation = opened.info.generation, generation < newest {
            notice(.restoredFromSupersededKey(generation: generation, newest: newest))
        }
        return opened
    }
}
