//! The map's text: names that differ only in digits folded into one
//! pattern (`IMG_####.jpg`), sizes, years and kinds as words, and one line
//! per node.

use std::collections::HashMap;

use crate::index::ext::{MAX_KEYED_EXT, MulHasher};
use crate::queries::query::KindClass;

use super::*;

/// A name's pattern key (each ASCII digit run replaced by [`RUN`]) and the
/// lengths of its digit runs.
pub fn pattern_key(name: &[u8]) -> (Vec<u8>, Vec<u32>) {
    let mut key = Vec::with_capacity(name.len());
    let mut runs: Vec<u32> = Vec::new();
    let mut in_run = false;
    for &b in name {
        if b.is_ascii_digit() {
            match runs.last_mut() {
                Some(n) if in_run => *n += 1,
                _ => {
                    key.push(RUN);
                    runs.push(1);
                }
            }
            in_run = true;
        } else {
            key.push(b);
            in_run = false;
        }
    }
    (key, runs)
}

/// The display form of a pattern: `#` per digit where every member's run
/// has the same length, a single `#` where lengths differ.
pub fn pattern_text(key: &[u8], runs: Option<&[u32]>) -> String {
    let mut out = Vec::with_capacity(key.len() + 8);
    let mut k = 0;
    for &b in key {
        if b == RUN {
            let n = runs.and_then(|r| r.get(k)).copied().unwrap_or(1);
            out.extend(std::iter::repeat_n(b'#', n as usize));
            k += 1;
        } else {
            out.push(b);
        }
    }
    display(&out)
}

/// Whether two names have the same pattern key, and whether their digit
/// runs have the same lengths too. Allocates nothing: the snapshot pass
/// compares each file with its folder's first one until they differ.
pub(crate) fn same_pattern(a: &[u8], b: &[u8]) -> (bool, bool) {
    let (mut i, mut j) = (0, 0);
    let mut same_runs = true;
    loop {
        match (a.get(i), b.get(j)) {
            (None, None) => return (true, same_runs),
            (Some(x), Some(y)) if x.is_ascii_digit() && y.is_ascii_digit() => {
                let (si, sj) = (i, j);
                while a.get(i).is_some_and(u8::is_ascii_digit) {
                    i += 1;
                }
                while b.get(j).is_some_and(u8::is_ascii_digit) {
                    j += 1;
                }
                same_runs &= i - si == j - sj;
            }
            (Some(x), Some(y)) if x == y && !x.is_ascii_digit() => {
                i += 1;
                j += 1;
            }
            _ => return (false, false),
        }
    }
}

/// Extension ids by packed extension, with a multiplicative hash: the
/// snapshot pass looks one up per file.
pub(crate) type ExtIds = HashMap<(u64, u32), u32, std::hash::BuildHasherDefault<MulHasher>>;

/// The extension of a (folded) name: after the last dot, not a leading dot,
/// at most 12 bytes without spaces; empty otherwise.
pub(crate) fn extension(name: &[u8]) -> &[u8] {
    match memchr::memrchr(b'.', name) {
        Some(dot) if dot > 0 && name.len() - dot - 1 <= MAX_KEYED_EXT => {
            let ext = &name[dot + 1..];
            if ext.contains(&b' ') { &[] } else { ext }
        }
        _ => &[],
    }
}

pub(crate) fn kind_label(k: Option<KindClass>) -> &'static str {
    match k {
        Some(KindClass::Document) => "document",
        Some(KindClass::Image) => "image",
        Some(KindClass::Audio) => "audio",
        Some(KindClass::Video) => "video",
        Some(KindClass::Archive) => "archive",
        Some(KindClass::Code) => "code",
        Some(KindClass::Text) => "text",
        Some(KindClass::Folder) | None => "other",
    }
}

/// Display form of a name: lossy UTF-8, control characters as `?` (a map
/// line is one line).
pub(crate) fn display(b: &[u8]) -> String {
    String::from_utf8_lossy(b)
        .chars()
        .map(|c| if c.is_control() { '?' } else { c })
        .collect()
}

/// du -h style: 0B, 512B, 4.0K, 12K, 1.5M, 3.9G.
pub fn size(n: u64) -> String {
    const UNITS: [&str; 6] = ["K", "M", "G", "T", "P", "E"];
    if n < 1024 {
        return format!("{n}B");
    }
    let mut v = n as f64 / 1024.0;
    let mut u = 0;
    while v >= 1023.95 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if v < 9.95 {
        format!("{v:.1}{}", UNITS[u])
    } else {
        format!("{v:.0}{}", UNITS[u])
    }
}

