//! Extraction of real files written to a temp dir: every format the issue
//! names, and every way a file can try to hurt the indexer. The oracle is
//! always text the test itself wrote. Each test says what the user sees.

use fsindex_extract::{
    Extracted, Extractor, Failure, Kind, Limits, Pool, SandboxConfig, extract_file, kind_for_name,
};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

fn child() -> Command {
    Command::new(env!("CARGO_BIN_EXE_fsindex-extract-child"))
}

fn extractor() -> Extractor {
    Extractor::new(child(), SandboxConfig::default())
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

/// Extracts by the name's kind, through an extractor (child for risky kinds).
fn text_of(ex: &mut Extractor, path: &Path) -> Result<Extracted, Failure> {
    let kind = kind_for_name(path.file_name().unwrap().as_encoded_bytes()).unwrap();
    ex.extract(path, kind)
}

fn ok_text(ex: &mut Extractor, path: &Path) -> String {
    match text_of(ex, path) {
        Ok(e) => e.text,
        Err(f) => panic!("{}: {f}", path.display()),
    }
}

fn zip_file(dir: &Path, name: &str, parts: &[(&str, &str)]) -> PathBuf {
    let p = dir.join(name);
    let mut z = zip::ZipWriter::new(std::fs::File::create(&p).unwrap());
    let opts = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    for (n, body) in parts {
        z.start_file(*n, opts).unwrap();
        z.write_all(body.as_bytes()).unwrap();
    }
    z.finish().unwrap();
    p
}

/// A one-page PDF with a Helvetica text object, xref offsets computed.
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

// The user searches `content:` for words in text files of any encoding and
// finds them: UTF-8, UTF-16LE with a BOM, Latin-1 and Shift-JIS all come back
// as the same Unicode text.
#[test]
fn text_in_any_encoding() {
    let dir = tempfile::tempdir().unwrap();
    let mut ex = extractor();
    let p = write(dir.path(), "utf8.txt", "naïve café — 東京".as_bytes());
    assert_eq!(ok_text(&mut ex, &p), "naïve café — 東京");

    let mut utf16 = vec![0xFF, 0xFE];
    for u in "Grüße aus Köln 🎉".encode_utf16() {
        utf16.extend_from_slice(&u.to_le_bytes());
    }
    let p = write(dir.path(), "utf16.txt", &utf16);
    assert_eq!(ok_text(&mut ex, &p), "Grüße aus Köln 🎉");

    let mut utf16be = vec![0xFE, 0xFF];
    for u in "Größe: 42 m²".encode_utf16() {
        utf16be.extend_from_slice(&u.to_be_bytes());
    }
    let p = write(dir.path(), "utf16be.txt", &utf16be);
    assert_eq!(ok_text(&mut ex, &p), "Größe: 42 m²");

    let latin1 = "Le garçon a mangé une crème brûlée à Noël, très déçu.";
    let (bytes, _, _) = encoding_rs::WINDOWS_1252.encode(latin1);
    let p = write(dir.path(), "latin1.c", &bytes);
    assert_eq!(ok_text(&mut ex, &p), latin1);

    let sjis = "今日は東京で会議があります。資料を確認してください。よろしくお願いします。";
    let (bytes, _, _) = encoding_rs::SHIFT_JIS.encode(sjis);
    let p = write(dir.path(), "memo.txt", &bytes);
    assert_eq!(ok_text(&mut ex, &p), sjis);

    // Markdown stays as written; an unknown extension with text is text; one
    // with a NUL in its first 8 KiB is binary, not a failure of the indexer.
    let p = write(
        dir.path(),
        "README.md",
        b"# Title\n\nSome *emphasis* here.\n",
    );
    assert_eq!(ok_text(&mut ex, &p), "# Title\n\nSome *emphasis* here.");
    let p = write(dir.path(), "Makefile", b"all:\n\tcargo build\n");
    assert_eq!(ok_text(&mut ex, &p), "all:\n\tcargo build");
    let p = write(dir.path(), "blob.weird", b"ab\0cd");
    assert_eq!(text_of(&mut ex, &p).unwrap_err().reason(), "binary");
}

// The user finds pages by what they say, not by their markup: no tags, no
// script or style contents, entities decoded.
#[test]
fn html_and_xml_are_text_only() {
    let dir = tempfile::tempdir().unwrap();
    let mut ex = extractor();
    let p = write(
        dir.path(),
        "page.html",
        b"<!DOCTYPE html><html><head><title>Garden notes</title>\
          <style>.tomato { color: crimsonstyleword }</style>\
          <script>var scriptword = '<p>hidden</p>';</script></head>\
          <body><h1>Tomatoes &amp; basil</h1><p>Plant in M&auml;rz, \
          water &lt;daily&gt;&nbsp;&#8212; <b>always</b>.</p></body></html>",
    );
    let t = ok_text(&mut ex, &p);
    assert_eq!(
        t,
        "Garden notes\nTomatoes & basil\nPlant in März, water <daily> — always."
    );
    assert!(!t.contains("crimsonstyleword") && !t.contains("scriptword"));

    let p = write(
        dir.path(),
        "feed.xml",
        b"<?xml version=\"1.0\"?><rss><item><title>Release 2.0</title>\
          <description><![CDATA[Faster <b>search</b>]]></description></item></rss>",
    );
    assert_eq!(ok_text(&mut ex, &p), "Release 2.0 Faster <b>search</b>");
}

// A PDF's words are searchable; the parse happens in the child.
#[test]
fn pdf_text() {
    let dir = tempfile::tempdir().unwrap();
    let mut ex = extractor();
    let p = write(
        dir.path(),
        "invoice.pdf",
        &pdf("Quarterly invoice total due"),
    );
    let e = text_of(&mut ex, &p).unwrap();
    assert_eq!(
        e.text.split_whitespace().collect::<Vec<_>>().join(" "),
        "Quarterly invoice total due"
    );
    assert_eq!(
        (e.extractor, e.kind, e.truncated),
        ("pdf", Kind::Pdf, false)
    );
}

// A corrupt PDF shows up in status as one `parse` failure, and the files after
// it are still extracted by the same pool.
#[test]
fn corrupt_pdf_fails_alone() {
    let dir = tempfile::tempdir().unwrap();
    let pool = Pool::new(child(), SandboxConfig::default(), 1);
    let bad = write(
        dir.path(),
        "broken.pdf",
        b"%PDF-1.7\n1 0 obj << /Type /Cat garbage \xff\xfe",
    );
    let good = write(dir.path(), "good.pdf", &pdf("still works"));
    let f = pool.extract(&bad, Kind::Pdf).unwrap_err();
    assert_eq!(f.reason(), "parse", "{f}");
    assert!(
        pool.extract(&good, Kind::Pdf)
            .unwrap()
            .text
            .contains("still works")
    );
}

fn docx_xml(paras: &str) -> String {
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\
         <w:document xmlns:w=\"http://schemas.openxmlformats.org/wordprocessingml/2006/main\">\
         <w:body>{paras}</w:body></w:document>"
    )
}

