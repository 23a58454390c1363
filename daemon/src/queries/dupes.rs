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
//!
//! This module answers from the index and from what it is handed: the
//! candidates ([`candidates`]), whether a cached hash may stand for a file
//! in the state the engine found it in ([`trusted`]), which partial hashes
//! narrow the search ([`shared_partials`]) and the groups the full hashes
//! make ([`finish`]). Reading files, `lstat`s and hashing are the engine's
//! (`engine/hashing.rs`), which runs the stages in that order.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::RwLock;
use std::sync::atomic::AtomicU64;

use rusqlite::Connection;

use crate::Error;
pub use crate::config::HashMode;
use crate::index::Snapshot;
use crate::platform::fs::Stat;
use crate::store::entries::{self, SizedFile};
use crate::store::{HashRow, Kind, hashes};

/// A hash taken less than this long after the file's last change (mtime or
/// ctime) is used for the answer at hand but not trusted by later runs.
pub const RACY_NS: i64 = 2_000_000_000;
/// Partial hashes are stored truncated to this many bytes.
pub const PARTIAL_LEN: usize = 16;
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
    pub path: PathBuf,
    pub dev: u64,
    pub ino: u64,
    pub size: u64,
    pub state: State,
}

impl Pinned {
    /// True when `m`, the file's `lstat` now, shows the state it was
    /// hashed in.
    pub fn holds(&self, m: &Stat) -> bool {
        state_if(m, self.dev, self.ino, self.size) == Some(self.state)
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
pub struct Cand {
    pub dev: u64,
    pub ino: u64,
    pub size: u64,
    pub allocated: u64,
    pub nlink: u64,
    /// Entry ids of every indexed path to this inode.
    pub links: Vec<u32>,
    /// Absolute path used to read it.
    pub path: PathBuf,
    /// Its state now (from lstat), when it still is what the index says.
    pub state: Option<State>,
    pub cached: Option<HashRow>,
    pub partial: Option<[u8; PARTIAL_LEN]>,
    pub full: Option<[u8; 32]>,
}

/// What a file's `lstat` says of its last change: a cached hash stands
/// only for the state it was computed in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct State {
    pub mtime_ns: i64,
    pub ctime_ns: i64,
}

/// The file's state, when it is still the regular file (dev, ino, size)
/// that was indexed; `None` when anything of that differs.
pub fn state_if(m: &Stat, dev: u64, ino: u64, size: u64) -> Option<State> {
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

/// True when a cached row may be used for a file in `state`.
pub fn trusted(row: &HashRow, c: &Cand, state: State) -> bool {
    row.size == c.size
        && row.mtime_ns == state.mtime_ns
        && row.ctime_ns == state.ctime_ns
        && row.hashed_ns >= state.mtime_ns.max(state.ctime_ns) + RACY_NS
}

/// Every file (inode) under `req`'s scope that shares its size with
/// another one, from the index alone: each with every indexed path to it
/// (the first, sorted, is the one to read) and its cached hash row, if
/// any. Roots hashed `off` are left out and named in `report`, which also
/// gets the count. `mark` is told as each step ends (for the debug log of
/// the stages' times).
pub fn candidates(
    conn: &Connection,
    snapshot: &RwLock<Snapshot>,
    roots: &[RootMode],
    req: &Request,
    report: &mut Report,
    mark: &mut dyn FnMut(&'static str),
) -> Result<(Vec<Cand>, Paths), Error> {
    let min = if req.include_empty {
        req.min_size
    } else {
        req.min_size.max(1)
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
    let snap = crate::index::read_loaded(snapshot);
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
    let mut paths_of: Paths = HashMap::new();
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
    Ok((cands, paths_of))
}

/// Every indexed path of each candidate inode, sorted, by (dev, ino).
pub type Paths = HashMap<(u64, u64), Vec<Vec<u8>>>;

/// Keeps the files whose (size, partial hash) another file shares; the
/// others have no duplicate.
pub fn shared_partials(big: &mut Vec<Cand>) {
    let mut per_partial: HashMap<(u64, [u8; PARTIAL_LEN]), u32> = HashMap::new();
    for c in big.iter() {
        if let Some(p) = c.partial {
            *per_partial.entry((c.size, p)).or_default() += 1;
        }
    }
    big.retain(|c| {
        c.partial
            .is_some_and(|p| per_partial.get(&(c.size, p)).is_some_and(|&n| n > 1))
    });
}

/// The answer, from the candidates with their full hashes: groups of equal
/// (size, full hash) with two or more inodes, largest reclaimable first;
/// the group members with links outside the index; the unreadable paths
/// sorted, the first listed.
pub fn finish(report: &mut Report, rest: Vec<Cand>, mut paths_of: Paths) {
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
    report.groups = groups;
    report.unreadable_paths.sort();
    report.unreadable_paths.truncate(LIST_MAX);
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
