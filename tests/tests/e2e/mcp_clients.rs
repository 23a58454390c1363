//! `fsctl mcp` driven by the official MCP clients, as an agent developer
//! would drive it: the Inspector CLI (`npx @modelcontextprotocol/inspector
//! --cli`, Node) passing every tool's numbers and booleans as the strings
//! a command line has, and the Python SDK (`mcp`), which validates every
//! answer against the tool's output schema. Both are pinned in
//! tests/mcp-clients and installed by tests/setup.sh; a missing one fails
//! these tests with what to run, never skips them.
//!
//! The Python session (tests/mcp-clients/sdk_session.py) also checks, for
//! every answer, that its text and its structured content each fit the
//! byte budget and that the text carries every string and number of the
//! structured content; these tests add their own oracles on top.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

use super::mcp::{TOOLS, abs, setup, walk};
use crate::util::{Instance, Runner, bin_dir, wide_tree};

fn clients() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("mcp-clients")
}

/// The Inspector CLI, or a failure saying how to install it.
fn inspector() -> Command {
    let bin = clients().join("node_modules/.bin/mcp-inspector");
    assert!(
        bin.exists(),
        "the MCP Inspector CLI is not installed: run tests/setup.sh (npm ci --prefix tests/mcp-clients); {} is missing",
        bin.display()
    );
    let mut c = Command::new(bin);
    c.arg("--cli");
    c
}

/// python3 with the MCP SDK, or a failure saying how to install it.
fn python_sdk() -> Command {
    let ok = Command::new("python3")
        .args(["-c", "import mcp.client.stdio"])
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        ok,
        "the MCP Python SDK is not installed: run tests/setup.sh (python3 -m pip install -r tests/mcp-clients/requirements.txt)"
    );
    let mut c = Command::new("python3");
    c.arg(clients().join("sdk_session.py"));
    c
}

/// The environment `fsctl mcp` needs to reach `inst`'s daemon.
fn mcp_env(c: &mut Command, inst: &Instance, home: &Path) {
    c.env("FSINDEX_HOME", &inst.home)
        .env("FSINDEX_NO_SPAWN", "1")
        .env_remove("FSINDEX_SOCKET")
        .env("HOME", home);
}

/// One tools/call through the Inspector CLI: its JSON answer.
fn inspect(inst: &Instance, home: &Path, tool: &str, args: &[(&str, String)]) -> Value {
    let mut c = inspector();
    c.arg(bin_dir().join("fsctl")).arg("mcp");
    c.args(["--method", "tools/call", "--tool-name", tool]);
    for (k, v) in args {
        c.arg("--tool-arg").arg(format!("{k}={v}"));
    }
    mcp_env(&mut c, inst, home);
    let out = c.stdin(Stdio::null()).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "inspector {tool} {args:?}: {stdout}{stderr}"
    );
    assert!(
        !stderr.contains("unknown format"),
        "inspector {tool}: the schemas still hold formats it does not know: {stderr}"
    );
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("inspector {tool}: {e}: {stdout}"))
}

