//! The walk: a pool of threads takes folders from a shared stack (depth
//! first, so few handles stay open), opens each relative to its parent's
//! handle, lists it, `lstat`s its children, compares them with the rows the
//! index has, and hands the differences to the [`Sink`] folder by folder.
//! Scan and verify share it.

use crate::LockOk;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};

use rusqlite::Connection;

use super::{
    Found, Hidden, Known, Links, Progress, ScanFrom, ScanTarget, Sink, is_wide_dir, name_bytes,
    row_from_stat, unchanged,
};
use crate::Error;
use crate::ingest::exclude::Rules;
use crate::ingest::watch::{WatchRef, Watcher, is_cookie};
use crate::platform::fs::{self as pfs, DirRef, Stat};
use crate::store::{EntryRow, FLAG_UNREADABLE, Kind, Store, Unlisted, load_row, scan_reads};

/// Folders with this many entries or more have them `lstat`ed by several
/// threads at once: a Downloads folder of 200k files is otherwise the work
/// of one thread while the others wait.
const WIDE_FOLDER: usize = 4096;

/// Test hook (`FSINDEX_TEST_FOLDER_PAUSE_MS`): each folder of a walk
/// takes this long, so a test can watch a scan under way.
static TEST_FOLDER_PAUSE: std::sync::LazyLock<Option<std::time::Duration>> =
    std::sync::LazyLock::new(|| {
        std::env::var("FSINDEX_TEST_FOLDER_PAUSE_MS")
            .ok()
            .and_then(|v| v.parse().ok())
            .map(std::time::Duration::from_millis)
    });

/// A walk's thread, named for `top` and the tests that read its priority.
fn walk_thread() -> std::thread::Builder {
    std::thread::Builder::new().name("fsindex-walk".into())
}

/// `lstat` of every name in a wide folder, in order, on several threads;
/// `None` for the daemon's own cookie files.
fn lstat_all(dfd: DirRef<'_>, names: &pfs::Names) -> Vec<Option<std::io::Result<Stat>>> {
    let threads = crate::platform::process::cores().clamp(1, 8);
    let chunk = names.len().div_ceil(threads).max(1);
    let part_of = move |part: &[(Vec<u8>, Option<bool>)]| {
        part.iter()
            .map(|(name, _)| {
                let os = pfs::os(name);
                (!is_cookie(os)).then(|| pfs::lstat_at(dfd, os))
            })
            .collect::<Vec<_>>()
    };
    std::thread::scope(|s| {
        let parts: Vec<_> = names
            .chunks(chunk)
            .map(|part| {
                walk_thread()
                    .spawn_scoped(s, move || part_of(part))
                    // No thread to be had: this thread does that part.
                    .map_err(|_| part)
            })
            .collect();
        parts
            .into_iter()
            .flat_map(|h| match h {
                Ok(h) => h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)),
                Err(part) => part_of(part),
            })
            .collect()
    })
}

/// How long a walk's thread keeps one read transaction across folders.
/// A statement outside a transaction takes and drops SQLite's shared lock
/// and WAL snapshot on its own: about a tenth of an unchanged restart's
/// CPU in a profile.
pub(super) const READ_SPAN: std::time::Duration = std::time::Duration::from_millis(25);

/// A folder waiting to be listed.
struct DirJob {
    /// The parent's open handle (kept open until this folder is opened)
    /// and the folder's name in it; `None` for the start folder.
    parent: Option<(Arc<pfs::Listing>, Vec<u8>)>,
    /// The watcher's handle on the parent folder (none for the start
    /// folder, or when the parent is not watched).
    parent_watch: Option<WatchRef>,
    path: PathBuf,
    /// The folder's own row as its parent's `lstat` saw it, and what the
    /// index had; emitted once the folder is opened (or found unreadable).
    row: EntryRow,
    old: Option<Known>,
}

