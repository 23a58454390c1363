//! Text inside containers end to end (issue 32): EPUB e-books built by the
//! test with Python's `zipfile`, as the EPUB 3 specification lays them out
//! (a stored `mimetype` first, `META-INF/container.xml`, a package
//! document whose spine orders XHTML chapters), and mail stores written by
//! Python's `mailbox` (an mbox file, a Maildir folder). The oracle is the
//! text the test wrote into each chapter or message, the title and author
//! it put in the package, and the words it hid where no reader shows them
//! (a style sheet, a script).

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::media::found;

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
    let inst = crate::content::started_with_content(t.path(), &tree);
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

/// Writes `mail/Inbox.mbox` with Python's `mailbox` module (which quotes a
/// body line starting with `From ` as `>From `), four messages with words
/// the test placed in one field each; a `todo.txt` that also says milk;
/// a Maildir `mail/Work` (one message new, one seen); and `mail/liar.mbox`, whose one message claims a 1 GB body by
/// `Content-Length`. Prints the messages (subject, the words only it holds).
const MAKE_MAIL: &str = r#"
import json, mailbox, os, sys
from email.message import EmailMessage
root = sys.argv[1]
os.makedirs(root + '/mail', exist_ok=True)
open(root + '/todo.txt', 'w').write('buy milk\n')
msgs = [
    dict(subject='Milk order', frm='Ishmael <ishmael@pequod.example>', to='Starbuck <starbuck@pequod.example>',
         date='Thu, 18 Oct 1851 10:00:00 +0000', body='Two litres of milk for the galley.\nFrom here we sail at dawn.\n'),
    dict(subject='Zucchini and Re/Plans', frm='Ahab <ahab@pequod.example>', to='Crew <crew@pequod.example>',
         date='Fri, 14 Nov 1851 09:30:00 +0000', body='Crème brûlée tonight, and more milk.\n'),
    dict(subject='Harpoons', frm='Queequeg <queequeg@pequod.example>', to='Ahab <ahab@pequod.example>',
         date='Sat, 15 Nov 1851 08:00:00 +0000', body='The bread is stale.\n'),
    dict(subject='', frm='Stubb <stubb@pequod.example>', to='Flask <flask@pequod.example>',
         date='Wed, 16 Nov 1853 07:00:00 +0000', body='Nothing to say about doubloons.\n'),
]
box = mailbox.mbox(root + '/mail/Inbox.mbox')
for m in msgs:
    e = EmailMessage()
    if m['subject']:
        e['Subject'] = m['subject']
    e['From'] = m['frm']; e['To'] = m['to']; e['Date'] = m['date']
    e.set_content(m['body'], cte='quoted-printable')
    box.add(e)
box.flush(); box.close()
raw = open(root + '/mail/Inbox.mbox', 'rb').read()
assert b'\n>From here we sail' in raw, 'mailbox quotes From lines'
assert b'Cr=C3=A8me' in raw, 'the body is quoted-printable'
# A Maildir: one message in new/, one read (cur/, flag S).
md = mailbox.Maildir(root + '/mail/Work', create=True)
for subject, body, seen in [('Quarterly kelp report', 'Kelp yields are up, señor.\n', False),
                            ('Lunch', 'Soup of kelp today.\n', True)]:
    e = EmailMessage()
    e['Subject'] = subject; e['From'] = 'Ishmael <ishmael@pequod.example>'; e['To'] = 'Ahab <ahab@pequod.example>'
    e['Date'] = 'Mon, 17 Nov 1851 12:00:00 +0000'
    e.set_content(body, cte='quoted-printable')
    m = mailbox.MaildirMessage(e)
    if seen:
        m.set_subdir('cur'); m.add_flag('S')
    md.add(m)
with open(root + '/mail/liar.mbox', 'wb') as f:
    f.write(b'From liar@example Mon Jan  1 00:00:00 2024\nSubject: big\nContent-Length: 1073741824\n\nshort body\n')
json.dump([m['subject'] for m in msgs], sys.stdout)
"#;

