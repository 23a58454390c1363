//! Search: an in-memory name index beside SQLite, and query execution.
//!
//! Why in memory: a term matches when it is a substring of the entry's path
//! relative to its root, so an entry matches through its own name or through
//! any folder above it. Resolving that in SQL means enumerating whole
//! subtrees per term. Here, folded names live in one contiguous arena that a
//! SIMD substring search (`memchr::memmem`) scans in a few milliseconds, and
//! one forward pass over the parent array spreads matches down the tree
//! (ids are allocated in walk order, so a folder's id is smaller than its
//! children's). SQLite stays the source of truth: the [`Snapshot`] is loaded
//! from it and replaced after every scan that changed something.

use std::cmp::Reverse;
use std::collections::HashMap;
use std::sync::{RwLock, RwLockReadGuard};

use memchr::memmem;
use rusqlite::Connection;

use std::borrow::Cow;

use crate::queries::fold::fold_bytes;
use crate::queries::fsmap::{MAX_KEYED_EXT, MulHasher, ext_key};
use crate::queries::query::{Item, KIND_BY_WHOLE_NAME, KindClass, Query, kind_of};
use crate::queries::slots::{Offsets, Parents, Slots};
use crate::store::{Change, EntryRow, Kind};
use crate::{Error, RwLockOk};
use std::hash::BuildHasherDefault;

const NO_PARENT: u32 = u32::MAX;
/// `kind` of an id that has no entry (deleted rows leave holes).
const HOLE: u8 = u8::MAX;
/// Separates names in the folded arena. It cannot occur in a file name, so a
/// term without `/` never matches across two names.
const SEP: u8 = b'/';
/// `orig_at` value for a name blanked since it was given a slot.
const SAME: u32 = u32::MAX;
/// Entries per block of the trigram filter (see [`Snapshot::grams`]).
const GRAM_BLOCK: usize = 64;
/// log2 of the bits per block in the trigram filter: 2,048 bits for 64
/// names (4 bytes an entry). At 1,024 a block's set was half full, and a
/// rare word (`zanzibar`) still passed 8% of the blocks; at 2,048 it is 30%
/// full, and 0.24% pass (`benches/gram-fill.py` on the 1M bench tree).
const GRAM_BITS_LOG2: u32 = 11;
/// 64-bit words per block's trigram set.
const GRAM_WORDS: usize = (1 << GRAM_BITS_LOG2) / 64;

/// The trigram filter: per block of [`GRAM_BLOCK`] ids, a hashed set of
/// the trigrams of its names (bit `gram_bit(a, b, c)` set when some name
/// in the block holds the bytes `abc`). Stored by word, `cols[w][b]` being
/// word w of block b's set, so that testing a term's first word against
/// every block reads one column in order; stored by block, the test was a
/// cache miss per block (a 256-byte stride), 0.2 ms of a search that
/// matches nothing at a million entries.
#[derive(Default)]
struct Grams {
    cols: Vec<Vec<u64>>,
    blocks: usize,
}

impl Grams {
    fn with_blocks(blocks: usize) -> Self {
        Grams {
            cols: vec![vec![0; blocks]; GRAM_WORDS],
            blocks,
        }
    }

    fn len(&self) -> usize {
        self.blocks
    }

    /// Adds the trigrams of `names` to block `b` (names each followed by
    /// [`SEP`], which no term holds, so trigrams across names are left
    /// out), and each name's last two bytes with the SEP after them, for
    /// [`Snapshot::mark_tail`]: `ai/` for an `ext:ai` that `.ai` alone
    /// would let through a third of the blocks.
    fn add(&mut self, b: usize, names: &[u8]) {
        if b >= self.blocks {
            if self.cols.is_empty() {
                self.cols = vec![Vec::new(); GRAM_WORDS];
            }
            for c in &mut self.cols {
                c.resize(b + 1, 0);
            }
            self.blocks = b + 1;
        }
        for w in names.windows(3) {
            if w[0] != SEP && w[1] != SEP {
                let bit = gram_bit(w[0], w[1], w[2]);
                self.cols[bit / 64][b] |= 1 << (bit % 64);
            }
        }
    }

    /// The blocks holding every trigram of `term` (3+ bytes, with no
    /// [`SEP`] but maybe one at its end), ascending.
    fn candidates(&self, term: &[u8]) -> Vec<u32> {
        if self.blocks == 0 {
            return Vec::new();
        }
        let mut bits: Vec<(usize, u64)> = Vec::new();
        for w in term.windows(3) {
            let bit = gram_bit(w[0], w[1], w[2]);
            match bits.iter_mut().find(|(word, _)| *word == bit / 64) {
                Some((_, m)) => *m |= 1 << (bit % 64),
                None => bits.push((bit / 64, 1 << (bit % 64))),
            }
        }
        // The word with most bits first: it passes fewest blocks.
        bits.sort_by_key(|&(_, m)| std::cmp::Reverse(m.count_ones()));
        let Some(&(w0, m0)) = bits.first() else {
            return (0..self.blocks as u32).collect();
        };
        let mut out: Vec<u32> = self.cols[w0]
            .iter()
            .enumerate()
            .filter(|&(_, &x)| x & m0 == m0)
            .map(|(b, _)| b as u32)
            .collect();
        for &(w, m) in &bits[1..] {
            let col = &self.cols[w];
            out.retain(|&b| col[b as usize] & m == m);
        }
        out
    }

    fn bytes(&self) -> usize {
        self.cols.iter().map(|c| c.capacity() * 8).sum()
    }

    fn shrink_to_fit(&mut self) {
        for c in &mut self.cols {
            c.shrink_to_fit();
        }
    }
}

/// What happened to an entry, for subscribers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChangeKind {
    Created,
    Modified,
    /// The entry and its whole subtree.
    Deleted,
    Renamed,
}

/// One applied change, in paths.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChangeEvent {
    pub kind: ChangeKind,
    pub path: Vec<u8>,
    /// The old path of a rename.
    pub from: Vec<u8>,
    pub entry: Kind,
}

/// How results are ordered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sort {
    Relevance,
    Name,
    Path,
    Size,
    Mtime,
}

/// One search result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Found {
    pub id: u32,
    pub path: Vec<u8>,
    pub name: Vec<u8>,
    pub kind: Kind,
    pub size: u64,
    pub mtime_ns: i64,
}

/// Header bit of an original name kept as case runs (see [`push_orig`]).
const RUNS: u16 = 0x8000;

/// Appends entry's original name to `orig`, after a u16 header. A name
/// that differs from its folded form only in ASCII capitals (`README.md`,
/// `IMG_0042.JPG`, `Café`) is kept as the runs of capitals over the folded
/// bytes: (bytes to skip, bytes to capitalise) pairs of u8, header
/// `RUNS | pair bytes`. Any other is kept whole, header its length (up to
/// 32,767). On the bench tree a quarter of the names differ, nearly all
/// in case only: 4.6 MiB whole, 1.2 MiB as runs.
fn push_orig(orig: &mut Vec<u8>, name: &[u8], folded: &[u8]) {
    if name.len() == folded.len() && name.to_ascii_lowercase() == folded {
        let start = orig.len();
        orig.extend_from_slice(&[0, 0]);
        let mut k = 0;
        while k < name.len() {
            let skip = name[k..]
                .iter()
                .position(|b| b.is_ascii_uppercase())
                .unwrap_or(name.len() - k);
            k += skip;
            let caps = name[k..]
                .iter()
                .take_while(|b| b.is_ascii_uppercase())
                .count();
            k += caps;
            let (mut skip, mut caps) = (skip, caps);
            while skip > 255 {
                orig.extend_from_slice(&[255, 0]);
                skip -= 255;
            }
            if caps == 0 {
                break;
            }
            orig.extend_from_slice(&[skip as u8, caps.min(255) as u8]);
            caps -= caps.min(255);
            while caps > 0 {
                orig.extend_from_slice(&[0, caps.min(255) as u8]);
                caps -= caps.min(255);
            }
        }
        let pairs = orig.len() - start - 2;
        if pairs < name.len() && pairs < RUNS as usize {
            orig[start..start + 2].copy_from_slice(&(RUNS | pairs as u16).to_le_bytes());
            return;
        }
        orig.truncate(start);
    }
    let len = name.len().min(RUNS as usize - 1);
    orig.extend_from_slice(&(len as u16).to_le_bytes());
    orig.extend_from_slice(&name[..len]);
}

/// Where an entry's original name is.
enum Orig<'a> {
    /// Equal to the folded name.
    Same,
    Whole(&'a [u8]),
    /// The folded name with these capitals (see [`push_orig`]).
    Runs(&'a [u8]),
}

/// Capitalises the runs (pairs of bytes to skip, bytes to capitalise) of
/// a folded name, giving back the original.
fn capitalise(name: &mut [u8], runs: &[u8]) {
    let mut k = 0;
    for pair in runs.chunks_exact(2) {
        k += pair[0] as usize;
        let end = (k + pair[1] as usize).min(name.len());
        name[k.min(end)..end].make_ascii_uppercase();
        k = end;
    }
}

/// The `size` slot of an entry of 4 GiB or more (the size is in `big`):
/// 4 bytes an entry instead of 8.
const BIG: u32 = u32::MAX;

/// A relocated name: (folded, original).
type Relocated = (Box<[u8]>, Box<[u8]>);

/// A searchable copy of the entry tree, kept equal to the index by the
/// writer (loaded before its first commit, then given every commit).
pub struct Snapshot {
    parent: Parents,
    kind: Vec<u8>,
    /// Sizes below 4 GiB; [`BIG`] for the rest, which are in `big`.
    size: Vec<u32>,
    big: HashMap<u32, u64>,
    mtime: Vec<i64>,
    /// Entry i's kind for `kind:` by its name, in half a byte
    /// (`classes[i / 2] >> (i % 2 * 4)`): 0 for none, else 1 + its
    /// [`KindClass`]. Kept for every name, used for all but folders
    /// (whose kind is their own): `kind:image` reads half a byte an entry
    /// instead of each name (first 100 of 1M entries: 24.2 -> 12.1 ms p50).
    classes: Vec<u8>,
    /// `folded[fold_at(i)..fold_at(i + 1) - 1]` is entry i's folded name;
    /// each name is followed by [`SEP`]. Roots' own folders have empty names:
    /// matching is on the path relative to the root.
    fold_at: Offsets,
    folded: Vec<u8>,
    /// The entries whose original name differs from the folded one (a
    /// quarter of them on the bench tree), each with a slot in `orig_at`:
    /// the offset into `orig` of a u16 length and the original bytes, or
    /// [`SAME`] once blanked.
    origs: Slots,
    orig_at: Vec<u32>,
    orig: Vec<u8>,
    entries: usize,
    /// Names that no longer sit at their id's place in the arena (an entry
    /// renamed, or an id below the arena's end given a name): folded and
    /// original. Compacted back into the arena when it grows.
    relocated: HashMap<u32, Relocated>,
    /// Arena bytes of removed or relocated names.
    garbage: usize,
    /// A pre-filter over the arena: per block of [`GRAM_BLOCK`] ids, a
    /// hashed set of the trigrams of its names. A term of 3+ bytes is only
    /// searched for in blocks holding all of its trigrams, so a rare term
    /// or one that matches nothing skips nearly all of the arena. It only
    /// ever gains bits (a removed name leaves its own: a false positive
    /// costs a scan, never a wrong answer) and is rebuilt by `compact`.
    grams: Grams,
    /// Folders (and any entry given children), each with a slot in `hi`
    /// and `depth`; other entries have no descendants and are one deeper
    /// than their parent. 6 bytes a folder instead of 6 an entry.
    dirs: Slots,
    /// `hi[slot of i]`: no descendant of entry i has an id above it. Lets a
    /// term that marks few entries spread to their subtrees without a pass
    /// over every entry. Meaningful while `ordered`.
    hi: Vec<u32>,
    /// `depth[slot of i]`: entry i's number of ancestors (saturating).
    depth: Vec<u16>,
    /// Every entry's id is above its parent's (true after a walk; a move
    /// under a folder with a higher id clears it until the next load).
    ordered: bool,
    /// Holds the index (loaded from it, or marked so when loading failed):
    /// until then it is empty, and no answer may be taken from it.
    loaded: bool,
    /// Changes whenever a folder is added, removed, renamed or moved (or
    /// the snapshot is loaded afresh); never goes back, across snapshots.
    layout: u64,
}

/// The last [`Snapshot::layout`] handed out.
static LAYOUT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

fn next_layout() -> u64 {
    LAYOUT.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1
}

impl Default for Snapshot {
    fn default() -> Self {
        Snapshot {
            parent: Parents::default(),
            kind: Vec::new(),
            size: Vec::new(),
            big: HashMap::new(),
            mtime: Vec::new(),
            classes: Vec::new(),
            fold_at: {
                let mut at = Offsets::default();
                at.push(0);
                at
            },
            folded: Vec::new(),
            origs: Slots::default(),
            orig_at: Vec::new(),
            orig: Vec::new(),
            entries: 0,
            relocated: HashMap::new(),
            garbage: 0,
            grams: Grams::default(),
            dirs: Slots::default(),
            hi: Vec::new(),
            depth: Vec::new(),
            ordered: true,
            loaded: false,
            layout: next_layout(),
        }
    }
}

/// The snapshot for reading, once it holds the index: at start-up the writer
/// loads it while the restart scan runs, and a small tree's scan can finish
/// first.
pub fn read_loaded(lock: &RwLock<Snapshot>) -> RwLockReadGuard<'_, Snapshot> {
    loop {
        let s = lock.read_ok();
        if s.loaded {
            return s;
        }
        drop(s);
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
}

impl std::fmt::Debug for Snapshot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Snapshot")
            .field("entries", &self.entries)
            .finish()
    }
}

