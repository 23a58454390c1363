//! The Unix bodies: `openat`, `fstatat` and `getdents` through rustix.

use std::ffi::OsStr;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::io::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Component, Path};

use rustix::fs::{AtFlags, CWD, Dir, FileType, Mode, OFlags};

use super::Kind;
use super::{Names, PATH_MAX, Stat};

/// An open folder.
pub type DirFd = OwnedFd;
/// An open folder, borrowed.
pub type DirRef<'a> = BorrowedFd<'a>;
/// A folder being listed (it stays open for its children).
pub type Listing = Dir;

/// The open folder behind a listing.
pub fn listing_fd(l: &Listing) -> io::Result<DirRef<'_>> {
    Ok(l.fd()?)
}

/// `d`, borrowed.
pub fn dir_ref(d: &DirFd) -> DirRef<'_> {
    d.as_fd()
}

/// True for "not a folder (any more)" or "a symlink where a folder was":
/// what opening a folder that was just replaced gives.
pub fn is_replaced(e: &io::Error) -> bool {
    e.raw_os_error() == Some(libc::ENOTDIR) || e.raw_os_error() == Some(libc::ELOOP)
}

/// True when an open was refused because the path is a symlink.
pub fn is_symlink_refused(e: &io::Error) -> bool {
    e.raw_os_error() == Some(libc::ELOOP)
}

fn ns(secs: i64, nsec: i64) -> i64 {
    secs.saturating_mul(1_000_000_000).saturating_add(nsec)
}

#[allow(clippy::unnecessary_cast, clippy::useless_conversion)] // field types differ per target
fn from_raw(s: &rustix::fs::Stat) -> Stat {
    let ft = FileType::from_raw_mode(s.st_mode as _);
    Stat {
        kind: match ft {
            FileType::Directory => Kind::Dir,
            FileType::Symlink => Kind::Symlink,
            FileType::RegularFile => Kind::File,
            _ => Kind::Other,
        },
        size: s.st_size as u64,
        blocks: s.st_blocks as u64,
        mtime_ns: ns(s.st_mtime as i64, s.st_mtime_nsec as i64),
        ctime_ns: ns(s.st_ctime as i64, s.st_ctime_nsec as i64),
        atime_ns: ns(s.st_atime as i64, s.st_atime_nsec as i64),
        dev: s.st_dev as u64,
        ino: s.st_ino as u64,
        nlink: s.st_nlink as u64,
        mode: s.st_mode as u32,
        uid: s.st_uid as u32,
        gid: s.st_gid as u32,
    }
}

/// Flags for opening a folder to list or to walk from: never through a
/// symlink, never blocking on a FIFO that replaced it.
fn dir_flags() -> OFlags {
    OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK
}

/// `lstat` of `name` in the open folder `dir`.
pub fn lstat_at(dir: BorrowedFd<'_>, name: &OsStr) -> io::Result<Stat> {
    Ok(from_raw(&rustix::fs::statat(
        dir,
        name,
        AtFlags::SYMLINK_NOFOLLOW,
    )?))
}

/// `fstat` of an open file or folder.
pub fn fstat(fd: BorrowedFd<'_>) -> io::Result<Stat> {
    Ok(from_raw(&rustix::fs::fstat(fd)?))
}

/// `fstat` of an open file.
pub fn fstat_file(f: &std::fs::File) -> io::Result<Stat> {
    fstat(f.as_fd())
}

/// Reads exactly `buf.len()` bytes at `offset` (the file position is not used).
pub fn read_exact_at(f: &std::fs::File, buf: &mut [u8], offset: u64) -> io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(f, buf, offset)
}

/// Opens the folder `name` in the open folder `dir` (not through a symlink).
pub fn open_dir_at(dir: BorrowedFd<'_>, name: &OsStr) -> io::Result<OwnedFd> {
    Ok(rustix::fs::openat(dir, name, dir_flags(), Mode::empty())?)
}

/// Runs `f` on a folder handle and a name that together designate `path`:
/// the current folder and the path itself when it fits in one system call,
/// else its parent opened component by component.
fn at<T>(path: &Path, f: impl FnOnce(BorrowedFd<'_>, &OsStr) -> io::Result<T>) -> io::Result<T> {
    if path.as_os_str().len() < PATH_MAX {
        return f(CWD, path.as_os_str());
    }
    let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
        return Err(io::Error::from(io::ErrorKind::InvalidInput));
    };
    let dir = open_dir(parent)?;
    f(dir.as_fd(), name)
}

