//! Short terms among few candidates. A term of one or two bytes has no
//! trigram filter, so marking it scans every name of the index and finds
//! most of them (`2` in a home of a million names: hundreds of thousands).
//! In a query with other terms (`tax 2`, typed one key at a time), only the
//! entries the others already matched can be results, and whether one of
//! them holds the short term through its own name or a folder above it is
//! known from those names alone: so the short term is looked for in the
//! matched entries and their folders, not in the whole arena. So is a
//! longer term the filter barely narrows (`tax 202`: `202` is in every
//! date of the last years, and one trigram passes a third of the blocks by
//! chance) when another term is narrower.
//!
//! The marks and fits found so are exact for every entry looked at, which
//! is all that narrowing and ranking the matched entries ever ask about.

use std::cmp::Reverse;

use memchr::memmem;

use crate::index::Snapshot;
use crate::index::grams::GRAM_BLOCK;
use crate::index::snapshot::{AccentedNames, HOLE, NO_PARENT, SEP};

use super::eval::{has, ones};
use super::rank::{fit, fit_from, name_match};

/// A short term is looked for among the matched entries (and their
/// folders) when they are at most this share of the index (one in
/// `WITHIN_SHARE`); beyond it a scan of the arena costs less.
pub(crate) const WITHIN_SHARE: usize = 4;

/// Whether `term` is short: under three bytes, so the trigram filter
/// cannot narrow its scan (and no `/`, which is matched apart).
#[inline]
pub(crate) fn is_short(term: &str) -> bool {
    term.len() < 3 && !term.as_bytes().contains(&SEP)
}

/// A term of three bytes or more waits too when the trigram filter leaves
/// more than one in `COMMON_SHARE` of the index's blocks to scan (`202`,
/// `tax`: one trigram, which a block of 64 names holds by chance about a
/// third of the time) and another term leaves fewer.
pub(crate) const COMMON_SHARE: usize = 8;

/// Which of a query's plain terms wait for the others' matches: the short
/// ones, and the common ones (`scan`: the blocks of the `blocks` a term's
/// scan would read, see [`COMMON_SHARE`]), but for the one the filter
/// narrows most when every term would wait (the longest among equals: one
/// term must be marked over the arena; a longer term marks fewer names).
/// A term with `/` never waits (it is matched over paths apart).
pub(crate) fn deferred(terms: &[&str], blocks: usize, scan: impl Fn(&str) -> usize) -> Vec<bool> {
    let cost: Vec<usize> = terms
        .iter()
        .map(|t| match t {
            t if is_short(t) => usize::MAX,
            t if t.as_bytes().contains(&SEP) => 0,
            t => scan(t),
        })
        .collect();
    let mut wait: Vec<bool> = cost
        .iter()
        .map(|&c| c.saturating_mul(COMMON_SHARE) > blocks)
        .collect();
    if wait.iter().all(|&w| w)
        && let Some(keep) = (0..terms.len()).min_by_key(|&t| (cost[t], Reverse(terms[t].len()), t))
    {
        wait[keep] = false;
    }
    wait
}

impl Snapshot {
    /// How many of the trigram filter's blocks a scan for `term` (three
    /// bytes or more, no `/`) reads (see [`deferred`]).
    pub(crate) fn scan_blocks(&self, term: &[u8]) -> usize {
        if self.grams.len() * GRAM_BLOCK < self.parent.len() {
            // No filter yet: every name.
            return self.grams.len().max(1);
        }
        self.grams.candidates(term).len()
    }

    /// `set` (a bit set over ids) and every folder above its entries.
    pub(crate) fn with_ancestors(&self, set: &[u64]) -> Vec<u64> {
        let mut out = set.to_vec();
        for i in ones(set) {
            // An entry already in `out` has its folders there, or will when
            // it is visited itself (it is in `set`).
            let mut p = self.parent.get(i);
            while p != NO_PARENT && !has(&out, p as usize) {
                out[p as usize / 64] |= 1 << (p % 64);
                p = self.parent.get(p as usize);
            }
        }
        out
    }