impl Snapshot {
    /// Loads every entry from the index.
    pub fn load(conn: &Connection) -> Result<Snapshot, Error> {
        let max_id: i64 =
            conn.query_row("SELECT COALESCE(MAX(id), 0) FROM entries", [], |r| r.get(0))?;
        let count: i64 = conn.query_row("SELECT COUNT(*) FROM entries", [], |r| r.get(0))?;
        let n = usize::try_from(max_id).unwrap_or(0) + 1;
        if n >= NO_PARENT as usize {
            return Err(Error::InvalidArgument(
                "index ids exceed 2^32; rebuild the index".into(),
            ));
        }
        let mut s = Snapshot {
            parent: Parents::filled(n),
            kind: vec![HOLE; n],
            size: vec![0; n],
            big: HashMap::new(),
            mtime: vec![0; n],
            classes: vec![0; n.div_ceil(2)],
            fold_at: Offsets::with_capacity(n + 1),
            folded: Vec::with_capacity(count as usize * 16),
            origs: Slots::default(),
            orig_at: Vec::new(),
            orig: Vec::new(),
            entries: count as usize,
            relocated: HashMap::new(),
            garbage: 0,
            grams: Grams::default(),
            dirs: Slots::default(),
            hi: Vec::new(),
            depth: Vec::new(),
            ordered: true,
            loaded: false,
            layout: next_layout(),
        };
        let mut stmt = conn
            .prepare("SELECT id, parent_id, name, kind, size, mtime_ns FROM entries ORDER BY id")?;
        let mut rows = stmt.query([])?;
        let mut next = 0usize;
        while let Some(r) = rows.next()? {
            let id = r.get::<_, i64>(0)? as usize;
            while next < id {
                s.fold_at.push(s.folded.len() as u32);
                s.folded.push(SEP);
                s.origs.push(false);
                s.dirs.push(false);
                next += 1;
            }
            let parent: Option<i64> = r.get(1)?;
            let name = r.get_ref(2)?.as_blob().map_err(rusqlite::Error::from)?;
            s.kind[id] = r.get::<_, i64>(3)? as u8;
            s.set_size(id, r.get::<_, i64>(4)? as u64);
            s.mtime[id] = r.get(5)?;
            s.fold_at.push(s.folded.len() as u32);
            // A root's own folder's stored name is its absolute path, kept
            // whole; its folded name is empty.
            let folded = match parent {
                Some(p) => {
                    s.parent.set(id, p as u32);
                    fold_bytes(name)
                }
                None => std::borrow::Cow::Borrowed(&b""[..]),
            };
            s.folded.extend_from_slice(&folded);
            s.set_class(id, &folded);
            if *folded != *name {
                s.origs.push(true);
                s.orig_at.push(s.orig.len() as u32);
                push_orig(&mut s.orig, name, &folded);
            } else {
                s.origs.push(false);
            }
            if s.dirs.push(s.kind[id] == Kind::Dir as u8).is_some() {
                s.hi.push(id as u32);
                s.depth.push(0);
            }
            s.folded.push(SEP);
            next = id + 1;
        }
        while next < n {
            s.fold_at.push(s.folded.len() as u32);
            s.folded.push(SEP);
            s.origs.push(false);
            s.dirs.push(false);
            next += 1;
        }
        s.fold_at.push(s.folded.len() as u32);
        // Walked from each folder to its root: the parents may not be
        // loaded first (ids out of order after moves).
        for i in 0..n {
            if let Some(slot) = s.dirs.get(i) {
                let mut d = 0u16;
                let mut a = s.parent.get(i);
                while a != NO_PARENT {
                    d = d.saturating_add(1);
                    a = s.parent.get(a as usize);
                }
                s.depth[slot] = d;
            }
        }
        s.folded.shrink_to_fit();
        s.orig.shrink_to_fit();
        s.build_grams();
        s.build_hi();
        s.loaded = true;
        Ok(s)
    }

    pub fn is_loaded(&self) -> bool {
        self.loaded
    }

    /// Loading failed: the snapshot stays empty, and is answered from as is
    /// (the failure is logged) rather than waited for forever.
    pub fn mark_loaded(&mut self) {
        self.loaded = true;
    }

    /// Gives back the room its vectors grew into (growth doubles them): an
    /// initial index of a million entries leaves a third of it unused.
    pub fn shrink(&mut self) {
        // Names that a scan committed out of id order sit in the side
        // table, each in its own allocations (four times the bytes): fold
        // them back into the arena when they are more than one entry in 64
        // (a rename now and then is not worth a pass over every name).
        if self.relocated.len() > self.parent.len() / 64 || self.garbage > self.folded.len() / 8 {
            self.compact();
        }
        self.parent.shrink_to_fit();
        self.kind.shrink_to_fit();
        self.size.shrink_to_fit();
        self.big.shrink_to_fit();
        self.mtime.shrink_to_fit();
        self.classes.shrink_to_fit();
        self.fold_at.shrink_to_fit();
        self.folded.shrink_to_fit();
        self.origs.shrink_to_fit();
        self.orig_at.shrink_to_fit();
        self.orig.shrink_to_fit();
        self.relocated.shrink_to_fit();
        self.grams.shrink_to_fit();
        self.dirs.shrink_to_fit();
        self.hi.shrink_to_fit();
        self.depth.shrink_to_fit();
    }

    /// Rebuilds the trigram filter from the arena.
    fn build_grams(&mut self) {
        let n = self.parent.len();
        let blocks = n.div_ceil(GRAM_BLOCK);
        let mut grams = Grams::with_blocks(blocks);
        for b in 0..blocks {
            let (from, to) = (b * GRAM_BLOCK, ((b + 1) * GRAM_BLOCK).min(n));
            grams.add(
                b,
                &self.folded[self.fold_at.get(from)..self.fold_at.get(to)],
            );
        }
        self.grams = grams;
    }

    /// Recomputes `hi` and `ordered` from the parent array.
    fn build_hi(&mut self) {
        let n = self.parent.len();
        // `hi_of` takes the larger of this and the id itself.
        self.hi.fill(0);
        let mut ordered = true;
        for i in (0..n).rev() {
            let p = self.parent.get(i);
            if p == NO_PARENT {
                continue;
            }
            if p as usize >= i {
                ordered = false;
                continue;
            }
            let top = self.hi_of(i as u32);
            if self.hi_of(p) < top {
                let slot = self.dir_slot(p);
                self.hi[slot] = top;
            }
        }
        self.ordered = ordered;
    }

    /// No descendant of entry i has an id above this (while `ordered`).
    #[inline]
    fn hi_of(&self, i: u32) -> u32 {
        match self.dirs.get(i as usize) {
            Some(slot) => self.hi[slot].max(i),
            None => i,
        }
    }

    /// Entry i's slot in `hi` and `depth`, given one if it has none (an
    /// entry that was not a folder when it came).
    fn dir_slot(&mut self, i: u32) -> usize {
        if let Some(slot) = self.dirs.get(i as usize) {
            return slot;
        }
        let depth = self.depth_from_parent(i);
        let slot = self.dirs.insert(i as usize);
        self.hi.insert(slot, i);
        self.depth.insert(slot, depth);
        slot
    }

    /// Entry `i` (with descendants up to `top`) now sits under `parent`:
    /// widens the ancestors' `hi`, or clears `ordered`.
    fn attach(&mut self, i: u32, parent: u32, top: u32) {
        if parent == NO_PARENT || !self.ordered {
            return;
        }
        if parent >= i {
            self.ordered = false;
            return;
        }
        let mut a = parent;
        // Ancestors have lower ids while ordered, so this ends; and an
        // ancestor's `hi` is at least its children's, so it can stop early.
        while a != NO_PARENT && self.hi_of(a) < top {
            let slot = self.dir_slot(a);
            self.hi[slot] = top;
            a = self.parent.get(a as usize);
        }
    }

    /// Entry i's number of ancestors: kept for folders, one more than the
    /// parent's for the rest.
    fn depth_of(&self, mut i: u32) -> u16 {
        let mut d = 0u16;
        loop {
            if let Some(slot) = self.dirs.get(i as usize) {
                return self.depth[slot].saturating_add(d);
            }
            match self.parent.get(i as usize) {
                NO_PARENT => return d,
                p => {
                    d = d.saturating_add(1);
                    i = p;
                }
            }
        }
    }

    /// Entry i's depth from its parent's, ignoring what i itself keeps.
    fn depth_from_parent(&self, i: u32) -> u16 {
        match self.parent.get(i as usize) {
            NO_PARENT => 0,
            p => self.depth_of(p).saturating_add(1),
        }
    }

    /// Sets a folder's kept depth after it moved (others derive theirs).
    fn refresh_depth(&mut self, i: u32) {
        if let Some(slot) = self.dirs.get(i as usize) {
            self.depth[slot] = self.depth_from_parent(i);
        }
    }

    /// Number of entries (roots' own folders included).
    pub fn len(&self) -> usize {
        self.entries
    }

    pub fn is_empty(&self) -> bool {
        self.entries == 0
    }

    /// Memory held by this snapshot, for status and benchmarks.
    pub fn heap_bytes(&self) -> usize {
        self.parent.bytes()
            + self.kind.capacity()
            + self.size.capacity() * 4
            + self.big.capacity() * (std::mem::size_of::<(u32, u64)>() + 1)
            + self.mtime.capacity() * 8
            + self.classes.capacity()
            + self.fold_at.bytes()
            + self.folded.capacity()
            + self.origs.bytes()
            + self.orig_at.capacity() * 4
            + self.orig.capacity()
            + self.grams.bytes()
            + self.dirs.bytes()
            + self.hi.capacity() * 4
            + self.depth.capacity() * 2
            + self.relocated.capacity() * (std::mem::size_of::<(u32, Relocated)>() + 1)
            + self
                .relocated
                .values()
                .map(|(a, b)| a.len() + b.len())
                .sum::<usize>()
    }

    #[inline]
    fn folded_name(&self, i: usize) -> &[u8] {
        if !self.relocated.is_empty()
            && let Some((folded, _)) = self.relocated.get(&(i as u32))
        {
            return folded;
        }
        let (start, end) = self.fold_at.span(i);
        &self.folded[start..end - 1]
    }

