//! Reading what files say (issue 31): the ReadText RPC, `fsctl cat` and MCP
//! `read_text_file` give a document's text. The documents are written by
//! the libraries real tools use (python-docx, odfpy, reportlab:
//! tests/make_documents.py) from paragraphs the test chose, and the text
//! read back must equal those paragraphs. The sensitive tiers hold on
//! every path (a WARN file only with the flag, the answer saying so), and
//! a damaged document gets a clear error while the daemon keeps answering.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use fsindex_proto::v1 as pb;
use serde_json::{Value, json};

use super::content::settled;
use super::mcp_clients::{answer, sdk_session};
use std::time::Duration;

use crate::util::{Instance, Runner, grpc, poll_until, text, write_file};

/// One document of the test tree: where, and the paragraphs it holds.
struct Doc {
    rel: &'static str,
    paragraphs: &'static [&'static str],
}

const LEASE: Doc = Doc {
    rel: "docs/lease.docx",
    paragraphs: &[
        "Lease agreement between Acme Ltd and the tenant.",
        "The notice period is three months, in writing, to the café in Zürich.",
        "Rent: 1,240.00 EUR per month.",
    ],
};
const REVIEW: Doc = Doc {
    rel: "docs/review.odt",
    paragraphs: &[
        "Quarterly review",
        "Revenue grew by 12 % in Köln and Málaga.",
        "Next steps: hire two engineers.",
    ],
};
const INVOICE: Doc = Doc {
    rel: "docs/invoice.pdf",
    paragraphs: &[
        "Invoice 2025-001",
        "Total due: 1240 EUR",
        "Payable within 30 days to Acme Ltd.",
    ],
};
/// Outside the content folder: its text is extracted for the request.
const LOOSE: Doc = Doc {
    rel: "loose/memo.docx",
    paragraphs: &["A memo kept outside the content folder.", "Second line."],
};

/// The password file's text (WARN tier by default: `*password*`).
const SECRET: &str = "db_user=app\ndb_password=hunter2-correct-horse\n";

/// The text a document's paragraphs make: one line each.
fn joined(d: &Doc) -> String {
    d.paragraphs.join("\n")
}

/// The lines of a text, each trimmed, empty ones dropped: how a PDF's text
/// is compared (its layout decides blank lines and spacing, not its words).
fn lines_of(t: &str) -> Vec<String> {
    t.lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|l| !l.is_empty())
        .collect()
}

/// Writes the documents with tests/make_documents.py.
fn make_documents(root: &Path, docs: &[&Doc]) {
    let spec: Vec<Value> = docs
        .iter()
        .map(|d| json!({"path": root.join(d.rel), "paragraphs": d.paragraphs}))
        .collect();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("make_documents.py");
    let mut child = Command::new("python3")
        .arg(script)
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        stdin
            .write_all(Value::from(spec).to_string().as_bytes())
            .unwrap();
    }
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "tests/make_documents.py failed (python-docx, odfpy and reportlab come from tests/setup.sh): {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A tree with content on in `docs/` only (config.toml), three documents,
/// a password file and a damaged document there, and a document outside.
struct Setup {
    _tmp: tempfile::TempDir,
    tree: PathBuf,
    inst: Instance,
}

fn setup() -> Setup {
    let tmp = tempfile::tempdir().unwrap();
    let tree = tmp.path().join("tree");
    make_documents(&tree, &[&LEASE, &REVIEW, &INVOICE, &LOOSE]);
    write_file(&tree, "docs/db_password.txt", SECRET.as_bytes());
    // A zip header and then nonsense: what a cut download looks like.
    write_file(
        &tree,
        "docs/broken.docx",
        b"PK\x03\x04\x14\x00\x00\x00 this is not the rest of a zip",
    );
    let home = tmp.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(
        home.join("config.toml"),
        format!("[root.{:?}]\ncontent = true\n", tree.join("docs")),
    )
    .unwrap();
    let mut inst = Instance::new(home, &[&tree], Runner::current());
    inst.start();
    // Three documents indexed, the damaged one failed (the password file
    // is never read for the index).
    let folder = settled(&inst, &tree.join("docs"), 4);
    assert_eq!(folder["indexed"], 3, "{folder:#}");
    Setup {
        _tmp: tmp,
        tree,
        inst,
    }
}