    /// The entries of `within` (a bit set) whose folded name holds `term`
    /// (no [`SEP`]; bare, and matched against bare names too, when `bare`),
    /// ascending, with how well each name fits it: for those entries, what
    /// [`mark_name_term_fits_as`](Self::mark_name_term_fits_as) gives.
    pub(crate) fn mark_within(
        &self,
        term: &[u8],
        within: &[u64],
        bare: bool,
    ) -> (Vec<u32>, Vec<u8>) {
        let finder = memmem::Finder::new(term);
        // With accents ignored, only these names can hold the term bare
        // and not as they are.
        let accented = bare.then(|| self.accented());
        let (mut ids, mut how) = (Vec::new(), Vec::new());
        for i in ones(within) {
            if let Some(f) = self.name_fit(i, &finder, term, accented.as_deref()) {
                ids.push(i as u32);
                how.push(f);
            }
        }
        (ids, how)
    }

    /// How entry i's own name fits `term`, when it holds it: the fit the
    /// arena scan gives (of the folded name; with accents ignored, given
    /// the [`accented`](Snapshot::accented) names, of the bare name where
    /// only that holds the term).
    #[inline]
    fn name_fit(
        &self,
        i: usize,
        finder: &memmem::Finder<'_>,
        term: &[u8],
        accented: Option<&AccentedNames>,
    ) -> Option<u8> {
        if self.kind[i] == HOLE {
            return None;
        }
        let name = self.folded_name(i);
        if let Some(at) = finder.find(name) {
            return Some(fit_from(name, term, at));
        }
        let bare = accented.filter(|_| !name.is_ascii())?.bare_name(i as u32)?;
        finder.find(bare).map(|_| fit(bare, term))
    }
}

impl Snapshot {
    /// [`mark_span`](Self::mark_span) for a one-byte term (a lone letter
    /// or digit, which marks about half the names of a home), with each
    /// marked name's fit: one `memchr` pass over the span finds every place
    /// of the byte, instead of a search started afresh after each marked
    /// name plus a second pass for the places where it could be a word.
    /// A name is checked for the byte as a word ([`fit_from`]) only when
    /// one of its places has no ASCII letter or digit on either side (a
    /// byte above ASCII may be a letter: the check decides); otherwise its
    /// fit is its whole-name match alone. The same fits as the check of
    /// every name.
    pub(crate) fn mark_byte_span(
        &self,
        byte: u8,
        (from, to): (usize, usize),
        ids: &mut Vec<u32>,
        how: &mut Vec<u8>,
    ) {
        let term = [byte];
        let base = self.fold_at.get(from);
        let text = &self.folded[base..self.fold_at.get(to)];
        let edge = |b: Option<&u8>| b.is_none_or(|b| !b.is_ascii_alphanumeric());
        // The name being marked: its entry, start, end (its SEP), the
        // byte's first place in it, and whether a place could be a word.
        let mut name: Option<(usize, usize, usize, usize, bool)> = None;
        let mut done = |(i, start, end, first, word): (usize, usize, usize, usize, bool)| {
            let bytes = &self.folded[start..end];
            ids.push(i as u32);
            how.push(if word {
                fit_from(bytes, &term, first - start)
            } else if first == start {
                name_match(bytes, &term)
            } else {
                0
            });
        };
        let mut i = from; // the first entry a new place can be in
        for off in memchr::memchr_iter(byte, text) {
            let at = base + off;
            let word = edge(off.checked_sub(1).map(|b| &text[b])) && edge(text.get(off + 1));
            if let Some(n) = name.as_mut()
                && at < n.2
            {
                n.4 |= word;
                continue;
            }
            if let Some(n) = name.take() {
                done(n);
            }
            i = self.holder_near(i, to, at);
            let (start, end) = self.fold_at.span(i);
            name = Some((i, start, end - 1, at, word));
            i += 1;
        }
        if let Some(n) = name {
            done(n);
        }
    }

