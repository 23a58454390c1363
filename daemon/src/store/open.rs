//! Opening the index: the integrity check and corruption recovery (a
//! damaged file is moved aside and a fresh index built, with a notice for
//! `status`), the connection's pragmas, and the migrations.
//!
//! A database written by a newer binary is refused before anything could
//! write to it; migrations are append-only and each runs once, in one
//! exclusive transaction, recorded in `schema_version`.

use std::path::Path;

use rusqlite::{Connection, OpenFlags, params};

use crate::{Critical, Error};

use super::unix_now;

/// Migrations, applied in order; each runs once, in one transaction, and is
/// recorded in `schema_version`. Append only.
const MIGRATIONS: &[(u32, &str)] = &[
    (1, include_str!("../../../migrations/0001_entries.sql")),
    (2, include_str!("../../../migrations/0002_hashes.sql")),
    (3, include_str!("../../../migrations/0003_unlisted.sql")),
    (4, include_str!("../../../migrations/0004_content.sql")),
    (
        5,
        include_str!("../../../migrations/0005_unlisted_link_sizes.sql"),
    ),
    (6, include_str!("../../../migrations/0006_content_text.sql")),
    (7, include_str!("../../../migrations/0007_labels.sql")),
    (
        8,
        include_str!("../../../migrations/0008_fleet_journal.sql"),
    ),
    (9, include_str!("../../../migrations/0009_media.sql")),
    (
        10,
        include_str!("../../../migrations/0010_media_documents.sql"),
    ),
    (
        11,
        include_str!("../../../migrations/0011_content_stems.sql"),
    ),
    (13, include_str!("../../../migrations/0013_summaries.sql")),
    (16, include_str!("../../../migrations/0016_searches.sql")),
    (
        18,
        include_str!("../../../migrations/0018_content_lang.sql"),
    ),
    (
        22,
        include_str!("../../../migrations/0022_media_unread.sql"),
    ),
];

/// The newest schema this binary knows: the highest number, wherever a
/// merge put it in the list.
pub const SCHEMA_VERSION: u32 = {
    let (mut i, mut max) = (0, 0);
    while i < MIGRATIONS.len() {
        if MIGRATIONS[i].0 > max {
            max = MIGRATIONS[i].0;
        }
        i += 1;
    }
    max
};

/// The writer's connection, ready for use: checked (or recovered), with
/// its pragmas set and every migration applied; and the notice to show in
/// `status` when the file had to be moved aside.
pub(super) fn open_writer(db_path: &Path) -> Result<(Connection, Option<String>), Critical> {
    let (mut conn, notice) = open_checked(db_path)?;
    set_pragmas(&conn, 16 * 1024)?;
    migrate(&mut conn, db_path)?;
    Ok((conn, notice))
}

fn set_pragmas(conn: &Connection, cache_kib: i64) -> rusqlite::Result<()> {
    conn.pragma_update(None, "journal_mode", "WAL")?;
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    conn.pragma_update(None, "temp_store", "MEMORY")?;
    conn.pragma_update(None, "cache_size", -cache_kib)?;
    conn.busy_timeout(std::time::Duration::from_secs(30))?;
    Ok(())
}

/// Applies pending migrations; refuses a database from a newer binary.
fn migrate(conn: &mut Connection, db_path: &Path) -> Result<(), Critical> {
    conn.execute_batch(
        "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)",
    )?;
    let current: u32 = conn.query_row(
        "SELECT COALESCE(MAX(version), 0) FROM schema_version",
        [],
        |r| r.get(0),
    )?;
    if current > SCHEMA_VERSION {
        return Err(Critical::NewerSchema {
            path: db_path.to_owned(),
            found: current,
            known: SCHEMA_VERSION,
        });
    }
    // Every migration not recorded yet, in order: numbers are handed out
    // to branches ahead of time, so one may land after a higher one that an
    // index has already applied (0006 after 0009).
    let applied: std::collections::HashSet<u32> = conn
        .prepare("SELECT version FROM schema_version")?
        .query_map([], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    for &(version, sql) in MIGRATIONS.iter().filter(|(v, _)| !applied.contains(v)) {
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Exclusive)?;
        tx.execute_batch(sql)?;
        tx.execute(
            "INSERT INTO schema_version (version, applied_at) VALUES (?1, ?2)",
            params![version, unix_now()],
        )?;
        tx.commit()?;
        tracing::info!(version, "applied migration");
    }
    Ok(())
}

/// Reads the schema version without modifying anything; `None` when the file
/// is not a database we can read at all.
fn peek_schema_version(db_path: &Path) -> Option<u32> {
    let conn = Connection::open_with_flags(db_path, OpenFlags::SQLITE_OPEN_READ_ONLY).ok()?;
    conn.query_row(
        "SELECT COALESCE(MAX(version), 0) FROM schema_version",
        [],
        |r| r.get(0),
    )
    .ok()
}

/// Opens the writer connection, checking integrity first. A database that
/// fails `quick_check` (or is not a database) is moved aside and a fresh one
/// is made; the event is logged and returned as a notice.
fn open_checked(db_path: &Path) -> Result<(Connection, Option<String>), Critical> {
    if db_path.exists() {
        // A newer schema is refused before anything could write to the file.
        if let Some(found) = peek_schema_version(db_path)
            && found > SCHEMA_VERSION
        {
            return Err(Critical::NewerSchema {
                path: db_path.to_owned(),
                found,
                known: SCHEMA_VERSION,
            });
        }
        let problem = match Connection::open(db_path) {
            Err(e) => Some(e.to_string()),
            Ok(conn) => match conn.query_row("PRAGMA quick_check", [], |r| r.get::<_, String>(0)) {
                Ok(ok) if ok == "ok" => None,
                Ok(msg) => Some(msg),
                Err(e) => Some(e.to_string()),
            },
        };
        if let Some(problem) = problem {
            let aside = db_path.with_extension(format!("db.corrupt-{}", unix_now()));
            std::fs::rename(db_path, &aside)?;
            for ext in ["db-wal", "db-shm"] {
                let side = db_path.with_extension(ext);
                if side.exists() {
                    let _ = std::fs::rename(
                        &side,
                        aside.with_extension(format!("{}-{ext}", unix_now())),
                    );
                }
            }
            let notice = format!(
                "index.db failed its integrity check ({problem}); moved it to {} and rebuilt the index",
                aside.display()
            );
            tracing::error!("{notice}");
            let conn = create(db_path)?;
            return Ok((conn, Some(notice)));
        }
    }
    Ok((create(db_path)?, None))
}

fn create(db_path: &Path) -> Result<Connection, Error> {
    let existed = db_path.exists();
    let conn = Connection::open(db_path)?;
    if !existed {
        restrict_mode(db_path)?;
    }
    Ok(conn)
}

#[cfg(unix)]
fn restrict_mode(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
}
#[cfg(not(unix))]
fn restrict_mode(_path: &Path) -> std::io::Result<()> {
    Ok(())
}
