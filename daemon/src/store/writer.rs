//! The single writer thread: every mutation of the index goes through it.
//!
//! Callers send batches of [`Op`]s through a [`WriteHandle`]; the thread
//! merges what is already queued into one transaction (bursts commit in
//! few, large transactions), applies it, keeps the per-folder aggregates
//! current as it goes ([`super::tree`]), and hands every commit's changes
//! to the [`Mirror`] right after the commit, so the in-memory name index
//! never drifts from SQLite. The mirror runs on a thread of its own, in
//! commit order, at most three commits behind; a flush returns once
//! what it waited for is committed and mirrored.
//!
//! One exception to "commit, then mirror": during a root's first index
//! ([`Op::HoldBegin`] .. [`Op::HoldEnd`]) inserted rows go to the mirror
//! first and are committed after the walk, in order, with everything sent
//! behind them ([`super::backlog`]); a flush inside that window returns
//! once the name index has what it waited for.

use std::collections::VecDeque;
use std::sync::atomic::Ordering;
use std::sync::{Arc, mpsc};

use rusqlite::{Connection, params};

use crate::Error;

use super::entries::load_row;
use super::held::HeldTree;
use super::model::{Change, Kind, Mirror, Op, Totals, pack_links};
use super::packed::PackedRows;
use super::tree::{
    Aggregates, delete_subtree, dir_totals, drop_root_entries, drop_unclaimed_roots, move_entry,
    unlisted_of,
};
use super::{Store, unix_now};
use super::{content, hashes, journal};

/// Handle to the writer thread. Dropping it (or [`Writer::close`]) flushes
/// everything sent, checkpoints the WAL and stops the thread.
pub struct Writer {
    tx: Option<mpsc::SyncSender<Vec<Op>>>,
    handle: Option<std::thread::JoinHandle<()>>,
}

impl std::fmt::Debug for Writer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Writer")
    }
}

/// A cloneable sender of change batches.
#[derive(Clone, Debug)]
pub struct WriteHandle {
    tx: mpsc::SyncSender<Vec<Op>>,
}

impl WriteHandle {
    /// Sends a batch; blocks while the writer is behind (back-pressure).
    pub fn send(&self, ops: Vec<Op>) -> Result<(), Error> {
        if ops.is_empty() {
            return Ok(());
        }
        self.tx.send(ops).map_err(|_| Error::WriterGone)
    }

    /// Waits until everything sent so far is committed.
    pub fn flush(&self) -> Result<(), Error> {
        let (tx, rx) = mpsc::channel();
        self.send(vec![Op::Barrier(tx)])?;
        rx.recv().map_err(|_| Error::WriterGone)
    }
}

impl Writer {
    pub fn handle(&self) -> WriteHandle {
        WriteHandle {
            tx: self.tx.clone().expect("writer open"),
        }
    }

    /// Flushes, checkpoints and joins the writer thread.
    pub fn close(mut self) {
        self.shutdown();
    }

