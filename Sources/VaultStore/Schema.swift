import Foundation
import GRDB

/// The SQLite schema. Migrations are append-only: a migration that has shipped is never edited,
/// and each new one gets a committed fixture vault (Specs/vault-format.md, "Migrations").
enum Schema {
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(sql: """
                CREATE TABLE header (
                    id INTEGER PRIMARY KEY CHECK (id = 1),
                    body BLOB NOT NULL
                );
                CREATE TABLE record (
                    id BLOB PRIMARY KEY NOT NULL,
                    version INTEGER NOT NULL,
                    sealed BLOB NOT NULL
                ) WITHOUT ROWID;
                CREATE TABLE manifest (
                    bucket INTEGER PRIMARY KEY CHECK (bucket BETWEEN 0 AND 255),
                    sealed BLOB NOT NULL
                );
                CREATE TABLE commit_record (
                    id INTEGER PRIMARY KEY CHECK (id = 1),
                    sealed BLOB NOT NULL
                );
                """)
        }
        return migrator
    }

    /// WAL for crash safety and concurrent readers; `secure_delete` so freed pages are zeroed,
    /// not left holding old ciphertext; temp data in memory so SQLite writes no temp files;
    /// `synchronous = FULL` so a write reported as done survives power loss.
    static func configuration() -> Configuration {
        var configuration = Configuration()
        configuration.journalMode = .wal
        configuration.busyMode = .timeout(10)
        configuration.prepareDatabase { db in
            try db.execute(sql: """
                PRAGMA secure_delete = ON;
                PRAGMA temp_store = MEMORY;
                PRAGMA synchronous = FULL;
                """)
        }
        return configuration
    }
}

/// Runs SQLite work and turns its errors into `VaultError`s that say what to do. Every database
/// call in VaultStore goes through here.
func withStorageErrors<T>(_ body: () throws -> T) throws -> T {
    do {
        return try body()
    } catch let error as VaultError {
        throw error
    } catch let error as DatabaseError {
        switch error.resultCode {
        case .SQLITE_NOTADB:
            throw VaultError(.notAVault, "This file is not a Coffer vault (it is not an SQLite database).")
        case .SQLITE_CORRUPT:
            throw VaultError(.integrityFailure, "The vault file is damaged: SQLite reports its structure as corrupt.")
        case .SQLITE_FULL:
            throw VaultError(.storageFailure, "The disk is full. Nothing was changed; free some space and try again.")
        case .SQLITE_BUSY, .SQLITE_LOCKED:
            throw VaultError(.storageFailure, "The vault is busy: another coffer process held it for over 10 seconds. Nothing was changed; try again.")
        case .SQLITE_READONLY, .SQLITE_PERM, .SQLITE_CANTOPEN, .SQLITE_AUTH:
            throw VaultError(.storageFailure, "The vault file cannot be opened for writing (check its permissions and the disk). Nothing was changed.")
        case .SQLITE_IOERR where [.SQLITE_IOERR_WRITE, .SQLITE_IOERR_TRUNCATE, .SQLITE_IOERR_SHMSIZE].contains(error.extendedResultCode):
            // What a full disk, a quota or a file-size limit looks like from inside SQLite.
            throw VaultError(.storageFailure, "Writing to the disk failed (is it full, or over a quota or file-size limit?). Nothing was changed; free some space and try again.")
        case .SQLITE_IOERR:
            throw VaultError(.storageFailure, "A disk error occurred while using the vault. Nothing was changed.")
        default:
            throw VaultError(.storageFailure, "The vault's database failed (SQLite code \(error.resultCode.rawValue)). Nothing was changed.")
        }
    } catch let error as CocoaError where error.code == .fileWriteOutOfSpace {
        throw VaultError(.storageFailure, "The disk is full. Nothing was changed; free some space and try again.")
    }
}