/// A walk stopped before its end (its stop flag set): the folders not
/// listed yet, each whole (a folder is either reconciled, its subfolders
/// queued, or here), so that a walk taken up again from them, on other
/// threads, ends as if it had never stopped. Used when a background scan
/// stops for a waiting client and goes on at normal priority
/// (`engine::priority`): a first index keeps its window
/// ([`crate::store::backlog`]) instead of ending it early.
pub struct Paused {
    pub(super) target: ScanTarget,
    pub(super) start_id: i64,
    root_dev: u64,
    jobs: Vec<DirJob>,
    /// The first index's rows are held back (the window is open).
    pub(super) held: bool,
}

impl Paused {
    /// Folders left to list.
    pub fn folders(&self) -> usize {
        self.jobs.len()
    }
}

/// How a walk ended.
pub(super) enum Walked {
    /// Every folder reconciled; the start folder's entry id.
    Done(i64),
    /// Stopped by its stop flag: what is left.
    Stopped(Paused),
}

/// What one walk shares between its threads.
struct Walk<'a> {
    store: &'a Store,
    rules: &'a Rules,
    root_dev: u64,
    cross: bool,
    progress: &'a Progress,
    cancel: &'a AtomicBool,
    watcher: Option<&'a Arc<Watcher>>,
    sink: &'a dyn Sink,
    links: &'a Links,
    /// Folders that have unlisted rows (read once: most folders have none,
    /// and a query per folder would cost a restart dearly).
    has_unlisted: HashSet<i64>,
    /// Folders to list (a stack: depth first keeps few handles open), and
    /// how many threads are busy with one.
    queue: Mutex<(Vec<DirJob>, usize)>,
    wake: Condvar,
    failed: Mutex<Option<Error>>,
    stop: AtomicBool,
    /// What the index had of every entry, once read (see
    /// [`scan_reads::ReadAhead`]): folders listed before it is there read
    /// their rows from SQLite.
    ahead: std::sync::OnceLock<scan_reads::ReadAhead>,
}

/// Below this many ids, a root's scan reads the index ahead before it
/// walks; above, beside the walk, which reads each folder's rows until it
/// is done (a million rows: 1.5 s on a busy 2-core machine, which on many
/// cores the walk does not wait for). At 50k entries on 2 cores, read
/// before the walk the restart was as quick or quicker: ready 214-269 ms
/// against 242-295 ms beside it, where the read took 95-136 ms.
const READ_AHEAD_FIRST: i64 = 50_000;

/// Test hook (`FSINDEX_TEST_READ_AHEAD_FIRST`): [`READ_AHEAD_FIRST`]
/// replaced, so that a small index is read beside its walk.
static TEST_READ_AHEAD_FIRST: std::sync::LazyLock<Option<i64>> = std::sync::LazyLock::new(|| {
    std::env::var("FSINDEX_TEST_READ_AHEAD_FIRST")
        .ok()
        .and_then(|v| v.parse().ok())
});

