//! `fsctl organise` and the MCP write tools, judged by the file system:
//! GNU `find` lists every entry with its type, mode and mtime before and
//! after apply and after undo, and each file's bytes are read back and
//! compared with what the test wrote. Plans carry hostile names (not
//! UTF-8, a newline, 250 bytes), every kind of problem, a destination on
//! another file system (a tmpfs), and `kill -9` at random points.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

use crate::mcp::{Mcp, text_of};
use crate::util::{Instance, Rng, Runner, is_root, json_lines, text};

/// One entry as `find -printf` reports it, and a file's bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Seen {
    kind: String,
    mode: String,
    mtime: String,
    content: Option<Vec<u8>>,
}

/// Every entry under `root` (relative path bytes), from GNU find.
fn snapshot(root: &Path) -> BTreeMap<Vec<u8>, Seen> {
    let out = Command::new("find")
        .arg(root)
        .args(["-mindepth", "1", "-printf", "%P\\0%y\\0%m\\0%T@\\0"])
        .output()
        .expect("find");
    assert!(out.status.success(), "find: {}", text(&out));
    let fields: Vec<&[u8]> = out.stdout.split(|&b| b == 0).collect();
    let mut map = BTreeMap::new();
    for f in fields.chunks_exact(4) {
        let rel = f[0].to_vec();
        let kind = String::from_utf8_lossy(f[1]).into_owned();
        let content =
            (kind == "f").then(|| std::fs::read(root.join(OsStr::from_bytes(&rel))).unwrap());
        map.insert(
            rel,
            Seen {
                kind,
                mode: String::from_utf8_lossy(f[2]).into_owned(),
                mtime: String::from_utf8_lossy(f[3]).into_owned(),
                content,
            },
        );
    }
    map
}

fn show(p: &[u8]) -> String {
    String::from_utf8_lossy(p).escape_debug().to_string()
}

/// `got` holds exactly `want`'s paths, each of the same type; files with
/// the same bytes, mode and mtime; folders in `dir_mtimes` with the same
/// mtime (others are touched by what moves in and out of them).
fn assert_same(
    what: &str,
    want: &BTreeMap<Vec<u8>, Seen>,
    got: &BTreeMap<Vec<u8>, Seen>,
    dir_mtimes: &[&[u8]],
) {
    let w: BTreeSet<_> = want.keys().collect();
    let g: BTreeSet<_> = got.keys().collect();
    let missing: Vec<String> = w.difference(&g).map(|p| show(p)).collect();
    let extra: Vec<String> = g.difference(&w).map(|p| show(p)).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "{what}: missing {missing:?}, unexpected {extra:?}"
    );
    for (p, a) in want {
        let b = &got[p];
        assert_eq!(a.kind, b.kind, "{what}: {}: type", show(p));
        if a.kind != "d" {
            assert_eq!(a.content, b.content, "{what}: {}: content", show(p));
            assert_eq!(a.mtime, b.mtime, "{what}: {}: mtime", show(p));
        }
        if a.kind == "f" || a.kind == "d" {
            assert_eq!(a.mode, b.mode, "{what}: {}: mode", show(p));
        }
        if a.kind == "d" && dir_mtimes.contains(&p.as_slice()) {
            assert_eq!(a.mtime, b.mtime, "{what}: {}: folder mtime", show(p));
        }
    }
}

/// `before` with every path under a `from` moved under its `to`, minus
/// `gone`, plus the folders in `made`.
fn moved(
    before: &BTreeMap<Vec<u8>, Seen>,
    moves: &[(&[u8], &[u8])],
    gone: &[&[u8]],
    made: &[&[u8]],
) -> BTreeMap<Vec<u8>, Seen> {
    let mut out = BTreeMap::new();
    'each: for (p, s) in before {
        if gone.contains(&p.as_slice()) {
            continue;
        }
        for (from, to) in moves {
            if p.as_slice() == *from {
                out.insert(to.to_vec(), s.clone());
                continue 'each;
            }
            if p.starts_with(from) && p.get(from.len()) == Some(&b'/') {
                let mut n = to.to_vec();
                n.extend_from_slice(&p[from.len()..]);
                out.insert(n, s.clone());
                continue 'each;
            }
        }
        out.insert(p.clone(), s.clone());
    }
    for d in made {
        out.insert(
            d.to_vec(),
            Seen {
                kind: "d".into(),
                mode: "755".into(),
                mtime: String::new(),
                content: None,
            },
        );
    }
    out
}

fn at(year: i32, day: u64) -> SystemTime {
    let secs = (year as u64 - 1970) * 365 * 86_400 + day * 86_400 + 12_345;
    UNIX_EPOCH + Duration::new(secs, 123_456_789)
}

fn write(root: &Path, rel: &[u8], content: &[u8], mtime: SystemTime) {
    let p = root.join(OsStr::from_bytes(rel));
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(&p, content).unwrap();
    std::fs::File::options()
        .write(true)
        .open(&p)
        .unwrap()
        .set_modified(mtime)
        .unwrap();
}

fn set_dir_mtime(p: &Path, mtime: SystemTime) {
    std::fs::File::open(p).unwrap().set_modified(mtime).unwrap();
}

