//! Duplicate files, staged like fclones: equal sizes from the index, then a
//! partial hash (head and tail blocks), then a full BLAKE3 hash.
//!
//! A group is two or more distinct inodes of one size whose whole content
//! has the same 256-bit BLAKE3 hash. Paths sharing an inode are one copy.
//! Hashes are cached per inode in the `hashes` table together with the
//! `(dev, ino, size, mtime_ns, ctime_ns)` they were computed for; a cached
//! hash is used only while the file still has exactly that state, and only
//! when it was taken at least [`RACY_NS`] after the file's last change (a
//! write landing in the same timestamp tick as our read would otherwise go
//! unnoticed: git's and plocate's "racy" timestamps).

use crate::LockOk;
use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, RwLock};
use std::time::Duration;

use rusqlite::Connection;

use crate::Error;
pub use crate::config::HashMode;
use crate::platform::fs::{self as pfs, Stat};
use crate::queries::search::Snapshot;
use crate::store::entries::{self, SizedFile};
use crate::store::{HashRow, Kind, Op, WriteHandle, hashes};

/// A hash taken less than this long after the file's last change (mtime or
/// ctime) is used for the answer at hand but not trusted by later runs.
pub const RACY_NS: i64 = 2_000_000_000;
/// Size of the head and of the tail block read by the partial hash.
const BLOCK: u64 = 4096;
/// Files up to this size are hashed whole at once: a partial hash would
/// read most of them anyway.
const WHOLE_BELOW: u64 = 4 * BLOCK;
/// Partial hashes are stored truncated to this many bytes.
const PARTIAL_LEN: usize = 16;
/// Read buffer of the full hash.
const BUF: usize = 256 * 1024;
/// At most this many unreadable paths are listed (all are counted).
const LIST_MAX: usize = 100;

/// Content actually read, for status and to prove the cache works.
#[derive(Debug, Default)]
pub struct HashStats {
    /// Files opened and read (partially or whole).
    pub files_read: AtomicU64,
    pub bytes_read: AtomicU64,
    /// Hashes taken from the cache instead of reading.
    pub cache_hits: AtomicU64,
}

/// Where a duplicate search stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// Grouping the index's files by size.
    Sizes,
    /// Hashing the head and tail of same-size files.
    Partial,
    /// Hashing the whole content of what is left.
    Full,
}

impl Stage {
    pub fn as_str(self) -> &'static str {
        match self {
            Stage::Sizes => "sizes",
            Stage::Partial => "partial",
            Stage::Full => "full",
        }
    }
}

#[derive(Clone, Copy, Debug)]
pub struct Progress {
    pub stage: Stage,
    pub files_done: u64,
    pub files_total: u64,
    pub bytes_done: u64,
    pub bytes_total: u64,
}

/// One copy in a group: an inode and every indexed path to it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Copy {
    pub paths: Vec<Vec<u8>>,
    /// Allocated bytes (st_blocks * 512).
    pub allocated: u64,
}

/// Byte-identical files.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Group {
    pub size: u64,
    pub hash: [u8; 32],
    /// Distinct inodes, ordered by first path.
    pub copies: Vec<Copy>,
}

impl Group {
    /// Apparent bytes freed by keeping one copy: size × (copies − 1).
    pub fn reclaimable(&self) -> u64 {
        self.size * (self.copies.len() as u64 - 1)
    }
    /// Allocated bytes freed by keeping the largest-allocated copy.
    pub fn reclaimable_allocated(&self) -> u64 {
        let all: u64 = self.copies.iter().map(|c| c.allocated).sum();
        all - self.copies.iter().map(|c| c.allocated).max().unwrap_or(0)
    }
}

/// A file in an answer that has hard links outside the index: a write
/// through such a link raises no event in a watched folder, so an answer
/// reused from an earlier search re-checks these files first.
#[derive(Clone, Debug)]
pub struct Pinned {
    path: PathBuf,
    dev: u64,
    ino: u64,
    size: u64,
    state: State,
}

