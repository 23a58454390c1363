use memchr::memmem;

use super::*;
use crate::index::fold::fold_bytes;
use crate::index::snapshot::{RUNS, capitalise, push_orig};
use crate::queries::query::{KindClass, kind_of};
use crate::store::{Change, EntryRow};

fn row(id: i64, parent: Option<i64>, name: &str, kind: Kind) -> EntryRow {
    EntryRow {
        size: id as u64,
        ..EntryRow::for_test(id, parent, name.as_bytes(), kind)
    }
}

fn paths(s: &Snapshot, q: &str) -> Vec<String> {
    let (_, found) = s.search(&Query::parse(q).unwrap(), Sort::Path, 0, false);
    found
        .into_iter()
        .map(|f| String::from_utf8(f.path).unwrap())
        .collect()
}

#[test]
fn applied_changes_are_searchable_and_survive_compaction() {
    let mut s = Snapshot::default();
    s.apply(
        vec![
            Change::Upsert(row(1, None, "/r", Kind::Dir)),
            Change::Upsert(row(2, Some(1), "Taxes", Kind::Dir)),
            Change::Upsert(row(3, Some(2), "w2.pdf", Kind::File)),
            Change::Upsert(row(5, Some(1), "Notes.TXT", Kind::File)),
        ],
        None,
    );
    assert_eq!(s.len(), 4);
    assert_eq!(paths(&s, "tax"), ["/r/Taxes", "/r/Taxes/w2.pdf"]);
    assert_eq!(paths(&s, "notes.txt"), ["/r/Notes.TXT"]);
    // A metadata update keeps the name; a new name relocates it.
    s.apply(
        vec![Change::Upsert(row(3, Some(2), "w2.pdf", Kind::File))],
        None,
    );
    s.apply(
        vec![Change::Upsert(row(2, Some(1), "Receipts", Kind::Dir))],
        None,
    );
    assert!(paths(&s, "tax").is_empty());
    assert_eq!(paths(&s, "receipts w2"), ["/r/Receipts/w2.pdf"]);
    s.apply(vec![Change::Removed(vec![5])], None);
    assert!(paths(&s, "notes").is_empty());
    assert_eq!(s.len(), 3);
    s.compact();
    assert_eq!(paths(&s, "receipts"), ["/r/Receipts", "/r/Receipts/w2.pdf"]);
    assert_eq!(paths(&s, "receipts/w2"), ["/r/Receipts/w2.pdf"]);
    assert!(paths(&s, "notes").is_empty());
}

/// Depth and descendant ranges are kept for folders only; every entry's
/// depth and every subtree search must still equal a walk of the parent
/// links, after folders move (deeper, shallower, under a higher id) and
/// a file's id comes back as a folder with children.
#[test]
fn extensions_match_on_bytes_as_on_the_shown_text() {
    let names: [&[u8]; 8] = [
        b"a\xff.pdf",
        b"b.pdf",
        b"c.PDF",
        b"d\xff",
        b".pdf",
        b"e.\xff",
        b"f.pd\xff",
        b"g\xc3.pdf",
    ];
    let mut rows = vec![Change::Upsert(row(1, None, "/r", Kind::Dir))];
    for (k, n) in names.iter().enumerate() {
        let mut r = row(2 + k as i64, Some(1), "", Kind::File);
        r.name = n.to_vec();
        rows.push(Change::Upsert(r));
    }
    rows.push(Change::Upsert(row(50, Some(1), "folder.pdf", Kind::Dir)));
    let mut s = Snapshot::default();
    s.apply(rows, None);
    let names_of = |q: &str| -> Vec<Vec<u8>> {
        let (_, found) = s.search(&Query::parse(q).unwrap(), Sort::Path, 0, false);
        found.into_iter().map(|f| f.name).collect()
    };
    let want: Vec<Vec<u8>> = [&b"a\xff.pdf"[..], b"b.pdf", b"c.PDF", b"g\xc3.pdf"]
        .iter()
        .map(|n| n.to_vec())
        .collect();
    assert_eq!(names_of("ext:pdf"), want);
    // An extension with U+FFFD matches what a name that is not UTF-8 shows.
    assert_eq!(names_of("ext:\u{fffd}"), vec![b"e.\xff".to_vec()]);
}

