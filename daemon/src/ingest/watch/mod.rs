//! Keeping the index current: one inotify watch per folder, events
//! coalesced into batches that the scanner applies.
//!
//! Why inotify directly and not notify: notify routes every `watch()`
//! through its event-loop thread and took 83 µs per folder here (8.3 s for
//! 100,000 folders); `inotify_add_watch` through the `inotify` crate (which
//! notify itself uses) took 2.1 µs. Watches are added by the walker as it
//! reaches each folder, before the folder's contents are listed, so nothing
//! created in between is missed.
//!
//! What can go wrong is detected, never ignored: a full kernel queue
//! (`IN_Q_OVERFLOW`) or a full channel here means "rescan everything"; an
//! unmounted folder means "rescan it"; when the watch limit is reached
//! (the OS's `max_user_watches`, or the daemon's own cap) the folders left
//! unwatched are polled: rescanned every poll interval.

use crate::LockOk;
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, mpsc};

use inotify::{EventMask, Inotify, WatchDescriptor, WatchMask, Watches};

/// Names of the files `--sync` writes in a root to learn that every earlier
/// change has been applied. They are never indexed.
pub const COOKIE_PREFIX: &str = ".fsindex-cookie-";

/// True for a cookie file's name.
pub fn is_cookie(name: &std::ffi::OsStr) -> bool {
    name.as_encoded_bytes()
        .starts_with(COOKIE_PREFIX.as_bytes())
}

/// What the reader thread tells the processor.
#[derive(Debug)]
pub enum Notice {
    /// Something about this path changed (created, written, deleted, ...).
    Changed(PathBuf),
    MovedFrom {
        cookie: u32,
        path: PathBuf,
    },
    MovedTo {
        cookie: u32,
        path: PathBuf,
    },
    /// Rescan this subtree (unmounted, or a watched root itself went away).
    Rescan(PathBuf),
    /// Events were lost: rescan everything.
    Overflow,
}

/// The watcher's figures for status.
#[derive(Clone, Debug, Default)]
pub struct WatchFigures {
    pub backend: &'static str,
    pub watches: u64,
    pub os_limit: u64,
    pub polled: u64,
    pub events: u64,
    pub overflows: u64,
    pub recrawls: u64,
    pub last_event_ms: i64,
    pub note: String,
}

/// Live figures for `status`.
#[derive(Debug, Default)]
pub struct WatchStats {
    pub events: AtomicU64,
    pub overflows: AtomicU64,
    pub recrawls: AtomicU64,
    /// Unix milliseconds of the last event (0: none yet).
    pub last_event_ms: AtomicI64,
}

/// The inotify instance and what it watches.
pub struct Watcher {
    watches: Watches,
    by_wd: Mutex<HashMap<WatchDescriptor, PathBuf>>,
    /// The watches of `by_wd` that are on files with several links, not
    /// folders: a link made or removed anywhere, even outside every root,
    /// reaches them as `IN_ATTRIB` (the kernel tells only the folder where
    /// it happened and the inode itself).
    linked: Mutex<std::collections::HashSet<WatchDescriptor>>,
    count: AtomicUsize,
    /// At most this many watches (0: as many as the OS allows).
    cap: usize,
    /// Folders that could not be watched; rescanned every poll interval.
    polled: Mutex<BTreeSet<PathBuf>>,
    /// Why folders are polled, with the advice to fix it.
    limit_note: Mutex<Option<String>>,
    /// Set when a notice could not be queued: the processor rescans.
    pub lost: AtomicBool,
    pub stats: WatchStats,
}

impl std::fmt::Debug for Watcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Watcher")
            .field("watches", &self.count.load(Ordering::Relaxed))
            .finish()
    }
}

const MASK: WatchMask = WatchMask::CREATE
    .union(WatchMask::DELETE)
    .union(WatchMask::MODIFY)
    .union(WatchMask::CLOSE_WRITE)
    .union(WatchMask::ATTRIB)
    .union(WatchMask::MOVED_FROM)
    .union(WatchMask::MOVED_TO)
    .union(WatchMask::DELETE_SELF)
    .union(WatchMask::ONLYDIR)
    .union(WatchMask::DONT_FOLLOW)
    .union(WatchMask::EXCL_UNLINK);

/// The kernel's limit on watches per user, when it can be read.
pub fn os_watch_limit() -> Option<u64> {
    std::fs::read_to_string("/proc/sys/fs/inotify/max_user_watches")
        .ok()?
        .trim()
        .parse()
        .ok()
}

