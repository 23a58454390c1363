//! `fsctl verify` lists every difference between the disk and the index;
//! `--fix` repairs them.

use crate::util::{OddSetup, json_lines, odd_instance_with};

#[test]
fn verify_reports_each_difference_and_fix_repairs_them() {
    let OddSetup {
        tmp: _tmp,
        tree,
        inst,
    } = odd_instance_with(false, &["--no-watch"]); // unwatched: changes stay unseen until verify
    let clean = inst.fsctl(&["verify"]);
    assert_eq!(
        clean.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&clean.stdout)
    );
    assert!(String::from_utf8_lossy(&clean.stdout).contains("index matches the disk"));

    // Change the tree behind the daemon's back.
    std::fs::write(tree.join("src/added.rs"), b"new").unwrap();
    std::fs::remove_file(tree.join("Straße.md")).unwrap();
    std::fs::write(tree.join("src/lib.rs"), b"shorter").unwrap();
    std::fs::remove_file(tree.join("empty.txt")).unwrap();
    std::fs::create_dir(tree.join("empty.txt")).unwrap();

    let out = inst.fsctl(&["verify", "--json"]);
    assert_eq!(out.status.code(), Some(1), "differences exit 1");
    let found = json_lines(&out);
    let summary = found.last().unwrap();
    assert_eq!(summary["done"], true);
    let has = |kind: &str, suffix: &str, detail: &str| {
        found.iter().any(|d| {
            d["kind"] == kind
                && d["path"].as_str().is_some_and(|p| p.ends_with(suffix))
                && d["detail"].as_str().is_some_and(|t| t.contains(detail))
        })
    };
    assert!(has("missing", "/src/added.rs", "file"), "{found:#?}");
    assert!(has("extra", "/Straße.md", "file"), "{found:#?}");
    assert!(has("stale", "/src/lib.rs", "size 70000 -> 7"), "{found:#?}");
    assert!(
        has("stale", "/empty.txt", "type file -> folder"),
        "{found:#?}"
    );
    // The folders whose listing changed are stale too (mtime); nothing else.
    for d in &found[..found.len() - 1] {
        let p = d["path"].as_str().unwrap();
        let expected = [
            "/src/added.rs",
            "/Straße.md",
            "/src/lib.rs",
            "/empty.txt",
            "/src",
            "/tree",
        ];
        assert!(
            expected.iter().any(|e| p.ends_with(e)),
            "unexpected difference {d}"
        );
    }
    assert_eq!(
        summary["differences"].as_u64(),
        Some(found.len() as u64 - 1)
    );

    // A folder under the root verifies only that subtree.
    let sub = inst.fsctl(&["verify", tree.join("Taxes").to_str().unwrap()]);
    assert_eq!(
        sub.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&sub.stdout)
    );

    let fix = inst.fsctl(&["verify", "--fix", "--json"]);
    assert_eq!(fix.status.code(), Some(1));
    assert!(json_lines(&fix).last().unwrap()["fixed"].as_u64().unwrap() >= 5);
    let after = inst.fsctl(&["verify"]);
    assert_eq!(
        after.status.code(),
        Some(0),
        "after --fix: {}",
        String::from_utf8_lossy(&after.stdout)
    );
    assert_eq!(inst.search0(&["added.rs"]).len(), 1);

    let outside = inst.fsctl(&["verify", "/usr"]);
    assert_eq!(outside.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&outside.stderr).contains("not under any root"));
}
