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
