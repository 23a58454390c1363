//! The running daemon: roots and their state, the scan queue, the current
//! search snapshot, and start-up/shutdown.
//!
//! [`Engine`] is the one cloneable handle the server holds. Scans run one at
//! a time on a dedicated thread; after a scan that changed anything, the
//! search snapshot is reloaded from SQLite and swapped in atomically.

use crate::{LockOk, RwLockOk};
pub mod reload;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock, mpsc};
use std::time::{Duration, Instant};

use crate::Error;
use crate::ingest::exclude::{Rules, Verdict};
use crate::ingest::scan::{self, Outcome, Progress, ScanTarget};
use crate::ingest::watch::{Batch, COOKIE_PREFIX, Notice, Watcher, is_cookie};
use crate::queries::du;
use crate::queries::dupes::{self, HashMode, HashStats, RootMode};
use crate::queries::search::{ChangeEvent, Snapshot};
use crate::store::RootRow;
use crate::store::{Op, Store, WriteHandle};

/// Lifecycle of a root, as `status` shows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RootState {
    Pending,
    Scanning,
    Ready,
    Error,
}

/// What the daemon knows about a root beyond its row.
#[derive(Debug)]
pub struct RootRuntime {
    pub state: RootState,
    pub progress: Arc<Progress>,
    pub errors: u64,
    pub error: Option<String>,
}

/// How the daemon watches for changes.
#[derive(Clone, Debug)]
pub struct WatchOptions {
    pub enabled: bool,
    /// At most this many watches (0: as many as the OS allows).
    pub max_watches: usize,
    /// How often folders left unwatched are rescanned.
    pub poll_interval: Duration,
    /// A batch closes after this long without events...
    pub debounce: Duration,
    /// ...or this long after it opened.
    pub ceiling: Duration,
}

impl Default for WatchOptions {
    fn default() -> Self {
        WatchOptions {
            enabled: true,
            max_watches: 0,
            poll_interval: Duration::from_secs(30),
            debounce: Duration::from_millis(20),
            ceiling: Duration::from_millis(200),
        }
    }
}

/// What `verify` found.
#[derive(Debug, Default)]
pub struct Verified {
    pub differences: Vec<scan::Difference>,
    pub checked: u64,
    pub fixed: u64,
}

/// A root with its row and runtime state, for status and `roots list`.
#[derive(Clone, Debug)]
pub struct RootView {
    pub path: Vec<u8>,
    pub state: RootState,
    pub entries: u64,
    pub scanned: u64,
    pub errors: u64,
    pub scanned_at: i64,
    pub error: Option<String>,
    /// "live", "partly polled: N folders" or "off".
    pub watch: String,
    /// "off", "on-demand" or "background".
    pub hashing: String,
}

/// Work for the scanner thread: scans and watcher batches are applied one
/// at a time, so they never write conflicting changes.
enum Job {
    Scan(ScanJob),
    Apply(Batch),
    Poll,
}

struct ScanJob {
    root_id: i64,
    /// A folder under the root; `None` for the whole root.
    path: Option<PathBuf>,
    progress: Arc<Progress>,
    done: Option<mpsc::Sender<Result<Outcome, String>>>,
}

/// The daemon's state, shared by the server and the scanner.
pub struct Engine {
    pub store: Arc<Store>,
    writer: WriteHandle,
    snapshot: Arc<RwLock<Snapshot>>,
    roots: Mutex<HashMap<i64, RootRuntime>>,
    jobs: Mutex<Option<mpsc::Sender<Job>>>,
    pub watcher: Option<Arc<Watcher>>,
    watch: WatchOptions,
    events: tokio::sync::broadcast::Sender<ChangeEvent>,
    /// `--sync` callers waiting for their cookie file's event.
    cookies: Mutex<HashMap<PathBuf, (Instant, mpsc::Sender<()>)>>,
    cookie_seq: std::sync::atomic::AtomicU64,
    /// `rows_written` when memory was last given back.
    rows_at_idle: std::sync::atomic::AtomicU64,
    pub started: Instant,
    /// What is indexed: exclusions, sensitive tiers, per-root file-system
    /// crossing. Each scan takes the current rules for its whole walk;
    /// [`Engine::set_rules`] swaps them.
    rules: RwLock<Arc<Rules>>,
    /// Set at shutdown: a running scan stops at its next entry.
    cancel: AtomicBool,
    scanner: Mutex<Option<std::thread::JoinHandle<()>>>,
    /// Content hashing for duplicates: modes, counters, the last pass.
    pub hashing: Hashing,
}

/// How roots are hashed, what hashing has read, and the last pass.
#[derive(Debug, Default)]
pub struct Hashing {
    settings: Mutex<HashSettings>,
    pub stats: HashStats,
    /// One duplicate search at a time (background or asked for), so no
    /// file is read twice for the same answer.
    running: Mutex<()>,
    pub last_pass: Mutex<Option<LastPass>>,
    background_started: AtomicBool,
    /// The last answer, reused while nothing under the roots changed.
    last_answer: Mutex<Option<(AnswerKey, dupes::Report)>>,
    /// Rows of the `hashes` table, counted once after each search (status
    /// is polled often; the table can hold millions of rows).
    cached_rows: Mutex<Option<u64>>,
}

/// What an answer was computed for: the request and the change generation
/// (see [`Engine::generation`]).
#[derive(Clone, Debug, PartialEq, Eq)]
struct AnswerKey {
    scope: Option<i64>,
    min_size: u64,
    include_empty: bool,
    generation: u64,
}

/// The hashing mode of every root: a default and per-root exceptions.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HashSettings {
    pub default: HashMode,
    pub per_root: HashMap<PathBuf, HashMode>,
}

impl HashSettings {
    pub fn mode_for(&self, root: &Path) -> HashMode {
        self.per_root.get(root).copied().unwrap_or(self.default)
    }
}

/// The most recent duplicate search, for status.
#[derive(Clone, Debug)]
pub struct LastPass {
    pub at: Instant,
    /// `None`: every hashed root.
    pub scope: Option<Vec<u8>>,
    pub candidates: u64,
    pub files_read: u64,
    pub unreadable: u64,
    pub background: bool,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("store", &self.store)
            .finish()
    }
}