/// Opens the folder at `path`, of any length. The last component is never
/// followed if it is a symlink; a long path's folders are opened one at a
/// time below the longest prefix that fits in one call.
pub fn open_dir(path: &Path) -> io::Result<OwnedFd> {
    if path.as_os_str().len() < PATH_MAX {
        return Ok(rustix::fs::openat(CWD, path, dir_flags(), Mode::empty())?);
    }
    let mut comps = path.components().peekable();
    let mut prefix = std::path::PathBuf::new();
    while let Some(c) = comps.peek() {
        let len = prefix.as_os_str().len() + c.as_os_str().len() + 1;
        if len >= PATH_MAX && !prefix.as_os_str().is_empty() {
            break;
        }
        prefix.push(c);
        comps.next();
    }
    let mut fd = rustix::fs::openat(CWD, &prefix, dir_flags(), Mode::empty())?;
    for c in comps {
        let Component::Normal(name) = c else {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "a long path must be absolute and plain (no `.` or `..`)",
            ));
        };
        fd = open_dir_at(fd.as_fd(), name)?;
    }
    Ok(fd)
}

/// `lstat` of a path of any length.
pub fn lstat(path: &Path) -> io::Result<Stat> {
    at(path, lstat_at)
}

/// True when `path` is a folder (not a symlink to one).
pub fn is_dir(path: &Path) -> bool {
    lstat(path).is_ok_and(|s| s.is_dir())
}

/// Opens a file of any path length for reading, without following a
/// symlink, without blocking on a FIFO, and without updating its access time
/// where the caller may ask that.
pub fn open_file(path: &Path) -> io::Result<std::fs::File> {
    let base = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK;
    let fd = at(path, |dir, name| {
        #[cfg(any(target_os = "linux", target_os = "android"))]
        match rustix::fs::openat(dir, name, base | OFlags::NOATIME, Mode::empty()) {
            // O_NOATIME is only for the file's owner (or root).
            Err(rustix::io::Errno::PERM) => {}
            other => return Ok(other?),
        }
        Ok(rustix::fs::openat(dir, name, base, Mode::empty())?)
    })?;
    // Reads block as usual from here on.
    rustix::fs::fcntl_setfl(&fd, rustix::fs::fcntl_getfl(&fd)? - OFlags::NONBLOCK)?;
    Ok(std::fs::File::from(fd))
}

/// Opens a file of any path length for reading, as [`open_file`], and
/// `fstat`s it: the way to read many small files in the fewest system
/// calls (open, fstat, read, close). A regular file stays open with
/// `O_NONBLOCK`, which reads of regular files ignore; anything else is
/// returned with reads blocking as usual.
pub fn open_file_stat(path: &Path) -> io::Result<(std::fs::File, Stat)> {
    at(path, open_file_stat_at)
}

/// [`open_file_stat`] of `name` in the open folder `dir`: one component to
/// look up instead of the whole path, for the files of one folder.
pub fn open_file_stat_at(dir: BorrowedFd<'_>, name: &OsStr) -> io::Result<(std::fs::File, Stat)> {
    let base = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK;
    let fd = (|| {
        #[cfg(any(target_os = "linux", target_os = "android"))]
        match rustix::fs::openat(dir, name, base | OFlags::NOATIME, Mode::empty()) {
            // O_NOATIME is only for the file's owner (or root).
            Err(rustix::io::Errno::PERM) => {}
            other => return other,
        }
        rustix::fs::openat(dir, name, base, Mode::empty())
    })()?;
    let stat = fstat(fd.as_fd())?;
    if stat.kind != Kind::File {
        rustix::fs::fcntl_setfl(&fd, rustix::fs::fcntl_getfl(&fd)? - OFlags::NONBLOCK)?;
    }
    Ok((std::fs::File::from(fd), stat))
}

/// The target of a symlink at a path of any length.
pub fn read_link(path: &Path) -> io::Result<Vec<u8>> {
    at(path, |dir, name| {
        Ok(rustix::fs::readlinkat(dir, name, Vec::new())?.into_bytes())
    })
}