// Office documents' words are searchable: the body of a .docx (with its
// footer), the slides of a .pptx in order, the cells of an .xlsx.
#[test]
fn office_open_xml() {
    let dir = tempfile::tempdir().unwrap();
    let mut ex = extractor();
    let p = zip_file(
        dir.path(),
        "letter.docx",
        &[
            ("[Content_Types].xml", "<Types/>"),
            (
                "word/document.xml",
                &docx_xml(
                    "<w:p><w:r><w:t>Dear</w:t></w:r><w:r><w:t xml:space=\"preserve\"> Ms. Smith &amp; team</w:t></w:r></w:p>\
                     <w:p><w:pPr><w:tabs><w:tab w:val=\"left\" w:pos=\"720\"/></w:tabs></w:pPr><w:r><w:t>Second</w:t><w:tab/><w:t>paragraph</w:t></w:r></w:p>",
                ),
            ),
            (
                "word/footer1.xml",
                "<w:ftr xmlns:w=\"w\"><w:p><w:r><w:t>Confidential</w:t></w:r></w:p></w:ftr>",
            ),
        ],
    );
    assert_eq!(
        ok_text(&mut ex, &p),
        "Dear Ms. Smith & team\nSecond\tparagraph\nConfidential"
    );

    let slide = |t: &str| {
        format!(
            "<p:sld xmlns:p=\"p\" xmlns:a=\"a\"><p:cSld><p:spTree><p:sp><p:txBody>\
             <a:p><a:r><a:t>{t}</a:t></a:r></a:p></p:txBody></p:sp></p:spTree></p:cSld></p:sld>"
        )
    };
    let p = zip_file(
        dir.path(),
        "deck.pptx",
        &[
            ("ppt/slides/slide10.xml", &slide("Ten: roadmap")),
            ("ppt/slides/slide2.xml", &slide("Two: budget")),
            ("ppt/slides/slide1.xml", &slide("One: welcome")),
        ],
    );
    assert_eq!(
        ok_text(&mut ex, &p),
        "One: welcome\nTwo: budget\nTen: roadmap"
    );

    let p = zip_file(
        dir.path(),
        "sales.xlsx",
        &[
            (
                "xl/sharedStrings.xml",
                "<sst xmlns=\"x\"><si><t>Revenue</t></si><si><r><t>Rich</t></r><r><t xml:space=\"preserve\"> text</t></r>\
                 <rPh><t>PHONETIC</t></rPh></si></sst>",
            ),
            (
                "xl/worksheets/sheet1.xml",
                "<worksheet xmlns=\"x\"><sheetData><row r=\"1\"><c r=\"A1\" t=\"s\"><v>0</v></c><c r=\"B1\"><v>1234.5</v></c></row>\
                 <row r=\"2\"><c t=\"s\"><v>1</v></c><c t=\"inlineStr\"><is><t>Inline words</t></is></c><c t=\"b\"><v>1</v></c></row>\
                 </sheetData></worksheet>",
            ),
        ],
    );
    assert_eq!(
        ok_text(&mut ex, &p),
        "Revenue\t1234.5\nRich text\tInline words\tTRUE"
    );
}

