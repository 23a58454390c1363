//! Compact columns of the search snapshot, each read in O(1):
//!
//! - [`Slots`]: which ids have a slot in a side table, and which slot: a
//!   bitmap with the count of set bits before each word, so that id i's
//!   slot is one popcount away. A value that only some entries need (a
//!   folder's descendant range, a name's original bytes) then costs 0.19
//!   bytes an entry plus its own size for the entries that have it.
//! - [`Offsets`]: where each name starts in the arena, 2 bytes an entry.
//! - [`Parents`]: each entry's parent as the distance back, 2 bytes an entry.
//!
//! Values that do not fit the small form are kept whole on the side.

/// The slot map over ids `0..len`. Slots are numbered in id order.
#[derive(Debug, Default)]
pub struct Slots {
    bits: Vec<u64>,
    /// `before[w]`: set bits in words `0..w`.
    before: Vec<u32>,
    len: usize,
    count: usize,
}

impl Slots {
    /// Ids covered (one past the largest).
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Slots handed out.
    #[cfg(test)]
    pub fn count(&self) -> usize {
        self.count
    }

    /// Covers one more id (the current `len`), with a slot when `slot`;
    /// returns that slot (the last).
    pub fn push(&mut self, slot: bool) -> Option<usize> {
        let (w, b) = (self.len / 64, self.len % 64);
        if b == 0 {
            self.bits.push(0);
            self.before.push(self.count as u32);
        }
        self.len += 1;
        if !slot {
            return None;
        }
        self.bits[w] |= 1 << b;
        self.count += 1;
        Some(self.count - 1)
    }

    /// Id i's slot, if it has one.
    #[inline(always)]
    pub fn get(&self, i: usize) -> Option<usize> {
        if i >= self.len {
            return None;
        }
        let (w, b) = (i / 64, i % 64);
        let word = self.bits[w];
        if word >> b & 1 == 0 {
            return None;
        }
        Some(self.before[w] as usize + (word & ((1u64 << b) - 1)).count_ones() as usize)
    }

    /// Gives id i (below `len`, without a slot) a slot, and returns it: the
    /// caller inserts its value at that place in its table. Costs a pass
    /// over the words after i's.
    pub fn insert(&mut self, i: usize) -> usize {
        debug_assert!(i < self.len && self.get(i).is_none());
        let (w, b) = (i / 64, i % 64);
        self.bits[w] |= 1 << b;
        for n in &mut self.before[w + 1..] {
            *n += 1;
        }
        self.count += 1;
        self.get(i).expect("just set")
    }

    pub fn bytes(&self) -> usize {
        self.bits.capacity() * 8 + self.before.capacity() * 4
    }

    pub fn shrink_to_fit(&mut self) {
        self.bits.shrink_to_fit();
        self.before.shrink_to_fit();
    }
}

/// A rising sequence of offsets (where each name starts in an arena) in
/// 2 bytes an entry: a u32 base per 64 entries and a u16 from it. An offset
/// too far from its base (64 names of more than 1 KiB each) is kept whole
/// on the side.
#[derive(Debug, Default)]
pub struct Offsets {
    base: Vec<u32>,
    delta: Vec<u16>,
    far: std::collections::HashMap<u32, u32>,
}

/// `delta` of an offset kept in `far`.
const FAR: u16 = u16::MAX;

