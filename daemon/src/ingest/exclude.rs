//! What may enter the index: exclusions and the sensitive-file tiers.
//!
//! Every entry is judged here before it is indexed, wherever it comes from:
//! a scan's walk, `verify`'s fresh walk, a watcher event, a rename. One
//! judge keeps the three in agreement, so `verify` stays clean. A folder
//! that is not indexed is not listed, descended into or watched.
//!
//! Patterns are globs. One without `/` matches an entry's name at any
//! depth (`node_modules`, `*.tmp`); one with a `/` matches the end of the
//! path (`.aws/credentials`, `.ssh/*`, `build/*.o`), and a leading `/`
//! anchors it at the file-system root (`/home/me/scratch`). A trailing `/`
//! makes a pattern match folders only. `*`, `?` and `[...]` never match a
//! `/`; `**` matches any number of folders. The sensitive tiers match
//! case-insensitively; the user's `excludes` match case-sensitively (except
//! on macOS and Windows, whose file systems ignore case).
//!
//! A path pattern is split at its last `/`: the part before it is matched
//! once per folder, the part after it against each name, so a walk of
//! millions of entries never builds their paths. Patterns whose last
//! component cannot be split off (a `/` inside `{...}`) are matched against
//! the whole path instead.
//!
//! The built-in exclusions (unless `default_excludes = false`) are folders
//! known by path: pseudo and network file systems (from
//! `/proc/self/mountinfo`) plus `/proc`, `/sys`, `/dev` and `/run`; the
//! trash and cache folders; the index's own folder. Only entries strictly
//! under a root are judged, so a root that lies on or under one of those
//! folders is indexed all the same: the root asks for it.

use std::cell::OnceCell;
use std::collections::{HashMap, HashSet};
use std::ffi::OsStr;
use std::path::{Component, Path, PathBuf};

use globset::{Candidate, GlobBuilder, GlobMatcher, GlobSet, GlobSetBuilder};

use crate::Error;
use crate::config::{Config, Paths};

/// What happens to an entry, from the least to the most restrictive.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Verdict {
    /// Indexed.
    Index,
    /// Indexed, and flagged as sensitive in results (WARN tier).
    Warn,
    /// Not indexed and never listed; `info` on its exact path answers from
    /// a live lstat (SKIP tier).
    Skip,
    /// Not indexed: excluded by the user's `excludes` or a default.
    Exclude,
    /// Not indexed, the name never stored anywhere (BLOCK tier).
    Block,
}

impl Verdict {
    /// True when the entry, and for a folder everything under it, stays
    /// out of the index.
    pub fn hides(self) -> bool {
        self >= Verdict::Skip
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Index => "index",
            Verdict::Warn => "warn",
            Verdict::Skip => "skip",
            Verdict::Exclude => "exclude",
            Verdict::Block => "block",
        }
    }
}

/// File-system types whose mount points are excluded by default: kernel
/// pseudo file systems (nothing on them is a user's file) and network file
/// systems (slow to walk, often huge, and not this machine's to index).
const PSEUDO_FS: &[&str] = &[
    "proc",
    "sysfs",
    "devtmpfs",
    "devpts",
    "securityfs",
    "debugfs",
    "tracefs",
    "pstore",
    "bpf",
    "mqueue",
    "hugetlbfs",
    "configfs",
    "fusectl",
    "binfmt_misc",
    "autofs",
    "efivarfs",
    "selinuxfs",
    "rpc_pipefs",
    "nsfs",
    // macOS's /dev.
    "devfs",
];
const NETWORK_FS: &[&str] = &[
    // macOS (getmntinfo) and Windows (a network drive letter).
    "afpfs",
    "webdav",
    "remote",
    "cifs",
    "smb3",
    "smbfs",
    "fuse.sshfs",
    "sshfs",
    "9p",
    "afs",
    "ceph",
    "fuse.ceph",
    "glusterfs",
    "fuse.glusterfs",
    "lustre",
    "ncpfs",
    "coda",
    "davfs",
    "fuse.rclone",
    "fuse.s3fs",
    "fuse.gcsfuse",
    "fuse.curlftpfs",
    "fuse.gvfsd-fuse",
];
/// Prefixes of file-system types excluded by default (`cgroup`, `cgroup2`,
/// `nfs`, `nfs4`, `nfsd`).
const EXCLUDED_FS_PREFIXES: &[&str] = &["cgroup", "nfs"];

/// Folders excluded by path, whatever is mounted there.
const PSEUDO_DIRS: &[&str] = &["/proc", "/sys", "/dev", "/run"];

/// True for a file-system type excluded by default.
pub fn is_excluded_fs(fstype: &str) -> bool {
    PSEUDO_FS.contains(&fstype)
        || NETWORK_FS.contains(&fstype)
        || EXCLUDED_FS_PREFIXES.iter().any(|p| fstype.starts_with(p))
}

/// Where the built-in exclusions point. [`Environment::current`] reads the
/// running system; tests build one by hand.
#[derive(Clone, Debug, Default)]
pub struct Environment {
    pub home: Option<PathBuf>,
    /// The user's cache folder (`$XDG_CACHE_HOME` or `~/.cache`;
    /// `~/Library/Caches` on macOS).
    pub cache_dir: Option<PathBuf>,
    /// The user's data folder (`$XDG_DATA_HOME` or `~/.local/share`), which
    /// holds the freedesktop trash.
    pub data_dir: Option<PathBuf>,
    /// Mount points and their file-system types.
    pub mounts: Vec<(PathBuf, String)>,
}

impl Environment {
    pub fn current() -> Environment {
        let base = directories::BaseDirs::new();
        let mounts = crate::platform::mounts::mounts();
        Environment {
            home: base.as_ref().map(|b| b.home_dir().to_owned()),
            cache_dir: base.as_ref().map(|b| b.cache_dir().to_owned()),
            data_dir: base.as_ref().map(|b| b.data_dir().to_owned()),
            mounts,
        }
    }
}

/// One compiled pattern. Its last component is in [`Rules::names`].
#[derive(Clone, Debug)]
struct Pattern {
    verdict: Verdict,
    /// The pattern ended with `/`: folders only.
    dir_only: bool,
    /// The part before the last `/` is in [`Rules::folders`]: the entry's
    /// folder must match it.
    folder: bool,
    /// The whole pattern, matched against the whole path (lowercased when
    /// the flag says so), when its last component cannot be split off.
    full: Option<(GlobMatcher, bool)>,
}