#[test]
fn each_message_of_an_mbox_or_maildir_is_found_by_subject_from_to_date_and_body_and_shown_in_its_mailbox()
 {
    let t = tempfile::tempdir().unwrap();
    let tree = t.path().join("tree");
    crate::content::run_python(MAKE_MAIL, &[&tree]);
    let inst = crate::content::started_with_content(t.path(), &tree);
    let folder = crate::content::settled(&inst, &tree, 5);
    assert_eq!(
        folder["indexed"], 4,
        "the mailbox, the two Maildir messages and todo.txt: {folder:#}"
    );
    // The 1 GB claim: not read, with the reason, and the child was not
    // killed for memory (nothing of that size was ever allocated).
    assert_eq!(folder["failed"]["parse"], 1, "{folder:#}");
    assert!(folder["failed"].get("memory").is_none(), "{folder:#}");
    let liar = tree.join("mail/liar.mbox").display().to_string();
    let out = inst.fsctl(&["cat", &liar]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("1073741824") && err.contains("Content-Length"),
        "the error names the claim: {err}"
    );

    let inbox = tree.join("mail/Inbox.mbox").display().to_string();
    let msg = |subject: &str| format!("{inbox}/{subject}");
    let todo = tree.join("todo.txt").display().to_string();
    // By body (quoted-printable decoded, `>From ` unquoted), subject, from,
    // to and date: each message that holds the words, shown inside its
    // mailbox; other files as usual.
    let cases: Vec<(&str, Vec<String>)> = vec![
        (
            "content:milk",
            vec![
                msg("Milk order"),
                msg("Zucchini and Re\u{2215}Plans"),
                todo.clone(),
            ],
        ),
        (
            "content:zucchini",
            vec![msg("Zucchini and Re\u{2215}Plans")],
        ),
        ("content:queequeg", vec![msg("Harpoons")]),
        ("content:starbuck", vec![msg("Milk order")]),
        ("content:1853", vec![msg("(no subject)")]),
        ("content:creme", vec![msg("Zucchini and Re\u{2215}Plans")]),
        ("content:\"from here we sail\"", vec![msg("Milk order")]),
        ("content:doubloon*", vec![msg("(no subject)")]),
        ("content:milk content:galley", vec![msg("Milk order")]),
    ];
    for (q, want) in &cases {
        let want: BTreeSet<String> = want.iter().cloned().collect();
        assert_eq!(found(&inst, q), want, "`{q}`");
    }
    // Words spread over two messages find the mailbox, not a message.
    assert_eq!(
        found(&inst, "content:milk content:stale"),
        BTreeSet::from([inbox.clone()])
    );

    // A Maildir message is shown inside its Maildir folder, whatever
    // its file's name, read as mail (quoted-printable decoded).
    let work = tree.join("mail/Work").display().to_string();
    assert_eq!(
        found(&inst, "content:kelp"),
        BTreeSet::from([
            format!("{work}/Quarterly kelp report"),
            format!("{work}/Lunch")
        ])
    );
    assert_eq!(
        found(&inst, "content:señor content:yields"),
        BTreeSet::from([format!("{work}/Quarterly kelp report")])
    );
    let out = inst.fsctl(&["--json", "search", "content:soup"]);
    let lines = crate::util::json_lines(&out);
    assert_eq!(lines.len(), 1, "{lines:?}");
    let file = lines[0]["file"].as_str().unwrap().to_owned();
    assert_eq!(lines[0]["container"], work.as_str(), "{}", lines[0]);
    assert!(lines[0].get("message").is_none(), "{}", lines[0]);
    assert!(
        file.starts_with(&format!("{work}/cur/")) && file.contains(":2,S"),
        "the message's own file: {file}"
    );
    assert!(Path::new(&file).is_file());
    // MCP find_files says the same, so an agent can open the message's file.
    let mcp = crate::mcp::Mcp::start(&inst, &tree, &[]);
    let r = mcp.ok("find_files", serde_json::json!({"query": "content:soup"}));
    let hit = &r["results"][0];
    assert_eq!(hit["path"], format!("{work}/Lunch").as_str(), "{r}");
    assert_eq!(hit["inside"]["container"], work.as_str(), "{r}");
    assert_eq!(hit["inside"]["subject"], "Lunch", "{r}");
    assert_eq!(hit["inside"]["file"], file.as_str(), "{r}");
    let r = mcp.ok(
        "find_files",
        serde_json::json!({"query": "content:harpoons"}),
    );
    assert_eq!(r["results"][0]["inside"]["message"], 3, "{r}");
    drop(mcp);

    // The mailbox's text, message by message: `>From ` unquoted, the
    // quoted-printable body decoded.
    let out = inst.fsctl(&["cat", &inbox]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.lines().any(|l| l == "From here we sail at dawn.") && !text.contains(">From"),
        "{text}"
    );
    assert!(text.contains("Crème brûlée tonight"), "{text}");

    // --json: the message's path, and where it is inside.
    let out = inst.fsctl(&["--json", "search", "content:harpoons"]);
    assert!(out.status.success());
    let lines: Vec<Value> = crate::util::json_lines(&out);
    assert_eq!(lines.len(), 1, "{lines:?}");
    let hit = &lines[0];
    assert_eq!(hit["path"], msg("Harpoons"), "{hit}");
    assert_eq!(hit["name"], "Harpoons", "{hit}");
    assert_eq!(hit["container"], inbox.as_str(), "{hit}");
    assert_eq!(hit["inside"], "Harpoons", "{hit}");
    assert_eq!(hit["message"], 3, "{hit}");
    assert!(
        hit["snippet"].as_str().unwrap().contains("**Harpoons**"),
        "the snippet is the message's: {hit}"
    );
}