/// `fsctl --json cat ARGS...`: its one object.
fn cat_json(inst: &Instance, args: &[&str]) -> Value {
    let mut a = vec!["--json", "cat"];
    a.extend_from_slice(args);
    let out = inst.fsctl(&a);
    assert!(out.status.success(), "fsctl cat {args:?}: {}", text(&out));
    serde_json::from_slice(&out.stdout).unwrap()
}

fn read_text(
    inst: &Instance,
    req: pb::ReadTextRequest,
) -> Result<pb::ReadTextResponse, tonic::Status> {
    grpc(inst, async |c| {
        c.read_text(req).await.map(|r| r.into_inner())
    })
}

// An agent asks an MCP server built on the official Python SDK for the
// text of a Word file, an OpenDocument file and a PDF and gets exactly the
// paragraphs their authors wrote, with head and tail working on it.
#[test]
fn mcp_reads_docx_pdf_and_odt_text_equal_to_what_was_written() {
    let s = setup();
    let (tree, inst) = (&s.tree, &s.inst);
    let p = |d: &Doc| tree.join(d.rel).display().to_string();
    let steps = json!([
        {"call": "read_text_file", "arguments": {"path": p(&LEASE)}},
        {"call": "read_text_file", "arguments": {"path": p(&REVIEW)}},
        {"call": "read_text_file", "arguments": {"path": p(&INVOICE)}},
        {"call": "read_text_file", "arguments": {"path": p(&LOOSE)}},
        {"call": "read_text_file", "arguments": {"path": p(&LEASE), "head": 1}},
        {"call": "read_text_file", "arguments": {"path": p(&REVIEW), "tail": 2}},
        // Found by what it says: the passage comes with the result.
        {"call": "find_files", "arguments": {"query": "content:\"notice period\""}},
        {"call": "search_files", "arguments": {"path": tree.display().to_string(), "pattern": "**/*", "content": "notice period"}},
    ]);
    let lines = sdk_session(inst, tree, &[], 32 << 10, &[], &steps);
    let got = |nth: usize| &answer(&lines, "read_text_file", nth)["structured"];
    for (nth, (doc, format)) in [(&LEASE, "docx"), (&REVIEW, "odt"), (&LOOSE, "docx")]
        .into_iter()
        .enumerate()
        .map(|(i, d)| (if i == 2 { 3 } else { i }, d))
    {
        let a = got(nth);
        assert_eq!(
            a["content"].as_str().unwrap().trim_end(),
            joined(doc),
            "{}: {a:#}",
            doc.rel
        );
        assert_eq!(a["format"], format, "{a:#}");
        assert_eq!(a["totalLines"], doc.paragraphs.len(), "{a:#}");
        assert_eq!(a["sensitive"], false);
    }
    let pdf = got(2);
    assert_eq!(
        lines_of(pdf["content"].as_str().unwrap()),
        INVOICE.paragraphs,
        "{pdf:#}"
    );
    assert_eq!(pdf["format"], "pdf");
    let head = got(4);
    assert_eq!(
        head["content"].as_str().unwrap().trim_end(),
        LEASE.paragraphs[0]
    );
    assert_eq!(
        (head["startLine"].as_u64(), head["endLine"].as_u64()),
        (Some(1), Some(1))
    );
    let found = &answer(&lines, "find_files", 0)["structured"]["results"];
    assert_eq!(found.as_array().map(Vec::len), Some(1), "{found:#}");
    assert_eq!(found[0]["path"], p(&LEASE));
    let snippet = found[0]["snippet"].as_str().unwrap_or_default();
    assert!(
        snippet.contains("The **notice** **period** is three months"),
        "{snippet:?}"
    );
    let globbed = &answer(&lines, "search_files", 0)["structured"];
    assert_eq!(globbed["paths"], json!([p(&LEASE)]), "{globbed:#}");
    assert_eq!(globbed["snippets"][0], found[0]["snippet"], "{globbed:#}");
    let tail = got(5);
    assert_eq!(
        tail["content"].as_str().unwrap().trim_end(),
        REVIEW.paragraphs[1..].join("\n")
    );
}

