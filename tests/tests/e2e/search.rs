//! Search returns exactly what a walk-based oracle computes.

use std::collections::BTreeSet;

use crate::util::{
    self, Instance, OddSetup, Runner, diff, find_oracle, json_lines, odd_instance, search_oracle,
};

/// (query as typed, the terms it means).
const QUERIES: &[(&[&str], &[&str])] = &[
    (&["tax", "2025"], &["tax", "2025"]),
    (&["tax 2025"], &["tax", "2025"]),
    (&["TAX"], &["tax"]),
    (&["café"], &["café"]),
    (&["CAFÉ", "menu"], &["café", "menu"]),
    (&["ärger"], &["ärger"]),
    (&["ÄRGER.TXT"], &["ärger.txt"]),
    (&["STRASSE"], &["strasse"]),
    (&["straße"], &["strasse"]),
    (&["\"tax return\""], &["tax return"]),
    (&["my documents"], &["my", "documents"]),
    (&["bad"], &["bad"]),
    (&["name.txt"], &["name.txt"]),
    (&["\u{fffd}"], &["\u{fffd}"]),
    (&["secret"], &["secret"]),
    (&[".hidden"], &[".hidden"]),
    (&["level3"], &["level3"]),
    (&["level39", "bottom"], &["level39", "bottom"]),
    (&["taxes/2025"], &["taxes/2025"]),
    (&["s/20"], &["s/20"]),
    (&["/w2"], &["/w2"]),
    (&["level1/level2/"], &["level1/level2/"]),
    (&["x"], &["x"]),
    (&["e"], &["e"]),
    (&["dangling"], &["dangling"]),
    (&["loop"], &["loop"]),
    (&["up"], &["up"]),
    (&["twin"], &["twin"]),
    (&["sparse"], &["sparse"]),
    (&["pipe"], &["pipe"]),
    (&["locked"], &["locked"]),
    (&["inside"], &["inside"]),
    (&["empty"], &["empty"]),
    (&["nothing-matches-this"], &["nothing-matches-this"]),
];

#[test]
fn search_equals_walk_oracle_on_an_awkward_tree() {
    let OddSetup {
        tmp: _tmp,
        tree,
        inst,
    } = odd_instance(true);
    let runner = inst.runner.clone();

    let all = find_oracle(&runner, &tree);
    assert!(all.len() > 60, "the tree has {} entries", all.len());
    for (typed, terms) in QUERIES {
        let expected = search_oracle(&all, &tree, terms);
        let got: BTreeSet<Vec<u8>> = inst.search0(typed).into_iter().collect();
        assert_eq!(expected, got, "query {typed:?}:\n{}", diff(&expected, &got));
    }
    // The unreadable folder itself is indexed, its contents are not.
    assert_eq!(inst.search0(&["inside"]).len(), 0);
    assert_eq!(inst.search0(&["locked"]).len(), 1);
}

#[test]
fn ranking_limit_sort_json_and_exit_codes() {
    let OddSetup {
        tmp: _tmp,
        tree: _,
        inst,
    } = odd_instance(false);

    // Own-name matches rank above matches through a parent folder.
    let ranked = inst.search0(&["tax", "2025"]);
    let first = String::from_utf8_lossy(&ranked[0]).into_owned();
    assert!(
        first.ends_with("/2025_tax_return.pdf") || first.ends_with("/tax return 2025.pdf"),
        "{first}"
    );
    let through_parent = ranked
        .iter()
        .position(|p| p.ends_with(b"Taxes/2025/w2.pdf"))
        .unwrap();
    let own = ranked
        .iter()
        .position(|p| p.ends_with(b"2025_tax_return.pdf"))
        .unwrap();
    assert!(own < through_parent);

    // --limit keeps the total; the JSON lines carry the contract's fields.
    let out = inst.fsctl(&["search", "e", "--limit", "3", "--json"]);
    assert_eq!(out.status.code(), Some(0));
    let lines: Vec<serde_json::Value> = json_lines(&out);
    assert_eq!(lines.len(), 3);
    for l in &lines {
        for field in ["path", "name", "type", "size", "mtime"] {
            assert!(!l[field].is_null(), "{field} missing in {l}");
        }
        assert!(l["mtime"].as_str().unwrap().ends_with('Z'));
    }

    // --sort size: largest first.
    let out = inst.fsctl(&["search", "i", "--sort", "size", "--json"]);
    let sizes: Vec<u64> = json_lines(&out)
        .iter()
        .map(|l| l["size"].as_u64().unwrap())
        .collect();
    assert!(
        sizes.len() > 5 && sizes.windows(2).all(|w| w[0] >= w[1]),
        "{sizes:?}"
    );
    assert_eq!(sizes[0], 8 << 20, "the sparse image is the largest by size");

    // Exit codes like grep: 0 found, 1 nothing found.
    assert_eq!(inst.fsctl(&["search", "src"]).status.code(), Some(0));
    let none = inst.fsctl(&["search", "zzz-no-such-name"]);
    assert_eq!(none.status.code(), Some(1));
    assert!(none.stdout.is_empty());
}