/// The entries of an open folder (without `.` and `..`): each name and
/// whether the folder listing says it is a folder (`None`: it does not
/// say, ask `lstat`). The folder handle is consumed.
pub fn list(dir: OwnedFd) -> io::Result<(Names, Dir)> {
    let mut d = Dir::new(dir)?;
    let mut out = Vec::new();
    while let Some(e) = d.read() {
        let e = e?;
        let name = e.file_name().to_bytes();
        if name == b"." || name == b".." {
            continue;
        }
        let is_dir = match e.file_type() {
            FileType::Unknown => None,
            t => Some(t == FileType::Directory),
        };
        out.push((name.to_vec(), is_dir));
    }
    Ok((out, d))
}

/// A name as the OS takes it.
pub fn os(name: &[u8]) -> &OsStr {
    OsStr::from_bytes(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A chain of folders deeper than PATH_MAX, made with relative steps
    /// (as `mkdir -p` cannot in one call).
    fn deep_chain(top: &Path, levels: usize) -> std::path::PathBuf {
        let seg = "d".repeat(50);
        let mut fd = open_dir(top).unwrap();
        let mut path = top.to_owned();
        for _ in 0..levels {
            rustix::fs::mkdirat(&fd, seg.as_str(), Mode::from_raw_mode(0o755)).unwrap();
            fd = open_dir_at(fd.as_fd(), OsStr::new(&seg)).unwrap();
            path.push(&seg);
        }
        let file = rustix::fs::openat(
            &fd,
            "leaf.txt",
            OFlags::CREATE | OFlags::WRONLY,
            Mode::from_raw_mode(0o644),
        )
        .unwrap();
        rustix::io::write(&file, b"hello").unwrap();
        path.push("leaf.txt");
        path
    }

    #[test]
    fn paths_longer_than_path_max_are_stat_opened_and_read() {
        let t = tempfile::tempdir().unwrap();
        let leaf = deep_chain(t.path(), 120);
        assert!(
            leaf.as_os_str().len() > PATH_MAX,
            "the test needs a long path"
        );
        assert_eq!(
            std::fs::symlink_metadata(&leaf).unwrap_err().raw_os_error(),
            Some(libc::ENAMETOOLONG),
            "std refuses it, so the test proves something"
        );
        let s = lstat(&leaf).unwrap();
        assert_eq!((s.kind, s.size), (Kind::File, 5));
        assert!(is_dir(leaf.parent().unwrap()));
        let mut text = String::new();
        std::io::Read::read_to_string(&mut open_file(&leaf).unwrap(), &mut text).unwrap();
        assert_eq!(text, "hello");
        let (names, _) = list(open_dir(leaf.parent().unwrap()).unwrap()).unwrap();
        assert_eq!(names, vec![(b"leaf.txt".to_vec(), Some(false))]);
        // Opened with its state, by the whole path or in its folder.
        let (mut f, s) = open_file_stat(&leaf).unwrap();
        assert_eq!(
            (s.kind, s.size, s.ino),
            (Kind::File, 5, lstat(&leaf).unwrap().ino)
        );
        let mut text = String::new();
        std::io::Read::read_to_string(&mut f, &mut text).unwrap();
        assert_eq!(text, "hello");
        let dir = open_dir(leaf.parent().unwrap()).unwrap();
        let (_, at) = open_file_stat_at(dir.as_fd(), OsStr::new("leaf.txt")).unwrap();
        assert_eq!(at.ino, s.ino);
    }

    #[test]
    fn open_file_does_not_follow_a_symlink_or_block_on_a_fifo() {
        let t = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink("/etc/hostname", t.path().join("link")).unwrap();
        assert!(open_file(&t.path().join("link")).is_err());
        let fifo = t.path().join("fifo");
        assert!(
            std::process::Command::new("mkfifo")
                .arg(&fifo)
                .status()
                .unwrap()
                .success()
        );
        // Opening returns at once (no writer needed); reading finds nothing.
        let mut f = open_file(&fifo).unwrap();
        let mut buf = [0u8; 4];
        assert!(matches!(
            std::io::Read::read(&mut f, &mut buf),
            Ok(0) | Err(_)
        ));
        // The same with its state: a symlink refused, a FIFO said to be
        // one (and not waited on).
        assert!(is_symlink_refused(
            &open_file_stat(&t.path().join("link")).unwrap_err()
        ));
        let (_, s) = open_file_stat(&fifo).unwrap();
        assert_eq!(s.kind, Kind::Other);
    }
}
