//! The fleet's `content = true`: hosts ship the text their content worker
//! extracted, and `fsctl fleet search content:...` finds it. Oracles: each
//! host's own `fsctl --json search content:...` (the fleet's answer must be
//! their union), the text the test wrote, and the database's rows read back
//! with psql.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use crate::fleet::{fleet, wait_current};
use crate::util::*;

/// A host of the test fleet with content on for its tree.
struct Host {
    name: String,
    tree: PathBuf,
    inst: Instance,
}

fn config(home: &Path, pg: &Postgres, name: &str, content: bool) {
    std::fs::create_dir_all(home).unwrap();
    std::fs::write(
        home.join("config.toml"),
        format!(
            "[fleet]\ndatabase = \"{}\"\nhost = \"{name}\"\npassword_file = \"{}\"\ncontent = {content}\n",
            pg.url(),
            pg.password_file.display()
        ),
    )
    .unwrap();
}

fn host(tmp: &Path, pg: &Postgres, name: &str, content: bool) -> Host {
    let tree = tmp.join(name).join("tree");
    std::fs::create_dir_all(&tree).unwrap();
    let home = tmp.join(name).join("home");
    config(&home, pg, name, content);
    let mut inst = Instance::new(home, &[tree.as_path()], Runner::current());
    // Content search on for the tree (the local index reads the files).
    inst.args = vec!["--content".into()];
    Host {
        name: name.to_owned(),
        tree,
        inst,
    }
}

/// Waits until the content worker has read every file of the host's tree.
fn wait_extracted(h: &Host, files: u64) {
    crate::content::settled(&h.inst, &h.tree, files);
}

type Hit = (String, String, String, u64, String);

