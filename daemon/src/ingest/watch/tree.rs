//! The inotify backend's table of watches: a tree of names, not a path
//! per watch.
//!
//! Each watch (a folder, or a file with several links) is a node holding
//! its watch number, the watch number of the folder it is in, and its own
//! name; a root (or a folder whose parent is not watched) has no parent and
//! holds its whole path. A path is rebuilt by walking up the parents when an
//! event arrives (events are rare next to the table's size), and a folder
//! renamed inside the roots changes one node, not every path below it.
//!
//! Why: at a million entries (129,008 folders) a boxed path per watch in a
//! `HashMap` was 14.7 MiB, 114 bytes per folder. Here a node is 12 bytes in
//! one vector sorted by watch number (the kernel hands numbers out in
//! increasing order, so a new watch lands at the end: a binary search finds
//! one), and the names share one byte arena (a length byte and the name);
//! both grow by an eighth at a time, not double.
//!
//! A watch that ends (the kernel dropped it: the folder was deleted or
//! unmounted; or it was removed) is marked released, not removed, since a
//! node below it may still need its name: on an unmount the kernel drops a
//! folder's watch and its subfolders' in any order. Released nodes that no
//! path goes through, and names no node points to, are dropped by a
//! compaction once they make up a quarter of the table.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// Flags in the high bits of [`Node::name`], above the arena offset.
const LINKED: u32 = 1 << 31;
const RELEASED: u32 = 1 << 30;
const OFFSET: u32 = RELEASED - 1;
/// The watch number of "no parent" (the kernel's start at 1).
const NO_PARENT: i32 = 0;
/// A name this long or longer has a 4-byte length after a 255 byte.
const LONG: u8 = 255;

#[derive(Clone, Copy, Debug)]
struct Node {
    wd: i32,
    /// The watch of the folder this is in, or [`NO_PARENT`] (then the name
    /// is a whole path).
    parent: i32,
    /// Offset of the name in the arena, with the [`LINKED`] and
    /// [`RELEASED`] flags.
    name: u32,
}

impl Node {
    fn at(&self) -> usize {
        (self.name & OFFSET) as usize
    }
    fn linked(&self) -> bool {
        self.name & LINKED != 0
    }
    fn released(&self) -> bool {
        self.name & RELEASED != 0
    }
}

/// The arena is full (a gigabyte of names): the watch is not recorded.
#[derive(Debug, PartialEq, Eq)]
pub struct TableFull;

/// The watches of one inotify instance; see the module doc.
#[derive(Clone, Debug, Default)]
pub struct WatchTree {
    /// Sorted by watch number (released ones re-keyed below 0 when the
    /// kernel hands their number out again).
    nodes: Vec<Node>,
    names: Vec<u8>,
    /// Arena bytes no node points to.
    garbage: usize,
    /// Released nodes in `nodes`, and how many a compaction had to keep.
    released: usize,
    released_kept: usize,
    folders: usize,
    linked: usize,
    /// The folder a watch without a hint went under last (tried before a
    /// search of the whole table: events come folder by folder).
    last_parent: i32,
}

/// `path`'s folder and last name, as `Path::parent` and `Path::file_name`
/// give them, split at the last `/` where that is the same (a plain last
/// name: most paths, and much quicker than parsing components).
fn split(path: &Path) -> Option<(&Path, &[u8])> {
    let b = path.as_os_str().as_bytes();
    if let Some(i) = b.iter().rposition(|&c| c == b'/') {
        let name = &b[i + 1..];
        let up = if i == 0 { &b[..1] } else { &b[..i] };
        if !matches!(name, b"" | b"." | b"..") && (i == 0 || b[i - 1] != b'/') {
            return Some((Path::new(OsStr::from_bytes(up)), name));
        }
    }
    match (path.parent(), path.file_name()) {
        (Some(up), Some(name)) => Some((up, name.as_bytes())),
        _ => None,
    }
}

/// True when `whole` (a node's whole path) is `path`.
fn same_path(whole: &[u8], path: &Path) -> bool {
    whole == path.as_os_str().as_bytes() || Path::new(OsStr::from_bytes(whole)) == path
}

/// Grows `v` by an eighth (at least `more`), not by doubling: the table is
/// large and lives as long as the daemon.
fn grow<T>(v: &mut Vec<T>, more: usize) {
    if v.capacity() - v.len() < more {
        v.reserve_exact(more.max(v.len() / 8).max(64));
    }
}

