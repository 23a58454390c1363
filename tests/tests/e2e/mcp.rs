//! `fsctl mcp`: the real rmcp client starts the real `fsctl mcp` against a
//! real daemon on a temp tree. Every answer is checked against `fsctl
//! --json`, GNU du, or the test's own walk of the tree.

use std::collections::{BTreeMap, BTreeSet};
use std::os::unix::fs::{MetadataExt, symlink};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, SystemTime};

use rmcp::model::{CallToolRequestParams, CallToolResult, Tool};
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};

use crate::util::{Instance, Runner, bin_dir, gnu_du, json_lines, wide_tree};

/// An MCP session with `fsctl mcp`, driven from a synchronous test.
pub(crate) struct Mcp {
    rt: tokio::runtime::Runtime,
    client: Option<RunningService<RoleClient, ()>>,
}

impl Mcp {
    /// Starts `fsctl mcp ARGS` for `inst`, with HOME pointed at `home`.
    pub(crate) fn start(inst: &Instance, home: &Path, args: &[&str]) -> Mcp {
        Mcp::start_with(inst, home, args, |_| {})
    }

    /// [`Mcp::start`], with the command adjusted first (e.g. spawning allowed).
    pub(crate) fn start_with(
        inst: &Instance,
        home: &Path,
        args: &[&str],
        adjust: impl FnOnce(&mut Command),
    ) -> Mcp {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let mut a = vec!["mcp"];
        a.extend_from_slice(args);
        let mut cmd = inst.fsctl_cmd(&a);
        cmd.env("HOME", home);
        adjust(&mut cmd);
        let client = rt.block_on(async {
            let transport = TokioChildProcess::new(tokio::process::Command::from(cmd))
                .expect("spawn fsctl mcp");
            ().serve(transport).await.expect("MCP initialize")
        });
        Mcp {
            rt,
            client: Some(client),
        }
    }

    pub(crate) fn client(&self) -> &RunningService<RoleClient, ()> {
        self.client.as_ref().unwrap()
    }

    pub(crate) fn tools(&self) -> Vec<Tool> {
        self.rt
            .block_on(self.client().list_all_tools())
            .expect("tools/list")
    }

    pub(crate) fn call(&self, name: &str, args: Value) -> CallToolResult {
        let Value::Object(map) = args else {
            panic!("arguments must be an object")
        };
        let params = CallToolRequestParams::new(name.to_owned()).with_arguments(map);
        self.rt
            .block_on(self.client().call_tool(params))
            .unwrap_or_else(|e| panic!("tools/call {name}: {e}"))
    }

    /// A call that may fail as a protocol error (an unknown tool).
    pub(crate) fn try_call(&self, name: &str, args: Value) -> Result<CallToolResult, String> {
        let Value::Object(map) = args else {
            panic!("arguments must be an object")
        };
        let params = CallToolRequestParams::new(name.to_owned()).with_arguments(map);
        self.rt
            .block_on(self.client().call_tool(params))
            .map_err(|e| e.to_string())
    }

    /// The structured answer of a call that must succeed (its text checked
    /// to be there too).
    pub(crate) fn ok(&self, name: &str, args: Value) -> Value {
        let r = self.call(name, args.clone());
        let text = text_of(&r);
        assert!(
            r.is_error != Some(true),
            "{name} {args}: unexpected error: {text}"
        );
        assert!(!text.is_empty(), "{name}: no text rendering");
        r.structured_content
            .unwrap_or_else(|| panic!("{name}: no structured content"))
    }

    /// The one line of a call that must be refused.
    pub(crate) fn refused(&self, name: &str, args: Value) -> String {
        let r = self.call(name, args.clone());
        let text = text_of(&r);
        assert_eq!(
            r.is_error,
            Some(true),
            "{name} {args}: expected a refusal, got {text}"
        );
        assert!(
            !text.trim_end().contains('\n') && !text.is_empty(),
            "{name}: a refusal is one line: {text:?}"
        );
        text
    }
}

impl Drop for Mcp {
    fn drop(&mut self) {
        if let Some(c) = self.client.take() {
            let _ = self.rt.block_on(c.cancel());
        }
    }
}