    /// Entry i's original name: borrowed, or rebuilt from its case runs.
    fn name(&self, i: usize) -> Cow<'_, [u8]> {
        match self.orig_of(i) {
            Orig::Same => Cow::Borrowed(self.folded_name(i)),
            Orig::Whole(name) => Cow::Borrowed(name),
            Orig::Runs(runs) => {
                let mut out = self.folded_name(i).to_vec();
                capitalise(&mut out, runs);
                Cow::Owned(out)
            }
        }
    }

    /// Appends entry i's original name to `out`.
    fn push_name_to(&self, i: usize, out: &mut Vec<u8>) {
        match self.orig_of(i) {
            Orig::Same => out.extend_from_slice(self.folded_name(i)),
            Orig::Whole(name) => out.extend_from_slice(name),
            Orig::Runs(runs) => {
                let at = out.len();
                out.extend_from_slice(self.folded_name(i));
                capitalise(&mut out[at..], runs);
            }
        }
    }

    #[inline]
    fn orig_of(&self, i: usize) -> Orig<'_> {
        if !self.relocated.is_empty()
            && let Some((_, orig)) = self.relocated.get(&(i as u32))
        {
            return Orig::Whole(orig);
        }
        match self.origs.get(i).map(|slot| self.orig_at[slot]) {
            None | Some(SAME) => Orig::Same,
            Some(at) => {
                let at = at as usize;
                let head = u16::from_le_bytes([self.orig[at], self.orig[at + 1]]);
                let len = (head & !RUNS) as usize;
                let bytes = &self.orig[at + 2..at + 2 + len];
                if head & RUNS != 0 {
                    Orig::Runs(bytes)
                } else {
                    Orig::Whole(bytes)
                }
            }
        }
    }

    /// Applies committed changes; with `events`, also says what changed in
    /// paths (for subscribers).
    pub fn apply(&mut self, changes: Vec<Change>, mut events: Option<&mut Vec<ChangeEvent>>) {
        for change in changes {
            match change {
                Change::Upsert(row) => {
                    let (i, kind) = (row.id as u32, row.kind);
                    let created = (i as usize) >= self.kind.len() || self.kind[i as usize] == HOLE;
                    let was_dir = !created && self.kind[i as usize] == Kind::Dir as u8;
                    if (kind == Kind::Dir || was_dir)
                        && (created
                            || self.kind[i as usize] != kind as u8
                            || self.parent.get(i as usize)
                                != row.parent_id.map_or(NO_PARENT, |p| p as u32)
                            || self.name(i as usize) != row.name.as_slice())
                    {
                        self.layout = next_layout();
                    }
                    self.upsert(row);
                    if let Some(ev) = events.as_deref_mut() {
                        let what = if created {
                            ChangeKind::Created
                        } else {
                            ChangeKind::Modified
                        };
                        ev.push(ChangeEvent {
                            kind: what,
                            path: self.path(i),
                            from: Vec::new(),
                            entry: kind,
                        });
                    }
                }
                Change::Removed(ids) => {
                    if ids
                        .iter()
                        .any(|&id| self.kind.get(id as usize) == Some(&(Kind::Dir as u8)))
                    {
                        self.layout = next_layout();
                    }
                    if let Some(ev) = events.as_deref_mut() {
                        // One event per removed subtree: its top.
                        let set: std::collections::HashSet<i64> = ids.iter().copied().collect();
                        for &id in &ids {
                            let i = id as usize;
                            if i < self.kind.len()
                                && self.kind[i] != HOLE
                                && !set.contains(&(self.parent.get(i) as i64))
                            {
                                let entry = Kind::from_i64(self.kind[i] as i64);
                                let path = self.path(id as u32);
                                ev.push(ChangeEvent {
                                    kind: ChangeKind::Deleted,
                                    path,
                                    from: Vec::new(),
                                    entry,
                                });
                            }
                        }
                    }
                    for id in ids {
                        self.remove(id as usize);
                    }
                }
                Change::Moved {
                    id,
                    parent_id,
                    name,
                    subtree,
                } => {
                    let i = id as usize;
                    if i >= self.kind.len() || self.kind[i] == HOLE {
                        continue;
                    }
                    if self.kind[i] == Kind::Dir as u8 {
                        self.layout = next_layout();
                    }
                    let from = if events.is_some() {
                        self.path(id as u32)
                    } else {
                        Vec::new()
                    };
                    let folded = fold_bytes(&name).into_owned();
                    self.blank(i);
                    self.set_class(i, &folded);
                    self.parent.set(i, parent_id as u32);
                    self.attach(i as u32, parent_id as u32, self.hi_of(i as u32));
                    self.relocated.insert(
                        i as u32,
                        (folded.into_boxed_slice(), name.into_boxed_slice()),
                    );
                    self.refresh_depth(i as u32);
                    // Parents come before children in `subtree`.
                    for d in subtree {
                        if (d as usize) < self.parent.len() {
                            self.refresh_depth(d as u32);
                        }
                    }
                    if let Some(ev) = events.as_deref_mut() {
                        let entry = Kind::from_i64(self.kind[i] as i64);
                        ev.push(ChangeEvent {
                            kind: ChangeKind::Renamed,
                            path: self.path(id as u32),
                            from,
                            entry,
                        });
                    }
                }
            }
        }
        if self.garbage > (1 << 20) && self.garbage > self.folded.len() / 2 {
            self.compact();
        }
    }

    fn upsert(&mut self, row: EntryRow) {
        let i = row.id as usize;
        let parent = row.parent_id.map_or(NO_PARENT, |p| p as u32);
        let folded: Vec<u8> = if parent == NO_PARENT {
            Vec::new()
        } else {
            fold_bytes(&row.name).into_owned()
        };
        if i >= self.parent.len() {
            while self.parent.len() < i {
                self.push(NO_PARENT, HOLE, 0, 0, &[], &[]);
            }
            self.push(
                parent,
                row.kind as u8,
                row.size,
                row.mtime_ns,
                &folded,
                &row.name,
            );
            self.entries += 1;
            return;
        }
        let same_place = self.kind[i] != HOLE
            && self.parent.get(i) == parent
            && self.name(i) == row.name.as_slice();
        if !same_place {
            // A new name for an existing id: it moves to the side table.
            if self.kind[i] == HOLE {
                self.entries += 1;
            }
            self.blank(i);
            self.set_class(i, &folded);
            self.parent.set(i, parent);
            self.attach(i as u32, parent, self.hi_of(i as u32));
            self.relocated.insert(
                i as u32,
                (folded.into_boxed_slice(), row.name.into_boxed_slice()),
            );
            self.refresh_depth(i as u32);
        }
        if row.kind == Kind::Dir {
            self.dir_slot(i as u32);
        }
        self.kind[i] = row.kind as u8;
        self.set_size(i, row.size);
        self.mtime[i] = row.mtime_ns;
    }

    /// Appends the entry whose id is the current length.
    fn push(&mut self, parent: u32, kind: u8, size: u64, mtime: i64, folded: &[u8], orig: &[u8]) {
        let i = self.parent.len() as u32;
        self.parent.push(parent);
        self.kind.push(kind);
        self.size.push(0);
        self.set_size(i as usize, size);
        self.mtime.push(mtime);
        self.set_class(i as usize, folded);
        if self.dirs.push(kind == Kind::Dir as u8).is_some() {
            self.hi.push(i);
            self.depth.push(self.depth_from_parent(i));
        }
        let at = self.folded.len();
        self.folded.extend_from_slice(folded);
        self.folded.push(SEP);
        self.fold_at.push(self.folded.len() as u32);
        self.grams.add(i as usize / GRAM_BLOCK, &self.folded[at..]);
        self.attach(i, parent, i);
        if self.origs.push(kind != HOLE && orig != folded).is_some() {
            self.orig_at.push(self.orig.len() as u32);
            push_orig(&mut self.orig, orig, folded);
        }
    }

    fn remove(&mut self, i: usize) {
        if i >= self.kind.len() || self.kind[i] == HOLE {
            return;
        }
        self.kind[i] = HOLE;
        self.entries -= 1;
        self.blank(i);
    }

    /// Makes entry i's arena slot match nothing (a term never contains SEP).
    fn blank(&mut self, i: usize) {
        self.relocated.remove(&(i as u32));
        let (start, end) = (self.fold_at.get(i), self.fold_at.get(i + 1) - 1);
        if self.folded[start..end].iter().any(|&b| b != SEP) {
            self.folded[start..end].fill(SEP);
            self.garbage += end - start;
        }
        if let Some(slot) = self.origs.get(i) {
            self.orig_at[slot] = SAME;
        }
    }

    /// Rebuilds the arenas without removed and relocated names.
    fn compact(&mut self) {
        let n = self.parent.len();
        let mut folded = Vec::with_capacity(self.folded.len() - self.garbage);
        let mut fold_at = Offsets::with_capacity(n + 1);
        let mut orig = Vec::new();
        let mut origs = Slots::default();
        let mut orig_at = Vec::new();
        for i in 0..n {
            fold_at.push(folded.len() as u32);
            let mut differs = false;
            if self.kind[i] != HOLE {
                let f = self.folded_name(i);
                folded.extend_from_slice(f);
                let o = self.name(i);
                if *o != *f {
                    differs = true;
                    orig_at.push(orig.len() as u32);
                    push_orig(&mut orig, &o, f);
                }
            }
            origs.push(differs);
            folded.push(SEP);
        }
        fold_at.push(folded.len() as u32);
        self.folded = folded;
        self.fold_at = fold_at;
        self.orig = orig;
        self.origs = origs;
        self.orig_at = orig_at;
        self.relocated.clear();
        self.garbage = 0;
        self.build_grams();
    }

    /// The absolute path of entry `i`, byte-exact.
    pub fn path(&self, i: u32) -> Vec<u8> {
        let mut chain = Vec::with_capacity(16);
        let mut cur = i;
        loop {
            chain.push(cur);
            match self.parent.get(cur as usize) {
                NO_PARENT => break,
                p => cur = p,
            }
        }
        let mut out = Vec::with_capacity(64);
        for (k, id) in chain.iter().rev().enumerate() {
            // The root's own entry holds its whole path.
            if k > 0 && out.last() != Some(&crate::platform::bytes::SEP) {
                out.push(crate::platform::bytes::SEP);
            }
            self.push_name_to(*id as usize, &mut out);
        }
        out
    }

    /// Runs a query; returns the total number of matches and the first
    /// `limit` (0: all) in the requested order.
    pub fn search(
        &self,
        query: &Query,
        sort: Sort,
        limit: usize,
        reverse: bool,
    ) -> (usize, Vec<Found>) {
        self.search_where(query, sort, limit, reverse, None)
    }

    /// [`search`](Self::search) over the entries `keep` lets through (what
    /// one caller may see): the total counts only those.
    pub fn search_where(
        &self,
        query: &Query,
        sort: Sort,
        limit: usize,
        reverse: bool,
        keep: Keep<'_>,
    ) -> (usize, Vec<Found>) {
        self.search_page(query, sort, 0, limit, reverse, keep)
    }

    /// [`search_where`](Self::search_where) from the `offset`-th result on:
    /// one page of the ordered results. Every order ends on the entry id, so
    /// it is total and consecutive pages of an unchanged snapshot neither
    /// overlap nor leave gaps.
    pub fn search_page(
        &self,
        query: &Query,
        sort: Sort,
        offset: usize,
        limit: usize,
        reverse: bool,
        keep: Keep<'_>,
    ) -> (usize, Vec<Found>) {
        let (total, ids) = self.search_order(query, sort, offset, limit, reverse, keep);
        (total, ids.into_iter().map(|i| self.found(i)).collect())
    }

    /// [`search_page`](Self::search_page) as entry ids, in order: what
    /// [`found`](Self::found) then makes results of (a large answer is
    /// sent while the rest of it is made).
    pub fn search_order(
        &self,
        query: &Query,
        sort: Sort,
        offset: usize,
        limit: usize,
        reverse: bool,
        mut keep: Keep<'_>,
    ) -> (usize, Vec<u32>) {
        let n = self.parent.len();
        // Plain terms are scanned for once: their marks serve both matching
        // and relevance (which terms an entry's own name holds).
        let terms = query.ranking_terms();
        let mut marks = Marks {
            terms: &terms,
            own: Vec::new(),
            found: Vec::new(),
        };
        // Each term's marks, and how well each marked name fits it (for
        // relevance; a term with `/` fits no name).
        let (lists, fits): (Vec<Vec<u32>>, Vec<Vec<u8>>) = terms
            .iter()
            .map(|t| match t.as_bytes() {
                t if t.contains(&SEP) => {
                    let ids = self.mark_term(t);
                    let none = vec![0; ids.len()];
                    (ids, none)
                }
                t => self.mark_name_term_fits(t, true),
            })
            .unzip();
        marks.found = lists.iter().map(Vec::len).collect();
        if lists.iter().any(Vec::is_empty) {
            // A term every result needs is in no name: nothing matches.
            return (0, Vec::new());
        }
        let only_terms = query.groups.len() == terms.len()
            && query
                .groups
                .iter()
                .all(|g| g.len() == 1 && matches!(g[0], Item::Term(_)));
        // The term with fewest marks is spread.
        let rarest = (0..lists.len()).min_by_key(|&t| lists[t].len());
        let hits: Vec<u32> = if let Some(r) = rarest.filter(|_| only_terms && self.ordered) {
            // Spread one term's marks through their subtrees only (a
            // marked file has none), then keep the entries where each
            // other term marks the entry or a folder above it (a common
            // term is not spread through the whole tree: `café jpg`).
            // Cheaper than the passes over every entry below even when
            // most names are marked (`IMG`, 1M entries, first 100: 8.7 ->
            // 4.7 ms p50; it was taken up to n/16 marks).
            let own: Vec<Vec<u64>> = lists.iter().map(|l| self.bitset(l)).collect();
            let mut all = self.spread_sparse(&lists[r], own[r].clone());
            for (t, o) in own.iter().enumerate() {
                if t != r {
                    all = self.narrow(all, o);
                }
            }
            let result =
                |i: usize| has(&all, i) && self.kind[i] != HOLE && self.parent.get(i) != NO_PARENT;
            let want = offset.saturating_add(limit);
            if keep.is_none() && !reverse && limit > 0 && matches!(sort, Sort::Relevance) {
                // Every result is kept: when enough own every term for the
                // page, rank those alone (see below), and count the rest in
                // the bit set without listing them (`ar`: 272,290 results,
                // 55,664 ranked; the first 100 of 1M entries: 9.8-10.3 ->
                // 7.7 ms p50).
                let best = owning_all(&lists, |i| result(i as usize));
                if best.len() >= want {
                    let total = ones(&all).filter(|&i| result(i)).count();
                    let mut page = self.top_ranks(&best, offset, want, false, &lists, &fits);
                    page.truncate(want);
                    page.drain(..offset);
                    return (total, page);
                }
            }
            ones(&all)
                .filter(|&i| self.kind[i] != HOLE && self.parent.get(i) != NO_PARENT)
                .map(|i| i as u32)
                .collect()
        } else {
            if !lists.is_empty() {
                marks.own = vec![0u32; n];
                for (t, l) in lists.iter().enumerate() {
                    for &i in l {
                        marks.own[i as usize] |= 1 << t;
                    }
                }
            }
            let mut matched: Option<Vec<bool>> = None;
            // Groups of filters on an entry's own figures go last, and are
            // then checked only where the others matched (`ext:jpg
            // size:>1mb`: a size check for each .jpg, not for 1M entries).
            let mut groups: Vec<&Vec<Item>> = query.groups.iter().collect();
            // `passes` answers for those filters alone.
            let figures_only = |g: &[Item]| g.iter().all(|item| self.passes(item, 0).is_some());
            groups.sort_by_key(|g| figures_only(g));
            for group in groups {
                if let Some(all) = matched.as_mut()
                    && figures_only(group)
                {
                    for (i, m) in all.iter_mut().enumerate() {
                        *m = *m && group.iter().any(|item| self.passes(item, i) == Some(true));
                    }
                    continue;
                }
                let mut any = vec![false; n];
                for item in group {
                    for (a, m) in any.iter_mut().zip(self.eval(item, &marks)) {
                        *a |= m;
                    }
                }
                matched = Some(match matched {
                    None => any,
                    Some(mut all) => {
                        for (a, m) in all.iter_mut().zip(any) {
                            *a &= m;
                        }
                        all
                    }
                });
            }
            let matched = matched.unwrap_or_default();
            (0..n)
                .filter(|&i| matched[i] && self.kind[i] != HOLE && self.parent.get(i) != NO_PARENT)
                .map(|i| i as u32)
                .collect()
        };
        let mut hits = hits;
        if let Some(keep) = keep.as_mut() {
            hits.retain(|&i| keep(i));
        }
        let total = hits.len();
        let offset = offset.min(total);
        // Order the first offset + limit; return the last `limit` of them.
        let limit = if limit == 0 {
            total
        } else {
            offset.saturating_add(limit).min(total)
        };
        let flip = |o: std::cmp::Ordering| if reverse { o.reverse() } else { o };

        match sort {
            Sort::Relevance
                if !query
                    .groups
                    .iter()
                    .flatten()
                    .any(|item| matches!(item, Item::ContentHits(_))) =>
            {
                // Results whose own names hold every term rank above all
                // others: when there are enough of them for the page, the
                // rest need no key (`ar`: 55,664 own names among 272,290
                // results at 1M entries). Not worth the pass when most
                // results hold them (`IMG`).
                let few = lists.iter().map(Vec::len).min().unwrap_or(usize::MAX);
                let best = (!reverse && few <= hits.len() / 2)
                    .then(|| {
                        let mut h = 0;
                        owning_all(&lists, |i| holds(&hits, &mut h, i))
                    })
                    .filter(|best| best.len() >= limit);
                let ranked = best.as_deref().unwrap_or(&hits);
                hits = self.top_ranks(ranked, offset, limit, reverse, &lists, &fits);
            }
            Sort::Relevance => {
                // `hits` ascend, as the cursor reads them.
                let mut names = NameFits::new(&lists, &fits, 0);
                let mut keyed: Vec<RelevanceKey> = hits
                    .iter()
                    .map(|&i| self.relevance(i, names.of(i), query.content_score(i)))
                    .collect();
                top_k(&mut keyed, offset, limit, |a, b| flip(a.cmp(b)));
                keyed.truncate(limit);
                hits = keyed.into_iter().map(|k| k.6).collect();
            }
            Sort::Name => top_k(&mut hits, offset, limit, |&a, &b| {
                flip(
                    self.folded_name(a as usize)
                        .cmp(self.folded_name(b as usize))
                        .then(a.cmp(&b)),
                )
            }),
            Sort::Path => {
                let mut keyed: Vec<(Vec<u8>, u32)> =
                    hits.iter().map(|&i| (self.path(i), i)).collect();
                top_k(&mut keyed, offset, limit, |a, b| flip(a.cmp(b)));
                hits = keyed.into_iter().map(|(_, i)| i).collect();
            }
            Sort::Size => top_k(&mut hits, offset, limit, |&a, &b| {
                flip(
                    self.size_of(b as usize)
                        .cmp(&self.size_of(a as usize))
                        .then(a.cmp(&b)),
                )
            }),
            Sort::Mtime => top_k(&mut hits, offset, limit, |&a, &b| {
                flip(
                    self.mtime[b as usize]
                        .cmp(&self.mtime[a as usize])
                        .then(a.cmp(&b)),
                )
            }),
        }
        hits.truncate(limit);
        hits.drain(..offset);
        (total, hits)
    }

    /// The result for entry `i`: its path, name and figures.
    pub fn found(&self, i: u32) -> Found {
        Found {
            id: i,
            path: self.path(i),
            name: self.name(i as usize).into_owned(),
            kind: Kind::from_i64(self.kind[i as usize] as i64),
            size: self.size_of(i as usize),
            mtime_ns: self.mtime[i as usize],
        }
    }

    /// Which entries one query item matches (holes and roots' own folders
    /// are dropped by the caller).
    fn eval(&self, item: &Item, marks: &Marks<'_>) -> Vec<bool> {
        let n = self.parent.len();
        let names = |f: &dyn Fn(usize, &str) -> bool| -> Vec<bool> {
            (0..n)
                .map(|i| {
                    self.kind[i] != HOLE && f(i, &String::from_utf8_lossy(self.folded_name(i)))
                })
                .collect()
        };
        match item {
            Item::Term(t) => {
                if let Some(k) = marks.terms.iter().position(|x| x == t) {
                    if marks.found[k] == 0 {
                        return vec![false; n];
                    }
                    return self.spread(&marks.own, 1 << k);
                }
                let ids = self.mark_term(t.as_bytes());
                if ids.is_empty() {
                    return vec![false; n];
                }
                self.spread(&self.dense(&ids), 1)
            }
            Item::CaseTerm(t) => {
                let t = t.as_bytes();
                if t.contains(&SEP) {
                    let ids = self.mark_slash_with(t, |i| self.name(i));
                    return self.spread(&self.dense(&ids), 1);
                }
                let mut own = vec![0u32; n];
                let finder = memmem::Finder::new(t);
                for (i, o) in own.iter_mut().enumerate() {
                    if self.kind[i] != HOLE
                        && self.parent.get(i) != NO_PARENT
                        && finder.find(&self.name(i)).is_some()
                    {
                        *o = 1;
                    }
                }
                self.spread(&own, 1)
            }
            Item::Wildcard(re) => names(&|_, name| re.is_match(name)),
            Item::Regex(re) => (0..n)
                .map(|i| {
                    self.kind[i] != HOLE && re.is_match(&String::from_utf8_lossy(&self.name(i)))
                })
                .collect(),
            Item::Ext(exts) => {
                let has_ext = |name: &[u8], e: &[u8]| {
                    name.len() > e.len() + 1
                        && name.ends_with(e)
                        && name[name.len() - e.len() - 1] == b'.'
                };
                if exts.iter().any(|e| e.contains('\u{fffd}')) {
                    // Matched against the text a name that is not UTF-8
                    // shows, as the rest of the query language does.
                    return names(&|i, name| {
                        self.kind[i] != Kind::Dir as u8
                            && exts.iter().any(|e| has_ext(name.as_bytes(), e.as_bytes()))
                    });
                }
                // On the bytes: for an extension without U+FFFD the same
                // answer as on the shown text (a name's invalid bytes never
                // make or unmake a `.ext` ending).
                let mut m = vec![false; n];
                for e in exts {
                    let tail = [b".", e.as_bytes()].concat();
                    for i in self.mark_tail(&tail) {
                        m[i as usize] = self.kind[i as usize] != Kind::Dir as u8;
                    }
                }
                m
            }
            // One definition of each entry's filters, with the checks that
            // run only where other groups matched.
            Item::Size { .. } | Item::Modified { .. } => {
                (0..n).map(|i| self.passes(item, i) == Some(true)).collect()
            }
            Item::Kind(k) => {
                // Folders are of their own kind; the rest by their class,
                // two to a byte (`kind:image`, the first 100 of 1M
                // entries: 8.6-10.6 -> 7.4-8.9 ms p50, with the depth
                // cursor).
                let dir = Kind::Dir as u8;
                let folders = *k == KindClass::Folder;
                let mut m: Vec<bool> = self.kind[..n]
                    .iter()
                    .map(|&kind| folders && kind == dir)
                    .collect();
                if !folders {
                    let code = *k as u8 + 1;
                    for (j, &pair) in self.classes.iter().enumerate() {
                        for half in 0..2 {
                            let i = 2 * j + half;
                            if pair >> (half * 4) & 15 == code
                                && i < n
                                && self.kind[i] != dir
                                && self.kind[i] != HOLE
                            {
                                m[i] = true;
                            }
                        }
                    }
                }
                m
            }
            Item::InEntry(id) => {
                let mut own = vec![0u32; n];
                // Everything below the folder, not the folder itself.
                for (i, o) in own.iter_mut().enumerate() {
                    if self.parent.get(i) != NO_PARENT && self.parent.get(i) as i64 == *id {
                        *o = 1;
                    }
                }
                self.spread(&own, 1)
            }
            Item::In(_) | Item::Content(_) => vec![false; n],
            Item::ContentHits(hits) => {
                let mut m = vec![false; n];
                for &id in hits.scores.keys() {
                    if let Some(x) = m.get_mut(id as usize) {
                        *x = true;
                    }
                }
                m
            }
            Item::Not(inner) => self.eval(inner, marks).into_iter().map(|m| !m).collect(),
        }
    }

    /// Whether entry i passes `item`, for the filters on an entry's own
    /// figures (size, time, kind), as [`eval`](Self::eval) answers them;
    /// `None` for every other item.
    fn passes(&self, item: &Item, i: usize) -> Option<bool> {
        let kind = self.kind.get(i).copied().unwrap_or(HOLE);
        Some(match item {
            Item::Size { min, max } => {
                kind != HOLE && kind != Kind::Dir as u8 && (*min..=*max).contains(&self.size_of(i))
            }
            Item::Modified { from, to } => kind != HOLE && (*from..*to).contains(&self.mtime[i]),
            Item::Kind(k) if kind == Kind::Dir as u8 => *k == KindClass::Folder,
            Item::Kind(k) => kind != HOLE && self.class_of(i) == *k as u8 + 1,
            _ => return None,
        })
    }

    /// The entries whose folded name holds `term` (or, with `/`, where a
    /// span of the path that holds it ends), ascending.
    fn mark_term(&self, term: &[u8]) -> Vec<u32> {
        if term.contains(&SEP) {
            self.mark_slash_with(term, |i| Cow::Borrowed(self.folded_name(i)))
        } else {
            self.mark_name_term(term)
        }
    }

    /// `ids` as marks for [`Snapshot::spread`] (bit 0).
    fn dense(&self, ids: &[u32]) -> Vec<u32> {
        let mut own = vec![0u32; self.parent.len()];
        for &i in ids {
            own[i as usize] = 1;
        }
        own
    }

    /// `ids` as a bit set over all ids.
    fn bitset(&self, ids: &[u32]) -> Vec<u64> {
        let mut set = vec![0u64; self.parent.len().div_ceil(64)];
        for &i in ids {
            set[i as usize / 64] |= 1 << (i % 64);
        }
        set
    }

    /// Spreads marks down the tree: an entry matches when it or any folder
    /// above it is marked.
    fn spread(&self, own: &[u32], mask: u32) -> Vec<bool> {
        let n = self.parent.len();
        let mut out = vec![false; n];
        for i in 0..n {
            let p = self.parent.get(i);
            out[i] = own[i] & mask != 0
                || match p {
                    NO_PARENT => false,
                    p if (p as usize) < i => out[p as usize],
                    p => self.marked_from(p, |q| own[q] & mask != 0),
                };
        }
        out
    }

    /// True when folder `q` or one above it is `marked`.
    fn marked_from(&self, mut q: u32, marked: impl Fn(usize) -> bool) -> bool {
        loop {
            if marked(q as usize) {
                return true;
            }
            q = self.parent.get(q as usize);
            if q == NO_PARENT {
                return false;
            }
        }
    }

    /// The entries of `set` that `own` marks or that have a marked folder
    /// above them. Walks `set` in id order (the tree is ordered: a parent's
    /// id is below its children's), so an entry whose parent is in `set`
    /// takes its parent's answer; only the others walk up.
    fn narrow(&self, set: Vec<u64>, own: &[u64]) -> Vec<u64> {
        let mut out = vec![0u64; set.len()];
        for i in ones(&set) {
            let p = self.parent.get(i);
            let hit = has(own, i)
                || match p {
                    NO_PARENT => false,
                    p if has(&set, p as usize) => has(&out, p as usize),
                    p => self.marked_from(p, |q| has(own, q)),
                };
            if hit {
                out[i / 64] |= 1 << (i % 64);
            }
        }
        out
    }

    /// [`Snapshot::spread`] for few marks (`ids`, ascending, and the same as
    /// the bit set `set`) in an ordered tree: visits only the id ranges
    /// that can hold their descendants. Returns the bit set of matches.
    fn spread_sparse(&self, ids: &[u32], mut set: Vec<u64>) -> Vec<u64> {
        let mut span: Option<(usize, usize)> = None;
        let visit = |set: &mut Vec<u64>, (from, to): (usize, usize)| {
            for i in from..=to {
                let p = self.parent.get(i);
                if p != NO_PARENT && has(set, p as usize) {
                    set[i / 64] |= 1 << (i % 64);
                }
            }
        };
        for &d in ids {
            let (d, hi) = (d as usize, self.hi_of(d) as usize);
            if hi <= d {
                continue;
            }
            span = match span {
                Some((a, b)) if d <= b => Some((a, b.max(hi))),
                Some(s) => {
                    visit(&mut set, s);
                    Some((d + 1, hi))
                }
                None => Some((d + 1, hi)),
            };
        }
        if let Some(s) = span {
            visit(&mut set, s);
        }
        set
    }

    /// The entries whose folded name contains `term`, ascending.
    fn mark_name_term(&self, term: &[u8]) -> Vec<u32> {
        self.mark_name_term_fits(term, false).0
    }

    /// [`mark_name_term`](Self::mark_name_term), and with `fits` how well
    /// each marked name fits the term ([`fit`]), worked out while its bytes
    /// are in cache: read back later, the name was a cache miss, a quarter
    /// of the samples of ranking `ar` at 1M entries.
    fn mark_name_term_fits(&self, term: &[u8], fits: bool) -> (Vec<u32>, Vec<u8>) {
        let (mut ids, mut how) = (Vec::new(), Vec::new());
        let finder = memmem::Finder::new(term);
        for (from, to) in self.candidate_spans(term) {
            self.mark_span(&finder, from, to, &mut ids, |i, at| {
                if fits {
                    // `at` is the term's first place in the name: a name
                    // holds no SEP, so no hit spans two names.
                    let (start, end) = self.fold_at.span(i);
                    how.push(fit_from(&self.folded[start..end - 1], term, at - start));
                }
                true
            });
        }
        if !self.relocated.is_empty() {
            let mut more: Vec<(u32, u8)> = self
                .relocated
                .iter()
                .filter(|&(&i, (folded, _))| {
                    self.kind[i as usize] != HOLE && finder.find(folded).is_some()
                })
                .map(|(&i, (folded, _))| (i, if fits { fit(folded, term) } else { 0 }))
                .collect();
            if !more.is_empty() {
                if fits {
                    more.extend(ids.iter().copied().zip(how.iter().copied()));
                    more.sort_unstable();
                    (ids, how) = more.into_iter().unzip();
                } else {
                    ids.extend(more.into_iter().map(|(i, _)| i));
                    ids.sort_unstable();
                }
            }
        }
        (ids, how)
    }

    /// The id ranges whose arena names can hold `text` (no [`SEP`] in it
    /// but maybe at its end): runs of the blocks the trigram filter passes,
    /// or everything.
    fn candidate_spans(&self, text: &[u8]) -> Vec<(usize, usize)> {
        let n = self.parent.len();
        if text.len() < 3 || self.grams.len() * GRAM_BLOCK < n {
            return vec![(0, n)];
        }
        let blocks = self.grams.candidates(text);
        let mut spans = Vec::new();
        let mut k = 0;
        while k < blocks.len() {
            // A run of consecutive blocks is one span.
            let first = blocks[k] as usize;
            let mut last = first;
            k += 1;
            while k < blocks.len() && blocks[k] as usize == last + 1 {
                last += 1;
                k += 1;
            }
            spans.push((first * GRAM_BLOCK, ((last + 1) * GRAM_BLOCK).min(n)));
        }
        spans
    }

    /// The entries whose folded name ends with `tail` and is longer
    /// (`a.pdf`, not `.pdf`, for `.pdf`), ascending. One SIMD search for
    /// `tail` and the [`SEP`] after each name, in the blocks the trigram
    /// filter passes: the names that end otherwise are never looked at
    /// (`ext:pdf`, the first 100 of 1M entries: 10.2 -> 6.2 ms p50).
    fn mark_tail(&self, tail: &[u8]) -> Vec<u32> {
        let fits = |len: usize| len > tail.len();
        let mut needle = tail.to_vec();
        needle.push(SEP);
        let finder = memmem::Finder::new(&needle);
        let mut ids = Vec::new();
        for (from, to) in self.candidate_spans(&needle) {
            // A hit ends at its name's SEP (names hold none), so the name
            // is `at - start` bytes longer than `tail`.
            self.mark_span(&finder, from, to, &mut ids, |i, at| {
                fits(at - self.fold_at.get(i) + tail.len())
            });
        }
        if !self.relocated.is_empty() {
            for (&i, (folded, _)) in &self.relocated {
                if self.kind[i as usize] != HOLE && folded.ends_with(tail) && fits(folded.len()) {
                    ids.push(i);
                }
            }
            ids.sort_unstable();
        }
        ids
    }

    /// Adds the entries in `from..to` whose arena name contains the term
    /// at an offset `at` that `keep(entry, at)` takes.
    fn mark_span(
        &self,
        finder: &memmem::Finder<'_>,
        from: usize,
        to: usize,
        ids: &mut Vec<u32>,
        mut keep: impl FnMut(usize, usize) -> bool,
    ) {
        let end = self.fold_at.get(to);
        let mut i = from; // entry holding the current position
        let mut pos = self.fold_at.get(from);
        while pos < end {
            let Some(off) = finder.find(&self.folded[pos..end]) else {
                break;
            };
            let at = pos + off;
            // Find the entry whose name holds offset `at`: step forward when
            // close; when far, gallop to a bound, then binary-search up to
            // it (a search up to `to` took 20 probes of a large span).
            if self.fold_at.get((i + 8).min(to)) <= at {
                let (mut lo, mut step) = ((i + 8).min(to), 16);
                let hi = loop {
                    let probe = (lo + step).min(to);
                    // `get(to)` is the span's end, past every hit.
                    if self.fold_at.get(probe) > at {
                        break probe;
                    }
                    lo = probe;
                    step *= 2;
                };
                i = self.fold_at.holder(lo, hi, at);
            } else {
                while self.fold_at.get(i + 1) <= at {
                    i += 1;
                }
            }
            if keep(i, at) {
                ids.push(i as u32);
            }
            // Skip to the next name: one hit per name is enough.
            pos = self.fold_at.get(i + 1);
            i += 1;
        }
    }

    /// A term with `/` spans several path components: `a0/a1/.../ak` matches
    /// where one component ends with a0, the next ones equal a1.., and the
    /// last starts with ak. Marks the entry where such a span ends.
    fn mark_slash_with<'a>(
        &'a self,
        term: &[u8],
        name_of: impl Fn(usize) -> Cow<'a, [u8]>,
    ) -> Vec<u32> {
        let mut ids = Vec::new();
        let pieces: Vec<&[u8]> = term.split(|&b| b == SEP).collect();
        let k = pieces.len() - 1;
        let last = pieces[k];
        for i in 0..self.parent.len() {
            // Every piece is a name below a root: k + 1 ancestors at least.
            if self.kind[i] == HOLE || (self.depth_of(i as u32) as usize) < k + 1 {
                continue;
            }
            if !name_of(i).starts_with(last) {
                continue;
            }
            let mut cur = self.parent.get(i);
            let mut ok = true;
            for j in (0..k).rev() {
                let name = name_of(cur as usize);
                let fits = if j == 0 {
                    name.ends_with(pieces[0])
                } else {
                    name == pieces[j]
                };
                if !fits {
                    ok = false;
                    break;
                }
                if j > 0 {
                    cur = self.parent.get(cur as usize);
                }
            }
            if ok {
                ids.push(i as u32);
            }
        }
        ids
    }

    /// Entry i's relevance, from how its own name fits the terms
    /// ([`NameFits::of`]) and its content score.
    fn relevance(&self, i: u32, (own, whole, exact): Fit, content: Option<f64>) -> RelevanceKey {
        (
            Reverse(own),
            Reverse(whole),
            Reverse(exact),
            // bm25 is negative, lower is better; no content score last.
            content.map_or(i64::MAX, |s| (s * 1e6) as i64),
            self.depth_of(i),
            Reverse(self.mtime[i as usize]),
            i,
        )
    }

    /// The part of a rank key below [`RANK_NAMES`] (see [`names_key`]):
    /// depth, newer first, id. A rank key is [`relevance`](Self::relevance)
    /// without a content score, in one integer that orders the same: 16
    /// bytes to select from instead of 48 (`ar`, the first 100 of 1M
    /// entries: 20.9 -> 15.5 ms p50, with the byte word check). The id is
    /// its low 32 bits.
    fn rank_rest(&self, i: u32) -> u128 {
        self.rank_rest_at(i, self.depth_of(i))
    }

    /// [`rank_rest`](Self::rank_rest) of entry i at `depth`.
    fn rank_rest_at(&self, i: u32, depth: u16) -> u128 {
        // Order-preserving as unsigned, then newer first.
        let newer = !((self.mtime[i as usize] as u64) ^ (1 << 63));
        u128::from(depth) << 96 | u128::from(newer) << 32 | u128::from(i)
    }

    /// [`depth_of`](Self::depth_of) entry i, for ids read in order:
    /// `last` holds the last parent looked up and its depth, which the
    /// next sibling takes (`kind:image`: 192k results, mostly files of
    /// the same folders).
    fn depth_near(&self, i: u32, last: &mut (u32, u16)) -> u16 {
        if self.dirs.get(i as usize).is_some() {
            return self.depth_of(i);
        }
        match self.parent.get(i as usize) {
            NO_PARENT => 0,
            p if p == last.0 => last.1.saturating_add(1),
            p => {
                *last = (p, self.depth_of(p));
                last.1.saturating_add(1)
            }
        }
    }

    /// The ids of the results their rank keys put at `from..k`, in
    /// order (reversed with `reverse`). Only keys that beat the k-th best
    /// so far are kept, and a result whose names part alone cannot is
    /// dropped before its depth and time are looked up. Many results are
    /// ranked in two halves on two threads, then merged (`ar`, the first
    /// 100 of 1M entries: 13.4 -> 10.1 ms p50).
    fn top_ranks(
        &self,
        hits: &[u32],
        from: usize,
        k: usize,
        reverse: bool,
        lists: &[Vec<u32>],
        fits: &[Vec<u8>],
    ) -> Vec<u32> {
        // Reversed, the keys are complemented: the least come first still.
        let flip = |key: u128| if reverse { !key } else { key };
        let id = |kept: u128| flip(kept) as u32;
        if k == 0 {
            return Vec::new();
        }
        if k > hits.len() / 4 {
            let mut names = NameFits::new(lists, fits, 0);
            let mut keyed: Vec<u128> = hits
                .iter()
                .map(|&i| flip(names_key(names.of(i)) | self.rank_rest(i)))
                .collect();
            top_k(&mut keyed, from, k, u128::cmp);
            return keyed[..k.min(keyed.len())].iter().map(|&x| id(x)).collect();
        }
        let pick = |part: &[u32]| {
            let mut kept: Vec<u128> = Vec::with_capacity(4 * k);
            let mut worst = u128::MAX;
            let mut names = NameFits::new(lists, fits, part.first().copied().unwrap_or(0));
            let mut last = (NO_PARENT, 0);
            let cut = |kept: &mut Vec<u128>| {
                kept.select_nth_unstable(k - 1);
                kept.truncate(k);
                kept[k - 1]
            };
            for &i in part {
                let names = names_key(names.of(i));
                // The least its key can be, complemented or not.
                let least = if reverse {
                    !(names | !RANK_NAMES)
                } else {
                    names
                };
                if least >= worst {
                    continue;
                }
                let key = flip(names | self.rank_rest_at(i, self.depth_near(i, &mut last)));
                if key >= worst {
                    continue;
                }
                kept.push(key);
                if kept.len() == 4 * k {
                    worst = cut(&mut kept);
                }
            }
            if kept.len() > k {
                cut(&mut kept);
            }
            kept
        };
        let mut kept = if hits.len() < PARALLEL_KEYS {
            pick(hits)
        } else {
            let (a, b) = hits.split_at(hits.len() / 2);
            let (mut kept, other) = std::thread::scope(|s| {
                let other = s.spawn(|| pick(b));
                (pick(a), other.join())
            });
            match other {
                Ok(other) => kept.extend(other),
                Err(panic) => std::panic::resume_unwind(panic),
            }
            kept
        };
        top_k(&mut kept, from, k, u128::cmp);
        kept[..k.min(kept.len())].iter().map(|&x| id(x)).collect()
    }
}

