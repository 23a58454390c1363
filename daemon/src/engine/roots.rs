//! Roots and the scan queue: adding and removing roots, the rules in
//! force, and the one scanner thread that runs scans and watcher batches in
//! turn (so they never write conflicting changes). Also `verify`.

use super::*;

impl Engine {
    pub(super) fn add_root_row(&self, path: &Path) -> Result<i64, Error> {
        let (tx, rx) = mpsc::channel();
        self.writer.send(vec![Op::AddRoot {
            path: crate::platform::bytes::vec(path),
            reply: tx,
        }])?;
        rx.recv().map_err(|_| Error::WriterGone)?
    }
    /// Queues a scan of a root (or a folder under it).
    pub(super) fn queue_scan(
        &self,
        root_id: i64,
        path: Option<PathBuf>,
        done: Option<mpsc::Sender<Result<Outcome, Runtime>>>,
        waited: bool,
    ) -> Result<Arc<Progress>, Error> {
        let progress = Arc::new(Progress::default());
        {
            let mut roots = self.roots.lock_ok();
            let rt = roots.entry(root_id).or_insert_with(|| RootRuntime {
                state: RootState::Pending,
                progress: progress.clone(),
                errors: 0,
                error: None,
                gone: false,
            });
            if rt.state != RootState::Scanning {
                rt.state = RootState::Pending;
            }
        }
        let jobs = self.jobs.lock_ok();
        let tx = jobs.as_ref().ok_or(Error::WriterGone)?;
        let waiting = waited.then(|| self.priority.wait());
        tx.send(Job::Scan(ScanJob {
            root_id,
            path,
            progress: progress.clone(),
            done,
            _waiting: waiting,
        }))
        .map_err(|_| Error::WriterGone)?;
        Ok(progress)
    }
    pub(super) fn scanner_loop(self: Arc<Self>, rx: mpsc::Receiver<Job>) {
        // Scans are background work: they must not storm the machine
        // (Tracker's and Baloo's worst complaints); but one a client waits
        // on runs at the daemon's own priority (see `priority`).
        while let Ok(job) = rx.recv() {
            // Noted at the job's start and end (when it drops), for the
            // trimmer.
            let _active = self.activity_span();
            // Watch batches and scans read the index's rows: a first index
            // held back from SQLite is written first (events wait, in order).
            self.store.backlog.wait();
            let job = match job {
                Job::Scan(job) => job,
                Job::Apply(batch) => {
                    // Run once: only a scan (a root given) starts again.
                    let mut batch = Some(batch);
                    self.priority.run(
                        None,
                        &self.cancel,
                        |_| {
                            let Some(batch) = batch.take() else {
                                return;
                            };
                            if let Err(e) = self.apply_batch(batch) {
                                tracing::error!(
                                    "applying file-system events failed: {e}; rescanning"
                                );
                                self.rescan_all_now();
                            }
                        },
                        |_| false,
                    );
                    self.content_due();
                    self.file_tags_due(Vec::new());
                    continue;
                }
                Job::Poll(done) => {
                    self.priority
                        .run(None, &self.cancel, |_| self.poll_unwatched(), |_| false);
                    self.content_due();
                    if let Some(tx) = done {
                        let _ = tx.send(());
                    }
                    continue;
                }
            };
            // A walk that stops for a waiting client goes on from where it
            // stopped, at normal priority (a first index keeps its window).
            let mut paused = None;
            let result = self.priority.run(
                Some(job.root_id),
                &self.cancel,
                |stop| {
                    if paused.is_none() {
                        // A scan that starts again counts its walk afresh.
                        job.progress.scanned.store(0, Ordering::Relaxed);
                        job.progress.errors.store(0, Ordering::Relaxed);
                    }
                    self.run_job(&job, stop, &mut paused)
                },
                Result::is_err,
            );
            if let Some(p) = paused.take() {
                // Stopped and not taken up (shutting down): what was sent
                // is committed; the next start goes on from it.
                scan::end_paused(&self.writer, p);
            }
            if let Ok(o) = &result
                && o.held
            {
                // A first index: searchable now, from the name index; what
                // reads SQLite (tags, content, the next job) waits until its
                // rows are persisted.
                if let Some(rt) = self.roots.lock_ok().get_mut(&job.root_id) {
                    (rt.state, rt.errors, rt.error) = (RootState::Ready, o.errors, None);
                }
                tracing::info!("first index searchable; writing it to disk");
                self.store.backlog.wait();
            }
            if result.is_ok() {
                let top = match &job.path {
                    Some(p) => Some(p.clone()),
                    None => self
                        .store
                        .read(crate::store::roots)
                        .ok()
                        .and_then(|rs| rs.into_iter().find(|r| r.id == job.root_id))
                        .map(|r| crate::platform::bytes::path_buf(&r.path)),
                };
                self.file_tags_below(top.as_slice());
                self.file_tags_due(Vec::new());
            }
            let mut roots = self.roots.lock_ok();
            if let Some(rt) = roots.get_mut(&job.root_id) {
                match &result {
                    Ok(o) => {
                        rt.state = RootState::Ready;
                        rt.errors = o.errors;
                        rt.error = None;
                        rt.gone = false;
                    }
                    Err(e @ Runtime::RootGone { .. }) => {
                        tracing::warn!("{e}");
                        rt.state = RootState::Error;
                        rt.error = Some(e.to_string());
                    }
                    Err(e) => {
                        // Counted and shown in status; the daemon goes on.
                        tracing::error!("{e}");
                        rt.state = RootState::Error;
                        rt.error = Some(e.to_string());
                    }
                }
            }
            drop(roots);
            // After the root's state: the content and media workers wait
            // while any root scans.
            self.content_due();
            if let Some(done) = job.done {
                let _ = done.send(result);
            }
        }
    }
    /// Runs a scan job; `paused`: where its walk stopped for a waiting
    /// client, to go on from (and where it is put when it stops so).
    pub(super) fn run_job(
        &self,
        job: &ScanJob,
        stop: &AtomicBool,
        paused: &mut Option<scan::Paused>,
    ) -> Result<Outcome, Runtime> {
        let from = match paused.take() {
            Some(p) => scan::ScanFrom::Paused(p),
            None => {
                let root = self
                    .store
                    .read(crate::store::roots)
                    .map_err(|e| Runtime::Index(e.to_string()))?
                    .into_iter()
                    .find(|r| r.id == job.root_id)
                    .ok_or(Runtime::RootRemoved)?;
                if let Some(rt) = self.roots.lock_ok().get_mut(&job.root_id) {
                    rt.state = RootState::Scanning;
                    rt.progress = job.progress.clone();
                }
                let root = self.root_folder(root)?;
                scan::ScanFrom::Start(self.target_for(&root, job.path.as_deref())?)
            }
        };
        let start = from.start().to_owned();
        let outcome = self
            .scan_target(from, &job.progress, stop, Some(paused))
            .map_err(|e| Runtime::Scan {
                path: start,
                reason: e.to_string(),
            })?;
        let _ = self.writer.send(vec![Op::Idle]);
        crate::platform::process::release_memory();
        Ok(outcome)
    }
    /// Checks a root's own folder before a scan from it: when the folder
    /// is gone, its entries leave the index ([`Engine::root_gone`]); when
    /// another folder stands at its path (another inode), the old one's
    /// entries and watches go and the root is scanned as new.
    pub(super) fn root_folder(&self, root: RootRow) -> Result<RootRow, Runtime> {
        let path = crate::platform::bytes::path_buf(&root.path);
        match self
            .root_now(&root)
            .map_err(|e| Runtime::Index(e.to_string()))?
        {
            RootNow::Gone => {
                self.root_gone(&root);
                Err(Runtime::RootGone { path })
            }
            RootNow::Replaced => {
                tracing::info!(root = %path.display(), "another folder is now at the root's path; indexing it afresh");
                self.root_gone(&root);
                if let Some(rt) = self.roots.lock_ok().get_mut(&root.id) {
                    (rt.state, rt.error, rt.gone) = (RootState::Scanning, None, false);
                }
                Ok(RootRow {
                    entry_id: None,
                    ..root
                })
            }
            RootNow::Indexed | RootNow::NotScanned => Ok(root),
        }
    }
    /// What stands at a root's path now, against the folder the index has.
    pub(super) fn root_now(&self, root: &RootRow) -> Result<RootNow, Error> {
        let path = crate::platform::bytes::path_buf(&root.path);
        let now = match crate::platform::fs::lstat(&path) {
            Ok(now) if now.is_dir() => now,
            Ok(_) => return Ok(RootNow::Gone),
            Err(e) => {
                tracing::debug!("{}: {e}", path.display());
                return Ok(RootNow::Gone);
            }
        };
        let Some(entry_id) = root.entry_id else {
            return Ok(RootNow::NotScanned);
        };
        Ok(
            match self.store.read(|c| crate::store::load_row(c, entry_id))? {
                Some(r) if (r.dev, r.ino) != (now.dev, now.ino) => RootNow::Replaced,
                _ => RootNow::Indexed,
            },
        )
    }
    /// The root's folder to walk for `path`: when `path` is the root
    /// itself, its folder is checked first ([`Engine::root_folder`]; a
    /// root's folder has no watched parent to report it gone or replaced).
    pub(super) fn checked_target(
        &self,
        root: &RootRow,
        path: &Path,
    ) -> Result<ScanTarget, Runtime> {
        let root = if path.as_os_str().as_encoded_bytes() == root.path.as_slice() {
            self.root_folder(root.clone())?
        } else {
            root.clone()
        };
        self.target_for(&root, Some(path))
    }
    /// A root's folder is gone: its watches and entries go (searches stop
    /// returning them at once), the root stays configured, and `status`
    /// says so until the folder is back (the event loop looks for it).
    pub(super) fn root_gone(&self, root: &RootRow) {
        let path = crate::platform::bytes::path_buf(&root.path);
        if let Some(w) = &self.watcher {
            w.unwatch_under(&path);
        }
        if let Err(e) = self
            .writer
            .send(vec![Op::RootGone { root_id: root.id }])
            .and_then(|()| self.writer.flush())
        {
            tracing::error!("removing the entries of {}: {e}", path.display());
        }
        if let Some(rt) = self.roots.lock_ok().get_mut(&root.id) {
            rt.state = RootState::Error;
            rt.error = Some(Runtime::RootGone { path: path.clone() }.to_string());
            rt.gone = true;
        }
    }
    /// Roots whose folder was gone and is back: scanned afresh.
    pub(super) fn look_for_gone_roots(&self) {
        let gone: Vec<i64> = self
            .roots
            .lock_ok()
            .iter()
            .filter(|(_, rt)| rt.gone)
            .map(|(id, _)| *id)
            .collect();
        if gone.is_empty() {
            return;
        }
        let Ok(roots) = self.store.read(crate::store::roots) else {
            return;
        };
        for r in roots.iter().filter(|r| gone.contains(&r.id)) {
            let path = crate::platform::bytes::path_buf(&r.path);
            if crate::platform::fs::lstat(&path).is_ok_and(|m| m.is_dir()) {
                tracing::info!(root = %path.display(), "the root's folder is back; scanning it");
                if let Some(rt) = self.roots.lock_ok().get_mut(&r.id) {
                    rt.gone = false;
                }
                if let Err(e) = self.queue_scan(r.id, None, None, false) {
                    tracing::warn!("queueing a scan of {}: {e}", path.display());
                }
            }
        }
    }
    /// What to walk for `path` (a root or a folder under it; `None` for
    /// the whole root): the nearest folder the index already has.
    pub(super) fn target_for(
        &self,
        root: &RootRow,
        path: Option<&Path>,
    ) -> Result<ScanTarget, Runtime> {
        let root_path = crate::platform::bytes::path_buf(&root.path);
        let rules = self.rules();
        let cross_filesystems = rules.cross_filesystems(&root_path);
        let target = match path {
            Some(p) if p != root_path && root.entry_id.is_some() => {
                // The nearest folder the index has (and the rules let in):
                // a brand-new folder is scanned from its parent.
                let mut at = p.to_owned();
                loop {
                    match self.store.read(|c| crate::store::resolve(c, &at)) {
                        Ok((_, id))
                            if crate::platform::fs::is_dir(&at)
                                && !rules.path_verdict(&root_path, &at, true).hides() =>
                        {
                            break ScanTarget {
                                root_id: root.id,
                                is_root: at == root_path,
                                start: at,
                                start_id: Some(id),
                                cross_filesystems,
                                rules,
                            };
                        }
                        _ => match at.parent() {
                            Some(parent) if parent.starts_with(&root_path) => {
                                at = parent.to_owned()
                            }
                            _ => {
                                return Err(Runtime::Outside {
                                    path: p.to_owned(),
                                    root: root_path,
                                });
                            }
                        },
                    }
                }
            }
            _ => ScanTarget {
                root_id: root.id,
                start: root_path.clone(),
                start_id: root.entry_id,
                is_root: true,
                cross_filesystems,
                rules,
            },
        };
        Ok(target)
    }
    /// Walks `path` (or every root) afresh and compares it with the index.
    /// With `fix`, rescans what was verified and waits for it.
    /// What a live `lstat` says of `path` (`None`: nothing there), or not
    /// found when the index has no entry for it either. Asked before
    /// anything that matches the rules against every folder above a path
    /// (Stat, ReadText, a walk set up for Rescan or Verify): a made-up path
    /// of 40,000 parts took seconds there. The index can hold what lstat
    /// cannot reach (past PATH_MAX), so it decides.
    pub(super) fn on_disk_or_indexed(
        &self,
        path: &Path,
    ) -> Result<Option<crate::platform::fs::Stat>, Error> {
        let live = crate::platform::fs::lstat(path).ok();
        if live.is_none() {
            self.store.read(|c| crate::store::resolve(c, path))?;
        }
        Ok(live)
    }
    pub fn verify(&self, path: Option<&Path>, fix: bool) -> Result<Verified, Error> {
        let roots = self.store.read(crate::store::roots)?;
        let mut targets = Vec::new();
        match path {
            None => {
                for r in &roots {
                    targets.push(self.target_for(r, None)?);
                }
            }
            Some(p) => {
                let root = walk_root(&roots, p)?;
                self.on_disk_or_indexed(p)?;
                targets.push(self.target_for(root, Some(p))?);
            }
        }
        let mut out = Verified::default();
        for target in &targets {
            let progress = Progress::default();
            out.differences
                .extend(scan::verify(&self.store, target, &progress)?);
            out.checked += progress.scanned.load(Ordering::Relaxed);
        }
        if fix && !out.differences.is_empty() {
            for target in &targets {
                let (tx, rx) = mpsc::channel();
                self.queue_scan(target.root_id, Some(target.start.clone()), Some(tx), true)?;
                match rx.recv() {
                    Ok(Ok(o)) => out.fixed += o.changes,
                    Ok(Err(e)) => return Err(e.into()),
                    Err(_) => return Err(Error::Cancelled),
                }
            }
        }
        Ok(out)
    }
    pub(super) fn send_job(&self, job: Job) {
        if let Some(tx) = self.jobs.lock_ok().as_ref() {
            let _ = tx.send(job);
        }
    }
    /// Rescans `path` (a root or a folder under one), or every root;
    /// `waited`: a client waits on it (normal priority).
    pub fn rescan(
        &self,
        path: Option<&Path>,
        done: Option<mpsc::Sender<Result<Outcome, Runtime>>>,
        waited: bool,
    ) -> Result<Vec<Arc<Progress>>, Error> {
        let roots = self.store.read(crate::store::roots)?;
        match path {
            None => {
                let mut out = Vec::new();
                for r in &roots {
                    out.push(self.queue_scan(r.id, None, done.clone(), waited)?);
                }
                Ok(out)
            }
            Some(p) => {
                let root = walk_root(&roots, p)?;
                self.on_disk_or_indexed(p)?;
                Ok(vec![self.queue_scan(
                    root.id,
                    Some(p.to_owned()),
                    done,
                    waited,
                )?])
            }
        }
    }
    /// Adds a root and queues its first scan.
    ///
    /// With `content`, what its files say is indexed too (kept across
    /// restarts); given for a root that exists, it turns content on there.
    pub fn add_root(&self, path: &Path, content: bool) -> Result<(), Error> {
        let canon = scan::canonical_root(path)?;
        let roots = self.store.read(crate::store::roots)?;
        if let Some(r) = roots
            .iter()
            .find(|r| r.path == crate::platform::bytes::vec(&canon))
        {
            if content {
                self.writer.send(vec![Op::SetRootContent {
                    root_id: r.id,
                    on: true,
                }])?;
                self.writer.flush()?;
                self.content_due();
                return Ok(());
            }
            return Err(Error::InvalidArgument(format!(
                "{} is already a root",
                canon.display()
            )));
        }
        let mut all: Vec<PathBuf> = roots
            .iter()
            .map(|r| crate::platform::bytes::path_buf(&r.path))
            .collect();
        all.push(canon.clone());
        check_no_nesting(&all)?;
        let id = self.add_root_row(&canon)?;
        if content {
            self.writer.send(vec![Op::SetRootContent {
                root_id: id,
                on: true,
            }])?;
        }
        self.queue_scan(id, None, None, false)?;
        Ok(())
    }
    /// Removes a root and its entries; searches stop returning them at once.
    pub fn remove_root(&self, path: &Path) -> Result<(), Error> {
        let roots = self.store.read(crate::store::roots)?;
        let wanted = fsindex_proto::paths::canonicalize(path).unwrap_or_else(|_| path.to_owned());
        let root = roots
            .iter()
            .find(|r| {
                r.path == crate::platform::bytes::vec(path)
                    || r.path == crate::platform::bytes::vec(&wanted)
            })
            .ok_or_else(|| {
                Error::NotFound(format!(
                    "{} is not a root (roots: {})",
                    path.display(),
                    root_list(&roots)
                ))
            })?;
        self.writer
            .send(vec![Op::RemoveRoot { root_id: root.id }])?;
        self.writer.flush()?;
        // Inside a first index's window a flush returns once the name index
        // has everything, and the removal queues behind the held rows:
        // return once SQLite has it too, so the next `roots` does not list
        // the root.
        self.store.backlog.wait();
        self.roots.lock_ok().remove(&root.id);
        Ok(())
    }
    /// The rules in force: what is indexed, flagged or kept out.
    pub fn rules(&self) -> Arc<Rules> {
        self.rules.read_ok().clone()
    }
    /// Swaps in new rules (a reloaded config) and rescans every root, so
    /// that entries they now keep out leave the index and entries they now
    /// let in arrive. Watches on folders they keep out are dropped at once.
    pub fn set_rules(&self, rules: Rules) -> Result<(), Error> {
        tracing::info!(rules = ?rules, "what is indexed changed; rescanning every root");
        let rules = Arc::new(rules);
        *self.rules.write_ok() = rules.clone();
        let roots = self.store.read(crate::store::roots)?;
        if let Some(w) = &self.watcher {
            w.unwatch_where(|p| {
                crate::store::root_of(&roots, p).is_some_and(|r| {
                    rules
                        .path_verdict(&crate::platform::bytes::path_buf(&r.path), p, true)
                        .hides()
                })
            });
        }
        self.rescan(None, None, false)?;
        Ok(())
    }
    /// Every root with its state.
    pub fn root_views(&self) -> Result<Vec<RootView>, Error> {
        let rows = self.store.read(crate::store::roots)?;
        let runtime = self.roots.lock_ok();
        let held = self.store.backlog.held();
        let mut out = Vec::new();
        for r in rows {
            let rt = runtime.get(&r.id);
            let entries = match r.entry_id {
                Some(id) => self.store.read(|c| du::entry_count(c, id))?,
                // A first index not yet in SQLite: the name index has them.
                None if held.root_id == Some(r.id) => held.entries,
                None => 0,
            };
            out.push(RootView {
                path: r.path.clone(),
                state: rt.map(|x| x.state).unwrap_or(if r.entry_id.is_some() {
                    RootState::Ready
                } else {
                    RootState::Pending
                }),
                entries,
                scanned: rt
                    .map(|x| x.progress.scanned.load(Ordering::Relaxed))
                    .unwrap_or(0),
                errors: rt.map(|x| x.errors).unwrap_or(0),
                scanned_at: r.scanned_at,
                watch: match &self.watcher {
                    _ if rt.is_some_and(|x| x.gone) => "none: the folder is gone".into(),
                    None => "off".into(),
                    Some(w) => match w.polled_under(&crate::platform::bytes::path_buf(&r.path)) {
                        0 => "live".into(),
                        n => format!("partly polled: {n} folders"),
                    },
                },
                error: rt.and_then(|x| x.error.clone()),
                hashing: self.hash_mode(&r.path).as_str().into(),
                priority: self.priority.of_root(r.id),
                gone: rt.is_some_and(|x| x.gone),
            });
        }
        Ok(out)
    }
    /// Walks `target` and writes what differs, watching folders as it goes.
    /// `keep`: where a stopped walk of a root is put ([`scan::scan`]).
    pub(super) fn scan_target(
        &self,
        from: scan::ScanFrom,
        progress: &Progress,
        stop: &AtomicBool,
        keep: Option<&mut Option<scan::Paused>>,
    ) -> Result<Outcome, Error> {
        scan::scan(
            &self.store,
            &self.writer,
            from,
            progress,
            stop,
            self.watcher.as_ref(),
            keep,
        )
    }
    /// Walks `target` from its start on the caller's thread, stopped only
    /// by shutdown (a rescan of lost events, a poll, a burst's folders).
    pub(super) fn walk_now(&self, target: ScanTarget) -> Result<Outcome, Error> {
        self.scan_target(
            scan::ScanFrom::Start(target),
            &Progress::default(),
            &self.cancel,
            None,
        )
    }
    /// Rescans every root now (lost events), on the scanner thread.
    pub(super) fn rescan_all_now(&self) {
        let Ok(roots) = self.store.read(crate::store::roots) else {
            return;
        };
        for root in &roots {
            let Ok(target) = self.target_for(root, None) else {
                continue;
            };
            let start = target.start.clone();
            if let Err(e) = self.walk_now(target) {
                tracing::error!("rescan of {} failed: {e}", start.display());
            }
        }
    }
}