/// The order a person expects: a name that is the query beats one that
/// only contains it, even deeper down; a whole word beats part of a word.
#[test]
fn exact_names_then_whole_words_then_parts_of_words() {
    let tmp = tempfile::tempdir().unwrap();
    let tree = tmp.path().join("tree");
    for f in [
        "Cargo.toml.orig",
        "MyCargo.toml",
        "old/Cargo.toml.bak",
        "a/b/c/d/Cargo.toml",
        "syntax.rs",
        "taxes.txt",
        "x/y/z/tax.pdf",
        "x/y/my tax notes.txt",
        "readmes.txt",
        "README-old.txt",
        "deep/er/README.md",
        "deep/er/still/README",
    ] {
        util::write_file(&tree, f, b"x");
    }
    let mut inst = Instance::new(tmp.path().join("home"), &[&tree], Runner::current());
    inst.start();
    let names = |q: &str| -> Vec<String> {
        inst.search0(&[q])
            .iter()
            .map(|p| {
                let p = String::from_utf8_lossy(p).into_owned();
                p.strip_prefix(&format!("{}/", tree.display()))
                    .unwrap_or(&p)
                    .to_owned()
            })
            .collect()
    };
    assert_eq!(
        names("Cargo.toml"),
        [
            "a/b/c/d/Cargo.toml", // the whole name, four folders down
            "Cargo.toml.orig",    // the name but its extension
            "old/Cargo.toml.bak",
            "MyCargo.toml", // part of a word
        ]
    );
    let tax = names("tax");
    assert_eq!(tax[0], "x/y/z/tax.pdf", "{tax:?}");
    assert_eq!(tax[1], "x/y/my tax notes.txt", "{tax:?}");
    let partial: BTreeSet<_> = tax[2..].iter().map(String::as_str).collect();
    assert_eq!(partial, BTreeSet::from(["syntax.rs", "taxes.txt"]));
    assert_eq!(
        names("readme"),
        [
            "deep/er/still/README",
            "deep/er/README.md",
            "README-old.txt",
            "readmes.txt"
        ]
    );
}