impl Pinned {
    /// True when the file still has the state it was hashed in.
    pub fn unchanged(&self) -> bool {
        pfs::lstat(&self.path)
            .ok()
            .and_then(|m| state_if(&m, self.dev, self.ino, self.size))
            == Some(self.state)
    }
}

/// What a duplicate search found, and what it cost.
#[derive(Clone, Debug, Default)]
pub struct Report {
    /// Largest reclaimable first.
    pub groups: Vec<Group>,
    /// Files (inodes) that shared their size with another one.
    pub candidates: u64,
    /// Files read in this search, and bytes.
    pub files_read: u64,
    pub bytes_read: u64,
    /// Files answered from the cache alone (no content read).
    pub cache_hits: u64,
    /// Files that could not be opened or read (skipped), and the first paths.
    pub unreadable: u64,
    pub unreadable_paths: Vec<Vec<u8>>,
    /// Files that changed since they were indexed, or while being read
    /// (skipped: the watcher brings the index up to date).
    pub changed: u64,
    /// Roots left out because their hashing mode is `off`.
    pub skipped_roots: Vec<Vec<u8>>,
    /// Group members with hard links outside the index (see [`Pinned`]).
    pub pinned: Vec<Pinned>,
    /// Hashes taken too soon after the file's last change to be trusted
    /// later (see [`RACY_NS`]): the next search reads those files again.
    pub racy: u64,
}

/// What to search.
#[derive(Clone, Debug, Default)]
pub struct Request {
    /// Entry id of the folder (or file) to search under; `None`: every root.
    pub scope: Option<i64>,
    /// Smallest file size considered (bytes).
    pub min_size: u64,
    /// Also group empty files (all empty files are equal).
    pub include_empty: bool,
}

/// A root as the duplicate search needs it.
#[derive(Clone, Debug)]
pub struct RootMode {
    pub entry_id: i64,
    pub path: Vec<u8>,
    pub mode: HashMode,
}

/// A file (inode) that shares its size with another one.
struct Cand {
    dev: u64,
    ino: u64,
    size: u64,
    allocated: u64,
    nlink: u64,
    /// Entry ids of every indexed path to this inode.
    links: Vec<u32>,
    /// Absolute path used to read it.
    path: PathBuf,
    /// Its state now (from lstat), when it still is what the index says.
    state: Option<State>,
    cached: Option<HashRow>,
    partial: Option<[u8; PARTIAL_LEN]>,
    full: Option<[u8; 32]>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct State {
    mtime_ns: i64,
    ctime_ns: i64,
}

fn now_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as i64)
        .unwrap_or(0)
}

/// The file's state, when it is still the regular file (dev, ino, size)
/// that was indexed; `None` when anything of that differs.
fn state_if(m: &Stat, dev: u64, ino: u64, size: u64) -> Option<State> {
    (m.kind == Kind::File && m.dev == dev && m.ino == ino && m.size == size).then_some(State {
        mtime_ns: m.mtime_ns,
        ctime_ns: m.ctime_ns,
    })
}

