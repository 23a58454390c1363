//! Documents' properties: pages, title and author (issue 32).
//!
//! - **PDF**: lopdf's metadata loader, which reads the cross-reference
//!   table, the Info dictionary (`/Title`, `/Author`, text strings in
//!   PDFDocEncoding or UTF-16) and the page tree's `/Count`, never a page's
//!   content. lopdf parses from memory, so the file is read whole, up to
//!   [`MAX_PDF`].
//! - **Office Open XML** (`.docx`, `.pptx`, `.xlsx`): `docProps/core.xml`
//!   (`dc:title`, `dc:creator`) and, for pages, `docProps/app.xml`'s
//!   `Pages` (Word's count at its last save); a presentation's pages are
//!   its slides, counted from the `ppt/slides/slideN.xml` parts (app.xml's
//!   `Slides` goes stale when a tool other than PowerPoint edits the
//!   deck). A workbook has no pages.
//! - **OpenDocument** (`.odt`, `.ods`, `.odp`): `meta.xml`'s `dc:title`,
//!   `meta:initial-creator` (the author; `dc:creator` is whoever saved it
//!   last, used only when there is no initial creator) and
//!   `meta:document-statistic`'s `meta:page-count`; a presentation
//!   without that count has its `draw:page`s in `content.xml` counted.
//! - **EPUB**: the package document's `dc:title` and first `dc:creator`
//!   (read by [`crate::formats::epub::package`]); an e-book reflows, so it
//!   has no pages.
//!
//! Which of the three a file is comes from its first bytes, not its name.
//! The zip members read here are small XML parts, each inflated through a
//! cap ([`MAX_PART`]); `content.xml` (counted only for presentations) gets
//! the documents' unzip budget. An archive listing more members than the
//! documents' limit is a bomb, as for content.

use super::{Media, clean};
use crate::{Failure, Limits};
use quick_xml::events::Event;
use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};

/// The largest PDF whose properties are read (lopdf parses from memory;
/// the child's address space is 1 GiB).
const MAX_PDF: u64 = 256 << 20;
/// The most bytes inflated from a properties part (`core.xml`, `app.xml`,
/// `meta.xml` are a few KiB).
const MAX_PART: u64 = 4 << 20;

pub(super) fn read(mut file: File, size: u64) -> Result<Media, Failure> {
    let mut head = [0u8; 1024];
    let n = read_up_to(&mut file, &mut head)?;
    let head = &head[..n];
    file.seek(SeekFrom::Start(0))
        .map_err(|e| Failure::Unreadable(e.to_string()))?;
    if head.starts_with(b"PK\x03\x04") {
        return zipped(file);
    }
    if memchr::memmem::find(head, b"%PDF-").is_some() {
        return pdf(file, size);
    }
    Err(Failure::Parse("neither a PDF nor a zip document".into()))
}

fn read_up_to(file: &mut File, buf: &mut [u8]) -> Result<usize, Failure> {
    let mut n = 0;
    while n < buf.len() {
        match file.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(Failure::Unreadable(e.to_string())),
        }
    }
    Ok(n)
}

fn pdf(file: File, size: u64) -> Result<Media, Failure> {
    if size > MAX_PDF {
        return Err(Failure::TooBig {
            size,
            limit: MAX_PDF,
        });
    }
    let bytes = crate::open::read_prefix(file, MAX_PDF)?;
    let meta =
        lopdf::Document::load_metadata_mem(&bytes).map_err(|e| Failure::Parse(e.to_string()))?;
    Ok(Media {
        title: meta.title.as_deref().and_then(clean),
        author: meta.author.as_deref().and_then(clean),
        pages: (meta.page_count > 0).then_some(meta.page_count),
        ..Media::default()
    })
}

type Archive = zip::ZipArchive<BufReader<File>>;

