//! The `hashes` table: content hashes cached per inode for duplicate
//! finding, with the file state each was computed for ([`HashRow`]).
//! Writes go through the single writer ([`super::Op::PutHashes`]); this
//! module holds the SQL.

use rusqlite::{Connection, params};

use crate::Error;

use super::model::HashRow;

/// Inodes with a cached hash.
pub fn count(conn: &Connection) -> Result<u64, Error> {
    Ok(conn.query_row("SELECT COUNT(*) FROM hashes", [], |r| r.get::<_, i64>(0))? as u64)
}

/// The cached rows of the inodes `wanted` accepts (by dev and ino), in one
/// read of the table.
pub fn cached(conn: &Connection, wanted: impl Fn(u64, u64) -> bool) -> Result<Vec<HashRow>, Error> {
    let mut stmt = conn.prepare(
        "SELECT dev, ino, size, mtime_ns, ctime_ns, partial, full, hashed_ns FROM hashes",
    )?;
    let mut rows = stmt.query([])?;
    let mut out = Vec::new();
    while let Some(r) = rows.next()? {
        let (dev, ino) = (r.get::<_, i64>(0)? as u64, r.get::<_, i64>(1)? as u64);
        if wanted(dev, ino) {
            out.push(HashRow {
                dev,
                ino,
                size: r.get::<_, i64>(2)? as u64,
                mtime_ns: r.get(3)?,
                ctime_ns: r.get(4)?,
                partial: r.get(5)?,
                full: r.get(6)?,
                hashed_ns: r.get(7)?,
            });
        }
    }
    Ok(out)
}

/// Writes computed hashes (in the writer's transaction), replacing what an
/// inode had.
pub fn put(tx: &Connection, rows: &[HashRow]) -> Result<(), Error> {
    let mut put = tx.prepare_cached(
        "INSERT OR REPLACE INTO hashes (dev, ino, size, mtime_ns, ctime_ns, partial, full, hashed_ns)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    )?;
    for h in rows {
        put.execute(params![
            h.dev as i64,
            h.ino as i64,
            h.size as i64,
            h.mtime_ns,
            h.ctime_ns,
            h.partial,
            h.full,
            h.hashed_ns
        ])?;
    }
    Ok(())
}
