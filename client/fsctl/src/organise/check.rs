//! A plan checked against the file system as it is now, nothing touched:
//! what is wrong with it, the steps it comes to (a merge becomes the moves
//! of the entries it carries over), and the tree it leaves.
//!
//! Problems come in two weights. A plan that contradicts itself (two
//! items to one destination, one source taken twice, a folder moved into
//! itself, a kept entry moved) is refused whole: its intent is unclear.
//! The rest (a source that is gone, a destination that exists, a merge
//! collision, a parent that is a file) stop only their item, which apply
//! skips with the reason.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::fsops::Fingerprint;
use super::plan::{Action, Item};
use crate::cmd::mcp::names::{shown, shown_path};

/// Whether this platform's usual file systems ignore case in names.
const CASE_INSENSITIVE: bool = cfg!(any(target_os = "macos", target_os = "windows"));

fn fold(p: &Path) -> String {
    let s = shown_path(p);
    if CASE_INSENSITIVE {
        s.to_lowercase()
    } else {
        s
    }
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Problem {
    /// missingSource, sourceMovedTwice, nestedSources, intoOwnSubtree,
    /// collision, destinationExists, parentIsFile, renameChangesFolder,
    /// mergeIntoFile, mergeCollision, keptButMoved, mkdirOverFile,
    /// changedSinceCheck.
    pub kind: String,
    /// The items concerned (0-based).
    pub items: Vec<usize>,
    pub path: String,
    pub detail: String,
    /// The whole plan is refused (it contradicts itself), not just the item.
    pub blocking: bool,
}

/// One step of an applied plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepKind {
    /// Make a folder.
    Mkdir,
    /// Move an entry (a file, a symlink or a whole folder).
    Move,
    /// Remove a folder a merge emptied (left alone when not empty).
    RmdirIfEmpty,
    /// Nothing: the entry stays.
    Keep,
}

impl StepKind {
    pub fn name(self) -> &'static str {
        match self {
            StepKind::Mkdir => "mkdir",
            StepKind::Move => "move",
            StepKind::RmdirIfEmpty => "rmdir",
            StepKind::Keep => "keep",
        }
    }

    pub fn parse(s: &str) -> Option<StepKind> {
        Some(match s {
            "mkdir" => StepKind::Mkdir,
            "move" => StepKind::Move,
            "rmdir" => StepKind::RmdirIfEmpty,
            "keep" => StepKind::Keep,
            _ => return None,
        })
    }
}

#[derive(Debug, Clone)]
pub struct Step {
    pub item: usize,
    pub kind: StepKind,
    /// The entry acted on (Move: the source).
    pub src: PathBuf,
    /// Move: the destination; otherwise `src` again.
    pub dst: PathBuf,
    /// The source as the check saw it.
    pub seen: Option<Fingerprint>,
}

#[derive(Debug, Default)]
pub struct Checked {
    pub problems: Vec<Problem>,
    pub steps: Vec<Step>,
    /// Items that are no-ops (a folder to make that exists).
    pub notes: Vec<String>,
    /// The folder that holds every path of the plan.
    pub base: PathBuf,
}

impl Checked {
    pub fn blocking(&self) -> bool {
        self.problems.iter().any(|p| p.blocking)
    }
}

fn problem(kind: &str, items: Vec<usize>, path: &Path, detail: String, blocking: bool) -> Problem {
    Problem {
        kind: kind.into(),
        items,
        path: shown_path(path),
        detail,
        blocking,
    }
}

