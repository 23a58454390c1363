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

/// A media file's metadata as JSON (`fsctl info --json`'s `media`, MCP's
/// `media`): `status`, then each field only where known; `camel` names the
/// fields as MCP does (`cameraMake`), else as the CLI contract
/// (`camera_make`).
pub fn media_json(m: &fsindex_proto::v1::MediaInfo, camel: bool) -> serde_json::Value {
    let mut v = serde_json::Map::new();
    let mut put = |snake: &str, camel_name: &str, x: Option<serde_json::Value>| {
        if let Some(x) = x {
            v.insert(if camel { camel_name } else { snake }.to_owned(), x);
        }
    };
    use serde_json::json;
    put("status", "status", Some(json!(m.status)));
    put("taken", "taken", m.taken.as_ref().map(|x| json!(x)));
    put(
        "camera_make",
        "cameraMake",
        m.camera_make.as_ref().map(|x| json!(x)),
    );
    put(
        "camera_model",
        "cameraModel",
        m.camera_model.as_ref().map(|x| json!(x)),
    );
    put("width", "width", m.width.map(|x| json!(x)));
    put("height", "height", m.height.map(|x| json!(x)));
    put("duration_ms", "durationMs", m.duration_ms.map(|x| json!(x)));
    put("artist", "artist", m.artist.as_ref().map(|x| json!(x)));
    put("album", "album", m.album.as_ref().map(|x| json!(x)));
    put("title", "title", m.title.as_ref().map(|x| json!(x)));
    put("track", "track", m.track.map(|x| json!(x)));
    put("year", "year", m.year.map(|x| json!(x)));
    put("genre", "genre", m.genre.as_ref().map(|x| json!(x)));
    put("gps_lat", "gpsLat", m.gps_lat.map(|x| json!(x)));
    put("gps_lon", "gpsLon", m.gps_lon.map(|x| json!(x)));
    put("pages", "pages", m.pages.map(|x| json!(x)));
    put("author", "author", m.author.as_ref().map(|x| json!(x)));
    serde_json::Value::Object(v)
}

/// A media file's metadata as `label  value` lines for people.
pub fn media_lines(m: &fsindex_proto::v1::MediaInfo) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    if m.status != "ok" {
        out.push(("media", format!("not read ({})", m.status)));
        return out;
    }
    if let Some(t) = &m.taken {
        out.push(("taken", t.replace('T', " ")));
    }
    // "Canon" + "Canon EOS 80D" reads as "Canon EOS 80D".
    let camera = match (&m.camera_make, &m.camera_model) {
        (Some(make), Some(model)) if model.to_lowercase().starts_with(&make.to_lowercase()) => {
            Some(model.clone())
        }
        (Some(make), Some(model)) => Some(format!("{make} {model}")),
        (a, b) => a.clone().or_else(|| b.clone()),
    };
    if let Some(c) = camera {
        out.push(("camera", c));
    }
    if let (Some(w), Some(h)) = (m.width, m.height) {
        out.push(("dimensions", format!("{w} x {h}")));
    }
    if let Some(ms) = m.duration_ms {
        let s = ms / 1000;
        out.push((
            "duration",
            if s >= 3600 {
                format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
            } else {
                format!("{}:{:02}", s / 60, s % 60)
            },
        ));
    }
    for (label, v) in [
        ("artist", &m.artist),
        ("album", &m.album),
        ("title", &m.title),
        ("author", &m.author),
        ("genre", &m.genre),
    ] {
        if let Some(v) = v {
            out.push((label, v.clone()));
        }
    }
    if let Some(p) = m.pages {
        out.push(("pages", p.to_string()));
    }
    if let Some(t) = m.track {
        out.push(("track", t.to_string()));
    }
    if let Some(y) = m.year {
        out.push(("year", y.to_string()));
    }
    if let (Some(lat), Some(lon)) = (m.gps_lat, m.gps_lon) {
        out.push(("gps", format!("{lat:.6}, {lon:.6}")));
    }
    out
}
