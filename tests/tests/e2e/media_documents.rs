//! Documents' properties end to end (issue 32): pages, title and author of
//! PDFs written by reportlab, Word files by python-docx, a PowerPoint deck
//! by python-pptx, an OpenDocument text and presentation by odfpy, each
//! with the title, author and page count the test chose. The oracles read
//! them back independently: `exiftool -json` for PDF, Word and ODT (Title,
//! Author/Creator/Initial-creator, PageCount/Pages/page-count),
//! python-pptx's count of slides, odfpy's count of `draw:page`s; the test
//! checks they agree with what it chose before comparing the daemon with
//! them. Covered: `fsctl info --json`'s `media` and the text form, every
//! `pages:`/`author:`/`title:` filter against the oracle, malformed values,
//! hostile documents (a properties part that inflates to 8 MiB, a cut
//! PDF, noise named `.odt`) counted as not read with a reason, MCP
//! `get_file_info`, an edit that shows within the usual latency, and an
//! index from before documents had properties (schema 9) upgrading itself
//! without reading its photos again.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use serde_json::{Value, json};

use crate::media::{found, settled};
use crate::util::{Instance, Runner, poll_until};

/// How long an edit may take to show.
const LATENCY: Duration = Duration::from_secs(20);

/// Writes the documents, the hostile files and one photo; prints the
/// oracle as JSON: `docs` maps each document's relative path to the
/// title, author and pages the independent readers found.
const MAKE_DOCS: &str = r#"
import json, os, random, re, subprocess, sys, zipfile
root = sys.argv[1]
for d in ('docs', 'bad', 'photos'):
    os.makedirs(root + '/' + d, exist_ok=True)
chosen = {}

from reportlab.pdfgen import canvas
def pdf(name, title, author, pages):
    c = canvas.Canvas(root + '/' + name)
    c.setTitle(title); c.setAuthor(author)
    for i in range(pages):
        c.drawString(72, 720, 'page %d' % (i + 1)); c.showPage()
    c.save()
    chosen[name] = dict(title=title, author=author, pages=pages)
pdf('docs/report.pdf', 'Quarterly Report', 'Ada Lovelace', 12)
pdf('docs/memo.pdf', 'Milk memo', 'Grace Hopper', 2)
pdf('docs/ünïcode.pdf', 'Café Ωmega', 'Zoë Brontë', 1)

# python-docx writes core.xml; Word's page count (docProps/app.xml
# <Pages>, what Word stores at each save) is set the way Word writes it.
import docx
def word(name, title, author, pages):
    path = root + '/' + name
    d = docx.Document(); d.add_paragraph('hello')
    d.core_properties.title = title; d.core_properties.author = author
    d.save(path)
    tmp = path + '.tmp'
    with zipfile.ZipFile(path) as zin, zipfile.ZipFile(tmp, 'w', zipfile.ZIP_DEFLATED) as zout:
        for item in zin.infolist():
            data = zin.read(item.filename)
            if item.filename == 'docProps/app.xml':
                s = data.decode()
                if '<Pages>' in s:
                    s = re.sub(r'<Pages>\d*</Pages>', '<Pages>%d</Pages>' % pages, s)
                else:
                    s = s.replace('</Properties>', '<Pages>%d</Pages></Properties>' % pages)
                data = s.encode()
            zout.writestr(item, data)
    os.replace(tmp, path)
    chosen[name] = dict(title=title, author=author, pages=pages)
word('docs/letter.docx', 'Letter to the bank', 'Ada Lovelace', 3)
word('docs/thesis.docx', 'A long thesis', 'Alan Turing', 140)

from pptx import Presentation
p = Presentation()
for i in range(5):
    s = p.slides.add_slide(p.slide_layouts[1]); s.shapes.title.text = 'slide %d' % i
p.core_properties.title = 'Roadmap 2026'; p.core_properties.author = 'Grace Hopper'
p.save(root + '/docs/deck.pptx')
chosen['docs/deck.pptx'] = dict(title='Roadmap 2026', author='Grace Hopper', pages=5)

