//! Marking a term with accents ignored (`accents:ignore`, see
//! [`crate::queries::accents`]): an entry matches when the bare form of its
//! folded name holds the (bare) term.
//!
//! No bare copy of every name is kept. A bare term that occurs in a folded
//! name occurs in its bare form too (stripping only drops or replaces
//! characters the term has none of), so the plain arena scan finds every
//! match among names without accents and some with; the rest are names with
//! a byte above ASCII, whose bare forms are searched here, only in the
//! blocks whose trigram filter passes the term (the filter holds each
//! accented name's bare trigrams as well). A term under 3 bytes has no
//! filter: every such name is searched. Which names those are (a byte above ASCII,
//! and a bare form that differs: not a CJK or Cyrillic name without
//! marks), with their bare forms, is found once per generation of the
//! index, by the first such search after a change ([`Snapshot::accented`]),
//! not by every search: that pass over the arena, and stripping the same
//! names again, made `tax accents:ignore` 2.2x `tax` (18.6 against 8.3 ms
//! at 1M); now 8.5 ms. Names renamed since the arena was built (the side
//! table) are among them, so no search strips a name.

use std::borrow::Cow;

use memchr::memmem;

use crate::index::Snapshot;
use crate::index::fold::strip_accents_bytes;
use crate::index::snapshot::{AccentedNames, HOLE, SEP};

use super::rank::fit;

impl Snapshot {
    /// [`mark_term`](Self::mark_term), with accents ignored when `bare`.
    pub(crate) fn mark_term_as(&self, term: &[u8], bare: bool) -> Vec<u32> {
        if !bare {
            return self.mark_term(term);
        }
        if term.contains(&SEP) {
            self.mark_slash_with(term, |i| strip_accents_bytes(self.folded_name(i)))
        } else {
            self.mark_bare_name_term_fits(term, false).0
        }
    }

    /// [`mark_name_term_fits`](Self::mark_name_term_fits), with accents
    /// ignored when `bare`.
    pub(crate) fn mark_name_term_fits_as(
        &self,
        term: &[u8],
        fits: bool,
        bare: bool,
    ) -> (Vec<u32>, Vec<u8>) {
        if bare {
            self.mark_bare_name_term_fits(term, fits)
        } else {
            self.mark_name_term_fits(term, fits)
        }
    }

    /// The entries whose bare folded name holds `term` (already bare, no
    /// SEP), ascending, and with `fits` how well each name fits it.
    pub(crate) fn mark_bare_name_term_fits(&self, term: &[u8], fits: bool) -> (Vec<u32>, Vec<u8>) {
        let (ids, how) = self.mark_name_term_fits(term, fits);
        let finder = memmem::Finder::new(term);
        let mut more: Vec<(u32, u8)> = Vec::new();
        let accented = self.accented();
        let mut test = |k: usize| {
            let bare = accented.bare_of(k);
            if finder.find(bare).is_some() {
                more.push((accented.ids[k], if fits { fit(bare, term) } else { 0 }));
            }
        };
        for (from, to) in self.candidate_spans(term) {
            let first = accented.ids.partition_point(|&i| (i as usize) < from);
            let past = accented.ids.partition_point(|&i| (i as usize) < to);
            (first..past).for_each(&mut test);
        }
        // Renamed names are not in the filter's blocks: each is looked at.
        for &i in self.relocated.keys() {
            if let Ok(k) = accented.ids.binary_search(&i) {
                test(k);
            }
        }
        if more.is_empty() {
            return (ids, how);
        }
        // A name can hold the term both as it is and bare: once, with the
        // fit of the plain scan's, which reads the same name (a renamed one
        // in a passing block is met twice above, with the same fit).
        more.sort_by_key(|&(i, _)| i);
        more.dedup_by_key(|&mut (i, _)| i);
        more.retain(|&(i, _)| ids.binary_search(&i).is_err());
        // In place: a lone letter marks a third of a million names, and
        // merging them through a list of pairs held them three times over
        // (7 MB in `strace`'s mappings while the first keys were worked out
        // after a start).
        let (mut ids, mut how) = (ids, if fits { how } else { Vec::new() });
        crate::index::slots::merge_sorted_in_place(&mut ids, fits.then_some(&mut how), &more);
        (ids, how)
    }

