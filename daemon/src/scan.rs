//! Walking a root (or a folder under one) and reconciling it with the index.
//!
//! The initial scan and the restart reconcile are one algorithm: jwalk walks
//! the tree in parallel (stat calls happen on its worker threads) and yields
//! entries depth-first; for every folder we load the children the index
//! already has, compare each walked child by (kind, size, mtime, inode,
//! links, blocks), and emit only the differences: inserts, updates, and
//! subtree deletes for children that are gone. An unchanged tree writes
//! nothing. Symlinks are recorded, never followed; other file systems are
//! not entered (like `du -x`); unreadable folders and vanishing files are
//! counted and logged, never fatal. Every child is judged by the
//! [`Rules`] before anything else happens to it: what they keep out is
//! dropped from the listing, so it is never stat'ed, entered, watched or
//! written, and whatever the index had of it is deleted.

use std::collections::HashMap;
use std::fs::Metadata;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use jwalk::WalkDirGeneric;
use rusqlite::Connection;

use crate::Error;
use crate::exclude::Rules;
use crate::store::{EntryRow, FLAG_UNREADABLE, Kind, Op, Store, WriteHandle, unix_now};
use crate::watch::{Watcher, is_cookie};

/// Rows per batch sent to the writer.
const BATCH: usize = 8192;

/// What to scan.
#[derive(Clone, Debug)]
pub struct ScanTarget {
    pub root_id: i64,
    /// The folder to walk: the root itself or a folder under it.
    pub start: PathBuf,
    /// The start folder's entry, when the index has it.
    pub start_id: Option<i64>,
    /// True when `start` is the root (its entry is the root's own folder).
    pub is_root: bool,
    pub cross_filesystems: bool,
    /// What is indexed (one set of rules for the whole walk).
    pub rules: Arc<Rules>,
}

/// Live counters of a running scan, read by status and progress streams.
#[derive(Debug, Default)]
pub struct Progress {
    pub scanned: AtomicU64,
    pub errors: AtomicU64,
    pub changes: AtomicU64,
}

/// How a scan ended.
#[derive(Clone, Copy, Debug, Default)]
pub struct Outcome {
    pub start_id: i64,
    pub scanned: u64,
    pub errors: u64,
    /// Changes sent to the writer (inserts, updates, subtree deletes).
    pub changes: u64,
}

type WalkState = ((), Option<Result<Metadata, String>>);

/// An entry the index already has under the folder being reconciled.
struct Known {
    id: i64,
    kind: Kind,
    size: u64,
    blocks: u64,
    mtime_ns: i64,
    ino: u64,
    nlink: u64,
    flags: u32,
}

/// A folder whose children are being reconciled.
struct Frame {
    id: i64,
    path: PathBuf,
    /// Children the index has and the walk has not (yet) seen.
    known: HashMap<Vec<u8>, Known>,
}

#[cfg(unix)]
pub(crate) fn row_from_meta(
    id: i64,
    parent_id: Option<i64>,
    name: Vec<u8>,
    m: &Metadata,
) -> EntryRow {
    use std::os::unix::fs::MetadataExt;
    EntryRow {
        id,
        parent_id,
        name,
        kind: Kind::from_file_type(m.file_type()),
        size: m.size(),
        blocks: m.blocks(),
        mtime_ns: m
            .mtime()
            .saturating_mul(1_000_000_000)
            .saturating_add(m.mtime_nsec()),
        dev: m.dev(),
        ino: m.ino(),
        nlink: m.nlink(),
        mode: m.mode(),
        flags: 0,
    }
}

#[cfg(unix)]
fn name_bytes(name: &std::ffi::OsStr) -> Vec<u8> {
    use std::os::unix::ffi::OsStrExt;
    name.as_bytes().to_vec()
}

#[cfg(unix)]
fn dev_of(m: &Metadata) -> u64 {
    use std::os::unix::fs::MetadataExt;
    m.dev()
}

fn unchanged(k: &Known, r: &EntryRow) -> bool {
    k.kind == r.kind
        && k.size == r.size
        && k.mtime_ns == r.mtime_ns
        && k.ino == r.ino
        && k.nlink == r.nlink
        && k.blocks == r.blocks
        && k.flags == r.flags
}

