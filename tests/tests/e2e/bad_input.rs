//! Bad input gets one clear line and exit code 2, and nothing is lost.

use std::process::Command;

use crate::util::{Instance, OddSetup, Runner, odd_instance, odd_tree};

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn malformed_arguments_and_paths_outside_roots() {
    let OddSetup {
        tmp: _tmp,
        tree,
        mut inst,
    } = odd_instance(false);

    // The user sees which part of the query is wrong.
    let o = inst.fsctl(&["search", "\"unclosed phrase"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("unclosed quote at `\"unclosed phrase`"),
        "{}",
        stderr(&o)
    );
    assert_eq!(stderr(&o).lines().count(), 1);
    let o = inst.fsctl(&["search", "  "]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("empty query"), "{}", stderr(&o));
    // clap rejects malformed flags with exit 2.
    assert_eq!(inst.fsctl(&["search"]).status.code(), Some(2));
    assert_eq!(inst.fsctl(&["du", "--top", "lots"]).status.code(), Some(2));
    assert_eq!(
        inst.fsctl(&["search", "x", "--sort", "colour"])
            .status
            .code(),
        Some(2)
    );

    // A path outside every root names the roots.
    let o = inst.fsctl(&["du", "/usr"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("/usr is not under any root")
            && stderr(&o).contains(tree.to_str().unwrap()),
        "{}",
        stderr(&o)
    );
    let o = inst.fsctl(&["scan", "/usr"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("not under any root"), "{}", stderr(&o));
    // A path under a root that does not exist.
    let o = inst.fsctl(&["du", tree.join("no/such/thing").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("is not in the index"), "{}", stderr(&o));
    // Overlapping roots are refused.
    let o = inst.fsctl(&["roots", "add", tree.join("src").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("roots may not overlap"),
        "{}",
        stderr(&o)
    );

    // A second daemon for the same instance exits with a clear message.
    let out = inst.run_daemon();
    assert_eq!(out.status.code(), Some(3));
    assert!(stderr(&out).contains("already runs"), "{}", stderr(&out));
    assert_eq!(
        inst.status()["state"],
        "ready",
        "the first daemon is unharmed"
    );

    // Daemon stopped and spawning disabled: one line saying so.
    inst.stop();
    let o = inst.fsctl(&["status"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("no fsindexd is listening"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn corrupt_index_is_moved_aside_and_rebuilt() {
    let OddSetup {
        tmp: _tmp,
        tree: _,
        mut inst,
    } = odd_instance(false);
    let entries = inst.status()["entries"].as_u64().unwrap();
    inst.stop();
    // Overwrite the middle of the database with garbage.
    let db = inst.db();
    let mut bytes = std::fs::read(&db).unwrap();
    assert!(bytes.len() > 8192);
    for b in &mut bytes[4096..8192] {
        *b = 0xA5;
    }
    bytes[..16].copy_from_slice(b"not a database!!");
    std::fs::write(&db, &bytes).unwrap();

    inst.start();
    let status = inst.status();
    let notices = status["notices"].as_array().unwrap();
    assert!(
        notices
            .iter()
            .any(|n| n.as_str().unwrap().contains("moved it to")),
        "{status}"
    );
    assert_eq!(
        status["entries"].as_u64(),
        Some(entries),
        "the index was rebuilt from the tree"
    );
    let aside: Vec<_> = std::fs::read_dir(&inst.home)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().contains("corrupt"))
        .collect();
    assert!(!aside.is_empty(), "the corrupt file is kept for inspection");
    assert_eq!(inst.search0(&["w2.pdf"]).len(), 2);
}

#[test]
fn newer_schema_is_refused_and_left_untouched() {
    let tmp = tempfile::tempdir().unwrap();
    let tree = tmp.path().join("tree");
    odd_tree(&tree);
    let home = tmp.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let db = home.join("index.db");
    {
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.execute_batch(
            "CREATE TABLE schema_version (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL);
             INSERT INTO schema_version VALUES (999, 0);
             CREATE TABLE future (x);",
        )
        .unwrap();
    }
    let before = std::fs::read(&db).unwrap();
    let inst = Instance::new(home.clone(), &[&tree], Runner::current());
    let out = inst.run_daemon();
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains("newer fsindex (schema 999") && err.contains("refusing"),
        "{err}"
    );
    assert_eq!(
        std::fs::read(&db).unwrap(),
        before,
        "the newer database is not modified"
    );

    // fsctl, spawning the daemon itself, reports the daemon's reason.
    let o = Command::new(inst.runner.bin("fsctl"))
        .arg("status")
        .env("FSINDEX_HOME", &home)
        .env_remove("FSINDEX_NO_SPAWN")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("schema 999"), "{}", stderr(&o));
    assert_eq!(std::fs::read(&db).unwrap(), before);
}

#[test]
fn fsctl_starts_the_daemon_when_none_listens() {
    let tmp = tempfile::tempdir().unwrap();
    let tree = tmp.path().join("tree");
    odd_tree(&tree);
    let home = tmp.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(
        home.join("config.toml"),
        format!("roots = [{:?}]\n", tree.to_str().unwrap()),
    )
    .unwrap();
    let mut inst = Instance::new(home.clone(), &[], Runner::current());
    let o = Command::new(inst.runner.bin("fsctl"))
        .args(["scan", "--wait", "--json"])
        .env("FSINDEX_HOME", &home)
        .env_remove("FSINDEX_NO_SPAWN")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    inst.wait_ready();
    let status = inst.status();
    assert_eq!(
        status["roots"][0]["path"].as_str(),
        Some(tree.to_str().unwrap())
    );
    assert_eq!(inst.search0(&["w2.pdf"]).len(), 2);
    // Socket and its folder are private.
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(home.join("fsindexd.sock"))
        .unwrap()
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(mode, 0o600);
    let db_mode = std::fs::metadata(home.join("index.db"))
        .unwrap()
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(db_mode, 0o600);
    // Stop the spawned daemon by pid.
    let pid = status["pid"].as_u64().unwrap();
    assert!(
        Command::new("kill")
            .arg(pid.to_string())
            .status()
            .unwrap()
            .success()
    );
}

#[test]
fn a_root_that_vanishes_is_reported_not_fatal() {
    let OddSetup {
        tmp,
        tree,
        mut inst,
    } = odd_instance(false);
    inst.stop();
    std::fs::rename(&tree, tmp.path().join("moved-away")).unwrap();
    // The configured root no longer exists: the daemon says so and exits 1.
    let out = inst.run_daemon();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("cannot use") && stderr(&out).contains(tree.to_str().unwrap()),
        "{}",
        stderr(&out)
    );
}

/// `fsctl ... | head -1`: when the reader of fsctl's output goes away,
/// every command ends quietly with 0, as `rg` does, instead of a panic and
/// its backtrace on the terminal.
#[test]
fn a_closed_stdout_ends_every_command_quietly() {
    use std::process::Stdio;
    let OddSetup {
        tmp: _tmp,
        tree,
        inst,
    } = odd_instance(false);
    let root = tree.to_str().unwrap();
    let commands: &[&[&str]] = &[
        &["status"],
        &["status", "--json"],
        &["roots", "list"],
        &["search", "w2"],
        &["search", "w2", "--json"],
        &["du", root],
        &["du", root, "--json"],
        &["info", root],
        &["ls", root],
        &["tree", root],
        &["map", root],
        &["dupes", root],
        // No daemon needed; clap_complete panicked on the closed pipe.
        &["completions", "bash"],
        &["man"],
    ];
    for args in commands {
        let full = inst.fsctl(args);
        assert!(!full.stdout.is_empty(), "fsctl {args:?} prints something");
        let mut child = inst
            .fsctl_cmd(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // The reader is gone before fsctl has connected, let alone written.
        drop(child.stdout.take());
        let o = child.wait_with_output().unwrap();
        assert_eq!(o.status.code(), Some(0), "fsctl {args:?}: {}", stderr(&o));
        assert_eq!(stderr(&o), "", "fsctl {args:?}");
    }
}

#[test]
fn hostile_queries_are_refused_and_the_daemon_lives() {
    let OddSetup {
        tmp: _tmp,
        tree: _tree,
        inst,
    } = odd_instance(false);
    let pid = inst.daemon_pid().expect("daemon running");

    // 10,000 negations once overflowed the daemon's stack and killed it for
    // every user: now they are counted (an even number cancels out).
    for bangs in [10_000, 10_001] {
        let q = format!("{}a", "!".repeat(bangs));
        let o = inst.fsctl(&["search", &q, "--limit", "1"]);
        assert!(
            matches!(o.status.code(), Some(0 | 1)),
            "{bangs} negations: {}",
            stderr(&o)
        );
    }
    // Past a limit: exit 2 and one line naming the limit.
    let long = "a".repeat(20_000);
    let terms = vec!["x"; 65].join(" ");
    let nested = format!("regex:{}a{}", "(".repeat(2000), ")".repeat(2000));
    let wild = "*a".repeat(40);
    for (q, says) in [
        (long.as_str(), "at most 16384"),
        (terms.as_str(), "too many terms (65); at most 64"),
        (nested.as_str(), "bad regex"),
        (wild.as_str(), "at most 32"),
        ("regex:a{1000}{1000}", "bad regex"),
    ] {
        let o = inst.fsctl(&["search", q]);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(stderr(&o).contains(says), "{says}: {}", stderr(&o));
        assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
    }
    let status = inst.status();
    assert_eq!(status["pid"], pid, "the same daemon still answers");
    assert_eq!(status["state"], "ready");
}
