//! fsmap: a condensed outline of a tree, sized for an LLM's context (Aider's
//! repo map is the model).
//!
//! Why it exists: an agent handed a folder needs its shape (where the bytes
//! and the files are, what kinds of files, what changed lately) in a few
//! hundred tokens, not a listing of every name. Everything comes from the
//! index, nothing walks the disk: sizes and counts from `dir_totals` (the
//! figures `fsctl du` prints, hard links counted once per folder), a
//! folder's children from SQLite when its turn comes, and the dominant kinds,
//! extensions and latest modification of every folder's subtree from one
//! pass over the in-memory snapshot.
//!
//! How the budget is spent: best-first. Every folder, file and group of
//! files is scored by its share of the tree (the mean of its share of
//! allocated bytes and its share of entries, so a folder of many small files
//! counts as well as one of a few large ones), multiplied by 0.3 per level
//! below the root's children so that the outline goes breadth first unless
//! something deeper is clearly larger; a priority queue shows the highest
//! score next. Showing a node costs its line plus the change to its parent's
//! "... N more" line, so the text's byte length is known exactly at every
//! step and ceil(bytes / 4) never exceeds the budget. A node whose line does
//! not fit is left to the "more" line, and so is anything under 0.1% of the
//! tree: that is where the outline stops being informative. A folder's own
//! score bounds its children's, so its children are read only when that
//! score reaches the top of the queue.

use std::cmp::Ordering;
use std::collections::{BTreeMap, BinaryHeap, HashMap, HashSet};
use std::path::Path;

use rusqlite::Connection;

use crate::Error;
use crate::queries::du;
use crate::queries::query::{KindClass, kind_of};
use crate::queries::search::Snapshot;
use crate::store::{Kind, dir_totals};

/// A file modified this long before the request makes its folders "recent".
pub const RECENT_NS: i64 = 7 * 24 * 3600 * 1_000_000_000;
/// Nodes with a smaller share of the tree are left to "more" lines.
const MIN_SHARE: f64 = 0.001;
/// Each level below the root's children weighs this much less: the outline
/// shows breadth first unless something deeper is clearly larger.
const DEPTH_DECAY: f64 = 0.3;
/// Sibling files sharing a pattern are collapsed from this many on.
const GROUP_MIN: usize = 3;
/// Give up after this many candidates in a row that did not fit.
const MAX_MISSES: usize = 64;
/// A kind is named when it holds at least this share of a folder's files.
const KIND_MIN_PERCENT: u32 = 10;
const MAX_KINDS: usize = 3;
const MAX_EXTENSIONS: usize = 2;
/// At most this many names in one line of a folder chain (`a/b/c/`).
const MAX_CHAIN: usize = 8;
/// Stands for a digit run in pattern keys (a file name cannot hold NUL).
const RUN: u8 = 0;

/// What a node stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeType {
    Folder,
    /// A file, symlink or special file.
    File,
    /// Sibling files whose names differ only in digits.
    Group,
    /// Sibling folders whose names differ only in digits; its children are
    /// those folders.
    FolderGroup,
}

/// One kind's share of a folder's files.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KindShare {
    pub kind: &'static str,
    pub files: u64,
    pub percent: u32,
    /// Most common first; "" for files without an extension.
    pub extensions: Vec<String>,
}

/// Children left out of the map, summed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct More {
    pub dirs: u64,
    pub files: u64,
    pub bytes: u64,
}

impl More {
    fn is_empty(&self) -> bool {
        self.dirs == 0 && self.files == 0
    }
}

/// One node of the map.
#[derive(Clone, Debug)]
pub struct Node {
    pub kind: NodeType,
    /// The entry's name (the root: its absolute path); a group: its pattern.
    pub name: Vec<u8>,
    /// Allocated bytes, as `du -s -B1`.
    pub bytes: u64,
    /// Non-folder entries, and folders (this one included), as du counts.
    pub files: u64,
    pub dirs: u64,
    pub kinds: Vec<KindShare>,
    pub recent: bool,
    /// A group's pattern, or the one pattern of a folder's files.
    pub like: String,
    /// How many files (a group) or folders (a folder group) it stands for.
    pub count: u64,
    /// Modification years (UTC) of a group's or such a folder's files.
    pub years: Option<(i32, i32)>,
    pub children: Vec<Node>,
    /// Children not shown (only when some are shown).
    pub more: More,
    /// A folder the rules keep out of the index: when its sizes were
    /// measured (unix seconds). It has no children in the map.
    pub excluded: Option<i64>,
    /// The entry's id, to read a folder's children.
    id: i64,
    /// A folder with children worth listing.
    expandable: bool,
    /// A folder group's folders, shown as its children when it is expanded.
    members: Vec<Node>,
    /// Folders named after the first in a chain line (`a/b/c/`: 2).
    chain: u64,
}

impl Node {
    fn leaf(kind: NodeType, name: Vec<u8>, bytes: u64, files: u64) -> Node {
        Node {
            kind,
            name,
            bytes,
            files,
            dirs: 0,
            kinds: Vec::new(),
            recent: false,
            like: String::new(),
            count: 0,
            years: None,
            children: Vec::new(),
            more: More::default(),
            excluded: None,
            id: 0,
            expandable: false,
            members: Vec::new(),
            chain: 0,
        }
    }

