//! Browsing from the index: `info`, `ls` and `tree`.

use std::collections::BTreeSet;

use crate::util::{Instance, Runner, gnu_du, json_lines};

#[test]
fn info_ls_and_tree() {
    let tmp = tempfile::tempdir().unwrap();
    let tree = tmp.path().join("tree");
    std::fs::create_dir_all(tree.join("docs/deep/deeper")).unwrap();
    std::fs::write(
        tree.join("docs/latin1.txt"),
        b"caf\xe9 cr\xe8me br\xfbl\xe9e\nligne deux\nligne trois\n",
    )
    .unwrap();
    std::fs::write(tree.join("docs/utf8.md"), "café crème\n".repeat(5)).unwrap();
    std::fs::write(tree.join("docs/blob.bin"), [0u8, 1, 2, 3, 0, 10, 10]).unwrap();
    std::fs::write(tree.join("docs/deep/deeper/x.rs"), vec![b'x'; 30_000]).unwrap();
    for i in 0..30 {
        std::fs::write(tree.join(format!("file{i:02}.dat")), vec![b'y'; 1000 * i]).unwrap();
    }
    std::fs::hard_link(tree.join("docs/utf8.md"), tree.join("utf8-link.md")).unwrap();
    std::os::unix::fs::symlink("docs/utf8.md", tree.join("shortcut")).unwrap();
    let mut inst = Instance::new(tmp.path().join("home"), &[&tree], Runner::current());
    inst.start();
    let info = |p: &str| inst.json(&["info", tree.join(p).to_str().unwrap()]);

    let latin = info("docs/latin1.txt");
    assert_eq!(latin["encoding"], "windows-1252", "{latin}");
    assert_eq!(latin["lines"], 3);
    assert_eq!(latin["kind"], "text");
    let utf8 = info("docs/utf8.md");
    assert_eq!(
        (
            utf8["encoding"].as_str(),
            utf8["lines"].as_u64(),
            utf8["nlink"].as_u64()
        ),
        (Some("UTF-8"), Some(5), Some(2))
    );
    let blob = info("docs/blob.bin");
    assert!(
        blob["encoding"].is_null() && blob["lines"].is_null(),
        "binary: {blob}"
    );
    assert_eq!(info("shortcut")["target"], "docs/utf8.md");
    let docs = info("docs");
    let (b, a) = gnu_du(&inst.runner, &tree.join("docs"));
    assert_eq!(
        (
            docs["du"]["bytes"].as_u64(),
            docs["du"]["apparent_bytes"].as_u64()
        ),
        (Some(b), Some(a)),
        "{docs}"
    );
    let out = inst.fsctl(&["info", tree.join("nope").to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));

    // ls lists exactly the folder's children.
    let out = inst.fsctl(&["ls", tree.to_str().unwrap(), "--json"]);
    let listed: Vec<serde_json::Value> = json_lines(&out);
    let names: Vec<String> = listed
        .iter()
        .map(|e| e["name"].as_str().unwrap().to_owned())
        .collect();
    let on_disk: BTreeSet<String> = std::fs::read_dir(&tree)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(names.iter().cloned().collect::<BTreeSet<_>>(), on_disk);
    let mut sorted = names.clone();
    sorted.sort_by_key(|n| n.to_lowercase());
    assert_eq!(names, sorted, "sorted by name");
    let out = inst.fsctl(&["ls", tree.to_str().unwrap(), "--sort", "size", "--json"]);
    let first = json_lines(&out).remove(0);
    assert_eq!(first["name"], "file29.dat");

    // tree: du figures, largest first, collapsed beyond --max-children.
    let t = inst.json(&[
        "tree",
        tree.to_str().unwrap(),
        "--depth",
        "3",
        "--max-children",
        "5",
    ]);
    let (b, _) = gnu_du(&inst.runner, &tree);
    assert_eq!(t["bytes"].as_u64(), Some(b));
    assert_eq!(t["children"].as_array().unwrap().len(), 5);
    assert_eq!(
        t["hidden_children"].as_u64(),
        Some(on_disk.len() as u64 - 5)
    );
    let docs = t["children"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "docs")
        .expect("docs is among the largest");
    assert_eq!(docs["children"][0]["name"], "deep");
    assert_eq!(docs["children"][0]["children"][0]["name"], "deeper");
    let t0 = inst.json(&["tree", tree.to_str().unwrap(), "--depth", "0"]);
    assert!(t0["children"].as_array().unwrap().is_empty());
    assert_eq!(t0["hidden_children"].as_u64(), Some(on_disk.len() as u64));
}