const ODF_NS: &str = "xmlns:office=\"urn:oasis:names:tc:opendocument:xmlns:office:1.0\" \
    xmlns:text=\"urn:oasis:names:tc:opendocument:xmlns:text:1.0\" \
    xmlns:table=\"urn:oasis:names:tc:opendocument:xmlns:table:1.0\"";

// OpenDocument text and spreadsheets: the body's words, styles left out.
#[test]
fn open_document() {
    let dir = tempfile::tempdir().unwrap();
    let mut ex = extractor();
    let p = zip_file(
        dir.path(),
        "essay.odt",
        &[
            ("mimetype", "application/vnd.oasis.opendocument.text"),
            (
                "content.xml",
                &format!(
                    "<office:document-content {ODF_NS}><office:automatic-styles><style>StyleNoise</style></office:automatic-styles>\
                     <office:body><office:text><text:h>Heading odt</text:h>\
                     <text:p>Para<text:s text:c=\"2\"/>with<text:tab/>tab&amp;co</text:p></office:text></office:body>\
                     </office:document-content>"
                ),
            ),
        ],
    );
    assert_eq!(ok_text(&mut ex, &p), "Heading odt\nPara  with\ttab&co");

    let p = zip_file(
        dir.path(),
        "budget.ods",
        &[(
            "content.xml",
            &format!(
                "<office:document-content {ODF_NS}><office:body><office:spreadsheet><table:table table:name=\"S\">\
                 <table:table-row><table:table-cell office:value-type=\"string\"><text:p>Budget</text:p></table:table-cell>\
                 <table:table-cell office:value-type=\"float\" office:value=\"42\"><text:p>42</text:p></table:table-cell></table:table-row>\
                 <table:table-row><table:table-cell><text:p>Rent</text:p></table:table-cell></table:table-row>\
                 </table:table></office:spreadsheet></office:body></office:document-content>"
            ),
        )],
    );
    assert_eq!(ok_text(&mut ex, &p), "Budget\t42\nRent");
}