    /// What this node adds to its parent's "more" line while not shown.
    fn as_more(&self) -> More {
        match self.kind {
            NodeType::Folder => More {
                dirs: 1,
                files: 0,
                bytes: self.bytes,
            },
            NodeType::FolderGroup => More {
                dirs: self.count,
                files: 0,
                bytes: self.bytes,
            },
            NodeType::File | NodeType::Group => More {
                dirs: 0,
                files: self.files,
                bytes: self.bytes,
            },
        }
    }
}

/// The map: its text (never over budget) and the same nodes, structured.
#[derive(Clone, Debug)]
pub struct Map {
    pub text: String,
    pub root: Node,
}

/// Builds the map of `path` within `budget` tokens (bytes / 4, rounded up).
/// `now_ns` is the request time, for "recent". Folders in `closed` (that
/// the caller may not open) show their own line and nothing of what they
/// hold: no children, no name patterns, no kinds.
pub fn fs_map(
    conn: &Connection,
    snapshot: &Snapshot,
    path: &Path,
    budget: u32,
    now_ns: i64,
    closed: &HashSet<i64>,
) -> Result<Map, Error> {
    if budget == 0 {
        return Err(Error::InvalidArgument(
            "budget must be at least 1 token".into(),
        ));
    }
    let budget_bytes = budget as usize * 4;
    let (_, id) = crate::store::resolve(conn, path)?;
    let path_bytes = path.as_os_str().as_encoded_bytes().to_vec();
    let kind: i64 = conn.query_row("SELECT kind FROM entries WHERE id=?1", [id], |r| r.get(0))?;
    if Kind::from_i64(kind) != Kind::Dir {
        let report = du::disk_usage(conn, id, path_bytes.clone(), 0, false)?;
        let mut node = Node::leaf(NodeType::File, path_bytes, report.total.bytes, 1);
        node.id = id;
        node.recent = u32::try_from(id)
            .ok()
            .filter(|&i| snapshot.entry_kind(i).is_some())
            .is_some_and(|i| snapshot.entry_mtime_ns(i) >= now_ns - RECENT_NS);
        return Ok(plan(node, budget_bytes, &mut NoChildren));
    }
    let tx = conn.unchecked_transaction()?; // one consistent read
    let started = std::time::Instant::now();
    let stats = Stats::collect(&tx, snapshot, id)?;
    let collected = started.elapsed();
    let mut source = IndexSource {
        closed,
        conn: &tx,
        snapshot,
        stats: &stats,
        recent_from: now_ns.saturating_sub(RECENT_NS),
    };
    let t = dir_totals(&tx, id)?.unwrap_or_default();
    let root = source.folder(
        id,
        path_bytes,
        t.bytes as u64,
        t.files as u64,
        t.dirs as u64,
    );
    let map = plan(root, budget_bytes, &mut source);
    tracing::debug!(
        collect_us = collected.as_micros() as u64,
        total_us = started.elapsed().as_micros() as u64,
        folders = stats.folders.len(),
        "fsmap"
    );
    Ok(map)
}

// ---------------------------------------------------------------------------
// Names: patterns and extensions.

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
fn same_pattern(a: &[u8], b: &[u8]) -> (bool, bool) {
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

/// The longest extension [`ext_key`] keeps whole.
pub(crate) const MAX_KEYED_EXT: usize = 12;

/// An extension packed into a map key: up to 8 bytes fit in the number
/// (names hold no NUL, so zero padding is unambiguous); longer ones, up to
/// [`MAX_KEYED_EXT`] (see [`extension`]), use the remaining bytes too.
pub(crate) fn ext_key(ext: &[u8]) -> (u64, u32) {
    let mut lo = [0u8; 8];
    let mut hi = [0u8; 4];
    let n = ext.len().min(8);
    lo[..n].copy_from_slice(&ext[..n]);
    if ext.len() > 8 {
        let m = (ext.len() - 8).min(4);
        hi[..m].copy_from_slice(&ext[8..8 + m]);
    }
    (u64::from_le_bytes(lo), u32::from_le_bytes(hi))
}

/// Extension ids by packed extension, with a multiplicative hash: the
/// snapshot pass looks one up per file.
type ExtIds = HashMap<(u64, u32), u32, std::hash::BuildHasherDefault<MulHasher>>;

/// Fibonacci hashing of integer keys (not for untrusted keys: extensions
/// come from the user's own file names).
#[derive(Default)]
pub(crate) struct MulHasher(u64);

impl std::hash::Hasher for MulHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(b as u64);
        }
    }

    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(5) ^ v).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }

    fn write_u32(&mut self, v: u32) {
        self.write_u64(v as u64);
    }
}

/// The extension of a (folded) name: after the last dot, not a leading dot,
/// at most 12 bytes without spaces; empty otherwise.
fn extension(name: &[u8]) -> &[u8] {
    match memchr::memrchr(b'.', name) {
        Some(dot) if dot > 0 && name.len() - dot - 1 <= MAX_KEYED_EXT => {
            let ext = &name[dot + 1..];
            if ext.contains(&b' ') { &[] } else { ext }
        }
        _ => &[],
    }
}