impl Engine {
    /// Creates the engine and starts the scanner thread. `wanted` replaces
    /// the index's roots when given; otherwise the recorded roots are kept
    /// (the home directory when there are none).
    pub fn start(
        store: Arc<Store>,
        writer: WriteHandle,
        snapshot: Arc<RwLock<Snapshot>>,
        wanted: Option<Vec<PathBuf>>,
        rules: Rules,
        watch: WatchOptions,
        events: tokio::sync::broadcast::Sender<ChangeEvent>,
    ) -> Result<Arc<Engine>, Error> {
        // Test hook: a tiny queue makes a burst of events overflow it.
        let capacity = std::env::var("FSINDEX_TEST_NOTICE_CAPACITY")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(1 << 16);
        let (notices_tx, notices_rx) = mpsc::sync_channel::<Notice>(capacity);
        let watcher = if watch.enabled {
            match Watcher::start(watch.max_watches, notices_tx) {
                Ok(w) => Some(w),
                Err(e) => {
                    let msg = format!(
                        "cannot watch for changes ({e}); the index is only updated by rescans"
                    );
                    tracing::error!("{msg}");
                    store.notice(msg);
                    None
                }
            }
        } else {
            None
        };
        tracing::info!(rules = ?rules, "what is indexed");
        let engine = Arc::new(Engine {
            store,
            writer,
            snapshot,
            roots: Mutex::new(HashMap::new()),
            jobs: Mutex::new(None),
            started: Instant::now(),
            rules: RwLock::new(Arc::new(rules)),
            cancel: AtomicBool::new(false),
            scanner: Mutex::new(None),
            hashing: Hashing::default(),
            watcher,
            watch,
            events,
            cookies: Mutex::new(HashMap::new()),
            cookie_seq: std::sync::atomic::AtomicU64::new(0),
            rows_at_idle: std::sync::atomic::AtomicU64::new(0),
        });
        let mut recorded = engine.store.read(crate::store::roots)?;
        let wanted = match wanted {
            Some(w) => Some(w),
            None if recorded.is_empty() => Some(vec![default_root()]),
            None => None,
        };
        if let Some(wanted) = wanted {
            let mut canon = Vec::new();
            for w in wanted {
                let c = scan::canonical_root(&w)?;
                if !canon.contains(&c) {
                    canon.push(c);
                }
            }
            check_no_nesting(&canon)?;
            let mut changed = false;
            for r in recorded.iter().filter(|r| {
                !canon
                    .iter()
                    .any(|c| crate::platform::bytes::vec(c) == r.path)
            }) {
                tracing::info!(root = %String::from_utf8_lossy(&r.path), "root no longer configured; removing");
                engine.writer.send(vec![Op::RemoveRoot { root_id: r.id }])?;
                changed = true;
            }
            for c in canon.iter().filter(|c| {
                !recorded
                    .iter()
                    .any(|r| r.path == crate::platform::bytes::vec(c))
            }) {
                engine.add_root_row(c)?;
                changed = true;
            }
            // Only when something changed: the writer's first job is loading
            // the search snapshot, and the restart scan need not wait for it.
            if changed {
                engine.writer.flush()?;
                recorded = engine.store.read(crate::store::roots)?;
            }
        }

        let (tx, rx) = mpsc::channel::<Job>();
        *engine.jobs.lock_ok() = Some(tx);
        for r in &recorded {
            engine.queue_scan(r.id, None, None)?;
        }
        let e = engine.clone();
        let handle = std::thread::Builder::new()
            .name("fsindex-scan".into())
            .spawn(move || e.scanner_loop(rx))?;
        *engine.scanner.lock_ok() = Some(handle);
        if engine.watcher.is_some() {
            let e = engine.clone();
            std::thread::Builder::new()
                .name("fsindex-events".into())
                .spawn(move || e.event_loop(notices_rx))?;
        }
        Ok(engine)
    }

    fn add_root_row(&self, path: &Path) -> Result<i64, Error> {
        let (tx, rx) = mpsc::channel();
        self.writer.send(vec![Op::AddRoot {
            path: crate::platform::bytes::vec(path),
            reply: tx,
        }])?;
        rx.recv().map_err(|_| Error::WriterGone)?
    }

    /// A stream of applied changes (see `Subscribe`).
    pub fn subscribe(&self) -> tokio::sync::broadcast::Receiver<ChangeEvent> {
        self.events.subscribe()
    }

    /// The search snapshot (kept current by the writer).
    pub fn snapshot(&self) -> Arc<RwLock<Snapshot>> {
        self.snapshot.clone()
    }

    /// Queues a scan of a root (or a folder under it).
    fn queue_scan(
        &self,
        root_id: i64,
        path: Option<PathBuf>,
        done: Option<mpsc::Sender<Result<Outcome, String>>>,
    ) -> Result<Arc<Progress>, Error> {
        let progress = Arc::new(Progress::default());
        {
            let mut roots = self.roots.lock_ok();
            let rt = roots.entry(root_id).or_insert_with(|| RootRuntime {
                state: RootState::Pending,
                progress: progress.clone(),
                errors: 0,
                error: None,
            });
            if rt.state != RootState::Scanning {
                rt.state = RootState::Pending;
            }
        }
        let jobs = self.jobs.lock_ok();
        let tx = jobs.as_ref().ok_or(Error::WriterGone)?;
        tx.send(Job::Scan(ScanJob {
            root_id,
            path,
            progress: progress.clone(),
            done,
        }))
        .map_err(|_| Error::WriterGone)?;
        Ok(progress)
    }

    fn scanner_loop(self: Arc<Self>, rx: mpsc::Receiver<Job>) {
        // Scans are background work: they must not storm the machine
        // (Tracker's and Baloo's worst complaints). The walk's threads
        // inherit this.
        crate::platform::process::lower_thread_priority();
        while let Ok(job) = rx.recv() {
            let job = match job {
                Job::Scan(job) => job,
                Job::Apply(batch) => {
                    if let Err(e) = self.apply_batch(batch) {
                        tracing::error!("applying file-system events failed: {e}; rescanning");
                        self.rescan_all_now();
                    }
                    continue;
                }
                Job::Poll => {
                    self.poll_unwatched();
                    continue;
                }
            };
            let result = self.run_job(&job);
            let mut roots = self.roots.lock_ok();
            if let Some(rt) = roots.get_mut(&job.root_id) {
                match &result {
                    Ok(o) => {
                        rt.state = RootState::Ready;
                        rt.errors = o.errors;
                        rt.error = None;
                    }
                    Err(e) => {
                        rt.state = RootState::Error;
                        rt.error = Some(e.clone());
                    }
                }
            }
            drop(roots);
            if let Some(done) = job.done {
                let _ = done.send(result);
            }
        }
    }

    fn run_job(&self, job: &ScanJob) -> Result<Outcome, String> {
        let root = self
            .store
            .read(crate::store::roots)
            .map_err(|e| e.to_string())?
            .into_iter()
            .find(|r| r.id == job.root_id)
            .ok_or_else(|| "the root was removed".to_string())?;
        if let Some(rt) = self.roots.lock_ok().get_mut(&job.root_id) {
            rt.state = RootState::Scanning;
            rt.progress = job.progress.clone();
        }
        let target = self.target_for(&root, job.path.as_deref())?;
        let outcome = self.scan_target(&target, &job.progress).map_err(|e| {
            let msg = format!("scanning {} failed: {e}", target.start.display());
            tracing::error!("{msg}");
            msg
        })?;
        let _ = self.writer.send(vec![Op::Idle]);
        crate::platform::process::release_memory();
        Ok(outcome)
    }