    /// [`Snapshot::accented`] for this generation: kept from an earlier
    /// search, or found now.
    pub(crate) fn accented(&self) -> std::sync::Arc<AccentedNames> {
        let mut kept = self.accented.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((generation, names)) = kept.as_ref()
            && *generation == self.generation
        {
            return names.clone();
        }
        let names = std::sync::Arc::new(self.find_accented());
        *kept = Some((self.generation, names.clone()));
        names
    }

    /// The names with a byte above ASCII whose bare form differs, the
    /// arena's and the side table's, ascending, with their bare forms: one
    /// pass over the arena, eight bytes at a time, stripping only the names
    /// that hold such a byte.
    fn find_accented(&self) -> AccentedNames {
        let n = self.parent.len();
        let end = self.fold_at.get(n);
        let mut found: Vec<(u32, Vec<u8>)> = Vec::new();
        let mut pos = 0;
        let mut i = 0;
        while let Some(at) = next_non_ascii(&self.folded, pos, end) {
            // The name holding `at`: usually near, as accented names are
            // a minority.
            i = if self.fold_at.get((i + 8).min(n)) <= at {
                self.fold_at.holder(i, n, at)
            } else {
                let mut k = i;
                while self.fold_at.get(k + 1) <= at {
                    k += 1;
                }
                k
            };
            let (start, stop) = self.fold_at.span(i);
            if let Cow::Owned(bare) = strip_accents_bytes(&self.folded[start..stop - 1]) {
                found.push((i as u32, bare));
            }
            pos = stop;
            i += 1;
        }
        // A renamed name's arena slot is blank: no id comes twice.
        let arena = found.len();
        for (&i, (folded, _)) in &self.relocated {
            if self.kind[i as usize] != HOLE
                && let Cow::Owned(bare) = strip_accents_bytes(folded)
            {
                found.push((i, bare));
            }
        }
        if found.len() > arena {
            found.sort_unstable_by_key(|&(i, _)| i);
        }
        let mut names = AccentedNames {
            ids: Vec::with_capacity(found.len()),
            at: Vec::with_capacity(found.len() + 1),
            bare: Vec::with_capacity(found.iter().map(|(_, b)| b.len()).sum()),
        };
        names.at.push(0);
        for (i, bare) in found {
            names.ids.push(i);
            names.bare.extend_from_slice(&bare);
            names.at.push(names.bare.len() as u32);
        }
        names
    }
}

/// The offset of the first byte above ASCII in `bytes[from..to]`, eight
/// bytes at a time.
#[inline]
fn next_non_ascii(bytes: &[u8], from: usize, to: usize) -> Option<usize> {
    let slice = &bytes[from..to];
    let mut k = 0;
    while k + 8 <= slice.len() {
        let word = u64::from_le_bytes(slice[k..k + 8].try_into().unwrap_or([0; 8]));
        if word & 0x8080_8080_8080_8080 != 0 {
            break;
        }
        k += 8;
    }
    slice[k..]
        .iter()
        .position(|&b| b >= 0x80)
        .map(|p| from + k + p)
}

#[cfg(test)]
mod tests {
    use crate::index::Snapshot;
    use crate::index::fold::bare_str;
    use crate::queries::query::Query;
    use crate::queries::search::Sort;
    use crate::store::{Change, EntryRow, Kind};

    fn row(id: i64, parent: Option<i64>, name: &[u8], kind: Kind) -> EntryRow {
        EntryRow::for_test(id, parent, name, kind)
    }

    fn paths(s: &Snapshot, q: &str) -> Vec<Vec<u8>> {
        let (total, found) = s.search(&Query::parse(q).unwrap(), Sort::Path, 0, false);
        assert_eq!(total, found.len());
        found.into_iter().map(|f| f.path).collect()
    }

