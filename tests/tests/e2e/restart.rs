//! Restarts: an unchanged tree writes no entry rows; changes made while the
//! daemon was down are all reflected after the restart reconcile.

use std::collections::BTreeSet;

use crate::util::{
    Instance, OddSetup, Runner, diff, find_oracle, gnu_du, odd_instance_with, odd_tree,
    search_oracle,
};

fn rows_written(inst: &Instance) -> u64 {
    inst.status()["rows_written"].as_u64().unwrap()
}

/// `du` of each folder (relative to `tree`) equals GNU du's, in allocated
/// and apparent bytes.
fn du_equals_gnu_du(inst: &Instance, runner: &Runner, tree: &std::path::Path, folders: &[&str]) {
    for f in folders {
        let path = tree.join(f);
        let v = inst.json(&["du", path.to_str().unwrap()]);
        let (blocks, apparent) = gnu_du(runner, &path);
        assert_eq!(
            (v["bytes"].as_u64(), v["apparent_bytes"].as_u64()),
            (Some(blocks), Some(apparent)),
            "du {f:?}"
        );
    }
}

#[test]
fn unchanged_restart_writes_no_rows_and_changes_are_reconciled() {
    let tmp = tempfile::tempdir().unwrap();
    let tree = tmp.path().join("tree");
    odd_tree(&tree);
    let runner = Runner::current();
    let mut inst = Instance::new(tmp.path().join("home"), &[&tree], runner.clone());
    inst.start();
    let first = inst.status();
    assert!(rows_written(&inst) > 60);
    let entries = first["entries"].as_u64().unwrap();
    assert_eq!(
        entries,
        find_oracle(&runner, &tree).len() as u64 + 1,
        "entries = walk + the root folder"
    );
    assert_eq!(first["roots"][0]["entries"].as_u64(), Some(entries));
    assert_eq!(first["roots"][0]["state"], "ready");
    inst.stop();

    // Unchanged: the reconcile writes nothing.
    inst.start();
    assert_eq!(
        rows_written(&inst),
        0,
        "an unchanged restart must not write entry rows"
    );
    assert_eq!(inst.status()["entries"].as_u64(), Some(entries));
    inst.stop();

    // Adds, deletes, size changes, a renamed folder, a file replaced by a folder.
    std::fs::write(tree.join("added.txt"), b"new file").unwrap();
    std::fs::create_dir_all(tree.join("new folder/inner")).unwrap();
    std::fs::write(tree.join("new folder/inner/fresh.md"), b"fresh").unwrap();
    std::fs::remove_file(tree.join("Taxes/2024/w2.pdf")).unwrap();
    std::fs::remove_dir_all(tree.join("deep/level0/level1/level2")).unwrap();
    std::fs::write(tree.join("src/lib.rs"), vec![b'y'; 200_000]).unwrap();
    std::fs::rename(tree.join("My Documents"), tree.join("Renamed Docs")).unwrap();
    std::fs::remove_file(tree.join("empty.txt")).unwrap();
    std::fs::create_dir(tree.join("empty.txt")).unwrap();
    std::fs::write(tree.join("empty.txt/now-a-folder"), b"").unwrap();

    inst.start();
    assert!(rows_written(&inst) > 0);
    let all = find_oracle(&runner, &tree);
    assert_eq!(
        inst.status()["entries"].as_u64(),
        Some(all.len() as u64 + 1)
    );
    for terms in [
        &["added"][..],
        &["fresh"],
        &["w2"],
        &["level"],
        &["renamed"],
        &["my documents"],
        &["now-a-folder"],
        &["e"],
    ] {
        let expected = search_oracle(&all, &tree, terms);
        let got: BTreeSet<Vec<u8>> = inst.search0(terms).into_iter().collect();
        assert_eq!(
            expected,
            got,
            "after restart, query {terms:?}:\n{}",
            diff(&expected, &got)
        );
    }
    assert!(
        inst.search0(&["my documents"]).is_empty(),
        "the old folder name is gone"
    );
    du_equals_gnu_du(&inst, &runner, &tree, &["", "src", "Renamed Docs", "deep"]);
}