/// A pattern taken apart (see the module docs).
#[derive(Debug, PartialEq, Eq)]
enum Shape {
    /// No `/`: matched against names.
    Name(String),
    /// `folder` is matched against the entry's folder, `name` against its name.
    Split { folder: String, name: String },
    /// Matched against the whole path, after `name` (when known) matched
    /// the name.
    Whole { whole: String, name: Option<String> },
}

/// The part of a path pattern that must match from the start of an
/// absolute path: anchored as written when it starts with `/`, otherwise
/// preceded by any number of folders.
fn anchored(part: &str) -> String {
    if part.is_empty() {
        "/".into()
    } else if part.starts_with('/') || part == "**" || part.starts_with("**/") {
        part.to_owned()
    } else {
        format!("**/{part}")
    }
}

fn shape(pattern: &str) -> Shape {
    if !pattern.contains('/') {
        return Shape::Name(pattern.to_owned());
    }
    // The last `/` outside `[...]` and `{...}`.
    let (mut braces, mut class, mut escaped) = (0usize, false, false);
    let mut last = None;
    for (i, c) in pattern.char_indices() {
        if escaped {
            escaped = false;
            continue;
        }
        match c {
            '\\' => escaped = true,
            '[' if !class => class = true,
            ']' if class => class = false,
            '{' if !class => braces += 1,
            '}' if !class => braces = braces.saturating_sub(1),
            '/' if !class && braces == 0 => last = Some(i),
            _ => {}
        }
    }
    let whole = anchored(pattern);
    match last {
        Some(i) if !pattern[i + 1..].contains('/') => {
            let (folder, name) = (&pattern[..i], pattern[i + 1..].to_owned());
            // `a/**` does not match `a` itself, but `a/**/b` matches `a/b`:
            // such a folder part cannot be matched on its own.
            if folder == "**" || folder.ends_with("/**") {
                Shape::Whole {
                    whole,
                    name: Some(name),
                }
            } else {
                Shape::Split {
                    folder: anchored(folder),
                    name,
                }
            }
        }
        _ => Shape::Whole { whole, name: None },
    }
}

/// A rule list as the config gives it.
struct Source<'a> {
    what: &'static str,
    verdict: Verdict,
    patterns: &'a [String],
    case_insensitive: bool,
}

/// Name globs and the pattern each one belongs to.
struct NameSet {
    set: GlobSet,
    pattern: Vec<usize>,
    may: MayMatch,
}

/// Whether some glob of a set may match a text, read from the globs'
/// plain shapes (`name`, `prefix*`, `*suffix`, `*part*`) and asked before
/// globset's strategies: nearly every name matches no pattern, and
/// globset's look-ups (a candidate, then a literal, an extension, a
/// prefix, a suffix and a regex set tried in turn) were 8% of a first
/// index's CPU (`perf record`, the verdict with what it calls). It may say yes where no glob matches (globset then
/// says no), never no where one does: a glob of any other shape makes it
/// say yes to every text.
#[derive(Default)]
struct MayMatch {
    every: bool,
    exact: Vec<Vec<u8>>,
    prefix: Vec<Vec<u8>>,
    suffix: Vec<Vec<u8>>,
    contains: Vec<memchr::memmem::Finder<'static>>,
}

impl MayMatch {
    fn add(&mut self, glob: &str) {
        if plain(glob) {
            self.exact.push(glob.as_bytes().to_vec());
        } else if let Some(t) = glob.strip_prefix('*').filter(|t| plain(t)) {
            self.suffix.push(t.as_bytes().to_vec());
        } else if let Some(t) = glob.strip_suffix('*').filter(|t| plain(t)) {
            self.prefix.push(t.as_bytes().to_vec());
        } else if let Some(t) = contained_literal(glob) {
            self.contains
                .push(memchr::memmem::Finder::new(t.as_bytes()).into_owned());
        } else {
            self.every = true;
        }
    }

    fn may(&self, text: &[u8]) -> bool {
        self.every
            || self.exact.iter().any(|e| e.as_slice() == text)
            || self.prefix.iter().any(|p| text.starts_with(p))
            || self.suffix.iter().any(|p| text.ends_with(p))
            || self.contains.iter().any(|f| f.find(text).is_some())
    }
}

impl NameSet {
    fn build((b, pattern, may): (GlobSetBuilder, Vec<usize>, MayMatch)) -> Result<NameSet, Error> {
        let set = b
            .build()
            .map_err(|e| Error::InvalidArgument(format!("exclusion patterns: {e}")))?;
        Ok(NameSet { set, pattern, may })
    }

    /// Adds the patterns whose name glob matches `name` to `out`.
    fn hits(&self, name: &[u8], out: &mut Vec<usize>) {
        if self.set.is_empty() || !self.may.may(name) {
            return;
        }
        let name = Candidate::from_bytes(name);
        if !self.set.is_match_candidate(&name) {
            return;
        }
        let mut found = Vec::new();
        self.set.matches_candidate_into(&name, &mut found);
        out.extend(found.into_iter().map(|i| self.pattern[i]));
    }
}

/// One part of every pattern (its last component, or its folder part),
/// as globs tagged with their pattern. Case-insensitive ones are kept
/// lowercased and matched against the lowercased text: globset's own
/// case-insensitive matching knows ASCII only, and the plain literal and
/// extension look-ups it then uses are several times faster than its
/// case-insensitive automaton.
struct PartSet {
    exact: NameSet,
    folded: NameSet,
}

struct PartSetBuilder {
    exact: (GlobSetBuilder, Vec<usize>, MayMatch),
    folded: (GlobSetBuilder, Vec<usize>, MayMatch),
}

impl PartSetBuilder {
    fn new() -> Self {
        PartSetBuilder {
            exact: (GlobSetBuilder::new(), Vec::new(), MayMatch::default()),
            folded: (GlobSetBuilder::new(), Vec::new(), MayMatch::default()),
        }
    }

