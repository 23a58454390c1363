//! Snapshots of the command-line contract: the help of `fsctl`, of every
//! subcommand (nested ones too) and of `fsindexd`, and the shape of every
//! `--json` output of `fsctl` against a real daemon on a small fixed tree.
//! A change to any of them is a visible diff in review, not a surprise to a
//! script that parses them.
//!
//! The snapshots are files under `tests/snapshots/` (`help/` and `json/`).
//! After a deliberate change, rewrite them and review the diff:
//! `SNAPSHOTS=overwrite cargo nextest run -p fsindex-tests -E 'test(/snapshots::/)'`.
//!
//! Help is wrapped at a fixed width (`COLUMNS`, read by clap) and rendered
//! with an empty environment, so that neither the terminal nor a variable
//! such as `FSINDEX_SOCKET` (shown by clap as `[env: ...=value]`) changes
//! it. In the JSON, paths under the test's temp dir start with `[TMP]` and
//! the binaries' folder is `[BIN]`; values that vary from run to run or
//! machine to machine (times other than the files' fixed mtimes,
//! durations, pids, versions, memory, allocated blocks and folder sizes,
//! which depend on the file system, inode numbers, owners, counters the
//! daemon's own `--sync` cookies move) are replaced by their JSON type, as
//! `"<number>"`, and so is a nanosecond time inside a message: the key and
//! its type stay in the contract, the value does not. Where timing decides
//! what is printed (a root whose scan has just started, the folders'
//! `modified` events around a change), the test keeps only what is
//! deterministic and says why.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, SystemTime};

use serde_json::Value;

use crate::util::{self, Instance, Runner, Watch, bin_dir, json_lines, text, write_at};

/// Where the snapshot files live: `tests/snapshots/`.
fn snapshot_dir(kind: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("snapshots")
        .join(kind)
}

/// True when the run rewrites snapshots instead of checking them.
fn overwriting() -> bool {
    std::env::var("SNAPSHOTS").is_ok_and(|v| v == "overwrite")
}

/// Compares `actual` with the snapshot file `name` under `kind`, through
/// snapbox (so `SNAPSHOTS=overwrite` rewrites it), and returns the file
/// name for the stale-file check.
fn check(kind: &str, name: &str, actual: String) -> String {
    let path = snapshot_dir(kind).join(name);
    let expected = snapbox::Data::read_from(&path, Some(snapbox::data::DataFormat::Text));
    snapbox::assert_data_eq!(snapbox::Data::text(actual), expected);
    name.to_owned()
}

/// Fails on snapshot files that no command produced any more (a removed
/// subcommand or output), or deletes them when overwriting.
fn no_stale_files(kind: &str, produced: &BTreeSet<String>) {
    let dir = snapshot_dir(kind);
    let mut stale = Vec::new();
    for e in std::fs::read_dir(&dir).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().into_owned();
        if !produced.contains(&name) {
            if overwriting() {
                std::fs::remove_file(dir.join(&name)).unwrap();
            } else {
                stale.push(name);
            }
        }
    }
    assert!(
        stale.is_empty(),
        "snapshots in {} that nothing produces any more (SNAPSHOTS=overwrite removes them): {stale:?}",
        dir.display()
    );
}

/// `program args... --help` with an empty environment at 100 columns.
fn help(program: &str, args: &[&str]) -> String {
    let out = Command::new(bin_dir().join(program))
        .args(args)
        .arg("--help")
        .env_clear()
        .env("COLUMNS", "100")
        .env("LINES", "50")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{program} {args:?} --help: {}",
        text(&out)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The subcommands a help text lists under `Commands:` (not `help`).
fn subcommands(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|l| *l != "Commands:")
        .skip(1)
        .take_while(|l| !l.is_empty())
        // A name sits at two spaces; wrapped descriptions are deeper.
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_owned)
        .collect()
}

#[test]
fn help_texts_match_their_snapshots() {
    let mut produced = BTreeSet::new();
    produced.insert(check("help", "fsindexd.txt", help("fsindexd", &[])));
    // Every subcommand, found from its parent's help, depth first.
    let mut todo: Vec<Vec<String>> = vec![Vec::new()];
    while let Some(path) = todo.pop() {
        let args: Vec<&str> = path.iter().map(String::as_str).collect();
        let text = help("fsctl", &args);
        let name = std::iter::once("fsctl")
            .chain(args.iter().copied())
            .collect::<Vec<_>>()
            .join("-");
        produced.insert(check("help", &format!("{name}.txt"), text.clone()));
        for sub in subcommands(&text) {
            let mut p = path.clone();
            p.push(sub);
            todo.push(p);
        }
    }
    assert!(
        produced.contains("fsctl-roots-add.txt") && produced.contains("fsctl-search.txt"),
        "subcommands not found in the help: {produced:?}"
    );
    no_stale_files("help", &produced);
}

