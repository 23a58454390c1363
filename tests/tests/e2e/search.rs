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