struct Env {
    _tmp: tempfile::TempDir,
    base: PathBuf,
    root: PathBuf,
    inst: Instance,
}

fn env() -> Env {
    let tmp = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(tmp.path()).unwrap();
    let root = base.join("tree");
    std::fs::create_dir_all(&root).unwrap();
    // No daemon: organise runs in fsctl; FSINDEX_HOME holds the journal.
    let inst = Instance::new(base.join("home"), &[&root], Runner::current());
    Env {
        _tmp: tmp,
        base,
        root,
        inst,
    }
}

impl Env {
    fn plan(&self, name: &str, plan: &Value) -> String {
        let p = self.base.join(name);
        std::fs::write(&p, serde_json::to_vec_pretty(plan).unwrap()).unwrap();
        p.to_string_lossy().into_owned()
    }

    fn organise(&self, args: &[&str]) -> Output {
        let mut a = vec!["organise"];
        a.extend_from_slice(args);
        self.inst
            .fsctl_cmd(&a)
            .stdin(Stdio::null())
            .output()
            .expect("fsctl organise")
    }

    fn organise_json(&self, args: &[&str]) -> (Value, Output) {
        let mut a = args.to_vec();
        a.push("--json");
        let out = self.organise(&a);
        let v = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("organise {args:?}: bad JSON ({e}): {}", text(&out)));
        (v, out)
    }

    fn history(&self) -> Vec<Value> {
        let out = self.organise(&["history", "--json"]);
        assert!(out.status.success(), "history: {}", text(&out));
        json_lines(&out)
    }
}

const LONG: usize = 250;

fn long_name() -> Vec<u8> {
    let mut n = vec![b'n'; LONG - 4];
    n.extend_from_slice(b".txt");
    n
}

/// The tree every kind of action works on, with hostile names.
fn messy_tree(root: &Path) {
    write(root, b"inbox/report.pdf", b"%PDF-1.4 report", at(2021, 3));
    write(root, b"inbox/caf\xe9.txt", b"latin-1 name", at(2020, 7));
    write(root, b"inbox/two\nlines.txt", b"newline name", at(2019, 9));
    let mut long = b"inbox/".to_vec();
    long.extend_from_slice(&long_name());
    write(root, &long, b"a long name", at(2018, 11));
    write(root, b"inbox/keep.txt", b"kept", at(2022, 1));
    for i in 0..3u64 {
        write(
            root,
            format!("inbox/photos/IMG_{i}.jpg").as_bytes(),
            &[i as u8; 700],
            at(2024, i),
        );
    }
    write(root, b"old/notes.md", b"# Notes", at(2023, 5));
    write(root, b"a/x.txt", b"merged x", at(2022, 2));
    write(root, b"a/sub/y.txt", b"merged y", at(2022, 3));
    write(root, b"b/w.txt", b"already in b", at(2022, 4));
    write(root, b"b/sub/z.txt", b"already in b/sub", at(2022, 5));
    std::os::unix::fs::symlink("report.pdf", root.join("inbox/link")).unwrap();
    set_dir_mtime(&root.join("inbox/photos"), at(2024, 10));
    set_dir_mtime(&root.join("a/sub"), at(2022, 20));
    set_dir_mtime(&root.join("a"), at(2022, 21));
}

