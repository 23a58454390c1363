//! The tree and its aggregates in SQL: each folder's `dir_totals` row (the
//! bytes, files and folders of its whole subtree) and its `unlisted` rows
//! (the sizes of what the rules keep out of it), and the writer's changes
//! to the tree's shape (deleting a subtree, moving an entry) that keep them
//! true.
//!
//! A change adds to the totals of every folder above it; `Aggregates`
//! merges a batch's changes so each folder's row is updated once per
//! batch, however many of its descendants changed. Multi-link files are
//! not in the aggregates: disk-usage queries count them once per query.

use std::collections::HashMap;

use rusqlite::{Connection, OptionalExtension, params};

use crate::Error;

use super::entries::load_row;
use super::model::{Change, EntryRow, Kind, Linked, Totals, Unlisted, unpack_links};

pub fn dir_totals(conn: &Connection, id: i64) -> Result<Option<Totals>, Error> {
    let mut stmt = conn.prepare_cached(
        "SELECT bytes, apparent, files, dirs, incomplete FROM dir_totals WHERE id=?1",
    )?;
    Ok(stmt
        .query_row([id], |r| {
            Ok(Totals {
                bytes: r.get(0)?,
                apparent: r.get(1)?,
                files: r.get(2)?,
                dirs: r.get(3)?,
                incomplete: r.get(4)?,
            })
        })
        .optional()?)
}

