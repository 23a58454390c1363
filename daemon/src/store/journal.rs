//! The fleet's journal (`fleet_journal`, `fleet_meta`): what the writer
//! committed, batch by batch, for the fleet link to ship into PostgreSQL;
//! and the reads the link ships from (an entry's row with its root and its
//! path relative to the root, a consistent snapshot of the whole index).
//!
//! A journal batch holds the ids of the entries a commit touched (written,
//! removed, moved, or whose folder totals changed), not their rows: the link
//! ships each id's row as it is when it ships (or its absence), so a batch
//! shipped twice, or after later ones were committed, changes nothing, and
//! the journal stays small. Numbered `(epoch, seq)`: `seq` grows by one per
//! batch; a new `epoch` says the journal cannot be replayed (the index was
//! rebuilt, or batches were committed without the journal) and the link
//! reconciles the host's rows with a snapshot instead.

use std::collections::HashMap;

use rusqlite::{Connection, OptionalExtension, params};

use crate::Error;

use super::entries::row_from_sql;
use super::model::{EntryRow, Kind, Totals};
use super::tree::dir_totals;

/// Past this many unshipped batches (the database away for long under
/// churn) the journal is dropped and a new epoch begins: the link then
/// reconciles once instead of replaying them.
pub const MAX_BATCHES: i64 = 50_000;

/// Sets whether the writer keeps the journal, at start-up. Turning it on or
/// off starts a new epoch (batches committed while it was off are in no
/// journal), and off drops what the journal held.
pub(super) fn configure(conn: &Connection, enabled: bool) -> Result<(), Error> {
    let was: i64 = meta(conn, "journaling")?.unwrap_or(0);
    if was == i64::from(enabled) {
        return Ok(());
    }
    let tx = conn.unchecked_transaction()?;
    tx.execute("DELETE FROM fleet_journal", [])?;
    new_epoch(&tx)?;
    tx.execute(
        "INSERT OR REPLACE INTO fleet_meta VALUES ('journaling', ?1)",
        [i64::from(enabled)],
    )?;
    tx.commit()?;
    Ok(())
}

fn meta(conn: &Connection, key: &str) -> Result<Option<i64>, Error> {
    Ok(conn
        .prepare_cached("SELECT value FROM fleet_meta WHERE key=?1")?
        .query_row([key], |r| r.get(0))
        .optional()?)
}

fn new_epoch(conn: &Connection) -> Result<(), Error> {
    conn.execute(
        "INSERT OR REPLACE INTO fleet_meta VALUES ('epoch', abs(random()))",
        [],
    )?;
    Ok(())
}

/// Appends one committed batch's ids (inside the writer's transaction, so
/// the batch and its journal row commit together).
pub(super) fn append(tx: &Connection, mut ids: Vec<i64>) -> Result<(), Error> {
    if ids.is_empty() {
        return Ok(());
    }
    ids.sort_unstable();
    ids.dedup();
    let (first, last): (Option<i64>, Option<i64>) = tx
        .prepare_cached("SELECT MIN(seq), MAX(seq) FROM fleet_journal")?
        .query_row([], |r| Ok((r.get(0)?, r.get(1)?)))?;
    if let (Some(first), Some(last)) = (first, last)
        && last - first + 1 >= MAX_BATCHES
    {
        tracing::warn!("fleet journal over {MAX_BATCHES} batches: dropped; the link reconciles");
        tx.execute("DELETE FROM fleet_journal", [])?;
        new_epoch(tx)?;
    }
    let mut blob = Vec::with_capacity(ids.len() * 8);
    for id in ids {
        blob.extend_from_slice(&id.to_le_bytes());
    }
    // Seqs continue across a pruned journal: the link compares them with
    // the one PostgreSQL holds.
    let next: i64 = meta(tx, "next_seq")?
        .unwrap_or(1)
        .max(last.unwrap_or(0) + 1);
    tx.prepare_cached("INSERT INTO fleet_journal (seq, ids, at_ns) VALUES (?1, ?2, ?3)")?
        .execute(params![next, blob, now_ns()])?;
    tx.prepare_cached("INSERT OR REPLACE INTO fleet_meta VALUES ('next_seq', ?1)")?
        .execute([next + 1])?;
    Ok(())
}

/// Drops the batches up to `seq`, which PostgreSQL has applied.
pub(super) fn prune(tx: &Connection, seq: i64) -> Result<(), Error> {
    tx.prepare_cached("DELETE FROM fleet_journal WHERE seq <= ?1")?
        .execute([seq])?;
    Ok(())
}

fn now_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as i64)
        .unwrap_or(0)
}

/// Where the journal stands.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct JournalState {
    pub epoch: i64,
    /// The first batch still held (`None`: none is).
    pub first: Option<i64>,
    /// The last batch committed: the seq a snapshot taken now stands at.
    pub last: i64,
    /// When the oldest held batch was committed (unix ns).
    pub oldest_ns: Option<i64>,
}

