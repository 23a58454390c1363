//! When the name index changes, and when it has been still for a while.
//!
//! Work a search does ahead of time (the first pages of lone characters,
//! `queries::search::lone`) is worth doing only once the index has stopped
//! changing, and must never hold a change back from becoming searchable.
//! [`Commits`] gives both: the mirror counts every commit it applies and
//! raises a flag while it waits for (and holds) the snapshot's write lock,
//! which a reader working ahead watches to let go at once; a background
//! thread waits here for the next quiet period instead of polling.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use crate::LockOk;

/// Commits applied to the name index, and whether one is being applied.
/// One per daemon, carried from snapshot to snapshot (a load replaces the
/// snapshot, not this).
#[derive(Debug, Default)]
pub struct Commits {
    /// (commits applied, nudges): see [`Commits::wait_quiet`].
    seen: Mutex<Seen>,
    changed: Condvar,
    /// Set while a commit waits for or holds the write lock.
    writing: Arc<AtomicBool>,
}

/// What [`Commits::wait_quiet`] compares: commits applied and nudges given.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Seen {
    pub applied: u64,
    pub nudged: u64,
}

impl Commits {
    /// Runs `apply` (the mirror taking the write lock and applying a commit)
    /// with the writing flag raised, then counts the commit.
    pub(crate) fn applying<R>(&self, apply: impl FnOnce() -> R) -> R {
        self.writing.store(true, Ordering::Release);
        let r = apply();
        self.writing.store(false, Ordering::Release);
        self.seen.lock_ok().applied += 1;
        self.changed.notify_all();
        r
    }

    /// The flag raised while a commit waits for the write lock (work done
    /// ahead under a read lock stops when it sees it).
    pub fn writing(&self) -> Arc<AtomicBool> {
        self.writing.clone()
    }

    /// What has been applied and nudged so far.
    pub fn seen(&self) -> Seen {
        *self.seen.lock_ok()
    }

    /// Wakes [`wait_quiet`](Self::wait_quiet) at once (someone asked for
    /// work ahead), without counting a commit.
    pub fn nudge(&self) {
        self.seen.lock_ok().nudged += 1;
        self.changed.notify_all();
    }

    /// Waits until something happened after `since` and then stayed still:
    /// a nudge (returned at once), or commits followed by `quiet` without
    /// another. Returns what was seen then; returns `since` unchanged when
    /// nothing happened for `tick` (so the caller can look whether it is
    /// still wanted).
    pub fn wait_quiet(&self, since: Seen, quiet: Duration, tick: Duration) -> Seen {
        let deadline = Instant::now() + tick;
        let mut seen = self.seen.lock_ok();
        while *seen == since {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return since;
            }
            seen = self
                .changed
                .wait_timeout(seen, left)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        loop {
            if seen.nudged != since.nudged {
                return *seen;
            }
            let at = *seen;
            let (next, waited) = self
                .changed
                .wait_timeout_while(seen, quiet, |s| *s == at)
                .unwrap_or_else(|e| e.into_inner());
            seen = next;
            if waited.timed_out() {
                return *seen;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_quiet_period_follows_the_last_commit_and_a_nudge_wakes_at_once() {
        let commits = Arc::new(Commits::default());
        let start = commits.seen();
        // Nothing happens: the tick passes and nothing is reported.
        assert_eq!(
            commits.wait_quiet(start, Duration::from_millis(5), Duration::from_millis(20)),
            start
        );
        // A burst of commits: reported only once they stop.
        let c = commits.clone();
        let burst = std::thread::spawn(move || {
            for _ in 0..5 {
                c.applying(|| assert!(c.writing.load(Ordering::Acquire)));
                std::thread::sleep(Duration::from_millis(10));
            }
            Instant::now()
        });
        let seen = commits.wait_quiet(start, Duration::from_millis(80), Duration::from_secs(5));
        let last = burst.join().unwrap();
        assert_eq!(seen.applied, 5, "the whole burst before the quiet period");
        assert!(last <= Instant::now());
        assert!(!commits.writing().load(Ordering::Acquire));
        // A nudge is reported without waiting for quiet.
        commits.nudge();
        let nudged = commits.wait_quiet(seen, Duration::from_secs(60), Duration::from_secs(60));
        assert_eq!((nudged.applied, nudged.nudged), (5, 1));
    }
}
