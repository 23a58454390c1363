//! Content search end to end: `content:` queries over files the test writes
//! in every format the daemon reads, compared with an oracle that tokenizes
//! the text the test knows each file holds (the way FTS5's unicode61 with
//! `remove_diacritics 2` does: runs of letters and digits, case-folded,
//! accents dropped). Also: sensitive files' words never reach the database
//! files, bad files are counted by reason while the daemon keeps answering,
//! the index follows edits, renames and deletions, a restart re-reads
//! nothing, and content is turned on per root and per folder.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::util::{
    Instance, Runner, bin_dir, json_lines, lossy, poll_until, sync, text, write_file,
};

/// How long a change may take to show in `content:` results (watch
/// latency, the worker's sweep, the read): generous for a loaded machine
/// running debug binaries; a pass takes well under a second.
const LATENCY: Duration = Duration::from_secs(15);

/// How long the first extraction of a test tree may take.
const SETTLE: Duration = Duration::from_secs(60);

// ------------------------------------------------------------------ oracle

/// The words of `text` as the index sees them: runs of letters and digits,
/// lower-cased, accents dropped (split first, then folded, as unicode61 does).
fn tokens(text: &str) -> Vec<String> {
    use unicode_normalization::UnicodeNormalization;
    use unicode_normalization::char::is_combining_mark;
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(|w| {
            w.nfd()
                .filter(|c| !is_combining_mark(*c))
                .flat_map(char::to_lowercase)
                .collect()
        })
        .collect()
}

/// True when the words of `phrase` occur in `text` one after the other.
fn holds(text: &str, phrase: &str) -> bool {
    let want = tokens(phrase);
    assert!(!want.is_empty(), "an empty query word: {phrase:?}");
    tokens(text)
        .windows(want.len())
        .any(|w| w == want.as_slice())
}

/// One file of a test tree: where it is and what a user can find in it.
struct Doc {
    rel: String,
    /// The text a `content:` query searches; `None` when the file must
    /// never match one (sensitive, too big, broken, not a regular file).
    text: Option<String>,
    /// Whether the file is in the index at all (BLOCK and SKIP files are
    /// not, so not even a negated query returns them).
    named: bool,
}

impl Doc {
    fn has(&self, phrase: &str) -> bool {
        self.text.as_deref().is_some_and(|t| holds(t, phrase))
    }
    fn ext(&self, ext: &str) -> bool {
        self.rel
            .rsplit_once('.')
            .is_some_and(|(_, e)| e.eq_ignore_ascii_case(ext))
    }
}

/// The absolute paths of the docs that `keep` selects (the oracle's answer).
fn expect(root: &Path, docs: &[Doc], keep: impl Fn(&Doc) -> bool) -> BTreeSet<String> {
    docs.iter()
        .filter(|d| d.named && keep(d))
        .map(|d| root.join(&d.rel).display().to_string())
        .collect()
}

/// What `fsctl search` returns for `query`, as lossy absolute paths.
fn found(inst: &Instance, query: &[&str]) -> BTreeSet<String> {
    let mut q = vec!["--limit", "0"];
    q.extend_from_slice(query);
    inst.search0(&q).iter().map(|p| lossy(p)).collect()
}

// ------------------------------------------------------------ file makers

fn zip_file(path: &Path, parts: &[(&str, &str)]) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let mut z = zip::ZipWriter::new(std::fs::File::create(path).unwrap());
    let opts = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    for (name, body) in parts {
        z.start_file(*name, opts).unwrap();
        z.write_all(body.as_bytes()).unwrap();
    }
    z.finish().unwrap();
}

/// A one-page PDF showing `text` (ASCII) in Helvetica, xref offsets right.
fn pdf(text: &str) -> Vec<u8> {
    let content = format!("BT /F1 24 Tf 72 720 Td ({text}) Tj ET");
    let objects = [
        "<< /Type /Catalog /Pages 2 0 R >>".to_owned(),
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_owned(),
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R \
         /Resources << /Font << /F1 5 0 R >> >> >>"
            .to_owned(),
        format!(
            "<< /Length {} >>\nstream\n{content}\nendstream",
            content.len()
        ),
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"
            .to_owned(),
    ];
    let mut out = b"%PDF-1.4\n".to_vec();
    let mut offsets = Vec::new();
    for (i, o) in objects.iter().enumerate() {
        offsets.push(out.len());
        out.extend_from_slice(format!("{} 0 obj\n{o}\nendobj\n", i + 1).as_bytes());
    }
    let xref = out.len();
    out.extend_from_slice(
        format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1).as_bytes(),
    );
    for off in offsets {
        out.extend_from_slice(format!("{off:010} 00000 n \n").as_bytes());
    }
    out.extend_from_slice(
        format!(
            "trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n",
            objects.len() + 1
        )
        .as_bytes(),
    );
    out
}

fn docx(path: &Path, paragraphs: &[&str]) {
    let body: String = paragraphs
        .iter()
        .map(|p| format!("<w:p><w:r><w:t xml:space=\"preserve\">{p}</w:t></w:r></w:p>"))
        .collect();
    zip_file(
        path,
        &[
            ("[Content_Types].xml", "<Types/>"),
            (
                "word/document.xml",
                &format!(
                    "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\
                     <w:document xmlns:w=\"http://schemas.openxmlformats.org/wordprocessingml/2006/main\">\
                     <w:body>{body}</w:body></w:document>"
                ),
            ),
        ],
    );
}

