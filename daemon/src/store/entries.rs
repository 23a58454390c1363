//! Typed reads of `entries`: the queries that read the table outside the
//! writer go through here, so a column change touches the store alone.
//!
//! Each function takes a read connection (or a transaction on one) and
//! returns the index's own types; callers never write `FROM entries`.
//! The reads that scan the table (`each_*`) hand each row to a callback
//! while their statement runs, so a caller's own look-ups in between see
//! the same read transaction, and nothing is collected that the caller
//! does not keep.

use rusqlite::{CachedStatement, Connection, OptionalExtension};

use crate::Error;

use super::model::{EntryRow, Kind, Totals};

/// A `SELECT` of the columns [`row_from_sql`] reads, from `entries`, then
/// `$rest` (a `WHERE` clause).
macro_rules! select_row {
    ($rest:literal) => {
        concat!(
            "SELECT id, parent_id, name, kind, size, blocks, mtime_ns, dev, ino, nlink, mode, flags FROM entries ",
            $rest
        )
    };
}

/// The row of entry `id`, if the index has it.
pub fn load_row(conn: &Connection, id: i64) -> Result<Option<EntryRow>, Error> {
    let mut stmt = conn.prepare_cached(select_row!("WHERE id=?1"))?;
    Ok(stmt.query_row([id], row_from_sql).optional()?)
}

/// The row of entry `id`; the store's "no row" error when the index has
/// none.
pub fn row(conn: &Connection, id: i64) -> Result<EntryRow, Error> {
    let mut stmt = conn.prepare_cached(select_row!("WHERE id=?1"))?;
    Ok(stmt.query_row([id], row_from_sql)?)
}

/// An [`EntryRow`] from a row whose columns are `id, parent_id, name,
/// kind, size, blocks, mtime_ns, dev, ino, nlink, mode, flags`, in that
/// order (as `select_row!` selects them).
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

/// A folder's children, as stored, in no particular order.
pub fn children(conn: &Connection, dir: i64) -> Result<Vec<EntryRow>, Error> {
    let mut stmt = conn.prepare_cached(select_row!("WHERE parent_id=?1"))?;
    Ok(stmt
        .query_map([dir], row_from_sql)?
        .collect::<Result<_, _>>()?)
}

/// Parent look-ups for walks up the tree: one prepared statement for many
/// look-ups.
pub struct Parents<'c> {
    stmt: CachedStatement<'c>,
}

impl<'c> Parents<'c> {
    pub fn new(conn: &'c Connection) -> Result<Self, Error> {
        Ok(Parents {
            stmt: conn.prepare_cached("SELECT parent_id FROM entries WHERE id=?1")?,
        })
    }

    /// The parent of entry `id`; `None` for a root's folder, or an entry
    /// the index does not hold.
    pub fn of(&mut self, id: i64) -> Result<Option<i64>, Error> {
        Ok(self
            .stmt
            .query_row([id], |r| r.get::<_, Option<i64>>(0))
            .optional()?
            .flatten())
    }
}

/// A file with several hard links (kept out of the aggregates; disk usage
/// counts each inode once per query).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Multilink {
    pub id: i64,
    pub parent_id: Option<i64>,
    pub dev: u64,
    pub ino: u64,
    /// 512-byte units, as `st_blocks`.
    pub blocks: u64,
    pub size: u64,
}

/// Every indexed path to a file with several hard links, anywhere in the
/// index (through the small `entries_multilink` index), one call each.
pub fn each_multilink(
    conn: &Connection,
    mut f: impl FnMut(Multilink) -> Result<(), Error>,
) -> Result<(), Error> {
    let mut stmt = conn.prepare_cached(
        "SELECT id, parent_id, dev, ino, blocks, size FROM entries WHERE nlink > 1 AND kind <> 1",
    )?;
    let mut rows = stmt.query([])?;
    while let Some(r) = rows.next()? {
        f(Multilink {
            id: r.get(0)?,
            parent_id: r.get(1)?,
            dev: r.get::<_, i64>(2)? as u64,
            ino: r.get::<_, i64>(3)? as u64,
            blocks: r.get::<_, i64>(4)? as u64,
            size: r.get::<_, i64>(5)? as u64,
        })?;
    }
    Ok(())
}

