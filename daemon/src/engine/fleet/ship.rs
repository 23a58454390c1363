//! The link's statements in PostgreSQL: the host's `(epoch, seq)`, a
//! journal run applied in one transaction, and the load of a whole
//! snapshot into tables of the host's own, swapped in as its partition
//! (fleet schema 5). Rows go in by binary `COPY`: an entry's row into
//! `fsindex.items` (its name, not its path), and a folder's place (its
//! path) into `fsindex.folders` too (fleet schema 3).

use std::pin::pin;
use std::sync::Arc;

use tokio_postgres::binary_copy::BinaryCopyInWriter;
use tokio_postgres::types::{ToSql, Type};
use tokio_postgres::{Client, Transaction};

use crate::LockOk;
use crate::index::fold::fold_bytes;
use crate::store::Store;
use crate::store::journal::{self, FleetRow, JournalBatch, opens_to_all};

use super::SCHEMA_VERSION;

/// How many parts a bulk load cuts the host's items into (fleet schema 7):
/// each is indexed on a connection of its own as soon as it is copied,
/// the first while the next is copied. Two, for the two connections a load
/// holds.
const LOAD_PARTS: usize = 2;

/// The columns of `fsindex.items` (schema 3), in `COPY` order, and their
/// types.
const ITEM_COLUMNS: &str = "host, id, parent_id, name, raw, folded, kind, size, blocks, \
     mtime_ns, dev, ino, nlink, mode, flags, t_bytes, t_apparent, t_files, t_dirs, t_incomplete, hash, \
     uid, gid, gate";
const ITEM_TYPES: &[Type] = &[
    Type::TEXT,
    Type::INT8,
    Type::INT8,
    Type::TEXT,
    Type::BYTEA,
    Type::TEXT,
    Type::INT2,
    Type::INT8,
    Type::INT8,
    Type::INT8,
    Type::INT8,
    Type::INT8,
    Type::INT8,
    Type::INT4,
    Type::INT4,
    Type::INT8,
    Type::INT8,
    Type::INT8,
    Type::INT8,
    Type::INT8,
    Type::BYTEA,
    Type::INT8,
    Type::INT8,
    Type::INT8,
];

/// The columns of `fsindex.folders`, in `COPY` order, and their types.
const FOLDER_COLUMNS: &str = "host, id, gate, root, path, folded, rel";
const FOLDER_TYPES: &[Type] = &[
    Type::TEXT,
    Type::INT8,
    Type::INT8,
    Type::TEXT,
    Type::TEXT,
    Type::TEXT,
    Type::BYTEA,
];

/// A database error in one line: PostgreSQL's own message where it sent
/// one (a wrong password: "password authentication failed for user ..."),
/// else the client's ("error connecting to server: Connection refused").
pub(super) fn describe(e: &tokio_postgres::Error) -> String {
    if let Some(db) = e.as_db_error() {
        return format!("{}: {}", db.severity(), db.message());
    }
    let mut msg = e.to_string();
    let mut src = std::error::Error::source(e);
    while let Some(s) = src {
        let more = s.to_string();
        if !msg.contains(&more) {
            msg = format!("{msg}: {more}");
        }
        src = s.source();
    }
    msg
}

/// Fails unless `fsctl fleet init` made the schema this daemon writes.
pub(super) async fn check_schema(client: &Client) -> Result<(), String> {
    let row = client
        .query_opt(
            "SELECT MAX(version) FROM fsindex.schema_version WHERE to_regclass('fsindex.schema_version') IS NOT NULL",
            &[],
        )
        .await;
    let version: Option<i32> = match row {
        Ok(r) => r.and_then(|r| r.get(0)),
        Err(e) if e.code() == Some(&tokio_postgres::error::SqlState::UNDEFINED_TABLE) => None,
        Err(e) if e.code() == Some(&tokio_postgres::error::SqlState::INVALID_SCHEMA_NAME) => None,
        Err(e) => return Err(describe(&e)),
    };
    match version {
        None => Err("the database has no fleet schema: run `fsctl fleet init`".into()),
        Some(v) if v < SCHEMA_VERSION => Err(format!(
            "the fleet schema is at version {v}, this daemon needs {SCHEMA_VERSION}: run `fsctl fleet init`"
        )),
        Some(_) => Ok(()),
    }
}