    fn add(&mut self, glob: globset::Glob, case_insensitive: bool, pattern: usize) {
        let to = if case_insensitive {
            &mut self.folded
        } else {
            &mut self.exact
        };
        to.2.add(glob.glob());
        to.0.add(glob);
        to.1.push(pattern);
    }

    fn build(self) -> Result<PartSet, Error> {
        Ok(PartSet {
            exact: NameSet::build(self.exact)?,
            folded: NameSet::build(self.folded)?,
        })
    }
}

impl PartSet {
    /// Adds the patterns whose part matches `text` to `out`.
    fn hits(&self, text: &[u8], out: &mut Vec<usize>) {
        self.exact.hits(text, out);
        if !self.folded.set.is_empty() {
            with_lowercase(text, |lower| self.folded.hits(lower, out));
        }
    }
}

/// `name` lowercased: ASCII on the stack (names are at most 255 bytes on
/// the file systems we index), other UTF-8 by Unicode rules, bytes that are
/// not UTF-8 by ASCII rules.
fn with_lowercase<T>(name: &[u8], f: impl FnOnce(&[u8]) -> T) -> T {
    if name.is_ascii() && name.len() <= 256 {
        let mut buf = [0u8; 256];
        let lower = &mut buf[..name.len()];
        lower.copy_from_slice(name);
        lower.make_ascii_lowercase();
        return f(lower);
    }
    match std::str::from_utf8(name) {
        Ok(s) => f(s.to_lowercase().as_bytes()),
        Err(_) => f(&name.to_ascii_lowercase()),
    }
}

/// The compiled rules: which entries are indexed, flagged, or kept out.
/// Built from the config once and swapped whole when it changes.
pub struct Rules {
    /// The last component of every pattern, except those that are `*`.
    names: PartSet,
    /// The patterns whose last component is `*`, which matches every name:
    /// they are in no set, and only their folder part is checked, once per
    /// folder.
    any_name: Vec<usize>,
    /// The folder parts of split path patterns.
    folders: PartSet,
    patterns: Vec<Pattern>,
    /// The patterns as written, for logs.
    written: Vec<(Verdict, String)>,
    /// Folders excluded by path (the built-in exclusions).
    excluded: HashSet<PathBuf>,
    /// Their parents: only these folders' children are looked up in `excluded`.
    excluded_parents: HashSet<PathBuf>,
    /// Tops of volumes, where `.Trash-UID` (and macOS's `.Trashes`) is trash.
    volume_tops: HashSet<PathBuf>,
    cross_filesystems: bool,
    /// Per-root `one_filesystem`, by canonical root path.
    one_filesystem: HashMap<PathBuf, bool>,
    /// What a name must contain, lowercased, for a WARN pattern to match
    /// it, when every WARN pattern's name is `*text*` (the defaults are
    /// `*password*`, `*token*`, `*secret*`); `None` when one is not.
    warn_needles: Option<Vec<memchr::memmem::Finder<'static>>>,
}

/// `text` for a glob (lowercased) of the form `*text*`, `text` free of
/// glob syntax: such a glob matches exactly the names that contain `text`.
fn contained_literal(glob: &str) -> Option<&str> {
    let text = glob.strip_prefix('*')?.strip_suffix('*')?;
    plain(text).then_some(text)
}

/// Whether glob text `t` is non-empty and has no glob syntax: it matches
/// only itself.
fn plain(t: &str) -> bool {
    !t.is_empty() && !t.contains(['*', '?', '[', ']', '{', '}', '\\'])
}

/// The last component of `path`, from its bytes (trailing separators
/// ignored): what `Path::file_name` gives, without parsing the rest.
fn last_component(path: &Path) -> &[u8] {
    let sep = |b: &u8| *b == b'/' || (cfg!(windows) && *b == b'\\');
    let bytes = path.as_os_str().as_encoded_bytes();
    let end = bytes.iter().rposition(|b| !sep(b)).map_or(0, |i| i + 1);
    let start = bytes[..end].iter().rposition(sep).map_or(0, |i| i + 1);
    &bytes[start..end]
}

impl std::fmt::Debug for Rules {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut excluded: Vec<&PathBuf> = self.excluded.iter().collect();
        excluded.sort();
        f.debug_struct("Rules")
            .field("patterns", &self.written)
            .field("excluded", &excluded)
            .field("cross_filesystems", &self.cross_filesystems)
            .field("one_filesystem", &self.one_filesystem)
            .finish()
    }
}

impl Default for Rules {
    /// Indexes everything, crosses no file system.
    fn default() -> Rules {
        Rules::new(
            &Config {
                default_excludes: Some(false),
                sensitive: crate::config::Sensitive {
                    block: Some(Vec::new()),
                    skip: Some(Vec::new()),
                    warn: Some(Vec::new()),
                },
                ..Config::default()
            },
            None,
            &Environment::default(),
        )
        .expect("no patterns to reject")
    }
}

fn canonical(p: &Path) -> PathBuf {
    fsindex_proto::paths::canonicalize(p).unwrap_or_else(|_| p.to_owned())
}

fn is_volume_trash(name: &OsStr) -> bool {
    let b = name.as_encoded_bytes();
    b == b".Trash"
        || b == b".Trashes"
        || b.strip_prefix(b".Trash-")
            .is_some_and(|uid| !uid.is_empty() && uid.iter().all(u8::is_ascii_digit))
}

impl Rules {
    /// The rules of a running instance: its config, its index folder and
    /// the running system's folders and mounts.
    pub fn from_config(config: &Config, paths: &Paths) -> Result<Rules, Error> {
        Rules::new(config, paths.db.parent(), &Environment::current())
    }

