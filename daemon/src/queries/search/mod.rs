//! Search: a query's items evaluated over the name index ([`eval`]),
//! ordered ([`rank`]) and paged. The index itself ([`crate::index`]) is kept
//! by the store's writer; this module only reads it.

mod bare;
mod eval;
mod lone;
mod paths;
mod rank;
#[cfg(test)]
mod tests;
mod within;

use crate::index::Snapshot;
use crate::index::snapshot::{HOLE, NO_PARENT, SEP};
use crate::queries::cancel;
use crate::queries::query::{Item, Query};
use crate::store::Kind;

use eval::*;
use rank::*;

pub use crate::index::{ChangeEvent, ChangeKind, read_loaded};
pub use lone::{
    ALL_WARMED, ShortKey, follower_pairs, frequent_pairs, lone_of, set_keys, short_key,
    short_pages_current, warm_short_pages, warmed_set,
};
pub use paths::Paths;

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

/// What a search keeps of its results (what one caller may see); `None`
/// keeps every result.
pub type Keep<'a> = Option<&'a mut dyn FnMut(u32) -> bool>;

impl Snapshot {
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
        keep: Keep<'_>,
    ) -> (usize, Vec<u32>) {
        if keep.is_none()
            && let Some(answer) = self.lone_page(query, sort, offset, limit, reverse)
        {
            return answer;
        }
        self.order_afresh(query, sort, offset, limit, reverse, keep)
    }

    /// [`search_order`](Self::search_order), worked out from the names.
    pub(crate) fn order_afresh(
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
        let bare = query.ignore_accents;
        let mut marks = Marks {
            terms: &terms,
            own: Vec::new(),
            found: Vec::new(),
            bare,
        };
        let only_terms = query.groups.len() == terms.len()
            && query
                .groups
                .iter()
                .all(|g| g.len() == 1 && matches!(g[0], Item::Term(_)));
        // Short terms (no trigram filter: a scan of every name) and common
        // ones (the filter passes most names) are looked for only among
        // what the others matched (see `within`).
        let wait = if only_terms && self.ordered {
            within::deferred(&terms, self.grams.len(), |t| self.scan_blocks(t.as_bytes()))
        } else {
            vec![false; terms.len()]
        };
        // Each term's marks, and how well each marked name fits it (for
        // relevance; a term with `/` fits no name).
        let (mut lists, mut fits): (Vec<Vec<u32>>, Vec<Vec<u8>>) = terms
            .iter()
            .zip(&wait)
            .map(|(t, &wait)| match t.as_bytes() {
                // A search nobody waits for stops (see queries::cancel).
                _ if cancel::requested() || wait => Default::default(),
                t if t.contains(&SEP) => {
                    let ids = self.mark_term_as(t, bare);
                    let none = vec![0; ids.len()];
                    (ids, none)
                }
                t => self.mark_name_term_fits_as(t, true, bare),
            })
            .unzip();
        marks.found = lists.iter().map(Vec::len).collect();
        if lists.iter().zip(&wait).any(|(l, &w)| l.is_empty() && !w) || cancel::requested() {
            // A term every result needs is in no name: nothing matches.
            return (0, Vec::new());
        }
        // The term with fewest marks is spread.
        let rarest = (0..lists.len())
            .filter(|&t| !wait[t])
            .min_by_key(|&t| lists[t].len());
        let hits: Vec<u32> = if let Some(r) = rarest.filter(|_| only_terms && self.ordered) {
            // Spread one term's marks through their subtrees only (a
            // marked file has none), then keep the entries where each
            // other term marks the entry or a folder above it (a common
            // term is not spread through the whole tree: `café jpg`).
            // Cheaper than the passes over every entry below even when
            // most names are marked.
            let mut all = self.spread_sparse(&lists[r], self.bitset(&lists[r]));
            for t in (0..lists.len()).filter(|&t| t != r && !wait[t]) {
                all = self.narrow(all, &self.bitset(&lists[t]));
            }
            for t in (0..lists.len()).filter(|&t| wait[t]) {
                if cancel::requested() {
                    return (0, Vec::new());
                }
                let term = terms[t].as_bytes();
                let matched: usize = all.iter().map(|w| w.count_ones() as usize).sum();
                (lists[t], fits[t]) = if matched.saturating_mul(within::WITHIN_SHARE) <= n {
                    self.mark_within(term, &self.with_ancestors(&all), bare)
                } else {
                    self.mark_name_term_fits_as(term, true, bare)
                };
                if lists[t].is_empty() {
                    return (0, Vec::new());
                }
                all = self.narrow(all, &self.bitset(&lists[t]));
            }
            let result =
                |i: usize| has(&all, i) && self.kind[i] != HOLE && self.parent.get(i) != NO_PARENT;
            let want = offset.saturating_add(limit);
            if keep.is_none() && !reverse && limit > 0 && matches!(sort, Sort::Relevance) {
                // Every result is kept: when enough own every term for the
                // page, rank those alone (see below), and count the rest in
                // the bit set without listing them (`ar`: 272,290 results,
                // 55,664 ranked).
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
        if cancel::requested() {
            return (0, Vec::new());
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
}