/// Plain terms of a query, marked once per search: bit t of `own[i]` says
/// entry i's own name holds term t; `found[t]` counts such entries.
struct Marks<'a> {
    terms: &'a [&'a str],
    own: Vec<u32>,
    found: Vec<usize>,
}

/// (own-name terms, best [`name_match`], whole words): how an entry's own
/// name fits a query's plain terms.
type Fit = (u32, u8, u32);

/// Each plain term's marks in id order with their [`fit`]s, read for
/// ascending ids with a cursor per term.
struct NameFits<'a> {
    lists: &'a [Vec<u32>],
    fits: &'a [Vec<u8>],
    at: Vec<usize>,
}

impl<'a> NameFits<'a> {
    /// Cursors at the first marks of ids `first` and up.
    fn new(lists: &'a [Vec<u32>], fits: &'a [Vec<u8>], first: u32) -> Self {
        let at = lists
            .iter()
            .map(|l| l.partition_point(|&x| x < first))
            .collect();
        NameFits { lists, fits, at }
    }

    /// How entry i's own name fits the terms; ids asked for must ascend.
    fn of(&mut self, i: u32) -> Fit {
        let (mut own, mut whole, mut exact) = (0, 0, 0);
        for (t, list) in self.lists.iter().enumerate() {
            let c = &mut self.at[t];
            while list.get(*c).is_some_and(|&x| x < i) {
                *c += 1;
            }
            if list.get(*c) == Some(&i) {
                let f = self.fits[t][*c];
                own += 1;
                whole = whole.max(f & FIT_WHOLE);
                exact += u32::from(f & FIT_WORD != 0);
            }
        }
        (own, whole, exact)
    }
}