pub(crate) fn year_of(ns: i64) -> i32 {
    jiff::Timestamp::from_nanosecond(i128::from(ns))
        .map(|t| t.to_zoned(jiff::tz::TimeZone::UTC).year() as i32)
        .unwrap_or(1970)
}

// ---------------------------------------------------------------------------
// Lines.

pub(crate) fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

pub(crate) fn years_text(y: Option<(i32, i32)>) -> String {
    match y {
        Some((a, b)) if a == b => format!(", {a}"),
        Some((a, b)) => format!(", {a}-{b}"),
        None => String::new(),
    }
}

pub(crate) fn kinds_text(kinds: &[KindShare]) -> String {
    kinds
        .iter()
        .map(|k| {
            let exts: Vec<String> = k
                .extensions
                .iter()
                .map(|e| {
                    if e.is_empty() {
                        "no ext".to_owned()
                    } else {
                        format!(".{e}")
                    }
                })
                .collect();
            if exts.is_empty() {
                format!("{} {}%", k.kind, k.percent)
            } else {
                format!("{} {}% ({})", k.kind, k.percent, exts.join(" "))
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// "; 3120 photos 2015-2024": a folder's photos with a date taken (its
/// whole subtree) and the years taken; empty without.
fn photos_text(n: &Node) -> String {
    match n.photos.years() {
        Some((a, b)) => format!(
            "; {}{}",
            plural(n.photos.count, "photo", "photos"),
            years_text(Some((a, b))).replacen(',', "", 1)
        ),
        None => String::new(),
    }
}

/// A node's line, without indentation or newline.
pub fn line(n: &Node) -> String {
    let recent = if n.excluded.is_some() {
        " [excluded: sizes only, not indexed]"
    } else if n.recent {
        " [recent]"
    } else {
        ""
    };
    match n.kind {
        NodeType::Folder => {
            let mut name = display(&n.name);
            if !name.ends_with('/') {
                name.push('/');
            }
            let what = if n.like.ends_with('/') {
                let mut s = format!(
                    ", {} like {}, {}",
                    plural(n.count, "folder", "folders"),
                    n.like,
                    plural(n.files, "file", "files")
                );
                if !n.kinds.is_empty() {
                    s += ": ";
                    s += &kinds_text(&n.kinds);
                }
                s
            } else if !n.like.is_empty() {
                format!(
                    ", {} like {}{}",
                    plural(n.files, "file", "files"),
                    n.like,
                    years_text(n.years)
                )
            } else if n.excluded.is_some() {
                format!(", {}", plural(n.files, "file", "files"))
            } else if n.files == 0 && n.dirs <= 1 + n.chain {
                ", empty".to_owned()
            } else {
                let mut s = format!(", {}", plural(n.files, "file", "files"));
                // Subfolders, not counting those named in a chain line.
                let sub = n.dirs.saturating_sub(1 + n.chain);
                if sub > 0 {
                    s += &format!(", {}", plural(sub, "folder", "folders"));
                }
                if !n.kinds.is_empty() {
                    s += ": ";
                    s += &kinds_text(&n.kinds);
                }
                s
            };
            format!("{name} {}{what}{}{recent}", size(n.bytes), photos_text(n))
        }
        NodeType::File => format!("{} {}{recent}", display(&n.name), size(n.bytes)),
        NodeType::FolderGroup => {
            let mut s = format!(
                "{} like {}/, {}, {}",
                plural(n.count, "folder", "folders"),
                n.like,
                size(n.bytes),
                plural(n.files, "file", "files")
            );
            if !n.kinds.is_empty() {
                s += ": ";
                s += &kinds_text(&n.kinds);
            }
            s + &photos_text(n) + recent
        }
        NodeType::Group => format!(
            "{} like {}, {}{}{recent}",
            plural(n.files, "file", "files"),
            n.like,
            size(n.bytes),
            years_text(n.years)
        ),
    }
}

/// The "... N more" line of a folder's children left out.
pub fn more_line(m: &More) -> String {
    let mut parts = Vec::new();
    if m.dirs > 0 {
        parts.push(plural(m.dirs, "more folder", "more folders"));
    }
    if m.files > 0 {
        parts.push(plural(m.files, "more file", "more files"));
    }
    format!("... {}, {}", parts.join(", "), size(m.bytes))
}
