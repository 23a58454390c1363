//! Disk usage from the index, counted the way GNU du counts, never walking.
//!
//! A folder's figures come from its `dir_totals` row (kept current by the
//! writer). Files with several hard links are not in the aggregates: each
//! query collects those under the path from the small `entries_multilink`
//! index and counts every inode once, so `bytes` equals `du -s -B1` and
//! `apparent_bytes` equals `du -s -b`. Each child's figures are what
//! `du -s CHILD` would print on its own.

pub mod held;

use std::collections::{HashMap, HashSet};

use rusqlite::Connection;

use crate::Error;
use crate::store::entries::{self, ChildTotals, Parents};
use crate::store::{FLAG_UNREADABLE, Kind, Linked, dir_totals};

/// Disk usage of one path.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Usage {
    pub path: Vec<u8>,
    pub kind: Option<Kind>,
    pub bytes: u64,
    pub apparent: u64,
    pub files: u64,
    pub dirs: u64,
    pub incomplete: bool,
    /// Levels below the path asked about (its children: 1).
    pub depth: u32,
    /// A folder the rules keep out of the index: its figures come from a
    /// sizes-only walk, made at `measured_at` (unix seconds), not live.
    pub excluded: bool,
    pub measured_at: i64,
    /// The entry's id (0 where not known): [`super::photos::fill`] finds
    /// a listed folder's photos by it.
    pub id: i64,
    /// Photos with a date taken anywhere beneath a folder (issue 32), when
    /// asked for ([`super::photos::fill`]).
    pub photos: super::photos::Photos,
}

/// A path's usage and its children's, largest first.
#[derive(Clone, Debug, Default)]
pub struct Report {
    pub total: Usage,
    pub children: Vec<Usage>,
    pub children_total: usize,
}

/// Where a folder sits relative to the folder being measured.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Branch {
    Outside,
    Target,
    /// Under the target, through this child of it.
    Child(i64),
}

/// Multi-link files of one subtree, each inode counted once: the indexed
/// ones are added, and those the aggregates count more than once (through
/// the unlisted rows of several folders) are taken off again.
#[derive(Default)]
struct LinkedSum {
    seen: HashSet<(i64, i64)>,
    bytes: i64,
    apparent: i64,
    files: i64,
}

impl LinkedSum {
    /// An inode already counted in the aggregates (through an unlisted
    /// row): an indexed link to it adds nothing more, and another unlisted
    /// row's count of it is one too many.
    fn counted(&mut self, l: &Linked) {
        if !self.seen.insert((l.dev as i64, l.ino as i64))
            && let Some((bytes, apparent)) = l.sizes
        {
            self.bytes -= bytes as i64;
            self.apparent -= apparent as i64;
            self.files -= 1;
        }
    }

    /// Adds (dev, ino, allocated bytes, apparent bytes) unless already seen.
    fn add(&mut self, (dev, ino, bytes, apparent): (i64, i64, u64, u64)) {
        if self.seen.insert((dev, ino)) {
            self.bytes += bytes as i64;
            self.apparent += apparent as i64;
            self.files += 1;
        }
    }

    /// A folder's figures from the aggregates, with this sum applied.
    fn onto(&self, u: &mut Usage) {
        u.bytes = u.bytes.saturating_add_signed(self.bytes);
        u.apparent = u.apparent.saturating_add_signed(self.apparent);
        u.files = u.files.saturating_add_signed(self.files);
    }
}

/// Multi-link files under a target folder, summed for the target and for
/// each child they are under.
#[derive(Default)]
struct ChildLinks {
    total: LinkedSum,
    per_child: HashMap<i64, LinkedSum>,
}

impl ChildLinks {
    /// An unlisted row's links, in the folder at `at`.
    fn unlisted(&mut self, at: Branch, links: &[Linked]) {
        let child = match at {
            Branch::Outside => return,
            Branch::Target => None,
            Branch::Child(c) => Some(c),
        };
        for l in links {
            self.total.counted(l);
            if let Some(c) = child {
                self.per_child.entry(c).or_default().counted(l);
            }
        }
    }

