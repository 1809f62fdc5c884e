import Foundation
import GRDB

/// A complete vault, checked, under a temporary name beside where it goes
/// (`Vault.buildAside`): nothing is at its place until `moveIntoPlace`, and a vault built aside
/// and never moved is deleted with this object. The time between is for a decision that needs
/// the whole input read first (a restore asks before it replaces a newer vault).
public final class VaultBuiltAside {
    /// Where the vault goes.
    public let url: URL
    let temporary: URL
    /// The keys that open it, when it is a restore: to raise the high-water mark once in place.
    var keys: UnlockedKeys?
    /// Folders made to hold it, deepest first: removed (when empty) if it never moves in.
    var madeFolders: [URL] = []
    private var moved = false

    init(url: URL, temporary: URL) {
        self.url = url
        self.temporary = temporary
    }

    deinit {
        guard !moved else { return }
        for suffix in ["", "-wal", "-shm", "-journal"] { unlink(temporary.path + suffix) }
        for folder in madeFolders { rmdir(folder.path) }
    }

    /// Moves the vault to `url`: linked when nothing is there (never over a vault that appeared
    /// meanwhile), renamed over the old file with `replacing`, after keeping the old one as
    /// `oldCopy` (a hard link). Either the new vault is in place or nothing changed. With
    /// `guard`, a restored vault's path gets its high-water mark reset to the new file: the
    /// restore is the deliberate rollback.
    public func moveIntoPlace(replacing: Bool, keepingOldAt oldCopy: URL?, guard rollbackGuard: RollbackGuard? = nil)
        throws
    {
        precondition(!moved, "a vault built aside moves once")
        let directory = url.deletingLastPathComponent()
        if !FileManager.default.fileExists(atPath: url.path) {
            // link(2) fails if `url` appeared meanwhile, so an existing vault is never replaced.
            guard link(temporary.path, url.path) == 0 else {
                if errno == EEXIST {
                    throw VaultError(.alreadyExists, "A vault already exists at \(url.path); nothing was changed.")
                }
                throw VaultError(
                    .storageFailure, "Could not create the vault at \(url.path): \(String(cString: strerror(errno))).")
            }
        } else {
            guard replacing else {
                throw VaultError(.alreadyExists, "A vault already exists at \(url.path); nothing was changed.")
            }
            // Fold any write-ahead log into the old file first: otherwise the kept copy could
            // miss committed changes, and a stale log could be replayed onto the new vault.
            try withStorageErrors {
                let old = try DatabaseQueue(path: url.path, configuration: Schema.configuration())
                try old.writeWithoutTransaction { try $0.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
                try old.close()
            }
            if let oldCopy {
                guard link(url.path, oldCopy.path) == 0 else {
                    throw VaultError(
                        .storageFailure,
                        "Could not keep the old vault as \(oldCopy.path): \(String(cString: strerror(errno))). Nothing was replaced."
                    )
                }
            }
            guard rename(temporary.path, url.path) == 0 else {
                throw VaultError(
                    .storageFailure,
                    "Could not move the new vault into place: \(String(cString: strerror(errno))). Nothing was replaced."
                )
            }
            for suffix in ["-wal", "-shm"] { unlink(url.path + suffix) }
        }
        moved = true
        for suffix in ["", "-wal", "-shm", "-journal"] { unlink(temporary.path + suffix) }
        DurableFile.syncDirectory(directory)
        if var accepting = rollbackGuard, let keys {
            accepting.acceptRollback = true
            // The commit record and indexes are enough to name the state; the pages were
            // checked before the move.
            do {
                _ = try UnlockedVaultFile.unlock(at: url, guard: accepting) { _ in keys }.open(reading: { _ in false })
            } catch {
                throw VaultError(
                    .storageFailure,
                    "The vault was restored to \(url.path), but this machine's record of it could not be updated; open it once with --accept-rollback."
                )
            }
        }
    }
}