/// An .xlsx with one row: a shared string, a number and an inline string.
fn xlsx(path: &Path, shared: &str, number: &str, inline: &str) {
    zip_file(
        path,
        &[
            (
                "xl/sharedStrings.xml",
                &format!("<sst xmlns=\"x\"><si><t>{shared}</t></si></sst>"),
            ),
            (
                "xl/worksheets/sheet1.xml",
                &format!(
                    "<worksheet xmlns=\"x\"><sheetData><row r=\"1\">\
                     <c r=\"A1\" t=\"s\"><v>0</v></c><c r=\"B1\"><v>{number}</v></c>\
                     <c r=\"C1\" t=\"inlineStr\"><is><t>{inline}</t></is></c>\
                     </row></sheetData></worksheet>"
                ),
            ),
        ],
    );
}

const ODF_NS: &str = "xmlns:office=\"urn:oasis:names:tc:opendocument:xmlns:office:1.0\" \
    xmlns:text=\"urn:oasis:names:tc:opendocument:xmlns:text:1.0\"";

fn odt(path: &Path, heading: &str, para: &str) {
    zip_file(
        path,
        &[
            ("mimetype", "application/vnd.oasis.opendocument.text"),
            (
                "content.xml",
                &format!(
                    "<office:document-content {ODF_NS}><office:body><office:text>\
                     <text:h>{heading}</text:h><text:p>{para}</text:p>\
                     </office:text></office:body></office:document-content>"
                ),
            ),
        ],
    );
}

/// A .docx whose body inflates to `mib` MiB (more than the 200 MiB the
/// daemon allows), from a file of a few hundred KiB.
fn zip_bomb(path: &Path, mib: usize) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let mut z = zip::ZipWriter::new(std::fs::File::create(path).unwrap());
    let opts = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated)
        .compression_level(Some(1))
        .large_file(false);
    z.start_file("word/document.xml", opts).unwrap();
    let chunk = "<a/>".repeat(1 << 18); // 1 MiB
    for _ in 0..mib {
        z.write_all(chunk.as_bytes()).unwrap();
    }
    z.finish().unwrap();
}

fn mkfifo(path: &Path) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let st = Command::new("mkfifo").arg(path).status().unwrap();
    assert!(st.success());
}

fn utf16le_bom(s: &str) -> Vec<u8> {
    let mut b = vec![0xFF, 0xFE];
    for u in s.encode_utf16() {
        b.extend_from_slice(&u.to_le_bytes());
    }
    b
}

/// Writes one file of every readable format under `root` and returns what
/// each says (for the oracle). Words are chosen to overlap across formats
/// (Zürich, résumé, crème brûlée) so that queries match several files.
fn formats_tree(root: &Path) -> Vec<Doc> {
    let mut docs = Vec::new();
    let mut text = |rel: &str, bytes: &[u8], said: &str| {
        write_file(root, rel, bytes);
        docs.push(Doc {
            rel: rel.into(),
            text: Some(said.into()),
            named: true,
        });
    };
    let utf8 = "Naïve café owners in Zürich serve crème brûlée; the RÉSUMÉ lists their awards.";
    text("docs/utf8.txt", utf8.as_bytes(), utf8);
    let utf16 = "Grüße aus Köln: the Zürich résumé arrived by fax.";
    text("docs/utf16.txt", &utf16le_bom(utf16), utf16);
    let latin1 = "Le garçon a mangé une crème brûlée à Noël, très déçu par le dîner.";
    let (bytes, _, _) = encoding_rs::WINDOWS_1252.encode(latin1);
    text("docs/latin1.txt", &bytes, latin1);
    let sjis = "今日は東京で会議があります。資料を確認してください。よろしくお願いします。";
    let (bytes, _, _) = encoding_rs::SHIFT_JIS.encode(sjis);
    text("docs/sjis.txt", &bytes, sjis);
    let md = "# Garden plan\n\nPlant **tomatoes** and basil by the shed; see my _résumé_.\n";
    text("notes/plan.md", md.as_bytes(), md);
    // What a browser shows; the script and style words are never text.
    let html = "<!DOCTYPE html><html><head><title>Garden notes</title>\
                <style>.tomato { color: styleonlyword }</style>\
                <script>var scriptonlyword = '<p>hidden</p>';</script></head>\
                <body><h1>Tomatoes &amp; basil</h1><p>Plant in M&auml;rz, water daily.</p></body></html>";
    text(
        "web/page.html",
        html.as_bytes(),
        "Garden notes\nTomatoes & basil\nPlant in März, water daily.",
    );

    let mut doc = |rel: &str, said: &str| {
        docs.push(Doc {
            rel: rel.into(),
            text: Some(said.into()),
            named: true,
        })
    };
    let said = "Quarterly invoice total due 1240";
    std::fs::write(root.join("docs/invoice.pdf"), pdf(said)).unwrap();
    doc("docs/invoice.pdf", said);
    docx(
        &root.join("docs/letter.docx"),
        &["Dear Ms. Smith,", "the quarterly résumé is attached."],
    );
    doc(
        "docs/letter.docx",
        "Dear Ms. Smith,\nthe quarterly résumé is attached.",
    );
    xlsx(
        &root.join("docs/sales.xlsx"),
        "Revenue",
        "1234.5",
        "Zürich office",
    );
    doc("docs/sales.xlsx", "Revenue\t1234.5\tZürich office");
    odt(
        &root.join("docs/essay.odt"),
        "Dessert essay",
        "On crème brûlée and its burnt sugar.",
    );
    doc(
        "docs/essay.odt",
        "Dessert essay\nOn crème brûlée and its burnt sugar.",
    );
    docs
}

