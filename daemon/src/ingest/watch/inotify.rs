//! The Linux backend: inotify, one watch per folder.
//!
//! Why inotify directly and not notify: notify routes every `watch()`
//! through its event-loop thread and took 83 µs per folder here (8.3 s for
//! 100,000 folders); `inotify_add_watch` through the `inotify` crate (which
//! notify itself uses) took 2.1 µs. Watches are added by the walker as it
//! reaches each folder, before the folder's contents are listed, so nothing
//! created in between is missed. It also does what notify does not: rename
//! pairing by cookie, `IN_Q_OVERFLOW` accounting, and a watch on each file
//! with several links (the kernel tells only the folder where a link was
//! made or removed, and the inode itself).

use crate::{LockOk, RwLockOk};
use std::collections::HashMap;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use ::inotify::{EventMask, WatchMask, Watches};

use super::tree::WatchTree;
use super::{Backend, Feed, FolderEpoch, FolderFd, Notice, WatchRef, Watched, now_ms};

const MASK: WatchMask = WatchMask::CREATE
    .union(WatchMask::DELETE)
    .union(WatchMask::MODIFY)
    .union(WatchMask::CLOSE_WRITE)
    .union(WatchMask::ATTRIB)
    .union(WatchMask::MOVED_FROM)
    .union(WatchMask::MOVED_TO)
    .union(WatchMask::DELETE_SELF)
    .union(WatchMask::MOVE_SELF)
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

/// The inotify instance and what it watches.
pub struct Inotify {
    watches: Watches,
    /// Watch number -> the watched folder (or file with several links), as
    /// a tree of names: at a million entries this was one of the daemon's
    /// largest tables (see [`WatchTree`] and `status --json`'s memory).
    /// A file with several links is watched because a link made or removed
    /// anywhere, even outside every root, reaches it as `IN_ATTRIB`.
    table: Mutex<WatchTree>,
    /// Watch number -> the inode `(dev, ino)` of each file with several
    /// links. The table's path for such a watch is the last link it was
    /// added through, which may since be gone or have left the roots while
    /// the inode's other links are indexed: its events name the inode.
    linked: Mutex<HashMap<i32, (u64, u64)>>,
    feed: Arc<Feed>,
    /// The instance's descriptor (a duplicate), to wait for events and to
    /// ask whether some wait unread.
    fd: OwnedFd,
    /// Odd while the reader thread handles what it read (from just before
    /// the read until every event in it is counted): with an empty kernel
    /// queue and no change of this, every event so far is counted.
    reading: AtomicU64,
    /// Events that may change what a folder's `lstat` says (its owner,
    /// mode, existence, place) or that watches were lost; see
    /// [`Backend::folder_epoch`].
    folder_events: AtomicU64,
    /// Held (shared) while a watch is added, (exclusive) while
    /// [`Backend::watches_folder`] probes one, so a probe never removes
    /// a watch being added.
    probe_gate: RwLock<()>,
    /// What `status` says once the OS limit is reached, read once: each
    /// folder beyond the limit read `/proc` again (5% of a restart's CPU in
    /// a profile where another daemon's watches filled the limit).
    limit_note: std::sync::OnceLock<String>,
}

impl std::fmt::Debug for Inotify {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Inotify")
            .field("watches", &self.table.try_lock().ok().map(|t| t.counts()))
            .finish()
    }
}

/// The backend's handle: the instance is shared with its reader thread.
#[derive(Debug)]
pub struct InotifyHandle(Arc<Inotify>);

impl Inotify {
    /// Starts an inotify instance and its reader thread, which sends to
    /// `feed`.
    pub fn start(feed: Arc<Feed>) -> std::io::Result<InotifyHandle> {
        let inotify = ::inotify::Inotify::init()?;
        let me = Arc::new(Inotify {
            watches: inotify.watches(),
            table: Mutex::new(WatchTree::default()),
            linked: Mutex::new(HashMap::new()),
            feed,
            fd: inotify.as_fd().try_clone_to_owned()?,
            reading: AtomicU64::new(0),
            folder_events: AtomicU64::new(0),
            probe_gate: RwLock::new(()),
            limit_note: std::sync::OnceLock::new(),
        });
        let w = me.clone();
        std::thread::Builder::new()
            .name("fsindex-inotify".into())
            .spawn(move || w.read_loop(inotify))?;
        Ok(InotifyHandle(me))
    }

