//! The running daemon: the one handle ([`Engine`]) the server holds, split
//! by job.
//!
//! - `roots`: roots, the rules in force, and the scanner thread, which
//!   runs scans and watcher batches one at a time so they never write
//!   conflicting changes; `verify`.
//! - `batches`: applying coalesced watcher batches; polling the folders
//!   left unwatched.
//! - `sync`: `--sync` cookies.
//! - `hashing`: content hashing for duplicates (background and on demand):
//!   reading and hashing the files the duplicate search narrows down.
//! - `read`: the read side, one call per RPC, each given the caller's
//!   view, with what only the file system can tell (`info`'s live
//!   details) and a rescan's progress as a stream; `status`: what `status`
//!   reports.
//! - `visibility`: what a caller may see, read live (`lstat`s of folders,
//!   the caller's groups, machine-wide mode's cache of permissions).
//! - `labels`: bookmarks and tags, per user, by entry; `file_tags`: the
//!   tags other programs wrote on files (`user.xdg.tags`), read in.
//! - `text`: a file's text, a page at a time (ReadText): from the content
//!   index's stored text, or extracted on the spot; the sensitive tiers.
//! - [`reload`]: re-reading `config.toml`.
//! - [`fleet`]: the fleet link, shipping the index into PostgreSQL.
//!
//! Writes go to the store's single writer; the search snapshot is kept equal
//! to the index by the writer itself ([`SnapshotMirror`]), change by change.

use crate::{LockOk, RwLockOk};
mod batches;
mod content;
mod file_tags;
pub mod fleet;
mod hashing;
mod held;
mod labels;
mod mailbox;
mod manifest;
mod media;
mod priority;
mod projects;
mod read;
pub mod reload;
mod roots;
mod searches;
mod status;
mod subscribe;
mod sync;
mod text;
mod visibility;
mod wake;
mod warm;

pub use content::{ContentFigures, ContentRuntime, ContentSettings};
pub use file_tags::FileTagRuntime;
pub use hashing::{HashSettings, Hashing, LastPass};
pub use labels::{Bookmark, TagTotal, Tagged, label_uid};
pub use manifest::{
    Manifest, ManifestArgs, ManifestFile, ManifestProgress, header, rfc3339_seconds,
};
pub use media::{MediaFigures, MediaRuntime, taken_seconds};
pub use projects::{Branch, Project};
pub use read::{
    ChunkSink, DEFAULT_SNIPPETS, ListOrder, Listed, MAX_SNIPPETS, Rescan, RescanProgress,
    SearchArgs, SearchHead, SearchPage, Taken, UsageArgs,
};
use roots::default_root;
pub use searches::{HISTORY_KEPT, Recent, Saved};
pub use status::{HashFigures, MemoryFigures, Status, WatchFigures};
pub use subscribe::{Heard, REVEAL_CAP, Subscription};
pub use text::{TextArgs, TextPage, TextSource};
pub use visibility::{View, caller_from_peer};

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock, mpsc};
use std::time::{Duration, Instant};

pub use crate::index::SnapshotMirror;
use crate::index::{ChangeEvent, Snapshot};
use crate::ingest::exclude::{Rules, Verdict};
use crate::ingest::scan::{self, Outcome, Progress, ScanTarget};
use crate::ingest::watch::{BackendKind, Batch, COOKIE_PREFIX, Watcher, is_cookie};
use crate::queries::du;
use crate::queries::dupes::{self, HashMode, HashStats, RootMode};
use crate::store::RootRow;
use crate::store::{Op, Store, WriteHandle};
use crate::{Error, Runtime};

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
    /// The folder is gone: looked for again while the daemon watches.
    pub gone: bool,
}

/// What stands at a root's path, against the folder the index has
/// ([`Engine::root_now`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RootNow {
    /// No folder there (deleted, moved away, unmounted, or not a folder).
    Gone,
    /// The folder the index has (same device and inode).
    Indexed,
    /// Another folder (another inode): the indexed one went away.
    Replaced,
    /// A folder, and the index has none for the root yet.
    NotScanned,
}

