//! What `status` reports: the roots the caller may see, the process's own
//! figures (memory, CPU), the index's, hashing's and the watcher's.

use super::View;
use super::*;
pub use crate::ingest::watch::WatchFigures;

/// Hashing's figures for status.
#[derive(Clone, Debug, Default)]
pub struct HashFigures {
    pub cached: u64,
    pub files_read: u64,
    pub bytes_read: u64,
    pub cache_hits: u64,
    pub last_pass: Option<LastPass>,
}

/// Everything `status` tells.
#[derive(Clone, Debug)]
pub struct Status {
    pub roots: Vec<RootView>,
    pub entries: u64,
    /// Every root the caller sees is scanned.
    pub ready: bool,
    pub db_bytes: u64,
    pub db_path: PathBuf,
    pub rss_bytes: u64,
    /// CPU share since the previous status call at least a second ago.
    pub cpu_percent: f64,
    pub cpu_time_ms: u64,
    pub rows_written: u64,
    /// Everything is in SQLite: no first index held back
    /// ([`crate::store::backlog`]); else the operations still to write.
    pub persisted: bool,
    pub pending_rows: u64,
    pub notices: Vec<String>,
    pub uptime_secs: u64,
    pub hashing: HashFigures,
    /// `None`: watching is off.
    pub watch: Option<WatchFigures>,
    /// Per folder with content on.
    pub content: Vec<super::ContentFigures>,
    pub fts_bytes: u64,
    pub extracted: u64,
    pub extract_failed: u64,
    pub memory: MemoryFigures,
    /// Media metadata: rows by status, files read since start.
    pub media: super::MediaFigures,
    /// The fleet link (`None`: no fleet configured).
    pub fleet: Option<super::fleet::FleetFigures>,
}

/// Where the daemon's memory goes, in bytes (0: not measurable here).
#[derive(Clone, Debug, Default)]
pub struct MemoryFigures {
    pub rss_anon: u64,
    pub rss_file: u64,
    pub search_snapshot: u64,
    pub watches: u64,
    pub sqlite: u64,
    pub heap_in_use: u64,
    pub heap_free: u64,
}

/// The daemon's resident memory and CPU time (ms) since start.
fn process_figures() -> (u64, u64) {
    let pid = sysinfo::Pid::from_u32(std::process::id());
    let Ok(mut sys) = sysinfo::System::new() else {
        return (0, 0);
    };
    sys.refresh_processes_specifics(
        sysinfo::ProcessesToUpdate::Some(&[pid]),
        true,
        sysinfo::ProcessRefreshKind::nothing()
            .with_memory()
            .with_cpu(),
    );
    sys.process(pid)
        .map(|p| (p.memory(), p.accumulated_cpu_time()))
        .unwrap_or((0, 0))
}

impl Engine {
    /// Where the memory goes: taken at most once a second, the figures of
    /// the last second otherwise.
    fn memory_figures(&self) -> MemoryFigures {
        let mut seen = self.memory_seen.lock_ok();
        if let Some((at, m)) = seen.as_ref()
            && at.elapsed() < Duration::from_secs(1)
        {
            return m.clone();
        }
        let (rss_anon, rss_file) = crate::platform::process::resident_split().unwrap_or_default();
        let (heap_in_use, heap_free) = crate::platform::process::heap_figures().unwrap_or_default();
        let m = MemoryFigures {
            rss_anon,
            rss_file,
            search_snapshot: self.snapshot.read_ok().heap_bytes() as u64,
            watches: self.watcher.as_ref().map_or(0, |w| w.heap_bytes()),
            sqlite: crate::store::Store::sqlite_heap_bytes(),
            heap_in_use,
            heap_free,
        };
        *seen = Some((Instant::now(), m.clone()));
        m
    }

    /// A client waits for every root to be ready (`fsctl status --wait`,
    /// fsgui's first start): scans run at normal priority while such calls
    /// keep coming.
    pub fn client_waits_for_ready(&self) {
        self.priority.lease();
    }

    /// The daemon's state as this caller may see it.
    ///
    /// A call counts as activity for the trimmer, as a query does: the
    /// code it runs (5-9 MiB of file-backed pages at 1M entries, which this kernel
    /// maps back in large pieces) is given back once the daemon is quiet
    /// again, so a daemon that is only polled idles as small as one left
    /// alone. The figures are read before anything else runs.
    pub fn status(&self, view: Option<View>) -> Result<Status, Error> {
        let (rss_bytes, cpu_time_ms) = process_figures();
        self.note_activity();
        let cpu_percent = {
            // CPU time at the last two calls at least a second apart: a
            // client's handshake just before a status must not shrink the
            // window to nothing.
            let mut seen = self.cpu_seen.lock_ok();
            let (since, before) = if seen[1].0.elapsed() >= Duration::from_secs(1) {
                let last = seen[1];
                *seen = [last, (Instant::now(), cpu_time_ms)];
                last
            } else {
                seen[0]
            };
            let wall = since.elapsed().as_secs_f64() * 1000.0;
            if wall > 0.0 {
                cpu_time_ms.saturating_sub(before) as f64 * 100.0 / wall
            } else {
                0.0
            }
        };
        let mut view_for_content = view.as_ref().map(|v| View::new(v.caller.clone()));
        let roots = self.roots_seen(view)?;
        let stats = &self.hashing.stats;
        let watch = self.watcher.as_ref().map(|w| w.figures());
        let memory = self.memory_figures();
        let held = self.store.backlog.held();
        Ok(Status {
            memory,
            fleet: self.fleet_figures(),
            entries: roots.iter().map(|r| r.entries).sum(),
            // A root whose folder is gone has nothing left to do until it
            // is back: the rest of the index is ready.
            ready: roots.iter().all(|r| r.state == RootState::Ready || r.gone)
                && self.snapshot.read_ok().is_loaded(),
            roots,
            db_bytes: self.store.disk_bytes(),
            db_path: self.store.db_path().to_owned(),
            rss_bytes,
            cpu_percent,
            cpu_time_ms,
            rows_written: self.store.rows_written.load(Ordering::Relaxed),
            persisted: held.root_id.is_none(),
            pending_rows: held.pending,
            notices: self.store.notices.lock_ok().clone(),
            uptime_secs: self.started.elapsed().as_secs(),
            hashing: HashFigures {
                cached: self.cached_hashes()?,
                files_read: stats.files_read.load(Ordering::Relaxed),
                bytes_read: stats.bytes_read.load(Ordering::Relaxed),
                cache_hits: stats.cache_hits.load(Ordering::Relaxed),
                last_pass: self.hashing.last_pass.lock_ok().clone(),
            },
            watch,
            content: {
                let mut c = self.content_status();
                if let Some(v) = view_for_content.as_mut() {
                    c.retain(|f| v.sees(crate::platform::bytes::of(&f.path)));
                }
                c
            },
            fts_bytes: self.store.read(crate::store::content::fts_bytes)?,
            extracted: self.content.extracted.load(Ordering::Relaxed),
            extract_failed: self.content.failed.load(Ordering::Relaxed),
            media: self.media_status()?,
        })
    }
}