/// Writes, with Python's `mailbox`, a Thunderbird-like profile folder:
/// mailboxes without an extension (`Mail/Local Folders/Inbox` with two
/// messages, `Sent` with one) beside their `.msf` summaries (Mork text, as
/// Thunderbird writes them); and a text file `notes/letter` that starts
/// "From the desk of ..., 1851" with a `Re:` line under it, no mailbox.
const MAKE_THUNDERBIRD: &str = r#"
import mailbox, os, sys
from email.message import EmailMessage
root = sys.argv[1]
os.makedirs(root + '/Mail/Local Folders'); os.makedirs(root + '/notes')
def box(path, msgs):
    b = mailbox.mbox(path)
    for subject, body in msgs:
        e = EmailMessage()
        e['Subject'] = subject; e['From'] = 'Ishmael <ishmael@pequod.example>'; e['To'] = 'Ahab <ahab@pequod.example>'
        e['Date'] = 'Mon, 17 Nov 1851 12:00:00 +0000'
        e.set_content(body)
        b.add(e)
    b.flush(); b.close()
box(root + '/Mail/Local Folders/Inbox', [('Kelp harvest', 'The kelp is ready.\n'), ('Tide tables', 'Low tide at noon, kelp exposed.\n')])
box(root + '/Mail/Local Folders/Sent', [('Re: Kelp harvest', 'Bring the cormorant.\n')])
for name in ('Inbox', 'Sent'):
    open(root + '/Mail/Local Folders/' + name + '.msf', 'w').write('// <!-- <mdb:mork:z v="1.4"/> -->\n< <(a=c)> // (f=iso-8859-1)\n  (B8=subject)(B9=sender)>\n')
open(root + '/notes/letter', 'w').write('From the desk of Captain Ahab, 1851\nRe: the white whale\n\nA gannet circles the mast.\n')
assert open(root + '/Mail/Local Folders/Inbox').read().startswith('From ')
"#;

#[test]
fn a_mailbox_without_an_extension_is_read_as_mail_and_a_from_line_alone_is_not() {
    let t = tempfile::tempdir().unwrap();
    let tree = t.path().join("tree");
    crate::content::run_python(MAKE_THUNDERBIRD, &[&tree]);
    let inst = crate::content::started_with_content(t.path(), &tree);
    let folder = crate::content::settled(&inst, &tree, 5);
    assert_eq!(folder["indexed"], 5, "{folder:#}");
    let inbox = tree.join("Mail/Local Folders/Inbox").display().to_string();
    let sent = tree.join("Mail/Local Folders/Sent").display().to_string();
    let letter = tree.join("notes/letter").display().to_string();
    let cases: Vec<(&str, Vec<String>)> = vec![
        (
            "content:kelp",
            vec![
                format!("{inbox}/Kelp harvest"),
                format!("{inbox}/Tide tables"),
                format!("{sent}/Re: Kelp harvest"),
            ],
        ),
        ("content:tide", vec![format!("{inbox}/Tide tables")]),
        (
            "content:cormorant",
            vec![format!("{sent}/Re: Kelp harvest")],
        ),
        // The letter is one text, found as the file itself.
        ("content:gannet", vec![letter.clone()]),
        ("content:whale", vec![letter.clone()]),
    ];
    for (q, want) in &cases {
        let want: BTreeSet<String> = want.iter().cloned().collect();
        assert_eq!(found(&inst, q), want, "`{q}`");
    }
    let out = inst.fsctl(&["--json", "search", "content:tide"]);
    let lines: Vec<Value> = crate::util::json_lines(&out);
    assert_eq!(lines[0]["container"], inbox.as_str(), "{}", lines[0]);
    assert_eq!(lines[0]["message"], 2, "{}", lines[0]);
    // The letter reads as the text the test wrote, its first line kept (an
    // mbox reader would take it for a message's envelope).
    let out = inst.fsctl(&["cat", &letter]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim_end(),
        "From the desk of Captain Ahab, 1851\nRe: the white whale\n\nA gannet circles the mast."
    );
}
