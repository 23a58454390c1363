//! `check_move_plan`: a reorganisation simulated against the index, nothing
//! touched. Finds missing sources, destinations that collide (with each
//! other or with what exists, case-insensitively where the file system is),
//! moves into their own subtree, identical files among the moved ones, and
//! shows the resulting tree's top levels.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Write as _;
use std::io::Read;
use std::path::{Path, PathBuf};

use fsindex_proto::v1 as pb;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::index::{Ctx, Failure, Outcome, reply};
use crate::output::{lossy, path_bytes};

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
    pub problems: Vec<Problem>,
    /// Identical files (same BLAKE3 hash, distinct inodes) among the moved files.
    pub duplicates: Vec<PlanDuplicate>,
    /// The folder that holds every source and destination.
    pub base: String,
    /// The top two levels below `base` after the plan, for the folders it touches.
    pub resulting_tree: Vec<TreeLine>,
}

#[derive(Debug, Serialize, JsonSchema)]
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

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PlanDuplicate {
    pub size: u64,
    pub hash: String,
    /// Sources with this content.
    pub paths: Vec<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TreeLine {
    /// Relative to `base`; folders end in "/".
    pub path: String,
    /// kept, added or removed.
    pub change: String,
}

/// Whether this platform's usual file systems ignore case in names.
const CASE_INSENSITIVE: bool = cfg!(any(target_os = "macos", target_os = "windows"));

fn fold(p: &Path) -> String {
    let s = p.to_string_lossy();
    if CASE_INSENSITIVE {
        s.to_lowercase()
    } else {
        s.into_owned()
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
    for m in &p.moves {
        sources.push(ctx.guard.prospective(&m.from)?);
        dests.push(ctx.guard.prospective(&m.to)?);
    }
    let mut problems = Vec::new();
    let mut src = Vec::new();
    for (i, s) in sources.iter().enumerate() {
        let mut c = ctx.client();
        let found = c
            .stat(pb::StatRequest {
                path: path_bytes(s),
            })
            .await
            .ok()
            .map(tonic::Response::into_inner)
            .filter(|r| !r.skip_tier);
        if found.is_none() {
            problems.push(Problem {
                kind: "missingSource".into(),
                moves: vec![i],
                path: s.to_string_lossy().into_owned(),
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
                path: d.to_string_lossy().into_owned(),
                detail: format!("{} would move into itself", s.to_string_lossy()),
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
                path: dests[moves[0]].to_string_lossy().into_owned(),
                detail: format!("{} moves end at the same path", moves.len()),
            });
        }
    }
    // Destinations that exist already and are not moved away themselves.
    let moving: BTreeSet<String> = sources.iter().map(|s| fold(s)).collect();
    let mut listings: HashMap<PathBuf, Option<Vec<String>>> = HashMap::new();
    for (i, d) in dests.iter().enumerate() {
        let (Some(parent), Some(name)) = (d.parent(), d.file_name()) else {
            continue;
        };
        if !listings.contains_key(parent) {
            let mut c = ctx.client();
            let names = c
                .list(pb::ListRequest {
                    path: path_bytes(parent),
                    sort: pb::SortOrder::Name as i32,
                    reverse: false,
                })
                .await
                .ok()
                .map(|r| {
                    r.into_inner()
                        .entries
                        .iter()
                        .map(|e| lossy(&e.name))
                        .collect()
                });
            listings.insert(parent.to_owned(), names);
        }
        let name = name.to_string_lossy();
        let clash = listings[parent].as_ref().and_then(|names| {
            names
                .iter()
                .find(|n| {
                    if CASE_INSENSITIVE {
                        n.to_lowercase() == name.to_lowercase()
                    } else {
                        **n == *name
                    }
                })
                .cloned()
        });
        if let Some(existing) = clash {
            let existing = parent.join(existing);
            let same = fold(&existing) == fold(&sources[i]);
            if !same && !moving.contains(&fold(&existing)) {
                problems.push(Problem {
                    kind: "destinationExists".into(),
                    moves: vec![i],
                    path: d.to_string_lossy().into_owned(),
                    detail: format!("{} exists", existing.to_string_lossy()),
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
                            path: d.to_string_lossy().into_owned(),
                            detail: format!("{} is not a folder", up.to_string_lossy()),
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
    let resulting_tree = resulting_tree(ctx, &base, &sources, &dests, &problems).await;
    let out = PlanAnswer {
        ok: problems.is_empty(),
        moves: p.moves.len() as u64,
        problems,
        duplicates,
        base: base.to_string_lossy().into_owned(),
        resulting_tree,
    };
    let mut text = if out.ok {
        format!("Plan of {} moves: no problems found\n", out.moves)
    } else {
        format!(
            "Plan of {} moves: {} problems\n",
            out.moves,
            out.problems.len()
        )
    };
    for pr in &out.problems {
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
    for d in &out.duplicates {
        let _ = writeln!(
            text,
            "- identical ({} bytes): {}",
            d.size,
            d.paths.join(" | ")
        );
    }
    if !out.resulting_tree.is_empty() {
        let _ = writeln!(text, "After the plan, {}:", out.base);
        for l in &out.resulting_tree {
            let mark = match l.change.as_str() {
                "added" => "+",
                "removed" => "-",
                _ => " ",
            };
            let _ = writeln!(text, "{mark} {}", l.path);
        }
    }
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
            slot.1.push(f.path.to_string_lossy().into_owned());
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

/// Up to two levels below `base` after the plan: what the touched folders
/// hold now, less what leaves, plus what arrives.
async fn resulting_tree(
    ctx: &Ctx,
    base: &Path,
    sources: &[PathBuf],
    dests: &[PathBuf],
    problems: &[Problem],
) -> Vec<TreeLine> {
    let failed: BTreeSet<usize> = problems
        .iter()
        .filter(|p| p.kind == "missingSource")
        .flat_map(|p| p.moves.clone())
        .collect();
    let rel = |p: &Path| -> Vec<String> {
        p.strip_prefix(base)
            .map(|r| {
                r.components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default()
    };
    // What exists: the base's children, and the children of touched folders.
    let mut now: BTreeMap<String, bool> = BTreeMap::new(); // path -> is folder
    let list = |dir: PathBuf| async move {
        let mut c = ctx.client();
        c.list(pb::ListRequest {
            path: path_bytes(&dir),
            sort: pb::SortOrder::Name as i32,
            reverse: false,
        })
        .await
        .map(|r| r.into_inner().entries)
        .unwrap_or_default()
    };
    for e in list(base.to_path_buf()).await {
        now.insert(lossy(&e.name), e.r#type == pb::EntryType::Dir as i32);
    }
    let touched: BTreeSet<String> = sources
        .iter()
        .chain(dests)
        .filter_map(|p| {
            let r = rel(p);
            (r.len() >= 2).then(|| r[0].clone())
        })
        .collect();
    for t in &touched {
        if now.get(t) == Some(&true) {
            for e in list(base.join(t)).await {
                now.insert(
                    format!("{t}/{}", lossy(&e.name)),
                    e.r#type == pb::EntryType::Dir as i32,
                );
            }
        }
    }
    let mut change: BTreeMap<String, (bool, &'static str)> =
        now.iter().map(|(p, d)| (p.clone(), (*d, "kept"))).collect();
    for (i, (s, d)) in sources.iter().zip(dests).enumerate() {
        if failed.contains(&i) {
            continue;
        }
        let rs = rel(s);
        if !rs.is_empty() && rs.len() <= 2 {
            let key = rs.join("/");
            let prefix = format!("{key}/");
            for (p, c) in change.iter_mut() {
                if (*p == key || p.starts_with(&prefix)) && c.1 == "kept" {
                    c.1 = "removed";
                }
            }
        }
        let rd = rel(d);
        let is_dir = std::fs::symlink_metadata(s).is_ok_and(|m| m.is_dir());
        for depth in 1..=rd.len().min(2) {
            let key = rd[..depth].join("/");
            let folder = depth < rd.len() || is_dir;
            match change.get_mut(&key) {
                Some(c) if c.1 == "removed" => c.1 = "added",
                Some(_) => {}
                None => {
                    change.insert(key, (folder, "added"));
                }
            }
        }
    }
    change
        .into_iter()
        .filter(|(p, (_, c))| {
            !p.contains('/') || *c != "kept" || touched.contains(p.split('/').next().unwrap_or(""))
        })
        .take(300)
        .map(|(p, (dir, c))| TreeLine {
            path: if dir { format!("{p}/") } else { p },
            change: c.to_owned(),
        })
        .collect()
}