    fn shutdown(&mut self) {
        // Other handles (a scan being cancelled) may still exist: stop
        // explicitly rather than waiting for every sender to go.
        if let Some(tx) = self.tx.take() {
            let _ = tx.send(vec![Op::Shutdown]);
        }
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// Starts the writer thread on `conn` (opened by [`super::open`]); `mirror`
/// is loaded before the first commit.
pub(super) fn start(
    conn: Connection,
    store: Arc<Store>,
    mirror: Box<dyn Mirror>,
    journal: bool,
) -> std::io::Result<Writer> {
    let (tx, rx) = mpsc::sync_channel::<Vec<Op>>(8);
    let handle = std::thread::Builder::new()
        .name("fsindex-writer".into())
        .spawn(move || writer_loop(conn, rx, store, mirror, journal))?;
    Ok(Writer {
        tx: Some(tx),
        handle: Some(handle),
    })
}

/// What the writer hands the mirror thread, in commit order.
enum ToMirror {
    /// One commit's changes, and the barriers to answer once they are
    /// applied (a flush means committed and mirrored).
    Commit(Vec<Change>, Vec<mpsc::Sender<()>>),
    Idle,
}

/// Commits in flight between the writer and the mirror: enough to keep
/// both busy, few enough that the name index never lags far behind.
const MIRROR_QUEUE: usize = 2;

fn writer_loop(
    mut conn: Connection,
    rx: mpsc::Receiver<Vec<Op>>,
    store: Arc<Store>,
    mut mirror: Box<dyn Mirror>,
    journal: bool,
) {
    if let Err(e) = mirror.load(&conn) {
        tracing::error!("loading the in-memory index failed: {e}");
    }
    // The name index is kept on a thread of its own, behind the commits:
    // SQLite and the name index each take one core, so the first index of a
    // large tree is bound by the slower of the two, not by their sum.
    let (to_mirror, mirror_rx) = mpsc::sync_channel::<ToMirror>(MIRROR_QUEUE);
    let mirror_thread = match std::thread::Builder::new()
        .name("fsindex-mirror".into())
        .spawn(move || mirror_loop(mirror, mirror_rx))
    {
        Ok(h) => h,
        Err(e) => {
            tracing::error!("starting the name index thread failed: {e}");
            return;
        }
    };
    // A first index's rows held back from SQLite, and what came behind
    // them, in order; each batch says whether its inserts are already in
    // the name index ([`super::backlog`]).
    let mut holding = false;
    let mut queue: VecDeque<Queued> = VecDeque::new();
    // A batch taken while merging that opens a first index: it starts the
    // next round instead.
    let mut stash: Option<Vec<Op>> = None;
    loop {
        let from_queue = !holding && !queue.is_empty();
        let (batch, mirrored) = if from_queue {
            // Whatever came meanwhile waits its turn behind the held rows.
            while let Ok(more) = rx.try_recv() {
                store.backlog.hold(more.len() as u64, 0);
                queue.push_back(Queued::Ops(more, false));
            }
            let Some(front) = queue.pop_front() else {
                continue;
            };
            let (mut batch, mirrored) = front.into_batch();
            while batch.len() < 50_000 && queue.front().is_some_and(|q| q.mirrored() == mirrored) {
                if let Some(more) = queue.pop_front() {
                    batch.extend(more.into_batch().0);
                }
            }
            (batch, mirrored)
        } else {
            let first = match stash.take() {
                Some(b) => b,
                None => match rx.recv() {
                    Ok(b) => b,
                    Err(_) => break,
                },
            };
            if holding || opens_hold(&first) {
                let ctx = (&mut conn, journal);
                if !hold(first, &mut holding, &mut queue, &to_mirror, &store, ctx) {
                    tracing::error!("the name index thread stopped");
                    break;
                }
                continue;
            }
            // Merge whatever else is already queued into the same
            // transaction, up to a bound, so bursts commit in few, large
            // transactions.
            let mut batch = first;
            while batch.len() < 50_000 {
                match rx.try_recv() {
                    Ok(more) if opens_hold(&more) => {
                        stash = Some(more);
                        break;
                    }
                    Ok(more) => batch.extend(more),
                    Err(_) => break,
                }
            }
            (batch, false)
        };
        let ops = batch.len() as u64;
        let mut acks = Vec::new();
        let stop = batch.iter().any(|op| matches!(op, Op::Shutdown));
        let idle = batch.iter().any(|op| matches!(op, Op::Idle));
        // The background workers' rows (media, content, hashes, summaries)
        // are appended in id order and need few pages each commit: the
        // cache is let go after them, so that a media pass of minutes does
        // not hold a full cache (11.7 MiB at 1M entries) the whole time.
        // Scans keep theirs, which the first index's inserts need.
        let background = batch.iter().all(|op| {
            matches!(
                op,
                Op::PutMedia(_)
                    | Op::DropMedia(_)
                    | Op::PutContent(_)
                    | Op::DropContent(_)
                    | Op::QueueContent(_)
                    | Op::PutHashes(_)
                    | Op::PutSummaries(_)
                    | Op::Barrier(_)
            )
        });
        let media = batch
            .iter()
            .any(|op| matches!(op, Op::PutMedia(_) | Op::DropMedia(_)));
        let mut changes = Vec::new();
        match apply_batch(&mut conn, batch, &mut acks, &mut changes, journal, mirrored) {
            Ok(written) => {
                // After the commit (`Engine::media_outcomes` relies on it).
                store.rows_written.fetch_add(written, Ordering::Release);
                if media {
                    store.media_writes.fetch_add(1, Ordering::Release);
                }
            }
            Err(e) => {
                tracing::error!("index write failed, batch dropped: {e}");
                super::labels::forget();
                changes.clear();
            }
        }
        if from_queue {
            store.backlog.committed(ops);
            if queue.is_empty() && !holding {
                store.backlog.end();
                tracing::info!("first index persisted");
            } else if let Some(pause) = persist_pause() {
                // Tests stop the daemon between two of these commits.
                std::thread::sleep(pause);
            }
        }
        if (!changes.is_empty() || !acks.is_empty())
            && to_mirror.send(ToMirror::Commit(changes, acks)).is_err()
        {
            tracing::error!("the name index thread stopped");
            break;
        }
        if stop {
            break;
        }
        if background && !idle {
            let _ = conn.execute_batch("PRAGMA shrink_memory");
        }
        if idle {
            if let Err(e) = conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(())) {
                tracing::warn!("WAL checkpoint failed: {e}");
            }
            let _ = conn.execute_batch("PRAGMA shrink_memory");
            let _ = to_mirror.send(ToMirror::Idle);
        }
    }
    // Whoever waits for the held rows must not wait forever on a writer
    // that stopped; the next start's scan finishes what is missing.
    store.backlog.end();
    // Asked to stop, or every sender is gone: shut down cleanly.
    drop(to_mirror);
    let _ = mirror_thread.join();
    if let Err(e) = conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(())) {
        tracing::warn!("WAL checkpoint at shutdown failed: {e}");
    }
    tracing::info!("writer stopped");
}