fn known_from_sql(r: &rusqlite::Row<'_>) -> rusqlite::Result<Known> {
    Ok(Known {
        id: r.get(1)?,
        kind: Kind::from_i64(r.get(2)?),
        size: r.get::<_, i64>(3)? as u64,
        blocks: r.get::<_, i64>(4)? as u64,
        mtime_ns: r.get(5)?,
        ino: r.get::<_, i64>(6)? as u64,
        nlink: r.get::<_, i64>(7)? as u64,
        flags: r.get(8)?,
    })
}

fn load_one(conn: &Connection, id: i64) -> Result<Option<Known>, Error> {
    use rusqlite::OptionalExtension;
    let mut stmt = conn.prepare_cached(
        "SELECT name, id, kind, size, blocks, mtime_ns, ino, nlink, flags FROM entries WHERE id=?1",
    )?;
    Ok(stmt.query_row([id], known_from_sql).optional()?)
}

fn load_children(conn: &Connection, id: i64) -> Result<HashMap<Vec<u8>, Known>, Error> {
    let mut stmt = conn.prepare_cached(
        "SELECT name, id, kind, size, blocks, mtime_ns, ino, nlink, flags FROM entries WHERE parent_id=?1",
    )?;
    let mut out = HashMap::new();
    let mut rows = stmt.query([id])?;
    while let Some(r) = rows.next()? {
        out.insert(r.get::<_, Vec<u8>>(0)?, known_from_sql(r)?);
    }
    Ok(out)
}

/// A difference between the disk and the index, as `verify` reports it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Difference {
    pub kind: DiffKind,
    pub path: PathBuf,
    /// What differs, in words (e.g. "size 10 -> 12").
    pub detail: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DiffKind {
    /// On disk, not in the index.
    Missing,
    /// In the index, not on disk.
    Extra,
    /// In both, with different metadata or type.
    Stale,
}

/// Where the reconcile's findings go: the writer (scan) or a report (verify).
trait Sink {
    /// Whether `path` arguments are used (building them costs an allocation
    /// per entry, which a scan of millions does not need).
    fn wants_paths(&self) -> bool;
    fn new_id(&mut self) -> i64;
    fn insert(&mut self, row: EntryRow, path: &Path) -> Result<(), Error>;
    fn update(&mut self, row: EntryRow, old: Option<&Known>, path: &Path) -> Result<(), Error>;
    fn delete(&mut self, old: &Known, path: &Path) -> Result<(), Error>;
}

/// Sends batches to the writer and counts what it sent.
struct WriteSink<'a> {
    store: &'a Store,
    writer: &'a WriteHandle,
    ops: Vec<Op>,
    progress: &'a Progress,
}

impl WriteSink<'_> {
    fn push(&mut self, op: Op) -> Result<(), Error> {
        self.ops.push(op);
        self.progress.changes.fetch_add(1, Ordering::Relaxed);
        if self.ops.len() >= BATCH {
            self.writer.send(std::mem::take(&mut self.ops))?;
        }
        Ok(())
    }

    fn finish(&mut self) -> Result<(), Error> {
        self.writer.send(std::mem::take(&mut self.ops))?;
        self.writer.flush()
    }
}

impl Sink for WriteSink<'_> {
    fn wants_paths(&self) -> bool {
        false
    }
    fn new_id(&mut self) -> i64 {
        self.store.alloc_id()
    }
    fn insert(&mut self, row: EntryRow, _path: &Path) -> Result<(), Error> {
        self.push(Op::Insert(row))
    }
    fn update(&mut self, row: EntryRow, _old: Option<&Known>, _path: &Path) -> Result<(), Error> {
        self.push(Op::Update(row))
    }
    fn delete(&mut self, old: &Known, _path: &Path) -> Result<(), Error> {
        self.push(Op::Delete { id: old.id })
    }
}

/// Collects differences instead of writing them.
#[derive(Default)]
struct VerifySink {
    next_id: i64,
    found: Vec<Difference>,
}

fn kind_name(k: Kind) -> &'static str {
    match k {
        Kind::File => "file",
        Kind::Dir => "folder",
        Kind::Symlink => "symlink",
        Kind::Other => "special file",
    }
}