impl Watcher {
    /// Starts the inotify instance and its reader thread, which sends to `tx`.
    pub fn start(cap: usize, tx: mpsc::SyncSender<Notice>) -> std::io::Result<Arc<Watcher>> {
        let inotify = Inotify::init()?;
        let watcher = Arc::new(Watcher {
            watches: inotify.watches(),
            by_wd: Mutex::new(HashMap::new()),
            linked: Mutex::new(std::collections::HashSet::new()),
            count: AtomicUsize::new(0),
            cap,
            polled: Mutex::new(BTreeSet::new()),
            limit_note: Mutex::new(None),
            lost: AtomicBool::new(false),
            stats: WatchStats::default(),
        });
        let w = watcher.clone();
        std::thread::Builder::new()
            .name("fsindex-inotify".into())
            .spawn(move || w.read_loop(inotify, tx))?;
        Ok(watcher)
    }

    /// Watches one folder (idempotent). Returns false when it is left to
    /// polling because the watch limit is reached.
    pub fn watch_dir(&self, path: &Path) -> bool {
        self.add_watch(path, path, MASK)
    }

    fn add_watch(&self, path: &Path, at: &Path, mask: WatchMask) -> bool {
        if self.cap > 0 && self.count.load(Ordering::Relaxed) >= self.cap {
            self.poll_instead(
                path,
                format!(
                    "the daemon's watch cap ({}) is reached; raise `max_watches` in config.toml",
                    self.cap
                ),
            );
            return false;
        }
        match self.watches.clone().add(at, mask) {
            Ok(wd) => {
                let fresh = self.by_wd.lock_ok().insert(wd, path.to_owned()).is_none();
                if fresh {
                    self.count.fetch_add(1, Ordering::Relaxed);
                }
                let mut polled = self.polled.lock_ok();
                if !polled.is_empty() {
                    polled.remove(path);
                }
                true
            }
            Err(e) if e.raw_os_error() == Some(libc::ENOSPC) => {
                self.poll_instead(
                    path,
                    format!(
                        "the OS limit on inotify watches ({}) is reached; raise it with `sysctl fs.inotify.max_user_watches=N`",
                        os_watch_limit().map_or("unknown".into(), |n| n.to_string())
                    ),
                );
                false
            }
            // Gone already, or not a folder any more: the event for that
            // change is on its way.
            Err(e) => {
                tracing::debug!("cannot watch {}: {e}", path.display());
                true
            }
        }
    }

    /// Watches a file with several links for changes of its link count
    /// (idempotent; one watch per inode, whichever of its paths). Left out
    /// beyond the watch cap: the folders' own watches come first.
    pub fn watch_linked_file(&self, path: &Path) {
        if self.cap > 0 && self.count.load(Ordering::Relaxed) >= self.cap
            || path.as_os_str().len() >= crate::platform::fs::PATH_MAX
        {
            return;
        }
        let mask = WatchMask::ATTRIB.union(WatchMask::DONT_FOLLOW);
        if let Ok(wd) = self.watches.clone().add(path, mask) {
            let fresh = self
                .by_wd
                .lock_ok()
                .insert(wd.clone(), path.to_owned())
                .is_none();
            if fresh {
                self.count.fetch_add(1, Ordering::Relaxed);
            }
            self.linked.lock_ok().insert(wd);
        }
    }

    /// Watches the open folder `fd` whose path is `path`. A path too long
    /// for one system call is watched through the handle's `/proc` link
    /// (the folder was opened without following a symlink, so nothing is
    /// followed that should not be).
    pub fn watch_dir_fd(&self, path: &Path, fd: std::os::unix::io::BorrowedFd<'_>) -> bool {
        use std::os::unix::io::AsRawFd;
        if path.as_os_str().len() < crate::platform::fs::PATH_MAX {
            return self.watch_dir(path);
        }
        let link = PathBuf::from(format!("/proc/self/fd/{}", fd.as_raw_fd()));
        self.add_watch(path, &link, MASK.difference(WatchMask::DONT_FOLLOW))
    }

    fn poll_instead(&self, path: &Path, why: String) {
        let mut note = self.limit_note.lock_ok();
        if note.is_none() {
            tracing::warn!("{why}; folders beyond it are rescanned periodically instead");
            *note = Some(why);
        }
        self.polled.lock_ok().insert(path.to_owned());
    }

    /// Folders being polled, outermost only.
    pub fn polled_tops(&self) -> Vec<PathBuf> {
        let polled = self.polled.lock_ok();
        let mut tops: Vec<PathBuf> = Vec::new();
        for p in polled.iter() {
            if !tops.last().is_some_and(|t| p.starts_with(t)) {
                tops.push(p.clone());
            }
        }
        tops
    }

