//! Content hashing for duplicates: per-root modes, the background hasher,
//! one duplicate search at a time, and the last answer kept while nothing
//! under the roots changed.

use super::*;

/// How roots are hashed, what hashing has read, and the last pass.
#[derive(Debug, Default)]
pub struct Hashing {
    pub(super) settings: Mutex<HashSettings>,
    pub stats: HashStats,
    /// One duplicate search at a time (background or asked for), so no
    /// file is read twice for the same answer.
    pub(super) running: Mutex<()>,
    pub last_pass: Mutex<Option<LastPass>>,
    pub(super) background_started: AtomicBool,
    /// The last answer, reused while nothing under the roots changed.
    pub(super) last_answer: Mutex<Option<(AnswerKey, dupes::Report)>>,
    /// Rows of the `hashes` table, counted once after each search (status
    /// is polled often; the table can hold millions of rows).
    pub(super) cached_rows: Mutex<Option<u64>>,
}

/// What an answer was computed for: the request and the change generation
/// (see [`Engine::generation`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct AnswerKey {
    scope: Option<i64>,
    min_size: u64,
    include_empty: bool,
    generation: u64,
}

/// The hashing mode of every root: a default and per-root exceptions.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HashSettings {
    pub default: HashMode,
    pub per_root: HashMap<PathBuf, HashMode>,
}

impl HashSettings {
    pub fn mode_for(&self, root: &Path) -> HashMode {
        self.per_root.get(root).copied().unwrap_or(self.default)
    }
}

/// The most recent duplicate search, for status.
#[derive(Clone, Debug)]
pub struct LastPass {
    pub at: Instant,
    /// `None`: every hashed root.
    pub scope: Option<Vec<u8>>,
    pub candidates: u64,
    pub files_read: u64,
    pub unreadable: u64,
    pub background: bool,
}

