//! `fsctl map`: an outline of a tree within a token budget, from the index.

use std::path::Path;
use std::time::{Duration, SystemTime};

use serde_json::Value;

use crate::util::{Instance, Runner, gnu_du};

/// Writes `len` bytes at `rel` under `root` with the given mtime.
fn file(root: &Path, rel: &str, len: usize, mtime: SystemTime) {
    crate::util::write_at(root, rel, &vec![b'x'; len], mtime);
}

fn year(y: i32) -> SystemTime {
    // Mid-year, UTC, so that no time zone moves it to another year.
    let days = (y - 1970) as u64 * 365 + ((y - 1969) / 4) as u64 + 180;
    SystemTime::UNIX_EPOCH + Duration::from_secs(days * 86_400)
}

/// A tree with clear largest folders, a repetitive folder, a mixed folder
/// with a pattern group, a recently active area, an old one and many small
/// folders, so that small budgets must leave things out.
fn map_tree(root: &Path) {
    let old = year(2018);
    for i in 1..=60 {
        let y = 2019 + (i % 3);
        file(root, &format!("photos/IMG_{i:04}.jpg"), 2000, year(y));
    }
    file(root, "big/disk.img", 900_000, old);
    file(root, "big/sub/inner.bin", 300_000, old);
    std::fs::hard_link(
        root.join("big/disk.img"),
        root.join("big/sub/disk-link.img"),
    )
    .unwrap();
    for i in 0..40 {
        file(root, &format!("big/frames/frame_{i:03}.png"), 1000, old);
    }
    file(root, "big/frames/readme.txt", 100, old);
    for r in 1..=3 {
        file(root, &format!("big/run-{r:02}/out.log"), 20_000, old);
    }
    file(root, "videos/talk.mp4", 500_000, old);
    file(root, "src/main.rs", 3000, SystemTime::now());
    file(root, "src/lib.rs", 2000, old);
    file(root, "archive/2015/report.pdf", 40_000, year(2015));
    file(root, "archive/2015/notes.txt", 300, year(2015));
    for d in 0..150 {
        file(root, &format!("misc/topic-{d:03}/note.md"), 10 + d, old);
    }
}

fn map_text(inst: &Instance, path: &Path, budget: u32) -> String {
    let out = inst.fsctl(&[
        "map",
        path.to_str().unwrap(),
        "--budget",
        &budget.to_string(),
    ]);
    assert!(
        out.status.success(),
        "fsctl map --budget {budget}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The shown node at `path` (names below the root).
fn node<'a>(root: &'a Value, path: &[&str]) -> &'a Value {
    let mut n = root;
    for name in path {
        n = n["children"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == *name)
            .unwrap_or_else(|| panic!("{name} not shown under {}", n["name"]));
    }
    n
}