impl Offsets {
    pub fn with_capacity(n: usize) -> Offsets {
        Offsets {
            base: Vec::with_capacity(n.div_ceil(64)),
            delta: Vec::with_capacity(n),
            far: Default::default(),
        }
    }

    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.delta.len()
    }

    /// Appends an offset, no smaller than the last.
    pub fn push(&mut self, at: u32) {
        let i = self.delta.len();
        if i.is_multiple_of(64) {
            self.base.push(at);
        }
        let d = at - self.base[i / 64];
        if d < FAR as u32 {
            self.delta.push(d as u16);
        } else {
            self.delta.push(FAR);
            self.far.insert(i as u32, at);
        }
    }

    #[inline(always)]
    pub fn get(&self, i: usize) -> usize {
        match self.delta[i] {
            FAR => self.far[&(i as u32)] as usize,
            d => self.base[i / 64] as usize + d as usize,
        }
    }

    /// `get(i)..get(i + 1)`, reading the shared base once when both are in
    /// one block.
    #[inline(always)]
    pub fn span(&self, i: usize) -> (usize, usize) {
        let (a, b) = (self.delta[i], self.delta[i + 1]);
        if a != FAR && b != FAR && !(i + 1).is_multiple_of(64) {
            let base = self.base[i / 64] as usize;
            return (base + a as usize, base + b as usize);
        }
        (self.get(i), self.get(i + 1))
    }

    /// The first index in `from..=to` whose offset is above `at`, less one:
    /// the entry whose span holds offset `at` (`get(from) <= at`).
    pub fn holder(&self, from: usize, to: usize, at: usize) -> usize {
        let (mut lo, mut hi) = (from, to + 1);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if self.get(mid) <= at {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo - 1
    }

    pub fn bytes(&self) -> usize {
        self.base.capacity() * 4 + self.delta.capacity() * 2 + self.far.capacity() * 9
    }

    pub fn shrink_to_fit(&mut self) {
        self.base.shrink_to_fit();
        self.delta.shrink_to_fit();
        self.far.shrink_to_fit();
    }
}

/// Every entry's parent id, in 2 bytes an entry: how far back it is
/// (`i - parent`), which a walk makes small (its children come soon after a
/// folder: under 65,535 ids for all but 827 of a million entries on the
/// bench tree). A parent further back, or after its child (a move), is
/// kept whole on the side.
#[derive(Debug, Default)]
pub struct Parents {
    back: Vec<u16>,
    far: std::collections::HashMap<u32, u32>,
}

/// `back` of an entry without a parent (a root's own folder, a hole).
const NONE: u16 = 0;
/// `back` of an entry whose parent is in `far`.
const FAR_BACK: u16 = u16::MAX;

impl Parents {
    /// The value `get` gives for no parent.
    pub const NO_PARENT: u32 = u32::MAX;

    pub fn filled(n: usize) -> Parents {
        Parents {
            back: vec![NONE; n],
            far: Default::default(),
        }
    }

    pub fn len(&self) -> usize {
        self.back.len()
    }

    #[inline(always)]
    pub fn get(&self, i: usize) -> u32 {
        match self.back[i] {
            NONE => Self::NO_PARENT,
            FAR_BACK => self.far[&(i as u32)],
            d => i as u32 - d as u32,
        }
    }

    pub fn set(&mut self, i: usize, parent: u32) {
        if self.back[i] == FAR_BACK {
            self.far.remove(&(i as u32));
        }
        self.back[i] = if parent == Self::NO_PARENT {
            NONE
        } else if (parent as usize) < i && i - (parent as usize) < FAR_BACK as usize {
            (i - parent as usize) as u16
        } else {
            self.far.insert(i as u32, parent);
            FAR_BACK
        };
    }

    /// Appends entry `len()` with this parent.
    pub fn push(&mut self, parent: u32) {
        self.back.push(NONE);
        self.set(self.back.len() - 1, parent);
    }

    pub fn bytes(&self) -> usize {
        self.back.capacity() * 2 + self.far.capacity() * 9
    }

    pub fn shrink_to_fit(&mut self) {
        self.back.shrink_to_fit();
        self.far.shrink_to_fit();
    }
}

