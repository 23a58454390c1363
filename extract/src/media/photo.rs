//! Photos: the frame size from the image header (`imagesize`, which seeks
//! through the container), EXIF from JPEG, PNG, WebP, HEIF and TIFF
//! (`kamadak-exif`), both from the first bytes of the file only.

use super::{Media, clean};
use crate::Failure;
use exif::{In, Tag, Value};
use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};

/// Most bytes read for EXIF: a JPEG's APP1 segment is at most 64 KiB and
/// sits at the start; TIFF, HEIF and raw files keep theirs in the first
/// megabytes. A TIFF is read whole by the EXIF parser, so it gets a copy of
/// this head instead of the file.
const HEAD: u64 = 16 << 20;

pub(super) fn read(file: File, size: u64) -> Result<Media, Failure> {
    let mut r = BufReader::new(file);
    let dims = imagesize::reader_size(&mut r).ok();
    r.seek(SeekFrom::Start(0))
        .map_err(|e| Failure::Unreadable(e.to_string()))?;
    let exif = read_exif(r, size);
    if dims.is_none() && exif.is_none() {
        return Err(Failure::Parse("neither an image header nor EXIF".into()));
    }
    let mut m = Media::default();
    if let Some((w, h)) = dims.map(|d| (d.width as u32, d.height as u32)) {
        m.width = Some(w);
        m.height = Some(h);
    }
    let Some(exif) = exif else {
        return Ok(m);
    };
    let text = |tag| {
        exif.get_field(tag, In::PRIMARY)
            .and_then(|f| match &f.value {
                Value::Ascii(v) => v.first().and_then(|s| clean(&String::from_utf8_lossy(s))),
                _ => None,
            })
    };
    m.taken = [Tag::DateTimeOriginal, Tag::DateTimeDigitized, Tag::DateTime]
        .into_iter()
        .find_map(|t| text(t).and_then(|s| exif_date(&s)));
    m.camera_make = text(Tag::Make);
    m.camera_model = text(Tag::Model);
    // Orientations 5-8 turn the picture a quarter: width and height swap.
    let turned = exif
        .get_field(Tag::Orientation, In::PRIMARY)
        .and_then(|f| f.value.get_uint(0))
        .is_some_and(|o| (5..=8).contains(&o));
    if turned {
        std::mem::swap(&mut m.width, &mut m.height);
    }
    m.gps_lat = gps(&exif, Tag::GPSLatitude, Tag::GPSLatitudeRef, b'S');
    m.gps_lon = gps(&exif, Tag::GPSLongitude, Tag::GPSLongitudeRef, b'W');
    Ok(m)
}

fn read_exif(mut r: BufReader<File>, size: u64) -> Option<exif::Exif> {
    let mut magic = [0u8; 4];
    r.read_exact(&mut magic).ok()?;
    r.seek(SeekFrom::Start(0)).ok()?;
    let reader = exif::Reader::new();
    if &magic == b"II*\0" || &magic == b"MM\0*" {
        let mut head = Vec::with_capacity(size.min(HEAD) as usize);
        r.take(HEAD).read_to_end(&mut head).ok()?;
        return reader.read_raw(head).ok();
    }
    reader.read_from_container(&mut r).ok()
}

/// `2019:06:14 10:30:00` as `2019-06-14T10:30:00`; `None` for the blank or
/// zero dates some cameras write.
fn exif_date(s: &str) -> Option<String> {
    let b = s.as_bytes();
    if b.len() < 19 {
        return None;
    }
    let digits = |r: std::ops::Range<usize>| b[r].iter().all(u8::is_ascii_digit);
    if !(digits(0..4) && digits(5..7) && digits(8..10) && digits(11..13) && digits(14..16)) {
        return None;
    }
    let num = |r: std::ops::Range<usize>| s[r].parse::<u32>().ok();
    let (month, day) = (num(5..7)?, num(8..10)?);
    if num(0..4)? == 0 || !(1..=12).contains(&month) || !(1..=31).contains(&day) {
        return None;
    }
    Some(format!(
        "{}-{}-{}T{}:{}:{}",
        &s[0..4],
        &s[5..7],
        &s[8..10],
        &s[11..13],
        &s[14..16],
        &s[17..19]
    ))
}

/// Degrees from EXIF's degrees, minutes and seconds; negative for the
/// reference letter `neg` (south, west).
fn gps(exif: &exif::Exif, tag: Tag, reference: Tag, neg: u8) -> Option<f64> {
    let f = exif.get_field(tag, In::PRIMARY)?;
    let Value::Rational(v) = &f.value else {
        return None;
    };
    let part = |i: usize| {
        v.get(i)
            .filter(|r| r.denom != 0)
            .map_or(0.0, |r| r.to_f64())
    };
    let deg = part(0) + part(1) / 60.0 + part(2) / 3600.0;
    if !deg.is_finite() || deg > 180.0 {
        return None;
    }
    let south_or_west = exif
        .get_field(reference, In::PRIMARY)
        .is_some_and(|r| match &r.value {
            Value::Ascii(s) => s.first().and_then(|s| s.first()) == Some(&neg),
            _ => false,
        });
    Some(if south_or_west { -deg } else { deg })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exif_dates() {
        assert_eq!(
            exif_date("2019:06:14 10:30:00").as_deref(),
            Some("2019-06-14T10:30:00")
        );
        assert_eq!(exif_date("0000:00:00 00:00:00"), None);
        assert_eq!(exif_date("    :  :     :  :  "), None);
    }
}