impl Sink for VerifySink {
    fn wants_paths(&self) -> bool {
        true
    }
    fn new_id(&mut self) -> i64 {
        self.next_id -= 1;
        self.next_id
    }
    fn insert(&mut self, row: EntryRow, path: &Path) -> Result<(), Error> {
        // A delete and an insert of one path is a change of type.
        if let Some(last) = self.found.last_mut()
            && last.kind == DiffKind::Extra
            && last.path == path
        {
            last.kind = DiffKind::Stale;
            last.detail = format!("type {} -> {}", last.detail, kind_name(row.kind));
            return Ok(());
        }
        self.found.push(Difference {
            kind: DiffKind::Missing,
            path: path.to_owned(),
            detail: kind_name(row.kind).into(),
        });
        Ok(())
    }
    fn update(&mut self, row: EntryRow, old: Option<&Known>, path: &Path) -> Result<(), Error> {
        let mut what = Vec::new();
        if let Some(k) = old {
            if k.size != row.size {
                what.push(format!("size {} -> {}", k.size, row.size));
            }
            if k.mtime_ns != row.mtime_ns {
                what.push(format!("mtime {} -> {}", k.mtime_ns, row.mtime_ns));
            }
            if k.ino != row.ino {
                what.push(format!("inode {} -> {}", k.ino, row.ino));
            }
            if k.nlink != row.nlink {
                what.push(format!("links {} -> {}", k.nlink, row.nlink));
            }
            if k.blocks != row.blocks {
                what.push(format!("blocks {} -> {}", k.blocks, row.blocks));
            }
            if k.flags != row.flags {
                what.push(format!(
                    "readable {} -> {}",
                    k.flags & FLAG_UNREADABLE == 0,
                    row.flags & FLAG_UNREADABLE == 0
                ));
            }
        }
        self.found.push(Difference {
            kind: DiffKind::Stale,
            path: path.to_owned(),
            detail: what.join(", "),
        });
        Ok(())
    }
    fn delete(&mut self, old: &Known, path: &Path) -> Result<(), Error> {
        self.found.push(Difference {
            kind: DiffKind::Extra,
            path: path.to_owned(),
            detail: kind_name(old.kind).into(),
        });
        Ok(())
    }
}

/// Walks `target` and writes the differences to the index. Returns once
/// every change is committed.
pub fn scan(
    store: &Store,
    writer: &WriteHandle,
    target: &ScanTarget,
    progress: &Progress,
    cancel: &AtomicBool,
    watcher: Option<&Arc<Watcher>>,
) -> Result<Outcome, Error> {
    let started = std::time::Instant::now();
    let mut sink = WriteSink {
        store,
        writer,
        ops: Vec::with_capacity(BATCH),
        progress,
    };
    let result = reconcile(store, target, progress, cancel, watcher, &mut sink);
    if let Ok(start_id) = result
        && target.is_root
    {
        sink.ops.push(Op::RootScanned {
            root_id: target.root_id,
            entry_id: start_id,
            at: unix_now(),
        });
    }
    // What was sent is committed even when cancelled; the next start's
    // reconcile finishes the job.
    sink.finish()?;
    let start_id = result?;
    let outcome = Outcome {
        start_id,
        scanned: progress.scanned.load(Ordering::Relaxed),
        errors: progress.errors.load(Ordering::Relaxed),
        changes: progress.changes.load(Ordering::Relaxed),
    };
    tracing::info!(
        path = %target.start.display(),
        scanned = outcome.scanned,
        changes = outcome.changes,
        errors = outcome.errors,
        ms = started.elapsed().as_millis() as u64,
        "scan done"
    );
    Ok(outcome)
}

/// Walks `target` afresh and returns every difference from the index,
/// changing nothing.
pub fn verify(
    store: &Store,
    target: &ScanTarget,
    progress: &Progress,
) -> Result<Vec<Difference>, Error> {
    let mut sink = VerifySink::default();
    reconcile(
        store,
        target,
        progress,
        &AtomicBool::new(false),
        None,
        &mut sink,
    )?;
    Ok(sink.found)
}

#[cfg(unix)]
fn os_name(b: &[u8]) -> &std::ffi::OsStr {
    use std::os::unix::ffi::OsStrExt;
    std::ffi::OsStr::from_bytes(b)
}

