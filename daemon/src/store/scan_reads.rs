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

/// What the index had of every entry when a root's scan began, read in
/// one pass over the table, for the walk to compare each folder's listing
/// with instead of reading the folder's rows (a query per folder was a
/// fifth of an unchanged restart's CPU at 1M entries). Per entry: its id,
/// a hash of its name and a print of its figures ([`print_of`]), 24 bytes,
/// grouped by parent; held for the walk only.
///
/// A print equal to the listing's says the row is the `lstat`'s (the
/// figures `unchanged` compares); a print that differs,
/// or an entry the listing no longer has, is read whole from SQLite. Two
/// names of one folder with the same hash send that folder to SQLite too.
pub struct ReadAhead {
    /// (id, name hash, print), sorted by parent id.
    rows: Vec<(u32, u64, u64)>,
    /// Folder `p`'s children are `rows[at[p]..at[p + 1]]` (4 bytes an id:
    /// a binary search per folder was 2% of a restart's CPU).
    at: Vec<u32>,
}

/// The hasher of names and prints: seeded per process, so no one can make
/// two figures of a file print alike on purpose.
static PRINTS: std::sync::LazyLock<foldhash::quality::RandomState> =
    std::sync::LazyLock::new(Default::default);

/// A hash of an entry's name, for [`ReadAhead`].
pub fn name_hash(name: &[u8]) -> u64 {
    use std::hash::BuildHasher;
    PRINTS.hash_one(name)
}

/// A print of the figures of a row a walk compares (kind, size, blocks,
/// mtime, inode, links, mode, flags: those `unchanged` compares, so that a
/// device number that changed across a reboot, which no compare rewrites,
/// does not send every row to SQLite at every restart), for [`ReadAhead`].
pub fn print_of(r: &EntryRow) -> u64 {
    use std::hash::BuildHasher;
    PRINTS.hash_one((
        r.kind as u8,
        r.size,
        r.blocks,
        r.mtime_ns,
        r.ino,
        r.nlink,
        r.mode,
        r.flags,
    ))
}

impl ReadAhead {
    /// Reads every entry, `bound` the largest id (`entries::max_id`),
    /// unless `stop` is set first (checked every 64k rows): `None` then.
    pub fn read(
        conn: &Connection,
        bound: i64,
        stop: &std::sync::atomic::AtomicBool,
    ) -> Result<Option<Self>, Error> {
        if bound >= i64::from(u32::MAX) {
            return Ok(None);
        }
        let mut stmt = conn.prepare(&format!("SELECT {ROW} FROM entries"))?;
        let mut rows = stmt.query([])?;
        // Ids are dense but for deleted entries: about one slot each.
        let mut out = Vec::with_capacity(usize::try_from(bound).unwrap_or(0));
        while let Some(r) = rows.next()? {
            // Every column but `parent_id` is NOT NULL and of its type
            // (an integer, the name a blob): read without conversions.
            let int = |i: usize| r.get_ref_unwrap(i).as_i64().map_err(rusqlite::Error::from);
            let Ok(parent) = int(1) else {
                continue;
            };
            if out.len() % 65536 == 0 && stop.load(std::sync::atomic::Ordering::Relaxed) {
                return Ok(None);
            }
            let row = EntryRow {
                id: int(0)?,
                parent_id: None,
                name: Vec::new(),
                kind: super::Kind::from_i64(int(3)?),
                size: int(4)? as u64,
                blocks: int(5)? as u64,
                mtime_ns: int(6)?,
                // Not printed (see `print_of`).
                dev: 0,
                ino: int(8)? as u64,
                nlink: int(9)? as u64,
                mode: int(10)? as u32,
                flags: int(11)? as u32,
            };
            let name = r
                .get_ref_unwrap(2)
                .as_blob()
                .map_err(rusqlite::Error::from)?;
            out.push((
                parent as u32,
                row.id as u32,
                name_hash(name),
                print_of(&row),
            ));
        }
        drop(rows);
        out.sort_unstable_by_key(|r| r.0);
        let bound = out.last().map_or(0, |r| r.0 as usize + 1);
        let mut at = vec![0u32; bound + 1];
        for r in &out {
            at[r.0 as usize + 1] += 1;
        }
        for p in 1..at.len() {
            at[p] += at[p - 1];
        }
        let rows = out
            .into_iter()
            .map(|(_, id, name, print)| (id, name, print))
            .collect();
        Ok(Some(ReadAhead { rows, at }))
    }

    /// The children of folder `id` by name hash: (id, print) each; `None`
    /// when two of their names hash alike.
    pub fn children(&self, id: i64) -> Option<AheadChildren> {
        let id = usize::try_from(id).ok()?;
        let (from, to) = match (self.at.get(id), self.at.get(id + 1)) {
            (Some(&from), Some(&to)) => (from as usize, to as usize),
            // Past the last folder with children: none.
            _ => (0, 0),
        };
        let mut out = AheadChildren::with_capacity_and_hasher(to - from, Default::default());
        for &(child, name, print) in &self.rows[from..to] {
            if out.insert(name, (i64::from(child), print)).is_some() {
                return None;
            }
        }
        Some(out)
    }

    /// Entries read.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }
}

/// A folder's children as [`ReadAhead`] has them: (id, print) by name hash.
pub type AheadChildren = HashMap<u64, (i64, u64), foldhash::fast::RandomState>;
