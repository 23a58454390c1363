//! `check_move_plan`: a reorganisation simulated against the index, nothing
//! touched. Finds missing sources, destinations that collide (with each
//! other or with what exists, case-insensitively where the file system is),
//! moves into their own subtree, identical files among the moved ones, and
//! shows what changes in each folder the plan touches (and nothing of the
//! folders it leaves alone).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Write as _;
use std::io::Read;
use std::path::{Path, PathBuf};

use fsindex_proto::v1 as pb;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::index::{Ctx, Failure, Outcome, reply};
use super::names::{shown, shown_path};
use crate::output::lossy;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Move {
    /// What would move: a file or folder under an allowed directory.
    pub from: String,
    /// Its new full path (not the folder it goes into).
    pub to: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PlanParams {
    /// The moves, applied together.
    pub moves: Vec<Move>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PlanAnswer {
    /// No problems found (duplicates are reported but are not problems).
    pub ok: bool,
    pub moves: u64,
    /// Problems in all; `problems` holds the first (all unless the byte budget cut them).
    pub problems_total: u64,
    pub problems: Vec<Problem>,
    /// Identical files (same BLAKE3 hash, distinct inodes) among the moved files.
    pub duplicates: Vec<PlanDuplicate>,
    /// The folder that holds every source and destination.
    pub base: String,
    /// Folders the plan touches in all; `folders` holds the first.
    pub folders_total: u64,
    /// Each folder a move leaves or enters, with what changes in it.
    pub folders: Vec<FolderChange>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FolderChange {
    /// Relative to `base`, ending in "/" ("./" for base itself).
    pub path: String,
    /// The folder does not exist yet: the plan makes it.
    pub created: bool,
    /// Names that arrive (folders end in "/") and names that leave.
    pub added: Vec<String>,
    pub removed: Vec<String>,
    /// Entries of the folder the plan leaves where they are.
    pub kept: u64,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Problem {
    /// missingSource, sourceMovedTwice, intoOwnSubtree, collision (two moves
    /// to one destination), destinationExists, parentIsFile.
    pub kind: String,
    /// Indexes (0-based) of the moves concerned.
    pub moves: Vec<usize>,
    pub path: String,
    pub detail: String,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PlanDuplicate {
    pub size: u64,
    pub hash: String,
    /// Sources with this content.
    pub paths: Vec<String>,
}

/// Whether this platform's usual file systems ignore case in names.
const CASE_INSENSITIVE: bool = cfg!(any(target_os = "macos", target_os = "windows"));

/// A path as compared: exact (shown text is one-to-one with the bytes),
/// lower case where the file system ignores case.
fn fold(p: &Path) -> String {
    let s = shown_path(p);
    if CASE_INSENSITIVE {
        s.to_lowercase()
    } else {
        s
    }
}

struct Source {
    path: PathBuf,
    found: Option<pb::StatResponse>,
}

pub async fn check_move_plan(ctx: &Ctx, p: PlanParams) -> Outcome {
    if p.moves.is_empty() {
        return Err(Failure("moves is empty: give [{from, to}, ...]".into()));
    }
    if p.moves.len() > 10_000 {
        return Err(Failure("at most 10000 moves per plan".into()));
    }
    let mut sources = Vec::new();
    let mut dests = Vec::new();
    let guard = ctx.guard();
    for m in &p.moves {
        sources.push(guard.prospective(&m.from)?);
        dests.push(guard.prospective(&m.to)?);
    }
    let mut problems = Vec::new();
    let mut src = Vec::new();
    for (i, s) in sources.iter().enumerate() {
        let found = ctx
            .stat(&shown_path(s), s)
            .await
            .ok()
            .filter(|r| !r.skip_tier);
        if found.is_none() {
            problems.push(Problem {
                kind: "missingSource".into(),
                moves: vec![i],
                path: shown_path(s),
                detail: "not in the index: it does not exist, or is excluded".into(),
            });
        }
        src.push(Source {
            path: s.clone(),
            found,
        });
    }
    // A source named twice.
    let mut by_source: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, s) in sources.iter().enumerate() {
        by_source.entry(fold(s)).or_default().push(i);
    }
    for (path, moves) in &by_source {
        if moves.len() > 1 {
            problems.push(Problem {
                kind: "sourceMovedTwice".into(),
                moves: moves.clone(),
                path: path.clone(),
                detail: format!("{} moves take the same source", moves.len()),
            });
        }
    }
    for (i, (s, d)) in sources.iter().zip(&dests).enumerate() {
        if d != s && d.starts_with(s) {
            problems.push(Problem {
                kind: "intoOwnSubtree".into(),
                moves: vec![i],
                path: shown_path(d),
                detail: format!("{} would move into itself", shown_path(s)),
            });
        }
    }
    // Destinations shared by several moves.
    let mut by_dest: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, d) in dests.iter().enumerate() {
        by_dest.entry(fold(d)).or_default().push(i);
    }
    for moves in by_dest.values() {
        if moves.len() > 1 {
            problems.push(Problem {
                kind: "collision".into(),
                moves: moves.clone(),
                path: shown_path(&dests[moves[0]]),
                detail: format!("{} moves end at the same path", moves.len()),
            });
        }
    }
    // Destinations that exist already and are not moved away themselves.
    let moving: BTreeSet<String> = sources.iter().map(|s| fold(s)).collect();
    let mut listings: HashMap<PathBuf, Option<Vec<Vec<u8>>>> = HashMap::new();
    for (i, d) in dests.iter().enumerate() {
        let (Some(parent), Some(name)) = (d.parent(), d.file_name()) else {
            continue;
        };
        if !listings.contains_key(parent) {
            let names = ctx
                .list(&shown_path(parent), parent, pb::SortOrder::Name, false)
                .await
                .ok()
                .map(|entries| entries.into_iter().map(|e| e.name).collect());
            listings.insert(parent.to_owned(), names);
        }
        let name = name.as_encoded_bytes();
        let clash = listings[parent].as_ref().and_then(|names| {
            names
                .iter()
                .find(|n| {
                    if CASE_INSENSITIVE {
                        lossy(n).to_lowercase() == lossy(name).to_lowercase()
                    } else {
                        n.as_slice() == name
                    }
                })
                .cloned()
        });
        if let Some(existing) = clash {
            let existing = parent.join(super::names::path_of(existing));
            let same = fold(&existing) == fold(&sources[i]);
            if !same && !moving.contains(&fold(&existing)) {
                problems.push(Problem {
                    kind: "destinationExists".into(),
                    moves: vec![i],
                    path: shown_path(d),
                    detail: format!("{} exists", shown_path(&existing)),
                });
            }
        }
        // The nearest existing ancestor must be a folder.
        let mut up = parent.to_path_buf();
        loop {
            match std::fs::symlink_metadata(&up) {
                Ok(m) => {
                    if !m.is_dir() {
                        problems.push(Problem {
                            kind: "parentIsFile".into(),
                            moves: vec![i],
                            path: shown_path(d),
                            detail: format!("{} is not a folder", shown_path(&up)),
                        });
                    }
                    break;
                }
                Err(_) => {
                    if !up.pop() {
                        break;
                    }
                }
            }
        }
    }
    let duplicates = tokio::task::spawn_blocking(move || same_content(&src))
        .await
        .map_err(|e| Failure(format!("internal: {e}")))?;
    let base = common_ancestor(sources.iter().chain(&dests));
    let folders = touched_folders(ctx, &base, &sources, &dests, &problems).await;
    let ok = problems.is_empty();
    let moves = p.moves.len() as u64;
    let base_shown = shown_path(&base);
    // Problems first, then duplicates, then folders, as many as fit.
    let (np, nd, nf) = (problems.len(), duplicates.len(), folders.len());
    let (out, text) = ctx.fit(np + nd + nf, |k| {
        let kp = k.min(np);
        let kd = k.saturating_sub(np).min(nd);
        let kf = k.saturating_sub(np + nd).min(nf);
        let mut text = if ok {
            format!("Plan of {moves} moves: no problems found\n")
        } else {
            format!("Plan of {moves} moves: {np} problems\n")
        };
        for pr in &problems[..kp] {
            let _ = writeln!(
                text,
                "- {} (move {}): {}: {}",
                pr.kind,
                pr.moves
                    .iter()
                    .map(|m| m.to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
                pr.path,
                pr.detail
            );
        }
        for d in &duplicates[..kd] {
            let _ = writeln!(
                text,
                "- identical ({} bytes, {}): {}",
                d.size,
                d.hash,
                d.paths.join(" | ")
            );
        }
        if nf > 0 {
            let _ = writeln!(
                text,
                "After the plan, in {base_shown} ({nf} folders touched; folders it leaves alone are not listed):"
            );
        }
        for f in &folders[..kf] {
            let mut parts: Vec<String> = f.added.iter().map(|a| format!("+ {a}")).collect();
            parts.extend(f.removed.iter().map(|r| format!("- {r}")));
            let _ = writeln!(
                text,
                "{}{} ({} kept): {}",
                f.path,
                if f.created { " (new folder)" } else { "" },
                f.kept,
                parts.join(", ")
            );
        }
        if k < np + nd + nf {
            let _ = writeln!(
                text,
                "({} more lines past the byte budget: check a smaller plan)",
                np + nd + nf - k
            );
        }
        (
            PlanAnswer {
                ok,
                moves,
                problems_total: np as u64,
                problems: problems[..kp].to_vec(),
                duplicates: duplicates[..kd].to_vec(),
                base: base_shown.clone(),
                folders_total: nf as u64,
                folders: folders[..kf].to_vec(),
            },
            text,
        )
    });
    reply(&out, text)
}

/// Files among the sources with equal size and equal BLAKE3 hash (distinct inodes).
fn same_content(src: &[Source]) -> Vec<PlanDuplicate> {
    let mut by_size: BTreeMap<u64, Vec<&Source>> = BTreeMap::new();
    for s in src {
        if let Some(f) = &s.found
            && f.r#type == pb::EntryType::File as i32
            && f.size > 0
        {
            by_size.entry(f.size).or_default().push(s);
        }
    }
    let mut out = Vec::new();
    for (size, files) in by_size {
        if files.len() < 2 {
            continue;
        }
        let mut by_hash: BTreeMap<[u8; 32], (BTreeSet<u64>, Vec<String>)> = BTreeMap::new();
        for f in files {
            let Some(h) = hash(&f.path) else { continue };
            let ino = f.found.as_ref().map_or(0, |s| s.inode);
            let slot = by_hash.entry(h).or_default();
            slot.0.insert(ino);
            slot.1.push(shown_path(&f.path));
        }
        for (h, (inodes, paths)) in by_hash {
            if inodes.len() > 1 {
                out.push(PlanDuplicate {
                    size,
                    hash: h.iter().map(|b| format!("{b:02x}")).collect(),
                    paths,
                });
            }
        }
    }
    out
}

fn hash(p: &Path) -> Option<[u8; 32]> {
    let mut f = std::fs::File::open(p).ok()?;
    let mut h = blake3::Hasher::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = f.read(&mut buf).ok()?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Some(*h.finalize().as_bytes())
}

fn common_ancestor<'a>(mut paths: impl Iterator<Item = &'a PathBuf>) -> PathBuf {
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

/// Each folder a move leaves or enters (and each folder the plan
/// creates on the way), with the names that arrive and leave and how many
/// entries stay.
async fn touched_folders(
    ctx: &Ctx,
    base: &Path,
    sources: &[PathBuf],
    dests: &[PathBuf],
    problems: &[Problem],
) -> Vec<FolderChange> {
    let failed: BTreeSet<usize> = problems
        .iter()
        .filter(|p| p.kind == "missingSource")
        .flat_map(|p| p.moves.clone())
        .collect();
    #[derive(Default)]
    struct Change {
        created: bool,
        added: BTreeSet<String>,
        removed: BTreeSet<String>,
    }
    let mut touched: BTreeMap<PathBuf, Change> = BTreeMap::new();
    let name = |p: &Path| {
        p.file_name()
            .map(|n| shown(n.as_encoded_bytes()))
            .unwrap_or_default()
    };
    for (i, (s, d)) in sources.iter().zip(dests).enumerate() {
        if failed.contains(&i) {
            continue;
        }
        if let Some(sp) = s.parent() {
            touched
                .entry(sp.to_owned())
                .or_default()
                .removed
                .insert(name(s));
        }
        let is_dir = std::fs::symlink_metadata(s).is_ok_and(|m| m.is_dir());
        let mut child = d.clone();
        let mut child_is_dir = is_dir;
        // The destination's folder, and each folder made on the way to it.
        while let Some(parent) = child.parent() {
            let c = touched.entry(parent.to_owned()).or_default();
            let n = name(&child);
            c.added
                .insert(if child_is_dir { format!("{n}/") } else { n });
            if std::fs::symlink_metadata(parent).is_ok() {
                break;
            }
            c.created = true;
            child = parent.to_owned();
            child_is_dir = true;
        }
    }
    let mut out = Vec::new();
    for (dir, c) in touched {
        let kept = if c.created {
            0
        } else {
            let listed = ctx
                .list(&shown_path(&dir), &dir, pb::SortOrder::Name, false)
                .await
                .map(|e| e.len() as u64)
                .unwrap_or(0);
            listed.saturating_sub(c.removed.len() as u64)
        };
        let rel = dir
            .strip_prefix(base)
            .ok()
            .filter(|r| !r.as_os_str().is_empty())
            .map_or("./".to_owned(), |r| format!("{}/", shown_path(r)));
        // A name that leaves and comes back is neither.
        let both: BTreeSet<String> = c
            .removed
            .iter()
            .filter(|r| c.added.contains(*r) || c.added.contains(&format!("{r}/")))
            .cloned()
            .collect();
        out.push(FolderChange {
            path: rel,
            created: c.created,
            added: c
                .added
                .into_iter()
                .filter(|a| !both.contains(a.trim_end_matches('/')))
                .collect(),
            removed: c
                .removed
                .into_iter()
                .filter(|r| !both.contains(r))
                .collect(),
            kept: kept + both.len() as u64,
        });
    }
    out
}