/// The walk-and-compare loop shared by scan and verify; returns the start
/// folder's entry id.
fn reconcile(
    store: &Store,
    target: &ScanTarget,
    progress: &Progress,
    cancel: &AtomicBool,
    watcher: Option<&Arc<Watcher>>,
    out: &mut dyn Sink,
) -> Result<i64, Error> {
    let conn = store.open_reader()?;
    let start_meta = std::fs::symlink_metadata(&target.start)?;
    if !start_meta.is_dir() {
        return Err(Error::InvalidArgument(format!(
            "{} is not a folder",
            target.start.display()
        )));
    }
    let root_dev = dev_of(&start_meta);
    let cross = target.cross_filesystems;
    let rules = target.rules.clone();
    // Watch each folder before its contents are listed: whatever is created
    // after the listing produces an event, whatever before is in the listing.
    if let Some(w) = watcher {
        w.watch_dir(&target.start);
    }
    let watcher = watcher.cloned();

    // A pool of its own per walk: its threads inherit the calling thread's
    // priority (the scanner runs at nice 19 and idle I/O; `fsctl verify`
    // walks at the caller's).
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    let walk = WalkDirGeneric::<WalkState>::new(&target.start)
        .parallelism(jwalk::Parallelism::RayonNewPool(threads))
        .skip_hidden(false)
        .follow_links(false)
        .sort(false)
        .process_read_dir(move |depth, path, _state, children| {
            // `None`: the start folder itself, which is never judged (a
            // root asks for what it is on).
            if depth.is_some() {
                let folder = rules.folder(path);
                children.retain(|c| {
                    c.as_ref().map_or(true, |c| {
                        !folder.verdict(&c.file_name, c.file_type.is_dir()).hides()
                    })
                });
            }
            for child in children.iter_mut().flatten() {
                let meta = child.metadata().map_err(|e| e.to_string());
                if let Ok(m) = &meta
                    && m.is_dir()
                    && !cross
                    && dev_of(m) != root_dev
                {
                    // Another file system: not entered, not counted (du -x).
                    child.read_children_path = None;
                }
                if let (Some(w), Some(dir)) = (&watcher, &child.read_children_path) {
                    w.watch_dir(dir);
                }
                child.client_state = Some(meta);
            }
        });

    let mut stack: Vec<Frame> = Vec::new();
    let mut start_id = 0i64;

    for item in walk {
        let mut entry = match item {
            Ok(e) => e,
            Err(e) => {
                progress.errors.fetch_add(1, Ordering::Relaxed);
                tracing::warn!("scan: {e}");
                continue;
            }
        };
        if cancel.load(Ordering::Relaxed) {
            return Err(Error::Cancelled);
        }
        progress.scanned.fetch_add(1, Ordering::Relaxed);
        let depth = entry.depth;

        if depth == 0 {
            let name = match (target.is_root, target.start.file_name()) {
                (true, _) | (false, None) => name_bytes(target.start.as_os_str()),
                (false, Some(n)) => name_bytes(n),
            };
            let parent_id = match target.start_id {
                Some(id) if !target.is_root => {
                    conn.query_row("SELECT parent_id FROM entries WHERE id=?1", [id], |r| {
                        r.get::<_, Option<i64>>(0)
                    })?
                }
                _ => None,
            };
            let id = match target.start_id {
                Some(id) => id,
                None => out.new_id(),
            };
            let mut row = row_from_meta(id, parent_id, name, &start_meta);
            if entry.read_children_error.is_some() {
                row.flags |= FLAG_UNREADABLE;
                progress.errors.fetch_add(1, Ordering::Relaxed);
            }
            let known = match target.start_id {
                Some(id) => {
                    let old = load_one(&conn, id)?;
                    if !old.as_ref().is_some_and(|k| unchanged(k, &row)) {
                        out.update(row, old.as_ref(), &target.start)?;
                    }
                    load_children(&conn, id)?
                }
                None => {
                    out.insert(row, &target.start)?;
                    HashMap::new()
                }
            };
            start_id = id;
            stack.push(Frame {
                id,
                known,
                path: target.start.clone(),
            });
            continue;
        }

        while stack.len() > depth {
            pop_frame(&mut stack, out)?;
        }
        let Some(frame) = stack.last_mut() else {
            continue;
        };
        if is_cookie(&entry.file_name) {
            continue;
        }
        let name = name_bytes(&entry.file_name);
        let is_dir = entry.file_type.is_dir();
        let path = if is_dir || out.wants_paths() {
            entry.path()
        } else {
            PathBuf::new()
        };
        let meta = match entry.client_state.take() {
            Some(Ok(m)) => m,
            other => {
                let e = match other {
                    Some(Err(e)) => e,
                    _ => "no metadata".to_owned(),
                };
                progress.errors.fetch_add(1, Ordering::Relaxed);
                let path = entry.path();
                let vanished = std::fs::symlink_metadata(&path)
                    .is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound);
                if vanished {
                    tracing::debug!("scan: {} vanished during the scan", path.display());
                } else {
                    // Cannot stat but it is there: keep what the index knows.
                    tracing::warn!("scan: cannot stat {}: {e}", path.display());
                    frame.known.remove(&name);
                }
                continue;
            }
        };
        if meta.is_dir() && !cross && dev_of(&meta) != root_dev {
            // A mount point: leave it out (its entry, if any, is deleted).
            continue;
        }
        let parent = frame.id;
        let old = frame.known.remove(&name);
        let mut row = row_from_meta(0, Some(parent), name, &meta);
        if row.kind == Kind::Dir && entry.read_children_error.is_some() {
            row.flags |= FLAG_UNREADABLE;
            progress.errors.fetch_add(1, Ordering::Relaxed);
            tracing::warn!("scan: cannot read folder {}", entry.path().display());
        }
        let (id, known) = match old {
            Some(k) if k.kind == row.kind => {
                row.id = k.id;
                let is_dir = row.kind == Kind::Dir;
                if !unchanged(&k, &row) {
                    out.update(row, Some(&k), &path)?;
                }
                let known = if is_dir {
                    load_children(&conn, k.id)?
                } else {
                    HashMap::new()
                };
                (k.id, known)
            }
            other => {
                if let Some(k) = other {
                    out.delete(&k, &path)?;
                }
                row.id = out.new_id();
                let id = row.id;
                out.insert(row, &path)?;
                (id, HashMap::new())
            }
        };
        if meta.is_dir() {
            stack.push(Frame { id, known, path });
        }
    }
    while !stack.is_empty() {
        pop_frame(&mut stack, out)?;
    }
    Ok(start_id)
}

