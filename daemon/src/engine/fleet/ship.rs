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

use crate::index::fold::fold_bytes;
use crate::store::Store;
use crate::store::journal::{self, FleetRow, JournalBatch, opens_to_all};

use super::SCHEMA_VERSION;

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
    rows: &mut tokio::sync::mpsc::Receiver<Vec<FleetRow>>,
) -> Result<u64, tokio_postgres::Error> {
    let (written, places) = copy_items(tx, items, host, rows).await?;
    copy_folders(tx, folders, host, &places).await?;
    Ok(written)
}

/// Writes every entry's row into `items` by binary `COPY`; returns the
/// rows written and the places of the folders among them (one `COPY` at a
/// time on a connection: they go in after, see [`copy_folders`]).
async fn copy_items(
    tx: &Transaction<'_>,
    items: &str,
    host: &str,
    rows: &mut tokio::sync::mpsc::Receiver<Vec<FleetRow>>,
) -> Result<(u64, Vec<FolderRow>), tokio_postgres::Error> {
    let sink = tx
        .copy_in(&format!("COPY {items} ({ITEM_COLUMNS}) FROM STDIN BINARY"))
        .await?;
    let mut writer = pin!(BinaryCopyInWriter::new(sink, ITEM_TYPES));
    let mut folders: Vec<FolderRow> = Vec::new();
    while let Some(chunk) = rows.recv().await {
        for r in chunk {
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
    let written = writer.finish().await?;
    Ok((written, folders))
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
    let mut rows = spawn_reader(move |send| {
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
    let written = copy_rows(&tx, ("fsindex.items", "fsindex.folders"), host, &mut rows).await?;
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
    let k: i64 = client
        .query_one("SELECT fsindex.load_begin($1)", &[&host])
        .await?
        .get(0);
    let st = store.clone();
    let (seq_tx, seq_rx) = tokio::sync::oneshot::channel();
    let mut rows = spawn_reader(move |send| {
        let mut chunk = Vec::with_capacity(4096);
        let mut open = true;
        let out = st.read(|c| {
            journal::snapshot(c, |r| {
                if open {
                    chunk.push(r);
                    if chunk.len() == 4096 {
                        open = send(std::mem::take(&mut chunk));
                    }
                }
                Ok(())
            })
        });
        if open && !chunk.is_empty() {
            send(chunk);
        }
        let _ = seq_tx.send(out);
    });
    let began = std::time::Instant::now();
    let tx = client.transaction().await?;
    let (copied, places) = copy_items(&tx, &format!("fsindex.items_{k}"), host, &mut rows).await?;
    let (epoch, seq) = match seq_rx.await {
        Ok(Ok(at)) => (at.epoch, at.last),
        Ok(Err(e)) => {
            tracing::warn!("fleet: reading the index to reconcile: {e}");
            tx.rollback().await?;
            return Ok(None);
        }
        Err(_) => {
            tx.rollback().await?;
            return Ok(None);
        }
    };
    tx.commit().await?;
    let copy_secs = began.elapsed().as_secs_f64();
    let gin = async {
        client
            .execute("SELECT fsindex.load_index($1, 'gin')", &[&k])
            .await
    };
    let rest = async {
        let tx = second.transaction().await?;
        copy_folders(&tx, &format!("fsindex.folders_{k}"), host, &places).await?;
        tx.commit().await?;
        second
            .execute("SELECT fsindex.load_index($1, 'rest')", &[&k])
            .await
    };
    tokio::try_join!(gin, rest)?;
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
                    copy_secs,
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
