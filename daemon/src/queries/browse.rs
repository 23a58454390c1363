//! Browsing from the index: one entry in detail (`info`), a folder's
//! children (`ls`) and a folder's subtree with sizes (`tree`).

use std::io::Read;
use std::path::Path;

use rusqlite::Connection;

use crate::Error;
use crate::queries::du::{self, Usage};
use crate::queries::query::{KindClass, kind_of};
use crate::store::{EntryRow, Kind, entries};

/// One entry in detail.
#[derive(Clone, Debug, Default)]
pub struct Info {
    pub row: Option<EntryRow>,
    pub atime_ns: i64,
    pub ctime_ns: i64,
    pub uid: u32,
    pub gid: u32,
    pub kind: String,
    pub mime: String,
    pub encoding: String,
    /// -1 when not a text file.
    pub lines: i64,
    pub usage: Option<Usage>,
    pub target: Vec<u8>,
    /// Flagged by a sensitive tier: WARN (indexed), or SKIP (see `skip_tier`).
    pub sensitive: bool,
    /// A SKIP-tier entry, which the index does not hold: asked for by its
    /// exact path, it is described from a live lstat (no folder usage).
    pub skip_tier: bool,
}

/// Reads at most this much to detect the encoding, and counts lines of
/// text files up to this size.
const SNIFF: usize = 64 << 10;
const MAX_LINE_COUNT: u64 = 256 << 20;

fn kind_name(k: KindClass) -> &'static str {
    match k {
        KindClass::Document => "document",
        KindClass::Image => "image",
        KindClass::Audio => "audio",
        KindClass::Video => "video",
        KindClass::Archive => "archive",
        KindClass::Code => "code",
        KindClass::Text => "text",
        KindClass::Folder => "folder",
    }
}

/// `path` in detail: the index's row plus what only the file can tell.
pub fn stat(conn: &Connection, path: &Path) -> Result<Info, Error> {
    let (_, id) = crate::store::resolve(conn, path)?;
    let row = entries::row(conn, id)?;
    let mut info = describe(path, row, true);
    if info.row.as_ref().is_some_and(|r| r.kind == Kind::Dir) {
        let bytes = path.as_os_str().as_encoded_bytes().to_vec();
        info.usage = Some(du::disk_usage(conn, id, bytes, 1, false)?.total);
    }
    Ok(info)
}

/// `path` in detail from its live lstat `meta`, for an entry the index
/// does not hold (the SKIP tier): no folder usage, and the file is not
/// opened (no encoding or line count): a sensitive file's contents are
/// left alone.
pub fn stat_live(path: &Path, meta: &crate::platform::fs::Stat) -> Info {
    let name = path
        .file_name()
        .map(|n| n.as_encoded_bytes().to_vec())
        .unwrap_or_default();
    describe(
        path,
        crate::ingest::scan::row_from_stat(0, None, name, meta),
        false,
    )
}

/// What `info` shows beyond the row: kind, mime, times, owner, a symlink's
/// target and, with `read`, a text file's encoding and lines.
fn describe(path: &Path, row: EntryRow, read: bool) -> Info {
    let mut info = Info {
        lines: -1,
        ..Default::default()
    };
    let name = String::from_utf8_lossy(&row.name).into_owned();
    let is_dir = row.kind == Kind::Dir;
    info.kind = kind_of(&name, is_dir)
        .map(kind_name)
        .unwrap_or_default()
        .to_owned();
    if !is_dir {
        info.mime = mime_guess::from_path(&name)
            .first()
            .map(|m| m.essence_str().to_owned())
            .unwrap_or_default();
    }
    if let Ok(m) = crate::platform::fs::lstat(path) {
        info.atime_ns = m.atime_ns;
        info.ctime_ns = m.ctime_ns;
        info.uid = m.uid;
        info.gid = m.gid;
    }
    match row.kind {
        Kind::Symlink => {
            if let Ok(t) = crate::platform::fs::read_link(path) {
                info.target = t;
            }
        }
        Kind::File if read => sniff_text(path, &mut info),
        Kind::File | Kind::Dir | Kind::Other => {}
    }
    info.row = Some(row);
    info
}

