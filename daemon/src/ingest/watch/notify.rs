//! The `notify` backend: FSEvents on macOS, ReadDirectoryChangesW on
//! Windows, and notify's own inotify code on Linux (where it is not the
//! default, but exercises this adapter under the same tests).
//!
//! How watches are laid out differs by platform, because the native APIs
//! differ:
//! - macOS and Windows watch a tree natively: each root gets one recursive
//!   watch, and every folder under a watched tree is "watched" already.
//!   (A watch per folder would restart the FSEvents stream per folder and
//!   hold a handle per folder on Windows.)
//! - Elsewhere (Linux) inotify watches one folder at a time, so the walker's
//!   folder-by-folder watches map onto notify's non-recursive ones: the
//!   daemon keeps control of what is watched (exclusions, symlinks, the
//!   cap), as with its own inotify backend.
//!
//! Event translation. Every event is "something about these paths
//! changed": the engine stats each path and compares it with the index, so
//! FSEvents' merged and repeated flags need no interpretation. Exceptions:
//! - pure access events (open, read, close without writing) change nothing
//!   and are dropped, or the daemon's own reads would feed it events;
//! - a rescan flag (inotify `IN_Q_OVERFLOW`; FSEvents `MustScanSubDirs`,
//!   `UserDropped`, `KernelDropped`) rescans the paths it names, or every
//!   root when it names none;
//! - an error from the watcher rescans the paths it names, or every root;
//! - renames: a `From` and a `To` with one tracker (inotify's cookie) are
//!   paired; Windows reports the old name right before the new one without
//!   a tracker, so an untracked `To` is paired with the untracked `From`
//!   just before it; anything unpaired is a delete or a create.
//!
//! What notify 8.2 cannot tell: on Windows a ReadDirectoryChangesW buffer
//! overflow (a zero-byte completion, `ERROR_NOTIFY_ENUM_DIR`) is dropped
//! silently (notify 9.0 reports it, but is not released yet). So on Windows
//! every root is reconciled every [`WINDOWS_RECONCILE`], and `status` says
//! so. On macOS, adding or removing a watch restarts the FSEvents stream,
//! which can drop queued events: the other watched trees are rescanned
//! after every change of watches.

use crate::LockOk;
use std::collections::BTreeSet;
use std::ops::Bound;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ::notify::event::{AccessKind, AccessMode, EventKind, ModifyKind, RenameMode};
use ::notify::{RecommendedWatcher, RecursiveMode, Watcher as _};

use super::{Backend, Feed, FolderFd, Notice, WatchRef, Watched, now_ms};

/// How often every root is reconciled where notify cannot report lost
/// events (Windows with notify 8.2).
pub const WINDOWS_RECONCILE: Duration = Duration::from_secs(600);

/// True where the OS watches whole trees (one recursive watch per root).
const RECURSIVE: bool = cfg!(any(target_os = "macos", target_os = "windows"));

/// True where adding or removing a watch can drop queued events.
const RESTART_DROPS_EVENTS: bool = cfg!(target_os = "macos");

/// The notify watcher and what it watches.
pub struct NotifyBackend {
    watcher: Mutex<RecommendedWatcher>,
    /// Folders watched (recursively where [`RECURSIVE`]). Shared with the
    /// event handler, which forgets the folders notify stops watching (see
    /// [`forget`]).
    watched: Arc<Mutex<BTreeSet<PathBuf>>>,
    feed: Arc<Feed>,
}

impl std::fmt::Debug for NotifyBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NotifyBackend")
            .field("watched", &self.watched.lock_ok().len())
            .finish()
    }
}

/// Pairs renames across events (see the module doc).
#[derive(Debug, Default)]
struct Renames {
    /// The cookie of an untracked `From` waiting for its `To`.
    untracked_from: Option<u32>,
    seq: AtomicU32,
}

impl Renames {
    fn next(&self) -> u32 {
        // Cookies of our own, apart from notify's trackers.
        (1 << 31) | self.seq.fetch_add(1, Ordering::Relaxed)
    }
}

impl NotifyBackend {
    /// Starts notify's recommended watcher for this platform, which sends
    /// to `feed`.
    pub fn start(feed: Arc<Feed>) -> std::io::Result<NotifyBackend> {
        let to = feed.clone();
        let mut renames = Renames::default();
        let watched = Arc::new(Mutex::new(BTreeSet::new()));
        let seen = watched.clone();
        let handler = move |res: ::notify::Result<::notify::Event>| {
            if let Ok(ev) = &res
                && !RECURSIVE
            {
                forget(&seen, ev);
            }
            translate(&to, &mut renames, res);
        };
        let config = ::notify::Config::default().with_follow_symlinks(false);
        let watcher = RecommendedWatcher::new(handler, config).map_err(io_error)?;
        Ok(NotifyBackend {
            watcher: Mutex::new(watcher),
            watched,
            feed,
        })
    }