from odf.opendocument import OpenDocumentText, OpenDocumentPresentation, load
from odf.text import P
from odf import meta, dc, draw, style
t = OpenDocumentText()
t.text.addElement(P(text='notes'))
t.meta.addElement(dc.Title(text='Field notes'))
t.meta.addElement(meta.InitialCreator(text='Rosalind Franklin'))
t.meta.addElement(meta.DocumentStatistic(pagecount='23'))
t.save(root + '/docs/notes.odt')
chosen['docs/notes.odt'] = dict(title='Field notes', author='Rosalind Franklin', pages=23)
pr = OpenDocumentPresentation()
pl = style.PageLayout(name='PL'); pr.automaticstyles.addElement(pl)
mp = style.MasterPage(name='Default', pagelayoutname=pl); pr.masterstyles.addElement(mp)
for i in range(4):
    pr.presentation.addElement(draw.Page(masterpagename=mp, name='p%d' % i))
pr.meta.addElement(dc.Title(text='Talk on milk'))
pr.meta.addElement(dc.Creator(text='Hedy Lamarr'))
pr.save(root + '/docs/talk.odp')
chosen['docs/talk.odp'] = dict(title='Talk on milk', author='Hedy Lamarr', pages=4)

# The independent readers.
read = {}
names = [n for n in chosen if not n.endswith(('.pptx', '.odp'))]
for e in json.loads(subprocess.run(['exiftool', '-json', '-n', '-Title', '-Author', '-Creator', '-Initial-creator',
        '-PageCount', '-Pages', '-Document-statisticPage-count'] + [root + '/' + n for n in names],
        check=True, capture_output=True).stdout):
    rel = os.path.relpath(e['SourceFile'], root)
    read[rel] = dict(title=e.get('Title'), author=e.get('Author') or e.get('Initial-creator') or e.get('Creator'),
                     pages=e.get('PageCount') or e.get('Pages') or e.get('Document-statisticPage-count'))
deck = Presentation(root + '/docs/deck.pptx')
read['docs/deck.pptx'] = dict(title=deck.core_properties.title, author=deck.core_properties.author, pages=len(deck.slides))
talk = load(root + '/docs/talk.odp')
read['docs/talk.odp'] = dict(title=str(talk.meta.getElementsByType(dc.Title)[0]),
                             author=str(talk.meta.getElementsByType(dc.Creator)[0]),
                             pages=len(talk.presentation.getElementsByType(draw.Page)))
assert read == chosen, (read, chosen)

# Hostile: a core.xml that inflates to 8 MiB (from a few KiB), a PDF cut
# after 400 bytes, noise named .odt.
with zipfile.ZipFile(root + '/bad/bomb.docx', 'w', zipfile.ZIP_DEFLATED) as z:
    z.writestr('[Content_Types].xml', '<Types/>')
    z.writestr('word/document.xml', '<w:document/>')
    z.writestr('docProps/core.xml', '<cp:coreProperties><dc:title>' + ' ' * (8 << 20) + 'x</dc:title></cp:coreProperties>')
open(root + '/bad/cut.pdf', 'wb').write(open(root + '/docs/report.pdf', 'rb').read()[:400])
open(root + '/bad/noise.odt', 'wb').write(random.Random(7).randbytes(4096))

# One photo, to show an upgraded index does not read it again.
subprocess.run(['convert', '-size', '64x48', 'xc:#336699', root + '/photos/cat.jpg'], check=True)
subprocess.run(['exiftool', '-q', '-overwrite_original', '-Make=Canon', '-Model=Canon EOS 80D', root + '/photos/cat.jpg'], check=True)
json.dump(dict(docs=read), sys.stdout)
"#;

/// What one document says, as the oracle read it.
#[derive(Debug, Clone, PartialEq)]
struct Props {
    title: String,
    author: String,
    pages: u64,
}

