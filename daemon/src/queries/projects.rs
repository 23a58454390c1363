//! Projects: the folders under a path that hold a project's markers
//! (`.git`, `Cargo.toml`, `package.json`, ...), found from the names in the
//! index, and each one's figures (languages by file count, size as du
//! counts it, newest change), never from a walk of the file system.
//!
//! What only a file's bytes can tell (the branch in `.git/HEAD`, whether a
//! `.tex` file is a LaTeX root) is the engine's to read: this module names
//! the candidates ([`Candidate::tex`], [`Candidate::git`]).

use std::collections::{BTreeSet, HashMap, HashSet};

use rusqlite::Connection;

use crate::Error;
use crate::index::Snapshot;
use crate::queries::du;
use crate::store::Kind;

/// What kind of project a marker says a folder is. A folder can be several.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ProjectKind {
    Git,
    Cargo,
    Npm,
    Python,
    Go,
    Maven,
    Gradle,
    Dotnet,
    Cmake,
    Xcode,
    Latex,
}

impl ProjectKind {
    /// The name clients show (and `--json` prints).
    pub fn name(self) -> &'static str {
        match self {
            ProjectKind::Git => "git",
            ProjectKind::Cargo => "cargo",
            ProjectKind::Npm => "npm",
            ProjectKind::Python => "python",
            ProjectKind::Go => "go",
            ProjectKind::Maven => "maven",
            ProjectKind::Gradle => "gradle",
            ProjectKind::Dotnet => "dotnet",
            ProjectKind::Cmake => "cmake",
            ProjectKind::Xcode => "xcode",
            ProjectKind::Latex => "latex",
        }
    }
}

/// The project kind a name in a folder marks, if any (`.tex` files are
/// only candidates: see [`Candidate::tex`]).
fn marker(name: &[u8], kind: Kind) -> Option<ProjectKind> {
    let is_dir = kind == Kind::Dir;
    Some(match name {
        // A worktree's or submodule's `.git` is a file naming the real one.
        b".git" if is_dir || kind == Kind::File => ProjectKind::Git,
        _ if is_dir => {
            return name.ends_with(b".xcodeproj").then_some(ProjectKind::Xcode);
        }
        _ if kind != Kind::File => return None,
        b"Cargo.toml" => ProjectKind::Cargo,
        b"package.json" => ProjectKind::Npm,
        b"pyproject.toml" | b"setup.py" => ProjectKind::Python,
        b"go.mod" => ProjectKind::Go,
        b"pom.xml" => ProjectKind::Maven,
        b"build.gradle" | b"build.gradle.kts" => ProjectKind::Gradle,
        b"CMakeLists.txt" => ProjectKind::Cmake,
        _ if name.ends_with(b".sln") || name.ends_with(b".csproj") => ProjectKind::Dotnet,
        _ => return None,
    })
}

/// Folders whose insides are not looked at for markers or languages: the
/// repository's own store, and installed dependencies (every package in
/// `node_modules` has its own `package.json`, which is no project of the
/// user's).
fn is_opaque(name: &[u8]) -> bool {
    matches!(
        name,
        b".git" | b"node_modules" | b"site-packages" | b"__pycache__"
    )
}

/// A folder that holds at least one marker, or a `.tex` file to look into.
#[derive(Clone, Debug, Default)]
pub struct Candidate {
    pub id: u32,
    pub kinds: BTreeSet<ProjectKind>,
    /// `.tex` files directly in the folder (the engine reads their heads
    /// for `\documentclass`; at most [`TEX_PER_FOLDER`]).
    pub tex: Vec<u32>,
    /// The `.git` entry, a folder or a file.
    pub git: Option<(u32, Kind)>,
}

/// `.tex` files looked into per folder at most.
pub const TEX_PER_FOLDER: usize = 8;