/// The walk-and-compare shared by scan and verify: from the start folder,
/// or from where a stopped walk of the same target left off (`from`).
pub(super) fn reconcile(
    store: &Store,
    from: ScanFrom,
    progress: &Progress,
    cancel: &AtomicBool,
    watcher: Option<&Arc<Watcher>>,
    sink: &dyn Sink,
    links: &Links,
) -> Result<Walked, Error> {
    let conn = store.open_reader()?;
    // A root the index has, scanned afresh: its rows can be read ahead in
    // one pass (a walk taken up again reads each folder's).
    let mut read_ahead = false;
    let (target, id, root_dev, jobs) = match from {
        ScanFrom::Paused(p) => (p.target, p.start_id, p.root_dev, p.jobs),
        ScanFrom::Start(target) => {
            let (id, dev, job) = start(&conn, &target, sink)?;
            read_ahead = target.is_root && job.old.is_some() && sink.reads_may_lag();
            (target, id, dev, vec![job])
        }
    };
    let has_unlisted = scan_reads::folders_with_unlisted(&conn)?;
    let ahead = std::sync::OnceLock::new();
    // A small index is read before the walk; a large one beside it.
    let bound = if read_ahead {
        crate::store::entries::max_id(&conn)?
    } else {
        0
    };
    let ahead_now = read_ahead && bound < TEST_READ_AHEAD_FIRST.unwrap_or(READ_AHEAD_FIRST);
    if ahead_now && let Some(a) = scan_reads::ReadAhead::read(&conn, bound, cancel)? {
        let _ = ahead.set(a);
    }
    drop(conn);
    let walk = Walk {
        has_unlisted,
        store,
        rules: &target.rules,
        root_dev,
        cross: target.cross_filesystems,
        progress,
        cancel,
        watcher,
        sink,
        links,
        queue: Mutex::new((jobs, 0)),
        wake: Condvar::new(),
        failed: Mutex::new(None),
        stop: AtomicBool::new(false),
        ahead,
    };
    // Threads of this walk's own, started from the calling thread, so
    // they inherit its priority (the scanner runs at nice 19 and idle I/O;
    // `fsctl verify` walks at the caller's).
    let threads = crate::platform::process::cores();
    // Set when the walk is over: a read-ahead not done by then is of no use.
    let walked = AtomicBool::new(false);
    std::thread::scope(|s| {
        if read_ahead && !ahead_now {
            let (walk, walked) = (&walk, &walked);
            let reader = move || {
                let t = std::time::Instant::now();
                let read = walk
                    .store
                    .open_reader()
                    .and_then(|conn| scan_reads::ReadAhead::read(&conn, bound, walked));
                match read {
                    Ok(Some(a)) => {
                        tracing::info!(
                            entries = a.len(),
                            ms = t.elapsed().as_millis() as u64,
                            "scan: the index read ahead"
                        );
                        let _ = walk.ahead.set(a);
                    }
                    Ok(None) => {}
                    // The walk reads each folder's rows instead.
                    Err(e) => tracing::debug!("scan: no read-ahead ({e})"),
                }
            };
            if let Err(e) = walk_thread().spawn_scoped(s, reader) {
                tracing::debug!("scan: no thread to read ahead ({e})");
            }
        }
        let mut workers = Vec::new();
        for _ in 0..threads {
            match walk_thread().spawn_scoped(s, || walk.work()) {
                Ok(h) => workers.push(h),
                Err(e) => {
                    tracing::warn!("no thread for the walk ({e})");
                    break;
                }
            }
        }
        // One is enough to finish the walk: none to be had, the caller's
        // own does it.
        if workers.is_empty() {
            walk.work();
        }
        for w in workers {
            if let Err(e) = w.join() {
                walked.store(true, Ordering::Relaxed);
                std::panic::resume_unwind(e);
            }
        }
        walked.store(true, Ordering::Relaxed);
    });
    let Walk { queue, failed, .. } = walk;
    if let Some(e) = failed.into_inner().unwrap_or_else(|e| e.into_inner()) {
        return Err(e);
    }
    let jobs = queue.into_inner().unwrap_or_else(|e| e.into_inner()).0;
    if cancel.load(Ordering::Relaxed) && !jobs.is_empty() {
        return Ok(Walked::Stopped(Paused {
            target,
            start_id: id,
            root_dev,
            jobs,
            held: false,
        }));
    }
    Ok(Walked::Done(id))
}

