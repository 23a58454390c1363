//! Rich Text Format to text.
//!
//! RTF is a stream of groups `{...}`, control words `\word123` and text. The
//! text is what is left once control words are dropped, except the few that
//! stand for characters (`\par`, `\tab`, `\emdash`, ...), `\'hh` (a byte in
//! the document's code page, `\ansicpg`, windows-1252 by default; runs of them
//! are decoded together so double-byte code pages work) and `\uN` (a UTF-16
//! unit, followed by `\ucN` fallback characters that are skipped). Groups that
//! are not body text (font and colour tables, style sheets, document info,
//! pictures, field instructions, anything marked `\*`) are skipped whole.
//! Hand-written because it is small and linear; no crate worth its build cost
//! does this better.

use crate::Failure;
use crate::sink::TextSink;
use encoding_rs::{Encoding, WINDOWS_1252};
use std::fs::File;

/// Bump when the output for the same file changes.
pub const VERSION: u32 = 1;

pub fn extract(file: File, size: u64, sink: &mut TextSink) -> Result<(), Failure> {
    let bytes = crate::open::read_prefix(file, size)?;
    if !bytes.starts_with(b"{\\rtf") {
        return Err(Failure::Parse("not RTF: no {\\rtf header".into()));
    }
    to_text(&bytes, sink);
    Ok(())
}

/// Destinations whose content is not body text.
const SKIP: &[&str] = &[
    "fonttbl",
    "colortbl",
    "stylesheet",
    "info",
    "pict",
    "object",
    "themedata",
    "colorschememapping",
    "datastore",
    "latentstyles",
    "listtable",
    "listoverridetable",
    "rsidtbl",
    "generator",
    "xmlnstbl",
    "mmathPr",
    "fldinst",
    "filetbl",
    "revtbl",
    "pgdsctbl",
    "userprops",
    "docvar",
    "nonshppict",
    "blipuid",
    "bkmkstart",
    "bkmkend",
    "defchp",
    "defpap",
    "wgrffmtfilter",
    "pnseclvl",
    "listtext",
    "fchars",
    "lchars",
    "operator",
    "author",
];

/// Nesting kept track of; real documents stay under a few dozen levels.
const MAX_DEPTH: usize = 256;

#[derive(Clone, Copy)]
struct Group {
    skip: bool,
    /// Fallback characters after each `\uN`.
    uc: usize,
}

struct Out<'a> {
    sink: &'a mut TextSink,
    pending: Vec<u8>,
    enc: &'static Encoding,
    /// A high surrogate from `\uN` waiting for its low half.
    high: Option<u16>,
}

impl Out<'_> {
    fn flush(&mut self) {
        if !self.pending.is_empty() {
            let (s, _) = self.enc.decode_without_bom_handling(&self.pending);
            self.sink.push_str(&s);
            self.pending.clear();
        }
    }

    fn text(&mut self, s: &str) {
        self.flush();
        self.sink.push_str(s);
    }
}

