//! Typed reads of `entries` for the layers above the store: the name
//! index's load, the map's folders and hard links. The SQL lives here so
//! that a change of the table touches the store alone.

use rusqlite::Connection;

use crate::Error;
use crate::store::Kind;

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

/// A file with several links: `(id, dev, ino, blocks)`.
pub type Linked = (i64, i64, i64, i64);

/// Every file (not folder) with more than one link, given to `f`.
pub fn each_multilinked(conn: &Connection, mut f: impl FnMut(Linked)) -> Result<(), Error> {
    let mut stmt = conn
        .prepare_cached("SELECT id, dev, ino, blocks FROM entries WHERE nlink > 1 AND kind <> 1")?;
    let mut rows = stmt.query([])?;
    while let Some(r) = rows.next()? {
        f((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?));
    }
    Ok(())
}

/// A child of a folder with its folder totals (none for files, or for a
/// folder not yet totalled).
#[derive(Debug)]
pub struct ChildTotals {
    pub id: i64,
    pub name: Vec<u8>,
    pub kind: Kind,
    pub blocks: i64,
    pub mtime_ns: i64,
    pub bytes: Option<i64>,
    pub files: Option<i64>,
    pub dirs: Option<i64>,
}

/// The children of folder `id` with their totals, in no order.
pub fn children_with_totals(conn: &Connection, id: i64) -> Result<Vec<ChildTotals>, Error> {
    let mut stmt = conn.prepare_cached(
        "SELECT e.id, e.name, e.kind, e.blocks, e.mtime_ns, t.bytes, t.files, t.dirs
         FROM entries e LEFT JOIN dir_totals t ON t.id = e.id WHERE e.parent_id = ?1",
    )?;
    let mut rows = stmt.query([id])?;
    let mut out = Vec::new();
    while let Some(r) = rows.next()? {
        out.push(ChildTotals {
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