#[test]
fn kinds_worked_out_per_extension_equal_each_names_kind() {
    let names = [
        "a.JPG",
        "b.jpg",
        "c.png",
        "Makefile",
        "makefile.jpg",
        "CMakeLists.txt",
        "notes.txt",
        "x.tar.gz",
        "song.flac",
        "film.mkv",
        "noext",
        "Dockerfile",
        ".bashrc",
        "weird.verylongextension",
        "caf\u{e9}.PDF",
        "r\u{e9}sum\u{e9}.docx",
        "a.",
        "..",
        "justfile",
        "img.jpeg.txt",
        "clip.MP4",
    ];
    let mut rows = vec![Change::Upsert(row(1, None, "/r", Kind::Dir))];
    for (k, n) in names.iter().enumerate() {
        rows.push(Change::Upsert(row(2 + k as i64, Some(1), n, Kind::File)));
    }
    rows.push(Change::Upsert(row(100, Some(1), "photos.jpg", Kind::Dir)));
    let mut s = Snapshot::default();
    s.apply(rows, None);
    for kind in [
        "image", "document", "code", "text", "archive", "audio", "video", "folder",
    ] {
        let got = paths(&s, &format!("kind:{kind}"));
        let mut want: Vec<String> = names
            .iter()
            .filter(|n| {
                // Each name judged on its own, as the query sees it (folded).
                let folded = String::from_utf8(fold_bytes(n.as_bytes()).into_owned()).unwrap();
                matches!(
                    (kind, kind_of(&folded, false)),
                    ("image", Some(KindClass::Image))
                        | ("document", Some(KindClass::Document))
                        | ("code", Some(KindClass::Code))
                        | ("text", Some(KindClass::Text))
                        | ("archive", Some(KindClass::Archive))
                        | ("audio", Some(KindClass::Audio))
                        | ("video", Some(KindClass::Video))
                )
            })
            .map(|n| format!("/r/{n}"))
            .collect();
        if kind == "folder" {
            want = vec!["/r/photos.jpg".to_owned()];
        }
        want.sort();
        let mut got = got;
        got.sort();
        assert_eq!(got, want, "kind:{kind}");
    }
    // The same, written out by hand for some of them.
    let by_hand = [
        ("image", &["a.JPG", "b.jpg", "c.png", "makefile.jpg"][..]),
        (
            "code",
            &["CMakeLists.txt", "Dockerfile", "Makefile", "justfile"][..],
        ),
        ("text", &["img.jpeg.txt", "notes.txt"][..]),
        ("archive", &["x.tar.gz"][..]),
        ("document", &["caf\u{e9}.PDF", "r\u{e9}sum\u{e9}.docx"][..]),
    ];
    for (kind, names) in by_hand {
        let mut got = paths(&s, &format!("kind:{kind}"));
        got.sort();
        let mut want: Vec<String> = names.iter().map(|n| format!("/r/{n}")).collect();
        want.sort();
        assert_eq!(got, want, "kind:{kind} by hand");
    }
}

#[test]
fn depths_and_subtrees_equal_a_walk_after_moves() {
    fn walk_depth(s: &Snapshot, mut i: u32) -> u16 {
        let mut d = 0;
        while let Some(p) = s.entry_parent(i) {
            d += 1;
            i = p;
        }
        d
    }
    fn check(s: &Snapshot) {
        for i in 0..s.id_bound() as u32 {
            if s.entry_kind(i).is_some() {
                assert_eq!(s.entry_depth(i), walk_depth(s, i), "depth of {i}");
            }
        }
        // Every entry under a folder named `a`, by a walk: what the
        // search spreads from that folder (sparse, one mark).
        let mut want: Vec<String> = Vec::new();
        for i in 0..s.id_bound() as u32 {
            if s.entry_kind(i).is_none() {
                continue;
            }
            let mut a = Some(i);
            while let Some(x) = a {
                if *s.entry_name(x) == *b"a" {
                    want.push(String::from_utf8(s.path(i)).unwrap());
                    break;
                }
                a = s.entry_parent(x);
            }
        }
        want.sort();
        assert_eq!(
            paths(s, "a/"),
            want.iter()
                .filter(|p| !p.ends_with("/a"))
                .cloned()
                .collect::<Vec<_>>()
        );
    }
    let mut s = Snapshot::default();
    let mut rows = vec![Change::Upsert(row(1, None, "/r", Kind::Dir))];
    // /r/d2..d6, each in the one before, and a file in each.
    for k in 0..5i64 {
        let dir = 2 + 2 * k;
        let parent = if k == 0 { 1 } else { dir - 2 };
        rows.push(Change::Upsert(row(
            dir,
            Some(parent),
            &format!("d{dir}"),
            Kind::Dir,
        )));
        rows.push(Change::Upsert(row(
            dir + 1,
            Some(dir),
            &format!("f{dir}"),
            Kind::File,
        )));
    }
    rows.push(Change::Upsert(row(12, Some(1), "a", Kind::Dir)));
    rows.push(Change::Upsert(row(13, Some(12), "x", Kind::File)));
    s.apply(rows, None);
    check(&s);
    let moved = |id: i64, parent_id: i64, name: &str, subtree: Vec<i64>| Change::Moved {
        id,
        parent_id,
        name: name.as_bytes().to_vec(),
        subtree,
    };
    // d4 (with d6..d10 below it) moves under a, then out to the root.
    let below_d4 = vec![5, 6, 7, 8, 9, 10, 11];
    s.apply(vec![moved(4, 12, "d4", below_d4.clone())], None);
    check(&s);
    assert_eq!(s.entry_depth(11), 6);
    s.apply(vec![moved(4, 1, "d4", below_d4)], None);
    check(&s);
    // File 3 becomes a folder holding a new entry; a, emptied, is
    // moved under d10 (a higher id: the ids are no longer ordered).
    s.apply(
        vec![
            Change::Upsert(row(3, Some(2), "f2", Kind::Dir)),
            Change::Upsert(row(14, Some(3), "y", Kind::File)),
            moved(12, 10, "a", vec![13]),
        ],
        None,
    );
    check(&s);
    assert_eq!(s.entry_depth(14), 3);
    assert_eq!(s.entry_depth(13), 6);
}

