//! The user waiting comes first: a scan a client waits on runs at the
//! daemon's own CPU and I/O priority, every other scan in the background.
//!
//! The oracle is the kernel's view of the walk's threads (named
//! `fsindex-walk`): their nice value in `/proc/PID/task/TID/stat` and
//! their I/O class as `ionice -p TID` reports it. Folders are slowed down
//! by a test hook (`FSINDEX_TEST_FOLDER_PAUSE_MS`) so that a scan is seen
//! under way; nothing is timed.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::util::*;

/// One look at the daemon: what `status` says of the root's scan, and the
/// walk threads' nice values and I/O classes, read before and after it
/// (kept only when both reads agree).
#[derive(Debug)]
struct Look {
    priority: String,
    walkers: Vec<(i64, String)>,
}

fn nice_of(stat: &str) -> i64 {
    // Fields after the parenthesised name: state is field 3, nice 19.
    let rest = &stat[stat.rfind(')').unwrap() + 2..];
    rest.split_whitespace().nth(16).unwrap().parse().unwrap()
}

fn walkers(pid: u32) -> Vec<(i64, String)> {
    let mut out = Vec::new();
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return out;
    };
    for t in tasks.flatten() {
        let dir = t.path();
        let comm = std::fs::read_to_string(dir.join("comm")).unwrap_or_default();
        if comm.trim() != "fsindex-walk" {
            continue;
        }
        let Ok(stat) = std::fs::read_to_string(dir.join("stat")) else {
            continue;
        };
        let tid = t.file_name().to_string_lossy().into_owned();
        let io = Command::new("ionice").args(["-p", &tid]).output().unwrap();
        if !io.status.success() {
            continue; // ended meanwhile
        }
        let class = String::from_utf8_lossy(&io.stdout)
            .split(':')
            .next()
            .unwrap()
            .trim()
            .to_owned();
        out.push((nice_of(&stat), class));
    }
    out.sort();
    out
}

fn look(inst: &Instance, pid: u32) -> Option<Look> {
    let before = walkers(pid);
    let status = inst.status();
    let after = walkers(pid);
    let priority = status["roots"][0]["priority"]
        .as_str()
        .unwrap_or("")
        .to_owned();
    (before == after).then_some(Look {
        priority,
        walkers: after,
    })
}

/// Looks until `want` holds of a look (or `child` ends, or 60 s pass).
fn look_until(
    inst: &Instance,
    pid: u32,
    mut child: Option<&mut Child>,
    want: impl Fn(&Look) -> bool,
) -> Result<Look, Vec<Look>> {
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut seen = Vec::new();
    while Instant::now() < deadline {
        if let Some(l) = look(inst, pid) {
            if want(&l) {
                return Ok(l);
            }
            seen.push(l);
        }
        if let Some(c) = child.as_deref_mut()
            && c.try_wait().unwrap().is_some()
        {
            break;
        }
        std::thread::sleep(Duration::from_millis(30));
    }
    Err(seen.split_off(seen.len().saturating_sub(20)))
}

fn tree(root: &Path) {
    for d in 0..200 {
        let dir = root.join(format!("d{d:03}"));
        std::fs::create_dir_all(&dir).unwrap();
        for f in 0..3 {
            std::fs::write(dir.join(format!("f{f}.txt")), format!("{d} {f}")).unwrap();
        }
    }
}

/// What `tree` wrote, relative to the root, sorted.
fn written() -> Vec<Vec<u8>> {
    let mut all: Vec<Vec<u8>> = (0..200)
        .flat_map(|d| {
            let dir = format!("d{d:03}");
            (0..3)
                .map(move |f| format!("{dir}/f{f}.txt").into_bytes())
                .chain([format!("d{d:03}").into_bytes()])
        })
        .collect();
    all.sort();
    all
}

/// Every path the index lists under `root`, relative and sorted, repeats
/// kept (a second tree at the root's path would list each path twice).
fn listed(inst: &Instance, root: &Path) -> Vec<Vec<u8>> {
    // No `--sync`: nothing changes on disk here, and on the poll backend
    // a sync waits for a poll of the whole slowed-down tree.
    let out = inst.fsctl(&["search", "-0", "--limit", "0", "*"]);
    assert!(out.status.success(), "{}", text(&out));
    let mut prefix = root.as_os_str().as_encoded_bytes().to_vec();
    prefix.push(b'/');
    let mut all: Vec<Vec<u8>> = out
        .stdout
        .split(|&b| b == 0)
        .filter(|p| !p.is_empty() && *p != root.as_os_str().as_encoded_bytes())
        .map(|p| p.strip_prefix(prefix.as_slice()).unwrap_or(p).to_vec())
        .collect();
    all.sort();
    all
}