/// The root folder above entry `id` (its entry id) and whether the entry
/// is, or is under, `scope` (always, without a scope).
fn place(snap: &Snapshot, id: u32, scope: Option<i64>) -> (i64, bool) {
    let mut inside = scope.is_none();
    let mut cur = id;
    loop {
        inside = inside || scope == Some(i64::from(cur));
        match snap.entry_parent(cur) {
            Some(p) => cur = p,
            None => return (i64::from(cur), inside),
        }
    }
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
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(2)
        .clamp(1, 8);
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

/// Opens a file for hashing: not through a symlink, without updating its
/// access time when we may, at any path length.
fn open(path: &Path) -> std::io::Result<File> {
    pfs::open_file(path)
}

/// What reading one file gave.
enum Outcome {
    Hash(Vec<u8>),
    Unreadable,
    /// Not the file the index knows, or it changed while being read.
    Changed,
}

/// Reads `path` (head and tail, or whole) and hashes it, checking that it
/// is still the expected inode and state before and after.
fn read_hash(c: &Cand, whole: bool, stats: &HashStats) -> Outcome {
    let Some(state) = c.state else {
        return Outcome::Changed;
    };
    let f = match open(&c.path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Outcome::Changed,
        Err(e) if pfs::is_symlink_refused(&e) => return Outcome::Changed,
        Err(_) => return Outcome::Unreadable,
    };
    let same = |f: &File| {
        pfs::fstat_file(f)
            .ok()
            .and_then(|m| state_if(&m, c.dev, c.ino, c.size))
            == Some(state)
    };
    if !same(&f) {
        return Outcome::Changed;
    }
    stats.files_read.fetch_add(1, Ordering::Relaxed);
    let mut hasher = blake3::Hasher::new();
    let mut read = 0u64;
    let ok = if whole {
        let mut f = &f;
        let mut buf = vec![0u8; BUF.min(c.size as usize + 1).max(1)];
        loop {
            match f.read(&mut buf) {
                Ok(0) => break true,
                Ok(n) => {
                    hasher.update(&buf[..n]);
                    read += n as u64;
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => break false,
            }
        }
    } else {
        let mut head = vec![0u8; BLOCK as usize];
        let mut tail = vec![0u8; BLOCK as usize];
        let ok = pfs::read_exact_at(&f, &mut head, 0).is_ok()
            && pfs::read_exact_at(&f, &mut tail, c.size - BLOCK).is_ok();
        hasher.update(&head);
        hasher.update(&tail);
        read = 2 * BLOCK;
        ok
    };
    stats.bytes_read.fetch_add(read, Ordering::Relaxed);
    if !ok {
        return Outcome::Unreadable;
    }
    if whole && read != c.size || !same(&f) {
        return Outcome::Changed;
    }
    let h = hasher.finalize();
    if whole {
        Outcome::Hash(h.as_bytes().to_vec())
    } else {
        Outcome::Hash(h.as_bytes()[..PARTIAL_LEN].to_vec())
    }
}

/// True when a cached row may be used for a file in `state`.
fn trusted(row: &HashRow, c: &Cand, state: State) -> bool {
    row.size == c.size
        && row.mtime_ns == state.mtime_ns
        && row.ctime_ns == state.ctime_ns
        && row.hashed_ns >= state.mtime_ns.max(state.ctime_ns) + RACY_NS
}

/// Finds duplicate files. `progress` is called during the hashing stages
/// and cancels the search by returning false. Hashes computed are sent to
/// the writer as they come.
pub fn find(
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
    let min = if req.include_empty {
        req.min_size
    } else {
        req.min_size.max(1)
    };
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
    // 1. Sizes shared by two or more files (one read of the table)...
    let mut per_size: HashMap<u64, u32> = HashMap::new();
    entries::each_file_size(conn, min, |size| *per_size.entry(size).or_default() += 1)?;
    per_size.retain(|_, n| *n > 1);

    mark("sizes");
    // ...then those files' metadata...
    let mut rows: Vec<SizedFile> = Vec::new();
    entries::each_file_sized(
        conn,
        min,
        |size| per_size.contains_key(&size),
        |f| rows.push(f),
    )?;
    drop(per_size);

    // ...placed under their root and the scope by the search snapshot (the
    // index's tree in memory, kept equal to it by the writer); hard links
    // folded into one candidate per inode.
    let snap = crate::queries::search::read_loaded(snapshot);
    let modes: HashMap<i64, &RootMode> = roots.iter().map(|r| (r.entry_id, r)).collect();
    let mut skipped: Vec<i64> = Vec::new();
    let mut by_inode: HashMap<(u64, u64), Cand> = HashMap::new();
    for SizedFile {
        id,
        size,
        blocks,
        dev,
        ino,
        nlink,
    } in rows
    {
        // Not in the snapshot yet (committed a moment ago), or a root
        // that is a file: never a duplicate of anything here.
        if snap.entry_kind(id).is_none() || snap.entry_parent(id).is_none() {
            continue;
        }
        let (root, inside) = place(&snap, id, req.scope);
        if !inside {
            continue;
        }
        match modes.get(&root) {
            Some(m) if m.mode == HashMode::Off => {
                if !skipped.contains(&root) {
                    skipped.push(root);
                }
                continue;
            }
            Some(_) => {}
            None => continue, // a root being removed
        }
        by_inode
            .entry((dev, ino))
            .or_insert_with(|| Cand {
                dev,
                ino,
                size,
                allocated: blocks * 512,
                nlink,
                links: Vec::new(),
                path: PathBuf::new(),
                state: None,
                cached: None,
                partial: None,
                full: None,
            })
            .links
            .push(id);
    }
    report.skipped_roots = skipped
        .iter()
        .filter_map(|id| modes.get(id).map(|m| m.path.clone()))
        .collect();

    // Sizes with two or more distinct inodes in scope.
    let mut inodes_per_size: HashMap<u64, u32> = HashMap::new();
    for c in by_inode.values() {
        *inodes_per_size.entry(c.size).or_default() += 1;
    }
    let mut cands: Vec<Cand> = by_inode
        .into_values()
        .filter(|c| inodes_per_size.get(&c.size).is_some_and(|&n| n > 1))
        .collect();
    drop(inodes_per_size);
    report.candidates = cands.len() as u64;

    mark("candidates");
    // Paths (every link, sorted), from the snapshot.
    let mut paths_of: HashMap<(u64, u64), Vec<Vec<u8>>> = HashMap::new();
    for c in &mut cands {
        let mut paths: Vec<Vec<u8>> = c.links.iter().map(|&id| snap.path(id)).collect();
        paths.sort();
        if let Some(first) = paths.first() {
            c.path = crate::platform::bytes::path_buf(first);
        }
        paths_of.insert((c.dev, c.ino), paths);
    }
    drop(snap);

    mark("paths");
    // Cached hashes of the candidates (one read of the table).
    let at: HashMap<(u64, u64), usize> = cands
        .iter()
        .enumerate()
        .map(|(i, c)| ((c.dev, c.ino), i))
        .collect();
    for row in hashes::cached(conn, |dev, ino| at.contains_key(&(dev, ino)))? {
        if let Some(&i) = at.get(&(row.dev, row.ino)) {
            cands[i].cached = Some(row);
        }
    }
    drop(at);

    mark("cache");
    // Each candidate's state now (lstat, on every core): a file that is no
    // longer what the index says is left out, and a cached hash counts only
    // for the exact state it was computed for.
    parallel(
        &mut cands,
        |_| 0,
        |c| {
            c.state = pfs::lstat(&c.path)
                .ok()
                .and_then(|m| state_if(&m, c.dev, c.ino, c.size));
            if let (Some(row), Some(state)) = (&c.cached, c.state)
                && !trusted(row, c, state)
            {
                c.cached = None;
            }
        },
        Stage::Sizes,
        progress,
    )?;
    report.changed += cands.iter().filter(|c| c.state.is_none()).count() as u64;
    cands.retain(|c| c.state.is_some());
    let present = cands.len() as u64;

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
    let mut per_partial: HashMap<(u64, [u8; PARTIAL_LEN]), u32> = HashMap::new();
    for c in &big {
        if let Some(p) = c.partial {
            *per_partial.entry((c.size, p)).or_default() += 1;
        }
    }
    big.retain(|c| {
        c.partial
            .is_some_and(|p| per_partial.get(&(c.size, p)).is_some_and(|&n| n > 1))
    });

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
    let mut groups: HashMap<(u64, [u8; 32]), Vec<Copy>> = HashMap::new();
    let mut pinned = Vec::new();
    for c in rest {
        let Some(full) = c.full else { continue };
        let paths = paths_of.remove(&(c.dev, c.ino)).unwrap_or_default();
        if c.nlink > paths.len() as u64
            && let Some(state) = c.state
        {
            pinned.push((
                full,
                Pinned {
                    path: c.path.clone(),
                    dev: c.dev,
                    ino: c.ino,
                    size: c.size,
                    state,
                },
            ));
        }
        groups.entry((c.size, full)).or_default().push(Copy {
            paths,
            allocated: c.allocated,
        });
    }
    let mut groups: Vec<Group> = groups
        .into_iter()
        .filter(|(_, copies)| copies.len() > 1)
        .map(|((size, hash), mut copies)| {
            copies.sort_by(|a, b| a.paths.cmp(&b.paths));
            Group { size, hash, copies }
        })
        .collect();
    groups.sort_by(|a, b| {
        b.reclaimable()
            .cmp(&a.reclaimable())
            .then(b.size.cmp(&a.size))
            .then(a.copies[0].paths.cmp(&b.copies[0].paths))
    });
    report.pinned = pinned
        .into_iter()
        .filter(|(h, _)| groups.iter().any(|g| g.hash == *h))
        .map(|(_, p)| p)
        .collect();
    mark("groups");
    tracing::debug!(?laps, "duplicate search stages (ms)");
    report.groups = groups;
    report.files_read = read.len() as u64;
    report.cache_hits = present.saturating_sub(report.files_read);
    stats
        .cache_hits
        .fetch_add(report.cache_hits, Ordering::Relaxed);
    report.bytes_read = stats.bytes_read.load(Ordering::Relaxed) - bytes_before;
    report.unreadable_paths.sort();
    report.unreadable_paths.truncate(LIST_MAX);
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
            Outcome::Hash(h) => {
                read.insert((c.dev, c.ino));
                if whole {
                    c.full = h.as_slice().try_into().ok();
                } else {
                    c.partial = h.as_slice().try_into().ok();
                }
                let s = c.state.unwrap_or(State {
                    mtime_ns: 0,
                    ctime_ns: 0,
                });
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
        .filter(|r| r.hashed_ns < r.mtime_ns.max(r.ctime_ns) + RACY_NS)
        .count() as u64;
    for chunk in std::mem::take(rows).chunks(8192) {
        writer.send(vec![Op::PutHashes(chunk.to_vec())])?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_parse() {
        assert_eq!("off".parse::<HashMode>(), Ok(HashMode::Off));
        assert_eq!("background".parse::<HashMode>(), Ok(HashMode::Background));
        assert!(
            "sometimes"
                .parse::<HashMode>()
                .unwrap_err()
                .contains("on-demand")
        );
    }

    #[test]
    fn reclaimable_counts_copies_beyond_one() {
        let g = Group {
            size: 100,
            hash: [0; 32],
            copies: vec![
                Copy {
                    paths: vec![b"/a".to_vec()],
                    allocated: 4096,
                },
                Copy {
                    paths: vec![b"/b".to_vec(), b"/b2".to_vec()],
                    allocated: 4096,
                },
                Copy {
                    paths: vec![b"/c".to_vec()],
                    allocated: 0,
                },
            ],
        };
        assert_eq!(g.reclaimable(), 200);
        assert_eq!(g.reclaimable_allocated(), 4096);
    }

    #[test]
    fn racy_hashes_are_not_trusted() {
        let c = Cand {
            dev: 1,
            ino: 2,
            size: 10,
            allocated: 0,
            nlink: 1,
            links: vec![],
            path: PathBuf::new(),
            state: None,
            cached: None,
            partial: None,
            full: None,
        };
        let s = State {
            mtime_ns: 1_000,
            ctime_ns: 5_000,
        };
        let row = |hashed_ns| HashRow {
            dev: 1,
            ino: 2,
            size: 10,
            mtime_ns: 1_000,
            ctime_ns: 5_000,
            partial: None,
            full: None,
            hashed_ns,
        };
        assert!(!trusted(&row(5_000 + RACY_NS - 1), &c, s));
        assert!(trusted(&row(5_000 + RACY_NS), &c, s));
        let moved = State {
            mtime_ns: 1_000,
            ctime_ns: 6_000,
        };
        assert!(!trusted(&row(i64::MAX), &c, moved));
    }
}
