//! Reading text for an agent: decoding (BOM, UTF-8, then chardetng's guess)
//! and choosing lines, with a hard cap on the bytes returned.

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

/// At most this much of a file is read to answer one request.
pub const READ_WINDOW: u64 = 16 << 20;

/// Bytes decoded to text, and the encoding's name.
pub fn decode(bytes: &[u8], complete: bool) -> (String, &'static str) {
    if let Some((enc, bom)) = encoding_rs::Encoding::for_bom(bytes) {
        let (text, _) = enc.decode_without_bom_handling(&bytes[bom..]);
        return (text.into_owned(), enc.name());
    }
    match std::str::from_utf8(bytes) {
        Ok(s) => return (s.to_owned(), "UTF-8"),
        // A window that ends inside a character is still UTF-8.
        Err(e) if !complete && e.error_len().is_none() => {
            return (
                String::from_utf8_lossy(&bytes[..e.valid_up_to()]).into_owned(),
                "UTF-8",
            );
        }
        Err(_) => {}
    }
    let mut det = chardetng::EncodingDetector::new(chardetng::Iso2022JpDetection::Deny);
    det.feed(bytes, complete);
    let enc = det.guess(None, chardetng::Utf8Detection::Allow);
    let (text, _) = enc.decode_without_bom_handling(bytes);
    (text.into_owned(), enc.name())
}

/// A NUL byte in the first 8 KiB: binary, as grep and git assume.
pub fn looks_binary(head: &[u8]) -> bool {
    memchr::memchr(0, &head[..head.len().min(8192)]).is_some()
}

/// Which lines to return.
#[derive(Debug, Clone, Copy, Default)]
pub struct Selection {
    pub head: Option<u64>,
    pub tail: Option<u64>,
    /// 1-based, inclusive.
    pub start_line: Option<u64>,
    pub end_line: Option<u64>,
}

#[derive(Debug)]
pub struct Excerpt {
    pub encoding: String,
    pub content: String,
    /// 1-based numbers of the first and last line returned (0 when none);
    /// with `tail` on a file larger than the window, counted from the end of
    /// the window (`lines_known` is then false).
    pub first_line: u64,
    pub last_line: u64,
    /// Lines of the file, when the whole file was read.
    pub total_lines: Option<u64>,
    pub truncated: bool,
}

/// Reads the selected lines of a text file, decoded, at most `max_bytes`
/// of text, optionally numbered.
pub fn read_lines(
    path: &Path,
    size: u64,
    sel: Selection,
    max_bytes: usize,
    numbered: bool,
) -> std::io::Result<Excerpt> {
    let mut f = std::fs::File::open(path)?;
    let from_end = sel.tail.is_some() && size > READ_WINDOW;
    if from_end {
        f.seek(SeekFrom::Start(size - READ_WINDOW))?;
    }
    let mut bytes = Vec::with_capacity(size.min(READ_WINDOW) as usize);
    f.by_ref().take(READ_WINDOW).read_to_end(&mut bytes)?;
    let complete = !from_end && (bytes.len() as u64) < READ_WINDOW;
    let (text, encoding) = decode(&bytes, complete);
    Ok(select(
        &text,
        encoding.to_owned(),
        complete,
        from_end,
        sel,
        max_bytes,
        numbered,
    ))
}

/// The selected lines of `text` (the whole text when `complete`; with
/// `from_end`, the end of a longer one), at most `max_bytes`, optionally
/// numbered.
pub fn select(
    text: &str,
    encoding: String,
    complete: bool,
    from_end: bool,
    sel: Selection,
    max_bytes: usize,
    numbered: bool,
) -> Excerpt {
    let mut lines: Vec<&str> = text.split_inclusive('\n').collect();
    if from_end && !lines.is_empty() {
        lines.remove(0); // probably a partial line
    }
    let total = lines.len() as u64;
    let (first, last) = if let Some(n) = sel.tail {
        (total.saturating_sub(n) + 1, total)
    } else {
        let first = sel.start_line.unwrap_or(1).max(1);
        let mut last = sel.end_line.unwrap_or(total).min(total);
        if let Some(h) = sel.head {
            last = last.min((first + h).saturating_sub(1));
        }
        (first, last)
    };
    let mut content = String::new();
    let mut truncated = false;
    let mut shown_last = 0;
    if first <= last {
        for n in first..=last {
            let line = lines[(n - 1) as usize];
            let add = if numbered {
                format!("{n:>6}\t{line}")
            } else {
                line.to_owned()
            };
            if content.len() + add.len() > max_bytes {
                truncated = true;
                break;
            }
            content.push_str(&add);
            shown_last = n;
        }
    }
    Excerpt {
        encoding,
        content,
        first_line: if shown_last == 0 { 0 } else { first },
        last_line: shown_last,
        total_lines: complete.then_some(total),
        truncated: truncated || (!complete && sel.tail.is_none() && shown_last == total),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_bom_utf8_and_legacy() {
        assert_eq!(decode(b"\xef\xbb\xbfhi", true), ("hi".into(), "UTF-8"));
        assert_eq!(decode(b"\xff\xfeh\0i\0", true), ("hi".into(), "UTF-16LE"));
        assert_eq!(decode("café".as_bytes(), true), ("café".into(), "UTF-8"));
        let (t, e) = decode(b"caf\xe9 cr\xe8me br\xfbl\xe9e, d\xe9j\xe0 vu", true);
        assert_eq!(
            (t.as_str(), e),
            ("café crème brûlée, déjà vu", "windows-1252")
        );
    }

    #[test]
    fn selects_lines_and_caps_bytes() {
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("f.txt");
        let body: String = (1..=10).map(|i| format!("line {i}\n")).collect();
        std::fs::write(&p, &body).unwrap();
        let size = body.len() as u64;
        let read = |sel, max, num| read_lines(&p, size, sel, max, num).unwrap();
        let all = read(Selection::default(), 1 << 20, false);
        assert_eq!(
            (all.content.as_str(), all.total_lines),
            (body.as_str(), Some(10))
        );
        let head = read(
            Selection {
                head: Some(2),
                ..Default::default()
            },
            1 << 20,
            false,
        );
        assert_eq!(head.content, "line 1\nline 2\n");
        let tail = read(
            Selection {
                tail: Some(2),
                ..Default::default()
            },
            1 << 20,
            false,
        );
        assert_eq!(
            (tail.content.as_str(), tail.first_line),
            ("line 9\nline 10\n", 9)
        );
        let range = read(
            Selection {
                start_line: Some(3),
                end_line: Some(4),
                ..Default::default()
            },
            1 << 20,
            true,
        );
        assert_eq!(range.content, "     3\tline 3\n     4\tline 4\n");
        let capped = read(Selection::default(), 15, false);
        assert_eq!(
            (capped.content.as_str(), capped.truncated, capped.last_line),
            ("line 1\nline 2\n", true, 2)
        );
    }
}
