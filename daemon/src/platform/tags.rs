//! Tags other programs keep on a file, in the file system itself.
//!
//! Linux: the `user.xdg.tags` extended attribute, a comma-separated list
//! (KDE Dolphin and Baloo write it; `setfattr -n user.xdg.tags -v a,b F`).
//! macOS keeps Finder tags in `com.apple.metadata:_kMDItemUserTags`, a
//! binary property list: not read yet (no plist parser here), so no tags
//! there. Windows has no equivalent.

use std::path::Path;

/// The extended attribute read on Linux.
pub const XDG_TAGS: &str = "user.xdg.tags";

/// At most this many bytes of the attribute are read.
#[cfg(target_os = "linux")]
const MAX_BYTES: usize = 64 * 1024;

/// The tags written on the entry at `path` (not following a final
/// symlink), as written, in order, without empty ones; none when it has
/// none or they cannot be read (no such attribute, a file system without
/// user attributes, a path too long for one system call, gone meanwhile).
pub fn file_tags(path: &Path) -> Vec<String> {
    match raw(path) {
        Some(b) => String::from_utf8_lossy(&b)
            .split(',')
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .map(str::to_owned)
            .collect(),
        None => Vec::new(),
    }
}

#[cfg(target_os = "linux")]
fn raw(path: &Path) -> Option<Vec<u8>> {
    let mut buf = Vec::with_capacity(256);
    match rustix::fs::lgetxattr(path, XDG_TAGS, rustix::buffer::spare_capacity(&mut buf)) {
        Ok(_) => Some(buf),
        // Longer than the first try: ask for its size, then read it.
        Err(rustix::io::Errno::RANGE) => {
            let n = rustix::fs::lgetxattr_query(path, XDG_TAGS).ok()?;
            let mut buf = Vec::with_capacity(n.min(MAX_BYTES));
            rustix::fs::lgetxattr(path, XDG_TAGS, rustix::buffer::spare_capacity(&mut buf)).ok()?;
            Some(buf)
        }
        Err(_) => None,
    }
}

#[cfg(not(target_os = "linux"))]
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
