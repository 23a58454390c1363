//! The paths of a large answer, each built from its folder's path.
//!
//! [`Snapshot::path`] walks from an entry up to its root and back down,
//! two allocations and a name copy per level: about a third of the daemon's
//! time for a whole answer of hundreds of thousands of results (`ar`:
//! 272,290 paths at a million entries). The results of one answer share
//! few folders (129,008 in the whole 1M tree), so [`Paths`] keeps each
//! folder's path the first time a result needs it, in one buffer, and a
//! result's path is its folder's bytes, a separator and its own name: one
//! look-up and two copies, whatever the depth.

use std::collections::HashMap;

use foldhash::fast::RandomState;

use crate::index::Snapshot;
use crate::index::snapshot::NO_PARENT;
use crate::platform::bytes::SEP;
use crate::store::Kind;

use super::Found;

/// Folders' paths worked out for one answer, over one unchanged snapshot.
#[derive(Debug, Default)]
pub struct Paths {
    /// Folder id → where its path lies in `bytes`.
    folders: HashMap<u32, (u32, u32), RandomState>,
    bytes: Vec<u8>,
    /// The snapshot's generation the paths are of.
    generation: Option<u64>,
}

impl Paths {
    pub fn new() -> Paths {
        Paths::default()
    }

    /// Where folder `d`'s path lies in `bytes`, worked out (and its
    /// folders') when not kept yet.
    fn folder(&mut self, s: &Snapshot, d: u32) -> (u32, u32) {
        if let Some(&at) = self.folders.get(&d) {
            return at;
        }
        // The folders above `d` not kept yet, nearest first.
        let mut chain = vec![d];
        let mut base = None;
        loop {
            let p = s.parent.get(*chain.last().unwrap() as usize);
            if p == NO_PARENT {
                break;
            }
            if let Some(&at) = self.folders.get(&p) {
                base = Some(at);
                break;
            }
            chain.push(p);
        }
        let mut at = base;
        for &f in chain.iter().rev() {
            let start = self.bytes.len();
            if let Some((from, to)) = at {
                self.bytes.extend_from_within(from as usize..to as usize);
                if self.bytes.last() != Some(&SEP) {
                    self.bytes.push(SEP);
                }
            }
            // A root's own entry holds its whole path.
            s.push_name_to(f as usize, &mut self.bytes);
            let here = (start as u32, self.bytes.len() as u32);
            self.folders.insert(f, here);
            at = Some(here);
        }
        at.expect("a chain of at least one folder")
    }

    /// Entry `i`'s path, as [`Snapshot::path`] makes it, appended to
    /// `out`; returns where its own name starts in `out`.
    pub fn push_path(&mut self, s: &Snapshot, i: u32, out: &mut Vec<u8>) -> usize {
        if self.generation != Some(s.generation()) {
            // Another snapshot (the answer let go of it and it changed).
            self.folders.clear();
            self.bytes.clear();
            self.generation = Some(s.generation());
        }
        let p = s.parent.get(i as usize);
        if p != NO_PARENT {
            let (from, to) = self.folder(s, p);
            out.extend_from_slice(&self.bytes[from as usize..to as usize]);
            if out.last() != Some(&SEP) {
                out.push(SEP);
            }
        }
        let name = out.len();
        s.push_name_to(i as usize, out);
        name
    }