/// Original names come back byte for byte, whether kept as case runs
/// or whole: capitals at either end, runs and gaps longer than a run
/// byte holds, non-ASCII letters, decomposed accents, invalid UTF-8.
#[test]
fn original_names_come_back_exactly() {
    let long_gap = format!("{}X", "a".repeat(600));
    let long_caps = format!("b{}c", "Q".repeat(700));
    let names: Vec<Vec<u8>> = [
        "README.md",
        "IMG_0042.JPG",
        "Café Menu.PDF",
        "ÉCOLE",
        "e\u{301}T\u{e9}",
        "x",
        "X",
        "aBcDeFgHiJ",
        "Straße",
        long_gap.as_str(),
        long_caps.as_str(),
    ]
    .iter()
    .map(|n| n.as_bytes().to_vec())
    .chain([b"Bad\xffName".to_vec()])
    .collect();
    for name in &names {
        let folded = fold_bytes(name).into_owned();
        let mut orig = Vec::new();
        push_orig(&mut orig, name, &folded);
        let head = u16::from_le_bytes([orig[0], orig[1]]);
        let body = &orig[2..];
        let back = if head & RUNS != 0 {
            assert!(body.len() < name.len(), "runs only when smaller");
            let mut out = folded.clone();
            capitalise(&mut out, body);
            out
        } else {
            body.to_vec()
        };
        assert_eq!(back, *name, "{}", String::from_utf8_lossy(name));
    }
    // Through a snapshot: pushed, loaded back by compaction, in paths.
    let mut s = Snapshot::default();
    let mut rows = vec![Change::Upsert(row(1, None, "/r", Kind::Dir))];
    for (k, name) in names.iter().enumerate() {
        let mut r = row(2 + k as i64, Some(1), "", Kind::File);
        r.name = name.clone();
        rows.push(Change::Upsert(r));
    }
    s.apply(rows, None);
    let check = |s: &Snapshot| {
        for (k, name) in names.iter().enumerate() {
            let id = 2 + k as u32;
            assert_eq!(*s.entry_name(id), **name);
            let mut want = b"/r/".to_vec();
            want.extend_from_slice(name);
            assert_eq!(s.path(id), want);
        }
    };
    check(&s);
    assert_eq!(paths(&s, "img_0042.jpg"), ["/r/IMG_0042.JPG"]);
    assert_eq!(paths(&s, "CAFÉ"), ["/r/Café Menu.PDF"]);
    s.compact();
    check(&s);
}