// RTF: the words, without control words or font tables; escapes decoded.
#[test]
fn rtf_text() {
    let dir = tempfile::tempdir().unwrap();
    let mut ex = extractor();
    let p = write(
        dir.path(),
        "memo.rtf",
        b"{\\rtf1\\ansi\\ansicpg1252\\deff0{\\fonttbl{\\f0\\froman Times New Roman;}}\
          {\\colortbl;\\red255\\green0\\blue0;}{\\*\\generator Riched20;}\
          \\viewkind4\\uc1\\pard\\f0\\fs24 Meeting at the caf\\'e9\\par \
          Price: 5\\u8364?, \\b bold\\b0  words\\par}",
    );
    assert_eq!(
        ok_text(&mut ex, &p),
        "Meeting at the café\nPrice: 5€, bold words"
    );
}

// A saved mail is found by its subject, sender and body, whatever the
// transfer encoding or charset of each part.
#[test]
fn eml_mail() {
    let dir = tempfile::tempdir().unwrap();
    let mut ex = extractor();
    let html_b64 = "PGh0bWw+PHN0eWxlPnAge2NvbG9yOnJlZH0gc3R5bGVub2lzZTwvc3R5bGU+PHA+\
                    QmFzZTY0IHNheXMgPGI+aGVsbG88L2I+ICZhbXA7IGfDvG50ZXI8L3A+PC9odG1sPg==";
    let mail = format!(
        "From: =?UTF-8?Q?Ren=C3=A9e_Dupont?= <renee@example.com>\r\n\
         To: Bob <bob@example.com>\r\n\
         Subject: =?UTF-8?B?UsOpdW5pb24gYnVkZ2V0?=\r\n\
         Date: Mon, 23 Nov 2026 10:00:00 +0000\r\n\
         MIME-Version: 1.0\r\n\
         Content-Type: multipart/mixed; boundary=\"b1\"\r\n\
         \r\n\
         --b1\r\n\
         Content-Type: text/plain; charset=iso-8859-1\r\n\
         Content-Transfer-Encoding: quoted-printable\r\n\
         \r\n\
         Caf=E9 cr=E8me meeting is at noon, a very long line that wraps in quoted=\r\n\
         -printable.\r\n\
         --b1\r\n\
         Content-Type: text/html; charset=utf-8\r\n\
         Content-Transfer-Encoding: base64\r\n\
         \r\n\
         {html_b64}\r\n\
         --b1--\r\n"
    );
    let p = write(dir.path(), "meeting.eml", mail.as_bytes());
    let t = ok_text(&mut ex, &p);
    for want in [
        "Subject: Réunion budget",
        "From: Renée Dupont <renee@example.com>",
        "To: Bob <bob@example.com>",
        "Date: 2026-11-23T10:00:00Z",
        "Café crème meeting is at noon, a very long line that wraps in quoted-printable.",
        "Base64 says hello & günter",
    ] {
        assert!(t.contains(want), "{want:?} not in {t:?}");
    }
    assert!(!t.contains("stylenoise"), "{t:?}");
}

/// Sets the uncompressed sizes recorded in a zip's local and central headers
/// to `size`, leaving the compressed data as it is (a lying archive).
fn lie_about_sizes(path: &Path, size: u32) {
    let mut b = std::fs::read(path).unwrap();
    let mut i = 0;
    while i + 30 < b.len() {
        if b[i..].starts_with(b"PK\x03\x04") {
            b[i + 22..i + 26].copy_from_slice(&size.to_le_bytes());
        } else if b[i..].starts_with(b"PK\x01\x02") {
            b[i + 24..i + 28].copy_from_slice(&size.to_le_bytes());
        }
        i += 1;
    }
    std::fs::write(path, b).unwrap();
}

