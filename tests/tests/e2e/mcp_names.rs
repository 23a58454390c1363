//! Names that are not plain text through `fsctl mcp`: Latin-1 bytes that
//! are not UTF-8, a newline, a right-to-left override, Hebrew, a literal
//! backslash. Each is listed, read, searched and planned through MCP, and
//! the name each answer shows, passed back as it is, reaches the bytes this
//! test wrote under it; a listing's text keeps one line per entry; a
//! folder whose name is not UTF-8 never breaks its parent's tree.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use serde_json::json;

use super::mcp::{Mcp, text_of};
use crate::util::{Instance, Runner};

/// Name bytes -> the content the test wrote under it.
fn names_tree(root: &Path) -> BTreeMap<Vec<u8>, Vec<u8>> {
    let names: [&[u8]; 6] = [
        b"caf\xe9-latin1.txt",
        b"report\n[FILE] passwords.txt",
        "invoice\u{202E}fdp.txt".as_bytes(),
        "שלום-עולם.txt".as_bytes(),
        b"back\\slash.txt",
        b"tab\there.txt",
    ];
    let mut out = BTreeMap::new();
    std::fs::create_dir_all(root).unwrap();
    for (i, n) in names.iter().enumerate() {
        let content = format!("content of name {i}: needle\n").into_bytes();
        std::fs::write(root.join(OsStr::from_bytes(n)), &content).unwrap();
        out.insert(n.to_vec(), content);
    }
    let dir = root.join(OsStr::from_bytes(b"d\xe9j\xe0"));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("inner.txt"), b"inside a Latin-1 folder: needle\n").unwrap();
    out
}

#[test]
fn mcp_names_that_are_not_plain_text_round_trip() {
    let tmp = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(tmp.path()).unwrap();
    let tree = base.join("tree");
    let written = names_tree(&tree);
    let mut inst = Instance::new(base.join("home"), &[&tree], Runner::current());
    inst.start();
    let mcp = Mcp::start(&inst, &tree, &[]);
    let t = tree.to_str().unwrap();

    // list_directory: one entry per name, one text line per entry.
    let r = mcp.call("list_directory", json!({"path": t}));
    let text = text_of(&r);
    let ls = r.structured_content.unwrap();
    let entries = ls["entries"].as_array().unwrap();
    assert_eq!(entries.len(), written.len() + 1, "{ls}");
    let rows: Vec<&str> = text.lines().filter(|l| l.starts_with('[')).collect();
    assert_eq!(rows.len(), entries.len(), "one line per entry:\n{text}");
    for row in &rows {
        assert_eq!(
            row.matches('\t').count(),
            2,
            "tabs only between fields: {row:?}"
        );
    }
    assert!(!text.contains('\u{202E}'), "no raw bidi override:\n{text}");
    // Each shown name, passed back, reaches the bytes written under it.
    let mut by_shown: BTreeMap<String, Vec<u8>> = BTreeMap::new();
    for e in entries {
        let name = e["name"].as_str().unwrap();
        assert!(!name.chars().any(char::is_control), "{name:?}");
        assert!(!name.contains('\u{202E}'), "{name:?}");
        if e["type"] == "dir" {
            continue;
        }
        // `report\n[FILE] passwords.txt` is a WARN-tier name (it says
        // "passwords"): read only when asked for explicitly.
        let read = mcp.ok(
            "read_text_file",
            json!({"path": format!("{t}/{name}"), "allowSensitive": true}),
        );
        let content = read["content"].as_str().unwrap().as_bytes().to_vec();
        let info = mcp.ok("get_file_info", json!({"path": name}));
        assert_eq!(info["size"].as_u64(), Some(content.len() as u64), "{name}");
        assert_eq!(info["path"], format!("{t}/{name}"));
        by_shown.insert(name.to_owned(), content);
    }
    let expect: [(&str, &[u8]); 6] = [
        ("caf\\xE9-latin1.txt", b"caf\xe9-latin1.txt"),
        (
            "report\\n[FILE] passwords.txt",
            b"report\n[FILE] passwords.txt",
        ),
        (
            "invoice\\u{202E}fdp.txt",
            "invoice\u{202E}fdp.txt".as_bytes(),
        ),
        ("שלום-עולם.txt", "שלום-עולם.txt".as_bytes()),
        ("back\\\\slash.txt", b"back\\slash.txt"),
        ("tab\\there.txt", b"tab\there.txt"),
    ];
    for (shown, bytes) in expect {
        assert_eq!(
            by_shown.get(shown),
            Some(&written[bytes]),
            "{shown}: {:?}",
            by_shown.keys().collect::<Vec<_>>()
        );
    }
    let latin1 = "caf\\xE9-latin1.txt";
    let newline = "report\\n[FILE] passwords.txt";

    // directory_tree: the Latin-1 folder and its child are there.
    let tr = mcp.ok("directory_tree", json!({"path": t}));
    let folder = tr["tree"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["type"] == "directory")
        .unwrap();
    assert_eq!(folder["name"], "d\\xE9j\\xE0");
    assert_eq!(folder["children"][0]["name"], "inner.txt");
    let inner = mcp.ok(
        "list_directory",
        json!({"path": format!("{t}/d\\xE9j\\xE0")}),
    );
    assert_eq!(inner["entries"][0]["name"], "inner.txt");
    assert_eq!(
        mcp.ok(
            "read_text_file",
            json!({"path": format!("{t}/d\\xE9j\\xE0/inner.txt")})
        )["content"],
        "inside a Latin-1 folder: needle\n"
    );

    // Search, by content and by name: the paths shown pass back.
    let grep = mcp.ok("search_file_content", json!({"pattern": "needle"}));
    let paths: Vec<&str> = grep["matches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths.len(), written.len() + 1, "{grep}");
    for p in &paths {
        mcp.ok("get_file_info", json!({"path": p}));
    }
    let found = mcp.ok("find_files", json!({"pattern": "*latin1*"}));
    assert_eq!(found["results"][0]["path"], format!("{t}/{latin1}"));
    let by_name = mcp.ok("find_files", json!({"pattern": "report*"}));
    assert_eq!(by_name["results"][0]["path"], format!("{t}/{newline}"));

    // check_move_plan: shown sources are found (no false missingSource),
    // and the folders it touches name them as shown.
    let plan = mcp.ok(
        "check_move_plan",
        json!({"moves": [
            {"from": latin1, "to": format!("sorted/{latin1}")},
            {"from": format!("{t}/{newline}"), "to": "sorted/report.txt"},
            {"from": "d\\xE9j\\xE0", "to": "sorted/folder"},
        ]}),
    );
    assert_eq!(plan["ok"], true, "{plan}");
    let root_change = plan["folders"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"] == "./")
        .unwrap();
    let removed: Vec<&str> = root_change["removed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(
        removed,
        vec![
            "caf\\xE9-latin1.txt",
            "d\\xE9j\\xE0",
            "report\\n[FILE] passwords.txt"
        ]
    );
    // Nothing moved.
    for n in written.keys() {
        assert!(tree.join(OsStr::from_bytes(n)).exists());
    }
}