    fn add_watch(
        &self,
        path: &Path,
        at: &Path,
        mask: WatchMask,
        parent: Option<WatchRef>,
    ) -> Watched {
        let gate = self.probe_gate.read_ok();
        let added = self.watches.clone().add(at, mask);
        let recorded = added.as_ref().ok().map(|wd| {
            let wd = wd.get_watch_descriptor_id();
            let recorded = self.record(wd, path, parent, false);
            (wd, recorded)
        });
        drop(gate);
        match (added, recorded) {
            (Ok(_), Some((wd, true))) => Watched::Yes(Some(WatchRef(wd))),
            (Ok(_), _) => Watched::Full(
                "the watch table is full (a gigabyte of names); folders beyond it are polled"
                    .into(),
            ),
            (Err(e), _) if e.raw_os_error() == Some(libc::ENOSPC) => Watched::Full(
                self.limit_note
                    .get_or_init(|| format!(
                        "the OS limit on inotify watches ({}) is reached; raise it with `sysctl fs.inotify.max_user_watches=N`",
                        os_watch_limit().map_or("unknown".into(), |n| n.to_string())
                    ))
                    .clone(),
            ),
            (Err(e), _) => {
                tracing::debug!("cannot watch {}: {e}", path.display());
                Watched::Gone
            }
        }
    }

    /// Records watch `wd` at `path` in the table; when the table cannot
    /// hold it, the watch is removed again and false returned.
    fn record(&self, wd: i32, path: &Path, parent: Option<WatchRef>, linked: bool) -> bool {
        let mut table = self.table.lock_ok();
        if table.insert(wd, path, parent.map(|p| p.0), linked).is_ok() {
            return true;
        }
        table.release(wd);
        // Its IN_IGNORED event finds no live watch and is dropped.
        let _ = rustix::fs::inotify::remove_watch(&self.fd, wd);
        false
    }

    /// The kernel dropped a watch (its file or folder is gone).
    fn released(&self, wd: i32) {
        if self.table.lock_ok().release(wd) == Some(true) {
            self.linked.lock_ok().remove(&wd);
        }
    }

    /// Counts an event that may change what a folder's `lstat` says.
    fn folder_event(&self) {
        self.folder_events.fetch_add(1, Ordering::SeqCst);
    }

    /// Waits until events are there to read (without reading them, so
    /// that `reading` turns odd before any leaves the kernel's queue).
    fn wait_readable(&self) {
        use rustix::event::{PollFd, PollFlags, poll};
        let mut p = [PollFd::new(&self.fd, PollFlags::IN)];
        // An error (EINTR) just means: read, and wait again.
        let _ = poll(&mut p, None);
    }