// `fsctl cat` prints a document's text, pages it by byte offset and length
// (never splitting a character), and says where it came from: the content
// index for a file in a content folder, the extractor for one outside.
#[test]
fn fsctl_cat_pages_a_documents_text_from_the_index_or_the_extractor() {
    let s = setup();
    let (tree, inst) = (&s.tree, &s.inst);
    let p = |d: &Doc| tree.join(d.rel).display().to_string();
    let lease = cat_json(inst, &[&p(&LEASE)]);
    let want = joined(&LEASE);
    assert_eq!(lease["text"], want.as_str(), "{lease:#}");
    assert_eq!(lease["total_bytes"], want.len());
    assert_eq!(
        (&lease["format"], &lease["source"], &lease["sensitive"]),
        (&json!("docx"), &json!("index"), &json!(false)),
        "{lease:#}"
    );
    assert_eq!(lease["encoding"], "UTF-8 (Office Open XML)");
    let loose = cat_json(inst, &[&p(&LOOSE)]);
    assert_eq!(loose["text"], joined(&LOOSE).as_str());
    assert_eq!(loose["source"], "extracted", "{loose:#}");
    let review = cat_json(inst, &[&p(&REVIEW)]);
    assert_eq!(review["text"], joined(&REVIEW).as_str());
    assert_eq!(review["source"], "index");

    // A page: from the byte where "café" starts, 10 bytes: é is two bytes.
    let at = want.find("café").unwrap();
    let page = cat_json(
        inst,
        &[&p(&LEASE), "--offset", &at.to_string(), "--length", "10"],
    );
    assert_eq!(page["text"], &want[at..at + 10], "{page:#}");
    assert_eq!(page["offset"], at);
    assert_eq!(page["more"], true);
    // An offset inside "é" starts at "é"; a length that would cut it stops before.
    let e = want.find('é').unwrap();
    let page = cat_json(
        inst,
        &[
            &p(&LEASE),
            "--offset",
            &(e + 1).to_string(),
            "--length",
            "1",
        ],
    );
    assert_eq!(page["text"], "é", "{page:#}");
    assert_eq!(page["offset"], e);
    // Plain output: the text and one final newline.
    let out = inst.fsctl(&["cat", &p(&REVIEW)]);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("{}\n", joined(&REVIEW))
    );
    // The same over gRPC, page by page, adds up to the whole text.
    let mut whole = String::new();
    let mut offset = 0;
    loop {
        let r = read_text(
            inst,
            pb::ReadTextRequest {
                path: p(&LEASE).into_bytes(),
                offset,
                length: 7,
                allow_sensitive: false,
            },
        )
        .unwrap();
        assert!(r.text.len() <= 7, "{r:?}");
        whole.push_str(&r.text);
        offset = r.offset + r.text.len() as u64;
        if offset >= r.total_bytes {
            break;
        }
    }
    assert_eq!(whole, want);
    // A folder has no text.
    let out = inst.fsctl(&["cat", &tree.join("docs").display().to_string()]);
    assert!(!out.status.success());
    assert!(
        text(&out).contains("not a file (a folder)"),
        "{}",
        text(&out)
    );
}

// A WARN-tier file (a password file) is refused by every client unless the
// caller asks for it explicitly, and then the answer says it is sensitive.
#[test]
fn a_warn_file_is_read_only_when_asked_through_cli_grpc_and_mcp() {
    let s = setup();
    let (tree, inst) = (&s.tree, &s.inst);
    let secret = tree.join("docs/db_password.txt").display().to_string();

    let out = inst.fsctl(&["cat", &secret]);
    assert!(!out.status.success(), "{}", text(&out));
    assert!(
        !String::from_utf8_lossy(&out.stdout).contains("hunter2"),
        "{}",
        text(&out)
    );
    assert!(text(&out).contains("--sensitive"), "{}", text(&out));
    let read = cat_json(inst, &[&secret, "--sensitive"]);
    assert_eq!(read["text"], SECRET.trim_end(), "{read:#}");
    assert_eq!(read["sensitive"], true);
    let out = inst.fsctl(&["cat", &secret, "--sensitive"]);
    assert!(text(&out).contains("sensitive"), "{}", text(&out));

    let req = |allow| pb::ReadTextRequest {
        path: secret.clone().into_bytes(),
        allow_sensitive: allow,
        ..Default::default()
    };
    let refused = read_text(inst, req(false)).unwrap_err();
    assert_eq!(refused.code(), tonic::Code::PermissionDenied, "{refused:?}");
    assert!(!refused.message().contains("hunter2"));
    let r = read_text(inst, req(true)).unwrap();
    assert_eq!((r.text.as_str(), r.sensitive), (SECRET.trim_end(), true));

    let steps = json!([
        {"call": "read_text_file", "arguments": {"path": secret}, "error": true},
        {"call": "read_text_file", "arguments": {"path": secret, "allowSensitive": true}},
    ]);
    let lines = sdk_session(inst, tree, &[], 32 << 10, &[], &steps);
    let refused = answer(&lines, "read_text_file", 0);
    assert_eq!(refused["isError"], true);
    let msg = refused["text"].as_str().unwrap();
    assert!(
        msg.contains("allowSensitive") && !msg.contains("hunter2"),
        "{msg}"
    );
    let read = answer(&lines, "read_text_file", 1);
    assert_eq!(read["structured"]["content"], SECRET, "{read:#}");
    assert_eq!(read["structured"]["sensitive"], true);
    assert!(
        read["text"].as_str().unwrap().contains("SENSITIVE"),
        "{read:#}"
    );
}

