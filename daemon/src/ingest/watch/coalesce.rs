//! Notices become batches. A batch closes after `debounce` without a
//! notice, or `ceiling` after it opened, so a steady stream of events cannot
//! postpone updates forever. Lost notices make the batch a rescan of
//! everything, with backoff while they keep being lost.

use std::sync::atomic::Ordering;
use std::sync::mpsc::RecvTimeoutError;
use std::time::{Duration, Instant};

use super::{Batch, NoticeRx, Watcher};

/// The coalescer: the receiving end of the backend's feed.
#[derive(Debug)]
pub struct Coalescer {
    rx: NoticeRx,
    debounce: Duration,
    ceiling: Duration,
    /// When everything was last rescanned, for the backoff.
    recent: Vec<Instant>,
}

impl Coalescer {
    pub fn new(rx: NoticeRx, debounce: Duration, ceiling: Duration) -> Coalescer {
        Coalescer {
            rx,
            debounce,
            ceiling,
            recent: Vec::new(),
        }
    }

    /// The next batch: waits up to `wait` for a first notice (an empty
    /// batch if none came), then gathers until the batch closes. `None`
    /// once the backend is gone.
    pub fn next(&mut self, wait: Duration, watcher: &Watcher) -> Option<Batch> {
        let mut batch = Batch::default();
        match self.rx.recv_timeout(wait) {
            Ok(n) => {
                batch.add(n);
                let opened = Instant::now();
                loop {
                    let left = self.ceiling.saturating_sub(opened.elapsed());
                    if left.is_zero() {
                        break;
                    }
                    match self.rx.recv_timeout(self.debounce.min(left)) {
                        Ok(n) => batch.add(n),
                        Err(RecvTimeoutError::Timeout) => break,
                        Err(RecvTimeoutError::Disconnected) => return None,
                    }
                }
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => return None,
        }
        if watcher.take_lost() {
            watcher.stats().overflows.fetch_add(1, Ordering::Relaxed);
            tracing::warn!("watch events were dropped (the daemon fell behind); rescanning");
            batch.rescan_all = true;
        }
        if batch.rescan_all {
            // Recrawl with backoff (as Watchman does): three quick ones,
            // then waits doubling from 100 ms to 10 s while the storm lasts;
            // notices meanwhile are covered by the rescan.
            let now = Instant::now();
            self.recent
                .retain(|t| now.duration_since(*t) < Duration::from_secs(60));
            self.recent.push(now);
            if self.recent.len() > 3 {
                let wait = Duration::from_millis(100 << (self.recent.len() - 4).min(7))
                    .min(Duration::from_secs(10));
                tracing::warn!(
                    recrawls = self.recent.len(),
                    ?wait,
                    "repeated lost events; backing off before rescanning"
                );
                let until = Instant::now() + wait;
                while let Some(left) = until.checked_duration_since(Instant::now()) {
                    match self.rx.recv_timeout(left) {
                        Ok(n) => batch.add(n),
                        Err(RecvTimeoutError::Timeout) => break,
                        Err(RecvTimeoutError::Disconnected) => return None,
                    }
                }
            }
        }
        batch.seal();
        Some(batch)
    }
}
