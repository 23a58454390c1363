//! Who comes first on the scanner: background work runs at background
//! priority (nice 19, idle I/O) so it never storms the machine, but a scan
//! a client sits waiting on (`fsctl scan --wait`, `--sync`, `verify --fix`,
//! `fsctl status --wait`, fsgui's first start) runs at the priority the
//! daemon was started with, and goes back to background afterwards.
//!
//! An unprivileged thread can lower its CPU priority but never raise it
//! again (`RLIMIT_NICE` is 0 by default), so the scanner thread itself
//! keeps the daemon's priority: background jobs run on a fresh thread that
//! lowers itself (the walk's threads inherit it), waited ones on the
//! scanner thread. When a client starts waiting while a background scan
//! runs, that scan stops at its next folder and starts again at once at
//! normal priority. A root's walk goes on from the folders it had left
//! ([`crate::ingest::scan::Paused`]; a first index keeps its window); a
//! folder's rescan starts over, skipping the unchanged rows (the same as a
//! scan after a restart).

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::LockOk;

/// How long a `Status` call that says it waits keeps the scanner at
/// normal priority; such a caller polls more often than this.
pub(super) const LEASE: Duration = Duration::from_secs(3);

/// What `status` says of a root's running scan.
pub const NORMAL: &str = "normal: a client is waiting";
pub const BACKGROUND: &str = "background";

#[derive(Default)]
pub(crate) struct Priority {
    /// Waits in progress: queued jobs with a waiting client, `--sync`.
    waiting: AtomicUsize,
    /// Until when a `Status` caller that waits for `ready` counts.
    lease: Mutex<Option<Instant>>,
    /// The scanner's running job.
    running: Mutex<Option<Running>>,
}

struct Running {
    /// The root it scans (`None`: a watcher batch or a poll).
    root_id: Option<i64>,
    background: bool,
    /// Stops the scan at its next folder (shutdown, or yielding).
    stop: Arc<AtomicBool>,
    /// Set with `stop` when it stops for a waiting client.
    yielded: Arc<AtomicBool>,
}

/// Counts a waiting client while it lives.
pub(crate) struct Waiting(Arc<Priority>);

impl Drop for Waiting {
    fn drop(&mut self) {
        self.0.waiting.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Priority {
    /// A client waits on the scanner until the guard drops.
    pub(crate) fn wait(self: &Arc<Self>) -> Waiting {
        self.waiting.fetch_add(1, Ordering::SeqCst);
        self.preempt();
        Waiting(self.clone())
    }

    /// A `Status` caller waits for `ready`: normal priority for [`LEASE`].
    pub(crate) fn lease(&self) {
        *self.lease.lock_ok() = Some(Instant::now() + LEASE);
        self.preempt();
    }

    /// Whether a client is waiting now.
    pub(crate) fn urgent(&self) -> bool {
        self.waiting.load(Ordering::SeqCst) > 0
            || self.lease.lock_ok().is_some_and(|t| Instant::now() < t)
    }

    /// A background scan running now stops, to go on at normal priority.
    fn preempt(&self) {
        if let Some(r) = self.running.lock_ok().as_ref()
            && r.background
            && r.root_id.is_some()
        {
            r.yielded.store(true, Ordering::SeqCst);
            r.stop.store(true, Ordering::SeqCst);
        }
    }

    /// Stops the running scan (shutdown; `cancel` is already set for the
    /// next ones).
    pub(crate) fn stop_running(&self) {
        if let Some(r) = self.running.lock_ok().as_ref() {
            r.stop.store(true, Ordering::SeqCst);
        }
    }

    /// What `status` says of `root_id`'s scan, when one runs.
    pub(crate) fn of_root(&self, root_id: i64) -> Option<&'static str> {
        let running = self.running.lock_ok();
        let r = running.as_ref().filter(|r| r.root_id == Some(root_id))?;
        Some(if r.background { BACKGROUND } else { NORMAL })
    }

    /// Runs one scanner job, at background priority unless a client waits.
    /// `job` gets a stop flag of its own (already set when `cancel` is);
    /// for a scan (`root_id` given) that stopped to yield, `stopped` says
    /// whether it ended early, and then it runs again at normal priority.
    pub(crate) fn run<R: Send>(
        &self,
        root_id: Option<i64>,
        cancel: &AtomicBool,
        mut job: impl FnMut(&AtomicBool) -> R + Send,
        stopped: impl Fn(&R) -> bool,
    ) -> R {
        loop {
            let stop = Arc::new(AtomicBool::new(false));
            let yielded = Arc::new(AtomicBool::new(false));
            let background = !self.urgent();
            *self.running.lock_ok() = Some(Running {
                root_id,
                background,
                stop: stop.clone(),
                yielded: yielded.clone(),
            });
            // A client that came between the look and the publishing; a
            // shutdown before it (`stop_running` found nothing to stop).
            if background && self.urgent() {
                self.preempt();
            }
            if cancel.load(Ordering::SeqCst) {
                stop.store(true, Ordering::SeqCst);
            }
            let out = if background {
                let ran = std::thread::scope(|s| {
                    std::thread::Builder::new()
                        .name("fsindex-bg".into())
                        .spawn_scoped(s, || {
                            crate::platform::process::lower_thread_priority();
                            job(&stop)
                        })
                        .map(|t| t.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
                });
                match ran {
                    Ok(out) => out,
                    // No thread to be had: the work still gets done.
                    Err(e) => {
                        tracing::warn!("no thread for background work ({e}); running it here");
                        job(&stop)
                    }
                }
            } else {
                job(&stop)
            };
            *self.running.lock_ok() = None;
            if root_id.is_some()
                && yielded.load(Ordering::SeqCst)
                && !cancel.load(Ordering::SeqCst)
                && stopped(&out)
            {
                tracing::info!("a client is waiting: the scan goes on at normal priority");
                continue;
            }
            return out;
        }
    }
}