    /// Notes for `status`: what this backend cannot do on this platform.
    pub fn note() -> Option<String> {
        cfg!(windows).then(|| {
            format!(
                "notify 8.2 cannot report lost ReadDirectoryChangesW events: every root is reconciled every {} minutes",
                WINDOWS_RECONCILE.as_secs() / 60
            )
        })
    }

    /// After watches changed on macOS: the stream restarted and may have
    /// dropped events for every other watched tree.
    fn rescan_others(&self, except: Option<&Path>) {
        if !RESTART_DROPS_EVENTS {
            return;
        }
        let others: Vec<PathBuf> = self
            .watched
            .lock_ok()
            .iter()
            .filter(|p| Some(p.as_path()) != except)
            .cloned()
            .collect();
        for p in others {
            self.feed.send(Notice::Rescan(p));
        }
    }

    /// Stops watching the watched folders `which` picks; returns them.
    fn unwatch_matching(&self, which: impl Fn(&Path) -> bool) -> Vec<PathBuf> {
        let mut gone = Vec::new();
        self.watched.lock_ok().retain(|p| {
            let out = which(p);
            if out {
                gone.push(p.clone());
            }
            !out
        });
        let mut watcher = self.watcher.lock_ok();
        for p in &gone {
            let _ = watcher.unwatch(p);
        }
        gone
    }
}

fn io_error(e: ::notify::Error) -> std::io::Error {
    match e.kind {
        ::notify::ErrorKind::Io(io) => io,
        other => std::io::Error::other(format!("{other:?}")),
    }
}

/// Per folder (Linux), notify stops watching a folder, and every folder
/// below it, when it sees it deleted or moved away (its inotify code's
/// `remove_watch_by_event`, for `IN_DELETE`, `IN_DELETE_SELF` and
/// `IN_MOVED_FROM`): `watched` forgets them too, or `status` would count
/// them still. A folder moved within the roots is watched again by the
/// rescan of its new place that follows every rename. Called on notify's
/// event thread, before notify drops its watches and before it takes the
/// next watch request: the two stay equal.
fn forget(watched: &Mutex<BTreeSet<PathBuf>>, ev: &::notify::Event) {
    let gone = match ev.kind {
        EventKind::Remove(_) => true,
        // `IN_MOVED_FROM` (with its cookie); notify keeps the watch on an
        // untracked `From` (`IN_MOVE_SELF`).
        EventKind::Modify(ModifyKind::Name(RenameMode::From)) => ev.tracker().is_some(),
        _ => false,
    };
    if !gone {
        return;
    }
    let mut watched = watched.lock_ok();
    for p in &ev.paths {
        let below: Vec<PathBuf> = watched
            .range::<Path, _>((Bound::Included(p.as_path()), Bound::Unbounded))
            .take_while(|w| w.starts_with(p))
            .cloned()
            .collect();
        for w in below {
            watched.remove(&w);
        }
    }
}