fn make(tree: &Path) -> BTreeMap<String, Props> {
    let out = Command::new("python3")
        .arg("-c")
        .arg(MAKE_DOCS)
        .arg(tree)
        .output()
        .expect("python3 (tests/setup.sh installs reportlab, python-docx, python-pptx, odfpy, exiftool)");
    assert!(
        out.status.success(),
        "making the documents failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let o: Value = serde_json::from_slice(&out.stdout).unwrap();
    o["docs"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(rel, d)| {
            (
                rel.clone(),
                Props {
                    title: d["title"].as_str().unwrap().to_owned(),
                    author: d["author"].as_str().unwrap().to_owned(),
                    pages: d["pages"].as_u64().unwrap(),
                },
            )
        })
        .collect()
}

#[test]
fn document_pages_title_and_author_match_their_writers_and_every_filter_agrees() {
    let t = tempfile::tempdir().unwrap();
    let tree = t.path().join("tree");
    std::fs::create_dir_all(&tree).unwrap();
    let docs = make(&tree);
    assert_eq!(docs.len(), 8);
    let mut inst = Instance::new(t.path().join("home"), &[&tree], Runner::current());
    inst.start();
    // Every document, the three hostile ones and the photo have a row.
    let rows = docs.len() as u64 + 3 + 1;
    let status = settled(&inst, rows);
    let by_status = status["rows"].as_object().unwrap().clone();
    assert_eq!(by_status["ok"], docs.len() as u64 + 1, "{status}");
    let path = |rel: &str| tree.join(rel).display().to_string();

    // info --json carries what the oracle read; the text form says it too.
    for (rel, want) in &docs {
        let info = inst.json(&["info", &path(rel)]);
        let m = &info["media"];
        assert_eq!(m["status"], "ok", "{rel}: {info}");
        assert_eq!(m["title"], want.title.as_str(), "{rel} title: {info}");
        assert_eq!(m["author"], want.author.as_str(), "{rel} author: {info}");
        assert_eq!(m["pages"], want.pages, "{rel} pages: {info}");
        for k in ["artist", "duration_ms", "width", "taken"] {
            assert!(m.get(k).is_none(), "{rel}: a document has no {k}: {info}");
        }
    }
    let out = inst.fsctl(&["info", &path("docs/report.pdf")]);
    let text = String::from_utf8_lossy(&out.stdout);
    for line in [
        "title",
        "Quarterly Report",
        "author",
        "Ada Lovelace",
        "pages",
        "12",
    ] {
        assert!(text.contains(line), "info's text lacks {line:?}:\n{text}");
    }

    // Hostile documents: not read, each with a reason, nothing else.
    for (bad, reason) in [
        ("bad/bomb.docx", "bomb"),
        ("bad/cut.pdf", "parse"),
        ("bad/noise.odt", "parse"),
    ] {
        let info = inst.json(&["info", &path(bad)]);
        let m = info["media"].as_object().unwrap();
        assert_eq!(m["status"], reason, "{bad}: {info}");
        assert_eq!(m.len(), 1, "{bad} gets no properties, only why: {info}");
    }
    assert_eq!(by_status.get("bomb"), Some(&json!(1)), "{status}");
    assert_eq!(by_status.get("parse"), Some(&json!(2)), "{status}");

    // Every filter against the oracle.
    let expect = |keep: &dyn Fn(&Props) -> bool| -> BTreeSet<String> {
        docs.iter()
            .filter(|(_, p)| keep(p))
            .map(|(rel, _)| path(rel))
            .collect()
    };
    let has = |s: &str, needle: &str| s.to_lowercase().contains(needle);
    type Keep = Box<dyn Fn(&Props) -> bool>;
    let cases: Vec<(&str, Keep)> = vec![
        ("pages:>10", Box::new(|p| p.pages > 10)),
        ("pages:<=2", Box::new(|p| p.pages <= 2)),
        ("pages:5", Box::new(|p| p.pages == 5)),
        ("pages:3..23", Box::new(|p| (3..=23).contains(&p.pages))),
        ("pages:100..", Box::new(|p| p.pages >= 100)),
        ("author:ada", Box::new(move |p| has(&p.author, "ada"))),
        ("author:hopper", Box::new(move |p| has(&p.author, "hopper"))),
        ("author:brontë", Box::new(move |p| has(&p.author, "brontë"))),
        ("title:milk", Box::new(move |p| has(&p.title, "milk"))),
        ("title:ωmega", Box::new(move |p| has(&p.title, "ωmega"))),
    ];
    for (q, keep) in &cases {
        let want = expect(keep.as_ref());
        assert!(!want.is_empty(), "`{q}` is a case that finds something");
        assert_eq!(found(&inst, q), want, "`{q}`");
    }
    // Combined with the rest of the language.
    assert_eq!(
        found(&inst, "pages:>10 ext:pdf"),
        BTreeSet::from([path("docs/report.pdf")])
    );
    let mut q = inst.search0(&["--limit", "0", "ext:docx", "!author:turing"]);
    q.sort();
    assert_eq!(
        q.iter()
            .map(|p| crate::util::lossy(p))
            .collect::<BTreeSet<_>>(),
        BTreeSet::from([path("docs/letter.docx"), path("bad/bomb.docx")])
    );

    // Malformed values are INVALID_ARGUMENT naming the bad part.
    for bad in ["pages:many", "pages:10..2", "pages:>-1", "author:"] {
        let out = inst.fsctl(&["search", bad]);
        assert_eq!(out.status.code(), Some(2), "{bad}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(bad), "`{bad}`: {err}");
    }

    // MCP get_file_info shows them.
    let mcp = crate::mcp::Mcp::start(&inst, &tree, &[]);
    let info = mcp.ok("get_file_info", json!({"path": path("docs/deck.pptx")}));
    assert_eq!(info["media"]["title"], "Roadmap 2026", "{info}");
    assert_eq!(info["media"]["author"], "Grace Hopper", "{info}");
    assert_eq!(info["media"]["pages"], 5, "{info}");
    drop(mcp);

    // An edit shows within the usual latency: the memo grows to 30 pages
    // under another author.
    let memo = path("docs/memo.pdf");
    let ok = Command::new("python3")
        .arg("-c")
        .arg(
            "import sys\nfrom reportlab.pdfgen import canvas\n\
             c = canvas.Canvas(sys.argv[1]); c.setTitle('Milk memo'); c.setAuthor('Katherine Johnson')\n\
             for i in range(30):\n    c.drawString(72, 720, str(i)); c.showPage()\nc.save()",
        )
        .arg(&memo)
        .status()
        .unwrap();
    assert!(ok.success());
    let mut got = BTreeSet::new();
    assert!(
        poll_until(LATENCY, || {
            got = found(&inst, "author:katherine pages:>25");
            got == BTreeSet::from([memo.clone()])
        }),
        "an edited document did not show: {got:?}"
    );
    assert!(found(&inst, "author:hopper").len() == 1);

    // An index from before documents had properties (schema 9: no pages
    // or author columns, no rows for documents) upgrades itself: the
    // documents are read, the photo is not read again.
    inst.stop();
    let db = rusqlite::Connection::open(inst.db()).unwrap();
    db.execute_batch(
        "DELETE FROM media WHERE entry_id IN (SELECT id FROM entries WHERE CAST(name AS TEXT) NOT LIKE '%.jpg');
         DELETE FROM media_unread WHERE entry_id IN (SELECT id FROM entries WHERE CAST(name AS TEXT) NOT LIKE '%.jpg');
         ALTER TABLE media DROP COLUMN pages;
         ALTER TABLE media DROP COLUMN author;
         DELETE FROM schema_version WHERE version = 10;",
    )
    .unwrap();
    let left: i64 = db
        .query_row("SELECT COUNT(*) FROM media", [], |r| r.get(0))
        .unwrap();
    assert_eq!(left, 1, "only the photo's row is left");
    drop(db);
    inst.start();
    let status = settled(&inst, rows);
    assert_eq!(
        status["read"],
        docs.len() as u64 + 3,
        "the documents are read, the photo is not: {status}"
    );
    assert_eq!(
        found(&inst, "pages:>10"),
        expect(&|p: &Props| p.pages > 10)
            .into_iter()
            .chain([memo.clone()])
            .collect()
    );
    assert_eq!(
        found(&inst, "camera:canon"),
        BTreeSet::from([path("photos/cat.jpg")])
    );
}
