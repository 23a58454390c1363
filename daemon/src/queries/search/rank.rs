//! Ranking: entries whose own name holds the terms first, whole-name and
//! whole-word matches above partial ones, then content score, shallower
//! above deeper, newer above older; the top k picked without sorting all.

use std::cmp::Reverse;

use crate::index::Snapshot;
use crate::index::snapshot::NO_PARENT;
use crate::queries::cancel;

impl Snapshot {
    /// Entry i's relevance, from how its own name fits the terms
    /// ([`NameFits::of`]) and its content score.
    pub(crate) fn relevance(
        &self,
        i: u32,
        (own, whole, exact): Fit,
        content: Option<f64>,
    ) -> RelevanceKey {
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
    /// bytes to select from instead of 48. The id is its low 32 bits.
    #[inline]
    pub(crate) fn rank_rest_at(&self, i: u32, depth: u16) -> u128 {
        // Order-preserving as unsigned, then newer first.
        let newer = !((self.mtime[i as usize] as u64) ^ (1 << 63));
        u128::from(depth) << 96 | u128::from(newer) << 32 | u128::from(i)
    }

    /// [`depth_of`](Self::depth_of) entry i, for ids read in order:
    /// `last` holds the last parent looked up and its depth, which the
    /// next sibling takes (`kind:image`: 192k results, mostly files of
    /// the same folders).
    #[inline]
    pub(crate) fn depth_near(&self, i: u32, last: &mut (u32, u16)) -> u16 {
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
    /// ranked in two halves on two threads, then merged.
    pub(crate) fn top_ranks(
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
            // Most of the results (a whole answer): every key, each half
            // keyed and ordered on a thread of its own, then merged.
            let sorted = |part: &[u32]| {
                let mut names = NameFits::new(lists, fits, part.first().copied().unwrap_or(0));
                let mut last = (NO_PARENT, 0);
                let mut keyed: Vec<u128> = part
                    .iter()
                    .map(|&i| {
                        let depth = self.depth_near(i, &mut last);
                        flip(names_key(names.of(i)) | self.rank_rest_at(i, depth))
                    })
                    .collect();
                let k = k.min(keyed.len());
                top_k(&mut keyed, 0, k, u128::cmp);
                keyed.truncate(k);
                keyed
            };
            if hits.len() < PARALLEL_KEYS {
                // The first `from` are dropped by the caller.
                return sorted(hits).into_iter().map(id).collect();
            }
            let (a, b) = hits.split_at(hits.len() / 2);
            let (a, b) = std::thread::scope(|s| {
                let other = s.spawn(|| sorted(b));
                (sorted(a), other.join())
            });
            let b = b.unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            return merged(&a, &b, k).map(id).collect();
        }
        // A search nobody waits for stops (see queries::cancel): looked at
        // every CHECK_EVERY keys, on both threads.
        let cancelled = cancel::current();
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
            for (n, &i) in part.iter().enumerate() {
                if n % cancel::CHECK_EVERY == 0
                    && cancelled.as_ref().is_some_and(|c| c.is_cancelled())
                {
                    break;
                }
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

/// The first `k` of two ascending lists of distinct keys, ascending.
fn merged<'a>(a: &'a [u128], b: &'a [u128], k: usize) -> impl Iterator<Item = u128> + 'a {
    let (mut x, mut y) = (a.iter().peekable(), b.iter().peekable());
    std::iter::from_fn(move || match (x.peek(), y.peek()) {
        (Some(&&p), Some(&&q)) if p < q => x.next().copied(),
        (Some(_), Some(_)) => y.next().copied(),
        (Some(_), None) => x.next().copied(),
        (None, _) => y.next().copied(),
    })
    .take(k)
}

/// (own-name terms, best [`name_match`], whole words): how an entry's own
/// name fits a query's plain terms.
pub(crate) type Fit = (u32, u8, u32);

/// Each plain term's marks in id order with their [`fit`]s, read for
/// ascending ids with a cursor per term.
pub(crate) struct NameFits<'a> {
    pub(crate) lists: &'a [Vec<u32>],
    pub(crate) fits: &'a [Vec<u8>],
    pub(crate) at: Vec<usize>,
}

impl<'a> NameFits<'a> {
    /// Cursors at the first marks of ids `first` and up.
    #[inline]
    pub(crate) fn new(lists: &'a [Vec<u32>], fits: &'a [Vec<u8>], first: u32) -> Self {
        let at = lists
            .iter()
            .map(|l| l.partition_point(|&x| x < first))
            .collect();
        NameFits { lists, fits, at }
    }

    /// How entry i's own name fits the terms; ids asked for must ascend.
    #[inline]
    pub(crate) fn of(&mut self, i: u32) -> Fit {
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

/// (own-name matches, whole-name match, word matches, bm25, depth, newer
/// first, id).
pub(crate) type RelevanceKey = (
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
#[inline]
pub(crate) fn name_match(name: &[u8], term: &[u8]) -> u8 {
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
pub(crate) fn is_word_match(name: &[u8], term: &[u8]) -> bool {
    is_word_match_from(name, term, 0)
}

/// [`is_word_match`], knowing that `term` does not occur before `from`.
pub(crate) fn is_word_match_from(name: &[u8], term: &[u8], from: usize) -> bool {
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
pub(crate) fn is_word_match_decoded(name: &[u8], term: &[u8]) -> bool {
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
#[inline]
pub(crate) fn names_key((own, whole, exact): Fit) -> u128 {
    u128::from(32 - own) << 120 | u128::from(2 - whole) << 118 | u128::from(32 - exact) << 112
}

/// How well a name that holds a term fits it: its [`name_match`] in the low
/// bits ([`FIT_WHOLE`]), and [`FIT_WORD`] when it holds it as a word.
#[inline]
pub(crate) fn fit(name: &[u8], term: &[u8]) -> u8 {
    fit_from(name, term, 0)
}

/// [`fit`], knowing that the term's first place in the name is `first` or
/// later (the search that found it knows): a word is looked for from there.
#[inline]
pub(crate) fn fit_from(name: &[u8], term: &[u8], first: usize) -> u8 {
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

pub(crate) const FIT_WHOLE: u8 = 3;
pub(crate) const FIT_WORD: u8 = 4;

/// The bits of a [`Snapshot::rank`] key that the names make.
pub(crate) const RANK_NAMES: u128 = !0 << 112;

/// Results from which [`Snapshot::top_ranks`] ranks on two threads.
pub(crate) const PARALLEL_KEYS: usize = 32_768;

/// Orders the first `k` elements (the rest are left in any order).
/// Puts the `k` smallest of `v` first, with `v[from..k]` in order (what
/// comes before `from` is one page back or more: only its place matters).
pub(crate) fn top_k<T>(
    v: &mut [T],
    from: usize,
    k: usize,
    cmp: impl Fn(&T, &T) -> std::cmp::Ordering,
) {
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
