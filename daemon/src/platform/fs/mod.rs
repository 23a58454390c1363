//! File-system calls that work on paths of any length.
//!
//! The kernel refuses a path of `PATH_MAX` (4096) bytes or more with
//! `ENAMETOOLONG`, yet trees deeper than that are legal and GNU find and du
//! handle them: they walk relative to an open folder (`openat`, `fstatat`)
//! and never hand the kernel a full path. The walker does the same
//! (ingest's scan); the calls here take a full path for everything else
//! (watch events, `info`, hashing) and, when the path is too long for one
//! system call, open its folders one `openat` at a time.
//!
//! Each call is one system call for an ordinary path, so nothing pays for
//! the long-path support until it needs it.
//!
//! One API, a body per OS: `unix` (Linux and macOS: rustix's `openat`
//! family) and `windows` (std's calls, which add the `\\?\` prefix for
//! long paths themselves, and the handle's own file information for what
//! std does not tell: allocation size, file id, link count, change time).
//! An open folder is a [`DirFd`], borrowed as a [`DirRef`]; on Windows
//! these hold the folder's path.

#[cfg(unix)]
mod unix;
#[cfg(unix)]
pub use unix::*;
#[cfg(windows)]
mod windows;
#[cfg(windows)]
pub use windows::*;

/// Paths this long or longer are refused by the kernel in one call.
pub const PATH_MAX: usize = 4096;

/// What kind of entry a path names, as `lstat` tells it. The
/// discriminants are also the codes the index stores in `entries.kind`
/// (`kind as u8`, read back with [`Kind::from_i64`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Kind {
    File = 0,
    Dir = 1,
    Symlink = 2,
    Other = 3,
}

impl Kind {
    pub fn from_i64(v: i64) -> Kind {
        match v {
            0 => Kind::File,
            1 => Kind::Dir,
            2 => Kind::Symlink,
            _ => Kind::Other,
        }
    }

    pub fn from_file_type(ft: std::fs::FileType) -> Kind {
        if ft.is_dir() {
            Kind::Dir
        } else if ft.is_symlink() {
            Kind::Symlink
        } else if ft.is_file() {
            Kind::File
        } else {
            Kind::Other
        }
    }
}

/// What `lstat` says of an entry, in the units the index stores.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stat {
    pub kind: Kind,
    pub size: u64,
    /// 512-byte units, as `st_blocks`.
    pub blocks: u64,
    pub mtime_ns: i64,
    pub ctime_ns: i64,
    pub atime_ns: i64,
    pub dev: u64,
    pub ino: u64,
    pub nlink: u64,
    pub mode: u32,
    pub uid: u32,
    pub gid: u32,
}

impl Stat {
    pub fn is_dir(&self) -> bool {
        self.kind == Kind::Dir
    }
}

/// A folder's entries: each name, and whether it is a folder (`None`: the
/// listing does not say).
pub type Names = Vec<(Vec<u8>, Option<bool>)>;
