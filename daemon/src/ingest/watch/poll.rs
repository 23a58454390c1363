//! The poll backend: nothing is watched, every folder is rescanned every
//! poll interval.
//!
//! It refuses every watch, so each root lands in the [`super::Watcher`]'s
//! polled set, and the engine's existing polling (the same path that covers
//! folders beyond the watch limit) rescans it. A poll is the restart
//! reconcile: a walk that compares `(size, mtime, inode)` with the index and
//! writes only the differences. Choosing this over a walker of its own
//! keeps one tested way of polling, not two.
//!
//! What polling cannot see: a rename is a delete and a create (the walk
//! compares names); `--sync` rescans every root instead of waiting for a
//! cookie's event. For file systems where no watcher works (network shares,
//! FUSE) or platforms without one.

use std::path::Path;
use std::time::Duration;

use super::{Backend, FolderFd, WatchRef, Watched};

/// Watches nothing; see the module doc.
#[derive(Debug)]
pub struct Poll {
    interval: Duration,
}

impl Poll {
    pub fn new(interval: Duration) -> Poll {
        Poll { interval }
    }
}

impl Backend for Poll {
    fn name(&self) -> &'static str {
        "poll"
    }

    fn watch_dir(
        &self,
        _path: &Path,
        _fd: Option<FolderFd<'_>>,
        _parent: Option<WatchRef>,
    ) -> Watched {
        Watched::Poll(format!(
            "the poll backend watches nothing: every root is rescanned every {} s",
            self.interval.as_secs_f64()
        ))
    }

    fn watch_linked_file(&self, _path: &Path, _inode: (u64, u64), _folder: Option<WatchRef>) {}

    fn rename_prefix(&self, _from: &Path, _to: &Path) {}

    fn unwatch_where(&self, _drop: &dyn Fn(&Path) -> bool) {}

    fn counts(&self) -> (u64, u64) {
        (0, 0)
    }

    fn os_limit(&self) -> Option<u64> {
        None
    }

    fn polls_everything(&self) -> bool {
        true
    }
}
