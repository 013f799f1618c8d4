//! The history file's tables and how a file made by an older build is brought up to date:
//! [`SCHEMA`] (`console_runs` and `console_evals`), [`connect`] (WAL, busy timeout) and
//! [`migrate`], which adds the columns a newer build records (`repairs`, `door`) to a
//! `console_runs` made before them (their old rows: unknown).
//!
//! Not here: writing or reading runs (`super::history`), eval reports (`super::evals`).

use std::path::Path;
use std::time::Duration;

use rusqlite::Connection;

/// The file's tables: the runs, and the eval reports `evals` saves and reads.
pub(crate) const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS console_runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    req_id TEXT NOT NULL,
    skill TEXT NOT NULL,
    caller TEXT NOT NULL,
    started_at REAL NOT NULL,
    finished_at REAL NOT NULL,
    duration_ms INTEGER,
    outcome TEXT NOT NULL,
    error_code TEXT,
    error TEXT,
    model TEXT,
    input_tokens INTEGER,
    output_tokens INTEGER,
    cost REAL,
    currency TEXT,
    turns INTEGER,
    arguments TEXT,
    response TEXT,
    repairs INTEGER,
    door TEXT
);
CREATE INDEX IF NOT EXISTS console_runs_started ON console_runs (started_at);
CREATE INDEX IF NOT EXISTS console_runs_skill ON console_runs (skill, id);
CREATE TABLE IF NOT EXISTS console_evals (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    skill TEXT NOT NULL,
    saved_at REAL NOT NULL,
    passed INTEGER NOT NULL,
    report TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS console_evals_skill ON console_evals (skill, id);
";

/// A connection to the file as the history uses it: WAL, `synchronous = NORMAL`, a 5 s busy
/// timeout.
pub(crate) fn connect(path: &Path) -> Result<Connection, String> {
    let conn = Connection::open(path).map_err(|e| e.to_string())?;
    conn.busy_timeout(Duration::from_secs(5))
        .map_err(|e| e.to_string())?;
    conn.pragma_update(None, "journal_mode", "WAL")
        .map_err(|e| e.to_string())?;
    conn.pragma_update(None, "synchronous", "NORMAL")
        .map_err(|e| e.to_string())?;
    Ok(conn)
}

/// Creates the tables when missing and adds to an older `console_runs` the columns it lacks.
pub(crate) fn migrate(conn: &Connection) -> rusqlite::Result<()> {
    conn.execute_batch(SCHEMA)?;
    for (column, kind) in [("repairs", "INTEGER"), ("door", "TEXT")] {
        add_column(conn, column, kind)?;
    }
    Ok(())
}

/// Adds `column` (of SQLite type `kind`) to a `console_runs` made before it existed.
fn add_column(conn: &Connection, column: &str, kind: &str) -> rusqlite::Result<()> {
    let has: bool = conn.query_row(
        "SELECT COUNT(*) FROM pragma_table_info('console_runs') WHERE name = ?1",
        [column],
        |row| row.get::<_, i64>(0).map(|n| n > 0),
    )?;
    if !has {
        conn.execute_batch(&format!(
            "ALTER TABLE console_runs ADD COLUMN {column} {kind}"
        ))?;
    }
    Ok(())
}