#[test]
fn map_stays_in_budget_shows_the_largest_folders_and_is_stable() {
    let tmp = tempfile::tempdir().unwrap();
    let tree = tmp.path().join("tree");
    map_tree(&tree);
    let mut inst = Instance::new(tmp.path().join("home"), &[&tree], Runner::current());
    inst.start();

    // The largest folders, by the daemon's du (which equals GNU du).
    let du = inst.json(&["du", tree.to_str().unwrap(), "--top", "0"]);
    let mut dirs: Vec<(u64, String)> = du["children"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["type"] == "dir")
        .map(|c| {
            let p = c["path"].as_str().unwrap();
            (
                c["bytes"].as_u64().unwrap(),
                p.rsplit('/').next().unwrap().to_owned(),
            )
        })
        .collect();
    dirs.sort_by(|a, b| b.cmp(a));
    let largest: Vec<&str> = dirs.iter().take(3).map(|d| d.1.as_str()).collect();
    assert_eq!(largest, ["big", "misc", "videos"], "{dirs:?}");

    let mut previous = 0;
    for budget in (100..=4000).step_by(50) {
        let text = map_text(&inst, &tree, budget);
        assert!(
            text.len().div_ceil(4) <= budget as usize,
            "budget {budget}: {} bytes\n{text}",
            text.len()
        );
        for name in &largest {
            assert!(
                text.contains(&format!("\n  {name}/ ")),
                "budget {budget}: {name} missing\n{text}"
            );
        }
        assert!(
            text.len() + 200 >= previous,
            "budget {budget} shows much less than a smaller one"
        );
        previous = previous.max(text.len());
    }
    // The whole tree does not fit in 100 tokens: something is summarised.
    assert!(map_text(&inst, &tree, 100).contains("... "));

    // Stable across runs.
    for budget in [100, 1000, 4000] {
        assert_eq!(
            map_text(&inst, &tree, budget),
            map_text(&inst, &tree, budget),
            "budget {budget}"
        );
    }

    // JSON: the text obeys the budget and the nodes are the shown ones, with
    // du's figures (the hard link inside big/ counts once).
    let v = inst.json(&["map", tree.to_str().unwrap(), "--budget", "4000"]);
    let text = v["text"].as_str().unwrap();
    assert!(text.len().div_ceil(4) <= 4000);
    assert_eq!(v["tokens"].as_u64(), Some(text.len().div_ceil(4) as u64));
    assert_eq!(text, map_text(&inst, &tree, 4000));
    let root = &v["root"];
    let (b, _) = gnu_du(&inst.runner, &tree);
    assert_eq!(root["bytes"].as_u64(), Some(b), "{root}");
    let big = node(root, &["big"]);
    assert_eq!(
        big["bytes"].as_u64(),
        Some(gnu_du(&inst.runner, &tree.join("big")).0)
    );

    // A repetitive folder is one line with the pattern, count and years.
    let photos = node(root, &["photos"]);
    assert_eq!(photos["like"], "IMG_####.jpg", "{photos}");
    assert_eq!(photos["files"], 60);
    assert_eq!(photos["years"], serde_json::json!([2019, 2021]));
    assert!(
        text.contains(", 60 files like IMG_####.jpg, 2019-2021\n"),
        "{text}"
    );
    // Inside a mixed folder the repetitive files are one group.
    let frames = node(root, &["big", "frames"]);
    let group = node(frames, &["frame_###.png"]);
    assert_eq!(group["type"], "group");
    assert_eq!(group["files"], 40);
    assert!(text.contains("40 files like frame_###.png, "), "{text}");

    let line = |name: &str| {
        text.lines()
            .find(|l| l.starts_with(&format!("  {name}/ ")))
            .unwrap_or_else(|| panic!("{name} not in\n{text}"))
            .to_owned()
    };
    // Sibling folders alike are one group; a folder whose subfolders all
    // look alike names their pattern in its own line.
    let runs = node(root, &["big", "run-##/"]);
    assert_eq!(
        (
            runs["type"].as_str(),
            runs["count"].as_u64(),
            runs["files"].as_u64()
        ),
        (Some("dir_group"), Some(3), Some(3)),
        "{runs}"
    );
    assert!(text.contains("    3 folders like run-##/, "), "{text}");
    let misc = node(root, &["misc"]);
    assert_eq!(
        (misc["like"].as_str(), misc["count"].as_u64()),
        (Some("topic-###/"), Some(150))
    );
    assert!(
        line("misc").ends_with(", 150 folders like topic-###/, 150 files: text 100% (.md)"),
        "{text}"
    );

    // Recently active areas are marked, old ones are not.
    assert!(line("src").ends_with("[recent]"), "{text}");
    // archive/ holds nothing but 2015/: one line for both.
    assert!(!line("archive/2015").contains("[recent]"), "{text}");
    assert!(!line("photos").contains("[recent]"), "{text}");
    assert!(text.lines().next().unwrap().ends_with("[recent]"));
    assert_eq!(node(root, &["src"])["recent"], true);
    assert_eq!(node(root, &["archive/2015"])["recent"], false);

    // Bad input: outside every root, a zero budget.
    let out = inst.fsctl(&["map", "/usr", "--budget", "500"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("/usr is not under any root"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    let out = inst.fsctl(&["map", tree.to_str().unwrap(), "--budget", "0"]);
    assert_eq!(out.status.code(), Some(2));
    // A file maps to its one line.
    let one = map_text(&inst, &tree.join("videos/talk.mp4"), 100);
    assert!(one.ends_with("talk.mp4 492K\n"), "{one}");
}
