//! The SQLite index: opening (with corruption recovery and migrations), the
//! single writer thread, and the pool of read-only connections.
//!
//! Every mutation goes through [`Writer`]: callers send batches of [`Op`]s
//! and the writer thread applies each batch in one transaction, keeping the
//! per-directory aggregates (`dir_totals`) current as it goes. Readers use
//! [`Store::read`], which hands out pooled read-only connections; WAL lets
//! them run while the writer commits.

use crate::LockOk;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, mpsc};

use rusqlite::{Connection, OpenFlags, OptionalExtension, params};

use crate::{Critical, Error};

pub mod content;
pub mod entries;
pub mod lookup;
pub mod scan_reads;
pub use lookup::{RootRow, resolve, root_of, roots};

/// Migrations, applied in order; each runs once, in one transaction, and is
/// recorded in `schema_version`. Append only.
const MIGRATIONS: &[(u32, &str)] = &[
    (1, include_str!("../../../migrations/0001_entries.sql")),
    (2, include_str!("../../../migrations/0002_hashes.sql")),
    (3, include_str!("../../../migrations/0003_unlisted.sql")),
    (4, include_str!("../../../migrations/0004_content.sql")),
    (
        5,
        include_str!("../../../migrations/0005_unlisted_link_sizes.sql"),
    ),
];

/// The newest schema this binary knows.
pub const SCHEMA_VERSION: u32 = MIGRATIONS[MIGRATIONS.len() - 1].0;

/// Entry kinds as stored in `entries.kind`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Kind {
    File = 0,
    Dir = 1,
    Symlink = 2,
    Other = 3,
}

impl Kind {
    pub fn from_i64(v: i64) -> Kind {
        match v {
            0 => Kind::File,
            1 => Kind::Dir,
            2 => Kind::Symlink,
            _ => Kind::Other,
        }
    }

    pub fn from_file_type(ft: std::fs::FileType) -> Kind {
        if ft.is_dir() {
            Kind::Dir
        } else if ft.is_symlink() {
            Kind::Symlink
        } else if ft.is_file() {
            Kind::File
        } else {
            Kind::Other
        }
    }
}

/// `entries.flags` bit: a folder whose children could not be read.
pub const FLAG_UNREADABLE: u32 = 1;

/// One row of `entries`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EntryRow {
    pub id: i64,
    pub parent_id: Option<i64>,
    pub name: Vec<u8>,
    pub kind: Kind,
    pub size: u64,
    pub blocks: u64,
    pub mtime_ns: i64,
    pub dev: u64,
    pub ino: u64,
    pub nlink: u64,
    pub mode: u32,
    pub flags: u32,
}

impl EntryRow {
    /// What this entry adds to the aggregates of every folder above it (and,
    /// for a folder, to its own). Multi-link files add nothing: disk-usage
    /// queries count them once per query from `entries_multilink`.
    fn contribution(&self) -> Totals {
        let unreadable = i64::from(self.flags & FLAG_UNREADABLE != 0);
        match self.kind {
            Kind::Dir => Totals {
                bytes: self.blocks as i64 * 512,
                apparent: self.size as i64,
                files: 0,
                dirs: 1,
                incomplete: unreadable,
            },
            _ if self.nlink > 1 => Totals::default(),
            _ => Totals {
                bytes: self.blocks as i64 * 512,
                apparent: self.size as i64,
                files: 1,
                dirs: 0,
                incomplete: 0,
            },
        }
    }
}

/// Aggregates of a subtree, or a change to them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Totals {
    pub bytes: i64,
    pub apparent: i64,
    pub files: i64,
    pub dirs: i64,
    pub incomplete: i64,
}

impl Totals {
    pub(crate) fn add(&mut self, o: Totals) {
        self.bytes += o.bytes;
        self.apparent += o.apparent;
        self.files += o.files;
        self.dirs += o.dirs;
        self.incomplete += o.incomplete;
    }
    fn neg(self) -> Totals {
        Totals {
            bytes: -self.bytes,
            apparent: -self.apparent,
            files: -self.files,
            dirs: -self.dirs,
            incomplete: -self.incomplete,
        }
    }
    fn is_zero(&self) -> bool {
        *self == Totals::default()
    }
}

/// Sizes of what the rules keep out of one folder (a row of `unlisted`):
/// an excluded folder by name, or (`name` empty) the nameless sum of the
/// folder's sensitive-tier entries and excluded files.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unlisted {
    pub name: Vec<u8>,
    pub totals: Totals,
    /// Unix seconds of the sizes-only walk that measured it.
    pub measured_at: i64,
    /// The files with several links counted in `totals`, each inode once.
    pub links: Vec<Linked>,
}