/// The entries that every list (ascending) holds and that are `results`,
/// ascending; `results` is asked about ascending ids. None without lists.
fn owning_all(lists: &[Vec<u32>], mut results: impl FnMut(u32) -> bool) -> Vec<u32> {
    let Some(rarest) = lists.iter().min_by_key(|l| l.len()) else {
        return Vec::new();
    };
    let mut at = vec![0usize; lists.len()];
    rarest
        .iter()
        .copied()
        .filter(|&i| {
            results(i)
                && lists
                    .iter()
                    .zip(at.iter_mut())
                    .all(|(list, c)| holds(list, c, i))
        })
        .collect()
}

/// What a search keeps of its results (what one caller may see); `None`
/// keeps every result.
pub type Keep<'a> = Option<&'a mut dyn FnMut(u32) -> bool>;

/// Whether `list` (ascending) holds `i`, searched from `*c` on, where it
/// leaves `*c` for the next, larger `i`: by galloping, as the list may be
/// far longer than the ids asked for (`ar`: 272,290 results, 55,664 asked).
fn holds(list: &[u32], c: &mut usize, i: u32) -> bool {
    let rest = &list[(*c).min(list.len())..];
    let mut step = 1;
    while step < rest.len() && rest[step - 1] < i {
        step *= 2;
    }
    let bound = step.min(rest.len());
    *c += rest[..bound].partition_point(|&x| x < i);
    list.get(*c) == Some(&i)
}

/// Whether bit `i` of `set` is set.
fn has(set: &[u64], i: usize) -> bool {
    set[i / 64] >> (i % 64) & 1 != 0
}

/// The indexes of the set bits, ascending.
fn ones(set: &[u64]) -> impl Iterator<Item = usize> + '_ {
    set.iter().enumerate().flat_map(|(w, &bits)| {
        let mut bits = bits;
        std::iter::from_fn(move || {
            if bits == 0 {
                return None;
            }
            let b = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            Some(w * 64 + b)
        })
    })
}

/// [`kind_of`] a file of folded name `name`, as a class code (see
/// [`Snapshot::classes`]). A kind follows from the extension (but for a few
/// whole names), so each extension is worked out once per thread (the
/// memo is dropped past 4,096 of them).
fn name_class(name: &[u8]) -> u8 {
    type Memo = HashMap<(u64, u32), u8, BuildHasherDefault<MulHasher>>;
    thread_local! {
        static MEMO: std::cell::RefCell<Memo> = std::cell::RefCell::new(Memo::default());
    }
    let class = || kind_of(&String::from_utf8_lossy(name), false).map_or(0, |c| c as u8 + 1);
    let ext = memchr::memrchr(b'.', name).map_or(&[][..], |p| &name[p + 1..]);
    if ext.len() > MAX_KEYED_EXT || KIND_BY_WHOLE_NAME.iter().any(|w| w.as_bytes() == name) {
        return class();
    }
    MEMO.with_borrow_mut(|memo| {
        if memo.len() > 4096 {
            memo.clear();
        }
        *memo.entry(ext_key(ext)).or_insert_with(class)
    })
}

/// The filter bit of the trigram `abc`.
fn gram_bit(a: u8, b: u8, c: u8) -> usize {
    let x = u32::from(a) | u32::from(b) << 8 | u32::from(c) << 16;
    (x.wrapping_mul(0x9E37_79B1) >> (32 - GRAM_BITS_LOG2)) as usize
}

/// (own-name matches, whole-name match, word matches, bm25, depth, newer
/// first, id).
type RelevanceKey = (
    Reverse<u32>,
    Reverse<u8>,
    Reverse<u32>,
    i64,
    u16,
    Reverse<i64>,
    u32,
);

/// How much of `name` the term is: 2 the whole name (`cargo.toml` for
/// `Cargo.toml`), 1 the name without its extension (`readme.md` for
/// `readme`), else 0.
fn name_match(name: &[u8], term: &[u8]) -> u8 {
    if name == term {
        return 2;
    }
    // The stem is the term: the last dot right after it (checked first,
    // as most names fail there).
    let n = term.len();
    if n > 0 && name.get(n) == Some(&b'.') && name[..n] == *term && !name[n + 1..].contains(&b'.') {
        return 1;
    }
    0
}

