#ifndef COFFER_SQLITE_HARDENING_H
#define COFFER_SQLITE_HARDENING_H

#include <sqlite3.h>

/// sqlite3_db_config is variadic, so Swift cannot call it; this wrapper can.
/// Turns on SQLITE_DBCONFIG_DEFENSIVE (no writable_schema, no shadow-table writes, no
/// journal_mode=OFF): SQL cannot corrupt the file. Returns SQLite's result code.
static inline int coffer_sqlite_enable_defensive(sqlite3 *db) {
#ifdef SQLITE_DBCONFIG_DEFENSIVE
    return sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, (int *)0);
#else
    return SQLITE_ERROR;
#endif
}

#endif
