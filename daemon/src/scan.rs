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
//! counted and logged, never fatal.

use std::collections::HashMap;
use std::fs::Metadata;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use jwalk::WalkDirGeneric;
use rusqlite::Connection;

use crate::Error;
use crate::store::{EntryRow, FLAG_UNREADABLE, Kind, Op, Store, WriteHandle, unix_now};

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
    /// Children the index has and the walk has not (yet) seen.
    known: HashMap<Vec<u8>, Known>,
}

#[cfg(unix)]
fn row_from_meta(id: i64, parent_id: Option<i64>, name: Vec<u8>, m: &Metadata) -> EntryRow {
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

/// Sends batches to the writer and counts what it sent.
struct Emitter<'a> {
    writer: &'a WriteHandle,
    ops: Vec<Op>,
    progress: &'a Progress,
}

impl Emitter<'_> {
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

/// Walks `target` and writes the differences to the index. Returns once
/// every change is committed.
pub fn scan(
    store: &Store,
    writer: &WriteHandle,
    target: &ScanTarget,
    progress: &Progress,
    cancel: &AtomicBool,
) -> Result<Outcome, Error> {
    let started = std::time::Instant::now();
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

    let walk = WalkDirGeneric::<WalkState>::new(&target.start)
        .skip_hidden(false)
        .follow_links(false)
        .sort(false)
        .process_read_dir(move |_depth, _path, _state, children| {
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
                child.client_state = Some(meta);
            }
        });

    let mut out = Emitter {
        writer,
        ops: Vec::with_capacity(BATCH),
        progress,
    };
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
            // What was sent is committed; the next start's reconcile
            // finishes the job.
            out.finish()?;
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
                Some(id) if !target.is_root => store.read(|c| {
                    Ok(
                        c.query_row("SELECT parent_id FROM entries WHERE id=?1", [id], |r| {
                            r.get::<_, Option<i64>>(0)
                        })?,
                    )
                })?,
                _ => None,
            };
            let id = target.start_id.unwrap_or_else(|| store.alloc_id());
            let mut row = row_from_meta(id, parent_id, name, &start_meta);
            if entry.read_children_error.is_some() {
                row.flags |= FLAG_UNREADABLE;
                progress.errors.fetch_add(1, Ordering::Relaxed);
            }
            let known = match target.start_id {
                Some(id) => {
                    if !load_one(&conn, id)?.is_some_and(|k| unchanged(&k, &row)) {
                        out.push(Op::Update(row))?;
                    }
                    load_children(&conn, id)?
                }
                None => {
                    out.push(Op::Insert(row))?;
                    HashMap::new()
                }
            };
            start_id = id;
            stack.push(Frame { id, known });
            continue;
        }

        while stack.len() > depth {
            pop_frame(&mut stack, &mut out)?;
        }
        let Some(frame) = stack.last_mut() else {
            continue;
        };
        let name = name_bytes(&entry.file_name);
        let meta = match entry.client_state.take() {
            Some(Ok(m)) => m,
            other => {
                let e = match other {
                    Some(Err(e)) => e,
                    _ => "no metadata".to_owned(),
                };
                progress.errors.fetch_add(1, Ordering::Relaxed);
                let vanished = std::fs::symlink_metadata(entry.path())
                    .is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound);
                if vanished {
                    tracing::debug!("scan: {} vanished during the scan", entry.path().display());
                } else {
                    // Cannot stat but it is there: keep what the index knows.
                    tracing::warn!("scan: cannot stat {}: {e}", entry.path().display());
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
                    out.push(Op::Update(row))?;
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
                    out.push(Op::Delete { id: k.id })?;
                }
                row.id = store.alloc_id();
                let id = row.id;
                out.push(Op::Insert(row))?;
                (id, HashMap::new())
            }
        };
        if meta.is_dir() {
            stack.push(Frame { id, known });
        }
    }
    while !stack.is_empty() {
        pop_frame(&mut stack, &mut out)?;
    }
    if target.is_root {
        out.push(Op::RootScanned {
            root_id: target.root_id,
            entry_id: start_id,
            at: unix_now(),
        })?;
        progress.changes.fetch_sub(1, Ordering::Relaxed);
    }
    out.finish()?;
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

/// A folder is finished: whatever the index has that the walk did not see
/// is gone from disk.
fn pop_frame(stack: &mut Vec<Frame>, out: &mut Emitter<'_>) -> Result<(), Error> {
    if let Some(frame) = stack.pop() {
        for (_, k) in frame.known {
            out.push(Op::Delete { id: k.id })?;
        }
    }
    Ok(())
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
