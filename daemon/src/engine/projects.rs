//! The Projects RPC (`fsctl projects`, MCP `list_projects`, fsgui): the
//! folders under a path that hold a project's markers, each with its
//! kinds, main languages, size, newest change and git branch.
//!
//! The markers and figures come from the index ([`crate::queries::projects`]);
//! what only a file's first bytes tell is read here, bounded: the branch
//! from `.git/HEAD` (a worktree's or submodule's `.git` file followed to
//! its git folder; no git process is run), and whether a `.tex` file is a
//! LaTeX root (`\documentclass` on an uncommented line of its first
//! 8 KiB). A machine-wide caller sees only projects in folders it can
//! open, and branches and LaTeX roots only from files it may read.

use std::collections::HashSet;
use std::io::Read;

use super::read::seen_path;
use super::visibility::{self, View};
use super::*;
use crate::queries::access;
use crate::queries::projects::{self, Candidate, Figures, ProjectKind};
use crate::store::Kind;

/// One project as the Projects RPC answers it.
#[derive(Clone, Debug)]
pub struct Project {
    pub path: Vec<u8>,
    /// In [`ProjectKind`] order.
    pub kinds: Vec<ProjectKind>,
    pub figures: Figures,
    pub branch: Branch,
    /// The nearest project above this one, and how many are above it.
    pub parent: Option<Vec<u8>>,
    pub depth: u32,
}

/// What `.git/HEAD` says.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Branch {
    /// Not a git project, or HEAD could not be read (or not by the caller).
    #[default]
    Unknown,
    /// On a branch (`ref: refs/heads/NAME`), or another ref as named.
    Named(String),
    /// HEAD is a commit: its first 12 hex digits.
    Detached(String),
}

/// Bytes read of a `.tex` file's head, a `.git` file, or `HEAD`.
const TEX_HEAD: usize = 8 << 10;
const GIT_HEAD: usize = 4 << 10;

/// Up to `max` bytes of a file's head, through the daemon's own open (no
/// symlink followed, no FIFO waited on).
fn head(path: &Path, max: usize) -> Option<Vec<u8>> {
    let f = crate::platform::fs::open_file(path).ok()?;
    if !f.metadata().ok()?.is_file() {
        return None;
    }
    let mut buf = Vec::with_capacity(max.min(4096));
    f.take(max as u64).read_to_end(&mut buf).ok()?;
    Some(buf)
}

/// Does this head of a `.tex` file declare a document class (outside a
/// comment)?
pub fn is_latex_root(text: &[u8]) -> bool {
    text.split(|&b| b == b'\n').any(|line| {
        let code = match line.iter().position(|&b| b == b'%') {
            Some(k) => &line[..k],
            None => line,
        };
        code.windows(14).any(|w| w == b"\\documentclass")
    })
}

/// The branch a `HEAD` file names.
pub fn parse_head(text: &[u8]) -> Branch {
    let s = String::from_utf8_lossy(text);
    let s = s.trim();
    if let Some(r) = s.strip_prefix("ref:") {
        let r = r.trim();
        let name = r.strip_prefix("refs/heads/").unwrap_or(r);
        return if name.is_empty() {
            Branch::Unknown
        } else {
            Branch::Named(name.to_string())
        };
    }
    if (s.len() == 40 || s.len() == 64) && s.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Branch::Detached(s[..12].to_string());
    }
    Branch::Unknown
}

/// The folder a `.git` file (`gitdir: PATH`) points at, relative paths
/// taken from the project's folder.
fn gitdir_of(project: &Path, text: &[u8]) -> Option<PathBuf> {
    let s = std::str::from_utf8(text).ok()?;
    let line = s.lines().find_map(|l| l.trim().strip_prefix("gitdir:"))?;
    let p = Path::new(line.trim());
    let joined = if p.is_absolute() {
        p.to_path_buf()
    } else {
        project.join(p)
    };
    // `..` taken away by name, as git's own path is made real.
    let mut out = PathBuf::new();
    for c in joined.components() {
        match c {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            c => out.push(c),
        }
    }
    Some(out)
}

impl Engine {
    /// The projects under `path` (every root the caller sees when empty),
    /// parents before the projects nested in them, siblings by name.
    pub fn projects(&self, path: &[u8], mut view: Option<View>) -> Result<Vec<Project>, Error> {
        self.note_activity();
        self.store.backlog.wait();
        let tops: Vec<(Vec<u8>, i64)> = if path.is_empty() {
            let roots = self.store.read(crate::store::roots)?;
            roots
                .into_iter()
                .filter_map(|r| Some((r.path.clone(), r.entry_id?)))
                .filter(|(p, _)| view.as_mut().is_none_or(|v| v.sees(p)))
                .collect()
        } else {
            let p = seen_path(&mut view, path)?;
            let (_, id) = self.store.read(|c| crate::store::resolve(c, &p))?;
            vec![(crate::platform::bytes::of(&p).to_vec(), id)]
        };
        let mut out = Vec::new();
        for (top_path, top) in tops {
            out.extend(self.projects_under(&top_path, top, view.as_mut())?);
        }
        Ok(out)
    }