fn fsctl_child(inst: &Instance, args: &[&str]) -> Child {
    inst.fsctl_cmd(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

#[test]
fn a_scan_a_client_waits_on_runs_at_normal_priority_and_others_in_the_background() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("tree");
    tree(&root);
    let mut inst = Instance::new(tmp.path().join("home"), &[&root], Runner::current());
    // 200 folders at 25 ms each, on as many walk threads as cores.
    inst.env
        .push(("FSINDEX_TEST_FOLDER_PAUSE_MS".into(), "25".into()));
    inst.spawn();
    inst.wait_listening();
    let pid = inst.daemon_pid().unwrap();
    let own_nice = nice_of(&std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap());
    let background = |l: &Look| {
        l.priority == "background"
            && !l.walkers.is_empty()
            && l.walkers.iter().all(|(n, io)| *n == 19 && io == "idle")
    };
    let normal = |l: &Look| {
        l.priority == "normal: a client is waiting"
            && !l.walkers.is_empty()
            && l.walkers
                .iter()
                .all(|(n, io)| *n == own_nice && io != "idle")
    };

    // The first index, with nobody waiting: in the background.
    let seen = look_until(&inst, pid, None, background);
    assert!(
        seen.is_ok(),
        "the first index was never seen in the background (nice 19, idle I/O): {seen:?}"
    );

    // A client starts waiting on it: the scan goes on at normal priority.
    let root_s = root.to_str().unwrap();
    let mut waiter = fsctl_child(&inst, &["scan", "--wait", root_s]);
    let seen = look_until(&inst, pid, Some(&mut waiter), normal);
    assert!(
        seen.is_ok(),
        "`fsctl scan --wait` never saw its scan at normal priority (nice {own_nice}, not idle I/O): {seen:?}"
    );
    let out = waiter.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", text(&out));
    inst.wait_ready();

    // Nothing waits now: a rescan is background work again.
    let out = inst.fsctl(&["scan", root_s]);
    assert!(out.status.success(), "{}", text(&out));
    let seen = look_until(&inst, pid, None, background);
    assert!(
        seen.is_ok(),
        "a rescan nobody waits on was never seen in the background: {seen:?}"
    );

    // `fsctl status --wait` (what fsgui does on its first start) is a
    // client waiting too, and it answers once every root is ready.
    let mut waiter = fsctl_child(&inst, &["status", "--wait", "--json"]);
    let seen = look_until(&inst, pid, Some(&mut waiter), normal);
    assert!(
        seen.is_ok(),
        "`fsctl status --wait` never saw the scan at normal priority: {seen:?}"
    );
    let out = waiter.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["state"], "ready", "{v}");
    assert!(v["roots"][0]["priority"].is_null(), "no scan runs: {v}");

    // A scan that stopped for the waiting client and started again lost
    // nothing: the index equals the disk.
    verify_clean(&inst);
    assert_eq!(
        listed(&inst, &root),
        written(),
        "the index holds what the test wrote, each once"
    );
    inst.stop();
}

#[test]
fn status_wait_gives_up_after_its_timeout_and_says_so() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("tree");
    tree(&root);
    let mut inst = Instance::new(tmp.path().join("home"), &[&root], Runner::current());
    inst.env
        .push(("FSINDEX_TEST_FOLDER_PAUSE_MS".into(), "200".into()));
    inst.spawn();
    inst.wait_listening();
    let out = inst.fsctl(&["status", "--wait", "--timeout", "0.5"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not ready after"), "{err}");
    inst.stop();
}

/// A first scan killed halfway through its walk: its rows were held back
/// from SQLite (issue 36: the name index gets them first, SQLite after the
/// walk), so the next start walks again, and the index holds each path
/// once. (Killed after the walk, with part of the rows written, the next
/// start goes on from them: `restart::killed_between_ready_and_persisted_*`.)
#[test]
fn a_first_scan_killed_halfway_leaves_no_second_tree() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("tree");
    // Enough entries for more than one batch (8,192 rows) before the
    // walk's end.
    let mut want = Vec::new();
    for d in 0..60 {
        let dir = format!("d{d:02}");
        std::fs::create_dir_all(root.join(&dir)).unwrap();
        want.push(dir.clone().into_bytes());
        for f in 0..250 {
            let rel = format!("{dir}/f{f}");
            std::fs::write(root.join(&rel), b"").unwrap();
            want.push(rel.into_bytes());
        }
    }
    want.sort();
    let mut inst = Instance::new(tmp.path().join("home"), &[&root], Runner::current());
    inst.env
        .push(("FSINDEX_TEST_FOLDER_PAUSE_MS".into(), "50".into()));
    inst.spawn();
    inst.wait_listening();
    // Once the first scan has walked more than a batch (the root's scan
    // not recorded yet), the daemon is killed.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let v = inst.status();
        assert_eq!(
            v["state"], "scanning",
            "killed too late to test anything: {v}"
        );
        if v["roots"][0]["scanned"].as_u64().unwrap_or(0) > 8_192 {
            break;
        }
        assert!(Instant::now() < deadline, "the scan never wrote: {v}");
        std::thread::sleep(Duration::from_millis(10));
    }
    inst.kill9();
    inst.env.clear();
    inst.start();
    assert_eq!(
        listed(&inst, &root),
        want,
        "after the restart the index holds what the test wrote, each path once"
    );
    verify_clean(&inst);
    inst.stop();
}