/// A folder is finished: whatever the index has that the walk did not see
/// is gone from disk.
fn pop_frame(stack: &mut Vec<Frame>, out: &mut dyn Sink) -> Result<(), Error> {
    if let Some(frame) = stack.pop() {
        for (name, k) in frame.known {
            out.delete(&k, &frame.path.join(os_name(&name)))?;
        }
    }
    Ok(())
}

/// True when a walk of `root` would reach `path`: every folder between
/// them is a real folder (not a symlink) and, unless `cross_filesystems`,
/// on the root's file system, as is `path` itself when it is a folder.
/// What is answered about paths the index does not hold (the SKIP tier)
/// goes no further than a scan would.
pub fn reachable(root: &Path, path: &Path, cross_filesystems: bool) -> bool {
    let (Ok(root_meta), Ok(rest)) = (std::fs::symlink_metadata(root), path.strip_prefix(root))
    else {
        return false;
    };
    let root_dev = dev_of(&root_meta);
    let mut at = root.to_owned();
    let comps: Vec<std::path::Component<'_>> = rest.components().collect();
    for (i, c) in comps.iter().enumerate() {
        let std::path::Component::Normal(name) = c else {
            return false;
        };
        at.push(name);
        let last = i + 1 == comps.len();
        match std::fs::symlink_metadata(&at) {
            Ok(m) if m.is_dir() => {
                if !cross_filesystems && dev_of(&m) != root_dev {
                    return false;
                }
            }
            Ok(_) if last => {}
            _ => return false,
        }
    }
    true
}

/// True when a folder on the way from `root` down to `path` (or `path`
/// itself) is a symlink: a walk started at `path` would leave the root.
pub fn through_symlink(root: &Path, path: &Path) -> bool {
    let Ok(rest) = path.strip_prefix(root) else {
        return false;
    };
    let mut at = root.to_owned();
    rest.components().any(|c| {
        at.push(c);
        std::fs::symlink_metadata(&at).is_ok_and(|m| m.file_type().is_symlink())
    })
}