/// Checks `items` against the file system now.
pub fn check(items: &[Item]) -> Checked {
    let mut out = Checked::default();
    let mut problems = Vec::new();
    // Self-contradictions first.
    let mut by_source: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    let mut by_dest: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for it in items {
        if let Some(s) = it.action.source() {
            by_source.entry(fold(s)).or_default().push(it.index);
        }
        if matches!(it.action, Action::Move { .. } | Action::Rename { .. }) {
            by_dest
                .entry(fold(it.action.target()))
                .or_default()
                .push(it.index);
        }
    }
    for (path, ix) in &by_source {
        if ix.len() > 1 {
            problems.push(problem(
                "sourceMovedTwice",
                ix.clone(),
                Path::new(path),
                format!("{} items take the same source", ix.len()),
                true,
            ));
        }
    }
    for ix in by_dest.values() {
        if ix.len() > 1 {
            problems.push(problem(
                "collision",
                ix.clone(),
                items[ix[0]].action.target(),
                format!("{} items end at the same path", ix.len()),
                true,
            ));
        }
    }
    let sources: Vec<(usize, &Path)> = items
        .iter()
        .filter_map(|i| i.action.source().map(|s| (i.index, s)))
        .collect();
    // A source inside another source: each one's folders looked up (not
    // every pair: plans of 100,000 items).
    let by_path: BTreeMap<&Path, usize> = sources.iter().map(|&(i, s)| (s, i)).collect();
    for &(i, s) in &sources {
        for t in s.ancestors().skip(1) {
            if let Some(&j) = by_path.get(t) {
                problems.push(problem(
                    "nestedSources",
                    vec![j, i],
                    s,
                    format!(
                        "{} is moved, and so is {} inside it",
                        shown_path(t),
                        shown_path(s)
                    ),
                    true,
                ));
            }
        }
    }
    for it in items {
        if let Some(s) = it.action.source() {
            let d = it.action.target();
            if d != s && d.starts_with(s) {
                problems.push(problem(
                    "intoOwnSubtree",
                    vec![it.index],
                    d,
                    format!("{} would move into itself", shown_path(s)),
                    true,
                ));
            }
        }
        if let Action::Rename { from, to } = &it.action
            && from.parent() != to.parent()
        {
            problems.push(problem(
                "renameChangesFolder",
                vec![it.index],
                to,
                "a rename keeps the folder: use move to change it".into(),
                true,
            ));
        }
        if let Action::Keep { path } = &it.action {
            for &(j, s) in &sources {
                if path.starts_with(s) {
                    problems.push(problem(
                        "keptButMoved",
                        vec![it.index, j],
                        path,
                        format!("kept, but item {j} moves {}", shown_path(s)),
                        true,
                    ));
                }
            }
        }
    }
    let blocking = problems.iter().any(|p| p.blocking);
    // What moves away, so that a destination it frees is not a clash.
    let leaving: BTreeSet<String> = sources.iter().map(|(_, s)| fold(s)).collect();
    for it in items {
        if !blocking {
            item_steps(it, &leaving, &mut out.steps, &mut problems, &mut out.notes);
        } else {
            // Still report what the file system says about each item.
            item_steps(
                it,
                &leaving,
                &mut Vec::new(),
                &mut problems,
                &mut Vec::new(),
            );
        }
    }
    let all = items
        .iter()
        .flat_map(|i| [i.action.source(), Some(i.action.target())])
        .flatten();
    out.base = common_ancestor(all);
    out.problems = problems;
    out
}

/// The nearest existing ancestor of `p` must be a folder.
fn parent_problem(index: usize, p: &Path) -> Option<Problem> {
    let mut up = p.parent()?.to_path_buf();
    loop {
        match std::fs::symlink_metadata(&up) {
            Ok(m) if m.is_dir() => return None,
            Ok(_) => {
                return Some(problem(
                    "parentIsFile",
                    vec![index],
                    p,
                    format!("{} is not a folder", shown_path(&up)),
                    false,
                ));
            }
            Err(_) => {
                if !up.pop() {
                    return None;
                }
            }
        }
    }
}