impl WatchTree {
    /// Watches held: (folders, files with several links).
    pub fn counts(&self) -> (usize, usize) {
        (self.folders, self.linked)
    }

    /// Heap bytes held (both vectors' capacity).
    pub fn heap_bytes(&self) -> u64 {
        (self.nodes.capacity() * std::mem::size_of::<Node>() + self.names.capacity()) as u64
    }

    fn pos(&self, wd: i32) -> Result<usize, usize> {
        // The kernel counts up: a new watch is past the last one.
        match self.nodes.last() {
            Some(last) if wd > last.wd => Err(self.nodes.len()),
            _ => self.nodes.binary_search_by_key(&wd, |n| n.wd),
        }
    }

    fn node(&self, wd: i32) -> Option<&Node> {
        self.pos(wd).ok().map(|i| &self.nodes[i])
    }

    /// The name (or whole path) at arena offset `at`, and its size there.
    fn entry(&self, at: usize) -> (&[u8], usize) {
        match self.names[at] {
            LONG => {
                let len = u32::from_le_bytes(self.names[at + 1..at + 5].try_into().unwrap());
                let len = len as usize;
                (&self.names[at + 5..at + 5 + len], 5 + len)
            }
            len => {
                let len = len as usize;
                (&self.names[at + 1..at + 1 + len], 1 + len)
            }
        }
    }

    fn name_of(&self, n: &Node) -> &[u8] {
        self.entry(n.at()).0
    }

    /// Appends a name to the arena; its offset.
    fn push_name(&mut self, name: &[u8]) -> Result<u32, TableFull> {
        let head = if name.len() < LONG as usize { 1 } else { 5 };
        let at = self.names.len();
        if at + head + name.len() > OFFSET as usize {
            return Err(TableFull);
        }
        grow(&mut self.names, head + name.len());
        if head == 1 {
            self.names.push(name.len() as u8);
        } else {
            self.names.push(LONG);
            self.names
                .extend_from_slice(&(name.len() as u32).to_le_bytes());
        }
        self.names.extend_from_slice(name);
        Ok(at as u32)
    }

    /// The path of live watch `wd`, and whether it is on a file with
    /// several links.
    pub fn lookup(&self, wd: i32) -> Option<(PathBuf, bool)> {
        let n = self.node(wd).filter(|n| !n.released())?;
        Some((self.path_of(n)?, n.linked()))
    }

    /// True when `wd` is a live watch.
    pub fn is_live(&self, wd: i32) -> bool {
        self.node(wd).is_some_and(|n| !n.released())
    }

    /// Rebuilds a node's path from its parents.
    fn path_of(&self, n: &Node) -> Option<PathBuf> {
        let mut chain: Vec<&[u8]> = Vec::new();
        let mut cur = n;
        loop {
            chain.push(self.name_of(cur));
            if cur.parent == NO_PARENT {
                break;
            }
            if chain.len() > self.nodes.len() {
                return None; // a cycle: never made (see `place`), but never looped on
            }
            cur = self.node(cur.parent)?;
        }
        let len = chain.iter().map(|c| c.len() + 1).sum();
        let mut path = PathBuf::with_capacity(len);
        for c in chain.iter().rev() {
            path.push(OsStr::from_bytes(c));
        }
        Some(path)
    }

    /// True when node `n`'s path is `path` (compared name by name, without
    /// building it).
    fn is_at(&self, n: &Node, path: &Path) -> bool {
        let mut cur = n;
        let mut path = path;
        for _ in 0..=self.nodes.len() {
            let name = self.name_of(cur);
            if cur.parent == NO_PARENT {
                return same_path(name, path);
            }
            match split(path) {
                Some((up, last)) if last == name => {
                    let Some(p) = self.node(cur.parent) else {
                        return false;
                    };
                    cur = p;
                    path = up;
                }
                _ => return false,
            }
        }
        false
    }

    /// True when `wd` is `from` or one of its parents.
    fn above(&self, wd: i32, from: i32) -> bool {
        let mut cur = from;
        for _ in 0..=self.nodes.len() {
            if cur == wd {
                return true;
            }
            match self.node(cur) {
                Some(n) if n.parent != NO_PARENT => cur = n.parent,
                _ => return false,
            }
        }
        true
    }