    fn read_loop(self: Arc<Self>, mut inotify: ::inotify::Inotify) {
        let mut buffer = vec![0u8; 1 << 16];
        loop {
            self.wait_readable();
            // Odd from before the read until every event read is counted.
            self.reading.fetch_add(1, Ordering::SeqCst);
            let read = inotify.read_events(&mut buffer);
            match read {
                Ok(events) => self.handle(events),
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::Interrupted | std::io::ErrorKind::WouldBlock
                    ) => {}
                Err(e) => {
                    tracing::error!("reading inotify events failed: {e}; rescanning");
                    self.folder_event();
                    self.feed.send(Notice::Overflow);
                    self.reading.fetch_add(1, Ordering::SeqCst);
                    std::thread::sleep(std::time::Duration::from_secs(1));
                    continue;
                }
            }
            self.reading.fetch_add(1, Ordering::SeqCst);
        }
    }

    fn handle(&self, events: ::inotify::Events<'_>) {
        let now = now_ms();
        for ev in events {
            self.feed.saw_event(now);
            if ev.mask.contains(EventMask::Q_OVERFLOW) {
                self.folder_event();
                self.feed.stats.overflows.fetch_add(1, Ordering::Relaxed);
                tracing::warn!("inotify queue overflowed; rescanning");
                self.feed.send(Notice::Overflow);
                continue;
            }
            let wd = ev.wd.get_watch_descriptor_id();
            let found = self.table.lock_ok().lookup(wd);
            let Some((dir, linked)) = found else { continue };
            if linked {
                // A file with several links: its link count (or other
                // metadata) changed, or it is gone. Every indexed path of
                // the inode is read again, and the one the watch knows.
                if ev.mask.contains(EventMask::IGNORED) {
                    self.released(wd);
                } else if ev.mask.contains(EventMask::ATTRIB) {
                    if let Some(&inode) = self.linked.lock_ok().get(&wd) {
                        self.feed.send(Notice::Links(inode));
                    }
                    self.feed.send(Notice::Changed(dir));
                }
                continue;
            }
            // A folder's own event (its mode, owner, deletion, its watch
            // gone, an unmount) or one about a subfolder (made, removed,
            // renamed, its mode or owner): what `lstat` says of a folder
            // may have changed.
            if ev.name.is_none() || ev.mask.contains(EventMask::ISDIR) {
                self.folder_event();
            }
            if ev.mask.contains(EventMask::IGNORED) {
                // The folder is gone (or unmounted): its watch is released.
                self.released(wd);
                continue;
            }
            if ev.mask.contains(EventMask::UNMOUNT) {
                self.feed.send(Notice::Rescan(dir));
                continue;
            }
            let path = match ev.name {
                Some(name) => dir.join(name),
                None if ev.mask == EventMask::ATTRIB
                    || ev.mask == EventMask::ATTRIB | EventMask::ISDIR =>
                {
                    // The folder's own permissions or times: its row
                    // (through its parent's group) is all that changed.
                    self.feed.send(Notice::Changed(dir));
                    continue;
                }
                None => {
                    // An event on the watched folder itself (deleted or
                    // moved): its parent's watch reports the same change,
                    // except for a root, whose parent is not watched.
                    self.feed.send(Notice::Rescan(dir));
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
            self.feed.send(notice);
        }
    }
}

impl Backend for InotifyHandle {
    fn name(&self) -> &'static str {
        "inotify"
    }

    fn watch_dir(
        &self,
        path: &Path,
        fd: Option<FolderFd<'_>>,
        parent: Option<WatchRef>,
    ) -> Watched {
        match fd {
            // A path too long for one system call is watched through the
            // handle's `/proc` link (the folder was opened without
            // following a symlink, so nothing is followed that should not
            // be).
            Some(fd) if path.as_os_str().len() >= crate::platform::fs::PATH_MAX => {
                let link = PathBuf::from(format!("/proc/self/fd/{}", fd.as_raw_fd()));
                self.0
                    .add_watch(path, &link, MASK.difference(WatchMask::DONT_FOLLOW), parent)
            }
            _ => self.0.add_watch(path, path, MASK, parent),
        }
    }

    fn watch_linked_file(&self, path: &Path, inode: (u64, u64), folder: Option<WatchRef>) {
        if path.as_os_str().len() >= crate::platform::fs::PATH_MAX {
            return;
        }
        let me = &self.0;
        let mask = WatchMask::ATTRIB.union(WatchMask::DONT_FOLLOW);
        if let Ok(wd) = me.watches.clone().add(path, mask) {
            let wd = wd.get_watch_descriptor_id();
            // Known before the reader thread can look the watch up. (A
            // path that holds another inode by now gives that inode's
            // watch: its events then refresh this one's paths too, which
            // costs a few stats and misses nothing.)
            me.linked.lock_ok().insert(wd, inode);
            if !me.record(wd, path, folder, true) {
                me.linked.lock_ok().remove(&wd);
            }
        }
    }

    fn rename_prefix(&self, from: &Path, to: &Path) {
        self.0.table.lock_ok().rename(from, to);
    }

    fn unwatch_where(&self, drop: &dyn Fn(&Path) -> bool) {
        let me = &self.0;
        // Judged outside the lock (the reader thread needs it for every
        // event), on a copy: a few bytes per watch.
        let table = me.table.lock_ok().clone();
        let gone: Vec<i32> = table
            .live()
            .into_iter()
            .filter(|(_, p)| drop(p))
            .map(|(wd, _)| wd)
            .collect();
        if gone.is_empty() {
            return;
        }
        let mut table = me.table.lock_ok();
        for wd in gone {
            if let Some(linked) = table.release(wd) {
                if linked {
                    me.linked.lock_ok().remove(&wd);
                }
                // Its IN_IGNORED event finds no live watch and is dropped.
                let _ = rustix::fs::inotify::remove_watch(&me.fd, wd);
            }
        }
        // Folders that were watched are not any more.
        me.folder_event();
    }

    fn folder_epoch(&self) -> FolderEpoch {
        let me = &self.0;
        let before = me.reading.load(Ordering::SeqCst);
        if before % 2 == 1 {
            return FolderEpoch::Busy;
        }
        if rustix::io::ioctl_fionread(&me.fd).map_or(true, |queued| queued > 0) {
            return FolderEpoch::Busy;
        }
        let epoch = me.folder_events.load(Ordering::SeqCst);
        // No read began since `before`, and none was under way then: an
        // event queued before this call was read and counted before it.
        if me.reading.load(Ordering::SeqCst) == before {
            FolderEpoch::At(epoch)
        } else {
            FolderEpoch::Busy
        }
    }

    fn watches_folder(&self, path: &Path) -> bool {
        let me = &self.0;
        let _gate = me.probe_gate.write_ok();
        // MASK_ADD with the mask every folder watch has: a watch of ours
        // on this inode is left as it was; a new one is ours to remove.
        match me.watches.clone().add(path, MASK | WatchMask::MASK_ADD) {
            Ok(wd) if me.table.lock_ok().is_live(wd.get_watch_descriptor_id()) => true,
            Ok(wd) => {
                // Its IN_IGNORED event finds no folder and is dropped.
                let _ = me.watches.clone().remove(wd);
                false
            }
            Err(_) => false,
        }
    }

    fn counts(&self) -> (u64, u64) {
        let (folders, linked) = self.0.table.lock_ok().counts();
        (folders as u64, linked as u64)
    }

    fn os_limit(&self) -> Option<u64> {
        os_watch_limit()
    }

    fn heap_bytes(&self) -> u64 {
        let linked =
            self.0.linked.lock_ok().capacity() * (std::mem::size_of::<(i32, (u64, u64))>() + 1);
        self.0.table.lock_ok().heap_bytes() + linked as u64
    }
}