/// The start folder's entry id, its device (the walk's own, unless it may
/// cross file systems) and its job; for a root the index has nothing of,
/// the sink is told it is a first index.
fn start(
    conn: &Connection,
    target: &ScanTarget,
    sink: &dyn Sink,
) -> Result<(i64, u64, DirJob), Error> {
    let start_stat = pfs::lstat(&target.start)?;
    if !start_stat.is_dir() {
        return Err(Error::InvalidArgument(format!(
            "{} is not a folder",
            target.start.display()
        )));
    }
    let name = match (target.is_root, target.start.file_name()) {
        (true, _) | (false, None) => name_bytes(target.start.as_os_str()),
        (false, Some(n)) => name_bytes(n),
    };
    let (id, parent_id, old) = match target.start_id {
        Some(id) => {
            let parent_id = if target.is_root {
                None
            } else {
                scan_reads::parent_of(conn, id)?
            };
            (id, parent_id, load_row(conn, id)?)
        }
        None => match scan_reads::unclaimed_root(conn, &name)? {
            // A first scan of this root that stopped before its end left
            // its folder's row (and what it had walked): go on from it.
            Some(id) if target.is_root => (id, None, load_row(conn, id)?),
            _ => {
                if target.is_root {
                    // Nothing of this root in the index: its first index.
                    sink.first_index()?;
                }
                (sink.new_id(), None, None)
            }
        },
    };
    Ok((
        id,
        start_stat.dev,
        DirJob {
            parent: None,
            parent_watch: None,
            path: target.start.clone(),
            row: row_from_stat(id, parent_id, name, &start_stat),
            old,
        },
    ))
}

/// One walk thread's read transaction, held for up to [`READ_SPAN`]
/// across folders when the sink allows it.
struct Reading<'c> {
    conn: &'c Connection,
    held: bool,
    since: Option<std::time::Instant>,
}

impl<'c> Reading<'c> {
    fn new(conn: &'c Connection, held: bool) -> Self {
        Reading {
            conn,
            held,
            since: None,
        }
    }

    /// Before a folder: opens a transaction, or renews one held too long.
    fn begin(&mut self) -> Result<(), Error> {
        if !self.held {
            return Ok(());
        }
        if self.since.is_some_and(|t| t.elapsed() >= READ_SPAN) {
            self.end();
        }
        if self.since.is_none() {
            self.conn.execute_batch("BEGIN")?;
            self.since = Some(std::time::Instant::now());
        }
        Ok(())
    }

    fn end(&mut self) {
        if self.since.take().is_some() {
            // Read-only: a failed end loses nothing, and the transaction
            // is rolled back when the connection closes.
            let _ = self.conn.execute_batch("COMMIT");
        }
    }
}

impl Drop for Reading<'_> {
    fn drop(&mut self) {
        self.end();
    }
}

