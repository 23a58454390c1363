//! Evaluating a query over the name index: each item marks the entries it
//! matches (names through the trigram filter and a substring scan of the
//! arena, then spread down the tree to every descendant), and the items'
//! marks are combined.

use std::borrow::Cow;

use memchr::memmem;

use crate::index::Snapshot;
use crate::index::grams::GRAM_BLOCK;
use crate::index::snapshot::{HOLE, NO_PARENT, SEP};
use crate::queries::query::{Item, KindClass};
use crate::store::Kind;

use super::rank::*;

impl Snapshot {
    /// Which entries one query item matches (holes and roots' own folders
    /// are dropped by the caller).
    pub(crate) fn eval(&self, item: &Item, marks: &Marks<'_>) -> Vec<bool> {
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
                let ids = self.mark_term_as(t.as_bytes(), marks.bare);
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
                // two to a byte.
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
            Item::In(_) | Item::Content(_) | Item::Media(_) | Item::Tag(_) => vec![false; n],
            Item::MediaHits(hits) | Item::TagHits(hits) => {
                let mut m = vec![false; n];
                for &id in hits.iter() {
                    if let Some(x) = m.get_mut(id as usize) {
                        *x = true;
                    }
                }
                m
            }
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
    #[inline]
    pub(crate) fn passes(&self, item: &Item, i: usize) -> Option<bool> {
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
    #[inline]
    pub(crate) fn mark_term(&self, term: &[u8]) -> Vec<u32> {
        if term.contains(&SEP) {
            self.mark_slash_with(term, |i| Cow::Borrowed(self.folded_name(i)))
        } else {
            self.mark_name_term(term)
        }
    }

    /// `ids` as marks for [`Snapshot::spread`] (bit 0).
    #[inline]
    pub(crate) fn dense(&self, ids: &[u32]) -> Vec<u32> {
        let mut own = vec![0u32; self.parent.len()];
        for &i in ids {
            own[i as usize] = 1;
        }
        own
    }

    /// `ids` as a bit set over all ids.
    #[inline]
    pub(crate) fn bitset(&self, ids: &[u32]) -> Vec<u64> {
        let mut set = vec![0u64; self.parent.len().div_ceil(64)];
        for &i in ids {
            set[i as usize / 64] |= 1 << (i % 64);
        }
        set
    }

    /// Spreads marks down the tree: an entry matches when it or any folder
    /// above it is marked.
    #[inline]
    pub(crate) fn spread(&self, own: &[u32], mask: u32) -> Vec<bool> {
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
    #[inline]
    pub(crate) fn marked_from(&self, mut q: u32, marked: impl Fn(usize) -> bool) -> bool {
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
    #[inline]
    pub(crate) fn narrow(&self, set: Vec<u64>, own: &[u64]) -> Vec<u64> {
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
    pub(crate) fn spread_sparse(&self, ids: &[u32], mut set: Vec<u64>) -> Vec<u64> {
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
    #[inline]
    pub(crate) fn mark_name_term(&self, term: &[u8]) -> Vec<u32> {
        self.mark_name_term_fits(term, false).0
    }

    /// [`mark_name_term`](Self::mark_name_term), and with `fits` how well
    /// each marked name fits the term ([`fit`]), worked out while its bytes
    /// are in cache: read back later, the name was a cache miss, a quarter
    /// of the samples of ranking `ar` at 1M entries.
    pub(crate) fn mark_name_term_fits(&self, term: &[u8], fits: bool) -> (Vec<u32>, Vec<u8>) {
        let (mut ids, mut how) = (Vec::new(), Vec::new());
        let finder = memmem::Finder::new(term);
        for (from, to) in self.candidate_spans(term) {
            if let ([byte], true) = (term, fits) {
                self.mark_byte_span(*byte, (from, to), &mut ids, &mut how);
                continue;
            }
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
    pub(crate) fn candidate_spans(&self, text: &[u8]) -> Vec<(usize, usize)> {
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
    /// filter passes: the names that end otherwise are never looked at.
    pub(crate) fn mark_tail(&self, tail: &[u8]) -> Vec<u32> {
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
    pub(crate) fn mark_span(
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
            // (A binary search up to `to` took 20 probes of a large span.)
            i = self.holder_near(i, to, at);
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
    pub(crate) fn mark_slash_with<'a>(
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
}

/// Plain terms of a query, marked once per search: bit t of `own[i]` says
/// entry i's own name holds term t; `found[t]` counts such entries.
pub(crate) struct Marks<'a> {
    pub(crate) terms: &'a [&'a str],
    pub(crate) own: Vec<u32>,
    pub(crate) found: Vec<usize>,
    /// The query ignores accents (`accents:ignore`).
    pub(crate) bare: bool,
}

/// The entries that every list (ascending) holds and that are `results`,
/// ascending; `results` is asked about ascending ids. None without lists.
pub(crate) fn owning_all(lists: &[Vec<u32>], mut results: impl FnMut(u32) -> bool) -> Vec<u32> {
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

/// Whether `list` (ascending) holds `i`, searched from `*c` on, where it
/// leaves `*c` for the next, larger `i`: by galloping, as the list may be
/// far longer than the ids asked for (`ar`: 272,290 results, 55,664 asked).
#[inline]
pub(crate) fn holds(list: &[u32], c: &mut usize, i: u32) -> bool {
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
#[inline]
pub(crate) fn has(set: &[u64], i: usize) -> bool {
    set[i / 64] >> (i % 64) & 1 != 0
}

/// The indexes of the set bits, ascending.
#[inline]
pub(crate) fn ones(set: &[u64]) -> impl Iterator<Item = usize> + '_ {
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