/// Sizes are kept in 4 bytes, the few of 4 GiB and more on the side:
/// filters and the size order see every size exactly, on both sides of
/// that line, and after a size moves across it.
#[test]
fn sizes_of_four_gib_and_more_stay_exact() {
    let sizes: [u64; 6] = [
        0,
        4096,
        u32::MAX as u64 - 1,
        u32::MAX as u64,
        5 << 30,
        1 << 62,
    ];
    let mut changes = vec![Change::Upsert(row(1, None, "/r", Kind::Dir))];
    for (k, &size) in sizes.iter().enumerate() {
        let mut r = row(2 + k as i64, Some(1), &format!("f{k}"), Kind::File);
        r.size = size;
        changes.push(Change::Upsert(r));
    }
    let mut s = Snapshot::default();
    s.apply(changes, None);
    let by_size = |s: &Snapshot| {
        let (_, found) = s.search(&Query::parse("f").unwrap(), Sort::Size, 0, false);
        found.into_iter().map(|f| f.size).collect::<Vec<_>>()
    };
    let mut want = sizes.to_vec();
    want.sort_unstable_by(|a, b| b.cmp(a));
    assert_eq!(by_size(&s), want);
    assert_eq!(paths(&s, "size:>=4294967295"), ["/r/f3", "/r/f4", "/r/f5"]);
    assert_eq!(paths(&s, "size:<4294967295"), ["/r/f0", "/r/f1", "/r/f2"]);
    // A big file shrinks, a small one grows past 4 GiB.
    let mut shrunk = row(6, Some(1), "f4", Kind::File);
    shrunk.size = 10;
    let mut grown = row(3, Some(1), "f1", Kind::File);
    grown.size = 6 << 30;
    s.apply(vec![Change::Upsert(shrunk), Change::Upsert(grown)], None);
    assert_eq!(s.entry_size(6), 10);
    assert_eq!(s.entry_size(3), 6 << 30);
    assert_eq!(paths(&s, "size:>5gb"), ["/r/f1", "/r/f5"]);
}

/// Pages (offset + limit) of every order, forwards and reversed, put
/// together equal the whole answer: no gaps, no repeats (fsgui pages
/// through a million matches this way).
#[test]
fn pages_fit_together_in_every_order() {
    let mut rows = vec![Change::Upsert(row(1, None, "/r", Kind::Dir))];
    for d in 0..7i64 {
        let dir = 10 + d * 100;
        rows.push(Change::Upsert(row(
            dir,
            Some(1),
            &format!("doc{}", d % 3),
            Kind::Dir,
        )));
        for f in 0..13i64 {
            // Repeated names and sizes: ties broken by id only.
            let mut r = row(
                dir + 1 + f,
                Some(dir),
                &format!("note{}.txt", f % 4),
                Kind::File,
            );
            r.size = (f % 5) as u64;
            r.mtime_ns = f % 3;
            rows.push(Change::Upsert(r));
        }
    }
    let mut s = Snapshot::default();
    s.apply(rows, None);
    for q in ["o", "note doc1", "!doc2 note"] {
        let q = Query::parse(q).unwrap();
        for sort in [
            Sort::Relevance,
            Sort::Name,
            Sort::Path,
            Sort::Size,
            Sort::Mtime,
        ] {
            for reverse in [false, true] {
                let (total, all) = s.search(&q, sort, 0, reverse);
                assert_eq!(all.len(), total);
                for page in [1, 5, 16, 1000] {
                    let mut joined = Vec::new();
                    let mut offset = 0;
                    while offset < total + page {
                        let (t, found) = s.search_page(&q, sort, offset, page, reverse, None);
                        assert_eq!(t, total);
                        assert!(found.len() <= page);
                        joined.extend(found);
                        offset += page;
                    }
                    let ids = |v: &[Found]| v.iter().map(|f| f.id).collect::<Vec<_>>();
                    assert_eq!(
                        ids(&joined),
                        ids(&all),
                        "{sort:?} reverse={reverse} page={page}"
                    );
                }
                // Past the end: the total, no rows.
                let (t, found) = s.search_page(&q, sort, total + 3, 10, reverse, None);
                assert_eq!((t, found.len()), (total, 0));
            }
        }
    }
}