/// The host's `(epoch, seq)` in PostgreSQL, if it has shipped before.
pub(super) async fn host_state(
    client: &Client,
    host: &str,
) -> Result<Option<(i64, i64)>, tokio_postgres::Error> {
    Ok(client
        .query_opt(
            "SELECT epoch, seq FROM fsindex.hosts WHERE host = $1",
            &[&host],
        )
        .await?
        .map(|r| (r.get(0), r.get(1))))
}

/// Display form of a path as bytes.
fn lossy(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A folder's row of `fsindex.folders`: its place, kept apart while its
/// entries' rows are copied (one `COPY` at a time on a connection).
struct FolderRow {
    id: i64,
    gate: i64,
    root: String,
    path: String,
    folded: String,
    rel: Vec<u8>,
}

/// Writes rows by `COPY ... FROM STDIN BINARY`: every entry's row into
/// `items`, then the folders' places into `folders`. Returns the entry
/// rows written.
async fn copy_rows(
    tx: &Transaction<'_>,
    (items, folders): (&str, &str),
    host: &str,
    rows: tokio::sync::mpsc::Receiver<Vec<FleetRow>>,
) -> Result<u64, tokio_postgres::Error> {
    let mut feed = Feed::new(rows);
    let mut places = Vec::new();
    let written = copy_items(tx, items, host, &mut feed, (false, None), &mut places).await?;
    copy_folders(tx, folders, host, &places).await?;
    Ok(written)
}

/// Rows as the reader sends them, in chunks, with what is left of a chunk
/// cut at a part's bound (see [`copy_items`]); the time spent waiting for
/// the reader is counted (the load's log says it).
struct Feed {
    rx: tokio::sync::mpsc::Receiver<Vec<FleetRow>>,
    left: std::collections::VecDeque<FleetRow>,
    waited: std::time::Duration,
}

impl Feed {
    fn new(rx: tokio::sync::mpsc::Receiver<Vec<FleetRow>>) -> Self {
        Feed {
            rx,
            left: std::collections::VecDeque::new(),
            waited: std::time::Duration::ZERO,
        }
    }

    /// The next rows, `None` once the reader is done.
    async fn next(&mut self) -> Option<std::collections::VecDeque<FleetRow>> {
        if !self.left.is_empty() {
            return Some(std::mem::take(&mut self.left));
        }
        let t = std::time::Instant::now();
        let chunk = self.rx.recv().await;
        self.waited += t.elapsed();
        chunk.map(Into::into)
    }
}

/// Writes the entries' rows into `items` by binary `COPY` (with `FREEZE`
/// for a load's part, whose table this transaction made), all of them or,
/// with `until`, those before that id (rows come in id order; the rest
/// stay in the feed). Returns the rows written; the places of the
/// folders among them are added to `places` (one `COPY` at a time on a
/// connection: they go in after, see [`copy_folders`]).
async fn copy_items(
    tx: &Transaction<'_>,
    items: &str,
    host: &str,
    feed: &mut Feed,
    (freeze, until): (bool, Option<i64>),
    folders: &mut Vec<FolderRow>,
) -> Result<u64, tokio_postgres::Error> {
    let freeze = if freeze { ", FREEZE" } else { "" };
    let sink = tx
        .copy_in(&format!(
            "COPY {items} ({ITEM_COLUMNS}) FROM STDIN (FORMAT binary{freeze})"
        ))
        .await?;
    let mut writer = pin!(BinaryCopyInWriter::new(sink, ITEM_TYPES));
    'feed: while let Some(mut chunk) = feed.next().await {
        while let Some(r) = chunk.pop_front() {
            if until.is_some_and(|end| r.row.id >= end) {
                chunk.push_front(r);
                feed.left = chunk;
                break 'feed;
            }
            let e = &r.row;
            let (name, raw) = match std::str::from_utf8(&e.name) {
                Ok(s) => (s.to_owned(), None),
                Err(_) => (lossy(&e.name), Some(e.name.as_slice())),
            };
            // A root's own row: its path is its name, its folded form the
            // empty relative path.
            let folded = if e.parent_id.is_none() {
                String::new()
            } else {
                lossy(&fold_bytes(&e.name))
            };
            let (kind, size, blocks) = (e.kind as u8 as i16, e.size as i64, e.blocks as i64);
            let (dev, ino, nlink) = (e.dev as i64, e.ino as i64, e.nlink as i64);
            let (mode, flags) = (e.mode as i32, e.flags as i32);
            let t = r.totals;
            let (tb, ta, tf, td, ti) = (
                t.map(|t| t.bytes),
                t.map(|t| t.apparent),
                t.map(|t| t.files),
                t.map(|t| t.dirs),
                t.map(|t| t.incomplete),
            );
            let is_dir = e.kind == crate::store::Kind::Dir;
            // A gate's owner and group (see `owner_of`).
            let (uid, gid) = if is_dir && !opens_to_all(e.mode) {
                owner_of(&full_path(&r))
            } else {
                (None, None)
            };
            let values: [&(dyn ToSql + Sync); 24] = [
                &host,
                &e.id,
                &e.parent_id,
                &name,
                &raw,
                &folded,
                &kind,
                &size,
                &blocks,
                &e.mtime_ns,
                &dev,
                &ino,
                &nlink,
                &mode,
                &flags,
                &tb,
                &ta,
                &tf,
                &td,
                &ti,
                &r.hash,
                &uid,
                &gid,
                &r.gate,
            ];
            writer.as_mut().write(&values).await?;
            if is_dir {
                folders.push(FolderRow {
                    id: e.id,
                    gate: r.gate,
                    root: lossy(&r.root),
                    path: lossy(&full_path(&r)),
                    folded: lossy(&fold_bytes(&r.rel)),
                    rel: r.rel,
                });
            }
        }
    }
    writer.finish().await
}

