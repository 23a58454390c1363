//! The mounted file systems (mount point and type), so that the rules can
//! leave out network, virtual and pseudo file systems.

use std::ffi::OsString;
use std::path::PathBuf;

/// Mount points and their file-system types, as the system reports them
/// now. Empty when they cannot be read.
///
/// Linux: `/proc/self/mountinfo`. macOS: `getmntinfo` (types as `mount`
/// shows them: apfs, smbfs, nfs, afpfs, webdav, devfs, ...). Windows: each
/// drive letter with its drive type: `remote` for a network drive (left out
/// by default), else `fixed`, `removable`, `cdrom` or `ramdisk`. (Volumes
/// mounted in folders are not listed on Windows.)
#[cfg(target_os = "linux")]
pub fn mounts() -> Vec<(PathBuf, String)> {
    std::fs::read_to_string("/proc/self/mountinfo")
        .map(|t| parse_mountinfo(&t))
        .unwrap_or_default()
}

/// See the Linux body.
#[cfg(target_os = "macos")]
#[allow(unsafe_code)]
pub fn mounts() -> Vec<(PathBuf, String)> {
    use std::ffi::CStr;
    use std::os::unix::ffi::OsStrExt;
    let mut buf: *mut libc::statfs = std::ptr::null_mut();
    // SAFETY: getmntinfo points `buf` at `n` statfs records in a buffer it
    // owns (valid until the next call on this thread); MNT_NOWAIT reads the
    // kernel's cached list without blocking on unresponsive mounts.
    let records = unsafe {
        let n = libc::getmntinfo(&mut buf, libc::MNT_NOWAIT);
        if n <= 0 || buf.is_null() {
            return Vec::new();
        }
        std::slice::from_raw_parts(buf, n as usize)
    };
    records
        .iter()
        .map(|r| {
            // SAFETY: both fields are NUL-terminated C strings in the record.
            let (on, ty) = unsafe {
                (
                    CStr::from_ptr(r.f_mntonname.as_ptr()),
                    CStr::from_ptr(r.f_fstypename.as_ptr()),
                )
            };
            (
                PathBuf::from(std::ffi::OsStr::from_bytes(on.to_bytes())),
                ty.to_string_lossy().into_owned(),
            )
        })
        .collect()
}

/// See the Linux body.
#[cfg(windows)]
#[allow(unsafe_code)]
pub fn mounts() -> Vec<(PathBuf, String)> {
    use windows_sys::Win32::Storage::FileSystem::{GetDriveTypeW, GetLogicalDrives};
    // DRIVE_* values of GetDriveTypeW.
    let name = |t: u32| match t {
        2 => "removable",
        3 => "fixed",
        4 => "remote",
        5 => "cdrom",
        6 => "ramdisk",
        _ => "unknown",
    };
    // SAFETY: no arguments; a bit mask of the drive letters in use.
    let letters = unsafe { GetLogicalDrives() };
    (0..26u8)
        .filter(|i| letters & (1 << i) != 0)
        .map(|i| {
            let root = format!("{}:\\", (b'A' + i) as char);
            let wide: Vec<u16> = root.encode_utf16().chain([0]).collect();
            // SAFETY: `wide` is a NUL-terminated UTF-16 string that outlives the call.
            let t = unsafe { GetDriveTypeW(wide.as_ptr()) };
            (PathBuf::from(root), name(t).to_owned())
        })
        .collect()
}

/// No mount table read on this platform: nothing is left out by type.
#[cfg(not(any(target_os = "linux", target_os = "macos", windows)))]
pub fn mounts() -> Vec<(PathBuf, String)> {
    Vec::new()
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
fn unescape_octal(s: &str) -> OsString {
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
    crate::platform::bytes::os(&out).to_owned()
}