/// An answer larger than one message (1,024 results) is sent chunk by
/// chunk while the daemon is still building it: it must arrive whole, in
/// its order, and a client that stops reading must not hurt the daemon.
#[test]
fn an_answer_of_several_chunks_is_whole_and_in_order() {
    let tmp = tempfile::tempdir().unwrap();
    let tree = tmp.path().join("tree");
    for d in 0..7 {
        let dir = tree.join(format!("box{d}"));
        std::fs::create_dir_all(&dir).unwrap();
        for f in 0..500 {
            std::fs::write(dir.join(format!("chunky_{f:03}.txt")), vec![b'x'; f]).unwrap();
        }
    }
    let mut inst = Instance::new(
        tmp.path().join("home"),
        &[tree.as_path()],
        crate::util::Runner::current(),
    );
    inst.start();

    // Every match, against a walk the test does itself.
    let mut walked: Vec<Vec<u8>> = walkdir(&tree)
        .into_iter()
        .filter(|p| p.ends_with(".txt") && p.contains("chunky_"))
        .map(String::into_bytes)
        .collect();
    walked.sort();
    let mut got = inst.search0(&["chunky"]);
    assert_eq!(got.len(), 3500);
    got.sort();
    assert_eq!(got, walked);

    // By name, then size: the order holds across chunk boundaries.
    let out = inst.fsctl(&[
        "search", "chunky", "--limit", "0", "--sort", "size", "--json",
    ]);
    assert_eq!(out.status.code(), Some(0));
    let sizes: Vec<u64> = json_lines(&out)
        .iter()
        .map(|l| l["size"].as_u64().unwrap())
        .collect();
    assert_eq!(sizes.len(), 3500);
    assert!(sizes.windows(2).all(|w| w[0] >= w[1]), "not largest first");
    assert_eq!((sizes[0], sizes[3499]), (499, 0));

    // A page from the middle is the same slice of the whole order.
    let whole = inst.fsctl(&["search", "chunky", "--limit", "0", "--sort", "path", "-0"]);
    let whole: Vec<&[u8]> = whole
        .stdout
        .split(|&b| b == 0)
        .filter(|p| !p.is_empty())
        .collect();
    let limited = inst.fsctl(&[
        "search", "chunky", "--limit", "2000", "--sort", "path", "-0",
    ]);
    let limited: Vec<&[u8]> = limited
        .stdout
        .split(|&b| b == 0)
        .filter(|p| !p.is_empty())
        .collect();
    assert_eq!(limited, whole[..2000]);

    // A reader that hangs up after the first line: the daemon carries on.
    let mut child = inst
        .fsctl_cmd(&["search", "chunky", "--limit", "0"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 16];
    std::io::Read::read_exact(child.stdout.as_mut().unwrap(), &mut first).unwrap();
    drop(child.stdout.take());
    let _ = child.wait();
    assert_eq!(inst.search0(&["chunky"]).len(), 3500);
}

/// Every path under `root` (not `root` itself), as text.
/// `ext:` and `kind:` against a walk the test does itself, on a tree of
/// several hundred names (more than one block of the daemon's trigram
/// filter), then again after renames to other extensions, a folder moved,
/// removals and new files, all made while the daemon watches.
#[test]
fn ext_and_kind_follow_renames_and_moves_against_a_walk() {
    let tmp = tempfile::tempdir().unwrap();
    let tree = tmp.path().join("tree");
    let names = [
        "photos/IMG_0001.JPG",
        "photos/b.png",
        "photos/c.gif",
        "photos/notes.txt",
        "photos/x.pdf/inside.txt",
        "docs/report.pdf",
        "docs/Report2.PDF",
        "docs/.pdf",
        "docs/pdf",
        "docs/a.tar.gz",
        "docs/readme.md",
        "docs/art.ai",
        "src/Makefile",
        "src/CMakeLists.txt",
        "src/main.c",
        "src/song.mp3",
    ];
    for n in names {
        util::write_file(&tree, n, b"x");
    }
    let exts = ["pdf", "jpg", "txt", "ai", "c", "md", "png"];
    for i in 0..420 {
        util::write_file(
            &tree,
            format!("bulk/f{}/file_{i}.{}", i % 7, exts[i % 5]),
            b"",
        );
    }
    let mut inst = Instance::new(
        tmp.path().join("home"),
        &[tree.as_path()],
        crate::util::Runner::current(),
    );
    inst.start();

    // Files (not folders) whose name, lowercased, ends in one of the
    // endings and is longer than it.
    let walked = |endings: &[&str], whole: &[&str]| -> Vec<Vec<u8>> {
        let mut out: Vec<Vec<u8>> = walkdir(&tree)
            .into_iter()
            .filter(|p| {
                let path = std::path::Path::new(p);
                let name = path.file_name().unwrap().to_string_lossy().to_lowercase();
                !path.is_dir()
                    && (whole.contains(&name.as_str())
                        || endings
                            .iter()
                            .any(|e| name.len() > e.len() && name.ends_with(e)))
            })
            .map(String::into_bytes)
            .collect();
        out.sort();
        out
    };
    let found = |q: &str| {
        let mut got = inst.search0(&[q, "--limit", "0"]);
        got.sort();
        got
    };
    // Written out by hand: the extensions of each kind among the names here.
    let check = |when: &str| {
        assert_eq!(found("ext:pdf"), walked(&[".pdf"], &[]), "{when}: ext:pdf");
        assert_eq!(found("ext:ai"), walked(&[".ai"], &[]), "{when}: ext:ai");
        assert_eq!(found("ext:c"), walked(&[".c"], &[]), "{when}: ext:c");
        assert_eq!(found("ext:gz"), walked(&[".gz"], &[]), "{when}: ext:gz");
        let images = walked(&[".jpg", ".png", ".gif"], &[]);
        assert_eq!(found("kind:image"), images, "{when}: kind:image");
        let code = walked(&[".c"], &["makefile", "cmakelists.txt"]);
        assert_eq!(found("kind:code"), code, "{when}: kind:code");
        let text: Vec<Vec<u8>> = walked(&[".txt", ".md"], &[])
            .into_iter()
            .filter(|p| !p.ends_with(b"/CMakeLists.txt"))
            .collect();
        assert_eq!(found("kind:text"), text, "{when}: kind:text");
        assert_eq!(
            found("kind:audio"),
            walked(&[".mp3"], &[]),
            "{when}: kind:audio"
        );
    };
    check("as indexed");
    assert!(
        found("ext:pdf").len() > 80,
        "enough names for several blocks"
    );

    let mv = |from: &str, to: &str| std::fs::rename(tree.join(from), tree.join(to)).unwrap();
    mv("photos/notes.txt", "photos/notes.jpg");
    mv("photos/b.png", "docs/b.txt");
    mv("photos", "pictures");
    mv("docs/report.pdf", "docs/report.pdf.bak");
    mv("src/main.c", "src/Makefile.c");
    mv("src/CMakeLists.txt", "src/lists.txt");
    mv("bulk/f3", "bulk/moved.pdf");
    std::fs::remove_file(tree.join("bulk/f1/file_1.jpg")).unwrap();
    util::write_file(&tree, "new/clip.gif", b"gif");
    util::write_file(&tree, "new/deck.ai", b"ai");
    util::sync(&inst);
    check("after renames, moves and removals");
}

fn walkdir(root: &std::path::Path) -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(root).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walkdir(&p));
        }
        out.push(p.to_string_lossy().into_owned());
    }
    out
}