/// How the daemon watches for changes.
#[derive(Clone, Debug)]
pub struct WatchOptions {
    pub enabled: bool,
    /// Which watcher (`auto`: this platform's own).
    pub backend: BackendKind,
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
            backend: BackendKind::Auto,
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
    /// While it is scanned: at what priority ([`priority::NORMAL`] while a
    /// client waits, else [`priority::BACKGROUND`]).
    pub priority: Option<&'static str>,
    /// The folder is gone (see [`RootRuntime::gone`]): nothing to wait for.
    pub gone: bool,
}

/// Work for the scanner thread: scans and watcher batches are applied one
/// at a time, so they never write conflicting changes.
enum Job {
    Scan(ScanJob),
    Apply(Batch),
    /// Rescan the polled folders; tell `done` (a `--sync` caller) after.
    Poll(Option<mpsc::Sender<()>>),
}

struct ScanJob {
    root_id: i64,
    /// A folder under the root; `None` for the whole root.
    path: Option<PathBuf>,
    progress: Arc<Progress>,
    done: Option<mpsc::Sender<Result<Outcome, Runtime>>>,
    /// A client waits on it: counted until the job is done (dropped).
    _waiting: Option<priority::Waiting>,
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
    /// Queries answered (search, du, listings, the map, duplicates) and
    /// scanner jobs begun or ended: the trimmer gives memory back once they
    /// stop (see [`Engine::trim_loop`]).
    activity: std::sync::atomic::AtomicU64,
    pub started: Instant,
    /// CPU time (ms) at the last two status calls at least a second apart.
    cpu_seen: Mutex<[(Instant, u64); 2]>,
    /// The last memory breakdown and when it was taken: counting the
    /// allocator's free lists and the watch paths is not free, and
    /// `status` is polled (a script waiting for `ready`).
    memory_seen: Mutex<Option<(Instant, status::MemoryFigures)>>,
    /// What is indexed: exclusions, sensitive tiers, per-root file-system
    /// crossing. Each scan takes the current rules for its whole walk;
    /// [`Engine::set_rules`] swaps them.
    rules: RwLock<Arc<Rules>>,
    /// Set at shutdown: a running scan stops at its next entry.
    cancel: AtomicBool,
    /// Whether a client waits on the scanner, and the running job.
    priority: Arc<priority::Priority>,
    scanner: Mutex<Option<std::thread::JoinHandle<()>>>,
    /// Content hashing for duplicates: modes, counters, the last pass.
    pub hashing: Hashing,
    /// Content search: where it is on, the worker's counters.
    pub content: ContentRuntime,
    /// Media metadata: the worker's counters.
    pub media: MediaRuntime,
    /// Tags other programs wrote on files (`user.xdg.tags`).
    pub file_tags: FileTagRuntime,
    /// What `lstat` said of watched folders, for callers who see only what
    /// they may (machine-wide mode).
    permissions: visibility::Permissions,
    /// The fleet link, when `[fleet]` is configured.
    fleet: Mutex<Option<Arc<fleet::FleetLink>>>,
    /// When lone characters were last typed (see [`warm`]).
    lone_typed: warm::LoneTyped,
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
        let (notices_tx, notices_rx) = crate::ingest::watch::notice_queue(capacity);
        let watcher = if watch.enabled {
            match Watcher::start(
                watch.backend,
                watch.max_watches,
                watch.poll_interval,
                notices_tx,
            ) {
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
            cpu_seen: Mutex::new([(Instant::now(), 0); 2]),
            memory_seen: Mutex::new(None),
            rules: RwLock::new(Arc::new(rules)),
            cancel: AtomicBool::new(false),
            priority: Default::default(),
            scanner: Mutex::new(None),
            hashing: Hashing::default(),
            content: ContentRuntime::default(),
            media: MediaRuntime::default(),
            file_tags: FileTagRuntime::default(),
            permissions: Default::default(),
            fleet: Mutex::new(None),
            lone_typed: Default::default(),
            watcher,
            watch,
            events,
            cookies: Mutex::new(HashMap::new()),
            cookie_seq: std::sync::atomic::AtomicU64::new(0),
            rows_at_idle: std::sync::atomic::AtomicU64::new(0),
            activity: std::sync::atomic::AtomicU64::new(0),
        });
        let mut recorded = engine.store.read(crate::store::roots)?;
        let wanted = match wanted {
            Some(w) => Some(w),
            None if recorded.is_empty() => Some(vec![default_root()]),
            None => None,
        };
        if let Some(wanted) = wanted {
            let canon = wanted
                .iter()
                .map(|w| scan::canonical_root(w))
                .collect::<Result<Vec<_>, _>>()?;
            let paths: Vec<Vec<u8>> = recorded.iter().map(|r| r.path.clone()).collect();
            let (remove, add) = roots::root_changes(&canon, &paths)?;
            let changed = !remove.is_empty() || !add.is_empty();
            for gone in remove {
                let bytes = crate::platform::bytes::vec(&gone);
                tracing::info!(root = %gone.display(), "root no longer configured; removing");
                if let Some(r) = recorded.iter().find(|r| r.path == bytes) {
                    engine.writer.send(vec![Op::RemoveRoot { root_id: r.id }])?;
                }
            }
            for c in &add {
                engine.add_root_row(c)?;
            }
            // Only when something changed: the writer's first job is loading
            // the search snapshot, and the restart scan need not wait for it.
            if changed {
                engine.writer.flush()?;
                recorded = engine.store.read(crate::store::roots)?;
            }
        }