/// A .docx whose body inflates to `mib` MiB of empty elements.
fn inflating_docx(dir: &Path, name: &str, mib: usize) -> PathBuf {
    let p = dir.join(name);
    let mut z = zip::ZipWriter::new(std::fs::File::create(&p).unwrap());
    let opts = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated)
        .compression_level(Some(9))
        .large_file(false);
    z.start_file("word/document.xml", opts).unwrap();
    let chunk = "<a/>".repeat(1 << 18); // 1 MiB
    for _ in 0..mib {
        z.write_all(chunk.as_bytes()).unwrap();
    }
    z.finish().unwrap();
    p
}

// A zip bomb named .docx is refused as `bomb`, quickly and in bounded memory,
// whether its headers tell the truth about its size or lie.
#[test]
fn zip_bomb_docx() {
    let dir = tempfile::tempdir().unwrap();
    let honest = inflating_docx(dir.path(), "honest.docx", 240);
    assert!(std::fs::metadata(&honest).unwrap().len() < 2 << 20);
    let liar = dir.path().join("liar.docx");
    std::fs::copy(&honest, &liar).unwrap();
    lie_about_sizes(&liar, 1000);
    let config = SandboxConfig {
        memory_limit: 256 << 20,
        ..SandboxConfig::default()
    };
    let mut ex = Extractor::new(child(), config);
    let t = Instant::now();
    let f = text_of(&mut ex, &honest).unwrap_err();
    assert_eq!(f.reason(), "bomb", "{f}");
    assert!(f.to_string().contains("declare"), "{f}");
    let f = text_of(&mut ex, &liar).unwrap_err();
    assert_eq!(f.reason(), "bomb", "{f}");
    assert!(f.to_string().contains("declared"), "{f}");
    assert!(t.elapsed() < Duration::from_secs(20), "{:?}", t.elapsed());
    // And too many members is a bomb too.
    let many: Vec<(String, &str)> = (0..50).map(|i| (format!("f{i}.xml"), "<a/>")).collect();
    let parts: Vec<(&str, &str)> = many.iter().map(|(n, b)| (n.as_str(), *b)).collect();
    let p = zip_file(dir.path(), "many.docx", &parts);
    ex.config_mut().limits.max_zip_members = 10;
    assert_eq!(text_of(&mut ex, &p).unwrap_err().reason(), "bomb");
}

// A FIFO named notes.txt shows up as `not_regular`; the indexer does not
// block on it (no writer ever opens the other end here).
#[cfg(unix)]
#[test]
fn fifo_is_never_read() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("notes.txt");
    // mkfifo(1): rustix's mknodat is not on every Unix, and this test has
    // no unsafe code.
    assert!(Command::new("mkfifo").arg(&p).status().unwrap().success());
    let t = Instant::now();
    let f = extract_file(&p, Kind::Text, &Limits::default()).unwrap_err();
    assert_eq!(f, Failure::NotRegular("fifo".into()));
    // Through the child too (as a .pdf name would go).
    let f = extractor().extract_in_child(&p, Kind::Pdf).unwrap_err();
    assert_eq!(f.reason(), "not_regular");
    assert!(t.elapsed() < Duration::from_secs(5));
}

// A 30 MiB log is `too_big`: never read, so it costs nothing.
#[test]
fn huge_text_is_too_big() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("huge.log");
    std::fs::File::create(&p)
        .unwrap()
        .set_len(30 << 20)
        .unwrap();
    let f = extract_file(&p, Kind::Text, &Limits::default()).unwrap_err();
    assert_eq!(
        f,
        Failure::TooBig {
            size: 30 << 20,
            limit: 20 << 20
        }
    );
    assert_eq!(f.reason(), "too_big");
}

