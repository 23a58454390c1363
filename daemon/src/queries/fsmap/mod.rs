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
use std::collections::{BinaryHeap, HashSet};
use std::path::Path;

use rusqlite::Connection;

use crate::Error;
use crate::index::Snapshot;
use crate::queries::du;

mod stats;
mod text;

use crate::store::{Kind, dir_totals};
use stats::*;
use text::*;
pub use text::{line, more_line, pattern_key, pattern_text, size};

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
    /// A folder's photos with a date taken, its whole subtree (issue 32).
    pub photos: crate::queries::photos::Photos,
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
            photos: Default::default(),
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
    if crate::store::entries::kind(conn, id)? != Kind::Dir {
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
    let photos = stats.photos(&tx, snapshot)?;
    let collected = started.elapsed();
    let mut source = IndexSource {
        closed,
        conn: &tx,
        snapshot,
        stats: &stats,
        photos: &photos,
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
// The best-first planner.

/// Where children come from: the index, or a test's tree.
pub(crate) trait Source {
    /// Children of the folder node with this id: folders, files, groups.
    fn children(&mut self, id: i64) -> Result<Vec<Node>, Error>;
}

/// A file's map has no children.
pub(crate) struct NoChildren;

impl Source for NoChildren {
    fn children(&mut self, _: i64) -> Result<Vec<Node>, Error> {
        Ok(Vec::new())
    }
}

/// A shown node.
pub(crate) struct Slot {
    node: Node,
    depth: usize,
    shown: Vec<usize>,
    /// Children not shown (known once the folder is expanded).
    rest: More,
    /// Bytes of its "more" line (indent and newline included), 0 when none.
    more_len: usize,
}

pub(crate) enum Step {
    /// Read a shown folder's children and queue them.
    Expand(usize),
    /// Show a node under a shown folder.
    Show { parent: usize, node: Box<Node> },
}

/// A queue entry: highest score first, then shallower, then by name and id,
/// so that equal trees give equal maps.
pub(crate) struct Pending {
    score: f64,
    depth: usize,
    name: Vec<u8>,
    id: i64,
    step: Step,
}

impl Pending {
    pub(crate) fn rank(&self) -> u8 {
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

pub(crate) fn more_len(rest: &More, child_depth: usize) -> usize {
    if rest.is_empty() {
        0
    } else {
        2 * child_depth + more_line(rest).len() + 1
    }
}

/// Chooses the nodes to show within `budget_bytes` and renders them.
pub(crate) fn plan(root: Node, budget_bytes: usize, source: &mut dyn Source) -> Map {
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

pub(crate) fn render(slots: &[Slot], s: usize, out: &mut String) {
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

pub(crate) fn assemble(slots: &mut [Slot], s: usize) -> Node {
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

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

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