    /// What to walk for `path` (a root or a folder under it; `None` for
    /// the whole root): the nearest folder the index already has.
    fn target_for(&self, root: &RootRow, path: Option<&Path>) -> Result<ScanTarget, String> {
        let root_path = crate::platform::bytes::path_buf(&root.path);
        let rules = self.rules();
        let cross_filesystems = rules.cross_filesystems(&root_path);
        let target = match path {
            Some(p) if p != root_path && root.entry_id.is_some() => {
                // The nearest folder the index has (and the rules let in):
                // a brand-new folder is scanned from its parent.
                let mut at = p.to_owned();
                loop {
                    match self.store.read(|c| crate::store::resolve(c, &at)) {
                        Ok((_, id))
                            if crate::platform::fs::is_dir(&at)
                                && !rules.path_verdict(&root_path, &at, true).hides() =>
                        {
                            break ScanTarget {
                                root_id: root.id,
                                is_root: at == root_path,
                                start: at,
                                start_id: Some(id),
                                cross_filesystems,
                                rules,
                            };
                        }
                        _ => match at.parent() {
                            Some(parent) if parent.starts_with(&root_path) => {
                                at = parent.to_owned()
                            }
                            _ => {
                                return Err(format!(
                                    "{} is not under {}",
                                    p.display(),
                                    root_path.display()
                                ));
                            }
                        },
                    }
                }
            }
            _ => ScanTarget {
                root_id: root.id,
                start: root_path.clone(),
                start_id: root.entry_id,
                is_root: true,
                cross_filesystems,
                rules,
            },
        };
        Ok(target)
    }

    /// Walks `path` (or every root) afresh and compares it with the index.
    /// With `fix`, rescans what was verified and waits for it.
    pub fn verify(&self, path: Option<&Path>, fix: bool) -> Result<Verified, Error> {
        let roots = self.store.read(crate::store::roots)?;
        let mut targets = Vec::new();
        match path {
            None => {
                for r in &roots {
                    targets.push(self.target_for(r, None).map_err(Error::InvalidArgument)?);
                }
            }
            Some(p) => {
                let root = walk_root(&roots, p)?;
                targets.push(
                    self.target_for(root, Some(p))
                        .map_err(Error::InvalidArgument)?,
                );
            }
        }
        let mut out = Verified::default();
        for target in &targets {
            let progress = Progress::default();
            out.differences
                .extend(scan::verify(&self.store, target, &progress)?);
            out.checked += progress.scanned.load(Ordering::Relaxed);
        }
        if fix && !out.differences.is_empty() {
            for target in &targets {
                let (tx, rx) = mpsc::channel();
                self.queue_scan(target.root_id, Some(target.start.clone()), Some(tx))?;
                match rx.recv() {
                    Ok(Ok(o)) => out.fixed += o.changes,
                    Ok(Err(e)) => return Err(Error::InvalidArgument(e)),
                    Err(_) => return Err(Error::Cancelled),
                }
            }
        }
        Ok(out)
    }

    fn send_job(&self, job: Job) {
        if let Some(tx) = self.jobs.lock_ok().as_ref() {
            let _ = tx.send(job);
        }
    }