// A damaged document gets an error that says so on every path, and the
// daemon goes on answering (the parser runs in the sandboxed child).
#[test]
fn a_damaged_document_gets_a_clear_error_and_the_daemon_lives() {
    let s = setup();
    let (tree, inst) = (&s.tree, &s.inst);
    let broken = tree.join("docs/broken.docx").display().to_string();
    let pid = inst.daemon_pid();

    let out = inst.fsctl(&["cat", &broken]);
    assert!(!out.status.success());
    assert!(
        text(&out).contains("broken.docx: cannot read its text: the file looks damaged"),
        "{}",
        text(&out)
    );
    let e = read_text(
        inst,
        pb::ReadTextRequest {
            path: broken.clone().into_bytes(),
            ..Default::default()
        },
    )
    .unwrap_err();
    assert_eq!(e.code(), tonic::Code::FailedPrecondition, "{e:?}");
    let steps = json!([
        {"call": "read_text_file", "arguments": {"path": broken}, "error": true},
        {"call": "read_text_file", "arguments": {"path": tree.join(LEASE.rel).display().to_string()}},
    ]);
    let lines = sdk_session(inst, tree, &[], 32 << 10, &[], &steps);
    let msg = answer(&lines, "read_text_file", 0)["text"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(msg.contains("looks damaged"), "{msg}");
    assert_eq!(
        answer(&lines, "read_text_file", 1)["structured"]["content"]
            .as_str()
            .unwrap()
            .trim_end(),
        joined(&LEASE)
    );
    // Same daemon, still answering.
    assert_eq!(inst.daemon_pid(), pid);
    assert_eq!(inst.status()["state"], "ready");
    assert_eq!(
        cat_json(inst, &[&tree.join(INVOICE.rel).display().to_string()])["format"],
        "pdf"
    );
}

// An index made before the content index kept text (without migration
// 0006, even when a later one such as 0009 ran) upgrades itself: migration
// 0006 marks every content row stale, the worker reads
// the content folders once more, and the text is then served from the
// index again.
#[test]
fn an_index_from_before_stored_text_upgrades_and_reads_its_documents_again() {
    let mut s = setup();
    let lease = s.tree.join(LEASE.rel).display().to_string();
    assert_eq!(cat_json(&s.inst, &[&lease])["source"], "index");
    s.inst.stop();
    // Back to schema 5: no content_text table, 0004's trigger.
    let db = rusqlite::Connection::open(s.inst.db()).unwrap();
    db.execute_batch(
        "DROP TRIGGER content_gone;
         DROP TABLE content_text;
         CREATE TRIGGER content_gone AFTER DELETE ON entries WHEN old.kind = 0 BEGIN
             DELETE FROM content_fts WHERE rowid = old.id;
             DELETE FROM content_state WHERE entry_id = old.id;
             DELETE FROM content_queue WHERE entry_id = old.id;
         END;
         DELETE FROM schema_version WHERE version = 6;",
    )
    .unwrap();
    drop(db);
    s.inst.start();
    // The three documents and the damaged one are read again (the rows
    // are there all along, so the count of files read says it).
    let mut last = Value::Null;
    let read_again = poll_until(Duration::from_secs(60), || {
        last = s.inst.status()["content"].clone();
        last["extracted"] == 4
    });
    assert!(read_again, "not read again: {last:#}");
    settled(&s.inst, &s.tree.join("docs"), 4);
    let got = cat_json(&s.inst, &[&lease]);
    assert_eq!(
        (&got["text"], &got["source"]),
        (&json!(joined(&LEASE)), &json!("index"))
    );
    let db = rusqlite::Connection::open(s.inst.db()).unwrap();
    let recorded: bool = db
        .query_row(
            "SELECT COUNT(*) FROM schema_version WHERE version = 6",
            [],
            |r| r.get::<_, i64>(0).map(|n| n == 1),
        )
        .unwrap();
    assert!(recorded, "migration 0006 is not recorded");
}