/// The folders at or below folder `top` holding markers, in id order
/// (parents before children while ids run parents-first). Folders in
/// `closed` (those the caller cannot open) are not entered: their markers
/// are not the caller's to see.
pub fn candidates(snapshot: &Snapshot, top: u32, closed: &HashSet<u32>) -> Vec<Candidate> {
    let mut found: HashMap<u32, Candidate> = HashMap::new();
    if closed.contains(&top) {
        return Vec::new();
    }
    snapshot.walk_below(top, &mut |i, parent| {
        let Some(kind) = snapshot.entry_kind(i) else {
            return false;
        };
        let name = snapshot.entry_name(i);
        let at = || Candidate {
            id: parent,
            ..Default::default()
        };
        if let Some(k) = marker(&name, kind) {
            let c = found.entry(parent).or_insert_with(at);
            c.kinds.insert(k);
            if k == ProjectKind::Git {
                c.git = Some((i, kind));
            }
        } else if kind == Kind::File && name.ends_with(b".tex") {
            let c = found.entry(parent).or_insert_with(at);
            if c.tex.len() < TEX_PER_FOLDER {
                c.tex.push(i);
            }
        }
        kind == Kind::Dir && !is_opaque(&name) && !closed.contains(&i)
    });
    let mut out: Vec<Candidate> = found.into_values().collect();
    out.sort_by_key(|c| c.id);
    out
}

/// The language a file's extension says, for "main languages by file
/// count" (markup, prose and data formats are not languages here).
pub fn language(name: &[u8]) -> Option<&'static str> {
    let dot = name.iter().rposition(|&b| b == b'.')?;
    let ext = name[dot + 1..].to_ascii_lowercase();
    Some(match ext.as_slice() {
        b"rs" => "Rust",
        b"py" | b"pyi" => "Python",
        b"js" | b"mjs" | b"cjs" | b"jsx" => "JavaScript",
        b"ts" | b"tsx" | b"mts" | b"cts" => "TypeScript",
        b"go" => "Go",
        b"java" => "Java",
        b"kt" | b"kts" => "Kotlin",
        b"scala" => "Scala",
        b"c" => "C",
        b"h" => "C/C++ header",
        b"cc" | b"cpp" | b"cxx" | b"hpp" | b"hh" | b"hxx" => "C++",
        b"cs" => "C#",
        b"fs" | b"fsx" => "F#",
        b"swift" => "Swift",
        b"m" | b"mm" => "Objective-C",
        b"rb" => "Ruby",
        b"php" => "PHP",
        b"pl" | b"pm" => "Perl",
        b"lua" => "Lua",
        b"r" => "R",
        b"jl" => "Julia",
        b"hs" => "Haskell",
        b"ml" | b"mli" => "OCaml",
        b"ex" | b"exs" => "Elixir",
        b"erl" => "Erlang",
        b"clj" | b"cljs" => "Clojure",
        b"dart" => "Dart",
        b"zig" => "Zig",
        b"nim" => "Nim",
        b"sh" | b"bash" | b"zsh" => "Shell",
        b"ps1" => "PowerShell",
        b"sql" => "SQL",
        b"html" | b"htm" => "HTML",
        b"css" | b"scss" | b"sass" | b"less" => "CSS",
        b"vue" => "Vue",
        b"svelte" => "Svelte",
        b"tex" | b"sty" | b"cls" => "TeX",
        b"cmake" => "CMake",
        _ => return None,
    })
}

/// One project's figures.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Figures {
    /// Most files first (ties by name), at most [`LANGUAGES`].
    pub languages: Vec<(&'static str, u64)>,
    /// Newest modification time of a file below (outside `.git` and
    /// `node_modules`); 0 when there is none.
    pub newest_ns: i64,
    /// As `du -s -B1`, `du -s -b`, and du's counts.
    pub usage: du::Usage,
}

/// Languages shown per project at most.
pub const LANGUAGES: usize = 3;

