//! A lone character (`a`, `7`: the first key of every query typed in
//! fsgui) matches most of a home's paths, and its first page costs a mark
//! of every name holding it, a spread through their folders and a ranking
//! of hundreds of thousands: 20-40 ms of CPU at a million entries, several
//! times that on a busy machine. A pair (`re`, `ta`: the second key) has no
//! trigram filter either and costs about half that. The first
//! [`MEMO_ROWS`] of such a query, and its count, are kept with the snapshot
//! for the generation they were worked out at, so the next time the same
//! keys are typed over an unchanged index they answer at once
//! ([`warm_short_pages`] works out the letters and digits ahead, in the
//! background, and [`follower_pairs`] the pairs a typed character starts).
//! A change to the index makes every kept page stale: it is then worked
//! out again, so an answer is always the one the names give.

use std::sync::RwLock;

use crate::LockOk;
use crate::index::{Snapshot, read_loaded};
use crate::queries::cancel;
use crate::queries::query::{Item, Query};

use super::Sort;
use super::within::is_short;

/// Results kept per short term: two of fsgui's pages and more.
pub(crate) const MEMO_ROWS: usize = 512;

/// Pairs worked out ahead after a start, at most: the most frequent of
/// those held [`FREQUENT_PAIR`] times or more ([`frequent_pairs`]).
pub(crate) const START_PAIRS: usize = 256;

/// How often a pair must occur in the names to be worked out after a
/// start. A pair's first page afresh grows with its matches: at a million
/// entries, in the daemon (`search us=`, exact), `re` (497k matches) 20
/// ms, `ar` (272k) 17 ms, `ph` (89k paths from 11k names) 9.7 ms, `za`
/// (255) 3.9 ms. The rarer ones are answered afresh, and a small index
/// holds none this often.
const FREQUENT_PAIR: u32 = 20_000;

/// Pages of pairs kept at most (each up to 2 KiB, about 1.1 MB in all):
/// the oldest goes first. The start's frequent pairs, and four
/// characters' followers in both accents modes.
const MEMO_PAIRS: usize = START_PAIRS + 4 * 2 * 36;

/// The characters worked out ahead: letters and digits.
const WARMED: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";

/// A short term as a key of the memo: one byte `b` is `b`, two bytes
/// `a b` are `a | b << 8` (a name holds no NUL, so no pair's second byte
/// is 0).
pub type ShortKey = u16;

/// The bytes of a [`ShortKey`].
fn key_bytes(key: ShortKey) -> Vec<u8> {
    let [a, b] = key.to_le_bytes();
    if b == 0 { vec![a] } else { vec![a, b] }
}

/// Whether a [`ShortKey`] is a pair.
fn is_pair(key: ShortKey) -> bool {
    key >> 8 != 0
}

/// The key of a query that is one plain term of one or two bytes (and
/// whether it ignores accents); `None` for any other query.
fn short_term(query: &Query) -> Option<(ShortKey, bool)> {
    let [group] = query.groups.as_slice() else {
        return None;
    };
    let [Item::Term(t)] = group.as_slice() else {
        return None;
    };
    if !is_short(t) {
        return None;
    }
    let key = match t.as_bytes() {
        [b] => *b as u16,
        [a, b] if *b != 0 => u16::from_le_bytes([*a, *b]),
        _ => return None,
    };
    Some((key, query.ignore_accents))
}

impl Snapshot {
    /// The answer to a short-term query in relevance order from the top,
    /// every result kept (`search_order` asks only then), within the first
    /// [`MEMO_ROWS`]: from the memo when it holds this generation's, else
    /// worked out (the first [`MEMO_ROWS`]) and kept. `None` for any other
    /// query or page.
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
        let (key, bare) = short_term(query)?;
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
            .find(|m| (m.0, m.1, m.2) == (key, bare, self.generation))
        {
            return Some(page(kept.3, &kept.4));
        }
        let (total, ids) = self.order_afresh(query, sort, 0, MEMO_ROWS, false, None);
        // A search stopped half way answers nothing: not kept.
        if !cancel::requested() {
            self.keep_lone(key, bare, total, ids.clone());
        }
        Some(page(total, &ids))
    }

    /// Keeps a short term's first page for this generation, dropping what
    /// older generations left, and the oldest pair's past [`MEMO_PAIRS`].
    fn keep_lone(&self, key: ShortKey, bare: bool, total: usize, ids: Vec<u32>) {
        let mut memo = self.memo.lock_ok();
        memo.retain(|m| m.2 == self.generation && (m.0, m.1) != (key, bare));
        if is_pair(key) {
            let pairs = memo.iter().filter(|m| is_pair(m.0)).count();
            if pairs >= MEMO_PAIRS
                && let Some(oldest) = memo.iter().position(|m| is_pair(m.0))
            {
                memo.remove(oldest);
            }
        }
        memo.push((key, bare, self.generation, total, ids));
    }

    /// Whether this generation's page of `key` is kept.
    fn kept(&self, key: ShortKey, bare: bool) -> bool {
        self.memo
            .lock_ok()
            .iter()
            .any(|m| (m.0, m.1, m.2) == (key, bare, self.generation))
    }
}

