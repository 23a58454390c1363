//! Content hashing for duplicates: per-root modes, the background hasher,
//! one duplicate search at a time, the last answer kept while nothing
//! under the roots changed, and the reading: each candidate's `lstat`, the
//! partial and full hashes on every core, and the new hashes sent to the
//! writer. What the index says (the candidates, the cache's verdict, the
//! groups) is [`dupes`]'s; this file runs its stages over the files.

use super::*;

use std::collections::HashSet;
use std::fs::File;
use std::io::Read;
use std::sync::atomic::{AtomicU64, AtomicUsize};

use rusqlite::Connection;

use crate::platform::fs as pfs;
use crate::queries::dupes::{Cand, PARTIAL_LEN, Progress, Report, Request, Stage, State};
use crate::store::HashRow;

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

/// The largest duplicates answer kept for reuse, in bytes of paths (about
/// what it holds in memory): a larger one is answered and let go, so that
/// the daemon does not keep tens of MB for a question asked once (a tree of
/// 200,000 small files gave 16 MB).
pub const MAX_KEPT_ANSWER: usize = 4 << 20;

/// About the memory a duplicates answer holds: its paths and a little per
/// copy and group.
fn answer_bytes(report: &dupes::Report) -> usize {
    report
        .groups
        .iter()
        .map(|g| {
            64 + g
                .copies
                .iter()
                .map(|c| 32 + c.paths.iter().map(|p| p.len() + 24).sum::<usize>())
                .sum::<usize>()
        })
        .sum()
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
                (Some(k), Some((lk, r))) if k == lk && r.pinned.iter().all(pinned_unchanged) => {
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
                find(
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
                Some(k)
                    if report.racy == 0
                        && report.changed == 0
                        && report.unreadable == 0
                        && answer_bytes(&report) <= MAX_KEPT_ANSWER =>
                {
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
            // Writing the hashes filled the writer's page cache (16 MiB):
            // let it go as after a scan.
            if report.files_read > 0 {
                let _ = self.writer.send(vec![crate::store::Op::Idle]);
            }
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
    /// True while a root is scanned or waits to be: the media and content
    /// workers yield to it (a restart on 2 cores took 8.2 s instead of 3-4
    /// while the media pass it resumed read files beside it, both at
    /// background priority).
    /// (Their [`Wake::next`](super::wake::Wake::next) holds them.)
    pub(super) fn scanning(&self) -> bool {
        self.roots
            .lock_ok()
            .values()
            .any(|r| r.state == RootState::Scanning || r.state == RootState::Pending)
    }
    /// True while a scan runs or the watcher saw an event in the last
    /// two seconds: background hashing waits.
    pub(super) fn busy(&self) -> bool {
        if self.cancel.load(Ordering::Relaxed) {
            return true;
        }
        let scanning = self.scanning();
        let recent = self.watcher.as_ref().is_some_and(|w| {
            let last = w.stats().last_event_ms.load(Ordering::Relaxed);
            last > 0 && crate::ingest::watch::now_ms() - last < 2_000
        });
        // A first index still being written to SQLite counts as a scan.
        scanning || recent || !self.store.backlog.persisted()
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

/// True when a file of an earlier answer with hard links outside the index
/// (see [`dupes::Pinned`]) still has the state it was hashed in.
fn pinned_unchanged(p: &dupes::Pinned) -> bool {
    pfs::lstat(&p.path).ok().is_some_and(|m| p.holds(&m))
}

/// Size of the head and of the tail block read by the partial hash.
const BLOCK: u64 = 4096;
/// Files up to this size are hashed whole at once: a partial hash would
/// read most of them anyway.
const WHOLE_BELOW: u64 = 4 * BLOCK;
/// Read buffer of the full hash.
const BUF: usize = 256 * 1024;

fn now_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as i64)
        .unwrap_or(0)
}

/// Runs `work` over `items` on every core; `progress` is called about ten
/// times a second and stops the work when it returns false.
fn parallel<T: Send>(
    items: &mut [T],
    bytes_of: impl Fn(&T) -> u64 + Sync,
    work: impl Fn(&mut T) + Sync,
    stage: Stage,
    progress: &mut dyn FnMut(Progress) -> bool,
) -> Result<(), Error> {
    let total_bytes: u64 = items.iter().map(&bytes_of).sum();
    let total = items.len() as u64;
    let next = AtomicUsize::new(0);
    let done = AtomicU64::new(0);
    let done_bytes = AtomicU64::new(0);
    let stop = AtomicBool::new(false);
    let threads = crate::platform::process::cores().clamp(1, 8);
    // Work is handed out in chunks: one lock per chunk, not per file.
    let slots: Vec<Mutex<&mut [T]>> = items.chunks_mut(64).map(Mutex::new).collect();
    let mut cancelled = false;
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                loop {
                    if stop.load(Ordering::Relaxed) {
                        break;
                    }
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(slot) = slots.get(i) else { break };
                    let mut chunk = slot.lock_ok();
                    for item in chunk.iter_mut() {
                        if stop.load(Ordering::Relaxed) {
                            break;
                        }
                        work(item);
                        done_bytes.fetch_add(bytes_of(item), Ordering::Relaxed);
                        done.fetch_add(1, Ordering::Relaxed);
                    }
                }
            });
        }
        loop {
            let d = done.load(Ordering::Relaxed);
            let go_on = progress(Progress {
                stage,
                files_done: d,
                files_total: total,
                bytes_done: done_bytes.load(Ordering::Relaxed),
                bytes_total: total_bytes,
            });
            if !go_on {
                cancelled = true;
                stop.store(true, Ordering::Relaxed);
                break;
            }
            // Report about ten times a second, but notice the end at once.
            for _ in 0..50 {
                if done.load(Ordering::Relaxed) >= total {
                    break;
                }
                std::thread::sleep(Duration::from_millis(2));
            }
            if done.load(Ordering::Relaxed) >= total {
                break;
            }
        }
    });
    if cancelled {
        return Err(Error::Cancelled);
    }
    Ok(())
}

