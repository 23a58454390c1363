//! The path guard: every path an agent names passes through here before any
//! look-up or read.
//!
//! Order matters: refuse NUL bytes, expand `~`, resolve a relative path
//! against the allowed directories, normalise `.` and `..` lexically,
//! require the result under an allowed directory, then resolve symlinks and
//! require the real path under an allowed directory again, so that neither
//! `..` nor a symlink can lead outside. A path that is outside and a path
//! that does not exist are refused with the same line, so that a refusal
//! tells nothing about what lies outside.
//!
//! A path may come shown (see `names`): its escapes are undone first, and
//! the path is taken literally only where that finds nothing.

use std::path::{Component, Path, PathBuf};

/// Why a path was refused: one line for the agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal(pub String);

impl Refusal {
    /// The one line for "outside" and "does not exist" alike.
    pub fn denied(raw: &str) -> Refusal {
        Refusal(format!(
            "{}: no such path under the allowed directories (see list_allowed_directories)",
            raw.escape_debug()
        ))
    }
}

/// The allowed directories, each absolute, normalised and with its symlinks
/// resolved.
#[derive(Debug, Clone)]
pub struct Guard {
    allowed: Vec<PathBuf>,
    home: Option<PathBuf>,
}

impl Guard {
    pub fn new(allowed: Vec<PathBuf>, home: Option<PathBuf>) -> Guard {
        Guard { allowed, home }
    }

    pub fn allowed(&self) -> &[PathBuf] {
        &self.allowed
    }

    /// Is `p` (absolute, normalised) at or under an allowed directory?
    pub fn inside(&self, p: &Path) -> bool {
        self.allowed.iter().any(|a| p.starts_with(a))
    }

    /// An existing path under an allowed directory, symlinks resolved.
    pub fn existing(&self, raw: &str) -> Result<PathBuf, Refusal> {
        self.resolve(raw, |p| fsindex_proto::paths::canonicalize(p).ok())
    }

    /// [`Guard::existing`] for an optional path argument.
    pub fn existing_opt(&self, raw: Option<&str>) -> Result<Option<PathBuf>, Refusal> {
        raw.map(|r| self.existing(r)).transpose()
    }

    /// A path that may not exist yet (a move's destination): its longest
    /// existing ancestor has its symlinks resolved and must be inside, and
    /// so must the whole path.
    pub fn prospective(&self, raw: &str) -> Result<PathBuf, Refusal> {
        self.resolve(raw, |p| {
            let mut rest = Vec::new();
            let mut cur = p.to_path_buf();
            loop {
                if let Ok(real) = fsindex_proto::paths::canonicalize(&cur) {
                    let mut full = real;
                    full.extend(rest.iter().rev());
                    return Some(full);
                }
                // A dangling symlink cannot be a step on the way.
                if std::fs::symlink_metadata(&cur).is_ok() {
                    return None;
                }
                rest.push(cur.file_name()?.to_owned());
                cur = cur.parent()?.to_path_buf();
            }
        })
    }

    /// An entry acted on as itself (a move's source or destination): its
    /// folder through [`Guard::prospective`] (inside, symlinks resolved),
    /// its own name never followed, so a symlink is moved and not its
    /// target, and never `.` or `..`. A relative path is looked for under
    /// each allowed directory. `existing`: the entry must be there.
    pub fn entry(&self, raw: &str, existing: bool) -> Result<PathBuf, Refusal> {
        if raw.contains('\0') {
            return Err(Refusal(
                "the path contains a NUL byte; paths cannot hold one".into(),
            ));
        }
        let t = raw.trim_end_matches('/');
        let (dir, name) = match t.rfind('/') {
            Some(0) => ("/", &t[1..]),
            Some(k) => (&t[..k], &t[k + 1..]),
            None => ("", t),
        };
        if name.is_empty() || name == "." || name == ".." || (dir.is_empty() && name == "~") {
            return Err(Refusal::denied(raw));
        }
        let mut names = Vec::new();
        if let Some(bytes) = super::names::unescape(name) {
            names.push(super::names::path_of(bytes));
        }
        names.push(PathBuf::from(name));
        let dirs: Vec<PathBuf> = if dir.is_empty() {
            self.allowed.clone()
        } else {
            vec![self.prospective(dir)?]
        };
        for d in &dirs {
            for n in &names {
                let p = d.join(n);
                if std::fs::symlink_metadata(&p).is_ok() {
                    return Ok(p);
                }
            }
        }
        if existing || dirs.is_empty() {
            return Err(Refusal::denied(raw));
        }
        Ok(dirs[0].join(&names[0]))
    }