    /// Coalesces watcher notices into batches: a batch closes after
    /// `debounce` without events, or `ceiling` after it opened, so a steady
    /// stream cannot postpone updates forever.
    fn event_loop(self: Arc<Self>, rx: mpsc::Receiver<Notice>) {
        let Some(watcher) = self.watcher.clone() else {
            return;
        };
        let mut next_poll = Instant::now() + self.watch.poll_interval;
        let mut recent: Vec<Instant> = Vec::new();
        loop {
            if self.cancel.load(Ordering::Relaxed) {
                return;
            }
            let wait = next_poll
                .saturating_duration_since(Instant::now())
                .min(Duration::from_millis(500));
            let mut batch = Batch::default();
            match rx.recv_timeout(wait) {
                Ok(n) => {
                    batch.add(n);
                    let opened = Instant::now();
                    loop {
                        let left = self.watch.ceiling.saturating_sub(opened.elapsed());
                        if left.is_zero() {
                            break;
                        }
                        match rx.recv_timeout(self.watch.debounce.min(left)) {
                            Ok(n) => batch.add(n),
                            Err(mpsc::RecvTimeoutError::Timeout) => break,
                            Err(mpsc::RecvTimeoutError::Disconnected) => return,
                        }
                    }
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => return,
            }
            if watcher.lost.swap(false, Ordering::SeqCst) {
                watcher.stats.overflows.fetch_add(1, Ordering::Relaxed);
                tracing::warn!("watch events were dropped (the daemon fell behind); rescanning");
                batch.rescan_all = true;
            }
            if batch.rescan_all {
                // Recrawl with backoff (as Watchman does): three quick
                // ones, then waits doubling from 100 ms to 10 s while the
                // storm lasts; notices meanwhile are covered by the rescan.
                let now = Instant::now();
                recent.retain(|t| now.duration_since(*t) < Duration::from_secs(60));
                recent.push(now);
                if recent.len() > 3 {
                    let wait = Duration::from_millis(100 << (recent.len() - 4).min(7))
                        .min(Duration::from_secs(10));
                    tracing::warn!(
                        recrawls = recent.len(),
                        ?wait,
                        "repeated lost events; backing off before rescanning"
                    );
                    let until = Instant::now() + wait;
                    while let Some(left) = until.checked_duration_since(Instant::now()) {
                        match rx.recv_timeout(left) {
                            Ok(n) => batch.add(n),
                            Err(mpsc::RecvTimeoutError::Timeout) => break,
                            Err(mpsc::RecvTimeoutError::Disconnected) => return,
                        }
                    }
                }
            }
            batch.seal();
            if !batch.is_empty() {
                self.send_job(Job::Apply(batch));
            }
            if Instant::now() >= next_poll {
                if !watcher.polled_tops().is_empty() {
                    self.send_job(Job::Poll);
                }
                next_poll = Instant::now() + self.watch.poll_interval;
            }
        }
    }

    /// Applies one batch of watcher notices (on the scanner thread).
    fn apply_batch(&self, mut b: Batch) -> Result<(), Error> {
        let watcher = self.watcher.as_ref();
        if b.rescan_all {
            if let Some(w) = watcher {
                w.stats.recrawls.fetch_add(1, Ordering::Relaxed);
            }
            // Cookies written before the rescan starts are covered by it,
            // even when their own event was among those lost.
            let started = Instant::now();
            self.rescan_all_now();
            self.signal_cookies(&b.cookies);
            self.signal_registered_before(started);
            return Ok(());
        }
        let roots = self.store.read(crate::store::roots)?;
        let rules = self.rules();
        // 1. Renames seen whole: one row each, the subtree follows. A
        // rename to a name the rules keep out is a delete (the new name
        // never reaches the index); one from such a name is a create.
        let mut ops = Vec::new();
        // Inodes with several links whose rows change: their other paths
        // get their link counts refreshed.
        let mut links = scan::LinkCounts::new();
        for (from, to) in std::mem::take(&mut b.moves) {
            let src = self.store.read(|c| crate::store::resolve(c, &from)).ok();
            let dst_parent = to
                .parent()
                .and_then(|p| self.store.read(|c| crate::store::resolve(c, p)).ok());
            let meta = crate::platform::fs::lstat(&to);
            let allowed = meta
                .as_ref()
                .is_ok_and(|m| !rules.verdict(&to, m.is_dir()).hides());
            match (src, dst_parent, to.file_name()) {
                (Some((_, id)), Some((_, parent_id)), Some(name))
                    if allowed && !is_cookie(name) =>
                {
                    if let Ok((_, old)) = self.store.read(|c| crate::store::resolve(c, &to))
                        && old != id
                    {
                        // Replaced (an editor's save): if it had other
                        // links, they lost one.
                        self.store
                            .read(|c| scan::linked_under(c, old, &mut links))?;
                        ops.push(Op::Delete { id: old });
                    }
                    ops.push(Op::Move {
                        id,
                        parent_id,
                        name: crate::platform::bytes::vec(Path::new(name)),
                    });
                    if let Some(w) = watcher {
                        w.rename_prefix(&from, &to);
                    }
                    // Changes seen under the old path now live under the new one.
                    b.changed = std::mem::take(&mut b.changed)
                        .into_iter()
                        .map(|p| rebase(p, &from, &to))
                        .collect();
                    b.rescan = std::mem::take(&mut b.rescan)
                        .into_iter()
                        .map(|p| rebase(p, &from, &to))
                        .collect();
                    // Refresh metadata of the entry and both folders.
                    b.changed.insert(from);
                    b.changed.insert(to.clone());
                    // Events about paths inside the folder may have been
                    // applied (as deletions) before this move arrived: walk
                    // the moved subtree once. Unchanged, it writes nothing.
                    if crate::platform::fs::is_dir(&to) {
                        b.rescan.insert(to);
                    }
                }
                _ => {
                    b.changed.insert(from);
                    b.changed.insert(to);
                }
            }
        }
        if !ops.is_empty() {
            self.writer.send(ops)?;
            self.writer.flush()?;
        }
        // 2. Single entries, folder by folder.
        let mut groups: std::collections::BTreeMap<PathBuf, Vec<std::ffi::OsString>> =
            Default::default();
        for p in std::mem::take(&mut b.changed) {
            if let (Some(dir), Some(name)) = (p.parent(), p.file_name()) {
                groups
                    .entry(dir.to_owned())
                    .or_default()
                    .push(name.to_owned());
            }
        }
        let mut deep: Vec<PathBuf> = b.rescan.iter().cloned().collect();
        let mut new_dirs: Vec<PathBuf> = Vec::new();
        for (dir, names) in groups {
            if new_dirs.iter().any(|n| dir.starts_with(n)) {
                continue; // inside a new folder: its whole scan covers it
            }
            let Some(root) = crate::store::root_of(&roots, &dir) else {
                // An event about a root itself.
                for n in names {
                    let p = dir.join(n);
                    if roots
                        .iter()
                        .any(|r| crate::platform::bytes::path_buf(&r.path) == p)
                    {
                        deep.push(p);
                    }
                }
                continue;
            };
            let root_path = crate::platform::bytes::path_buf(&root.path);
            if scan::through_symlink(&root_path, &dir) {
                // The folder was replaced by a symlink (or lies under one):
                // that change is in its parent's group; what the events say
                // of names inside it is not ours, and a stat through the
                // link would follow it.
                continue;
            }
            match self.store.read(|c| crate::store::resolve(c, &dir)) {
                Ok((_, dir_id)) => {
                    let found = self.store.read(|c| {
                        scan::apply_names(
                            &self.store,
                            c,
                            &self.writer,
                            dir_id,
                            &dir,
                            &names,
                            scan::Scope {
                                rules: &rules,
                                cross_filesystems: rules.cross_filesystems(&root_path),
                                watcher: watcher.map(|w| &**w),
                            },
                            &mut links,
                        )
                    })?;
                    new_dirs.extend(found.into_iter().map(|(p, _)| p));
                }
                // A watched folder the rules now keep out (they changed
                // since it was watched): its events are not ours any more.
                Err(_) if rules.path_verdict(&root_path, &dir, true).hides() => {
                    if let Some(w) = watcher {
                        w.unwatch_under(&dir);
                    }
                }
                // The folder is not indexed yet (its own event was lost or
                // is in this batch under a new folder): scan it whole.
                Err(_) => deep.push(dir),
            }
        }
        self.writer.flush()?;
        scan::refresh_links(&self.store, &self.writer, links)?;
        // 3. Whole scans: new folders (watched first, then listed) and
        // subtrees to recrawl.
        deep.extend(new_dirs);
        deep.sort();
        let mut done: Vec<PathBuf> = Vec::new();
        for d in deep {
            if done.iter().any(|x| d.starts_with(x)) {
                continue;
            }
            let Some(root) = crate::store::root_of(&roots, &d) else {
                continue;
            };
            let root_path = crate::platform::bytes::path_buf(&root.path);
            if !crate::platform::fs::is_dir(&d) && d != root_path
                || scan::through_symlink(&root_path, &d)
            {
                continue; // gone again (or a symlink now): its event follows
            }
            let target = self
                .target_for(root, Some(&d))
                .map_err(Error::InvalidArgument)?;
            self.scan_target(&target, &Progress::default())?;
            done.push(d);
        }
        self.signal_cookies(&b.cookies);
        // After a large burst, give memory back as after a scan.
        let written = self.store.rows_written.load(Ordering::Relaxed);
        if written.saturating_sub(self.rows_at_idle.swap(written, Ordering::Relaxed)) > 10_000 {
            let _ = self.writer.send(vec![Op::Idle]);
        }
        Ok(())
    }

    /// Walks `target` and writes what differs, watching folders as it goes.
    fn scan_target(&self, target: &ScanTarget, progress: &Progress) -> Result<Outcome, Error> {
        scan::scan(
            &self.store,
            &self.writer,
            target,
            progress,
            &self.cancel,
            self.watcher.as_ref(),
        )
    }

    /// Rescans every root now (lost events), on the scanner thread.
    fn rescan_all_now(&self) {
        let Ok(roots) = self.store.read(crate::store::roots) else {
            return;
        };
        for root in &roots {
            let Ok(target) = self.target_for(root, None) else {
                continue;
            };
            if let Err(e) = self.scan_target(&target, &Progress::default()) {
                tracing::error!("rescan of {} failed: {e}", target.start.display());
            }
        }
    }

    /// Rescans the folders left unwatched by the watch limit.
    fn poll_unwatched(&self) {
        let Some(watcher) = &self.watcher else { return };
        let Ok(roots) = self.store.read(crate::store::roots) else {
            return;
        };
        for top in watcher.polled_tops() {
            let Some(root) = crate::store::root_of(&roots, &top) else {
                watcher.forget_under(&top);
                continue;
            };
            let Ok(target) = self.target_for(root, Some(&top)) else {
                continue;
            };
            if let Err(e) = self.scan_target(&target, &Progress::default()) {
                tracing::warn!("polling {} failed: {e}", top.display());
            }
        }
    }

    /// Wakes `--sync` callers whose cookie event is in an applied batch;
    /// an event received before a caller registered is an older one.
    fn signal_cookies(&self, cookies: &[(PathBuf, Instant)]) {
        if cookies.is_empty() {
            return;
        }
        let mut waiting = self.cookies.lock_ok();
        for (path, received) in cookies {
            if waiting
                .get(path)
                .is_some_and(|(registered, _)| registered <= received)
                && let Some((_, tx)) = waiting.remove(path)
            {
                let _ = tx.send(());
            }
        }
    }

    /// After a full rescan that started at `started`: callers registered
    /// before it are covered, even if their cookie event was lost.
    fn signal_registered_before(&self, started: Instant) {
        let mut waiting = self.cookies.lock_ok();
        let done: Vec<PathBuf> = waiting
            .iter()
            .filter(|(_, (r, _))| *r <= started)
            .map(|(p, _)| p.clone())
            .collect();
        for p in done {
            if let Some((_, tx)) = waiting.remove(&p) {
                let _ = tx.send(());
            }
        }
    }

    /// Returns once every change made before the call is in the index: a
    /// cookie file is written in each root and its event waited for
    /// (Watchman's cookies).
    pub fn sync(&self, timeout: Duration) -> Result<(), Error> {
        if self.watcher.is_none() {
            return Ok(());
        }
        let roots = self.store.read(crate::store::roots)?;
        let deadline = Instant::now() + timeout;
        let mut cookies = Vec::new();
        for r in &roots {
            let n = self.cookie_seq.fetch_add(1, Ordering::Relaxed);
            cookies.push(
                crate::platform::bytes::path_buf(&r.path)
                    .join(format!("{COOKIE_PREFIX}{}-{n}", std::process::id())),
            );
        }
        // Create every cookie, wait for their events; then delete them and
        // wait again, so the roots' own rows (mtime) are current too.
        for phase in ["create", "delete"] {
            let mut waits = Vec::new();
            for path in &cookies {
                let (tx, rx) = mpsc::channel();
                self.cookies
                    .lock_ok()
                    .insert(path.clone(), (Instant::now(), tx));
                let done = if phase == "create" {
                    std::fs::write(path, b"")
                } else {
                    std::fs::remove_file(path)
                };
                if let Err(e) = done {
                    self.cookies.lock_ok().remove(path);
                    let _ = std::fs::remove_file(path);
                    return Err(Error::InvalidArgument(format!(
                        "--sync: cannot {phase} {}: {e}",
                        path.display()
                    )));
                }
                waits.push((path, rx));
            }
            for (path, rx) in waits {
                let got = rx.recv_timeout(deadline.saturating_duration_since(Instant::now()));
                self.cookies.lock_ok().remove(path);
                if got.is_err() {
                    let _ = std::fs::remove_file(path);
                    return Err(Error::InvalidArgument(format!(
                        "--sync: the change event for {} did not arrive within {timeout:?} (is that root polled?)",
                        path.display()
                    )));
                }
            }
        }
        Ok(())
    }

    /// Rescans `path` (a root or a folder under one), or every root.
    pub fn rescan(
        &self,
        path: Option<&Path>,
        done: Option<mpsc::Sender<Result<Outcome, String>>>,
    ) -> Result<Vec<Arc<Progress>>, Error> {
        let roots = self.store.read(crate::store::roots)?;
        match path {
            None => {
                let mut out = Vec::new();
                for r in &roots {
                    out.push(self.queue_scan(r.id, None, done.clone())?);
                }
                Ok(out)
            }
            Some(p) => {
                let root = walk_root(&roots, p)?;
                Ok(vec![self.queue_scan(root.id, Some(p.to_owned()), done)?])
            }
        }
    }

    /// Adds a root and queues its first scan.
    pub fn add_root(&self, path: &Path) -> Result<(), Error> {
        let canon = scan::canonical_root(path)?;
        let roots = self.store.read(crate::store::roots)?;
        if roots
            .iter()
            .any(|r| r.path == crate::platform::bytes::vec(&canon))
        {
            return Err(Error::InvalidArgument(format!(
                "{} is already a root",
                canon.display()
            )));
        }
        let mut all: Vec<PathBuf> = roots
            .iter()
            .map(|r| crate::platform::bytes::path_buf(&r.path))
            .collect();
        all.push(canon.clone());
        check_no_nesting(&all)?;
        let id = self.add_root_row(&canon)?;
        self.queue_scan(id, None, None)?;
        Ok(())
    }

    /// Removes a root and its entries; searches stop returning them at once.
    pub fn remove_root(&self, path: &Path) -> Result<(), Error> {
        let roots = self.store.read(crate::store::roots)?;
        let wanted = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_owned());
        let root = roots
            .iter()
            .find(|r| {
                r.path == crate::platform::bytes::vec(path)
                    || r.path == crate::platform::bytes::vec(&wanted)
            })
            .ok_or_else(|| {
                Error::NotFound(format!(
                    "{} is not a root (roots: {})",
                    path.display(),
                    root_list(&roots)
                ))
            })?;
        self.writer
            .send(vec![Op::RemoveRoot { root_id: root.id }])?;
        self.writer.flush()?;
        self.roots.lock_ok().remove(&root.id);
        Ok(())
    }