fn zipped(file: File) -> Result<Media, Failure> {
    let mut zip = zip::ZipArchive::new(BufReader::new(file))
        .map_err(|e| Failure::Parse(format!("not a zip archive: {e}")))?;
    let limits = Limits::default();
    if zip.len() > limits.max_zip_members {
        return Err(Failure::Bomb(format!(
            "{} members, limit {}",
            zip.len(),
            limits.max_zip_members
        )));
    }
    let names: Vec<String> = zip
        .file_names()
        .filter_map(|n| n.ok().map(std::borrow::Cow::into_owned))
        .collect();
    let has = |n: &str| names.iter().any(|x| x == n);
    let mut m = Media::default();
    if has("META-INF/container.xml") && !has("meta.xml") {
        let pkg = crate::formats::epub::package(&mut zip)?;
        m.title = pkg.title;
        m.author = pkg.author;
    } else if has("meta.xml") || has("content.xml") {
        let mut presentation = false;
        if has("mimetype") {
            let mime = part(&mut zip, "mimetype", 256, |r| {
                let mut s = String::new();
                r.read_to_string(&mut s)?;
                Ok(s)
            })?;
            presentation = mime.contains("presentation");
        }
        if has("meta.xml") {
            part(&mut zip, "meta.xml", MAX_PART, |r| odf_meta(r, &mut m))?;
        }
        if presentation && m.pages.is_none() && has("content.xml") {
            let pages = part(&mut zip, "content.xml", limits.max_unzipped_bytes, |r| {
                count_elements(r, b"page")
            })?;
            m.pages = (pages > 0).then_some(pages);
        }
    } else if has("docProps/core.xml") || has("[Content_Types].xml") {
        if has("docProps/core.xml") {
            part(&mut zip, "docProps/core.xml", MAX_PART, |r| {
                ooxml_core(r, &mut m)
            })?;
        }
        let slides = names
            .iter()
            .filter(|n| {
                n.strip_prefix("ppt/slides/slide")
                    .and_then(|n| n.strip_suffix(".xml"))
                    .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
            })
            .count() as u32;
        if slides > 0 {
            m.pages = Some(slides);
        } else if has("word/document.xml") && has("docProps/app.xml") {
            let pages = part(&mut zip, "docProps/app.xml", MAX_PART, |r| {
                element_text(r, b"Pages")
            })?;
            m.pages = pages.and_then(|p| p.trim().parse().ok()).filter(|&p| p > 0);
        }
    } else {
        return Err(Failure::Parse(
            "a zip archive with no document properties".into(),
        ));
    }
    Ok(m)
}

/// What can go wrong inside one part: the XML, or the inflater (a
/// truncated or lying member).
#[derive(Debug)]
enum PartError {
    Xml(quick_xml::Error),
    Io(std::io::Error),
}

impl From<quick_xml::Error> for PartError {
    fn from(e: quick_xml::Error) -> Self {
        PartError::Xml(e)
    }
}

impl From<std::io::Error> for PartError {
    fn from(e: std::io::Error) -> Self {
        PartError::Io(e)
    }
}

impl std::fmt::Display for PartError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PartError::Xml(e) => e.fmt(f),
            PartError::Io(e) => e.fmt(f),
        }
    }
}

/// Reads the member `name` through `parse`, inflating at most `cap`
/// bytes: past that (or past its declared size, which the zip crate
/// enforces) it is a bomb.
fn part<T>(
    zip: &mut Archive,
    name: &str,
    cap: u64,
    parse: impl FnOnce(&mut dyn BufRead) -> Result<T, PartError>,
) -> Result<T, Failure> {
    let member = zip
        .by_name(name)
        .map_err(|e| Failure::Parse(format!("{name}: {e}")))?;
    if member.size() > cap {
        return Err(Failure::Bomb(format!(
            "{name} declares {} bytes unzipped, limit {cap}",
            member.size()
        )));
    }
    // One byte past the cap tells a member that lied about its size.
    let mut limited = member.take(cap + 1);
    let mut r = BufReader::new(&mut limited);
    let got = parse(&mut r);
    drop(r);
    if limited.limit() == 0 {
        return Err(Failure::Bomb(format!("{name} inflates past {cap} bytes")));
    }
    got.map_err(|e| match e {
        PartError::Io(e) if e.to_string().contains("larger than its declared") => {
            Failure::Bomb(format!("{name} inflates past its declared size"))
        }
        e => Failure::Parse(format!("{name}: {e}")),
    })
}

fn xml(r: &mut dyn BufRead) -> quick_xml::Reader<&mut dyn BufRead> {
    let mut x = quick_xml::Reader::from_reader(r);
    x.config_mut().check_end_names = false;
    x
}

