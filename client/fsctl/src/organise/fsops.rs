//! The file-system calls of a reorganisation, one body per OS where they
//! differ. Nothing here ever replaces an entry that exists:
//!
//! - a rename is `renameat2(RENAME_NOREPLACE)` on Linux and
//!   `renameatx_np(RENAME_EXCL)` on macOS (through rustix); where a file
//!   system refuses the flag (EINVAL: some FUSE and network file systems),
//!   a file is moved by `link` then `unlink` (link fails on an existing
//!   name), and a folder by a plain rename after checking that the name is
//!   free (the one racy case, said in the step's `via`);
//! - across file systems (EXDEV) an entry is copied into a temporary name
//!   beside its destination, every file read back and compared by BLAKE3
//!   with what was read from the source, made durable (`fsync` of files
//!   and folders), with mtime, permissions and (where allowed) owner kept,
//!   then renamed into place without replacing, and only then is the
//!   source deleted.

use std::fs::{File, Metadata};
use std::io::{self, Read, Write};
use std::path::Path;

/// How an entry was moved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Via {
    /// renameat2(RENAME_NOREPLACE) / renameatx_np(RENAME_EXCL) (not on
    /// Windows, which has no such flag).
    #[cfg_attr(windows, allow(dead_code))]
    Rename,
    /// link + unlink, where the file system refused the flag.
    Link,
    /// A rename after checking the name is free (folders where the flag is
    /// refused; Windows).
    CheckedRename,
    /// Copied, checked by BLAKE3, then the source deleted.
    Copy,
}

impl Via {
    pub fn name(self) -> &'static str {
        match self {
            Via::Rename => "rename",
            Via::Link => "link",
            Via::CheckedRename => "checked-rename",
            Via::Copy => "copy",
        }
    }
}

/// What identifies an entry and says whether it changed: its inode, size,
/// mtime and ctime (a write, chmod or rename moves ctime).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Fingerprint {
    pub dev: u64,
    pub ino: u64,
    pub size: u64,
    pub mtime_ns: i64,
    pub ctime_ns: i64,
    pub mode: u32,
    pub is_dir: bool,
}

impl Fingerprint {
    #[cfg(unix)]
    pub fn of(m: &Metadata) -> Fingerprint {
        use std::os::unix::fs::MetadataExt;
        Fingerprint {
            dev: m.dev(),
            ino: m.ino(),
            size: m.size(),
            mtime_ns: m.mtime() * 1_000_000_000 + m.mtime_nsec(),
            ctime_ns: m.ctime() * 1_000_000_000 + m.ctime_nsec(),
            mode: m.mode(),
            is_dir: m.is_dir(),
        }
    }

    #[cfg(not(unix))]
    pub fn of(m: &Metadata) -> Fingerprint {
        let ns = |t: io::Result<std::time::SystemTime>| {
            t.ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos() as i64)
        };
        Fingerprint {
            dev: 0,
            ino: 0,
            size: m.len(),
            mtime_ns: ns(m.modified()),
            ctime_ns: 0,
            mode: if m.permissions().readonly() {
                0o444
            } else {
                0o644
            },
            is_dir: m.is_dir(),
        }
    }

    /// Of the entry at `p` itself (a symlink is not followed).
    pub fn at(p: &Path) -> Option<Fingerprint> {
        std::fs::symlink_metadata(p)
            .ok()
            .map(|m| Fingerprint::of(&m))
    }

    /// Is this the same entry, unchanged? Folders by identity only (what is
    /// inside them goes with them); files also by size, mtime and ctime.
    pub fn unchanged(&self, now: &Fingerprint) -> bool {
        let same = self.dev == now.dev && self.ino == now.ino && self.is_dir == now.is_dir;
        if self.is_dir {
            same
        } else {
            same && self.size == now.size
                && self.mtime_ns == now.mtime_ns
                && self.ctime_ns == now.ctime_ns
        }
    }

    /// Why `now` is not this entry any more, in words.
    pub fn change(&self, now: &Fingerprint) -> String {
        if self.dev != now.dev || self.ino != now.ino || self.is_dir != now.is_dir {
            "another file is there now".into()
        } else if self.size != now.size {
            format!("its size changed ({} -> {} bytes)", self.size, now.size)
        } else if self.mtime_ns != now.mtime_ns {
            "it was modified".into()
        } else {
            "its status changed (ctime: permissions, owner, links or a rewrite)".into()
        }
    }
}