    /// Which names are accented is found once per generation and kept: a
    /// name given accents later, whether appended to the arena, renamed
    /// into the side table, or moved back into the arena when it is
    /// compacted, is still found with accents ignored.
    #[test]
    fn accented_names_are_found_again_after_the_arena_changes() {
        let mut s = Snapshot::default();
        let mut rows = vec![Change::Upsert(row(1, None, b"/r", Kind::Dir))];
        for id in 2..200 {
            rows.push(Change::Upsert(row(
                id,
                Some(1),
                format!("plain{id}").as_bytes(),
                Kind::File,
            )));
        }
        s.apply(rows, None);
        s.mark_loaded();
        assert!(paths(&s, "cafe accents:ignore").is_empty());
        // Appended: a new id past the arena's end.
        s.apply(
            vec![Change::Upsert(row(
                300,
                Some(1),
                "Café".as_bytes(),
                Kind::File,
            ))],
            None,
        );
        assert_eq!(
            paths(&s, "cafe accents:ignore"),
            [b"/r/Caf\xc3\xa9".to_vec()]
        );
        // Renamed: the name goes to the side table.
        s.apply(
            vec![Change::Upsert(row(
                5,
                Some(1),
                "Résumé".as_bytes(),
                Kind::File,
            ))],
            None,
        );
        assert_eq!(paths(&s, "resume accents:ignore").len(), 1);
        // Compacted without a change: the renamed name is in the arena now.
        assert!(!s.relocated.is_empty());
        let generation = s.generation;
        s.compact();
        assert!(s.relocated.is_empty());
        assert_eq!(s.generation, generation);
        assert_eq!(paths(&s, "resume accents:ignore").len(), 1);
        assert_eq!(paths(&s, "cafe accents:ignore").len(), 1);
    }

