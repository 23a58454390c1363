//! What the map knows of every folder under its path, from one pass over
//! the name index (kinds, extensions, newest change, hard links once per
//! folder), and the children of a folder read from the store when the
//! planner gets to it.

use std::cmp::Ordering;
use std::collections::{BTreeMap, HashMap, HashSet};

use rusqlite::Connection;

use crate::Error;
use crate::index::Snapshot;
use crate::index::ext::ext_key;
use crate::queries::photos::Photos;
use crate::queries::query::kind_of;
use crate::store::Kind;

use super::*;

/// Outside the target.
pub(crate) const OUTSIDE: u32 = 1;
/// Not yet known.
pub(crate) const UNKNOWN: u32 = 0;
/// A non-folder entry inside the target.
pub(crate) const INSIDE_FILE: u32 = 2;
/// Folder k inside the target is marked `FOLDER_BASE + k`.
pub(crate) const FOLDER_BASE: u32 = 3;

/// What one pass over the snapshot learns about every folder of a subtree.
#[derive(Clone, Debug)]
pub(crate) struct FolderStats {
    pub(crate) parent: u32,
    pub(crate) depth: u16,
    /// (extension id, files) over the whole subtree, sorted by extension id.
    pub(crate) hist: Vec<(u32, u32)>,
    /// Latest mtime of a non-folder entry in the subtree (i64::MIN: none).
    pub(crate) newest: i64,
    /// Direct non-folder children: count, first one, pattern hashes, whether
    /// all share the first one's pattern (and run lengths), mtime range.
    pub(crate) direct: u32,
    pub(crate) first: u32,
    pub(crate) same_key: bool,
    pub(crate) same_runs: bool,
    pub(crate) direct_oldest: i64,
    pub(crate) direct_newest: i64,
    /// Direct subfolders: count, first one, whether all share its pattern.
    pub(crate) sub: u32,
    pub(crate) sub_first: u32,
    pub(crate) sub_same_key: bool,
    pub(crate) sub_same_runs: bool,
    /// Hard-linked files (kept out of dir_totals), each inode once.
    pub(crate) linked_bytes: u64,
    pub(crate) linked_files: u64,
}

/// Per-folder figures of the target's subtree.
pub(crate) struct Stats {
    /// Per snapshot id: UNKNOWN, OUTSIDE, INSIDE_FILE or FOLDER_BASE + k.
    pub(crate) mark: Vec<u32>,
    pub(crate) folders: Vec<FolderStats>,
    pub(crate) ext_names: Vec<Vec<u8>>,
    pub(crate) ext_kinds: Vec<&'static str>,
}

impl Stats {
    pub(crate) fn collect(conn: &Connection, snap: &Snapshot, target: i64) -> Result<Stats, Error> {
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
        let mut seen: HashSet<(u32, u64, u64)> = HashSet::new();
        crate::store::entries::each_multilink(conn, |m| {
            let (id, dev, ino, blocks) = (m.id, m.dev, m.ino, m.blocks);
            let Some(i) = u32::try_from(id).ok().filter(|&i| (i as usize) < n) else {
                return Ok(());
            };
            if stats.mark[i as usize] != INSIDE_FILE {
                return Ok(());
            }
            let Some(p) = snap.entry_parent(i) else {
                return Ok(());
            };
            let Some(mut k) = stats.mark[p as usize].checked_sub(FOLDER_BASE) else {
                return Ok(());
            };
            loop {
                if seen.insert((k, dev, ino)) {
                    let f = &mut stats.folders[k as usize];
                    f.linked_bytes += blocks * 512;
                    f.linked_files += 1;
                }
                if k == 0 {
                    break;
                }
                k = stats.folders[k as usize].parent;
            }
            Ok(())
        })?;
        Ok(stats)
    }

    pub(crate) fn folder(&self, id: i64) -> Option<&FolderStats> {
        let m = *self.mark.get(usize::try_from(id).ok()?)?;
        (m >= FOLDER_BASE).then(|| &self.folders[(m - FOLDER_BASE) as usize])
    }

