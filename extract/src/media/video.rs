//! Video: length and frame size from the container's header.
//!
//! MP4/MOV (ISO base media): the movie header `moov/mvhd` (time scale and
//! duration) and each track's header `moov/trak/tkhd` (width and height,
//! 16.16 fixed point; audio tracks say 0). Matroska/WebM (EBML):
//! `Segment/Info` (TimestampScale, Duration) and
//! `Segment/Tracks/TrackEntry/Video` (PixelWidth, PixelHeight). Every other
//! box or element is skipped by seeking past it, so a file of any size costs
//! a few small reads; at most [`MAX_STEPS`] boxes are visited.

use super::Media;
use crate::Failure;
use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};

const MAX_STEPS: usize = 100_000;

pub(super) fn read(file: File, size: u64) -> Result<Media, Failure> {
    let mut r = BufReader::new(file);
    let mut magic = [0u8; 4];
    r.read_exact(&mut magic)
        .map_err(|_| Failure::Parse("too short for a video header".into()))?;
    r.seek(SeekFrom::Start(0)).map_err(unreadable)?;
    let got = if magic == [0x1A, 0x45, 0xDF, 0xA3] {
        matroska(&mut r, size)
    } else {
        mp4(&mut r, size)
    };
    got.map_err(|e| Failure::Parse(e.to_string()))
}

fn unreadable(e: std::io::Error) -> Failure {
    Failure::Unreadable(e.to_string())
}

type R = BufReader<File>;
/// Called with each ISO box: its type, body offset, body length, steps.
type OnBox<'a> = dyn FnMut(&mut R, [u8; 4], u64, u64, &mut usize) -> std::io::Result<()> + 'a;
/// Called with each EBML element: its id, body offset, body length,
/// steps; `false` stops the walk.
type OnElement<'a> = dyn FnMut(&mut R, u64, u64, u64, &mut usize) -> std::io::Result<bool> + 'a;

fn bad(what: &str) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, what.to_owned())
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_be_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

/// Walks the ISO boxes between `start` and `end`, calling `f` with each
/// box's type, body offset and body length.
fn boxes(
    r: &mut R,
    start: u64,
    end: u64,
    steps: &mut usize,
    f: &mut OnBox<'_>,
) -> std::io::Result<()> {
    let mut at = start;
    while at + 8 <= end {
        *steps += 1;
        if *steps > MAX_STEPS {
            return Err(bad("too many boxes"));
        }
        r.seek(SeekFrom::Start(at))?;
        let mut h = [0u8; 8];
        r.read_exact(&mut h)?;
        let mut len = u64::from(u32::from_be_bytes([h[0], h[1], h[2], h[3]]));
        let kind = [h[4], h[5], h[6], h[7]];
        let mut body = at + 8;
        if len == 1 {
            let mut l = [0u8; 8];
            r.read_exact(&mut l)?;
            len = u64::from_be_bytes(l);
            body += 8;
        } else if len == 0 {
            len = end - at;
        }
        if len < body - at || at.checked_add(len).is_none_or(|e| e > end) {
            return Err(bad("a box runs past its container"));
        }
        f(r, kind, body, at + len - body, steps)?;
        at += len;
    }
    Ok(())
}

/// Reads up to `n` bytes of a box's body.
fn head(r: &mut R, at: u64, len: u64, n: u64) -> std::io::Result<Vec<u8>> {
    r.seek(SeekFrom::Start(at))?;
    let mut b = Vec::new();
    r.take(len.min(n)).read_to_end(&mut b)?;
    Ok(b)
}

fn mp4(r: &mut R, size: u64) -> std::io::Result<Media> {
    let mut m = Media::default();
    let mut steps = 0;
    let mut saw_ftyp_or_moov = false;
    boxes(r, 0, size, &mut steps, &mut |r, kind, at, len, steps| {
        if &kind == b"ftyp" {
            saw_ftyp_or_moov = true;
        }
        if &kind != b"moov" {
            return Ok(());
        }
        saw_ftyp_or_moov = true;
        boxes(r, at, at + len, steps, &mut |r, kind, at, len, steps| {
            match &kind {
                b"mvhd" => {
                    let b = head(r, at, len, 32)?;
                    let (scale, dur) = if b.first() == Some(&1) {
                        (u32_at(&b, 20), u64_at(&b, 24))
                    } else {
                        (u32_at(&b, 12), u32_at(&b, 16).map(u64::from))
                    };
                    if let (Some(scale), Some(dur)) = (scale, dur)
                        && scale > 0
                        && dur != u64::MAX
                        && dur != u64::from(u32::MAX)
                    {
                        m.duration_ms = Some((u128::from(dur) * 1000 / u128::from(scale)) as u64);
                    }
                }
                b"trak" => boxes(r, at, at + len, steps, &mut |r, kind, at, len, _| {
                    if &kind == b"tkhd" {
                        let b = head(r, at, len, 96)?;
                        // Width and height follow the matrix: at 76 (v0) or 88 (v1).
                        let off = if b.first() == Some(&1) { 88 } else { 76 };
                        let (w, h) = (u32_at(&b, off), u32_at(&b, off + 4));
                        if let (Some(w), Some(h)) = (w, h)
                            && w >> 16 > 0
                            && h >> 16 > 0
                            && m.width.is_none_or(|mw| w >> 16 > mw)
                        {
                            m.width = Some(w >> 16);
                            m.height = Some(h >> 16);
                        }
                    }
                    Ok(())
                })?,
                _ => {}
            }
            Ok(())
        })
    })?;
    if !saw_ftyp_or_moov {
        return Err(bad("not an MP4/MOV file"));
    }
    Ok(m)
}