/// Writes folders' places into `folders` by binary `COPY`.
async fn copy_folders(
    tx: &Transaction<'_>,
    folders: &str,
    host: &str,
    places: &[FolderRow],
) -> Result<(), tokio_postgres::Error> {
    let sink = tx
        .copy_in(&format!(
            "COPY {folders} ({FOLDER_COLUMNS}) FROM STDIN BINARY"
        ))
        .await?;
    let mut writer = pin!(BinaryCopyInWriter::new(sink, FOLDER_TYPES));
    for f in places {
        let values: [&(dyn ToSql + Sync); 7] =
            [&host, &f.id, &f.gate, &f.root, &f.path, &f.folded, &f.rel];
        writer.as_mut().write(&values).await?;
    }
    writer.finish().await?;
    Ok(())
}

/// A row's absolute path, as bytes.
pub(super) fn full_path(r: &FleetRow) -> Vec<u8> {
    let mut full = r.root.clone();
    if !r.rel.is_empty() {
        if !full.ends_with(b"/") {
            full.push(b'/');
        }
        full.extend_from_slice(&r.rel);
    }
    full
}

/// A folder's owner and group as `lstat` says now (the index keeps modes,
/// not owners); unknown when it cannot be examined, which leaves the
/// folder to its `other` bits in the fleet.
pub(super) fn owner_of(path: &[u8]) -> (Option<i64>, Option<i64>) {
    match crate::platform::fs::lstat(&crate::platform::bytes::path_buf(path)) {
        Ok(m) => (Some(i64::from(m.uid)), Some(i64::from(m.gid))),
        Err(_) => (None, None),
    }
}