/// A folder's child with what disk usage needs of it: an entry, with its
/// subtree's aggregates when it is a folder, or a folder the rules keep out
/// (its unlisted row: no entry, measured by a sizes-only walk).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChildTotals {
    /// 0 for a folder kept out: it has no entry.
    pub id: i64,
    pub name: Vec<u8>,
    pub kind: Kind,
    pub size: u64,
    /// 512-byte units, as `st_blocks`.
    pub blocks: u64,
    /// A folder's `dir_totals` (zero where it has none, and for a file).
    pub totals: Totals,
    /// When a folder kept out was measured (unix seconds); `None` for an
    /// entry.
    pub measured_at: Option<i64>,
}

/// A folder's children with their aggregates, and the folders the rules
/// keep out of it, by name, with their measured sizes.
const CHILDREN: &str = "SELECT e.id, e.name, e.kind, e.size, e.blocks, t.bytes, t.apparent, t.files, t.dirs, t.incomplete, NULL
     FROM entries e LEFT JOIN dir_totals t ON t.id = e.id WHERE e.parent_id = ?1
     UNION ALL
     SELECT 0, u.name, 1, 0, 0, u.bytes, u.apparent, u.files, u.dirs, u.incomplete, u.measured_at
     FROM unlisted u WHERE u.parent_id = ?1 AND u.name <> x''";

/// Folder `dir`'s children and the folders kept out of it (see
/// [`ChildTotals`]), in no particular order.
pub fn children_with_totals(conn: &Connection, dir: i64) -> Result<Vec<ChildTotals>, Error> {
    let mut stmt = conn.prepare_cached(CHILDREN)?;
    let mut rows = stmt.query([dir])?;
    let mut out = Vec::new();
    while let Some(r) = rows.next()? {
        let total =
            |i: usize| -> rusqlite::Result<i64> { Ok(r.get::<_, Option<i64>>(i)?.unwrap_or(0)) };
        out.push(ChildTotals {
            id: r.get(0)?,
            name: r.get(1)?,
            kind: Kind::from_i64(r.get(2)?),
            size: r.get::<_, i64>(3)? as u64,
            blocks: r.get::<_, i64>(4)? as u64,
            totals: Totals {
                bytes: total(5)?,
                apparent: total(6)?,
                files: total(7)?,
                dirs: total(8)?,
                incomplete: total(9)?,
            },
            measured_at: r.get(10)?,
        });
    }
    Ok(out)
}

/// The size of every regular file of at least `min` bytes, one call each.
pub fn each_file_size(conn: &Connection, min: u64, mut f: impl FnMut(u64)) -> Result<(), Error> {
    let mut stmt = conn.prepare("SELECT size FROM entries WHERE kind = 0 AND size >= ?1")?;
    let mut rows = stmt.query([min as i64])?;
    while let Some(r) = rows.next()? {
        f(r.get::<_, i64>(0)? as u64);
    }
    Ok(())
}

/// A regular file, as duplicate finding first sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SizedFile {
    pub id: u32,
    pub size: u64,
    /// 512-byte units, as `st_blocks`.
    pub blocks: u64,
    pub dev: u64,
    pub ino: u64,
    pub nlink: u64,
}

