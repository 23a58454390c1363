//! The Windows bodies. A folder "handle" is its path: std's calls take
//! long paths (it adds the `\\?\` prefix itself), so nothing needs walking
//! relative to an open folder. What `lstat` gives comes from the file's own
//! handle, opened without following a symlink or junction: the allocation
//! size the file system reports (so `du` counts what NTFS allocated, as
//! `st_blocks` does on Unix), the volume serial number and file index (as
//! `dev` and `ino`), the link count and the change time.

use std::ffi::OsStr;
use std::io;
use std::os::windows::fs::OpenOptionsExt;
use std::os::windows::io::AsRawHandle;
use std::path::{Path, PathBuf};

use windows_sys::Win32::Foundation::HANDLE;
use windows_sys::Win32::Storage::FileSystem::{
    BY_HANDLE_FILE_INFORMATION, FILE_ATTRIBUTE_DIRECTORY, FILE_ATTRIBUTE_READONLY, FILE_BASIC_INFO,
    FILE_FLAG_BACKUP_SEMANTICS, FILE_FLAG_OPEN_REPARSE_POINT, FILE_INFO_BY_HANDLE_CLASS,
    FILE_SHARE_DELETE, FILE_SHARE_READ, FILE_SHARE_WRITE, FILE_STANDARD_INFO, FileBasicInfo,
    FileStandardInfo, GetFileInformationByHandle, GetFileInformationByHandleEx,
};

use super::Kind;
use super::Stat;

/// An open folder: its path (see the module doc).
#[derive(Debug)]
pub struct DirFd(PathBuf);
/// An open folder, borrowed.
#[derive(Clone, Copy, Debug)]
pub struct DirRef<'a>(&'a Path);
/// A folder being listed.
#[derive(Debug)]
pub struct Listing(PathBuf);

/// The open folder behind a listing.
pub fn listing_fd(l: &Listing) -> io::Result<DirRef<'_>> {
    Ok(DirRef(&l.0))
}

/// `d`, borrowed.
pub fn dir_ref(d: &DirFd) -> DirRef<'_> {
    DirRef(&d.0)
}

/// Refused because the path is a symlink (or junction), not followed.
#[derive(Debug)]
struct Symlink;

impl std::fmt::Display for Symlink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a symlink or junction, not followed")
    }
}

impl std::error::Error for Symlink {}

/// True for "not a folder (any more)" or "a symlink where a folder was".
pub fn is_replaced(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::NotADirectory || is_symlink_refused(e)
}

/// True when an open was refused because the path is a symlink.
pub fn is_symlink_refused(e: &io::Error) -> bool {
    e.get_ref().is_some_and(|x| x.is::<Symlink>())
}

/// 100-ns ticks since 1601 (FILETIME) as ns since 1970.
fn filetime_ns(ticks: i64) -> i64 {
    const EPOCH_DIFF: i64 = 116_444_736_000_000_000;
    ticks.saturating_sub(EPOCH_DIFF).saturating_mul(100)
}

/// The file at `path` itself (a symlink or junction is not followed),
/// opened for its metadata only.
fn open_meta(path: &Path) -> io::Result<std::fs::File> {
    std::fs::OpenOptions::new()
        .access_mode(0)
        .share_mode(FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE)
        .custom_flags(FILE_FLAG_BACKUP_SEMANTICS | FILE_FLAG_OPEN_REPARSE_POINT)
        .open(path)
}

/// `GetFileInformationByHandleEx` for one information class, whose
/// output struct is `T`.
///
/// # Safety
/// `T` must be the plain-data struct Windows writes for `class`.
#[allow(unsafe_code)]
unsafe fn info_ex<T>(h: HANDLE, class: FILE_INFO_BY_HANDLE_CLASS) -> io::Result<T> {
    // SAFETY: `out` is a live, writable `T` of the size passed, and the
    // caller vouches that `T` is what `class` writes.
    unsafe {
        let mut out: T = std::mem::zeroed();
        if GetFileInformationByHandleEx(
            h,
            class,
            (&raw mut out).cast(),
            std::mem::size_of::<T>() as u32,
        ) == 0
        {
            return Err(io::Error::last_os_error());
        }
        Ok(out)
    }
}