/// Keys whose values vary between runs or machines: shown by type only.
const VOLATILE: &[&str] = &[
    // Times and durations (`mtime`: see `normalize`).
    "atime",
    "ctime",
    "measured_at",
    "scanned_at",
    "uptime_secs",
    "elapsed_ms",
    "secs_ago",
    "last_event_ms",
    "cpu_percent",
    "cpu_time_ms",
    // Whether the media worker is sweeping at that moment.
    "busy",
    // fsctl organise history: when a plan was applied.
    "started",
    "finished",
    // The process and the machine.
    "pid",
    "version",
    "rss_bytes",
    "rss_anon_bytes",
    "rss_file_bytes",
    "search_snapshot_bytes",
    "watch_bytes",
    "sqlite_bytes",
    "heap_in_use_bytes",
    "heap_free_bytes",
    "heap_free_resident_bytes",
    "db_bytes",
    "os_limit",
    "uid",
    "gid",
    "inode",
    // Allocated blocks, and totals that include folder sizes: both depend
    // on the file system.
    "allocated",
    "bytes",
    "apparent_bytes",
    "reclaimable_allocated_bytes",
    // Counters that the daemon's own cookie files (`--sync`) move.
    "events",
    "rows_written",
];

fn type_of(v: &Value) -> Value {
    Value::String(
        match v {
            Value::Null => "<null>",
            Value::Bool(_) => "<bool>",
            Value::Number(_) => "<number>",
            Value::String(_) => "<string>",
            Value::Array(_) => "<array>",
            Value::Object(_) => "<object>",
        }
        .to_owned(),
    )
}

/// `v` with volatile values replaced by their type, the temp dir by `[TMP]`
/// and the folder of the binaries by `[BIN]`.
fn normalize(v: &Value, tmp: &str) -> Value {
    match v {
        Value::String(s) => {
            let bins = bin_dir();
            let mut s = s.replace(tmp, "[TMP]");
            for b in [std::fs::canonicalize(&bins).unwrap(), bins] {
                s = s.replace(b.to_str().unwrap(), "[BIN]");
            }
            Value::String(redact_timestamps(&s))
        }
        Value::Array(a) => Value::Array(a.iter().map(|x| normalize(x, tmp)).collect()),
        Value::Object(o) => {
            let kind = o.get("type").and_then(Value::as_str);
            Value::Object(
                o.iter()
                    .map(|(k, x)| {
                        let volatile = match k.as_str() {
                            // The test sets the files' mtimes (so their RFC 3339
                            // form is pinned); folders' and symlinks' move as
                            // the tree is built and the daemon's cookies come
                            // and go.
                            "mtime" => kind != Some("file"),
                            // A folder's own size is the file system's business.
                            "size" => kind == Some("dir"),
                            k => VOLATILE.contains(&k),
                        };
                        let x = if volatile {
                            type_of(x)
                        } else {
                            normalize(x, tmp)
                        };
                        (k.clone(), x)
                    })
                    .collect(),
            )
        }
        other => other.clone(),
    }
}

/// `s` with every run of ten digits or more (a time in seconds or
/// nanoseconds inside a message, such as verify's `mtime A -> B`) shown as
/// `<number>`.
fn redact_timestamps(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut digits = String::new();
    let flush = |digits: &mut String, out: &mut String| {
        if digits.len() >= 10 {
            out.push_str("<number>");
        } else {
            out.push_str(digits);
        }
        digits.clear();
    };
    for c in s.chars() {
        if c.is_ascii_digit() {
            digits.push(c);
        } else {
            flush(&mut digits, &mut out);
            out.push(c);
        }
    }
    flush(&mut digits, &mut out);
    out
}

/// The snapshot text of a command's JSON: its one object, or an array of
/// its lines, normalized and pretty-printed.
fn shape(values: Vec<Value>, one: bool, tmp: &str) -> String {
    let v = if one {
        assert_eq!(values.len(), 1, "one object expected: {values:?}");
        normalize(&values[0], tmp)
    } else {
        Value::Array(values.iter().map(|v| normalize(v, tmp)).collect())
    };
    serde_json::to_string_pretty(&v).unwrap() + "\n"
}

