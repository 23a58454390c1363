//! EPUB e-books (issue 32): a zip of XHTML chapters, listed in reading
//! order by a package document (OPF).
//!
//! `META-INF/container.xml` names the package; the package's `manifest`
//! maps ids to files and its `spine` orders the ids; each (X)HTML chapter
//! goes through this crate's markup scanner, as an `.html` file would (no
//! style, no script, entities decoded). The package's `dc:title` and
//! `dc:creator` are the book's title and author, read here for the media
//! worker too ([`package`]).
//!
//! Zip bombs are refused as for Office files: by the sizes the members
//! declare and by the bytes actually inflated, against
//! [`Limits::max_unzipped_bytes`] summed over the members read, and an
//! archive of more than [`Limits::max_zip_members`] members. The container
//! and the package are capped at 4 MiB each. Images, fonts and styles are
//! never inflated; reading stops at the text cap.

use crate::sink::TextSink;
use crate::{Failure, Limits, decode, formats::markup};
use quick_xml::events::{BytesStart, Event};
use std::fs::File;
use std::io::{BufReader, Read};

/// Bump when the output for the same file changes.
pub const VERSION: u32 = 1;

/// The most bytes inflated from the container or the package document.
const MAX_PACKAGE: u64 = 4 << 20;

pub type Archive = zip::ZipArchive<BufReader<File>>;

/// What the package document says.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Package {
    pub title: Option<String>,
    pub author: Option<String>,
    /// The chapters' member names, in reading order.
    pub spine: Vec<String>,
}

pub fn extract(file: File, limits: &Limits, sink: &mut TextSink) -> Result<(), Failure> {
    let mut zip = open(file, limits)?;
    let pkg = package(&mut zip)?;
    if pkg.spine.is_empty() {
        return Err(Failure::Parse("the package lists no chapters".into()));
    }
    let mut left = limits.max_unzipped_bytes;
    for name in &pkg.spine {
        if sink.is_full() {
            break;
        }
        let bytes = match member(&mut zip, name, left) {
            Ok(b) => b,
            Err(f @ Failure::Bomb(_)) => return Err(f),
            // A chapter the manifest names but the zip lacks (or a damaged
            // one): skipped, as readers do.
            Err(_) => continue,
        };
        left -= bytes.len() as u64;
        let (text, _) = decode::decode_named(&bytes, true);
        markup::to_text(&text, true, sink);
        sink.newline();
    }
    Ok(())
}

/// Opens the zip, refusing one with too many members.
pub fn open(file: File, limits: &Limits) -> Result<Archive, Failure> {
    let zip = zip::ZipArchive::new(BufReader::new(file))
        .map_err(|e| Failure::Parse(format!("not a zip archive: {e}")))?;
    if zip.len() > limits.max_zip_members {
        return Err(Failure::Bomb(format!(
            "{} members, limit {}",
            zip.len(),
            limits.max_zip_members
        )));
    }
    Ok(zip)
}

/// Reads the container and the package document.
pub fn package(zip: &mut Archive) -> Result<Package, Failure> {
    let container = member(zip, "META-INF/container.xml", MAX_PACKAGE)?;
    let mut opf = None;
    each_tag(&container, |e| {
        if opf.is_none() && e.local_name().as_ref() == b"rootfile" {
            opf = attr(e, b"full-path");
        }
    })
    .map_err(|e| Failure::Parse(format!("META-INF/container.xml: {e}")))?;
    let opf = opf.ok_or_else(|| Failure::Parse("the container names no package".into()))?;
    let bytes = member(zip, &opf, MAX_PACKAGE)?;
    let base = opf.rsplit_once('/').map_or("", |(dir, _)| dir);
    let parsed = parse_package(&bytes).map_err(|e| Failure::Parse(format!("{opf}: {e}")))?;
    let spine = parsed
        .spine
        .iter()
        .filter_map(|id| parsed.manifest.iter().find(|(i, _, _)| i == id))
        .filter(|(_, _, mime)| mime.contains("html") || mime.is_empty())
        .filter_map(|(_, href, _)| resolve(base, href))
        .collect();
    Ok(Package {
        title: parsed.title,
        author: parsed.author,
        spine,
    })
}

/// The package document's parts, as written.
#[derive(Default)]
struct Parsed {
    title: Option<String>,
    author: Option<String>,
    /// (id, href, media-type)
    manifest: Vec<(String, String, String)>,
    spine: Vec<String>,
}

fn parse_package(bytes: &[u8]) -> Result<Parsed, quick_xml::Error> {
    let mut p = Parsed::default();
    let mut x = quick_xml::Reader::from_reader(bytes);
    x.config_mut().check_end_names = false;
    let mut buf = Vec::new();
    // Inside dc:title or dc:creator: which, and the text so far.
    let mut current: Option<(bool, String)> = None;
    loop {
        match x.read_event_into(&mut buf)? {
            Event::Eof => break,
            Event::Start(e) => {
                let name = e.local_name();
                match name.as_ref() {
                    b"title" if p.title.is_none() => current = Some((true, String::new())),
                    b"creator" if p.author.is_none() => current = Some((false, String::new())),
                    _ => package_tag(&e, &mut p),
                }
            }
            Event::Empty(e) => package_tag(&e, &mut p),
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
                        s.push_str(&markup::decode_entities(&format!("&{n};")));
                    }
                }
            }
            Event::End(e) if matches!(e.local_name().as_ref(), b"title" | b"creator") => {
                if let Some((is_title, s)) = current.take() {
                    let s = s.split_whitespace().collect::<Vec<_>>().join(" ");
                    let s = (!s.is_empty()).then_some(s);
                    if is_title {
                        p.title = s;
                    } else {
                        p.author = s;
                    }
                }
            }
            _ => {}
        }
        buf.clear();
    }
    Ok(p)
}