    /// An indexed file `id` of several links, in the folder at `at`:
    /// (dev, ino, allocated bytes, apparent bytes).
    fn indexed(&mut self, at: Branch, id: i64, inode: (i64, i64, u64, u64)) {
        let child = match at {
            Branch::Outside => return,
            Branch::Target => id,
            Branch::Child(c) => c,
        };
        self.total.add(inode);
        self.per_child.entry(child).or_default().add(inode);
    }
}

/// Finds, with memoisation, where folders sit relative to one target
/// folder, through `parent_of` (SQLite's rows, or a held first index's
/// tree).
struct Ancestry<F> {
    parent_of: F,
    memo: HashMap<i64, Branch>,
}

/// [`Ancestry`] over SQLite's rows.
fn sql_ancestry(conn: &Connection, target: i64) -> Result<Ancestry<impl ParentOf + '_>, Error> {
    let mut parents = Parents::new(conn)?;
    Ok(Ancestry::new(target, move |d| parents.of(d)))
}

/// A folder's parent folder (`None` above a root).
trait ParentOf: FnMut(i64) -> Result<Option<i64>, Error> {}
impl<F: FnMut(i64) -> Result<Option<i64>, Error>> ParentOf for F {}

impl<F: ParentOf> Ancestry<F> {
    fn new(target: i64, parent_of: F) -> Self {
        Ancestry {
            parent_of,
            memo: HashMap::from([(target, Branch::Target)]),
        }
    }

    fn branch(&mut self, dir: i64) -> Result<Branch, Error> {
        let mut chain = Vec::new();
        let mut cur = dir;
        let found = loop {
            if let Some(b) = self.memo.get(&cur) {
                break *b;
            }
            chain.push(cur);
            match (self.parent_of)(cur)? {
                Some(p) => cur = p,
                None => break Branch::Outside,
            }
        };
        // Walk back down the chain, filling the memo.
        let mut b = found;
        for &d in chain.iter().rev() {
            b = match b {
                Branch::Target => Branch::Child(d),
                other => other,
            };
            self.memo.insert(d, b);
        }
        Ok(b)
    }
}

/// The listed rows (by `index`) of folder `from` and every folder above it
/// up to `target` (excluded).
fn listed_above(
    parents: &mut Parents<'_>,
    index: &HashMap<i64, usize>,
    from: i64,
    target: i64,
) -> Result<Vec<usize>, Error> {
    let mut out = Vec::new();
    let mut cur = from;
    while cur != target {
        if let Some(&at) = index.get(&cur) {
            out.push(at);
        }
        match parents.of(cur)? {
            Some(p) => cur = p,
            None => break,
        }
    }
    Ok(out)
}

/// Number of entries in the subtree of folder `id`, the folder included.
pub fn entry_count(conn: &Connection, id: i64) -> Result<u64, Error> {
    let t = dir_totals(conn, id)?.unwrap_or_default();
    let mut ancestry = sql_ancestry(conn, id)?;
    let mut linked = 0u64;
    entries::each_multilink(conn, |m| {
        if let Some(p) = m.parent_id
            && ancestry.branch(p)? != Branch::Outside
        {
            linked += 1;
        }
        Ok(())
    })?;
    Ok((t.files + t.dirs) as u64 + linked)
}

/// One child of a folder (see [`entries::children_with_totals`]): id,
/// name and usage (path and depth left empty; a folder's figures without
/// its multi-link files).
impl Usage {
    /// A folder's figures from its subtree's totals.
    pub(crate) fn of_totals(t: crate::store::Totals) -> Usage {
        Usage {
            bytes: t.bytes as u64,
            apparent: t.apparent as u64,
            files: t.files as u64,
            dirs: t.dirs as u64,
            incomplete: t.incomplete > 0,
            ..Usage::default()
        }
    }
}

impl Report {
    /// `children` largest first (allocated bytes, or with `apparent` the
    /// apparent size; ties by path), the first `top` kept (0: all).
    pub(crate) fn ranked(
        total: Usage,
        mut children: Vec<Usage>,
        top: usize,
        apparent: bool,
    ) -> Report {
        let key = |u: &Usage| {
            if apparent {
                (u.apparent, u.bytes)
            } else {
                (u.bytes, u.apparent)
            }
        };
        children.sort_by(|a, b| key(b).cmp(&key(a)).then_with(|| a.path.cmp(&b.path)));
        let children_total = children.len();
        if top > 0 {
            children.truncate(top);
        }
        Report {
            total,
            children,
            children_total,
        }
    }
}