/// Reads rows off the index on a blocking thread, in chunks, while the
/// caller copies them: the daemon never holds a whole snapshot in memory.
fn spawn_reader<F>(f: F) -> tokio::sync::mpsc::Receiver<Vec<FleetRow>>
where
    F: FnOnce(&dyn Fn(Vec<FleetRow>) -> bool) + Send + 'static,
{
    let (tx, rx) = tokio::sync::mpsc::channel::<Vec<FleetRow>>(4);
    tokio::task::spawn_blocking(move || {
        let send = |chunk: Vec<FleetRow>| tx.blocking_send(chunk).is_ok();
        f(&send);
    });
    rx
}

/// Applies a run of journal batches after `seq` in one transaction: the
/// touched rows are replaced by their current ones (or dropped), and the
/// host's `seq` advances to the run's last. Returns the rows written.
/// Batches PostgreSQL already holds (a run repeated after a lost
/// acknowledgement) are skipped.
pub(super) async fn apply(
    client: &mut Client,
    store: &Arc<Store>,
    host: &str,
    seq: i64,
    batches: &[JournalBatch],
    content: bool,
) -> Result<u64, tokio_postgres::Error> {
    let last = batches.last().map_or(seq, |b| b.seq);
    let oldest_ns = batches.first().map_or(0, |b| b.at_ns);
    let mut ids: Vec<i64> = batches.iter().flat_map(|b| b.ids.iter().copied()).collect();
    ids.sort_unstable();
    ids.dedup();
    let tx = client.transaction().await?;
    let held: i64 = tx
        .query_one(
            "SELECT seq FROM fsindex.hosts WHERE host = $1 FOR UPDATE",
            &[&host],
        )
        .await?
        .get(0);
    if held >= last {
        tx.rollback().await?;
        return Ok(0);
    }
    tx.execute(
        "DELETE FROM fsindex.items WHERE host = $1 AND id = ANY($2)",
        &[&host, &ids],
    )
    .await?;
    tx.execute(
        "DELETE FROM fsindex.folders WHERE host = $1 AND id = ANY($2)",
        &[&host, &ids],
    )
    .await?;
    // What files say, with their rows (`[fleet] content = true`).
    let text_ids = content.then(|| ids.clone());
    let st = store.clone();
    let rows = spawn_reader(move |send| {
        for chunk in ids.chunks(4096) {
            match st.read(|c| journal::rows_of(c, chunk)) {
                Ok((found, _gone)) => {
                    if !send(found) {
                        return;
                    }
                }
                Err(e) => {
                    tracing::warn!("fleet: reading rows to ship: {e}");
                    return;
                }
            }
        }
    });
    let written = copy_rows(&tx, ("fsindex.items", "fsindex.folders"), host, rows).await?;
    if let Some(ids) = text_ids {
        super::text::put(&tx, store, host, &ids).await?;
    }
    tx.execute(
        "UPDATE fsindex.hosts SET seq = $2, shipped_at = now(), batch_ns = $3 WHERE host = $1",
        &[&host, &last, &oldest_ns],
    )
    .await?;
    tx.commit().await?;
    Ok(written)
}

/// Loads a snapshot of the whole index as the host's rows (its first
/// load, or a reconcile): the rows go by `COPY` into tables of the load's
/// own with no index (`fsindex.load_begin`), which are then indexed on the
/// two connections at once (the items' trigram index on `client`, the rest
/// on `second`, `fsindex.load_index`) and swapped in as the host's
/// partitions in one short transaction that sets its `(epoch, seq)`
/// (`fsindex.load_attach`). Readers see the host's old rows (none, for a
/// first load) until then and the new after, never a mix or a part; other
/// hosts ship meanwhile. Returns the seq the snapshot stands at and the
/// rows written; `None` when the index could not be read (nothing changed
/// in PostgreSQL but an unattached load, which the next one drops).
pub(super) async fn reconcile(
    client: &mut Client,
    second: &mut Client,
    store: &Arc<Store>,
    host: &str,
) -> Result<Option<(i64, u64)>, tokio_postgres::Error> {
    // One load per host at a time (two daemons claiming one name would
    // otherwise drop each other's tables); a closed connection frees it.
    client
        .execute("SELECT pg_advisory_lock(hashtext($1))", &[&host])
        .await?;
    let out = load(client, second, store, host).await;
    if out.is_ok() {
        client
            .execute("SELECT pg_advisory_unlock(hashtext($1))", &[&host])
            .await?;
    }
    out
}

