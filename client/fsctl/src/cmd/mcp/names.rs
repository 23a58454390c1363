//! Names as an agent sees them, and back.
//!
//! A Linux name is any bytes but `/` and NUL: it may not be UTF-8, and it
//! may hold a newline, a tab or a right-to-left override. JSON and a
//! model's text carry only Unicode, and a newline in a listing reads as two
//! entries. So every path or name this server gives out is *shown*: valid
//! UTF-8 as itself, except that a backslash is doubled, each byte that is
//! not UTF-8 is `\xHH`, `\n` `\t` `\r` stand for themselves, other control
//! characters are `\xHH` (C0, DEL) or `\u{HHHH}` (C1, the bidirectional
//! controls, the line and paragraph separators). Shown text is
//! unambiguous, and [`unescape`] turns it back into the exact bytes: the
//! guard tries that first, so a shown path passed back reaches the same
//! file; a path an agent types with a lone backslash still works, taken
//! literally when its unescaped form does not exist.
//!
//! On Windows names are UTF-16 and `\` is the separator: paths are shown
//! as they are and taken literally.

/// A path or name, shown as this server gives it out.
#[cfg(unix)]
pub fn shown(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            push_char(&mut out, c);
        }
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{b:02X}"));
        }
    }
    out
}

/// See the Unix one: Windows paths are shown as they are.
#[cfg(not(unix))]
pub fn shown(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A path given as a `Path`.
pub fn shown_path(p: &std::path::Path) -> String {
    shown(p.as_os_str().as_encoded_bytes())
}

/// Does `c` print as something else than itself?
#[cfg(unix)]
fn escaped(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}'
                | '\u{2028}' | '\u{2029}'
        )
}

#[cfg(unix)]
fn push_char(out: &mut String, c: char) {
    match c {
        '\\' => out.push_str("\\\\"),
        '\n' => out.push_str("\\n"),
        '\t' => out.push_str("\\t"),
        '\r' => out.push_str("\\r"),
        c if escaped(c) && (c as u32) < 0x80 => out.push_str(&format!("\\x{:02X}", c as u32)),
        c if escaped(c) => out.push_str(&format!("\\u{{{:04X}}}", c as u32)),
        c => out.push(c),
    }
}

/// The bytes a shown path stands for; `None` when `s` holds no escape, or
/// one that this form never writes (then it is only a literal path).
#[cfg(unix)]
pub fn unescape(s: &str) -> Option<Vec<u8>> {
    if !s.contains('\\') {
        return None;
    }
    let mut out = Vec::with_capacity(s.len());
    let mut it = s.char_indices().peekable();
    while let Some((_, c)) = it.next() {
        if c != '\\' {
            let mut buf = [0u8; 4];
            out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            continue;
        }
        let (i, e) = it.next()?;
        match e {
            '\\' => out.push(b'\\'),
            'n' => out.push(b'\n'),
            't' => out.push(b'\t'),
            'r' => out.push(b'\r'),
            'x' => {
                let hex = s.get(i + 1..i + 3)?;
                out.push(u8::from_str_radix(hex, 16).ok()?);
                it.next();
                it.next();
            }
            'u' => {
                let rest = s.get(i + 1..)?;
                let body = rest.strip_prefix('{')?;
                let end = body.find('}')?;
                let c = char::from_u32(u32::from_str_radix(&body[..end], 16).ok()?)?;
                let mut buf = [0u8; 4];
                out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                for _ in 0..end + 2 {
                    it.next();
                }
            }
            _ => return None,
        }
    }
    Some(out)
}

#[cfg(not(unix))]
pub fn unescape(_s: &str) -> Option<Vec<u8>> {
    None
}

/// Bytes as a path.
#[cfg(unix)]
pub fn path_of(bytes: Vec<u8>) -> std::path::PathBuf {
    use std::os::unix::ffi::OsStringExt;
    std::path::PathBuf::from(std::ffi::OsString::from_vec(bytes))
}

/// See the Unix one: the daemon sends UTF-8 for every valid Windows name.
#[cfg(not(unix))]
pub fn path_of(bytes: Vec<u8>) -> std::path::PathBuf {
    std::path::PathBuf::from(String::from_utf8_lossy(&bytes).into_owned())
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn shown_names_round_trip() {
        for name in [
            &b"plain.txt"[..],
            b"caf\xe9-latin1.txt",
            b"report\n[FILE] passwords.txt",
            b"tab\there\rcr",
            b"back\\slash and \\x41",
            "invoice\u{202E}fdp.exe".as_bytes(),
            "שלום-עולם.txt".as_bytes(),
            b"bell\x07del\x7f",
            "c1\u{85}".as_bytes(),
            b"\xff\xfe",
        ] {
            let s = shown(name);
            assert!(
                !s.chars().any(escaped),
                "{s:?} still holds a control character"
            );
            let back = unescape(&s).unwrap_or_else(|| s.as_bytes().to_vec());
            assert_eq!(back, name, "{s}");
        }
        assert_eq!(shown(b"caf\xe9.txt"), "caf\\xE9.txt");
        assert_eq!(shown(b"a\nb"), "a\\nb");
        assert_eq!(shown("x\u{202E}y".as_bytes()), "x\\u{202E}y");
        assert_eq!(shown("Hebrew שלום".as_bytes()), "Hebrew שלום");
        // A lone backslash an agent typed: no shown form, so literal.
        assert_eq!(unescape("C:\\Users"), None);
        assert_eq!(unescape("plain"), None);
    }
}