/// True when `term` occurs in `name` bounded by non-alphanumeric characters.
#[cfg(test)]
fn is_word_match(name: &[u8], term: &[u8]) -> bool {
    is_word_match_from(name, term, 0)
}

/// [`is_word_match`], knowing that `term` does not occur before `from`.
fn is_word_match_from(name: &[u8], term: &[u8], from: usize) -> bool {
    let Some(last) = name.len().checked_sub(term.len()) else {
        return false;
    };
    let Some((&first, rest)) = term.split_first() else {
        return is_word_match_decoded(name, term);
    };
    // On bytes, by hand (names are short: a SIMD search costs more to set
    // up), leftmost and without overlaps as `match_indices`; decoded only
    // where a neighbour is not ASCII, or to confirm an answer.
    let mut at = from;
    while at <= last {
        if name[at] != first || !name[at + 1..at + term.len()].iter().eq(rest) {
            at += 1;
            continue;
        }
        let before = at.checked_sub(1).map(|b| name[b]);
        let after = name.get(at + term.len()).copied();
        if before.is_some_and(|b| !b.is_ascii()) || after.is_some_and(|b| !b.is_ascii()) {
            return is_word_match_decoded(name, term);
        }
        if !before.is_some_and(|b| b.is_ascii_alphanumeric())
            && !after.is_some_and(|b| b.is_ascii_alphanumeric())
        {
            // A name that is not UTF-8 holds no word.
            return std::str::from_utf8(name).is_ok();
        }
        at += term.len();
    }
    false
}

/// [`is_word_match`] on the decoded text.
fn is_word_match_decoded(name: &[u8], term: &[u8]) -> bool {
    let Ok(name) = std::str::from_utf8(name) else {
        return false;
    };
    let Ok(term) = std::str::from_utf8(term) else {
        return false;
    };
    name.match_indices(term).any(|(at, m)| {
        let before = name[..at]
            .chars()
            .next_back()
            .is_none_or(|c| !c.is_alphanumeric());
        let after = name[at + m.len()..]
            .chars()
            .next()
            .is_none_or(|c| !c.is_alphanumeric());
        before && after
    })
}

/// The names part of a [`Snapshot::rank`] key: how many terms the own name
/// holds (at most 32, the bits of `own`), the best [`name_match`] (at most
/// 2), how many are whole words.
fn names_key((own, whole, exact): Fit) -> u128 {
    u128::from(32 - own) << 120 | u128::from(2 - whole) << 118 | u128::from(32 - exact) << 112
}

/// How well a name that holds a term fits it: its [`name_match`] in the low
/// bits ([`FIT_WHOLE`]), and [`FIT_WORD`] when it holds it as a word.
fn fit(name: &[u8], term: &[u8]) -> u8 {
    fit_from(name, term, 0)
}

/// [`fit`], knowing that the term's first place in the name is `first` or
/// later (the search that found it knows): a word is looked for from there.
fn fit_from(name: &[u8], term: &[u8], first: usize) -> u8 {
    let whole = if first == 0 {
        name_match(name, term)
    } else {
        0
    };
    whole
        | if is_word_match_from(name, term, first) {
            FIT_WORD
        } else {
            0
        }
}

const FIT_WHOLE: u8 = 3;
const FIT_WORD: u8 = 4;

/// The bits of a [`Snapshot::rank`] key that the names make.
const RANK_NAMES: u128 = !0 << 112;

/// Results from which [`Snapshot::top_ranks`] ranks on two threads.
const PARALLEL_KEYS: usize = 32_768;

/// Orders the first `k` elements (the rest are left in any order).
/// Puts the `k` smallest of `v` first, with `v[from..k]` in order (what
/// comes before `from` is one page back or more: only its place matters).
fn top_k<T>(v: &mut [T], from: usize, k: usize, cmp: impl Fn(&T, &T) -> std::cmp::Ordering) {
    if k == 0 || from >= k {
        return;
    }
    if k < v.len() {
        v.select_nth_unstable_by(k - 1, &cmp);
    }
    if from > 0 {
        v[..k].select_nth_unstable_by(from, &cmp);
    }
    v[from..k].sort_unstable_by(&cmp);
}

/// Read-only views of single entries, for other query modules (`fsmap`).
/// Ids run from 0 to [`Snapshot::id_bound`]; holes answer `None`.
impl Snapshot {
    /// See the field: equal values mean the same folders at the same places.
    pub fn layout(&self) -> u64 {
        self.layout
    }

    /// Visits folder `top` and the folders below it, each after its parent:
    /// `visit(folder, parent)` (`None` for `top`) says whether to go into
    /// that folder. One pass over `top`'s id range while ids run
    /// parents-first, else over the whole tree.
    pub fn walk_folders(&self, top: u32, visit: &mut dyn FnMut(u32, Option<u32>) -> bool) {
        const DIR: u8 = Kind::Dir as u8;
        if self.kind.get(top as usize) != Some(&DIR) || !visit(top, None) {
            return;
        }
        if self.ordered {
            let hi = self.hi_of(top);
            // Bit k: folder top + k was gone into.
            let mut inside = vec![0u64; (hi - top) as usize / 64 + 1];
            inside[0] = 1;
            let is_in = |inside: &[u64], i: u32| {
                i >= top && i <= hi && {
                    let k = (i - top) as usize;
                    inside[k / 64] >> (k % 64) & 1 == 1
                }
            };
            for j in top + 1..=hi {
                if self.kind[j as usize] != DIR {
                    continue;
                }
                let p = self.parent.get(j as usize);
                if is_in(&inside, p) && visit(j, Some(p)) {
                    let k = (j - top) as usize;
                    inside[k / 64] |= 1 << (k % 64);
                }
            }
            return;
        }
        let mut children: HashMap<u32, Vec<u32>> = HashMap::new();
        for (j, &k) in self.kind.iter().enumerate() {
            let p = self.parent.get(j);
            if k == DIR && p != NO_PARENT {
                children.entry(p).or_default().push(j as u32);
            }
        }
        let mut stack = vec![top];
        while let Some(d) = stack.pop() {
            for c in children.remove(&d).unwrap_or_default() {
                if visit(c, Some(d)) {
                    stack.push(c);
                }
            }
        }
    }

    /// One past the largest id.
    pub fn id_bound(&self) -> usize {
        self.parent.len()
    }

    /// The entry's kind, or `None` for an id without an entry.
    pub fn entry_kind(&self, i: u32) -> Option<Kind> {
        match self.kind.get(i as usize) {
            None | Some(&HOLE) => None,
            Some(&k) => Some(Kind::from_i64(k as i64)),
        }
    }

    /// The parent's id; `None` for a root's own folder.
    pub fn entry_parent(&self, i: u32) -> Option<u32> {
        match self.parent.get(i as usize) {
            NO_PARENT => None,
            p => Some(p),
        }
    }

    pub fn entry_mtime_ns(&self, i: u32) -> i64 {
        self.mtime[i as usize]
    }

    pub fn entry_size(&self, i: u32) -> u64 {
        self.size_of(i as usize)
    }

    fn size_of(&self, i: usize) -> u64 {
        match self.size[i] {
            BIG => self.big.get(&(i as u32)).copied().unwrap_or(BIG as u64),
            s => s as u64,
        }
    }

    /// Entry i's class code (see [`Snapshot::classes`]).
    fn class_of(&self, i: usize) -> u8 {
        self.classes.get(i / 2).map_or(0, |b| b >> (i % 2 * 4) & 15)
    }

    fn set_class(&mut self, i: usize, folded: &[u8]) {
        if self.classes.len() <= i / 2 {
            self.classes.resize(i / 2 + 1, 0);
        }
        let shift = i % 2 * 4;
        self.classes[i / 2] = self.classes[i / 2] & !(15 << shift) | name_class(folded) << shift;
    }

    fn set_size(&mut self, i: usize, size: u64) {
        if size >= BIG as u64 {
            self.size[i] = BIG;
            self.big.insert(i as u32, size);
        } else {
            self.size[i] = size as u32;
            if !self.big.is_empty() {
                self.big.remove(&(i as u32));
            }
        }
    }

    /// Labels every entry with the label of its nearest ancestor (itself
    /// included) found in `seeds`; 0 when none. One pass when ids run
    /// parents-first, else each entry's ancestors are walked once.
    pub fn subtree_labels(&self, seeds: &HashMap<u32, u16>) -> Vec<u16> {
        const UNSET: u16 = u16::MAX;
        let n = self.parent.len();
        let mut label = vec![UNSET; n];
        let mut chain = Vec::new();
        for i in 0..n {
            if label[i] != UNSET {
                continue;
            }
            // Walk up to a decided ancestor (or a seed, or the top).
            let mut at = i;
            let decided = loop {
                if let Some(&l) = seeds.get(&(at as u32)) {
                    break l;
                }
                if label[at] != UNSET {
                    break label[at];
                }
                chain.push(at);
                match self.parent.get(at) {
                    NO_PARENT => break 0,
                    p if (p as usize) < n && self.kind[at] != HOLE => at = p as usize,
                    _ => break 0,
                }
            };
            if let Some(&l) = seeds.get(&(at as u32)) {
                label[at] = l;
            }
            for c in chain.drain(..) {
                label[c] = decided;
            }
        }
        label
    }

    pub fn entry_depth(&self, i: u32) -> u16 {
        self.depth_of(i)
    }

