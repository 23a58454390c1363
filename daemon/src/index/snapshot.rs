//! The snapshot: every entry's parent, kind, size, mtime and folded and
//! original name in compact columns, loaded from SQLite and then given
//! every change the writer commits ([`Snapshot::apply`]), compacted as it
//! grows. Read-only views of single entries serve the queries.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::sync::{RwLock, RwLockReadGuard};

use rusqlite::Connection;

use crate::index::events::{ChangeEvent, ChangeKind};
use crate::index::fold::fold_bytes;
use crate::index::grams::{GRAM_BLOCK, Grams};
use crate::index::kinds::name_class;
use crate::index::slots::{Offsets, Parents, Slots};
use crate::store::{Change, EntryRow, Kind};
use crate::{Error, RwLockOk};

pub(crate) const NO_PARENT: u32 = u32::MAX;
/// `kind` of an id that has no entry (deleted rows leave holes).
pub(crate) const HOLE: u8 = u8::MAX;
/// Separates names in the folded arena. It cannot occur in a file name, so a
/// term without `/` never matches across two names.
pub(crate) const SEP: u8 = b'/';
/// `orig_at` value for a name blanked since it was given a slot.
pub(crate) const SAME: u32 = u32::MAX;
/// Header bit of an original name kept as case runs (see [`push_orig`]).
pub(crate) const RUNS: u16 = 0x8000;