async fn load(
    client: &mut Client,
    second: &mut Client,
    store: &Arc<Store>,
    host: &str,
) -> Result<Option<(i64, u64)>, tokio_postgres::Error> {
    let began = std::time::Instant::now();
    // Schema 7 loads in parts; 5 and 6 (not yet `fsctl fleet init`ed) in
    // one table, as they did.
    let parted: bool = client
        .query_one(
            "SELECT coalesce(max(version), 0) >= 7 FROM fsindex.schema_version",
            &[],
        )
        .await?
        .get(0);
    // Where the parts are cut (ids move on between this read and the
    // snapshot's; a part is only a range of ids, whatever it then holds).
    let splits = if parted {
        match store.read(|c| journal::load_splits(c, LOAD_PARTS)) {
            Ok(s) => s,
            Err(e) => {
                tracing::warn!("fleet: reading the index to reconcile: {e}");
                return Ok(None);
            }
        }
    } else {
        Vec::new()
    };
    let parts = splits.len() + 1;
    let k: i64 = if parted {
        client
            .query_one("SELECT fsindex.load_begin($1, $2)", &[&host, &splits])
            .await?
            .get(0)
    } else {
        client
            .query_one("SELECT fsindex.load_begin($1)", &[&host])
            .await?
            .get(0)
    };
    // Each part's table and its indexes' builder; the folders' builder.
    let table = |i: usize| {
        if parted {
            format!("fsindex.items_{k}_{i}")
        } else {
            format!("fsindex.items_{k}")
        }
    };
    let index_part = |i: usize| {
        if parted {
            format!("SELECT fsindex.load_index_part({k}, {i})")
        } else {
            format!("SELECT fsindex.load_index({k}, 'gin')")
        }
    };
    let index_folders = if parted {
        format!("SELECT fsindex.load_index_part({k}, -1)")
    } else {
        format!("SELECT fsindex.load_index({k}, 'rest')")
    };
    let st = store.clone();
    let (seq_tx, seq_rx) = tokio::sync::oneshot::channel();
    let read_secs = Arc::new(std::sync::Mutex::new(0.0f64));
    let read_out = read_secs.clone();
    let rows = spawn_reader(move |send| {
        let t = std::time::Instant::now();
        let mut blocked = std::time::Duration::ZERO;
        let mut chunk = Vec::with_capacity(4096);
        let mut open = true;
        let out = st.read(|c| {
            journal::snapshot(c, |r| {
                if open {
                    chunk.push(r);
                    if chunk.len() == 4096 {
                        let w = std::time::Instant::now();
                        open = send(std::mem::take(&mut chunk));
                        blocked += w.elapsed();
                    }
                }
                Ok(())
            })
        });
        if open && !chunk.is_empty() {
            send(chunk);
        }
        // The reader's own time: reading SQLite and building paths, not
        // waiting for the copy to take a chunk.
        *read_out.lock_ok() = (t.elapsed() - blocked).as_secs_f64();
        let _ = seq_tx.send(out);
    });
    // Each part's rows are copied in a transaction of their own (which
    // made its table, so the COPY freezes them), on `client`; once
    // committed, the part is indexed on `second` while the next one is
    // copied. The last part is indexed on `client`, and the folders (whose
    // places are known once every item is copied) on `second`.
    let (copied_tx, mut copied_rx) = tokio::sync::mpsc::unbounded_channel::<usize>();
    let (places_tx, places_rx) = tokio::sync::oneshot::channel::<Vec<FolderRow>>();
    let mut feed = Feed::new(rows);
    let copier = async {
        let mut copied = 0;
        let mut places = Vec::new();
        for i in 0..parts {
            let tx = client.transaction().await?;
            if parted {
                tx.batch_execute(&format!("SELECT fsindex.load_part({k}, {i})"))
                    .await?;
            }
            copied += copy_items(
                &tx,
                &table(i),
                host,
                &mut feed,
                (parted, splits.get(i).copied()),
                &mut places,
            )
            .await?;
            tx.commit().await?;
            let _ = copied_tx.send(i);
        }
        let copy_secs = began.elapsed().as_secs_f64();
        let _ = places_tx.send(places);
        client.batch_execute(&index_part(parts - 1)).await?;
        Ok::<_, tokio_postgres::Error>((copied, copy_secs))
    };
    let indexer = async {
        while let Some(i) = copied_rx.recv().await {
            if i + 1 == parts {
                break;
            }
            second.batch_execute(&index_part(i)).await?;
        }
        // None: the copy failed, and says why.
        if let Ok(places) = places_rx.await {
            let tx = second.transaction().await?;
            copy_folders(&tx, &format!("fsindex.folders_{k}"), host, &places).await?;
            tx.commit().await?;
            second.batch_execute(&index_folders).await?;
        }
        Ok(())
    };
    let ((copied, copy_secs), ()) = tokio::try_join!(copier, indexer)?;
    let waited_secs = feed.waited.as_secs_f64();
    let (epoch, seq) = match seq_rx.await {
        Ok(Ok(at)) => (at.epoch, at.last),
        Ok(Err(e)) => {
            tracing::warn!("fleet: reading the index to reconcile: {e}");
            return Ok(None);
        }
        Err(_) => return Ok(None),
    };
    let read_secs = *read_secs.lock_ok();
    let index_secs = began.elapsed().as_secs_f64() - copy_secs;
    // A first load's attach waits only on other attaches; a reconcile's
    // drop of the old partition waits for the queries reading the table,
    // and new queries would queue behind it: it gives up after a while and
    // tries again, so that no search waits long on it.
    let mut tries = 0;
    loop {
        let tx = client.transaction().await?;
        tx.batch_execute("SET LOCAL lock_timeout = '2s'").await?;
        match tx
            .execute(
                "SELECT fsindex.load_attach($1, $2, $3)",
                &[&k, &epoch, &seq],
            )
            .await
        {
            Ok(_) => {
                // Texts are shipped again after a reconcile (`text::sync`).
                super::text::forget(&tx, host).await?;
                tx.commit().await?;
                tracing::info!(
                    host,
                    rows = copied,
                    parts,
                    copy_secs,
                    read_secs,
                    waited_secs,
                    index_secs,
                    attach_secs = began.elapsed().as_secs_f64() - copy_secs - index_secs,
                    tries,
                    "fleet: loaded"
                );
                return Ok(Some((seq, copied)));
            }
            Err(e)
                if tries < 30
                    && e.code() == Some(&tokio_postgres::error::SqlState::LOCK_NOT_AVAILABLE) =>
            {
                tries += 1;
                drop(tx);
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            }
            Err(e) => return Err(e),
        }
    }
}

