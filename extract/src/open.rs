//! Opening a file for extraction, and only a regular one.
//!
//! An indexer reads files it did not create: a FIFO named `notes.txt` would
//! block a plain `open` forever, a device could be endless, and a symlink
//! could lead out of the root. So the type is checked with `lstat` before
//! opening, the open itself cannot block or follow a link
//! (`O_NONBLOCK | O_NOFOLLOW`), and the open file is checked again with
//! `fstat` (the name may have been swapped in between). `O_NOATIME` keeps the
//! indexer from touching access times; the kernel refuses it (EPERM) on files
//! the caller does not own, and then the file is opened without it. The size
//! cap is checked before any byte is read.

use crate::Failure;
use std::fs::File;
use std::path::Path;

/// Opens `path` for reading if it is a regular file of at most `max_size`
/// bytes; returns the file and its size.
pub fn open_regular(path: &Path, max_size: u64) -> Result<(File, u64), Failure> {
    imp::open_regular(path, max_size)
}

fn too_big(size: u64, limit: u64) -> Result<(), Failure> {
    if size > limit {
        Err(Failure::TooBig { size, limit })
    } else {
        Ok(())
    }
}

#[cfg(unix)]
mod imp {
    use super::too_big;
    use crate::Failure;
    use rustix::fs::{FileType, Mode, OFlags};
    use rustix::io::Errno;
    use std::fs::File;
    use std::path::Path;

    fn regular(mode: FileType) -> Result<(), Failure> {
        let what = match mode {
            FileType::RegularFile => return Ok(()),
            FileType::Directory => "directory",
            FileType::Symlink => "symlink",
            FileType::Fifo => "fifo",
            FileType::Socket => "socket",
            FileType::CharacterDevice => "character device",
            FileType::BlockDevice => "block device",
            _ => "unknown type",
        };
        Err(Failure::NotRegular(what.into()))
    }

    fn unreadable(e: Errno) -> Failure {
        Failure::Unreadable(std::io::Error::from(e).to_string())
    }

    pub(super) fn open_regular(path: &Path, max_size: u64) -> Result<(File, u64), Failure> {
        let st = rustix::fs::lstat(path).map_err(unreadable)?;
        regular(FileType::from_raw_mode(st.st_mode))?;
        too_big(st.st_size as u64, max_size)?;
        let flags =
            OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOFOLLOW | OFlags::NOCTTY | OFlags::CLOEXEC;
        let fd = match rustix::fs::open(path, flags | noatime(), Mode::empty()) {
            Err(Errno::PERM) => rustix::fs::open(path, flags, Mode::empty()),
            r => r,
        }
        .map_err(|e| match e {
            // O_NOFOLLOW on a name that became a symlink after the lstat.
            Errno::LOOP => Failure::NotRegular("symlink".into()),
            e => unreadable(e),
        })?;
        let st = rustix::fs::fstat(&fd).map_err(unreadable)?;
        regular(FileType::from_raw_mode(st.st_mode))?;
        let size = st.st_size as u64;
        too_big(size, max_size)?;
        Ok((File::from(fd), size))
    }

    #[cfg(any(target_os = "linux", target_os = "android"))]
    fn noatime() -> OFlags {
        OFlags::NOATIME
    }

    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    fn noatime() -> OFlags {
        OFlags::empty()
    }
}

#[cfg(not(unix))]
mod imp {
    use super::too_big;
    use crate::Failure;
    use std::fs::File;
    use std::path::Path;

    fn regular(m: &std::fs::Metadata) -> Result<(), Failure> {
        let t = m.file_type();
        if t.is_file() {
            Ok(())
        } else if t.is_symlink() {
            Err(Failure::NotRegular("symlink".into()))
        } else if t.is_dir() {
            Err(Failure::NotRegular("directory".into()))
        } else {
            Err(Failure::NotRegular("unknown type".into()))
        }
    }

    pub(super) fn open_regular(path: &Path, max_size: u64) -> Result<(File, u64), Failure> {
        let unreadable = |e: std::io::Error| Failure::Unreadable(e.to_string());
        let m = std::fs::symlink_metadata(path).map_err(unreadable)?;
        regular(&m)?;
        too_big(m.len(), max_size)?;
        let f = File::open(path).map_err(unreadable)?;
        let m = f.metadata().map_err(unreadable)?;
        regular(&m)?;
        too_big(m.len(), max_size)?;
        Ok((f, m.len()))
    }
}

/// Reads at most `max` bytes from the start of `file`.
pub fn read_prefix(file: File, max: u64) -> Result<Vec<u8>, Failure> {
    use std::io::Read;
    let mut buf = Vec::new();
    file.take(max)
        .read_to_end(&mut buf)
        .map_err(|e| Failure::Unreadable(e.to_string()))?;
    Ok(buf)
}