// Long text is cut at the cap (on a char boundary) and marked truncated:
// the first 2 MiB are searchable, and status can say the rest is not.
#[test]
fn long_text_is_truncated() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "long.txt", "é".repeat(3 << 20).as_bytes());
    let limits = Limits {
        max_text_bytes: 1001,
        ..Limits::default()
    };
    let e = extract_file(&p, Kind::Text, &limits).unwrap();
    assert!(e.truncated);
    assert_eq!(e.text.len(), 1000);
    let small = write(dir.path(), "small.txt", b"short");
    assert!(!extract_file(&small, Kind::Text, &limits).unwrap().truncated);
}

// A symlink is not followed: its target is indexed under its own name, the
// link itself shows up as `not_regular`.
#[cfg(unix)]
#[test]
fn symlink_is_not_followed() {
    let dir = tempfile::tempdir().unwrap();
    let target = write(dir.path(), "secret.txt", b"do not read me via the link");
    let link = dir.path().join("link.txt");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let f = extract_file(&link, Kind::Text, &Limits::default()).unwrap_err();
    assert_eq!(f, Failure::NotRegular("symlink".into()));
    let f = extractor().extract_in_child(&link, Kind::Pdf).unwrap_err();
    assert_eq!(f, Failure::NotRegular("symlink".into()));
}

// A document that would take the child past its memory limit is counted as
// `memory`, and the next file works (the child is respawned).
#[test]
fn memory_limit_costs_one_file() {
    let dir = tempfile::tempdir().unwrap();
    let para = format!(
        "<w:p><w:r><w:t>{}</w:t></w:r></w:p>",
        "lorem ipsum ".repeat(1000)
    );
    let mut body = String::new();
    while body.len() < 160 << 20 {
        body.push_str(&para);
    }
    let big = zip_file(
        dir.path(),
        "big.docx",
        &[("word/document.xml", &docx_xml(&body))],
    );
    drop(body);
    let config = SandboxConfig {
        memory_limit: 128 << 20,
        limits: Limits {
            max_text_bytes: 1 << 30,
            max_unzipped_bytes: 1 << 30,
            ..Limits::default()
        },
        ..SandboxConfig::default()
    };
    let mut ex = Extractor::new(child(), config);
    let f = text_of(&mut ex, &big).unwrap_err();
    assert_eq!(f, Failure::MemoryLimit);
    let good = write(dir.path(), "after.pdf", &pdf("after the storm"));
    assert!(ok_text(&mut ex, &good).contains("after the storm"));
}

// A file that takes longer than the time limit is counted as `timeout`; the
// child is killed and the next file gets a fresh one.
#[test]
fn timeout_kills_and_respawns() {
    let dir = tempfile::tempdir().unwrap();
    let slow = inflating_docx(dir.path(), "slow.docx", 150);
    let mut ex = extractor();
    ex.config_mut().timeout = Duration::from_millis(50);
    let t = Instant::now();
    assert_eq!(text_of(&mut ex, &slow).unwrap_err(), Failure::Timeout);
    assert!(t.elapsed() < Duration::from_secs(5));
    assert_eq!(ex.child_pid(), None, "the child was killed");
    ex.config_mut().timeout = Duration::from_secs(30);
    let good = write(dir.path(), "next.pdf", &pdf("next one"));
    assert!(ok_text(&mut ex, &good).contains("next one"));
}