/// One event (or error) from notify, as notices.
fn translate(feed: &Feed, renames: &mut Renames, res: ::notify::Result<::notify::Event>) {
    // Reads change nothing, and counting them would make the daemon's own
    // reads (scans, hashing, extraction) look like activity: busy, and a
    // new generation for `dupes` each time.
    if let Ok(ev) = &res
        && matches!(ev.kind, EventKind::Access(kind) if kind != AccessKind::Close(AccessMode::Write))
        && !ev.need_rescan()
    {
        return;
    }
    feed.saw_event(now_ms());
    let ev = match res {
        Ok(ev) => ev,
        Err(e) => {
            tracing::warn!("the watcher reported an error ({e}); rescanning");
            feed.stats.overflows.fetch_add(1, Ordering::Relaxed);
            rescan(feed, e.paths);
            return;
        }
    };
    if ev.need_rescan() {
        tracing::warn!("the watcher lost events; rescanning");
        feed.stats.overflows.fetch_add(1, Ordering::Relaxed);
        rescan(feed, ev.paths);
        return;
    }
    match ev.kind {
        // Written and closed: the one access that changes something.
        EventKind::Access(AccessKind::Close(AccessMode::Write)) => {}
        EventKind::Access(_) => return,
        EventKind::Modify(ModifyKind::Name(mode)) => {
            let mut paths = ev.paths.clone().into_iter();
            let tracker = ev.tracker().map(|t| t as u32);
            match (mode, tracker, paths.next()) {
                (RenameMode::From, Some(cookie), Some(path)) => {
                    feed.send(Notice::MovedFrom { cookie, path });
                    return;
                }
                (RenameMode::To, Some(cookie), Some(path)) => {
                    feed.send(Notice::MovedTo { cookie, path });
                    return;
                }
                // inotify's pair, already sent as From and To.
                (RenameMode::Both, Some(_), _) => return,
                (RenameMode::Both, None, Some(from)) => {
                    if let Some(to) = paths.next() {
                        let cookie = renames.next();
                        feed.send(Notice::MovedFrom { cookie, path: from });
                        feed.send(Notice::MovedTo { cookie, path: to });
                        return;
                    }
                    feed.send(Notice::Changed(from));
                    return;
                }
                (RenameMode::From, None, Some(path)) => {
                    let cookie = renames.next();
                    renames.untracked_from = Some(cookie);
                    feed.send(Notice::MovedFrom { cookie, path });
                    return;
                }
                (RenameMode::To, None, Some(path)) => {
                    match renames.untracked_from.take() {
                        Some(cookie) => feed.send(Notice::MovedTo { cookie, path }),
                        None => feed.send(Notice::Changed(path)),
                    }
                    return;
                }
                _ => {}
            }
        }
        _ => {}
    }
    // Anything else ends a pending untracked rename (its `To` never came;
    // the batch turns the `From` into a delete).
    renames.untracked_from = None;
    for p in ev.paths {
        feed.send(Notice::Changed(p));
    }
}

/// Rescans each path, or everything when there is none.
fn rescan(feed: &Feed, paths: Vec<PathBuf>) {
    if paths.is_empty() {
        feed.send(Notice::Overflow);
    }
    for p in paths {
        feed.send(Notice::Rescan(p));
    }
}

impl Backend for NotifyBackend {
    fn name(&self) -> &'static str {
        "notify"
    }

    fn watch_dir(
        &self,
        path: &Path,
        _fd: Option<FolderFd<'_>>,
        _parent: Option<WatchRef>,
    ) -> Watched {
        // Per folder (Linux), a path already in `watched` is watched again:
        // it may be a new folder at the place of a deleted one (`git
        // checkout` removes a folder and makes it again), which the old
        // watch does not see; notify then watches the new one.
        if RECURSIVE && self.watched.lock_ok().iter().any(|w| path.starts_with(w)) {
            return Watched::Yes(None);
        }
        if !RECURSIVE && path.as_os_str().len() >= crate::platform::fs::PATH_MAX {
            return Watched::Poll(format!(
                "folders with paths of {} bytes or more cannot be watched through notify",
                crate::platform::fs::PATH_MAX
            ));
        }
        let mode = if RECURSIVE {
            RecursiveMode::Recursive
        } else {
            RecursiveMode::NonRecursive
        };
        let res = self.watcher.lock_ok().watch(path, mode);
        match res {
            Ok(()) => {
                if RECURSIVE {
                    // A root above folders watched before it covers them.
                    self.unwatch_matching(|w| w.starts_with(path));
                }
                self.watched.lock_ok().insert(path.to_owned());
                self.rescan_others(Some(path));
                Watched::Yes(None)
            }
            Err(e) => match e.kind {
                ::notify::ErrorKind::MaxFilesWatch => Watched::Full(
                    "the OS limit on watches is reached (on Linux raise it with `sysctl fs.inotify.max_user_watches=N`)"
                        .into(),
                ),
                _ => {
                    tracing::debug!("cannot watch {}: {e}", path.display());
                    Watched::Gone
                }
            },
        }
    }

    /// notify has no watch on a single file's link count: a link made or
    /// removed outside every root is seen at the next rescan of the file's
    /// folder. Links made or removed inside the roots are seen through
    /// their folders' events.
    fn watch_linked_file(&self, _path: &Path, _inode: (u64, u64), _folder: Option<WatchRef>) {}

    fn rename_prefix(&self, from: &Path, to: &Path) {
        // notify keeps the path it was given for each watch: re-watch the
        // moved folders under their new paths. Events in between are
        // covered by the rescan of the moved folder that follows a rename.
        for p in self.unwatch_matching(|p| p.starts_with(from)) {
            let _ = self.watch_dir(&super::rebased(&p, from, to), None, None);
        }
    }

    fn unwatch_where(&self, drop: &dyn Fn(&Path) -> bool) {
        if !self.unwatch_matching(|p| drop(p)).is_empty() {
            self.rescan_others(None);
        }
    }

    fn counts(&self) -> (u64, u64) {
        (self.watched.lock_ok().len() as u64, 0)
    }

    fn heap_bytes(&self) -> u64 {
        super::path_set_bytes(&self.watched.lock_ok())
    }

    fn os_limit(&self) -> Option<u64> {
        #[cfg(target_os = "linux")]
        return super::inotify::os_watch_limit();
        #[cfg(not(target_os = "linux"))]
        None
    }

    fn reconcile_every(&self) -> Option<Duration> {
        cfg!(windows).then_some(WINDOWS_RECONCILE)
    }
}