/// A whole answer of many thousands of paths (issue 36: each path now built
/// from its folder's, kept once per answer) is exactly the test's own walk
/// filtered by the term: the same set in relevance order, and the same
/// order as the walk's sorted paths with `--sort path`; its first rows are
/// the first page asked alone. Folders nest five deep, under names with
/// capitals, accents and bytes that are not UTF-8.
#[test]
fn a_whole_answer_of_many_thousands_of_paths_equals_the_walk() {
    use std::os::unix::ffi::OsStrExt;
    let tmp = tempfile::tempdir().unwrap();
    let tree = tmp.path().join("tree");
    let tops: [&[u8]; 4] = [b"Archive", b"car\xff", "Ärger".as_bytes(), b"plain"];
    let mut made = 0;
    for (t, top) in tops.iter().enumerate() {
        let mut dir = tree.join(std::ffi::OsStr::from_bytes(top));
        for depth in 0..5 {
            dir = dir.join(format!("{}{depth}", ["Lvl", "bar", "x"][(t + depth) % 3]));
            std::fs::create_dir_all(&dir).unwrap();
            for f in 0..1100 {
                let name = format!("{}_{f}.txt", ["Part", "file", "Radar", "zz"][f % 4]);
                std::fs::write(dir.join(name), b"").unwrap();
                made += 1;
            }
        }
    }
    assert_eq!(made, 22_000);
    let mut inst = Instance::new(
        tmp.path().join("home"),
        &[tree.as_path()],
        Runner::current(),
    );
    inst.start();

    let all = find_oracle(&inst.runner, &tree);
    let expected = search_oracle(&all, &tree, &["ar"]);
    assert!(expected.len() > 15_000, "{} matches", expected.len());
    let whole = inst.search0(&["--limit", "0", "ar"]);
    assert_eq!(whole.len(), expected.len());
    let got: BTreeSet<Vec<u8>> = whole.iter().cloned().collect();
    assert_eq!(expected, got, "{}", diff(&expected, &got));
    let first = inst.search0(&["--limit", "300", "ar"]);
    assert_eq!(first, whole[..300]);

    let by_path = inst.search0(&["--limit", "0", "--sort", "path", "ar"]);
    let sorted: Vec<Vec<u8>> = expected.into_iter().collect();
    assert_eq!(by_path, sorted);
}