#[test]
fn organise_apply_and_undo_are_judged_by_find_bytes_and_mtimes() {
    let e = env();
    messy_tree(&e.root);
    let long = String::from_utf8(long_name()).unwrap();
    let plan = json!({
        "base": e.root.to_string_lossy(),
        "moves": [
            {"from": "inbox/report.pdf", "to": "Docs/2021/report.pdf"},
            {"from": "inbox/caf\\xE9.txt", "to": "Texts/caf\\xE9 renamed.txt"},
            {"from": "inbox/two\\nlines.txt", "to": "Texts/two\\nlines.txt"},
            {"from": format!("inbox/{long}"), "to": format!("Texts/deep/er/{long}")},
            {"from": "inbox/photos", "to": "Media/Photos 2024"},
            {"action": "rename", "from": "old/notes.md", "to": "Notes.md"},
            {"action": "merge", "from": "a", "to": "b"},
            {"from": "inbox/link", "to": "Links/link"},
            {"action": "mkdir", "path": "Archive/2020"},
            {"action": "keep", "path": "inbox/keep.txt"},
        ]
    });
    let plan = e.plan("plan.json", &plan);
    let before = snapshot(&e.root);

    // check: no problems, nothing touched, the tree it leaves.
    let (checked, out) = e.organise_json(&["check", &plan]);
    assert!(out.status.success(), "check: {}", text(&out));
    assert_eq!(checked["ok"], json!(true), "{checked}");
    let tree = checked["tree"].as_str().unwrap();
    for want in [
        "Docs/",
        "(new folder)",
        "report.pdf  + from inbox/report.pdf",
        "caf\\xE9 renamed.txt",
        "Photos 2024/",
    ] {
        assert!(tree.contains(want), "the tree lacks {want:?}:\n{tree}");
    }
    assert_same("after check", &before, &snapshot(&e.root), &[]);

    // apply without --yes and without a terminal: refused, nothing moved.
    let out = e.organise(&["apply", &plan]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("--yes"), "{}", text(&out));
    assert_same("refused apply", &before, &snapshot(&e.root), &[]);

    let (r, out) = e.organise_json(&["apply", &plan, "--yes"]);
    assert!(out.status.success(), "apply: {}", text(&out));
    assert_eq!(
        (r["skipped"].as_u64(), r["failed"].as_u64()),
        (Some(0), Some(0)),
        "{r}"
    );
    let mut long_from = b"inbox/".to_vec();
    long_from.extend_from_slice(&long_name());
    let mut long_to = b"Texts/deep/er/".to_vec();
    long_to.extend_from_slice(&long_name());
    let expected = moved(
        &before,
        &[
            (b"inbox/report.pdf", b"Docs/2021/report.pdf"),
            (b"inbox/caf\xe9.txt", b"Texts/caf\xe9 renamed.txt"),
            (b"inbox/two\nlines.txt", b"Texts/two\nlines.txt"),
            (&long_from, &long_to),
            (b"inbox/photos", b"Media/Photos 2024"),
            (b"old/notes.md", b"old/Notes.md"),
            (b"a/x.txt", b"b/x.txt"),
            (b"a/sub/y.txt", b"b/sub/y.txt"),
            (b"inbox/link", b"Links/link"),
        ],
        &[b"a", b"a/sub"],
        &[
            b"Docs",
            b"Docs/2021",
            b"Texts",
            b"Texts/deep",
            b"Texts/deep/er",
            b"Media",
            b"Links",
            b"Archive",
            b"Archive/2020",
        ],
    );
    let after = snapshot(&e.root);
    assert_same("after apply", &expected, &after, &[]);
    assert_eq!(
        after[&b"Media/Photos 2024".to_vec()].mtime,
        before[&b"inbox/photos".to_vec()].mtime,
        "a moved folder keeps its mtime"
    );
    assert_eq!(
        std::fs::read_link(e.root.join("Links/link")).unwrap(),
        Path::new("report.pdf"),
        "a symlink moves as itself"
    );

    let hist = e.history();
    assert_eq!(hist.len(), 1, "{hist:?}");
    assert_eq!(hist[0]["state"], json!("applied"));

    // Undo: everything back, bytes, modes and mtimes (and the merged-away
    // folders' mtimes) as they were.
    let (u, out) = e.organise_json(&["undo", "--yes"]);
    assert!(out.status.success(), "undo: {}", text(&out));
    assert_eq!(u["state"], json!("undone"), "{u}");
    assert_same(
        "after undo",
        &before,
        &snapshot(&e.root),
        &[b"inbox/photos", b"a", b"a/sub"],
    );
    assert_eq!(e.history()[0]["state"], json!("undone"));
    let again = e.organise(&["undo", "1", "--yes"]);
    assert_eq!(again.status.code(), Some(2));
    assert!(text(&again).contains("undone already"), "{}", text(&again));
}

