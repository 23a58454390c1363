//! Exclusions and sensitive tiers: what never enters the index, what is
//! only answered by exact path, what is flagged; per-root one_filesystem.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::util::{
    Instance, Runner, diff, find_oracle, gnu_du, json_lines, lossy, sync, verify_clean, write_file,
};

/// The bytes of every SQLite file of the instance: the database, its WAL
/// and its shared-memory index.
fn db_bytes(inst: &Instance) -> Vec<u8> {
    let mut all = Vec::new();
    for suffix in ["", "-wal", "-shm"] {
        let mut p = inst.db().into_os_string();
        p.push(suffix);
        if let Ok(b) = std::fs::read(PathBuf::from(p)) {
            all.extend_from_slice(&b);
        }
    }
    assert!(
        !all.is_empty(),
        "no database files in {}",
        inst.home.display()
    );
    all
}

fn holds(hay: &[u8], needle: &str) -> bool {
    hay.windows(needle.len()).any(|w| w == needle.as_bytes())
}

/// Every indexed path under the roots (a wildcard matches every name).
fn indexed(inst: &Instance) -> BTreeSet<Vec<u8>> {
    inst.search0(&["*"]).into_iter().collect()
}

/// `find`'s view of `root` without the paths under any of `hidden`.
fn expected_without(inst: &Instance, root: &Path, hidden: &[PathBuf]) -> BTreeSet<Vec<u8>> {
    find_oracle(&inst.runner, root)
        .into_iter()
        .filter(|p| !hidden.iter().any(|h| Path::new(&lossy(p)).starts_with(h)))
        .collect()
}

fn config(inst: &Instance, text: &str) {
    std::fs::write(inst.home.join("config.toml"), text).unwrap();
}