    /// The result for entry `i` ([`Snapshot::found`]), its path built from
    /// its folder's.
    pub fn found(&mut self, s: &Snapshot, i: u32) -> Found {
        let mut path = Vec::with_capacity(128);
        let name = self.push_path(s, i, &mut path);
        Found {
            id: i,
            name: path[name..].to_vec(),
            path,
            kind: Kind::from_i64(s.kind[i as usize] as i64),
            size: s.size_of(i as usize),
            mtime_ns: s.mtime[i as usize],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{Change, EntryRow};

    /// Every entry's path and name built from its folder's equal
    /// [`Snapshot::found`]'s walk to the root: two roots (one `/`), deep
    /// and shallow folders, capitals, names that are not UTF-8, a folder
    /// renamed and moved, entries removed, asked in an order that is not
    /// the tree's, with one `Paths` across the change.
    #[test]
    fn paths_from_folders_equal_the_walk_to_the_root_under_changes() {
        let row = |id: i64, parent: Option<i64>, name: &[u8], kind| {
            Change::Upsert(EntryRow::for_test(id, parent, name, kind))
        };
        let mut rows = vec![
            row(1, None, b"/", Kind::Dir),
            row(2, None, b"/home/Some One", Kind::Dir),
        ];
        let mut id = 3i64;
        let mut dirs = vec![1i64, 2];
        for k in 0..200 {
            let parent = dirs[(k * 7) % dirs.len()];
            let name: Vec<u8> = match k % 4 {
                0 => format!("Folder {k}").into_bytes(),
                1 => vec![b'b', 0xff, b'0' + (k % 10) as u8],
                2 => format!("ÄRGER_{k}").into_bytes(),
                _ => format!("d{k}").into_bytes(),
            };
            rows.push(row(id, Some(parent), &name, Kind::Dir));
            dirs.push(id);
            id += 1;
        }
        for k in 0..3000 {
            let parent = dirs[(k * 13) % dirs.len()];
            rows.push(row(
                id,
                Some(parent),
                format!("File{k}.TXT").as_bytes(),
                Kind::File,
            ));
            id += 1;
        }
        let mut s = Snapshot::default();
        s.apply(rows, None);
        let mut paths = Paths::new();
        let check = |s: &Snapshot, paths: &mut Paths| {
            let ids: Vec<u32> = (0..s.id_bound() as u32)
                .rev()
                .filter(|&i| s.entry_kind(i).is_some())
                .collect();
            assert!(ids.len() > 3000);
            for i in ids {
                assert_eq!(paths.found(s, i), s.found(i), "entry {i}");
            }
        };
        check(&s, &mut paths);
        s.apply(
            vec![
                Change::Moved {
                    id: 5,
                    parent_id: 2,
                    name: b"Renamed \xfe".to_vec(),
                    subtree: Vec::new(),
                },
                Change::Removed((300..400).collect()),
            ],
            None,
        );
        check(&s, &mut paths);
    }

    /// Whole answers of more results than one thread keys (ranked in two
    /// halves and merged) are the order worked out name by name, from the
    /// top, from an offset, reversed, and in pages of a quarter and more.
    #[test]
    fn whole_answers_ranked_in_two_halves_equal_a_name_by_name_order() {
        use crate::queries::query::Query;
        use crate::queries::search::within::tests::{oracle, pages_equal};
        let row = |id: i64, parent: Option<i64>, name: &str, kind, mtime| {
            Change::Upsert(EntryRow {
                mtime_ns: mtime,
                ..EntryRow::for_test(id, parent, name.as_bytes(), kind)
            })
        };
        let mut rows = vec![row(1, None, "/r", Kind::Dir, 0)];
        let dirs = ["bar", "x", "Car", "zz", "ar", "radar q"];
        for (k, d) in dirs.iter().enumerate() {
            rows.push(row(2 + k as i64, Some(1), d, Kind::Dir, 0));
        }
        let names = ["ar", "bar.txt", "x ar y", "zz", "Ärger", "q", "far"];
        for k in 0..(super::super::rank::PARALLEL_KEYS + 6_000) {
            let dir = 2 + (k * 7 % dirs.len()) as i64;
            let name = format!("{}{}", names[k % names.len()], k % 13);
            rows.push(row(
                10 + k as i64,
                Some(dir),
                &name,
                Kind::File,
                (k % 17) as i64,
            ));
        }
        let mut s = Snapshot::default();
        s.apply(rows, None);
        let live: Vec<u32> = (0..s.id_bound() as u32)
            .filter(|&i| s.entry_kind(i).is_some() && s.entry_parent(i).is_some())
            .collect();
        let want = oracle(&s, &live, &["ar"], false);
        assert!(
            want.len() > super::super::rank::PARALLEL_KEYS,
            "{}",
            want.len()
        );
        let n = want.len();
        let query = Query::parse("ar").unwrap();
        let pages = [
            (0, n, false),
            (0, n, true),
            (1000, n - 1000, false),
            (500, n / 3, true),
            (0, n / 3, false),
        ];
        pages_equal(&s, &query, &want, &pages, "ar");
    }
}