fn hits(host: &str, lines: &[Value]) -> BTreeSet<Hit> {
    lines
        .iter()
        .map(|v| {
            (
                host.to_owned(),
                v["path"].as_str().unwrap().to_owned(),
                v["type"].as_str().unwrap().to_owned(),
                v["size"].as_u64().unwrap(),
                v["mtime"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

fn local(h: &Host, query: &str) -> BTreeSet<Hit> {
    let out = h.inst.fsctl(&["search", "--json", "--limit", "0", query]);
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "search {query}: {}",
        text(&out)
    );
    hits(&h.name, &json_lines(&out))
}

fn in_fleet(inst: &Instance, pg: &Postgres, query: &str) -> BTreeSet<Hit> {
    let out = fleet(inst, pg, &["search", "--json", query]);
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "fleet search {query}: {}",
        text(&out)
    );
    json_lines(&out)
        .iter()
        .flat_map(|v| hits(v["host"].as_str().unwrap(), std::slice::from_ref(v)))
        .collect()
}

/// A .docx holding `paragraphs`, written by Python's zipfile.
fn docx(path: &Path, paragraphs: &[&str]) {
    let body: String = paragraphs
        .iter()
        .map(|p| format!("<w:p><w:r><w:t xml:space=\"preserve\">{p}</w:t></w:r></w:p>"))
        .collect();
    let xml = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\
         <w:document xmlns:w=\"http://schemas.openxmlformats.org/wordprocessingml/2006/main\">\
         <w:body>{body}</w:body></w:document>"
    );
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let xml_file = path.with_extension("xml");
    std::fs::write(&xml_file, xml).unwrap();
    crate::content::run_python(
        "import sys, zipfile\n\
         with zipfile.ZipFile(sys.argv[1], 'w', zipfile.ZIP_DEFLATED) as z:\n\
         \x20   z.writestr('[Content_Types].xml', '<Types/>')\n\
         \x20   z.write(sys.argv[2], 'word/document.xml')\n",
        &[path, &xml_file],
    );
    std::fs::remove_file(xml_file).unwrap();
}

/// One host's tree: words in several forms, a phrase, tokens PostgreSQL's
/// own parser would keep whole (`report.pdf`, `me@example.com`, `3.14`),
/// accents, German, and a document or two. Returns the files written.
fn fill(tree: &Path, n: usize) -> u64 {
    let w = |rel: &str, s: &str| write_file(tree, rel, s.as_bytes());
    w(
        &format!("notes/invoice-{n}.txt"),
        &format!("The invoices for host {n} were invoiced on time. Total due: {n}00 euros."),
    );
    w(
        "notes/run.md",
        if n == 2 {
            "She was running; he runs. Nothing is due here."
        } else {
            "A quiet file about gardens and the due date of nothing."
        },
    );
    w(
        "report.txt",
        "See report.pdf and write to me@example.com; pi is 3.14 and v2.0.1 is out.",
    );
    w("cafe.txt", "Un café crème, s'il vous plaît. Ærøskøbing.");
    let mut files = 4;
    if n == 3 {
        w(
            "de/haus.txt",
            "Die Häuser in unserer Straße sind sehr alt und schön. Wir wohnen seit vielen \
             Jahren in einem kleinen Haus mit einem großen Garten, und die Nachbarn sind freundlich.",
        );
        files += 1;
    }
    if n != 2 {
        docx(
            &tree.join("docs/minutes.docx"),
            &[
                "Quarterly budget meeting",
                &format!("Host {n} approved the invoice backlog."),
            ],
        );
        files += 1;
    }
    files
}

/// Three hosts with text files and documents: the fleet's `content:`
/// answers equal the union of each host's own `fsctl --json search`, for
/// words in their forms, exact forms, phrases, prefixes, accents, tokens
/// PostgreSQL's parser would split otherwise, and content combined with
/// names, negation and alternatives.
#[test]
fn fleet_content_equals_the_union_of_its_hosts() {
    let tmp = tempfile::tempdir().unwrap();
    let pg = Postgres::start();
    let mut hosts: Vec<Host> = (1..=3)
        .map(|n| host(tmp.path(), &pg, &format!("host{n}"), true))
        .collect();
    let out = fleet(&hosts[0].inst, &pg, &["init", "--json"]);
    assert!(out.status.success(), "fleet init: {}", text(&out));
    let counts: Vec<u64> = hosts
        .iter()
        .enumerate()
        .map(|(i, h)| fill(&h.tree, i + 1))
        .collect();
    for (h, files) in hosts.iter_mut().zip(&counts) {
        h.inst.start();
        wait_extracted(h, *files);
    }
    for h in &hosts {
        wait_current(&h.inst);
    }
    let queries = [
        "content:invoice",
        "content:invoices",
        "content:INVOICED",
        "content:=invoices",
        "content:\"total due\"",
        "content:\"due total\"",
        "content:invo*",
        "content:\"total d*\"",
        "content:report",
        "content:pdf",
        "content:example",
        "content:3",
        "content:14",
        "content:cafe",
        "content:café",
        "content:aeroskobing",
        "content:haus",
        "content:häuser",
        "content:running",
        "content:run",
        "content:quarterly",
        "content:budget ext:docx",
        "notes content:due",
        "content:due !content:invoice",
        "content:gardens|content:meeting",
        "content:nowhere",
        "host2 content:invoice",
    ];
    let mut nonempty = 0;
    for q in queries {
        let want: BTreeSet<Hit> = hosts.iter().flat_map(|h| local(h, q)).collect();
        let got = in_fleet(&hosts[0].inst, &pg, q);
        assert_eq!(
            got, want,
            "fleet search {q} against the union of the hosts'"
        );
        if !want.is_empty() {
            nonempty += 1;
        }
    }
    // The queries find something, on more than one host (a fleet that
    // found nothing would equal hosts that found nothing).
    assert!(nonempty >= 20, "only {nonempty} queries found anything");
    let all = in_fleet(&hosts[0].inst, &pg, "content:invoice");
    let on: BTreeSet<&str> = all.iter().map(|h| h.0.as_str()).collect();
    assert_eq!(on.len(), 3, "{all:?}");
    // One row of text per file with text, per host.
    for (h, files) in hosts.iter().zip(&counts) {
        assert_eq!(
            pg.psql(&format!(
                "SELECT count(*) FROM fsindex.texts WHERE host = '{}'",
                h.name
            )),
            files.to_string()
        );
    }
    for h in &mut hosts {
        h.inst.stop();
    }
}

/// A file's text changed reaches the fleet through the journal: the new
/// word is found and the old one not, within seconds. A host with
/// `content = false` ships no text (its own content search works);
/// restarted with `content = true` it ships the text already extracted,
/// and with `false` again its texts leave the fleet.
#[test]
fn fleet_content_follows_edits_and_the_setting() {
    let tmp = tempfile::tempdir().unwrap();
    let pg = Postgres::start();
    let mut on = host(tmp.path(), &pg, "on", true);
    let out = fleet(&on.inst, &pg, &["init"]);
    assert!(out.status.success(), "fleet init: {}", text(&out));
    write_file(&on.tree, "memo.txt", b"the first draft mentions zeppelins");
    on.inst.start();
    wait_extracted(&on, 1);
    wait_current(&on.inst);
    assert_eq!(in_fleet(&on.inst, &pg, "content:zeppelin").len(), 1);

    // Edit the file: the old word leaves, the new arrives.
    write_file(
        &on.tree,
        "memo.txt",
        b"the second draft mentions submarines",
    );
    let mut last = (BTreeSet::new(), BTreeSet::new());
    let ok = poll_until(Duration::from_secs(20), || {
        last = (
            in_fleet(&on.inst, &pg, "content:submarines"),
            in_fleet(&on.inst, &pg, "content:zeppelins"),
        );
        last.0.len() == 1 && last.1.is_empty()
    });
    assert!(ok, "the edit in the fleet: {last:?}");
    assert_eq!(last.0, local(&on, "content:submarines"));

    // content = false: nothing of what files say leaves the host.
    let mut off = host(tmp.path(), &pg, "off", false);
    write_file(
        &off.tree,
        "garden-plan.txt",
        b"the treasure is under the oak",
    );
    off.inst.start();
    wait_extracted(&off, 1);
    wait_current(&off.inst);
    assert_eq!(local(&off, "content:treasure").len(), 1);
    assert!(in_fleet(&on.inst, &pg, "content:treasure").is_empty());
    assert!(!in_fleet(&on.inst, &pg, "garden-plan").is_empty());
    let texts = |h: &str| {
        pg.psql(&format!(
            "SELECT count(*) FROM fsindex.texts WHERE host = '{h}'"
        ))
    };
    assert_eq!(texts("off"), "0");

    // Turned on: the text it already has is shipped.
    off.inst.stop();
    config(&off.inst.home, &pg, "off", true);
    off.inst.start();
    let mut got = BTreeSet::new();
    let ok = poll_until(Duration::from_secs(30), || {
        got = in_fleet(&on.inst, &pg, "content:treasure");
        got.len() == 1
    });
    assert!(ok, "turned on, the text is shipped: {got:?}");
    assert_eq!(got, local(&off, "content:treasure"));
    assert_eq!(texts("off"), "1");

    // Turned off again: its texts leave the fleet.
    off.inst.stop();
    config(&off.inst.home, &pg, "off", false);
    off.inst.start();
    let ok = poll_until(Duration::from_secs(30), || texts("off") == "0");
    assert!(ok, "turned off, the texts leave the fleet");
    assert!(in_fleet(&on.inst, &pg, "content:treasure").is_empty());
    assert_eq!(texts("on"), "1");

    on.inst.stop();
    off.inst.stop();
}

/// A fleet schema of version 4 (before texts): a host with `content =
/// false` ships into it as ever; one with `content = true` says in its
/// status that it needs schema 6 and `fsctl fleet init`, serving its own
/// tree meanwhile; after `fsctl fleet init` (which applies 6) it ships its
/// texts.
#[test]
fn fleet_content_needs_schema_6_and_content_false_does_not() {
    let tmp = tempfile::tempdir().unwrap();
    let pg = Postgres::start();
    pg.fleet_schema_upto(5);

    let mut plain = host(tmp.path(), &pg, "plain", false);
    write_file(&plain.tree, "note.txt", b"words that stay home");
    plain.inst.start();
    wait_extracted(&plain, 1);
    wait_current(&plain.inst);
    assert_eq!(
        pg.psql("SELECT count(*) FROM fsindex.items WHERE host = 'plain' AND name = 'note.txt'"),
        "1"
    );

    let mut wordy = host(tmp.path(), &pg, "wordy", true);
    write_file(&wordy.tree, "memo.txt", b"a note about albatrosses");
    wordy.inst.start();
    let mut last = Value::Null;
    let told = poll_until(Duration::from_secs(30), || {
        last = wordy.inst.status()["fleet"].clone();
        last["connected"] == false
            && last["last_error"]
                .as_str()
                .is_some_and(|e| e.contains("fleet schema 6") && e.contains("fsctl fleet init"))
    });
    assert!(told, "status: {last}");
    wait_extracted(&wordy, 1);
    assert_eq!(local(&wordy, "content:albatross").len(), 1);

    let out = fleet(&wordy.inst, &pg, &["init", "--json"]);
    assert!(out.status.success(), "fleet init: {}", text(&out));
    assert_eq!(
        serde_json::from_slice::<Value>(&out.stdout).unwrap()["applied"],
        serde_json::json!([6, 7])
    );
    let mut got = BTreeSet::new();
    let ok = poll_until(Duration::from_secs(30), || {
        got = in_fleet(&wordy.inst, &pg, "content:albatross");
        got.len() == 1
    });
    assert!(ok, "after fleet init: {got:?}");
    assert_eq!(got, local(&wordy, "content:albatross"));
    wait_current(&plain.inst);
    plain.inst.stop();
    wordy.inst.stop();
}