/// The file sizes some other file in the fleet also has: the only sizes
/// fleet dupes may need a hash for (one pass over the size index).
pub(super) async fn shared_sizes(client: &Client) -> Result<Vec<i64>, tokio_postgres::Error> {
    Ok(client
        .query(
            "SELECT size FROM fsindex.items WHERE kind = 0 AND size > 0
             GROUP BY size HAVING count(DISTINCT (host, dev, ino)) > 1",
            &[],
        )
        .await?
        .iter()
        .map(|r| r.get(0))
        .collect())
}

/// This host's files of `sizes` with no hash yet, after entry id `after`,
/// at most `limit`, by id.
pub(super) async fn hashes_wanted(
    client: &Client,
    host: &str,
    sizes: &[i64],
    after: i64,
    limit: i64,
) -> Result<Vec<i64>, tokio_postgres::Error> {
    Ok(client
        .query(
            "SELECT id FROM fsindex.items
             WHERE host = $1 AND id > $3 AND kind = 0 AND hash IS NULL AND size = ANY($2)
             ORDER BY id LIMIT $4",
            &[&host, &sizes, &after, &limit],
        )
        .await?
        .iter()
        .map(|r| r.get(0))
        .collect())
}

/// Writes hashes onto this host's rows, in one statement, where the row is
/// still the one hashed (same inode, size and mtime).
pub(super) async fn put_hashes(
    client: &mut Client,
    host: &str,
    hashes: &[(FleetRow, Vec<u8>)],
) -> Result<(), tokio_postgres::Error> {
    let ids: Vec<i64> = hashes.iter().map(|(r, _)| r.row.id).collect();
    let inos: Vec<i64> = hashes.iter().map(|(r, _)| r.row.ino as i64).collect();
    let sizes: Vec<i64> = hashes.iter().map(|(r, _)| r.row.size as i64).collect();
    let mtimes: Vec<i64> = hashes.iter().map(|(r, _)| r.row.mtime_ns).collect();
    let hs: Vec<&[u8]> = hashes.iter().map(|(_, h)| h.as_slice()).collect();
    // After the host's row, as `apply` takes it first: the two never lock
    // each other's rows in turn (no deadlock), and a batch waits for one
    // such statement at most.
    let tx = client.transaction().await?;
    tx.execute(
        "SELECT 1 FROM fsindex.hosts WHERE host = $1 FOR SHARE",
        &[&host],
    )
    .await?;
    tx.execute(
        "UPDATE fsindex.items e SET hash = u.hash
             FROM unnest($2::int8[], $3::int8[], $4::int8[], $5::int8[], $6::bytea[])
                  AS u(id, ino, size, mtime_ns, hash)
             WHERE e.host = $1 AND e.id = u.id AND e.ino = u.ino AND e.size = u.size
               AND e.mtime_ns = u.mtime_ns",
        &[&host, &ids, &inos, &sizes, &mtimes, &hs],
    )
    .await?;
    tx.commit().await
}