#[test]
fn mcp_inspector_cli_calls_every_tool_with_typed_arguments() {
    let s = setup();
    let (tree, inst) = (&s.tree, &s.inst);
    let t = tree.to_str().unwrap().to_owned();
    // tools/list: plain types the Inspector converts its strings by.
    let mut c = inspector();
    c.arg(bin_dir().join("fsctl"))
        .arg("mcp")
        .args(["--method", "tools/list"]);
    mcp_env(&mut c, inst, tree);
    let out = c.stdin(Stdio::null()).output().unwrap();
    let listed: Value = serde_json::from_slice(&out.stdout).unwrap();
    let tools = listed["tools"].as_array().unwrap();
    assert_eq!(tools.len(), TOOLS.len());
    for tool in tools {
        assert!(tool["title"].is_string(), "{}: no title", tool["name"]);
        for (k, p) in tool["inputSchema"]["properties"].as_object().unwrap() {
            assert!(
                p["type"].is_string() && p.get("format").is_none(),
                "{}.{k}: {p}",
                tool["name"]
            );
        }
    }
    let a = |k: &'static str, v: &str| (k, v.to_owned());
    let calls: Vec<(&str, Vec<(&str, String)>)> = vec![
        ("list_allowed_directories", vec![]),
        (
            "find_files",
            vec![
                a("query", "report"),
                a("limit", "1"),
                a("minSize", "1"),
                a("sortBy", "path"),
            ],
        ),
        (
            "search_files",
            vec![a("path", &t), a("pattern", "**/*.rs"), a("limit", "2")],
        ),
        ("get_file_info", vec![a("path", "docs/notes.txt")]),
        (
            "list_directory",
            vec![a("path", &t), a("limit", "2"), a("sortBy", "size")],
        ),
        (
            "list_directory_with_sizes",
            vec![a("path", &t), a("limit", "2"), a("sortBy", "size")],
        ),
        (
            "directory_tree",
            vec![a("path", &t), a("maxDepth", "1"), a("maxEntries", "3")],
        ),
        (
            "disk_usage",
            vec![a("path", &t), a("top", "2"), a("depth", "2")],
        ),
        (
            "find_duplicates",
            vec![
                a("minSize", "1"),
                a("limit", "1"),
                a("summaryOnly", "false"),
                a("query", "copy2"),
            ],
        ),
        ("fs_map", vec![a("tokenBudget", "200")]),
        (
            "count_files",
            vec![a("groupBy", "extension"), a("query", "ext:rs")],
        ),
        ("recent_files", vec![a("limit", "3"), a("since", "3650d")]),
        ("folder_manifest", vec![a("path", "src"), a("limit", "2")]),
        ("list_projects", vec![a("limit", "2")]),
        (
            "read_text_file",
            vec![
                a("path", "big.txt"),
                a("head", "2"),
                a("lineNumbers", "true"),
                a("maxBytes", "1000"),
            ],
        ),
        (
            "search_file_content",
            vec![
                a("pattern", "println!(\""),
                a("literal", "true"),
                a("caseSensitive", "true"),
                a("contextLines", "1"),
                a("maxResults", "2"),
            ],
        ),
        (
            "check_move_plan",
            vec![a(
                "moves",
                r#"[{"from": "big.txt", "to": "archive/big.txt"}]"#,
            )],
        ),
        // One chunk of four, then one of two: each runs in order.
        ("list_tags", vec![]),
        (
            "add_tags",
            vec![a("path", "docs/notes.txt"), a("tags", r#"["x", "y"]"#)],
        ),
        (
            "remove_tags",
            vec![a("path", "docs/notes.txt"), a("tags", r#"["y"]"#)],
        ),
        ("list_bookmarks", vec![]),
        ("list_saved_searches", vec![]),
        (
            "add_bookmark",
            vec![a("path", "docs"), a("name", "the docs")],
        ),
        ("remove_bookmark", vec![a("nameOrPath", "the docs")]),
    ];
    assert_eq!(calls.len(), TOOLS.len());
    // Four at a time: each call starts node, the Inspector and fsctl mcp.
    let answers: Vec<(String, Value)> = std::thread::scope(|sc| {
        let chunks: Vec<_> = calls
            .chunks(4)
            .map(|chunk| {
                sc.spawn(move || {
                    chunk
                        .iter()
                        .map(|(tool, args)| (tool.to_string(), inspect(inst, tree, tool, args)))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        chunks.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    for (tool, r) in &answers {
        assert_eq!(r["isError"], false, "{tool}: {r}");
        assert!(r["structuredContent"].is_object(), "{tool}: {r}");
        assert!(
            r["content"][0]["text"]
                .as_str()
                .is_some_and(|t| !t.is_empty()),
            "{tool}: {r}"
        );
    }
    let get = |name: &str| &answers.iter().find(|(t, _)| t == name).unwrap().1["structuredContent"];
    // Each number and boolean took effect, as the walk says it should.
    let found = get("find_files");
    assert_eq!(found["results"].as_array().unwrap().len(), 1);
    assert_eq!(
        found["results"][0]["path"],
        abs(tree, "docs/report-2024.pdf")
    );
    assert_eq!(found["total"], 2);
    assert_eq!(get("search_files")["paths"].as_array().unwrap().len(), 2);
    assert_eq!(
        get("list_directory")["entries"].as_array().unwrap().len(),
        2
    );
    assert_eq!(
        get("list_directory_with_sizes")["entries"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    assert_eq!(get("directory_tree")["entries"], 3);
    assert_eq!(get("disk_usage")["children"].as_array().unwrap().len(), 2);
    let d = get("find_duplicates");
    assert_eq!(d["groups"].as_array().unwrap().len(), 1, "{d}");
    assert_eq!(d["groupsTotal"], 1);
    assert!(get("fs_map")["tokens"].as_u64().unwrap() <= 200);
    assert_eq!(get("fs_map")["tokenBudget"], 200);
    let rs = walk(tree).keys().filter(|p| p.ends_with(".rs")).count();
    assert_eq!(get("count_files")["files"], rs);
    assert_eq!(get("recent_files")["results"].as_array().unwrap().len(), 3);
    assert_eq!(get("folder_manifest")["files"].as_array().unwrap().len(), 2);
    assert_eq!(
        get("read_text_file")["content"],
        "     1\tline 1\n     2\tline 2\n"
    );
    let m = get("search_file_content");
    assert_eq!(m["matches"][0]["path"], abs(tree, "src/main.rs"));
    assert_eq!(m["matches"][0]["before"], json!(["fn main() {"]));
    assert_eq!(get("check_move_plan")["ok"], true);
}

/// Runs one Python SDK session over `steps`; the JSON lines it printed.
pub(super) fn sdk_session(
    inst: &Instance,
    home: &Path,
    args: &[&str],
    budget: usize,
    roots: &[String],
    steps: &Value,
) -> Vec<Value> {
    let mut c = python_sdk();
    c.arg("--budget").arg(budget.to_string());
    for r in roots {
        c.arg("--root").arg(r);
    }
    c.arg("--")
        .arg(bin_dir().join("fsctl"))
        .arg("mcp")
        .args(args);
    mcp_env(&mut c, inst, home);
    c.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = c.spawn().unwrap();
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(steps.to_string().as_bytes()).unwrap();
    }
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "the Python SDK session failed:\n{}\n--- stdout\n{}",
        stderr,
        String::from_utf8_lossy(&out.stdout)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

pub(super) fn answer<'a>(lines: &'a [Value], tool: &str, nth: usize) -> &'a Value {
    lines
        .iter()
        .filter(|l| l["call"] == tool)
        .nth(nth)
        .unwrap_or_else(|| panic!("no answer {nth} of {tool}"))
}

#[test]
fn mcp_python_sdk_validates_every_answer_within_the_budget() {
    let s = setup();
    let (tree, inst) = (&s.tree, &s.inst);
    let t = tree.to_str().unwrap();
    let steps = json!([
        {"call": "list_allowed_directories"},
        {"call": "find_files", "arguments": {"query": "report", "limit": 1, "sortBy": "path"}},
        {"call": "find_files", "arguments": {"pattern": "*.rs", "type": "file", "minSize": 1}},
        {"call": "search_files", "arguments": {"path": t, "pattern": "**/*.{rs,txt}", "excludePatterns": ["src/deep/**"]}},
        {"call": "get_file_info", "arguments": {"path": "docs/notes.txt"}},
        {"call": "get_file_info", "arguments": {"path": t}},
        {"call": "list_directory", "arguments": {"path": t, "sortBy": "mtime"}},
        {"call": "list_directory_with_sizes", "arguments": {"path": t, "sortBy": "size", "limit": 3}},
        {"call": "directory_tree", "arguments": {"path": t, "maxDepth": 2}},
        {"call": "disk_usage", "arguments": {"path": t, "top": 0, "depth": 3}},
        {"call": "find_duplicates", "arguments": {}},
        {"call": "find_duplicates", "arguments": {"summaryOnly": true}},
        {"call": "find_duplicates", "arguments": {"query": "copy2", "kind": "text"}},
        {"call": "find_duplicates", "arguments": {"query": "copy2"}},
        {"call": "fs_map", "arguments": {"path": t, "tokenBudget": 300}},
        {"call": "count_files", "arguments": {"groupBy": "kind"}},
        {"call": "recent_files", "arguments": {"since": "2025-01-01", "limit": 1000}},
        {"call": "folder_manifest", "arguments": {"path": "src"}},
        {"call": "read_text_file", "arguments": {"path": "docs/notes.txt"}},
        {"call": "read_text_file", "arguments": {"path": "big.txt", "startLine": 10, "endLine": 12, "lineNumbers": true}},
        {"call": "search_file_content", "arguments": {"pattern": "todo", "contextLines": 1}},
        {"call": "check_move_plan", "arguments": {"moves": [{"from": "big.txt", "to": "archive/big.txt"}, {"from": "dupes/a/copy1.dat", "to": "archive/copy1.dat"}]}},
        // Refused, one line each: misspelt, out of bounds, wrong type, a binary file.
        {"call": "find_files", "arguments": {"qeury": "tax"}, "error": true},
        {"call": "fs_map", "arguments": {"tokenBudget": 0}, "error": true},
        {"call": "list_directory", "arguments": {"path": t, "limit": "many"}, "error": true},
        {"call": "read_text_file", "arguments": {"path": "blob.bin"}, "error": true},
    ]);
    let lines = sdk_session(inst, tree, &[], 32 << 10, &[], &steps);
    assert_eq!(lines.len(), 1 + steps.as_array().unwrap().len());
    // Oracles of its own, besides the session's checks.
    let walked = walk(tree);
    assert_eq!(answer(&lines, "find_files", 0)["structured"]["total"], 2);
    let rs: Vec<String> = walked
        .keys()
        .filter(|p| p.ends_with(".rs"))
        .map(|p| abs(tree, p))
        .collect();
    let mut got: Vec<String> = answer(&lines, "find_files", 1)["structured"]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["path"].as_str().unwrap().to_owned())
        .collect();
    got.sort();
    assert_eq!(
        got, rs,
        "pattern *.rs: every .rs file, by name at any depth"
    );
    let listed = &answer(&lines, "list_directory", 0)["structured"]["entries"];
    let mtimes: Vec<&str> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["mtime"].as_str().unwrap())
        .collect();
    let top = walked.keys().filter(|p| !p.contains('/')).count();
    assert_eq!(mtimes.len(), top);
    // Newest first, by the walk's own times.
    let times: Vec<std::time::SystemTime> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|e| walked[e["name"].as_str().unwrap()].modified().unwrap())
        .collect();
    assert!(
        times.windows(2).all(|w| w[0] >= w[1]),
        "list_directory sortBy mtime: newest first: {listed}"
    );
    // The filters: a query on a copy's path, and a kind none of them has.
    assert_eq!(
        answer(&lines, "find_duplicates", 2)["structured"]["groupsTotal"],
        0
    );
    let one = &answer(&lines, "find_duplicates", 3)["structured"];
    assert_eq!(one["groupsTotal"], 1);
    assert_eq!(
        one["groups"][0]["copies"],
        json!([
            [abs(tree, "dupes/a/copy1.dat")],
            [abs(tree, "dupes/b/copy2.dat")]
        ])
    );
    let summary = &answer(&lines, "find_duplicates", 1)["structured"];
    assert!(summary.get("groups").is_none());
    assert_eq!(
        summary["byExtension"],
        json!([{"extension": "dat", "groups": 1, "reclaimableBytes": 5000}])
    );
    let sized = &answer(&lines, "list_directory_with_sizes", 0)["structured"];
    assert_eq!(sized["entries"].as_array().unwrap().len(), 3);
    assert_eq!(sized["total"], top);
    assert!(sized["nextCursor"].is_string());
    let refused: Vec<&str> = lines
        .iter()
        .filter(|l| l["isError"] == true)
        .map(|l| l["text"].as_str().unwrap())
        .collect();
    assert!(
        refused[0].contains("unknown parameter `qeury`") && refused[0].contains("`query`"),
        "{}",
        refused[0]
    );
    assert!(
        refused[1].contains("tokenBudget") && refused[1].contains("16"),
        "{}",
        refused[1]
    );
    assert!(
        refused[2].contains("`limit` must be an integer"),
        "{}",
        refused[2]
    );
    assert!(refused[3].contains("not a text file"), "{}", refused[3]);
}

#[test]
fn mcp_python_sdk_pages_every_long_answer_within_a_small_budget() {
    let tmp = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(tmp.path()).unwrap();
    let tree = base.join("tree");
    wide_tree(&tree, 30, 80);
    let lines: String = (1..=5000)
        .map(|i| format!("line {i} \"quoted\" \\ back\n"))
        .collect();
    std::fs::write(tree.join("long.txt"), &lines).unwrap();
    for i in 0..30 {
        std::fs::write(
            tree.join(format!("d{i:04}/same-{i}.dat")),
            b"identical content",
        )
        .unwrap();
    }
    let mut inst = Instance::new(base.join("home"), &[&tree], Runner::current());
    inst.start();
    let t = tree.to_str().unwrap();
    let moves: Vec<Value> = (0..300)
        .map(|i| json!({"from": format!("d{:04}/inner/file-{}-{}.txt", i % 30, i % 30, i / 30), "to": format!("sorted/{i}.txt")}))
        .collect();
    let budget = 4096;
    let steps = json!([
        {"call": "find_files", "arguments": {"pattern": "file-*", "limit": 1000}},
        {"call": "search_files", "arguments": {"path": t, "pattern": "**/*.txt", "limit": 5000}},
        {"call": "list_directory", "arguments": {"path": format!("{t}/d0000/inner"), "limit": 5000}},
        {"call": "list_directory_with_sizes", "arguments": {"path": t}},
        {"call": "directory_tree", "arguments": {"path": t, "maxEntries": 10000}},
        {"call": "disk_usage", "arguments": {"path": t, "top": 100000, "depth": 100}},
        {"call": "find_duplicates", "arguments": {"limit": 1000}},
        {"call": "count_files", "arguments": {"groupBy": "folder"}},
        {"call": "recent_files", "arguments": {"limit": 1000}},
        {"call": "folder_manifest", "arguments": {"path": t, "limit": 5000}},
        {"call": "read_text_file", "arguments": {"path": "long.txt"}},
        {"call": "search_file_content", "arguments": {"pattern": "line", "maxResults": 1000}},
        {"call": "check_move_plan", "arguments": {"moves": moves}},
    ]);
    let out = sdk_session(
        &inst,
        &tree,
        &["--max-answer-bytes", &budget.to_string()],
        budget,
        &[],
        &steps,
    );
    // The session checked every answer against the budget; each long one
    // says it was cut and how to go on.
    for tool in [
        "find_files",
        "search_files",
        "list_directory",
        "disk_usage",
        "recent_files",
        "folder_manifest",
    ] {
        let a = answer(&out, tool, 0);
        assert!(
            a["structured"]["nextCursor"].is_string(),
            "{tool}: {}",
            a["text"]
        );
        assert!(
            a["text"].as_str().unwrap().contains("more: pass cursor"),
            "{tool}"
        );
    }
    assert_eq!(answer(&out, "find_files", 0)["structured"]["total"], 2400);
    assert_eq!(
        answer(&out, "directory_tree", 0)["structured"]["truncated"],
        true
    );
    assert!(
        answer(&out, "count_files", 0)["structured"]["groupsTotal"]
            .as_u64()
            .unwrap()
            >= 30
    );
    let read = &answer(&out, "read_text_file", 0)["structured"];
    assert_eq!(read["truncated"], true);
    let end = read["endLine"].as_u64().unwrap();
    assert!(end > 10 && end < 5000, "{end}");
    assert!(
        answer(&out, "read_text_file", 0)["text"]
            .as_str()
            .unwrap()
            .contains(&format!("startLine={}", end + 1))
    );
    let grep = &answer(&out, "search_file_content", 0)["structured"];
    assert_eq!(grep["matchesFound"], 1000);
    assert!(grep["matches"].as_array().unwrap().len() < 1000);
    let plan = &answer(&out, "check_move_plan", 0)["structured"];
    // 30 folders left, sorted/ made, and the base that gains it.
    assert_eq!(plan["foldersTotal"], 32);
    assert!(
        plan["folders"].as_array().unwrap().len() < 32,
        "cut at the budget"
    );
    // A page past the first reaches the rest: walk find_files to the end.
    let mut steps = Vec::new();
    let first = &answer(&out, "find_files", 0)["structured"];
    steps.push(json!({"call": "find_files", "arguments": {"pattern": "file-*", "limit": 1000, "cursor": first["nextCursor"]}}));
    let next = sdk_session(
        &inst,
        &tree,
        &["--max-answer-bytes", &budget.to_string()],
        budget,
        &[],
        &json!(steps),
    );
    let second = &answer(&next, "find_files", 0)["structured"];
    assert_eq!(second["offset"], first["results"].as_array().unwrap().len());
}

#[test]
fn mcp_python_sdk_roots_narrow_the_allowed_directories() {
    let s = setup();
    let (tree, inst) = (&s.tree, &s.inst);
    let uri = |rel: &str| format!("file://{}", tree.join(rel).display());
    let docs = tree.join("docs").to_string_lossy().into_owned();
    let src = tree.join("src").to_string_lossy().into_owned();
    let steps = json!([
        {"call": "list_allowed_directories"},
        {"call": "find_files", "arguments": {"query": "report"}},
        {"call": "get_file_info", "arguments": {"path": abs(tree, "src/main.rs")}, "error": true},
        {"roots": [uri("src"), "file:///etc"]},
        {"call": "list_allowed_directories"},
        {"call": "get_file_info", "arguments": {"path": "main.rs"}},
        {"call": "find_files", "arguments": {"query": "report"}},
        {"roots": ["file:///etc"]},
        {"call": "list_allowed_directories"},
        {"call": "find_files", "arguments": {"query": "report"}, "error": true},
    ]);
    let lines = sdk_session(inst, tree, &[], 32 << 10, &[uri("docs")], &steps);
    let dirs = |n: usize| {
        answer(&lines, "list_allowed_directories", n)["structured"]["directories"].clone()
    };
    assert_eq!(dirs(0), json!([docs]));
    assert_eq!(answer(&lines, "find_files", 0)["structured"]["total"], 2);
    assert_eq!(
        dirs(1),
        json!([src]),
        "/etc lies outside the daemon's roots"
    );
    assert_eq!(
        answer(&lines, "get_file_info", 1)["structured"]["path"],
        abs(tree, "src/main.rs")
    );
    assert_eq!(answer(&lines, "find_files", 1)["structured"]["total"], 0);
    assert_eq!(dirs(2), json!([]));
    assert!(
        answer(&lines, "find_files", 2)["text"]
            .as_str()
            .unwrap()
            .contains("no allowed directories")
    );
}