/// A small tree with fixed contents, mtimes and modes: text, a duplicate
/// pair, a symlink, an empty folder.
fn fixed_tree(root: &Path) {
    let at =
        |days: u64| SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000 + days * 86_400);
    write_at(
        root,
        "docs/report-2025.txt",
        b"quarterly report\ntotal due\n",
        at(1),
    );
    write_at(root, "docs/notes.md", b"# Notes\n", at(2));
    write_at(root, "photos/beach.jpg", &[7u8; 6000], at(3));
    write_at(root, "photos/beach copy.jpg", &[7u8; 6000], at(4));
    write_at(root, "src/main.rs", b"fn main() {}\n", at(5));
    std::fs::create_dir_all(root.join("empty")).unwrap();
    std::os::unix::fs::symlink("docs/report-2025.txt", root.join("report-link")).unwrap();
    let out = Command::new("chmod")
        .args(["-R", "u=rwX,go=rX"])
        .arg(root)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
}

/// Runs fsctl, checks its exit code and returns the JSON it printed.
fn out(inst: &Instance, args: &[&str], code: i32) -> Vec<Value> {
    let out = inst.fsctl(args);
    assert_eq!(
        out.status.code(),
        Some(code),
        "fsctl {args:?}: {}",
        text(&out)
    );
    json_lines(&out)
}

