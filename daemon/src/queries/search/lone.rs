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
        if cancel::requested() {
            // A search nobody waits for answers nothing, kept or not.
            return Some((0, Vec::new()));
        }
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

/// Works out the first page of each lone letter and digit (accents ignored
/// when `bare`, as the query typed asked) that the snapshot in `lock` has
/// not kept yet, taking its
/// read lock for one character at a time (the writer never waits on more
/// than one), and stops as soon as the index changes. Run in the
/// background once someone types a lone character, so the first key of
/// the next queries answers at once.
pub fn warm_lone_pages(lock: &RwLock<Snapshot>, bare: bool) {
    let generation = read_loaded(lock).generation;
    for &byte in WARMED {
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

#[cfg(test)]
mod tests {
    use std::sync::RwLock;

    use super::*;
    use crate::queries::search::within::tests::pages_equal;
    use crate::queries::search::within::tests::{oracle, strip};
    use crate::store::{Change, EntryRow, Kind};

    fn row(id: i64, parent: Option<i64>, name: &str, kind: Kind, mtime: i64) -> EntryRow {
        EntryRow {
            mtime_ns: mtime,
            ..EntryRow::for_test(id, parent, name.as_bytes(), kind)
        }
    }

    /// Lone characters answered from the kept pages equal the order worked
    /// out here name by name, page by page, before and after changes (a
    /// kept page is never answered for a later generation), whether it was
    /// kept by a search or worked out ahead; pages past the kept rows and
    /// reversed orders are worked out afresh and agree too.
    #[test]
    fn kept_pages_of_lone_characters_equal_a_name_by_name_order_under_changes() {
        let words = [
            "a", "tax", "2025", "b_a", "café", "x", "IMG_7", "notes", "ä", "z9",
        ];
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        };
        let mut rows = vec![Change::Upsert(row(1, None, "/r", Kind::Dir, 0))];
        for d in 0..20i64 {
            let parent = if d < 5 {
                1
            } else {
                2 + next(d as usize) as i64
            };
            let name = format!("{}{d}", words[next(words.len())]);
            rows.push(Change::Upsert(row(
                2 + d,
                Some(parent),
                &name,
                Kind::Dir,
                0,
            )));
        }
        let files = 2_000i64;
        for k in 0..files {
            let name = format!(
                "{}.{}",
                words[next(words.len())],
                ["pdf", "a", "txt"][next(3)]
            );
            let r = row(
                22 + k,
                Some(2 + next(20) as i64),
                &name,
                Kind::File,
                next(30) as i64,
            );
            rows.push(Change::Upsert(r));
        }
        let lock = RwLock::new(Snapshot::default());
        lock.write().unwrap().apply(rows, None);
        lock.write().unwrap().mark_loaded();

        let check = |s: &Snapshot, when: &str| {
            let live: Vec<u32> = (0..s.id_bound() as u32)
                .filter(|&i| s.entry_kind(i).is_some() && s.entry_parent(i).is_some())
                .collect();
            for (q, bare) in ["a", "2", "x", "z", "é", "q"]
                .into_iter()
                .flat_map(|q| [(q, false), (q, true)])
            {
                let term = if bare { strip(q) } else { q.to_owned() };
                let want = oracle(s, &live, &[term.as_str()], bare);
                let text = if bare {
                    format!("{q} accents:ignore")
                } else {
                    q.to_owned()
                };
                let query = Query::parse(&text).unwrap();
                let pages = [
                    (0, 400, false),
                    (0, 400, false),
                    (30, 50, false),
                    (500, 100, false),
                    (0, 60, true),
                ];
                pages_equal(s, &query, &want, &pages, &format!("{when}: {text}"));
            }
        };
        check(&lock.read().unwrap(), "as loaded");
        assert!(lock.read().unwrap().memo.lock_ok().len() >= 8, "pages kept");

        // Changes: every kept page is stale; the next answers are worked out.
        let mut changes = vec![Change::Removed((22..22 + files).step_by(3).collect())];
        for k in 0..200 {
            let name = format!("{}{k}", words[next(words.len())]);
            let r = row(
                22 + files + k,
                Some(2 + next(20) as i64),
                &name,
                Kind::File,
                40 + k,
            );
            changes.push(Change::Upsert(r));
        }
        changes.push(Change::Moved {
            id: 2,
            parent_id: 1,
            name: b"zz a".to_vec(),
            subtree: Vec::new(),
        });
        lock.write().unwrap().apply(changes, None);
        check(&lock.read().unwrap(), "after changes");

        // Worked out ahead, then answered from what was kept.
        lock.write()
            .unwrap()
            .apply(vec![Change::Removed(vec![30])], None);
        warm_lone_pages(&lock, false);
        warm_lone_pages(&lock, true);
        {
            let s = lock.read().unwrap();
            let kept = s
                .memo
                .lock_ok()
                .iter()
                .filter(|m| m.2 == s.generation)
                .count();
            assert_eq!(kept, 2 * WARMED.len());
        }
        check(&lock.read().unwrap(), "worked out ahead");
        assert!(!is_lone(&Query::parse("ab").unwrap()));
        assert!(!is_lone(&Query::parse("a b").unwrap()));
        assert!(is_lone(&Query::parse("7").unwrap()));
    }
}