/// The trigram filter and the sparse spread must give exactly what a
/// walk over every path gives, also after moves and removals.
#[test]
fn prefiltered_search_equals_a_path_oracle() {
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut rnd = |m: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % m
    };
    let syl = [
        "ab", "ra", "ca", "da", "Zan", "zi", "bar", "qu", "ok", "ka", "é", "X",
    ];
    let name = |rnd: &mut dyn FnMut(u64) -> u64| -> String {
        (0..1 + rnd(3))
            .map(|_| syl[rnd(syl.len() as u64) as usize])
            .collect()
    };
    let mut rows = vec![row(1, None, "/r", Kind::Dir)];
    let mut dirs = vec![1i64];
    for id in 2..3000i64 {
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
        for _ in 0..60 {
            let q: Vec<String> = (0..1 + rnd(2))
                .map(|_| {
                    let t: String = (0..1 + rnd(3))
                        .map(|_| syl[rnd(syl.len() as u64) as usize])
                        .collect();
                    t.chars().skip(rnd(2) as usize).collect()
                })
                .filter(|t: &String| !t.is_empty())
                .collect();
            if q.is_empty() {
                continue;
            }
            let want: Vec<&String> = all
                .iter()
                .filter(|p| {
                    let rel = crate::index::fold::fold_str(&p["/r/".len()..]).into_owned();
                    q.iter()
                        .all(|t| rel.contains(&*crate::index::fold::fold_str(t)))
                })
                .collect();
            let got = paths(s, &q.join(" "));
            assert_eq!(got.iter().collect::<Vec<_>>(), want, "query {q:?}");
        }
    };
    check(&s, &mut rnd);
    // Moves (down and up the id order), renames, removals.
    for round in 0..400 {
        if round == 200 {
            // Only moves under lower ids so far: still ordered.
            assert!(s.ordered);
            check(&s, &mut rnd);
        }
        let id = 2 + rnd(2998) as i64;
        match rnd(3) {
            0 => {
                let parent = dirs[rnd(dirs.len() as u64) as usize];
                if round < 200 && parent >= id {
                    continue;
                }
                let mut up = parent as u32;
                let mut cycle = false;
                while up != NO_PARENT {
                    cycle |= up == id as u32 || s.kind[up as usize] == HOLE;
                    up = s.parent.get(up as usize);
                }
                if cycle {
                    continue;
                }
                s.apply(
                    vec![Change::Moved {
                        id,
                        parent_id: parent,
                        name: name(&mut rnd).into_bytes(),
                        subtree: Vec::new(),
                    }],
                    None,
                );
            }
            1 if s.kind[id as usize] == Kind::File as u8 => {
                s.apply(vec![Change::Removed(vec![id])], None)
            }
            1 => {}
            _ => {
                let parent = s.parent.get(id as usize) as i64;
                if s.kind[id as usize] != HOLE && parent != NO_PARENT as i64 {
                    let k = Kind::from_i64(s.kind[id as usize] as i64);
                    s.apply(
                        vec![Change::Upsert(row(id, Some(parent), &name(&mut rnd), k))],
                        None,
                    );
                }
            }
        }
    }
    check(&s, &mut rnd);
    s.compact();
    s.build_hi();
    check(&s, &mut rnd);
}