// A child killed in the middle of a file (by the OOM killer, by a user) costs
// that file, reported as `crashed`; the pool starts a new child. A child
// killed while idle costs nothing.
#[cfg(unix)]
#[test]
fn killed_child_is_respawned() {
    use rustix::process::{Pid, Signal, kill_process};
    let dir = tempfile::tempdir().unwrap();
    let slow = inflating_docx(dir.path(), "slow.docx", 150);
    let good = write(dir.path(), "good.pdf", &pdf("hello again"));
    let mut ex = extractor();
    ex.config_mut().limits.max_unzipped_bytes = 1 << 30;
    assert!(ok_text(&mut ex, &good).contains("hello again"));
    let pid = ex.child_pid().unwrap();
    let killer = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        let _ = kill_process(Pid::from_raw(pid as i32).unwrap(), Signal::KILL);
    });
    let f = text_of(&mut ex, &slow).unwrap_err();
    killer.join().unwrap();
    assert_eq!(f, Failure::Crashed("killed by signal 9".into()));
    assert!(ok_text(&mut ex, &good).contains("hello again"));
    let second = ex.child_pid().unwrap();
    assert_ne!(second, pid);
    // Killed while idle: the next file is simply sent to a new child.
    kill_process(Pid::from_raw(second as i32).unwrap(), Signal::KILL).unwrap();
    wait_dead(second);
    assert!(ok_text(&mut ex, &good).contains("hello again"));
}

/// Waits (with a deadline) until process `pid` has died: a zombie or gone.
#[cfg(unix)]
fn wait_dead(pid: u32) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Ok(s)
                if !s
                    .rsplit(')')
                    .next()
                    .unwrap_or("")
                    .trim_start()
                    .starts_with('Z') =>
            {
                std::thread::yield_now()
            }
            _ => return,
        }
    }
    panic!("process {pid} did not die");
}

// The extraction child shows in `top` at nice 19, with the configured
// address-space limit (and no core dumps), whatever the daemon's own priority.
#[cfg(target_os = "linux")]
#[test]
fn child_runs_low_and_limited() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "a.pdf", &pdf("priority"));
    let mut ex = Extractor::new(
        child(),
        SandboxConfig {
            memory_limit: 300 << 20,
            ..SandboxConfig::default()
        },
    );
    ok_text(&mut ex, &p);
    let pid = ex.child_pid().unwrap();
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // Fields after the ")" that ends the command name: nice is field 19 of
    // the whole line, the 17th after the name.
    let nice: i32 = stat
        .rsplit(')')
        .next()
        .unwrap()
        .split_whitespace()
        .nth(16)
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(nice, 19);
    let limits = std::fs::read_to_string(format!("/proc/{pid}/limits")).unwrap();
    let line = |name: &str| {
        limits
            .lines()
            .find(|l| l.starts_with(name))
            .unwrap()
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    };
    assert!(
        line("Max address space").contains(&(300u64 << 20).to_string()),
        "{limits}"
    );
    assert!(line("Max core file size").contains("0 0 bytes"), "{limits}");
}

// Non-UTF-8 file names survive the trip to the child and back.
#[cfg(unix)]
#[test]
fn non_utf8_names() {
    use std::os::unix::ffi::OsStrExt;
    let dir = tempfile::tempdir().unwrap();
    let p = dir
        .path()
        .join(std::ffi::OsStr::from_bytes(b"r\xe9sum\xe9.pdf"));
    std::fs::write(&p, pdf("curriculum vitae")).unwrap();
    let mut ex = extractor();
    assert!(
        ex.extract(&p, Kind::Pdf)
            .unwrap()
            .text
            .contains("curriculum vitae")
    );
}

// Several threads share a pool of two children.
#[test]
fn pool_serves_threads() {
    let dir = tempfile::tempdir().unwrap();
    let pool = std::sync::Arc::new(Pool::new(child(), SandboxConfig::default(), 2));
    let files: Vec<PathBuf> = (0..6)
        .map(|i| {
            write(
                dir.path(),
                &format!("f{i}.pdf"),
                &pdf(&format!("document number {i}")),
            )
        })
        .collect();
    let handles: Vec<_> = files
        .into_iter()
        .enumerate()
        .map(|(i, f)| {
            let pool = pool.clone();
            std::thread::spawn(move || {
                let t = pool.extract(&f, Kind::Pdf).unwrap().text;
                assert!(t.contains(&format!("document number {i}")), "{t}");
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
}