    /// The folder watch at `path` (a live one before a released one, the
    /// newest first), by a pass over the whole table unless it is the last
    /// one found. Two live watches have one path when a folder moved out of
    /// the roots (its watch still has its old path: the kernel gives no
    /// event for where it went) and a new one was made in its place: the
    /// newer is the one there.
    fn find_folder(&mut self, path: &Path) -> Option<i32> {
        if let Some(n) = self.node(self.last_parent)
            && !n.released()
            && !n.linked()
            && self.is_at(n, path)
        {
            return Some(n.wd);
        }
        let name = split(path).map(|(_, name)| name);
        let mut released = None;
        for n in self.nodes.iter().rev() {
            if n.linked() {
                continue;
            }
            let own = self.name_of(n);
            let may = if n.parent == NO_PARENT {
                same_path(own, path)
            } else {
                Some(own) == name
            };
            if may && self.is_at(n, path) {
                if !n.released() {
                    self.last_parent = n.wd;
                    return Some(n.wd);
                }
                released.get_or_insert(n.wd);
            }
        }
        released
    }

    /// Where a watch at `path` goes: under its folder's watch (`hint`,
    /// when its name is the folder's, else the one found at that path),
    /// or on its own with its whole path. Never under `wd` itself.
    fn place<'p>(
        &mut self,
        wd: i32,
        new: bool,
        path: &'p Path,
        hint: Option<i32>,
    ) -> (i32, &'p [u8]) {
        let whole = (NO_PARENT, path.as_os_str().as_bytes());
        let Some((up, name)) = split(path) else {
            return whole;
        };
        if up.as_os_str().is_empty() {
            return whole;
        }
        let hinted = hint.filter(|&h| self.fits(h, up));
        match hinted.or_else(|| self.find_folder(up)) {
            // (A new watch is no node's parent: no cycle to look for.)
            Some(p) if !new && self.above(wd, p) => whole,
            Some(p) => (p, name),
            None => whole,
        }
    }

    /// True when hint `h` can be the folder watch at `up`: the walker's
    /// hint is the folder it listed a path in, watched a moment ago, so its
    /// own name is checked (cheap), not its whole path; a folder renamed in
    /// between is a race the rescan after every rename covers.
    fn fits(&self, h: i32, up: &Path) -> bool {
        self.node(h).is_some_and(|p| {
            !p.linked()
                && if p.parent == NO_PARENT {
                    same_path(self.name_of(p), up)
                } else {
                    split(up).is_some_and(|(_, u)| u == self.name_of(p))
                }
        })
    }

    /// Records watch `wd` at `path`: a folder, or a file with several links
    /// (`linked`); `hint` is the watch of the folder it is in, when the
    /// caller has it. The kernel gives a watched inode's number again: the
    /// watch then takes this path. True when the watch is new.
    pub fn insert(
        &mut self,
        wd: i32,
        path: &Path,
        hint: Option<i32>,
        linked: bool,
    ) -> Result<bool, TableFull> {
        let flag = if linked { LINKED } else { 0 };
        if self.names.len() + 5 + path.as_os_str().len() > OFFSET as usize {
            // Make room first, if there is any to make.
            self.compact();
        }
        let existing = self.pos(wd);
        if let Ok(i) = existing {
            let n = self.nodes[i];
            if n.released() {
                // The kernel handed a released watch's number out again
                // (after 2^31 watches): the old node keeps its place for
                // the nodes below it under a number of its own.
                self.rekey(i);
                return self.insert(wd, path, hint, linked);
            }
            // (An inode is a folder or a file for life: a number seen as
            // both is counted as what it is now.)
            let same_place = || match (hint, split(path)) {
                // Under its hinted folder with its name: the walker
                // watching a watched folder again (every rescan).
                (Some(h), Some((up, name))) if n.parent == h && name == self.name_of(&n) => {
                    self.fits(h, up)
                }
                _ => self.is_at(&n, path),
            };
            if n.linked() == linked && same_place() {
                return Ok(false);
            }
            let (parent, name) = self.place(wd, false, path, hint);
            let at = self.push_name(name)?;
            self.garbage += self.entry(n.at()).1;
            let node = Node {
                wd,
                parent,
                name: at | flag,
            };
            self.nodes[i] = node;
            self.count(&n, -1);
            self.count(&node, 1);
            return Ok(false);
        }
        let (parent, name) = self.place(wd, true, path, hint);
        let at = self.push_name(name)?;
        let node = Node {
            wd,
            parent,
            name: at | flag,
        };
        grow(&mut self.nodes, 1);
        // Nearly always at the end: the kernel counts up.
        let i = self.pos(wd).unwrap_err();
        self.nodes.insert(i, node);
        self.count(&node, 1);
        Ok(true)
    }

    fn count(&mut self, n: &Node, by: isize) {
        let c = if n.linked() {
            &mut self.linked
        } else {
            &mut self.folders
        };
        *c = c.saturating_add_signed(by);
    }

    /// Gives released node `i` a number of its own below every other.
    fn rekey(&mut self, i: usize) {
        let mut node = self.nodes.remove(i);
        let old = node.wd;
        let new = self.nodes.first().map_or(-1, |n| n.wd.min(0) - 1);
        node.wd = new;
        for n in &mut self.nodes {
            if n.parent == old {
                n.parent = new;
            }
        }
        self.nodes.insert(0, node);
        if self.last_parent == old {
            self.last_parent = new;
        }
    }

    /// Marks live watch `wd` released. Returns whether it was on a file
    /// with several links, or `None` when it was not live.
    pub fn release(&mut self, wd: i32) -> Option<bool> {
        let i = self.pos(wd).ok()?;
        let n = self.nodes[i];
        if n.released() {
            return None;
        }
        self.nodes[i].name |= RELEASED;
        self.released += 1;
        self.count(&n, -1);
        self.maybe_compact();
        Some(n.linked())
    }

    /// A folder (or file) moved from `from` to `to`: every watch at `from`
    /// goes under the folder at `to`'s parent (or holds `to` whole when
    /// that is not watched), which moves everything below it; watches that
    /// hold a whole path under `from` get the new one.
    pub fn rename(&mut self, from: &Path, to: &Path) {
        let name = split(from).map(|(_, name)| name);
        let mut at_from = Vec::new();
        let mut whole_below = Vec::new();
        for (i, n) in self.nodes.iter().enumerate() {
            let own = self.name_of(n);
            if n.parent == NO_PARENT {
                if same_path(own, from) {
                    at_from.push(i);
                } else if Path::new(OsStr::from_bytes(own)).starts_with(from) {
                    whole_below.push(i);
                }
            } else if Some(own) == name && self.is_at(n, from) {
                at_from.push(i);
            }
        }
        for i in whole_below {
            let n = self.nodes[i];
            let old = PathBuf::from(OsStr::from_bytes(self.name_of(&n)));
            let new = super::rebased(&old, from, to);
            self.set(i, NO_PARENT, new.as_os_str().as_bytes());
        }
        for i in at_from {
            let wd = self.nodes[i].wd;
            let (parent, name) = self.place(wd, false, to, None);
            self.set(i, parent, name);
        }
        self.maybe_compact();
    }

    /// Moves node `i` under `parent` with `name` (its flags kept). When the
    /// arena is full it stays where it was (its path is stale, as events'
    /// paths can be anyway: the engine stats every path it is given).
    fn set(&mut self, i: usize, parent: i32, name: &[u8]) {
        let Ok(at) = self.push_name(name) else {
            return;
        };
        let n = self.nodes[i];
        self.garbage += self.entry(n.at()).1;
        self.nodes[i].parent = parent;
        self.nodes[i].name = (n.name & !OFFSET) | at;
    }

    /// Every live watch with its path (a snapshot, to judge outside the
    /// lock).
    pub fn live(&self) -> Vec<(i32, PathBuf)> {
        self.nodes
            .iter()
            .filter(|n| !n.released())
            .filter_map(|n| Some((n.wd, self.path_of(n)?)))
            .collect()
    }

    fn maybe_compact(&mut self) {
        let released = self.released - self.released_kept;
        if released > 64 && released * 4 >= self.nodes.len()
            || self.garbage > 4096 && self.garbage * 4 >= self.names.len()
        {
            self.compact();
        }
    }

    /// Drops released nodes no live node's path goes through, and names no
    /// node points to.
    fn compact(&mut self) {
        let mut keep: Vec<bool> = self.nodes.iter().map(|n| !n.released()).collect();
        for i in 0..self.nodes.len() {
            if self.nodes[i].released() {
                continue;
            }
            // Up from a live node to the first node kept already.
            let mut up = self.nodes[i].parent;
            while up != NO_PARENT {
                let Ok(j) = self.pos(up) else { break };
                if keep[j] {
                    break;
                }
                keep[j] = true;
                up = self.nodes[j].parent;
            }
        }
        let kept = keep.iter().filter(|k| **k).count();
        let bytes: usize = (self.nodes.iter().zip(&keep))
            .filter(|(_, k)| **k)
            .map(|(n, _)| self.entry(n.at()).1)
            .sum();
        let mut nodes = Vec::with_capacity(kept + kept / 8);
        let mut names = Vec::with_capacity(bytes + bytes / 8);
        for (n, _) in self.nodes.iter().zip(&keep).filter(|(_, k)| **k) {
            let (_, size) = self.entry(n.at());
            let at = names.len() as u32;
            names.extend_from_slice(&self.names[n.at()..n.at() + size]);
            nodes.push(Node {
                name: (n.name & !OFFSET) | at,
                ..*n
            });
        }
        self.released_kept = nodes.iter().filter(|n| n.released()).count();
        self.released = self.released_kept;
        self.nodes = nodes;
        self.names = names;
        self.garbage = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> &Path {
        Path::new(s)
    }

    fn path(t: &WatchTree, wd: i32) -> Option<String> {
        t.lookup(wd).map(|(p, _)| p.display().to_string())
    }

    /// A root with `a/b/c` and `a/d` below it.
    fn tree() -> WatchTree {
        let mut t = WatchTree::default();
        assert_eq!(t.insert(1, p("/r"), None, false), Ok(true));
        assert_eq!(t.insert(2, p("/r/a"), Some(1), false), Ok(true));
        assert_eq!(t.insert(3, p("/r/a/b"), Some(2), false), Ok(true));
        assert_eq!(t.insert(4, p("/r/a/b/c"), None, false), Ok(true));
        assert_eq!(t.insert(5, p("/r/a/d"), Some(2), false), Ok(true));
        t
    }

    #[test]
    fn paths_are_rebuilt_from_names() {
        let mut t = tree();
        assert_eq!(path(&t, 4).as_deref(), Some("/r/a/b/c"));
        assert_eq!(t.nodes[3].parent, 3, "found without a hint");
        // Watched again at the same path: nothing changes.
        assert_eq!(t.insert(4, p("/r/a/b/c"), None, false), Ok(false));
        assert_eq!(t.garbage, 0);
        // A wrong hint is not followed.
        assert_eq!(t.insert(6, p("/r/a/b/e"), Some(5), false), Ok(true));
        assert_eq!(path(&t, 6).as_deref(), Some("/r/a/b/e"));
        // A folder whose parent is not watched holds its whole path.
        assert_eq!(t.insert(7, p("/elsewhere/x"), None, false), Ok(true));
        assert_eq!(t.nodes.last().unwrap().parent, NO_PARENT);
        assert_eq!(path(&t, 7).as_deref(), Some("/elsewhere/x"));
        // A file with several links.
        assert_eq!(t.insert(8, p("/r/a/f.txt"), Some(2), true), Ok(true));
        assert!(t.lookup(8).unwrap().1);
        assert_eq!(t.counts(), (7, 1));
        assert_eq!(path(&t, 99), None);
    }

    #[test]
    fn a_rename_moves_the_subtree_and_is_undone_by_its_reverse() {
        let mut t = tree();
        t.rename(p("/r/a"), p("/r/z"));
        assert_eq!(path(&t, 4).as_deref(), Some("/r/z/b/c"));
        assert_eq!(path(&t, 5).as_deref(), Some("/r/z/d"));
        // Into another folder, then under a folder not watched.
        t.rename(p("/r/z/b"), p("/r/z/d/b2"));
        assert_eq!(path(&t, 4).as_deref(), Some("/r/z/d/b2/c"));
        assert_eq!(t.nodes[2].parent, 5);
        t.rename(p("/r/z/d/b2"), p("/q/b3"));
        assert_eq!(path(&t, 4).as_deref(), Some("/q/b3/c"));
        // A whole path under `from` is rebased; a path merely sharing a
        // prefix of bytes is not.
        t.rename(p("/q"), p("/r/q"));
        assert_eq!(path(&t, 3).as_deref(), Some("/r/q/b3"));
        t.insert(9, p("/r/zz"), Some(1), false).unwrap();
        t.rename(p("/r/z"), p("/r/y"));
        assert_eq!(path(&t, 9).as_deref(), Some("/r/zz"));
        assert_eq!(path(&t, 5).as_deref(), Some("/r/y/d"));
        // A file that is not watched: nothing moves.
        let before = t.live();
        t.rename(p("/r/y/nope"), p("/r/y/nope2"));
        assert_eq!(t.live(), before);
    }

    #[test]
    fn released_watches_keep_the_names_paths_go_through() {
        let mut t = tree();
        // The parent's watch goes first (an unmount's order).
        assert_eq!(t.release(2), Some(false));
        assert_eq!(t.release(2), None);
        assert!(!t.is_live(2));
        assert_eq!(path(&t, 2), None);
        assert_eq!(path(&t, 4).as_deref(), Some("/r/a/b/c"));
        t.compact();
        assert_eq!(path(&t, 4).as_deref(), Some("/r/a/b/c"));
        assert_eq!(t.nodes.len(), 5);
        // Once nothing goes through it, a compaction drops it.
        for wd in [3, 4, 5] {
            t.release(wd);
        }
        t.compact();
        assert_eq!(t.nodes.len(), 1);
        assert_eq!(t.counts(), (1, 0));
        // A number handed out again while released: the old node keeps
        // serving the nodes below it.
        let mut t = tree();
        t.release(2);
        t.insert(2, p("/r/new"), Some(1), false).unwrap();
        assert_eq!(path(&t, 2).as_deref(), Some("/r/new"));
        assert_eq!(path(&t, 4).as_deref(), Some("/r/a/b/c"));
        assert_eq!(t.counts(), (5, 0));
    }

    #[test]
    fn many_releases_compact_and_the_garbage_goes() {
        let mut t = WatchTree::default();
        t.insert(1, p("/r"), None, false).unwrap();
        for wd in 2..10_000 {
            t.insert(
                wd,
                &PathBuf::from(format!("/r/folder-{wd}")),
                Some(1),
                false,
            )
            .unwrap();
        }
        for wd in 2..9_000 {
            t.release(wd);
        }
        assert!(t.nodes.len() < 4_000, "{}", t.nodes.len());
        for wd in 9_000..10_000 {
            t.rename(
                &PathBuf::from(format!("/r/folder-{wd}")),
                &PathBuf::from(format!("/r/renamed-folder-{wd}")),
            );
        }
        assert!(t.garbage <= 4096 || t.garbage * 4 < t.names.len());
        assert_eq!(path(&t, 9_999).as_deref(), Some("/r/renamed-folder-9999"));
        assert_eq!(t.counts(), (1_001, 0));
        // Long names (and a long whole path) round-trip.
        let long = format!("/r/{}", "n".repeat(255));
        t.insert(20_000, p(&long), Some(1), false).unwrap();
        assert_eq!(path(&t, 20_000), Some(long.clone()));
        let deep = format!("/{}/{}", "x".repeat(300), "y".repeat(300));
        t.insert(20_001, p(&deep), None, false).unwrap();
        assert_eq!(path(&t, 20_001), Some(deep));
    }

    #[test]
    fn a_folder_made_where_one_moved_away_is_found_before_it() {
        let mut t = tree();
        // `a` moved out of the root (no rename reaches the table), a new
        // `a` made: both watches have one path.
        t.insert(6, p("/r/a"), Some(1), false).unwrap();
        t.insert(7, p("/r/a/new"), None, false).unwrap();
        assert_eq!(t.nodes.last().unwrap().parent, 6);
        // The old one comes back elsewhere: what is under the new one stays.
        t.insert(2, p("/r/back"), Some(1), false).unwrap();
        assert_eq!(path(&t, 4).as_deref(), Some("/r/back/b/c"));
        assert_eq!(path(&t, 7).as_deref(), Some("/r/a/new"));
    }

    #[test]
    fn split_is_parent_and_file_name() {
        for s in [
            "/",
            "/a",
            "/a/b",
            "/a/b/",
            "/a//b",
            "/a/./b",
            "/a/b/.",
            "/a/b/..",
            "a",
            "a/b",
            "",
            "//a",
            "/a/b c/d.e",
        ] {
            let p = Path::new(s);
            let want = match (p.parent(), p.file_name()) {
                (Some(up), Some(name)) => Some((up, name.as_bytes())),
                _ => None,
            };
            assert_eq!(split(p), want, "{s:?}");
        }
    }

    #[test]
    fn a_rename_never_makes_a_cycle() {
        let mut t = tree();
        // Only a stale table could ask for this; the node holds its path.
        t.rename(p("/r/a"), p("/r/a/b/c/a"));
        assert_eq!(path(&t, 2).as_deref(), Some("/r/a/b/c/a"));
        assert_eq!(t.nodes[1].parent, NO_PARENT);
        assert_eq!(path(&t, 4).as_deref(), Some("/r/a/b/c/a/b/c"));
    }
}