/// The journal's epoch and bounds.
pub fn state(conn: &Connection) -> Result<JournalState, Error> {
    let epoch = meta(conn, "epoch")?.unwrap_or(0);
    let next = meta(conn, "next_seq")?.unwrap_or(1);
    let (first, max, oldest): (Option<i64>, Option<i64>, Option<i64>) = conn
        .prepare_cached("SELECT MIN(seq), MAX(seq), MIN(at_ns) FROM fleet_journal")?
        .query_row([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
    Ok(JournalState {
        epoch,
        first,
        last: max.unwrap_or(0).max(next - 1),
        oldest_ns: oldest,
    })
}

/// One journal batch.
#[derive(Clone, Debug)]
pub struct JournalBatch {
    pub seq: i64,
    pub ids: Vec<i64>,
    pub at_ns: i64,
}

/// The batches after `seq`, in order, until about `max_ids` ids.
pub fn batches_after(
    conn: &Connection,
    seq: i64,
    max_ids: usize,
) -> Result<Vec<JournalBatch>, Error> {
    let mut stmt = conn
        .prepare_cached("SELECT seq, ids, at_ns FROM fleet_journal WHERE seq > ?1 ORDER BY seq")?;
    let mut rows = stmt.query([seq])?;
    let mut out = Vec::new();
    let mut n = 0;
    while let Some(r) = rows.next()? {
        let blob: Vec<u8> = r.get(1)?;
        let ids: Vec<i64> = blob
            .chunks_exact(8)
            .map(|c| i64::from_le_bytes(c.try_into().unwrap_or_default()))
            .collect();
        n += ids.len();
        out.push(JournalBatch {
            seq: r.get(0)?,
            ids,
            at_ns: r.get(2)?,
        });
        if n >= max_ids {
            break;
        }
    }
    Ok(out)
}

/// An entry as the fleet holds it: its row, its root's path, its path
/// relative to the root (empty for the root's own folder) and, for a
/// folder, its subtree's totals.
#[derive(Clone, Debug)]
pub struct FleetRow {
    pub row: EntryRow,
    pub root: Vec<u8>,
    pub rel: Vec<u8>,
    pub totals: Option<Totals>,
    /// The cached BLAKE3 hash of a file's content, when one is cached for
    /// the file's current inode, size and mtime.
    pub hash: Option<Vec<u8>>,
    /// The nearest folder above the entry that is not open to everyone
    /// (see [`opens_to_all`]): the one that decides who sees the entry in
    /// the fleet; 0 when every folder above it is open to all.
    pub gate: i64,
}

/// Whether a folder with this mode lets everyone read and search it
/// (owner, group and others all have `r` and `x`): such a folder decides
/// nothing about who sees what is below it. The others are the fleet's
/// gates, and a chmod that turns a folder into one or out of one changes
/// the gate of everything below it.
pub fn opens_to_all(mode: u32) -> bool {
    mode & 0o555 == 0o555
}

/// A folder's root path (shared), its path relative to the root, and the
/// gate its entries have (itself if it is one, else its own gate).
type Place = (std::rc::Rc<[u8]>, Vec<u8>, i64);

/// Builds paths by walking up the tree, remembering each folder's.
struct Paths<'c> {
    conn: &'c Connection,
    known: HashMap<i64, Place>,
}

impl<'c> Paths<'c> {
    fn new(conn: &'c Connection) -> Self {
        Paths {
            conn,
            known: HashMap::new(),
        }
    }

    /// The (root, relative path, gate below) of folder `id`; `None` when
    /// it is gone.
    fn of_dir(&mut self, id: i64) -> Result<Option<Place>, Error> {
        // Walk up to a known folder or the root, then fill in downwards.
        let mut chain: Vec<(i64, Vec<u8>, u32)> = Vec::new();
        let mut cur = id;
        let mut up = self
            .conn
            .prepare_cached("SELECT parent_id, name, mode FROM entries WHERE id=?1")?;
        let gate_of = |id: i64, mode: u32, above: i64| if opens_to_all(mode) { above } else { id };
        let (root, mut rel, mut gate) = loop {
            if let Some((root, rel, gate)) = self.known.get(&cur) {
                break (root.clone(), rel.clone(), *gate);
            }
            let Some((parent, name, mode)) = up
                .query_row([cur], |r| {
                    Ok((
                        r.get::<_, Option<i64>>(0)?,
                        r.get::<_, Vec<u8>>(1)?,
                        r.get::<_, u32>(2)?,
                    ))
                })
                .optional()?
            else {
                return Ok(None);
            };
            match parent {
                Some(p) => {
                    chain.push((cur, name, mode));
                    cur = p;
                }
                None => {
                    let root: std::rc::Rc<[u8]> = name.into();
                    let gate = gate_of(cur, mode, 0);
                    self.known.insert(cur, (root.clone(), Vec::new(), gate));
                    break (root, Vec::new(), gate);
                }
            }
            if chain.len() > 100_000 {
                return Ok(None); // a cycle cannot be, but never loop forever
            }
        };
        while let Some((id, name, mode)) = chain.pop() {
            if !rel.is_empty() {
                rel.push(b'/');
            }
            rel.extend_from_slice(&name);
            gate = gate_of(id, mode, gate);
            self.known.insert(id, (root.clone(), rel.clone(), gate));
        }
        Ok(Some((root, rel, gate)))
    }

    fn row(&mut self, row: EntryRow) -> Result<Option<FleetRow>, Error> {
        let (root, rel, gate) = match row.parent_id {
            None => (row.name.clone(), Vec::new(), 0),
            Some(p) => {
                let Some((root, mut rel, gate)) = self.of_dir(p)? else {
                    return Ok(None);
                };
                if !rel.is_empty() {
                    rel.push(b'/');
                }
                rel.extend_from_slice(&row.name);
                (root.to_vec(), rel, gate)
            }
        };
        let totals = if row.kind == Kind::Dir {
            dir_totals(self.conn, row.id)?
        } else {
            None
        };
        let hash = if row.kind == Kind::File && row.size > 0 {
            cached_hash(self.conn, &row)?
        } else {
            None
        };
        Ok(Some(FleetRow {
            row,
            root,
            rel,
            totals,
            hash,
            gate,
        }))
    }
}

fn cached_hash(conn: &Connection, row: &EntryRow) -> Result<Option<Vec<u8>>, Error> {
    Ok(conn
        .prepare_cached(
            "SELECT full FROM hashes WHERE dev=?1 AND ino=?2 AND size=?3 AND mtime_ns=?4 AND full IS NOT NULL",
        )?
        .query_row(
            params![row.dev as i64, row.ino as i64, row.size as i64, row.mtime_ns],
            |r| r.get(0),
        )
        .optional()?)
}

/// The current rows of `ids`; the ids no longer in the index are returned
/// apart.
pub fn rows_of(conn: &Connection, ids: &[i64]) -> Result<(Vec<FleetRow>, Vec<i64>), Error> {
    let mut paths = Paths::new(conn);
    let mut stmt = conn.prepare_cached(
        "SELECT id, parent_id, name, kind, size, blocks, mtime_ns, dev, ino, nlink, mode, flags FROM entries WHERE id=?1",
    )?;
    let (mut found, mut gone) = (Vec::with_capacity(ids.len()), Vec::new());
    for &id in ids {
        let row = stmt.query_row([id], row_from_sql).optional()?;
        match row.map(|r| paths.row(r)).transpose()?.flatten() {
            Some(r) => found.push(r),
            None => gone.push(id),
        }
    }
    Ok((found, gone))
}

/// Every entry of the index, in one read transaction, and where the
/// journal stands for that snapshot (every batch up to it is in the snapshot, none
/// after it).
pub fn snapshot(
    conn: &Connection,
    mut f: impl FnMut(FleetRow) -> Result<(), Error>,
) -> Result<JournalState, Error> {
    let tx = conn.unchecked_transaction()?;
    let at = state(&tx)?;
    let mut paths = Paths::new(&tx);
    let mut stmt = tx.prepare(
        "SELECT id, parent_id, name, kind, size, blocks, mtime_ns, dev, ino, nlink, mode, flags FROM entries ORDER BY id",
    )?;
    let mut rows = stmt.query([])?;
    while let Some(r) = rows.next()? {
        let row = row_from_sql(r)?;
        if let Some(fr) = paths.row(row)? {
            f(fr)?;
        }
    }
    drop(rows);
    drop(stmt);
    tx.finish()?;
    Ok(at)
}

/// The folders that are the fleet's gates (not open to everyone, see
/// [`opens_to_all`]), by id: the ones whose owner the fleet keeps.
pub fn gates(conn: &Connection) -> Result<Vec<i64>, Error> {
    Ok(conn
        .prepare_cached("SELECT id FROM entries WHERE kind = 1 AND (mode & 365) <> 365")?
        .query_map([], |r| r.get(0))?
        .collect::<Result<_, _>>()?)
}

/// The batches after `seq`: how many, and when the oldest was committed
/// (unix ns).
pub fn pending_after(conn: &Connection, seq: i64) -> Result<(u64, Option<i64>), Error> {
    Ok(conn
        .prepare_cached("SELECT COUNT(*), MIN(at_ns) FROM fleet_journal WHERE seq > ?1")?
        .query_row([seq], |r| Ok((r.get::<_, i64>(0)? as u64, r.get(1)?)))?)
}
