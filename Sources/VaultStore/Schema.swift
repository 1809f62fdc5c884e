internal import CSQLiteHardening
import Foundation
import GRDB

/// The SQLite schema. Migrations are append-only: a migration that has shipped is never edited,
/// and each new one gets a committed fixture vault (Specs/vault-format.md, "Migrations").
enum Schema {
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(
                sql: """
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
        migrator.registerMigration(pagedMigration) { db in try db.execute(sql: pagedSchema) }
        return migrator
    }

    /// Format 3 keeps records in sealed pages (Specs/vault-format.md, "Format 3"). A file is
    /// never brought to it by opening: `Vault.upgrade` runs it inside the transaction that
    /// rewrites the records, so the old tables go only with their contents moved.
    static let pagedMigration = "v2-pages"
    private static let pagedSchema = """
        DROP TABLE record;
        DROP TABLE manifest;
        CREATE TABLE page (
            locator BLOB PRIMARY KEY NOT NULL,
            sealed BLOB NOT NULL
        ) WITHOUT ROWID;
        CREATE TABLE page_index (
            locator BLOB PRIMARY KEY NOT NULL,
            sealed BLOB NOT NULL
        ) WITHOUT ROWID;
        """

    /// The paged migration inside the caller's transaction, recorded as GRDB records it.
    static func migrateToPages(_ db: Database) throws {
        try db.execute(sql: pagedSchema)
        try db.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES (?)", arguments: [pagedMigration])
    }

    /// WAL for crash safety and concurrent readers; `secure_delete` so freed pages are zeroed,
    /// not left holding old ciphertext; temp data in memory so SQLite writes no temp files;
    /// `synchronous = FULL` so a write reported as done survives power loss.
    static func configuration(readOnly: Bool = false) -> Configuration {
        var configuration = Configuration()
        configuration.journalMode = .wal
        configuration.busyMode = .timeout(Vault.busyTimeout)
        configuration.readonly = readOnly
        configuration.prepareDatabase { db in
            // trusted_schema OFF: nothing stored in the schema (a view, a trigger, a default) may
            // call a function with side effects. DEFENSIVE: no SQL can corrupt the file.
            try db.execute(
                sql: """
                    PRAGMA trusted_schema = OFF;
                    PRAGMA secure_delete = ON;
                    PRAGMA temp_store = MEMORY;
                    PRAGMA synchronous = FULL;
                    """)
            guard let connection = db.sqliteConnection, coffer_sqlite_enable_defensive(connection) == 0 else {
                throw VaultError(
                    .storageFailure, "SQLite refused its defensive mode; this SQLite cannot be used safely.")
            }
        }
        return configuration
    }

    /// For a file built aside whole in one transaction (`Vault.buildAside`) and fsynced before it
    /// goes anywhere: its journal in memory (defensive mode allows no less) and no syncs while it
    /// is written, since a crash leaves only a temporary file to delete; the builder switches it
    /// to WAL when done, as every vault is.
    static func buildingConfiguration() -> Configuration {
        var configuration = configuration()
        configuration.journalMode = .default
        configuration.prepareDatabase { db in
            guard try String.fetchOne(db, sql: "PRAGMA journal_mode = MEMORY") == "memory" else {
                throw VaultError(.storageFailure, "SQLite would not keep the new vault's journal in memory.")
            }
            try db.execute(sql: "PRAGMA synchronous = OFF")
        }
        return configuration
    }

    /// The schema objects (type, name, table, SQL with all whitespace removed) of a vault after
    /// every migration this build knows, and after each earlier one: the only shapes a vault file
    /// may have. Anything else (a trigger, a view, an index, an extra table or column) was put
    /// there by someone else, and a planted trigger can make writes vanish silently.
    static let pinnedSchemas: [Set<SchemaObject>] = {
        var schemas: [Set<SchemaObject>] = []
        for identifier in Schema.migrator.migrations {
            // Replays the real migrations one by one in memory.
            let queue = try! DatabaseQueue()
            try! Schema.migrator.migrate(queue, upTo: identifier)
            schemas.append(try! queue.read { try SchemaObject.all($0) })
        }
        return schemas
    }()

    struct SchemaObject: Hashable {
        let type: String
        let name: String
        let table: String
        let sql: String?

        static func all(_ db: Database) throws -> Set<SchemaObject> {
            Set(
                try Row.fetchAll(db, sql: "SELECT type, name, tbl_name, sql FROM sqlite_master").map { row in
                    SchemaObject(
                        type: row[0], name: row[1], table: row[2],
                        sql: (row[3] as String?).map {
                            String($0.unicodeScalars.filter { !CharacterSet.whitespacesAndNewlines.contains($0) })
                        })
                })
        }
    }

    /// Refuses a file whose schema is not exactly one of `pinnedSchemas`, naming what differs.
    static func checkPinned(_ db: Database) throws {
        let found = try SchemaObject.all(db)
        if pinnedSchemas.contains(found) { return }
        let expected = pinnedSchemas.last ?? []
        let planted = found.subtracting(expected).sorted { ($0.type, $0.name) < ($1.type, $1.name) }
        let missing = expected.subtracting(found).sorted { ($0.type, $0.name) < ($1.type, $1.name) }
        var parts: [String] = []
        if let first = planted.first {
            let altered = expected.contains { $0.type == first.type && $0.name == first.name }
            parts.append(
                altered
                    ? "its \(first.type) '\(first.name)' was altered"
                    : "it holds a \(first.type) '\(first.name)' that Coffer never makes")
        }
        if planted.count > 1 {
            parts.append("and \(planted.count - 1) more unexpected object\(planted.count == 2 ? "" : "s")")
        }
        if planted.isEmpty, let first = missing.first { parts.append("its \(first.type) '\(first.name)' is missing") }
        throw VaultError(
            .schemaTampered,
            "The vault file's database schema has been tampered with: \(parts.joined(separator: " ")). It was not opened."
        )
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
            throw VaultError(
                .busy,
                "The vault is busy: another process held it for over \(Int(Vault.busyTimeout)) seconds. Nothing was changed; try again."
            )
        case .SQLITE_READONLY, .SQLITE_PERM, .SQLITE_CANTOPEN, .SQLITE_AUTH:
            throw VaultError(
                .storageFailure,
                "The vault file cannot be opened for writing (check its permissions and the disk). Nothing was changed."
            )
        case .SQLITE_IOERR
        where [.SQLITE_IOERR_WRITE, .SQLITE_IOERR_TRUNCATE, .SQLITE_IOERR_SHMSIZE].contains(error.extendedResultCode):
            // What a full disk, a quota or a file-size limit looks like from inside SQLite.
            throw VaultError(
                .storageFailure,
                "Writing to the disk failed (is it full, or over a quota or file-size limit?). Nothing was changed; free some space and try again."
            )
        case .SQLITE_IOERR:
            throw VaultError(.storageFailure, "A disk error occurred while using the vault. Nothing was changed.")
        default:
            throw VaultError(
                .storageFailure,
                "The vault's database failed (SQLite code \(error.resultCode.rawValue)). Nothing was changed.")
        }
    } catch let error as CocoaError where error.code == .fileWriteOutOfSpace {
        throw VaultError(.storageFailure, "The disk is full. Nothing was changed; free some space and try again.")
    }
}

/// The SQLite this process runs with, for `coffer --version`.
public enum SQLiteLibrary {
    public static var versionString: String { String(cString: sqlite3_libversion()) }
}