/// Renames `from` to `to`, never replacing what is at `to` (EEXIST then).
/// EXDEV when they lie on different file systems.
pub fn rename_noreplace(from: &Path, to: &Path) -> io::Result<Via> {
    #[cfg(any(target_os = "linux", target_os = "android", target_os = "macos"))]
    {
        use rustix::fs::{CWD, RenameFlags, renameat_with};
        match renameat_with(CWD, from, CWD, to, RenameFlags::NOREPLACE) {
            Ok(()) => return Ok(Via::Rename),
            Err(e)
                if e == rustix::io::Errno::INVAL
                    || e == rustix::io::Errno::NOSYS
                    || e == rustix::io::Errno::NOTSUP =>
            {
                // The file system does not take the flag: below.
            }
            Err(e) => return Err(e.into()),
        }
    }
    let m = std::fs::symlink_metadata(from)?;
    if !m.is_dir() {
        std::fs::hard_link(from, to)?;
        std::fs::remove_file(from)?;
        return Ok(Via::Link);
    }
    if std::fs::symlink_metadata(to).is_ok() {
        return Err(io::Error::from(io::ErrorKind::AlreadyExists));
    }
    std::fs::rename(from, to)?;
    Ok(Via::CheckedRename)
}

/// Is `e` "on another file system"?
pub fn is_cross_device(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::CrossesDevices
}

/// Makes what was written in `dir` (names made or removed) durable.
pub fn sync_dir(dir: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        File::open(dir)?.sync_all()
    }
    #[cfg(not(unix))]
    {
        let _ = dir;
        Ok(())
    }
}

/// Sets the mtime of `p` itself (a symlink's own), leaving atime alone.
pub fn set_mtime(p: &Path, mtime_ns: i64) -> io::Result<()> {
    #[cfg(unix)]
    {
        use rustix::fs::{AtFlags, CWD, Timespec, Timestamps, UTIME_OMIT, utimensat};
        let t = Timestamps {
            last_access: Timespec {
                tv_sec: 0,
                tv_nsec: UTIME_OMIT,
            },
            last_modification: Timespec {
                tv_sec: mtime_ns.div_euclid(1_000_000_000),
                tv_nsec: mtime_ns.rem_euclid(1_000_000_000) as _,
            },
        };
        utimensat(CWD, p, &t, AtFlags::SYMLINK_NOFOLLOW).map_err(io::Error::from)
    }
    #[cfg(not(unix))]
    {
        let t = std::time::UNIX_EPOCH + std::time::Duration::from_nanos(mtime_ns.max(0) as u64);
        File::options()
            .write(true)
            .open(p)?
            .set_times(std::fs::FileTimes::new().set_modified(t))
    }
}

/// Mode bits (permissions) of `to` set to those of `m`; on Unix also the
/// owner where this user may set it (root), silently kept otherwise.
fn keep_mode_and_owner(to: &Path, m: &Metadata) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if !m.file_type().is_symlink() {
            std::fs::set_permissions(to, m.permissions())?;
        }
        let _ = std::os::unix::fs::lchown(to, Some(m.uid()), Some(m.gid()));
        Ok(())
    }
    #[cfg(not(unix))]
    {
        if !m.file_type().is_symlink() {
            std::fs::set_permissions(to, m.permissions())?;
        }
        Ok(())
    }
}

/// BLAKE3 of a file's content.
pub fn hash_file(p: &Path) -> io::Result<[u8; 32]> {
    let mut f = File::open(p)?;
    let mut h = blake3::Hasher::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(*h.finalize().as_bytes())
}

fn other(msg: String) -> io::Error {
    io::Error::other(msg)
}

/// Copies one file to `to` (which must not exist), durable, checked: the
/// copy is read back and its BLAKE3 compared with the source's as read,
/// and the source must not have changed meanwhile. Returns the hash.
fn copy_file_checked(from: &Path, to: &Path, m: &Metadata) -> io::Result<[u8; 32]> {
    let before = Fingerprint::of(m);
    let mut src = File::open(from)?;
    let mut dst = File::options().write(true).create_new(true).open(to)?;
    let mut h = blake3::Hasher::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = src.read(&mut buf)?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
        dst.write_all(&buf[..n])?;
    }
    let hash = *h.finalize().as_bytes();
    dst.sync_all()?;
    drop(dst);
    let after = Fingerprint::of(&src.metadata()?);
    if !before.unchanged(&after) {
        return Err(other(format!(
            "{}: changed while it was copied ({})",
            from.display(),
            before.change(&after)
        )));
    }
    if hash_file(to)? != hash {
        return Err(other(format!(
            "{}: the copy read back differs from the source (BLAKE3)",
            to.display()
        )));
    }
    keep_mode_and_owner(to, m)?;
    set_mtime(to, before.mtime_ns)?;
    File::open(to)?.sync_all()?;
    Ok(hash)
}