/// Sensitive files of every tier, each with a word of its own. BLOCK and
/// SKIP files are not indexed at all; WARN files are, by name only.
/// Returns the docs and each file's word.
fn sensitive_tree(root: &Path) -> (Vec<Doc>, Vec<(&'static str, &'static str)>) {
    // Each word's first two letters are shared by no other word of the
    // test trees, so that FTS5's prefix compression would leave all but
    // them intact in the database if the word were ever indexed (see
    // `words_absent`).
    let files = [
        ("keys/id_rsa", "jqalphablock", false),
        ("keys/server.pem", "vxbetablock", false),
        (".ssh/config", "hqetablock", false),
        (".env", "kzgammaskip", false),
        ("credentials.txt", "wqdeltaskip", false),
        ("my_password.txt", "fqepsilonwarn", true),
        ("api_token.md", "zqzetawarn", true),
    ];
    let mut docs = Vec::new();
    let mut words = Vec::new();
    for (rel, word, named) in files {
        write_file(
            root,
            rel,
            format!("-----BEGIN PRIVATE DATA-----\n{word}\nhunter2\n").as_bytes(),
        );
        docs.push(Doc {
            rel: rel.into(),
            text: None,
            named,
        });
        words.push((rel, word));
    }
    (docs, words)
}

// --------------------------------------------------------------- status

/// The status entry of the content folder `path`, if the worker has
/// reported on it yet.
fn content_folder(status: &Value, path: &Path) -> Option<Value> {
    let want = path.display().to_string();
    status["content"]["folders"]
        .as_array()?
        .iter()
        .find(|f| f["path"] == want.as_str())
        .cloned()
}

/// Failures by reason, as status shows them.
fn failed_of(folder: &Value) -> BTreeMap<String, u64> {
    folder["failed"]
        .as_object()
        .map(|m| {
            m.iter()
                .map(|(k, v)| (k.clone(), v.as_u64().unwrap()))
                .collect()
        })
        .unwrap_or_default()
}

/// A daemon started on `tree` with content search on for the whole of it,
/// its home beside the tree in `t`.
pub(super) fn started_with_content(t: &Path, tree: &Path) -> Instance {
    let home = t.join("home");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(
        home.join("config.toml"),
        format!("[root.{:?}]\ncontent = true\n", tree),
    )
    .unwrap();
    let mut inst = Instance::new(home, &[tree], Runner::current());
    inst.start();
    inst
}

