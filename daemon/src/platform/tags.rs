//! Tags other programs keep on a file, in the file system itself.
//!
//! Linux: the `user.xdg.tags` extended attribute, a comma-separated list
//! (KDE Dolphin and Baloo write it; `setfattr -n user.xdg.tags -v a,b F`).
//! macOS: Finder tags, in `com.apple.metadata:_kMDItemUserTags`, a binary
//! property list decoded by [`super::finder_tags`]. Windows has no
//! equivalent.

use std::path::Path;

/// The extended attribute read on Linux.
pub const XDG_TAGS: &str = "user.xdg.tags";

/// Whether the tags read from files here are Finder's (macOS), not
/// `user.xdg.tags`: how they are shown.
pub const FINDER: bool = cfg!(target_os = "macos");

/// The attribute read on this system.
#[cfg(any(target_os = "linux", target_os = "macos"))]
const ATTRIBUTE: &str = if FINDER {
    super::finder_tags::ATTRIBUTE
} else {
    XDG_TAGS
};

/// At most this many bytes of the attribute are read.
#[cfg(any(target_os = "linux", target_os = "macos"))]
const MAX_BYTES: usize = 64 * 1024;

/// The tags written on the entry at `path` (not following a final
/// symlink), as written, in order, without empty ones; none when it has
/// none or they cannot be read (no such attribute, a file system without
/// user attributes, a path too long for one system call, gone meanwhile).
pub fn file_tags(path: &Path) -> Vec<String> {
    match raw(path) {
        Some(b) => parse(&b),
        None => Vec::new(),
    }
}

/// `user.xdg.tags`: comma-separated.
#[cfg(not(target_os = "macos"))]
fn parse(b: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(b)
        .split(',')
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(str::to_owned)
        .collect()
}

/// Finder's: a binary property list of "Name\nColour" strings.
#[cfg(target_os = "macos")]
fn parse(b: &[u8]) -> Vec<String> {
    super::finder_tags::decode(b)
        .unwrap_or_default()
        .into_iter()
        .map(|t| t.name)
        .collect()
}

#[cfg(any(target_os = "linux", target_os = "macos"))]
fn raw(path: &Path) -> Option<Vec<u8>> {
    let mut buf = Vec::with_capacity(256);
    match rustix::fs::lgetxattr(path, ATTRIBUTE, rustix::buffer::spare_capacity(&mut buf)) {
        Ok(_) => Some(buf),
        // Longer than the first try: ask for its size, then read it.
        Err(rustix::io::Errno::RANGE) => {
            let n = rustix::fs::lgetxattr_query(path, ATTRIBUTE).ok()?;
            let mut buf = Vec::with_capacity(n.min(MAX_BYTES));
            rustix::fs::lgetxattr(path, ATTRIBUTE, rustix::buffer::spare_capacity(&mut buf))
                .ok()?;
            Some(buf)
        }
        Err(_) => None,
    }
}

#[cfg(not(any(target_os = "linux", target_os = "macos")))]
fn raw(_path: &Path) -> Option<Vec<u8>> {
    None
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn reads_the_attribute_kde_writes() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("f");
        std::fs::write(&f, b"x").unwrap();
        assert!(file_tags(&f).is_empty());
        // A file system without user attributes (tmpfs on old kernels):
        // nothing to test.
        if rustix::fs::lsetxattr(
            &f,
            XDG_TAGS,
            b"Work, 2025,,holiday photos",
            rustix::fs::XattrFlags::empty(),
        )
        .is_err()
        {
            return;
        }
        assert_eq!(file_tags(&f), ["Work", "2025", "holiday photos"]);
        assert!(file_tags(&dir.path().join("missing")).is_empty());
    }
}
