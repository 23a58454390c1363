//! Duplicate files: groups equal an oracle that compares every file's whole
//! content; a second run reads no content; a changed byte drops a file from
//! its group; hashing modes.

use std::collections::{BTreeMap, BTreeSet};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use crate::util::{self, Instance, Runner, json_lines, make_unreadable, write_file};

/// Deterministic bytes (xorshift), so content is incompressible and
/// distinct per seed.
fn noise(seed: u64, len: usize) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

/// A tree with known duplicate groups and near-misses. Returns the path of
/// the file made unreadable later.
fn dupes_tree(t: &Path) -> PathBuf {
    const MIB: usize = 1 << 20;
    // One byte, three copies.
    for p in ["one/a", "one/b", "two/c"] {
        write_file(t, p, b"x");
    }
    write_file(t, "one/other-byte", b"y");
    // 100 bytes: two copies and a same-size stranger.
    write_file(t, "small/r1.txt", &noise(1, 100));
    write_file(t, "small/deep/er/r2.txt", &noise(1, 100));
    write_file(t, "small/stranger.txt", &noise(2, 100));
    // Between one block and the partial-hash threshold.
    write_file(t, "mid/m1", &noise(3, 5000));
    write_file(t, "mid/m2", &noise(3, 5000));
    // 1 MiB: three copies (one with a hard link), and a file with the same
    // head and tail but a different middle byte.
    let big = noise(4, MIB);
    write_file(t, "big/b1.bin", &big);
    write_file(t, "big/b2.bin", &big);
    write_file(t, "elsewhere/b3.bin", &big);
    std::fs::hard_link(t.join("big/b1.bin"), t.join("elsewhere/b1-link.bin")).unwrap();
    let mut middle = big.clone();
    middle[MIB / 2] ^= 0xff;
    write_file(t, "big/middle-differs.bin", &middle);
    // 3 MiB: two copies.
    let huge = noise(5, 3 * MIB);
    write_file(t, "huge/h1", &huge);
    write_file(t, "huge/h2 with space", &huge);
    // A file and its hard link only: one copy, not a duplicate.
    write_file(t, "linked/solo", &noise(6, 777));
    std::fs::hard_link(t.join("linked/solo"), t.join("linked/solo-link")).unwrap();
    // Empty files: left out unless asked for.
    for p in ["empty/e1", "empty/e2", "empty/e3"] {
        write_file(t, p, b"");
    }
    // A symlink to a duplicate is not followed.
    std::os::unix::fs::symlink("b2.bin", t.join("big/link-to-b2")).unwrap();
    // An unreadable copy of the 100-byte content.
    write_file(t, "small/locked.txt", &noise(1, 100));
    t.join("small/locked.txt")
}

/// Paths per (dev, ino).
type Inodes = BTreeMap<(u64, u64), Vec<String>>;

/// Groups of paths with byte-identical content, two or more inodes each,
/// computed by reading every regular file whole (no hashing at all).
fn oracle(root: &Path, skip: &[PathBuf], min_size: u64, empty: bool) -> BTreeSet<Vec<String>> {
    // content -> inode -> paths
    let mut by_content: BTreeMap<Vec<u8>, Inodes> = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            let m = std::fs::symlink_metadata(&p).unwrap();
            if m.is_dir() {
                stack.push(p);
            } else if m.is_file() && !skip.contains(&p) && m.len() >= min_size {
                if m.len() == 0 && !empty {
                    continue;
                }
                by_content
                    .entry(std::fs::read(&p).unwrap())
                    .or_default()
                    .entry((m.dev(), m.ino()))
                    .or_default()
                    .push(p.to_str().unwrap().to_owned());
            }
        }
    }
    by_content
        .into_values()
        .filter(|inodes| inodes.len() > 1)
        .map(|inodes| {
            let mut paths: Vec<String> = inodes.into_values().flatten().collect();
            paths.sort();
            paths
        })
        .collect()
}

/// Runs `fsctl dupes ARGS --json`: the groups (as sorted path lists, in
/// output order), the raw group objects, and stderr (the summary line).
fn dupes(inst: &Instance, args: &[&str]) -> (Vec<Vec<String>>, Vec<Value>, String) {
    let mut a = vec!["dupes"];
    a.extend_from_slice(args);
    a.push("--json");
    let out = inst.fsctl(&a);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "fsctl {a:?}: {stderr}");
    let groups: Vec<Value> = json_lines(&out);
    let paths = groups
        .iter()
        .map(|g| {
            let mut p: Vec<String> = g["paths"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_str().unwrap().to_owned())
                .collect();
            p.sort();
            p
        })
        .collect();
    (paths, groups, stderr)
}

fn files_read(inst: &Instance) -> u64 {
    inst.status()["hashing"]["files_read"].as_u64().unwrap()
}

/// A hash is trusted by later runs only when taken 2 s after the file's
/// last change (the racy window): let the tree settle first. This sleep is
/// the point: the window is measured on the clock, and nothing the daemon
/// reports says that it has passed.
fn settle() {
    std::thread::sleep(Duration::from_millis(2100));
}