    /// The rules in force: what is indexed, flagged or kept out.
    pub fn rules(&self) -> Arc<Rules> {
        self.rules.read_ok().clone()
    }

    /// Swaps in new rules (a reloaded config) and rescans every root, so
    /// that entries they now keep out leave the index and entries they now
    /// let in arrive. Watches on folders they keep out are dropped at once.
    pub fn set_rules(&self, rules: Rules) -> Result<(), Error> {
        tracing::info!(rules = ?rules, "what is indexed changed; rescanning every root");
        let rules = Arc::new(rules);
        *self.rules.write_ok() = rules.clone();
        let roots = self.store.read(crate::store::roots)?;
        if let Some(w) = &self.watcher {
            w.unwatch_where(|p| {
                crate::store::root_of(&roots, p).is_some_and(|r| {
                    rules
                        .path_verdict(&crate::platform::bytes::path_buf(&r.path), p, true)
                        .hides()
                })
            });
        }
        self.rescan(None, None)?;
        Ok(())
    }

    /// One entry in detail, as `info` shows it. An entry the rules keep out
    /// is answered exactly like a path that does not exist, except a
    /// SKIP-tier one asked for by its exact path: that one is described
    /// from a live lstat, flagged, when a scan of its root would reach it.
    pub fn stat(&self, path: &Path) -> Result<crate::queries::browse::Info, Error> {
        let roots = self.store.read(crate::store::roots)?;
        let Some(root) = crate::store::root_of(&roots, path) else {
            return self.store.read(|c| crate::queries::browse::stat(c, path));
        };
        let root_path = crate::platform::bytes::path_buf(&root.path);
        let rules = self.rules();
        let meta = crate::platform::fs::lstat(path);
        let is_dir = meta.as_ref().is_ok_and(|m| m.is_dir());
        // Exactly what a path that does not exist gets: the index has no
        // entry for a hidden path (unless the rules changed a moment ago
        // and the rescan has not removed it yet).
        let not_found = || match self.store.read(|c| crate::store::resolve(c, path)) {
            Err(e) => e,
            Ok(_) => Error::NotFound(
                String::from_utf8_lossy(&crate::platform::bytes::vec(path)).into_owned(),
            ),
        };
        match rules.path_verdict(&root_path, path, is_dir) {
            Verdict::Skip => match meta {
                Ok(m) if scan::reachable(&root_path, path, rules.cross_filesystems(&root_path)) => {
                    let mut info = crate::queries::browse::stat_live(path, &m);
                    info.sensitive = true;
                    info.skip_tier = true;
                    Ok(info)
                }
                _ => Err(not_found()),
            },
            v if v.hides() => Err(not_found()),
            v => {
                let mut info = self.store.read(|c| crate::queries::browse::stat(c, path))?;
                info.sensitive = v == Verdict::Warn;
                Ok(info)
            }
        }
    }