fn kind_label(k: Option<KindClass>) -> &'static str {
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
fn display(b: &[u8]) -> String {
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

fn year_of(ns: i64) -> i32 {
    jiff::Timestamp::from_nanosecond(i128::from(ns))
        .map(|t| t.to_zoned(jiff::tz::TimeZone::UTC).year() as i32)
        .unwrap_or(1970)
}

// ---------------------------------------------------------------------------
// Lines.

fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

fn years_text(y: Option<(i32, i32)>) -> String {
    match y {
        Some((a, b)) if a == b => format!(", {a}"),
        Some((a, b)) => format!(", {a}-{b}"),
        None => String::new(),
    }
}

fn kinds_text(kinds: &[KindShare]) -> String {
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
            format!("{name} {}{what}{recent}", size(n.bytes))
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
            s + recent
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

// ---------------------------------------------------------------------------
// The best-first planner.

/// Where children come from: the index, or a test's tree.
trait Source {
    /// Children of the folder node with this id: folders, files, groups.
    fn children(&mut self, id: i64) -> Result<Vec<Node>, Error>;
}

/// A file's map has no children.
struct NoChildren;

impl Source for NoChildren {
    fn children(&mut self, _: i64) -> Result<Vec<Node>, Error> {
        Ok(Vec::new())
    }
}

/// A shown node.
struct Slot {
    node: Node,
    depth: usize,
    shown: Vec<usize>,
    /// Children not shown (known once the folder is expanded).
    rest: More,
    /// Bytes of its "more" line (indent and newline included), 0 when none.
    more_len: usize,
}

enum Step {
    /// Read a shown folder's children and queue them.
    Expand(usize),
    /// Show a node under a shown folder.
    Show { parent: usize, node: Box<Node> },
}

/// A queue entry: highest score first, then shallower, then by name and id,
/// so that equal trees give equal maps.
struct Pending {
    score: f64,
    depth: usize,
    name: Vec<u8>,
    id: i64,
    step: Step,
}

impl Pending {
    fn rank(&self) -> u8 {
        match self.step {
            Step::Expand(_) => 0,
            Step::Show { .. } => 1,
        }
    }
}

impl PartialEq for Pending {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Pending {}

impl PartialOrd for Pending {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Pending {
    /// Greater is shown first (BinaryHeap pops the greatest).
    fn cmp(&self, other: &Self) -> Ordering {
        self.score
            .total_cmp(&other.score)
            .then_with(|| other.depth.cmp(&self.depth))
            .then_with(|| other.rank().cmp(&self.rank()))
            .then_with(|| other.name.cmp(&self.name))
            .then_with(|| other.id.cmp(&self.id))
    }
}

fn more_len(rest: &More, child_depth: usize) -> usize {
    if rest.is_empty() {
        0
    } else {
        2 * child_depth + more_line(rest).len() + 1
    }
}

/// Chooses the nodes to show within `budget_bytes` and renders them.
fn plan(root: Node, budget_bytes: usize, source: &mut dyn Source) -> Map {
    let total_bytes = root.bytes.max(1) as f64;
    let total_entries = (root.files + root.dirs).max(1) as f64;
    let score = |n: &Node, depth: usize| {
        let entries = (n.files + n.dirs) as f64 / total_entries;
        let share = (n.bytes as f64 / total_bytes + entries) / 2.0;
        share * DEPTH_DECAY.powi(depth.saturating_sub(1) as i32)
    };
    let root_line = line(&root);
    if root_line.len() + 1 > budget_bytes {
        // Not even the root fits: as much of its line as does.
        let mut cut = budget_bytes.saturating_sub(1);
        while !root_line.is_char_boundary(cut) {
            cut -= 1;
        }
        let mut root = root;
        root.expandable = false;
        return Map {
            text: format!("{}\n", &root_line[..cut]),
            root,
        };
    }
    let mut used = root_line.len() + 1;
    let mut heap = BinaryHeap::new();
    if root.expandable {
        heap.push(Pending {
            score: 1.0,
            depth: 0,
            name: Vec::new(),
            id: root.id,
            step: Step::Expand(0),
        });
    }
    let mut slots = vec![Slot {
        node: root,
        depth: 0,
        shown: Vec::new(),
        rest: More::default(),
        more_len: 0,
    }];
    let mut misses = 0;
    while let Some(p) = heap.pop() {
        if misses >= MAX_MISSES {
            break;
        }
        match p.step {
            Step::Expand(s) => {
                let members = std::mem::take(&mut slots[s].node.members);
                let kids = match if members.is_empty() {
                    source.children(slots[s].node.id)
                } else {
                    Ok(members)
                } {
                    Ok(k) => k,
                    Err(e) => {
                        // A folder that vanished meanwhile stays summarised.
                        tracing::debug!(error = %e, "fsmap: children unreadable");
                        Vec::new()
                    }
                };
                let depth = slots[s].depth + 1;
                for k in kids {
                    let m = k.as_more();
                    let rest = &mut slots[s].rest;
                    rest.dirs += m.dirs;
                    rest.files += m.files;
                    rest.bytes += m.bytes;
                    let sc = score(&k, depth);
                    if sc >= MIN_SHARE {
                        heap.push(Pending {
                            score: sc,
                            depth,
                            name: k.name.clone(),
                            id: k.id,
                            step: Step::Show {
                                parent: s,
                                node: Box::new(k),
                            },
                        });
                    }
                }
            }
            Step::Show { parent, node } => {
                let depth = slots[parent].depth + 1;
                let cost = 2 * depth + line(&node).len() + 1;
                let m = node.as_more();
                let old = slots[parent].rest;
                let rest = More {
                    dirs: old.dirs - m.dirs,
                    files: old.files - m.files,
                    bytes: old.bytes - m.bytes,
                };
                let new_more = more_len(&rest, depth);
                let after = used + cost + new_more - slots[parent].more_len;
                if after > budget_bytes {
                    misses += 1;
                    continue;
                }
                misses = 0;
                used = after;
                let slot = &mut slots[parent];
                slot.rest = rest;
                slot.more_len = new_more;
                let idx = slots.len();
                slots[parent].shown.push(idx);
                if node.expandable {
                    heap.push(Pending {
                        score: p.score,
                        depth,
                        name: node.name.clone(),
                        id: node.id,
                        step: Step::Expand(idx),
                    });
                }
                slots.push(Slot {
                    node: *node,
                    depth,
                    shown: Vec::new(),
                    rest: More::default(),
                    more_len: 0,
                });
            }
        }
    }
    let mut text = String::with_capacity(used);
    render(&slots, 0, &mut text);
    debug_assert_eq!(text.len(), used, "fsmap: accounted bytes differ");
    let root = assemble(&mut slots, 0);
    Map { text, root }
}

fn render(slots: &[Slot], s: usize, out: &mut String) {
    let slot = &slots[s];
    for _ in 0..slot.depth {
        out.push_str("  ");
    }
    out.push_str(&line(&slot.node));
    out.push('\n');
    for &c in &slot.shown {
        render(slots, c, out);
    }
    if !slot.shown.is_empty() && !slot.rest.is_empty() {
        for _ in 0..=slot.depth {
            out.push_str("  ");
        }
        out.push_str(&more_line(&slot.rest));
        out.push('\n');
    }
}

fn assemble(slots: &mut [Slot], s: usize) -> Node {
    let shown = std::mem::take(&mut slots[s].shown);
    let children: Vec<Node> = shown.iter().map(|&c| assemble(slots, c)).collect();
    let slot = &mut slots[s];
    let mut node = std::mem::replace(&mut slot.node, Node::leaf(NodeType::File, Vec::new(), 0, 0));
    if !children.is_empty() {
        node.more = slot.rest;
    }
    node.children = children;
    node
}

// ---------------------------------------------------------------------------
// Subtree figures from the snapshot.

/// Outside the target.
const OUTSIDE: u32 = 1;
/// Not yet known.
const UNKNOWN: u32 = 0;
/// A non-folder entry inside the target.
const INSIDE_FILE: u32 = 2;
/// Folder k inside the target is marked `FOLDER_BASE + k`.
const FOLDER_BASE: u32 = 3;

/// What one pass over the snapshot learns about every folder of a subtree.
#[derive(Clone, Debug)]
struct FolderStats {
    parent: u32,
    depth: u16,
    /// (extension id, files) over the whole subtree, sorted by extension id.
    hist: Vec<(u32, u32)>,
    /// Latest mtime of a non-folder entry in the subtree (i64::MIN: none).
    newest: i64,
    /// Direct non-folder children: count, first one, pattern hashes, whether
    /// all share the first one's pattern (and run lengths), mtime range.
    direct: u32,
    first: u32,
    same_key: bool,
    same_runs: bool,
    direct_oldest: i64,
    direct_newest: i64,
    /// Direct subfolders: count, first one, whether all share its pattern.
    sub: u32,
    sub_first: u32,
    sub_same_key: bool,
    sub_same_runs: bool,
    /// Hard-linked files (kept out of dir_totals), each inode once.
    linked_bytes: u64,
    linked_files: u64,
}

/// Per-folder figures of the target's subtree.
struct Stats {
    /// Per snapshot id: UNKNOWN, OUTSIDE, INSIDE_FILE or FOLDER_BASE + k.
    mark: Vec<u32>,
    folders: Vec<FolderStats>,
    ext_names: Vec<Vec<u8>>,
    ext_kinds: Vec<&'static str>,
}

impl Stats {
    fn collect(conn: &Connection, snap: &Snapshot, target: i64) -> Result<Stats, Error> {
        let n = snap.id_bound();
        let mut stats = Stats {
            mark: vec![UNKNOWN; n],
            folders: Vec::new(),
            ext_names: Vec::new(),
            ext_kinds: Vec::new(),
        };
        let Some(t) = u32::try_from(target).ok().filter(|&t| (t as usize) < n) else {
            return Ok(stats); // not in the snapshot yet: figures stay empty
        };
        let new_folder = |parent: u32, depth: u16| FolderStats {
            parent,
            depth,
            hist: Vec::new(),
            newest: i64::MIN,
            direct: 0,
            first: 0,
            same_key: true,
            same_runs: true,
            direct_oldest: i64::MAX,
            direct_newest: i64::MIN,
            sub: 0,
            sub_first: 0,
            sub_same_key: true,
            sub_same_runs: true,
            linked_bytes: 0,
            linked_files: 0,
        };
        stats.mark[t as usize] = FOLDER_BASE;
        stats.folders.push(new_folder(0, snap.entry_depth(t)));
        // Which entries are inside; folders numbered parents first.
        let mut chain = Vec::new();
        for i in 0..n as u32 {
            if stats.mark[i as usize] != UNKNOWN {
                continue;
            }
            chain.clear();
            let mut cur = i;
            let inside = loop {
                match stats.mark[cur as usize] {
                    UNKNOWN => {}
                    OUTSIDE | INSIDE_FILE => break false,
                    _ => break true,
                }
                if snap.entry_kind(cur).is_none() || chain.len() > n {
                    break false; // a hole, or a cycle (never in a sound index)
                }
                chain.push(cur);
                match snap.entry_parent(cur) {
                    Some(p) if (p as usize) < n => cur = p,
                    _ => break false,
                }
            };
            for &c in chain.iter().rev() {
                let parent_mark = snap
                    .entry_parent(c)
                    .map_or(OUTSIDE, |p| stats.mark[p as usize]);
                stats.mark[c as usize] = if !inside || parent_mark < FOLDER_BASE {
                    OUTSIDE
                } else if snap.entry_kind(c) == Some(Kind::Dir) {
                    let pk = parent_mark - FOLDER_BASE;
                    let pf = &mut stats.folders[pk as usize];
                    if pf.sub == 0 {
                        pf.sub_first = c;
                    } else if pf.sub_same_key {
                        let (key, runs) =
                            same_pattern(&snap.entry_name(pf.sub_first), &snap.entry_name(c));
                        pf.sub_same_key = key;
                        pf.sub_same_runs &= runs;
                    }
                    pf.sub += 1;
                    stats.folders.push(new_folder(pk, snap.entry_depth(c)));
                    FOLDER_BASE + stats.folders.len() as u32 - 1
                } else {
                    INSIDE_FILE
                };
            }
        }
        // Files: extensions, newest mtime and patterns per direct folder.
        let mut ext_ids: ExtIds = HashMap::default();
        for i in 0..n as u32 {
            if stats.mark[i as usize] != INSIDE_FILE {
                continue;
            }
            let Some(p) = snap.entry_parent(i) else {
                continue;
            };
            let Some(k) = stats.mark[p as usize].checked_sub(FOLDER_BASE) else {
                continue;
            };
            let k = k as usize;
            let ext = extension(snap.entry_folded_name(i));
            let e = match ext_ids.get(&ext_key(ext)) {
                Some(&e) => e,
                None => {
                    let e = stats.ext_names.len() as u32;
                    ext_ids.insert(ext_key(ext), e);
                    stats.ext_names.push(ext.to_vec());
                    stats.ext_kinds.push(kind_label(if ext.is_empty() {
                        None
                    } else {
                        kind_of(&format!("x.{}", String::from_utf8_lossy(ext)), false)
                    }));
                    e
                }
            };
            let mtime = snap.entry_mtime_ns(i);
            let f = &mut stats.folders[k];
            match f.hist.iter_mut().find(|(x, _)| *x == e) {
                Some((_, c)) => *c += 1,
                None => f.hist.push((e, 1)),
            }
            f.newest = f.newest.max(mtime);
            if f.direct == 0 {
                f.first = i;
            } else if f.same_key {
                let (key, runs) = same_pattern(&snap.entry_name(f.first), &snap.entry_name(i));
                f.same_key = key;
                f.same_runs &= runs;
            }
            f.direct += 1;
            f.direct_oldest = f.direct_oldest.min(mtime);
            f.direct_newest = f.direct_newest.max(mtime);
        }
        // Subtree figures, deepest folders first.
        let mut order: Vec<u32> = (1..stats.folders.len() as u32).collect();
        order.sort_unstable_by_key(|&k| std::cmp::Reverse(stats.folders[k as usize].depth));
        for f in &mut stats.folders {
            f.hist.sort_unstable();
        }
        // Merged into a scratch vector that then trades places with the
        // parent's, so allocations are reused.
        let mut scratch = Hist::new();
        for k in order {
            let (newest, parent) = {
                let f = &stats.folders[k as usize];
                (f.newest, f.parent)
            };
            let child = std::mem::take(&mut stats.folders[k as usize].hist);
            if !child.is_empty() {
                let p = &mut stats.folders[parent as usize];
                merge_into(&p.hist, &child, &mut scratch);
                std::mem::swap(&mut p.hist, &mut scratch);
            }
            stats.folders[k as usize].hist = child;
            let p = &mut stats.folders[parent as usize];
            p.newest = p.newest.max(newest);
        }
        // Hard-linked files: each inode once per folder, as du counts.
        let mut stmt = conn.prepare_cached(
            "SELECT id, dev, ino, blocks FROM entries WHERE nlink > 1 AND kind <> 1",
        )?;
        let mut rows = stmt.query([])?;
        let mut seen: HashSet<(u32, i64, i64)> = HashSet::new();
        while let Some(r) = rows.next()? {
            let (id, dev, ino, blocks): (i64, i64, i64, i64) =
                (r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?);
            let Some(i) = u32::try_from(id).ok().filter(|&i| (i as usize) < n) else {
                continue;
            };
            if stats.mark[i as usize] != INSIDE_FILE {
                continue;
            }
            let Some(p) = snap.entry_parent(i) else {
                continue;
            };
            let Some(mut k) = stats.mark[p as usize].checked_sub(FOLDER_BASE) else {
                continue;
            };
            loop {
                if seen.insert((k, dev, ino)) {
                    let f = &mut stats.folders[k as usize];
                    f.linked_bytes += blocks as u64 * 512;
                    f.linked_files += 1;
                }
                if k == 0 {
                    break;
                }
                k = stats.folders[k as usize].parent;
            }
        }
        Ok(stats)
    }

    fn folder(&self, id: i64) -> Option<&FolderStats> {
        let m = *self.mark.get(usize::try_from(id).ok()?)?;
        (m >= FOLDER_BASE).then(|| &self.folders[(m - FOLDER_BASE) as usize])
    }

    /// Dominant kinds of a histogram, with their most common extensions.
    fn kinds(&self, hist: &[(u32, u32)]) -> Vec<KindShare> {
        let total: u64 = hist.iter().map(|&(_, c)| c as u64).sum();
        if total == 0 {
            return Vec::new();
        }
        let mut by_kind: BTreeMap<&'static str, (u64, Hist)> = BTreeMap::new();
        for &(e, c) in hist {
            let slot = by_kind.entry(self.ext_kinds[e as usize]).or_default();
            slot.0 += c as u64;
            slot.1.push((e, c));
        }
        let mut kinds: Vec<KindShare> = by_kind
            .into_iter()
            .map(|(kind, (files, mut exts))| {
                exts.sort_by(|a, b| {
                    b.1.cmp(&a.1).then_with(|| {
                        self.ext_names[a.0 as usize].cmp(&self.ext_names[b.0 as usize])
                    })
                });
                KindShare {
                    kind,
                    files,
                    percent: ((files * 100 + total / 2) / total) as u32,
                    extensions: exts
                        .iter()
                        .take(MAX_EXTENSIONS)
                        .map(|&(e, _)| display(&self.ext_names[e as usize]))
                        .collect(),
                }
            })
            .filter(|k| k.percent >= KIND_MIN_PERCENT)
            .collect();
        kinds.sort_by(|a, b| b.files.cmp(&a.files).then_with(|| a.kind.cmp(b.kind)));
        kinds.truncate(MAX_KINDS);
        kinds
    }
}

/// (extension id, files), sorted by extension id.
type Hist = Vec<(u32, u32)>;

/// Merges two histograms sorted by extension id into `out` (cleared first).
fn merge_into(a: &[(u32, u32)], b: &[(u32, u32)], out: &mut Hist) {
    out.clear();
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        match a[i].0.cmp(&b[j].0) {
            Ordering::Less => {
                out.push(a[i]);
                i += 1;
            }
            Ordering::Greater => {
                out.push(b[j]);
                j += 1;
            }
            Ordering::Equal => {
                out.push((a[i].0, a[i].1 + b[j].1));
                i += 1;
                j += 1;
            }
        }
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
}

// ---------------------------------------------------------------------------
// Children from the index.

struct IndexSource<'a> {
    closed: &'a HashSet<i64>,
    conn: &'a Connection,
    snapshot: &'a Snapshot,
    stats: &'a Stats,
    recent_from: i64,
}

impl IndexSource<'_> {
    /// A folder's node from its du figures (without hard links) and the
    /// snapshot's figures.
    ///
    /// A folder holding nothing but one folder is shown as one line with
    /// both names (`.local/share/`), as GitHub shows such chains; its figures
    /// are the outer folder's and its children the innermost one's.
    fn folder(&self, id: i64, mut name: Vec<u8>, bytes: u64, files: u64, dirs: u64) -> Node {
        let linked = self
            .stats
            .folder(id)
            .map_or((0, 0), |f| (f.linked_bytes, f.linked_files));
        let mut id = id;
        let mut chain = 0;
        for _ in 0..MAX_CHAIN {
            if self.closed.contains(&id) {
                break;
            }
            match self.stats.folder(id) {
                Some(f) if f.direct == 0 && f.sub == 1 => {
                    name.push(b'/');
                    name.extend_from_slice(&self.snapshot.entry_name(f.sub_first));
                    id = f.sub_first as i64;
                    chain += 1;
                }
                _ => break,
            }
        }
        let mut node = Node::leaf(NodeType::Folder, name, bytes + linked.0, files + linked.1);
        node.id = id;
        node.dirs = dirs;
        node.chain = chain;
        if self.closed.contains(&id) {
            return node;
        }
        if let Some(f) = self.stats.folder(id) {
            node.recent = f.newest >= self.recent_from;
            if f.sub == 0 && f.direct as usize >= GROUP_MIN && f.same_key {
                // Its files are one group: the folder's line says it all.
                let (key, runs) = pattern_key(&self.snapshot.entry_name(f.first));
                node.like = pattern_text(&key, f.same_runs.then_some(runs.as_slice()));
                node.count = f.direct as u64;
                node.years = Some((year_of(f.direct_oldest), year_of(f.direct_newest)));
            } else {
                if f.direct == 0 && f.sub as usize >= GROUP_MIN && f.sub_same_key {
                    // Its subfolders are one group: named in its line, and
                    // listed directly when it is expanded.
                    let (key, runs) = pattern_key(&self.snapshot.entry_name(f.sub_first));
                    node.like =
                        pattern_text(&key, f.sub_same_runs.then_some(runs.as_slice())) + "/";
                    node.count = f.sub as u64;
                }
                node.kinds = self.stats.kinds(&f.hist);
            }
        }
        node.expandable = (node.like.is_empty() || node.like.ends_with('/'))
            && (node.files > 0 || node.dirs > 1 + chain);
        node
    }
}

impl Source for IndexSource<'_> {
    fn children(&mut self, id: i64) -> Result<Vec<Node>, Error> {
        if self.closed.contains(&id) {
            return Ok(Vec::new());
        }
        let mut stmt = self.conn.prepare_cached(
            "SELECT e.id, e.name, e.kind, e.blocks, e.mtime_ns, t.bytes, t.files, t.dirs
             FROM entries e LEFT JOIN dir_totals t ON t.id = e.id WHERE e.parent_id = ?1",
        )?;
        let mut rows = stmt.query([id])?;
        let mut out = Vec::new();
        // Files by pattern key: (name, bytes, mtime, id, run lengths).
        type Member = (Vec<u8>, u64, i64, i64, Vec<u32>);
        let mut by_key: BTreeMap<Vec<u8>, Vec<Member>> = BTreeMap::new();
        let mut folders: BTreeMap<Vec<u8>, Vec<(Node, Vec<u32>)>> = BTreeMap::new();
        while let Some(r) = rows.next()? {
            let cid: i64 = r.get(0)?;
            let name: Vec<u8> = r.get(1)?;
            if Kind::from_i64(r.get(2)?) == Kind::Dir {
                let bytes = r.get::<_, Option<i64>>(5)?.unwrap_or(0) as u64;
                let files = r.get::<_, Option<i64>>(6)?.unwrap_or(0) as u64;
                let dirs = r.get::<_, Option<i64>>(7)?.unwrap_or(1) as u64;
                let (key, runs) = pattern_key(&name);
                folders
                    .entry(key)
                    .or_default()
                    .push((self.folder(cid, name, bytes, files, dirs), runs));
            } else {
                let bytes = r.get::<_, i64>(3)? as u64 * 512;
                let mtime: i64 = r.get(4)?;
                let (key, runs) = pattern_key(&name);
                by_key
                    .entry(key)
                    .or_default()
                    .push((name, bytes, mtime, cid, runs));
            }
        }
        for (key, members) in folders {
            if members.len() < GROUP_MIN {
                out.extend(members.into_iter().map(|(n, _)| n));
                continue;
            }
            let same_runs = members.windows(2).all(|w| w[0].1 == w[1].1);
            let like = pattern_text(&key, same_runs.then_some(members[0].1.as_slice()));
            let members: Vec<Node> = members.into_iter().map(|(n, _)| n).collect();
            let mut g = Node::leaf(
                NodeType::FolderGroup,
                format!("{like}/").into_bytes(),
                members.iter().map(|m| m.bytes).sum(),
                members.iter().map(|m| m.files).sum(),
            );
            g.dirs = members.iter().map(|m| m.dirs).sum();
            g.like = like;
            g.count = members.len() as u64;
            g.recent = members.iter().any(|m| m.recent);
            let mut hist = Hist::new();
            for m in &members {
                if let Some(f) = self.stats.folder(m.id) {
                    let mut merged = Hist::new();
                    merge_into(&hist, &f.hist, &mut merged);
                    hist = merged;
                }
            }
            g.kinds = self.stats.kinds(&hist);
            g.id = members.iter().map(|m| m.id).min().unwrap_or(0);
            g.expandable = true;
            g.members = members;
            out.push(g);
        }
        for (key, members) in by_key {
            if members.len() >= GROUP_MIN {
                let same_runs = members.windows(2).all(|w| w[0].4 == w[1].4);
                let like = pattern_text(&key, same_runs.then_some(members[0].4.as_slice()));
                let mut g = Node::leaf(
                    NodeType::Group,
                    like.clone().into_bytes(),
                    members.iter().map(|m| m.1).sum(),
                    members.len() as u64,
                );
                let oldest = members.iter().map(|m| m.2).min().unwrap_or(0);
                let newest = members.iter().map(|m| m.2).max().unwrap_or(0);
                g.like = like;
                g.count = members.len() as u64;
                g.years = Some((year_of(oldest), year_of(newest)));
                g.recent = newest >= self.recent_from;
                g.id = members.iter().map(|m| m.3).min().unwrap_or(0);
                out.push(g);
            } else {
                for (name, bytes, mtime, fid, _) in members {
                    let mut f = Node::leaf(NodeType::File, name, bytes, 1);
                    f.recent = mtime >= self.recent_from;
                    f.id = fid;
                    out.push(f);
                }
            }
        }
        // Folders the rules keep out: a line each, with their measured
        // sizes, so the map's figures add up.
        for u in crate::store::unlisted_of(self.conn, id)? {
            if u.name.is_empty() {
                continue;
            }
            let mut f = Node::leaf(
                NodeType::Folder,
                u.name,
                u.totals.bytes as u64,
                u.totals.files as u64,
            );
            f.dirs = u.totals.dirs as u64;
            f.excluded = Some(u.measured_at);
            out.push(f);
        }
        // A folder whose children are one folder group names the pattern in
        // its own line: list the folders directly.
        if out.len() == 1 && out[0].kind == NodeType::FolderGroup {
            return Ok(std::mem::take(&mut out[0].members));
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_replace_digit_runs() {
        let (key, runs) = pattern_key(b"IMG_0042.jpg");
        assert_eq!(runs, [4]);
        assert_eq!(pattern_text(&key, Some(&runs)), "IMG_####.jpg");
        assert_eq!(pattern_text(&key, None), "IMG_#.jpg");
        let (a, ra) = pattern_key(b"file-1-10.txt");
        let (b, rb) = pattern_key(b"file-22-3.txt");
        assert_eq!(a, b, "run lengths do not split a pattern");
        assert_ne!(ra, rb);
        assert_eq!(
            same_pattern(b"file-1-10.txt", b"file-22-3.txt"),
            (true, false)
        );
        assert_eq!(same_pattern(b"IMG_0001.jpg", b"IMG_0420.jpg"), (true, true));
        assert_eq!(same_pattern(b"a1.txt", b"b1.txt"), (false, false));
        assert_eq!(same_pattern(b"a1.txt", b"a1.txt2"), (false, false));
        assert_eq!(same_pattern(b"v2", b"v10"), (true, false));
        assert_eq!(pattern_key(b"plain").1, Vec::<u32>::new());
    }

    #[test]
    fn extensions_and_sizes() {
        assert_eq!(extension(b"a.tar.gz"), b"gz");
        assert_eq!(extension(b".bashrc"), b"");
        assert_eq!(extension(b"noext"), b"");
        assert_eq!(extension(b"x.not an ext"), b"");
        assert_eq!(size(0), "0B");
        assert_eq!(size(4096), "4.0K");
        assert_eq!(size(12 * 1024 + 100), "12K");
        assert_eq!(size(3 << 30), "3.0G");
        assert_eq!(size(1023 * 1024 + 1000), "1.0M");
    }

    /// A synthetic tree: folder ids map to their children.
    struct Fake(HashMap<i64, Vec<Node>>);

    impl Source for Fake {
        fn children(&mut self, id: i64) -> Result<Vec<Node>, Error> {
            Ok(self.0.get(&id).cloned().unwrap_or_default())
        }
    }

    fn fake_tree() -> (Node, Fake) {
        let mut map = HashMap::new();
        let mut next = 2i64;
        let mut top = Vec::new();
        let (mut all_bytes, mut all_files, mut all_dirs) = (0u64, 0u64, 1u64);
        for d in 0..40u64 {
            let id = next;
            next += 1;
            let mut kids = Vec::new();
            let (mut bytes, mut files) = (4096u64, 0u64);
            for f in 0..(d % 7) * 3 {
                let mut n = Node::leaf(
                    NodeType::File,
                    format!("report-{d}-{f} with a longer name.pdf").into_bytes(),
                    (f + 1) * 1000 * (d + 1),
                    1,
                );
                n.id = next;
                next += 1;
                bytes += n.bytes;
                files += 1;
                kids.push(n);
            }
            let mut g = Node::leaf(NodeType::Group, b"IMG_####.jpg".to_vec(), d * 5000, d * 10);
            g.like = "IMG_####.jpg".into();
            g.years = Some((2019, 2024));
            g.id = next;
            next += 1;
            bytes += g.bytes;
            files += g.files;
            kids.push(g);
            map.insert(id, kids);
            let mut folder = Node::leaf(
                NodeType::Folder,
                format!("folder ünïcode {d:02}").into_bytes(),
                bytes,
                files,
            );
            folder.id = id;
            folder.dirs = 1;
            folder.expandable = true;
            folder.kinds = vec![KindShare {
                kind: "image",
                files: d * 10,
                percent: 80,
                extensions: vec!["jpg".into()],
            }];
            folder.recent = d % 5 == 0;
            all_bytes += bytes;
            all_files += files;
            all_dirs += 1;
            top.push(folder);
        }
        map.insert(1, top);
        let mut root = Node::leaf(
            NodeType::Folder,
            b"/tmp/fake root".to_vec(),
            all_bytes,
            all_files,
        );
        root.id = 1;
        root.dirs = all_dirs;
        root.expandable = true;
        (root, Fake(map))
    }

    #[test]
    fn never_over_budget_and_deterministic() {
        let mut last_len = 0;
        for budget in 1..=1500usize {
            let (root, mut src) = fake_tree();
            let m = plan(root, budget * 4, &mut src);
            assert!(
                m.text.len() <= budget * 4,
                "budget {budget}: {} bytes\n{}",
                m.text.len(),
                m.text
            );
            assert!(m.text.ends_with('\n'));
            let (root, mut src) = fake_tree();
            assert_eq!(plan(root, budget * 4, &mut src).text, m.text);
            // More budget never shows less (it fills up, then stays).
            assert!(m.text.len() + 64 >= last_len, "budget {budget}");
            last_len = last_len.max(m.text.len());
        }
        let (root, mut src) = fake_tree();
        let all = plan(root, 1 << 20, &mut src);
        assert!(all.text.contains("... "), "small items are summarised");
        assert!(
            all.text.contains("files like IMG_####.jpg, "),
            "{}",
            all.text
        );
        // The most significant folder comes first under the root.
        let first = &all.root.children[0];
        assert!(
            all.root.children.iter().all(|c| c.bytes <= first.bytes),
            "{}",
            all.text
        );
    }

    #[test]
    fn a_tiny_budget_cuts_the_root_line() {
        let (root, mut src) = fake_tree();
        let m = plan(root, 8, &mut src);
        assert_eq!(m.text, "/tmp/fa\n");
    }

    #[test]
    fn lines_read_well() {
        let mut f = Node::leaf(NodeType::Folder, b"Photos".to_vec(), 3 << 30, 9120);
        f.dirs = 13;
        f.kinds = vec![
            KindShare {
                kind: "image",
                files: 9000,
                percent: 98,
                extensions: vec!["jpg".into(), "png".into()],
            },
            KindShare {
                kind: "other",
                files: 120,
                percent: 10,
                extensions: vec!["".into()],
            },
        ];
        f.recent = true;
        assert_eq!(
            line(&f),
            "Photos/ 3.0G, 9120 files, 12 folders: image 98% (.jpg .png), other 10% (no ext) [recent]"
        );
        let mut g = Node::leaf(NodeType::Group, Vec::new(), 1 << 30, 412);
        g.like = "IMG_####.jpg".into();
        g.years = Some((2019, 2024));
        assert_eq!(line(&g), "412 files like IMG_####.jpg, 1.0G, 2019-2024");
        assert_eq!(
            more_line(&More {
                dirs: 1,
                files: 14,
                bytes: 2048
            }),
            "... 1 more folder, 14 more files, 2.0K"
        );
    }
}