fn child_usage(c: ChildTotals) -> (i64, Vec<u8>, Usage) {
    let usage = if c.kind == Kind::Dir {
        Usage {
            kind: Some(c.kind),
            excluded: c.measured_at.is_some(),
            measured_at: c.measured_at.unwrap_or(0),
            ..Usage::of_totals(c.totals)
        }
    } else {
        Usage {
            kind: Some(c.kind),
            bytes: c.blocks * 512,
            apparent: c.size,
            files: 1,
            ..Usage::default()
        }
    };
    (c.id, c.name, usage)
}

/// Disk usage of entry `id` (whose absolute path is `path`) and of its
/// children; `top` children are returned (0: all), ranked by allocated
/// bytes or, with `apparent`, by apparent size.
pub fn disk_usage(
    conn: &Connection,
    id: i64,
    path: Vec<u8>,
    top: usize,
    apparent: bool,
) -> Result<Report, Error> {
    // One consistent read (unless the caller already holds one).
    let own = if conn.is_autocommit() {
        Some(conn.unchecked_transaction()?)
    } else {
        None
    };
    let tx: &Connection = own.as_deref().unwrap_or(conn);
    let row = entries::load_row(tx, id)?
        .ok_or_else(|| Error::NotFound(String::from_utf8_lossy(&path).into_owned()))?;
    let (kind, flags) = (row.kind, row.flags);
    if kind != Kind::Dir {
        let total = Usage {
            path,
            kind: Some(kind),
            bytes: row.blocks * 512,
            apparent: row.size,
            files: 1,
            dirs: 0,
            incomplete: false,
            depth: 0,
            ..Usage::default()
        };
        return Ok(Report {
            total,
            children: Vec::new(),
            children_total: 0,
        });
    }

    // Multi-link files under the target, grouped by the child they are under.
    let mut ancestry = sql_ancestry(tx, id)?;
    let mut linked = ChildLinks::default();
    for (parent, links) in crate::store::tree::unlisted_links(tx)? {
        linked.unlisted(ancestry.branch(parent)?, &links);
    }
    entries::each_multilink(tx, |m| {
        if let Some(parent) = m.parent_id {
            let inode = (m.dev as i64, m.ino as i64, m.blocks * 512, m.size);
            linked.indexed(ancestry.branch(parent)?, m.id, inode);
        }
        Ok(())
    })?;

    let t = dir_totals(tx, id)?.unwrap_or_default();
    let mut total = Usage {
        path: path.clone(),
        kind: Some(Kind::Dir),
        bytes: t.bytes as u64,
        apparent: t.apparent as u64,
        files: t.files as u64,
        dirs: t.dirs as u64,
        incomplete: t.incomplete > 0 || flags & FLAG_UNREADABLE != 0,
        depth: 0,
        ..Usage::default()
    };
    linked.total.onto(&mut total);

    let mut children = Vec::new();
    for c in entries::children_with_totals(tx, id)? {
        let (cid, name, mut u) = child_usage(c);
        u.id = cid;
        u.path = crate::platform::bytes::child(&path, &name);
        u.depth = 1;
        if u.kind == Some(Kind::Dir) && !u.excluded {
            let extra = linked.per_child.remove(&cid).unwrap_or_default();
            extra.onto(&mut u);
        }
        children.push(u);
    }
    Ok(Report::ranked(total, children, top, apparent))
}

/// What a deep listing shows (`fsctl du --depth N`, `--all`).
#[derive(Clone, Copy, Debug, Default)]
pub struct Listing {
    /// Levels below the path; `None`: any depth.
    pub depth: Option<u32>,
    pub files_only: bool,
    pub dirs_only: bool,
    pub apparent: bool,
    /// How many rows, largest first (0: all).
    pub top: usize,
}

/// One entry met by a deep listing.
struct Row {
    /// Index of the parent row; `None` for the target's children.
    parent: Option<usize>,
    name: Vec<u8>,
    depth: u32,
    usage: Usage,
}