/// Each project's figures: languages by file count and the newest change
/// of the files below it (opaque folders and `closed` ones not entered; a
/// file counts in its project and every project above that), from one pass
/// over the names below `top`; and its disk usage. `projects` are the
/// projects' folder ids and paths, `above` the nearest project above each
/// (as [`nesting`] gives it, by index into `projects`).
pub fn figures(
    conn: &Connection,
    snapshot: &Snapshot,
    top: u32,
    projects: &[(u32, &[u8])],
    above: &[Option<usize>],
    closed: &HashSet<u32>,
) -> Result<Vec<Figures>, Error> {
    const NONE: usize = usize::MAX;
    let index: HashMap<u32, usize> = projects
        .iter()
        .enumerate()
        .map(|(k, (id, _))| (*id, k))
        .collect();
    let mut counts: Vec<HashMap<&'static str, u64>> = vec![HashMap::new(); projects.len()];
    let mut newest = vec![0i64; projects.len()];
    // Folder -> the nearest project at or above it (folders inside none
    // are left out).
    let mut nearest: HashMap<u32, usize> = HashMap::new();
    if let Some(&k) = index.get(&top) {
        nearest.insert(top, k);
    }
    snapshot.walk_below(top, &mut |i, parent| {
        let Some(kind) = snapshot.entry_kind(i) else {
            return false;
        };
        let here = nearest.get(&parent).copied().unwrap_or(NONE);
        let name = snapshot.entry_name(i);
        if kind == Kind::Dir {
            if is_opaque(&name) || closed.contains(&i) {
                return false;
            }
            let mine = index.get(&i).copied().unwrap_or(here);
            if mine != NONE {
                nearest.insert(i, mine);
            }
            return true;
        }
        if here == NONE {
            return false;
        }
        let mtime = snapshot.entry_mtime_ns(i);
        let lang = language(&name);
        let mut p = here;
        loop {
            newest[p] = newest[p].max(mtime);
            if let Some(l) = lang {
                *counts[p].entry(l).or_default() += 1;
            }
            match above[p] {
                Some(q) if q != p => p = q,
                _ => break,
            }
        }
        false
    });
    let mut out = Vec::with_capacity(projects.len());
    for (k, (id, path)) in projects.iter().enumerate() {
        let mut languages: Vec<(&'static str, u64)> = counts[k].drain().collect();
        languages.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(b.0)));
        languages.truncate(LANGUAGES);
        let usage = du::disk_usage(conn, i64::from(*id), path.to_vec(), 1, false)?.total;
        out.push(Figures {
            languages,
            newest_ns: newest[k],
            usage,
        });
    }
    Ok(out)
}

/// For each project in `ids` (in order), the nearest project above it and
/// its depth among projects (0: none above).
pub fn nesting(snapshot: &Snapshot, ids: &[u32]) -> Vec<(Option<u32>, u32)> {
    let set: HashSet<u32> = ids.iter().copied().collect();
    let mut depth: HashMap<u32, u32> = HashMap::new();
    // Parents first: a project's enclosing one is decided before it.
    let mut order: Vec<(u16, u32)> = ids.iter().map(|&i| (snapshot.entry_depth(i), i)).collect();
    order.sort_unstable();
    let mut above: HashMap<u32, Option<u32>> = HashMap::new();
    for (_, i) in order {
        let mut up = snapshot.entry_parent(i);
        while let Some(p) = up {
            if set.contains(&p) {
                break;
            }
            up = snapshot.entry_parent(p);
        }
        let d = up.map_or(0, |p| depth.get(&p).copied().unwrap_or(0) + 1);
        depth.insert(i, d);
        above.insert(i, up);
    }
    ids.iter()
        .map(|i| (above.get(i).copied().flatten(), depth[i]))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_by_name_and_kind() {
        assert_eq!(marker(b".git", Kind::Dir), Some(ProjectKind::Git));
        assert_eq!(marker(b".git", Kind::File), Some(ProjectKind::Git));
        assert_eq!(marker(b".git", Kind::Symlink), None);
        assert_eq!(marker(b"Cargo.toml", Kind::File), Some(ProjectKind::Cargo));
        // A folder named like a manifest marks nothing.
        assert_eq!(marker(b"Cargo.toml", Kind::Dir), None);
        assert_eq!(
            marker(b"App.xcodeproj", Kind::Dir),
            Some(ProjectKind::Xcode)
        );
        assert_eq!(marker(b"App.xcodeproj", Kind::File), None);
        assert_eq!(marker(b"x.sln", Kind::File), Some(ProjectKind::Dotnet));
        assert_eq!(marker(b"a.csproj", Kind::File), Some(ProjectKind::Dotnet));
        assert_eq!(marker(b"setup.py", Kind::File), Some(ProjectKind::Python));
        assert_eq!(
            marker(b"build.gradle.kts", Kind::File),
            Some(ProjectKind::Gradle)
        );
        assert_eq!(marker(b"cargo.toml", Kind::File), None);
        assert_eq!(marker(b"main.tex", Kind::File), None);
    }

    #[test]
    fn languages_by_extension() {
        assert_eq!(language(b"main.rs"), Some("Rust"));
        assert_eq!(language(b"App.TSX"), Some("TypeScript"));
        assert_eq!(language(b"README.md"), None);
        assert_eq!(language(b"Makefile"), None);
        assert_eq!(language(b".bashrc"), None);
    }
}