        Engine::clear_stale_cookies(&recorded);
        let (tx, rx) = mpsc::channel::<Job>();
        *engine.jobs.lock_ok() = Some(tx);
        for r in &recorded {
            engine.queue_scan(r.id, None, None, false)?;
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
        let e = Arc::downgrade(&engine);
        std::thread::Builder::new()
            .name("fsindex-trim".into())
            .spawn(move || Engine::trim_loop(e))?;
        Engine::start_warming(&engine)?;
        Ok(engine)
    }

    /// Counts a query, a scanner job's start or end, or a media pass's end,
    /// for the trimmer.
    pub(crate) fn note_activity(&self) {
        self.activity.fetch_add(1, Ordering::Relaxed);
    }

    /// Notes activity now and again when the span drops (a scanner job's
    /// start and end, whichever way it ends).
    pub(crate) fn activity_span(&self) -> ActivitySpan<'_> {
        self.note_activity();
        ActivitySpan(self)
    }

    /// Gives freed memory, and the pages of the code that ran, back to the
    /// OS a few seconds after queries and scanner jobs (watcher batches,
    /// polls) stop.
    /// A large answer (272,290 paths for `ar` at a million entries) is
    /// built in many small allocations and freed after it is sent; the
    /// allocator kept those pages, and 25 searches took the idle daemon
    /// from 62 to 181-185 MiB. Ends with the engine.
    fn trim_loop(engine: std::sync::Weak<Engine>) {
        const TICK: Duration = Duration::from_secs(2);
        // Under steady activity (a poll every second) there is no quiet
        // tick: then at most this often.
        const BUSY_EVERY: Duration = Duration::from_secs(30);
        // Test hook: the control runs of the tests that show the trim works
        // (freed heap, code pages).
        let off = std::env::var_os("FSINDEX_TEST_NO_TRIM").is_some();
        let (mut seen, mut dirty, mut trimmed) = (0, false, Instant::now());
        loop {
            std::thread::sleep(TICK);
            let Some(e) = engine.upgrade() else { return };
            if e.cancel.load(Ordering::Relaxed) {
                return;
            }
            let n = e.activity.load(Ordering::Relaxed);
            let quiet = n == seen;
            if !quiet {
                (seen, dirty) = (n, true);
            }
            if dirty && !off && (quiet || trimmed.elapsed() >= BUSY_EVERY) {
                dirty = !quiet;
                trimmed = Instant::now();
                e.store.shrink_readers();
                crate::platform::process::release_memory();
                // And the code pages start-up and the walk ran (12-16 MiB
                // at 1M entries): what idling runs comes back.
                let bytes = crate::platform::process::release_mapped_files();
                tracing::debug!(bytes, "mapped file pages given back");
            }
        }
    }

    /// Attaches the fleet link, for `status` and shutdown.
    pub fn set_fleet(&self, link: Arc<fleet::FleetLink>) {
        *self.fleet.lock_ok() = Some(link);
    }

    /// The fleet link's figures, when a fleet is configured.
    pub fn fleet_figures(&self) -> Option<fleet::FleetFigures> {
        self.fleet.lock_ok().as_ref().map(|l| l.figures())
    }

    /// A stream of applied changes (see `Subscribe`).
    pub fn subscribe(&self) -> tokio::sync::broadcast::Receiver<ChangeEvent> {
        self.events.subscribe()
    }

    /// The search snapshot (kept current by the writer).
    pub fn snapshot(&self) -> Arc<RwLock<Snapshot>> {
        self.snapshot.clone()
    }

    /// Stops accepting scans, cancels a running one and waits for the
    /// scanner to finish. Called at shutdown, before the writer closes.
    pub fn stop(&self) {
        self.cancel.store(true, Ordering::SeqCst);
        self.priority.stop_running();
        if let Some(link) = self.fleet.lock_ok().as_ref() {
            link.stop();
        }
        self.jobs.lock_ok().take();
        let handle = self.scanner.lock_ok().take();
        if let Some(h) = handle {
            let _ = h.join();
        }
    }
}

