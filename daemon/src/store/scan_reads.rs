//! The reads a walk and the watcher's reconcile make of `entries` (and of
//! `unlisted`): a folder's children as the index has them, one child by
//! name, a folder's parent, the paths that share an inode, an entry's path.
//! Rows come back as [`EntryRow`]s read by [`row_from_sql`], so the column
//! list lives here and nowhere in ingest.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

use rusqlite::{Connection, OptionalExtension};

use super::{EntryRow, row_from_sql};
use crate::Error;

/// A folder's children by name. Hashed with foldhash (seeded per
/// process): SipHash was 3% of an unchanged restart's CPU.
pub type Children = HashMap<Vec<u8>, EntryRow, foldhash::fast::RandomState>;

/// The columns [`row_from_sql`] reads, in its order.
const ROW: &str = "id, parent_id, name, kind, size, blocks, mtime_ns, dev, ino, nlink, mode, flags";

/// The children of folder `id`, by name. Each row's own `name` is left
/// empty: the key holds it. `wide`: the folder held several hundred
/// entries, so its children are read as one run of ids when they are one.
pub fn children(conn: &Connection, id: i64, wide: bool) -> Result<Children, Error> {
    let keyed = |r: &rusqlite::Row<'_>| -> rusqlite::Result<(Vec<u8>, EntryRow)> {
        let mut row = row_from_sql(r)?;
        Ok((std::mem::take(&mut row.name), row))
    };
    if !wide {
        let mut out = Children::default();
        let mut stmt =
            conn.prepare_cached(&format!("SELECT {ROW} FROM entries WHERE parent_id=?1"))?;
        let mut rows = stmt.query([id])?;
        while let Some(r) = rows.next()? {
            let (name, row) = keyed(r)?;
            out.insert(name, row);
        }
        return Ok(out);
    }
    // A wide folder's children were given ids as it was listed, so they
    // are usually one run of ids: read that run of the table in order
    // rather than seek each row from the index (a folder of 200k files:
    // 18% of an unchanged restart's time went to those seeks).
    let (count, lo, hi): (i64, Option<i64>, Option<i64>) = conn
        .prepare_cached("SELECT COUNT(*), MIN(id), MAX(id) FROM entries WHERE parent_id=?1")?
        .query_row([id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
    let mut out = Children::with_capacity_and_hasher(count as usize, Default::default());
    let (Some(lo), Some(hi)) = (lo, hi) else {
        return Ok(out);
    };
    let mut rows_of = |sql: &str, args: &[i64]| -> Result<(), Error> {
        let mut stmt = conn.prepare_cached(sql)?;
        let mut rows = stmt.query(rusqlite::params_from_iter(args))?;
        while let Some(r) = rows.next()? {
            let (name, row) = keyed(r)?;
            out.insert(name, row);
        }
        Ok(())
    };
    if count >= 256 && (hi - lo + 1) <= count * 2 {
        // `+parent_id`: the range of ids, not the parent index, drives it.
        rows_of(
            &format!("SELECT {ROW} FROM entries WHERE id BETWEEN ?2 AND ?3 AND +parent_id=?1"),
            &[id, lo, hi],
        )?;
    } else {
        rows_of(
            &format!("SELECT {ROW} FROM entries WHERE parent_id=?1"),
            &[id],
        )?;
    }
    Ok(out)
}

/// The child of folder `dir` named `name`, byte for byte.
pub fn child(conn: &Connection, dir: i64, name: &[u8]) -> Result<Option<EntryRow>, Error> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {ROW} FROM entries WHERE parent_id=?1 AND name=?2"
    ))?;
    Ok(stmt
        .query_row(rusqlite::params![dir, name], row_from_sql)
        .optional()?)
}

/// The folder holding entry `id` (`None` for a root's own folder).
pub fn parent_of(conn: &Connection, id: i64) -> Result<Option<i64>, Error> {
    Ok(
        conn.query_row("SELECT parent_id FROM entries WHERE id=?1", [id], |r| {
            r.get::<_, Option<i64>>(0)
        })?,
    )
}