/// Hands `found` the text of each element whose local name `want`s
/// (entities decoded; not nested in another wanted one), and `on_start`
/// every start or empty tag.
fn texts(
    r: &mut dyn BufRead,
    mut want: impl FnMut(&[u8]) -> bool,
    mut found: impl FnMut(&[u8], String),
    mut on_start: impl FnMut(&quick_xml::events::BytesStart<'_>),
) -> Result<(), PartError> {
    let mut x = xml(r);
    let mut buf = Vec::new();
    let mut current: Option<(Vec<u8>, String)> = None;
    loop {
        match x.read_event_into(&mut buf)? {
            Event::Eof => return Ok(()),
            Event::Start(e) => {
                on_start(&e);
                let name = e.local_name().as_ref().to_vec();
                if current.is_none() && want(&name) {
                    current = Some((name, String::new()));
                }
            }
            Event::Empty(e) => on_start(&e),
            Event::Text(t) => {
                if let Some((_, s)) = &mut current {
                    s.push_str(&t.decode().map_err(quick_xml::Error::from)?);
                }
            }
            Event::CData(t) => {
                if let Some((_, s)) = &mut current {
                    s.push_str(&t.decode().map_err(quick_xml::Error::from)?);
                }
            }
            Event::GeneralRef(g) => {
                if let Some((_, s)) = &mut current {
                    if let Ok(Some(c)) = g.resolve_char_ref() {
                        s.push(c);
                    } else if let Ok(n) = g.decode() {
                        s.push_str(match &*n {
                            "amp" => "&",
                            "lt" => "<",
                            "gt" => ">",
                            "quot" => "\"",
                            "apos" => "'",
                            _ => "",
                        });
                    }
                }
            }
            Event::End(e)
                if current
                    .as_ref()
                    .is_some_and(|(n, _)| n.as_slice() == e.local_name().as_ref()) =>
            {
                let (n, s) = current.take().expect("checked");
                found(&n, s);
            }
            _ => {}
        }
        buf.clear();
    }
}

/// `docProps/core.xml`: `dc:title` and `dc:creator`.
fn ooxml_core(r: &mut dyn BufRead, m: &mut Media) -> Result<(), PartError> {
    texts(
        r,
        |n| matches!(n, b"title" | b"creator"),
        |n, s| match n {
            b"title" => m.title = m.title.take().or_else(|| clean(&s)),
            _ => m.author = m.author.take().or_else(|| clean(&s)),
        },
        |_| {},
    )
}

/// The text of the first element named `name`.
fn element_text(r: &mut dyn BufRead, name: &[u8]) -> Result<Option<String>, PartError> {
    let mut got = None;
    texts(
        r,
        |n| n == name,
        |_, s| {
            got.get_or_insert(s);
        },
        |_| {},
    )?;
    Ok(got)
}

/// `meta.xml`: title, author (the initial creator, else the last one),
/// and the page count of the document statistics.
fn odf_meta(r: &mut dyn BufRead, m: &mut Media) -> Result<(), PartError> {
    let (mut initial, mut last, mut pages) = (None, None, None);
    texts(
        r,
        |n| matches!(n, b"title" | b"initial-creator" | b"creator"),
        |n, s| match n {
            b"title" => m.title = m.title.take().or_else(|| clean(&s)),
            b"initial-creator" => initial = initial.take().or_else(|| clean(&s)),
            _ => last = last.take().or_else(|| clean(&s)),
        },
        |e| {
            if e.local_name().as_ref() == b"document-statistic" {
                for a in e.attributes().flatten() {
                    if a.key.local_name().as_ref() == b"page-count" {
                        pages = std::str::from_utf8(&a.value)
                            .ok()
                            .and_then(|v| v.trim().parse::<u32>().ok())
                            .filter(|&p| p > 0);
                    }
                }
            }
        },
    )?;
    m.author = initial.or(last);
    m.pages = pages;
    Ok(())
}

/// How many elements named `name` (any namespace) the part holds.
fn count_elements(r: &mut dyn BufRead, name: &[u8]) -> Result<u32, PartError> {
    let mut n = 0u32;
    texts(
        r,
        |_| false,
        |_, _| {},
        |e| {
            if e.local_name().as_ref() == name {
                n = n.saturating_add(1);
            }
        },
    )?;
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn office_core_properties_with_entities() {
        let xml = br#"<?xml version="1.0"?><cp:coreProperties xmlns:cp="c" xmlns:dc="d">
            <dc:title>Tom &amp; Jerry&#x2019;s</dc:title><dc:creator> Ada </dc:creator>
            <cp:lastModifiedBy>Someone</cp:lastModifiedBy></cp:coreProperties>"#;
        let mut m = Media::default();
        ooxml_core(&mut &xml[..], &mut m).unwrap();
        assert_eq!(m.title.as_deref(), Some("Tom & Jerry\u{2019}s"));
        assert_eq!(m.author.as_deref(), Some("Ada"));
    }

    #[test]
    fn opendocument_meta_prefers_the_initial_creator() {
        let xml = br#"<office:document-meta xmlns:office="o" xmlns:meta="m" xmlns:dc="d"><office:meta>
            <dc:creator>Last Saver</dc:creator><meta:initial-creator>First Author</meta:initial-creator>
            <dc:title>Notes</dc:title><meta:document-statistic meta:page-count="7" meta:word-count="9"/>
            </office:meta></office:document-meta>"#;
        let mut m = Media::default();
        odf_meta(&mut &xml[..], &mut m).unwrap();
        assert_eq!(m.author.as_deref(), Some("First Author"));
        assert_eq!(m.title.as_deref(), Some("Notes"));
        assert_eq!(m.pages, Some(7));
        let only_last = br#"<r xmlns:dc="d"><dc:creator>Last Saver</dc:creator></r>"#;
        let mut m = Media::default();
        odf_meta(&mut &only_last[..], &mut m).unwrap();
        assert_eq!(m.author.as_deref(), Some("Last Saver"));
        assert_eq!(m.pages, None);
    }
}
