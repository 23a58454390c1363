//! The child's wire format: length-prefixed binary frames on stdin/stdout.
//!
//! Binary rather than JSON lines because paths are bytes (a Linux name need
//! not be UTF-8) and text can be megabytes; a frame is a little-endian `u32`
//! length and that many bytes. A request is the kind's name, the limits and
//! the path's raw bytes; a response is either the text (with its truncation
//! flag) or a failure's reason and detail ([`Failure::reason`]).

use crate::{Extracted, Failure, Kind, Limits};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

/// Largest request frame: a path is at most a few KiB.
pub const MAX_REQUEST: usize = 1 << 20;

pub fn write_frame(w: &mut impl Write, payload: &[u8]) -> io::Result<()> {
    let len = u32::try_from(payload.len()).map_err(|_| io::Error::other("frame too large"))?;
    w.write_all(&len.to_le_bytes())?;
    w.write_all(payload)?;
    w.flush()
}

/// Reads one frame; `None` when the stream ends cleanly before a frame.
pub fn read_frame(r: &mut impl Read, max: usize) -> io::Result<Option<Vec<u8>>> {
    let mut len = [0u8; 4];
    match r.read_exact(&mut len) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(e),
    }
    let len = u32::from_le_bytes(len) as usize;
    if len > max {
        return Err(io::Error::other(format!(
            "frame of {len} bytes, limit {max}"
        )));
    }
    let mut buf = vec![0; len];
    r.read_exact(&mut buf)?;
    Ok(Some(buf))
}

/// One file to extract.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    pub path: PathBuf,
    pub kind: Kind,
    pub limits: Limits,
}

pub fn encode_request(path: &Path, kind: Kind, limits: &Limits) -> Vec<u8> {
    let mut b = Vec::new();
    put_str(&mut b, kind.name());
    for n in [
        limits.max_text_file,
        limits.max_document_file,
        limits.max_text_bytes as u64,
        limits.max_unzipped_bytes,
        limits.max_zip_members as u64,
    ] {
        b.extend_from_slice(&n.to_le_bytes());
    }
    b.extend_from_slice(&path_bytes(path));
    b
}

pub fn decode_request(b: &[u8]) -> Result<Request, String> {
    let mut c = Cursor(b);
    let kind = c.str()?;
    let kind = Kind::from_name(&kind).ok_or_else(|| format!("unknown kind {kind:?}"))?;
    let limits = Limits {
        max_text_file: c.u64()?,
        max_document_file: c.u64()?,
        max_text_bytes: usize::try_from(c.u64()?).map_err(|e| e.to_string())?,
        max_unzipped_bytes: c.u64()?,
        max_zip_members: usize::try_from(c.u64()?).map_err(|e| e.to_string())?,
    };
    Ok(Request {
        path: path_from_bytes(c.0),
        kind,
        limits,
    })
}

pub fn encode_response(r: &Result<Extracted, Failure>) -> Vec<u8> {
    let mut b = Vec::new();
    match r {
        Ok(e) => {
            b.push(0);
            b.push(u8::from(e.truncated));
            put_str(&mut b, &e.encoding);
            b.extend_from_slice(e.text.as_bytes());
        }
        Err(f) => {
            b.push(1);
            put_str(&mut b, f.reason());
            b.extend_from_slice(f.detail().as_bytes());
        }
    }
    b
}

/// The response to a request for `kind`; `Err` when the frame is nonsense.
pub fn decode_response(b: &[u8], kind: Kind) -> Result<Result<Extracted, Failure>, String> {
    match b.split_first() {
        Some((0, rest)) => {
            let (&truncated, rest) = rest.split_first().ok_or("short response")?;
            let mut c = Cursor(rest);
            let encoding = c.str()?;
            let text = String::from_utf8(c.0.to_vec()).map_err(|e| e.to_string())?;
            Ok(Ok(Extracted {
                text,
                truncated: truncated != 0,
                kind,
                extractor: kind.extractor(),
                version: kind.version(),
                encoding,
            }))
        }
        Some((1, rest)) => {
            let mut c = Cursor(rest);
            let reason = c.str()?;
            let detail = String::from_utf8_lossy(c.0);
            Ok(Err(Failure::from_reason(&reason, &detail)))
        }
        _ => Err("unknown response tag".into()),
    }
}

fn put_str(b: &mut Vec<u8>, s: &str) {
    b.push(s.len().min(255) as u8);
    b.extend_from_slice(&s.as_bytes()[..s.len().min(255)]);
}

struct Cursor<'a>(&'a [u8]);

impl Cursor<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8], String> {
        if self.0.len() < n {
            return Err("short frame".into());
        }
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        Ok(a)
    }

    fn u64(&mut self) -> Result<u64, String> {
        let b = self.take(8)?;
        Ok(u64::from_le_bytes(b.try_into().map_err(|_| "short frame")?))
    }

    fn str(&mut self) -> Result<String, String> {
        let n = *self.take(1)?.first().ok_or("short frame")? as usize;
        Ok(String::from_utf8_lossy(self.take(n)?).into_owned())
    }
}

#[cfg(unix)]
fn path_bytes(p: &Path) -> Vec<u8> {
    use std::os::unix::ffi::OsStrExt;
    p.as_os_str().as_bytes().to_vec()
}

#[cfg(unix)]
fn path_from_bytes(b: &[u8]) -> PathBuf {
    use std::os::unix::ffi::OsStrExt;
    PathBuf::from(std::ffi::OsStr::from_bytes(b))
}

// Elsewhere paths are sent as UTF-8 (Windows names with lone surrogates are
// not representable; they fail to open and are counted as unreadable).
#[cfg(not(unix))]
fn path_bytes(p: &Path) -> Vec<u8> {
    p.to_string_lossy().into_owned().into_bytes()
}

#[cfg(not(unix))]
fn path_from_bytes(b: &[u8]) -> PathBuf {
    PathBuf::from(String::from_utf8_lossy(b).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg(unix)]
    fn non_utf8_paths_survive() {
        use std::os::unix::ffi::OsStrExt;
        let p = Path::new(std::ffi::OsStr::from_bytes(b"/tmp/caf\xe9/r\xff.pdf"));
        let l = Limits {
            max_text_bytes: 77,
            ..Limits::default()
        };
        let r = decode_request(&encode_request(p, Kind::Pdf, &l)).unwrap();
        assert_eq!(r.path, p);
        assert_eq!(r.kind, Kind::Pdf);
        assert_eq!(r.limits, l);
    }

    #[test]
    fn failures_round_trip() {
        for f in [
            Failure::TooBig { size: 9, limit: 3 },
            Failure::Parse("bad xref".into()),
            Failure::Bomb("x".into()),
            Failure::Binary,
            Failure::Timeout,
        ] {
            let b = encode_response(&Err(f.clone()));
            assert_eq!(decode_response(&b, Kind::Pdf).unwrap(), Err(f));
        }
    }
}