/// Text or not, its encoding (chardetng) and its line count.
fn sniff_text(path: &Path, info: &mut Info) {
    // Not through a symlink, never blocking on a FIFO, any path length.
    let Ok(mut f) = crate::platform::fs::open_file(path) else {
        return;
    };
    let mut head = vec![0u8; SNIFF];
    let mut got = 0;
    while got < head.len() {
        match f.read(&mut head[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(_) => return,
        }
    }
    head.truncate(got);
    // A NUL byte in the first 64 KiB: binary (what grep and git assume).
    if head.contains(&0) {
        return;
    }
    let complete = got < SNIFF;
    info.encoding = if head.is_ascii() {
        "ASCII".into()
    } else if std::str::from_utf8(&head).is_ok()
        || (!complete && std::str::from_utf8(&head).is_err_and(|e| e.error_len().is_none()))
    {
        "UTF-8".into()
    } else {
        let mut detector = chardetng::EncodingDetector::new(chardetng::Iso2022JpDetection::Deny);
        detector.feed(&head, complete);
        detector
            .guess(None, chardetng::Utf8Detection::Allow)
            .name()
            .to_owned()
    };
    let mut lines = memchr::memchr_iter(b'\n', &head).count() as u64;
    if !complete {
        let mut buf = vec![0u8; 1 << 20];
        let mut read = got as u64;
        loop {
            match f.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    lines += memchr::memchr_iter(b'\n', &buf[..n]).count() as u64;
                    read += n as u64;
                    if read > MAX_LINE_COUNT {
                        return; // too large to count on request
                    }
                }
                Err(_) => return,
            }
        }
    }
    info.lines = lines as i64;
}

/// A folder's children, as stored.
pub fn list(conn: &Connection, path: &Path) -> Result<Vec<EntryRow>, Error> {
    let (_, id) = crate::store::resolve(conn, path)?;
    let row = entries::row(conn, id)?;
    if row.kind != Kind::Dir {
        return Ok(vec![row]);
    }
    entries::children(conn, id)
}

/// One node of a tree.
#[derive(Clone, Debug, Default)]
pub struct Node {
    pub name: Vec<u8>,
    pub usage: Usage,
    pub children: Vec<Node>,
    pub hidden: u64,
}

/// A folder's subtree to `depth`, at most `max_children` (largest first)
/// per folder; figures as `du` counts them.
pub fn tree(
    conn: &Connection,
    path: &Path,
    depth: u32,
    max_children: usize,
) -> Result<Node, Error> {
    let (_, id) = crate::store::resolve(conn, path)?;
    let bytes = path.as_os_str().as_encoded_bytes().to_vec();
    let name = path
        .file_name()
        .map(|n| n.as_encoded_bytes().to_vec())
        .unwrap_or_else(|| bytes.clone());
    node(conn, id, bytes, name, depth, max_children)
}

fn node(
    conn: &Connection,
    id: i64,
    path: Vec<u8>,
    name: Vec<u8>,
    depth: u32,
    max: usize,
) -> Result<Node, Error> {
    let report = du::disk_usage(conn, id, path, 0, false)?;
    let mut n = Node {
        name,
        usage: report.total,
        children: Vec::new(),
        hidden: 0,
    };
    if depth == 0 {
        n.hidden = report.children_total as u64;
        return Ok(n);
    }
    let mut shown = 0;
    for child in report.children {
        if shown >= max.max(1) {
            n.hidden += 1;
            continue;
        }
        shown += 1;
        let child_name = child
            .path
            .rsplit(|&b| b == crate::platform::bytes::SEP)
            .next()
            .unwrap_or(&child.path)
            .to_vec();
        if child.kind == Some(Kind::Dir) && !child.excluded {
            let cid = crate::store::resolve(conn, as_path(&child.path))?.1;
            n.children.push(node(
                conn,
                cid,
                child.path.clone(),
                child_name,
                depth - 1,
                max,
            )?);
        } else {
            n.children.push(Node {
                name: child_name,
                usage: child,
                children: Vec::new(),
                hidden: 0,
            });
        }
    }
    Ok(n)
}

/// Bytes as a path (Unix: any bytes).
fn as_path(b: &[u8]) -> &Path {
    crate::platform::bytes::path(b)
}