#[test]
fn dupes_equal_a_content_oracle_and_the_cache_spares_reading() {
    let tmp = tempfile::tempdir().unwrap();
    let tree = tmp.path().join("tree");
    let locked = dupes_tree(&tree);
    let runner = Runner::unprivileged(&[&tree], tmp.path());
    make_unreadable(&locked);
    // The daemon runs as a user the mode applies to (nobody, when root).
    let unreadable = vec![locked.clone()];
    settle();
    let mut inst = Instance::new(tmp.path().join("home"), &[&tree], runner);
    inst.start();

    // First run: every group equals the oracle's, largest reclaimable first.
    let (groups, raw, stderr) = dupes(&inst, &[]);
    let expected = oracle(&tree, &unreadable, 1, false);
    assert_eq!(
        groups.iter().cloned().collect::<BTreeSet<_>>(),
        expected,
        "stderr: {stderr}"
    );
    assert_eq!(groups.len(), expected.len(), "no group twice");
    let reclaim: Vec<u64> = raw
        .iter()
        .map(|g| g["reclaimable_bytes"].as_u64().unwrap())
        .collect();
    assert!(reclaim.windows(2).all(|w| w[0] >= w[1]), "{reclaim:?}");
    // The 1 MiB group: three inodes (the hard link is the same copy), so
    // two copies' worth reclaimable; the hash is BLAKE3-sized.
    let big = raw
        .iter()
        .find(|g| g["size"] == 1 << 20)
        .expect("the 1 MiB group");
    assert_eq!(big["copies"].as_array().unwrap().len(), 3, "{big}");
    assert_eq!(big["reclaimable_bytes"], 2u64 << 20);
    assert_eq!(big["hash"].as_str().unwrap().len(), 64);
    assert!(
        !groups.iter().flatten().any(|p| p.contains("middle-differs")
            || p.contains("link-to-b2")
            || p.contains("solo")
            || p.contains("empty/")),
        "near-misses, symlinks, lone hard links and empty files are not duplicates: {groups:?}"
    );
    if !unreadable.is_empty() {
        assert!(
            stderr.contains("could not be read") && stderr.contains("locked.txt"),
            "the user is told which file was skipped: {stderr}"
        );
    }

    // Second run: the same answer without reading any content.
    let before = files_read(&inst);
    let (again, _, stderr) = dupes(&inst, &[]);
    assert_eq!(again, groups);
    assert_eq!(files_read(&inst), before, "a cached run reads no file");
    assert!(stderr.contains(", 0 read (0 B)"), "{stderr}");

    // Options: --min-size keeps the big groups; --include-empty adds the
    // empty files; a folder limits the search to its subtree.
    // A new question (here: another minimum size) is answered afresh from
    // the index and the cached hashes: still nothing read.
    let before = files_read(&inst);
    let (only_big, _, stderr) = dupes(&inst, &["--min-size", "1M"]);
    assert_eq!(files_read(&inst), before, "{stderr}");
    assert_eq!(
        only_big.into_iter().collect::<BTreeSet<_>>(),
        oracle(&tree, &unreadable, 1 << 20, false)
    );
    let (with_empty, _, _) = dupes(&inst, &["--include-empty"]);
    assert_eq!(
        with_empty.into_iter().collect::<BTreeSet<_>>(),
        oracle(&tree, &unreadable, 0, true)
    );
    let (under_big, _, _) = dupes(&inst, &[tree.join("big").to_str().unwrap()]);
    assert_eq!(
        under_big.into_iter().collect::<BTreeSet<_>>(),
        oracle(&tree.join("big"), &unreadable, 1, false)
    );

    // One changed byte (same size, so the index's size still matches): the
    // file leaves its group at once, without waiting for the watcher.
    let b2 = tree.join("big/b2.bin");
    let mut data = std::fs::read(&b2).unwrap();
    data[12345] ^= 1;
    std::fs::write(&b2, &data).unwrap();
    let (after, _, _) = dupes(&inst, &[]);
    let expected = oracle(&tree, &unreadable, 1, false);
    assert_eq!(after.into_iter().collect::<BTreeSet<_>>(), expected);
    assert!(!expected.iter().flatten().any(|p| p.ends_with("b2.bin")));

    // A path outside every root: one line, exit 2.
    let out = inst.fsctl(&["dupes", "/proc"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not under any root"));
    // A malformed size: one line, exit 2.
    let out = inst.fsctl(&["dupes", "--min-size", "3 parsecs"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown size unit"));
}

#[test]
fn background_hashing_answers_from_the_cache_and_off_refuses() {
    let tmp = tempfile::tempdir().unwrap();
    let tree = tmp.path().join("tree");
    for i in 0..20u64 {
        write_file(&tree, format!("d{}/f{i}", i % 4), &noise(i % 5, 20_000));
    }
    settle();
    let mut inst = Instance::new(tmp.path().join("home"), &[&tree], Runner::current());
    inst.args = vec!["--hashing".into(), "background".into()];
    inst.start();
    assert_eq!(inst.status()["roots"][0]["hashing"], "background");

    // The daemon hashes on its own once idle...
    let mut h = Value::Null;
    let passed = util::poll_until(Duration::from_secs(60), || {
        h = inst.status()["hashing"].clone();
        let last = &h["last_pass"];
        last["background"] == true && last["candidates"] == 20 && last["read"] == 20
    });
    assert!(passed, "no background pass: {h}");
    // ...so dupes answers without reading anything.
    let before = files_read(&inst);
    let (groups, _, stderr) = dupes(&inst, &[]);
    assert_eq!(groups.len(), 5, "{stderr}");
    assert!(stderr.contains(", 0 read (0 B)"), "{stderr}");
    assert_eq!(files_read(&inst), before);

    // Asked again with nothing changed: the previous answer stands (the
    // daemon logs that it reused it).
    let (again, _, _) = dupes(&inst, &[]);
    assert_eq!(again, groups);
    // (The log is written by a background thread: wait for the line.)
    // Where every folder is polled, a change may not be seen yet, so an
    // earlier answer is never reused.
    if !util::polling() {
        util::eventually(
            Duration::from_secs(10),
            "no reused=true in the daemon's log",
            || inst.log().contains("reused=true"),
        );
    }
    // One byte changed (same size) and the daemon idle again: the watcher
    // saw it, so the answer is computed afresh and the file left its group.
    let f0 = tree.join("d0/f0");
    let mut data = std::fs::read(&f0).unwrap();
    data[100] ^= 1;
    std::fs::write(&f0, &data).unwrap();
    settle();
    let (after, _, stderr) = dupes(&inst, &[]);
    assert!(
        !after.iter().flatten().any(|p| p.ends_with("d0/f0")),
        "{after:?} {stderr}"
    );
    assert_eq!(after.len(), 5);
    inst.stop();

    // Hashing off: a dupes query under the root is refused with the reason;
    // one over every root says what it left out.
    inst.args = vec!["--hashing".into(), "off".into()];
    inst.start();
    let out = inst.fsctl(&["dupes", tree.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("hashing is off"), "{err}");
    let (groups, _, stderr) = dupes(&inst, &[]);
    assert!(groups.is_empty());
    assert!(stderr.contains("its hashing is off"), "{stderr}");
}

/// The shape where duplicate finders spend their time on system calls, not
/// bytes (issue 36: a home folder's many small files): hundreds of small
/// files whose sizes are shared but whose content mostly differs, some
/// copied, a few replaced or rewritten after the index saw them. Every
/// same-size file is read once, whole; the groups equal the oracle's; a
/// second run reads nothing.
#[test]
fn many_small_same_size_files_equal_the_oracle() {
    let tmp = tempfile::tempdir().unwrap();
    let tree = tmp.path().join("tree");
    // 600 files over 12 sizes from 1 byte to 16 KiB (the whole-file
    // threshold), 50 folders; every fifth one copied into another folder.
    let sizes = [
        1usize, 7, 64, 100, 511, 512, 4095, 4096, 4097, 9000, 16383, 16384,
    ];
    for i in 0..600u64 {
        let size = sizes[i as usize % sizes.len()];
        let data = noise(1000 + i, size);
        write_file(&tree, format!("d{:02}/f{i:03}.dat", i % 50), &data);
        if i % 5 == 0 {
            write_file(&tree, format!("d{:02}/copy{i:03}.dat", (i + 7) % 50), &data);
        }
    }
    settle();
    let mut inst = Instance::new(tmp.path().join("home"), &[&tree], Runner::current());
    inst.start();
    // After the index saw them: one copy rewritten in place (same inode,
    // same size, other content), one replaced by another file of its size
    // with the same content (a new inode, renamed over it), one removed.
    std::fs::write(tree.join("d07/copy000.dat"), noise(7, 1)).unwrap();
    let replaced = tree.join("d12/copy005.dat");
    std::fs::write(tree.join("new.tmp"), noise(1005, 512)).unwrap();
    std::fs::rename(tree.join("new.tmp"), &replaced).unwrap();
    std::fs::remove_file(tree.join("d17/copy010.dat")).unwrap();
    util::sync(&inst);

    let before = files_read(&inst);
    let (groups, raw, stderr) = dupes(&inst, &[]);
    let expected = oracle(&tree, &[], 1, false);
    assert!(
        expected.len() >= 100,
        "the tree has its copies: {}",
        expected.len()
    );
    assert_eq!(
        groups.iter().cloned().collect::<BTreeSet<_>>(),
        expected,
        "stderr: {stderr}"
    );
    for g in &raw {
        let size = g["size"].as_u64().unwrap();
        assert!(sizes.contains(&(size as usize)), "{g}");
    }
    let read = files_read(&inst) - before;
    assert!(
        read >= 600,
        "every same-size file is read: {read} ({stderr})"
    );

    // Nothing changed since: the same answer, nothing read (once the
    // rewritten file's hash is old enough to trust).
    settle();
    dupes(&inst, &[]);
    let before = files_read(&inst);
    let (again, _, stderr) = dupes(&inst, &[]);
    assert_eq!(again, groups);
    assert_eq!(files_read(&inst), before, "{stderr}");
}