/// A file with several links counted in an unlisted row.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Linked {
    pub dev: u64,
    pub ino: u64,
    /// Allocated and apparent bytes; `None` in rows written before they
    /// were kept (migration 5), until their folder is scanned again.
    pub sizes: Option<(u64, u64)>,
}

/// `unlisted.links` as stored: a tag byte 1, then (dev, ino, allocated
/// bytes, apparent bytes) per file as little-endian u64s. Nothing for no
/// file.
pub fn pack_links(links: &[Linked]) -> Vec<u8> {
    if links.is_empty() {
        return Vec::new();
    }
    let mut out = Vec::with_capacity(1 + links.len() * 32);
    out.push(1);
    for l in links {
        let (bytes, apparent) = l.sizes.unwrap_or_default();
        for v in [l.dev, l.ino, bytes, apparent] {
            out.extend_from_slice(&v.to_le_bytes());
        }
    }
    out
}

/// Reads [`pack_links`]'s form, and the older one of (dev, ino) pairs
/// alone (16 bytes each, so never one byte over a multiple of 16).
pub fn unpack_links(b: &[u8]) -> Vec<Linked> {
    // The i-th little-endian u64 of a record.
    let at =
        |c: &[u8], i: usize| u64::from_le_bytes(c[i * 8..i * 8 + 8].try_into().unwrap_or_default());
    match b.split_first() {
        Some((1, rest)) if b.len() % 16 == 1 => rest
            .chunks_exact(32)
            .map(|c| Linked {
                dev: at(c, 0),
                ino: at(c, 1),
                sizes: Some((at(c, 2), at(c, 3))),
            })
            .collect(),
        _ => b
            .chunks_exact(16)
            .map(|c| Linked {
                dev: at(c, 0),
                ino: at(c, 1),
                sizes: None,
            })
            .collect(),
    }
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

/// A committed change, as the in-memory mirror of the index needs it.
#[derive(Debug)]
pub enum Change {
    /// A new entry, or new metadata for an existing one.
    Upsert(EntryRow),
    /// Entries gone (whole subtrees, every id listed).
    Removed(Vec<i64>),
    /// An entry renamed or moved; `subtree` lists its descendants, parents
    /// before children (their depth changed).
    Moved {
        id: i64,
        parent_id: i64,
        name: Vec<u8>,
        subtree: Vec<i64>,
    },
}

/// Something kept equal to the index: loaded by the writer thread before
/// its first commit, then given every commit's changes right after the
/// commit, so it never drifts from SQLite (the search snapshot).
pub trait Mirror: Send + 'static {
    fn load(&mut self, conn: &Connection) -> Result<(), Error>;
    fn apply(&mut self, changes: Vec<Change>);
    /// The writer has gone idle (a scan ended, a burst was written): a
    /// chance to give back what growing left over.
    fn idle(&mut self) {}
}

/// A cached content hash and the file state it was computed for.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HashRow {
    pub dev: u64,
    pub ino: u64,
    pub size: u64,
    pub mtime_ns: i64,
    pub ctime_ns: i64,
    pub partial: Option<Vec<u8>>,
    pub full: Option<Vec<u8>>,
    pub hashed_ns: i64,
}

/// One change to the index.
#[derive(Debug)]
pub enum Op {
    /// A new entry; its id was allocated with [`Store::alloc_id`].
    Insert(EntryRow),
    /// New metadata for an existing entry of the same kind.
    Update(EntryRow),
    /// Remove an entry and its whole subtree.
    Delete { id: i64 },
    /// What the rules keep out of folder `dir` is now exactly `rows`
    /// (sizes counted in the folder's aggregates).
    SetUnlisted { dir: i64, rows: Vec<Unlisted> },
    /// Rename or move an entry (with its subtree): one row changes.
    Move {
        id: i64,
        parent_id: i64,
        name: Vec<u8>,
    },
    /// A root's scan finished: record its root entry and the time.
    RootScanned {
        root_id: i64,
        entry_id: i64,
        at: i64,
    },
    /// Add a root (the row; scanning is queued separately).
    AddRoot {
        path: Vec<u8>,
        reply: mpsc::Sender<Result<i64, Error>>,
    },
    /// Remove a root and everything under it.
    RemoveRoot { root_id: i64 },
    /// A root's folder is gone (deleted, moved away, unmounted, or another
    /// folder in its place): its entries leave the index and the root
    /// stays configured, to be scanned afresh when its folder is back.
    RootGone { root_id: i64 },
    /// Acknowledged once everything sent before it is committed.
    Barrier(mpsc::Sender<()>),
    /// Commit what came before, checkpoint the WAL and stop.
    Shutdown,
    /// Content hashes computed for duplicate finding (cached per inode).
    PutHashes(Vec<HashRow>),
    /// What files say: their rows replace the content index's.
    PutContent(Vec<content::ContentRow>),
    /// Files to read for the content index.
    QueueContent(Vec<i64>),
    /// Files whose content leaves the index (and the queue).
    DropContent(Vec<i64>),
    /// A root's content flag (`fsctl roots add PATH --content`).
    SetRootContent { root_id: i64, on: bool },
    /// Bulk work is over: checkpoint the WAL (so it does not stay large)
    /// and give the page cache back.
    Idle,
}

