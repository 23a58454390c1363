//! Text inside containers end to end (issue 32): EPUB e-books built by the
//! test with Python's `zipfile`, as the EPUB 3 specification lays them out
//! (a stored `mimetype` first, `META-INF/container.xml`, a package
//! document whose spine orders XHTML chapters). The oracle is the text the
//! test wrote into each chapter, the title and author it put in the
//! package, and the words it hid where no reader shows them (a style
//! sheet, a script).

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::media::found;
use crate::util::{Instance, Runner};

/// Writes `books/whale.epub` (two chapters, spine order the reverse of the
/// manifest's, one in a folder with a space in its name), a bomb e-book
/// whose one chapter inflates past the 200 MiB budget, and a cut one.
/// Prints the chapters' text in reading order as JSON.
const MAKE_BOOKS: &str = r#"
import json, os, sys, zipfile
root = sys.argv[1]
os.makedirs(root + '/books', exist_ok=True)
chapters = [
    ('text/ch 1.xhtml', 'Call me Ishmael', ['The harpoon flew straight.', 'Café au lait on deck, très bien.']),
    ('ch2.xhtml', 'The Whiteness', ['Ambergris is worth its weight in gold.']),
]
def page(title, paras):
    body = ''.join('<p>%s</p>' % p.replace('&', '&amp;') for p in paras)
    return ('<?xml version="1.0" encoding="UTF-8"?>\n<html xmlns="http://www.w3.org/1999/xhtml"><head><title>%s</title>'
            '<style>p { zebrastyle: 1 }</style><script>var xyzzyscript = 1;</script></head>'
            '<body><h1>%s</h1>%s</body></html>') % (title, title, body)
def book(path, title, author, chapters, big=None):
    with zipfile.ZipFile(path, 'w', zipfile.ZIP_DEFLATED) as z:
        z.writestr(zipfile.ZipInfo('mimetype'), 'application/epub+zip', compress_type=zipfile.ZIP_STORED)
        z.writestr('META-INF/container.xml', '<?xml version="1.0"?><container version="1.0" '
            'xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles>'
            '<rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/></rootfiles></container>')
        # The manifest lists the chapters last to first; the spine reads them first to last.
        items = ''.join(reversed(['<item id="c%d" href="%s" media-type="application/xhtml+xml"/>' % (i, href.replace(' ', '%20'))
                                  for i, (href, _, _) in enumerate(chapters)]))
        spine = ''.join('<itemref idref="c%d"/>' % i for i in range(len(chapters)))
        z.writestr('OEBPS/content.opf', '<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0">'
            '<metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>%s</dc:title><dc:creator>%s</dc:creator>'
            '<dc:language>en</dc:language></metadata><manifest>%s<item id="css" href="style.css" media-type="text/css"/>'
            '</manifest><spine>%s</spine></package>' % (title, author, items, spine))
        z.writestr('OEBPS/style.css', 'p { zebracss: 1 }')
        for href, t, paras in chapters:
            z.writestr('OEBPS/' + href, big if big is not None else page(t, paras))
book(root + '/books/whale.epub', 'Whale Tales', 'Herman Melville', chapters)
book(root + '/books/bomb.epub', 'Bomb', 'Nobody', [('a.xhtml', 'a', [])], big=b' ' * (201 << 20))
open(root + '/books/cut.epub', 'wb').write(open(root + '/books/whale.epub', 'rb').read()[:300])
text = [[t] + paras for _, t, paras in chapters]
json.dump(dict(chapters=text), sys.stdout)
"#;

fn make_books(tree: &Path) -> Vec<Vec<String>> {
    let out = Command::new("python3")
        .arg("-c")
        .arg(MAKE_BOOKS)
        .arg(tree)
        .output()
        .expect("python3");
    assert!(
        out.status.success(),
        "making the books failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    v["chapters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            c.as_array()
                .unwrap()
                .iter()
                .map(|s| s.as_str().unwrap().to_owned())
                .collect()
        })
        .collect()
}

#[test]
fn epub_text_is_searchable_in_reading_order_and_its_title_and_author_are_shown() {
    let t = tempfile::tempdir().unwrap();
    let tree = t.path().join("tree");
    let chapters = make_books(&tree);
    let home = t.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(
        home.join("config.toml"),
        format!("[root.{:?}]\ncontent = true\n", tree),
    )
    .unwrap();
    let mut inst = Instance::new(home, &[&tree], Runner::current());
    inst.start();
    let folder = crate::content::settled(&inst, &tree, 3);
    assert_eq!(folder["indexed"], 1, "{folder:#}");
    assert_eq!(folder["failed"]["bomb"], 1, "the bomb e-book: {folder:#}");
    assert_eq!(folder["failed"]["parse"], 1, "the cut e-book: {folder:#}");
    let whale = tree.join("books/whale.epub").display().to_string();

    // Every word the test wrote into a chapter is found; what no reader
    // sees (style sheets, scripts) is not.
    for word in [
        "harpoon",
        "ishmael",
        "ambergris",
        "whiteness",
        "cafe",
        "très",
    ] {
        assert_eq!(
            found(&inst, &format!("content:{word}")),
            BTreeSet::from([whale.clone()]),
            "content:{word}"
        );
    }
    for word in ["zebracss", "zebrastyle", "xyzzyscript"] {
        assert!(
            found(&inst, &format!("content:{word}")).is_empty(),
            "content:{word} is not what a reader sees"
        );
    }
    assert_eq!(
        found(&inst, "content:\"worth its weight in gold\""),
        BTreeSet::from([whale.clone()])
    );

    // `fsctl cat` gives the chapters in the spine's order, each paragraph
    // on its line.
    let out = inst.fsctl(&["--json", "cat", &whale]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let cat: Value = serde_json::from_slice(&out.stdout).unwrap();
    let text = cat["text"].as_str().unwrap();
    let lines: Vec<&str> = text.lines().map(str::trim).collect();
    let mut last = None;
    for w in chapters.iter().flatten() {
        let at = lines.iter().position(|l| l == w);
        assert!(
            at.is_some() && at > last,
            "{w:?} not on a line of its own after what precedes it:\n{text}"
        );
        last = at;
    }

    // The title and author, as any document's.
    let info = inst.json(&["info", &whale]);
    assert_eq!(info["media"]["title"], "Whale Tales", "{info}");
    assert_eq!(info["media"]["author"], "Herman Melville", "{info}");
    assert!(info["media"].get("pages").is_none(), "{info}");
    assert_eq!(
        found(&inst, "author:melville"),
        BTreeSet::from([whale.clone()])
    );
    assert_eq!(found(&inst, "title:whale"), BTreeSet::from([whale.clone()]));
}