    /// The entry in `i..to` whose arena name holds offset `at` (at or after
    /// entry i's start): steps forward when close; when far, gallops to a
    /// bound, then binary-searches up to it.
    #[inline]
    pub(crate) fn holder_near(&self, mut i: usize, to: usize, at: usize) -> usize {
        if self.fold_at.get((i + 8).min(to)) <= at {
            let (mut lo, mut step) = ((i + 8).min(to), 16);
            let hi = loop {
                let probe = (lo + step).min(to);
                // `get(to)` is the span's end, past every place.
                if self.fold_at.get(probe) > at {
                    break probe;
                }
                lo = probe;
                step *= 2;
            };
            self.fold_at.holder(lo, hi, at)
        } else {
            while self.fold_at.get(i + 1) <= at {
                i += 1;
            }
            i
        }
    }
}

#[cfg(test)]
pub(super) mod tests {
    use std::cmp::Reverse;

    use unicode_normalization::UnicodeNormalization;

    use super::*;
    use crate::queries::query::Query;
    use crate::queries::search::Sort;
    use crate::store::{Change, EntryRow, Kind};

    fn row(id: i64, parent: Option<i64>, name: &str, kind: Kind) -> EntryRow {
        EntryRow::for_test(id, parent, name.as_bytes(), kind)
    }

    /// Each page `(offset, limit, reverse)` of `query` in relevance order,
    /// and its total, equal to the same slice of `want`.
    pub(in crate::queries::search) fn pages_equal(
        s: &Snapshot,
        query: &Query,
        want: &[u32],
        pages: &[(usize, usize, bool)],
        what: &str,
    ) {
        for &(offset, limit, reverse) in pages {
            let (total, got) = s.search_page(query, Sort::Relevance, offset, limit, reverse, None);
            assert_eq!(total, want.len(), "{what}");
            let got: Vec<u32> = got.into_iter().map(|f| f.id).collect();
            let ids = want.iter().copied();
            let expect: Vec<u32> = if reverse {
                ids.rev().skip(offset).take(limit).collect()
            } else {
                ids.skip(offset).take(limit).collect()
            };
            assert_eq!(got, expect, "{what} from {offset}, reverse {reverse}");
        }
    }

    /// `s` without accents, as the test works it out: decomposed, the
    /// combining marks dropped, composed again.
    pub(in crate::queries::search) fn strip(s: &str) -> String {
        s.nfd()
            .filter(|c| !('\u{300}'..='\u{36f}').contains(c))
            .nfc()
            .collect()
    }