/// What reading one file gave.
enum Outcome {
    /// The hash, and the state the file was read in.
    Hash(Vec<u8>, State),
    Unreadable,
    /// Not the file the index knows, or it changed while being read.
    Changed,
}

thread_local! {
    /// Each reading thread's buffer, reused from file to file.
    static BUFFER: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
    /// Each reading thread's last folder, open: the next file of the same
    /// folder is opened relative to it, so the kernel looks up one name
    /// instead of the whole path (half the CPU of reading small files went
    /// to path look-ups). Closed when the thread ends with the stage.
    static FOLDER: std::cell::RefCell<Option<(Vec<u8>, pfs::DirFd)>> =
        const { std::cell::RefCell::new(None) };
}

/// Runs `at` on a candidate's folder, open, and its name, when the folder
/// opens (else `whole` on its whole path, as when it is a symlink: a root
/// given through one). Which inode the answer is about is checked by the
/// caller, so a folder renamed meanwhile cannot make it read another file
/// unnoticed. The path is split and compared as bytes (std's
/// component-wise `Path` comparisons cost more than the look-up they save).
fn in_folder<T>(
    path: &Path,
    at: impl FnOnce(pfs::DirRef<'_>, &std::ffi::OsStr) -> std::io::Result<T>,
    whole: impl FnOnce(&Path) -> std::io::Result<T>,
) -> std::io::Result<T> {
    use crate::platform::bytes;
    let all = bytes::of(path);
    let Some(cut) = all
        .iter()
        .rposition(|&b| std::path::is_separator(char::from(b)))
        // (Not a file at the top, nor a Windows drive's: "C:" alone is
        // that drive's current folder.)
        .filter(|&cut| cut > 0 && cut + 1 < all.len() && all[cut - 1] != b':')
    else {
        return whole(path);
    };
    let (dir, name) = (&all[..cut], &all[cut + 1..]);
    FOLDER.with_borrow_mut(|folder| {
        if folder.as_ref().is_none_or(|(d, _)| d.as_slice() != dir) {
            *folder = pfs::open_dir(Path::new(bytes::os(dir)))
                .ok()
                .map(|fd| (dir.to_vec(), fd));
        }
        match folder {
            Some((_, fd)) => at(pfs::dir_ref(fd), bytes::os(name)),
            None => whole(path),
        }
    })
}

/// Opens a candidate and `fstat`s it (see [`in_folder`]).
fn open_stat(path: &Path) -> std::io::Result<(File, crate::platform::fs::Stat)> {
    in_folder(path, pfs::open_file_stat_at, pfs::open_file_stat)
}

/// Sorts by path, as bytes: a folder's files one after the other.
fn by_path<T>(items: &mut [T], path: impl Fn(&T) -> &Path) {
    items.sort_unstable_by(|a, b| {
        crate::platform::bytes::of(path(a)).cmp(crate::platform::bytes::of(path(b)))
    });
}

/// Reads `path` (head and tail, or whole) and hashes it, checking that it
/// is still the expected inode (and the state an earlier stage or `lstat`
/// found, if any) before and after. Few system calls: open (one name
/// looked up, see [`open_stat`]), fstat, read (one for a small file),
/// fstat, close.
fn read_hash(c: &Cand, whole: bool, stats: &HashStats) -> Outcome {
    let (f, m) = match open_stat(&c.path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Outcome::Changed,
        Err(e) if pfs::is_symlink_refused(&e) => return Outcome::Changed,
        Err(_) => return Outcome::Unreadable,
    };
    let Some(state) = dupes::state_if(&m, c.dev, c.ino, c.size) else {
        return Outcome::Changed;
    };
    if c.state.is_some_and(|s| s != state) {
        return Outcome::Changed;
    }
    stats.files_read.fetch_add(1, Ordering::Relaxed);
    let mut hasher = blake3::Hasher::new();
    let mut read = 0u64;
    let ok = BUFFER.with_borrow_mut(|buf| {
        if whole {
            // One byte more than the file holds: a read that fills less
            // than the buffer has reached the end, so a small file takes
            // one read. (One that grew is caught by the fstat after.)
            let want = (c.size as usize).saturating_add(1).clamp(1, BUF);
            buf.resize(want, 0);
            let mut f = &f;
            loop {
                match f.read(buf) {
                    Ok(0) => break true,
                    Ok(n) => {
                        hasher.update(&buf[..n]);
                        read += n as u64;
                        if n < buf.len() && read == c.size {
                            break true;
                        }
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(_) => break false,
                }
            }
        } else {
            buf.resize(2 * BLOCK as usize, 0);
            let (head, tail) = buf.split_at_mut(BLOCK as usize);
            let ok = pfs::read_exact_at(&f, head, 0).is_ok()
                && pfs::read_exact_at(&f, tail, c.size - BLOCK).is_ok();
            hasher.update(buf);
            read = 2 * BLOCK;
            ok
        }
    });
    stats.bytes_read.fetch_add(read, Ordering::Relaxed);
    if !ok {
        return Outcome::Unreadable;
    }
    let same = pfs::fstat_file(&f)
        .ok()
        .and_then(|m| dupes::state_if(&m, c.dev, c.ino, c.size))
        == Some(state);
    if whole && read != c.size || !same {
        return Outcome::Changed;
    }
    let h = hasher.finalize();
    if whole {
        Outcome::Hash(h.as_bytes().to_vec(), state)
    } else {
        Outcome::Hash(h.as_bytes()[..PARTIAL_LEN].to_vec(), state)
    }
}

/// Finds duplicate files. `progress` is called during the hashing stages
/// and cancels the search by returning false. Hashes computed are sent to
/// the writer as they come.
fn find(
    conn: &Connection,
    snapshot: &RwLock<Snapshot>,
    writer: &WriteHandle,
    roots: &[RootMode],
    req: &Request,
    stats: &HashStats,
    progress: &mut dyn FnMut(Progress) -> bool,
) -> Result<Report, Error> {
    let mut report = Report::default();
    let bytes_before = stats.bytes_read.load(Ordering::Relaxed);
    if !progress(Progress {
        stage: Stage::Sizes,
        files_done: 0,
        files_total: 0,
        bytes_done: 0,
        bytes_total: 0,
    }) {
        return Err(Error::Cancelled);
    }

    let mut lap = std::time::Instant::now();
    let mut laps: Vec<(&str, u128)> = Vec::new();
    let mut mark = |name: &'static str| {
        laps.push((name, lap.elapsed().as_millis()));
        lap = std::time::Instant::now();
    };
    // 1. Sizes shared by two or more files, placed under their root and the
    // scope, with their paths and cached hashes: all from the index.
    let (mut cands, paths_of) =
        dupes::candidates(conn, snapshot, roots, req, &mut report, &mut mark)?;

    let total = cands.len() as u64;
    // The state now (lstat, on every core) of each candidate with a cached
    // hash: one that is no longer what the index says is left out, and a
    // cached hash counts only for the exact state it was computed for. The
    // others need no lstat: the file is read anyway, and its state taken
    // from the open file (one path look-up a file, not two).
    let mut with_cache: Vec<&mut Cand> = cands.iter_mut().filter(|c| c.cached.is_some()).collect();
    by_path(&mut with_cache, |c| &c.path);
    parallel(
        &mut with_cache,
        |_| 0,
        |c| {
            c.state = in_folder(&c.path, pfs::lstat_at, pfs::lstat)
                .ok()
                .and_then(|m| dupes::state_if(&m, c.dev, c.ino, c.size));
            if let (Some(row), Some(state)) = (&c.cached, c.state)
                && !dupes::trusted(row, c, state)
            {
                c.cached = None;
            }
        },
        Stage::Sizes,
        progress,
    )?;
    drop(with_cache);
    // (A cached row is kept only with a state: none means the file changed.)
    let gone = |c: &Cand| c.cached.is_some() && c.state.is_none();
    report.changed += cands.iter().filter(|c| gone(c)).count() as u64;
    cands.retain(|c| !gone(c));

    let started_ns = now_ns();

    mark("lstat");
    // 2. Partial hashes, for files big enough to have a head and a tail;
    // only big files whose (size, partial) is shared go on.
    let (mut big, small): (Vec<Cand>, Vec<Cand>) =
        cands.into_iter().partition(|c| c.size > WHOLE_BELOW);
    for c in &mut big {
        c.partial = c
            .cached
            .as_ref()
            .and_then(|r| r.partial.as_deref())
            .and_then(|p| p.try_into().ok());
    }
    let mut read = HashSet::new();
    hash_stage(
        &mut big,
        false,
        started_ns,
        stats,
        writer,
        &mut report,
        &mut read,
        progress,
    )?;
    dupes::shared_partials(&mut big);

    mark("partial");
    // 3. Full hashes.
    let mut rest: Vec<Cand> = small;
    rest.append(&mut big);
    for c in &mut rest {
        c.full = c
            .cached
            .as_ref()
            .and_then(|r| r.full.as_deref())
            .and_then(|f| f.try_into().ok());
    }
    hash_stage(
        &mut rest,
        true,
        started_ns,
        stats,
        writer,
        &mut report,
        &mut read,
        progress,
    )?;

    mark("full");
    // 4. Groups: equal (size, full hash), two or more inodes.
    dupes::finish(&mut report, rest, paths_of);
    mark("groups");
    tracing::debug!(?laps, "duplicate search stages (ms)");
    report.files_read = read.len() as u64;
    // Files there and readable, less those read: answered from the cache.
    let present = total.saturating_sub(report.changed + report.unreadable);
    report.cache_hits = present.saturating_sub(report.files_read);
    stats
        .cache_hits
        .fetch_add(report.cache_hits, Ordering::Relaxed);
    report.bytes_read = stats.bytes_read.load(Ordering::Relaxed) - bytes_before;
    Ok(report)
}

/// Hashes (head and tail, or whole) every candidate that has no such hash
/// yet, on every core; records the new hashes, and leaves out (counting them
/// in `report`) the files that could not be read or changed meanwhile.
/// `read` collects the inodes whose content was read.
#[allow(clippy::too_many_arguments)]
fn hash_stage(
    cands: &mut Vec<Cand>,
    whole: bool,
    at_ns: i64,
    stats: &HashStats,
    writer: &WriteHandle,
    report: &mut Report,
    read: &mut HashSet<(u64, u64)>,
    progress: &mut dyn FnMut(Progress) -> bool,
) -> Result<(), Error> {
    let has = |c: &Cand| {
        if whole {
            c.full.is_some()
        } else {
            c.partial.is_some()
        }
    };
    let outcome = Mutex::new(Vec::new());
    {
        let mut todo: Vec<(usize, &Cand)> =
            cands.iter().enumerate().filter(|(_, c)| !has(c)).collect();
        // In path order: the files of a folder one after the other, each
        // opened relative to it (see [`open_stat`]).
        by_path(&mut todo, |(_, c)| &c.path);
        parallel(
            &mut todo,
            |(_, c)| if whole { c.size } else { 2 * BLOCK },
            |(i, c)| {
                let r = read_hash(c, whole, stats);
                outcome.lock_ok().push((*i, r));
            },
            if whole { Stage::Full } else { Stage::Partial },
            progress,
        )?;
    }
    let mut keep = vec![true; cands.len()];
    let mut rows = Vec::new();
    for (i, r) in outcome.into_inner().unwrap_or_else(|e| e.into_inner()) {
        let c = &mut cands[i];
        match r {
            Outcome::Hash(h, state) => {
                read.insert((c.dev, c.ino));
                c.state = Some(state);
                if whole {
                    c.full = h.as_slice().try_into().ok();
                } else {
                    c.partial = h.as_slice().try_into().ok();
                }
                let s = state;
                rows.push(HashRow {
                    dev: c.dev,
                    ino: c.ino,
                    size: c.size,
                    mtime_ns: s.mtime_ns,
                    ctime_ns: s.ctime_ns,
                    partial: c.partial.map(|p| p.to_vec()),
                    full: c.full.map(|f| f.to_vec()),
                    hashed_ns: at_ns,
                });
            }
            Outcome::Unreadable => {
                report.unreadable += 1;
                report
                    .unreadable_paths
                    .push(c.path.as_os_str().as_encoded_bytes().to_vec());
                keep[i] = false;
            }
            Outcome::Changed => {
                report.changed += 1;
                keep[i] = false;
            }
        }
    }
    let mut keep = keep.into_iter();
    cands.retain(|_| keep.next().unwrap_or(false));
    flush_rows(writer, &mut rows, &mut report.racy)
}

fn flush_rows(writer: &WriteHandle, rows: &mut Vec<HashRow>, racy: &mut u64) -> Result<(), Error> {
    *racy += rows
        .iter()
        .filter(|r| r.hashed_ns < r.mtime_ns.max(r.ctime_ns) + dupes::RACY_NS)
        .count() as u64;
    // In key order: the writer's inserts then walk the table's B-tree
    // forward instead of jumping about it.
    rows.sort_unstable_by_key(|r| (r.dev, r.ino));
    let mut rows = std::mem::take(rows).into_iter();
    loop {
        let chunk: Vec<HashRow> = rows.by_ref().take(8192).collect();
        if chunk.is_empty() {
            break;
        }
        writer.send(vec![Op::PutHashes(chunk)])?;
    }
    Ok(())
}