    /// Compiles the rules. A pattern that is not a valid glob is an error
    /// naming the list it is in and why.
    pub fn new(
        config: &Config,
        index_dir: Option<&Path>,
        env: &Environment,
    ) -> Result<Rules, Error> {
        let (block, skip, warn) = (
            config.sensitive.block(),
            config.sensitive.skip(),
            config.sensitive.warn(),
        );
        let sources = [
            Source {
                what: "excludes",
                verdict: Verdict::Exclude,
                patterns: &config.excludes,
                case_insensitive: cfg!(any(target_os = "macos", windows)),
            },
            Source {
                what: "sensitive.block",
                verdict: Verdict::Block,
                patterns: &block,
                case_insensitive: true,
            },
            Source {
                what: "sensitive.skip",
                verdict: Verdict::Skip,
                patterns: &skip,
                case_insensitive: true,
            },
            Source {
                what: "sensitive.warn",
                verdict: Verdict::Warn,
                patterns: &warn,
                case_insensitive: true,
            },
        ];
        let mut names = PartSetBuilder::new();
        let mut any_name = Vec::new();
        let mut folders = PartSetBuilder::new();
        let mut patterns = Vec::new();
        let mut written = Vec::new();
        let mut warn_needles = Some(Vec::new());
        for s in &sources {
            for text in s.patterns {
                let bad = |why: &dyn std::fmt::Display| {
                    Error::InvalidArgument(format!("{}: bad pattern {text:?}: {why}", s.what))
                };
                // Case-insensitive globs are lowercased here and matched
                // against lowercased text (see `PartSet`).
                let glob = |g: &str| {
                    let g = if s.case_insensitive {
                        g.to_lowercase()
                    } else {
                        g.to_owned()
                    };
                    GlobBuilder::new(&g)
                        .literal_separator(true)
                        .backslash_escape(true)
                        .build()
                        .map_err(|e| bad(&e))
                };
                let index = patterns.len();
                let mut add_name = |g: &str| -> Result<(), Error> {
                    if s.verdict == Verdict::Warn {
                        let lower = g.to_lowercase();
                        match (&mut warn_needles, contained_literal(&lower)) {
                            (Some(v), Some(text)) => {
                                v.push(memchr::memmem::Finder::new(text.as_bytes()).into_owned());
                            }
                            (needles, _) => *needles = None,
                        }
                    }
                    if g == "*" || g == "**" {
                        any_name.push(index);
                    } else {
                        names.add(glob(g)?, s.case_insensitive, index);
                    }
                    Ok(())
                };
                let trimmed = text.trim_end_matches('/');
                let dir_only = trimmed.len() < text.len();
                if trimmed.is_empty() {
                    return Err(bad(&"empty"));
                }
                let mut p = Pattern {
                    verdict: s.verdict,
                    dir_only,
                    folder: false,
                    full: None,
                };
                match shape(trimmed) {
                    Shape::Name(name) => add_name(&name)?,
                    Shape::Split { folder, name } => {
                        if name.is_empty() {
                            return Err(bad(&"empty name after `/`"));
                        }
                        add_name(&name)?;
                        folders.add(glob(&folder)?, s.case_insensitive, index);
                        p.folder = true;
                    }
                    Shape::Whole { whole, name } => {
                        add_name(name.as_deref().unwrap_or("*"))?;
                        p.full = Some((glob(&whole)?.compile_matcher(), s.case_insensitive));
                    }
                }
                patterns.push(p);
                written.push((s.verdict, text.clone()));
            }
        }
        let mut excluded = HashSet::new();
        let mut volume_tops = HashSet::new();
        if config.default_excludes.unwrap_or(true) {
            excluded.extend(PSEUDO_DIRS.iter().map(PathBuf::from));
            for (mount_point, fstype) in &env.mounts {
                if is_excluded_fs(fstype) {
                    excluded.insert(mount_point.clone());
                }
                volume_tops.insert(mount_point.clone());
            }
            volume_tops.insert(PathBuf::from("/"));
            if let Some(data) = &env.data_dir {
                excluded.insert(canonical(&data.join("Trash")));
            }
            if let Some(cache) = &env.cache_dir {
                excluded.insert(canonical(cache));
            }
            if cfg!(target_os = "macos")
                && let Some(home) = &env.home
            {
                excluded.insert(canonical(&home.join(".Trash")));
                excluded.insert(canonical(&home.join("Library/Caches")));
            }
            if let Some(dir) = index_dir.filter(|d| !d.as_os_str().is_empty()) {
                excluded.insert(canonical(dir));
            }
        }
        let excluded_parents = excluded
            .iter()
            .filter_map(|p| p.parent().map(Path::to_owned))
            .collect();
        let one_filesystem = config
            .root
            .iter()
            .filter_map(|(root, o)| Some((canonical(root), o.one_filesystem?)))
            .collect();
        Ok(Rules {
            names: names.build()?,
            any_name,
            folders: folders.build()?,
            patterns,
            written,
            excluded,
            excluded_parents,
            volume_tops,
            cross_filesystems: config.cross_filesystems,
            one_filesystem,
            warn_needles,
        })
    }

    /// Whether scans of `root` (canonical) enter other file systems: its
    /// own `one_filesystem` when set, else the global `cross_filesystems`.
    pub fn cross_filesystems(&self, root: &Path) -> bool {
        self.one_filesystem
            .get(root)
            .map_or(self.cross_filesystems, |one| !one)
    }

    /// The folders excluded by path (the built-in exclusions), sorted.
    pub fn excluded_dirs(&self) -> Vec<&Path> {
        let mut v: Vec<&Path> = self.excluded.iter().map(PathBuf::as_path).collect();
        v.sort();
        v
    }

    /// The rules for the children of one folder: what is the same for all
    /// of them is worked out once.
    pub fn folder<'a>(&'a self, dir: &'a Path) -> Folder<'a> {
        Folder {
            rules: self,
            dir,
            folder_hits: OnceCell::new(),
            excluded_children: OnceCell::new(),
        }
    }

    /// The verdict on one entry by its own name and folder (not its
    /// ancestors': see [`Rules::path_verdict`]).
    pub fn verdict(&self, path: &Path, is_dir: bool) -> Verdict {
        match (path.parent(), path.file_name()) {
            (Some(dir), Some(name)) => self.folder(dir).verdict(name, is_dir),
            _ => Verdict::Index,
        }
    }

    /// True when an indexed entry is flagged as sensitive (WARN tier).
    ///
    /// Asked of every result of a search: a name that contains none of the
    /// WARN patterns' texts is answered without parsing its path or
    /// matching the other patterns (a quarter of a large answer's time in
    /// the daemon went there).
    pub fn is_sensitive(&self, path: &Path, is_dir: bool) -> bool {
        if let Some(needles) = &self.warn_needles
            && !with_lowercase(last_component(path), |name| {
                needles.iter().any(|f| f.find(name).is_some())
            })
        {
            return false;
        }
        self.verdict(path, is_dir) == Verdict::Warn
    }