/// `ext:`, `kind:` and the relevance order of the first results on a
/// tree large enough for the trigram filter's blocks and the two-thread
/// ranking, before and after renames, moves and removals, against
/// answers the test works out name by name.
#[test]
fn filters_and_first_results_on_a_large_tree_equal_a_name_by_name_oracle() {
    let stems = [
        "ar",
        "report",
        "Bar_ar",
        "x",
        "caf\u{e9} ar",
        "IMG_",
        "Cargo",
        "car",
    ];
    let exts = [
        ".pdf", ".jpg", ".JPG", ".md", ".ai", ".tar.gz", ".c", "", ".pdf.bak", ".mp3", ".toml",
    ];
    let mut rows = vec![Change::Upsert(row(1, None, "/r", Kind::Dir))];
    let folders = 300i64;
    for f in 0..folders {
        let name = match f % 3 {
            0 => format!("archive {f}"),
            1 => format!("dir{f}"),
            _ => format!("Photos.jpg {f}"),
        };
        rows.push(Change::Upsert(row(
            2 + f,
            Some(1 + f / 2),
            &name,
            Kind::Dir,
        )));
    }
    let first_file = 2 + folders;
    let files = 70_000i64;
    for k in 0..files {
        let name = match k % 997 {
            0 => "ar".to_owned(),
            1 => "ar.txt".to_owned(),
            2 => ".pdf".to_owned(),
            3 => "Makefile".to_owned(),
            _ => format!(
                "{}{k}{}",
                stems[k as usize % stems.len()],
                exts[k as usize / 7 % exts.len()]
            ),
        };
        let mut r = row(first_file + k, Some(2 + k % folders), &name, Kind::File);
        r.mtime_ns = (k * 7919 % 1000) - 10;
        rows.push(Change::Upsert(r));
    }
    let mut s = Snapshot::default();
    s.apply(rows, None);

    // Lists of thousands: say where they part.
    let same = |got: &[u32], want: &[u32], what: &str| {
        if let Some(k) = (0..got.len().max(want.len())).find(|&k| got.get(k) != want.get(k)) {
            panic!(
                "{what}: {} results, {} wanted; first difference at {k}: {:?} for {:?}",
                got.len(),
                want.len(),
                got.get(k),
                want.get(k)
            );
        }
    };
    let check = |s: &Snapshot, when: &str| {
        let live: Vec<u32> = (0..s.id_bound() as u32)
            .filter(|&i| s.entry_kind(i).is_some() && s.entry_parent(i).is_some())
            .collect();
        let name = |i: u32| String::from_utf8_lossy(s.entry_folded_name(i)).into_owned();
        let file = |i: u32| s.entry_kind(i) != Some(Kind::Dir);
        let sorted = |q: &str| {
            let (_, found) = s.search(&Query::parse(q).unwrap(), Sort::Path, 0, false);
            let mut ids: Vec<u32> = found.into_iter().map(|f| f.id).collect();
            ids.sort_unstable();
            ids
        };
        // A filter's answer against the live entries it should keep.
        let agrees = |q: &str, keep: &dyn Fn(u32) -> bool| {
            let want: Vec<u32> = live.iter().copied().filter(|&i| keep(i)).collect();
            assert!(!want.is_empty(), "{when}: {q}");
            same(&sorted(q), &want, &format!("{when}: {q}"));
        };
        for e in ["pdf", "ai", "c", "gz", "bak"] {
            agrees(&format!("ext:{e}"), &|i| {
                let n = name(i);
                file(i) && n.len() > e.len() + 1 && n.ends_with(&format!(".{e}"))
            });
        }
        for (k, class) in [
            ("image", KindClass::Image),
            ("code", KindClass::Code),
            ("archive", KindClass::Archive),
            ("audio", KindClass::Audio),
            ("text", KindClass::Text),
        ] {
            agrees(&format!("kind:{k}"), &|i| {
                file(i) && kind_of(&name(i), false) == Some(class)
            });
        }
        for q in ["ar", "ar car", "x", "img_ jpg", "2", "archive", "dir1"] {
            // Relevance, worked out here.
            let want = relevance_oracle(s, &live, q);
            let query = Query::parse(q).unwrap();
            // Every result kept (counted in the bit set, the page
            // ranked from the names that own the terms), kept by a
            // filter that passes all (listed, then ranked), and kept by
            // one that drops every third id.
            let third = |i: u32| !i.is_multiple_of(3);
            for (keeps, (offset, limit, reverse)) in [0, 1, 2].into_iter().flat_map(|k| {
                [(0, 100, false), (50, 100, false), (0, 100, true)].map(|page| (k, page))
            }) {
                let (mut all, mut some) = (|_: u32| true, third);
                let keep: Keep<'_> = match keeps {
                    0 => None,
                    1 => Some(&mut all),
                    _ => Some(&mut some),
                };
                let (total, got) =
                    s.search_page(&query, Sort::Relevance, offset, limit, reverse, keep);
                let want: Vec<u32> = want
                    .iter()
                    .copied()
                    .filter(|&i| keeps < 2 || third(i))
                    .collect();
                assert_eq!(total, want.len(), "{when}: {q}, keep {keeps}");
                let got: Vec<u32> = got.into_iter().map(|f| f.id).collect();
                let expect: Vec<u32> = if reverse {
                    want.iter()
                        .rev()
                        .skip(offset)
                        .take(limit)
                        .copied()
                        .collect()
                } else {
                    want.iter().skip(offset).take(limit).copied().collect()
                };
                assert_eq!(
                    got, expect,
                    "{when}: {q} from {offset}, reverse {reverse}, keep {keeps}"
                );
            }
        }
    };
    check(&s, "as loaded");
    assert!(
        s.search(&Query::parse("ar").unwrap(), Sort::Relevance, 1, false)
            .0
            >= PARALLEL_KEYS,
        "enough results for two threads"
    );

    // Renames (to other extensions and kinds), moves, removals.
    let mut changes = Vec::new();
    for k in (0..files).step_by(13) {
        let id = first_file + k;
        let name = format!(
            "{}{k}{}",
            stems[(k as usize + 3) % stems.len()],
            exts[k as usize % exts.len()]
        );
        changes.push(Change::Moved {
            id,
            parent_id: 2 + (k * 7) % folders,
            name: name.into_bytes(),
            subtree: Vec::new(),
        });
    }
    changes.push(Change::Removed(
        (0..files).step_by(11).map(|k| first_file + k).collect(),
    ));
    s.apply(changes, None);
    check(&s, "after renames");
    s.compact();
    check(&s, "compacted");
}

/// The relevance order of `q`'s results among `live`, worked out from the
/// decoded folded names: own-name terms, whole name (or stem), whole words
/// (no letter or digit on either side), depth, newer, id.
pub(super) fn relevance_oracle(s: &Snapshot, live: &[u32], q: &str) -> Vec<u32> {
    let terms: Vec<&str> = q.split(' ').collect();
    super::within::tests::oracle(s, live, &terms, false)
}

#[test]
fn galloping_membership_equals_a_binary_search() {
    let list: Vec<u32> = (0..5000u32).filter(|x| x % 7 == 0 || x % 11 == 3).collect();
    for stride in [1, 2, 5, 13, 97, 1000] {
        let mut c = 0;
        for i in (0..5100u32).step_by(stride) {
            assert_eq!(
                holds(&list, &mut c, i),
                list.binary_search(&i).is_ok(),
                "{i}"
            );
            assert_eq!(c, list.partition_point(|&x| x < i), "cursor at {i}");
        }
    }
    assert!(!holds(&[], &mut 0, 3));
    let lists = [vec![3, 50, 299, 301], vec![1, 3, 4, 299]];
    assert_eq!(owning_all(&lists, |i| i < 300), [3, 299]);
    assert_eq!(owning_all(&[], |_| true), Vec::<u32>::new());
}