    fn resolve(
        &self,
        raw: &str,
        real: impl Fn(&Path) -> Option<PathBuf>,
    ) -> Result<PathBuf, Refusal> {
        if raw.contains('\0') {
            return Err(Refusal(
                "the path contains a NUL byte; paths cannot hold one".into(),
            ));
        }
        if raw.trim().is_empty() {
            return Err(Refusal("an empty path; give a path under an allowed directory (see list_allowed_directories)".into()));
        }
        // The shown form's bytes first, then the text as it is.
        let mut forms = Vec::new();
        if let Some(bytes) = super::names::unescape(raw) {
            forms.push(self.expand_tilde_path(super::names::path_of(bytes)));
        }
        forms.push(self.expand_tilde(raw));
        for expanded in forms {
            let candidates: Vec<PathBuf> = if expanded.is_absolute() {
                vec![expanded]
            } else {
                self.allowed.iter().map(|a| a.join(&expanded)).collect()
            };
            for c in candidates {
                let n = normalise(&c);
                if !self.inside(&n) {
                    continue;
                }
                if let Some(r) = real(&n)
                    && self.inside(&r)
                {
                    return Ok(r);
                }
            }
        }
        Err(Refusal::denied(raw))
    }

    fn expand_tilde_path(&self, p: PathBuf) -> PathBuf {
        match (&self.home, p.strip_prefix("~")) {
            (Some(home), Ok(rest)) => home.join(rest),
            _ => p,
        }
    }

    fn expand_tilde(&self, raw: &str) -> PathBuf {
        match (&self.home, raw.strip_prefix('~')) {
            (Some(home), Some("")) => home.clone(),
            (Some(home), Some(rest)) if rest.starts_with('/') => {
                home.join(rest.trim_start_matches('/'))
            }
            _ => PathBuf::from(raw),
        }
    }
}

/// `.` dropped, `..` removes the previous component (never above `/`),
/// without touching the disk.
pub fn normalise(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::Prefix(_) | Component::RootDir => out.push(c.as_os_str()),
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(n) => out.push(n),
        }
    }
    out
}

// Unix only: the fixtures are symlinks.
#[cfg(all(test, unix))]
mod tests {
    use super::*;

    fn setup() -> (tempfile::TempDir, Guard, PathBuf) {
        let tmp = tempfile::tempdir().unwrap();
        let base = fsindex_proto::paths::canonicalize(tmp.path()).unwrap();
        let allowed = base.join("allowed");
        std::fs::create_dir_all(allowed.join("sub")).unwrap();
        std::fs::write(allowed.join("sub/a.txt"), b"a").unwrap();
        std::fs::create_dir_all(base.join("outside")).unwrap();
        std::fs::write(base.join("outside/secret.txt"), b"s").unwrap();
        std::os::unix::fs::symlink(base.join("outside"), allowed.join("out-link")).unwrap();
        std::os::unix::fs::symlink("sub/a.txt", allowed.join("in-link")).unwrap();
        let g = Guard::new(vec![allowed.clone()], Some(allowed.join("sub")));
        (tmp, g, base)
    }

