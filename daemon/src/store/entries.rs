//! Typed reads of `entries`: every query on the table outside the writer
//! goes through here, so a column change touches the store alone.
//!
//! Each function takes a read connection (or the writer's transaction) and
//! returns the index's own types; callers never write `FROM entries`.

use rusqlite::{Connection, OptionalExtension};

use crate::Error;

use super::model::{EntryRow, Kind};

/// The columns of [`row_from_sql`], in its order.
pub const ROW_COLUMNS: &str =
    "id, parent_id, name, kind, size, blocks, mtime_ns, dev, ino, nlink, mode, flags";

/// The row of entry `id`, if the index has it.
pub fn load_row(conn: &Connection, id: i64) -> Result<Option<EntryRow>, Error> {
    let mut stmt = conn.prepare_cached(
        "SELECT id, parent_id, name, kind, size, blocks, mtime_ns, dev, ino, nlink, mode, flags FROM entries WHERE id=?1",
    )?;
    Ok(stmt.query_row([id], row_from_sql).optional()?)
}

/// An [`EntryRow`] from a row selected as [`ROW_COLUMNS`].
pub fn row_from_sql(r: &rusqlite::Row<'_>) -> rusqlite::Result<EntryRow> {
    Ok(EntryRow {
        id: r.get(0)?,
        parent_id: r.get(1)?,
        name: r.get(2)?,
        kind: Kind::from_i64(r.get(3)?),
        size: r.get::<_, i64>(4)? as u64,
        blocks: r.get::<_, i64>(5)? as u64,
        mtime_ns: r.get(6)?,
        dev: r.get::<_, i64>(7)? as u64,
        ino: r.get::<_, i64>(8)? as u64,
        nlink: r.get::<_, i64>(9)? as u64,
        mode: r.get(10)?,
        flags: r.get(11)?,
    })
}

/// The largest entry id in the index (0 when empty).
pub fn max_id(conn: &Connection) -> Result<i64, Error> {
    Ok(conn.query_row("SELECT COALESCE(MAX(id), 0) FROM entries", [], |r| r.get(0))?)
}