/// Merges `added` (ascending ids, none of them in `ids`) into the
/// ascending `ids` and, when given, the values kept beside them, in place:
/// both lists grow by `added.len()` and are filled from the back, each slot
/// written once after what it held has moved up. Merging through a list of
/// pairs held the lists three times over (the media worker's state, a lone
/// letter's marks).
pub(crate) fn merge_sorted_in_place<V: Copy + Default>(
    ids: &mut Vec<u32>,
    mut vals: Option<&mut Vec<V>>,
    added: &[(u32, V)],
) {
    let (old, n) = (ids.len(), added.len());
    if n == 0 {
        return;
    }
    ids.reserve_exact(n);
    ids.resize(old + n, 0);
    if let Some(v) = vals.as_deref_mut() {
        v.reserve_exact(n);
        v.resize(old + n, V::default());
    }
    let (mut a, mut b) = (old, n);
    while b > 0 {
        let to = a + b - 1;
        let (id, val) = if a > 0 && ids[a - 1] > added[b - 1].0 {
            a -= 1;
            (ids[a], vals.as_deref().map(|v| v[a]))
        } else {
            b -= 1;
            (added[b].0, Some(added[b].1))
        };
        ids[to] = id;
        if let (Some(v), Some(val)) = (vals.as_deref_mut(), val) {
            v[to] = val;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_follow_id_order_through_pushes_and_inserts() {
        let mut s = Slots::default();
        // Ids 0..300 with a slot for every 7th: an independent list says
        // which slot each should have.
        let mut with: Vec<usize> = Vec::new();
        for i in 0..300 {
            let got = s.push(i % 7 == 0);
            if i % 7 == 0 {
                assert_eq!(got, Some(with.len()));
                with.push(i);
            } else {
                assert_eq!(got, None);
            }
        }
        let check = |s: &Slots, with: &[usize]| {
            for i in 0..s.len() + 70 {
                assert_eq!(s.get(i), with.iter().position(|&x| x == i), "id {i}");
            }
            assert_eq!(s.count(), with.len());
        };
        check(&s, &with);
        // Inserted ids, in and across words, the first and the last.
        for i in [1, 62, 64, 150, 299, 2] {
            let slot = s.insert(i);
            with.push(i);
            with.sort_unstable();
            assert_eq!(Some(slot), with.iter().position(|&x| x == i));
            check(&s, &with);
        }
        assert_eq!(s.len(), 300);
    }

    #[test]
    fn offsets_give_back_what_was_pushed_near_and_far() {
        let mut o = Offsets::default();
        let mut want = Vec::new();
        let mut at = 0u32;
        for i in 0..500u32 {
            // Mostly short names; a run of very long ones overflows a
            // block's u16, and a gap of millions crosses blocks.
            at += match i {
                100..=180 => 3000,
                300 => 5_000_000,
                _ => i % 17,
            };
            o.push(at);
            want.push(at as usize);
        }
        assert_eq!(o.len(), 500);
        for (i, &w) in want.iter().enumerate() {
            assert_eq!(o.get(i), w, "offset {i}");
        }
        // holder: the last index at or before each probed offset.
        for probe in [0, 1, 50, 3000, 250_000, 5_000_000, 5_300_000] {
            for (from, to) in [(0, 499), (64, 200), (290, 310)] {
                if want[from] > probe {
                    continue;
                }
                let expect = (from..=to).rev().find(|&k| want[k] <= probe).unwrap();
                assert_eq!(
                    o.holder(from, to, probe),
                    expect,
                    "{probe} in {from}..={to}"
                );
            }
        }
    }

    #[test]
    fn parents_near_far_later_and_none_round_trip() {
        let none = Parents::NO_PARENT;
        let want: Vec<u32> = (0..200_000u32)
            .map(|i| match i % 5 {
                _ if i == 0 => none,
                0 => i - 1,
                1 => i.saturating_sub(70_000), // far back
                2 => i + 3,                    // after its child
                3 => none,
                _ => i / 2,
            })
            .collect();
        let mut p = Parents::default();
        for &w in &want {
            p.push(w);
        }
        assert_eq!(p.len(), want.len());
        for (i, &w) in want.iter().enumerate() {
            assert_eq!(p.get(i), w, "parent of {i}");
        }
        // Re-set between the kinds: near to far, far to near, to none.
        let mut want = want;
        for i in (1..want.len()).step_by(7) {
            let v = match i % 3 {
                0 => none,
                1 => i as u32 - 1,
                _ => i as u32 + 100_000,
            };
            p.set(i, v);
            want[i] = v;
        }
        for (i, &w) in want.iter().enumerate() {
            assert_eq!(p.get(i), w, "parent of {i} after set");
        }
        let far = want
            .iter()
            .enumerate()
            .filter(|&(i, &w)| w != none && (w as usize >= i || i - w as usize >= 65_535))
            .count();
        assert_eq!(p.far.len(), far, "no stale far entries");
        let q = Parents::filled(3);
        assert_eq!((q.get(0), q.get(2)), (none, none));
    }
}