    /// Every accents:ignore answer equals a walk over every path with the
    /// bare folding, through the trigram filter, the relocated names of
    /// renames, `/` terms, negation and alternatives; the plain answers
    /// stay exact.
    #[test]
    fn ignoring_accents_equals_a_bare_path_oracle() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut rnd = |m: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % m
        };
        let syl: [&[u8]; 14] = [
            b"caf",
            "é".as_bytes(),
            "e\u{301}".as_bytes(),
            b"E",
            "Æ".as_bytes(),
            b"ae",
            "ø".as_bytes(),
            b"o",
            "Ł".as_bytes(),
            b"l",
            b"zan",
            b"\xff",
            "が".as_bytes(),
            b"ro",
        ];
        let name = |rnd: &mut dyn FnMut(u64) -> u64| -> Vec<u8> {
            (0..1 + rnd(4))
                .flat_map(|_| syl[rnd(syl.len() as u64) as usize].to_vec())
                .collect()
        };
        let mut rows = vec![row(1, None, b"/r", Kind::Dir)];
        let mut dirs = vec![1i64];
        for id in 2..2000i64 {
            let parent = dirs[rnd(dirs.len() as u64) as usize];
            let kind = if rnd(4) == 0 { Kind::Dir } else { Kind::File };
            if kind == Kind::Dir {
                dirs.push(id);
            }
            rows.push(row(id, Some(parent), &name(&mut rnd), kind));
        }
        let mut s = Snapshot::default();
        s.apply(rows.into_iter().map(Change::Upsert).collect(), None);
        let check = |s: &Snapshot, rnd: &mut dyn FnMut(u64) -> u64| {
            let all = paths(s, "!qqqqqq");
            let bare_rel = |p: &[u8]| bare_str(&String::from_utf8_lossy(&p[b"/r/".len()..]));
            for _ in 0..80 {
                let t = String::from_utf8_lossy(&name(rnd)).into_owned();
                let t: String = t.chars().skip(rnd(2) as usize).collect();
                let t = if rnd(5) == 0 { format!("{t}/") } else { t };
                if t.is_empty() || t == "/" || t.contains('\u{fffd}') {
                    continue;
                }
                let want: Vec<&Vec<u8>> = all
                    .iter()
                    .filter(|p| bare_rel(p).contains(&bare_str(&t)))
                    .collect();
                let got = paths(s, &format!("\"{t}\" accents:ignore"));
                assert_eq!(got.iter().collect::<Vec<_>>(), want, "term {t:?}");
                let not: Vec<&Vec<u8>> = all
                    .iter()
                    .filter(|p| !bare_rel(p).contains(&bare_str(&t)))
                    .collect();
                let got = paths(s, &format!("accents:ignore !\"{t}\""));
                assert_eq!(got.iter().collect::<Vec<_>>(), not, "!term {t:?}");
            }
        };
        check(&s, &mut rnd);
        for _ in 0..300 {
            let id = 2 + rnd(1998) as i64;
            if s.entry_kind(id as u32).is_none() {
                continue;
            }
            match rnd(3) {
                // Files only: a removal lists its whole subtree.
                0 if s.entry_kind(id as u32) == Some(Kind::File) => {
                    s.apply(vec![Change::Removed(vec![id])], None)
                }
                0 => {}
                _ => {
                    let parent = s.entry_parent(id as u32).unwrap_or(1) as i64;
                    let kind = s.entry_kind(id as u32).unwrap_or(Kind::File);
                    s.apply(
                        vec![Change::Upsert(row(id, Some(parent), &name(&mut rnd), kind))],
                        None,
                    )
                }
            }
        }
        assert!(!s.relocated.is_empty());
        check(&s, &mut rnd);
    }

    /// The marks of a term with accents ignored: each entry once, in id
    /// order, whether its name holds the term as it is, bare, or both (then
    /// with the plain scan's fit), relocated names (renames) included.
    #[test]
    fn bare_marks_hold_each_entry_once_in_order() {
        let rows = [
            row(1, None, b"/r", Kind::Dir),
            row(2, Some(1), "cafe-café".as_bytes(), Kind::File),
            row(3, Some(1), b"cafe", Kind::File),
            row(4, Some(1), "café".as_bytes(), Kind::File),
            row(5, Some(1), b"tea", Kind::File),
            row(6, Some(1), "Café au lait".as_bytes(), Kind::File),
            row(7, Some(1), b"decaf", Kind::File),
        ];
        let mut s = Snapshot::default();
        s.apply(rows.into_iter().map(Change::Upsert).collect(), None);
        // Renamed: its name now lives among the relocated ones.
        s.apply(
            vec![Change::Upsert(row(
                5,
                Some(1),
                "thé-café".as_bytes(),
                Kind::File,
            ))],
            None,
        );
        assert!(!s.relocated.is_empty());
        let (plain_ids, plain_fits) = s.mark_name_term_fits(b"cafe", true);
        assert_eq!(plain_ids, [2, 3]);
        let (ids, fits) = s.mark_bare_name_term_fits(b"cafe", true);
        assert_eq!(ids, [2, 3, 4, 5, 6]);
        assert_eq!(fits.len(), ids.len());
        assert_eq!(
            fits[0], plain_fits[0],
            "the plain scan's fit for a name holding both"
        );
        assert_eq!(s.mark_bare_name_term_fits(b"cafe", false).0, ids);
    }

    #[test]
    fn cafe_finds_every_spelling_only_when_asked() {
        let rows = [
            row(1, None, b"/r", Kind::Dir),
            row(2, Some(1), "Café.txt".as_bytes(), Kind::File),
            row(3, Some(1), "cafe\u{301}".as_bytes(), Kind::File),
            row(4, Some(1), b"CAFE", Kind::File),
            row(5, Some(1), b"caf\xe9", Kind::File),
            row(6, Some(1), "Ærøskøbing".as_bytes(), Kind::Dir),
            row(7, Some(6), b"map.png", Kind::File),
        ];
        let mut s = Snapshot::default();
        s.apply(rows.into_iter().map(Change::Upsert).collect(), None);
        let names = |q: &str| -> Vec<String> {
            paths(&s, q)
                .iter()
                .map(|p| String::from_utf8_lossy(&p[3..]).into_owned())
                .collect()
        };
        assert_eq!(names("cafe"), ["CAFE"]);
        assert_eq!(
            names("cafe accents:ignore"),
            ["CAFE", "Café.txt", "cafe\u{301}"]
        );
        assert_eq!(names("accents:ignore café"), names("cafe accents:ignore"));
        assert_eq!(
            names("aeroskobing/map accents:ignore"),
            ["Ærøskøbing/map.png"]
        );
        assert_eq!(names("accents:ignore caf\u{fffd}"), ["caf\u{fffd}"]);
    }
}