pub(crate) fn text_of(r: &CallToolResult) -> String {
    r.content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

pub(crate) fn strs(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap_or_else(|| panic!("not an array: {v}"))
        .iter()
        .map(|s| s.as_str().unwrap().to_owned())
        .collect()
}

fn at(days_after_2024: u64) -> SystemTime {
    // 2024-01-01T00:00:00Z
    SystemTime::UNIX_EPOCH + Duration::from_secs(1_704_067_200 + days_after_2024 * 86_400)
}

fn write(root: &Path, rel: &str, content: &[u8], mtime: SystemTime) {
    crate::util::write_at(root, rel, content, mtime);
}

/// The test tree, with an `outside` folder next to it and a symlink out.
fn mcp_tree(root: &Path, outside: &Path) {
    write(root, "docs/report-2024.pdf", b"%PDF one", at(60));
    write(root, "docs/report-2025.pdf", b"%PDF two, longer", at(400));
    write(
        root,
        "docs/notes.txt",
        b"caf\xe9 cr\xe8me\nligne deux\nligne trois\n",
        at(10),
    );
    write(root, "docs/utf16.txt", b"\xff\xfeh\0i\0\n\0", at(11));
    write(
        root,
        "src/main.rs",
        b"fn main() {\n    println!(\"hello\");\n}\n",
        at(500),
    );
    write(
        root,
        "src/lib.rs",
        b"pub fn lib() {}\n// TODO: more\n",
        at(501),
    );
    write(root, "src/deep/inner/mod.rs", b"// todo deep\n", at(502));
    for i in 1..=5 {
        let mut img = vec![0xffu8, 0xd8, 0, 0];
        img.extend(std::iter::repeat_n(i as u8, 100 * i));
        write(
            root,
            &format!("photos/IMG_{i:04}.jpg"),
            &img,
            at(100 + i as u64),
        );
    }
    write(root, "blob.bin", &[0, 1, 2, 0, 3, 10, 10], at(5));
    let dup: Vec<u8> = (0..5000u32).map(|i| (i * 7 % 251) as u8).collect();
    write(root, "dupes/a/copy1.dat", &dup, at(20));
    write(root, "dupes/b/copy2.dat", &dup, at(21));
    let big: String = (1..=3000).map(|i| format!("line {i}\n")).collect();
    write(root, "big.txt", big.as_bytes(), at(30));
    write(root, "plan/existing.txt", b"here", at(31));
    write(outside, "secret.txt", b"outside the tree", at(1));
    symlink(outside, root.join("link-out")).unwrap();
    symlink("docs/notes.txt", root.join("link-in")).unwrap();
}

/// Every entry below `root` (relative path -> lstat), the test's own walk.
pub(crate) fn walk(root: &Path) -> BTreeMap<String, std::fs::Metadata> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            let m = std::fs::symlink_metadata(e.path()).unwrap();
            let rel = e
                .path()
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            if m.is_dir() {
                stack.push(e.path());
            }
            out.insert(rel, m);
        }
    }
    out
}

/// RFC 3339 with nine fraction digits, so that strings sort as times.
fn sortable_time(t: &str) -> String {
    let t = t.trim_end_matches('Z');
    let (secs, frac) = t.split_once('.').unwrap_or((t, ""));
    format!("{secs}.{frac:0<9}")
}

pub(crate) fn abs(root: &Path, rel: &str) -> String {
    root.join(rel).to_string_lossy().into_owned()
}

pub(crate) const TOOLS: [&str; 24] = [
    "add_bookmark",
    "add_tags",
    "check_move_plan",
    "count_files",
    "directory_tree",
    "disk_usage",
    "find_duplicates",
    "find_files",
    "folder_manifest",
    "fs_map",
    "get_file_info",
    "list_allowed_directories",
    "list_bookmarks",
    "list_directory",
    "list_directory_with_sizes",
    "list_projects",
    "list_saved_searches",
    "list_tags",
    "read_text_file",
    "recent_files",
    "remove_bookmark",
    "remove_tags",
    "search_file_content",
    "search_files",
];

/// Tools that change the index's labels (never a file): served without
/// `--allow-write`, and not read-only.
pub(crate) const LABEL_WRITES: [&str; 4] =
    ["add_bookmark", "add_tags", "remove_bookmark", "remove_tags"];

pub(crate) struct Setup {
    pub(crate) _tmp: tempfile::TempDir,
    pub(crate) tree: PathBuf,
    pub(crate) inst: Instance,
}

pub(crate) fn setup() -> Setup {
    let tmp = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(tmp.path()).unwrap();
    let tree = base.join("tree");
    let outside = base.join("outside");
    mcp_tree(&tree, &outside);
    let mut inst = Instance::new(base.join("home"), &[&tree], Runner::current());
    inst.start();
    Setup {
        _tmp: tmp,
        tree,
        inst,
    }
}

#[test]
fn mcp_lists_every_tool_read_only_with_schemas() {
    let s = setup();
    let mcp = Mcp::start(&s.inst, &s.tree, &[]);
    let tools = mcp.tools();
    let names: BTreeSet<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names, TOOLS.into_iter().collect(), "tools/list");
    for t in &tools {
        let a = t
            .annotations
            .as_ref()
            .unwrap_or_else(|| panic!("{}: no annotations", t.name));
        let writes = LABEL_WRITES.contains(&t.name.as_ref());
        assert_eq!(
            (a.read_only_hint, a.open_world_hint),
            (Some(!writes), Some(false)),
            "{}",
            t.name
        );
        assert_eq!(
            t.input_schema.get("type"),
            Some(&json!("object")),
            "{}",
            t.name
        );
        let out = t
            .output_schema
            .as_ref()
            .unwrap_or_else(|| panic!("{}: no output schema", t.name));
        assert_eq!(out.get("type"), Some(&json!("object")), "{}", t.name);
        assert!(
            t.description.as_ref().is_some_and(|d| d.len() > 20),
            "{}: no description",
            t.name
        );
    }
    // The reference filesystem server's parameter names where the jobs overlap.
    let props = |name: &str| -> BTreeSet<String> {
        let t = tools.iter().find(|t| t.name == name).unwrap();
        t.input_schema["properties"]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect()
    };
    for (tool, want) in [
        ("search_files", &["path", "pattern", "excludePatterns"][..]),
        ("read_text_file", &["path", "head", "tail"][..]),
        ("list_directory_with_sizes", &["path", "sortBy"][..]),
        ("directory_tree", &["path", "excludePatterns"][..]),
        ("get_file_info", &["path"][..]),
        ("list_directory", &["path"][..]),
    ] {
        let have = props(tool);
        for w in want {
            assert!(have.contains(*w), "{tool} lacks {w}: {have:?}");
        }
    }
    let search = tools
        .iter()
        .find(|t| t.name == "search_file_content")
        .unwrap();
    let said = search.description.as_deref().unwrap();
    assert!(
        said.contains("read in parallel") && said.contains("content:"),
        "search_file_content must say it scans, and point at content: for the index: {said}"
    );
}