/// What `fsctl info` says (exit code, stderr) about `path`, with the path
/// itself replaced so that two answers can be compared.
fn info_error(inst: &Instance, path: &Path) -> (Option<i32>, String) {
    let out = inst.fsctl(&["info", path.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr).replace(path.to_str().unwrap(), "PATH");
    (out.status.code(), err)
}

const BLOCKED: &[&str] = &[
    "id_rsa",
    "server.pem",
    ".ssh/known_hosts",
    "cloud/.aws/credentials",
    "deep/er/Release.KEYSTORE",
];

#[test]
fn blocked_names_never_reach_the_database_files() {
    let tmp = tempfile::tempdir().unwrap();
    let tree = tmp.path().join("tree");
    for b in BLOCKED {
        write_file(&tree, b, b"private");
    }
    write_file(&tree, ".ssh/sub/authorized_keys", b"private");
    write_file(&tree, "visible-marker-one.txt", b"public");
    let mut inst = Instance::new(tmp.path().join("home"), &[&tree], Runner::current());
    inst.start();

    let db = db_bytes(&inst);
    assert!(
        holds(&db, "visible-marker-one.txt"),
        "the control name must be in the database files"
    );
    for name in [
        "id_rsa",
        "server.pem",
        "known_hosts",
        "credentials",
        "Release.KEYSTORE",
        "authorized_keys",
    ] {
        assert!(!holds(&db, name), "{name} reached the database files");
    }
    let expected = expected_without(
        &inst,
        &tree,
        &[
            tree.join("id_rsa"),
            tree.join("server.pem"),
            tree.join(".ssh/known_hosts"),
            tree.join(".ssh/sub"),
            tree.join("cloud/.aws/credentials"),
            tree.join("deep/er/Release.KEYSTORE"),
        ],
    );
    let got = indexed(&inst);
    assert_eq!(expected, got, "{}", diff(&expected, &got));
    verify_clean(&inst);

    // Created (in watched folders and in new ones), and renamed to a
    // blocked name, while the daemon watches.
    write_file(&tree, "new-server.pem", b"private");
    write_file(&tree, ".ssh/zq-late-key", b"private");
    write_file(&tree, "later/id_ed25519", b"private");
    write_file(&tree, "later/.ssh/zq-ssh-config", b"private");
    write_file(&tree, "newhome/.aws/credentials", b"private");
    write_file(&tree, "later/deploy.key", b"private");
    write_file(&tree, "plain-before-rename.txt", b"x");
    sync(&inst);
    assert_eq!(inst.search0(&["plain-before-rename"]).len(), 1);
    std::fs::rename(
        tree.join("plain-before-rename.txt"),
        tree.join("renamed-away.pem"),
    )
    .unwrap();
    write_file(&tree, "later/visible-marker-two.txt", b"public");
    sync(&inst);
    let db = db_bytes(&inst);
    assert!(holds(&db, "visible-marker-two.txt"));
    for name in [
        "new-server.pem",
        "zq-late-key",
        "id_ed25519",
        "zq-ssh-config",
        "credentials",
        "deploy.key",
        "renamed-away",
    ] {
        assert!(!holds(&db, name), "{name} reached the database files");
    }
    assert!(inst.search0(&["plain-before-rename"]).is_empty());
    assert!(inst.search0(&["renamed-away"]).is_empty());
    verify_clean(&inst);

    // Asked for by path, a blocked file is as absent as one that does not exist.
    let missing = info_error(&inst, &tree.join("no-such-file"));
    assert_eq!(missing.0, Some(2));
    for b in ["id_rsa", ".ssh/known_hosts", ".ssh/sub/authorized_keys"] {
        assert_eq!(info_error(&inst, &tree.join(b)), missing, "{b}");
    }
    inst.stop();
}

#[test]
fn skip_files_are_never_listed_but_info_answers_them_by_exact_path() {
    let tmp = tempfile::tempdir().unwrap();
    let tree = tmp.path().join("tree");
    write_file(&tree, "app/.env", &[b'x'; 5000]);
    write_file(&tree, "app/config.toml", b"port = 1");
    write_file(&tree, "app/credentials.json", b"{}");
    write_file(&tree, "secrets/inner.txt", b"line one\nline two\n");
    write_file(&tree, "secrets/id_rsa", b"private");
    let mut inst = Instance::new(tmp.path().join("home"), &[&tree], Runner::current());
    inst.start();

    let expected = expected_without(
        &inst,
        &tree,
        &[
            tree.join("app/.env"),
            tree.join("app/credentials.json"),
            tree.join("secrets"),
        ],
    );
    let got = indexed(&inst);
    assert_eq!(expected, got, "{}", diff(&expected, &got));
    let db = db_bytes(&inst);
    assert!(!holds(&db, "credentials.json") && !holds(&db, "inner.txt"));
    assert!(inst.search0(&["env"]).is_empty());
    assert!(inst.search0(&["credentials"]).is_empty());
    let ls = inst.fsctl(&["ls", "--json", tree.join("app").to_str().unwrap()]);
    let names: Vec<String> = json_lines(&ls)
        .iter()
        .map(|v| v["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(names, ["config.toml"]);
    let tree_out = inst.fsctl(&["tree", tree.to_str().unwrap()]);
    let tree_text = String::from_utf8_lossy(&tree_out.stdout);
    assert!(
        !tree_text.contains(".env") && !tree_text.contains("secrets"),
        "{tree_text}"
    );
    // du never drops bytes: the SKIP files count in their folder's figures
    // (sizes only; their names are nowhere in the index, as checked above).
    let du = inst.json(&["du", tree.join("app").to_str().unwrap()]);
    let (bytes, apparent) = gnu_du(&inst.runner, &tree.join("app"));
    assert_eq!(du["apparent_bytes"].as_u64(), Some(apparent), "{du}");
    assert_eq!(du["bytes"].as_u64(), Some(bytes), "{du}");

    // Asked for by exact path: answered from a live lstat, flagged.
    let v = inst.json(&["info", tree.join("app/.env").to_str().unwrap()]);
    assert_eq!(v["size"], 5000, "{v}");
    assert_eq!(v["sensitive"], true, "{v}");
    assert_eq!(v["tier"], "skip", "{v}");
    // Its contents are left alone: no encoding, no line count.
    assert!(
        v.get("lines").is_none() && v.get("encoding").is_none(),
        "{v}"
    );
    let v = inst.json(&["info", tree.join("secrets/inner.txt").to_str().unwrap()]);
    assert_eq!(
        (v["tier"].as_str(), v["size"].as_u64()),
        (Some("skip"), Some(18))
    );
    let v = inst.json(&["info", tree.join("secrets").to_str().unwrap()]);
    assert_eq!(
        (v["type"].as_str(), v["tier"].as_str()),
        (Some("dir"), Some("skip"))
    );
    let human = inst.fsctl(&["info", tree.join("app/.env").to_str().unwrap()]);
    assert!(String::from_utf8_lossy(&human.stdout).contains("skip tier"));
    // BLOCK under a SKIP folder stays unanswered, and so does a SKIP name
    // that does not exist.
    let missing = info_error(&inst, &tree.join("no-such-file"));
    assert_eq!(info_error(&inst, &tree.join("secrets/id_rsa")), missing);
    assert_eq!(info_error(&inst, &tree.join("app/.env.nothere")), missing);

    // Created while watching: still unlisted.
    write_file(&tree, "app/.env.production", b"KEY=1");
    write_file(&tree, "app/visible.txt", b"ok");
    sync(&inst);
    assert_eq!(inst.search0(&["visible"]).len(), 1);
    assert!(inst.search0(&["production"]).is_empty());
    verify_clean(&inst);
    inst.stop();
}

#[test]
fn warn_files_are_found_and_flagged() {
    let tmp = tempfile::tempdir().unwrap();
    let tree = tmp.path().join("tree");
    write_file(&tree, "my_password.txt", b"hunter2");
    write_file(&tree, "docs/API-Token-notes.md", b"x");
    write_file(&tree, "docs/notes.md", b"x");
    let mut inst = Instance::new(tmp.path().join("home"), &[&tree], Runner::current());
    inst.start();

    let out = inst.fsctl(&["search", "--json", "--sort", "path", "o"]);
    let found: Vec<(String, bool)> = json_lines(&out)
        .iter()
        .map(|v| {
            (
                v["name"].as_str().unwrap().to_owned(),
                v["sensitive"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        found,
        [
            ("docs".to_owned(), false),
            ("API-Token-notes.md".to_owned(), true),
            ("notes.md".to_owned(), false),
            ("my_password.txt".to_owned(), true),
        ]
    );
    // Piped, the output stays one bare path per line.
    let out = inst.fsctl(&["search", "password"]);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("{}\n", tree.join("my_password.txt").display())
    );
    let v = inst.json(&["info", tree.join("my_password.txt").to_str().unwrap()]);
    assert_eq!(
        (v["sensitive"].as_bool(), v["tier"].as_str()),
        (Some(true), Some("warn"))
    );
    let v = inst.json(&["info", tree.join("docs/notes.md").to_str().unwrap()]);
    assert_eq!(v["sensitive"], false, "{v}");
    let ls = inst.fsctl(&["ls", "--json", tree.to_str().unwrap()]);
    assert!(
        json_lines(&ls)
            .iter()
            .any(|v| v["name"] == "my_password.txt" && v["sensitive"] == true)
    );
    inst.stop();
}

#[test]
fn user_excludes_keep_trees_out_and_verify_stays_clean() {
    let tmp = tempfile::tempdir().unwrap();
    let tree = tmp.path().join("tree");
    write_file(&tree, "proj/node_modules/pkg/index.js", b"x");
    write_file(&tree, "proj/src/node_modules", b"a file, not a folder");
    write_file(&tree, "proj/build/a.o", b"x");
    write_file(&tree, "proj/build/a.c", b"x");
    write_file(&tree, "proj/build/sub/b.o", b"x");
    write_file(&tree, "scratch/x.txt", b"x");
    write_file(&tree, "other/scratch/y.txt", b"x");
    let mut inst = Instance::new(tmp.path().join("home"), &[&tree], Runner::current());
    config(
        &inst,
        &format!(
            "excludes = [\"node_modules/\", \"build/*.o\", '{}']\n",
            tree.join("scratch").display()
        ),
    );
    inst.start();
    let hidden = [
        tree.join("proj/node_modules"),
        tree.join("proj/build/a.o"),
        tree.join("scratch"),
    ];
    let expected = expected_without(&inst, &tree, &hidden);
    let got = indexed(&inst);
    assert_eq!(expected, got, "{}", diff(&expected, &got));
    verify_clean(&inst);

    // Watcher events obey them too, and excluded folders are not watched.
    write_file(&tree, "proj/node_modules/pkg2/lib.js", b"x");
    write_file(&tree, "app2/node_modules/dep/x.js", b"x");
    write_file(&tree, "proj/build/c.o", b"x");
    write_file(&tree, "proj/build/c.c", b"x");
    sync(&inst);
    let mut hidden = hidden.to_vec();
    hidden.push(tree.join("app2/node_modules"));
    hidden.push(tree.join("proj/build/c.o"));
    let expected = expected_without(&inst, &tree, &hidden);
    let got = indexed(&inst);
    assert_eq!(expected, got, "{}", diff(&expected, &got));
    verify_clean(&inst);
    let out = inst.fsctl(&["info", tree.join("proj/node_modules").to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));

    // A restart with other rules: what they let in arrives, what they keep
    // out leaves.
    inst.stop();
    config(&inst, "excludes = [\"*.c\"]\n");
    inst.start();
    let expected = expected_without(
        &inst,
        &tree,
        &[tree.join("proj/build/a.c"), tree.join("proj/build/c.c")],
    );
    let got = indexed(&inst);
    assert_eq!(expected, got, "{}", diff(&expected, &got));
    verify_clean(&inst);
    inst.stop();
}

#[test]
fn a_bad_pattern_stops_the_daemon_with_the_reason() {
    let tmp = tempfile::tempdir().unwrap();
    let tree = tmp.path().join("tree");
    std::fs::create_dir_all(&tree).unwrap();
    let inst = Instance::new(tmp.path().join("home"), &[&tree], Runner::current());
    config(&inst, "excludes = [\"a[\"]\n");
    let out = inst.run_daemon();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("config.toml") && err.contains("excludes: bad pattern \"a[\""),
        "{err}"
    );
}

#[test]
fn the_index_folder_inside_a_root_is_not_indexed() {
    let tmp = tempfile::tempdir().unwrap();
    let tree = tmp.path().join("tree");
    write_file(&tree, "docs/a.txt", b"x");
    let home = tree.join("state/fsindex");
    let mut inst = Instance::new(home.clone(), &[&tree], Runner::current());
    inst.start();
    let expected = expected_without(&inst, &tree, std::slice::from_ref(&home));
    let got = indexed(&inst);
    assert_eq!(expected, got, "{}", diff(&expected, &got));
    assert!(got.contains(tree.join("state").as_os_str().as_encoded_bytes()));
    // Its own writes (database, log, cookies) never show up, and `--sync`
    // still works in a root that holds the instance.
    write_file(&tree, "docs/b.txt", b"x");
    sync(&inst);
    assert_eq!(inst.search0(&["b.txt"]).len(), 1);
    assert!(inst.search0(&["index.db"]).is_empty());
    verify_clean(&inst);
    inst.stop();
}

#[test]
fn trash_and_cache_are_excluded_unless_default_excludes_is_off() {
    let tmp = tempfile::tempdir().unwrap();
    let tree = tmp.path().join("tree");
    let home = tree.join("home");
    write_file(&home, ".local/share/Trash/files/deleted.txt", b"x");
    write_file(&home, ".cache/not-the-cache-dir.txt", b"x");
    write_file(&tree, "xdg-cache/pip/wheel.whl", b"x");
    write_file(&home, "Documents/kept.txt", b"x");
    let mut inst = Instance::new(tmp.path().join("fsindex"), &[&tree], Runner::current());
    inst.env = vec![
        ("HOME".into(), home.display().to_string()),
        (
            "XDG_CACHE_HOME".into(),
            tree.join("xdg-cache").display().to_string(),
        ),
        (
            "XDG_DATA_HOME".into(),
            home.join(".local/share").display().to_string(),
        ),
    ];
    inst.start();
    let expected = expected_without(
        &inst,
        &tree,
        &[home.join(".local/share/Trash"), tree.join("xdg-cache")],
    );
    let got = indexed(&inst);
    assert_eq!(expected, got, "{}", diff(&expected, &got));
    verify_clean(&inst);
    inst.stop();

    config(&inst, "default_excludes = false\n");
    inst.start();
    let expected = find_oracle(&inst.runner, &tree);
    let got = indexed(&inst);
    assert_eq!(expected, got, "{}", diff(&expected, &got));
    verify_clean(&inst);
    inst.stop();
}

/// A tmpfs mounted for the test, unmounted when dropped.
struct Mount(PathBuf);

impl Mount {
    fn tmpfs(at: &Path) -> Option<Mount> {
        std::fs::create_dir_all(at).unwrap();
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=4m", "fsindex-test"])
            .arg(at)
            .output()
            .is_ok_and(|o| o.status.success());
        ok.then(|| Mount(at.to_owned()))
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

#[test]
fn one_filesystem_per_root_overrides_the_global_setting() {
    let tmp = tempfile::tempdir().unwrap();
    let crossing = tmp.path().join("crossing");
    let staying = tmp.path().join("staying");
    write_file(&crossing, "local.txt", b"x");
    write_file(&staying, "local.txt", b"x");
    let Some(m1) = Mount::tmpfs(&crossing.join("mnt")) else {
        eprintln!("skipped: cannot mount a tmpfs here (not root, or no permission)");
        return;
    };
    let Some(m2) = Mount::tmpfs(&staying.join("mnt")) else {
        eprintln!("skipped: cannot mount a tmpfs here");
        return;
    };
    write_file(&crossing, "mnt/inner.txt", b"x");
    write_file(&crossing, "mnt/.Trash-0/files/gone.txt", b"x");
    write_file(&staying, "mnt/inner.txt", b"x");
    let mut inst = Instance::new(
        tmp.path().join("home"),
        &[&crossing, &staying],
        Runner::current(),
    );
    config(
        &inst,
        &format!(
            "cross_filesystems = false\n[root.'{}']\none_filesystem = false\n",
            crossing.display()
        ),
    );
    inst.start();
    let got = indexed(&inst);
    let mut expected = expected_without(&inst, &crossing, &[crossing.join("mnt/.Trash-0")]);
    // The mount point itself is left out where the file system is not crossed.
    expected.extend(expected_without(&inst, &staying, &[staying.join("mnt")]));
    assert_eq!(expected, got, "{}", diff(&expected, &got));
    verify_clean(&inst);

    // The watcher follows the same rule.
    write_file(&crossing, "mnt/new.txt", b"x");
    write_file(&staying, "mnt/new.txt", b"x");
    sync(&inst);
    let new = inst.search0(&["new.txt"]);
    assert_eq!(
        new,
        [crossing.join("mnt/new.txt").as_os_str().as_encoded_bytes()]
    );
    verify_clean(&inst);
    inst.stop();
    drop((m1, m2));
}