/// Where the index lives and how it was opened.
pub struct Store {
    db_path: PathBuf,
    readers: Mutex<Vec<Connection>>,
    next_id: AtomicI64,
    /// Entry rows inserted, updated or deleted since start-up.
    pub rows_written: AtomicU64,
    /// Things the user should hear about in `status` (e.g. recovery).
    pub notices: Mutex<Vec<String>>,
    /// Inodes with several links whose link-count refresh met a path the
    /// index had not caught up with (a folder above it renamed, the event
    /// still to come), with the refreshes tried so far: tried again with
    /// the next ones.
    pub relink: Mutex<HashMap<(u64, u64), u8>>,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("db_path", &self.db_path)
            .finish()
    }
}

fn set_pragmas(conn: &Connection, cache_kib: i64) -> rusqlite::Result<()> {
    conn.pragma_update(None, "journal_mode", "WAL")?;
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    conn.pragma_update(None, "temp_store", "MEMORY")?;
    conn.pragma_update(None, "cache_size", -cache_kib)?;
    conn.busy_timeout(std::time::Duration::from_secs(30))?;
    Ok(())
}

/// Applies pending migrations; refuses a database from a newer binary.
fn migrate(conn: &mut Connection, db_path: &Path) -> Result<(), Critical> {
    conn.execute_batch(
        "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)",
    )?;
    let current: u32 = conn.query_row(
        "SELECT COALESCE(MAX(version), 0) FROM schema_version",
        [],
        |r| r.get(0),
    )?;
    if current > SCHEMA_VERSION {
        return Err(Critical::NewerSchema {
            path: db_path.to_owned(),
            found: current,
            known: SCHEMA_VERSION,
        });
    }
    for &(version, sql) in MIGRATIONS.iter().filter(|(v, _)| *v > current) {
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Exclusive)?;
        tx.execute_batch(sql)?;
        tx.execute(
            "INSERT INTO schema_version (version, applied_at) VALUES (?1, ?2)",
            params![version, unix_now()],
        )?;
        tx.commit()?;
        tracing::info!(version, "applied migration");
    }
    Ok(())
}

pub fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

/// Reads the schema version without modifying anything; `None` when the file
/// is not a database we can read at all.
fn peek_schema_version(db_path: &Path) -> Option<u32> {
    let conn = Connection::open_with_flags(db_path, OpenFlags::SQLITE_OPEN_READ_ONLY).ok()?;
    conn.query_row(
        "SELECT COALESCE(MAX(version), 0) FROM schema_version",
        [],
        |r| r.get(0),
    )
    .ok()
}

/// Opens the writer connection, checking integrity first. A database that
/// fails `quick_check` (or is not a database) is moved aside and a fresh one
/// is made; the event is logged and returned as a notice.
fn open_checked(db_path: &Path) -> Result<(Connection, Option<String>), Critical> {
    if db_path.exists() {
        // A newer schema is refused before anything could write to the file.
        if let Some(found) = peek_schema_version(db_path)
            && found > SCHEMA_VERSION
        {
            return Err(Critical::NewerSchema {
                path: db_path.to_owned(),
                found,
                known: SCHEMA_VERSION,
            });
        }
        let problem = match Connection::open(db_path) {
            Err(e) => Some(e.to_string()),
            Ok(conn) => match conn.query_row("PRAGMA quick_check", [], |r| r.get::<_, String>(0)) {
                Ok(ok) if ok == "ok" => None,
                Ok(msg) => Some(msg),
                Err(e) => Some(e.to_string()),
            },
        };
        if let Some(problem) = problem {
            let aside = db_path.with_extension(format!("db.corrupt-{}", unix_now()));
            std::fs::rename(db_path, &aside)?;
            for ext in ["db-wal", "db-shm"] {
                let side = db_path.with_extension(ext);
                if side.exists() {
                    let _ = std::fs::rename(
                        &side,
                        aside.with_extension(format!("{}-{ext}", unix_now())),
                    );
                }
            }
            let notice = format!(
                "index.db failed its integrity check ({problem}); moved it to {} and rebuilt the index",
                aside.display()
            );
            tracing::error!("{notice}");
            let conn = create(db_path)?;
            return Ok((conn, Some(notice)));
        }
    }
    Ok((create(db_path)?, None))
}

