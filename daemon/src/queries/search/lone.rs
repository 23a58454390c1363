//! A lone character (`a`, `7`: the first key of every query typed in
//! fsgui) matches most of a home's paths, and its first page costs a mark
//! of every name holding it, a spread through their folders and a ranking
//! of hundreds of thousands: 20-40 ms of CPU at a million entries, several
//! times that on a busy machine. The first [`MEMO_ROWS`] of such a query,
//! and its count, are kept with the snapshot for the generation they were
//! worked out at, so the next time the same key is typed over an unchanged
//! index answers at once ([`warm_lone_pages`] works out the other
//! letters and digits ahead, in the background, once one is typed). A change to the index makes every
//! kept page stale: it is then worked out again, so an answer is always
//! the one the names give.

use std::sync::RwLock;

use crate::LockOk;
use crate::index::snapshot::SEP;
use crate::index::{Snapshot, read_loaded};
use crate::queries::cancel;
use crate::queries::query::{Item, Query};

use super::Sort;

/// Results kept per lone character: two of fsgui's pages and more.
pub(crate) const MEMO_ROWS: usize = 512;

/// The characters worked out ahead: letters and digits.
const WARMED: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";

/// The byte of a query that is one plain one-byte term (and whether it
/// ignores accents); `None` for any other query.
fn lone_term(query: &Query) -> Option<(u8, bool)> {
    let [group] = query.groups.as_slice() else {
        return None;
    };
    let [Item::Term(t)] = group.as_slice() else {
        return None;
    };
    match t.as_bytes() {
        [b] if *b != SEP => Some((*b, query.ignore_accents)),
        _ => None,
    }
}

impl Snapshot {
    /// The answer to a lone-character query in relevance order from the
    /// top, every result kept (`search_order` asks only then), within the
    /// first [`MEMO_ROWS`]: from the memo when it holds this generation's,
    /// else worked out (the first [`MEMO_ROWS`]) and kept. `None` for any
    /// other query or page.
    pub(crate) fn lone_page(
        &self,
        query: &Query,
        sort: Sort,
        offset: usize,
        limit: usize,
        reverse: bool,
    ) -> Option<(usize, Vec<u32>)> {
        if sort != Sort::Relevance
            || reverse
            || limit == 0
            || offset.saturating_add(limit) > MEMO_ROWS
        {
            return None;
        }
        let (byte, bare) = lone_term(query)?;
        let page = |total: usize, ids: &[u32]| {
            let to = (offset + limit).min(ids.len());
            (total, ids[offset.min(to)..to].to_vec())
        };
        if let Some(kept) = self
            .memo
            .lock_ok()
            .iter()
            .find(|m| (m.0, m.1, m.2) == (byte, bare, self.generation))
        {
            return Some(page(kept.3, &kept.4));
        }
        let (total, ids) = self.order_afresh(query, sort, 0, MEMO_ROWS, false, None);
        // A search stopped half way answers nothing: not kept.
        if !cancel::requested() {
            self.keep_lone(byte, bare, total, ids.clone());
        }
        Some(page(total, &ids))
    }

    /// Keeps a lone character's first page for this generation, dropping
    /// what older generations left.
    fn keep_lone(&self, byte: u8, bare: bool, total: usize, ids: Vec<u32>) {
        let mut memo = self.memo.lock_ok();
        memo.retain(|m| m.2 == self.generation && (m.0, m.1) != (byte, bare));
        memo.push((byte, bare, self.generation, total, ids));
    }
}

/// Whether `query` is one lone character (see [`Snapshot::lone_page`]).
pub fn is_lone(query: &Query) -> bool {
    lone_term(query).is_some()
}

/// Works out the first page of each lone letter and digit (accents as they
/// are and ignored) that the snapshot in `lock` has not kept yet, taking its
/// read lock for one character at a time (the writer never waits on more
/// than one), and stops as soon as the index changes. Run in the
/// background once someone types a lone character, so the first key of
/// the next queries answers at once.
pub fn warm_lone_pages(lock: &RwLock<Snapshot>) {
    let generation = read_loaded(lock).generation;
    for &byte in WARMED {
        for bare in [false, true] {
            let s = read_loaded(lock);
            if s.generation != generation {
                return;
            }
            let kept = s
                .memo
                .lock_ok()
                .iter()
                .any(|m| (m.0, m.1, m.2) == (byte, bare, generation));
            if kept {
                continue;
            }
            let mut text = String::from(byte as char);
            if bare {
                text.push_str(" accents:ignore");
            }
            let Ok(query) = Query::parse(&text) else {
                continue;
            };
            let (total, ids) = s.order_afresh(&query, Sort::Relevance, 0, MEMO_ROWS, false, None);
            s.keep_lone(byte, bare, total, ids);
        }
    }
}