/// Every regular file of at least `min` bytes whose size `wanted` accepts,
/// one call each (the other columns are read only for those).
pub fn each_file_sized(
    conn: &Connection,
    min: u64,
    wanted: impl Fn(u64) -> bool,
    mut f: impl FnMut(SizedFile),
) -> Result<(), Error> {
    let mut stmt = conn.prepare(
        "SELECT id, size, blocks, dev, ino, nlink FROM entries WHERE kind = 0 AND size >= ?1",
    )?;
    let mut q = stmt.query([min as i64])?;
    while let Some(r) = q.next()? {
        let size = r.get::<_, i64>(1)? as u64;
        if wanted(size) {
            let n = |i: usize| -> rusqlite::Result<u64> { Ok(r.get::<_, i64>(i)? as u64) };
            f(SizedFile {
                id: r.get(0)?,
                size,
                blocks: n(2)?,
                dev: n(3)?,
                ino: n(4)?,
                nlink: n(5)?,
            });
        }
    }
    Ok(())
}

/// One past the largest entry id (0 for an empty index), and the number of
/// entries.
pub fn id_bound_and_count(conn: &Connection) -> Result<(i64, i64), Error> {
    let max_id: i64 =
        conn.query_row("SELECT COALESCE(MAX(id), 0) FROM entries", [], |r| r.get(0))?;
    let count: i64 = conn.query_row("SELECT COUNT(*) FROM entries", [], |r| r.get(0))?;
    Ok((max_id, count))
}

/// What the name index keeps of an entry.
#[derive(Debug)]
pub struct NameRow<'a> {
    pub id: i64,
    pub parent_id: Option<i64>,
    pub name: &'a [u8],
    pub kind: i64,
    pub size: i64,
    pub mtime_ns: i64,
}

/// Every entry in id order, each given to `f` (names are borrowed, so a
/// million rows make no copies).
pub fn each_by_id(conn: &Connection, mut f: impl FnMut(NameRow<'_>)) -> Result<(), Error> {
    let mut stmt =
        conn.prepare("SELECT id, parent_id, name, kind, size, mtime_ns FROM entries ORDER BY id")?;
    let mut rows = stmt.query([])?;
    while let Some(r) = rows.next()? {
        f(NameRow {
            id: r.get(0)?,
            parent_id: r.get(1)?,
            name: r.get_ref(2)?.as_blob().map_err(rusqlite::Error::from)?,
            kind: r.get(3)?,
            size: r.get(4)?,
            mtime_ns: r.get(5)?,
        });
    }
    Ok(())
}

/// The kind of entry `id`.
pub fn kind(conn: &Connection, id: i64) -> Result<Kind, Error> {
    let kind: i64 = conn.query_row("SELECT kind FROM entries WHERE id=?1", [id], |r| r.get(0))?;
    Ok(Kind::from_i64(kind))
}

/// A child of a folder with its folder totals (none for files, or for a
/// folder not yet totalled).
#[derive(Debug)]
pub struct MapChild {
    pub id: i64,
    pub name: Vec<u8>,
    pub kind: Kind,
    pub blocks: i64,
    pub mtime_ns: i64,
    pub bytes: Option<i64>,
    pub files: Option<i64>,
    pub dirs: Option<i64>,
}

/// The children of folder `id` with their totals as the map shows them,
/// in no order.
pub fn map_children(conn: &Connection, id: i64) -> Result<Vec<MapChild>, Error> {
    let mut stmt = conn.prepare_cached(
        "SELECT e.id, e.name, e.kind, e.blocks, e.mtime_ns, t.bytes, t.files, t.dirs
         FROM entries e LEFT JOIN dir_totals t ON t.id = e.id WHERE e.parent_id = ?1",
    )?;
    let mut rows = stmt.query([id])?;
    let mut out = Vec::new();
    while let Some(r) = rows.next()? {
        out.push(MapChild {
            id: r.get(0)?,
            name: r.get(1)?,
            kind: Kind::from_i64(r.get(2)?),
            blocks: r.get(3)?,
            mtime_ns: r.get(4)?,
            bytes: r.get(5)?,
            files: r.get(6)?,
            dirs: r.get(7)?,
        });
    }
    Ok(out)
}