#[test]
fn whole_names_rank_above_names_that_contain_the_term() {
    assert_eq!(name_match(b"cargo.toml", b"cargo.toml"), 2);
    assert_eq!(name_match(b"cargo.toml.orig", b"cargo.toml"), 1);
    assert_eq!(name_match(b"readme.md", b"readme"), 1);
    assert_eq!(name_match(b"my readme.md", b"readme"), 0);
    assert_eq!(name_match(b".bashrc", b""), 0);
}

/// The byte scan answers as the decoded one (which the tests below
/// pin by hand) on names and terms that probe its shortcuts.
#[test]
fn word_matches_on_bytes_equal_the_decoded_ones() {
    let names: [&[u8]; 16] = [
        b"tax 2025.pdf",
        b"taxes",
        b"my_tax",
        b"b-a-a-",
        b"aaa",
        b"a-a-a",
        b"caf\xc3\xa9 ar",
        b"\xc3\xa9ar",
        b"ar\xc3\xa9",
        b"bar_ar",
        b"ar\xff",
        b"\xff ar",
        b"ar",
        b"",
        b"x-ar-y.ar",
        b"\xe2\x80\x94ar\xe2\x80\x94",
    ];
    let terms: [&[u8]; 9] = [
        b"ar",
        b"tax",
        b"-a-",
        b"aa",
        b"a",
        b"caf\xc3\xa9",
        b"\xc3\xa9",
        b"2025",
        b"ar.",
    ];
    for name in names {
        for term in terms {
            assert_eq!(
                is_word_match(name, term),
                is_word_match_decoded(name, term),
                "{:?} in {:?}",
                String::from_utf8_lossy(term),
                String::from_utf8_lossy(name)
            );
            // Marking passes the term's first place in the name.
            if let Some(first) = memmem::find(name, term) {
                assert_eq!(fit_from(name, term, first), fit(name, term));
            }
        }
    }
    // Letters that are not ASCII are not boundaries.
    assert!(!is_word_match(b"\xc3\xa9ar", b"ar"));
    assert!(is_word_match(b"\xe2\x80\x94ar\xe2\x80\x94", b"ar"));
    assert!(!is_word_match(b"\xff ar", b"ar"));
}

#[test]
fn word_matches() {
    assert!(is_word_match(b"tax 2025.pdf", b"2025"));
    assert!(!is_word_match(b"taxes", b"tax"));
    assert!(is_word_match(b"my_tax", b"tax"));
}

/// One-letter terms find the names that could hold them as words
/// in one pass ([`Snapshot::mark_byte_span`]) instead of checking each marked name:
/// on random names of letters, digits, separators and other scripts, every
/// marked name's fit equals the name-by-name check, and the first results
/// equal an order worked out here on the decoded names.
#[test]
fn short_terms_fit_and_rank_as_a_name_by_name_check() {
    let pieces = [
        "a", "e", "r", "re", "ar", "é", "ß", "京", "x1", "data", "Re", "E", "ea", "ré", "2",
    ];
    let joins = [
        "", "", " ", "_", "-", ".", "(", "é", "京", "a", "—", "·", "🙂",
    ];
    let mut seed = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = |n: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % n as u64) as usize
    };
    let mut rows = vec![Change::Upsert(row(1, None, "/r", Kind::Dir))];
    let folders = 40i64;
    for f in 0..folders {
        rows.push(Change::Upsert(row(
            2 + f,
            Some(1 + f / 3),
            &format!("d{f}"),
            Kind::Dir,
        )));
    }
    let name = |next: &mut dyn FnMut(usize) -> usize| {
        let mut n = String::new();
        for k in 0..1 + next(4) {
            if k > 0 {
                n.push_str(joins[next(joins.len())]);
            }
            n.push_str(pieces[next(pieces.len())]);
        }
        if next(3) == 0 {
            n.push_str([".txt", ".r", ".e", ".a.b", ".ré"][next(5)]);
        }
        n
    };
    let files = 6_000i64;
    for k in 0..files {
        let mut r = row(
            2 + folders + k,
            Some(2 + next(folders as usize) as i64),
            &name(&mut next),
            Kind::File,
        );
        r.mtime_ns = next(50) as i64;
        rows.push(Change::Upsert(r));
    }
    let mut s = Snapshot::default();
    s.apply(rows, None);
    // Some names relocated (kept outside the arena).
    let moved: Vec<Change> = (0..files)
        .step_by(17)
        .map(|k| Change::Moved {
            id: 2 + folders + k,
            parent_id: 2 + next(folders as usize) as i64,
            name: name(&mut next).into_bytes(),
            subtree: Vec::new(),
        })
        .collect();
    s.apply(moved, None);

    let live: Vec<u32> = (0..s.id_bound() as u32)
        .filter(|&i| s.entry_kind(i).is_some() && s.entry_parent(i).is_some())
        .collect();
    let name = |i: u32| String::from_utf8_lossy(s.entry_folded_name(i)).into_owned();
    let mut words = 0;
    for q in ["a", "e", "r", "re", "ar", "é", "2", "a e", "re 2", "京"] {
        // Every marked name's fit, against the name-by-name one.
        for t in q.split(' ') {
            let (ids, fits) = s.mark_name_term_fits(t.as_bytes(), true);
            assert!(!ids.is_empty(), "{q}");
            for (&i, &f) in ids.iter().zip(&fits) {
                let want = fit(s.entry_folded_name(i), t.as_bytes());
                assert_eq!(f, want, "{q}: {t} in {:?}", name(i));
                words += usize::from(f & FIT_WORD != 0);
            }
        }
        // The first results, against the order worked out here.
        let want = relevance_oracle(&s, &live, q);
        let query = Query::parse(q).unwrap();
        let pages = [(0, 200, false), (100, 200, false), (0, 200, true)];
        super::within::tests::pages_equal(&s, &query, &want, &pages, q);
    }
    assert!(words > 1000, "enough word matches to test: {words}");
}