/// The unlisted rows of folder `dir`.
pub fn unlisted_of(conn: &Connection, dir: i64) -> Result<Vec<Unlisted>, Error> {
    let mut stmt = conn.prepare_cached(
        "SELECT name, bytes, apparent, files, dirs, incomplete, measured_at, links FROM unlisted WHERE parent_id=?1",
    )?;
    let rows = stmt.query_map([dir], |r| {
        Ok(Unlisted {
            name: r.get(0)?,
            totals: Totals {
                bytes: r.get(1)?,
                apparent: r.get(2)?,
                files: r.get(3)?,
                dirs: r.get(4)?,
                incomplete: r.get(5)?,
            },
            measured_at: r.get(6)?,
            links: unpack_links(&r.get::<_, Vec<u8>>(7)?),
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// The multi-link files counted in unlisted rows, by the folder holding
/// the row (only rows that count one).
pub fn unlisted_links(conn: &Connection) -> Result<Vec<(i64, Vec<Linked>)>, Error> {
    let mut stmt =
        conn.prepare_cached("SELECT parent_id, links FROM unlisted WHERE length(links) > 0")?;
    let rows = stmt.query_map([], |r| {
        Ok((r.get::<_, i64>(0)?, unpack_links(&r.get::<_, Vec<u8>>(1)?)))
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Deletes a root's entries (its folder's whole subtree); returns the rows.
pub(super) fn drop_root_entries(
    tx: &Connection,
    root_id: i64,
    agg: &mut Aggregates,
    changes: &mut Vec<Change>,
) -> Result<u64, Error> {
    agg.apply(tx)?;
    let entry: Option<Option<i64>> = tx
        .query_row("SELECT entry_id FROM roots WHERE id=?1", [root_id], |r| {
            r.get(0)
        })
        .optional()?;
    match entry {
        Some(Some(entry_id)) => delete_subtree(tx, entry_id, agg, changes),
        _ => Ok(0),
    }
}

/// Once a root's scan has recorded its folder's row: other rows of a
/// folder at the root's path that no root claims (trees left by first
/// scans that stopped, before the scan went on from them) are deleted,
/// with everything under them.
pub(super) fn drop_unclaimed_roots(
    tx: &Connection,
    root_id: i64,
    agg: &mut Aggregates,
    changes: &mut Vec<Change>,
) -> Result<u64, Error> {
    let stale: Vec<i64> = tx
        .prepare(
            "SELECT e.id FROM roots r JOIN entries e ON e.parent_id IS NULL AND e.name = r.path
             WHERE r.id=?1 AND e.id <> r.entry_id
             AND e.id NOT IN (SELECT entry_id FROM roots WHERE entry_id IS NOT NULL)",
        )?
        .query_map([root_id], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    let mut written = 0;
    for id in stale {
        tracing::warn!(
            id,
            "dropping a second tree left at a root's path by a stopped scan"
        );
        written += delete_subtree(tx, id, agg, changes)?;
    }
    Ok(written)
}

/// Takes an entry's whole subtree off the totals of every folder above it
/// (before it is deleted or moved); returns its row and those totals.
fn detach(
    tx: &Connection,
    id: i64,
    agg: &mut Aggregates,
) -> Result<Option<(EntryRow, Totals)>, Error> {
    let Some(row) = load_row(tx, id)? else {
        return Ok(None);
    };
    let totals = if row.kind == Kind::Dir {
        dir_totals(tx, id)?.unwrap_or_default()
    } else {
        row.contribution()
    };
    if let Some(p) = row.parent_id {
        agg.add(p, totals.neg());
    }
    agg.apply(tx)?;
    Ok(Some((row, totals)))
}

/// Deletes an entry and its subtree, taking its totals off every ancestor.
pub(super) fn delete_subtree(
    tx: &Connection,
    id: i64,
    agg: &mut Aggregates,
    changes: &mut Vec<Change>,
) -> Result<u64, Error> {
    let Some((row, _)) = detach(tx, id, agg)? else {
        return Ok(0);
    };
    if row.kind != Kind::Dir {
        changes.push(Change::Removed(vec![id]));
        return Ok(tx.execute("DELETE FROM entries WHERE id=?1", [id])? as u64);
    }
    tx.execute_batch(
        "CREATE TEMP TABLE IF NOT EXISTS doomed (id INTEGER PRIMARY KEY); DELETE FROM doomed;",
    )?;
    tx.execute(
        "WITH RECURSIVE sub(id) AS (SELECT ?1 UNION ALL SELECT e.id FROM entries e JOIN sub ON e.parent_id = sub.id)
         INSERT INTO doomed SELECT id FROM sub",
        [id],
    )?;
    let ids: Vec<i64> = tx
        .prepare_cached("SELECT id FROM doomed")?
        .query_map([], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    changes.push(Change::Removed(ids));
    tx.execute(
        "DELETE FROM dir_totals WHERE id IN (SELECT id FROM doomed)",
        [],
    )?;
    tx.execute(
        "DELETE FROM unlisted WHERE parent_id IN (SELECT id FROM doomed)",
        [],
    )?;
    let n = tx.execute(
        "DELETE FROM entries WHERE id IN (SELECT id FROM doomed)",
        [],
    )?;
    tx.execute("DELETE FROM doomed", [])?;
    agg.parents.clear();
    Ok(n as u64)
}

/// Moves an entry (and its subtree) under another folder and/or renames it.
pub(super) fn move_entry(
    tx: &Connection,
    id: i64,
    parent_id: i64,
    name: Vec<u8>,
    agg: &mut Aggregates,
    changes: &mut Vec<Change>,
) -> Result<u64, Error> {
    // A rename replaces what had the name, as rename(2) does (an editor's
    // save; two renames to one name in a batch leave the last): never a
    // second row for a name.
    let mut held = tx.prepare_cached("SELECT id FROM entries WHERE parent_id=?1 AND name=?2")?;
    let replaced: Option<i64> = held
        .query_row(params![parent_id, name], |r| r.get(0))
        .optional()?;
    let mut written = 0;
    if let Some(other) = replaced.filter(|&o| o != id) {
        agg.apply(tx)?;
        written += delete_subtree(tx, other, agg, changes)?;
    }
    let Some((row, totals)) = detach(tx, id, agg)? else {
        return Ok(written);
    };
    tx.execute(
        "UPDATE entries SET parent_id=?2, name=?3 WHERE id=?1",
        params![id, parent_id, name],
    )?;
    // Parents changed: the memo of the walk up is stale.
    agg.parents.clear();
    agg.add(parent_id, totals);
    agg.apply(tx)?;
    let subtree: Vec<i64> = if row.kind == Kind::Dir {
        subtree_ids(tx, id)?
    } else {
        Vec::new()
    };
    changes.push(Change::Moved {
        id,
        parent_id,
        name,
        subtree,
    });
    Ok(written + 1)
}

/// The ids of every entry below folder `id` (not its own).
pub(super) fn subtree_ids(tx: &Connection, id: i64) -> Result<Vec<i64>, Error> {
    Ok(tx
        .prepare_cached(
            "WITH RECURSIVE sub(id) AS (SELECT id FROM entries WHERE parent_id = ?1
               UNION ALL SELECT e.id FROM entries e JOIN sub ON e.parent_id = sub.id)
             SELECT id FROM sub",
        )?
        .query_map([id], |r| r.get(0))?
        .collect::<Result<_, _>>()?)
}

/// Pending aggregate changes of one batch: "add this to folder X and every
/// folder above it", merged so each folder is updated once per batch.
#[derive(Default)]
pub(super) struct Aggregates {
    pending: HashMap<i64, Totals>,
    /// parent of each folder seen in this batch (memo for walking up).
    pub(super) parents: HashMap<i64, Option<i64>>,
    /// Folders whose totals changed in this batch (for the fleet journal).
    pub(super) touched: Vec<i64>,
}

impl Aggregates {
    pub(super) fn add(&mut self, dir: i64, delta: Totals) {
        self.pending.entry(dir).or_default().add(delta);
    }

    pub(super) fn apply(&mut self, tx: &Connection) -> Result<(), Error> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let mut total: HashMap<i64, Totals> = HashMap::with_capacity(self.pending.len() * 4);
        let mut parent_of = tx.prepare_cached("SELECT parent_id FROM entries WHERE id=?1")?;
        for (dir, delta) in self.pending.drain() {
            let mut cur = Some(dir);
            while let Some(id) = cur {
                total.entry(id).or_default().add(delta);
                cur = match self.parents.get(&id) {
                    Some(p) => *p,
                    None => {
                        let p: Option<i64> = parent_of
                            .query_row([id], |r| r.get(0))
                            .optional()?
                            .flatten();
                        self.parents.insert(id, p);
                        p
                    }
                };
            }
        }
        let mut upd = tx.prepare_cached(
            "UPDATE dir_totals SET bytes=bytes+?2, apparent=apparent+?3, files=files+?4, dirs=dirs+?5, incomplete=incomplete+?6 WHERE id=?1",
        )?;
        for (id, d) in total {
            if !d.is_zero() {
                self.touched.push(id);
                upd.execute(params![
                    id,
                    d.bytes,
                    d.apparent,
                    d.files,
                    d.dirs,
                    d.incomplete
                ])?;
            }
        }
        Ok(())
    }
}