impl Walk<'_> {
    /// One thread of the walk: takes folders until none is left.
    fn work(&self) {
        let conn = match self.store.open_reader() {
            Ok(c) => c,
            Err(e) => return self.fail(e),
        };
        let mut reading = Reading::new(&conn, self.sink.reads_may_lag());
        loop {
            let job = {
                let mut q = self.queue.lock_ok();
                loop {
                    if self.stop.load(Ordering::Relaxed) {
                        return;
                    }
                    if let Some(job) = q.0.pop() {
                        q.1 += 1;
                        break job;
                    }
                    // Not held while this thread waits.
                    reading.end();
                    if q.1 == 0 {
                        self.wake.notify_all();
                        return;
                    }
                    q = self.wake.wait(q).unwrap_or_else(|e| e.into_inner());
                }
            };
            if self.cancel.load(Ordering::Relaxed) {
                // Stopped: the folder stays queued, whole, for a walk
                // taken up again ([`Paused`]).
                let mut q = self.queue.lock_ok();
                q.1 -= 1;
                q.0.push(job);
                drop(q);
                self.stop.store(true, Ordering::Relaxed);
                self.wake.notify_all();
                return;
            }
            let result = reading.begin().and_then(|()| self.folder(&conn, job));
            let mut q = self.queue.lock_ok();
            q.1 -= 1;
            match result {
                Ok(children) => {
                    q.0.extend(children);
                }
                Err(e) => {
                    drop(q);
                    self.fail(e);
                    return;
                }
            }
            self.wake.notify_all();
        }
    }

    fn fail(&self, e: Error) {
        let mut f = self.failed.lock_ok();
        if f.is_none() {
            *f = Some(e);
        }
        self.stop.store(true, Ordering::Relaxed);
        self.wake.notify_all();
    }

    fn path_if(&self, dir: &Path, name: &[u8]) -> PathBuf {
        if self.sink.wants_paths() {
            dir.join(pfs::os(name))
        } else {
            PathBuf::new()
        }
    }

    fn own_path(&self, path: &Path) -> PathBuf {
        if self.sink.wants_paths() {
            path.to_owned()
        } else {
            PathBuf::new()
        }
    }

    /// Lists one folder, reconciles its children, and returns its
    /// subfolders to walk.
    fn folder(&self, conn: &Connection, job: DirJob) -> Result<Vec<DirJob>, Error> {
        if let Some(pause) = *TEST_FOLDER_PAUSE {
            std::thread::sleep(pause);
        }
        let DirJob {
            parent,
            parent_watch,
            path,
            mut row,
            old,
        } = job;
        let mut found = Vec::new();
        let opened = match &parent {
            Some((pdir, name)) => {
                pfs::listing_fd(pdir).and_then(|pfd| pfs::open_dir_at(pfd, pfs::os(name)))
            }
            None => {
                self.progress.scanned.fetch_add(1, Ordering::Relaxed);
                pfs::open_dir(&path)
            }
        };
        drop(parent);
        let mut watch = None;
        let listing = match opened {
            Ok(fd) => {
                // Watched before it is looked at: whatever changes after
                // this produces an event, whatever before is in the fstat
                // and the listing that follow.
                if let Some(w) = self.watcher {
                    watch = w.watch_dir_fd(&path, pfs::dir_ref(&fd), parent_watch);
                }
                if let Ok(s) = pfs::fstat(pfs::dir_ref(&fd))
                    && s.ino == row.ino
                {
                    row.size = s.size;
                    row.blocks = s.blocks;
                    row.mtime_ns = s.mtime_ns;
                    row.nlink = s.nlink;
                    row.mode = s.mode;
                }
                pfs::list(fd)
            }
            Err(e) => Err(e),
        };
        let (names, dir) = match listing {
            Ok(l) => l,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound || pfs::is_replaced(&e) => {
                // Gone (or replaced) since its parent saw it: the event for
                // that follows; the index forgets what it had.
                tracing::debug!("scan: {} vanished during the scan", path.display());
                if let Some(k) = old {
                    self.links.note_subtree(conn, k.id)?;
                    found.push(Found::Delete(k, self.own_path(&path)));
                }
                self.sink.emit(found)?;
                return Ok(Vec::new());
            }
            Err(e) => {
                row.flags |= FLAG_UNREADABLE;
                self.progress.errors.fetch_add(1, Ordering::Relaxed);
                tracing::warn!("scan: cannot read folder {}: {e}", path.display());
                // What it held can no longer be known.
                let known = match &old {
                    Some(k) => scan_reads::children(conn, k.id, is_wide_dir(k))?,
                    None => scan_reads::Children::default(),
                };
                self.emit_row(&mut found, row.clone(), old.as_ref(), self.own_path(&path));
                for (name, k) in known {
                    if k.kind == Kind::Dir {
                        self.links.note_subtree(conn, k.id)?;
                    }
                    self.links.note(None, Some(&k));
                    found.push(Found::Delete(k, self.path_if(&path, &name)));
                }
                if old.is_some() {
                    self.unlisted(conn, &mut found, row.id, Vec::new())?;
                }
                self.sink.emit(found)?;
                return Ok(Vec::new());
            }
        };
        let id = row.id;
        let existing = old.is_some();
        let wide = old.as_ref().is_some_and(is_wide_dir);
        self.emit_row(&mut found, row, old.as_ref(), self.own_path(&path));
        // Where the children's changes begin (after the folder's own row).
        let children_at = found.len();
        let dfd = pfs::listing_fd(&dir)?;
        let mut known = match self.ahead.get() {
            _ if !existing => KnownChildren::Rows(scan_reads::Children::default()),
            Some(ahead) => match ahead.children(id) {
                Some(c) => KnownChildren::Ahead(c),
                None => KnownChildren::Rows(scan_reads::children(conn, id, wide)?),
            },
            None => KnownChildren::Rows(scan_reads::children(conn, id, wide)?),
        };
        let folder = self.rules.folder(&path);
        let mut hidden = Hidden::default();
        let mut subdirs = Vec::new();
        let mut pre = if names.len() >= WIDE_FOLDER {
            lstat_all(dfd, &names)
        } else {
            Vec::new()
        };
        for (k, (name, is_dir_hint)) in names.into_iter().enumerate() {
            let os = pfs::os(&name);
            if is_cookie(os) {
                continue;
            }
            self.progress.scanned.fetch_add(1, Ordering::Relaxed);
            // Taken already, for a wide folder.
            let mut pre = pre.get_mut(k).and_then(Option::take);
            // The listing usually says whether it is a folder; when it
            // does not, lstat first.
            let mut stat = None;
            let is_dir = match is_dir_hint {
                Some(d) => d,
                None => match pre.take().unwrap_or_else(|| pfs::lstat_at(dfd, os)) {
                    Ok(s) => {
                        stat = Some(s);
                        s.is_dir()
                    }
                    Err(_) => false,
                },
            };
            let verdict = folder.verdict(os, is_dir);
            if verdict.hides() {
                // Kept out (what the index had of it is deleted below),
                // but its bytes are counted.
                hidden.add_measured(dfd, &name, verdict, is_dir, self.root_dev, self.cross);
                continue;
            }
            let s = match stat
                .map_or_else(|| pre.take().unwrap_or_else(|| pfs::lstat_at(dfd, os)), Ok)
            {
                Ok(s) => s,
                Err(e) => {
                    self.progress.errors.fetch_add(1, Ordering::Relaxed);
                    if e.kind() == std::io::ErrorKind::NotFound {
                        tracing::debug!(
                            "scan: {} vanished during the scan",
                            path.join(os).display()
                        );
                    } else {
                        // Cannot stat but it is there: keep what the index knows.
                        tracing::warn!("scan: cannot stat {}: {e}", path.join(os).display());
                        known.forget(&name);
                    }
                    continue;
                }
            };
            if s.is_dir() && !self.cross && s.dev != self.root_dev {
                // A mount point: leave it out (its entry, if any, is deleted).
                continue;
            }
            let mut row = row_from_stat(0, Some(id), name, &s);
            let old = known.take(conn, &row)?;
            let old = match old {
                Some(k) if k.kind == row.kind => {
                    row.id = k.id;
                    Some(k)
                }
                other => {
                    if let Some(k) = other {
                        if k.kind == Kind::Dir {
                            self.links.note_subtree(conn, k.id)?;
                        }
                        self.links.note(None, Some(&k));
                        found.push(Found::Delete(k, self.path_if(&path, &row.name)));
                    }
                    row.id = self.sink.new_id();
                    None
                }
            };
            if row.kind == Kind::Dir {
                subdirs.push((row, old));
            } else {
                if row.nlink > 1
                    && let Some(w) = self.watcher
                {
                    w.watch_linked_file(&path.join(pfs::os(&row.name)), (row.dev, row.ino), watch);
                }
                let p = self.path_if(&path, &row.name);
                self.emit_row(&mut found, row, old.as_ref(), p);
            }
        }
        // Whatever the index has that the listing did not show is gone.
        // Deleted before the children inserted: a file renamed while the
        // daemon was stopped is then a delete followed by an insert, which
        // is how its labels find it again (migration 0007's
        // `labels_limbo`).
        let known = known.rest(conn)?;
        let mut gone = Vec::with_capacity(known.len());
        for (name, k) in known {
            if k.kind == Kind::Dir {
                self.links.note_subtree(conn, k.id)?;
            }
            self.links.note(None, Some(&k));
            gone.push(Found::Delete(k, self.path_if(&path, &name)));
        }
        found.splice(children_at..children_at, gone);
        self.unlisted(conn, &mut found, id, hidden.rows())?;
        // This folder's changes go before any of its subfolders' (the
        // writer needs a parent's row before its children's).
        self.sink.emit(found)?;
        let dir = Arc::new(dir);
        Ok(subdirs
            .into_iter()
            .map(|(row, old)| DirJob {
                path: path.join(pfs::os(&row.name)),
                parent: Some((dir.clone(), row.name.clone())),
                parent_watch: watch,
                row,
                old,
            })
            .collect())
    }

    /// A folder's or file's own row: inserted when new, updated when it
    /// differs from the index.
    fn emit_row(&self, found: &mut Vec<Found>, row: EntryRow, old: Option<&Known>, path: PathBuf) {
        match old {
            None => {
                self.links.note(Some(&row), None);
                found.push(Found::Insert(row, path));
            }
            Some(k) if !unchanged(k, &row) => {
                self.links.note(Some(&row), Some(k));
                found.push(Found::Update(row, Some(k.clone()), path));
            }
            Some(_) => {}
        }
    }

    /// Records what the rules keep out of folder `dir` when it differs
    /// from what the index has.
    fn unlisted(
        &self,
        conn: &Connection,
        found: &mut Vec<Found>,
        dir: i64,
        rows: Vec<Unlisted>,
    ) -> Result<(), Error> {
        if rows.is_empty() && !self.has_unlisted.contains(&dir) {
            return Ok(());
        }
        let before = crate::store::unlisted_of(conn, dir)?;
        if !same_unlisted(&before, &rows) {
            found.push(Found::Unlisted(dir, rows));
        }
        Ok(())
    }
}

