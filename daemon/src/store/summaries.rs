//! The summaries table (migration 0013): each file's one-line summary for
//! folder manifests, valid for the size, mtime and summariser version it
//! was made for. Writes go through the single writer
//! ([`super::Op::PutSummaries`]); this module holds the SQL.

use rusqlite::{Connection, OptionalExtension, params};

use crate::Error;

/// One file's cached summary.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SummaryRow {
    pub entry_id: i64,
    pub size: u64,
    pub mtime_ns: i64,
    pub version: u32,
    /// `title`, `heading`, `sentence`, `doc-comment`; empty: the file gave
    /// no summary.
    pub source: String,
    pub summary: String,
}

/// The row of one entry, if any.
pub fn of_entry(conn: &Connection, id: i64) -> Result<Option<SummaryRow>, Error> {
    Ok(conn
        .prepare_cached(
            "SELECT entry_id, size, mtime_ns, version, source, summary FROM summaries \
             WHERE entry_id=?1",
        )?
        .query_row([id], |r| {
            Ok(SummaryRow {
                entry_id: r.get(0)?,
                size: r.get::<_, i64>(1)? as u64,
                mtime_ns: r.get(2)?,
                version: r.get(3)?,
                source: r.get(4)?,
                summary: r.get(5)?,
            })
        })
        .optional()?)
}

/// Writes rows (in the writer's transaction), replacing older ones; a file
/// that left the index meanwhile gets none.
pub fn put(tx: &Connection, rows: &[SummaryRow]) -> Result<(), Error> {
    let mut exists = tx.prepare_cached("SELECT 1 FROM entries WHERE id=?1")?;
    let mut put = tx.prepare_cached(
        "INSERT OR REPLACE INTO summaries (entry_id, size, mtime_ns, version, source, summary) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?;
    for row in rows {
        if exists.exists([row.entry_id])? {
            put.execute(params![
                row.entry_id,
                row.size as i64,
                row.mtime_ns,
                row.version,
                row.source,
                row.summary
            ])?;
        }
    }
    Ok(())
}