#[test]
fn scan_wait_picks_up_changes_while_running() {
    // Unwatched, so that the file below is unseen until the rescan (with a
    // watcher, it raced the watcher's 20 ms batch and lost under load).
    let OddSetup {
        tmp,
        tree,
        mut inst,
    } = odd_instance_with(false, &["--no-watch"]);
    std::fs::write(tree.join("src/late.rs"), b"late").unwrap();
    assert!(inst.search0(&["late.rs"]).is_empty());
    let out = inst.fsctl(&[
        "scan",
        tree.join("src").to_str().unwrap(),
        "--wait",
        "--json",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["done"], true);
    assert_eq!(inst.search0(&["late.rs"]).len(), 1);

    // roots add / remove take effect at once.
    let other = tmp.path().join("other");
    std::fs::create_dir_all(other.join("x")).unwrap();
    std::fs::write(other.join("x/unique-marker.txt"), b"m").unwrap();
    let out = inst.fsctl(&["roots", "add", other.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    inst.wait_ready();
    assert_eq!(inst.search0(&["unique-marker"]).len(), 1);
    let out = inst.fsctl(&["roots", "remove", other.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(inst.search0(&["unique-marker"]).is_empty());
    assert_eq!(inst.status()["roots"].as_array().unwrap().len(), 1);
}

/// Stopping mid-scan: SIGTERM exits promptly and cleanly; SIGKILL leaves an
/// index that opens without recovery. Either way the next start's
/// reconcile makes the index exact.
#[test]
fn stopped_or_killed_mid_scan_then_restart_is_exact() {
    use crate::util::wide_tree;
    use std::time::{Duration, Instant};

    let tmp = tempfile::tempdir().unwrap();
    let tree = tmp.path().join("tree");
    wide_tree(&tree, 300, 200);
    let runner = Runner::current();
    let all = find_oracle(&runner, &tree);
    let mut inst = Instance::new(tmp.path().join("home"), &[&tree], runner.clone());

    for how in ["sigterm", "sigkill"] {
        inst.spawn();
        let first = inst.wait_listening();
        let t = Instant::now();
        if how == "sigterm" {
            inst.stop(); // asserts a clean exit
            assert!(
                t.elapsed() < Duration::from_secs(10),
                "SIGTERM mid-scan took {:?}",
                t.elapsed()
            );
        } else {
            inst.kill9();
        }
        eprintln!("{how}: stopped at {}", first["roots"][0]["scanned"]);
        inst.start();
        let status = inst.status();
        assert_eq!(
            status["notices"].as_array().unwrap().len(),
            0,
            "no recovery needed: {status}"
        );
        assert_eq!(
            status["entries"].as_u64(),
            Some(all.len() as u64 + 1),
            "{how}: entries after restart"
        );
        for terms in [&["file-7-"][..], &["d0299", "inner"], &["199.txt"]] {
            let expected = search_oracle(&all, &tree, terms);
            let got: BTreeSet<Vec<u8>> = inst.search0(terms).into_iter().collect();
            assert_eq!(
                expected,
                got,
                "{how}: query {terms:?}:\n{}",
                diff(&expected, &got)
            );
        }
        let v = inst.json(&["du", tree.to_str().unwrap()]);
        let (blocks, apparent) = gnu_du(&runner, &tree);
        assert_eq!(
            (v["bytes"].as_u64(), v["apparent_bytes"].as_u64()),
            (Some(blocks), Some(apparent))
        );
        assert_eq!(v["files"].as_u64(), Some(60_000));
        inst.stop();
        // Start over from an empty index for the next round.
        std::fs::remove_file(inst.db()).unwrap();
        for side in ["index.db-wal", "index.db-shm"] {
            let _ = std::fs::remove_file(inst.home.join(side));
        }
    }
}

/// `status --json` says where the memory goes, and an initial index leaves
/// no more of it behind in the name index than loading it at a restart does
/// (the vectors a scan grows are given back once it is done).
#[test]
fn status_breaks_memory_down_and_the_initial_index_leaves_no_slack() {
    use crate::util::wide_tree;
    use std::time::Duration;
    let tmp = tempfile::tempdir().unwrap();
    let tree = tmp.path().join("tree");
    // Enough entries for growth to show: 121 folders, 30,000 files.
    wide_tree(&tree, 60, 500);
    let mut inst = Instance::new(tmp.path().join("home"), &[&tree], Runner::current());
    inst.start();
    inst.wait_ready();
    let memory = |inst: &Instance| inst.status()["memory"].clone();
    // The figures are taken at most once a second.
    std::thread::sleep(Duration::from_millis(1100));
    let m = memory(&inst);
    let part = |m: &serde_json::Value, k: &str| m[k].as_u64().unwrap_or_else(|| panic!("{k}: {m}"));
    let names = part(&m, "search_snapshot_bytes");
    // 30,121 entries: parents, kinds, sizes and times alone are 15 bytes
    // each, and every name is 15 bytes or more.
    assert!(names > 30_000 * 30, "{m}");
    assert!(part(&m, "rss_anon_bytes") > 0, "{m}");
    if cfg!(all(target_os = "linux", target_env = "gnu")) {
        assert!(
            part(&m, "heap_in_use_bytes") >= names + part(&m, "watch_bytes"),
            "{m}"
        );
    }
    if crate::util::watch_backend().is_none() {
        // inotify: 121 folders watched, each a 12-byte node and its name
        // (`d0000` or `inner`, with a length byte) in the watch table.
        assert!(part(&m, "watch_bytes") >= 121 * (12 + 6), "{m}");
    }
    // The smallest it gets once the writer has gone idle after the scan.
    let mut least = names;
    for _ in 0..5 {
        std::thread::sleep(Duration::from_millis(1100));
        least = least.min(part(&memory(&inst), "search_snapshot_bytes"));
    }
    inst.stop();
    inst.start();
    inst.wait_ready();
    std::thread::sleep(Duration::from_millis(1100));
    let loaded = part(&memory(&inst), "search_snapshot_bytes");
    assert!(
        least <= loaded + loaded / 20,
        "after the initial index {least} bytes, loaded at a restart {loaded}"
    );
}

/// A large index is read ahead beside the restart's walk (a small one
/// before it): folders listed before it is read compare with their rows in
/// SQLite, the rest with what was read ahead. Forced here on a small tree
/// with slowed folders (the test hooks), changes made while the daemon was
/// down come out exact against a walk and GNU du either way.
#[test]
fn a_restart_reading_the_index_beside_its_walk_reconciles_exactly() {
    let tmp = tempfile::tempdir().unwrap();
    let tree = tmp.path().join("tree");
    for d in 0..60 {
        for f in 0..20 {
            let dir = tree.join(format!("d{d:02}/sub{}", f % 3));
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join(format!("f{f}.txt")), vec![b'a'; f * 100]).unwrap();
        }
    }
    let runner = Runner::current();
    let mut inst = Instance::new(tmp.path().join("home"), &[&tree], runner.clone());
    inst.start();
    inst.wait_ready();
    inst.stop();
    // While down: in folders early and late in the walk, files grown,
    // touched, replaced by a copy (a new inode), deleted, added; a folder
    // removed, one renamed, a file turned into a folder.
    for d in [0, 17, 33, 59] {
        let dir = tree.join(format!("d{d:02}/sub1"));
        std::fs::write(dir.join("f1.txt"), b"grown and changed").unwrap();
        let f4 = dir.join("f4.txt");
        let copy = dir.join("f4.copy");
        std::fs::copy(&f4, &copy).unwrap();
        let mtime = std::fs::metadata(&f4).unwrap().modified().unwrap();
        std::fs::File::options()
            .write(true)
            .open(&copy)
            .unwrap()
            .set_modified(mtime)
            .unwrap();
        std::fs::rename(&copy, &f4).unwrap();
        std::fs::remove_file(dir.join("f7.txt")).unwrap();
        std::fs::write(dir.join("new.txt"), b"new").unwrap();
        std::fs::remove_file(dir.join("f10.txt")).unwrap();
        std::fs::create_dir(dir.join("f10.txt")).unwrap();
        std::fs::write(dir.join("f10.txt/inside"), b"in").unwrap();
    }
    std::fs::remove_dir_all(tree.join("d05/sub2")).unwrap();
    std::fs::rename(tree.join("d40"), tree.join("d40-renamed")).unwrap();
    inst.env
        .push(("FSINDEX_TEST_READ_AHEAD_FIRST".into(), "0".into()));
    inst.env
        .push(("FSINDEX_TEST_FOLDER_PAUSE_MS".into(), "5".into()));
    inst.start();
    inst.wait_ready();
    assert!(
        inst.log().contains("the index read ahead"),
        "the index was not read beside the walk"
    );
    let all = find_oracle(&runner, &tree);
    assert_eq!(
        inst.status()["entries"].as_u64(),
        Some(all.len() as u64 + 1)
    );
    // Every path under the root holds a `d` (the folders are d00-d59).
    let got: BTreeSet<Vec<u8>> = inst.search0(&["d"]).into_iter().collect();
    let expected = search_oracle(&all, &tree, &["d"]);
    assert_eq!(expected.len(), all.len());
    assert_eq!(expected, got, "{}", diff(&expected, &got));
    du_equals_gnu_du(
        &inst,
        &runner,
        &tree,
        &["", "d00/sub1", "d33", "d40-renamed", "d05"],
    );
    // The file replaced by a copy of itself (same size and mtime, a new
    // inode) has its new inode: `info` reports it.
    let f4 = tree.join("d33/sub1/f4.txt");
    let info = inst.json(&["info", f4.to_str().unwrap()]);
    let ino = std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(&f4).unwrap());
    assert_eq!(info["inode"].as_u64(), Some(ino), "{info}");
}

/// A figure of `/proc/PID/status` in bytes (`RssAnon:`, say), read from the
/// kernel, not from the daemon's own status.
fn proc_status_bytes(pid: u32, field: &str) -> u64 {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let kib = s.lines().find_map(|l| l.strip_prefix(field)).unwrap();
    kib.trim()
        .trim_end_matches("kB")
        .trim()
        .parse::<u64>()
        .unwrap()
        * 1024
}

/// A daemon on `tree`, ready, for the trimmer's tests: under the poll
/// backend no poll comes in the measured window (a poll a second would
/// keep the trimmer waiting up to 30 s); `no_trim` turns the trimmer off
/// (the `FSINDEX_TEST_NO_TRIM` hook) for a control run.
fn started_quietly(home: std::path::PathBuf, tree: &std::path::Path, no_trim: bool) -> Instance {
    let mut inst = Instance::new(home, &[tree], Runner::current());
    inst.args
        .extend(["--poll-interval".to_owned(), "3600".to_owned()]);
    if no_trim {
        inst.env.push(("FSINDEX_TEST_NO_TRIM".into(), "1".into()));
    }
    inst.start();
    inst.wait_ready();
    inst
}

/// Memory that large answers took is given back once the queries stop: the
/// daemon's RSS a few seconds after 20 searches that each return 60,000
/// paths is what it was before them (0.2-0.5 MiB more, measured). Without
/// the trimmer (the `FSINDEX_TEST_NO_TRIM` hook) it stayed 1.7-7 MiB higher.
#[test]
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn memory_taken_by_large_answers_is_given_back_when_queries_stop() {
    use crate::util::wide_tree;
    use std::time::Duration;
    let tmp = tempfile::tempdir().unwrap();
    let tree = tmp.path().join("tree");
    wide_tree(&tree, 120, 500);
    let inst = started_quietly(tmp.path().join("home"), &tree, false);
    // Read by the test from the kernel, not from the daemon's own status:
    // the anonymous part, where answers are built (the code pages the
    // searches ran come and go on their own, see the next test).
    let pid = inst.daemon_pid().unwrap();
    let rss = || proc_status_bytes(pid, "RssAnon:");
    // The writer gives back what the scan freed when it goes idle.
    std::thread::sleep(Duration::from_secs(5));
    let idle = rss();
    for _ in 0..20 {
        let out = inst.fsctl(&["search", "--limit", "0", "-0", "file"]);
        assert_eq!(out.status.code(), Some(0));
        assert_eq!(out.stdout.iter().filter(|&&b| b == 0).count(), 60_000);
    }
    // The trimmer looks every 2 s and acts after a quiet look.
    std::thread::sleep(Duration::from_secs(6));
    let after = rss();
    assert!(
        after < idle + (3 << 19),
        "idle {idle} bytes, 6 s after 20 large answers {after}"
    );
}

/// Once quiet, the daemon gives back the code pages its start-up and scan
/// ran (they stay in the page cache): its file-backed RSS a few seconds
/// after ready is well under what it was at ready, and it answers as
/// before. With the trimmer off (the `FSINDEX_TEST_NO_TRIM` hook) the pages
/// stay.
#[test]
#[cfg(target_os = "linux")]
fn an_idle_daemon_gives_back_the_code_pages_it_ran() {
    use crate::util::wide_tree;
    use std::time::Duration;
    let tmp = tempfile::tempdir().unwrap();
    let tree = tmp.path().join("tree");
    wide_tree(&tree, 20, 50);
    for trim in [true, false] {
        let mut inst = started_quietly(tmp.path().join(format!("home-{trim}")), &tree, !trim);
        let pid = inst.daemon_pid().unwrap();
        let rss_file = || proc_status_bytes(pid, "RssFile:") >> 10;
        let at_ready = rss_file();
        // The trimmer looks every 2 s and acts after a quiet look.
        std::thread::sleep(Duration::from_secs(6));
        let quiet = rss_file();
        if trim {
            assert!(
                quiet * 2 < at_ready,
                "file-backed RSS at ready {at_ready} kB, quiet {quiet} kB"
            );
        } else {
            assert!(
                quiet * 10 >= at_ready * 9,
                "trimmer off: at ready {at_ready} kB, quiet {quiet} kB"
            );
        }
        // The code comes back as it runs: a search answers in full.
        let out = inst.fsctl(&["search", "--limit", "0", "-0", "file"]);
        assert_eq!(out.status.code(), Some(0));
        assert_eq!(out.stdout.iter().filter(|&&b| b == 0).count(), 1000);
        inst.stop();
    }
}

/// A daemon that is only polled (`status` now and then, as a panel or a
/// monitoring script does) idles as small as one left alone: the code a
/// call ran is given back once it is quiet again, and stays given back
/// (no worker of its own runs a query every few seconds and brings it
/// back). Read from the kernel: the file-backed RSS right after a call and
/// then after two of the background workers' 5-s rounds. Before, `status`
/// was no activity for the trimmer and the code stayed (9 of 9 MiB at 1M
/// entries, release build), and the content worker's look at its empty
/// queue every 5 s faulted SQLite's code back after each trim: with that
/// look put back, this test fails in its first round (14.8 MiB right after
/// the call, 8.8 MiB 11 s later).
#[test]
#[cfg(target_os = "linux")]
fn a_daemon_polled_by_status_gives_its_code_back_between_calls() {
    use crate::util::wide_tree;
    use std::time::Duration;
    let tmp = tempfile::tempdir().unwrap();
    let tree = tmp.path().join("tree");
    wide_tree(&tree, 20, 50);
    let mut inst = started_quietly(tmp.path().join("home"), &tree, false);
    let pid = inst.daemon_pid().unwrap();
    let rss_file = || proc_status_bytes(pid, "RssFile:") >> 10;
    std::thread::sleep(Duration::from_secs(6));
    for round in 0..2 {
        let v = inst.status();
        assert_eq!(v["state"], "ready");
        let called = rss_file();
        // The trimmer looks every 2 s and acts after a quiet look; the
        // workers' rounds come every 5 s.
        std::thread::sleep(Duration::from_secs(11));
        let quiet = rss_file();
        assert!(
            quiet * 2 < called,
            "round {round}: file-backed RSS right after status {called} kB, 11 s later {quiet} kB"
        );
    }
    inst.stop();
}

/// A folder of thousands of files (a Downloads folder) is read back from
/// the index as one run of ids and `lstat`ed by several threads: changes
/// made while the daemon was down, including ones that break the run
/// (files deleted from the middle, new ones at the end, a file turned into
/// a folder), come out exact against a walk and GNU du.
#[test]
fn a_wide_folder_changed_while_down_is_reconciled_exactly() {
    let tmp = tempfile::tempdir().unwrap();
    let tree = tmp.path().join("tree");
    let wide = tree.join("Downloads");
    std::fs::create_dir_all(&wide).unwrap();
    for i in 0..6000 {
        std::fs::write(wide.join(format!("file-{i:05}.pdf")), vec![b'x'; i % 7]).unwrap();
    }
    let runner = Runner::current();
    let mut inst = Instance::new(tmp.path().join("home"), &[&tree], runner.clone());
    inst.start();
    inst.stop();
    inst.start();
    assert_eq!(
        rows_written(&inst),
        0,
        "an unchanged restart writes nothing"
    );
    inst.stop();

    for i in (0..6000).step_by(3) {
        std::fs::remove_file(wide.join(format!("file-{i:05}.pdf"))).unwrap();
    }
    for i in (1..6000).step_by(301) {
        std::fs::write(
            wide.join(format!("file-{i:05}.pdf")),
            b"now longer than before",
        )
        .unwrap();
    }
    for i in 6000..7000 {
        std::fs::write(wide.join(format!("late-{i}.txt")), b"late").unwrap();
    }
    std::fs::remove_file(wide.join("file-00001.pdf")).unwrap();
    std::fs::create_dir(wide.join("file-00001.pdf")).unwrap();
    std::fs::write(wide.join("file-00001.pdf/inside"), b"inside").unwrap();

    inst.start();
    let all = find_oracle(&runner, &tree);
    assert_eq!(
        inst.status()["entries"].as_u64(),
        Some(all.len() as u64 + 1)
    );
    for terms in [&["file"][..], &["late"], &["inside"], &["pdf"]] {
        let expected = search_oracle(&all, &tree, terms);
        let got: BTreeSet<Vec<u8>> = inst.search0(terms).into_iter().collect();
        assert_eq!(expected, got, "query {terms:?}:\n{}", diff(&expected, &got));
    }
    let v = inst.json(&["du", wide.to_str().unwrap()]);
    let (blocks, apparent) = gnu_du(&runner, &wide);
    assert_eq!(
        (v["bytes"].as_u64(), v["apparent_bytes"].as_u64()),
        (Some(blocks), Some(apparent))
    );
    crate::util::verify_clean(&inst);
}

/// A daemon killed while a `--sync` waited leaves its cookie file in the
/// root (the name carries its pid). The next daemon removes such files of
/// processes that no longer run, and leaves a running one's alone (another
/// instance's sync in progress); neither is ever listed.
#[test]
fn cookie_files_of_a_killed_daemon_are_removed_at_start() {
    let tmp = tempfile::tempdir().unwrap();
    let tree = tmp.path().join("tree");
    odd_tree(&tree);
    let mut exited = std::process::Command::new("true").spawn().unwrap();
    exited.wait().unwrap();
    let dead = tree.join(format!(".fsindex-cookie-{}-3", exited.id()));
    let live = tree.join(format!(".fsindex-cookie-{}-0", std::process::id()));
    std::fs::write(&dead, b"").unwrap();
    std::fs::write(&live, b"").unwrap();
    let runner = Runner::current();
    let mut inst = Instance::new(tmp.path().join("home"), &[&tree], runner.clone());
    inst.start();
    assert!(!dead.exists(), "the dead daemon's cookie is still there");
    assert!(live.exists(), "a running process's cookie was removed");
    std::fs::remove_file(&live).unwrap();
    let got: BTreeSet<Vec<u8>> = inst.search0(&["--sync", "*"]).into_iter().collect();
    let want = find_oracle(&runner, &tree);
    assert_eq!(got, want, "{}", diff(&want, &got));
}

/// A stop never waits on a client: SIGTERM with two `fsctl watch`es and a
/// subscription whose client never reads ends every stream at once (the
/// watches print "the daemon stopped" and exit 0), the daemon exits
/// cleanly, and after the next start the index equals the disk, changes
/// made just before the stop included. (It took a minute with fsgui open,
/// and a second daemon refused to start meanwhile: "lock is held".)
#[test]
fn sigterm_ends_open_streams_and_the_index_stays_exact() {
    use std::io::BufRead;
    use std::process::Stdio;
    use std::time::{Duration, Instant};

    let OddSetup {
        tmp: _tmp,
        tree,
        mut inst,
    } = odd_instance_with(false, &[]);
    let watch = |json: bool| {
        let mut args = vec!["watch"];
        if json {
            args.push("--json");
        }
        let mut child = inst
            .fsctl_cmd(&args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Subscribed once the first line (or the human "watching" note on
        // stderr) comes.
        if json {
            let mut first = String::new();
            std::io::BufReader::new(child.stdout.as_mut().unwrap())
                .read_line(&mut first)
                .unwrap();
            assert!(first.contains("subscribed"), "{first}");
        } else {
            let mut first = String::new();
            std::io::BufReader::new(child.stderr.as_mut().unwrap())
                .read_line(&mut first)
                .unwrap();
            assert!(first.contains("watching"), "{first}");
        }
        child
    };
    let watches = [watch(true), watch(false)];
    // A subscriber that never reads what it is sent.
    let socket = inst.home.join("fsindexd.sock");
    let (hold_tx, hold_rx) = std::sync::mpsc::channel::<()>();
    let (ready_tx, ready_rx) = std::sync::mpsc::channel::<()>();
    let idle = std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let target = fsindex_client::Target::Socket(socket);
            let mut c = fsindex_client::connect(&target).await.unwrap();
            let _stream = c
                .subscribe(fsindex_proto::v1::SubscribeRequest::default())
                .await
                .unwrap();
            ready_tx.send(()).unwrap();
            let _ = hold_rx.recv();
        });
    });
    ready_rx.recv_timeout(Duration::from_secs(10)).unwrap();

    // Changes the daemon is told of just before it stops.
    for i in 0..200 {
        std::fs::write(tree.join(format!("late-{i}.txt")), b"late").unwrap();
    }
    std::fs::rename(tree.join("src"), tree.join("src-moved")).unwrap();

    let t = Instant::now();
    inst.stop(); // SIGTERM; asserts a clean exit
    let took = t.elapsed();
    eprintln!("SIGTERM with three open streams: exited in {took:?}");
    assert!(took < Duration::from_secs(10), "the stop took {took:?}");
    for mut w in watches {
        let deadline = Instant::now() + Duration::from_secs(10);
        let status = loop {
            if let Some(s) = w.try_wait().unwrap() {
                break s;
            }
            assert!(Instant::now() < deadline, "fsctl watch still runs");
            std::thread::sleep(Duration::from_millis(20));
        };
        let mut err = String::new();
        std::io::Read::read_to_string(w.stderr.as_mut().unwrap(), &mut err).unwrap();
        assert!(status.success(), "fsctl watch: {status}: {err}");
        assert!(err.contains("the daemon stopped"), "{err}");
    }
    let _ = hold_tx.send(());
    idle.join().unwrap();

    inst.start();
    crate::util::verify_clean(&inst);
}

/// Every indexed entry as `fsctl search --json` tells it: path, type and
/// size.
pub(crate) fn indexed(inst: &Instance) -> BTreeSet<(Vec<u8>, String, u64)> {
    let out = inst.fsctl(&["search", "--json", "--limit", "0", "*"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    crate::util::json_lines(&out)
        .iter()
        .map(|v| {
            (
                v["path"].as_str().unwrap().as_bytes().to_vec(),
                v["type"].as_str().unwrap().to_owned(),
                v["size"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// The same from GNU find: every entry below `tree`, its type and size
/// (`lstat`'s, as the index keeps them).
pub(crate) fn found(runner: &Runner, tree: &std::path::Path) -> BTreeSet<(Vec<u8>, String, u64)> {
    let out = runner
        .command("find")
        .arg(tree)
        .args(["-mindepth", "1", "-printf", "%p\\t%y\\t%s\\n"])
        .output()
        .unwrap();
    assert!(out.status.success());
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let mut f = l.split('\t');
            let (p, y, s) = (f.next().unwrap(), f.next().unwrap(), f.next().unwrap());
            let kind = match y {
                "d" => "dir",
                "l" => "symlink",
                _ => "file",
            };
            (p.as_bytes().to_vec(), kind.to_owned(), s.parse().unwrap())
        })
        .collect()
}

/// Issue 36: a first index answers searches as soon as its walk ends
/// (`state: ready`, `persisted: false`), before its rows are in SQLite.
/// Killed with SIGKILL in that window, with part of the rows committed,
/// the next start finishes the job: the index then equals the tree, entry
/// for entry (GNU find), and du equals GNU du. Another first index shows
/// du, asked in the window, answering exactly.
#[test]
fn killed_between_ready_and_persisted_the_next_start_finishes_the_first_index() {
    use crate::util::{eventually, wide_tree};
    use std::time::Duration;

    let tmp = tempfile::tempdir().unwrap();
    let tree = tmp.path().join("tree");
    // 60,121 entries: more than one commit of held rows (50,000 at most).
    wide_tree(&tree, 60, 1000);
    std::fs::write(tree.join("sized.bin"), vec![7u8; 123_457]).unwrap();
    std::os::unix::fs::symlink("d0001", tree.join("link")).unwrap();
    let runner = Runner::current();
    let oracle = found(&runner, &tree);
    let mut inst = Instance::new(tmp.path().join("home"), &[&tree], runner.clone());
    // Each commit of the held rows but the last is followed by this pause.
    inst.env
        .push(("FSINDEX_PERSIST_PAUSE_MS".into(), "3000".into()));
    inst.spawn();
    inst.wait_searchable();
    let status = inst.status();
    assert_eq!(status["persisted"], false, "{status}");
    assert!(status["pending_rows"].as_u64().unwrap() > 0, "{status}");
    assert_eq!(status["entries"].as_u64(), Some(oracle.len() as u64 + 1));
    // Ready means searchable: the whole tree, from the name index alone.
    let got = indexed(&inst);
    assert_eq!(got.len(), oracle.len(), "searchable at ready");
    assert_eq!(got, oracle, "searchable at ready, entry for entry");
    // Kill once part of the rows, not all, are in SQLite.
    eventually(
        Duration::from_secs(60),
        "a first commit of held rows",
        || inst.status()["rows_written"].as_u64().unwrap() > 0,
    );
    let status = inst.status();
    assert_eq!(status["persisted"], false, "killed too late: {status}");
    inst.kill9();

    // The next start sees the first index unfinished and finishes it.
    inst.env.clear();
    inst.start();
    let status = inst.status();
    assert_eq!(status["persisted"], true, "{status}");
    assert_eq!(status["notices"].as_array().unwrap().len(), 0, "{status}");
    assert_eq!(status["entries"].as_u64(), Some(oracle.len() as u64 + 1));
    let got = indexed(&inst);
    assert_eq!(got, oracle, "after the restart, entry for entry");
    let v = inst.json(&["du", tree.to_str().unwrap()]);
    let (blocks, apparent) = gnu_du(&runner, &tree);
    assert_eq!(
        (v["bytes"].as_u64(), v["apparent_bytes"].as_u64()),
        (Some(blocks), Some(apparent))
    );
    assert_eq!(v["files"].as_u64(), Some(60_002));
    inst.stop();

    // A fresh first index: du asked before the rows are persisted answers
    // exactly (from the name index and the writer's held tree; `held.rs`
    // tests that in detail).
    std::fs::remove_file(inst.db()).unwrap();
    for side in ["index.db-wal", "index.db-shm"] {
        let _ = std::fs::remove_file(inst.home.join(side));
    }
    inst.env
        .push(("FSINDEX_PERSIST_PAUSE_MS".into(), "1000".into()));
    inst.spawn();
    inst.wait_searchable();
    assert_eq!(inst.status()["persisted"], false);
    let v = inst.json(&["du", tree.to_str().unwrap()]);
    assert_eq!(
        (v["bytes"].as_u64(), v["apparent_bytes"].as_u64()),
        (Some(blocks), Some(apparent))
    );
    inst.wait_ready();
    inst.stop();
}