    /// Number of polled folders under `root`.
    pub fn polled_under(&self, root: &Path) -> u64 {
        self.polled
            .lock_ok()
            .iter()
            .filter(|p| p.starts_with(root))
            .count() as u64
    }

    /// Folders watched (the files with several links that have a watch of
    /// their own are not counted; the cap and the OS limit count both).
    pub fn watch_count(&self) -> u64 {
        let linked = self.linked.lock_ok().len();
        self.count.load(Ordering::Relaxed).saturating_sub(linked) as u64
    }

    pub fn limit_note(&self) -> Option<String> {
        self.limit_note.lock_ok().clone()
    }

    /// The figures `status` shows.
    pub fn figures(&self) -> WatchFigures {
        WatchFigures {
            backend: "inotify",
            watches: self.watch_count(),
            os_limit: os_watch_limit().unwrap_or(0),
            polled: self.polled_under(Path::new("/")),
            events: self.stats.events.load(Ordering::Relaxed),
            overflows: self.stats.overflows.load(Ordering::Relaxed),
            recrawls: self.stats.recrawls.load(Ordering::Relaxed),
            last_event_ms: self.stats.last_event_ms.load(Ordering::Relaxed),
            note: self.limit_note().unwrap_or_default(),
        }
    }

    /// A folder moved: watches (and polled folders) under it get the new path.
    pub fn rename_prefix(&self, from: &Path, to: &Path) {
        for p in self.by_wd.lock_ok().values_mut() {
            if let Ok(rest) = p.strip_prefix(from) {
                *p = if rest.as_os_str().is_empty() {
                    to.to_owned()
                } else {
                    to.join(rest)
                };
            }
        }
        let mut polled = self.polled.lock_ok();
        let moved: Vec<PathBuf> = polled
            .iter()
            .filter(|p| p.starts_with(from))
            .cloned()
            .collect();
        for p in moved {
            polled.remove(&p);
            let rest = p.strip_prefix(from).unwrap_or(Path::new(""));
            polled.insert(if rest.as_os_str().is_empty() {
                to.to_owned()
            } else {
                to.join(rest)
            });
        }
    }

    /// Stops watching (and polling) the folders for which `drop` is true:
    /// folders the rules now keep out.
    pub fn unwatch_where(&self, drop: impl Fn(&Path) -> bool) {
        // Judged outside the lock: the reader thread needs it for every event.
        let watched: Vec<(WatchDescriptor, PathBuf)> = self
            .by_wd
            .lock_ok()
            .iter()
            .map(|(wd, p)| (wd.clone(), p.clone()))
            .collect();
        let gone: Vec<WatchDescriptor> = watched
            .into_iter()
            .filter(|(_, p)| drop(p))
            .map(|(wd, _)| wd)
            .collect();
        if !gone.is_empty() {
            let mut by_wd = self.by_wd.lock_ok();
            let mut linked = self.linked.lock_ok();
            for wd in gone {
                linked.remove(&wd);
                if by_wd.remove(&wd).is_some() {
                    self.count.fetch_sub(1, Ordering::Relaxed);
                    // Its IN_IGNORED event finds no folder and is dropped.
                    let _ = self.watches.clone().remove(wd);
                }
            }
        }
        self.polled.lock_ok().retain(|p| !drop(p));
    }

    /// Stops watching `dir` and every folder under it.
    pub fn unwatch_under(&self, dir: &Path) {
        self.unwatch_where(|p| p.starts_with(dir));
    }

    /// Forgets polled folders under a removed root.
    pub fn forget_under(&self, root: &Path) {
        self.polled.lock_ok().retain(|p| !p.starts_with(root));
    }

    fn send(&self, tx: &mpsc::SyncSender<Notice>, n: Notice) {
        if tx.try_send(n).is_err() {
            // The processor is behind: a lost event means a rescan.
            self.lost.store(true, Ordering::SeqCst);
        }
    }

    /// The kernel dropped a watch (its file or folder is gone).
    fn released(&self, wd: &WatchDescriptor) {
        if self.by_wd.lock_ok().remove(wd).is_some() {
            self.count.fetch_sub(1, Ordering::Relaxed);
        }
    }