/// Nothing to write: the same figures, and no excluded folder among them
/// (an excluded folder's row shows when it was last measured, so each
/// measurement is recorded; the nameless sum shows no time).
fn same_unlisted(a: &[Unlisted], b: &[Unlisted]) -> bool {
    a.len() == b.len()
        && a.iter().all(|x| {
            x.name.is_empty()
                && b.iter()
                    .any(|y| y.name == x.name && y.totals == x.totals && y.links == x.links)
        })
}

/// What the index has of a folder's children: their rows, or their prints
/// read ahead ([`scan_reads::ReadAhead`]), which stand for the rows they
/// print alike.
enum KnownChildren {
    Rows(scan_reads::Children),
    Ahead(scan_reads::AheadChildren),
}

impl KnownChildren {
    /// Takes the child that `now` (its row from the listing's `lstat`)
    /// names, as the index has it, its name left empty.
    fn take(&mut self, conn: &Connection, now: &EntryRow) -> Result<Option<Known>, Error> {
        match self {
            KnownChildren::Rows(rows) => Ok(rows.remove(&now.name)),
            KnownChildren::Ahead(prints) => {
                match prints.remove(&scan_reads::name_hash(&now.name)) {
                    None => Ok(None),
                    Some((id, print)) if print == scan_reads::print_of(now) => Ok(Some(EntryRow {
                        id,
                        parent_id: now.parent_id,
                        name: Vec::new(),
                        ..*now
                    })),
                    Some((id, _)) => Ok(load_row(conn, id)?.map(|mut k| {
                        k.name = Vec::new();
                        k
                    })),
                }
            }
        }
    }

    /// Leaves the child named `name` out: it is there but cannot be looked at.
    fn forget(&mut self, name: &[u8]) {
        match self {
            KnownChildren::Rows(rows) => {
                rows.remove(name);
            }
            KnownChildren::Ahead(prints) => {
                prints.remove(&scan_reads::name_hash(name));
            }
        }
    }

    /// The children not taken (the listing did not show them), by name.
    fn rest(self, conn: &Connection) -> Result<Vec<(Vec<u8>, Known)>, Error> {
        match self {
            KnownChildren::Rows(rows) => Ok(rows.into_iter().collect()),
            KnownChildren::Ahead(prints) => {
                let mut out = Vec::with_capacity(prints.len());
                for (id, _) in prints.into_values() {
                    if let Some(mut k) = load_row(conn, id)? {
                        out.push((std::mem::take(&mut k.name), k));
                    }
                }
                Ok(out)
            }
        }
    }
}