fn item_steps(
    it: &Item,
    leaving: &BTreeSet<String>,
    steps: &mut Vec<Step>,
    problems: &mut Vec<Problem>,
    notes: &mut Vec<String>,
) {
    let i = it.index;
    let missing = |p: &Path| {
        problem(
            "missingSource",
            vec![i],
            p,
            "it does not exist (or cannot be seen)".into(),
            false,
        )
    };
    match &it.action {
        Action::Keep { path } => match Fingerprint::at(path) {
            Some(fp) => steps.push(Step {
                item: i,
                kind: StepKind::Keep,
                src: path.clone(),
                dst: path.clone(),
                seen: Some(fp),
            }),
            None => problems.push(missing(path)),
        },
        Action::Mkdir { path } => match std::fs::symlink_metadata(path) {
            Ok(m) if m.is_dir() => notes.push(format!(
                "item {i}: {} exists already: nothing to make",
                shown_path(path)
            )),
            Ok(_) => problems.push(problem(
                "mkdirOverFile",
                vec![i],
                path,
                "a file has that name".into(),
                false,
            )),
            Err(_) => match parent_problem(i, path) {
                Some(p) => problems.push(p),
                None => steps.push(Step {
                    item: i,
                    kind: StepKind::Mkdir,
                    src: path.clone(),
                    dst: path.clone(),
                    seen: None,
                }),
            },
        },
        Action::Move { from, to } | Action::Rename { from, to } => {
            let Some(fp) = Fingerprint::at(from) else {
                problems.push(missing(from));
                return;
            };
            if let Some(why) = changed_since_check(it, &fp) {
                problems.push(problem("changedSinceCheck", vec![i], from, why, false));
                return;
            }
            if from == to {
                notes.push(format!("item {i}: {} stays where it is", shown_path(from)));
                return;
            }
            if let Some(p) = dest_problem(i, from, to, leaving) {
                problems.push(p);
                return;
            }
            steps.push(Step {
                item: i,
                kind: StepKind::Move,
                src: from.clone(),
                dst: to.clone(),
                seen: Some(fp),
            });
        }
        Action::Merge { from, into } => {
            let Some(fp) = Fingerprint::at(from) else {
                problems.push(missing(from));
                return;
            };
            if !fp.is_dir {
                problems.push(problem(
                    "mergeFromFile",
                    vec![i],
                    from,
                    "only a folder's contents can be merged".into(),
                    false,
                ));
                return;
            }
            match std::fs::symlink_metadata(into) {
                Err(_) => {
                    // Nothing to merge into: the folder moves whole.
                    if let Some(p) = dest_problem(i, from, into, leaving) {
                        problems.push(p);
                        return;
                    }
                    steps.push(Step {
                        item: i,
                        kind: StepKind::Move,
                        src: from.clone(),
                        dst: into.clone(),
                        seen: Some(fp),
                    });
                }
                Ok(m) if !m.is_dir() => problems.push(problem(
                    "mergeIntoFile",
                    vec![i],
                    into,
                    "the folder merged into is a file".into(),
                    false,
                )),
                Ok(_) => merge_steps(i, from, into, steps, problems),
            }
        }
    }
}

fn changed_since_check(it: &Item, fp: &Fingerprint) -> Option<String> {
    if let Some(size) = it.expect_size
        && size != fp.size
        && !fp.is_dir
    {
        return Some(format!(
            "changed since the check: {size} bytes then, {} now",
            fp.size
        ));
    }
    if let Some(m) = it.expect_mtime_ns
        && m != fp.mtime_ns
        && !fp.is_dir
    {
        return Some("changed since the check: modified".into());
    }
    None
}

fn dest_problem(i: usize, from: &Path, to: &Path, leaving: &BTreeSet<String>) -> Option<Problem> {
    if let Ok(existing) = std::fs::symlink_metadata(to) {
        let _ = existing;
        // The same entry under another case is a rename, not a clash.
        let same = CASE_INSENSITIVE && fold(from) == fold(to);
        if !same && !leaving.contains(&fold(to)) {
            return Some(problem(
                "destinationExists",
                vec![i],
                to,
                format!("{} exists", shown_path(to)),
                false,
            ));
        }
    }
    parent_problem(i, to)
}

/// The moves that merge folder `from` into folder `into`: an entry whose
/// name is free moves; a folder on both sides is merged in turn; anything
/// else is a collision, left where it is; each folder emptied is removed
/// last (deepest first).
fn merge_steps(
    i: usize,
    from: &Path,
    into: &Path,
    steps: &mut Vec<Step>,
    problems: &mut Vec<Problem>,
) {
    let Ok(rd) = std::fs::read_dir(from) else {
        problems.push(problem(
            "missingSource",
            vec![i],
            from,
            "the folder cannot be read".into(),
            false,
        ));
        return;
    };
    let mut names: Vec<_> = rd.filter_map(|e| e.ok()).map(|e| e.file_name()).collect();
    names.sort();
    for name in names {
        let s = from.join(&name);
        let d = into.join(&name);
        let Some(sfp) = Fingerprint::at(&s) else {
            continue;
        };
        match std::fs::symlink_metadata(&d) {
            Err(_) => steps.push(Step {
                item: i,
                kind: StepKind::Move,
                src: s,
                dst: d,
                seen: Some(sfp),
            }),
            Ok(m) if m.is_dir() && sfp.is_dir => merge_steps(i, &s, &d, steps, problems),
            Ok(_) => problems.push(problem(
                "mergeCollision",
                vec![i],
                &d,
                format!(
                    "{} exists: {} stays where it is",
                    shown_path(&d),
                    shown_path(&s)
                ),
                false,
            )),
        }
    }
    steps.push(Step {
        item: i,
        kind: StepKind::RmdirIfEmpty,
        src: from.to_path_buf(),
        dst: from.to_path_buf(),
        seen: Fingerprint::at(from),
    });
}

