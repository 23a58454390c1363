//! Browsing from the index: one entry in detail (`info`), a folder's
//! children (`ls`) and a folder's subtree with sizes (`tree`).
//!
//! What only the file itself can tell `info` (its times and owner, a
//! symlink's target, a text file's encoding and lines) is read live by the
//! engine (`engine/read.rs`), which adds it to what is answered here.

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
    /// What a photo, song or video says about itself, when read for the
    /// file as it is now (the engine fills it in).
    pub media: Option<crate::store::media::MediaRow>,
    /// The caller's tags on the entry and the file's own (read from the
    /// file system), by name (the engine fills them in).
    pub tags: Vec<(String, crate::store::labels::TagSource)>,
}

pub fn kind_name(k: KindClass) -> &'static str {
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

/// `path` in detail, as far as the index can tell: its row, kind and
/// mime, and a folder's usage.
pub fn stat(conn: &Connection, path: &Path) -> Result<Info, Error> {
    let (_, id) = crate::store::resolve(conn, path)?;
    let row = entries::row(conn, id)?;
    let mut info = describe(row);
    if info.row.as_ref().is_some_and(|r| r.kind == Kind::Dir) {
        let bytes = path.as_os_str().as_encoded_bytes().to_vec();
        info.usage = Some(du::disk_usage(conn, id, bytes, 1, false)?.total);
    }
    Ok(info)
}

/// What `info` shows of a row without opening the file: its kind and, for
/// a file, its mime type (both by name).
pub fn describe(row: EntryRow) -> Info {
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
    info.row = Some(row);
    info
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

/// The most levels a tree answer may go down: protobuf decoders refuse
/// messages nested 100 deep (prost, grpc-go), and each level is one.
pub const MAX_TREE_DEPTH: u32 = 64;

/// The most nodes in one tree answer. They are chosen breadth first, so
/// the upper levels are whole; what is left out is counted in its
/// folder's `hidden`.
pub const MAX_TREE_NODES: usize = 10_000;

/// A folder's subtree to `depth` (at most [`MAX_TREE_DEPTH`]), at most
/// `max_children` (largest first) per folder and [`MAX_TREE_NODES`] in
/// all; figures as `du` counts them.
pub fn tree(
    conn: &Connection,
    path: &Path,
    depth: u32,
    max_children: usize,
) -> Result<Node, Error> {
    if depth > MAX_TREE_DEPTH {
        return Err(Error::InvalidArgument(format!(
            "tree depth {depth} is too deep: at most {MAX_TREE_DEPTH} levels"
        )));
    }
    let (_, id) = crate::store::resolve(conn, path)?;
    let bytes = path.as_os_str().as_encoded_bytes().to_vec();
    let name = path
        .file_name()
        .map(|n| n.as_encoded_bytes().to_vec())
        .unwrap_or_else(|| bytes.clone());
    let max = max_children.max(1);
    // Breadth first, so that the node budget goes to the upper levels:
    // every node in an arena with its children's places, assembled at the
    // end (no recursion on what the caller asked for).
    let mut report = du::disk_usage(conn, id, bytes, max, false)?;
    let mut nodes = vec![Node {
        name,
        usage: std::mem::take(&mut report.total),
        children: Vec::new(),
        hidden: 0,
    }];
    let mut kids: Vec<Vec<usize>> = vec![Vec::new()];
    let mut queue = std::collections::VecDeque::from([(0usize, report, depth)]);
    while let Some((at, report, depth)) = queue.pop_front() {
        let mut shown = 0u64;
        if depth > 0 {
            for child in report.children {
                if nodes.len() >= MAX_TREE_NODES {
                    break;
                }
                shown += 1;
                let child_name = child
                    .path
                    .rsplit(|&b| b == crate::platform::bytes::SEP)
                    .next()
                    .unwrap_or(&child.path)
                    .to_vec();
                let place = nodes.len();
                if child.kind == Some(Kind::Dir) && !child.excluded {
                    let cid = crate::store::resolve(conn, as_path(&child.path))?.1;
                    let mut r = du::disk_usage(conn, cid, child.path, max, false)?;
                    nodes.push(Node {
                        name: child_name,
                        usage: std::mem::take(&mut r.total),
                        children: Vec::new(),
                        hidden: 0,
                    });
                    queue.push_back((place, r, depth - 1));
                } else {
                    nodes.push(Node {
                        name: child_name,
                        usage: child,
                        children: Vec::new(),
                        hidden: 0,
                    });
                }
                kids.push(Vec::new());
                kids[at].push(place);
            }
        }
        nodes[at].hidden = (report.children_total as u64).saturating_sub(shown);
    }
    // Children come after their parent in the arena: fill from the end.
    let mut done: Vec<Option<Node>> = nodes.into_iter().map(Some).collect();
    for at in (0..done.len()).rev() {
        let children = kids[at]
            .iter()
            .filter_map(|&k| done[k].take())
            .collect::<Vec<_>>();
        if let Some(n) = done[at].as_mut() {
            n.children = children;
        }
    }
    Ok(done[0].take().unwrap_or_default())
}

/// Bytes as a path (Unix: any bytes).
fn as_path(b: &[u8]) -> &Path {
    crate::platform::bytes::path(b)
}
