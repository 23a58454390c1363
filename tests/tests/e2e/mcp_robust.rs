//! `fsctl mcp` when things go wrong: protocol errors that name the
//! problem (a raw JSON-RPC client, so the codes are seen as sent), the
//! daemon killed in the middle of a session, a 10 MB log in a content
//! search, and a binary file it cannot read.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};

use super::mcp::{Mcp, setup, text_of};
use crate::util::{Instance, Runner};

/// `fsctl mcp` over raw JSON-RPC lines.
pub(crate) struct Raw {
    pub(crate) child: Child,
    stdin: ChildStdin,
    lines: mpsc::Receiver<String>,
    next: u64,
}

impl Raw {
    pub(crate) fn start(inst: &Instance, protocol: &str) -> Raw {
        let mut child = inst
            .fsctl_cmd(&["mcp"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for l in BufReader::new(stdout).lines() {
                let Ok(l) = l else { break };
                if tx.send(l).is_err() {
                    break;
                }
            }
        });
        let mut raw = Raw {
            child,
            stdin,
            lines,
            next: 0,
        };
        raw.request(
            "initialize",
            json!({"protocolVersion": protocol, "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}),
        );
        raw.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        raw
    }

    fn send(&mut self, v: Value) {
        writeln!(self.stdin, "{v}").unwrap();
        self.stdin.flush().unwrap();
    }

    /// A request and its reply (result or error).
    pub(crate) fn request(&mut self, method: &str, params: Value) -> Value {
        self.next += 1;
        let id = self.next;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let line = self
                .lines
                .recv_timeout(Duration::from_secs(60))
                .unwrap_or_else(|e| panic!("{method}: no reply: {e}"));
            let v: Value = serde_json::from_str(&line).unwrap();
            if v["id"] == id {
                return v;
            }
        }
    }
}

impl Drop for Raw {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn mcp_protocol_errors_name_the_problem() {
    let s = setup();
    for protocol in ["2025-06-18", "2025-11-25"] {
        let mut raw = Raw::start(&s.inst, protocol);
        // An unknown tool: -32602, with its name and the tools there are.
        let r = raw.request("tools/call", json!({"name": "read_fle", "arguments": {}}));
        assert_eq!(r["error"]["code"], -32602, "{r}");
        let m = r["error"]["message"].as_str().unwrap();
        assert!(
            m.contains("read_fle") && m.contains("read_text_file"),
            "{m}"
        );
        // No name: a malformed tools/call, -32602 (not -32601).
        let r = raw.request("tools/call", json!({"arguments": {"query": "x"}}));
        assert_eq!(r["error"]["code"], -32602, "{r}");
        assert!(
            r["error"]["message"]
                .as_str()
                .unwrap()
                .contains("params.name"),
            "{r}"
        );
        // Numbers and booleans as strings are taken.
        let r = raw.request(
            "tools/call",
            json!({"name": "read_text_file", "arguments": {"path": "big.txt", "head": "2", "lineNumbers": "true"}}),
        );
        assert_eq!(
            r["result"]["structuredContent"]["content"], "     1\tline 1\n     2\tline 2\n",
            "{r}"
        );
        // A misspelt parameter and a value out of bounds are refused by
        // name: a protocol error before 2025-11-25, a tool error the model
        // reads from it on (SEP-1303).
        for (args, words) in [
            (
                json!({"name": "find_files", "arguments": {"qeury": "tax"}}),
                ["`qeury`", "`query`"],
            ),
            (
                json!({"name": "fs_map", "arguments": {"tokenBudget": 0}}),
                ["`tokenBudget`", "16"],
            ),
        ] {
            let r = raw.request("tools/call", args.clone());
            let line = if protocol == "2025-06-18" {
                assert_eq!(r["error"]["code"], -32602, "{r}");
                r["error"]["message"].as_str().unwrap().to_owned()
            } else {
                assert_eq!(r["result"]["isError"], true, "{r}");
                r["result"]["content"][0]["text"]
                    .as_str()
                    .unwrap()
                    .to_owned()
            };
            for w in words {
                assert!(line.contains(w), "{args}: {line}");
            }
        }
    }
}

/// The pid in the status of `inst`'s daemon, whoever started it.
fn daemon_pid(inst: &Instance) -> u32 {
    inst.json(&["status"])["pid"].as_u64().unwrap() as u32
}

fn stop_pid(pid: u32) {
    let _ = Command::new("kill")
        .arg("-TERM")
        .arg(pid.to_string())
        .status();
    for _ in 0..600 {
        if !std::path::Path::new(&format!("/proc/{pid}")).exists() {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("fsindexd {pid} did not stop");
}

#[test]
fn mcp_session_goes_on_when_the_daemon_is_killed() {
    let mut s = setup();
    let tree = s.tree.clone();
    // Spawning allowed, as for any fsctl without --no-spawn.
    let mcp = Mcp::start_with(&s.inst, &tree, &[], |c| {
        c.env_remove("FSINDEX_NO_SPAWN");
    });
    let before = mcp.ok("find_files", json!({"query": "report"}));
    let old = daemon_pid(&s.inst);
    s.inst.kill9();
    let r = mcp.call("find_files", json!({"query": "report"}));
    let text = text_of(&r);
    assert!(r.is_error != Some(true), "{text}");
    assert!(
        text.contains("fsindexd was not running; started it"),
        "{text}"
    );
    let after = r.structured_content.unwrap();
    assert_eq!(after["total"], before["total"]);
    assert_eq!(after["notices"][0], "fsindexd was not running; started it");
    let new = daemon_pid(&s.inst);
    assert_ne!(new, old);
    // The next call needs nothing more.
    let again = mcp.call("get_file_info", json!({"path": "docs/notes.txt"}));
    assert!(again.structured_content.unwrap().get("notices").is_none());
    drop(mcp);
    stop_pid(new);

    // With spawning off, the answer says so, and how to start it.
    s.inst.start();
    let mcp = Mcp::start(&s.inst, &tree, &[]);
    s.inst.kill9();
    let line = mcp.refused("find_files", json!({"query": "report"}));
    assert!(
        line.contains("fsindexd is not running") && line.contains("--no-spawn"),
        "{line}"
    );
}

#[test]
fn mcp_content_search_reads_a_ten_megabyte_log_and_names_what_it_skips() {
    let tmp = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(tmp.path()).unwrap();
    let tree = base.join("tree");
    std::fs::create_dir_all(&tree).unwrap();
    let mut log = String::new();
    let mut n = 0;
    while log.len() < 10_000_000 {
        n += 1;
        log.push_str(&format!(
            "2025-01-01 line {n} ERROR disk full on /dev/sda{}\n",
            n % 7
        ));
    }
    std::fs::write(tree.join("huge.log"), &log).unwrap();
    std::fs::write(tree.join("small.txt"), "no error here\nERROR once\n").unwrap();
    std::fs::write(tree.join("blob.txt"), b"ERROR\0binary").unwrap();
    let mut inst = Instance::new(base.join("home"), &[&tree], Runner::current());
    inst.start();
    let mcp = Mcp::start(&inst, &tree, &[]);
    let r = mcp.ok(
        "search_file_content",
        json!({"pattern": "line 1234567? ERROR", "caseSensitive": true}),
    );
    let lines: Vec<u64> = r["matches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["line"].as_u64().unwrap())
        .collect();
    let want: Vec<u64> = log
        .lines()
        .enumerate()
        .filter(|(_, l)| l.contains("line 123456 ERROR") || l.contains("line 1234567 ERROR"))
        .map(|(i, _)| i as u64 + 1)
        .collect();
    assert!(!want.is_empty());
    assert_eq!(lines, want, "{r}");
    assert_eq!(r["filesScanned"], 2);
    assert_eq!(r["filesSkipped"], 1);
    assert_eq!(
        r["skipped"][0]["path"],
        tree.join("blob.txt").to_str().unwrap()
    );
    assert!(
        r["skipped"][0]["reason"]
            .as_str()
            .unwrap()
            .contains("binary")
    );
    // Every line matches: it stops at maxResults, in the log too.
    let all = mcp.ok(
        "search_file_content",
        json!({"pattern": "ERROR", "maxResults": 50, "caseSensitive": true}),
    );
    assert_eq!(all["stopped"], "maxResults");
    assert_eq!(all["matches"].as_array().unwrap().len(), 50);
    assert!(
        all["matches"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["path"] == tree.join("huge.log").to_str().unwrap())
    );
}

#[test]
fn mcp_answers_during_the_first_scan_say_so() {
    let tmp = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(tmp.path()).unwrap();
    let tree = base.join("tree");
    crate::util::wide_tree(&tree, 300, 200);
    let mut inst = Instance::new(base.join("home"), &[&tree], Runner::current());
    inst.spawn();
    inst.wait_listening();
    let mcp = Mcp::start(&inst, &tree, &[]);
    let first_scan = |st: &Value| {
        let r = &st["roots"][0];
        (r["state"] == "scanning" || r["state"] == "pending") && r["scanned_at"] == 0
    };
    // A call between two statuses that both say "first scan" was answered
    // during it: its answer must say so. Until the scan ends.
    let mut during = 0;
    loop {
        let before = inst.status();
        let r = mcp.call("find_files", json!({"query": "file-1-"}));
        let after = inst.status();
        if first_scan(&before) && first_scan(&after) {
            during += 1;
            let text = text_of(&r);
            let want = format!("the first scan of {}", tree.display());
            assert!(
                text.contains(&want) && text.contains("results may be incomplete"),
                "{text}"
            );
            if r.is_error != Some(true) {
                let n = &r.structured_content.unwrap()["notices"];
                assert!(n[0].as_str().unwrap().contains(&want), "{n}");
            }
        }
        if after["state"] == "ready" {
            break;
        }
    }
    assert!(
        during > 0,
        "the first scan ended before a call could be made during it"
    );
    // Once it is done, nothing more is said.
    let r = mcp.call("find_files", json!({"query": "file-1-"}));
    assert!(!text_of(&r).contains("first scan"));
    assert!(r.structured_content.unwrap().get("notices").is_none());
}
