import Foundation
import VaultStore

extension SyncService {
    /// A sync with nothing to do, answered without reading the vault's records
    /// (Specs/sync-format.md §7): the vault is still at the commit its sync state recorded when
    /// the last sync was done, so nothing was written here since; and the folder holds no file
    /// this device has not published or applied, no enrolment that is new or changed, no newer
    /// keys and none missing. Nil whenever any of that is not certain (or the vault cannot be
    /// read this way): the full sync then runs, and finds and reports what there is.
    public static func upToDate(_ file: UnlockedVaultFile, folder named: URL? = nil, now: Date = Date()) -> SyncReport?
    {
        let backupKeys = file.backupKeys
        let keys = SyncKeys(backupKeys)
        guard let peek = try? file.peek(keys.stateRecordID, in: RecordGrouping.group(.local)),
            let payload = peek.payload,
            case .syncState(let state)? = try? RecordCodec.decode(payload, id: keys.stateRecordID.uuid),
            state.syncedCommit != 0, state.syncedCommit == peek.commitCounter,
            !state.syncedFile.isEmpty, state.syncedFile == peek.deviceID?.bytes
        else { return nil }
        let remembered = URL(fileURLWithPath: state.folder).standardizedFileURL
        if let named, named.standardizedFileURL.path != remembered.path { return nil }
        let folder = SyncFolder(url: remembered, epoch: keys.generation)
        guard var listing = try? folder.list(), screenKeys(&listing, keys: keys).isEmpty,
            listing.keys.keys.max() == keys.generation,
            ownKeysFileIsIntact(folder, listing: listing, generation: keys.generation, header: backupKeys.headerBytes),
            let enrolment = listing.enrolments[state.device]?[keys.generation],
            (try? ownEnrolmentIsIntact(enrolment, state: state, keys: keys)) != nil
        else { return nil }
        for (device, files) in listing.changes {
            guard let done = device == state.device ? state.published : state.devices[device]?.applied,
                files.keys.allSatisfy({ $0 <= done })
            else { return nil }
        }
        var enrolments = SyncMerge(
            state: state, index: SyncIndex(), keys: keys, listing: listing, now: now, stored: { _ in nil })
        enrolments.readEnrolments()
        guard enrolments.state == state, enrolments.report.problems.isEmpty else { return nil }
        var report = SyncReport()
        report.copies = listing.copies
        return report
    }
}