/// Runs a Python script the test brings, with `args`; it must succeed.
pub(super) fn run_python(script: &str, args: &[&Path]) {
    let out = Command::new("python3")
        .arg("-c")
        .arg(script)
        .args(args)
        .output()
        .expect("python3");
    assert!(
        out.status.success(),
        "python failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Waits until the worker has nothing queued under `folder` and has
/// reported at least `files` files (indexed or failed); returns that
/// folder's status entry (the caller asserts the exact figures).
pub(super) fn settled(inst: &Instance, folder: &Path, files: u64) -> Value {
    let mut last = Value::Null;
    let ok = poll_until(SETTLE, || {
        last = inst.status();
        content_folder(&last, folder).is_some_and(|f| {
            let failed: u64 = failed_of(&f).values().sum();
            f["queued"] == 0 && f["indexed"].as_u64().unwrap() + failed >= files
        })
    });
    assert!(
        ok,
        "content under {} not settled with {files} files in {SETTLE:?}; last status content: {:#}",
        folder.display(),
        last["content"]
    );
    content_folder(&last, folder).unwrap()
}

// ------------------------------------------------------------------ tests

// The user searches `content:` in a folder with content on and finds
// exactly the files whose text holds the word or phrase, whatever the
// file's encoding or format, ignoring case and accents, combined with
// other filters or negated; script and style words of a page, and the
// words of sensitive files, are never found.
#[test]
fn content_queries_equal_the_oracle() {
    let t = tempfile::tempdir().unwrap();
    let tree = t.path().join("tree");
    let mut docs = formats_tree(&tree);
    let (sensitive, _) = sensitive_tree(&tree);
    docs.extend(sensitive);
    let mut inst = Instance::new(t.path().join("home"), &[&tree], Runner::current());
    inst.args = vec!["--content".into()];
    inst.start();

    let readable = docs.iter().filter(|d| d.text.is_some()).count() as u64;
    let folder = settled(&inst, &tree, readable);
    assert_eq!(
        (folder["indexed"].as_u64(), failed_of(&folder)),
        (Some(readable), BTreeMap::new()),
        "every readable file indexed, nothing failed, no sensitive file read: {folder:#}"
    );

    let under_docs = tree.join("docs");
    let in_docs = format!("in:{}", under_docs.display());
    type Case<'a> = (Vec<&'a str>, Box<dyn Fn(&Doc) -> bool + 'a>);
    let cases: Vec<Case> = vec![
        // Single words, in any case, with or without accents.
        (vec!["content:zurich"], Box::new(|d| d.has("zurich"))),
        (vec!["content:ZÜRICH"], Box::new(|d| d.has("zurich"))),
        (vec!["content:resume"], Box::new(|d| d.has("resume"))),
        (vec!["content:RÉSUMÉ"], Box::new(|d| d.has("resume"))),
        (vec!["content:Köln"], Box::new(|d| d.has("koln"))),
        (vec!["content:garcon"], Box::new(|d| d.has("garcon"))),
        (vec!["content:tomatoes"], Box::new(|d| d.has("tomatoes"))),
        (vec!["content:quarterly"], Box::new(|d| d.has("quarterly"))),
        (vec!["content:revenue"], Box::new(|d| d.has("revenue"))),
        (vec!["content:1234"], Box::new(|d| d.has("1234"))),
        (vec!["content:dessert"], Box::new(|d| d.has("dessert"))),
        (vec!["content:marz"], Box::new(|d| d.has("marz"))),
        // Shift-JIS decoded: unicode61 keeps a run of kana and kanji as one
        // word.
        (
            vec!["content:資料を確認してください"],
            Box::new(|d| d.has("資料を確認してください")),
        ),
        // Phrases: the words in that order, nothing between.
        (
            vec!["content:\"crème brûlée\""],
            Box::new(|d| d.has("creme brulee")),
        ),
        (
            vec!["content:\"CREME BRULEE\""],
            Box::new(|d| d.has("creme brulee")),
        ),
        (
            vec!["content:\"brulee creme\""],
            Box::new(|d| d.has("brulee creme")),
        ),
        (
            vec!["content:\"total due\""],
            Box::new(|d| d.has("total due")),
        ),
        (
            vec!["content:\"resume is attached\""],
            Box::new(|d| d.has("resume is attached")),
        ),
        // Never text: script and style of a page, sensitive files' words.
        (vec!["content:scriptonlyword"], Box::new(|_| false)),
        (vec!["content:styleonlyword"], Box::new(|_| false)),
        (vec!["content:jqalphablock"], Box::new(|_| false)),
        (vec!["content:kzgammaskip"], Box::new(|_| false)),
        (vec!["content:fqepsilonwarn"], Box::new(|_| false)),
        (vec!["content:zqzetawarn"], Box::new(|_| false)),
        (vec!["content:hunter2"], Box::new(|_| false)),
        // Combined with other filters, with each other, and negated.
        (
            vec!["ext:txt", "content:zurich"],
            Box::new(|d| d.ext("txt") && d.has("zurich")),
        ),
        (
            vec![in_docs.as_str(), "content:resume"],
            Box::new(|d| d.rel.starts_with("docs/") && d.has("resume")),
        ),
        (
            vec!["content:resume", "content:zurich"],
            Box::new(|d| d.has("resume") && d.has("zurich")),
        ),
        (
            vec!["ext:txt", "!content:zurich"],
            Box::new(|d| d.ext("txt") && !d.has("zurich")),
        ),
        (
            vec!["ext:docx;odt;pdf", "!content:quarterly"],
            Box::new(|d| (d.ext("docx") || d.ext("odt") || d.ext("pdf")) && !d.has("quarterly")),
        ),
    ];
    let mut failures = Vec::new();
    for (query, keep) in &cases {
        let want = expect(&tree, &docs, keep);
        let got = found(&inst, query);
        if got != want {
            failures.push(format!("{query:?}:\n  expected {want:#?}\n  got {got:#?}"));
        }
    }
    assert!(
        failures.is_empty(),
        "content queries differ from the oracle:\n{}",
        failures.join("\n")
    );
    // The oracle is not vacuous: words found in several formats at once.
    for (w, n) in [("zurich", 3), ("resume", 4), ("creme brulee", 3)] {
        assert_eq!(docs.iter().filter(|d| d.has(w)).count(), n, "{w}");
    }
}

// The user's sensitive files (keys, .env, credentials, anything named like
// a password or token) are never read: their words are nowhere in the
// index's files on disk, not even in the WAL, while an ordinary file's
// word in the same folder is.
#[test]
fn sensitive_words_never_reach_the_database_files() {
    let t = tempfile::tempdir().unwrap();
    let tree = t.path().join("tree");
    let (docs, words) = sensitive_tree(&tree);
    write_file(&tree, "notes/plain.txt", b"plain yodelcontrol note");
    let mut inst = Instance::new(t.path().join("home"), &[&tree], Runner::current());
    inst.args = vec!["--content".into()];
    inst.start();
    let folder = settled(&inst, &tree, 1);
    assert_eq!(
        (folder["indexed"].as_u64(), failed_of(&folder)),
        (Some(1), BTreeMap::new()),
        "only the plain file is read: {folder:#}"
    );
    sync(&inst);
    // The WARN-tier files are in the index by name, so that their words'
    // absence is not because the files were missed.
    assert_eq!(
        found(&inst, &["my_password"]).len() + found(&inst, &["api_token"]).len(),
        2
    );
    assert_eq!(found(&inst, &["content:yodelcontrol"]).len(), 1);

    // FTS5 stores a word's bytes after the prefix it shares with the
    // previous word of its page; what follows the first two letters is
    // stored whole.
    let db = inst.db();
    let files: Vec<PathBuf> = ["", "-wal", "-shm"]
        .iter()
        .map(|s| PathBuf::from(format!("{}{s}", db.display())))
        .collect();
    let bytes: Vec<(PathBuf, Vec<u8>)> = files
        .iter()
        .filter(|p| p.exists())
        .map(|p| (p.clone(), std::fs::read(p).unwrap()))
        .collect();
    let holds_bytes = |hay: &[u8], needle: &str| {
        hay.windows(needle.len())
            .any(|w| w.eq_ignore_ascii_case(needle.as_bytes()))
    };
    assert!(
        bytes
            .iter()
            .any(|(_, b)| holds_bytes(b, &"yodelcontrol"[2..])),
        "control: an indexed word is found in the database files"
    );
    for (rel, word) in &words {
        for (p, b) in &bytes {
            assert!(
                !holds_bytes(b, &word[2..]),
                "{rel}'s word {word} is in {}",
                p.display()
            );
        }
    }
    assert_eq!(docs.iter().filter(|d| d.named).count(), 2);
}

// Files that cannot be read cost one file each: a corrupt PDF, a zip bomb
// and a 30 MiB text file show up in status as failed with their reasons;
// a FIFO named like a text file is never opened (the daemon does not hang
// on it, nor counts it); the good files around them are found, and the
// daemon keeps answering.
#[test]
fn bad_files_are_counted_by_reason_and_the_daemon_keeps_answering() {
    let t = tempfile::tempdir().unwrap();
    let tree = t.path().join("tree");
    write_file(&tree, "good/first.txt", b"pelican before the bad ones");
    write_file(
        &tree,
        "bad/broken.pdf",
        b"%PDF-1.7\n1 0 obj << /Type /Cat brokenpdfword \xff\xfe",
    );
    zip_bomb(&tree.join("bad/bomb.docx"), 210);
    assert!(std::fs::metadata(tree.join("bad/bomb.docx")).unwrap().len() < 4 << 20);
    let mut big = std::fs::File::create(tree.join("bad/huge.txt")).unwrap();
    let line = "hugeword fills thirty mebibytes of text\n".repeat(1024);
    while big.metadata().unwrap().len() < 30 << 20 {
        big.write_all(line.as_bytes()).unwrap();
    }
    drop(big);
    mkfifo(&tree.join("notes.txt"));
    write_file(&tree, "good/last.md", b"pelican after the bad ones");

    let mut inst = Instance::new(t.path().join("home"), &[&tree], Runner::current());
    inst.args = vec!["--content".into()];
    let started = Instant::now();
    inst.start();
    let folder = settled(&inst, &tree, 5);
    let want: BTreeMap<String, u64> = [("bomb", 1), ("parse", 1), ("too_big", 1)]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect();
    assert_eq!(
        (folder["indexed"].as_u64(), failed_of(&folder)),
        (Some(2), want),
        "two good files indexed; the bad ones failed by reason; the FIFO not counted: {folder:#}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "bad files held the worker up: {:?}",
        started.elapsed()
    );
    let status = inst.status();
    assert_eq!(status["content"]["failed"], 3, "{:#}", status["content"]);

    // Still answering, by name and by content.
    let good: BTreeSet<String> = ["good/first.txt", "good/last.md"]
        .iter()
        .map(|r| tree.join(r).display().to_string())
        .collect();
    assert_eq!(found(&inst, &["content:pelican"]), good);
    for w in ["hugeword", "brokenpdfword"] {
        assert!(found(&inst, &[&format!("content:{w}")]).is_empty(), "{w}");
    }
    let fifo = tree.join("notes.txt").display().to_string();
    assert_eq!(found(&inst, &["notes.txt"]), BTreeSet::from([fifo]));

    // The FIFO is not held open by the daemon (a blocking open would hang
    // the worker; a non-blocking one would be a read of a pipe).
    let pid = status["pid"].as_u64().unwrap();
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd")).unwrap();
    for fd in fds.flatten() {
        if let Ok(target) = std::fs::read_link(fd.path()) {
            assert!(
                !target.as_os_str().as_bytes().ends_with(b"notes.txt"),
                "the daemon holds the FIFO open: {}",
                target.display()
            );
        }
    }
}

// The user edits a file, renames it, deletes it: `content:` results follow
// within the watch latency (the renamed file keeps matching under its new
// name, without being read again; the deleted one stops matching). After a
// restart nothing is read again and everything is still found.
#[test]
fn content_follows_edits_renames_and_deletions_and_survives_a_restart() {
    let t = tempfile::tempdir().unwrap();
    let tree = t.path().join("tree");
    write_file(&tree, "a/draft.txt", b"the first draft mentions albatross");
    write_file(&tree, "a/other.txt", b"an unrelated note about herons");
    let mut inst = Instance::new(t.path().join("home"), &[&tree], Runner::current());
    inst.args = vec!["--content".into()];
    inst.start();
    settled(&inst, &tree, 2);
    let path = |rel: &str| tree.join(rel).display().to_string();
    let shows = |query: &str, want: &[&str], what: &str| {
        let want: BTreeSet<String> = want.iter().map(|r| path(r)).collect();
        let t0 = Instant::now();
        let mut got = BTreeSet::new();
        let ok = poll_until(LATENCY, || {
            got = found(&inst, &[query]);
            got == want
        });
        assert!(
            ok,
            "{what}: `{query}` still gives {got:?} after {LATENCY:?}, expected {want:?}"
        );
        t0.elapsed()
    };
    shows("content:albatross", &["a/draft.txt"], "initial");

    // Edit: the new word is found, the old one no longer.
    std::fs::write(
        tree.join("a/draft.txt"),
        b"the second draft mentions cormorant",
    )
    .unwrap();
    shows("content:cormorant", &["a/draft.txt"], "edited text");
    shows("content:albatross", &[], "replaced text");

    // Rename into another folder: same text, new path. (That it is not read
    // again is pinned by `a_renamed_file_is_not_read_again`.)
    std::fs::create_dir_all(tree.join("b")).unwrap();
    std::fs::rename(tree.join("a/draft.txt"), tree.join("b/final.txt")).unwrap();
    shows("content:cormorant", &["b/final.txt"], "renamed file");

    // Delete: gone from content results; the other file is untouched.
    std::fs::remove_file(tree.join("b/final.txt")).unwrap();
    shows("content:cormorant", &[], "deleted file");
    shows("content:herons", &["a/other.txt"], "untouched file");
    // Status counts the deleted file out once the worker has passed again.
    let mut before = Value::Null;
    assert!(
        poll_until(LATENCY, || {
            before = content_folder(&inst.status(), &tree).unwrap_or_default();
            before["indexed"] == 1 && before["queued"] == 0
        }),
        "status still counts the deleted file: {before:#}"
    );

    // Restart: the index is current, so nothing is read again.
    inst.stop();
    inst.start();
    let after = settled(&inst, &tree, 1);
    let status = inst.status();
    assert_eq!(
        (
            status["content"]["extracted"].as_u64(),
            &after["indexed"],
            &after["text_bytes"]
        ),
        (Some(0), &before["indexed"], &before["text_bytes"]),
        "an unchanged restart re-extracted files: {:#}",
        status["content"]
    );
    assert_eq!(found(&inst, &["content:herons"]).len(), 1);
}

// The user adds a second root with `fsctl roots add PATH --content` and
// finds its files by what they say, except under a folder that config.toml
// turns off; turning it on and `fsctl reload` brings those in. A root
// without content is searched by name only.
#[test]
fn content_is_turned_on_per_root_and_per_folder() {
    let t = tempfile::tempdir().unwrap();
    let plain = t.path().join("plain");
    let docs = t.path().join("docs");
    write_file(&plain, "memo.txt", b"pelican in a root without content");
    write_file(&docs, "public.txt", b"pelican in a content root");
    write_file(&docs, "private/diary.txt", b"flamingo kept out by config");
    let home = t.path().join("home");
    let config = home.join("config.toml");
    let off = |on: bool| format!("[root.{:?}]\ncontent = {on}\n", docs.join("private"));
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(&config, off(false)).unwrap();
    let mut inst = Instance::new(home, &[&plain], Runner::current());
    inst.start();

    let out = inst.fsctl(&["roots", "add", docs.to_str().unwrap(), "--content"]);
    assert!(out.status.success(), "{}", text(&out));
    let mut got = BTreeSet::new();
    let want = BTreeSet::from([docs.join("public.txt").display().to_string()]);
    assert!(
        poll_until(SETTLE, || {
            got = found(&inst, &["content:pelican"]);
            got == want
        }),
        "content:pelican gave {got:?}, expected only the content root's file"
    );
    let folder = settled(&inst, &docs, 1);
    assert_eq!(folder["indexed"], 1, "{folder:#}");
    assert!(found(&inst, &["content:flamingo"]).is_empty());
    // Both are indexed by name all the same.
    assert_eq!(found(&inst, &["diary"]).len(), 1);
    assert_eq!(found(&inst, &["memo"]).len(), 1);

    std::fs::write(&config, off(true)).unwrap();
    let out = inst.fsctl(&["reload"]);
    assert!(out.status.success(), "{}", text(&out));
    let want = BTreeSet::from([docs.join("private/diary.txt").display().to_string()]);
    assert!(
        poll_until(SETTLE, || {
            got = found(&inst, &["content:flamingo"]);
            got == want
        }),
        "after reload content:flamingo gave {got:?}, expected {want:?}"
    );
    // The roots are still both there, and the plain one still has no content.
    assert_eq!(
        found(&inst, &["content:pelican"]),
        BTreeSet::from([docs.join("public.txt").display().to_string()])
    );
    assert_eq!(found(&inst, &["memo"]).len(), 1);
}

// `fsctl --json search content:...` gives each hit the passage that
// matched, with the words marked **like this** as the file spells them
// (case and accents kept).
#[test]
fn content_results_carry_a_snippet() {
    let t = tempfile::tempdir().unwrap();
    let tree = t.path().join("tree");
    write_file(
        &tree,
        "cv.txt",
        "Curriculum vitae.\nMy Résumé lists ZÜRICH and Köln.\n".as_bytes(),
    );
    write_file(&tree, "other.txt", b"nothing to see");
    let mut inst = Instance::new(t.path().join("home"), &[&tree], Runner::current());
    inst.args = vec!["--content".into()];
    inst.start();
    settled(&inst, &tree, 2);

    let lines = |query: &[&str]| {
        let mut a = vec!["--json", "search"];
        a.extend_from_slice(query);
        let out = inst.fsctl(&a);
        assert!(out.status.success(), "{}", text(&out));
        json_lines(&out)
    };
    let hits = lines(&["content:resume"]);
    assert_eq!(hits.len(), 1, "{hits:?}");
    assert_eq!(hits[0]["path"], tree.join("cv.txt").display().to_string());
    let s = hits[0]["snippet"].as_str().unwrap_or_default();
    assert!(s.contains("**Résumé**"), "snippet {s:?}");
    let hits = lines(&["content:\"zurich and koln\""]);
    let s = hits[0]["snippet"].as_str().unwrap_or_default();
    assert!(s.contains("**ZÜRICH** **and** **Köln**"), "snippet {s:?}");
    // A name query has no snippet.
    let hits = lines(&["cv"]);
    assert_eq!(hits.len(), 1, "{hits:?}");
    assert!(hits[0].get("snippet").is_none(), "{:?}", hits[0]);
    // How many results carry one is the caller's choice.
    let hits = lines(&["--snippets", "0", "content:resume"]);
    assert!(hits[0].get("snippet").is_none(), "{:?}", hits[0]);
    let hits = lines(&["--snippets", "1", "content:resume"]);
    assert!(
        hits[0]["snippet"]
            .as_str()
            .unwrap_or_default()
            .contains("**Résumé**")
    );
}

// `--snippets N`: the first N results of a content query carry a snippet,
// the rest none.
#[test]
fn the_number_of_snippets_is_the_callers_choice() {
    let t = tempfile::tempdir().unwrap();
    let tree = t.path().join("tree");
    for i in 0..5 {
        write_file(
            &tree,
            format!("n{i}.txt"),
            format!("note {i} about the heron").as_bytes(),
        );
    }
    let mut inst = Instance::new(t.path().join("home"), &[&tree], Runner::current());
    inst.args = vec!["--content".into()];
    inst.start();
    settled(&inst, &tree, 5);
    for (n, want) in [("0", 0), ("2", 2), ("10", 5)] {
        let out = inst.fsctl(&["--json", "search", "--snippets", n, "content:heron"]);
        assert!(out.status.success(), "{}", text(&out));
        let hits = json_lines(&out);
        assert_eq!(hits.len(), 5);
        let with: Vec<&Value> = hits.iter().filter(|h| h.get("snippet").is_some()).collect();
        assert_eq!(with.len(), want, "--snippets {n}: {hits:?}");
        // The first ones, in the order shown.
        assert!(hits[..want].iter().all(|h| {
            h.get("snippet")
                .and_then(Value::as_str)
                .is_some_and(|s| s.contains("**heron**"))
        }));
    }
}

// `fsctl search content:...` into a pipe prints bare paths, so it asks the
// daemon for no snippets (their cost was a third of a common word's
// answer); `--json` asks for them. What the daemon cut is read from its own
// debug log (`snippets=` of "content search answered").
#[test]
fn a_pipe_gets_bare_paths_and_costs_no_snippets() {
    let t = tempfile::tempdir().unwrap();
    let tree = t.path().join("tree");
    let mut want = BTreeSet::new();
    for i in 0..5 {
        let name = format!("n{i}.txt");
        write_file(&tree, &name, format!("note {i} about the egret").as_bytes());
        want.insert(tree.join(&name).display().to_string());
    }
    let mut inst = Instance::new(t.path().join("home"), &[&tree], Runner::current());
    inst.args = vec!["--content".into()];
    inst.env = vec![("FSINDEX_LOG".into(), "fsindexd=debug".into())];
    inst.start();
    settled(&inst, &tree, 5);
    // The `snippets=` of each content answer the daemon logged, in order.
    let cut = || -> Vec<u32> {
        inst.log()
            .lines()
            .filter(|l| l.contains("content search answered"))
            .filter_map(|l| {
                let n = l.split("snippets=").nth(1)?;
                n.split(|c: char| !c.is_ascii_digit()).next()?.parse().ok()
            })
            .collect()
    };
    let answered = |n: usize| {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let got = cut();
            if got.len() >= n || Instant::now() > deadline {
                return got;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    };
    let before = cut().len();

    let out = inst.fsctl(&["search", "content:egret"]);
    assert!(out.status.success(), "{}", text(&out));
    let lines: BTreeSet<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_owned)
        .collect();
    assert_eq!(
        lines, want,
        "a pipe gets the paths, one a line, nothing else"
    );
    assert_eq!(answered(before + 1).get(before), Some(&0), "{}", inst.log());

    let out = inst.fsctl(&["--json", "search", "content:egret"]);
    assert!(out.status.success(), "{}", text(&out));
    let hits = json_lines(&out);
    assert_eq!(hits.len(), 5);
    assert!(
        hits.iter().all(|h| h["snippet"]
            .as_str()
            .is_some_and(|s| s.contains("**egret**"))),
        "{hits:?}"
    );
    assert_eq!(
        answered(before + 2).get(before + 1),
        Some(&5),
        "{}",
        inst.log()
    );
}

/// `content:WORD*` is a prefix query: the files holding a word that starts
/// with it (the test's own tokenizer decides), and with a phrase the last
/// word is the prefix; each result's snippet marks such a word. Without
/// the star a word matches only whole.
#[test]
fn a_content_word_ending_in_a_star_is_a_prefix() {
    let t = tempfile::tempdir().unwrap();
    let tree = t.path().join("tree");
    let texts = [
        ("a.txt", "The invoice is attached."),
        ("b.txt", "She invoiced them twice."),
        ("c.txt", "Does this INVOLVE us at all"),
        ("d.txt", "vino invariant inverse"),
        ("e.txt", "re_invoke splits at the underscore"),
        ("f.txt", "Caf\u{e9} invocation r\u{e9}sum\u{e9}"),
        ("g.txt", "nothing of the sort"),
    ];
    for (name, body) in texts {
        write_file(&tree, name, body.as_bytes());
    }
    let mut inst = Instance::new(t.path().join("home"), &[&tree], Runner::current());
    inst.args = vec!["--content".into()];
    inst.start();
    settled(&inst, &tree, texts.len() as u64);
    let path = |n: &str| tree.join(n).display().to_string();
    for (query, prefix) in [
        ("invo*", "invo"),
        ("INV*", "inv"),
        ("invoice*", "invoice"),
        ("resum*", "resum"),
        ("invoke*", "invoke"),
        ("zzz*", "zzz"),
    ] {
        let want: BTreeSet<String> = texts
            .iter()
            .filter(|(_, body)| tokens(body).iter().any(|w| w.starts_with(prefix)))
            .map(|(n, _)| path(n))
            .collect();
        let q = format!("content:{query}");
        assert_eq!(found(&inst, &[q.as_str()]), want, "{q}");
        for hit in json_lines(&inst.fsctl(&["--json", "search", &q])) {
            let s = hit["snippet"].as_str().unwrap_or_default();
            let marked = s.split("**").nth(1).unwrap_or_default();
            assert!(
                tokens(marked)
                    .first()
                    .is_some_and(|w| w.starts_with(prefix)),
                "{q}: {hit}"
            );
        }
    }
    // Whole words without the star: exactly with `=`; in their forms
    // without (Snowball: "invoiced" is "invoice"; tests/e2e/stems.rs).
    assert_eq!(
        found(&inst, &["content:=invoice"]),
        BTreeSet::from([path("a.txt")])
    );
    assert_eq!(
        found(&inst, &["content:invoice"]),
        BTreeSet::from([path("a.txt"), path("b.txt")])
    );
    // A phrase whose last word is a prefix.
    let want: BTreeSet<String> = texts
        .iter()
        .filter(|(_, body)| {
            tokens(body)
                .windows(2)
                .any(|w| w[0] == "she" && w[1].starts_with("invo"))
        })
        .map(|(n, _)| path(n))
        .collect();
    assert_eq!(found(&inst, &["content:\"she invo*\""]), want);
}

// A renamed file keeps its content row (issue 13: "a renamed file keeps its
// content row (same entry id)"), so moving a big PDF costs no re-read.
// Known bug: a rename into another folder re-extracts the file
// (status content.extracted goes up by one); see the report of the
// content-tests branch.
#[test]
#[ignore = "bug: a rename into another folder re-reads the file"]
fn a_renamed_file_is_not_read_again() {
    let t = tempfile::tempdir().unwrap();
    let tree = t.path().join("tree");
    write_file(&tree, "a/draft.txt", b"the draft mentions cormorant");
    let mut inst = Instance::new(t.path().join("home"), &[&tree], Runner::current());
    inst.args = vec!["--content".into()];
    inst.start();
    settled(&inst, &tree, 1);
    let read_before = inst.status()["content"]["extracted"].as_u64().unwrap();
    std::fs::create_dir_all(tree.join("b")).unwrap();
    std::fs::rename(tree.join("a/draft.txt"), tree.join("b/final.txt")).unwrap();
    let want = BTreeSet::from([tree.join("b/final.txt").display().to_string()]);
    assert!(poll_until(LATENCY, || found(&inst, &["content:cormorant"]) == want));
    let status = inst.status();
    assert_eq!(
        status["content"]["extracted"].as_u64(),
        Some(read_before),
        "a rename re-read the file: {:#}",
        status["content"]
    );
}

// The extraction child is a program of its own, installed beside
// fsindexd. A daemon copied without it still finds names and plain text;
// each document counts as `sandbox` in status, and `fsctl cat` says which
// program could not be started, where. Once the child is put beside the
// daemon, the next start reads those documents.
#[test]
fn documents_wait_for_a_missing_extractor() {
    let t = tempfile::tempdir().unwrap();
    let tree = t.path().join("tree");
    write_file(&tree, "note.txt", b"a plain note about ptarmigans");
    write_file(
        &tree,
        "letter.eml",
        b"From: a@example.org\r\nTo: b@example.org\r\nSubject: Visit\r\n\r\nThe quokka says hello.\r\n",
    );
    let bins = t.path().join("bin");
    std::fs::create_dir_all(&bins).unwrap();
    for b in ["fsindexd", "fsctl"] {
        std::fs::copy(bin_dir().join(b), bins.join(b)).unwrap();
    }
    let mut inst = Instance::new(
        t.path().join("home"),
        &[&tree],
        Runner::with_bins(bins.clone()),
    );
    inst.args = vec!["--content".into()];
    inst.start();
    let folder = settled(&inst, &tree, 2);
    assert_eq!(
        (folder["indexed"].as_u64(), failed_of(&folder)),
        (Some(1), [("sandbox".to_owned(), 1)].into_iter().collect()),
        "the text file read in-process, the letter not: {folder:#}"
    );
    let path = |rel: &str| tree.join(rel).display().to_string();
    assert_eq!(
        found(&inst, &["content:ptarmigans"]),
        [path("note.txt")].into()
    );
    assert_eq!(found(&inst, &["content:quokka"]), BTreeSet::new());
    let cat = inst.fsctl(&["cat", &path("letter.eml")]);
    let err = String::from_utf8_lossy(&cat.stderr);
    let expected = bins.join("fsindex-extract-child").display().to_string();
    assert!(
        !cat.status.success()
            && err.contains("cannot start the extractor")
            && err.contains(&expected),
        "fsctl cat names the missing program ({expected}): {err}"
    );

    inst.stop();
    std::fs::copy(
        bin_dir().join("fsindex-extract-child"),
        bins.join("fsindex-extract-child"),
    )
    .unwrap();
    inst.start();
    let folder = settled(&inst, &tree, 2);
    assert_eq!(
        (folder["indexed"].as_u64(), failed_of(&folder)),
        (Some(2), BTreeMap::new()),
        "the letter read on the next start: {folder:#}"
    );
    assert_eq!(
        found(&inst, &["content:quokka"]),
        [path("letter.eml")].into()
    );
}