    /// The entry's name, byte-exact (a root's own folder: its absolute path).
    pub fn entry_name(&self, i: u32) -> Cow<'_, [u8]> {
        self.name(i as usize)
    }

    /// The entry's name in NFC with full case folding.
    pub fn entry_folded_name(&self, i: u32) -> &[u8] {
        self.folded_name(i as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(id: i64, parent: Option<i64>, name: &str, kind: Kind) -> EntryRow {
        EntryRow {
            id,
            parent_id: parent,
            name: name.as_bytes().to_vec(),
            kind,
            size: id as u64,
            blocks: 0,
            mtime_ns: 0,
            dev: 0,
            ino: id as u64,
            nlink: 1,
            mode: 0,
            flags: 0,
        }
    }

    fn paths(s: &Snapshot, q: &str) -> Vec<String> {
        let (_, found) = s.search(&Query::parse(q).unwrap(), Sort::Path, 0, false);
        found
            .into_iter()
            .map(|f| String::from_utf8(f.path).unwrap())
            .collect()
    }

    #[test]
    fn applied_changes_are_searchable_and_survive_compaction() {
        let mut s = Snapshot::default();
        s.apply(
            vec![
                Change::Upsert(row(1, None, "/r", Kind::Dir)),
                Change::Upsert(row(2, Some(1), "Taxes", Kind::Dir)),
                Change::Upsert(row(3, Some(2), "w2.pdf", Kind::File)),
                Change::Upsert(row(5, Some(1), "Notes.TXT", Kind::File)),
            ],
            None,
        );
        assert_eq!(s.len(), 4);
        assert_eq!(paths(&s, "tax"), ["/r/Taxes", "/r/Taxes/w2.pdf"]);
        assert_eq!(paths(&s, "notes.txt"), ["/r/Notes.TXT"]);
        // A metadata update keeps the name; a new name relocates it.
        s.apply(
            vec![Change::Upsert(row(3, Some(2), "w2.pdf", Kind::File))],
            None,
        );
        s.apply(
            vec![Change::Upsert(row(2, Some(1), "Receipts", Kind::Dir))],
            None,
        );
        assert!(paths(&s, "tax").is_empty());
        assert_eq!(paths(&s, "receipts w2"), ["/r/Receipts/w2.pdf"]);
        s.apply(vec![Change::Removed(vec![5])], None);
        assert!(paths(&s, "notes").is_empty());
        assert_eq!(s.len(), 3);
        s.compact();
        assert_eq!(paths(&s, "receipts"), ["/r/Receipts", "/r/Receipts/w2.pdf"]);
        assert_eq!(paths(&s, "receipts/w2"), ["/r/Receipts/w2.pdf"]);
        assert!(paths(&s, "notes").is_empty());
    }

    /// Depth and descendant ranges are kept for folders only; every entry's
    /// depth and every subtree search must still equal a walk of the parent
    /// links, after folders move (deeper, shallower, under a higher id) and
    /// a file's id comes back as a folder with children.
    #[test]
    fn extensions_match_on_bytes_as_on_the_shown_text() {
        let names: [&[u8]; 8] = [
            b"a\xff.pdf",
            b"b.pdf",
            b"c.PDF",
            b"d\xff",
            b".pdf",
            b"e.\xff",
            b"f.pd\xff",
            b"g\xc3.pdf",
        ];
        let mut rows = vec![Change::Upsert(row(1, None, "/r", Kind::Dir))];
        for (k, n) in names.iter().enumerate() {
            let mut r = row(2 + k as i64, Some(1), "", Kind::File);
            r.name = n.to_vec();
            rows.push(Change::Upsert(r));
        }
        rows.push(Change::Upsert(row(50, Some(1), "folder.pdf", Kind::Dir)));
        let mut s = Snapshot::default();
        s.apply(rows, None);
        let names_of = |q: &str| -> Vec<Vec<u8>> {
            let (_, found) = s.search(&Query::parse(q).unwrap(), Sort::Path, 0, false);
            found.into_iter().map(|f| f.name).collect()
        };
        let want: Vec<Vec<u8>> = [&b"a\xff.pdf"[..], b"b.pdf", b"c.PDF", b"g\xc3.pdf"]
            .iter()
            .map(|n| n.to_vec())
            .collect();
        assert_eq!(names_of("ext:pdf"), want);
        // An extension with U+FFFD matches what a name that is not UTF-8 shows.
        assert_eq!(names_of("ext:\u{fffd}"), vec![b"e.\xff".to_vec()]);
    }

    #[test]
    fn kinds_worked_out_per_extension_equal_each_names_kind() {
        let names = [
            "a.JPG",
            "b.jpg",
            "c.png",
            "Makefile",
            "makefile.jpg",
            "CMakeLists.txt",
            "notes.txt",
            "x.tar.gz",
            "song.flac",
            "film.mkv",
            "noext",
            "Dockerfile",
            ".bashrc",
            "weird.verylongextension",
            "caf\u{e9}.PDF",
            "r\u{e9}sum\u{e9}.docx",
            "a.",
            "..",
            "justfile",
            "img.jpeg.txt",
            "clip.MP4",
        ];
        let mut rows = vec![Change::Upsert(row(1, None, "/r", Kind::Dir))];
        for (k, n) in names.iter().enumerate() {
            rows.push(Change::Upsert(row(2 + k as i64, Some(1), n, Kind::File)));
        }
        rows.push(Change::Upsert(row(100, Some(1), "photos.jpg", Kind::Dir)));
        let mut s = Snapshot::default();
        s.apply(rows, None);
        for kind in [
            "image", "document", "code", "text", "archive", "audio", "video", "folder",
        ] {
            let got = paths(&s, &format!("kind:{kind}"));
            let mut want: Vec<String> = names
                .iter()
                .filter(|n| {
                    // Each name judged on its own, as the query sees it (folded).
                    let folded = String::from_utf8(fold_bytes(n.as_bytes()).into_owned()).unwrap();
                    matches!(
                        (kind, kind_of(&folded, false)),
                        ("image", Some(KindClass::Image))
                            | ("document", Some(KindClass::Document))
                            | ("code", Some(KindClass::Code))
                            | ("text", Some(KindClass::Text))
                            | ("archive", Some(KindClass::Archive))
                            | ("audio", Some(KindClass::Audio))
                            | ("video", Some(KindClass::Video))
                    )
                })
                .map(|n| format!("/r/{n}"))
                .collect();
            if kind == "folder" {
                want = vec!["/r/photos.jpg".to_owned()];
            }
            want.sort();
            let mut got = got;
            got.sort();
            assert_eq!(got, want, "kind:{kind}");
        }
        // The same, written out by hand for some of them.
        let by_hand = [
            ("image", &["a.JPG", "b.jpg", "c.png", "makefile.jpg"][..]),
            (
                "code",
                &["CMakeLists.txt", "Dockerfile", "Makefile", "justfile"][..],
            ),
            ("text", &["img.jpeg.txt", "notes.txt"][..]),
            ("archive", &["x.tar.gz"][..]),
            ("document", &["caf\u{e9}.PDF", "r\u{e9}sum\u{e9}.docx"][..]),
        ];
        for (kind, names) in by_hand {
            let mut got = paths(&s, &format!("kind:{kind}"));
            got.sort();
            let mut want: Vec<String> = names.iter().map(|n| format!("/r/{n}")).collect();
            want.sort();
            assert_eq!(got, want, "kind:{kind} by hand");
        }
    }

    #[test]
    fn depths_and_subtrees_equal_a_walk_after_moves() {
        fn walk_depth(s: &Snapshot, mut i: u32) -> u16 {
            let mut d = 0;
            while let Some(p) = s.entry_parent(i) {
                d += 1;
                i = p;
            }
            d
        }
        fn check(s: &Snapshot) {
            for i in 0..s.id_bound() as u32 {
                if s.entry_kind(i).is_some() {
                    assert_eq!(s.entry_depth(i), walk_depth(s, i), "depth of {i}");
                }
            }
            // Every entry under a folder named `a`, by a walk: what the
            // search spreads from that folder (sparse, one mark).
            let mut want: Vec<String> = Vec::new();
            for i in 0..s.id_bound() as u32 {
                if s.entry_kind(i).is_none() {
                    continue;
                }
                let mut a = Some(i);
                while let Some(x) = a {
                    if *s.entry_name(x) == *b"a" {
                        want.push(String::from_utf8(s.path(i)).unwrap());
                        break;
                    }
                    a = s.entry_parent(x);
                }
            }
            want.sort();
            assert_eq!(
                paths(s, "a/"),
                want.iter()
                    .filter(|p| !p.ends_with("/a"))
                    .cloned()
                    .collect::<Vec<_>>()
            );
        }
        let mut s = Snapshot::default();
        let mut rows = vec![Change::Upsert(row(1, None, "/r", Kind::Dir))];
        // /r/d2..d6, each in the one before, and a file in each.
        for k in 0..5i64 {
            let dir = 2 + 2 * k;
            let parent = if k == 0 { 1 } else { dir - 2 };
            rows.push(Change::Upsert(row(
                dir,
                Some(parent),
                &format!("d{dir}"),
                Kind::Dir,
            )));
            rows.push(Change::Upsert(row(
                dir + 1,
                Some(dir),
                &format!("f{dir}"),
                Kind::File,
            )));
        }
        rows.push(Change::Upsert(row(12, Some(1), "a", Kind::Dir)));
        rows.push(Change::Upsert(row(13, Some(12), "x", Kind::File)));
        s.apply(rows, None);
        check(&s);
        let moved = |id: i64, parent_id: i64, name: &str, subtree: Vec<i64>| Change::Moved {
            id,
            parent_id,
            name: name.as_bytes().to_vec(),
            subtree,
        };
        // d4 (with d6..d10 below it) moves under a, then out to the root.
        let below_d4 = vec![5, 6, 7, 8, 9, 10, 11];
        s.apply(vec![moved(4, 12, "d4", below_d4.clone())], None);
        check(&s);
        assert_eq!(s.entry_depth(11), 6);
        s.apply(vec![moved(4, 1, "d4", below_d4)], None);
        check(&s);
        // File 3 becomes a folder holding a new entry; a, emptied, is
        // moved under d10 (a higher id: the ids are no longer ordered).
        s.apply(
            vec![
                Change::Upsert(row(3, Some(2), "f2", Kind::Dir)),
                Change::Upsert(row(14, Some(3), "y", Kind::File)),
                moved(12, 10, "a", vec![13]),
            ],
            None,
        );
        check(&s);
        assert_eq!(s.entry_depth(14), 3);
        assert_eq!(s.entry_depth(13), 6);
    }

    /// Original names come back byte for byte, whether kept as case runs
    /// or whole: capitals at either end, runs and gaps longer than a run
    /// byte holds, non-ASCII letters, decomposed accents, invalid UTF-8.
    #[test]
    fn original_names_come_back_exactly() {
        let long_gap = format!("{}X", "a".repeat(600));
        let long_caps = format!("b{}c", "Q".repeat(700));
        let names: Vec<Vec<u8>> = [
            "README.md",
            "IMG_0042.JPG",
            "Café Menu.PDF",
            "ÉCOLE",
            "e\u{301}T\u{e9}",
            "x",
            "X",
            "aBcDeFgHiJ",
            "Straße",
            long_gap.as_str(),
            long_caps.as_str(),
        ]
        .iter()
        .map(|n| n.as_bytes().to_vec())
        .chain([b"Bad\xffName".to_vec()])
        .collect();
        for name in &names {
            let folded = fold_bytes(name).into_owned();
            let mut orig = Vec::new();
            push_orig(&mut orig, name, &folded);
            let head = u16::from_le_bytes([orig[0], orig[1]]);
            let body = &orig[2..];
            let back = if head & RUNS != 0 {
                assert!(body.len() < name.len(), "runs only when smaller");
                let mut out = folded.clone();
                capitalise(&mut out, body);
                out
            } else {
                body.to_vec()
            };
            assert_eq!(back, *name, "{}", String::from_utf8_lossy(name));
        }
        // Through a snapshot: pushed, loaded back by compaction, in paths.
        let mut s = Snapshot::default();
        let mut rows = vec![Change::Upsert(row(1, None, "/r", Kind::Dir))];
        for (k, name) in names.iter().enumerate() {
            let mut r = row(2 + k as i64, Some(1), "", Kind::File);
            r.name = name.clone();
            rows.push(Change::Upsert(r));
        }
        s.apply(rows, None);
        let check = |s: &Snapshot| {
            for (k, name) in names.iter().enumerate() {
                let id = 2 + k as u32;
                assert_eq!(*s.entry_name(id), **name);
                let mut want = b"/r/".to_vec();
                want.extend_from_slice(name);
                assert_eq!(s.path(id), want);
            }
        };
        check(&s);
        assert_eq!(paths(&s, "img_0042.jpg"), ["/r/IMG_0042.JPG"]);
        assert_eq!(paths(&s, "CAFÉ"), ["/r/Café Menu.PDF"]);
        s.compact();
        check(&s);
    }

    /// Sizes are kept in 4 bytes, the few of 4 GiB and more on the side:
    /// filters and the size order see every size exactly, on both sides of
    /// that line, and after a size moves across it.
    #[test]
    fn sizes_of_four_gib_and_more_stay_exact() {
        let sizes: [u64; 6] = [
            0,
            4096,
            u32::MAX as u64 - 1,
            u32::MAX as u64,
            5 << 30,
            1 << 62,
        ];
        let mut changes = vec![Change::Upsert(row(1, None, "/r", Kind::Dir))];
        for (k, &size) in sizes.iter().enumerate() {
            let mut r = row(2 + k as i64, Some(1), &format!("f{k}"), Kind::File);
            r.size = size;
            changes.push(Change::Upsert(r));
        }
        let mut s = Snapshot::default();
        s.apply(changes, None);
        let by_size = |s: &Snapshot| {
            let (_, found) = s.search(&Query::parse("f").unwrap(), Sort::Size, 0, false);
            found.into_iter().map(|f| f.size).collect::<Vec<_>>()
        };
        let mut want = sizes.to_vec();
        want.sort_unstable_by(|a, b| b.cmp(a));
        assert_eq!(by_size(&s), want);
        assert_eq!(paths(&s, "size:>=4294967295"), ["/r/f3", "/r/f4", "/r/f5"]);
        assert_eq!(paths(&s, "size:<4294967295"), ["/r/f0", "/r/f1", "/r/f2"]);
        // A big file shrinks, a small one grows past 4 GiB.
        let mut shrunk = row(6, Some(1), "f4", Kind::File);
        shrunk.size = 10;
        let mut grown = row(3, Some(1), "f1", Kind::File);
        grown.size = 6 << 30;
        s.apply(vec![Change::Upsert(shrunk), Change::Upsert(grown)], None);
        assert_eq!(s.entry_size(6), 10);
        assert_eq!(s.entry_size(3), 6 << 30);
        assert_eq!(paths(&s, "size:>5gb"), ["/r/f1", "/r/f5"]);
    }

    /// Pages (offset + limit) of every order, forwards and reversed, put
    /// together equal the whole answer: no gaps, no repeats (fsgui pages
    /// through a million matches this way).
    #[test]
    fn pages_fit_together_in_every_order() {
        let mut rows = vec![Change::Upsert(row(1, None, "/r", Kind::Dir))];
        for d in 0..7i64 {
            let dir = 10 + d * 100;
            rows.push(Change::Upsert(row(
                dir,
                Some(1),
                &format!("doc{}", d % 3),
                Kind::Dir,
            )));
            for f in 0..13i64 {
                // Repeated names and sizes: ties broken by id only.
                let mut r = row(
                    dir + 1 + f,
                    Some(dir),
                    &format!("note{}.txt", f % 4),
                    Kind::File,
                );
                r.size = (f % 5) as u64;
                r.mtime_ns = f % 3;
                rows.push(Change::Upsert(r));
            }
        }
        let mut s = Snapshot::default();
        s.apply(rows, None);
        for q in ["o", "note doc1", "!doc2 note"] {
            let q = Query::parse(q).unwrap();
            for sort in [
                Sort::Relevance,
                Sort::Name,
                Sort::Path,
                Sort::Size,
                Sort::Mtime,
            ] {
                for reverse in [false, true] {
                    let (total, all) = s.search(&q, sort, 0, reverse);
                    assert_eq!(all.len(), total);
                    for page in [1, 5, 16, 1000] {
                        let mut joined = Vec::new();
                        let mut offset = 0;
                        while offset < total + page {
                            let (t, found) = s.search_page(&q, sort, offset, page, reverse, None);
                            assert_eq!(t, total);
                            assert!(found.len() <= page);
                            joined.extend(found);
                            offset += page;
                        }
                        let ids = |v: &[Found]| v.iter().map(|f| f.id).collect::<Vec<_>>();
                        assert_eq!(
                            ids(&joined),
                            ids(&all),
                            "{sort:?} reverse={reverse} page={page}"
                        );
                    }
                    // Past the end: the total, no rows.
                    let (t, found) = s.search_page(&q, sort, total + 3, 10, reverse, None);
                    assert_eq!((t, found.len()), (total, 0));
                }
            }
        }
    }

    /// The trigram filter and the sparse spread must give exactly what a
    /// walk over every path gives, also after moves and removals.
    #[test]
    fn prefiltered_search_equals_a_path_oracle() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut rnd = |m: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % m
        };
        let syl = [
            "ab", "ra", "ca", "da", "Zan", "zi", "bar", "qu", "ok", "ka", "é", "X",
        ];
        let name = |rnd: &mut dyn FnMut(u64) -> u64| -> String {
            (0..1 + rnd(3))
                .map(|_| syl[rnd(syl.len() as u64) as usize])
                .collect()
        };
        let mut rows = vec![row(1, None, "/r", Kind::Dir)];
        let mut dirs = vec![1i64];
        for id in 2..3000i64 {
            let parent = dirs[rnd(dirs.len() as u64) as usize];
            let kind = if rnd(4) == 0 { Kind::Dir } else { Kind::File };
            if kind == Kind::Dir {
                dirs.push(id);
            }
            rows.push(row(id, Some(parent), &name(&mut rnd), kind));
        }
        let mut s = Snapshot::default();
        s.apply(rows.into_iter().map(Change::Upsert).collect(), None);
        let check = |s: &Snapshot, rnd: &mut dyn FnMut(u64) -> u64| {
            let all = paths(s, "!qqqqqq");
            for _ in 0..60 {
                let q: Vec<String> = (0..1 + rnd(2))
                    .map(|_| {
                        let t: String = (0..1 + rnd(3))
                            .map(|_| syl[rnd(syl.len() as u64) as usize])
                            .collect();
                        t.chars().skip(rnd(2) as usize).collect()
                    })
                    .filter(|t: &String| !t.is_empty())
                    .collect();
                if q.is_empty() {
                    continue;
                }
                let want: Vec<&String> = all
                    .iter()
                    .filter(|p| {
                        let rel = crate::queries::fold::fold_str(&p["/r/".len()..]).into_owned();
                        q.iter()
                            .all(|t| rel.contains(&*crate::queries::fold::fold_str(t)))
                    })
                    .collect();
                let got = paths(s, &q.join(" "));
                assert_eq!(got.iter().collect::<Vec<_>>(), want, "query {q:?}");
            }
        };
        check(&s, &mut rnd);
        // Moves (down and up the id order), renames, removals.
        for round in 0..400 {
            if round == 200 {
                // Only moves under lower ids so far: still ordered.
                assert!(s.ordered);
                check(&s, &mut rnd);
            }
            let id = 2 + rnd(2998) as i64;
            match rnd(3) {
                0 => {
                    let parent = dirs[rnd(dirs.len() as u64) as usize];
                    if round < 200 && parent >= id {
                        continue;
                    }
                    let mut up = parent as u32;
                    let mut cycle = false;
                    while up != NO_PARENT {
                        cycle |= up == id as u32 || s.kind[up as usize] == HOLE;
                        up = s.parent.get(up as usize);
                    }
                    if cycle {
                        continue;
                    }
                    s.apply(
                        vec![Change::Moved {
                            id,
                            parent_id: parent,
                            name: name(&mut rnd).into_bytes(),
                            subtree: Vec::new(),
                        }],
                        None,
                    );
                }
                1 if s.kind[id as usize] == Kind::File as u8 => {
                    s.apply(vec![Change::Removed(vec![id])], None)
                }
                1 => {}
                _ => {
                    let parent = s.parent.get(id as usize) as i64;
                    if s.kind[id as usize] != HOLE && parent != NO_PARENT as i64 {
                        let k = Kind::from_i64(s.kind[id as usize] as i64);
                        s.apply(
                            vec![Change::Upsert(row(id, Some(parent), &name(&mut rnd), k))],
                            None,
                        );
                    }
                }
            }
        }
        check(&s, &mut rnd);
        s.compact();
        s.build_hi();
        check(&s, &mut rnd);
    }

    /// `ext:`, `kind:` and the relevance order of the first results on a
    /// tree large enough for the trigram filter's blocks and the two-thread
    /// ranking, before and after renames, moves and removals, against
    /// answers the test works out name by name.
    #[test]
    fn filters_and_first_results_on_a_large_tree_equal_a_name_by_name_oracle() {
        let stems = [
            "ar",
            "report",
            "Bar_ar",
            "x",
            "caf\u{e9} ar",
            "IMG_",
            "Cargo",
            "car",
        ];
        let exts = [
            ".pdf", ".jpg", ".JPG", ".md", ".ai", ".tar.gz", ".c", "", ".pdf.bak", ".mp3", ".toml",
        ];
        let mut rows = vec![Change::Upsert(row(1, None, "/r", Kind::Dir))];
        let folders = 300i64;
        for f in 0..folders {
            let name = match f % 3 {
                0 => format!("archive {f}"),
                1 => format!("dir{f}"),
                _ => format!("Photos.jpg {f}"),
            };
            rows.push(Change::Upsert(row(
                2 + f,
                Some(1 + f / 2),
                &name,
                Kind::Dir,
            )));
        }
        let first_file = 2 + folders;
        let files = 70_000i64;
        for k in 0..files {
            let name = match k % 997 {
                0 => "ar".to_owned(),
                1 => "ar.txt".to_owned(),
                2 => ".pdf".to_owned(),
                3 => "Makefile".to_owned(),
                _ => format!(
                    "{}{k}{}",
                    stems[k as usize % stems.len()],
                    exts[k as usize / 7 % exts.len()]
                ),
            };
            let mut r = row(first_file + k, Some(2 + k % folders), &name, Kind::File);
            r.mtime_ns = (k * 7919 % 1000) - 10;
            rows.push(Change::Upsert(r));
        }
        let mut s = Snapshot::default();
        s.apply(rows, None);

        // Lists of thousands: say where they part.
        let same = |got: &[u32], want: &[u32], what: &str| {
            if let Some(k) = (0..got.len().max(want.len())).find(|&k| got.get(k) != want.get(k)) {
                panic!(
                    "{what}: {} results, {} wanted; first difference at {k}: {:?} for {:?}",
                    got.len(),
                    want.len(),
                    got.get(k),
                    want.get(k)
                );
            }
        };
        let check = |s: &Snapshot, when: &str| {
            let live: Vec<u32> = (0..s.id_bound() as u32)
                .filter(|&i| s.entry_kind(i).is_some() && s.entry_parent(i).is_some())
                .collect();
            let name = |i: u32| String::from_utf8_lossy(s.entry_folded_name(i)).into_owned();
            let file = |i: u32| s.entry_kind(i) != Some(Kind::Dir);
            let sorted = |q: &str| {
                let (_, found) = s.search(&Query::parse(q).unwrap(), Sort::Path, 0, false);
                let mut ids: Vec<u32> = found.into_iter().map(|f| f.id).collect();
                ids.sort_unstable();
                ids
            };
            // A filter's answer against the live entries it should keep.
            let agrees = |q: &str, keep: &dyn Fn(u32) -> bool| {
                let want: Vec<u32> = live.iter().copied().filter(|&i| keep(i)).collect();
                assert!(!want.is_empty(), "{when}: {q}");
                same(&sorted(q), &want, &format!("{when}: {q}"));
            };
            for e in ["pdf", "ai", "c", "gz", "bak"] {
                agrees(&format!("ext:{e}"), &|i| {
                    let n = name(i);
                    file(i) && n.len() > e.len() + 1 && n.ends_with(&format!(".{e}"))
                });
            }
            for (k, class) in [
                ("image", KindClass::Image),
                ("code", KindClass::Code),
                ("archive", KindClass::Archive),
                ("audio", KindClass::Audio),
                ("text", KindClass::Text),
            ] {
                agrees(&format!("kind:{k}"), &|i| {
                    file(i) && kind_of(&name(i), false) == Some(class)
                });
            }
            // Relevance, worked out here: own-name terms, whole name (or
            // stem), whole words, depth, newer, id.
            let word = |n: &str, t: &str| {
                n.match_indices(t).any(|(at, m)| {
                    !n[..at]
                        .chars()
                        .next_back()
                        .is_some_and(char::is_alphanumeric)
                        && !n[at + m.len()..]
                            .chars()
                            .next()
                            .is_some_and(char::is_alphanumeric)
                })
            };
            let depth = |mut i: u32| {
                let mut d = 0u16;
                while let Some(p) = s.entry_parent(i) {
                    d += 1;
                    i = p;
                }
                d
            };
            for q in ["ar", "ar car", "x", "img_ jpg", "2", "archive", "dir1"] {
                let terms: Vec<&str> = q.split(' ').collect();
                let below_root = |mut i: u32, t: &str| loop {
                    if s.entry_parent(i).is_none() {
                        return false;
                    }
                    if name(i).contains(t) {
                        return true;
                    }
                    i = s.entry_parent(i).unwrap();
                };
                let mut want: Vec<(_, u32)> = live
                    .iter()
                    .copied()
                    .filter(|&i| terms.iter().all(|t| below_root(i, t)))
                    .map(|i| {
                        let n = name(i);
                        let own: Vec<&str> =
                            terms.iter().copied().filter(|t| n.contains(t)).collect();
                        let whole = own
                            .iter()
                            .map(|t| match n.rsplit_once('.') {
                                _ if n == *t => 2,
                                Some((stem, _)) if !stem.is_empty() && stem == *t => 1,
                                _ => 0,
                            })
                            .max()
                            .unwrap_or(0);
                        let words = own.iter().filter(|t| word(&n, t)).count();
                        let key = (
                            Reverse(own.len()),
                            Reverse(whole),
                            Reverse(words),
                            depth(i),
                            Reverse(s.entry_mtime_ns(i)),
                        );
                        (key, i)
                    })
                    .collect();
                want.sort();
                let want: Vec<u32> = want.into_iter().map(|(_, i)| i).collect();
                let query = Query::parse(q).unwrap();
                // Every result kept (counted in the bit set, the page
                // ranked from the names that own the terms), kept by a
                // filter that passes all (listed, then ranked), and kept by
                // one that drops every third id.
                let third = |i: u32| !i.is_multiple_of(3);
                for (keeps, (offset, limit, reverse)) in [0, 1, 2].into_iter().flat_map(|k| {
                    [(0, 100, false), (50, 100, false), (0, 100, true)].map(|page| (k, page))
                }) {
                    let (mut all, mut some) = (|_: u32| true, third);
                    let keep: Keep<'_> = match keeps {
                        0 => None,
                        1 => Some(&mut all),
                        _ => Some(&mut some),
                    };
                    let (total, got) =
                        s.search_page(&query, Sort::Relevance, offset, limit, reverse, keep);
                    let want: Vec<u32> = want
                        .iter()
                        .copied()
                        .filter(|&i| keeps < 2 || third(i))
                        .collect();
                    assert_eq!(total, want.len(), "{when}: {q}, keep {keeps}");
                    let got: Vec<u32> = got.into_iter().map(|f| f.id).collect();
                    let expect: Vec<u32> = if reverse {
                        want.iter()
                            .rev()
                            .skip(offset)
                            .take(limit)
                            .copied()
                            .collect()
                    } else {
                        want.iter().skip(offset).take(limit).copied().collect()
                    };
                    assert_eq!(
                        got, expect,
                        "{when}: {q} from {offset}, reverse {reverse}, keep {keeps}"
                    );
                }
            }
        };
        check(&s, "as loaded");
        assert!(
            s.search(&Query::parse("ar").unwrap(), Sort::Relevance, 1, false)
                .0
                >= PARALLEL_KEYS,
            "enough results for two threads"
        );

        // Renames (to other extensions and kinds), moves, removals.
        let mut changes = Vec::new();
        for k in (0..files).step_by(13) {
            let id = first_file + k;
            let name = format!(
                "{}{k}{}",
                stems[(k as usize + 3) % stems.len()],
                exts[k as usize % exts.len()]
            );
            changes.push(Change::Moved {
                id,
                parent_id: 2 + (k * 7) % folders,
                name: name.into_bytes(),
                subtree: Vec::new(),
            });
        }
        changes.push(Change::Removed(
            (0..files).step_by(11).map(|k| first_file + k).collect(),
        ));
        s.apply(changes, None);
        check(&s, "after renames");
        s.compact();
        check(&s, "compacted");
    }

    #[test]
    fn galloping_membership_equals_a_binary_search() {
        let list: Vec<u32> = (0..5000u32).filter(|x| x % 7 == 0 || x % 11 == 3).collect();
        for stride in [1, 2, 5, 13, 97, 1000] {
            let mut c = 0;
            for i in (0..5100u32).step_by(stride) {
                assert_eq!(
                    holds(&list, &mut c, i),
                    list.binary_search(&i).is_ok(),
                    "{i}"
                );
                assert_eq!(c, list.partition_point(|&x| x < i), "cursor at {i}");
            }
        }
        assert!(!holds(&[], &mut 0, 3));
        let lists = [vec![3, 50, 299, 301], vec![1, 3, 4, 299]];
        assert_eq!(owning_all(&lists, |i| i < 300), [3, 299]);
        assert_eq!(owning_all(&[], |_| true), Vec::<u32>::new());
    }

    #[test]
    fn whole_names_rank_above_names_that_contain_the_term() {
        assert_eq!(name_match(b"cargo.toml", b"cargo.toml"), 2);
        assert_eq!(name_match(b"cargo.toml.orig", b"cargo.toml"), 1);
        assert_eq!(name_match(b"readme.md", b"readme"), 1);
        assert_eq!(name_match(b"my readme.md", b"readme"), 0);
        assert_eq!(name_match(b".bashrc", b""), 0);
    }

    /// The byte scan answers as the decoded one (which the tests below
    /// pin by hand) on names and terms that probe its shortcuts.
    #[test]
    fn word_matches_on_bytes_equal_the_decoded_ones() {
        let names: [&[u8]; 16] = [
            b"tax 2025.pdf",
            b"taxes",
            b"my_tax",
            b"b-a-a-",
            b"aaa",
            b"a-a-a",
            b"caf\xc3\xa9 ar",
            b"\xc3\xa9ar",
            b"ar\xc3\xa9",
            b"bar_ar",
            b"ar\xff",
            b"\xff ar",
            b"ar",
            b"",
            b"x-ar-y.ar",
            b"\xe2\x80\x94ar\xe2\x80\x94",
        ];
        let terms: [&[u8]; 9] = [
            b"ar",
            b"tax",
            b"-a-",
            b"aa",
            b"a",
            b"caf\xc3\xa9",
            b"\xc3\xa9",
            b"2025",
            b"ar.",
        ];
        for name in names {
            for term in terms {
                assert_eq!(
                    is_word_match(name, term),
                    is_word_match_decoded(name, term),
                    "{:?} in {:?}",
                    String::from_utf8_lossy(term),
                    String::from_utf8_lossy(name)
                );
                // Marking passes the term's first place in the name.
                if let Some(first) = memmem::find(name, term) {
                    assert_eq!(fit_from(name, term, first), fit(name, term));
                }
            }
        }
        // Letters that are not ASCII are not boundaries.
        assert!(!is_word_match(b"\xc3\xa9ar", b"ar"));
        assert!(is_word_match(b"\xe2\x80\x94ar\xe2\x80\x94", b"ar"));
        assert!(!is_word_match(b"\xff ar", b"ar"));
    }

    #[test]
    fn word_matches() {
        assert!(is_word_match(b"tax 2025.pdf", b"2025"));
        assert!(!is_word_match(b"taxes", b"tax"));
        assert!(is_word_match(b"my_tax", b"tax"));
    }
}