fn common_ancestor<'a>(mut paths: impl Iterator<Item = &'a Path>) -> PathBuf {
    let Some(first) = paths.next() else {
        return PathBuf::from("/");
    };
    let mut base = first.parent().unwrap_or(first).to_path_buf();
    for p in paths {
        while !p.starts_with(&base) {
            if !base.pop() {
                break;
            }
        }
    }
    base
}

/// The tree the plan leaves, limited to the folders it touches: what
/// arrives (`+`, with where it came from), what leaves (`-`, with where it
/// goes), folders it makes (`new`) and removes, and how many entries of
/// each touched folder stay as they are.
pub fn tree(c: &Checked) -> String {
    #[derive(Default)]
    struct Node {
        children: BTreeMap<Vec<u8>, Node>,
        mark: Option<String>,
        dir: bool,
    }
    let mut root = Node {
        dir: true,
        ..Default::default()
    };
    let rel = |p: &Path| -> Vec<Vec<u8>> {
        p.strip_prefix(&c.base)
            .unwrap_or(p)
            .components()
            .map(|x| x.as_os_str().as_encoded_bytes().to_vec())
            .collect()
    };
    let mut touched: BTreeSet<PathBuf> = BTreeSet::new();
    let mut put = |root: &mut Node, p: &Path, mark: String, dir: bool| {
        let parts = rel(p);
        let mut n = root;
        let mut cur = c.base.clone();
        let count = parts.len();
        for (k, part) in parts.into_iter().enumerate() {
            cur.push(crate::cmd::mcp::names::path_of(part.clone()));
            n = n.children.entry(part).or_default();
            if k + 1 < count {
                n.dir = true;
                if n.mark.is_none() && std::fs::symlink_metadata(&cur).is_err() {
                    n.mark = Some("(new folder)".into());
                }
            }
        }
        n.dir = dir;
        n.mark = Some(mark);
        if let Some(parent) = p.parent() {
            touched.insert(parent.to_path_buf());
        }
    };
    let r = |p: &Path| {
        let x = p.strip_prefix(&c.base).unwrap_or(p);
        if x.as_os_str().is_empty() {
            "./".to_owned()
        } else {
            shown_path(x)
        }
    };
    for s in &c.steps {
        match s.kind {
            StepKind::Move => {
                let dir = s.seen.is_some_and(|f| f.is_dir);
                put(&mut root, &s.src, format!("- moves to {}", r(&s.dst)), dir);
                put(&mut root, &s.dst, format!("+ from {}", r(&s.src)), dir);
            }
            StepKind::Mkdir => put(&mut root, &s.src, "(new folder)".into(), true),
            StepKind::RmdirIfEmpty => put(&mut root, &s.src, "- removed once empty".into(), true),
            StepKind::Keep => put(
                &mut root,
                &s.src,
                "= kept".into(),
                s.seen.is_some_and(|f| f.is_dir),
            ),
        }
    }
    let mut text = String::new();
    let _ = writeln!(text, "{}/", shown_path(&c.base).trim_end_matches('/'));
    fn walk(n: &Node, dir: &Path, prefix: &str, text: &mut String, touched: &BTreeSet<PathBuf>) {
        let shown_children = n.children.len();
        let on_disk = if touched.contains(dir) {
            std::fs::read_dir(dir).map(|d| d.count()).unwrap_or(0)
        } else {
            0
        };
        let known: usize = n
            .children
            .keys()
            .filter(|k| {
                std::fs::symlink_metadata(dir.join(crate::cmd::mcp::names::path_of((*k).clone())))
                    .is_ok()
            })
            .count();
        let others = on_disk.saturating_sub(known);
        let total = shown_children + usize::from(others > 0);
        for (k, (name, child)) in n.children.iter().enumerate() {
            let last = k + 1 == total;
            let branch = if last { "└── " } else { "├── " };
            let slash = if child.dir { "/" } else { "" };
            let mark = child
                .mark
                .as_deref()
                .map(|m| format!("  {m}"))
                .unwrap_or_default();
            let _ = writeln!(text, "{prefix}{branch}{}{slash}{mark}", shown(name));
            let next = format!("{prefix}{}", if last { "    " } else { "│   " });
            walk(
                child,
                &dir.join(crate::cmd::mcp::names::path_of(name.clone())),
                &next,
                text,
                touched,
            );
        }
        if others > 0 {
            let _ = writeln!(text, "{prefix}└── ({others} more entries, unchanged)");
        }
    }
    walk(&root, &c.base, "", &mut text, &touched);
    text
}