/// Manifest items and spine references.
fn package_tag(e: &BytesStart<'_>, p: &mut Parsed) {
    match e.local_name().as_ref() {
        b"item" => {
            if let (Some(id), Some(href)) = (attr(e, b"id"), attr(e, b"href")) {
                let mime = attr(e, b"media-type").unwrap_or_default();
                p.manifest.push((id, href, mime));
            }
        }
        b"itemref" => {
            if let Some(id) = attr(e, b"idref") {
                p.spine.push(id);
            }
        }
        _ => {}
    }
}

fn attr(e: &BytesStart<'_>, name: &[u8]) -> Option<String> {
    e.attributes()
        .flatten()
        .find(|a| a.key.local_name().as_ref() == name)
        .map(|a| markup::decode_entities(&String::from_utf8_lossy(&a.value)).into_owned())
}

fn each_tag(bytes: &[u8], mut f: impl FnMut(&BytesStart<'_>)) -> Result<(), quick_xml::Error> {
    let mut x = quick_xml::Reader::from_reader(bytes);
    let mut buf = Vec::new();
    loop {
        match x.read_event_into(&mut buf)? {
            Event::Eof => return Ok(()),
            Event::Start(e) | Event::Empty(e) => f(&e),
            _ => {}
        }
        buf.clear();
    }
}

/// A manifest `href` (relative to the package's folder, percent-encoded,
/// maybe with a fragment) as a member name; `None` for one that climbs out
/// of the book or is absolute.
fn resolve(base: &str, href: &str) -> Option<String> {
    let href = href.split('#').next()?;
    if href.is_empty() || href.contains("://") || href.starts_with('/') {
        return None;
    }
    let href = percent_decode(href)?;
    let mut parts: Vec<&str> = base.split('/').filter(|s| !s.is_empty()).collect();
    for seg in href.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            s => parts.push(s),
        }
    }
    Some(parts.join("/"))
}

fn percent_decode(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            let hex = std::str::from_utf8(&b[i + 1..i + 3]).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// A member's bytes, inflating at most `cap` (past it, or past what the
/// member declares, it is a bomb).
pub fn member(zip: &mut Archive, name: &str, cap: u64) -> Result<Vec<u8>, Failure> {
    let m = zip
        .by_name(name)
        .map_err(|e| Failure::Parse(format!("{name}: {e}")))?;
    if m.size() > cap {
        return Err(Failure::Bomb(format!(
            "{name} declares {} bytes unzipped, limit {cap}",
            m.size()
        )));
    }
    let mut out = Vec::with_capacity(m.size() as usize);
    let mut limited = m.take(cap.saturating_add(1));
    match limited.read_to_end(&mut out) {
        Ok(_) if out.len() as u64 > cap => {
            Err(Failure::Bomb(format!("{name} inflates past {cap} bytes")))
        }
        Ok(_) => Ok(out),
        Err(e) if e.to_string().contains("larger than its declared") => Err(Failure::Bomb(
            format!("{name} inflates past its declared size"),
        )),
        Err(e) => Err(Failure::Parse(format!("{name}: {e}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hrefs_resolve_against_the_package_folder() {
        assert_eq!(
            resolve("OEBPS", "text/ch%201.xhtml#top").as_deref(),
            Some("OEBPS/text/ch 1.xhtml")
        );
        assert_eq!(
            resolve("OEBPS/pkg", "../ch2.html").as_deref(),
            Some("OEBPS/ch2.html")
        );
        assert_eq!(resolve("", "ch3.xhtml").as_deref(), Some("ch3.xhtml"));
        assert_eq!(resolve("", "../../etc/passwd"), None);
        assert_eq!(resolve("", "http://x/y.html"), None);
    }

    #[test]
    fn the_package_gives_title_author_and_reading_order() {
        let opf = br#"<?xml version="1.0"?>
<package xmlns="http://www.idpf.org/2007/opf" version="3.0">
  <metadata xmlns:dc="http://purl.org/dc/elements/1.1/">
    <dc:title>Moby &amp; Dick</dc:title><dc:creator>Herman  Melville</dc:creator>
    <dc:creator>Second</dc:creator>
  </metadata>
  <manifest>
    <item id="c2" href="b.xhtml" media-type="application/xhtml+xml"/>
    <item id="c1" href="a.xhtml" media-type="application/xhtml+xml"/>
    <item id="css" href="s.css" media-type="text/css"/>
  </manifest>
  <spine><itemref idref="c1"/><itemref idref="c2"/></spine>
</package>"#;
        let p = parse_package(opf).unwrap();
        assert_eq!(p.title.as_deref(), Some("Moby & Dick"));
        assert_eq!(p.author.as_deref(), Some("Herman Melville"));
        assert_eq!(p.spine, ["c1", "c2"]);
        assert_eq!(p.manifest.len(), 3);
    }
}