#[test]
fn json_shapes_match_their_snapshots() {
    // The shapes are pinned for the default watcher (inotify): status names
    // the backend and how much of each root is polled.
    if util::watch_backend().is_some_and(|b| b != "inotify") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let tree = tmp.path().join("tree");
    fixed_tree(&tree);
    let mut inst = Instance::new(tmp.path().join("home"), &[&tree], Runner::current());
    inst.start();
    let tmp_s = tmp.path().to_str().unwrap().to_owned();
    let t = |rel: &str| tree.join(rel).to_str().unwrap().to_owned();
    let root = tree.to_str().unwrap();
    let mut produced = BTreeSet::new();
    let mut snap = |name: &str, values: Vec<Value>, one: bool| {
        produced.insert(check(
            "json",
            &format!("{name}.json"),
            shape(values, one, &tmp_s),
        ));
    };

    // One object each.
    snap("status", out(&inst, &["status", "--json"], 0), true);
    let count = out(&inst, &["search", "--sync", "--count", "--json", "jpg"], 0);
    snap("search-count", count, true);
    let file = t("docs/report-2025.txt");
    snap("info-file", out(&inst, &["info", "--json", &file], 0), true);
    snap(
        "info-dir",
        out(&inst, &["info", "--json", &t("docs")], 0),
        true,
    );
    snap(
        "info-symlink",
        out(&inst, &["info", "--json", &t("report-link")], 0),
        true,
    );
    snap("cat", out(&inst, &["cat", "--json", &file], 0), true);
    snap("du", out(&inst, &["du", "--json", root], 0), true);
    snap("tree", out(&inst, &["tree", "--json", root], 0), true);
    snap("map", out(&inst, &["map", "--json", root], 0), true);
    snap("scan", out(&inst, &["scan", "--wait", "--json"], 0), true);
    // One object per line.
    snap(
        "roots-list",
        out(&inst, &["roots", "list", "--json"], 0),
        false,
    );
    let found = out(&inst, &["search", "--sort", "path", "--json", "o"], 0);
    snap("search", found, false);
    snap("ls", out(&inst, &["ls", "--json", root], 0), false);
    snap("dupes", out(&inst, &["dupes", "--json", root], 0), false);
    snap("verify-clean", out(&inst, &["verify", "--json"], 0), false);

    // Roots added and removed: the roots that result, one per line.
    let other = tmp.path().join("other");
    std::fs::create_dir_all(&other).unwrap();
    let other = other.to_str().unwrap();
    let mut added = out(&inst, &["roots", "add", "--json", other], 0);
    // The new root's scan has just started: its progress is a race.
    for r in added.iter_mut().filter(|r| r["path"] == other) {
        for k in ["state", "entries", "scanned", "watch"] {
            r[k] = type_of(&r[k]);
        }
        // A string while the scan runs, null once it is done.
        r["priority"] = Value::String("<string or null>".into());
    }
    snap("roots-add", added, false);
    snap(
        "roots-remove",
        out(&inst, &["roots", "remove", "--json", other], 0),
        false,
    );

    // watch: the `subscribed` event, then one event of each kind.
    let mut watch = Watch::subscribe(inst.fsctl_cmd(&["watch", "--json", root]));
    let (new, moved) = (t("docs/new.txt"), t("docs/moved.txt"));
    std::fs::write(&new, b"new").unwrap();
    util::sync(&inst);
    std::fs::write(&new, b"newer").unwrap();
    util::sync(&inst);
    std::fs::rename(&new, &moved).unwrap();
    util::sync(&inst);
    std::fs::remove_file(&moved).unwrap();
    watch.until(Duration::from_secs(10), "the deletion", |e| {
        e["kind"] == "deleted" && e["path"] == moved.as_str()
    });
    // One event of each kind, for its shape: the folders' own `modified`
    // events (the daemon's `--sync` cookies touch the root too) come in an
    // order and number that depend on timing.
    let events = ["subscribed", "created", "modified", "renamed", "deleted"]
        .iter()
        .map(|kind| {
            watch
                .seen
                .iter()
                .find(|e| e["kind"] == *kind && e["type"] != "dir")
                .unwrap_or_else(|| panic!("no {kind} event in {:#?}", watch.seen))
                .clone()
        })
        .collect();
    snap("watch", events, false);
    drop(watch);

    // projects: one made after the rest, so the shapes above stay as they were.
    write_at(
        &tree,
        "proj/Cargo.toml",
        b"[package]\nname = \"proj\"\n",
        SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000),
    );
    util::sync(&inst);
    snap(
        "projects",
        out(&inst, &["projects", "--json", root], 0),
        false,
    );
    snap(
        "manifest",
        out(&inst, &["manifest", "--json", root], 0),
        true,
    );
    inst.stop();

    // verify with differences: a daemon that does not watch, and a tree
    // changed behind its back.
    inst.args = vec!["--no-watch".into()];
    inst.start();
    std::fs::write(tree.join("docs/added.txt"), b"added").unwrap();
    std::fs::remove_file(tree.join("src/main.rs")).unwrap();
    let docs = t("docs");
    snap(
        "verify-differences",
        out(&inst, &["verify", "--json", &docs], 1),
        false,
    );
    let src = t("src");
    snap(
        "verify-fix",
        out(&inst, &["verify", "--fix", "--json", &src], 1),
        false,
    );

    // organise: check, apply, history and undo of a one-move plan.
    let org = tmp.path().join("org");
    std::fs::create_dir_all(&org).unwrap();
    write_at(
        &org,
        "a.txt",
        b"a",
        SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000),
    );
    let plan = org.join("plan.json");
    std::fs::write(
        &plan,
        serde_json::to_vec(&serde_json::json!({
            "base": org.to_str().unwrap(),
            "moves": [{"from": "a.txt", "to": "sorted/a.txt"}]
        }))
        .unwrap(),
    )
    .unwrap();
    let plan = plan.to_str().unwrap();
    snap(
        "organise-check",
        out(&inst, &["organise", "check", "--json", plan], 0),
        true,
    );
    snap(
        "organise-apply",
        out(&inst, &["organise", "apply", "--yes", "--json", plan], 0),
        true,
    );
    snap(
        "organise-history",
        out(&inst, &["organise", "history", "--json"], 0),
        false,
    );
    snap(
        "organise-undo",
        out(&inst, &["organise", "undo", "--yes", "--json"], 0),
        true,
    );

    // service: under FSINDEX_SERVICE_ROOT, which writes unit files there
    // and never asks the real service manager.
    let service = |action: &str| {
        let o = Command::new(bin_dir().join("fsctl"))
            .args(["service", action, "--json"])
            .env("HOME", tmp.path().join("user"))
            .env("XDG_CONFIG_HOME", tmp.path().join("user/.config"))
            .env("FSINDEX_HOME", &inst.home)
            .env("FSINDEX_SERVICE_ROOT", tmp.path().join("service-root"))
            .env("FSINDEX_NO_SPAWN", "1")
            .env_remove("FSINDEX_SOCKET")
            .output()
            .unwrap();
        assert!(o.status.success(), "fsctl service {action}: {}", text(&o));
        json_lines(&o)
    };
    snap("service-status-absent", service("status"), true);
    snap("service-install", service("install"), true);
    snap("service-status-installed", service("status"), true);
    snap("service-uninstall", service("uninstall"), true);
    no_stale_files("json", &produced);
}