/// An EBML variable-length integer: (value, bytes), the length marker
/// kept for IDs and removed for sizes (`None` for "unknown size").
fn vint(r: &mut R, keep_marker: bool) -> std::io::Result<(Option<u64>, u64)> {
    let mut first = [0u8; 1];
    r.read_exact(&mut first)?;
    let n = first[0].leading_zeros() as usize + 1;
    if n > 8 {
        return Err(bad("bad EBML length"));
    }
    let mut v = if keep_marker {
        u64::from(first[0])
    } else {
        u64::from(first[0]) & ((1 << (8 - n)) - 1)
    };
    let mut all_ones = v == (1 << (8 - n)) - 1;
    for _ in 1..n {
        let mut b = [0u8; 1];
        r.read_exact(&mut b)?;
        all_ones &= b[0] == 0xFF;
        v = (v << 8) | u64::from(b[0]);
    }
    if !keep_marker && all_ones {
        return Ok((None, n as u64));
    }
    Ok((Some(v), n as u64))
}

fn ebml_uint(b: &[u8]) -> u64 {
    b.iter().take(8).fold(0, |v, &x| (v << 8) | u64::from(x))
}

fn ebml_float(b: &[u8]) -> Option<f64> {
    match b.len() {
        4 => Some(f64::from(f32::from_be_bytes(b.try_into().ok()?))),
        8 => Some(f64::from_be_bytes(b.try_into().ok()?)),
        _ => None,
    }
}

/// Walks EBML elements between `start` and `end`, calling `f` with each
/// element's id, body offset and body length (to `end` when unknown).
fn elements(
    r: &mut R,
    start: u64,
    end: u64,
    steps: &mut usize,
    f: &mut OnElement<'_>,
) -> std::io::Result<()> {
    let mut at = start;
    while at < end {
        *steps += 1;
        if *steps > MAX_STEPS {
            return Err(bad("too many elements"));
        }
        r.seek(SeekFrom::Start(at))?;
        let (id, a) = vint(r, true)?;
        let (len, b) = vint(r, false)?;
        let body = at + a + b;
        let len = len.unwrap_or(end.saturating_sub(body));
        if body.checked_add(len).is_none_or(|e| e > end) {
            return Err(bad("an element runs past its parent"));
        }
        if !f(r, id.unwrap_or(0), body, len, steps)? {
            return Ok(());
        }
        at = body + len;
    }
    Ok(())
}

fn matroska(r: &mut R, size: u64) -> std::io::Result<Media> {
    let mut m = Media::default();
    let mut steps = 0;
    let mut scale = 1_000_000u64;
    let mut duration = None;
    elements(r, 0, size, &mut steps, &mut |r, id, at, len, steps| {
        if id != 0x1853_8067 {
            return Ok(true);
        }
        elements(r, at, at + len, steps, &mut |r, id, at, len, steps| {
            match id {
                // Info
                0x1549_A966 => elements(r, at, at + len, steps, &mut |r, id, at, len, _| {
                    match id {
                        0x2A_D7B1 => scale = ebml_uint(&head(r, at, len, 8)?),
                        0x4489 => duration = ebml_float(&head(r, at, len, 8)?),
                        _ => {}
                    }
                    Ok(true)
                })?,
                // Tracks / TrackEntry / Video
                0x1654_AE6B => elements(r, at, at + len, steps, &mut |r, id, at, len, steps| {
                    if id == 0xAE {
                        elements(r, at, at + len, steps, &mut |r, id, at, len, steps| {
                            if id == 0xE0 {
                                let (mut w, mut h) = (0, 0);
                                elements(r, at, at + len, steps, &mut |r, id, at, len, _| {
                                    match id {
                                        0xB0 => w = ebml_uint(&head(r, at, len, 8)?),
                                        0xBA => h = ebml_uint(&head(r, at, len, 8)?),
                                        _ => {}
                                    }
                                    Ok(true)
                                })?;
                                if w > 0 && h > 0 && m.width.is_none() {
                                    m.width = u32::try_from(w).ok();
                                    m.height = u32::try_from(h).ok();
                                }
                            }
                            Ok(true)
                        })?;
                    }
                    Ok(true)
                })?,
                // The first Cluster: the headers are behind us.
                0x1F43_B675 => return Ok(false),
                _ => {}
            }
            Ok(true)
        })?;
        Ok(false)
    })?;
    if let Some(d) = duration
        && d.is_finite()
        && d > 0.0
    {
        m.duration_ms = Some((d * scale as f64 / 1e6) as u64);
    }
    Ok(m)
}