/// A root folder's row that no root claims, left by a first scan of the
/// root at `name` that stopped before its end (a shutdown or a kill): the
/// next scan goes on from it rather than writing a second tree beside it.
pub fn unclaimed_root(conn: &Connection, name: &[u8]) -> Result<Option<i64>, Error> {
    Ok(conn
        .query_row(
            "SELECT id FROM entries WHERE parent_id IS NULL AND name=?1 AND kind=1
             AND id NOT IN (SELECT entry_id FROM roots WHERE entry_id IS NOT NULL)
             ORDER BY id LIMIT 1",
            [name],
            |r| r.get::<_, i64>(0),
        )
        .optional()?)
}

/// The folders that have rows in `unlisted`.
pub fn folders_with_unlisted(conn: &Connection) -> Result<HashSet<i64>, Error> {
    Ok(conn
        .prepare("SELECT DISTINCT parent_id FROM unlisted")?
        .query_map([], |r| r.get::<_, i64>(0))?
        .collect::<Result<_, _>>()?)
}

/// The inodes `(dev, ino)` with several links of entry `id`: the file
/// itself, or every file under the folder.
pub fn linked_inodes_under(conn: &Connection, id: i64) -> Result<Vec<(u64, u64)>, Error> {
    let mut stmt = conn.prepare_cached(
        "WITH RECURSIVE sub(id) AS (SELECT ?1 UNION ALL SELECT e.id FROM entries e JOIN sub ON e.parent_id = sub.id WHERE e.kind = 1)
         SELECT e.dev, e.ino FROM entries e JOIN sub ON e.id = sub.id OR e.parent_id = sub.id
         WHERE e.nlink > 1 AND e.kind <> 1",
    )?;
    let found = stmt.query_map([id], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?)))?;
    let mut out = Vec::new();
    for f in found {
        let (d, i) = f?;
        out.push((d as u64, i as u64));
    }
    Ok(out)
}

/// The entries of inode `(dev, ino)` whose rows say it has several links
/// (folders aside).
pub fn linked_paths(conn: &Connection, dev: u64, ino: u64) -> Result<Vec<i64>, Error> {
    let mut stmt = conn.prepare_cached(
        "SELECT id FROM entries WHERE ino=?1 AND dev=?2 AND nlink > 1 AND kind <> 1",
    )?;
    let found = stmt.query_map(rusqlite::params![ino as i64, dev as i64], |r| {
        r.get::<_, i64>(0)
    })?;
    Ok(found.collect::<Result<_, _>>()?)
}

/// The entries `(id, dev, ino)` whose rows say one link, with one of
/// these inode numbers (folders aside): one pass over the table.
pub fn single_link_entries(conn: &Connection, inos: &[u64]) -> Result<Vec<(i64, u64, u64)>, Error> {
    let inos: Vec<String> = inos.iter().map(|i| (*i as i64).to_string()).collect();
    let mut stmt = conn.prepare(&format!(
        "SELECT id, dev, ino FROM entries WHERE nlink = 1 AND kind <> 1 AND ino IN ({})",
        inos.join(",")
    ))?;
    let rows = stmt.query_map([], |r| {
        Ok((
            r.get::<_, i64>(0)?,
            r.get::<_, i64>(1)?,
            r.get::<_, i64>(2)?,
        ))
    })?;
    let mut out = Vec::new();
    for row in rows {
        let (id, dev, ino) = row?;
        out.push((id, dev as u64, ino as u64));
    }
    Ok(out)
}

/// The absolute path of entry `id`, from the tree.
pub fn path_of(conn: &Connection, id: i64) -> Result<Option<PathBuf>, Error> {
    let mut stmt = conn.prepare_cached("SELECT parent_id, name FROM entries WHERE id=?1")?;
    let mut parts: Vec<Vec<u8>> = Vec::new();
    let mut cur = id;
    loop {
        let Some((parent, name)) = stmt
            .query_row([cur], |r| {
                Ok((r.get::<_, Option<i64>>(0)?, r.get::<_, Vec<u8>>(1)?))
            })
            .optional()?
        else {
            return Ok(None);
        };
        parts.push(name);
        match parent {
            Some(p) => cur = p,
            None => break,
        }
    }
    let mut path = PathBuf::new();
    for p in parts.iter().rev() {
        path.push(crate::platform::fs::os(p));
    }
    Ok(Some(path))
}
