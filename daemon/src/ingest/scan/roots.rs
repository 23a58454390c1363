//! Where a root is and what a walk of it reaches: a root's canonical
//! path, and whether a path under it lies through a symlink or beyond the
//! root's file system.

use std::path::{Path, PathBuf};

use crate::Error;
use crate::platform::fs as pfs;
use crate::store::Kind;

/// True when a walk of `root` would reach `path`: every folder between
/// them is a real folder (not a symlink) and, unless `cross_filesystems`,
/// on the root's file system, as is `path` itself when it is a folder.
/// What is answered about paths the index does not hold (the SKIP tier)
/// goes no further than a scan would.
pub fn reachable(root: &Path, path: &Path, cross_filesystems: bool) -> bool {
    let (Ok(root_meta), Ok(rest)) = (pfs::lstat(root), path.strip_prefix(root)) else {
        return false;
    };
    let root_dev = root_meta.dev;
    let mut at = root.to_owned();
    let comps: Vec<std::path::Component<'_>> = rest.components().collect();
    for (i, c) in comps.iter().enumerate() {
        let std::path::Component::Normal(name) = c else {
            return false;
        };
        at.push(name);
        let last = i + 1 == comps.len();
        match pfs::lstat(&at) {
            Ok(m) if m.is_dir() => {
                if !cross_filesystems && m.dev != root_dev {
                    return false;
                }
            }
            Ok(_) if last => {}
            _ => return false,
        }
    }
    true
}

/// True when a folder on the way from `root` down to `path` (or `path`
/// itself) is a symlink: a walk started at `path` would leave the root.
pub fn through_symlink(root: &Path, path: &Path) -> bool {
    let Ok(rest) = path.strip_prefix(root) else {
        return false;
    };
    let mut at = root.to_owned();
    for c in rest.components() {
        at.push(c);
        match pfs::lstat(&at) {
            Ok(m) if m.kind == Kind::Symlink => return true,
            Ok(_) => {}
            // Nothing is below what is not there: a made-up path of 40,000
            // parts was looked at 40,000 times over (each `lstat` of a path
            // past PATH_MAX walks it part by part), 4-7 s per call.
            Err(_) => return false,
        }
    }
    false
}

/// Canonical absolute form of a root path.
pub fn canonical_root(path: &Path) -> Result<PathBuf, Error> {
    let p = fsindex_proto::paths::canonicalize(path).map_err(|e| {
        Error::InvalidArgument(format!("cannot use {} as a root: {e}", path.display()))
    })?;
    if !p.is_dir() {
        return Err(Error::InvalidArgument(format!(
            "cannot use {} as a root: not a folder",
            path.display()
        )));
    }
    Ok(p)
}
