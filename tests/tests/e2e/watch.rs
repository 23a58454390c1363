//! The index stays exact while the tree changes under a running daemon:
//! churn, lost events, the watch limit, and a kill during churn. CI runs
//! them once per watch backend (`FSINDEX_TEST_WATCH_BACKEND`).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::util::{
    self, Instance, Rng, Runner, Watch, diff, find_oracle, listing, polling, search_oracle, sync,
    verify_clean, watch_backend,
};

/// `ops` random file-system operations under `root`: create, write,
/// truncate, rename and move files and folders, delete trees, create and
/// delete at once, replace a file by a folder of the same name.
fn churn(root: &Path, seed: u64, ops: usize) {
    let mut rng = Rng(seed);
    let (mut dirs, mut files) = listing(root);
    for n in 0..ops {
        if n % 200 == 0 {
            (dirs, files) = listing(root);
        }
        let dir = dirs[rng.below(dirs.len())].clone();
        let pick_file =
            |rng: &mut Rng, files: &Vec<PathBuf>| files.get(rng.below(files.len())).cloned();
        match rng.below(12) {
            0..=2 => {
                let p = dir.join(format!("f{n}-{}.txt", rng.below(1000)));
                let _ = std::fs::write(&p, vec![b'x'; rng.below(5000)]);
                files.push(p);
            }
            3 => {
                let p = dir.join(format!("d{n}"));
                if std::fs::create_dir(&p).is_ok() {
                    let _ = std::fs::write(p.join("inside.md"), b"in a new folder");
                    dirs.push(p);
                }
            }
            4 => {
                if let Some(f) = pick_file(&mut rng, &files) {
                    use std::io::Write;
                    if let Ok(mut h) = std::fs::OpenOptions::new().append(true).open(&f) {
                        let _ = h.write_all(b"more bytes");
                    }
                }
            }
            5 => {
                if let Some(f) = pick_file(&mut rng, &files)
                    && let Ok(h) = std::fs::OpenOptions::new().write(true).open(&f)
                {
                    let _ = h.set_len(rng.below(10) as u64);
                }
            }
            6 => {
                if let Some(f) = pick_file(&mut rng, &files) {
                    let to = dirs[rng.below(dirs.len())].join(format!("moved{n}.bin"));
                    let _ = std::fs::rename(&f, &to);
                }
            }
            7 => {
                // Rename or move a folder (never into itself).
                let d = dirs[rng.below(dirs.len())].clone();
                let dest = dirs[rng.below(dirs.len())].clone();
                if d != root && !dest.starts_with(&d) {
                    let _ = std::fs::rename(&d, dest.join(format!("r{n}")));
                }
                (dirs, files) = listing(root);
            }
            8 => {
                if let Some(f) = pick_file(&mut rng, &files) {
                    let _ = std::fs::remove_file(&f);
                }
            }
            9 => {
                let d = dirs[rng.below(dirs.len())].clone();
                if d != root && rng.below(4) == 0 {
                    let _ = std::fs::remove_dir_all(&d);
                    (dirs, files) = listing(root);
                }
            }
            10 => {
                let p = dir.join(format!("flash{n}"));
                let _ = std::fs::write(&p, b"here and gone");
                let _ = std::fs::remove_file(&p);
            }
            _ => {
                if let Some(f) = pick_file(&mut rng, &files)
                    && std::fs::remove_file(&f).is_ok()
                    && std::fs::create_dir(&f).is_ok()
                {
                    let _ = std::fs::write(f.join("was-a-file"), b"now a folder");
                }
            }
        }
    }
}

fn start_tree(root: &Path) {
    for d in [
        "docs/2025",
        "docs/2024",
        "src/core",
        "photos/raw",
        "photos/edited",
        "tmp",
    ] {
        std::fs::create_dir_all(root.join(d)).unwrap();
        for i in 0..5 {
            std::fs::write(
                root.join(d).join(format!("seed{i}.dat")),
                vec![b'a'; i * 100],
            )
            .unwrap();
        }
    }
}

/// The first root's `watch` in `status` says some of it is polled.
fn assert_partly_polled(status: &serde_json::Value) {
    let watch = status["roots"][0]["watch"].as_str().unwrap();
    assert!(watch.starts_with("partly polled"), "{status}");
}