/// Whether `query` is one lone character (see [`Snapshot::lone_page`]).
#[cfg(test)]
fn is_lone(query: &Query) -> bool {
    short_term(query).is_some_and(|(k, _)| !is_pair(k))
}

/// The key of a query of one short term (see [`Snapshot::lone_page`]).
pub fn short_key(query: &Query) -> Option<ShortKey> {
    short_term(query).map(|(k, _)| k)
}

/// The character of a lone-character key; `None` for a pair.
pub fn lone_of(key: ShortKey) -> Option<u8> {
    (!is_pair(key)).then_some(key as u8)
}

/// [`warm_short_pages`] for every lone letter and digit.
#[cfg(test)]
fn warm_lone_pages(lock: &RwLock<Snapshot>, bare: bool) -> bool {
    warm_short_pages(lock, bare, &set_keys(ALL_WARMED))
}

/// Every lone character worked out ahead, as a set for [`set_keys`].
pub const ALL_WARMED: u64 = (1 << WARMED.len()) - 1;

/// The set of [`set_keys`] that holds `byte` (none for a character not
/// worked out ahead).
pub fn warmed_set(byte: u8) -> u64 {
    WARMED.iter().position(|&b| b == byte).map_or(0, |k| 1 << k)
}

/// The keys of the characters in a [`warmed_set`].
pub fn set_keys(set: u64) -> Vec<ShortKey> {
    WARMED
        .iter()
        .enumerate()
        .filter(|(k, _)| set & (1 << k) != 0)
        .map(|(_, &b)| b as u16)
        .collect()
}

/// Works out the first page of each short term in `keys`, in the order
/// given (accents ignored when `bare`, as the query typed asked), that the
/// snapshot in `lock` has not kept yet, taking its read lock for one term
/// at a time, and stops as soon as the index changes or a commit waits for
/// it (the read is let go within a few milliseconds: see `index::quiet`,
/// so a change is never held back by work done ahead). Returns whether
/// every term is kept for the index as it is. Run in the background once
/// someone types a lone character (its letters and digits, then the pairs
/// it starts), and again once the index is quiet after a change
/// (`engine::warm`), so the first keys of the next queries answer at once.
pub fn warm_short_pages(lock: &RwLock<Snapshot>, bare: bool, keys: &[ShortKey]) -> bool {
    let (generation, commits) = {
        let s = read_loaded(lock);
        (s.generation, s.commits())
    };
    let stop = cancel::Cancel::watching(commits.writing());
    for &key in keys {
        let s = read_loaded(lock);
        if s.generation != generation || stop.is_cancelled() {
            return false;
        }
        if s.kept(key, bare) {
            continue;
        }
        let Ok(mut text) = String::from_utf8(key_bytes(key)) else {
            continue;
        };
        if bare {
            text.push_str(" accents:ignore");
        }
        // What a query typed as these keys parses to, or nothing to keep
        // (a key the language reads otherwise).
        let Ok(query) = Query::parse(&text) else {
            continue;
        };
        if short_term(&query) != Some((key, bare)) {
            continue;
        }
        let (total, ids) =
            stop.scope(|| s.order_afresh(&query, Sort::Relevance, 0, MEMO_ROWS, false, None));
        // Stopped half way (a commit waits): nothing to keep. The flag
        // cannot fall again while this read is held.
        if stop.is_cancelled() {
            return false;
        }
        s.keep_lone(key, bare, total, ids);
    }
    true
}

