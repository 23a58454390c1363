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

/// The entry ids that cut the index, in id order, into `parts` runs of
/// about equal name bytes (at most `parts - 1` of them, rising; none for an
/// index too small to cut): a bulk load's parts, each of which PostgreSQL
/// indexes on a connection of its own. Cut by name bytes, not rows, since
/// the names' trigram index costs by the trigrams (measured: the first and
/// second half of a 1M-entry tree by rows, 14 and 23 bytes a name, took
/// 3.7 s and 8.8 s).
pub fn load_splits(conn: &Connection, parts: usize) -> Result<Vec<i64>, Error> {
    let mut stmt =
        conn.prepare("SELECT id, length(CAST(name AS BLOB)) + 2 FROM entries ORDER BY id")?;
    // Every `step`th row's id and the bytes before it: a cumulative sum,
    // coarser as the index is larger (at most 8,192 marks), that the cuts
    // are taken from.
    let mut marks: Vec<(i64, u64)> = Vec::new();
    let (mut total, mut n, mut step) = (0u64, 0u64, 1u64);
    let mut rows = stmt.query([])?;
    while let Some(r) = rows.next()? {
        let (id, len): (i64, i64) = (r.get(0)?, r.get(1)?);
        if n % step == 0 {
            if marks.len() == 8192 {
                marks = marks.into_iter().step_by(2).collect();
                step *= 2;
            }
            if n % step == 0 {
                marks.push((id, total));
            }
        }
        total += len.max(0) as u64;
        n += 1;
    }
    let mut cuts = Vec::new();
    for p in 1..parts.max(1) {
        let want = total * p as u64 / parts as u64;
        if let Some(&(id, _)) = marks.iter().find(|&&(_, before)| before >= want)
            && marks.first().is_some_and(|&(first, _)| id > first)
            && cuts.last().is_none_or(|&last| id > last)
        {
            cuts.push(id);
        }
    }
    Ok(cuts)
}

/// The folders that are the fleet's gates (not open to everyone, see
/// [`opens_to_all`]), by id: the ones whose owner the fleet keeps.
pub fn gates(conn: &Connection) -> Result<Vec<i64>, Error> {
    Ok(conn
        .prepare_cached("SELECT id FROM entries WHERE kind = 1 AND (mode & 365) <> 365")?
        .query_map([], |r| r.get(0))?
        .collect::<Result<_, _>>()?)
}

/// The nearest gate at or above folder `id` (itself if it is one), 0 when
/// none: the gate of what is inside it.
fn gate_within(conn: &Connection, mut id: i64) -> Result<i64, Error> {
    let mut up = conn.prepare_cached("SELECT parent_id, mode FROM entries WHERE id=?1")?;
    for _ in 0..100_000 {
        let Some((parent, mode)) = up
            .query_row([id], |r| {
                Ok((r.get::<_, Option<i64>>(0)?, r.get::<_, u32>(1)?))
            })
            .optional()?
        else {
            return Ok(0);
        };
        if !opens_to_all(mode) {
            return Ok(id);
        }
        match parent {
            Some(p) => id = p,
            None => return Ok(0),
        }
    }
    Ok(0)
}

/// What the fleet must ship again when entry `old` (its row before the
/// move) has moved into folder `to`: the entry itself and, for a folder,
/// the folders below it (the fleet keeps a path per folder, not per
/// entry: schema 3). Every entry below it only when it moved to where
/// another gate decides who sees it (rows carry their gate).
pub(super) fn moved(conn: &Connection, old: &EntryRow, to: i64) -> Result<Vec<i64>, Error> {
    let mut ids = vec![old.id];
    if old.kind != Kind::Dir {
        return Ok(ids);
    }
    let same_gate = match old.parent_id {
        Some(from) => from == to || gate_within(conn, from)? == gate_within(conn, to)?,
        None => false,
    };
    if !same_gate {
        ids.extend(super::tree::subtree_ids(conn, old.id)?);
        return Ok(ids);
    }
    let mut stmt = conn.prepare_cached(
        "WITH RECURSIVE sub(id) AS (SELECT id FROM entries WHERE parent_id = ?1 AND kind = 1
           UNION ALL SELECT e.id FROM entries e JOIN sub ON e.parent_id = sub.id WHERE e.kind = 1)
         SELECT id FROM sub",
    )?;
    let below = stmt.query_map([old.id], |r| r.get::<_, i64>(0))?;
    for id in below {
        ids.push(id?);
    }
    Ok(ids)
}