#[test]
fn mcp_answers_equal_fsctl_du_and_the_walk() {
    let s = setup();
    let (tree, inst) = (&s.tree, &s.inst);
    let mcp = Mcp::start(inst, tree, &[]);
    let all = walk(tree);
    let files: BTreeMap<&String, &std::fs::Metadata> =
        all.iter().filter(|(_, m)| !m.is_dir()).collect();
    let t = tree.to_str().unwrap();

    // list_allowed_directories: the daemon's roots.
    let dirs = mcp.ok("list_allowed_directories", json!({}));
    assert_eq!(strs(&dirs["directories"]), vec![t.to_owned()]);

    // find_files: the query language and the spelled-out fields.
    let found = mcp.ok("find_files", json!({"query": "report", "limit": 1000}));
    let cli = json_lines(&inst.fsctl(&["search", "report", "--json"]));
    let want: BTreeSet<String> = cli
        .iter()
        .map(|v| v["path"].as_str().unwrap().to_owned())
        .collect();
    let got: BTreeSet<String> = found["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["path"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(got, want, "find_files report");
    assert_eq!(found["total"].as_u64(), Some(want.len() as u64));
    for r in found["results"].as_array().unwrap() {
        let c = cli.iter().find(|c| c["path"] == r["path"]).unwrap();
        assert_eq!(
            (&r["size"], &r["mtime"], &r["type"]),
            (&c["size"], &c["mtime"], &c["type"])
        );
    }
    let pdfs = mcp.ok(
        "find_files",
        json!({"extensions": ["pdf"], "type": "file", "sortBy": "path"}),
    );
    let pdf_paths: Vec<String> = pdfs["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["path"].as_str().unwrap().to_owned())
        .collect();
    let want: Vec<String> = files
        .keys()
        .filter(|p| p.ends_with(".pdf"))
        .map(|p| abs(tree, p))
        .collect();
    assert_eq!(pdf_paths, want, "find_files extensions");
    let recent_pdf = mcp.ok(
        "find_files",
        json!({"extensions": ["pdf"], "modifiedAfter": "2025-01-01"}),
    );
    assert_eq!(recent_pdf["total"], 1, "{recent_pdf}");
    let big = mcp.ok(
        "find_files",
        json!({"minSize": 4000, "type": "file", "limit": 1000}),
    );
    let want: BTreeSet<String> = files
        .iter()
        .filter(|(_, m)| m.len() >= 4000)
        .map(|(p, _)| abs(tree, p))
        .collect();
    let got: BTreeSet<String> = big["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["path"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(got, want, "find_files minSize");
    let dirs_only = mcp.ok("find_files", json!({"type": "directory", "limit": 1000}));
    assert_eq!(
        dirs_only["total"].as_u64(),
        Some(all.values().filter(|m| m.is_dir()).count() as u64)
    );

    // search_files: globs on the path relative to `path`, as the reference.
    let glob = |pattern: &str, excludes: Value| -> Vec<String> {
        strs(
            &mcp.ok(
                "search_files",
                json!({"path": t, "pattern": pattern, "excludePatterns": excludes}),
            )["paths"],
        )
    };
    let rs: Vec<String> = all
        .keys()
        .filter(|p| p.ends_with(".rs"))
        .map(|p| abs(tree, p))
        .collect();
    assert_eq!(glob("**/*.rs", json!([])), rs);
    assert_eq!(glob("*.txt", json!([])), vec![abs(tree, "big.txt")]);
    assert_eq!(
        glob("**/*.rs", json!(["src/deep/**"])),
        vec![abs(tree, "src/lib.rs"), abs(tree, "src/main.rs")]
    );
    assert_eq!(
        glob("photos/IMG_000[12].jpg", json!([])),
        vec![
            abs(tree, "photos/IMG_0001.jpg"),
            abs(tree, "photos/IMG_0002.jpg")
        ]
    );

    // get_file_info: as `fsctl info --json`, plus the reference's keys.
    let info = mcp.ok("get_file_info", json!({"path": "docs/notes.txt"}));
    let cli = inst.json(&["info", &abs(tree, "docs/notes.txt")]);
    assert_eq!(info["path"], cli["path"]);
    assert_eq!(info["size"], cli["size"]);
    assert_eq!(info["modified"], cli["mtime"]);
    assert_eq!(info["encoding"], cli["encoding"]);
    assert_eq!(info["encoding"], "windows-1252");
    assert_eq!(info["lineCount"], cli["lines"]);
    assert_eq!(info["kind"], cli["kind"]);
    assert_eq!(info["mimeType"], cli["mime"]);
    assert_eq!(
        info["permissions"].as_str().unwrap(),
        format!("{:o}", files[&"docs/notes.txt".to_owned()].mode() & 0o777)
    );
    assert_eq!(
        (info["isFile"].as_bool(), info["isDirectory"].as_bool()),
        (Some(true), Some(false))
    );
    let dinfo = mcp.ok("get_file_info", json!({"path": t}));
    let (b, a) = gnu_du(&inst.runner, tree);
    assert_eq!(
        (
            dinfo["usage"]["bytes"].as_u64(),
            dinfo["usage"]["apparentBytes"].as_u64()
        ),
        (Some(b), Some(a))
    );

    // list_directory: as `fsctl ls --json`.
    let ls = mcp.ok("list_directory", json!({"path": abs(tree, "docs")}));
    let cli: BTreeSet<String> = json_lines(&inst.fsctl(&["ls", &abs(tree, "docs"), "--json"]))
        .iter()
        .map(|v| v["name"].as_str().unwrap().to_owned())
        .collect();
    let got: BTreeSet<String> = ls["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(got, cli);
    assert_eq!(ls["total"].as_u64(), Some(cli.len() as u64));
    let paged = mcp.ok("list_directory", json!({"path": t, "limit": 3}));
    assert_eq!(paged["entries"].as_array().unwrap().len(), 3);
    let rest = mcp.ok(
        "list_directory",
        json!({"path": t, "limit": 1000, "cursor": paged["nextCursor"]}),
    );
    assert_eq!(
        3 + rest["entries"].as_array().unwrap().len() as u64,
        paged["total"].as_u64().unwrap()
    );

    // list_directory_with_sizes: folders as du, files their size.
    let sized = mcp.ok(
        "list_directory_with_sizes",
        json!({"path": t, "sortBy": "size"}),
    );
    let entries = sized["entries"].as_array().unwrap();
    let top: Vec<&String> = all.keys().filter(|p| !p.contains('/')).collect();
    assert_eq!(entries.len(), top.len());
    for e in entries {
        let name = e["name"].as_str().unwrap();
        let m = &all[name];
        if m.is_dir() {
            assert_eq!(
                e["size"].as_u64(),
                Some(gnu_du(&inst.runner, &tree.join(name)).1),
                "{name}"
            );
        } else {
            assert_eq!(e["size"].as_u64(), Some(m.len()), "{name}");
        }
    }
    let sizes: Vec<u64> = entries
        .iter()
        .map(|e| e["size"].as_u64().unwrap())
        .collect();
    assert!(
        sizes.windows(2).all(|w| w[0] >= w[1]),
        "sorted by size: {sizes:?}"
    );
    assert_eq!(sized["totalApparentBytes"].as_u64(), Some(a));

    // directory_tree: the walk to a depth, with excludes.
    fn flatten(nodes: &Value, prefix: &str, out: &mut BTreeSet<String>) {
        for n in nodes.as_array().unwrap() {
            let p = format!("{prefix}{}", n["name"].as_str().unwrap());
            if let Some(ch) = n.get("children").filter(|c| c.is_array()) {
                flatten(ch, &format!("{p}/"), out);
            }
            out.insert(p);
        }
    }
    let tr = mcp.ok("directory_tree", json!({"path": t, "maxDepth": 2}));
    let mut got = BTreeSet::new();
    flatten(&tr["tree"], "", &mut got);
    let want: BTreeSet<String> = all
        .keys()
        .filter(|p| p.matches('/').count() < 2)
        .cloned()
        .collect();
    assert_eq!(got, want, "directory_tree maxDepth 2");
    assert_eq!(tr["truncated"], true, "src/deep holds more");
    let tr = mcp.ok(
        "directory_tree",
        json!({"path": t, "excludePatterns": ["photos", "**/*.pdf"]}),
    );
    let mut got = BTreeSet::new();
    flatten(&tr["tree"], "", &mut got);
    let want: BTreeSet<String> = all
        .keys()
        .filter(|p| !p.starts_with("photos") && !p.ends_with(".pdf"))
        .cloned()
        .collect();
    assert_eq!(got, want, "directory_tree excludePatterns");
    let capped = mcp.ok("directory_tree", json!({"path": t, "maxEntries": 5}));
    assert_eq!(capped["entries"], 5);

    // disk_usage: GNU du.
    let du = mcp.ok("disk_usage", json!({"path": t, "top": 0}));
    assert_eq!(
        (du["bytes"].as_u64(), du["apparentBytes"].as_u64()),
        (Some(b), Some(a))
    );
    for c in du["children"].as_array().unwrap() {
        let p = PathBuf::from(c["path"].as_str().unwrap());
        let (cb, ca) = gnu_du(&inst.runner, &p);
        assert_eq!(
            (c["bytes"].as_u64(), c["apparentBytes"].as_u64()),
            (Some(cb), Some(ca)),
            "{}",
            p.display()
        );
    }

    // find_duplicates: as `fsctl dupes --json`.
    let d = mcp.ok("find_duplicates", json!({}));
    let cli = json_lines(&inst.fsctl(&["dupes", t, "--json"]));
    let groups = |v: &[Value], key: &str| -> BTreeSet<Vec<String>> {
        v.iter()
            .map(|g| {
                let mut p: Vec<String> = match key {
                    "copies" => g["copies"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .flat_map(strs)
                        .collect(),
                    _ => strs(&g["paths"]),
                };
                p.sort();
                p
            })
            .collect()
    };
    assert_eq!(
        groups(d["groups"].as_array().unwrap(), "copies"),
        groups(&cli, "paths")
    );
    assert!(
        groups(d["groups"].as_array().unwrap(), "copies").contains(&vec![
            abs(tree, "dupes/a/copy1.dat"),
            abs(tree, "dupes/b/copy2.dat")
        ])
    );

    // fs_map: exactly `fsctl map`'s text, within the budget.
    let map = mcp.ok("fs_map", json!({"path": t, "tokenBudget": 300}));
    let cli = inst.fsctl(&["map", t, "--budget", "300"]);
    assert_eq!(
        map["text"].as_str().unwrap().trim_end(),
        String::from_utf8_lossy(&cli.stdout).trim_end()
    );
    assert!(map["tokens"].as_u64().unwrap() <= 300);

    // count_files: the walk, per extension, year and kind.
    let counts = mcp.ok("count_files", json!({"groupBy": "extension"}));
    let mut want: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    for (p, m) in &files {
        let name = p.rsplit('/').next().unwrap().to_lowercase();
        let key = match name.rsplit_once('.') {
            Some((stem, ext)) if !stem.is_empty() => ext.to_owned(),
            _ => "(none)".to_owned(),
        };
        let slot = want.entry(key).or_default();
        slot.0 += 1;
        slot.1 += m.len();
    }
    let got: BTreeMap<String, (u64, u64)> = counts["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| {
            (
                g["key"].as_str().unwrap().to_owned(),
                (g["files"].as_u64().unwrap(), g["bytes"].as_u64().unwrap()),
            )
        })
        .collect();
    assert_eq!(got, want, "count_files by extension");
    assert_eq!(counts["files"].as_u64(), Some(files.len() as u64));
    let years = mcp.ok(
        "count_files",
        json!({"query": "ext:pdf", "groupBy": "year"}),
    );
    assert_eq!(
        years["groups"],
        json!([{"key": "2025", "files": 1, "bytes": 16}, {"key": "2024", "files": 1, "bytes": 8}])
    );
    let kinds = mcp.ok("count_files", json!({"groupBy": "kind"}));
    let kind = |k: &str| {
        kinds["groups"]
            .as_array()
            .unwrap()
            .iter()
            .find(|g| g["key"] == k)
            .map_or(0, |g| g["files"].as_u64().unwrap())
    };
    assert_eq!(
        (kind("document"), kind("code"), kind("image")),
        (2, 3, 5),
        "{kinds}"
    );
    let by_kind_cli = |k: &str| {
        inst.json(&["search", &format!("kind:{k}"), "--count"])["total"]
            .as_u64()
            .unwrap()
    };
    assert_eq!(kind("text"), by_kind_cli("text"));
    let folders = mcp.ok("count_files", json!({"path": t, "groupBy": "folder"}));
    let src = folders["groups"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["key"] == "src/")
        .unwrap();
    assert_eq!(src["files"], 3);

    // recent_files: the walk's mtimes, newest first.
    let recent = mcp.ok("recent_files", json!({"limit": 1000}));
    let results = recent["results"].as_array().unwrap();
    let got: BTreeSet<String> = results
        .iter()
        .map(|r| r["path"].as_str().unwrap().to_owned())
        .collect();
    let want: BTreeSet<String> = files.keys().map(|p| abs(tree, p)).collect();
    assert_eq!(got, want, "recent_files: every file, no folder");
    let mtimes: Vec<String> = results
        .iter()
        .map(|r| sortable_time(r["mtime"].as_str().unwrap()))
        .collect();
    assert!(
        mtimes.windows(2).all(|w| w[0] >= w[1]),
        "newest first: {mtimes:?}"
    );
    let since = mcp.ok(
        "recent_files",
        json!({"since": "2025-01-01", "limit": 1000}),
    );
    let cutoff = at(366);
    let want: BTreeSet<String> = files
        .iter()
        .filter(|(_, m)| m.modified().unwrap() >= cutoff)
        .map(|(p, _)| abs(tree, p))
        .collect();
    let got: BTreeSet<String> = since["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["path"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(got, want, "recent_files since");

    // folder_manifest: one line per file, relative, with kind.
    let man = mcp.ok("folder_manifest", json!({"path": "src"}));
    let lines = man["files"].as_array().unwrap();
    let got: Vec<(String, String, u64)> = lines
        .iter()
        .map(|l| {
            (
                l["relativePath"].as_str().unwrap().to_owned(),
                l["kind"].as_str().unwrap().to_owned(),
                l["size"].as_u64().unwrap(),
            )
        })
        .collect();
    let mut want: Vec<(String, String, u64)> = files
        .iter()
        .filter_map(|(p, m)| {
            p.strip_prefix("src/")
                .map(|r| (r.to_owned(), "code".to_owned(), m.len()))
        })
        .collect();
    want.sort();
    assert_eq!(got, want, "folder_manifest");
    let page1 = mcp.ok("folder_manifest", json!({"path": "photos", "limit": 2}));
    assert_eq!(
        (
            page1["total"].as_u64(),
            page1["files"].as_array().unwrap().len()
        ),
        (Some(5), 2)
    );
    assert_eq!(page1["files"][0]["kind"], "image");

    // read_text_file: decoded, selected, capped; binary refused.
    let read = |args: Value| mcp.ok("read_text_file", args);
    let notes = read(json!({"path": "docs/notes.txt"}));
    assert_eq!(notes["content"], "café crème\nligne deux\nligne trois\n");
    assert_eq!(notes["encoding"], "windows-1252");
    assert_eq!(notes["totalLines"], 3);
    assert_eq!(
        read(json!({"path": "~/docs/notes.txt", "head": 1}))["content"],
        "café crème\n"
    );
    assert_eq!(
        read(json!({"path": "link-in", "tail": 1}))["content"],
        "ligne trois\n"
    );
    let u16 = read(json!({"path": abs(tree, "docs/utf16.txt")}));
    assert_eq!(
        (u16["content"].as_str(), u16["encoding"].as_str()),
        (Some("hi\n"), Some("UTF-16LE"))
    );
    assert_eq!(
        read(json!({"path": "big.txt", "tail": 2}))["content"],
        "line 2999\nline 3000\n"
    );
    let range =
        read(json!({"path": "big.txt", "startLine": 10, "endLine": 11, "lineNumbers": true}));
    assert_eq!(range["content"], "    10\tline 10\n    11\tline 11\n");
    let capped = read(json!({"path": "big.txt", "maxBytes": 100}));
    assert_eq!(capped["truncated"], true);
    assert!(capped["content"].as_str().unwrap().len() <= 100);
    let next = read(
        json!({"path": "big.txt", "startLine": capped["endLine"].as_u64().unwrap() + 1, "head": 1}),
    );
    assert_eq!(
        next["content"].as_str().unwrap(),
        format!("line {}\n", capped["endLine"].as_u64().unwrap() + 1)
    );
    let binary = mcp.refused("read_text_file", json!({"path": "blob.bin"}));
    assert!(
        binary.contains("not a text file") && binary.contains("7 bytes"),
        "{binary}"
    );
    let jpg = mcp.refused("read_text_file", json!({"path": "photos/IMG_0001.jpg"}));
    assert!(jpg.contains("kind image"), "{jpg}");

    // search_file_content: the test's own grep.
    let grep = |args: Value| -> Vec<(String, u64)> {
        mcp.ok("search_file_content", args)["matches"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| {
                (
                    m["path"].as_str().unwrap().to_owned(),
                    m["line"].as_u64().unwrap(),
                )
            })
            .collect()
    };
    let mut want = Vec::new();
    for (p, m) in &files {
        if !m.is_file() {
            continue;
        }
        let bytes = std::fs::read(tree.join(p)).unwrap();
        if bytes.contains(&0) {
            continue;
        }
        for (i, l) in String::from_utf8_lossy(&bytes).lines().enumerate() {
            if l.to_lowercase().contains("todo") {
                want.push((abs(tree, p), i as u64 + 1));
            }
        }
    }
    want.sort();
    assert_eq!(grep(json!({"pattern": "todo"})), want);
    assert_eq!(
        grep(json!({"pattern": "TODO", "caseSensitive": true})),
        vec![(abs(tree, "src/lib.rs"), 2)]
    );
    assert_eq!(
        grep(json!({"pattern": "println!(\"", "literal": true, "include": "*.rs"})),
        vec![(abs(tree, "src/main.rs"), 2)]
    );
    let ctx = mcp.ok(
        "search_file_content",
        json!({"pattern": "^line 1500$", "path": t, "contextLines": 1}),
    );
    assert_eq!(ctx["matches"][0]["before"], json!(["line 1499"]));
    assert_eq!(ctx["matches"][0]["after"], json!(["line 1501"]));
    let stopped = mcp.ok(
        "search_file_content",
        json!({"pattern": "line", "maxResults": 5}),
    );
    assert_eq!(
        (
            stopped["matches"].as_array().unwrap().len(),
            stopped["stopped"].as_str()
        ),
        (5, Some("maxResults"))
    );
    assert_eq!(stopped["method"], "scan");
}

#[test]
fn mcp_check_move_plan_finds_collisions_missing_sources_and_duplicates() {
    let s = setup();
    let tree = &s.tree;
    let mcp = Mcp::start(&s.inst, tree, &[]);
    let plan = mcp.ok(
        "check_move_plan",
        json!({"moves": [
            {"from": "docs/notes.txt", "to": "plan/existing.txt"},
            {"from": "docs/missing.txt", "to": "plan/x.txt"},
            {"from": "dupes/a/copy1.dat", "to": "sorted/copy1.dat"},
            {"from": "dupes/b/copy2.dat", "to": "sorted/copy2.dat"},
            {"from": "src/main.rs", "to": "sorted/same.rs"},
            {"from": "src/lib.rs", "to": "sorted/same.rs"},
            {"from": "src", "to": "src/deep/src2"},
        ]}),
    );
    assert_eq!(plan["ok"], false);
    let problems: BTreeSet<(String, Vec<u64>)> = plan["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["kind"].as_str().unwrap().to_owned(),
                p["moves"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|m| m.as_u64().unwrap())
                    .collect(),
            )
        })
        .collect();
    let want: BTreeSet<(String, Vec<u64>)> = [
        ("destinationExists", vec![0]),
        ("missingSource", vec![1]),
        ("collision", vec![4, 5]),
        ("intoOwnSubtree", vec![6]),
    ]
    .into_iter()
    .map(|(k, m)| (k.to_owned(), m))
    .collect();
    assert_eq!(problems, want, "{plan}");
    let dups = plan["duplicates"].as_array().unwrap();
    assert_eq!(dups.len(), 1, "{plan}");
    assert_eq!(
        strs(&dups[0]["paths"]),
        vec![
            abs(tree, "dupes/a/copy1.dat"),
            abs(tree, "dupes/b/copy2.dat")
        ]
    );
    // Only the folders the plan touches, each with what changes in it.
    let folders: BTreeMap<String, &Value> = plan["folders"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["path"].as_str().unwrap().to_owned(), f))
        .collect();
    let touched: BTreeSet<&str> = folders.keys().map(String::as_str).collect();
    assert_eq!(
        touched,
        [
            "./",
            "docs/",
            "dupes/a/",
            "dupes/b/",
            "plan/",
            "sorted/",
            "src/",
            "src/deep/"
        ]
        .into_iter()
        .collect(),
        "{plan}"
    );
    assert_eq!(folders["sorted/"]["created"], true);
    assert_eq!(
        strs(&folders["sorted/"]["added"]),
        vec!["copy1.dat", "copy2.dat", "same.rs"]
    );
    assert_eq!(strs(&folders["dupes/a/"]["removed"]), vec!["copy1.dat"]);
    assert_eq!(folders["dupes/a/"]["kept"], 0);
    // docs/ holds 4 entries; notes.txt leaves (missing.txt was never there).
    assert_eq!(strs(&folders["docs/"]["removed"]), vec!["notes.txt"]);
    assert_eq!(folders["docs/"]["kept"], 3);
    assert_eq!(strs(&folders["./"]["added"]), vec!["sorted/"]);
    assert!(
        !folders.contains_key("photos/"),
        "an untouched folder is not listed"
    );
    // Nothing was touched.
    assert!(tree.join("docs/notes.txt").is_file() && !tree.join("sorted").exists());

    // A clean plan, and a case-only rename onto itself.
    let clean = mcp.ok(
        "check_move_plan",
        json!({"moves": [{"from": "big.txt", "to": "archive/big.txt"}, {"from": "plan/existing.txt", "to": "plan/renamed.txt"}]}),
    );
    assert_eq!(
        (
            clean["ok"].as_bool(),
            clean["problems"].as_array().unwrap().len()
        ),
        (Some(true), 0),
        "{clean}"
    );
    // A destination whose parent is a file.
    let bad = mcp.ok(
        "check_move_plan",
        json!({"moves": [{"from": "big.txt", "to": "blob.bin/big.txt"}]}),
    );
    assert_eq!(bad["problems"][0]["kind"], "parentIsFile", "{bad}");
}

/// Every tool that takes a path, with that path set to `bad`.
fn path_calls(bad: &str) -> Vec<(&'static str, Value)> {
    vec![
        ("find_files", json!({"path": bad})),
        ("search_files", json!({"path": bad, "pattern": "**/*"})),
        ("get_file_info", json!({"path": bad})),
        ("list_directory", json!({"path": bad})),
        ("list_directory_with_sizes", json!({"path": bad})),
        ("directory_tree", json!({"path": bad})),
        ("disk_usage", json!({"path": bad})),
        ("find_duplicates", json!({"path": bad})),
        ("fs_map", json!({"path": bad})),
        ("count_files", json!({"path": bad})),
        ("recent_files", json!({"path": bad})),
        ("folder_manifest", json!({"path": bad})),
        ("list_projects", json!({"path": bad})),
        ("read_text_file", json!({"path": bad})),
        ("search_file_content", json!({"path": bad, "pattern": "x"})),
        (
            "check_move_plan",
            json!({"moves": [{"from": bad, "to": "moved.txt"}]}),
        ),
        (
            "check_move_plan",
            json!({"moves": [{"from": "big.txt", "to": bad}]}),
        ),
    ]
}

#[test]
fn mcp_every_path_tool_refuses_escapes_alike() {
    let s = setup();
    let tree = &s.tree;
    let mcp = Mcp::start(&s.inst, tree, &[]);
    let outside_abs = tree.parent().unwrap().join("outside/secret.txt");
    let outside_abs = outside_abs.to_str().unwrap();
    let denied = |p: &str| {
        format!("{p}: no such path under the allowed directories (see list_allowed_directories)")
    };
    for bad in [
        "../../etc/passwd",
        "../outside/secret.txt",
        "/etc/passwd",
        outside_abs,
        "link-out",
        "link-out/secret.txt",
        "~/../outside/secret.txt",
    ] {
        for (tool, args) in path_calls(bad) {
            let line = mcp.refused(tool, args);
            assert_eq!(line, denied(bad), "{tool} {bad}");
            assert!(!line.contains("outside the tree"), "{tool} leaked content");
        }
    }
    // A path that does not exist inside answers exactly the same way.
    for (tool, args) in path_calls("docs/no-such-file") {
        if tool == "check_move_plan" {
            continue; // a missing source is a finding there, tested above
        }
        assert_eq!(
            mcp.refused(tool, args),
            denied("docs/no-such-file"),
            "{tool}"
        );
    }
    for (tool, args) in path_calls("docs/notes.txt\0../../etc/passwd") {
        let line = mcp.refused(tool, args);
        assert!(line.contains("NUL"), "{tool}: {line}");
    }
    // `in:` inside a query is guarded too.
    let line = mcp.refused("find_files", json!({"query": "in:/etc passwd"}));
    assert_eq!(line, denied("/etc"));
}

#[test]
fn mcp_allow_narrows_the_allowed_directories() {
    let s = setup();
    let tree = &s.tree;
    let docs = tree.join("docs");
    let mcp = Mcp::start(&s.inst, tree, &["--allow", docs.to_str().unwrap()]);
    let dirs = mcp.ok("list_allowed_directories", json!({}));
    assert_eq!(
        strs(&dirs["directories"]),
        vec![docs.to_string_lossy().into_owned()]
    );
    assert_eq!(mcp.ok("find_files", json!({"query": "main"}))["total"], 0);
    assert_eq!(mcp.ok("find_files", json!({"query": "report"}))["total"], 2);
    mcp.refused("get_file_info", json!({"path": tree.join("src/main.rs")}));
    // Relative paths resolve against the allowed directory.
    assert_eq!(
        mcp.ok("get_file_info", json!({"path": "notes.txt"}))["size"].as_u64(),
        Some(std::fs::metadata(docs.join("notes.txt")).unwrap().len())
    );
    let d = mcp.ok("find_duplicates", json!({}));
    assert_eq!(d["groupsTotal"], 0, "copies outside --allow are not shown");
    // An --allow outside every root is refused at start.
    let out = s
        .inst
        .fsctl_cmd(&["mcp", "--allow", "/etc"])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty(), "stdout carries protocol only");
    assert!(String::from_utf8_lossy(&out.stderr).contains("not under any root"));
}

#[test]
fn mcp_find_files_pages_fifty_thousand_results() {
    let tmp = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(tmp.path()).unwrap();
    let tree = base.join("tree");
    wide_tree(&tree, 100, 500);
    let mut inst = Instance::new(base.join("home"), &[&tree], Runner::current());
    inst.start();
    // Under the default budget (32 KiB) a page of 1000 is cut short, and
    // the next page starts where it ended.
    let small = Mcp::start(&inst, &tree, &[]);
    let args = json!({"pattern": "file-*", "sortBy": "path", "limit": 1000});
    let p1 = small.ok("find_files", args.clone());
    let n1 = p1["results"].as_array().unwrap().len();
    assert!(n1 > 50 && n1 < 1000, "{n1}");
    let mut a = args.clone();
    a["cursor"] = p1["nextCursor"].clone();
    let p2 = small.ok("find_files", a);
    assert_eq!(p2["offset"], n1);
    let last = p1["results"][n1 - 1]["path"].as_str().unwrap();
    assert!(p2["results"][0]["path"].as_str().unwrap() > last);
    drop(small);
    // A budget that holds pages of 1000: 50 of them.
    let mcp = Mcp::start(&inst, &tree, &["--max-answer-bytes", "262144"]);
    let args = json!({"pattern": "file-*", "sortBy": "path"});
    let first = mcp.call("find_files", args.clone());
    let bytes = serde_json::to_vec(&first).unwrap().len();
    let first = first.structured_content.unwrap();
    assert_eq!(first["total"], 50_000);
    assert_eq!(
        first["results"].as_array().unwrap().len(),
        100,
        "a default page"
    );
    assert!(bytes < 64 << 10, "one page is small: {bytes} bytes");
    let mut seen: Vec<String> = Vec::new();
    let mut cursor = Value::Null;
    let mut pages = 0;
    loop {
        let mut a = args.clone();
        a["limit"] = json!(1000);
        if !cursor.is_null() {
            a["cursor"] = cursor.clone();
        }
        let r = mcp.call("find_files", a);
        let text = text_of(&r);
        let page = r.structured_content.unwrap();
        let results = page["results"].as_array().unwrap();
        assert!(results.len() <= 1000 && !results.is_empty());
        assert!(
            text.len() <= 256 << 10 && serde_json::to_vec(&page).unwrap().len() <= 256 << 10,
            "a page fits the budget: {} bytes of text",
            text.len()
        );
        assert!(
            text.starts_with(&format!(
                "50000 matches, {} shown from offset {}",
                results.len(),
                seen.len()
            )),
            "{}",
            &text[..200]
        );
        seen.extend(
            results
                .iter()
                .map(|r| r["path"].as_str().unwrap().to_owned()),
        );
        pages += 1;
        cursor = page.get("nextCursor").cloned().unwrap_or(Value::Null);
        if cursor.is_null() {
            break;
        }
    }
    assert_eq!(pages, 50);
    let mut want: Vec<String> = walk(&tree)
        .into_iter()
        .filter(|(_, m)| m.is_file())
        .map(|(p, _)| abs(&tree, &p))
        .collect();
    want.sort();
    let unique: BTreeSet<&String> = seen.iter().collect();
    assert_eq!(unique.len(), seen.len(), "no path twice across pages");
    let mut sorted = seen.clone();
    sorted.sort();
    assert_eq!(sorted, want, "the pages together are every file");
    // A cursor belongs to its request.
    let other = mcp.refused(
        "find_files",
        json!({"pattern": "inner", "cursor": first["nextCursor"]}),
    );
    assert!(other.contains("cursor"), "{other}");
}

#[test]
fn mcp_shell_smoke() {
    let tmp = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(tmp.path()).unwrap();
    let tree = base.join("tree");
    std::fs::create_dir_all(&tree).unwrap();
    std::fs::write(tree.join("hello-smoke.txt"), b"hi").unwrap();
    let mut inst = Instance::new(base.join("home"), &[&tree], Runner::current());
    inst.start();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("mcp-smoke.sh");
    let out = Command::new("bash")
        .arg(&script)
        .env("FSCTL", bin_dir().join("fsctl"))
        .env("FSINDEX_HOME", &inst.home)
        .env("TREE", &tree)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}: {}{}",
        script.display(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