#[test]
fn organise_undo_refuses_per_item_what_changed_since() {
    let e = env();
    for (rel, c) in [
        (&b"in/a.txt"[..], &b"a"[..]),
        (b"in/b.txt", b"b"),
        (b"in/c.txt", b"c"),
        (b"in/d.txt", b"d"),
    ] {
        write(&e.root, rel, c, at(2020, 1));
    }
    let r = e.root.to_string_lossy();
    let plan = e.plan(
        "p.json",
        &json!({"moves": [
            {"from": format!("{r}/in/a.txt"), "to": format!("{r}/out/a.txt")},
            {"from": format!("{r}/in/b.txt"), "to": format!("{r}/out/b.txt")},
            {"from": format!("{r}/in/c.txt"), "to": format!("{r}/out/c.txt")},
            {"from": format!("{r}/in/d.txt"), "to": format!("{r}/out/d.txt")},
        ]}),
    );
    let (_, out) = e.organise_json(&["apply", &plan, "--yes"]);
    assert!(out.status.success(), "{}", text(&out));
    // Since: a rewritten, b's old place taken, c deleted, d untouched.
    std::fs::write(e.root.join("out/a.txt"), b"edited").unwrap();
    std::fs::write(e.root.join("in/b.txt"), b"newcomer").unwrap();
    std::fs::remove_file(e.root.join("out/c.txt")).unwrap();
    let (u, out) = e.organise_json(&["undo", "1", "--yes"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert_eq!(u["state"], json!("partly-undone"), "{u}");
    let reasons: BTreeMap<String, String> = u["steps"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["state"] == "refused")
        .map(|s| {
            (
                s["to"]
                    .as_str()
                    .unwrap()
                    .rsplit('/')
                    .next()
                    .unwrap()
                    .to_owned(),
                s["reason"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert!(reasons["a.txt"].contains("changed since"), "{reasons:?}");
    assert!(reasons["b.txt"].contains("exists again"), "{reasons:?}");
    assert!(reasons["c.txt"].contains("gone"), "{reasons:?}");
    assert_eq!(
        std::fs::read(e.root.join("out/a.txt")).unwrap(),
        b"edited",
        "refused: left as it is"
    );
    assert_eq!(
        std::fs::read(e.root.join("in/b.txt")).unwrap(),
        b"newcomer",
        "never replaced"
    );
    assert_eq!(
        std::fs::read(e.root.join("in/d.txt")).unwrap(),
        b"d",
        "the rest went back"
    );
    assert!(!e.root.join("out/d.txt").exists());
}

#[test]
fn organise_plans_with_every_kind_of_problem() {
    let e = env();
    let r = e.root.clone();
    write(&r, b"src/a.txt", b"a", at(2020, 1));
    write(&r, b"src/b.txt", b"b", at(2020, 2));
    write(&r, b"src/c.txt", b"c", at(2020, 3));
    write(&r, b"dst/taken.txt", b"taken", at(2020, 4));
    write(&r, b"file", b"not a folder", at(2020, 5));
    write(&r, b"m1/same.txt", b"m1", at(2020, 6));
    write(&r, b"m1/free.txt", b"free", at(2020, 7));
    write(&r, b"m2/same.txt", b"m2", at(2020, 8));
    std::fs::create_dir_all(r.join("folder/inner")).unwrap();
    let p = |s: &str| r.join(s).to_string_lossy().into_owned();
    let before = snapshot(&r);
    let kinds = |v: &Value| -> BTreeSet<String> {
        v["problems"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["kind"].as_str().unwrap().to_owned())
            .collect()
    };

    // Problems that stop their item only: apply does the rest.
    let plan = e.plan(
        "soft.json",
        &json!({"moves": [
            {"from": p("src/missing.txt"), "to": p("dst/missing.txt")},
            {"from": p("src/a.txt"), "to": p("dst/taken.txt")},
            {"from": p("src/b.txt"), "to": p("file/b.txt")},
            {"action": "merge", "from": p("m1"), "to": p("m2")},
            {"action": "mkdir", "path": p("file")},
            {"from": p("src/c.txt"), "to": p("dst/c.txt")},
        ]}),
    );
    let (c, out) = e.organise_json(&["check", &plan]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "check finds problems: {}",
        text(&out)
    );
    assert_eq!(
        kinds(&c),
        [
            "destinationExists",
            "mergeCollision",
            "missingSource",
            "mkdirOverFile",
            "parentIsFile"
        ]
        .map(String::from)
        .into_iter()
        .collect(),
        "{c}"
    );
    assert_eq!(c["blocking"], json!(false));
    assert_same("after check", &before, &snapshot(&r), &[]);
    let (a, out) = e.organise_json(&["apply", &plan, "--yes"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert_eq!(a["failed"], json!(0), "{a}");
    let expected = moved(
        &before,
        &[
            (b"src/c.txt", b"dst/c.txt"),
            (b"m1/free.txt", b"m2/free.txt"),
        ],
        &[],
        &[],
    );
    assert_same(
        "soft problems applied around",
        &expected,
        &snapshot(&r),
        &[],
    );
    let (_, out) = e.organise_json(&["undo", "--yes"]);
    assert!(out.status.success(), "{}", text(&out));
    assert_same("undone", &before, &snapshot(&r), &[]);

    // A plan that contradicts itself: refused whole.
    let plan = e.plan(
        "hard.json",
        &json!({"moves": [
            {"from": p("src/a.txt"), "to": p("dst/one.txt")},
            {"from": p("src/b.txt"), "to": p("dst/one.txt")},
            {"from": p("src/c.txt"), "to": p("dst/c1.txt")},
            {"from": p("src/c.txt"), "to": p("dst/c2.txt")},
            {"from": p("folder"), "to": p("folder/inner/folder")},
            {"action": "rename", "from": p("m1/free.txt"), "to": p("m2/free.txt")},
            {"action": "keep", "path": p("m2/same.txt")},
            {"from": p("m2"), "to": p("m3")},
            {"from": p("m2/same.txt"), "to": p("m4.txt")},
        ]}),
    );
    let (c, out) = e.organise_json(&["check", &plan]);
    assert_eq!(out.status.code(), Some(1));
    for k in [
        "collision",
        "sourceMovedTwice",
        "intoOwnSubtree",
        "renameChangesFolder",
        "keptButMoved",
        "nestedSources",
    ] {
        assert!(kinds(&c).contains(k), "{k} missing: {c}");
    }
    assert_eq!(c["blocking"], json!(true));
    let out = e.organise(&["apply", &plan, "--yes"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("contradicts itself"),
        "{}",
        text(&out)
    );
    assert_same("refused plan", &before, &snapshot(&r), &[]);

    // Malformed plans: one clear line each, exit 2.
    for (name, body, says) in [
        ("badjson.json", "{\"moves\": [", "not valid JSON"),
        ("empty.json", "{\"moves\": []}", "no items"),
        (
            "action.json",
            "{\"moves\": [{\"action\": \"fling\", \"from\": \"a\", \"to\": \"b\"}]}",
            "unknown action",
        ),
        (
            "field.json",
            "{\"moves\": [{\"from\": \"a\"}]}",
            "`to` is missing",
        ),
        (
            "extra.json",
            "{\"moves\": [{\"from\": \"a\", \"to\": \"b\", \"speed\": 1}]}",
            "unknown field",
        ),
    ] {
        let path = e.base.join(name);
        std::fs::write(&path, body).unwrap();
        let out = e.organise(&["check", path.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(2), "{name}: {}", text(&out));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(says) && err.trim_end().lines().count() == 1,
            "{name}: {err}"
        );
    }
}

#[test]
fn organise_skips_what_changed_since_the_check() {
    let e = env();
    let r = e.root.clone();
    write(&r, b"in/edited.txt", b"before", at(2020, 1));
    write(&r, b"in/blocked.txt", b"blocked", at(2020, 2));
    write(&r, b"in/fine.txt", b"fine", at(2020, 3));
    let p = |s: &str| r.join(s).to_string_lossy().into_owned();
    let plan = e.plan(
        "p.json",
        &json!({"moves": [
            {"from": p("in/edited.txt"), "to": p("out/edited.txt")},
            {"from": p("in/blocked.txt"), "to": p("out/blocked.txt")},
            {"from": p("in/fine.txt"), "to": p("out/fine.txt")},
        ]}),
    );
    // The check's JSON carries each source's size and mtime: it is itself
    // a plan that apply holds to.
    let (c, out) = e.organise_json(&["check", &plan]);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(c["moves"][0]["size"], json!(6), "{c}");
    let checked = e.plan("checked.json", &json!({"moves": c["moves"]}));
    // Then, before apply: one source rewritten, one destination appears.
    write(&r, b"in/edited.txt", b"after!", at(2020, 9));
    write(&r, b"out/blocked.txt", b"squatter", at(2020, 10));
    let (a, out) = e.organise_json(&["apply", &checked, "--yes"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert_eq!(a["failed"], json!(0), "{a}");
    let kinds: BTreeSet<&str> = a["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        BTreeSet::from(["changedSinceCheck", "destinationExists"]),
        "{a}"
    );
    assert_eq!(
        std::fs::read(r.join("in/edited.txt")).unwrap(),
        b"after!",
        "changed source left alone"
    );
    assert_eq!(std::fs::read(r.join("in/blocked.txt")).unwrap(), b"blocked");
    assert_eq!(
        std::fs::read(r.join("out/blocked.txt")).unwrap(),
        b"squatter",
        "never overwritten"
    );
    assert_eq!(std::fs::read(r.join("out/fine.txt")).unwrap(), b"fine");
    assert!(!r.join("out/edited.txt").exists());
    // The human form says why, per item.
    write(&r, b"in/fine.txt", b"back", at(2020, 3));
    let out = e.organise(&["check", &checked]);
    let said = text(&out);
    assert!(
        said.contains("changedSinceCheck") && said.contains("destinationExists"),
        "{said}"
    );
}

/// A tmpfs mounted for one test (the tests run as root), unmounted after.
struct Tmpfs(PathBuf);

impl Tmpfs {
    fn mount(at: &Path) -> Option<Tmpfs> {
        std::fs::create_dir_all(at).unwrap();
        if !is_root() {
            eprintln!("SKIP the copy path: mounting a tmpfs needs root");
            return None;
        }
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=256m", "tmpfs"])
            .arg(at)
            .output()
            .expect("mount");
        if !out.status.success() {
            eprintln!(
                "SKIP the copy path: cannot mount a tmpfs here: {}",
                text(&out)
            );
            return None;
        }
        Some(Tmpfs(at.to_path_buf()))
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

#[test]
fn organise_moves_across_file_systems_by_checked_copy() {
    let e = env();
    let Some(fs) = Tmpfs::mount(&e.base.join("tmpfs")) else {
        return;
    };
    let r = e.root.clone();
    write(&r, b"big.bin", &vec![7u8; 3 << 20], at(2021, 1));
    write(&r, b"caf\xe9 \n.txt", b"hostile", at(2021, 2));
    write(&r, b"dir/one.txt", b"one", at(2021, 3));
    write(&r, b"dir/sub/two.txt", b"two", at(2021, 4));
    std::os::unix::fs::symlink("one.txt", r.join("dir/link")).unwrap();
    std::fs::set_permissions(
        r.join("dir/one.txt"),
        std::os::unix::fs::PermissionsExt::from_mode(0o640),
    )
    .unwrap();
    set_dir_mtime(&r.join("dir/sub"), at(2021, 5));
    set_dir_mtime(&r.join("dir"), at(2021, 6));
    let before = snapshot(&r);
    let t = fs.0.to_string_lossy().into_owned();
    let plan = e.plan(
        "p.json",
        &json!({"base": r.to_string_lossy(), "moves": [
            {"from": "big.bin", "to": format!("{t}/in/big.bin")},
            {"from": "caf\\xE9 \\n.txt", "to": format!("{t}/caf\\xE9 \\n.txt")},
            {"from": "dir", "to": format!("{t}/dir")},
        ]}),
    );
    let (a, out) = e.organise_json(&["apply", &plan, "--yes"]);
    assert!(out.status.success(), "{}", text(&out));
    let vias: BTreeSet<&str> = a["steps"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["action"] == "move")
        .map(|s| s["via"].as_str().unwrap())
        .collect();
    assert_eq!(vias, BTreeSet::from(["copy"]), "{a}");
    // On the tmpfs: the same bytes, modes and mtimes (folders' too); gone
    // from the disk.
    let there = snapshot(&fs.0);
    for (from, to) in [
        (&b"big.bin"[..], &b"in/big.bin"[..]),
        (b"caf\xe9 \n.txt", b"caf\xe9 \n.txt"),
        (b"dir/one.txt", b"dir/one.txt"),
        (b"dir/sub/two.txt", b"dir/sub/two.txt"),
        (b"dir/link", b"dir/link"),
        (b"dir/sub", b"dir/sub"),
        (b"dir", b"dir"),
    ] {
        let (a, b) = (&before[from], &there[to]);
        assert_eq!(
            (&a.kind, &a.mode, &a.mtime, &a.content),
            (&b.kind, &b.mode, &b.mtime, &b.content),
            "{}",
            show(to)
        );
    }
    assert_eq!(
        std::fs::read_link(fs.0.join("dir/link")).unwrap(),
        Path::new("one.txt")
    );
    assert_eq!(
        snapshot(&r).len(),
        0,
        "the sources are gone: {:?}",
        snapshot(&r).keys().map(|k| show(k)).collect::<Vec<_>>()
    );
    // Undo copies back across.
    let (u, out) = e.organise_json(&["undo", "--yes"]);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(u["state"], json!("undone"));
    assert_same(
        "undone across file systems",
        &before,
        &snapshot(&r),
        &[b"dir", b"dir/sub"],
    );
    assert!(!fs.0.join("dir").exists() && !fs.0.join("in/big.bin").exists());
}

/// A plan of many small moves (and, with a tmpfs, copies across file
/// systems) whose apply and undo are killed with SIGKILL at random points;
/// the next `fsctl organise` finishes what was begun, and the tree is
/// always either all before or all after, never half.
#[test]
fn organise_kill9_at_random_points_converges() {
    let e = env();
    let tmpfs = Tmpfs::mount(&e.base.join("tmpfs"));
    let r = e.root.clone();
    let mut moves = Vec::new();
    let mut pairs: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
    for d in 0..8 {
        for f in 0..40 {
            let rel = format!("src/d{d}/f{f:03}.txt");
            write(
                &r,
                rel.as_bytes(),
                format!("{d}/{f}").repeat(50).as_bytes(),
                at(2020, (d * 40 + f) as u64),
            );
            let to = format!("dst/d{}/f{f:03}.txt", (d + 1) % 8);
            moves.push(json!({"from": rel, "to": to}));
            pairs.push((rel.into_bytes(), to.into_bytes()));
        }
    }
    // Chains: v1 -> v2 and v0 -> v1, listed in either order (a move into a
    // name another move frees waits for it).
    for k in 0..20 {
        let v = |i: u32| format!("chain/k{k:02}/v{i}");
        write(
            &r,
            v(0).as_bytes(),
            format!("{k} zero").as_bytes(),
            at(2021, 2),
        );
        write(
            &r,
            v(1).as_bytes(),
            format!("{k} one").as_bytes(),
            at(2021, 3),
        );
        let (first, second) = ((v(1), v(2)), (v(0), v(1)));
        let order = if k % 2 == 0 {
            [first, second]
        } else {
            [second, first]
        };
        for (from, to) in order {
            moves.push(json!({"from": from, "to": to}));
        }
        pairs.push((v(1).into_bytes(), v(2).into_bytes()));
        pairs.push((v(0).into_bytes(), v(1).into_bytes()));
    }
    write(&r, b"whole/x.txt", b"x", at(2021, 1));
    moves.push(json!({"from": "whole", "to": "dst/whole"}));
    pairs.push((b"whole".to_vec(), b"dst/whole".to_vec()));
    let mut across: Vec<PathBuf> = Vec::new();
    if let Some(t) = &tmpfs {
        for i in 0..6 {
            let rel = format!("big/b{i}.bin");
            write(&r, rel.as_bytes(), &vec![i as u8; 2 << 20], at(2022, i));
            let to = t.0.join(format!("b{i}.bin"));
            moves.push(json!({"from": rel, "to": to.to_string_lossy()}));
            across.push(to);
        }
    }
    let plan = e.plan(
        "p.json",
        &json!({"base": r.to_string_lossy(), "moves": moves}),
    );
    let before = snapshot(&r);
    let mut made: Vec<Vec<u8>> = vec![b"dst".to_vec()];
    made.extend((0..8).map(|d| format!("dst/d{d}").into_bytes()));
    let made_refs: Vec<&[u8]> = made.iter().map(|m| m.as_slice()).collect();
    let pair_refs: Vec<(&[u8], &[u8])> = pairs
        .iter()
        .map(|(a, b)| (a.as_slice(), b.as_slice()))
        .collect();
    let mut after = moved(&before, &pair_refs, &[], &made_refs);
    after.retain(|k, _| !k.starts_with(b"big/"));
    let no_temps = |what: &str| {
        let mut roots = vec![r.clone()];
        roots.extend(tmpfs.as_ref().map(|t| t.0.clone()));
        for root in roots {
            let out = Command::new("find")
                .arg(&root)
                .args(["-name", ".fsindex-organise-*"])
                .output()
                .unwrap();
            assert!(
                out.stdout.is_empty(),
                "{what}: temporary copies left: {}",
                text(&out)
            );
        }
    };
    let across_all = |there: bool| across.iter().all(|p| p.exists() == there);

    // One uninterrupted run measures how long an apply takes.
    let t0 = Instant::now();
    let (_, out) = e.organise_json(&["apply", &plan, "--yes"]);
    assert!(out.status.success(), "{}", text(&out));
    let full = t0.elapsed();
    assert_same("uninterrupted", &after, &snapshot(&r), &[]);
    let (_, out) = e.organise_json(&["undo", "--yes"]);
    assert!(out.status.success(), "{}", text(&out));
    assert_same("uninterrupted undo", &before, &snapshot(&r), &[]);

    // ORGANISE_KILL_ROUNDS and ORGANISE_KILL_SEED run it longer or otherwise.
    let env_num = |k: &str, d: u64| {
        std::env::var(k)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(d)
    };
    let rounds = env_num("ORGANISE_KILL_ROUNDS", 6);
    let seed = env_num("ORGANISE_KILL_SEED", 0x5eed_0f0a);
    let mut rng = Rng(seed);
    let mut interrupted = 0;
    for round in 0..rounds {
        let plans_before = e.history().len();
        let wait = Duration::from_micros(rng.below(full.as_micros() as usize) as u64);
        let mut child = e
            .inst
            .fsctl_cmd(&["organise", "apply", &plan, "--yes", "--json"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(wait);
        let killed = child.try_wait().unwrap().is_none();
        let _ = child.kill();
        let _ = child.wait();
        // The next start finishes it (or finds nothing begun).
        let hist = e.history();
        no_temps("after recovery");
        let last = hist.last().unwrap();
        let begun = hist.len() > plans_before;
        if !begun {
            assert_same(
                &format!("round {round}: killed before the plan began"),
                &before,
                &snapshot(&r),
                &[],
            );
            continue;
        }
        if killed
            && last["note"]
                .as_str()
                .is_some_and(|n| n.contains("interrupted"))
        {
            interrupted += 1;
        }
        assert_eq!(last["state"], json!("applied"), "round {round}: {last}");
        assert_same(
            &format!("round {round}: after a kill -9 at {wait:?} and recovery"),
            &after,
            &snapshot(&r),
            &[],
        );
        assert!(
            across_all(true),
            "round {round}: copies across file systems finished"
        );
        // Undo, killed too.
        let wait = Duration::from_micros(rng.below(full.as_micros() as usize) as u64);
        let mut child = e
            .inst
            .fsctl_cmd(&["organise", "undo", "--yes"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(wait);
        let _ = child.kill();
        let _ = child.wait();
        let hist = e.history();
        no_temps("after undo recovery");
        let state = hist.last().unwrap()["state"].as_str().unwrap().to_owned();
        if state == "applied" {
            // Killed before undo began: undo now.
            let (_, out) = e.organise_json(&["undo", "--yes"]);
            assert!(out.status.success(), "{}", text(&out));
        } else {
            assert_eq!(state, "undone", "round {round}: {hist:?}");
        }
        assert_same(
            &format!("round {round}: undo killed at {wait:?}, then recovered"),
            &before,
            &snapshot(&r),
            &[],
        );
        assert!(across_all(false));
    }
    eprintln!(
        "kill -9 rounds: {interrupted} of {rounds} interrupted mid-apply (apply takes {full:?}, seed {seed})"
    );
}

#[test]
fn mcp_writes_exist_only_with_allow_write() {
    let tmp = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(tmp.path()).unwrap();
    let root = base.join("tree");
    let outside = base.join("outside");
    write(&root, b"inbox/a.txt", b"a", at(2020, 1));
    write(&root, b"inbox/b.txt", b"b", at(2020, 2));
    write(&outside, b"secret.txt", b"s", at(2020, 3));
    std::os::unix::fs::symlink(&outside, root.join("out-link")).unwrap();
    let mut inst = Instance::new(base.join("home"), &[&root], Runner::current());
    inst.start();
    let before = snapshot(&root);
    let plan = json!({"moves": [{"from": "inbox/a.txt", "to": "sorted/a.txt"}]});

    // Read-only: the tools are not listed and not callable.
    let ro = Mcp::start(&inst, &root, &[]);
    let names: BTreeSet<String> = ro.tools().iter().map(|t| t.name.to_string()).collect();
    assert!(
        !names.contains("apply_move_plan") && !names.contains("undo_move_plan"),
        "{names:?}"
    );
    let refused = match ro.try_call("apply_move_plan", plan.clone()) {
        Err(e) => e,
        Ok(r) => {
            assert_eq!(r.is_error, Some(true), "{}", text_of(&r));
            text_of(&r)
        }
    };
    assert!(refused.contains("unknown tool"), "{refused}");
    assert_same("read-only server", &before, &snapshot(&root), &[]);
    drop(ro);

    let rw = Mcp::start(&inst, &root, &["--allow-write"]);
    let tools = rw.tools();
    for name in ["apply_move_plan", "undo_move_plan"] {
        let t = tools
            .iter()
            .find(|t| t.name == name)
            .unwrap_or_else(|| panic!("{name} not listed"));
        let a = t.annotations.as_ref().unwrap();
        assert_eq!(
            (
                a.read_only_hint,
                a.destructive_hint,
                a.idempotent_hint,
                a.open_world_hint
            ),
            (Some(false), Some(true), Some(true), Some(false)),
            "{name}"
        );
    }
    // Every path through the guard: outside, through a symlink out, `..`.
    for bad in [
        json!({"moves": [{"from": "inbox/a.txt", "to": outside.join("stolen.txt").to_string_lossy()}]}),
        json!({"moves": [{"from": "inbox/a.txt", "to": "out-link/stolen.txt"}]}),
        json!({"moves": [{"from": "../outside/secret.txt", "to": "got.txt"}]}),
        json!({"moves": [{"from": "out-link/secret.txt", "to": "got.txt"}]}),
    ] {
        let why = rw.refused("apply_move_plan", bad.clone());
        assert!(
            why.contains("no such path under the allowed directories"),
            "{bad}: {why}"
        );
    }
    assert_same("refused plans", &before, &snapshot(&root), &[]);
    assert!(outside.join("secret.txt").exists() && !outside.join("stolen.txt").exists());

    let a = rw.ok(
        "apply_move_plan",
        json!({"moves": [
            {"from": "inbox/a.txt", "to": "sorted/a.txt"},
            {"from": "inbox/b.txt", "to": "sorted/b.txt"},
        ]}),
    );
    assert_eq!(
        (a["done"].as_u64(), a["skipped"].as_u64()),
        (Some(3), Some(0)),
        "{a}"
    );
    let expected = moved(
        &before,
        &[
            (b"inbox/a.txt", b"sorted/a.txt"),
            (b"inbox/b.txt", b"sorted/b.txt"),
        ],
        &[],
        &[b"sorted"],
    );
    assert_same("applied over MCP", &expected, &snapshot(&root), &[]);
    let id = a["id"].as_i64().unwrap();
    let u = rw.ok("undo_move_plan", json!({"id": id}));
    assert_eq!(u["state"], json!("undone"), "{u}");
    assert_same("undone over MCP", &before, &snapshot(&root), &[]);
    let again = rw.refused("undo_move_plan", json!({"id": id}));
    assert!(again.contains("undone already"), "{again}");
    // The CLI's journal is the same one.
    let out = inst.fsctl(&["organise", "history", "--json"]);
    let hist = json_lines(&out);
    assert_eq!(hist.last().unwrap()["origin"], json!("mcp"), "{hist:?}");
}

/// `fsctl status` says when a plan was interrupted, and, once the next
/// `fsctl organise` finished it, what happened. The apply is killed once
/// the journal (read by the test with SQLite) shows steps done.
#[test]
fn organise_status_says_a_plan_was_interrupted_and_finished() {
    let e = env();
    let mut inst = Instance::new(e.base.join("home"), &[&e.root], Runner::current());
    let mut moves = Vec::new();
    for i in 0..3000 {
        let rel = format!("in/f{i:04}.txt");
        write(&e.root, rel.as_bytes(), b"x", at(2020, 1));
        moves.push(json!({"from": rel, "to": format!("out/{}/f{i:04}.txt", i % 10)}));
    }
    inst.start();
    let plan = e.plan(
        "p.json",
        &json!({"base": e.root.to_string_lossy(), "moves": moves}),
    );
    let mut child = inst
        .fsctl_cmd(&["organise", "apply", &plan, "--yes"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let db = inst.home.join("organise.db");
    let done = || -> i64 {
        rusqlite::Connection::open_with_flags(&db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .and_then(|c| {
                c.query_row("SELECT COUNT(*) FROM steps WHERE state = 'done'", [], |r| {
                    r.get(0)
                })
            })
            .unwrap_or(0)
    };
    let t0 = Instant::now();
    while done() < 20 {
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "no step done in 60 s"
        );
        assert!(
            child.try_wait().unwrap().is_none(),
            "apply ended before it could be killed"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let s = inst.status();
    let lines = s["organise"]
        .as_array()
        .unwrap_or_else(|| panic!("status says nothing of the plan: {s}"));
    assert!(
        lines[0]
            .as_str()
            .unwrap()
            .contains("plan 1: interrupted while applying"),
        "{s}"
    );
    let human = text(&inst.fsctl(&["status"]));
    assert!(
        human.contains("organise plan 1: interrupted while applying"),
        "{human}"
    );
    // The next organise command finishes it; status then says so.
    let out = e.organise(&["history"]);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("finished at the next start"),
        "{}",
        text(&out)
    );
    let s = inst.status();
    let line = s["organise"][0].as_str().unwrap_or_default();
    assert!(
        line.contains("plan 1: applied (interrupted while applying; finished"),
        "{s}"
    );
    let left = std::fs::read_dir(e.root.join("in")).unwrap().count();
    assert_eq!(left, 0, "every file moved after recovery");
    let moved: usize = (0..10)
        .map(|d| {
            std::fs::read_dir(e.root.join(format!("out/{d}")))
                .unwrap()
                .count()
        })
        .sum();
    assert_eq!(moved, 3000);
    inst.stop();
}
