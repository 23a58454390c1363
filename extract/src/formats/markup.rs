//! HTML and XML to text: character data only.
//!
//! A forgiving scanner rather than a parser: real HTML is rarely well formed,
//! and all the index needs is the words a reader sees. Tags are dropped (block
//! elements end a line, inline ones join words), comments, doctypes and
//! processing instructions are skipped, `<script>` and `<style>` contents are
//! skipped entirely, CDATA is kept, and character references are decoded:
//! numeric ones, and the named ones of HTML 4 (the Latin-1 set plus common
//! punctuation and symbols), which is what real pages use. Linear in the
//! input; stops as soon as the sink is full.

use crate::sink::TextSink;
use crate::{Failure, decode};
use std::borrow::Cow;
use std::fs::File;

/// Bump when the output for the same file changes.
pub const VERSION: u32 = 1;

pub fn extract(file: File, size: u64, html: bool, sink: &mut TextSink) -> Result<(), Failure> {
    let bytes = crate::open::read_prefix(file, size)?;
    let (text, encoding) = decode::decode_named(&bytes, true);
    sink.set_encoding(encoding);
    to_text(&text, html, sink);
    Ok(())
}

/// Elements whose boundaries do not separate words.
const INLINE: &[&str] = &[
    "a", "abbr", "b", "bdi", "bdo", "cite", "code", "data", "dfn", "em", "font", "i", "kbd",
    "mark", "q", "s", "samp", "small", "span", "strong", "sub", "sup", "time", "tt", "u", "var",
    "wbr",
];

/// Elements that end a line.
const BLOCK: &[&str] = &[
    "address",
    "article",
    "aside",
    "blockquote",
    "br",
    "dd",
    "div",
    "dl",
    "dt",
    "figcaption",
    "figure",
    "footer",
    "form",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "header",
    "hr",
    "li",
    "main",
    "nav",
    "ol",
    "p",
    "pre",
    "section",
    "table",
    "title",
    "tr",
    "ul",
];

/// Writes the text of the markup `s` into `sink`; `html` turns on HTML's
/// rules (skipped script/style, inline elements).
pub fn to_text(s: &str, html: bool, sink: &mut TextSink) {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() && !sink.is_full() {
        if b[i] != b'<' {
            let end = memchr::memchr(b'<', &b[i..]).map_or(b.len(), |n| i + n);
            sink.push_collapsed(&decode_entities(&s[i..end]));
            i = end;
            continue;
        }
        let rest = &b[i..];
        if rest.starts_with(b"<!--") {
            i = find(b, i + 4, b"-->").map_or(b.len(), |n| n + 3);
        } else if rest.starts_with(b"<![CDATA[") {
            let end = find(b, i + 9, b"]]>").unwrap_or(b.len());
            sink.push_collapsed(&s[i + 9..end]);
            i = (end + 3).min(b.len());
        } else if rest.starts_with(b"<!") || rest.starts_with(b"<?") {
            i = memchr::memchr(b'>', rest).map_or(b.len(), |n| i + n + 1);
        } else {
            let closing = rest.get(1) == Some(&b'/');
            let start = i + 1 + usize::from(closing);
            let name_len = b[start..]
                .iter()
                .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, b':' | b'-' | b'_'))
                .count();
            if name_len == 0 {
                // "a < b": not a tag.
                sink.push_str("<");
                i += 1;
                continue;
            }
            let name = s[start..start + name_len].to_ascii_lowercase();
            let end = tag_end(b, start + name_len);
            i = end;
            if html && !closing && (name == "script" || name == "style") && b[end - 2] != b'/' {
                let close = format!("</{name}");
                i = find_ci(b, end, close.as_bytes()).unwrap_or(b.len());
                continue;
            }
            if html && INLINE.contains(&name.as_str()) {
                continue;
            }
            if html && BLOCK.contains(&name.as_str()) {
                sink.newline();
            } else {
                sink.space();
            }
        }
    }
}

/// The index just past the `>` ending a tag whose name ends at `i`,
/// skipping `>` inside quoted attribute values.
fn tag_end(b: &[u8], mut i: usize) -> usize {
    let mut quote = None;
    while i < b.len() {
        match (quote, b[i]) {
            (None, b'>') => return i + 1,
            (None, q @ (b'"' | b'\'')) => quote = Some(q),
            (Some(q), c) if c == q => quote = None,
            _ => {}
        }
        i += 1;
    }
    b.len()
}

fn find(b: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    memchr::memmem::find(&b[from.min(b.len())..], needle).map(|n| from + n)
}

fn find_ci(b: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    (from..b.len().saturating_sub(needle.len() - 1))
        .find(|&i| b[i..i + needle.len()].eq_ignore_ascii_case(needle))
}

