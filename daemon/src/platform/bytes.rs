//! Paths as bytes. The index stores every path as the bytes the operating
//! system gave (a name need not be UTF-8), and these are the only
//! conversions between those bytes and `Path`.
//!
//! On Unix the bytes are the path's own; on Windows they are the
//! `OsStr`'s encoded bytes (WTF-8), which round-trip exactly.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

/// The separator put between a folder's path and a child's name (a root's
/// own entry holds its whole path; every other entry holds one name).
pub const SEP: u8 = if cfg!(windows) { b'\\' } else { b'/' };

/// Appends `name` to the folder path `path`, with [`SEP`] between unless
/// `path` already ends in one (a root at `/` or `C:\\`).
pub fn push_name(path: &mut Vec<u8>, name: &[u8]) {
    if path.last() != Some(&SEP) {
        path.push(SEP);
    }
    path.extend_from_slice(name);
}

/// The path of the child `name` of the folder at `path`.
pub fn child(path: &[u8], name: &[u8]) -> Vec<u8> {
    let mut p = Vec::with_capacity(path.len() + 1 + name.len());
    p.extend_from_slice(path);
    push_name(&mut p, name);
    p
}

/// The bytes of `p` as stored in the index.
pub fn of(p: &Path) -> &[u8] {
    p.as_os_str().as_encoded_bytes()
}

/// The bytes of `p`, owned.
pub fn vec(p: &Path) -> Vec<u8> {
    of(p).to_vec()
}

/// `b` (bytes from the index or a request) as an `OsStr`.
#[cfg(unix)]
pub fn os(b: &[u8]) -> &OsStr {
    use std::os::unix::ffi::OsStrExt;
    OsStr::from_bytes(b)
}

/// `b` (bytes from the index or a request) as an `OsStr`.
#[cfg(not(unix))]
#[allow(unsafe_code)]
pub fn os(b: &[u8]) -> &OsStr {
    // Requests carry UTF-8 (what a Windows client sends) and the index holds
    // what `of` produced, so the bytes are valid encoded bytes; anything else
    // is refused rather than trusted.
    match std::str::from_utf8(b) {
        Ok(s) => OsStr::new(s),
        // SAFETY: not UTF-8, so these bytes can only have come from
        // `as_encoded_bytes` on this platform (the index's own paths).
        Err(_) => unsafe { OsStr::from_encoded_bytes_unchecked(b) },
    }
}

/// `b` as a `Path`.
pub fn path(b: &[u8]) -> &Path {
    Path::new(os(b))
}

/// `b` as an owned `PathBuf`.
pub fn path_buf(b: &[u8]) -> PathBuf {
    path(b).to_path_buf()
}