/// Copies `from` (a file, a symlink or a whole folder) to `to`, which must
/// not exist, checked and durable as the module says. Returns the file's
/// hash (None for a folder or a symlink).
pub fn copy_checked(from: &Path, to: &Path) -> io::Result<Option<[u8; 32]>> {
    let m = std::fs::symlink_metadata(from)?;
    let ft = m.file_type();
    if ft.is_file() {
        return copy_file_checked(from, to, &m).map(Some);
    }
    if ft.is_symlink() {
        copy_symlink(from, to)?;
        keep_mode_and_owner(to, &m)?;
        set_mtime(to, Fingerprint::of(&m).mtime_ns)?;
        return Ok(None);
    }
    if !ft.is_dir() {
        return Err(other(format!(
            "{}: a special file (FIFO, socket or device) is not copied across file systems",
            from.display()
        )));
    }
    std::fs::create_dir(to)?;
    for e in std::fs::read_dir(from)? {
        let e = e?;
        copy_checked(&e.path(), &to.join(e.file_name()))?;
    }
    keep_mode_and_owner(to, &m)?;
    sync_dir(to)?;
    set_mtime(to, Fingerprint::of(&m).mtime_ns)?;
    Ok(None)
}

#[cfg(unix)]
fn copy_symlink(from: &Path, to: &Path) -> io::Result<()> {
    std::os::unix::fs::symlink(std::fs::read_link(from)?, to)
}

#[cfg(not(unix))]
fn copy_symlink(from: &Path, _to: &Path) -> io::Result<()> {
    Err(other(format!(
        "{}: symlinks are not copied across file systems here",
        from.display()
    )))
}

/// Removes `p` whatever it is (a folder with everything in it); gone
/// already is fine.
pub fn remove_all(p: &Path) -> io::Result<()> {
    match std::fs::symlink_metadata(p) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
        Ok(m) if m.is_dir() => std::fs::remove_dir_all(p),
        Ok(_) => std::fs::remove_file(p),
    }
}

/// Is the folder `p` empty? None when it is not a readable folder.
pub fn is_empty_dir(p: &Path) -> Option<bool> {
    std::fs::read_dir(p).ok().map(|mut d| d.next().is_none())
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn rename_never_replaces() {
        let tmp = tempfile::tempdir().unwrap();
        let a = tmp.path().join("a");
        let b = tmp.path().join("b");
        std::fs::write(&a, b"a").unwrap();
        std::fs::write(&b, b"b").unwrap();
        let e = rename_noreplace(&a, &b).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::AlreadyExists);
        assert_eq!(std::fs::read(&b).unwrap(), b"b");
        assert_eq!(
            rename_noreplace(&a, &tmp.path().join("c")).unwrap(),
            Via::Rename
        );
    }

    #[test]
    fn a_folder_is_copied_whole_with_its_mtimes() {
        let tmp = tempfile::tempdir().unwrap();
        let src = tmp.path().join("src");
        std::fs::create_dir_all(src.join("sub")).unwrap();
        std::fs::write(src.join("sub/f"), b"hello").unwrap();
        std::os::unix::fs::symlink("sub/f", src.join("link")).unwrap();
        set_mtime(&src.join("sub/f"), 1_000_000_000_123).unwrap();
        set_mtime(&src.join("sub"), 2_000_000_000_000).unwrap();
        let dst = tmp.path().join("dst");
        copy_checked(&src, &dst).unwrap();
        assert_eq!(std::fs::read(dst.join("sub/f")).unwrap(), b"hello");
        assert_eq!(
            std::fs::read_link(dst.join("link")).unwrap(),
            Path::new("sub/f")
        );
        assert_eq!(
            Fingerprint::at(&dst.join("sub/f")).unwrap().mtime_ns,
            1_000_000_000_123
        );
        assert_eq!(
            Fingerprint::at(&dst.join("sub")).unwrap().mtime_ns,
            2_000_000_000_000
        );
        assert!(
            copy_checked(&src, &dst).is_err(),
            "never into an existing name"
        );
    }
}