/// The pairs `first` starts with a letter or digit after it, the most
/// frequent in the names first (the likeliest next key), those no name
/// holds left out: what [`warm_short_pages`] works out after someone types
/// `first` alone. One pass over the names (a few milliseconds at 1M).
pub fn follower_pairs(s: &Snapshot, first: u8) -> Vec<ShortKey> {
    let mut count = [0u32; 256];
    for at in memchr::memchr_iter(first, &s.folded) {
        if let Some(&next) = s.folded.get(at + 1) {
            count[next as usize] += 1;
        }
    }
    let mut pairs: Vec<(u32, u8)> = WARMED
        .iter()
        .map(|&b| (count[b as usize], b))
        .filter(|&(n, _)| n > 0)
        .collect();
    pairs.sort_by_key(|&(n, b)| (std::cmp::Reverse(n), b));
    pairs
        .into_iter()
        .map(|(_, b)| u16::from_le_bytes([first, b]))
        .collect()
}

/// The pairs of letters and digits held [`FREQUENT_PAIR`] times or more in
/// the names, the most frequent first, at most [`START_PAIRS`]: worked out
/// after a start, beside the lone characters, because keys typed back to
/// back reach a frequent pair before the pass that follows its first
/// character does (`re` 65 ms from key to rows in fsgui, against 8 ms
/// kept). One pass over the names' bytes.
pub fn frequent_pairs(s: &Snapshot) -> Vec<ShortKey> {
    let n = WARMED.len();
    let mut slot = [u8::MAX; 256];
    for (k, &b) in WARMED.iter().enumerate() {
        slot[b as usize] = k as u8;
    }
    let mut count = vec![0u32; n * n];
    let mut prev = u8::MAX;
    for &b in &s.folded {
        let k = slot[b as usize];
        if prev != u8::MAX && k != u8::MAX {
            count[prev as usize * n + k as usize] += 1;
        }
        prev = k;
    }
    let mut pairs: Vec<(u32, ShortKey)> = count
        .iter()
        .enumerate()
        .filter(|&(_, &c)| c >= FREQUENT_PAIR)
        .map(|(i, &c)| (c, u16::from_le_bytes([WARMED[i / n], WARMED[i % n]])))
        .collect();
    pairs.sort_by_key(|&(c, key)| (std::cmp::Reverse(c), key));
    pairs.truncate(START_PAIRS);
    pairs.into_iter().map(|(_, key)| key).collect()
}

/// Whether every lone letter and digit is kept for the index as it is
/// (accents ignored when `bare`).
#[cfg(test)]
fn lone_pages_current(s: &Snapshot, bare: bool) -> bool {
    short_pages_current(s, bare, &set_keys(ALL_WARMED))
}

