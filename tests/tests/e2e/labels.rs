//! Bookmarks and tags (issue 34): kept by entry, so they follow a file
//! through a real `mv` (of the file, or of a folder above it) and a
//! `git mv`, survive restarts (clean and `kill -9`), and leave with a
//! delete; `tag:` finds exactly the set the test tagged; each user of a
//! machine-wide daemon has their own. The oracle is the test's own record
//! of what it tagged and where it moved it.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::security::{start_system, system_tree};
use crate::util::{self, Instance, Runner, json_lines, sync, text, write_file};

fn run(cmd: &str, args: &[&str], dir: &Path) {
    let out = Command::new(cmd)
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{cmd} {args:?}: {}", text(&out));
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// `fsctl search tag:NAME` as a set of absolute paths.
fn tagged(inst: &Instance, tag: &str) -> BTreeSet<PathBuf> {
    inst.search0(&[&format!("tag:{tag}"), "--limit", "0"])
        .into_iter()
        .map(|p| PathBuf::from(String::from_utf8(p).unwrap()))
        .collect()
}

fn set(paths: &[&Path]) -> BTreeSet<PathBuf> {
    paths.iter().map(|p| p.to_path_buf()).collect()
}

/// `fsctl tag list PATH --json`: the entry's tags as (name, source).
fn tags_of(inst: &Instance, p: &Path) -> Vec<(String, String)> {
    let v = inst.json(&["tag", "list", s(p)]);
    assert_eq!(v["path"], s(p));
    v["tags"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["name"].as_str().unwrap().to_owned(),
                t["source"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

/// `fsctl bookmark list --json` as (name, path).
fn bookmarks(inst: &Instance) -> Vec<(String, String)> {
    let out = inst.fsctl(&["bookmark", "list", "--json"]);
    assert!(out.status.success(), "{}", text(&out));
    json_lines(&out)
        .iter()
        .map(|v| {
            (
                v["name"].as_str().unwrap().to_owned(),
                v["path"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

fn ok(inst: &Instance, args: &[&str]) {
    let out = inst.fsctl(args);
    assert!(out.status.success(), "fsctl {args:?}: {}", text(&out));
}

#[test]
fn tags_and_bookmarks_follow_moves_survive_restarts_and_leave_with_deletes() {
    let tmp = tempfile::tempdir().unwrap();
    let tree = tmp.path().join("tree");
    let w = |p: &str| write_file(&tree, p, p.as_bytes());
    w("inbox/scan-0412.pdf");
    w("inbox/other.pdf");
    w("projects/alpha/notes/receipt.txt");
    w("projects/alpha/readme.md");
    w("misc/work.txt");
    w("misc/keep.txt");
    w("repo/tracked.txt");
    run("git", &["init", "-q"], &tree.join("repo"));
    run("git", &["add", "tracked.txt"], &tree.join("repo"));
    run(
        "git",
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-qm",
            "one",
        ],
        &tree.join("repo"),
    );
    let mut inst = Instance::new(tmp.path().join("home"), &[&tree], Runner::current());
    inst.start();
    let p = |r: &str| tree.join(r);

    // Tags, as written and folded: `Receipts` and `receipts` are one tag.
    ok(
        &inst,
        &[
            "tag",
            "add",
            s(&p("inbox/scan-0412.pdf")),
            "Receipts",
            "2025",
        ],
    );
    ok(
        &inst,
        &[
            "tag",
            "add",
            s(&p("projects/alpha/notes/receipt.txt")),
            "receipts",
        ],
    );
    ok(&inst, &["tag", "add", s(&p("projects/alpha")), "project"]);
    ok(&inst, &["tag", "add", s(&p("misc/work.txt")), "work"]);
    ok(&inst, &["tag", "add", s(&p("inbox/other.pdf")), "later"]);
    ok(
        &inst,
        &["tag", "add", s(&p("repo/tracked.txt")), "receipts"],
    );
    ok(&inst, &["bookmark", "add", s(&p("projects/alpha"))]);
    ok(
        &inst,
        &["bookmark", "add", s(&p("misc")), "--name", "Odds & ends"],
    );
    assert_eq!(
        tagged(&inst, "RECEIPTS"),
        set(&[
            &p("inbox/scan-0412.pdf"),
            &p("projects/alpha/notes/receipt.txt"),
            &p("repo/tracked.txt")
        ])
    );
    // A tagged folder is itself the match, not what it holds.
    assert_eq!(tagged(&inst, "project"), set(&[&p("projects/alpha")]));
    assert_eq!(
        tags_of(&inst, &p("inbox/scan-0412.pdf")),
        [
            ("2025".into(), "user".into()),
            ("Receipts".into(), "user".into())
        ]
    );
    // With other filters: tag AND extension.
    let got: BTreeSet<PathBuf> = inst
        .search0(&["tag:receipts", "ext:pdf"])
        .into_iter()
        .map(|b| PathBuf::from(String::from_utf8(b).unwrap()))
        .collect();
    assert_eq!(got, set(&[&p("inbox/scan-0412.pdf")]));

    // Moves, by the real programs: the file renamed, a folder above a
    // tagged file moved into a folder made the moment before (not watched
    // yet: the kernel reports only the move away), a git mv.
    run(
        "mv",
        &[
            s(&p("inbox/scan-0412.pdf")),
            s(&p("inbox/2025-04 hardware.pdf")),
        ],
        &tree,
    );
    run("mkdir", &["-p", s(&p("archive/2025"))], &tree);
    run(
        "mv",
        &[s(&p("projects/alpha")), s(&p("archive/2025/alpha"))],
        &tree,
    );
    run(
        "git",
        &["mv", "tracked.txt", "moved-by-git.txt"],
        &tree.join("repo"),
    );
    sync(&inst);
    let receipts = set(&[
        &p("inbox/2025-04 hardware.pdf"),
        &p("archive/2025/alpha/notes/receipt.txt"),
        &p("repo/moved-by-git.txt"),
    ]);
    assert_eq!(tagged(&inst, "receipts"), receipts);
    assert_eq!(tagged(&inst, "project"), set(&[&p("archive/2025/alpha")]));
    let marks = vec![
        ("Odds & ends".to_owned(), s(&p("misc")).to_owned()),
        ("alpha".to_owned(), s(&p("archive/2025/alpha")).to_owned()),
    ];
    assert_eq!(bookmarks(&inst), marks);

    // A clean restart, then a kill -9: nothing is lost.
    inst.stop();
    inst.start();
    assert_eq!(tagged(&inst, "receipts"), receipts);
    assert_eq!(bookmarks(&inst), marks);
    inst.kill9();
    // Renamed while the daemon is down: the restart sees a delete and a
    // create of the same file (inode and mtime), and the tag follows.
    run(
        "mv",
        &[
            s(&p("inbox/other.pdf")),
            s(&p("inbox/renamed-while-down.pdf")),
        ],
        &tree,
    );
    inst.start();
    assert_eq!(
        tagged(&inst, "later"),
        set(&[&p("inbox/renamed-while-down.pdf")])
    );
    assert_eq!(tagged(&inst, "receipts"), receipts);
    assert_eq!(tagged(&inst, "work"), set(&[&p("misc/work.txt")]));
    assert_eq!(bookmarks(&inst), marks);

    // Every tag with its count; `Receipts` and `receipts` are one tag,
    // shown in one of its spellings.
    let out = inst.fsctl(&["tag", "list", "--json"]);
    let counts: Vec<(String, u64)> = json_lines(&out)
        .iter()
        .map(|v| {
            (
                v["name"].as_str().unwrap().to_lowercase(),
                v["entries"].as_u64().unwrap(),
            )
        })
        .collect();
    let expected = [
        ("2025", 1),
        ("later", 1),
        ("project", 1),
        ("receipts", 3),
        ("work", 1),
    ];
    assert_eq!(
        counts,
        expected.map(|(n, c)| (n.to_owned(), c)).to_vec(),
        "{}",
        text(&out)
    );

    // Deletes take labels with them: a file, and a folder with a tagged
    // file inside; a file made again at the same path is a new file.
    std::fs::remove_file(p("misc/work.txt")).unwrap();
    std::fs::remove_dir_all(p("archive/2025/alpha")).unwrap();
    sync(&inst);
    assert!(tagged(&inst, "work").is_empty());
    assert!(tagged(&inst, "project").is_empty());
    assert_eq!(
        tagged(&inst, "receipts"),
        set(&[
            &p("inbox/2025-04 hardware.pdf"),
            &p("repo/moved-by-git.txt")
        ])
    );
    assert_eq!(bookmarks(&inst), marks[..1]);
    w("misc/work.txt");
    sync(&inst);
    assert!(tagged(&inst, "work").is_empty());
    assert!(tags_of(&inst, &p("misc/work.txt")).is_empty());

    // Removing: a tag, a bookmark by name and one by path.
    ok(
        &inst,
        &[
            "tag",
            "remove",
            s(&p("inbox/2025-04 hardware.pdf")),
            "RECEIPTS",
        ],
    );
    assert_eq!(
        tagged(&inst, "receipts"),
        set(&[&p("repo/moved-by-git.txt")])
    );
    assert_eq!(
        tags_of(&inst, &p("inbox/2025-04 hardware.pdf")),
        [("2025".into(), "user".into())]
    );
    ok(&inst, &["bookmark", "add", s(&p("inbox"))]);
    ok(&inst, &["bookmark", "remove", "Odds & ends"]);
    ok(&inst, &["bookmark", "remove", s(&p("inbox"))]);
    assert!(bookmarks(&inst).is_empty());
}

#[test]
fn bad_tags_bookmarks_and_tag_filters_are_refused_with_the_reason() {
    let tmp = tempfile::tempdir().unwrap();
    let tree = tmp.path().join("tree");
    write_file(&tree, "a.txt", b"a");
    write_file(&tree, "b.txt", b"b");
    let mut inst = Instance::new(tmp.path().join("home"), &[&tree], Runner::current());
    inst.start();
    let a = tree.join("a.txt");
    let refused = |args: &[&str], says: &str| {
        let out = inst.fsctl(args);
        assert_eq!(out.status.code(), Some(2), "fsctl {args:?}: {}", text(&out));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "fsctl {args:?}: {err}");
    };
    refused(&["search", "tag:a,b"], "`tag:a,b`");
    refused(&["search", "report", "tag:"], "`tag:`");
    refused(&["tag", "add", s(&a), "two,tags"], "comma");
    refused(&["tag", "add", s(&a), " "], "needs some text");
    refused(&["tag", "add", s(&a), &"x".repeat(300)], "longer than 255");
    refused(
        &["tag", "add", s(&tree.join("nowhere.txt")), "x"],
        "not in the index",
    );
    refused(&["tag", "add", "/", "x"], "not under any root");
    ok(&inst, &["bookmark", "add", s(&a), "--name", "mine"]);
    refused(
        &["bookmark", "add", s(&tree.join("b.txt")), "--name", "mine"],
        "a bookmark named `mine` exists already",
    );
    refused(&["bookmark", "add", s(&a)], "bookmarked already, as `mine`");
    refused(
        &["bookmark", "remove", "nonesuch"],
        "no bookmark named `nonesuch`",
    );
    // Over gRPC, the codes.
    let codes = util::grpc(&inst, async |c| {
        use fsindex_proto::v1 as pb;
        let q = c
            .search(pb::SearchRequest {
                query: "tag:x,y".into(),
                ..Default::default()
            })
            .await
            .err()
            .map(|e| e.code());
        let t = c
            .tags(pb::TagsRequest {
                action: pb::TagsAction::Add as i32,
                path: b"relative/a.txt".to_vec(),
                tags: vec!["x".into()],
            })
            .await
            .err()
            .map(|e| e.code());
        let b = c
            .bookmarks(pb::BookmarksRequest {
                action: pb::BookmarksAction::Add as i32,
                path: a.to_str().unwrap().as_bytes().to_vec(),
                name: "mine".into(),
            })
            .await
            .err()
            .map(|e| e.code());
        (q, t, b)
    });
    assert_eq!(
        codes,
        (
            Some(tonic::Code::InvalidArgument),
            Some(tonic::Code::InvalidArgument),
            Some(tonic::Code::AlreadyExists)
        )
    );
    // A file made a moment ago is tagged without waiting for the watcher.
    let fresh = tree.join("fresh.txt");
    std::fs::write(&fresh, b"new").unwrap();
    ok(&inst, &["tag", "add", s(&fresh), "new"]);
    assert_eq!(tagged(&inst, "new"), set(&[&fresh]));
}

#[test]
fn machine_wide_users_each_have_their_own_tags_and_bookmarks() {
    let Some((t, root)) = system_tree() else {
        return;
    };
    write_file(&root, "shared/report.txt", b"r");
    write_file(&root, "priv/secret.txt", b"s");
    crate::security::change("chmod", &["-R", "a+rX"], &root);
    std::fs::set_permissions(
        root.join("priv"),
        std::os::unix::fs::PermissionsExt::from_mode(0o700),
    )
    .unwrap();
    let (inst, visitor) = start_system(t.path(), &root);
    let report = root.join("shared/report.txt");
    let secret = root.join("priv/secret.txt");
    // Root's tags and bookmarks are root's.
    ok(&inst, &["tag", "add", s(&report), "roots-own"]);
    ok(&inst, &["tag", "add", s(&secret), "roots-own"]);
    ok(&inst, &["bookmark", "add", s(&report), "--name", "r"]);
    // The visitor (nobody) sees none of them, tags its own, and cannot
    // name a file in a folder it cannot open.
    let v = |args: &[&str]| {
        let o = visitor.run(args);
        (o.status.code(), text(&o))
    };
    assert_eq!(v(&["search", "tag:roots-own"]).0, Some(1));
    assert_eq!(v(&["bookmark", "list"]), (Some(0), String::new()));
    assert_eq!(v(&["tag", "list"]), (Some(0), String::new()));
    let (code, out) = v(&["tag", "add", s(&report), "visitors"]);
    assert_eq!(code, Some(0), "{out}");
    let (code, out) = v(&["tag", "add", s(&secret), "visitors"]);
    assert_eq!(code, Some(2), "{out}");
    assert!(out.contains("not in the index"), "{out}");
    let (code, out) = v(&["search", "tag:visitors", "-0"]);
    assert_eq!((code, out.trim_end_matches('\0')), (Some(0), s(&report)));
    let (_, out) = v(&["tag", "list", s(&report), "--json"]);
    let tags: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        tags["tags"],
        serde_json::json!([{"name": "visitors", "source": "user"}])
    );
    // And root does not see the visitor's.
    assert!(tagged(&inst, "visitors").is_empty());
    assert_eq!(tagged(&inst, "roots-own"), set(&[&report, &secret]));
}

/// The poll backend hears of no change: an attribute written with
/// `setfattr` changes neither size nor mtime, so it is read at the next
/// scan of the root (what a user of that backend runs, or waits for).
fn rescan_if_polling(inst: &Instance, tree: &Path) {
    if crate::util::polling() {
        let out = inst.fsctl(&["scan", "--wait", tree.to_str().unwrap()]);
        assert!(out.status.success(), "{}", text(&out));
    }
}

fn setfattr(args: &[&str], file: &Path) {
    let out = Command::new("setfattr")
        .args(args)
        .arg(file)
        .output()
        .unwrap();
    assert!(out.status.success(), "setfattr {args:?}: {}", text(&out));
}

/// What `getfattr` reads back of `user.xdg.tags`, split as KDE writes it:
/// the oracle for what the index should hold.
fn getfattr_tags(file: &Path) -> Vec<String> {
    let out = Command::new("getfattr")
        .args(["--only-values", "-n", "user.xdg.tags"])
        .arg(file)
        .output()
        .unwrap();
    if !out.status.success() {
        return Vec::new();
    }
    let mut tags: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .split(',')
        .map(|t| t.trim().to_owned())
        .filter(|t| !t.is_empty())
        .collect();
    tags.sort_by_key(|t| t.to_lowercase());
    tags
}

/// The tags `fsctl tag list PATH` shows from the file system, by name.
fn xattr_tags_of(inst: &Instance, p: &Path) -> Vec<String> {
    tags_of(inst, p)
        .into_iter()
        .filter(|(_, source)| source == "xattr")
        .map(|(name, _)| name)
        .collect()
}

#[test]
fn tags_other_programs_wrote_in_user_xdg_tags_are_read_and_followed_live() {
    let tmp = tempfile::tempdir().unwrap();
    let tree = tmp.path().join("tree");
    write_file(&tree, "photos/beach.jpg", b"jpg");
    write_file(&tree, "photos/city.jpg", b"jpg");
    write_file(&tree, "docs/plan.odt", b"odt");
    let beach = tree.join("photos/beach.jpg");
    let city = tree.join("photos/city.jpg");
    let plan = tree.join("docs/plan.odt");
    // Written before the daemon starts, as Dolphin writes them.
    setfattr(&["-n", "user.xdg.tags", "-v", "Holiday,beach"], &beach);
    setfattr(
        &["-n", "user.xdg.tags", "-v", "holiday"],
        &tree.join("photos"),
    );
    let mut inst = Instance::new(tmp.path().join("home"), &[&tree], Runner::current());
    inst.start();
    let within = std::time::Duration::from_secs(20);
    util::eventually(within, "the tags written before the start", || {
        tagged(&inst, "holiday") == set(&[&beach, &tree.join("photos")])
    });
    assert_eq!(xattr_tags_of(&inst, &beach), getfattr_tags(&beach));
    assert_eq!(tagged(&inst, "BEACH"), set(&[&beach]));

    // Changed while the daemon runs: added, changed, removed.
    setfattr(&["-n", "user.xdg.tags", "-v", "work,Q3 plan"], &plan);
    rescan_if_polling(&inst, &tree);
    util::eventually(within, "a tag added with setfattr", || {
        tagged(&inst, "\"q3 plan\"") == set(&[&plan])
    });
    assert_eq!(xattr_tags_of(&inst, &plan), getfattr_tags(&plan));
    setfattr(&["-n", "user.xdg.tags", "-v", "beach"], &beach);
    rescan_if_polling(&inst, &tree);
    util::eventually(within, "a tag taken out with setfattr", || {
        tagged(&inst, "holiday") == set(&[&tree.join("photos")])
    });
    assert_eq!(xattr_tags_of(&inst, &beach), getfattr_tags(&beach));
    setfattr(&["-x", "user.xdg.tags"], &tree.join("photos"));
    rescan_if_polling(&inst, &tree);
    util::eventually(within, "the attribute removed", || {
        tagged(&inst, "holiday").is_empty()
    });

    // One name from both sources: listed once per source, found once.
    ok(&inst, &["tag", "add", s(&city), "work"]);
    setfattr(&["-n", "user.xdg.tags", "-v", "work"], &city);
    rescan_if_polling(&inst, &tree);
    util::eventually(within, "the file's own tag beside the user's", || {
        tags_of(&inst, &city).len() == 2
    });
    assert_eq!(
        tags_of(&inst, &city),
        [
            ("work".into(), "user".into()),
            ("work".into(), "xattr".into())
        ]
    );
    assert_eq!(tagged(&inst, "work"), set(&[&plan, &city]));
    let out = inst.fsctl(&["tag", "list", "--json"]);
    let work: Vec<Value> = json_lines(&out)
        .into_iter()
        .filter(|v| v["name"] == "work")
        .collect();
    assert_eq!(
        work,
        [
            serde_json::json!({"name": "work", "source": "user", "entries": 1}),
            serde_json::json!({"name": "work", "source": "xattr", "entries": 2}),
        ]
    );
    // The attribute moves with the file, and so do its tags.
    run("mv", &[s(&plan), s(&tree.join("plan-final.odt"))], &tree);
    sync(&inst);
    assert_eq!(
        tagged(&inst, "\"q3 plan\""),
        set(&[&tree.join("plan-final.odt")])
    );
    // And they survive a restart.
    inst.stop();
    inst.start();
    assert_eq!(
        tagged(&inst, "\"q3 plan\""),
        set(&[&tree.join("plan-final.odt")])
    );
}

#[test]
fn mcp_agents_tag_and_bookmark_without_allow_write_through_the_python_sdk() {
    use crate::mcp::{abs, setup};
    use crate::mcp_clients::{answer, sdk_session};
    let s = setup();
    let (tree, inst) = (&s.tree, &s.inst);
    let outside = tree.parent().unwrap().join("outside");
    let steps = serde_json::json!([
        {"call": "add_tags", "arguments": {"path": "docs/notes.txt", "tags": ["Receipts", "2025"]}},
        {"call": "add_tags", "arguments": {"path": "docs/report-2025.pdf", "tags": ["receipts"]}},
        {"call": "find_files", "arguments": {"query": "tag:receipts", "sortBy": "path"}},
        {"call": "list_tags", "arguments": {}},
        {"call": "remove_tags", "arguments": {"path": "docs/notes.txt", "tags": ["2025"]}},
        {"call": "list_tags", "arguments": {"path": "docs/notes.txt"}},
        {"call": "add_bookmark", "arguments": {"path": "docs"}},
        {"call": "list_bookmarks", "arguments": {}},
        {"call": "remove_bookmark", "arguments": {"nameOrPath": "docs"}},
        {"call": "list_bookmarks", "arguments": {}},
        // Refused: outside the allowed directories, a bad tag, a bookmark twice.
        {"call": "add_tags", "arguments": {"path": outside.to_str().unwrap(), "tags": ["x"]}, "error": true},
        {"call": "add_tags", "arguments": {"path": "docs/notes.txt", "tags": ["a,b"]}, "error": true},
        {"call": "add_bookmark", "arguments": {"path": "src", "name": "code"}},
        {"call": "add_bookmark", "arguments": {"path": "src"}, "error": true},
    ]);
    let lines = sdk_session(inst, tree, &[], 32 << 10, &[], &steps);
    let notes = abs(tree, "docs/notes.txt");
    let report = abs(tree, "docs/report-2025.pdf");
    let names = |v: &Value| -> Vec<String> {
        v["tags"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect()
    };
    let first = &answer(&lines, "add_tags", 0)["structured"];
    assert_eq!(first["path"], notes.as_str());
    assert_eq!(names(first), ["2025", "Receipts"]);
    let found: Vec<&str> = answer(&lines, "find_files", 0)["structured"]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["path"].as_str().unwrap())
        .collect();
    assert_eq!(found, [notes.as_str(), report.as_str()]);
    let all = &answer(&lines, "list_tags", 0)["structured"]["tags"];
    assert_eq!(
        *all,
        serde_json::json!([
            {"name": "2025", "source": "user", "entries": 1},
            {"name": "Receipts", "source": "user", "entries": 2},
        ])
    );
    assert_eq!(
        names(&answer(&lines, "list_tags", 1)["structured"]),
        ["Receipts"]
    );
    assert_eq!(
        answer(&lines, "list_bookmarks", 0)["structured"]["bookmarks"],
        serde_json::json!([{"name": "docs", "path": abs(tree, "docs"), "type": "dir"}])
    );
    assert_eq!(
        answer(&lines, "list_bookmarks", 1)["structured"]["bookmarks"],
        serde_json::json!([])
    );
    let refused: Vec<&str> = lines
        .iter()
        .filter(|l| l["isError"] == true)
        .map(|l| l["text"].as_str().unwrap())
        .collect();
    assert_eq!(refused.len(), 3, "{refused:?}");
    assert!(refused[1].contains("comma"), "{}", refused[1]);
    assert!(
        refused[2].contains("bookmarked already, as `code`"),
        "{}",
        refused[2]
    );
    // The daemon holds them for every client: fsctl sees what the agent set,
    // and the files themselves are untouched.
    assert_eq!(
        tags_of(inst, Path::new(&notes)),
        [("Receipts".into(), "user".into())]
    );
    assert_eq!(
        std::fs::read(&notes).unwrap(),
        b"caf\xe9 cr\xe8me\nligne deux\nligne trois\n"
    );
}

/// `fsctl info`, the Stat RPC and MCP `get_file_info` show an entry's tags:
/// the user's (`user`) and the file's own from `user.xdg.tags` (`xattr`),
/// apart; the oracle is what the test tagged and what `getfattr` reads.
#[test]
fn info_and_get_file_info_show_your_tags_and_the_files_own_apart() {
    use crate::mcp::Mcp;
    let tmp = tempfile::tempdir().unwrap();
    let tree = tmp.path().join("tree");
    write_file(&tree, "docs/plan.odt", b"odt");
    write_file(&tree, "docs/plain.txt", b"txt");
    let plan = tree.join("docs/plan.odt");
    setfattr(&["-n", "user.xdg.tags", "-v", "work,Q3 plan"], &plan);
    let mut inst = Instance::new(tmp.path().join("home"), &[&tree], Runner::current());
    inst.start();
    util::eventually(
        std::time::Duration::from_secs(20),
        "the file's own tags",
        || xattr_tags_of(&inst, &plan) == getfattr_tags(&plan),
    );
    ok(&inst, &["tag", "add", s(&plan), "receipts", "2025"]);

    let mut want: Vec<(String, String)> = ["receipts", "2025"]
        .iter()
        .map(|t| (t.to_string(), "user".to_owned()))
        .chain(
            getfattr_tags(&plan)
                .into_iter()
                .map(|t| (t, "xattr".to_owned())),
        )
        .collect();
    want.sort_by_key(|(t, src)| (t.to_lowercase(), src.clone()));
    let pairs = |v: &Value| -> Vec<(String, String)> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|t| {
                (
                    t["name"].as_str().unwrap().to_owned(),
                    t["source"].as_str().unwrap().to_owned(),
                )
            })
            .collect()
    };
    let info = inst.json(&["info", s(&plan)]);
    assert_eq!(pairs(&info["tags"]), want);
    // A file without tags has no `tags` key.
    assert!(
        inst.json(&["info", s(&tree.join("docs/plain.txt"))])
            .get("tags")
            .is_none()
    );
    // Text: yours on one line, the file's on another.
    let out = inst.fsctl(&["info", s(&plan)]);
    let shown = String::from_utf8(out.stdout).unwrap();
    assert!(shown.contains("\ntags       2025, receipts\n"), "{shown}");
    assert!(
        shown.contains("\nfile tags  Q3 plan, work (user.xdg.tags)\n"),
        "{shown}"
    );

    let mcp = Mcp::start(&inst, &tree, &[]);
    let got = mcp.ok("get_file_info", serde_json::json!({"path": s(&plan)}));
    assert_eq!(pairs(&got["tags"]), want);
}