/// `FSINDEX_PERSIST_PAUSE_MS`: a pause after each commit of a held first
/// index but the last, so that a test can kill the daemon between *ready*
/// and *persisted* with part of the rows in SQLite. Unset: none.
fn persist_pause() -> Option<std::time::Duration> {
    static PAUSE: std::sync::OnceLock<Option<std::time::Duration>> = std::sync::OnceLock::new();
    *PAUSE.get_or_init(|| {
        std::env::var("FSINDEX_PERSIST_PAUSE_MS")
            .ok()
            .and_then(|v| v.parse().ok())
            .map(std::time::Duration::from_millis)
    })
}

/// Inserted rows packed into one piece of the held queue at most: a
/// commit's worth, so the queue is given back piece by piece as it is
/// written.
const PACKED_CHUNK: usize = 50_000;

/// One piece of what waits for SQLite during and after a first index's
/// walk, in order.
enum Queued {
    /// A batch as it came, and whether its inserts are in the name index.
    Ops(Vec<Op>, bool),
    /// The first index's inserted rows, packed; in the name index already.
    Rows(PackedRows),
}

impl Queued {
    fn mirrored(&self) -> bool {
        match self {
            Queued::Ops(_, m) => *m,
            Queued::Rows(_) => true,
        }
    }

    fn into_batch(self) -> (Vec<Op>, bool) {
        match self {
            Queued::Ops(ops, m) => (ops, m),
            Queued::Rows(rows) => (rows.into_ops(), true),
        }
    }
}

/// Whether a batch opens a first index's window ([`Op::HoldBegin`]).
fn opens_hold(batch: &[Op]) -> bool {
    batch.iter().any(|op| matches!(op, Op::HoldBegin { .. }))
}