/// Decodes character references (`&amp;`, `&#233;`, `&#xE9;`, `&eacute;`);
/// unknown ones are left as written.
pub fn decode_entities(s: &str) -> Cow<'_, str> {
    if !s.contains('&') {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        rest = &rest[amp..];
        let semi = rest[1..]
            .bytes()
            .take(32)
            .position(|c| c == b';')
            .map(|n| n + 1);
        match semi.and_then(|n| entity(&rest[1..n]).map(|c| (n, c))) {
            Some((n, c)) => {
                out.push(c);
                rest = &rest[n + 1..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    Cow::Owned(out)
}

fn entity(name: &str) -> Option<char> {
    if let Some(num) = name.strip_prefix('#') {
        let n = match num.strip_prefix(['x', 'X']) {
            Some(hex) => u32::from_str_radix(hex, 16).ok()?,
            None => num.parse().ok()?,
        };
        return Some(
            char::from_u32(n)
                .filter(|&c| c != '\0')
                .unwrap_or('\u{FFFD}'),
        );
    }
    if let Some(i) = LATIN1.iter().position(|&n| n == name) {
        return char::from_u32(0xA0 + i as u32);
    }
    OTHER.iter().find(|(n, _)| *n == name).map(|&(_, c)| c)
}

/// HTML 4's Latin-1 entities name U+00A0..=U+00FF in order.
const LATIN1: [&str; 96] = [
    "nbsp", "iexcl", "cent", "pound", "curren", "yen", "brvbar", "sect", "uml", "copy", "ordf",
    "laquo", "not", "shy", "reg", "macr", "deg", "plusmn", "sup2", "sup3", "acute", "micro",
    "para", "middot", "cedil", "sup1", "ordm", "raquo", "frac14", "frac12", "frac34", "iquest",
    "Agrave", "Aacute", "Acirc", "Atilde", "Auml", "Aring", "AElig", "Ccedil", "Egrave", "Eacute",
    "Ecirc", "Euml", "Igrave", "Iacute", "Icirc", "Iuml", "ETH", "Ntilde", "Ograve", "Oacute",
    "Ocirc", "Otilde", "Ouml", "times", "Oslash", "Ugrave", "Uacute", "Ucirc", "Uuml", "Yacute",
    "THORN", "szlig", "agrave", "aacute", "acirc", "atilde", "auml", "aring", "aelig", "ccedil",
    "egrave", "eacute", "ecirc", "euml", "igrave", "iacute", "icirc", "iuml", "eth", "ntilde",
    "ograve", "oacute", "ocirc", "otilde", "ouml", "divide", "oslash", "ugrave", "uacute", "ucirc",
    "uuml", "yacute", "thorn", "yuml",
];

const OTHER: &[(&str, char)] = &[
    ("amp", '&'),
    ("lt", '<'),
    ("gt", '>'),
    ("quot", '"'),
    ("apos", '\''),
    ("OElig", 'Œ'),
    ("oelig", 'œ'),
    ("Scaron", 'Š'),
    ("scaron", 'š'),
    ("Yuml", 'Ÿ'),
    ("fnof", 'ƒ'),
    ("circ", 'ˆ'),
    ("tilde", '˜'),
    ("ensp", ' '),
    ("emsp", ' '),
    ("thinsp", ' '),
    ("zwnj", '\u{200C}'),
    ("zwj", '\u{200D}'),
    ("ndash", '–'),
    ("mdash", '—'),
    ("lsquo", '‘'),
    ("rsquo", '’'),
    ("sbquo", '‚'),
    ("ldquo", '“'),
    ("rdquo", '”'),
    ("bdquo", '„'),
    ("dagger", '†'),
    ("Dagger", '‡'),
    ("bull", '•'),
    ("hellip", '…'),
    ("permil", '‰'),
    ("prime", '′'),
    ("Prime", '″'),
    ("lsaquo", '‹'),
    ("rsaquo", '›'),
    ("euro", '€'),
    ("trade", '™'),
    ("larr", '←'),
    ("uarr", '↑'),
    ("rarr", '→'),
    ("darr", '↓'),
    ("harr", '↔'),
    ("minus", '−'),
    ("le", '≤'),
    ("ge", '≥'),
    ("ne", '≠'),
    ("asymp", '≈'),
    ("infin", '∞'),
    ("sum", '∑'),
    ("radic", '√'),
    ("alpha", 'α'),
    ("beta", 'β'),
    ("gamma", 'γ'),
    ("delta", 'δ'),
    ("pi", 'π'),
    ("sigma", 'σ'),
    ("mu", 'μ'),
    ("Omega", 'Ω'),
    ("omega", 'ω'),
    ("hearts", '♥'),
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Kind;

    fn html(s: &str) -> String {
        let mut sink = TextSink::new(1 << 20);
        to_text(s, true, &mut sink);
        sink.finish(Kind::Html).text
    }

    #[test]
    fn script_style_and_comments_are_dropped() {
        let t = html(
            "<html><head><title>T</title><style>p{color:red}</style>\
             <SCRIPT type=\"x\">var secret = '<p>';</SCRIPT></head>\
             <body><!-- hidden --><p>Caf&eacute; &amp; b<b>ol</b>d &#8364;5 &#x263A;</p>\
             <p>a < b &unknown; x</p></body></html>",
        );
        assert_eq!(t, "T\nCafé & bold €5 ☺\na < b &unknown; x");
    }

    #[test]
    fn quoted_gt_does_not_end_a_tag() {
        assert_eq!(html("<a title=\"x > y\">link</a> text"), "link text");
    }
}