pub fn to_text(b: &[u8], sink: &mut TextSink) {
    let mut out = Out {
        sink,
        pending: Vec::new(),
        enc: WINDOWS_1252,
        high: None,
    };
    let mut stack: Vec<Group> = Vec::new();
    let mut too_deep = 0usize;
    let mut g = Group { skip: false, uc: 1 };
    // Fallback characters still to skip after a \uN.
    let mut fallback = 0usize;
    let mut i = 0;
    while i < b.len() && !out.sink.is_full() {
        let c = b[i];
        i += 1;
        match c {
            b'{' => {
                fallback = 0;
                if stack.len() < MAX_DEPTH {
                    stack.push(g);
                } else {
                    // Deeper groups share their parent's state, so memory
                    // stays bounded on `{{{{...`.
                    too_deep += 1;
                }
            }
            b'}' => {
                fallback = 0;
                out.flush();
                if too_deep > 0 {
                    too_deep -= 1;
                } else {
                    g = stack.pop().unwrap_or(g);
                }
            }
            b'\r' | b'\n' => {}
            b'\\' => {
                let Some(&n) = b.get(i) else { break };
                i += 1;
                match n {
                    b'\'' => {
                        let byte = b
                            .get(i..i + 2)
                            .and_then(|h| std::str::from_utf8(h).ok())
                            .and_then(|h| u8::from_str_radix(h, 16).ok());
                        i += 2;
                        if let Some(byte) = byte
                            && !g.skip
                        {
                            if fallback > 0 {
                                fallback -= 1;
                            } else {
                                out.pending.push(byte);
                            }
                        }
                    }
                    b'*' => g.skip = true,
                    b'\\' | b'{' | b'}' if !g.skip => {
                        if fallback > 0 {
                            fallback -= 1;
                        } else {
                            out.text(char::from(n).encode_utf8(&mut [0; 4]));
                        }
                    }
                    b'~' if !g.skip => out.text(" "),
                    b'_' if !g.skip => out.text("-"),
                    b'\r' | b'\n' if !g.skip => out.text("\n"),
                    n if n.is_ascii_alphabetic() => {
                        let start = i - 1;
                        while i < b.len() && b[i].is_ascii_alphabetic() {
                            i += 1;
                        }
                        let word = std::str::from_utf8(&b[start..i]).unwrap_or_default();
                        let num_start = i;
                        if i < b.len() && b[i] == b'-' {
                            i += 1;
                        }
                        while i < b.len() && b[i].is_ascii_digit() {
                            i += 1;
                        }
                        let param: Option<i64> = std::str::from_utf8(&b[num_start..i])
                            .ok()
                            .and_then(|p| p.parse().ok());
                        if b.get(i) == Some(&b' ') {
                            i += 1;
                        }
                        if word == "bin" {
                            // Raw binary data follows; never text.
                            i = i.saturating_add(param.unwrap_or(0).max(0) as usize);
                            continue;
                        }
                        if SKIP.contains(&word) {
                            g.skip = true;
                        }
                        if word == "ansicpg" {
                            out.flush();
                            out.enc = code_page(param.unwrap_or(1252));
                        }
                        if word == "uc" {
                            g.uc = param.unwrap_or(1).clamp(0, 16) as usize;
                        }
                        if g.skip {
                            continue;
                        }
                        if word == "u" {
                            let mut unit = param.unwrap_or(0);
                            if unit < 0 {
                                unit += 65536;
                            }
                            out.utf16(unit as u16);
                            fallback = g.uc;
                            continue;
                        }
                        let s = match word {
                            "par" | "line" | "sect" | "page" | "row" => "\n",
                            "tab" | "cell" => "\t",
                            "emdash" => "—",
                            "endash" => "–",
                            "bullet" => "•",
                            "lquote" => "‘",
                            "rquote" => "’",
                            "ldblquote" => "“",
                            "rdblquote" => "”",
                            _ => continue,
                        };
                        out.text(s);
                    }
                    _ => {}
                }
            }
            c if !g.skip => {
                if fallback > 0 {
                    fallback -= 1;
                } else {
                    out.pending.push(c);
                    // Decode as we go (at an ASCII byte, never inside a
                    // double-byte character) so the cap is noticed.
                    if out.pending.len() >= 1 << 16 && c.is_ascii() {
                        out.flush();
                    }
                }
            }
            _ => {}
        }
    }
    out.flush();
    if out.high.is_some() {
        out.text("\u{FFFD}");
    }
}

impl Out<'_> {
    /// Appends one UTF-16 unit from `\uN`, pairing surrogates.
    fn utf16(&mut self, unit: u16) {
        let c = match (self.high.take(), unit) {
            (prev, 0xD800..=0xDBFF) => {
                self.high = Some(unit);
                if prev.is_none() {
                    return;
                }
                '\u{FFFD}'
            }
            (Some(hi), 0xDC00..=0xDFFF) => char::decode_utf16([hi, unit])
                .next()
                .and_then(Result::ok)
                .unwrap_or('\u{FFFD}'),
            (prev, u) => {
                if prev.is_some() {
                    self.text("\u{FFFD}");
                }
                char::from_u32(u32::from(u)).unwrap_or('\u{FFFD}')
            }
        };
        self.text(c.encode_utf8(&mut [0; 4]));
    }
}

/// The encoding of a Windows code page number (`\ansicpg`).
fn code_page(cp: i64) -> &'static Encoding {
    let label = match cp {
        932 => "shift_jis".to_owned(),
        936 => "gbk".to_owned(),
        949 => "euc-kr".to_owned(),
        950 => "big5".to_owned(),
        10000 => "macintosh".to_owned(),
        65001 => "utf-8".to_owned(),
        n => format!("windows-{n}"),
    };
    Encoding::for_label(label.as_bytes()).unwrap_or(WINDOWS_1252)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Kind;

    fn rtf(s: &[u8]) -> String {
        let mut sink = TextSink::new(1 << 20);
        to_text(s, &mut sink);
        sink.finish(Kind::Rtf).text
    }

    #[test]
    fn control_words_go_escapes_decode() {
        let t = rtf(
            b"{\\rtf1\\ansi\\ansicpg1252{\\fonttbl{\\f0 Times;}}{\\*\\generator Foo;}\
            \\f0\\fs24 Caf\\'e9 \\b bold\\b0\\par \
            Snowman \\u9731? and \\{braces\\}\\par}",
        );
        assert_eq!(t, "Café bold\nSnowman ☃ and {braces}");
    }

    #[test]
    fn deep_nesting_stays_bounded() {
        let mut doc = b"{\\rtf1 ".to_vec();
        doc.extend(std::iter::repeat_n(b'{', 100_000));
        doc.extend_from_slice(b"deep");
        doc.extend(std::iter::repeat_n(b'}', 100_000));
        doc.extend_from_slice(b" after}");
        assert_eq!(rtf(&doc), "deep after");
    }

    #[test]
    fn double_byte_code_pages() {
        // "日本" in Shift-JIS is 93 fa 96 7b.
        let t = rtf(b"{\\rtf1\\ansi\\ansicpg932 \\'93\\'fa\\'96\\'7b}");
        assert_eq!(t, "日本");
    }
}