    #[test]
    fn accepts_inside_paths_in_every_spelling() {
        let (_t, g, base) = setup();
        let a = base.join("allowed/sub/a.txt");
        assert_eq!(g.existing(a.to_str().unwrap()).unwrap(), a);
        assert_eq!(g.existing("sub/a.txt").unwrap(), a);
        assert_eq!(g.existing("./sub/../sub/a.txt").unwrap(), a);
        assert_eq!(g.existing("~/a.txt").unwrap(), a);
        assert_eq!(g.existing("in-link").unwrap(), a);
    }

    #[test]
    fn shown_names_reach_their_bytes() {
        use std::os::unix::ffi::OsStrExt;
        let (_t, g, base) = setup();
        let sub = base.join("allowed/sub");
        let latin1 = sub.join(std::ffi::OsStr::from_bytes(b"caf\xe9"));
        std::fs::write(&latin1, b"l").unwrap();
        let nl = sub.join("two\nlines");
        std::fs::write(&nl, b"n").unwrap();
        let literal = sub.join("back\\x41");
        std::fs::write(&literal, b"b").unwrap();
        assert_eq!(g.existing("sub/caf\\xE9").unwrap(), latin1);
        assert_eq!(g.existing("~/two\\nlines").unwrap(), nl);
        let shown = super::super::names::shown_path(&literal);
        assert_eq!(g.existing(&shown).unwrap(), literal);
        // Typed with one backslash, it is taken literally.
        assert_eq!(g.existing("sub/back\\x41").unwrap(), literal);
        assert!(
            g.existing("sub/caf\\xE9/../../../outside/secret.txt")
                .is_err()
        );
    }

    #[test]
    fn refuses_outside_missing_symlinks_out_and_nul_alike() {
        let (_t, g, base) = setup();
        let outside = base.join("outside/secret.txt");
        let denied = |raw: &str| assert_eq!(g.existing(raw), Err(Refusal::denied(raw)), "{raw}");
        denied("../outside/secret.txt");
        denied("../../../../etc/passwd");
        denied(outside.to_str().unwrap());
        denied("/etc/passwd");
        denied("out-link/secret.txt");
        denied("out-link");
        denied("sub/missing.txt");
        assert!(g.existing("sub/a.txt\0").is_err());
        assert!(g.existing("").is_err());
    }

    #[test]
    fn prospective_paths_may_be_missing_but_not_outside() {
        let (_t, g, base) = setup();
        assert_eq!(
            g.prospective("new/dir/file.txt").unwrap(),
            base.join("allowed/new/dir/file.txt")
        );
        assert!(g.prospective("out-link/new.txt").is_err());
        assert!(g.prospective("../outside/new.txt").is_err());
        assert!(g.prospective("/tmp/elsewhere").is_err());
    }

    #[test]
    fn entries_are_not_followed_and_stay_inside() {
        let (_t, g, base) = setup();
        let allowed = base.join("allowed");
        // The link itself, not the folder outside it points to.
        assert_eq!(g.entry("out-link", true).unwrap(), allowed.join("out-link"));
        assert_eq!(
            g.entry("sub/a.txt", true).unwrap(),
            allowed.join("sub/a.txt")
        );
        assert_eq!(
            g.entry("new/b.txt", false).unwrap(),
            allowed.join("new/b.txt")
        );
        assert!(g.entry("out-link/secret.txt", true).is_err());
        assert!(g.entry("out-link/new.txt", false).is_err());
        assert!(g.entry("sub/..", false).is_err());
        assert!(g.entry("../outside", false).is_err());
        assert!(
            g.entry(allowed.to_str().unwrap(), true).is_err(),
            "an allowed directory itself"
        );
        assert!(g.entry("sub/missing", true).is_err());
    }

    #[test]
    fn normalise_never_climbs_above_root() {
        assert_eq!(
            normalise(Path::new("/a/../../b/./c")),
            PathBuf::from("/b/c")
        );
    }
}