/// Not a test: the process CPU time of marking one- and two-letter terms
/// and of a search for the first 200 on a real tree (`BENCH_TREE`, e.g. the
/// 1M bench tree of `benches/mktree.py`), for `benches/README.md`. Run with
/// `cargo nextest run -p fsindexd --lib --run-ignored only --no-capture -E
/// 'test(/cpu_of_short_terms/)'` in an optimised build.
#[test]
#[ignore]
fn cpu_of_short_terms() {
    let Ok(tree) = std::env::var("BENCH_TREE") else {
        return;
    };
    // The process's user and system time (threads that ended included), in
    // ms: ticks of 10 ms, so a figure is the mean of many runs.
    let cpu = || {
        let stat = std::fs::read_to_string("/proc/self/stat").unwrap();
        let after = &stat[stat.rfind(')').unwrap() + 2..];
        let f: Vec<f64> = after
            .split(' ')
            .skip(11)
            .take(2)
            .map(|x| x.parse().unwrap())
            .collect();
        (f[0] + f[1]) * 10.0
    };
    // The tree in preorder: a folder's id below its children's.
    let mut rows = vec![Change::Upsert(row(1, None, &tree, Kind::Dir))];
    let mut stack = vec![(std::path::PathBuf::from(&tree), 1i64)];
    while let Some((dir, id)) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in rd.flatten() {
            let next = rows.len() as i64 + 1;
            let is_dir = e.file_type().is_ok_and(|t| t.is_dir());
            let mut r = row(
                next,
                Some(id),
                "",
                if is_dir { Kind::Dir } else { Kind::File },
            );
            r.name = e.file_name().into_encoded_bytes();
            r.mtime_ns = e
                .metadata()
                .ok()
                .and_then(|m| m.modified().ok())
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos() as i64);
            rows.push(Change::Upsert(r));
            if is_dir {
                stack.push((e.path(), next));
            }
        }
    }
    let mut s = Snapshot::default();
    s.apply(rows, None);
    eprintln!("{} entries", s.len());
    let reps = 40;
    let mean = |f: &mut dyn FnMut()| {
        let t = cpu();
        for _ in 0..reps {
            f();
        }
        (cpu() - t) / f64::from(reps)
    };
    for t in ["r", "e", "a", "re", "ar"] {
        let mut n = 0;
        let ms = mean(&mut || n = s.mark_name_term_fits(t.as_bytes(), true).0.len());
        eprintln!("mark {t:>8}: {n:>7} names, {ms:6.1} ms CPU (mean of {reps})");
    }
    for q in ["r", "e", "a", "re", "ar", "tax 2025"] {
        let query = Query::parse(q).unwrap();
        let mut n = 0;
        let ms = mean(&mut || {
            n = s
                .search_order(&query, Sort::Relevance, 0, 200, false, None)
                .0
        });
        eprintln!("search {q:>8}: {n:>7} results, {ms:6.1} ms CPU (mean of {reps})");
    }
}