fn create(db_path: &Path) -> Result<Connection, Error> {
    let existed = db_path.exists();
    let conn = Connection::open(db_path)?;
    if !existed {
        restrict_mode(db_path)?;
    }
    Ok(conn)
}

#[cfg(unix)]
fn restrict_mode(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
}
#[cfg(not(unix))]
fn restrict_mode(_path: &Path) -> std::io::Result<()> {
    Ok(())
}

impl Store {
    /// Opens (or creates) the index and starts the writer thread.
    pub fn open(db_path: &Path, mirror: Box<dyn Mirror>) -> Result<(Arc<Store>, Writer), Critical> {
        let (mut conn, notice) = open_checked(db_path)?;
        set_pragmas(&conn, 16 * 1024)?;
        migrate(&mut conn, db_path)?;
        let max_id: i64 =
            conn.query_row("SELECT COALESCE(MAX(id), 0) FROM entries", [], |r| r.get(0))?;
        let store = Arc::new(Store {
            db_path: db_path.to_owned(),
            readers: Mutex::new(Vec::new()),
            next_id: AtomicI64::new(max_id + 1),
            rows_written: AtomicU64::new(0),
            relink: Mutex::new(Default::default()),
            notices: Mutex::new(notice.into_iter().collect()),
        });
        let (tx, rx) = mpsc::sync_channel::<Vec<Op>>(8);
        let thread_store = store.clone();
        let handle = std::thread::Builder::new()
            .name("fsindex-writer".into())
            .spawn(move || writer_loop(conn, rx, thread_store, mirror))?;
        Ok((
            store,
            Writer {
                tx: Some(tx),
                handle: Some(handle),
            },
        ))
    }

    pub fn db_path(&self) -> &Path {
        &self.db_path
    }

    /// A fresh, unused entry id. Ids are allocated in walk order, so a
    /// folder's id is always smaller than its children's.
    pub fn alloc_id(&self) -> i64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    /// A dedicated read-only connection (for long work such as a scan).
    pub fn open_reader(&self) -> Result<Connection, Error> {
        let c = Connection::open_with_flags(
            &self.db_path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        c.pragma_update(None, "cache_size", -2048)?;
        c.busy_timeout(std::time::Duration::from_secs(30))?;
        Ok(c)
    }

    /// Runs `f` with a pooled read-only connection.
    pub fn read<T>(&self, f: impl FnOnce(&Connection) -> Result<T, Error>) -> Result<T, Error> {
        let conn = self.readers.lock_ok().pop();
        let conn = match conn {
            Some(c) => c,
            None => self.open_reader()?,
        };
        let out = f(&conn);
        let mut pool = self.readers.lock_ok();
        if pool.len() < 4 {
            pool.push(conn);
        }
        out
    }

    /// Bytes on disk: index.db plus its WAL.
    /// Heap bytes SQLite holds in this process (page caches, prepared
    /// statements, schemas) across every connection.
    #[allow(unsafe_code)]
    pub fn sqlite_heap_bytes() -> u64 {
        // SAFETY: reads SQLite's own counter; no arguments, no pointers.
        unsafe { rusqlite::ffi::sqlite3_memory_used() }.max(0) as u64
    }

    pub fn disk_bytes(&self) -> u64 {
        let wal = self.db_path.with_extension("db-wal");
        [&self.db_path, &wal]
            .iter()
            .filter_map(|p| std::fs::metadata(p).ok())
            .map(|m| m.len())
            .sum()
    }

    /// Adds a notice shown by `status`.
    pub fn notice(&self, msg: String) {
        self.notices.lock_ok().push(msg);
    }
}

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

fn writer_loop(
    mut conn: Connection,
    rx: mpsc::Receiver<Vec<Op>>,
    store: Arc<Store>,
    mut mirror: Box<dyn Mirror>,
) {
    if let Err(e) = mirror.load(&conn) {
        tracing::error!("loading the in-memory index failed: {e}");
    }
    while let Ok(first) = rx.recv() {
        // Merge whatever else is already queued into the same transaction,
        // up to a bound, so bursts commit in few, large transactions.
        let mut batch = first;
        while batch.len() < 50_000 {
            match rx.try_recv() {
                Ok(more) => batch.extend(more),
                Err(_) => break,
            }
        }
        let mut acks = Vec::new();
        let stop = batch.iter().any(|op| matches!(op, Op::Shutdown));
        let idle = batch.iter().any(|op| matches!(op, Op::Idle));
        let mut changes = Vec::new();
        match apply_batch(&mut conn, batch, &mut acks, &mut changes) {
            Ok(written) => {
                store.rows_written.fetch_add(written, Ordering::Relaxed);
                if !changes.is_empty() {
                    mirror.apply(changes);
                }
            }
            Err(e) => tracing::error!("index write failed, batch dropped: {e}"),
        }
        for ack in acks {
            let _ = ack.send(());
        }
        if stop {
            break;
        }
        if idle {
            if let Err(e) = conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(())) {
                tracing::warn!("WAL checkpoint failed: {e}");
            }
            let _ = conn.execute_batch("PRAGMA shrink_memory");
            mirror.idle();
            crate::platform::process::release_memory();
        }
    }
    // Asked to stop, or every sender is gone: shut down cleanly.
    if let Err(e) = conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(())) {
        tracing::warn!("WAL checkpoint at shutdown failed: {e}");
    }
    tracing::info!("writer stopped");
}