    /// The verdict on `path` under `root`, its folders below the root
    /// included: under a hidden folder, an entry is hidden too (under a
    /// SKIP folder it is SKIP unless it is itself BLOCK or excluded).
    /// `Index` for a path that is not under `root` or has `..` in it.
    pub fn path_verdict(&self, root: &Path, path: &Path, is_dir: bool) -> Verdict {
        let Ok(rest) = path.strip_prefix(root) else {
            return Verdict::Index;
        };
        let comps: Vec<Component<'_>> = rest.components().collect();
        let mut dir = root.to_owned();
        let mut worst = Verdict::Index;
        for (i, c) in comps.iter().enumerate() {
            let Component::Normal(name) = c else {
                return Verdict::Index;
            };
            let last = i + 1 == comps.len();
            let v = self.folder(&dir).verdict(name, is_dir || !last);
            if last || v.hides() {
                worst = worst.max(v);
            }
            if worst > Verdict::Skip {
                return worst;
            }
            dir.push(name);
        }
        worst
    }
}

/// The rules applied to the children of one folder (see [`Rules::folder`]).
pub struct Folder<'a> {
    rules: &'a Rules,
    dir: &'a Path,
    /// Which folder parts of path patterns match `dir`, worked out when a
    /// name first needs it.
    folder_hits: OnceCell<Vec<usize>>,
    /// Whether some child of this folder is excluded by path, looked up
    /// when a folder child first needs it (not for every search result).
    excluded_children: OnceCell<bool>,
}