    fn projects_under(
        &self,
        top_path: &[u8],
        top: i64,
        view: Option<&mut View>,
    ) -> Result<Vec<Project>, Error> {
        let Ok(top32) = u32::try_from(top) else {
            return Ok(Vec::new());
        };
        let closed = match &view {
            Some(v) => self
                .store
                .read(|c| self.closed_under(c, top, top_path, v))?,
            None => Vec::new(),
        };
        let closed_ids: HashSet<u32> = closed
            .iter()
            .filter_map(|c| u32::try_from(c.id).ok())
            .collect();
        // The names, under the index's lock; the files' heads without it.
        let t = Instant::now();
        let found: Vec<(Candidate, Vec<u8>, Vec<Vec<u8>>)> = {
            let snapshot = crate::index::read_loaded(&self.snapshot);
            projects::candidates(&snapshot, top32, &closed_ids)
                .into_iter()
                .map(|c| {
                    let p = snapshot.path(c.id);
                    let tex = c.tex.iter().map(|&t| snapshot.path(t)).collect();
                    (c, p, tex)
                })
                .collect()
        };
        let names_us = t.elapsed().as_micros() as u64;
        let mut view = view;
        // The caller could reach and read this file itself.
        let mut readable = |p: &Path| match view.as_deref_mut() {
            None => true,
            Some(v) => {
                v.sees(crate::platform::bytes::of(p)) && visibility::may(&v.caller, p, access::R)
            }
        };
        let mut chosen: Vec<(u32, Vec<u8>, Vec<ProjectKind>, Branch)> = Vec::new();
        for (mut c, p, tex) in found {
            let dir = crate::platform::bytes::path_buf(&p);
            if tex.iter().any(|t| {
                let t = crate::platform::bytes::path(t);
                readable(t) && head(t, TEX_HEAD).is_some_and(|h| is_latex_root(&h))
            }) {
                c.kinds.insert(ProjectKind::Latex);
            }
            if c.kinds.is_empty() {
                continue;
            }
            let branch = match c.git {
                Some((_, kind)) => {
                    let git = dir.join(".git");
                    let folder = if kind == Kind::Dir {
                        Some(git)
                    } else if readable(&git) {
                        head(&git, GIT_HEAD).and_then(|t| gitdir_of(&dir, &t))
                    } else {
                        None
                    };
                    folder
                        .map(|f| f.join("HEAD"))
                        .filter(|h| readable(h))
                        .and_then(|h| head(&h, GIT_HEAD))
                        .map_or(Branch::Unknown, |t| parse_head(&t))
                }
                None => Branch::Unknown,
            };
            chosen.push((c.id, p, c.kinds.into_iter().collect(), branch));
        }
        let reads_us = t.elapsed().as_micros() as u64 - names_us;
        // Parents first, then by name, component by component.
        chosen.sort_by(|a, b| a.1.split(|&x| x == b'/').cmp(b.1.split(|&x| x == b'/')));
        self.store.read(|c| {
            let snapshot = crate::index::read_loaded(&self.snapshot);
            // Gone from the index meanwhile: left out.
            chosen.retain(|x| snapshot.entry_kind(x.0) == Some(Kind::Dir));
            let ids: Vec<u32> = chosen.iter().map(|x| x.0).collect();
            let nest = projects::nesting(&snapshot, &ids);
            let at: std::collections::HashMap<u32, usize> =
                ids.iter().enumerate().map(|(k, &i)| (i, k)).collect();
            let above: Vec<Option<usize>> = nest.iter().map(|(p, _)| p.map(|p| at[&p])).collect();
            let paths: Vec<(u32, &[u8])> = chosen.iter().map(|x| (x.0, x.1.as_slice())).collect();
            let figures = projects::figures(c, &snapshot, top32, &paths, &above, &closed_ids)?;
            let mut out = Vec::with_capacity(chosen.len());
            for (((_, path, kinds, branch), (up, depth)), mut figures) in
                chosen.into_iter().zip(nest).zip(figures)
            {
                figures.usage.path = path.clone();
                access::hide_in(&mut figures.usage, &closed);
                out.push(Project {
                    path,
                    kinds,
                    figures,
                    branch,
                    parent: up.map(|p| snapshot.path(p)),
                    depth,
                });
            }
            tracing::debug!(
                projects = out.len(),
                names_us,
                reads_us,
                us = t.elapsed().as_micros() as u64,
                "projects answered"
            );
            Ok(out)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heads() {
        assert_eq!(
            parse_head(b"ref: refs/heads/feature/x\n"),
            Branch::Named("feature/x".into())
        );
        assert_eq!(
            parse_head(b"0123456789abcdef0123456789abcdef01234567\n"),
            Branch::Detached("0123456789ab".into())
        );
        assert_eq!(parse_head(b"garbage"), Branch::Unknown);
        assert_eq!(parse_head(b"ref: "), Branch::Unknown);
    }

    #[test]
    fn latex_roots() {
        assert!(is_latex_root(
            b"% a paper\n\\documentclass[11pt]{article}\n"
        ));
        assert!(!is_latex_root(b"% \\documentclass{article}\n\\section{x}"));
        assert!(!is_latex_root(b"\\input{chapter}\n"));
    }

    #[test]
    fn gitdir_files() {
        let p = Path::new("/w/wt");
        assert_eq!(
            gitdir_of(p, b"gitdir: /r/.git/worktrees/wt\n"),
            Some(PathBuf::from("/r/.git/worktrees/wt"))
        );
        assert_eq!(
            gitdir_of(p, b"gitdir: ../.git/modules/sub\n"),
            Some(PathBuf::from("/w/.git/modules/sub"))
        );
        assert_eq!(gitdir_of(p, b"nothing"), None);
    }
}