    fn read_loop(self: Arc<Self>, mut inotify: Inotify, tx: mpsc::SyncSender<Notice>) {
        let mut buffer = vec![0u8; 1 << 16];
        loop {
            let events = match inotify.read_events_blocking(&mut buffer) {
                Ok(ev) => ev,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    tracing::error!("reading inotify events failed: {e}; rescanning");
                    self.send(&tx, Notice::Overflow);
                    std::thread::sleep(std::time::Duration::from_secs(1));
                    continue;
                }
            };
            let now = now_ms();
            for ev in events {
                self.stats.events.fetch_add(1, Ordering::Relaxed);
                self.stats.last_event_ms.store(now, Ordering::Relaxed);
                if ev.mask.contains(EventMask::Q_OVERFLOW) {
                    self.stats.overflows.fetch_add(1, Ordering::Relaxed);
                    tracing::warn!("inotify queue overflowed; rescanning");
                    self.send(&tx, Notice::Overflow);
                    continue;
                }
                let dir = self.by_wd.lock_ok().get(&ev.wd).cloned();
                let Some(dir) = dir else { continue };
                if self.linked.lock_ok().contains(&ev.wd) {
                    // A file with several links: its link count (or other
                    // metadata) changed, or it is gone.
                    if ev.mask.contains(EventMask::IGNORED) {
                        self.linked.lock_ok().remove(&ev.wd);
                        self.released(&ev.wd);
                    } else if ev.mask.contains(EventMask::ATTRIB) {
                        self.send(&tx, Notice::Changed(dir));
                    }
                    continue;
                }
                if ev.mask.contains(EventMask::IGNORED) {
                    // The folder is gone (or unmounted): its watch is released.
                    self.released(&ev.wd);
                    continue;
                }
                if ev.mask.contains(EventMask::UNMOUNT) {
                    self.send(&tx, Notice::Rescan(dir));
                    continue;
                }
                let path = match ev.name {
                    Some(name) => dir.join(name),
                    None if ev.mask == EventMask::ATTRIB
                        || ev.mask == EventMask::ATTRIB | EventMask::ISDIR =>
                    {
                        // The folder's own permissions or times: its row
                        // (through its parent's group) is all that changed.
                        self.send(&tx, Notice::Changed(dir));
                        continue;
                    }
                    None => {
                        // An event on the watched folder itself (deleted):
                        // its parent's watch reports the same change, except
                        // for a root, whose parent is not watched.
                        self.send(&tx, Notice::Rescan(dir));
                        continue;
                    }
                };
                let notice = if ev.mask.contains(EventMask::MOVED_FROM) {
                    Notice::MovedFrom {
                        cookie: ev.cookie,
                        path,
                    }
                } else if ev.mask.contains(EventMask::MOVED_TO) {
                    Notice::MovedTo {
                        cookie: ev.cookie,
                        path,
                    }
                } else {
                    Notice::Changed(path)
                };
                self.send(&tx, notice);
            }
        }
    }
}

/// Coalesced notices, ready to apply.
#[derive(Debug, Default)]
pub struct Batch {
    /// Paths whose own entry may have changed.
    pub changed: BTreeSet<PathBuf>,
    /// Renames seen whole (both ends inside watched folders).
    pub moves: Vec<(PathBuf, PathBuf)>,
    /// Subtrees to rescan.
    pub rescan: BTreeSet<PathBuf>,
    pub rescan_all: bool,
    /// Cookie files seen (for `--sync`), with when their event arrived.
    pub cookies: Vec<(PathBuf, std::time::Instant)>,
    pending_from: HashMap<u32, PathBuf>,
}

impl Batch {
    pub fn is_empty(&self) -> bool {
        self.changed.is_empty()
            && self.moves.is_empty()
            && self.rescan.is_empty()
            && !self.rescan_all
            && self.cookies.is_empty()
            && self.pending_from.is_empty()
    }

    pub fn add(&mut self, n: Notice) {
        let cookie = |p: &Path| p.file_name().is_some_and(is_cookie);
        match n {
            Notice::Changed(p) if cookie(&p) => {
                // Not indexed, but its folder's own row (mtime) changed.
                self.changed.insert(p.clone());
                self.cookies.push((p, std::time::Instant::now()));
            }
            Notice::Changed(p) => {
                self.changed.insert(p);
            }
            Notice::MovedFrom { cookie, path } => {
                self.pending_from.insert(cookie, path);
            }
            Notice::MovedTo { cookie, path } => match self.pending_from.remove(&cookie) {
                Some(from) => self.moves.push((from, path)),
                None => {
                    self.changed.insert(path);
                }
            },
            Notice::Rescan(p) => {
                self.rescan.insert(p);
            }
            Notice::Overflow => self.rescan_all = true,
        }
    }

    /// Ends the batch: a rename whose other end never came is a delete.
    pub fn seal(&mut self) {
        for (_, from) in self.pending_from.drain() {
            self.changed.insert(from);
        }
    }
}

/// Unix time in milliseconds.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}