#[allow(unsafe_code)]
fn stat_handle(f: &std::fs::File) -> io::Result<Stat> {
    let h = f.as_raw_handle() as HANDLE;
    // SAFETY: `h` is an open handle owned by `f` for the duration of the
    // calls; each output struct is plain data of the size passed.
    let (info, basic, standard) = unsafe {
        let mut info: BY_HANDLE_FILE_INFORMATION = std::mem::zeroed();
        if GetFileInformationByHandle(h, &mut info) == 0 {
            return Err(io::Error::last_os_error());
        }
        let basic: FILE_BASIC_INFO = info_ex(h, FileBasicInfo)?;
        let standard: FILE_STANDARD_INFO = info_ex(h, FileStandardInfo)?;
        (info, basic, standard)
    };
    // std tells a symlink or junction from other reparse points (cloud
    // placeholders are files).
    let ft = f.metadata()?.file_type();
    let kind = if ft.is_symlink() {
        Kind::Symlink
    } else if info.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY != 0 {
        Kind::Dir
    } else {
        Kind::File
    };
    let write = if info.dwFileAttributes & FILE_ATTRIBUTE_READONLY != 0 {
        0o444
    } else {
        0o644
    };
    let mode = match kind {
        Kind::Dir => 0o040_755,
        Kind::Symlink => 0o120_777,
        _ => 0o100_000 | write,
    };
    let size = if kind == Kind::Dir {
        0
    } else {
        standard.EndOfFile.max(0) as u64
    };
    Ok(Stat {
        kind,
        size,
        // In 512-byte units, as st_blocks.
        blocks: (standard.AllocationSize.max(0) as u64).div_ceil(512),
        mtime_ns: filetime_ns(basic.LastWriteTime),
        ctime_ns: filetime_ns(basic.ChangeTime),
        atime_ns: filetime_ns(basic.LastAccessTime),
        dev: info.dwVolumeSerialNumber as u64,
        ino: (info.nFileIndexHigh as u64) << 32 | info.nFileIndexLow as u64,
        nlink: info.nNumberOfLinks as u64,
        mode,
        // Windows has SIDs, not uids: machine-wide filtering per user is
        // not offered there.
        uid: 0,
        gid: 0,
    })
}

/// `lstat` of `name` in the folder `dir`.
pub fn lstat_at(dir: DirRef<'_>, name: &OsStr) -> io::Result<Stat> {
    lstat(&dir.0.join(name))
}

/// `fstat` of an open folder.
pub fn fstat(fd: DirRef<'_>) -> io::Result<Stat> {
    lstat(fd.0)
}

/// `fstat` of an open file.
pub fn fstat_file(f: &std::fs::File) -> io::Result<Stat> {
    stat_handle(f)
}

/// Reads exactly `buf.len()` bytes at `offset` (on Windows this moves the
/// file position; callers that mix it with `read` do not rely on it).
pub fn read_exact_at(f: &std::fs::File, mut buf: &mut [u8], mut offset: u64) -> io::Result<()> {
    use std::os::windows::fs::FileExt;
    while !buf.is_empty() {
        match f.seek_read(buf, offset) {
            Ok(0) => return Err(io::Error::from(io::ErrorKind::UnexpectedEof)),
            Ok(n) => {
                buf = &mut buf[n..];
                offset += n as u64;
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Opens the folder `name` in the folder `dir` (not through a symlink).
pub fn open_dir_at(dir: DirRef<'_>, name: &OsStr) -> io::Result<DirFd> {
    open_dir(&dir.0.join(name))
}

/// "Opens" the folder at `path`: checks it is a folder, not a symlink or
/// junction to one.
pub fn open_dir(path: &Path) -> io::Result<DirFd> {
    let m = std::fs::symlink_metadata(path)?;
    if m.file_type().is_symlink() {
        return Err(io::Error::other(Symlink));
    }
    if !m.is_dir() {
        return Err(io::Error::from(io::ErrorKind::NotADirectory));
    }
    Ok(DirFd(path.to_owned()))
}

/// `lstat` of a path.
pub fn lstat(path: &Path) -> io::Result<Stat> {
    stat_handle(&open_meta(path)?)
}

/// True when `path` is a folder (not a symlink to one).
pub fn is_dir(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir() && !m.file_type().is_symlink())
}

/// Opens a file for reading without following a symlink. (No-atime reads:
/// Windows decides itself; NTFS's last-access updates are off or deferred
/// by default.)
pub fn open_file(path: &Path) -> io::Result<std::fs::File> {
    if std::fs::symlink_metadata(path)?.file_type().is_symlink() {
        return Err(io::Error::other(Symlink));
    }
    std::fs::OpenOptions::new()
        .read(true)
        .share_mode(FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE)
        .custom_flags(FILE_FLAG_OPEN_REPARSE_POINT)
        .open(path)
}

/// Opens a file for reading, as [`open_file`], with its metadata.
pub fn open_file_stat(path: &Path) -> io::Result<(std::fs::File, Stat)> {
    let f = open_file(path)?;
    let stat = stat_handle(&f)?;
    Ok((f, stat))
}

/// [`open_file_stat`] of `name` in the open folder `dir`.
pub fn open_file_stat_at(dir: DirRef<'_>, name: &OsStr) -> io::Result<(std::fs::File, Stat)> {
    open_file_stat(&dir.0.join(name))
}

/// The target of a symlink.
pub fn read_link(path: &Path) -> io::Result<Vec<u8>> {
    Ok(std::fs::read_link(path)?
        .into_os_string()
        .into_encoded_bytes())
}

/// The entries of a folder: each name and whether it is a folder.
pub fn list(dir: DirFd) -> io::Result<(super::Names, Listing)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(&dir.0)? {
        let e = e?;
        let is_dir = e.file_type().ok().map(|t| t.is_dir());
        out.push((e.file_name().into_encoded_bytes(), is_dir));
    }
    Ok((out, Listing(dir.0)))
}

/// A name as the OS takes it.
pub fn os(name: &[u8]) -> &OsStr {
    crate::platform::bytes::os(name)
}