    /// Sets how each root is hashed; starts the background hasher once a
    /// root asks for it.
    pub fn set_hashing(self: &Arc<Self>, settings: HashSettings) -> Result<(), Error> {
        let background = settings.default == HashMode::Background
            || settings
                .per_root
                .values()
                .any(|m| *m == HashMode::Background);
        *self.hashing.settings.lock_ok() = settings;
        if background && !self.hashing.background_started.swap(true, Ordering::SeqCst) {
            let e = self.clone();
            std::thread::Builder::new()
                .name("fsindex-hash".into())
                .spawn(move || e.hash_loop())?;
        }
        Ok(())
    }

    /// Inodes with a cached hash.
    pub fn cached_hashes(&self) -> Result<u64, Error> {
        let mut n = self.hashing.cached_rows.lock_ok();
        if let Some(n) = *n {
            return Ok(n);
        }
        let count = self
            .store
            .read(|c| Ok(c.query_row("SELECT COUNT(*) FROM hashes", [], |r| r.get::<_, i64>(0))?))?
            as u64;
        *n = Some(count);
        Ok(count)
    }

    /// The hashing mode of a root.
    pub fn hash_mode(&self, root: &[u8]) -> HashMode {
        self.hashing
            .settings
            .lock_ok()
            .mode_for(&crate::platform::bytes::path_buf(root))
    }

    fn root_modes(&self, roots: &[RootRow]) -> Vec<RootMode> {
        roots
            .iter()
            .filter_map(|r| {
                Some(RootMode {
                    entry_id: r.entry_id?,
                    path: r.path.clone(),
                    mode: self.hash_mode(&r.path),
                })
            })
            .collect()
    }

    /// Duplicate files under `path` (or every root whose hashing is not
    /// off). `progress` cancels the search by returning false.
    pub fn duplicates(
        &self,
        path: Option<&Path>,
        min_size: u64,
        include_empty: bool,
        progress: &mut dyn FnMut(dupes::Progress) -> bool,
    ) -> Result<dupes::Report, Error> {
        self.find_duplicates(path, min_size, include_empty, false, progress)
    }

    fn find_duplicates(
        &self,
        path: Option<&Path>,
        min_size: u64,
        include_empty: bool,
        background: bool,
        progress: &mut dyn FnMut(dupes::Progress) -> bool,
    ) -> Result<dupes::Report, Error> {
        let roots = self.store.read(crate::store::roots)?;
        let modes = self.root_modes(&roots);
        let scope = match path {
            None => None,
            Some(p) => {
                let (root, id) = self.store.read(|c| crate::store::resolve(c, p))?;
                if self.hash_mode(&root.path) == HashMode::Off {
                    return Err(Error::Precondition(format!(
                        "hashing is off for the root {} (config.toml: root_hashing)",
                        String::from_utf8_lossy(&root.path)
                    )));
                }
                Some(id)
            }
        };
        let _one = self.hashing.running.lock_ok();
        let started = Instant::now();
        let req = dupes::Request {
            scope,
            min_size,
            include_empty,
        };
        // Nothing under the roots changed since the same question was
        // answered (no event, no entry written, no rescan) and no file of
        // the answer has a hard link the watcher cannot see: the answer
        // stands, and nothing needs reading or even a stat.
        let key = self.generation().map(|generation| AnswerKey {
            scope,
            min_size,
            include_empty,
            generation,
        });
        let reused = {
            let last = self.hashing.last_answer.lock_ok();
            match (&key, last.as_ref()) {
                (Some(k), Some((lk, r)))
                    if k == lk && r.pinned.iter().all(dupes::Pinned::unchanged) =>
                {
                    let mut r = r.clone();
                    r.cache_hits = r.candidates;
                    r.files_read = 0;
                    r.bytes_read = 0;
                    Some(r)
                }
                _ => None,
            }
        };
        let fresh = reused.is_none();
        let report = match reused {
            Some(r) => r,
            None => self.store.read(|c| {
                dupes::find(
                    c,
                    &self.snapshot,
                    &self.writer,
                    &modes,
                    &req,
                    &self.hashing.stats,
                    progress,
                )
            })?,
        };
        if fresh {
            *self.hashing.last_answer.lock_ok() = match key {
                Some(k) if report.racy == 0 && report.changed == 0 && report.unreadable == 0 => {
                    Some((k, report.clone()))
                }
                _ => None,
            };
        }
        // The next search must see the hashes this one computed, and the
        // next status count them.
        self.writer.flush()?;
        if fresh {
            *self.hashing.cached_rows.lock_ok() = None;
        }
        tracing::info!(
            ms = started.elapsed().as_millis() as u64,
            candidates = report.candidates,
            read = report.files_read,
            cached = report.cache_hits,
            groups = report.groups.len(),
            background,
            reused = !fresh,
            "duplicate search"
        );
        *self.hashing.last_pass.lock_ok() = Some(LastPass {
            at: Instant::now(),
            scope: path.map(crate::platform::bytes::vec),
            candidates: report.candidates,
            files_read: report.files_read,
            unreadable: report.unreadable,
            background,
        });
        Ok(report)
    }

    /// A number that changes whenever anything under the roots may have
    /// changed: entry rows written, watcher events, lost-event rescans.
    /// `None` when not every folder is watched live (a polled folder's
    /// changes arrive late), so no earlier answer may be reused.
    fn generation(&self) -> Option<u64> {
        let w = self.watcher.as_ref()?;
        if w.polled_under(Path::new("/")) > 0 || self.busy() {
            return None;
        }
        let s = &w.stats;
        Some(
            self.store.rows_written.load(Ordering::SeqCst)
                + s.events.load(Ordering::SeqCst)
                + s.overflows.load(Ordering::SeqCst)
                + s.recrawls.load(Ordering::SeqCst),
        )
    }

    /// True while a scan runs or the watcher saw an event in the last
    /// two seconds: background hashing waits.
    fn busy(&self) -> bool {
        if self.cancel.load(Ordering::Relaxed) {
            return true;
        }
        let scanning = self
            .roots
            .lock_ok()
            .values()
            .any(|r| r.state == RootState::Scanning || r.state == RootState::Pending);
        let recent = self.watcher.as_ref().is_some_and(|w| {
            let last = w.stats.last_event_ms.load(Ordering::Relaxed);
            last > 0 && crate::ingest::watch::now_ms() - last < 2_000
        });
        scanning || recent
    }

