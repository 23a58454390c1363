//! Office Open XML (`.docx`, `.pptx`, `.xlsx`) and OpenDocument (`.odt`,
//! `.ods`, `.odp`): zip archives of XML parts.
//!
//! Only the parts that hold what a reader sees are read: Word's body,
//! headers, footers, footnotes, endnotes and comments; PowerPoint's slides in
//! order, then their notes; Excel's shared strings and sheets (shared and
//! inline strings, numbers as written, booleans); OpenDocument's
//! `content.xml` body. Each part is parsed as a stream with quick-xml, so
//! memory does not grow with the part, and reading stops once the text cap
//! is reached.
//!
//! Zip bombs are refused twice: by the sizes the archive declares (before
//! inflating anything) and by the bytes that actually come out of the
//! inflater (a lying header is caught at the budget, not after), against
//! [`Limits::max_unzipped_bytes`] summed over the parts read, and archives
//! listing more than [`Limits::max_zip_members`] members are refused. A fixed
//! budget (200 MiB) rather than a ratio of the file size: XML compresses
//! 10-20x and real spreadsheets exceed 10x, while 200 MiB of XML is far past
//! any text we keep (2 MiB).

use crate::sink::TextSink;
use crate::{Failure, Kind, Limits};
use quick_xml::events::{BytesStart, Event};
use std::cell::Cell;
use std::fs::File;
use std::io::{BufReader, Read};

/// Bump when the output for the same file changes.
pub const VERSION: u32 = 1;

type Archive = zip::ZipArchive<BufReader<File>>;

pub fn extract(
    file: File,
    kind: Kind,
    limits: &Limits,
    sink: &mut TextSink,
) -> Result<(), Failure> {
    let mut zip = zip::ZipArchive::new(BufReader::new(file))
        .map_err(|e| Failure::Parse(format!("not a zip archive: {e}")))?;
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
    let parts = parts(kind, &names);
    if parts.is_empty() {
        return Err(Failure::Parse(format!("no {} content part", kind.name())));
    }
    let budget = Budget {
        left: Cell::new(limits.max_unzipped_bytes),
        exceeded: Cell::new(false),
    };
    let mut declared = 0u64;
    for p in &parts {
        declared += zip.by_name(p).map(|f| f.size()).unwrap_or(0);
    }
    if declared > limits.max_unzipped_bytes {
        return Err(Failure::Bomb(format!(
            "parts declare {declared} bytes unzipped, limit {}",
            limits.max_unzipped_bytes
        )));
    }
    if kind == Kind::Xlsx {
        return xlsx(&mut zip, &parts, &budget, limits, sink);
    }
    for p in &parts {
        if sink.is_full() {
            break;
        }
        let rules = if matches!(kind, Kind::Odt | Kind::Ods | Kind::Odp) {
            Rules::Odf
        } else {
            Rules::Ooxml
        };
        read_part(&mut zip, p, &budget, |r| walk(r, rules, sink))?;
        sink.newline();
    }
    Ok(())
}

/// The parts to read, in reading order.
fn parts(kind: Kind, names: &[String]) -> Vec<String> {
    let numbered = |prefix: &str| {
        let mut v: Vec<(u32, String)> = names
            .iter()
            .filter_map(|n| {
                let num = n.strip_prefix(prefix)?.strip_suffix(".xml")?;
                Some((num.parse().ok()?, n.clone()))
            })
            .collect();
        v.sort();
        v.into_iter().map(|(_, n)| n)
    };
    let has = |n: &str| names.iter().any(|x| x == n);
    let mut v = Vec::new();
    match kind {
        Kind::Docx => {
            v.extend(has("word/document.xml").then(|| "word/document.xml".to_owned()));
            v.extend(numbered("word/header"));
            v.extend(numbered("word/footer"));
            for p in [
                "word/footnotes.xml",
                "word/endnotes.xml",
                "word/comments.xml",
            ] {
                v.extend(has(p).then(|| p.to_owned()));
            }
        }
        Kind::Pptx => {
            v.extend(numbered("ppt/slides/slide"));
            v.extend(numbered("ppt/notesSlides/notesSlide"));
        }
        Kind::Xlsx => {
            // Shared strings first: the sheets refer to them by index.
            v.extend(has("xl/sharedStrings.xml").then(|| "xl/sharedStrings.xml".to_owned()));
            v.extend(numbered("xl/worksheets/sheet"));
        }
        Kind::Odt | Kind::Ods | Kind::Odp => {
            v.extend(has("content.xml").then(|| "content.xml".to_owned()));
        }
        _ => {}
    }
    v
}