/// Disk usage of entry `id` and of every entry down to `opts.depth` levels
/// below it, largest first across levels, each with what `du -s` of that
/// entry prints on its own (like `du -d N` or `du -a`, sorted).
pub fn listing(conn: &Connection, id: i64, path: Vec<u8>, opts: Listing) -> Result<Report, Error> {
    let tx = conn.unchecked_transaction()?;
    let mut report = disk_usage(&tx, id, path.clone(), 1, opts.apparent)?;
    report.children.clear();
    if report.total.kind != Some(Kind::Dir) {
        report.children_total = 0;
        return Ok(report);
    }
    // Walk the folders level by level down to the depth asked for.
    let mut rows: Vec<Row> = Vec::new();
    let mut index: HashMap<i64, usize> = HashMap::new();
    {
        let mut level: Vec<(i64, Option<usize>)> = vec![(id, None)];
        let mut depth = 1u32;
        while !level.is_empty() && opts.depth.is_none_or(|d| depth <= d) {
            let mut next = Vec::new();
            for (dir, parent) in level {
                for c in entries::children_with_totals(&tx, dir)? {
                    let (rid, name, usage) = child_usage(c);
                    let kind = usage.kind.unwrap_or(Kind::Other);
                    let at = rows.len();
                    rows.push(Row {
                        parent,
                        name,
                        depth,
                        usage,
                    });
                    if kind == Kind::Dir && rid != 0 {
                        index.insert(rid, at);
                        next.push((rid, Some(at)));
                    }
                }
            }
            level = next;
            depth += 1;
        }
    }

    // Multi-link files count once per folder they are under, like the
    // total: add each inode to every listed folder above it.
    {
        let mut ancestry = sql_ancestry(&tx, id)?;
        let mut parents = Parents::new(&tx)?;
        let mut extra: HashMap<usize, LinkedSum> = HashMap::new();
        // Inodes counted in unlisted rows count in every listed folder
        // above the row already.
        for (parent, links) in crate::store::tree::unlisted_links(&tx)? {
            if ancestry.branch(parent)? == Branch::Outside {
                continue;
            }
            for at in listed_above(&mut parents, &index, parent, id)? {
                let sum = extra.entry(at).or_default();
                for l in &links {
                    sum.counted(l);
                }
            }
        }
        entries::each_multilink(&tx, |m| {
            let Some(parent) = m.parent_id else {
                return Ok(());
            };
            if ancestry.branch(parent)? == Branch::Outside {
                return Ok(());
            }
            let inode = (m.dev as i64, m.ino as i64, m.blocks * 512, m.size);
            for at in listed_above(&mut parents, &index, parent, id)? {
                extra.entry(at).or_default().add(inode);
            }
            Ok(())
        })?;
        for (at, sum) in extra {
            sum.onto(&mut rows[at].usage);
        }
    }
    for (&rid, &at) in &index {
        rows[at].usage.id = rid;
    }

    let key = |u: &Usage| {
        if opts.apparent {
            (u.apparent, u.bytes)
        } else {
            (u.bytes, u.apparent)
        }
    };
    let mut picked: Vec<usize> = (0..rows.len())
        .filter(|&i| {
            let dir = rows[i].usage.kind == Some(Kind::Dir);
            !(opts.files_only && dir || opts.dirs_only && !dir)
        })
        .collect();
    let path_of = |mut i: usize| {
        let mut parts = vec![&rows[i].name];
        while let Some(p) = rows[i].parent {
            parts.push(&rows[p].name);
            i = p;
        }
        let mut out = path.clone();
        for part in parts.into_iter().rev() {
            crate::platform::bytes::push_name(&mut out, part);
        }
        out
    };
    picked.sort_by(|&a, &b| {
        key(&rows[b].usage)
            .cmp(&key(&rows[a].usage))
            .then_with(|| path_of(a).cmp(&path_of(b)))
    });
    report.children_total = picked.len();
    if opts.top > 0 {
        picked.truncate(opts.top);
    }
    report.children = picked
        .into_iter()
        .map(|i| {
            let mut u = rows[i].usage.clone();
            u.path = path_of(i);
            u.depth = rows[i].depth;
            u
        })
        .collect();
    Ok(report)
}