/// See [`Engine::activity_span`].
pub(crate) struct ActivitySpan<'a>(&'a Engine);

impl Drop for ActivitySpan<'_> {
    fn drop(&mut self) {
        self.0.note_activity();
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
            test_watch_options(),
            events,
        )
        .unwrap();
        wait_ready(&engine);
        (engine, writer)
    }

    /// A search for `query`'s first `limit` results by relevance.
    fn relevance(query: &str, limit: usize) -> SearchArgs {
        SearchArgs {
            query: query.into(),
            sort: crate::queries::search::Sort::Relevance,
            reverse: false,
            offset: 0,
            limit,
            sync: false,
            snippets: 0,
        }
    }

    /// The watch backend under test: `FSINDEX_TEST_WATCH_BACKEND` (CI runs
    /// these tests once per backend), polled every second for `poll`.
    fn test_watch_options() -> WatchOptions {
        let backend = std::env::var("FSINDEX_TEST_WATCH_BACKEND")
            .ok()
            .filter(|b| !b.is_empty())
            .map(|b| b.parse().unwrap())
            .unwrap_or_default();
        WatchOptions {
            backend,
            poll_interval: Duration::from_secs(1),
            ..WatchOptions::default()
        }
    }

    fn polling() -> bool {
        test_watch_options().backend == BackendKind::Poll
    }

    fn wait_ready(engine: &Engine) {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let views = engine.root_views().unwrap();
            if views.iter().all(|v| v.state == RootState::Ready) {
                // These tests read SQLite itself: a first index is ready
                // (searchable) before its rows are persisted.
                engine.store.backlog.wait();
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
        // The poll backend watches nothing.
        let watches = || {
            engine
                .watcher
                .as_ref()
                .map(|w| w.watch_count() + if polling() { 1000 } else { 0 })
        };
        let n = |n: u64| Some(if polling() { 1000 } else { n });
        assert!(has("keep/a.txt") && !has("drop") && has("x.log"));
        // The root and keep/.
        assert_eq!(watches(), n(2));

        engine.set_rules(rules(&["*.log"])).unwrap();
        wait_ready(&engine);
        assert!(has("keep/a.txt") && has("drop/b.txt") && !has("x.log"));
        assert_eq!(watches(), n(3));

        // A folder kept out is no longer watched, before its rescan even ends.
        engine.set_rules(rules(&["keep/"])).unwrap();
        assert_eq!(watches(), n(2));
        wait_ready(&engine);
        assert!(!has("keep") && has("drop/b.txt") && has("x.log"));
        let verified = engine.verify(None, false).unwrap();
        assert!(verified.differences.is_empty(), "{verified:?}");

        engine.stop();
        drop(engine);
        writer.close();
    }

    /// GNU du's allocated and apparent bytes of `path`: the oracle.
    #[cfg(unix)]
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

    #[cfg(unix)]
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
    #[cfg(unix)]
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

    /// What another user sees through the read side: a folder it may not
    /// enter (mode 700, owned by root) gives nothing away in any answer,
    /// while the daemon's owner sees it all. The oracle is the tree this
    /// test made.
    #[test]
    #[cfg(unix)]
    fn a_caller_sees_only_what_its_permissions_allow() {
        use crate::queries::access::Caller;
        use std::os::unix::fs::MetadataExt;
        use std::os::unix::fs::PermissionsExt;
        let home = tempfile::tempdir().unwrap();
        let tree = tempfile::tempdir().unwrap();
        let t = tree.path();
        if std::fs::metadata(t).unwrap().uid() == 65534 {
            return; // the tree must belong to someone other than the caller
        }
        std::fs::set_permissions(t, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::create_dir_all(t.join("open/sub")).unwrap();
        std::fs::create_dir_all(t.join("closed/inner")).unwrap();
        std::fs::write(t.join("open/sub/plan.txt"), vec![b'a'; 5000]).unwrap();
        std::fs::write(t.join("closed/inner/plan.txt"), vec![b'b'; 70000]).unwrap();
        std::fs::set_permissions(t.join("closed"), std::fs::Permissions::from_mode(0o700)).unwrap();
        let (engine, _writer) = start_engine(home.path(), t, rules(&[]));
        let other = || {
            Some(View::new(Caller {
                uid: 65534,
                gids: vec![65534],
            }))
        };
        let search = |view| {
            let args = SearchArgs {
                query: "plan".into(),
                sort: crate::queries::search::Sort::Path,
                reverse: false,
                offset: 0,
                limit: usize::MAX,
                sync: false,
                snippets: 0,
            };
            let page = engine.search(args, view).unwrap();
            let paths: Vec<PathBuf> = page
                .entries
                .iter()
                .map(|e| crate::platform::bytes::path_buf(&e.path))
                .collect();
            (page.total, paths)
        };
        assert_eq!(
            search(None),
            (
                2,
                vec![t.join("closed/inner/plan.txt"), t.join("open/sub/plan.txt")]
            )
        );
        assert_eq!(search(other()), (1, vec![t.join("open/sub/plan.txt")]));

        let bytes = |p: &Path| crate::platform::bytes::vec(p);
        // Inside the closed folder: answered as not in the index.
        let inner = bytes(&t.join("closed/inner"));
        assert!(matches!(
            engine.stat(&inner, other()),
            Err(Error::NotFound(_))
        ));
        assert!(engine.stat(&inner, None).is_ok());
        assert!(matches!(
            engine.list(&inner, ListOrder::Name, false, other()),
            Err(Error::NotFound(_))
        ));
        // The closed folder itself is listed by name, but not opened.
        assert!(matches!(
            engine.list(&bytes(&t.join("closed")), ListOrder::Name, false, other()),
            Err(Error::PermissionDenied(_))
        ));
        // Its bytes are not told: the root's total leaves them out.
        let du = |view| {
            let args = UsageArgs {
                path: bytes(t),
                ..UsageArgs::default()
            };
            engine.disk_usage(args, view).unwrap().total.apparent
        };
        assert!(du(None) >= 75000, "{}", du(None));
        assert!(du(other()) < 70000, "{}", du(other()));
        // `..` is never resolved, whoever asks.
        let dotdot = bytes(&t.join("open/../closed"));
        assert!(matches!(
            engine.stat(&dotdot, None),
            Err(Error::NotFound(_))
        ));
        assert!(matches!(
            engine.stat(b"relative/path", None),
            Err(Error::InvalidArgument(_))
        ));
    }

    /// The first pages of lone characters are worked out in the background
    /// once the index is ready after a start (both accents modes), and
    /// again after live changes once the index is quiet (the letters typed, in
    /// the mode typed): the answer to a lone letter then comes from what was kept for the
    /// index as it is, with the count of the test's own walk and the first
    /// rows of the whole answer worked out afresh.
    #[test]
    fn lone_letters_are_worked_out_again_after_live_changes() {
        use crate::queries::search::{
            ALL_WARMED, follower_pairs, set_keys, short_pages_current, warmed_set,
        };
        let tmp = tempfile::tempdir().unwrap();
        let tree = tmp.path().join("tree");
        for d in 0..12 {
            let dir = tree
                .join(["notes", "tax", "photos", "misc"][d % 4])
                .join(format!("d{d}"));
            std::fs::create_dir_all(&dir).unwrap();
            for f in 0..40 {
                let name = ["a", "report", "bb", "xyz"][f % 4];
                std::fs::write(dir.join(format!("{name}{f}.txt")), b"x").unwrap();
            }
        }
        let tree = std::fs::canonicalize(&tree).unwrap();
        let (engine, _writer) = start_engine(tmp.path(), &tree, rules(&[]));
        let current =
            |bare, set| short_pages_current(&engine.snapshot.read_ok(), bare, &set_keys(set));
        let wait_current = |what: &str, set: u64, both: bool| {
            let deadline = Instant::now() + Duration::from_secs(60);
            while !(current(false, set) && (!both || current(true, set))) {
                assert!(Instant::now() < deadline, "{what}: never worked out");
                std::thread::sleep(Duration::from_millis(10));
            }
        };
        // Both modes after a start.
        wait_current("after the start", ALL_WARMED, true);
        let search_for = |query: &str, limit| {
            let page = engine.search(relevance(query, limit), None).unwrap();
            let paths: Vec<Vec<u8>> = page.entries.into_iter().map(|e| e.path).collect();
            (page.total as usize, paths)
        };
        let search = |limit| search_for("a", limit);
        let walked_with = |term: &str| {
            let mut n = 0;
            let mut stack = vec![tree.clone()];
            while let Some(d) = stack.pop() {
                for e in std::fs::read_dir(&d).unwrap() {
                    let p = e.unwrap().path();
                    let rel = p
                        .strip_prefix(&tree)
                        .unwrap()
                        .to_string_lossy()
                        .to_lowercase();
                    n += rel.contains(term) as usize;
                    if p.is_dir() {
                        stack.push(p);
                    }
                }
            }
            n
        };
        let walked = || walked_with("a");
        let check = |what: &str| {
            let (total, page) = search(400);
            let (all, whole) = search(usize::MAX);
            assert_eq!(total, walked(), "{what}: the count");
            assert_eq!(all, total, "{what}");
            assert_eq!(
                page,
                whole[..400.min(whole.len())],
                "{what}: the first rows"
            );
        };
        check("as started");
        // `a` typed: the pairs it starts are worked out next, each answered
        // as the walk counts.
        let pairs = follower_pairs(&engine.snapshot.read_ok(), b'a');
        let ax = u16::from_le_bytes(*b"ax");
        assert!(pairs.contains(&ax), "{pairs:x?}");
        let deadline = Instant::now() + Duration::from_secs(60);
        while !short_pages_current(&engine.snapshot.read_ok(), false, &pairs) {
            assert!(
                Instant::now() < deadline,
                "the pairs of `a`: never worked out"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        assert_eq!(search_for("ax", 400).0, walked_with("ax"), "ax");
        // A pair typed is kept current after changes.
        let ta = u16::from_le_bytes(*b"ta");
        assert_eq!(search_for("ta", 400).0, walked_with("ta"), "ta");
        let before = engine.snapshot.read_ok().generation();
        // Live changes: files holding the letter made, renamed, removed; a
        // folder renamed so its files no longer match through it.
        let dir = tree.join("notes/d0");
        for f in 0..30 {
            std::fs::write(dir.join(format!("new a {f}")), b"y").unwrap();
        }
        std::fs::rename(dir.join("report1.txt"), dir.join("zzz1")).unwrap();
        std::fs::rename(dir.join("xyz3.txt"), dir.join("xyz a 3")).unwrap();
        std::fs::remove_file(dir.join("a0.txt")).unwrap();
        std::fs::rename(tree.join("tax"), tree.join("t-x")).unwrap();
        engine.sync(Duration::from_secs(30)).unwrap();
        assert_ne!(engine.snapshot.read_ok().generation(), before);
        // The letter typed, in the mode typed, is worked out again.
        wait_current("after the changes", warmed_set(b'a'), false);
        assert!(
            !current(true, warmed_set(b'a')),
            "nobody typed without accents: not worked out again"
        );
        check("after the changes");
        let deadline = Instant::now() + Duration::from_secs(60);
        while !short_pages_current(&engine.snapshot.read_ok(), false, &[ta]) {
            assert!(Instant::now() < deadline, "`ta`: never worked out again");
            std::thread::sleep(Duration::from_millis(10));
        }
        assert_eq!(search_for("ta", 400).0, walked_with("ta"), "ta after");
    }

    /// After a start, the pairs the names hold most often are worked out
    /// with the lone characters, before anyone types them, with accents
    /// ignored (fsgui's default): a pair held 20,000 times is kept, with the
    /// count of the test's own names; a rarer one is not.
    #[test]
    fn frequent_pairs_are_worked_out_after_a_start() {
        use crate::queries::search::{ALL_WARMED, set_keys, short_pages_current};
        let tmp = tempfile::tempdir().unwrap();
        let tree = tmp.path().join("tree");
        std::fs::create_dir_all(tree.join("f")).unwrap();
        let names: Vec<String> = (0..20_000)
            .map(|k| format!("qz{k}"))
            .chain((0..500).map(|k| format!("jw{k}")))
            .collect();
        for name in &names {
            std::fs::File::create(tree.join("f").join(name)).unwrap();
        }
        let tree = std::fs::canonicalize(&tree).unwrap();
        let (engine, _writer) = start_engine(tmp.path(), &tree, rules(&[]));
        let qz = u16::from_le_bytes(*b"qz");
        let jw = u16::from_le_bytes(*b"jw");
        let deadline = Instant::now() + Duration::from_secs(60);
        while !short_pages_current(&engine.snapshot.read_ok(), true, &[qz]) {
            assert!(Instant::now() < deadline, "`qz`: never worked out");
            std::thread::sleep(Duration::from_millis(10));
        }
        let s = engine.snapshot.read_ok();
        assert!(short_pages_current(&s, true, &set_keys(ALL_WARMED)));
        assert!(!short_pages_current(&s, true, &[jw]), "a rare pair");
        assert!(!short_pages_current(&s, false, &[qz]), "accents kept");
        drop(s);
        let want = names.iter().filter(|n| n.contains("qz")).count();
        let page = engine.search(relevance("qz accents:ignore", 10), None);
        assert_eq!(page.unwrap().total as usize, want);
    }

    /// A lone letter typed while a commit waits for the index: the pass
    /// that works out the pairs it starts stops at once, and they are
    /// worked out once the index is free again, not forgotten (CI saw a
    /// daemon that never worked them out when a commit, or a second key,
    /// came mid-pass).
    #[test]
    fn pairs_of_a_letter_typed_during_a_commit_are_worked_out_after_it() {
        use crate::queries::search::{ALL_WARMED, follower_pairs, set_keys, short_pages_current};
        let tmp = tempfile::tempdir().unwrap();
        let tree = tmp.path().join("tree");
        std::fs::create_dir_all(&tree).unwrap();
        let names = ["alpha", "bravo", "echo", "papa", "panama", "lima"];
        for name in names {
            std::fs::write(tree.join(name), b"x").unwrap();
        }
        let tree = std::fs::canonicalize(&tree).unwrap();
        let (engine, _writer) = start_engine(tmp.path(), &tree, rules(&[]));
        let deadline = Instant::now() + Duration::from_secs(60);
        while !short_pages_current(&engine.snapshot.read_ok(), false, &set_keys(ALL_WARMED)) {
            assert!(Instant::now() < deadline, "the start's pass never ended");
            std::thread::sleep(Duration::from_millis(10));
        }
        let pairs = follower_pairs(&engine.snapshot.read_ok(), b'a');
        assert!(!pairs.is_empty());
        let pairs_current = || short_pages_current(&engine.snapshot.read_ok(), false, &pairs);
        assert!(!pairs_current(), "nobody typed `a` yet");
        // A commit waits for the index (its flag raised) while `a` is typed.
        let writing = engine.snapshot.read_ok().commits().writing();
        writing.store(true, Ordering::Release);
        let with_a = names.iter().filter(|n| n.contains('a')).count();
        let page = engine.search(relevance("a", 10), None);
        assert_eq!(page.unwrap().total as usize, with_a);
        std::thread::sleep(Duration::from_millis(500));
        assert!(!pairs_current(), "worked out while a commit waited");
        writing.store(false, Ordering::Release);
        let deadline = Instant::now() + Duration::from_secs(30);
        while !pairs_current() {
            assert!(Instant::now() < deadline, "the pairs of `a`: forgotten");
            std::thread::sleep(Duration::from_millis(10));
        }
        // Answered from what was kept: each pair's count is the test's own.
        for &pair in &pairs {
            let text = String::from_utf8(pair.to_le_bytes().to_vec()).unwrap();
            let want = names.iter().filter(|n| n.contains(&text)).count();
            let page = engine.search(relevance(&text, 10), None).unwrap();
            assert_eq!(page.total as usize, want, "{text}");
        }
    }
}