/// The batches after `seq`: how many, and when the oldest was committed
/// (unix ns).
pub fn pending_after(conn: &Connection, seq: i64) -> Result<(u64, Option<i64>), Error> {
    Ok(conn
        .prepare_cached("SELECT COUNT(*), MIN(at_ns) FROM fleet_journal WHERE seq > ?1")?
        .query_row([seq], |r| Ok((r.get::<_, i64>(0)? as u64, r.get(1)?)))?)
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};
    use std::sync::mpsc;

    use super::*;
    use crate::store::{Change, Mirror, Op, Store, WriteHandle};

    struct NoMirror;
    impl Mirror for NoMirror {
        fn load(&mut self, _: &Connection) -> Result<(), Error> {
            Ok(())
        }
        fn apply(&mut self, _: Vec<Change>) {}
    }

    fn entry(id: i64, parent_id: Option<i64>, name: &[u8], kind: Kind, mode: u32) -> EntryRow {
        EntryRow {
            id,
            parent_id,
            name: name.to_vec(),
            kind,
            size: 10,
            blocks: 8,
            mtime_ns: 1,
            dev: 1,
            ino: id as u64,
            nlink: 1,
            mode,
            flags: 0,
        }
    }
    fn dir(id: i64, parent: Option<i64>, name: &str, mode: u32) -> EntryRow {
        entry(id, parent, name.as_bytes(), Kind::Dir, 0o040000 | mode)
    }
    fn file(id: i64, parent: i64, name: &str) -> EntryRow {
        entry(id, Some(parent), name.as_bytes(), Kind::File, 0o100600)
    }

    fn commit(w: &WriteHandle, mut ops: Vec<Op>) {
        let (tx, rx) = mpsc::channel();
        ops.push(Op::Barrier(tx));
        w.send(ops).unwrap();
        rx.recv().unwrap();
    }

    fn gates_of(store: &Store) -> BTreeMap<i64, i64> {
        let mut m = BTreeMap::new();
        store
            .read(|c| {
                snapshot(c, |r| {
                    m.insert(r.row.id, r.gate);
                    Ok(())
                })
            })
            .unwrap();
        m
    }

    /// The ids journaled since `seq`.
    fn journaled(store: &Store, seq: i64) -> BTreeSet<i64> {
        store
            .read(|c| batches_after(c, seq, 1_000_000))
            .unwrap()
            .into_iter()
            .flat_map(|b| b.ids)
            .collect()
    }

    #[test]
    fn rows_carry_the_nearest_folder_above_them_not_open_to_all() {
        let t = tempfile::tempdir().unwrap();
        let (store, writer) =
            Store::open_with(&t.path().join("index.db"), Box::new(NoMirror), true).unwrap();
        let w = writer.handle();
        // /r (0755) / a (0700) / b (0755) / f;  /r / c (0750) / g;  /r / h
        commit(
            &w,
            vec![
                Op::Insert(dir(1, None, "/r", 0o755)),
                Op::Insert(dir(2, Some(1), "a", 0o700)),
                Op::Insert(dir(3, Some(2), "b", 0o755)),
                Op::Insert(file(4, 3, "f")),
                Op::Insert(dir(5, Some(1), "c", 0o750)),
                Op::Insert(file(6, 5, "g")),
                Op::Insert(file(7, 1, "h")),
            ],
        );
        let want: BTreeMap<i64, i64> =
            [(1, 0), (2, 0), (3, 2), (4, 2), (5, 0), (6, 5), (7, 0)].into();
        assert_eq!(gates_of(&store), want);
        assert_eq!(store.read(gates).unwrap(), vec![2, 5]);

        // a opens to all and b closes: what is below each changes gate,
        // and is journaled to ship again.
        let seq = store.read(state).unwrap().last;
        commit(
            &w,
            vec![
                Op::Update(dir(2, Some(1), "a", 0o755)),
                Op::Update(dir(3, Some(2), "b", 0o711)),
            ],
        );
        let ids = journaled(&store, seq);
        assert!(ids.is_superset(&[2, 3, 4].into()), "{ids:?}");
        let g = gates_of(&store);
        assert_eq!((g[&3], g[&4]), (0, 3));

        // A chmod that leaves a folder a gate (0750 -> 0700) changes no
        // gate below it: only the folder itself is journaled.
        let seq = store.read(state).unwrap().last;
        commit(&w, vec![Op::Update(dir(5, Some(1), "c", 0o700))]);
        let ids = journaled(&store, seq);
        assert!(ids.contains(&5) && !ids.contains(&6), "{ids:?}");
        drop(w);
        drop(writer);
    }

    #[test]
    fn a_folder_moved_journals_its_folders_not_its_files_unless_its_gate_changes() {
        let t = tempfile::tempdir().unwrap();
        let (store, writer) =
            Store::open_with(&t.path().join("index.db"), Box::new(NoMirror), true).unwrap();
        let w = writer.handle();
        // /r (0755) / a (0755) / b (0755) / f;  a / g;  /r / c (0700)
        commit(
            &w,
            vec![
                Op::Insert(dir(1, None, "/r", 0o755)),
                Op::Insert(dir(2, Some(1), "a", 0o755)),
                Op::Insert(dir(3, Some(2), "b", 0o755)),
                Op::Insert(file(4, 3, "f")),
                Op::Insert(file(5, 2, "g")),
                Op::Insert(dir(6, Some(1), "c", 0o700)),
            ],
        );
        // Renamed in place: the folder and the folder below it, not the files.
        let seq = store.read(state).unwrap().last;
        commit(
            &w,
            vec![Op::Move {
                id: 2,
                parent_id: 1,
                name: b"a2".to_vec(),
            }],
        );
        let ids = journaled(&store, seq);
        assert!(ids.is_superset(&[2, 3].into()), "{ids:?}");
        assert!(!ids.contains(&4) && !ids.contains(&5), "{ids:?}");
        // Into the gate c: every row below it has a new gate.
        let seq = store.read(state).unwrap().last;
        commit(
            &w,
            vec![Op::Move {
                id: 2,
                parent_id: 6,
                name: b"a".to_vec(),
            }],
        );
        let ids = journaled(&store, seq);
        assert!(ids.is_superset(&[2, 3, 4, 5].into()), "{ids:?}");
        assert_eq!(gates_of(&store)[&4], 6);
        drop(w);
        drop(writer);
    }

    /// The cuts split the names' bytes (each name's length plus 2, as
    /// trigrams pad it) evenly, not the rows: 500 names of 10 bytes then
    /// 500 of 30 are cut in two where 11,000 bytes are passed, at the 158th
    /// long name; an index of one entry, or one part, is not cut.
    #[test]
    fn load_splits_cut_by_name_bytes() {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch("CREATE TABLE entries (id INTEGER PRIMARY KEY, name BLOB)")
            .unwrap();
        assert_eq!(load_splits(&conn, 2).unwrap(), Vec::<i64>::new());
        conn.execute("INSERT INTO entries VALUES (1, x'41')", [])
            .unwrap();
        assert_eq!(load_splits(&conn, 2).unwrap(), Vec::<i64>::new());
        for id in 2..=1000i64 {
            let len = if id <= 500 { 10 } else { 30 };
            conn.execute(
                "INSERT INTO entries VALUES (?1, ?2)",
                params![id * 3, vec![b'a'; len]],
            )
            .unwrap();
        }
        conn.execute("UPDATE entries SET name = zeroblob(10) WHERE id = 1", [])
            .unwrap();
        // Bytes before the 501st row: 500 * 12; half of all: 11,000.
        let cut = load_splits(&conn, 2).unwrap();
        assert_eq!(cut, vec![(500 + 158) * 3]);
        let three = load_splits(&conn, 3).unwrap();
        assert_eq!(three.len(), 2);
        assert!(three[0] < three[1]);
        assert_eq!(load_splits(&conn, 1).unwrap(), Vec::<i64>::new());
    }
}
