//! Shared output helpers: humanised sizes, times, paths and error lines.

use std::path::{Path, PathBuf};

use anyhow::Context;

/// 1024-based, like du -h: "1.5 GiB".
pub fn size(n: u64) -> String {
    humansize::format_size(n, humansize::BINARY)
}

/// RFC 3339 in UTC; nanoseconds since the epoch in.
pub fn rfc3339(ns: i64) -> String {
    jiff::Timestamp::from_nanosecond(i128::from(ns))
        .map(|t| t.to_string())
        .unwrap_or_default()
}

/// Display form of a byte-exact path (lossy for names that are not UTF-8).
pub fn lossy(b: &[u8]) -> String {
    text(b).into_owned()
}

/// `b` as text for printing: itself when it is UTF-8 (no copy, and std's
/// validator instead of the lossy decoder's byte loop, which was 6% of
/// fsctl's time printing 34,680 paths), else with U+FFFD for what is not.
pub fn text(b: &[u8]) -> std::borrow::Cow<'_, str> {
    match std::str::from_utf8(b) {
        Ok(s) => std::borrow::Cow::Borrowed(s),
        Err(_) => String::from_utf8_lossy(b),
    }
}

/// A path as the daemon takes it (Unix: its bytes; Windows: its encoded
/// bytes, UTF-8 for any valid name).
pub fn path_bytes(p: &Path) -> Vec<u8> {
    p.as_os_str().as_encoded_bytes().to_vec()
}

/// A path from the daemon's bytes. Unix: any bytes. Windows: the daemon
/// sends UTF-8 for every valid name; anything else is shown lossily.
#[cfg(unix)]
pub fn path_from_bytes(b: &[u8]) -> PathBuf {
    use std::os::unix::ffi::OsStrExt;
    PathBuf::from(std::ffi::OsStr::from_bytes(b))
}

/// See the Unix one.
#[cfg(not(unix))]
pub fn path_from_bytes(b: &[u8]) -> PathBuf {
    PathBuf::from(String::from_utf8_lossy(b).into_owned())
}

/// An absolute form of a path the user typed, without following a symlink
/// in its last component (so `du link` measures the link, as du does).
pub fn absolute(p: &Path) -> anyhow::Result<PathBuf> {
    let abs = std::path::absolute(p)
        .with_context(|| format!("{}: cannot make it absolute", p.display()))?;
    let (Some(parent), Some(name)) = (abs.parent(), abs.file_name()) else {
        return Ok(abs);
    };
    match fsindex_proto::paths::canonicalize(parent) {
        Ok(parent) => Ok(parent.join(name)),
        Err(_) => Ok(abs),
    }
}

/// A path argument made absolute, or the current directory.
pub fn path_or_cwd(p: Option<&Path>) -> anyhow::Result<PathBuf> {
    match p {
        Some(p) => absolute(p),
        None => Ok(std::env::current_dir()?),
    }
}

/// An optional path argument as the daemon takes it: absolute bytes, or
/// empty for "everything".
pub fn optional_path(p: Option<&Path>) -> anyhow::Result<Vec<u8>> {
    Ok(match p {
        Some(p) => path_bytes(&absolute(p)?),
        None => Vec::new(),
    })
}

/// The error as one line: a gRPC status becomes its message.
pub fn error_line(e: &anyhow::Error) -> String {
    if let Some(status) = e.downcast_ref::<tonic::Status>() {
        return status.message().to_owned();
    }
    format!("{e:#}")
}

/// Writing to stdout failed: a closed pipe ends fsctl quietly with 0,
/// anything else (a full disk) with the error and 2.
pub fn stdout_failed(e: std::io::Error) -> ! {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        std::process::exit(0);
    }
    eprintln!("fsctl: writing the output failed: {e}");
    std::process::exit(2);
}

pub fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// Thousands separators: 1234567 -> "1,234,567".
pub fn count(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

pub fn type_name(t: i32) -> &'static str {
    use fsindex_proto::v1::EntryType;
    match EntryType::try_from(t).unwrap_or_default() {
        EntryType::Dir => "dir",
        EntryType::Symlink => "symlink",
        EntryType::Other => "other",
        EntryType::File | EntryType::Unspecified => "file",
    }
}