/// What may still be inflated from this archive.
struct Budget {
    left: Cell<u64>,
    exceeded: Cell<bool>,
}

/// A member's inflated bytes, counted against the budget as they come.
struct Capped<'a, R> {
    inner: R,
    budget: &'a Budget,
}

impl<R: Read> Read for Capped<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        let left = self.budget.left.get();
        if n as u64 > left {
            self.budget.exceeded.set(true);
            return Err(std::io::Error::other("unzip budget exceeded"));
        }
        self.budget.left.set(left - n as u64);
        Ok(n)
    }
}

fn read_part(
    zip: &mut Archive,
    name: &str,
    budget: &Budget,
    parse: impl FnOnce(&mut dyn std::io::BufRead) -> Result<(), quick_xml::Error>,
) -> Result<(), Failure> {
    let member = zip
        .by_name(name)
        .map_err(|e| Failure::Parse(format!("{name}: {e}")))?;
    let mut r = BufReader::new(Capped {
        inner: member,
        budget,
    });
    match parse(&mut r) {
        Ok(()) => Ok(()),
        Err(_) if budget.exceeded.get() => {
            Err(Failure::Bomb(format!("{name} inflates past the budget")))
        }
        // The zip crate stops a member at its declared size: a header that
        // lies about the size is a bomb, whatever the budget.
        Err(e) if e.to_string().contains("larger than its declared") => Err(Failure::Bomb(
            format!("{name} inflates past its declared size"),
        )),
        Err(e) => Err(Failure::Parse(format!("{name}: {e}"))),
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Rules {
    /// WordprocessingML / PresentationML / SpreadsheetML strings: text lives
    /// in `t` elements, `p` ends a paragraph.
    Ooxml,
    /// OpenDocument: all character data under `office:body`.
    Odf,
}

fn local(e: &BytesStart<'_>) -> Vec<u8> {
    e.local_name().as_ref().to_vec()
}

fn reader(r: &mut dyn std::io::BufRead) -> quick_xml::Reader<&mut dyn std::io::BufRead> {
    let mut x = quick_xml::Reader::from_reader(r);
    x.config_mut().check_end_names = false;
    x
}

/// Appends a character reference (`&amp;`, `&#233;`) inside text.
fn push_ref(r: &quick_xml::events::BytesRef<'_>, sink: &mut TextSink) {
    if let Ok(Some(c)) = r.resolve_char_ref() {
        sink.push(c);
    } else if let Ok(name) = r.decode() {
        match &*name {
            "amp" => sink.push('&'),
            "lt" => sink.push('<'),
            "gt" => sink.push('>'),
            "quot" => sink.push('"'),
            "apos" => sink.push('\''),
            _ => {}
        }
    }
}

/// Streams one XML part into the sink by the rules of its format.
fn walk(
    r: &mut dyn std::io::BufRead,
    rules: Rules,
    sink: &mut TextSink,
) -> Result<(), quick_xml::Error> {
    let mut x = reader(r);
    let mut buf = Vec::new();
    // Ooxml: inside a `t`; Odf: depth inside office:body.
    let mut in_text = 0usize;
    // Depth inside parts whose text is not shown (phonetic runs, tracked deletions).
    let mut hidden = 0usize;
    // Depth inside table cells.
    let mut cells = 0usize;
    while !sink.is_full() {
        match x.read_event_into(&mut buf)? {
            Event::Eof => break,
            Event::Start(e) => {
                let name = local(&e);
                match (rules, name.as_slice()) {
                    (_, b"rPh" | b"tracked-changes" | b"instrText" | b"delText") => hidden += 1,
                    (Rules::Ooxml, b"t") | (Rules::Odf, b"body") => in_text += 1,
                    (Rules::Odf, _) if in_text > 0 => in_text += 1,
                    _ => {}
                }
                if matches!(name.as_slice(), b"table-cell" | b"tc") {
                    cells += 1;
                }
                empty_like(rules, &name, &e, in_text, sink);
            }
            Event::Empty(e) => empty_like(rules, &local(&e), &e, in_text, sink),
            Event::End(e) => {
                let name = e.local_name().as_ref().to_vec();
                match (rules, name.as_slice()) {
                    (_, b"rPh" | b"tracked-changes" | b"instrText" | b"delText") => {
                        hidden = hidden.saturating_sub(1)
                    }
                    (Rules::Ooxml, b"t") => in_text = in_text.saturating_sub(1),
                    (Rules::Odf, _) if in_text > 0 => in_text -= 1,
                    _ => {}
                }
                if in_text > 0 || rules == Rules::Ooxml {
                    match name.as_slice() {
                        b"table-cell" | b"tc" => {
                            cells = cells.saturating_sub(1);
                            sink.cell();
                        }
                        // A paragraph inside a table cell is the cell's text.
                        b"p" | b"h" if cells > 0 => sink.space(),
                        b"p" | b"h" | b"table-row" | b"tr" => sink.newline(),
                        _ => {}
                    }
                }
            }
            Event::Text(t) if in_text > 0 && hidden == 0 => {
                sink.push_str(&t.decode().map_err(quick_xml::Error::from)?)
            }
            Event::CData(t) if in_text > 0 && hidden == 0 => {
                sink.push_str(&t.decode().map_err(quick_xml::Error::from)?)
            }
            Event::GeneralRef(r) if in_text > 0 && hidden == 0 => push_ref(&r, sink),
            _ => {}
        }
        buf.clear();
    }
    Ok(())
}

/// Elements that stand for characters: tabs, line breaks, ODF's `text:s`.
fn empty_like(rules: Rules, name: &[u8], e: &BytesStart<'_>, in_text: usize, sink: &mut TextSink) {
    if rules == Rules::Odf && in_text == 0 {
        return;
    }
    match name {
        // Word's tab stops (`<w:tabs><w:tab w:val=.. w:pos=../>`) are
        // paragraph properties, not characters; a tab in a run has no
        // attributes.
        b"tab" if rules == Rules::Odf || e.attributes().next().is_none() => sink.push('\t'),
        b"br" | b"cr" | b"line-break" => sink.push('\n'),
        b"s" if rules == Rules::Odf => {
            let n = attr(e, b"c").and_then(|c| c.parse().ok()).unwrap_or(1usize);
            for _ in 0..n.min(64) {
                sink.push(' ');
            }
        }
        _ => {}
    }
}

fn attr(e: &BytesStart<'_>, name: &[u8]) -> Option<String> {
    e.attributes()
        .flatten()
        .find(|a| a.key.local_name().as_ref() == name)
        .map(|a| String::from_utf8_lossy(&a.value).into_owned())
}

/// Excel: shared strings, then each sheet's cells, a tab between cells and a
/// line per row.
fn xlsx(
    zip: &mut Archive,
    parts: &[String],
    budget: &Budget,
    limits: &Limits,
    sink: &mut TextSink,
) -> Result<(), Failure> {
    let mut shared = Vec::new();
    let mut sheets = parts;
    if parts.first().is_some_and(|p| p == "xl/sharedStrings.xml") {
        // Strings past four times the text cap could never all be shown.
        let keep = limits.max_text_bytes.saturating_mul(4);
        read_part(zip, &parts[0], budget, |r| {
            shared_strings(r, keep, &mut shared)
        })?;
        sheets = &parts[1..];
    }
    for p in sheets {
        if sink.is_full() {
            break;
        }
        read_part(zip, p, budget, |r| sheet(r, &shared, sink))?;
        sink.newline();
    }
    Ok(())
}

fn shared_strings(
    r: &mut dyn std::io::BufRead,
    keep: usize,
    out: &mut Vec<String>,
) -> Result<(), quick_xml::Error> {
    let mut x = reader(r);
    let mut buf = Vec::new();
    let mut kept = 0usize;
    let (mut in_t, mut hidden) = (false, 0usize);
    let mut cur = String::new();
    loop {
        match x.read_event_into(&mut buf)? {
            Event::Eof => break,
            Event::Start(e) => match e.local_name().as_ref() {
                b"si" => cur.clear(),
                b"t" => in_t = true,
                b"rPh" => hidden += 1,
                _ => {}
            },
            Event::End(e) => match e.local_name().as_ref() {
                b"si" => {
                    kept += cur.len();
                    out.push(if kept <= keep {
                        std::mem::take(&mut cur)
                    } else {
                        String::new()
                    });
                }
                b"t" => in_t = false,
                b"rPh" => hidden = hidden.saturating_sub(1),
                _ => {}
            },
            Event::Text(t) if in_t && hidden == 0 && kept <= keep => {
                cur.push_str(&t.decode().map_err(quick_xml::Error::from)?)
            }
            Event::GeneralRef(r) if in_t && hidden == 0 && kept <= keep => {
                let mut s = TextSink::new(8);
                push_ref(&r, &mut s);
                cur.push_str(&s.finish(Kind::Xlsx).text);
            }
            _ => {}
        }
        buf.clear();
    }
    Ok(())
}

fn sheet(
    r: &mut dyn std::io::BufRead,
    shared: &[String],
    sink: &mut TextSink,
) -> Result<(), quick_xml::Error> {
    let mut x = reader(r);
    let mut buf = Vec::new();
    // The cell's type (`t` attribute), its `<v>` value, and whether we are in
    // the value or in an inline string's `<t>`.
    let mut cell_type = String::new();
    let mut value = String::new();
    let (mut in_v, mut in_t) = (false, false);
    let mut first_in_row = true;
    while !sink.is_full() {
        match x.read_event_into(&mut buf)? {
            Event::Eof => break,
            Event::Start(e) => match e.local_name().as_ref() {
                b"c" => {
                    cell_type = attr(&e, b"t").unwrap_or_default();
                    value.clear();
                }
                b"v" => in_v = true,
                b"t" => in_t = true,
                b"row" => first_in_row = true,
                _ => {}
            },
            Event::End(e) => match e.local_name().as_ref() {
                b"v" => in_v = false,
                b"t" => in_t = false,
                b"row" => sink.newline(),
                b"c" => {
                    let text = match cell_type.as_str() {
                        "s" => value
                            .trim()
                            .parse::<usize>()
                            .ok()
                            .and_then(|i| shared.get(i))
                            .map_or("", String::as_str),
                        "b" => {
                            if value.trim() == "1" {
                                "TRUE"
                            } else {
                                "FALSE"
                            }
                        }
                        "e" => "",
                        _ => value.as_str(),
                    };
                    if !text.is_empty() {
                        if !first_in_row {
                            sink.cell();
                        }
                        sink.push_str(text);
                        first_in_row = false;
                    }
                }
                _ => {}
            },
            Event::Text(t) if in_v || in_t => {
                value.push_str(&t.decode().map_err(quick_xml::Error::from)?)
            }
            Event::GeneralRef(r) if in_v || in_t => {
                let mut s = TextSink::new(8);
                push_ref(&r, &mut s);
                value.push_str(&s.finish(Kind::Xlsx).text);
            }
            _ => {}
        }
        buf.clear();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    // The zip crate already refuses members that inflate past their declared
    // size; the budget is the second wall, counted on actual bytes.
    #[test]
    fn the_budget_counts_actual_bytes() {
        let budget = Budget {
            left: Cell::new(10),
            exceeded: Cell::new(false),
        };
        let mut r = Capped {
            inner: &[7u8; 25][..],
            budget: &budget,
        };
        let mut buf = [0u8; 8];
        assert_eq!(r.read(&mut buf).unwrap(), 8);
        assert!(r.read(&mut buf).is_err());
        assert!(budget.exceeded.get());
    }
}
