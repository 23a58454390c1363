//! Disk usage equals GNU du on a tree with hard links, sparse files,
//! symlinks, empty and unreadable folders.

use crate::util::{OddSetup, gnu_du, odd_instance};

#[test]
fn du_equals_gnu_du_for_root_subfolders_and_children() {
    let OddSetup {
        tmp: _tmp,
        tree,
        inst,
    } = odd_instance(true);
    let runner = inst.runner.clone();

    let folders = [
        "",
        "links",
        "links/a",
        "Taxes",
        "deep",
        "src",
        "empty folder",
        "locked",
        "My Documents",
    ];
    for f in folders {
        let path = if f.is_empty() {
            tree.clone()
        } else {
            tree.join(f)
        };
        let v = inst.json(&["du", path.to_str().unwrap(), "--top", "0"]);
        let (blocks, apparent) = gnu_du(&runner, &path);
        assert_eq!(
            v["bytes"].as_u64(),
            Some(blocks),
            "allocated bytes of {f:?} vs du -s -B1: {v}"
        );
        assert_eq!(
            v["apparent_bytes"].as_u64(),
            Some(apparent),
            "apparent bytes of {f:?} vs du -s -b: {v}"
        );
        // Every child's figures are what du -s CHILD prints.
        for child in v["children"].as_array().unwrap() {
            let cp = std::path::PathBuf::from(child["path"].as_str().unwrap());
            if !cp.exists() && std::fs::symlink_metadata(&cp).is_err() {
                continue; // a name that is not UTF-8 has no lossless JSON path
            }
            let (b, a) = gnu_du(&runner, &cp);
            assert_eq!(child["bytes"].as_u64(), Some(b), "child {}", cp.display());
            assert_eq!(
                child["apparent_bytes"].as_u64(),
                Some(a),
                "child {}",
                cp.display()
            );
        }
    }
    // Children come largest first, and the unreadable folder marks totals incomplete.
    let root = inst.json(&["du", tree.to_str().unwrap(), "--top", "0"]);
    let sizes: Vec<u64> = root["children"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["bytes"].as_u64().unwrap())
        .collect();
    assert!(sizes.windows(2).all(|w| w[0] >= w[1]), "{sizes:?}");
    assert_eq!(root["incomplete"], true);
    let links = inst.json(&["du", tree.join("links").to_str().unwrap()]);
    assert_eq!(links["incomplete"], false);
    // --top cuts the list but keeps the count.
    let top = inst.json(&["du", tree.to_str().unwrap(), "--top", "2"]);
    assert_eq!(top["children"].as_array().unwrap().len(), 2);
    assert_eq!(top["children_total"], root["children_total"]);
}

#[test]
fn du_human_output_shows_sizes_and_shares() {
    let OddSetup {
        tmp: _tmp,
        tree,
        inst,
    } = odd_instance(false);
    let out = inst.fsctl(&["du", tree.to_str().unwrap(), "--top", "3"]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("SHARE")
            && text.contains('%')
            && text.contains("more; --top 0 shows them all"),
        "{text}"
    );
}

/// `du --depth N`, `--all`, `--files` and `--dirs` list what GNU du lists,
/// with du's figures, largest first.
#[test]
fn du_listings_equal_gnu_du_sorted() {
    use crate::util::{Instance, Runner};
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path().join("tree");
    // Distinct allocated sizes everywhere, so the order is unambiguous;
    // hard links only within one folder (du -d counts a link where it
    // meets it first, fsindex per entry: the same when both are in one
    // folder).
    let mut n = 1;
    for dir in ["a", "a/x", "a/x/deep", "b", "b/y", "c", "c/z/w", "d"] {
        std::fs::create_dir_all(t.join(dir)).unwrap();
        for f in 0..3 {
            n += 1;
            std::fs::write(t.join(dir).join(format!("f{f}")), vec![7u8; n * 9000]).unwrap();
        }
    }
    std::fs::hard_link(t.join("b/y/f0"), t.join("b/y/f0-link")).unwrap();
    std::os::unix::fs::symlink("a", t.join("link-to-a")).unwrap();
    let mut inst = Instance::new(tmp.path().join("home"), &[&t], Runner::current());
    inst.start();

    // GNU du's folder lines below the tree, largest first.
    let gnu = |args: &[&str]| -> Vec<(u64, String)> {
        let out = std::process::Command::new("du")
            .args(args)
            .arg("-B1")
            .arg(&t)
            .output()
            .unwrap();
        let mut rows: Vec<(u64, String)> = String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(|l| {
                let (b, p) = l.split_once('\t').unwrap();
                (b.parse().unwrap(), p.to_owned())
            })
            .filter(|(_, p)| Path::new(p) != t)
            .collect();
        rows.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        rows
    };
    let ours = |args: &[&str]| -> Vec<(u64, String)> {
        let mut a = vec!["du", t.to_str().unwrap(), "--top", "0"];
        a.extend_from_slice(args);
        let v = inst.json(&a);
        v["children"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                (
                    c["bytes"].as_u64().unwrap(),
                    c["path"].as_str().unwrap().to_owned(),
                )
            })
            .collect()
    };
    use std::path::Path;
    assert_eq!(ours(&["--dirs"]), gnu(&["-d1"]), "--dirs vs du -d1 sorted");
    assert_eq!(
        ours(&["--dirs", "--depth", "2"]),
        gnu(&["-d2"]),
        "--depth 2 --dirs vs du -d2 sorted"
    );
    assert_eq!(
        ours(&["--dirs", "--all"]),
        gnu(&[]),
        "--all --dirs vs du sorted"
    );
    // Files anywhere: every file and symlink once per path, each with its
    // own allocated size (find's view).
    let files = ours(&["--all", "--files"]);
    let out = std::process::Command::new("find")
        .arg(&t)
        .args(["!", "-type", "d", "-printf", "%b %p\n"])
        .output()
        .unwrap();
    let mut expected: Vec<(u64, String)> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let (b, p) = l.split_once(' ').unwrap();
            (b.parse::<u64>().unwrap() * 512, p.to_owned())
        })
        .collect();
    expected.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let got_set: std::collections::BTreeSet<_> = files.iter().cloned().collect();
    let exp_set: std::collections::BTreeSet<_> = expected.iter().cloned().collect();
    assert_eq!(got_set, exp_set, "--all --files vs find");
    let sizes: Vec<u64> = files.iter().map(|f| f.0).collect();
    assert!(sizes.windows(2).all(|w| w[0] >= w[1]), "largest first");
    // --top cuts the ranked list; the count stays exact.
    let v = inst.json(&["du", t.to_str().unwrap(), "--all", "--top", "3"]);
    assert_eq!(v["children"].as_array().unwrap().len(), 3);
    let everything = inst.json(&["du", t.to_str().unwrap(), "--all", "--top", "0"]);
    let entries = std::process::Command::new("find")
        .arg(&t)
        .args(["-mindepth", "1"])
        .output()
        .unwrap()
        .stdout
        .iter()
        .filter(|&&b| b == b'\n')
        .count() as u64;
    assert_eq!(v["children_total"].as_u64(), Some(entries));
    assert_eq!(everything["children"][0], v["children"][0]);
    // The human table has a bar per row.
    let out = inst.fsctl(&["du", t.to_str().unwrap(), "--depth", "2"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains('█') && text.contains("a/x/"), "{text}");
}
