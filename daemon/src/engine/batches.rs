//! Applying what the watcher saw: the event loop coalesces notices into
//! batches and queues them for the scanner thread, which hands each to
//! ingest ([`changes::apply`]) and walks the folders that come back; folders
//! left unwatched are polled.

use super::*;
use crate::ingest::changes;
use crate::ingest::watch::coalesce::Coalescer;

impl Engine {
    /// Coalesces watcher notices into batches: a batch closes after
    /// `debounce` without events, or `ceiling` after it opened, so a steady
    /// stream cannot postpone updates forever.
    pub(super) fn event_loop(self: Arc<Self>, rx: crate::ingest::watch::NoticeRx) {
        let Some(watcher) = self.watcher.clone() else {
            return;
        };
        let mut coalescer = Coalescer::new(rx, self.watch.debounce, self.watch.ceiling);
        let mut next_poll = Instant::now() + self.watch.poll_interval;
        // Roots whose folder is gone are looked for this often.
        let mut next_look = Instant::now() + Duration::from_secs(1);
        // Where the backend can lose events silently: every root, this often.
        let reconcile = watcher.reconcile_every();
        let mut next_reconcile = reconcile.map(|every| Instant::now() + every);
        loop {
            if self.cancel.load(Ordering::Relaxed) {
                return;
            }
            let wait = next_poll
                .saturating_duration_since(Instant::now())
                .min(Duration::from_millis(500));
            let Some(batch) = coalescer.next(wait, &watcher) else {
                return;
            };
            if !batch.is_empty() {
                self.send_job(Job::Apply(batch));
            }
            if Instant::now() >= next_look {
                self.look_for_gone_roots();
                next_look = Instant::now() + Duration::from_secs(1);
            }
            if Instant::now() >= next_poll {
                if watcher.polls_any() {
                    self.send_job(Job::Poll(None));
                }
                next_poll = Instant::now() + self.watch.poll_interval;
            }
            if let (Some(at), Some(every)) = (next_reconcile, reconcile)
                && Instant::now() >= at
            {
                tracing::info!(
                    "periodic reconcile of every root (the watcher cannot report lost events)"
                );
                let mut all = Batch::default();
                all.rescan_all = true;
                self.send_job(Job::Apply(all));
                next_reconcile = Some(Instant::now() + every);
            }
        }
    }
    /// Applies one batch of watcher notices (on the scanner thread).
    pub(super) fn apply_batch(&self, mut b: Batch) -> Result<(), Error> {
        let watcher = self.watcher.as_ref();
        if b.rescan_all {
            if let Some(w) = watcher {
                w.stats().recrawls.fetch_add(1, Ordering::Relaxed);
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
        let cookies = std::mem::take(&mut b.cookies);
        // Their tags in user.xdg.tags are read once the batch is applied.
        let named: Vec<PathBuf> = b.changed.iter().cloned().collect();
        // Renames and changed paths become store operations (ingest's
        // job); what needs a whole walk comes back.
        let deep = changes::apply(
            &changes::Indexing {
                store: &self.store,
                writer: &self.writer,
                roots: &roots,
                rules: &rules,
                watcher: watcher.map(|w| &**w),
            },
            b,
        )?;
        // Whole scans: new folders (watched first, then listed) and
        // subtrees to recrawl, each folder before those under it.
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
            let target = match self.checked_target(root, &d) {
                Err(Runtime::RootGone { .. }) => continue,
                target => target?,
            };
            let start = target.start.clone();
            match self.walk_now(target) {
                Ok(_) => done.push(d),
                // Gone between the check above and the scan's first stat:
                // as above, its event follows.
                Err(Error::Io(e))
                    if e.kind() == std::io::ErrorKind::NotFound
                        && !crate::platform::fs::is_dir(&start) =>
                {
                    tracing::debug!("{} vanished before its scan", start.display());
                }
                Err(e) => return Err(e),
            }
        }
        self.file_tags_changed(&named)?;
        self.file_tags_below(&done);
        self.signal_cookies(&cookies);
        // After a large burst, give memory back as after a scan.
        let written = self.store.rows_written.load(Ordering::Relaxed);
        if written.saturating_sub(self.rows_at_idle.swap(written, Ordering::Relaxed)) > 10_000 {
            let _ = self.writer.send(vec![Op::Idle]);
        }
        Ok(())
    }
    /// Rescans the folders left unwatched by the watch limit.
    pub(super) fn poll_unwatched(&self) {
        let Some(watcher) = &self.watcher else { return };
        let Ok(roots) = self.store.read(crate::store::roots) else {
            return;
        };
        for top in watcher.polled_tops() {
            let Some(root) = crate::store::root_of(&roots, &top) else {
                watcher.forget_under(&top);
                continue;
            };
            let Ok(target) = self.checked_target(root, &top) else {
                continue;
            };
            if let Err(e) = self.walk_now(target) {
                tracing::warn!("polling {} failed: {e}", top.display());
            }
        }
    }
}