/// Canonical absolute form of a root path.
pub fn canonical_root(path: &Path) -> Result<PathBuf, Error> {
    let p = std::fs::canonicalize(path).map_err(|e| {
        Error::InvalidArgument(format!("cannot use {} as a root: {e}", path.display()))
    })?;
    if !p.is_dir() {
        return Err(Error::InvalidArgument(format!(
            "cannot use {} as a root: not a folder",
            path.display()
        )));
    }
    Ok(p)
}

/// What a root lets into the index: its rules and whether other file
/// systems are entered.
#[derive(Clone, Copy, Debug)]
pub struct Scope<'a> {
    pub rules: &'a Rules,
    pub cross_filesystems: bool,
}

/// Reconciles single entries of one folder (paths from watcher events) and
/// the folder's own row. Returns the folders that are new: the caller scans
/// them whole. The ops are sent; the caller flushes.
pub fn apply_names(
    store: &Store,
    conn: &Connection,
    writer: &WriteHandle,
    dir_id: i64,
    dir: &Path,
    names: &[std::ffi::OsString],
    scope: Scope<'_>,
) -> Result<Vec<(PathBuf, i64)>, Error> {
    let Scope {
        rules,
        cross_filesystems,
    } = scope;
    let progress = Progress::default();
    let mut sink = WriteSink {
        store,
        writer,
        ops: Vec::new(),
        progress: &progress,
    };
    let mut new_dirs = Vec::new();
    let dir_meta = match std::fs::symlink_metadata(dir) {
        Ok(m) => m,
        // The folder itself is gone: its parent's event removes it.
        Err(_) => return Ok(new_dirs),
    };
    if let Some(old) = load_one(conn, dir_id)? {
        let mut row = row_from_meta(dir_id, None, Vec::new(), &dir_meta);
        row.flags = old.flags;
        if !unchanged(&old, &row) {
            sink.update(row, Some(&old), dir)?;
        }
    }
    let mut stmt = conn.prepare_cached(
        "SELECT name, id, kind, size, blocks, mtime_ns, ino, nlink, flags FROM entries WHERE parent_id=?1 AND name=?2",
    )?;
    let folder = rules.folder(dir);
    for name in names {
        if is_cookie(name) {
            continue;
        }
        let bytes = name_bytes(name);
        let path = dir.join(name);
        let old = {
            use rusqlite::OptionalExtension;
            stmt.query_row(rusqlite::params![dir_id, bytes], known_from_sql)
                .optional()?
        };
        let meta = match std::fs::symlink_metadata(&path) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                if let Some(k) = old {
                    sink.delete(&k, &path)?;
                }
                continue;
            }
            Err(e) => {
                progress.errors.fetch_add(1, Ordering::Relaxed);
                // Not even the log may hold a name the rules keep out.
                if !folder.verdict(name, false).hides() && !folder.verdict(name, true).hides() {
                    tracing::warn!("cannot stat {}: {e}", path.display());
                }
                continue;
            }
        };
        if folder.verdict(name, meta.is_dir()).hides() {
            // Kept out; what the index had of it (from before the rules
            // changed) goes.
            if let Some(k) = old {
                sink.delete(&k, &path)?;
            }
            continue;
        }
        if meta.is_dir() && !cross_filesystems && dev_of(&meta) != dev_of(&dir_meta) {
            continue; // a mount point appeared: not entered (du -x)
        }
        let mut row = row_from_meta(0, Some(dir_id), bytes, &meta);
        match old {
            Some(k) if k.kind == row.kind => {
                row.id = k.id;
                row.flags = k.flags;
                if !unchanged(&k, &row) {
                    sink.update(row, Some(&k), &path)?;
                }
            }
            other => {
                if let Some(k) = other {
                    sink.delete(&k, &path)?;
                }
                row.id = sink.new_id();
                let id = row.id;
                let is_dir = row.kind == Kind::Dir;
                sink.insert(row, &path)?;
                if is_dir {
                    new_dirs.push((path, id));
                }
            }
        }
    }
    sink.writer.send(std::mem::take(&mut sink.ops))?;
    Ok(new_dirs)
}