/// Takes one batch while a first index's rows are held back (or opens the
/// window): inserted rows go to the name index now, barriers are answered
/// once it has them, and the batch joins the queue for SQLite, in order.
/// False when the name index's thread is gone.
fn hold(
    batch: Vec<Op>,
    holding: &mut bool,
    queue: &mut VecDeque<Queued>,
    to_mirror: &mpsc::SyncSender<ToMirror>,
    store: &Store,
    (conn, journal): (&mut Connection, bool),
) -> bool {
    let mirrored = *holding;
    let mut changes = Vec::new();
    let mut acks = Vec::new();
    let mut kept = Vec::new();
    // A user's search history and saved searches touch no entry: written
    // now, so a client recording a search does not wait for the held rows.
    let mut now = Vec::new();
    let mut entries = 0u64;
    let mut ops = 0u64;
    for op in batch {
        match op {
            Op::HoldBegin { root_id, first_id } => {
                store.backlog.begin(root_id, first_id);
                *holding = true;
            }
            Op::HoldEnd | Op::Shutdown => {
                store.backlog.walked();
                // Shutting down: what is held is committed before it stops.
                *holding = false;
                if matches!(op, Op::Shutdown) {
                    kept.push(op);
                }
            }
            Op::Barrier(ack) if mirrored => acks.push(ack),
            op @ Op::Searches { .. } if mirrored => now.push(op),
            Op::Insert(row) if mirrored => {
                // Packed for SQLite, and the row itself to the name index.
                if !kept.is_empty() {
                    ops += kept.len() as u64;
                    queue.push_back(Queued::Ops(std::mem::take(&mut kept), true));
                }
                match queue.back_mut() {
                    Some(Queued::Rows(rows)) if rows.len() < PACKED_CHUNK => rows.push(&row),
                    _ => {
                        let mut rows = PackedRows::default();
                        rows.push(&row);
                        if let Some(Queued::Rows(full)) = queue.back_mut() {
                            full.shrink();
                        }
                        queue.push_back(Queued::Rows(rows));
                    }
                }
                store.backlog.tree(|t| t.insert(&row));
                changes.push(Change::Upsert(row));
                entries += 1;
                ops += 1;
            }
            Op::SetUnlisted { dir, rows } if mirrored => {
                store.backlog.tree(|t| t.set_unlisted(dir, &rows));
                kept.push(Op::SetUnlisted { dir, rows });
            }
            op @ (Op::RootScanned { .. } | Op::Idle) => kept.push(op),
            other => {
                if mirrored {
                    // Not a first index's walk: `du` waits for SQLite.
                    store.backlog.tree(HeldTree::lose);
                }
                kept.push(other)
            }
        }
    }
    if !now.is_empty()
        && let Err(e) = apply_batch(conn, now, &mut Vec::new(), &mut Vec::new(), journal, false)
    {
        tracing::error!("index write failed, batch dropped: {e}");
    }
    // The walk's threads take ids one by one as they list their folders,
    // so one batch holds several folders' runs of ids interleaved. The
    // name index takes an id past its end at the end of its arrays, but an
    // id below (a hole left for it) only in a side table, name copied, until
    // it is compacted: in id order (parents before children, as ever),
    // nearly every row lands in place.
    changes.sort_by_key(|c| match c {
        Change::Upsert(row) => row.id,
        _ => i64::MAX,
    });
    if (!changes.is_empty() || !acks.is_empty())
        && to_mirror.send(ToMirror::Commit(changes, acks)).is_err()
    {
        return false;
    }
    // The walk is over: the name index grew by doubling its arrays as the
    // rows came; they are cut to size now, not after persisted (14 MiB at
    // 1M entries, at ready), and what the walk freed is given back.
    if mirrored && !*holding && to_mirror.send(ToMirror::Idle).is_err() {
        return false;
    }
    if !kept.is_empty() {
        ops += kept.len() as u64;
        queue.push_back(Queued::Ops(kept, mirrored));
    }
    store.backlog.hold(ops, entries);
    if !*holding && queue.is_empty() {
        store.backlog.end();
    }
    true
}

/// Applies each commit to the mirror in commit order, then answers the
/// barriers that came with it.
fn mirror_loop(mut mirror: Box<dyn Mirror>, rx: mpsc::Receiver<ToMirror>) {
    while let Ok(msg) = rx.recv() {
        match msg {
            ToMirror::Commit(changes, acks) => {
                if !changes.is_empty() {
                    mirror.apply(changes);
                }
                for ack in acks {
                    let _ = ack.send(());
                }
            }
            ToMirror::Idle => {
                mirror.idle();
                crate::platform::process::release_memory();
            }
        }
    }
}