/// Whether the pages of `keys` are kept for the index as it is (accents
/// ignored when `bare`).
pub fn short_pages_current(s: &Snapshot, bare: bool, keys: &[ShortKey]) -> bool {
    keys.iter().all(|&k| s.kept(k, bare))
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

    /// The pairs worked out after a start are those the test's own names
    /// hold 20,000 times or more (folded: `QZ` is `qz`), the most frequent
    /// first; one held 19,999 times is not.
    #[test]
    fn frequent_pairs_are_those_the_names_hold_most_often() {
        let mut names = Vec::new();
        for k in 0..21_000 {
            names.push(if k % 2 == 0 {
                format!("QZ-{k}")
            } else {
                format!("qz_{k}.txt")
            });
        }
        names.extend((0..19_999).map(|k| format!("ab~{k}")));
        names.extend((0..12_000).map(|k| format!("mmm {k}")));
        let mut rows = vec![Change::Upsert(row(1, None, "/r", Kind::Dir, 0))];
        for (k, name) in names.iter().enumerate() {
            rows.push(Change::Upsert(row(
                2 + k as i64,
                Some(1),
                name,
                Kind::File,
                0,
            )));
        }
        let mut s = Snapshot::default();
        s.apply(rows, None);
        s.mark_loaded();
        let mut count: std::collections::HashMap<[u8; 2], u32> = Default::default();
        for name in &names {
            let name = name.to_lowercase().into_bytes();
            for w in name.windows(2) {
                if w.iter()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
                {
                    *count.entry([w[0], w[1]]).or_default() += 1;
                }
            }
        }
        let mut want: Vec<(u32, u16)> = count
            .into_iter()
            .filter(|&(_, n)| n >= 20_000)
            .map(|(p, n)| (n, u16::from_le_bytes(p)))
            .collect();
        want.sort_by_key(|&(n, key)| (std::cmp::Reverse(n), key));
        let want: Vec<u16> = want.into_iter().map(|(_, key)| key).collect();
        assert_eq!(
            want,
            [u16::from_le_bytes(*b"mm"), u16::from_le_bytes(*b"qz")],
            "the test's own count"
        );
        assert_eq!(frequent_pairs(&s), want);
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
            for (q, bare) in ["a", "2", "x", "z", "é", "q", "ta", "a2", "x.", "zz", "9a"]
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

        // The pairs a character starts, worked out ahead: every letter or
        // digit that follows it in a name the test reads itself, and
        // answered from what was kept as a name-by-name order says.
        for first in [b'a', b'2', b'x'] {
            let s = lock.read().unwrap();
            let pairs = follower_pairs(&s, first);
            drop(s);
            let s = lock.read().unwrap();
            for i in 0..s.id_bound() {
                if s.entry_kind(i as u32).is_none() {
                    continue;
                }
                for w in s.folded_name(i).windows(2) {
                    if w[0] == first && WARMED.contains(&w[1]) {
                        let key = u16::from_le_bytes([w[0], w[1]]);
                        assert!(pairs.contains(&key), "{:?} missing", w);
                    }
                }
            }
            drop(s);
            assert!(warm_short_pages(&lock, false, &pairs));
            let s = lock.read().unwrap();
            assert!(short_pages_current(&s, false, &pairs));
            assert!(pairs.iter().all(|&k| is_pair(k) && s.kept(k, false)));
        }
        check(&lock.read().unwrap(), "pairs worked out ahead");
        {
            // At most MEMO_PAIRS pairs are kept, the oldest let go.
            let s = lock.read().unwrap();
            let firsts = MEMO_PAIRS / WARMED.len() + 1;
            for a in WARMED.iter().take(firsts) {
                for b in WARMED {
                    let q = Query::parse(&format!("{}{}", *a as char, *b as char)).unwrap();
                    s.lone_page(&q, Sort::Relevance, 0, 10, false).unwrap();
                }
            }
            let pairs = s.memo.lock_ok().iter().filter(|m| is_pair(m.0)).count();
            assert_eq!(pairs, MEMO_PAIRS);
            assert!(s.kept(u16::from_le_bytes([WARMED[firsts - 1], b'9']), false));
            assert!(!s.kept(u16::from_le_bytes([b'a', b'a']), false));
        }
        check(&lock.read().unwrap(), "pairs let go");
        assert_eq!(short_key(&Query::parse("ta").unwrap()), Some(0x6174));
        assert_eq!(short_key(&Query::parse("tax").unwrap()), None);
        assert_eq!(short_key(&Query::parse("t/").unwrap()), None);
        assert!(!is_lone(&Query::parse("ab").unwrap()));
        assert!(!is_lone(&Query::parse("a b").unwrap()));
        assert!(is_lone(&Query::parse("7").unwrap()));
    }

    /// Under live changes (files whose names hold the letter created,
    /// renamed and removed, folders renamed, in bursts) with the pages
    /// worked out again in the background whenever the index is quiet, as
    /// the engine does: every answer to a lone character, from what was
    /// kept or worked out afresh, has the count and first pages of the
    /// order worked out here name by name, and once the index is quiet the
    /// answer comes from what was kept for the index as it is. A page
    /// worked out while a commit waited (stopped half way) is never kept.
    #[test]
    fn lone_characters_kept_current_in_the_background_under_live_changes() {
        use crate::index::SnapshotMirror;
        use crate::store::Mirror;
        use std::sync::Arc;
        use std::sync::atomic::{AtomicBool, Ordering};
        use std::time::{Duration, Instant};

        let lock = Arc::new(RwLock::new(Snapshot::default()));
        let (events, _) = tokio::sync::broadcast::channel(16);
        let mut mirror = SnapshotMirror {
            snapshot: lock.clone(),
            events,
        };
        let mut rows = vec![Change::Upsert(row(1, None, "/r", Kind::Dir, 0))];
        for d in 0..30i64 {
            let name = ["Taxes", "photos", "x", "notes", "café"][d as usize % 5];
            rows.push(Change::Upsert(row(
                2 + d,
                Some(1),
                &format!("{name}{d}"),
                Kind::Dir,
                0,
            )));
        }
        let mut seed = 0x2545_F491_4F6C_DD1Du64;
        let mut next = move |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        let words = ["a", "tax", "b_a", "zz", "ä", "e.txt", "ab c", "2025"];
        let mut id = 40i64;
        for _ in 0..3_000 {
            let name = format!("{}{}", words[next(8) as usize], next(1000));
            let dir = 2 + next(30) as i64;
            rows.push(Change::Upsert(row(
                id,
                Some(dir),
                &name,
                Kind::File,
                next(50) as i64,
            )));
            id += 1;
        }
        mirror.apply(rows);
        lock.write().unwrap().mark_loaded();

        // The background work, as `engine::warm` runs it: once the index is
        // quiet, both accents modes.
        let stop = Arc::new(AtomicBool::new(false));
        let warm = {
            let (lock, stop) = (lock.clone(), stop.clone());
            std::thread::spawn(move || {
                let commits = lock.read().unwrap().commits();
                let mut since = commits.seen();
                while !stop.load(Ordering::Relaxed) {
                    since = commits.wait_quiet(
                        since,
                        Duration::from_millis(15),
                        Duration::from_millis(30),
                    );
                    warm_lone_pages(&lock, false);
                    warm_lone_pages(&lock, true);
                }
            })
        };

        let check = |s: &Snapshot, when: &str| {
            let live: Vec<u32> = (0..s.id_bound() as u32)
                .filter(|&i| s.entry_kind(i).is_some() && s.entry_parent(i).is_some())
                .collect();
            for (q, bare) in [("a", false), ("a", true), ("e", false), ("2", true)] {
                let want = oracle(s, &live, &[q], bare);
                let text = if bare {
                    format!("{q} accents:ignore")
                } else {
                    q.to_owned()
                };
                let query = Query::parse(&text).unwrap();
                let pages = [(0, 400, false), (100, 300, false)];
                pages_equal(s, &query, &want, &pages, &format!("{when}: {text}"));
            }
        };
        let mut live_files: Vec<i64> = (40..id).collect();
        for round in 0..40 {
            // A burst: new files holding the letter, renames into and out
            // of it, removals, a folder renamed (its files match through it
            // or stop matching).
            let mut burst = Vec::new();
            for _ in 0..1 + next(3) {
                let mut changes = Vec::new();
                for _ in 0..20 {
                    let name = format!("{}{}", words[next(8) as usize], next(1000));
                    let dir = 2 + next(30) as i64;
                    changes.push(Change::Upsert(row(
                        id,
                        Some(dir),
                        &name,
                        Kind::File,
                        60 + round,
                    )));
                    live_files.push(id);
                    id += 1;
                }
                for _ in 0..10 {
                    let f = live_files[next(live_files.len() as u64) as usize];
                    let name = format!("{}{}", words[next(8) as usize], next(1000));
                    changes.push(Change::Moved {
                        id: f,
                        parent_id: 2 + next(30) as i64,
                        name: name.into_bytes(),
                        subtree: Vec::new(),
                    });
                }
                let gone: Vec<i64> = (0..10)
                    .map(|_| live_files.swap_remove(next(live_files.len() as u64) as usize))
                    .collect();
                changes.push(Change::Removed(gone));
                let d = 2 + next(30) as i64;
                changes.push(Change::Moved {
                    id: d,
                    parent_id: 1,
                    name: format!("{}{d}", ["zz", "a folder", "Äbc", "q"][next(4) as usize])
                        .into_bytes(),
                    subtree: Vec::new(),
                });
                burst.push(changes);
            }
            for changes in burst {
                mirror.apply(changes);
                // Sometimes a pause long enough for the background work to
                // start, and be stopped by the next commit.
                if next(3) == 0 {
                    std::thread::sleep(Duration::from_millis(next(25)));
                }
            }
            check(
                &lock.read().unwrap(),
                &format!("round {round}, right after"),
            );
            if round % 8 == 7 {
                // Quiet: the pages are worked out for the index as it is,
                // and answered from there.
                let deadline = Instant::now() + Duration::from_secs(60);
                while !(lone_pages_current(&lock.read().unwrap(), false)
                    && lone_pages_current(&lock.read().unwrap(), true))
                {
                    assert!(Instant::now() < deadline, "round {round}: never worked out");
                    std::thread::sleep(Duration::from_millis(5));
                }
                check(&lock.read().unwrap(), &format!("round {round}, quiet"));
            }
        }
        stop.store(true, Ordering::Relaxed);
        warm.join().unwrap();
    }
}
