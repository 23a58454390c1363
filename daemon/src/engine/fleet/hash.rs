//! Hashes for fleet duplicates. Fleet dupes group files by size, then by
//! BLAKE3 hash; a host hashes only its files whose size some other file in
//! the fleet also has (asked of PostgreSQL), reads each once (checking it
//! is still the indexed inode, size and mtime before and after), and
//! writes the hash onto the file's row there. A hash the local duplicate
//! search already cached is shipped with the row and never read again.

use std::io::Read;
use std::path::PathBuf;

use crate::platform::fs as pfs;
use crate::store::journal::FleetRow;

/// Reads and hashes one file, if it is still what `r` says.
pub(super) fn hash_row(r: &FleetRow) -> Option<Vec<u8>> {
    let e = &r.row;
    let mut path = r.root.clone();
    if !path.ends_with(b"/") {
        path.push(b'/');
    }
    path.extend_from_slice(&r.rel);
    let path: PathBuf = crate::platform::bytes::path_buf(&path);
    let same = |m: &pfs::Stat| {
        m.dev == e.dev && m.ino == e.ino && m.size == e.size && m.mtime_ns == e.mtime_ns
    };
    let mut f = pfs::open_file(&path).ok()?;
    if !same(&pfs::fstat_file(&f).ok()?) {
        return None;
    }
    let mut h = blake3::Hasher::new();
    let mut buf = vec![0u8; 256 * 1024];
    loop {
        match f.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                h.update(&buf[..n]);
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return None,
        }
    }
    if !same(&pfs::fstat_file(&f).ok()?) {
        return None;
    }
    Some(h.finalize().as_bytes().to_vec())
}