/// The root a walk of `path` (rescan, verify) starts in. A path reaching
/// through a symlink would take the walk out of the root: it is answered
/// as not found, the way a path that does not exist is.
pub(super) fn walk_root<'r>(roots: &'r [RootRow], path: &Path) -> Result<&'r RootRow, Error> {
    let root = crate::store::root_of(roots, path)
        .ok_or_else(|| Error::NotUnderRoot(path.display().to_string(), root_list(roots)))?;
    if scan::through_symlink(&crate::platform::bytes::path_buf(&root.path), path) {
        return Err(Error::NotFound(
            String::from_utf8_lossy(&crate::platform::bytes::vec(path)).into_owned(),
        ));
    }
    Ok(root)
}

pub(super) fn root_list(roots: &[RootRow]) -> String {
    if roots.is_empty() {
        return "none".into();
    }
    roots
        .iter()
        .map(|r| String::from_utf8_lossy(&r.path).into_owned())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Roots may not contain one another: every entry belongs to one root.
pub(super) fn check_no_nesting(roots: &[PathBuf]) -> Result<(), Error> {
    for a in roots {
        for b in roots {
            if a != b && b.starts_with(a) {
                return Err(Error::InvalidArgument(format!(
                    "{} is inside the root {}; roots may not overlap (remove one first)",
                    b.display(),
                    a.display()
                )));
            }
        }
    }
    Ok(())
}

/// The user's home directory: the default root.
pub(super) fn default_root() -> PathBuf {
    directories::UserDirs::new()
        .map(|d| d.home_dir().to_owned())
        .or_else(|| std::env::var_os("HOME").map(PathBuf::from))
        .unwrap_or_else(|| PathBuf::from("/"))
}

/// What makes the roots exactly `wanted` (canonical paths): the recorded
/// roots to remove and the wanted ones to add, in order. Start-up and
/// config reloads both go through here; nested roots are refused.
pub(crate) fn root_changes(
    wanted: &[PathBuf],
    recorded: &[Vec<u8>],
) -> Result<(Vec<PathBuf>, Vec<PathBuf>), Error> {
    let mut canon: Vec<PathBuf> = Vec::new();
    for w in wanted {
        if !canon.contains(w) {
            canon.push(w.clone());
        }
    }
    check_no_nesting(&canon)?;
    let remove = recorded
        .iter()
        .filter(|r| {
            !canon
                .iter()
                .any(|c| crate::platform::bytes::of(c) == &r[..])
        })
        .map(|r| crate::platform::bytes::path_buf(r))
        .collect();
    let add = canon
        .into_iter()
        .filter(|c| {
            !recorded
                .iter()
                .any(|r| &r[..] == crate::platform::bytes::of(c))
        })
        .collect();
    Ok((remove, add))
}