    /// Photos with a date taken beneath each folder of the subtree (by its
    /// number k), each folder's photos added to every folder above it. The
    /// files' folders come from the snapshot, so the SQL is one scan of
    /// `media` ([`crate::store::media::taken_years`]).
    pub(crate) fn photos(&self, conn: &Connection, snap: &Snapshot) -> Result<Vec<Photos>, Error> {
        let mut here = vec![Photos::default(); self.folders.len()];
        for (id, year) in crate::store::media::taken_years(conn)? {
            let folder = (id as usize) < snap.id_bound() && snap.entry_kind(id).is_some();
            let Some(&m) = folder
                .then(|| snap.entry_parent(id))
                .flatten()
                .and_then(|p| self.mark.get(p as usize))
            else {
                continue;
            };
            if m >= FOLDER_BASE {
                here[(m - FOLDER_BASE) as usize].add(1, year, year);
            }
        }
        // Folders are numbered parents first: children add up backwards.
        for k in (1..here.len()).rev() {
            let p = self.folders[k].parent as usize;
            let h = here[k];
            here[p].add_all(h);
        }
        Ok(here)
    }

    /// Dominant kinds of a histogram, with their most common extensions.
    pub(crate) fn kinds(&self, hist: &[(u32, u32)]) -> Vec<KindShare> {
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
pub(crate) type Hist = Vec<(u32, u32)>;

/// Merges two histograms sorted by extension id into `out` (cleared first).
pub(crate) fn merge_into(a: &[(u32, u32)], b: &[(u32, u32)], out: &mut Hist) {
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

pub(crate) struct IndexSource<'a> {
    pub(crate) closed: &'a HashSet<i64>,
    pub(crate) conn: &'a Connection,
    pub(crate) snapshot: &'a Snapshot,
    pub(crate) stats: &'a Stats,
    /// Per folder number, as [`Stats::photos`].
    pub(crate) photos: &'a [Photos],
    pub(crate) recent_from: i64,
}

impl IndexSource<'_> {
    /// A folder's node from its du figures (without hard links) and the
    /// snapshot's figures.
    ///
    /// A folder holding nothing but one folder is shown as one line with
    /// both names (`.local/share/`), as GitHub shows such chains; its figures
    /// are the outer folder's and its children the innermost one's.
    pub(crate) fn folder(
        &self,
        id: i64,
        mut name: Vec<u8>,
        bytes: u64,
        files: u64,
        dirs: u64,
    ) -> Node {
        let linked = self
            .stats
            .folder(id)
            .map_or((0, 0), |f| (f.linked_bytes, f.linked_files));
        let node_outer = id;
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
        // The photos of the outer folder of a chain line: its figures.
        if let Some(&m) = usize::try_from(node_outer)
            .ok()
            .and_then(|i| self.stats.mark.get(i))
            && m >= FOLDER_BASE
        {
            node.photos = self
                .photos
                .get((m - FOLDER_BASE) as usize)
                .copied()
                .unwrap_or_default();
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
        let mut out = Vec::new();
        // Files by pattern key: (name, bytes, mtime, id, run lengths).
        type Member = (Vec<u8>, u64, i64, i64, Vec<u32>);
        let mut by_key: BTreeMap<Vec<u8>, Vec<Member>> = BTreeMap::new();
        let mut folders: BTreeMap<Vec<u8>, Vec<(Node, Vec<u32>)>> = BTreeMap::new();
        for r in crate::store::entries::map_children(self.conn, id)? {
            let cid = r.id;
            let name = r.name;
            if r.kind == Kind::Dir {
                let bytes = r.bytes.unwrap_or(0) as u64;
                let files = r.files.unwrap_or(0) as u64;
                let dirs = r.dirs.unwrap_or(1) as u64;
                let (key, runs) = pattern_key(&name);
                folders
                    .entry(key)
                    .or_default()
                    .push((self.folder(cid, name, bytes, files, dirs), runs));
            } else {
                let bytes = r.blocks as u64 * 512;
                let mtime = r.mtime_ns;
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
            for m in &members {
                g.photos.add_all(m.photos);
            }
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
