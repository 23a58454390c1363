//! Saved searches and history (issue 34), kept by the daemon for every
//! client: `fsctl search @NAME` lists exactly what the saved query's terms
//! select in the tree the test wrote (its own record, not our search);
//! an unknown name is refused with the saved names; saved searches survive
//! a restart and a `kill -9`; `fsctl history` lists what was searched,
//! newest first, with the counts the test knows; MCP agents run `@NAME`
//! and list saved searches through the official Python SDK, and their
//! queries are in the history; a machine-wide daemon keeps two users'
//! saved searches and histories apart.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Output;
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

use crate::security::{start_system, system_tree};
use crate::util::{Instance, Runner, json_lines, text, write_file};

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn ok(inst: &Instance, args: &[&str]) -> Output {
    let out = inst.fsctl(args);
    assert!(out.status.success(), "fsctl {args:?}: {}", text(&out));
    out
}

/// The refusal of `fsctl ARGS`: exit 2 and its one line.
fn refused(inst: &Instance, args: &[&str]) -> String {
    let out = inst.fsctl(args);
    assert_eq!(out.status.code(), Some(2), "fsctl {args:?}: {}", text(&out));
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// `fsctl search ARGS -0` as a set of paths.
fn found(inst: &Instance, args: &[&str]) -> BTreeSet<String> {
    inst.search0(args)
        .into_iter()
        .map(|p| String::from_utf8(p).unwrap())
        .collect()
}

/// `fsctl saved list --json` as (name, query).
fn saved(inst: &Instance) -> Vec<(String, String)> {
    json_lines(&ok(inst, &["saved", "list", "--json"]))
        .iter()
        .map(|v| {
            (
                v["name"].as_str().unwrap().to_owned(),
                v["query"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

/// `fsctl history --json [ARGS]` as (query, results, client), and every
/// line's time.
fn history(inst: &Instance, args: &[&str]) -> (Vec<(String, u64, String)>, Vec<i64>) {
    let mut a = vec!["history", "--json"];
    a.extend_from_slice(args);
    let lines = json_lines(&ok(inst, &a));
    let rows = lines
        .iter()
        .map(|v| {
            (
                v["query"].as_str().unwrap().to_owned(),
                v["results"].as_u64().unwrap(),
                v["client"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let times = lines
        .iter()
        .map(|v| {
            let t: jiff::Timestamp = v["at"].as_str().unwrap().parse().unwrap();
            t.as_millisecond()
        })
        .collect();
    (rows, times)
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

/// The files the tests write, relative to the tree.
const FILES: [&str; 7] = [
    "docs/tax-2025.pdf",
    "docs/tax-2024.pdf",
    "docs/notes.txt",
    "old/tax-2019.odt",
    "pics/a.jpg",
    "pics/b.png",
    "@home/readme.txt",
];

fn tree(root: &Path) {
    for f in FILES {
        write_file(root, f, f.as_bytes());
    }
}

/// The test's own answer: the files it wrote that `keep` selects, as
/// absolute paths.
fn oracle(root: &Path, keep: impl Fn(&str) -> bool) -> BTreeSet<String> {
    FILES
        .iter()
        .filter(|f| keep(f))
        .map(|f| s(&root.join(f)).to_owned())
        .collect()
}

#[test]
fn saved_searches_run_as_at_name_survive_restarts_and_unknown_names_list_the_saved() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("tree");
    tree(&root);
    let mut inst = Instance::new(tmp.path().join("home"), &[&root], Runner::current());
    inst.start();

    ok(&inst, &["saved", "add", "taxes", "ext:pdf", "tax"]);
    // Saved from a working directory: `in:` is made absolute, as for search.
    let out = inst
        .fsctl_cmd(&["saved", "add", "Pics", "in:pics", "--json"])
        .current_dir(&root)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let pics_query = format!("in:{}", s(&root.join("pics")));
    assert_eq!(json_lines(&out)[0]["query"], pics_query.as_str());
    assert_eq!(
        saved(&inst),
        [
            ("Pics".to_owned(), pics_query.clone()),
            ("taxes".to_owned(), "ext:pdf tax".to_owned())
        ]
    );

    let taxes = || oracle(&root, |f| f.ends_with(".pdf") && f.contains("tax"));
    assert_eq!(taxes().len(), 2);
    assert_eq!(found(&inst, &["@taxes"]), taxes());
    // With more terms: ANDed. Names compare case-insensitively.
    assert_eq!(
        found(&inst, &["@TAXES", "2025"]),
        oracle(&root, |f| f == "docs/tax-2025.pdf")
    );
    // `in:pics` holds the folder's files, not the folder itself.
    assert_eq!(
        found(&inst, &["@pics", "!kind:folder"]),
        oracle(&root, |f| f.starts_with("pics/"))
    );
    // Quoted, `@` is text: the folder named `@home` and what it holds.
    let home: BTreeSet<String> = [s(&root.join("@home")), s(&root.join("@home/readme.txt"))]
        .into_iter()
        .map(str::to_owned)
        .collect();
    assert_eq!(found(&inst, &["\"@home\""]), home);

    // Unknown: refused with the names saved and how to search for the text.
    let e = refused(&inst, &["search", "@home"]);
    assert!(e.contains("no saved search called `@home`"), "{e}");
    assert!(e.contains("saved: @Pics, @taxes"), "{e}");
    assert!(e.contains("\"@home\""), "{e}");
    let e = refused(&inst, &["search", "!@taxes"]);
    assert!(e.contains("stands alone"), "{e}");

    // Bad saves, each with its reason; nothing saved by them.
    let e = refused(&inst, &["saved", "add", "taxes", "ext:odt"]);
    assert!(e.contains("exists already"), "{e}");
    let e = refused(&inst, &["saved", "add", "my taxes", "x"]);
    assert!(e.contains("not allowed"), "{e}");
    let e = refused(&inst, &["saved", "add", "loop", "@taxes", "2025"]);
    assert!(e.contains("cannot call another"), "{e}");
    let e = refused(&inst, &["saved", "add", "broken", "size:>>1"]);
    assert!(e.contains("size:>>1"), "{e}");
    assert_eq!(saved(&inst).len(), 2);
    // --replace does replace.
    ok(
        &inst,
        &["saved", "add", "taxes", "--replace", "tax", "!ext:pdf"],
    );
    let replaced = || oracle(&root, |f| f.contains("tax") && !f.ends_with(".pdf"));
    assert_eq!(found(&inst, &["@taxes"]), replaced());

    // They are in the index: a clean restart and a kill -9 keep them.
    inst.stop();
    inst.start();
    assert_eq!(found(&inst, &["@taxes"]), replaced());
    inst.kill9();
    inst.start();
    assert_eq!(saved(&inst).len(), 2);
    assert_eq!(found(&inst, &["@taxes"]), replaced());

    ok(&inst, &["saved", "remove", "@taxes"]);
    assert_eq!(saved(&inst), [("Pics".to_owned(), pics_query)]);
    let e = refused(&inst, &["saved", "remove", "taxes"]);
    assert!(
        e.contains("no saved search called `@taxes`; saved: @Pics"),
        "{e}"
    );
}

#[test]
fn history_lists_searches_newest_first_with_their_counts_from_fsctl_and_mcp() {
    use crate::mcp::{abs, setup};
    use crate::mcp_clients::{answer, sdk_session};
    let before = now_ms();
    // fsctl, recording (FSINDEX_HISTORY=1 stands for a terminal).
    let st = setup();
    let (tree, inst) = (&st.tree, &st.inst);
    let search = |args: &[&str], history: Option<&str>| {
        let mut all = vec!["search"];
        all.extend_from_slice(args);
        let mut c = inst.fsctl_cmd(&all);
        if let Some(h) = history {
            c.env("FSINDEX_HISTORY", h);
        }
        c.output().unwrap()
    };
    let reports = search(&["report", "--limit", "1"], Some("1"));
    assert_eq!(reports.status.code(), Some(0), "{}", text(&reports));
    search(&["nothing-is-called-this"], Some("1"));
    // Not recorded: a refused query, a pipe, FSINDEX_HISTORY=0.
    search(&["size:>>1"], Some("1"));
    search(&["notes"], None);
    search(&["notes"], Some("0"));
    ok(inst, &["saved", "add", "pdfs", "ext:pdf"]);
    search(&["@pdfs"], Some("1"));

    // An agent: @NAME, its list of saved searches, an unknown name.
    let steps = json!([
        {"call": "list_saved_searches", "arguments": {}},
        {"call": "find_files", "arguments": {"query": "@pdfs", "sortBy": "path"}},
        {"call": "find_files", "arguments": {"query": "@nope"}, "error": true},
    ]);
    let lines = sdk_session(inst, tree, &[], 32 << 10, &[], &steps);
    assert_eq!(
        answer(&lines, "list_saved_searches", 0)["structured"]["savedSearches"][0]["query"],
        "ext:pdf"
    );
    let pdfs: Vec<String> = ["docs/report-2024.pdf", "docs/report-2025.pdf"]
        .iter()
        .map(|r| abs(tree, r))
        .collect();
    let got: Vec<&str> = answer(&lines, "find_files", 0)["structured"]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["path"].as_str().unwrap())
        .collect();
    assert_eq!(got, pdfs);
    let refusal = lines
        .iter()
        .find(|l| l["isError"] == true)
        .expect("@nope refused");
    assert!(
        refusal["text"]
            .as_str()
            .unwrap()
            .contains("no saved search called `@nope`; saved: @pdfs"),
        "{refusal}"
    );

    // A terminal records without being told (`script` gives fsctl one).
    let fsctl = crate::util::bin_dir().join("fsctl");
    let typed = std::process::Command::new("script")
        .args(["-qec", &format!("{} search notes", s(&fsctl)), "/dev/null"])
        .env("FSINDEX_HOME", &inst.home)
        .env("FSINDEX_NO_SPAWN", "1")
        .env_remove("FSINDEX_HISTORY")
        .output()
        .unwrap();
    assert!(typed.status.success(), "{}", text(&typed));

    let (rows, times) = history(inst, &[]);
    let two_reports = 2; // docs/report-2024.pdf, docs/report-2025.pdf
    assert_eq!(
        rows,
        [
            ("notes".to_owned(), 1, "fsctl".to_owned()),
            ("@pdfs".to_owned(), 2, "mcp".to_owned()),
            ("@pdfs".to_owned(), 2, "fsctl".to_owned()),
            ("nothing-is-called-this".to_owned(), 0, "fsctl".to_owned()),
            ("report".to_owned(), two_reports, "fsctl".to_owned()),
        ]
    );
    let after = now_ms();
    assert!(times.windows(2).all(|w| w[0] >= w[1]), "{times:?}");
    assert!(
        times.iter().all(|t| (before..=after).contains(t)),
        "{times:?}"
    );
    assert_eq!(history(inst, &["-n", "2"]).0, rows[..2]);
    // Text: when, how many, who, what.
    let out = ok(inst, &["history", "-n", "1"]);
    let line = String::from_utf8(out.stdout).unwrap();
    assert!(line.trim_end().ends_with("1  fsctl  notes"), "{line:?}");
}

#[test]
fn machine_wide_users_each_have_their_own_saved_searches_and_history() {
    let Some((t, root)) = system_tree() else {
        return;
    };
    tree(&root);
    crate::security::change("chmod", &["-R", "a+rX"], &root);
    let (inst, visitor) = start_system(t.path(), &root);
    let v = |args: &[&str]| {
        let o = visitor
            .cmd(args)
            .env("FSINDEX_HISTORY", "1")
            .output()
            .unwrap();
        (o.status.code(), text(&o))
    };
    // Root's.
    ok(&inst, &["saved", "add", "mine", "ext:pdf"]);
    let out = inst
        .fsctl_cmd(&["search", "@mine"])
        .env("FSINDEX_HISTORY", "1")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    // The visitor (nobody) sees none of them and cannot run them.
    assert_eq!(v(&["saved", "list"]), (Some(0), String::new()));
    assert_eq!(v(&["history"]), (Some(0), String::new()));
    let (code, out) = v(&["search", "@mine"]);
    assert_eq!(code, Some(2), "{out}");
    assert!(out.contains("no saved searches yet"), "{out}");
    // Its own of the same name means its own query.
    let (code, out) = v(&["saved", "add", "mine", "ext:png"]);
    assert_eq!(code, Some(0), "{out}");
    let (code, out) = v(&["search", "@mine", "-0"]);
    assert_eq!(
        (code, out.trim_end_matches('\0')),
        (Some(0), s(&root.join("pics/b.png")))
    );
    let (_, out) = v(&["history", "--json"]);
    let mine: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(mine.len(), 1, "{out}");
    assert_eq!(
        (&mine[0]["query"], &mine[0]["results"]),
        (&json!("@mine"), &json!(1))
    );
    // Root's are as they were.
    assert_eq!(saved(&inst), [("mine".to_owned(), "ext:pdf".to_owned())]);
    let (rows, _) = history(&inst, &[]);
    assert_eq!(rows, [("@mine".to_owned(), 2, "fsctl".to_owned())]);
}
