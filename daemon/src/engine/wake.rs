//! The wake-up of a background worker (content extraction, media
//! metadata): "a sweep is due", the condition variable that says so, and
//! whether the worker is at work, for `status`.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use crate::LockOk;

/// How often a held worker looks whether it may go on.
const HELD_POLL: Duration = Duration::from_millis(250);

/// See the module.
#[derive(Debug, Default)]
pub struct Wake {
    due: Mutex<bool>,
    cv: Condvar,
    busy: AtomicBool,
}

impl Wake {
    /// Asks for a sweep (after a scan or a watcher batch).
    pub fn ask(&self) {
        *self.due.lock_ok() = true;
        self.cv.notify_one();
    }

    /// A sweep was asked for and has not begun.
    pub fn is_due(&self) -> bool {
        *self.due.lock_ok()
    }

    /// Sweeping, reading, or about to.
    pub fn working(&self) -> bool {
        self.busy.load(Ordering::SeqCst) || self.is_due()
    }

    /// The worker's round is over.
    pub fn rest(&self) {
        self.busy.store(false, Ordering::SeqCst);
    }

    /// Waits for the next round: until a sweep is asked for, or 5 s pass
    /// (the worker looks at its queue again), and then for as long as
    /// `held` says (a root being scanned: looked at every [`HELD_POLL`],
    /// a sweep asked for meanwhile kept for after). `None` once `cancel`
    /// is set; else whether to sweep, at most two sweeps a second (a burst
    /// of batches is one), `last` being when the last one began.
    pub fn next(
        &self,
        cancel: &AtomicBool,
        last: &mut Instant,
        held: impl Fn() -> bool,
    ) -> Option<bool> {
        let mut sweep = {
            let mut due = self.due.lock_ok();
            if !*due && !cancel.load(Ordering::Relaxed) {
                due = self
                    .cv
                    .wait_timeout(due, Duration::from_secs(5))
                    .map(|(g, _)| g)
                    .unwrap_or_else(|e| e.into_inner().0);
            }
            std::mem::replace(&mut *due, false)
        };
        loop {
            if cancel.load(Ordering::Relaxed) {
                return None;
            }
            if !held() {
                break;
            }
            std::thread::sleep(HELD_POLL);
            sweep |= std::mem::replace(&mut *self.due.lock_ok(), false);
        }
        self.busy.store(true, Ordering::SeqCst);
        if sweep {
            let since = last.elapsed();
            if since < Duration::from_millis(500) {
                std::thread::sleep(Duration::from_millis(500) - since);
            }
            *last = Instant::now();
        }
        Some(sweep)
    }
}