/// Applies one batch in one transaction; returns the entry rows written.
fn apply_batch(
    conn: &mut Connection,
    batch: Vec<Op>,
    acks: &mut Vec<mpsc::Sender<()>>,
    changes: &mut Vec<Change>,
) -> Result<u64, Error> {
    let tx = conn.transaction()?;
    let mut written = 0u64;
    // Answered only after the commit, so the new root is visible to readers.
    let mut added_roots: Vec<(mpsc::Sender<Result<i64, Error>>, i64)> = Vec::new();
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
                    written += 1;
                    changes.push(Change::Upsert(row));
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
                    written += move_entry(&tx, id, parent_id, name, &mut agg, changes)?;
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
                Op::PutHashes(rows) => {
                    let mut put = tx.prepare_cached(
                        "INSERT OR REPLACE INTO hashes (dev, ino, size, mtime_ns, ctime_ns, partial, full, hashed_ns)
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                    )?;
                    for h in rows {
                        put.execute(params![
                            h.dev as i64,
                            h.ino as i64,
                            h.size as i64,
                            h.mtime_ns,
                            h.ctime_ns,
                            h.partial,
                            h.full,
                            h.hashed_ns
                        ])?;
                    }
                }
                Op::PutContent(rows) => {
                    for row in &rows {
                        content::put(&tx, row)?;
                    }
                }
                Op::QueueContent(ids) => content::queue(&tx, &ids)?,
                Op::DropContent(ids) => content::drop(&tx, &ids)?,
                Op::SetRootContent { root_id, on } => {
                    tx.execute(
                        "UPDATE roots SET content=?2 WHERE id=?1",
                        params![root_id, on],
                    )?;
                }
                Op::Barrier(ack) => acks.push(ack),
                Op::Shutdown | Op::Idle => {}
            }
        }
        agg.apply(&tx)?;
    }
    tx.commit()?;
    for (reply, id) in added_roots {
        let _ = reply.send(Ok(id));
    }
    Ok(written)
}

/// Deletes a root's entries (its folder's whole subtree); returns the rows.
fn drop_root_entries(
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

pub fn load_row(conn: &Connection, id: i64) -> Result<Option<EntryRow>, Error> {
    let mut stmt = conn.prepare_cached(
        "SELECT id, parent_id, name, kind, size, blocks, mtime_ns, dev, ino, nlink, mode, flags FROM entries WHERE id=?1",
    )?;
    Ok(stmt.query_row([id], row_from_sql).optional()?)
}

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
fn delete_subtree(
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
fn move_entry(
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
        tx.prepare_cached(
            "WITH RECURSIVE sub(id) AS (SELECT id FROM entries WHERE parent_id = ?1
               UNION ALL SELECT e.id FROM entries e JOIN sub ON e.parent_id = sub.id)
             SELECT id FROM sub",
        )?
        .query_map([id], |r| r.get(0))?
        .collect::<Result<_, _>>()?
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

/// Pending aggregate changes of one batch: "add this to folder X and every
/// folder above it", merged so each folder is updated once per batch.
#[derive(Default)]
struct Aggregates {
    pending: HashMap<i64, Totals>,
    /// parent of each folder seen in this batch (memo for walking up).
    parents: HashMap<i64, Option<i64>>,
}

impl Aggregates {
    fn add(&mut self, dir: i64, delta: Totals) {
        self.pending.entry(dir).or_default().add(delta);
    }

    fn apply(&mut self, tx: &Connection) -> Result<(), Error> {
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