impl Engine {
    /// Sets how each root is hashed; starts the background hasher once a
    /// root asks for it.
    pub fn set_hashing(self: &Arc<Self>, settings: HashSettings) -> Result<(), Error> {
        let background = settings.default == HashMode::Background
            || settings
                .per_root
                .values()
                .any(|m| *m == HashMode::Background);
        *self.hashing.settings.lock_ok() = settings;
        if background && !self.hashing.background_started.swap(true, Ordering::SeqCst) {
            let e = self.clone();
            std::thread::Builder::new()
                .name("fsindex-hash".into())
                .spawn(move || e.hash_loop())?;
        }
        Ok(())
    }
    /// Inodes with a cached hash.
    pub fn cached_hashes(&self) -> Result<u64, Error> {
        let mut n = self.hashing.cached_rows.lock_ok();
        if let Some(n) = *n {
            return Ok(n);
        }
        let count = self.store.read(crate::store::hashes::count)?;
        *n = Some(count);
        Ok(count)
    }
    /// The hashing mode of a root.
    pub fn hash_mode(&self, root: &[u8]) -> HashMode {
        self.hashing
            .settings
            .lock_ok()
            .mode_for(&crate::platform::bytes::path_buf(root))
    }
    pub(super) fn root_modes(&self, roots: &[RootRow]) -> Vec<RootMode> {
        roots
            .iter()
            .filter_map(|r| {
                Some(RootMode {
                    entry_id: r.entry_id?,
                    path: r.path.clone(),
                    mode: self.hash_mode(&r.path),
                })
            })
            .collect()
    }
    pub(super) fn find_duplicates(
        &self,
        path: Option<&Path>,
        min_size: u64,
        include_empty: bool,
        background: bool,
        progress: &mut dyn FnMut(dupes::Progress) -> bool,
    ) -> Result<dupes::Report, Error> {
        let roots = self.store.read(crate::store::roots)?;
        let modes = self.root_modes(&roots);
        let scope = match path {
            None => None,
            Some(p) => {
                let (root, id) = self.store.read(|c| crate::store::resolve(c, p))?;
                if self.hash_mode(&root.path) == HashMode::Off {
                    return Err(Error::Precondition(format!(
                        "hashing is off for the root {} (config.toml: root_hashing)",
                        String::from_utf8_lossy(&root.path)
                    )));
                }
                Some(id)
            }
        };
        let _one = self.hashing.running.lock_ok();
        let started = Instant::now();
        let req = dupes::Request {
            scope,
            min_size,
            include_empty,
        };
        // Nothing under the roots changed since the same question was
        // answered (no event, no entry written, no rescan) and no file of
        // the answer has a hard link the watcher cannot see: the answer
        // stands, and nothing needs reading or even a stat.
        let key = self.generation().map(|generation| AnswerKey {
            scope,
            min_size,
            include_empty,
            generation,
        });
        let reused = {
            let last = self.hashing.last_answer.lock_ok();
            match (&key, last.as_ref()) {
                (Some(k), Some((lk, r)))
                    if k == lk && r.pinned.iter().all(dupes::Pinned::unchanged) =>
                {
                    let mut r = r.clone();
                    r.cache_hits = r.candidates;
                    r.files_read = 0;
                    r.bytes_read = 0;
                    Some(r)
                }
                _ => None,
            }
        };
        let fresh = reused.is_none();
        let report = match reused {
            Some(r) => r,
            None => self.store.read(|c| {
                dupes::find(
                    c,
                    &self.snapshot,
                    &self.writer,
                    &modes,
                    &req,
                    &self.hashing.stats,
                    progress,
                )
            })?,
        };
        if fresh {
            *self.hashing.last_answer.lock_ok() = match key {
                Some(k) if report.racy == 0 && report.changed == 0 && report.unreadable == 0 => {
                    Some((k, report.clone()))
                }
                _ => None,
            };
        }
        // The next search must see the hashes this one computed, and the
        // next status count them.
        self.writer.flush()?;
        if fresh {
            *self.hashing.cached_rows.lock_ok() = None;
        }
        tracing::info!(
            ms = started.elapsed().as_millis() as u64,
            candidates = report.candidates,
            read = report.files_read,
            cached = report.cache_hits,
            groups = report.groups.len(),
            background,
            reused = !fresh,
            "duplicate search"
        );
        *self.hashing.last_pass.lock_ok() = Some(LastPass {
            at: Instant::now(),
            scope: path.map(crate::platform::bytes::vec),
            candidates: report.candidates,
            files_read: report.files_read,
            unreadable: report.unreadable,
            background,
        });
        Ok(report)
    }
    /// A number that changes whenever anything under the roots may have
    /// changed: entry rows written, watcher events, lost-event rescans.
    /// `None` when not every folder is watched live (a polled folder's
    /// changes arrive late), so no earlier answer may be reused.
    pub(super) fn generation(&self) -> Option<u64> {
        let w = self.watcher.as_ref()?;
        if w.polls_any() || self.busy() {
            return None;
        }
        let s = w.stats();
        Some(
            self.store.rows_written.load(Ordering::SeqCst)
                + s.events.load(Ordering::SeqCst)
                + s.overflows.load(Ordering::SeqCst)
                + s.recrawls.load(Ordering::SeqCst),
        )
    }
    /// True while a scan runs or the watcher saw an event in the last
    /// two seconds: background hashing waits.
    pub(super) fn busy(&self) -> bool {
        if self.cancel.load(Ordering::Relaxed) {
            return true;
        }
        let scanning = self
            .roots
            .lock_ok()
            .values()
            .any(|r| r.state == RootState::Scanning || r.state == RootState::Pending);
        let recent = self.watcher.as_ref().is_some_and(|w| {
            let last = w.stats().last_event_ms.load(Ordering::Relaxed);
            last > 0 && crate::ingest::watch::now_ms() - last < 2_000
        });
        scanning || recent
    }
    /// Background hashing: while the daemon is idle, hashes the same-size
    /// files of `background` roots at the lowest CPU and I/O priority, so
    /// that `dupes` answers from the cache. A pass runs when the index
    /// changed since the last one; it stops as soon as work arrives.
    pub(super) fn hash_loop(self: Arc<Self>) {
        crate::platform::process::lower_thread_priority();
        let mut done_at_rows: Option<u64> = None;
        loop {
            for _ in 0..20 {
                if self.cancel.load(Ordering::Relaxed) {
                    return;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            let rows = self.store.rows_written.load(Ordering::Relaxed);
            if done_at_rows == Some(rows) || self.busy() {
                continue;
            }
            let Ok(roots) = self.store.read(crate::store::roots) else {
                continue;
            };
            let mut complete = true;
            for r in roots
                .iter()
                .filter(|r| self.hash_mode(&r.path) == HashMode::Background)
            {
                let path = crate::platform::bytes::path_buf(&r.path);
                let mut go_on = |_: dupes::Progress| !self.busy();
                match self.find_duplicates(Some(&path), 1, false, true, &mut go_on) {
                    // Files changed too recently to trust their hashes:
                    // read them again on the next pass.
                    Ok(r) if r.racy > 0 => complete = false,
                    Ok(_) => {}
                    Err(Error::Cancelled) => complete = false,
                    Err(e) => {
                        complete = false;
                        tracing::warn!(root = %path.display(), "background hashing: {e}");
                    }
                }
            }
            if complete {
                // Hash rows are not entry rows: rows_written is unchanged.
                done_at_rows = Some(rows);
            }
        }
    }
}
