//! `fsctl manifest` and MCP `folder_manifest` with summaries: each file's
//! summary equals the title, heading, first sentence or doc comment the
//! test wrote into it (documents written by reportlab, python-docx and zipfile (EPUB) with
//! the titles the test chose); sizes and mtimes equal the file system's;
//! over a budget the files left out are the oldest by the mtimes the test
//! set with `touch -d`.

use std::collections::BTreeMap;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;
use std::process::Command;

use fsindex_proto::v1 as pb;
use serde_json::{Value, json};

use crate::mcp::Mcp;
use crate::security::{change, start_system, system_tree};
use crate::util::{Instance, Runner, sh, text, write_file};

/// The longest summary, in characters.
const MAX_CHARS: usize = 120;

fn manifest(inst: &Instance, args: &[&str]) -> Value {
    let mut a = vec!["manifest", "--json"];
    a.extend_from_slice(args);
    let out = inst.fsctl(&a);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// relative path -> the file's JSON object.
fn files(m: &Value) -> BTreeMap<String, Value> {
    m["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["path"].as_str().unwrap().to_owned(), f.clone()))
        .collect()
}

/// Writes a PDF with a title, a Word file with one and one without, and an
/// EPUB with one.
fn documents(root: &Path) {
    let script = r#"
import sys, docx
from reportlab.pdfgen import canvas
root = sys.argv[1]
c = canvas.Canvas(root + '/docs/report.pdf')
c.setTitle('Quarterly report for the board')
c.drawString(72, 720, 'Some body text. More.'); c.showPage(); c.save()
d = docx.Document(); d.add_paragraph('hello'); d.core_properties.title = 'Letter to the bank'
d.save(root + '/docs/letter.docx')
d = docx.Document(); d.add_paragraph('Minutes of the June meeting. Present: all.')
d.save(root + '/docs/minutes.docx')
import zipfile
with zipfile.ZipFile(root + '/docs/whale.epub', 'w') as z:
    z.writestr(zipfile.ZipInfo('mimetype'), 'application/epub+zip')
    z.writestr('META-INF/container.xml', '<?xml version="1.0"?><container version="1.0" '
        'xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles>'
        '<rootfile full-path="content.opf" media-type="application/oebps-package+xml"/></rootfiles></container>')
    z.writestr('content.opf', '<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0">'
        '<metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>Whale Tales</dc:title></metadata>'
        '<manifest><item id="c" href="c.xhtml" media-type="application/xhtml+xml"/></manifest>'
        '<spine><itemref idref="c"/></spine></package>')
    z.writestr('c.xhtml', '<html xmlns="http://www.w3.org/1999/xhtml"><body><p>Call me Ishmael.</p></body></html>')
"#;
    let out = Command::new("python3")
        .arg("-c")
        .arg(script)
        .arg(root)
        .output()
        .unwrap();
    assert!(out.status.success(), "python: {}", text(&out));
}

#[test]
fn manifest_summaries_are_the_titles_headings_sentences_and_doc_comments_the_test_wrote() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("tree");
    let w = |rel: &str, body: &str| write_file(&root, rel, body.as_bytes());
    let long = format!(
        "This first sentence goes on {} and ends here.",
        "and on ".repeat(30)
    );
    // relative path -> (content, summary wanted, source wanted)
    let cases: Vec<(&str, String, &str, &str)> = vec![
        ("docs/trip.md", "# Trip to *Lisbon*\n\nWe went.\n".into(), "Trip to Lisbon", "heading"),
        ("docs/post.md", "---\ntitle: \"Why we moved\"\ndate: 2024-01-01\n---\n\n# Other\n".into(), "Why we moved", "title"),
        ("docs/plain.md", "Just some notes about the [garden](http://x). Then more.\n".into(), "Just some notes about the garden.", "sentence"),
        ("docs/index.html", "<html><head><title>Family recipes</title></head><body><h1>x</h1></body></html>".into(), "Family recipes", "title"),
        ("docs/page.html", "<html><body><h1>Welcome <em>home</em></h1><p>Text.</p></body></html>".into(), "Welcome home", "heading"),
        ("docs/guide.rst", "=========\nUser guide\n=========\n\nIntro.\n".into(), "User guide", "heading"),
        ("docs/manual.adoc", ":toc:\n= Operator Manual\nJane Doe\n\nText.\n".into(), "Operator Manual", "heading"),
        ("docs/letter.txt", "\n  Dear Sam, the boiler is fixed. Regards.\n".into(), "Dear Sam, the boiler is fixed.", "sentence"),
        ("README", "Scripts for the household accounts. Run them monthly.\n".into(), "Scripts for the household accounts.", "sentence"),
        ("src/main.rs", "// SPDX-License-Identifier: MIT\n\n//! Reconciles the bank export with the ledger.\n//! Second line.\n\nfn main() {}\n".into(), "Reconciles the bank export with the ledger.", "doc-comment"),
        ("src/tax.py", "#!/usr/bin/env python3\n# -*- coding: utf-8 -*-\n\"\"\"Computes the yearly tax estimate.\n\nDetails.\n\"\"\"\nimport os\n".into(), "Computes the yearly tax estimate.", "doc-comment"),
        ("src/chart.js", "'use strict';\n/**\n * @file Draws the spending chart.\n * @author me\n */\nexport {};\n".into(), "Draws the spending chart.", "doc-comment"),
        ("src/dates.ts", "/**\n * Helpers for fiscal dates. Not for calendars.\n * @module dates\n */\nexport const x = 1;\n".into(), "Helpers for fiscal dates.", "doc-comment"),
        ("src/ledger/ledger.go", "// Copyright 2024\n\n// Package ledger keeps the accounts.\n// It is small.\npackage ledger\n".into(), "Package ledger keeps the accounts.", "doc-comment"),
        ("src/nodoc.rs", "fn helper() {}\n".into(), "", ""),
        ("data/config.json", "{\"a\": 1}\n".into(), "", ""),
    ];
    for (rel, body, _, _) in &cases {
        w(rel, body);
    }
    w("docs/long.txt", &long);
    write_file(
        &root,
        "photos/dot.png",
        &[0x89, b'P', b'N', b'G', 0, 0, 0, 0],
    );
    // A sensitive name (the default WARN tier): listed, no summary unless asked.
    w(
        "docs/db_password.txt",
        "The password is hunter2. Keep it.\n",
    );
    // Inside .git: not the user's files.
    w(".git/HEAD", "ref: refs/heads/main\n");
    documents(&root);

    let mut inst = Instance::new(t.path().join("home"), &[&root], Runner::current());
    inst.start();
    let m = manifest(&inst, &[root.to_str().unwrap()]);
    let got = files(&m);

    // Every file the test wrote, none from .git, each with the file
    // system's size and mtime.
    let mut want_paths: Vec<String> = cases.iter().map(|c| c.0.to_owned()).collect();
    want_paths.extend(
        [
            "docs/long.txt",
            "photos/dot.png",
            "docs/db_password.txt",
            "docs/report.pdf",
            "docs/letter.docx",
            "docs/minutes.docx",
            "docs/whale.epub",
        ]
        .map(String::from),
    );
    want_paths.sort();
    assert_eq!(got.keys().cloned().collect::<Vec<_>>(), want_paths);
    assert_eq!(m["total"], want_paths.len());
    assert_eq!(m["left_out"], 0);
    for (rel, f) in &got {
        let meta = std::fs::metadata(root.join(rel)).unwrap();
        assert_eq!(f["size"], meta.len(), "{rel}");
        let ns = meta.mtime() as i128 * 1_000_000_000 + meta.mtime_nsec() as i128;
        let shown = f["mtime"].as_str().unwrap();
        assert!(
            shown.starts_with(&jiff_like(meta.mtime())),
            "{rel}: {shown} vs {ns}"
        );
    }

    for (rel, _, summary, source) in &cases {
        let f = &got[*rel];
        assert_eq!(f["summary"], *summary, "{rel}: {f}");
        assert_eq!(f["source"], *source, "{rel}: {f}");
    }
    // Documents: the title the test gave, else the first sentence.
    assert_eq!(
        got["docs/report.pdf"]["summary"],
        "Quarterly report for the board"
    );
    assert_eq!(got["docs/report.pdf"]["source"], "title");
    assert_eq!(got["docs/letter.docx"]["summary"], "Letter to the bank");
    assert_eq!(
        got["docs/minutes.docx"]["summary"],
        "Minutes of the June meeting."
    );
    assert_eq!(got["docs/minutes.docx"]["source"], "sentence");
    assert_eq!(got["docs/whale.epub"]["summary"], "Whale Tales");
    // A long sentence: cut at a word, one line, at most 120 characters.
    let cut = got["docs/long.txt"]["summary"].as_str().unwrap();
    assert!(cut.chars().count() <= MAX_CHARS, "{cut}");
    let stem = cut.strip_suffix('…').expect("an ellipsis where it was cut");
    assert!(long.starts_with(stem) && stem.len() > 60, "{cut}");
    assert_eq!(got["photos/dot.png"]["summary"], "");
    assert_eq!(got["photos/dot.png"]["kind"], "image");
    assert_eq!(got["src/main.rs"]["kind"], "code");
    // The sensitive file: flagged, no summary; with --sensitive, its sentence.
    let pw = &got["docs/db_password.txt"];
    assert_eq!(
        (pw["sensitive"].clone(), pw["summary"].clone()),
        (json!(true), json!(""))
    );
    let asked = files(&manifest(&inst, &["--sensitive", root.to_str().unwrap()]));
    assert_eq!(
        asked["docs/db_password.txt"]["summary"],
        "The password is hunter2."
    );

    // Cached: the index holds the summaries (never the sensitive one's),
    // and an edit is seen.
    let db = rusqlite::Connection::open(inst.db()).unwrap();
    let cached: i64 = db
        .query_row("SELECT COUNT(*) FROM summaries", [], |r| r.get(0))
        .unwrap();
    assert_eq!(
        cached as usize,
        want_paths.len() - 3,
        "every file but the sensitive one and the two with nothing to say (JSON, PNG)"
    );
    let leaked: i64 = db
        .query_row(
            "SELECT COUNT(*) FROM summaries WHERE summary LIKE '%hunter2%'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(leaked, 0);
    assert_eq!(files(&manifest(&inst, &[root.to_str().unwrap()])), got);
    w("docs/trip.md", "# Trip to Porto instead\n");
    crate::util::sync(&inst);
    let again = files(&manifest(&inst, &[root.to_str().unwrap()]));
    assert_eq!(again["docs/trip.md"]["summary"], "Trip to Porto instead");

    // The text form: a header, then one tab-separated line per file.
    let out = inst.fsctl(&["manifest", root.join("src").to_str().unwrap()]);
    let shown = String::from_utf8(out.stdout).unwrap();
    assert!(
        shown.starts_with(&format!("# {}: 6 of 6 files\n", root.join("src").display())),
        "{shown}"
    );
    assert!(shown.contains("main.rs\tcode\t"), "{shown}");
    assert!(
        shown.contains("\tReconciles the bank export with the ledger.\n"),
        "{shown}"
    );

    // MCP folder_manifest: the same summaries.
    let mcp = Mcp::start(&inst, t.path(), &[]);
    let answer = mcp.ok(
        "folder_manifest",
        json!({"path": root.join("docs").to_str().unwrap()}),
    );
    for f in answer["files"].as_array().unwrap() {
        let rel = format!("docs/{}", f["relativePath"].as_str().unwrap());
        assert_eq!(f["summary"], again[&rel]["summary"], "{rel}");
    }
    // Bad input: a file is not a folder; a path outside every root.
    let file = inst.fsctl(&["manifest", root.join("README").to_str().unwrap()]);
    assert_eq!(file.status.code(), Some(2));
    assert!(text(&file).contains("not a folder"), "{}", text(&file));
    let zero = inst.fsctl(&["manifest", "--budget", "0", root.to_str().unwrap()]);
    assert_eq!(zero.status.code(), Some(2), "{}", text(&zero));
}

/// `2024-01-02T03:04:05` of a time in seconds, as `date -u` prints it.
fn jiff_like(secs: i64) -> String {
    let out = Command::new("date")
        .args(["-u", "-d", &format!("@{secs}"), "+%Y-%m-%dT%H:%M:%S"])
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

#[test]
fn manifest_over_a_budget_leaves_the_oldest_files_out_first() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("tree");
    // 30 files, each modified on a day of its own (set with touch -d), in
    // an order unlike their names.
    let n = 30;
    let mut day_of = BTreeMap::new();
    for k in 0..n {
        let day = (k * 7) % n + 1;
        let rel = format!("notes/note-{k:02}.txt");
        write_file(
            &root,
            &rel,
            format!("Note number {k} about the house.\n").as_bytes(),
        );
        sh(
            &root,
            &format!("touch -d '2024-03-{day:02} 00:00:00 UTC' {rel}"),
        );
        day_of.insert(rel, day);
    }
    let mut inst = Instance::new(t.path().join("home"), &[&root], Runner::current());
    inst.start();
    let r = root.to_str().unwrap();
    // The stream: progress while summaries are made, then the files in
    // path order, then the summary.
    let items = crate::util::grpc(&inst, async |c| {
        let mut stream = c
            .manifest(pb::ManifestRequest {
                path: r.as_bytes().to_vec(),
                ..Default::default()
            })
            .await
            .unwrap()
            .into_inner();
        let mut items = Vec::new();
        while let Some(m) = stream.message().await.unwrap() {
            items.push(m.item.unwrap());
        }
        items
    });
    use pb::manifest_response::Item;
    let kinds: String = items
        .iter()
        .map(|i| match i {
            Item::Progress(_) => 'p',
            Item::File(_) => 'f',
            Item::Summary(_) => 's',
        })
        .collect();
    assert!(kinds.starts_with('p'), "{kinds}");
    assert!(
        kinds.ends_with(&format!("{}s", "f".repeat(n as usize))),
        "{kinds}"
    );
    let Item::Progress(first) = &items[0] else {
        unreachable!()
    };
    assert_eq!(first.todo, n as u64);
    let all = manifest(&inst, &[r]);
    assert_eq!(
        (all["total"].clone(), all["left_out"].clone()),
        (json!(n), json!(0))
    );
    // Newest first, by the test's own days.
    let mut by_age: Vec<(&String, &i32)> = day_of.iter().collect();
    by_age.sort_by(|a, b| b.1.cmp(a.1));
    for budget in [120u32, 300, 500] {
        let m = manifest(&inst, &["--budget", &budget.to_string(), r]);
        let shown: Vec<String> = files(&m).keys().cloned().collect();
        let k = shown.len();
        assert!(k > 0 && k < n as usize, "budget {budget}: {k} shown");
        assert_eq!(m["left_out"], n as usize - k, "budget {budget}");
        let mut newest: Vec<String> = by_age[..k].iter().map(|(p, _)| (*p).clone()).collect();
        newest.sort();
        assert_eq!(shown, newest, "budget {budget}: the newest {k} files");
        // The text form fits the budget (bytes / 4, rounded up).
        let out = inst.fsctl(&["manifest", "--budget", &budget.to_string(), r]);
        assert!(
            out.stdout.len().div_ceil(4) <= budget as usize,
            "budget {budget}"
        );
        assert!(
            String::from_utf8_lossy(&out.stdout)
                .contains(&format!("the {} oldest left out", n as usize - k)),
            "{}",
            text(&out)
        );
    }
    // A larger budget never shows fewer files.
    let k = |b: u32| files(&manifest(&inst, &["--budget", &b.to_string(), r])).len();
    assert!(k(200) <= k(400) && k(400) <= k(100_000));
    assert_eq!(k(100_000), n as usize);

    // MCP: tokenBudget leaves out the oldest too, and says how many.
    let mcp = Mcp::start(&inst, t.path(), &[]);
    let a = mcp.ok("folder_manifest", json!({"path": r, "tokenBudget": 300}));
    let shown: Vec<String> = a["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["relativePath"].as_str().unwrap().to_owned())
        .collect();
    let k = shown.len();
    assert!(k > 0 && k < n as usize);
    assert_eq!(a["leftOut"], n as usize - k);
    let mut newest: Vec<String> = by_age[..k].iter().map(|(p, _)| (*p).clone()).collect();
    newest.sort();
    assert_eq!(shown, newest);
}

#[test]
fn machine_wide_manifest_summarises_only_what_the_caller_may_read() {
    let Some((t, root)) = system_tree() else {
        return;
    };
    write_file(&root, "pub/open.md", b"# Open notes\n");
    write_file(&root, "pub/theirs.md", b"# zqsecret heading\n");
    write_file(&root, "pub/closed/zqhidden.md", b"# Hidden\n");
    change("chmod", &["-R", "a+rX"], &root);
    let theirs = root.join("pub/theirs.md");
    change("chown", &["12345:12345"], &theirs);
    std::fs::set_permissions(&theirs, std::fs::Permissions::from_mode(0o600)).unwrap();
    let closed = root.join("pub/closed");
    change("chown", &["-R", "12345:12345"], &closed);
    std::fs::set_permissions(&closed, std::fs::Permissions::from_mode(0o700)).unwrap();

    let (inst, visitor) = start_system(t.path(), &root);
    let pub_dir = root.join("pub");
    // Root first: it fills the cache with every summary.
    let all = files(&manifest(&inst, &[pub_dir.to_str().unwrap()]));
    assert_eq!(all["theirs.md"]["summary"], "zqsecret heading");
    assert!(all.contains_key("closed/zqhidden.md"));
    let o = visitor.run(&["manifest", "--json", pub_dir.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let seen = files(&serde_json::from_slice(&o.stdout).unwrap());
    assert_eq!(
        seen.keys().cloned().collect::<Vec<_>>(),
        vec!["open.md".to_owned(), "theirs.md".to_owned()]
    );
    assert_eq!(seen["open.md"]["summary"], "Open notes");
    assert_eq!(seen["theirs.md"]["summary"], "", "not the caller's to read");
    assert!(!text(&o).contains("zqsecret") && !text(&o).contains("zqhidden"));
}