#[cfg(test)]
mod tests {
    use super::super::{NoticeRx, notice_queue};
    use super::*;

    fn feed() -> (Arc<Feed>, NoticeRx) {
        let (tx, rx) = notice_queue(64);
        (Feed::new(tx), rx)
    }

    fn drain(rx: &NoticeRx) -> Vec<String> {
        rx.try_iter().map(|n| format!("{n:?}")).collect()
    }

    fn event(kind: EventKind, paths: &[&str]) -> ::notify::Event {
        let mut ev = ::notify::Event::new(kind);
        for p in paths {
            ev = ev.add_path(PathBuf::from(p));
        }
        ev
    }

    #[test]
    fn events_become_notices_rescans_and_paired_renames() {
        let (feed, rx) = feed();
        let mut r = Renames::default();
        let name = |m| EventKind::Modify(ModifyKind::Name(m));
        // Reads are not changes; a write-close is.
        translate(
            &feed,
            &mut r,
            Ok(event(EventKind::Access(AccessKind::Read), &["/r/a"])),
        );
        translate(
            &feed,
            &mut r,
            Ok(event(
                EventKind::Access(AccessKind::Close(AccessMode::Write)),
                &["/r/a"],
            )),
        );
        assert_eq!(drain(&rx), [r#"Changed("/r/a")"#]);
        // A rescan flag with no path: everything; with paths: those.
        let flagged =
            ::notify::Event::new(EventKind::Other).set_flag(::notify::event::Flag::Rescan);
        translate(&feed, &mut r, Ok(flagged.clone()));
        translate(&feed, &mut r, Ok(flagged.add_path("/r/sub".into())));
        translate(
            &feed,
            &mut r,
            Err(::notify::Error::generic("boom").add_path("/r/x".into())),
        );
        assert_eq!(
            drain(&rx),
            ["Overflow", r#"Rescan("/r/sub")"#, r#"Rescan("/r/x")"#]
        );
        // inotify: From and To share a tracker; Both repeats them.
        translate(
            &feed,
            &mut r,
            Ok(event(name(RenameMode::From), &["/r/a"]).set_tracker(7)),
        );
        translate(
            &feed,
            &mut r,
            Ok(event(name(RenameMode::To), &["/r/b"]).set_tracker(7)),
        );
        translate(
            &feed,
            &mut r,
            Ok(event(name(RenameMode::Both), &["/r/a", "/r/b"]).set_tracker(7)),
        );
        assert_eq!(
            drain(&rx),
            [
                r#"MovedFrom { cookie: 7, path: "/r/a" }"#,
                r#"MovedTo { cookie: 7, path: "/r/b" }"#
            ]
        );
        // Windows: an untracked From then To is one rename.
        translate(&feed, &mut r, Ok(event(name(RenameMode::From), &["/r/c"])));
        translate(&feed, &mut r, Ok(event(name(RenameMode::To), &["/r/d"])));
        let got = drain(&rx);
        assert!(
            got[0].starts_with("MovedFrom") && got[1].starts_with("MovedTo"),
            "{got:?}"
        );
        let cookie = |s: &str| s.split(',').next().unwrap().to_owned();
        assert_eq!(
            cookie(&got[0]).replace("MovedFrom", ""),
            cookie(&got[1]).replace("MovedTo", "")
        );
        // A To with nothing before it is a create; FSEvents' merged flags
        // (rename, any) are "stat this path".
        translate(&feed, &mut r, Ok(event(name(RenameMode::To), &["/r/e"])));
        translate(&feed, &mut r, Ok(event(name(RenameMode::Any), &["/r/f"])));
        assert_eq!(drain(&rx), [r#"Changed("/r/e")"#, r#"Changed("/r/f")"#]);
        assert_eq!(feed.stats.overflows.load(Ordering::Relaxed), 3);
    }
}