    /// Background hashing: while the daemon is idle, hashes the same-size
    /// files of `background` roots at the lowest CPU and I/O priority, so
    /// that `dupes` answers from the cache. A pass runs when the index
    /// changed since the last one; it stops as soon as work arrives.
    fn hash_loop(self: Arc<Self>) {
        crate::platform::process::lower_thread_priority();
        let mut done_at_rows: Option<u64> = None;
        loop {
            for _ in 0..20 {
                if self.cancel.load(Ordering::Relaxed) {
                    return;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            let rows = self.store.rows_written.load(Ordering::Relaxed);
            if done_at_rows == Some(rows) || self.busy() {
                continue;
            }
            let Ok(roots) = self.store.read(crate::store::roots) else {
                continue;
            };
            let mut complete = true;
            for r in roots
                .iter()
                .filter(|r| self.hash_mode(&r.path) == HashMode::Background)
            {
                let path = crate::platform::bytes::path_buf(&r.path);
                let mut go_on = |_: dupes::Progress| !self.busy();
                match self.find_duplicates(Some(&path), 1, false, true, &mut go_on) {
                    // Files changed too recently to trust their hashes:
                    // read them again on the next pass.
                    Ok(r) if r.racy > 0 => complete = false,
                    Ok(_) => {}
                    Err(Error::Cancelled) => complete = false,
                    Err(e) => {
                        complete = false;
                        tracing::warn!(root = %path.display(), "background hashing: {e}");
                    }
                }
            }
            if complete {
                // Hash rows are not entry rows: rows_written is unchanged.
                done_at_rows = Some(rows);
            }
        }
    }

    /// Every root with its state.
    pub fn root_views(&self) -> Result<Vec<RootView>, Error> {
        let rows = self.store.read(crate::store::roots)?;
        let runtime = self.roots.lock_ok();
        let mut out = Vec::new();
        for r in rows {
            let rt = runtime.get(&r.id);
            let entries = match r.entry_id {
                Some(id) => self.store.read(|c| du::entry_count(c, id))?,
                None => 0,
            };
            out.push(RootView {
                path: r.path.clone(),
                state: rt.map(|x| x.state).unwrap_or(if r.entry_id.is_some() {
                    RootState::Ready
                } else {
                    RootState::Pending
                }),
                entries,
                scanned: rt
                    .map(|x| x.progress.scanned.load(Ordering::Relaxed))
                    .unwrap_or(0),
                errors: rt.map(|x| x.errors).unwrap_or(0),
                scanned_at: r.scanned_at,
                watch: match &self.watcher {
                    None => "off".into(),
                    Some(w) => match w.polled_under(&crate::platform::bytes::path_buf(&r.path)) {
                        0 => "live".into(),
                        n => format!("partly polled: {n} folders"),
                    },
                },
                error: rt.and_then(|x| x.error.clone()),
                hashing: self.hash_mode(&r.path).as_str().into(),
            });
        }
        Ok(out)
    }

    /// Stops accepting scans, cancels a running one and waits for the
    /// scanner to finish. Called at shutdown, before the writer closes.
    pub fn stop(&self) {
        self.cancel.store(true, Ordering::SeqCst);
        self.jobs.lock_ok().take();
        let handle = self.scanner.lock_ok().take();
        if let Some(h) = handle {
            let _ = h.join();
        }
    }
}

/// `p` with its prefix `from` replaced by `to` (unchanged when not under `from`).
fn rebase(p: PathBuf, from: &Path, to: &Path) -> PathBuf {
    match p.strip_prefix(from) {
        Ok(rest) if rest.as_os_str().is_empty() => p,
        Ok(rest) => to.join(rest),
        Err(_) => p,
    }
}

/// The root a walk of `path` (rescan, verify) starts in. A path reaching
/// through a symlink would take the walk out of the root: it is answered
/// as not found, the way a path that does not exist is.
fn walk_root<'r>(roots: &'r [RootRow], path: &Path) -> Result<&'r RootRow, Error> {
    let root = crate::store::root_of(roots, path)
        .ok_or_else(|| Error::NotUnderRoot(path.display().to_string(), root_list(roots)))?;
    if scan::through_symlink(&crate::platform::bytes::path_buf(&root.path), path) {
        return Err(Error::NotFound(
            String::from_utf8_lossy(&crate::platform::bytes::vec(path)).into_owned(),
        ));
    }
    Ok(root)
}