impl Folder<'_> {
    /// True when pattern `i`'s folder part matches this folder.
    fn folder_matches(&self, i: usize) -> bool {
        self.folder_hits
            .get_or_init(|| {
                let mut hits = Vec::new();
                self.rules
                    .folders
                    .hits(self.dir.as_os_str().as_encoded_bytes(), &mut hits);
                hits
            })
            .contains(&i)
    }

    /// The verdict on the child `name` of this folder.
    pub fn verdict(&self, name: &OsStr, is_dir: bool) -> Verdict {
        let r = self.rules;
        let mut v = Verdict::Index;
        if is_dir
            && ((*self.excluded_children.get_or_init(|| r.excluded_parents.contains(self.dir))
                && r.excluded.contains(&self.dir.join(name)))
                // Looked up only for a trash folder's name: hashing every
                // entry's folder path was a tenth of a large search's time.
                || (is_volume_trash(name) && r.volume_tops.contains(self.dir)))
        {
            v = Verdict::Exclude;
        }
        if r.patterns.is_empty() {
            return v;
        }
        let mut hits = Vec::new();
        r.names.hits(name.as_encoded_bytes(), &mut hits);
        for &i in r.any_name.iter().chain(&hits) {
            let p = &r.patterns[i];
            if p.verdict <= v
                || (p.dir_only && !is_dir)
                || (p.folder && !self.folder_matches(i))
                || p.full.as_ref().is_some_and(|(m, folded)| {
                    let path = self.dir.join(name);
                    let path = path.as_os_str().as_encoded_bytes();
                    !if *folded {
                        with_lowercase(path, |l| m.is_match_candidate(&Candidate::from_bytes(l)))
                    } else {
                        m.is_match_candidate(&Candidate::from_bytes(path))
                    }
                })
            {
                continue;
            }
            v = p.verdict;
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{RootOptions, Sensitive};

    fn rules(excludes: &[&str], block: &[&str], skip: &[&str], warn: &[&str]) -> Rules {
        let list = |l: &[&str]| Some(l.iter().map(|s| s.to_string()).collect());
        let config = Config {
            excludes: excludes.iter().map(|s| s.to_string()).collect(),
            default_excludes: Some(false),
            sensitive: Sensitive {
                block: list(block),
                skip: list(skip),
                warn: list(warn),
            },
            ..Config::default()
        };
        Rules::new(&config, None, &Environment::default()).unwrap()
    }

    fn defaults() -> Rules {
        let config = Config {
            default_excludes: Some(false),
            ..Config::default()
        };
        Rules::new(&config, None, &Environment::default()).unwrap()
    }

    fn file(r: &Rules, p: &str) -> Verdict {
        r.verdict(Path::new(p), false)
    }

    fn dir(r: &Rules, p: &str) -> Verdict {
        r.verdict(Path::new(p), true)
    }

    #[test]
    fn a_name_pattern_matches_the_name_at_any_depth() {
        let r = rules(&["node_modules", "*.tmp"], &[], &[], &[]);
        assert_eq!(dir(&r, "/a/node_modules"), Verdict::Exclude);
        assert_eq!(dir(&r, "/a/b/c/node_modules"), Verdict::Exclude);
        assert_eq!(file(&r, "/a/x.tmp"), Verdict::Exclude);
        assert_eq!(file(&r, "/a/x.tmp.txt"), Verdict::Index);
        assert_eq!(dir(&r, "/a/node_modules2"), Verdict::Index);
        // The name, not the path: a folder name does not make its files match.
        assert_eq!(file(&r, "/a/node_modules/x"), Verdict::Index);
    }

    #[test]
    fn a_path_pattern_matches_the_end_of_the_path() {
        let r = rules(
            &["build/*.o", "a/**/deep"],
            &[".aws/credentials", ".ssh/*"],
            &[],
            &[],
        );
        assert_eq!(file(&r, "/p/build/x.o"), Verdict::Exclude);
        assert_eq!(file(&r, "/p/q/build/x.o"), Verdict::Exclude);
        assert_eq!(file(&r, "/p/build/sub/x.o"), Verdict::Index);
        assert_eq!(file(&r, "/p/x.o"), Verdict::Index);
        assert_eq!(file(&r, "/p/rebuild/x.o"), Verdict::Index);
        assert_eq!(dir(&r, "/r/a/deep"), Verdict::Exclude);
        assert_eq!(dir(&r, "/r/a/b/c/deep"), Verdict::Exclude);
        assert_eq!(dir(&r, "/r/b/c/deep"), Verdict::Index);
        assert_eq!(file(&r, "/home/u/.aws/credentials"), Verdict::Block);
        assert_eq!(file(&r, "/home/u/credentials"), Verdict::Index);
        assert_eq!(file(&r, "/home/u/aws/credentials"), Verdict::Index);
        assert_eq!(file(&r, "/home/u/.ssh/known_hosts"), Verdict::Block);
        assert_eq!(dir(&r, "/home/u/.ssh/sub"), Verdict::Block);
        assert_eq!(dir(&r, "/home/u/.ssh"), Verdict::Index);
        // Below a blocked folder, through its ancestors.
        let root = Path::new("/home/u");
        let deep = Path::new("/home/u/.ssh/sub/key");
        assert_eq!(r.verdict(deep, false), Verdict::Index);
        assert_eq!(r.path_verdict(root, deep, false), Verdict::Block);
    }

    #[test]
    fn a_leading_slash_anchors_the_pattern() {
        let r = rules(&["/data/scratch", "/top"], &[], &[], &[]);
        assert_eq!(dir(&r, "/data/scratch"), Verdict::Exclude);
        assert_eq!(dir(&r, "/x/data/scratch"), Verdict::Index);
        assert_eq!(dir(&r, "/top"), Verdict::Exclude);
        assert_eq!(dir(&r, "/a/top"), Verdict::Index);
    }

    #[test]
    fn a_trailing_slash_matches_folders_only() {
        let r = rules(&["cache/", "out/tmp/"], &[], &[], &[]);
        assert_eq!(dir(&r, "/a/cache"), Verdict::Exclude);
        assert_eq!(file(&r, "/a/cache"), Verdict::Index);
        assert_eq!(dir(&r, "/a/out/tmp"), Verdict::Exclude);
        assert_eq!(file(&r, "/a/out/tmp"), Verdict::Index);
    }

    #[test]
    fn braces_with_a_slash_match_the_whole_path() {
        assert_eq!(
            shape("{.gnupg/*,.ssh/*}"),
            Shape::Whole {
                whole: "**/{.gnupg/*,.ssh/*}".into(),
                name: None
            }
        );
        assert_eq!(
            shape("a/**/b"),
            Shape::Whole {
                whole: "**/a/**/b".into(),
                name: Some("b".into())
            }
        );
        assert_eq!(
            shape("x/{a,b}"),
            Shape::Split {
                folder: "**/x".into(),
                name: "{a,b}".into()
            }
        );
        let r = rules(&[], &["{.gnupg/*,.ssh/*}"], &[], &[]);
        assert_eq!(file(&r, "/h/.gnupg/pubring.kbx"), Verdict::Block);
        assert_eq!(file(&r, "/h/.ssh/config"), Verdict::Block);
        assert_eq!(file(&r, "/h/.config/x"), Verdict::Index);
    }

    #[test]
    fn sensitive_tiers_ignore_case_and_user_excludes_do_not() {
        let r = defaults();
        assert_eq!(file(&r, "/h/ID_RSA"), Verdict::Block);
        assert_eq!(file(&r, "/h/Server.PEM"), Verdict::Block);
        assert_eq!(file(&r, "/h/.AWS/Credentials"), Verdict::Block);
        assert_eq!(file(&r, "/h/.Env"), Verdict::Skip);
        assert_eq!(file(&r, "/h/My_Password.txt"), Verdict::Warn);
        // Names that are not ASCII go through Unicode case folding.
        assert_eq!(file(&r, "/h/ÉTÉ_PASSWORD.txt"), Verdict::Warn);
        let r = rules(&[], &[], &[], &["*mot_de_passé*"]);
        assert_eq!(file(&r, "/h/MOT_DE_PASSÉ.txt"), Verdict::Warn);
        assert_eq!(file(&r, "/h/Mot_De_Passé"), Verdict::Warn);
        assert_eq!(file(&r, "/h/mot_de_passe"), Verdict::Index);
        let r = rules(&["Build"], &[], &[], &[]);
        assert_eq!(dir(&r, "/p/Build"), Verdict::Exclude);
        assert_eq!(
            dir(&r, "/p/build"),
            if cfg!(any(target_os = "macos", windows)) {
                Verdict::Exclude
            } else {
                Verdict::Index
            }
        );
    }

    #[test]
    fn the_default_tiers() {
        let r = defaults();
        for p in [
            "/h/server.pem",
            "/h/a.key",
            "/h/c.p12",
            "/h/c.pfx",
            "/h/id_rsa",
            "/h/id_ed25519",
            "/h/release.keystore",
            "/h/.aws/credentials",
            "/h/.ssh/known_hosts",
            "/h/.ssh/authorized_keys",
        ] {
            assert_eq!(file(&r, p), Verdict::Block, "{p}");
        }
        for p in [
            "/h/.env",
            "/h/.env.local",
            "/h/.npmrc",
            "/h/.pypirc",
            "/h/credentials.json",
            "/h/secrets.yaml",
        ] {
            assert_eq!(file(&r, p), Verdict::Skip, "{p}");
        }
        for p in ["/h/my_password.txt", "/h/api-token", "/h/top_secret.doc"] {
            assert_eq!(file(&r, p), Verdict::Warn, "{p}");
        }
        for p in [
            "/h/id_rsa.pub",
            "/h/keys.txt",
            "/h/environment",
            "/h/.envrc",
        ] {
            assert_eq!(file(&r, p), Verdict::Index, "{p}");
        }
        assert!(r.is_sensitive(Path::new("/h/my_password.txt"), false));
        assert!(!r.is_sensitive(Path::new("/h/.env"), false));
    }

    #[test]
    fn the_quick_sensitive_check_agrees_with_the_verdict() {
        // `is_sensitive` skips the verdict for names that hold none of the
        // WARN texts; it must answer as the verdict does, whatever the
        // WARN patterns look like.
        let sets = [
            defaults(),
            rules(&[], &[], &[], &["*Key*", "*ПАРОЛЬ*"]),
            rules(&[], &[], &[], &["notes/*secret*", "*.kdbx"]),
            rules(&[], &[], &[], &["/h/private/*"]),
            rules(&[], &[], &[], &[]),
        ];
        let paths = [
            "/h/my_password.txt",
            "/h/My_PASSWORD.TXT",
            "/h/api-Token",
            "/h/top_secret.doc",
            "/h/secrets.yaml",
            "/h/notes/a secret",
            "/h/other/a secret",
            "/h/vault.kdbx",
            "/h/private/x",
            "/h/monkey.txt",
            "/h/пароль.txt",
            "/h/ПАРОЛЬ.txt",
            "/h/plain.txt",
            "/h/passwords/",
            "/h/token/inner.txt",
        ];
        for (k, r) in sets.iter().enumerate() {
            for p in paths {
                for is_dir in [false, true] {
                    assert_eq!(
                        r.is_sensitive(Path::new(p), is_dir),
                        r.verdict(Path::new(p), is_dir) == Verdict::Warn,
                        "rule set {k}, {p}, folder {is_dir}"
                    );
                }
            }
        }
        // And as a person reads the default tiers (GUIDE.md, What is
        // indexed): WARN is `*password*`, `*token*`, `*secret*`, any case,
        // for the entry's own name; `secrets*` is SKIP, not WARN.
        let defaults = &sets[0];
        for (p, want) in [
            ("/h/my_password.txt", true),
            ("/h/My_PASSWORD.TXT", true),
            ("/h/api-Token", true),
            ("/h/top_secret.doc", true),
            ("/h/secrets.yaml", false),
            ("/h/token/inner.txt", false),
            ("/h/monkey.txt", false),
            ("/h/plain.txt", false),
        ] {
            assert_eq!(defaults.is_sensitive(Path::new(p), false), want, "{p}");
        }
        assert!(sets[1].is_sensitive(Path::new("/h/monkey.txt"), false));
        assert!(sets[1].is_sensitive(Path::new("/h/пароль.txt"), false));
        assert!(!sets[4].is_sensitive(Path::new("/h/my_password.txt"), false));
        // The quick check is taken where every WARN name is `*text*`.
        assert!(sets[0].warn_needles.is_some() && sets[1].warn_needles.is_some());
        assert!(sets[2].warn_needles.is_none() && sets[3].warn_needles.is_none());
        assert_eq!(last_component(Path::new("/a/b/")), b"b");
        assert_eq!(last_component(Path::new("/")), b"");
        assert_eq!(last_component(Path::new("name")), b"name");
    }

    #[test]
    fn the_strictest_tier_wins() {
        let r = defaults();
        // BLOCK `.aws/credentials` over SKIP `credentials*`; SKIP
        // `secrets*` over WARN `*secret*`.
        assert_eq!(file(&r, "/h/.aws/credentials"), Verdict::Block);
        assert_eq!(file(&r, "/h/secrets.txt"), Verdict::Skip);
        let r = rules(&["*.pem"], &["*.pem"], &[], &[]);
        assert_eq!(file(&r, "/h/x.pem"), Verdict::Block);
    }

    #[test]
    fn under_a_skip_folder_entries_are_skip_unless_stricter() {
        let r = defaults();
        let root = Path::new("/h");
        assert_eq!(
            r.path_verdict(root, Path::new("/h/secrets/a.txt"), false),
            Verdict::Skip
        );
        assert_eq!(
            r.path_verdict(root, Path::new("/h/secrets/id_rsa"), false),
            Verdict::Block
        );
        assert_eq!(
            r.path_verdict(root, Path::new("/h/docs/password.txt"), false),
            Verdict::Warn
        );
        // The root itself and paths outside it are not judged.
        assert_eq!(r.path_verdict(root, root, true), Verdict::Index);
        assert_eq!(
            r.path_verdict(root, Path::new("/other/id_rsa"), false),
            Verdict::Index
        );
    }

    #[test]
    fn bad_patterns_are_rejected_with_their_list() {
        let config = Config {
            excludes: vec!["a[".into()],
            ..Config::default()
        };
        let e = Rules::new(&config, None, &Environment::default()).unwrap_err();
        assert!(
            e.to_string().contains("excludes: bad pattern \"a[\""),
            "{e}"
        );
        let config = Config {
            sensitive: Sensitive {
                warn: Some(vec!["/".into()]),
                ..Sensitive::default()
            },
            ..Config::default()
        };
        let e = Rules::new(&config, None, &Environment::default()).unwrap_err();
        assert!(e.to_string().contains("sensitive.warn"), "{e}");
    }

    #[test]
    fn default_exclusions_by_path_mount_and_volume() {
        let env = Environment {
            home: Some("/nonexistent/home/u".into()),
            cache_dir: Some("/nonexistent/home/u/.cache".into()),
            data_dir: Some("/nonexistent/home/u/.local/share".into()),
            mounts: vec![
                ("/".into(), "ext4".into()),
                ("/nonexistent/home/u/nas".into(), "nfs4".into()),
                ("/nonexistent/home/u/box".into(), "fuse.sshfs".into()),
                ("/nonexistent/home/u/cg".into(), "cgroup2".into()),
                ("/nonexistent/media/usb".into(), "vfat".into()),
            ],
        };
        let config = Config::default();
        let r = Rules::new(&config, Some(Path::new("/nonexistent/idx")), &env).unwrap();
        for p in [
            "/proc",
            "/sys",
            "/dev",
            "/run",
            "/nonexistent/home/u/nas",
            "/nonexistent/home/u/box",
            "/nonexistent/home/u/cg",
            "/nonexistent/home/u/.cache",
            "/nonexistent/home/u/.local/share/Trash",
            "/nonexistent/idx",
            "/nonexistent/media/usb/.Trash-1000",
            "/.Trash-0",
        ] {
            assert_eq!(dir(&r, p), Verdict::Exclude, "{p}");
        }
        for p in [
            "/nonexistent/media/usb/data",
            "/nonexistent/media/usb/x/.Trash-1000",
            "/nonexistent/media/usb/.Trash-x",
            "/nonexistent/home/u/.local/share/other",
            "/nonexistent/home/u/cache",
        ] {
            assert_eq!(dir(&r, p), Verdict::Index, "{p}");
        }
        // Folders by path, not files of the same name.
        assert_eq!(file(&r, "/nonexistent/idx"), Verdict::Index);
        // A root on or under an excluded folder asks for it: only what is
        // below the root is judged.
        let root = Path::new("/nonexistent/home/u/.cache");
        assert_eq!(
            r.path_verdict(root, Path::new("/nonexistent/home/u/.cache/pip/x"), false),
            Verdict::Index
        );
        // Off: all of them come back.
        let off = Config {
            default_excludes: Some(false),
            ..Config::default()
        };
        let r = Rules::new(&off, Some(Path::new("/nonexistent/idx")), &env).unwrap();
        assert!(r.excluded_dirs().is_empty());
        assert_eq!(dir(&r, "/nonexistent/home/u/.cache"), Verdict::Index);
        assert_eq!(dir(&r, "/.Trash-0"), Verdict::Index);
    }

    #[test]
    fn mountinfo_is_parsed_with_escapes() {
        let text = "22 27 0:21 / /proc rw,relatime - proc proc rw\n\
                    27 1 254:0 / / rw,relatime - ext4 /dev/vda rw\n\
                    40 27 0:50 / /mnt/my\\040share rw shared:1 - cifs //nas/x rw\n";
        assert_eq!(
            crate::platform::mounts::parse_mountinfo(text),
            vec![
                (PathBuf::from("/proc"), "proc".to_owned()),
                (PathBuf::from("/"), "ext4".to_owned()),
                (PathBuf::from("/mnt/my share"), "cifs".to_owned()),
            ]
        );
        assert!(is_excluded_fs("nfs4") && is_excluded_fs("cgroup2") && is_excluded_fs("9p"));
        assert!(!is_excluded_fs("ext4") && !is_excluded_fs("tmpfs") && !is_excluded_fs("btrfs"));
    }

    #[test]
    fn per_root_one_filesystem_overrides_the_global_setting() {
        let mut root = std::collections::BTreeMap::new();
        root.insert(
            PathBuf::from("/nonexistent/a"),
            RootOptions {
                one_filesystem: Some(false),
                hashing: None,
                ..RootOptions::default()
            },
        );
        root.insert(PathBuf::from("/nonexistent/b"), RootOptions::default());
        let config = Config {
            root,
            ..Config::default()
        };
        let r = Rules::new(&config, None, &Environment::default()).unwrap();
        assert!(r.cross_filesystems(Path::new("/nonexistent/a")));
        assert!(!r.cross_filesystems(Path::new("/nonexistent/b")));
        assert!(!r.cross_filesystems(Path::new("/nonexistent/c")));
        let config = Config {
            cross_filesystems: true,
            root: [(
                PathBuf::from("/nonexistent/a"),
                RootOptions {
                    one_filesystem: Some(true),
                    hashing: None,
                    ..RootOptions::default()
                },
            )]
            .into(),
            ..Config::default()
        };
        let r = Rules::new(&config, None, &Environment::default()).unwrap();
        assert!(!r.cross_filesystems(Path::new("/nonexistent/a")));
        assert!(r.cross_filesystems(Path::new("/nonexistent/c")));
    }

    #[test]
    #[cfg(unix)]
    fn names_that_are_not_utf8_are_judged_by_their_bytes() {
        use std::os::unix::ffi::OsStrExt;
        let r = defaults();
        let f = r.folder(Path::new("/h"));
        assert_eq!(
            f.verdict(OsStr::from_bytes(b"caf\xe9.pem"), false),
            Verdict::Block
        );
        assert_eq!(
            f.verdict(OsStr::from_bytes(b"caf\xe9.txt"), false),
            Verdict::Index
        );
    }

    /// The prefilter never says no where a glob matches: every glob of
    /// the defaults and of odd shapes, against names made to hit and to
    /// miss each, judged by globset itself (the oracle).
    #[test]
    fn the_prefilter_says_maybe_wherever_a_glob_matches() {
        let globs: Vec<String> = Sensitive::DEFAULT_BLOCK
            .iter()
            .chain(Sensitive::DEFAULT_SKIP)
            .chain(Sensitive::DEFAULT_WARN)
            .map(|g| g.rsplit('/').next().unwrap().to_string())
            .chain(
                [
                    "node_modules",
                    "*.tmp",
                    "~*",
                    "*~",
                    "a*b",
                    "*a*b*",
                    "[ab]c",
                    "x?z",
                    "{foo,bar}.log",
                    "\\*lit",
                    "*.[ch]",
                    "**",
                    "*.",
                    ".*",
                    "*..*",
                    "ümlaut*",
                    "*café*",
                    "a,b",
                    "!x",
                ]
                .map(String::from),
            )
            .filter(|g| g != "*")
            .collect();
        let mut names: Vec<Vec<u8>> = Vec::new();
        for g in &globs {
            let core: String = g.chars().filter(|c| !"*?[]{}\\".contains(*c)).collect();
            for n in [
                core.clone(),
                format!("x{core}"),
                format!("{core}x"),
                format!("x{core}x"),
                core.replace('.', ""),
                core.chars().rev().collect(),
                String::new(),
                "a".into(),
                "ac".into(),
                "xyz".into(),
                "foo.log".into(),
                "file.c".into(),
                "*lit".into(),
                "a.b.c".into(),
                "abb".into(),
            ] {
                names.push(n.into_bytes());
            }
        }
        names.push(b"caf\xe9.pem".to_vec());
        for g in &globs {
            let glob = GlobBuilder::new(g)
                .literal_separator(true)
                .backslash_escape(true)
                .build()
                .unwrap();
            let mut may = MayMatch::default();
            may.add(glob.glob());
            let m = glob.compile_matcher();
            for n in &names {
                if m.is_match_candidate(&Candidate::from_bytes(n)) {
                    assert!(
                        may.may(n),
                        "{g:?} matches {:?} but the prefilter said no",
                        String::from_utf8_lossy(n)
                    );
                }
            }
        }
        // And it does rule names out: the defaults' set says no to an
        // ordinary name, so globset is never asked.
        let mut may = MayMatch::default();
        // (`.ssh/*`'s name part is `*`: no set holds it, as in `Rules::new`.)
        for g in Sensitive::DEFAULT_BLOCK
            .iter()
            .chain(Sensitive::DEFAULT_SKIP)
        {
            let name = g.rsplit('/').next().unwrap();
            if name != "*" {
                may.add(name);
            }
        }
        assert!(!may.every);
        assert!(!may.may(b"holiday photo 2019.jpg"));
        assert!(may.may(b"server.pem"));
    }
}