/// Applies one batch in one transaction; returns the entry rows written.
/// With `journal` on, the ids it touched are recorded in the fleet's
/// journal in the same transaction.
fn apply_batch(
    conn: &mut Connection,
    batch: Vec<Op>,
    acks: &mut Vec<mpsc::Sender<()>>,
    changes: &mut Vec<Change>,
    journal: bool,
    mirrored: bool,
) -> Result<u64, Error> {
    let tx = conn.transaction()?;
    let mut written = 0u64;
    // Answered only after the commit, so the new root is visible to readers.
    let mut added_roots: Vec<(mpsc::Sender<Result<i64, Error>>, i64)> = Vec::new();
    let mut labelled: Vec<(mpsc::Sender<super::labels::Outcome>, super::labels::Outcome)> =
        Vec::new();
    let mut searched: Vec<(
        mpsc::Sender<super::searches::Outcome>,
        super::searches::Outcome,
    )> = Vec::new();
    {
        let mut agg = Aggregates::default();
        let mut insert = tx.prepare_cached(
            "INSERT INTO entries (id, parent_id, name, kind, size, blocks, mtime_ns, dev, ino, nlink, mode, flags)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
        )?;
        let mut update = tx.prepare_cached(
            "UPDATE entries SET size=?2, blocks=?3, mtime_ns=?4, dev=?5, ino=?6, nlink=?7, mode=?8, flags=?9 WHERE id=?1",
        )?;
        let mut insert_totals =
            tx.prepare_cached("INSERT INTO dir_totals VALUES (?1, ?2, ?3, ?4, ?5, ?6)")?;
        for op in batch {
            match op {
                Op::Insert(row) => {
                    insert.execute(params![
                        row.id,
                        row.parent_id,
                        row.name,
                        row.kind as u8,
                        row.size as i64,
                        row.blocks as i64,
                        row.mtime_ns,
                        row.dev as i64,
                        row.ino as i64,
                        row.nlink as i64,
                        row.mode,
                        row.flags
                    ])?;
                    let c = row.contribution();
                    if row.kind == Kind::Dir {
                        insert_totals.execute(params![
                            row.id,
                            c.bytes,
                            c.apparent,
                            c.files,
                            c.dirs,
                            c.incomplete
                        ])?;
                        agg.parents.insert(row.id, row.parent_id);
                    }
                    if let Some(p) = row.parent_id {
                        agg.add(p, c);
                    }
                    super::labels::arrived(&tx, &row)?;
                    written += 1;
                    if mirrored {
                        // In the name index already (a first index's row
                        // held back): only the fleet's journal is told.
                        if journal {
                            agg.touched.push(row.id);
                        }
                    } else {
                        changes.push(Change::Upsert(row));
                    }
                }
                Op::Update(mut row) => {
                    let Some(old) = load_row(&tx, row.id)? else {
                        continue;
                    };
                    update.execute(params![
                        row.id,
                        row.size as i64,
                        row.blocks as i64,
                        row.mtime_ns,
                        row.dev as i64,
                        row.ino as i64,
                        row.nlink as i64,
                        row.mode,
                        row.flags
                    ])?;
                    let mut delta = row.contribution();
                    delta.add(old.contribution().neg());
                    if !delta.is_zero() {
                        if row.kind == Kind::Dir {
                            agg.add(row.id, delta);
                        } else if let Some(p) = old.parent_id {
                            agg.add(p, delta);
                        }
                    }
                    if journal
                        && row.kind == Kind::Dir
                        && journal::opens_to_all(row.mode) != journal::opens_to_all(old.mode)
                    {
                        // The folder became a gate of the fleet's visibility,
                        // or stopped being one: what is below it changes gate.
                        agg.touched.extend(super::tree::subtree_ids(&tx, row.id)?);
                    }
                    written += 1;
                    // Name and place are the stored ones: an update never moves.
                    row.parent_id = old.parent_id;
                    row.name = old.name;
                    changes.push(Change::Upsert(row));
                }
                Op::Move {
                    id,
                    parent_id,
                    name,
                } => {
                    agg.apply(&tx)?;
                    let from = if journal { load_row(&tx, id)? } else { None };
                    written += move_entry(&tx, id, parent_id, name, &mut agg, changes)?;
                    if let Some(old) = from {
                        // Its own row, and what below it the fleet keeps
                        // paths or gates of (see `journal::moved`).
                        agg.touched.extend(journal::moved(&tx, &old, parent_id)?);
                    }
                }
                Op::Delete { id } => {
                    // The subtree's totals must include everything pending.
                    agg.apply(&tx)?;
                    written += delete_subtree(&tx, id, &mut agg, changes)?;
                }
                Op::SetUnlisted { dir, rows } => {
                    if dir_totals(&tx, dir)?.is_none() {
                        continue; // the folder is gone
                    }
                    let mut delta = Totals::default();
                    for u in unlisted_of(&tx, dir)? {
                        delta.add(u.totals.neg());
                    }
                    tx.execute("DELETE FROM unlisted WHERE parent_id=?1", [dir])?;
                    let mut put = tx.prepare_cached(
                        "INSERT OR REPLACE INTO unlisted (parent_id, name, bytes, apparent, files, dirs, incomplete, measured_at, links)
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                    )?;
                    for u in rows {
                        let t = u.totals;
                        put.execute(params![
                            dir,
                            u.name,
                            t.bytes,
                            t.apparent,
                            t.files,
                            t.dirs,
                            t.incomplete,
                            u.measured_at,
                            pack_links(&u.links)
                        ])?;
                        delta.add(t);
                    }
                    if !delta.is_zero() {
                        agg.add(dir, delta);
                    }
                }
                Op::RootScanned {
                    root_id,
                    entry_id,
                    at,
                } => {
                    tx.execute(
                        "UPDATE roots SET entry_id=?2, scanned_at=?3 WHERE id=?1",
                        params![root_id, entry_id, at],
                    )?;
                    written += drop_unclaimed_roots(&tx, root_id, &mut agg, changes)?;
                }
                Op::AddRoot { path, reply } => {
                    tx.execute(
                        "INSERT INTO roots (path, added_at) VALUES (?1, ?2)",
                        params![path, unix_now()],
                    )?;
                    added_roots.push((reply, tx.last_insert_rowid()));
                }
                Op::RemoveRoot { root_id } => {
                    written += drop_root_entries(&tx, root_id, &mut agg, changes)?;
                    tx.execute("DELETE FROM roots WHERE id=?1", [root_id])?;
                }
                Op::RootGone { root_id } => {
                    // The root stays, to be scanned anew when it is back.
                    written += drop_root_entries(&tx, root_id, &mut agg, changes)?;
                    tx.execute(
                        "UPDATE roots SET entry_id=NULL, scanned_at=0 WHERE id=?1",
                        [root_id],
                    )?;
                }
                Op::PutHashes(rows) => hashes::put(&tx, &rows)?,
                Op::PutContent(rows) => {
                    for row in &rows {
                        content::put(&tx, row)?;
                    }
                    // A file's text changed: the fleet's copy of it too
                    // (shipped only with `[fleet] content = true`).
                    if journal {
                        agg.touched.extend(rows.iter().map(|r| r.entry_id));
                    }
                }
                Op::QueueContent(ids) => content::queue(&tx, &ids)?,
                Op::DropContent(ids) => {
                    content::drop(&tx, &ids)?;
                    if journal {
                        agg.touched.extend_from_slice(&ids);
                    }
                }
                Op::PutMedia(rows) => {
                    for row in &rows {
                        super::media::put(&tx, row)?;
                    }
                }
                Op::DropMedia(ids) => super::media::drop(&tx, &ids)?,
                Op::PutSummaries(rows) => super::summaries::put(&tx, &rows)?,
                Op::SetRootContent { root_id, on } => {
                    tx.execute(
                        "UPDATE roots SET content=?2 WHERE id=?1",
                        params![root_id, on],
                    )?;
                }
                Op::Barrier(ack) => acks.push(ack),
                Op::FleetAcked(seq) => journal::prune(&tx, seq)?,
                Op::Labels { edit, reply } => {
                    labelled.push((reply, super::labels::apply(&tx, edit)?));
                }
                Op::Searches { edit, reply } => {
                    searched.push((reply, super::searches::apply(&tx, edit)?));
                }
                Op::Shutdown | Op::Idle | Op::HoldBegin { .. } | Op::HoldEnd => {}
            }
        }
        agg.apply(&tx)?;
        if journal {
            journal::append(&tx, touched_ids(changes, std::mem::take(&mut agg.touched)))?;
        }
    }
    tx.commit()?;
    for (reply, id) in added_roots {
        let _ = reply.send(Ok(id));
    }
    for (reply, outcome) in labelled {
        let _ = reply.send(outcome);
    }
    for (reply, outcome) in searched {
        let _ = reply.send(outcome);
    }
    Ok(written)
}

/// The entry ids a batch's changes touched, for the fleet journal: rows
/// written or removed, moved entries (what below them changed was added
/// with [`journal::moved`]), and the folders whose totals changed.
fn touched_ids(changes: &[Change], mut ids: Vec<i64>) -> Vec<i64> {
    for c in changes {
        match c {
            Change::Upsert(row) => ids.push(row.id),
            Change::Removed(gone) => ids.extend_from_slice(gone),
            Change::Moved { id, .. } => ids.push(*id),
        }
    }
    ids
}