    /// The relevance order of the results of `terms` among `live`, worked
    /// out on the decoded folded names (with `bare`, a name holds a term
    /// when it or its accent-free form does, and fits it in the form that
    /// holds it, the plain one first): own-name terms, whole name or stem,
    /// whole words, depth, newer, id.
    pub(in crate::queries::search) fn oracle(
        s: &Snapshot,
        live: &[u32],
        terms: &[&str],
        bare: bool,
    ) -> Vec<u32> {
        let name = |i: u32| String::from_utf8_lossy(s.entry_folded_name(i)).into_owned();
        // The form of entry i's name that holds t, if any.
        let holding = |i: u32, t: &str| {
            let n = name(i);
            if n.contains(t) {
                Some(n)
            } else if bare && strip(&n).contains(t) {
                Some(strip(&n))
            } else {
                None
            }
        };
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
        let on_path = |mut i: u32, t: &str| loop {
            if s.entry_parent(i).is_none() {
                return false;
            }
            if holding(i, t).is_some() {
                return true;
            }
            i = s.entry_parent(i).unwrap();
        };
        let mut want: Vec<(_, u32)> = live
            .iter()
            .copied()
            .filter(|&i| terms.iter().all(|t| on_path(i, t)))
            .map(|i| {
                let own: Vec<(String, &str)> = terms
                    .iter()
                    .filter_map(|&t| holding(i, t).map(|n| (n, t)))
                    .collect();
                let whole = own
                    .iter()
                    .map(|(n, t)| match n.rsplit_once('.') {
                        _ if n == t => 2,
                        Some((stem, _)) if !stem.is_empty() && stem == *t => 1,
                        _ => 0,
                    })
                    .max()
                    .unwrap_or(0);
                let words = own.iter().filter(|(n, t)| word(n, t)).count();
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
        want.into_iter().map(|(_, i)| i).collect()
    }

    /// Short terms looked for among the other terms' matches (`tax 2`, as
    /// fsgui asks while `tax 2025` is typed), and lone short terms, give
    /// the results and order worked out here name by name: as the tree is
    /// loaded, after files are added, renamed and removed, after
    /// compaction, and once a move leaves the ids out of tree order (where
    /// every term is marked over the arena again). The short term matches
    /// through a folder above as well as through the name itself, in
    /// plain and accent-free queries.
    #[test]
    fn short_terms_with_others_and_alone_equal_a_name_by_name_order_under_changes() {
        let folders = [
            "Taxes",
            "2019",
            "tax 2025",
            "Photos",
            "café",
            "a",
            "node_modules",
            "x",
        ];
        let pieces = [
            "tax", "report", "final", "IMG_1234", "2", "20", "2025", "a", "é", "cafe", "Café", "x",
            "node", "e", "b", "photo", "notes", "main", "lib", "data", "old", "new", "v1", "misc",
            "zz",
        ];
        let joins = ["", " ", "_", "-", "."];
        let mut seed = 0x2545_F491_4F6C_DD1Du64;
        let mut next = |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        };
        let name = |next: &mut dyn FnMut(usize) -> usize| {
            let mut n = String::new();
            for k in 0..1 + next(3) {
                if k > 0 {
                    n.push_str(joins[next(joins.len())]);
                }
                n.push_str(pieces[next(pieces.len())]);
            }
            if next(2) == 0 {
                n.push_str([".pdf", ".jpg", ".a", ".txt"][next(4)]);
            }
            n
        };
        // Two levels of folders, then files in them.
        let mut rows = vec![Change::Upsert(row(1, None, "/r", Kind::Dir))];
        let mut dirs = vec![1i64];
        for (k, f) in folders.iter().enumerate() {
            let id = 2 + k as i64;
            rows.push(Change::Upsert(row(id, Some(1), f, Kind::Dir)));
            dirs.push(id);
        }
        let mut below = Vec::new();
        for k in 0..24 {
            let id = 2 + folders.len() as i64 + k;
            // None under the two tax folders, which stay small.
            let parent = dirs[[2, 4, 5, 6, 7, 8][next(6)]];
            rows.push(Change::Upsert(row(
                id,
                Some(parent),
                &format!("d{k}"),
                Kind::Dir,
            )));
            dirs.push(id);
            below.push((id, parent));
        }
        let first_file = 2 + dirs.len() as i64;
        let files = 3_000i64;
        for k in 0..files {
            let mut r = row(
                first_file + k,
                Some(dirs[next(dirs.len())]),
                &name(&mut next),
                Kind::File,
            );
            r.mtime_ns = next(40) as i64;
            rows.push(Change::Upsert(r));
        }
        let mut s = Snapshot::default();
        s.apply(rows, None);

        let queries = [
            "tax 2",
            "tax 202",
            "2025 tax",
            "img tax",
            "tax img_1 a",
            "report img",
            "tax 20",
            "2 tax",
            "report f",
            "report final a",
            "img_1 a",
            "node_ n",
            "tax é",
            "cafe 2",
            "a",
            "2",
            "é",
            "x",
            "ta",
            "20",
            "a 2",
            "e x",
        ];
        let check = |s: &Snapshot, when: &str| {
            let live: Vec<u32> = (0..s.id_bound() as u32)
                .filter(|&i| s.entry_kind(i).is_some() && s.entry_parent(i).is_some())
                .collect();
            for (q, bare) in queries
                .iter()
                .flat_map(|q| [(q.to_string(), false), (q.to_string(), true)])
            {
                // An accent-free query's terms are accent-free too.
                let terms: Vec<String> = q
                    .split(' ')
                    .map(|t| if bare { strip(t) } else { t.to_owned() })
                    .collect();
                let terms: Vec<&str> = terms.iter().map(String::as_str).collect();
                let want = oracle(s, &live, &terms, bare);
                let text = if bare {
                    format!("{q} accents:ignore")
                } else {
                    q.clone()
                };
                let query = Query::parse(&text).unwrap();
                let pages = [(0, 400, false), (30, 50, false), (0, 60, true)];
                pages_equal(s, &query, &want, &pages, &format!("{when}: {text}"));
                // Every result, in the order of paths (no ranking).
                let (_, all) = s.search(&query, Sort::Path, 0, false);
                let mut got: Vec<u32> = all.into_iter().map(|f| f.id).collect();
                got.sort_unstable();
                let mut want = want;
                want.sort_unstable();
                assert_eq!(got, want, "{when}: {text}, every result");
            }
        };
        // The cases the test means to reach: `tax` matches few enough for
        // `2` to be looked for among its matches, and some of those hold
        // `2` only through a folder above.
        let count =
            |s: &Snapshot, q: &str| s.search(&Query::parse(q).unwrap(), Sort::Path, 1, false).0;
        assert!(
            count(&s, "tax") * WITHIN_SHARE <= s.id_bound(),
            "tax is rare enough"
        );
        assert!(count(&s, "tax 2") > 0);
        let rare = |_: &str| 1;
        assert_eq!(deferred(&["tax", "2"], 100, rare), [false, true]);
        assert_eq!(deferred(&["a", "20", "x"], 100, rare), [true, false, true]);
        assert_eq!(deferred(&["a", "2"], 100, rare), [false, true]);
        // Long terms the filter leaves most blocks of: the narrowest is
        // marked, the others wait; a term with `/` never waits.
        let share = |t: &str| match t {
            "tax" => 30,
            "202" => 60,
            "report" => 5,
            _ => 12,
        };
        assert_eq!(deferred(&["202", "tax"], 100, share), [true, false]);
        assert_eq!(
            deferred(&["tax", "202", "2"], 100, share),
            [false, true, true]
        );
        assert_eq!(deferred(&["report", "final"], 100, share), [false, false]);
        assert_eq!(deferred(&["report", "202"], 100, share), [false, true]);
        assert_eq!(deferred(&["202", "a/tax"], 100, share), [true, false]);
        assert_eq!(deferred(&["2", "ab"], 100, share), [true, false]);
        // In this tree, common terms among the queries below wait.
        let scan = |t: &str| s.scan_blocks(t.as_bytes());
        assert!(
            deferred(&["tax", "img"], s.grams.len(), scan).contains(&true),
            "a common long term waits: {} blocks, tax {}, img {}",
            s.grams.len(),
            scan("tax"),
            scan("img")
        );
        check(&s, "as loaded");

        // Files added (ids after every other), renamed (their names kept
        // outside the arena) and removed.
        let mut changes = Vec::new();
        let end = first_file + files;
        for k in 0..300 {
            changes.push(Change::Upsert(row(
                end + k,
                Some(dirs[next(dirs.len())]),
                &name(&mut next),
                Kind::File,
            )));
        }
        for k in (0..files).step_by(7) {
            changes.push(Change::Moved {
                id: first_file + k,
                parent_id: dirs[next(dirs.len())],
                name: name(&mut next).into_bytes(),
                subtree: Vec::new(),
            });
        }
        changes.push(Change::Removed(
            (0..files).step_by(5).map(|k| first_file + k).collect(),
        ));
        // A folder renamed: `tax 2025` becomes `2026`.
        changes.push(Change::Moved {
            id: 4,
            parent_id: 1,
            name: b"2026".to_vec(),
            subtree: Vec::new(),
        });
        s.apply(changes, None);
        check(&s, "after changes");
        s.compact();
        check(&s, "compacted");
        // A folder moved under one with a higher id: ids no longer follow
        // the tree, and every term is marked over the arena.
        let (last, _) = *below.iter().rev().find(|&&(_, p)| p != 3).unwrap();
        s.apply(
            vec![Change::Moved {
                id: 3,
                parent_id: last,
                name: b"Taxes".to_vec(),
                subtree: below
                    .iter()
                    .filter(|&&(_, p)| p == 3)
                    .map(|&(d, _)| d)
                    .collect(),
            }],
            None,
        );
        assert!(!s.ordered);
        check(&s, "out of order");
    }
}