/// Appends entry's original name to `orig`, after a u16 header. A name
/// that differs from its folded form only in ASCII capitals (`README.md`,
/// `IMG_0042.JPG`, `Café`) is kept as the runs of capitals over the folded
/// bytes: (bytes to skip, bytes to capitalise) pairs of u8, header
/// `RUNS | pair bytes`. Any other is kept whole, header its length (up to
/// 32,767). On the bench tree a quarter of the names differ, nearly all
/// in case only: 4.6 MiB whole, 1.2 MiB as runs.
pub(crate) fn push_orig(orig: &mut Vec<u8>, name: &[u8], folded: &[u8]) {
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
pub(crate) enum Orig<'a> {
    /// Equal to the folded name.
    Same,
    Whole(&'a [u8]),
    /// The folded name with these capitals (see [`push_orig`]).
    Runs(&'a [u8]),
}

/// Capitalises the runs (pairs of bytes to skip, bytes to capitalise) of
/// a folded name, giving back the original.
#[inline]
pub(crate) fn capitalise(name: &mut [u8], runs: &[u8]) {
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
pub(crate) const BIG: u32 = u32::MAX;

/// A relocated name: (folded, original).
pub(crate) type Relocated = (Box<[u8]>, Box<[u8]>);

/// A searchable copy of the entry tree, kept equal to the index by the
/// writer (loaded before its first commit, then given every commit).
pub struct Snapshot {
    pub(crate) parent: Parents,
    pub(crate) kind: Vec<u8>,
    /// Sizes below 4 GiB; [`BIG`] for the rest, which are in `big`.
    pub(crate) size: Vec<u32>,
    pub(crate) big: HashMap<u32, u64>,
    pub(crate) mtime: Vec<i64>,
    /// Entry i's kind for `kind:` by its name, in half a byte
    /// (`classes[i / 2] >> (i % 2 * 4)`): 0 for none, else 1 + its
    /// [`KindClass`]. Kept for every name, used for all but folders
    /// (whose kind is their own): `kind:image` reads half a byte an entry
    /// instead of each name.
    pub(crate) classes: Vec<u8>,
    /// `folded[fold_at(i)..fold_at(i + 1) - 1]` is entry i's folded name;
    /// each name is followed by [`SEP`]. Roots' own folders have empty names:
    /// matching is on the path relative to the root.
    pub(crate) fold_at: Offsets,
    pub(crate) folded: Vec<u8>,
    /// The entries whose original name differs from the folded one (a
    /// quarter of them on the bench tree), each with a slot in `orig_at`:
    /// the offset into `orig` of a u16 length and the original bytes, or
    /// [`SAME`] once blanked.
    pub(crate) origs: Slots,
    pub(crate) orig_at: Vec<u32>,
    pub(crate) orig: Vec<u8>,
    pub(crate) entries: usize,
    /// Names that no longer sit at their id's place in the arena (an entry
    /// renamed, or an id below the arena's end given a name): folded and
    /// original. Compacted back into the arena when it grows.
    pub(crate) relocated: HashMap<u32, Relocated>,
    /// Arena bytes of removed or relocated names.
    pub(crate) garbage: usize,
    /// Bumped by every [`Snapshot::apply`]: equal values mean nothing
    /// changed (a search that let go of the snapshot while its reader was
    /// slow checks it).
    pub(crate) generation: u64,
    /// A pre-filter over the arena: per block of [`GRAM_BLOCK`] ids, a
    /// hashed set of the trigrams of its names. A term of 3+ bytes is only
    /// searched for in blocks holding all of its trigrams, so a rare term
    /// or one that matches nothing skips nearly all of the arena. It only
    /// ever gains bits (a removed name leaves its own: a false positive
    /// costs a scan, never a wrong answer) and is rebuilt by `compact`.
    pub(crate) grams: Grams,
    /// Folders (and any entry given children), each with a slot in `hi`
    /// and `depth`; other entries have no descendants and are one deeper
    /// than their parent. 6 bytes a folder instead of 6 an entry.
    pub(crate) dirs: Slots,
    /// `hi[slot of i]`: no descendant of entry i has an id above it. Lets a
    /// term that marks few entries spread to their subtrees without a pass
    /// over every entry. Meaningful while `ordered`.
    pub(crate) hi: Vec<u32>,
    /// `depth[slot of i]`: entry i's number of ancestors (saturating).
    pub(crate) depth: Vec<u16>,
    /// Every entry's id is above its parent's (true after a walk; a move
    /// under a folder with a higher id clears it until the next load).
    pub(crate) ordered: bool,
    /// Holds the index (loaded from it, or marked so when loading failed):
    /// until then it is empty, and no answer may be taken from it.
    pub(crate) loaded: bool,
    /// Changes whenever a folder is added, removed, renamed or moved (or
    /// the snapshot is loaded afresh); never goes back, across snapshots.
    pub(crate) layout: u64,
    /// First pages of queries of one short term (a lone character or a
    /// pair), each for the [`generation`](Self::generation) it was worked
    /// out at (the search keeps them: `queries::search::lone`).
    pub(crate) memo: Memo,
    /// The names with a byte above ASCII whose bare form differs (the only
    /// ones `accents:ignore` strips; the side table's too), with those bare
    /// forms, for
    /// the [`generation`](Self::generation) they were found at: found by
    /// the first such search after a change (a pass over the arena) instead
    /// of by every one. Forgotten whenever the arena changes.
    pub(crate) accented: Accented,
    /// Commits applied and whether one waits (see [`super::quiet`]): one
    /// for the daemon's life, carried over when the snapshot is loaded.
    pub(crate) commits: std::sync::Arc<super::quiet::Commits>,
}

/// [`Snapshot::memo`]: (the term's bytes as a `queries::search::ShortKey`,
/// accents ignored, generation, number of results, the first ids in order).
pub(crate) type Memo = std::sync::Mutex<Vec<(u16, bool, u64, usize, Vec<u32>)>>;

/// [`Snapshot::accented`]: (generation, names).
pub(crate) type Accented = std::sync::Mutex<Option<(u64, std::sync::Arc<AccentedNames>)>>;

/// The accented names (see [`Snapshot::accented`]): their ids, ascending,
/// and each one's bare form.
#[derive(Debug, Default)]
pub(crate) struct AccentedNames {
    pub(crate) ids: Vec<u32>,
    /// `bare[at[k]..at[k + 1]]` is the bare form of `ids[k]`'s name.
    pub(crate) at: Vec<u32>,
    pub(crate) bare: Vec<u8>,
}

impl AccentedNames {
    /// The bare form of the `k`th name.
    #[inline]
    pub(crate) fn bare_of(&self, k: usize) -> &[u8] {
        &self.bare[self.at[k] as usize..self.at[k + 1] as usize]
    }

    /// The bare form of entry `id`'s name, when it is accented.
    #[inline]
    pub(crate) fn bare_name(&self, id: u32) -> Option<&[u8]> {
        self.ids.binary_search(&id).ok().map(|k| self.bare_of(k))
    }

    pub(crate) fn bytes(&self) -> usize {
        self.ids.capacity() * 4 + self.at.capacity() * 4 + self.bare.capacity()
    }
}

/// The last [`Snapshot::layout`] handed out.
pub(crate) static LAYOUT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

pub(crate) fn next_layout() -> u64 {
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
            generation: 0,
            grams: Grams::default(),
            dirs: Slots::default(),
            hi: Vec::new(),
            depth: Vec::new(),
            ordered: true,
            loaded: false,
            layout: next_layout(),
            memo: Memo::default(),
            accented: Accented::default(),
            commits: Default::default(),
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
        let (max_id, count) = crate::store::entries::id_bound_and_count(conn)?;
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
            generation: 0,
            grams: Grams::default(),
            dirs: Slots::default(),
            hi: Vec::new(),
            depth: Vec::new(),
            ordered: true,
            loaded: false,
            layout: next_layout(),
            memo: Memo::default(),
            accented: Accented::default(),
            commits: Default::default(),
        };
        let mut next = 0usize;
        crate::store::entries::each_by_id(conn, |r| {
            let id = r.id as usize;
            while next < id {
                s.fold_at.push(s.folded.len() as u32);
                s.folded.push(SEP);
                s.origs.push(false);
                s.dirs.push(false);
                next += 1;
            }
            let name = r.name;
            s.kind[id] = r.kind as u8;
            s.set_size(id, r.size as u64);
            s.mtime[id] = r.mtime_ns;
            s.fold_at.push(s.folded.len() as u32);
            // A root's own folder's stored name is its absolute path, kept
            // whole; its folded name is empty.
            let folded = match r.parent_id {
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
        })?;
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
    pub(crate) fn build_grams(&mut self) {
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
    pub(crate) fn build_hi(&mut self) {
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
    pub(crate) fn hi_of(&self, i: u32) -> u32 {
        match self.dirs.get(i as usize) {
            Some(slot) => self.hi[slot].max(i),
            None => i,
        }
    }

    /// Entry i's slot in `hi` and `depth`, given one if it has none (an
    /// entry that was not a folder when it came).
    pub(crate) fn dir_slot(&mut self, i: u32) -> usize {
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
    pub(crate) fn attach(&mut self, i: u32, parent: u32, top: u32) {
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
    #[inline]
    pub(crate) fn depth_of(&self, mut i: u32) -> u16 {
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
    #[inline]
    pub(crate) fn depth_from_parent(&self, i: u32) -> u16 {
        match self.parent.get(i as usize) {
            NO_PARENT => 0,
            p => self.depth_of(p).saturating_add(1),
        }
    }

    /// Sets a folder's kept depth after it moved (others derive theirs).
    pub(crate) fn refresh_depth(&mut self, i: u32) {
        if let Some(slot) = self.dirs.get(i as usize) {
            self.depth[slot] = self.depth_from_parent(i);
        }
    }

    /// Number of entries (roots' own folders included).
    #[inline]
    pub fn len(&self) -> usize {
        self.entries
    }

    #[inline]
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
            + self
                .accented
                .lock()
                .ok()
                .and_then(|a| a.as_ref().map(|(_, names)| names.bytes()))
                .unwrap_or(0)
            + self.relocated.capacity() * (std::mem::size_of::<(u32, Relocated)>() + 1)
            + self
                .relocated
                .values()
                .map(|(a, b)| a.len() + b.len())
                .sum::<usize>()
    }

    #[inline]
    pub(crate) fn folded_name(&self, i: usize) -> &[u8] {
        if !self.relocated.is_empty()
            && let Some((folded, _)) = self.relocated.get(&(i as u32))
        {
            return folded;
        }
        let (start, end) = self.fold_at.span(i);
        &self.folded[start..end - 1]
    }

    /// Entry i's original name: borrowed, or rebuilt from its case runs.
    #[inline]
    pub(crate) fn name(&self, i: usize) -> Cow<'_, [u8]> {
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
    #[inline]
    pub(crate) fn push_name_to(&self, i: usize, out: &mut Vec<u8>) {
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
    pub(crate) fn orig_of(&self, i: usize) -> Orig<'_> {
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
        self.generation = self.generation.wrapping_add(1);
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

    pub(crate) fn upsert(&mut self, row: EntryRow) {
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
    pub(crate) fn push(
        &mut self,
        parent: u32,
        kind: u8,
        size: u64,
        mtime: i64,
        folded: &[u8],
        orig: &[u8],
    ) {
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
        self.forget_accented();
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

    pub(crate) fn remove(&mut self, i: usize) {
        if i >= self.kind.len() || self.kind[i] == HOLE {
            return;
        }
        self.kind[i] = HOLE;
        self.entries -= 1;
        self.blank(i);
    }

    /// Makes entry i's arena slot match nothing (a term never contains SEP).
    pub(crate) fn blank(&mut self, i: usize) {
        self.relocated.remove(&(i as u32));
        let (start, end) = (self.fold_at.get(i), self.fold_at.get(i + 1) - 1);
        if self.folded[start..end].iter().any(|&b| b != SEP) {
            self.forget_accented();
            self.folded[start..end].fill(SEP);
            self.garbage += end - start;
        }
        if let Some(slot) = self.origs.get(i) {
            self.orig_at[slot] = SAME;
        }
    }

    /// The arena changed: [`Snapshot::accented`] is found again when next
    /// asked for.
    fn forget_accented(&mut self) {
        *self.accented.get_mut().unwrap_or_else(|e| e.into_inner()) = None;
    }

    /// Rebuilds the arenas without removed and relocated names.
    pub(crate) fn compact(&mut self) {
        self.forget_accented();
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
}

/// Read-only views of single entries, for other query modules (`fsmap`).
/// Ids run from 0 to [`Snapshot::id_bound`]; holes answer `None`.
impl Snapshot {
    /// Changes so far: equal values mean an unchanged index.
    #[inline]
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// The commits applied to this index (see [`super::quiet`]).
    pub fn commits(&self) -> std::sync::Arc<super::quiet::Commits> {
        self.commits.clone()
    }

    /// See the field: equal values mean the same folders at the same places.
    #[inline]
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

    /// Visits every entry below folder `top` (not `top` itself), each after
    /// its parent: `visit(entry, parent)` says, for a folder, whether to go
    /// into it. Like [`walk_folders`](Self::walk_folders), one pass over
    /// `top`'s id range while ids run parents-first.
    pub fn walk_below(&self, top: u32, visit: &mut dyn FnMut(u32, u32) -> bool) {
        const DIR: u8 = Kind::Dir as u8;
        if self.kind.get(top as usize) != Some(&DIR) {
            return;
        }
        if self.ordered {
            let mut entered: HashSet<u32> = HashSet::from([top]);
            for j in top + 1..=self.hi_of(top) {
                let k = self.kind[j as usize];
                let p = self.parent.get(j as usize);
                if k == HOLE || !entered.contains(&p) {
                    continue;
                }
                if visit(j, p) && k == DIR {
                    entered.insert(j);
                }
            }
            return;
        }
        let mut children: HashMap<u32, Vec<u32>> = HashMap::new();
        for (j, &k) in self.kind.iter().enumerate() {
            let p = self.parent.get(j);
            if k != HOLE && p != NO_PARENT {
                children.entry(p).or_default().push(j as u32);
            }
        }
        let mut stack = vec![top];
        while let Some(d) = stack.pop() {
            for c in children.remove(&d).unwrap_or_default() {
                if visit(c, d) && self.kind[c as usize] == DIR {
                    stack.push(c);
                }
            }
        }
    }

    /// One past the largest id.
    #[inline]
    pub fn id_bound(&self) -> usize {
        self.parent.len()
    }

    /// The entry's kind, or `None` for an id without an entry.
    #[inline]
    pub fn entry_kind(&self, i: u32) -> Option<Kind> {
        match self.kind.get(i as usize) {
            None | Some(&HOLE) => None,
            Some(&k) => Some(Kind::from_i64(k as i64)),
        }
    }

    /// The parent's id; `None` for a root's own folder.
    #[inline]
    pub fn entry_parent(&self, i: u32) -> Option<u32> {
        match self.parent.get(i as usize) {
            NO_PARENT => None,
            p => Some(p),
        }
    }

    #[inline]
    pub fn entry_mtime_ns(&self, i: u32) -> i64 {
        self.mtime[i as usize]
    }

    #[inline]
    pub fn entry_size(&self, i: u32) -> u64 {
        self.size_of(i as usize)
    }

    #[inline]
    pub(crate) fn size_of(&self, i: usize) -> u64 {
        match self.size[i] {
            BIG => self.big.get(&(i as u32)).copied().unwrap_or(BIG as u64),
            s => s as u64,
        }
    }

    /// Entry i's class code (see [`Snapshot::classes`]).
    #[inline]
    pub(crate) fn class_of(&self, i: usize) -> u8 {
        self.classes.get(i / 2).map_or(0, |b| b >> (i % 2 * 4) & 15)
    }

    #[inline]
    pub(crate) fn set_class(&mut self, i: usize, folded: &[u8]) {
        if self.classes.len() <= i / 2 {
            self.classes.resize(i / 2 + 1, 0);
        }
        let shift = i % 2 * 4;
        self.classes[i / 2] = self.classes[i / 2] & !(15 << shift) | name_class(folded) << shift;
    }

    #[inline]
    pub(crate) fn set_size(&mut self, i: usize, size: u64) {
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

    #[inline]
    pub fn entry_depth(&self, i: u32) -> u16 {
        self.depth_of(i)
    }

    /// The entry's name, byte-exact (a root's own folder: its absolute path).
    #[inline]
    pub fn entry_name(&self, i: u32) -> Cow<'_, [u8]> {
        self.name(i as usize)
    }

    /// The entry's name in NFC with full case folding.
    #[inline]
    pub fn entry_folded_name(&self, i: u32) -> &[u8] {
        self.folded_name(i as usize)
    }
}