fn assert_search_matches(inst: &Instance, root: &Path) {
    let all = find_oracle(&inst.runner, root);
    for terms in [
        &["txt"][..],
        &["moved"],
        &["inside"],
        &["was-a-file"],
        &["d1"],
        &["seed", "docs"],
        &["flash"],
    ] {
        let expected = search_oracle(&all, root, terms);
        let got: BTreeSet<Vec<u8>> = inst.search0(terms).into_iter().collect();
        assert_eq!(expected, got, "query {terms:?}:\n{}", diff(&expected, &got));
    }
}

#[test]
fn seeded_churn_leaves_an_exact_index() {
    let tmp = tempfile::tempdir().unwrap();
    let tree = tmp.path().join("tree");
    start_tree(&tree);
    let mut inst = Instance::new(tmp.path().join("home"), &[&tree], Runner::current());
    inst.start();
    // FSINDEX_CHURN_SEED replays (or explores) another sequence.
    let seed = std::env::var("FSINDEX_CHURN_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5EED_0001);
    churn(&tree, seed, 3000);
    sync(&inst);
    verify_clean(&inst);
    assert_search_matches(&inst, &tree);
    let status = inst.status();
    if polling() {
        // Nothing watched: the root is polled, and no event arrives.
        assert_partly_polled(&status);
        assert_eq!(status["watch"]["backend"], "poll", "{status}");
        return;
    }
    assert_eq!(status["roots"][0]["watch"], "live", "{status}");
    assert!(
        status["watch"]["events"].as_u64().unwrap() > 200,
        "{status}"
    );
}

#[test]
fn lost_events_trigger_a_rescan_and_the_index_ends_exact() {
    let tmp = tempfile::tempdir().unwrap();
    let tree = tmp.path().join("tree");
    start_tree(&tree);
    let mut inst = Instance::new(tmp.path().join("home"), &[&tree], Runner::current());
    // Test hook: a queue of 4 notices between the inotify reader and the
    // processor, so a burst overflows it exactly as a full kernel queue would.
    inst.env
        .push(("FSINDEX_TEST_NOTICE_CAPACITY".into(), "4".into()));
    inst.start();
    for i in 0..3000 {
        std::fs::write(tree.join("tmp").join(format!("burst{i}.log")), b"b").unwrap();
    }
    sync(&inst);
    verify_clean(&inst);
    assert_eq!(inst.search0(&["burst"]).len(), 3000);
    if polling() {
        return; // no events, so none to lose
    }
    let status = inst.status();
    assert!(
        status["watch"]["overflows"].as_u64().unwrap() >= 1,
        "{status}"
    );
    assert!(
        status["watch"]["recrawls"].as_u64().unwrap() >= 1,
        "{status}"
    );
}

#[test]
fn beyond_the_watch_limit_folders_are_polled() {
    let tmp = tempfile::tempdir().unwrap();
    let tree = tmp.path().join("tree");
    start_tree(&tree);
    let mut inst = Instance::new(tmp.path().join("home"), &[&tree], Runner::current());
    inst.args = vec![
        "--max-watches".into(),
        "3".into(),
        "--poll-interval".into(),
        "1".into(),
    ];
    if polling() {
        return; // the poll backend holds no watches to run out of
    }
    inst.start();
    let status = inst.status();
    assert_eq!(status["watch"]["watches"].as_u64(), Some(3), "{status}");
    assert_eq!(
        status["watch"]["backend"],
        watch_backend().unwrap_or("inotify".into()),
        "status names the watcher in use: {status}"
    );
    assert!(status["watch"]["polled"].as_u64().unwrap() >= 6, "{status}");
    assert!(
        status["watch"]["note"]
            .as_str()
            .unwrap()
            .contains("max_watches"),
        "{status}"
    );
    assert_partly_polled(&status);

    // A change in every folder, watched or not, arrives within the poll interval.
    let (dirs, _) = listing(&tree);
    for (i, d) in dirs.iter().enumerate() {
        std::fs::write(d.join(format!("late{i}.txt")), b"late").unwrap();
    }
    let mut found = 0;
    let caught_up = util::poll_until(Duration::from_secs(15), || {
        found = inst.search0(&["late"]).len();
        found >= dirs.len()
    });
    assert!(
        caught_up,
        "polled folders did not catch up: {found} of {}",
        dirs.len()
    );
    verify_clean(&inst);
}

#[test]
fn killed_during_churn_then_restart_is_exact() {
    let tmp = tempfile::tempdir().unwrap();
    let tree = tmp.path().join("tree");
    start_tree(&tree);
    let mut inst = Instance::new(tmp.path().join("home"), &[&tree], Runner::current());
    inst.start();
    let t = tree.clone();
    let worker = std::thread::spawn(move || churn(&t, 0x5EED_0002, 3000));
    // Kill it once it is applying the churn, not before it has seen any.
    // The poll backend counts no events: kill it mid-churn instead.
    if polling() {
        std::thread::sleep(Duration::from_millis(300));
    } else {
        util::eventually(
            Duration::from_secs(10),
            "the daemon saw no event of the churn",
            || inst.status()["watch"]["events"].as_u64() > Some(0),
        );
    }
    inst.kill9();
    worker.join().unwrap();
    inst.start();
    assert_eq!(inst.status()["notices"].as_array().unwrap().len(), 0);
    verify_clean(&inst);
    assert_search_matches(&inst, &tree);
}

#[test]
fn fsctl_watch_prints_a_scripted_sequence_in_order() {
    let tmp = tempfile::tempdir().unwrap();
    let tree = tmp.path().join("tree");
    start_tree(&tree);
    let mut inst = Instance::new(tmp.path().join("home"), &[&tree], Runner::current());
    inst.start();
    // The first event is `subscribed` (Watch::subscribe checks it).
    let mut watch = Watch::subscribe(inst.fsctl_cmd(&["watch", tree.to_str().unwrap(), "--json"]));

    // Each step is its own batch: --sync waits until it is applied.
    let a = tree.join("a.txt");
    let b = tree.join("b.txt");
    std::fs::write(&a, b"1").unwrap();
    sync(&inst);
    std::fs::write(&a, b"12345").unwrap();
    sync(&inst);
    std::fs::rename(&a, &b).unwrap();
    sync(&inst);
    std::fs::create_dir(tree.join("sub")).unwrap();
    sync(&inst);
    std::fs::remove_file(&b).unwrap();
    sync(&inst);

    let s = |p: &Path| p.to_str().unwrap().to_owned();
    // Polling compares names, so it sees a rename as a new name (and the
    // old one deleted).
    let renamed = if polling() {
        ("created", s(&b), None)
    } else {
        ("renamed", s(&b), Some(s(&a)))
    };
    let expected = [
        ("created", s(&a), None),
        ("modified", s(&a), None),
        renamed,
        ("created", s(&tree.join("sub")), None),
        ("deleted", s(&b), None),
    ];
    for (kind, path, from) in &expected {
        watch.until(
            Duration::from_secs(10),
            &format!("{kind} {path} (from {from:?})"),
            |ev| {
                ev["kind"] == *kind
                    && ev["path"] == *path
                    && from.as_ref().is_none_or(|f| ev["from"] == *f)
            },
        );
    }
    let seen = &watch.seen;
    assert!(seen.iter().all(|e| e["kind"] != "missed"), "{seen:#?}");
}

/// Every path under the roots, as `find` lists them, against what the
/// index finds for a wildcard.
fn assert_index_is_find(inst: &Instance, roots: &[&Path], step: &str) {
    sync(inst);
    let mut expected = BTreeSet::new();
    for r in roots {
        expected.extend(find_oracle(&inst.runner, r));
    }
    let got: BTreeSet<Vec<u8>> = inst.search0(&["*"]).into_iter().collect();
    assert_eq!(expected, got, "{step}:\n{}", diff(&expected, &got));
}

/// Folders under the roots (the roots included): what a watcher with a
/// watch per folder holds.
fn folder_count(roots: &[&Path]) -> u64 {
    roots.iter().map(|r| listing(r).0.len() as u64).sum()
}

/// Waits until `status` counts one watch per folder under the roots.
fn assert_one_watch_per_folder(inst: &Instance, roots: &[&Path], step: &str) {
    if polling() {
        return; // nothing is watched
    }
    let want = folder_count(roots);
    let mut got = None;
    let settled = util::poll_until(Duration::from_secs(10), || {
        got = inst.status()["watch"]["watches"].as_u64();
        got == Some(want)
    });
    assert!(settled, "{step}: {got:?} watches for {want} folders");
}

/// The inotify backend keeps its watches as a tree of names (a watch knows
/// its folder's watch and its own name): a folder renamed twice, moved into
/// another root's subfolder and back into a subfolder of the first must
/// take every watch below it along, so that files made deep inside after
/// each move are found where they are. And the watch count follows
/// deletions: the notify backend once counted every folder it had ever
/// watched (its set never forgot deleted ones).
#[test]
fn a_folder_tree_renamed_and_moved_between_roots_keeps_its_watches() {
    let tmp = tempfile::tempdir().unwrap();
    let a = tmp.path().join("a");
    let b = tmp.path().join("b");
    for d in ["proj/src/core/deep", "proj/docs/old", "x/y"] {
        std::fs::create_dir_all(a.join(d)).unwrap();
    }
    std::fs::create_dir_all(b.join("sub/inner")).unwrap();
    util::write_file(&a, "proj/src/core/deep/seed.rs", b"seed");
    let roots = [a.as_path(), b.as_path()];
    let mut inst = Instance::new(tmp.path().join("home"), &roots, Runner::current());
    inst.start();
    assert_index_is_find(&inst, &roots, "the initial scan");
    assert_one_watch_per_folder(&inst, &roots, "the initial scan");

    // Renamed twice; each time something is made deep inside at once.
    std::fs::rename(a.join("proj"), a.join("proj2")).unwrap();
    util::write_file(&a, "proj2/src/core/deep/after-first.rs", b"1");
    sync(&inst);
    std::fs::rename(a.join("proj2"), a.join("proj3")).unwrap();
    std::fs::create_dir(a.join("proj3/src/core/deep/made")).unwrap();
    util::write_file(&a, "proj3/src/core/deep/made/after-second.rs", b"2");
    assert_index_is_find(&inst, &roots, "renamed twice");
    util::write_file(&a, "proj3/src/core/deep/later.rs", b"3");
    util::write_file(&a, "proj3/docs/old/later.md", b"3");
    assert_index_is_find(&inst, &roots, "files made after the renames");
    assert_one_watch_per_folder(&inst, &roots, "renamed twice");

    // Into the other root's subfolder, then back into a subfolder here.
    std::fs::rename(a.join("proj3"), b.join("sub/inner/proj")).unwrap();
    sync(&inst);
    util::write_file(&b, "sub/inner/proj/src/core/deep/in-b.rs", b"b");
    std::fs::create_dir_all(b.join("sub/inner/proj/docs/old/new/newer")).unwrap();
    util::write_file(&b, "sub/inner/proj/docs/old/new/newer/in-b.md", b"b");
    assert_index_is_find(&inst, &roots, "moved into the other root");
    assert_one_watch_per_folder(&inst, &roots, "moved into the other root");
    std::fs::rename(b.join("sub/inner/proj"), a.join("x/y/proj")).unwrap();
    sync(&inst);
    util::write_file(&a, "x/y/proj/src/core/deep/back-in-a.rs", b"a");
    util::write_file(&a, "x/y/proj/docs/old/new/newer/back-in-a.md", b"a");
    assert_index_is_find(&inst, &roots, "moved back into a subfolder");
    // Its parent renamed: the watches below follow it too.
    std::fs::rename(a.join("x/y"), a.join("x/why")).unwrap();
    sync(&inst);
    util::write_file(&a, "x/why/proj/src/core/deep/parent-renamed.rs", b"p");
    assert_index_is_find(&inst, &roots, "its parent renamed");
    assert_one_watch_per_folder(&inst, &roots, "moved back");

    // Deleted folders are no longer counted.
    let before = folder_count(&roots);
    std::fs::remove_dir_all(a.join("x/why/proj/docs")).unwrap();
    std::fs::remove_dir_all(b.join("sub")).unwrap();
    assert_index_is_find(&inst, &roots, "folders deleted");
    assert!(folder_count(&roots) + 5 < before);
    assert_one_watch_per_folder(&inst, &roots, "folders deleted");
    verify_clean(&inst);
}