fn root_list(roots: &[RootRow]) -> String {
    if roots.is_empty() {
        return "none".into();
    }
    roots
        .iter()
        .map(|r| String::from_utf8_lossy(&r.path).into_owned())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Roots may not contain one another: every entry belongs to one root.
fn check_no_nesting(roots: &[PathBuf]) -> Result<(), Error> {
    for a in roots {
        for b in roots {
            if a != b && b.starts_with(a) {
                return Err(Error::InvalidArgument(format!(
                    "{} is inside the root {}; roots may not overlap (remove one first)",
                    b.display(),
                    a.display()
                )));
            }
        }
    }
    Ok(())
}

/// The user's home directory: the default root.
fn default_root() -> PathBuf {
    directories::UserDirs::new()
        .map(|d| d.home_dir().to_owned())
        .or_else(|| std::env::var_os("HOME").map(PathBuf::from))
        .unwrap_or_else(|| PathBuf::from("/"))
}

/// Keeps the search snapshot equal to the index (see [`crate::store::Mirror`])
/// and tells subscribers what changed.
#[derive(Debug)]
pub struct SnapshotMirror {
    pub snapshot: Arc<RwLock<Snapshot>>,
    pub events: tokio::sync::broadcast::Sender<ChangeEvent>,
}

impl crate::store::Mirror for SnapshotMirror {
    fn load(&mut self, conn: &rusqlite::Connection) -> Result<(), Error> {
        let t = Instant::now();
        let loaded = Snapshot::load(conn)?;
        tracing::info!(
            entries = loaded.len(),
            heap = loaded.heap_bytes(),
            ms = t.elapsed().as_millis() as u64,
            "search snapshot loaded"
        );
        *self.snapshot.write_ok() = loaded;
        crate::platform::process::release_memory();
        Ok(())
    }

    fn apply(&mut self, changes: Vec<crate::store::Change>) {
        let mut snapshot = self.snapshot.write_ok();
        if self.events.receiver_count() == 0 {
            snapshot.apply(changes, None);
            return;
        }
        let mut events = Vec::new();
        snapshot.apply(changes, Some(&mut events));
        drop(snapshot);
        for e in events {
            let _ = self.events.send(e);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use crate::ingest::exclude::Environment;

    fn rules(excludes: &[&str]) -> Rules {
        let config = Config {
            excludes: excludes.iter().map(|s| s.to_string()).collect(),
            ..Config::default()
        };
        Rules::new(&config, None, &Environment::default()).unwrap()
    }

    /// An engine with its index in `home`, watching `tree`, ready.
    fn start_engine(home: &Path, tree: &Path, rules: Rules) -> (Arc<Engine>, crate::store::Writer) {
        let snapshot = Arc::new(RwLock::new(Snapshot::default()));
        let (events, _) = tokio::sync::broadcast::channel(16);
        let mirror = SnapshotMirror {
            snapshot: snapshot.clone(),
            events: events.clone(),
        };
        let (store, writer) = Store::open(&home.join("index.db"), Box::new(mirror)).unwrap();
        let engine = Engine::start(
            store,
            writer.handle(),
            snapshot,
            Some(vec![tree.to_owned()]),
            rules,
            WatchOptions::default(),
            events,
        )
        .unwrap();
        wait_ready(&engine);
        (engine, writer)
    }

    fn wait_ready(engine: &Engine) {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let views = engine.root_views().unwrap();
            if views.iter().all(|v| v.state == RootState::Ready) {
                return;
            }
            assert!(Instant::now() < deadline, "not ready: {views:?}");
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    #[test]
    fn set_rules_rescans_so_excluded_entries_leave_and_allowed_ones_arrive() {
        let tmp = tempfile::tempdir().unwrap();
        let tree = tmp.path().join("tree");
        for p in ["keep/a.txt", "drop/b.txt", "x.log"] {
            let p = tree.join(p);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, b"x").unwrap();
        }
        let tree = std::fs::canonicalize(&tree).unwrap();
        let (engine, writer) = start_engine(tmp.path(), &tree, rules(&["drop"]));
        let has = |p: &str| {
            engine
                .store
                .read(|c| crate::store::resolve(c, &tree.join(p)))
                .is_ok()
        };
        let watches = || engine.watcher.as_ref().map(|w| w.watch_count());
        assert!(has("keep/a.txt") && !has("drop") && has("x.log"));
        // The root and keep/.
        assert_eq!(watches(), Some(2));

        engine.set_rules(rules(&["*.log"])).unwrap();
        wait_ready(&engine);
        assert!(has("keep/a.txt") && has("drop/b.txt") && !has("x.log"));
        assert_eq!(watches(), Some(3));

        // A folder kept out is no longer watched, before its rescan even ends.
        engine.set_rules(rules(&["keep/"])).unwrap();
        assert_eq!(watches(), Some(2));
        wait_ready(&engine);
        assert!(!has("keep") && has("drop/b.txt") && has("x.log"));
        let verified = engine.verify(None, false).unwrap();
        assert!(verified.differences.is_empty(), "{verified:?}");

        engine.stop();
        drop(engine);
        writer.close();
    }

    /// GNU du's allocated and apparent bytes of `path`: the oracle.
    fn gnu_du(path: &Path) -> (u64, u64) {
        let get = |flag: &str| -> u64 {
            let out = std::process::Command::new("du")
                .args(["-s", flag])
                .arg(path)
                .output()
                .unwrap();
            String::from_utf8_lossy(&out.stdout)
                .split_whitespace()
                .next()
                .unwrap()
                .parse()
                .unwrap()
        };
        (get("-B1"), get("-b"))
    }

    fn du_of(engine: &Engine, path: &Path) -> (u64, u64) {
        let r = engine
            .store
            .read(|c| {
                let (_, id) = crate::store::resolve(c, path)?;
                du::disk_usage(c, id, crate::platform::bytes::vec(path), 0, false)
            })
            .unwrap();
        (r.total.bytes, r.total.apparent)
    }

    #[test]
    fn du_equals_gnu_du_with_deep_paths_hard_links_and_what_the_rules_keep_out() {
        use std::os::unix::fs::symlink;
        let tmp = tempfile::tempdir().unwrap();
        let tree = tmp.path().join("tree");
        std::fs::create_dir_all(tree.join("src/.ssh")).unwrap();
        std::fs::create_dir_all(tree.join("drop/inner")).unwrap();
        for i in 0..20 {
            std::fs::write(tree.join(format!("src/f{i}")), vec![b'x'; 1000 * i]).unwrap();
        }
        std::fs::write(tree.join("src/.ssh/id_ed25519"), vec![b'k'; 9000]).unwrap();
        std::fs::write(tree.join("src/.env"), vec![b'e'; 5000]).unwrap();
        std::fs::write(tree.join("drop/inner/big"), vec![b'b'; 70_000]).unwrap();
        symlink("nowhere", tree.join("src/dangling")).unwrap();
        // A chain deeper than PATH_MAX, made one relative step at a time.
        let deep = {
            let mut fd = crate::platform::fs::open_dir(&tree).unwrap();
            let mut p = tree.clone();
            for _ in 0..90 {
                let seg = "level-of-fifty-bytes-".repeat(2) + "abcdefgh";
                rustix::fs::mkdirat(&fd, seg.as_str(), rustix::fs::Mode::from_raw_mode(0o755))
                    .unwrap();
                fd = crate::platform::fs::open_dir_at(
                    std::os::unix::io::AsFd::as_fd(&fd),
                    std::ffi::OsStr::new(&seg),
                )
                .unwrap();
                p.push(&seg);
            }
            let f = rustix::fs::openat(
                &fd,
                "bottom.txt",
                rustix::fs::OFlags::CREATE | rustix::fs::OFlags::WRONLY,
                rustix::fs::Mode::from_raw_mode(0o644),
            )
            .unwrap();
            rustix::io::write(&f, &[b'd'; 3000]).unwrap();
            p.join("bottom.txt")
        };
        assert!(deep.as_os_str().len() > crate::platform::fs::PATH_MAX);
        let tree = std::fs::canonicalize(&tree).unwrap();
        let (engine, writer) = start_engine(tmp.path(), &tree, rules(&["drop"]));
        let deep = tree.join(deep.strip_prefix(tmp.path().join("tree")).unwrap());
        // The deepest file is indexed, and everything counts as du counts.
        assert!(
            engine
                .store
                .read(|c| crate::store::resolve(c, &deep))
                .is_ok()
        );
        assert_eq!(du_of(&engine, &tree), gnu_du(&tree), "after the scan");
        assert_eq!(du_of(&engine, &tree.join("src")), gnu_du(&tree.join("src")));
        // The excluded folder is a row of its own, with du's figures.
        let report = engine
            .store
            .read(|c| {
                let (_, id) = crate::store::resolve(c, &tree)?;
                du::disk_usage(c, id, crate::platform::bytes::vec(&tree), 0, false)
            })
            .unwrap();
        let dropped = report
            .children
            .iter()
            .find(|u| u.path.ends_with(b"/drop"))
            .expect("drop/ listed");
        assert!(dropped.excluded && dropped.measured_at > 0);
        assert_eq!(
            (dropped.bytes, dropped.apparent),
            gnu_du(&tree.join("drop"))
        );

        // Hard links made and removed while watching (cp -al, rm of one
        // link, rm -rf of the copy): du stays equal to GNU du.
        std::fs::create_dir(tree.join("copy")).unwrap();
        for i in 0..20 {
            std::fs::hard_link(
                tree.join(format!("src/f{i}")),
                tree.join(format!("copy/f{i}")),
            )
            .unwrap();
        }
        engine.sync(Duration::from_secs(10)).unwrap();
        assert_eq!(du_of(&engine, &tree), gnu_du(&tree), "after the links");
        assert_eq!(du_of(&engine, &tree.join("src")), gnu_du(&tree.join("src")));
        for i in 0..10 {
            std::fs::remove_file(tree.join(format!("src/f{i}"))).unwrap();
        }
        engine.sync(Duration::from_secs(10)).unwrap();
        assert_eq!(du_of(&engine, &tree), gnu_du(&tree), "after removing links");
        assert_eq!(du_of(&engine, &tree.join("src")), gnu_du(&tree.join("src")));
        std::fs::remove_dir_all(tree.join("copy")).unwrap();
        engine.sync(Duration::from_secs(10)).unwrap();
        assert_eq!(
            du_of(&engine, &tree),
            gnu_du(&tree),
            "after rm -rf of the copy"
        );
        // A new SKIP file counts at once; a deep file changed while watched.
        std::fs::write(tree.join("src/.env.local"), vec![b's'; 12_345]).unwrap();
        engine.sync(Duration::from_secs(10)).unwrap();
        assert_eq!(du_of(&engine, &tree), gnu_du(&tree), "after a SKIP file");
        let verified = engine.verify(None, false).unwrap();
        assert!(verified.differences.is_empty(), "{verified:?}");

        engine.stop();
        drop(engine);
        writer.close();
    }
}