/// A token that changes whenever any host ships (its count of hosts and
/// the last time one shipped).
pub(super) async fn fleet_generation(client: &Client) -> Result<String, tokio_postgres::Error> {
    Ok(client
        .query_one(
            "SELECT count(*)::text || '/' || coalesce(max(shipped_at)::text, '') FROM fsindex.hosts",
            &[],
        )
        .await?
        .get(0))
}

/// Sets the owner and group of this host's gates where they differ from
/// what was shipped (a `chown` changes no row of the index, so no journal
/// batch carries it): `owners` holds `(id, uid, gid)` as `lstat` says now.
/// Returns the rows changed.
pub(super) async fn put_owners(
    client: &Client,
    host: &str,
    owners: &[(i64, Option<i64>, Option<i64>)],
) -> Result<u64, tokio_postgres::Error> {
    let ids: Vec<i64> = owners.iter().map(|o| o.0).collect();
    let uids: Vec<Option<i64>> = owners.iter().map(|o| o.1).collect();
    let gids: Vec<Option<i64>> = owners.iter().map(|o| o.2).collect();
    client
        .execute(
            "UPDATE fsindex.items e SET uid = u.uid, gid = u.gid
             FROM unnest($2::int8[], $3::int8[], $4::int8[]) AS u(id, uid, gid)
             WHERE e.host = $1 AND e.id = u.id AND e.kind = 1
               AND (e.uid IS DISTINCT FROM u.uid OR e.gid IS DISTINCT FROM u.gid)",
            &[&host, &ids, &uids, &gids],
        )
        .await
}
