//! The mounted file systems (mount point and type), so that the rules can
//! leave out network, virtual and pseudo file systems.

use std::ffi::OsString;
use std::path::PathBuf;

/// Mount points and their file-system types, as the system reports them
/// now (Linux: `/proc/self/mountinfo`). Empty when they cannot be read.
pub fn mounts() -> Vec<(PathBuf, String)> {
    std::fs::read_to_string("/proc/self/mountinfo")
        .map(|t| parse_mountinfo(&t))
        .unwrap_or_default()
}

/// Mount points and file-system types from `/proc/self/mountinfo`
/// (`ID PARENT MAJ:MIN ROOT MOUNT_POINT OPTIONS [TAGS...] - FSTYPE SOURCE ...`).
pub fn parse_mountinfo(text: &str) -> Vec<(PathBuf, String)> {
    text.lines()
        .filter_map(|line| {
            let (left, right) = line.split_once(" - ")?;
            let mount_point = left.split(' ').nth(4)?;
            let fstype = right.split(' ').next()?;
            Some((
                PathBuf::from(unescape_octal(mount_point)),
                fstype.to_owned(),
            ))
        })
        .collect()
}

/// The kernel writes space, tab, newline and backslash in mount points as
/// `\040`, `\011`, `\012` and `\134`.
#[cfg(unix)]
fn unescape_octal(s: &str) -> OsString {
    use std::os::unix::ffi::OsStringExt;
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && i + 3 < b.len()
            && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c))
        {
            let v = (b[i + 1] - b'0') as u32 * 64
                + (b[i + 2] - b'0') as u32 * 8
                + (b[i + 3] - b'0') as u32;
            if let Ok(v) = u8::try_from(v) {
                out.push(v);
                i += 4;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    OsString::from_vec(out)
}
