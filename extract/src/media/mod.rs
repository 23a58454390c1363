//! What media files say about themselves: a photo's date taken, camera and
//! size, a song's tags and length, a video's length and frame size, a
//! document's pages, title and author (issue 32).
//!
//! Read from headers only, never the picture or the sound: EXIF through
//! `kamadak-exif` and the frame size through `imagesize` (both pure Rust, no
//! dependencies of note), audio tags and length through `lofty` (without
//! cover art or compressed ID3 frames), and for video the two boxes of an
//! MP4/MOV (`mvhd`, `tkhd`) and the few elements of a Matroska/WebM header
//! that say length and frame size, read by [`video`] here: the `mp4` and
//! `matroska` crates parse the whole sample tables or pull in date and
//! serialisation crates for what is a few dozen lines of box walking.
//! Documents (PDF, Office, OpenDocument) are read by [`document`]: lopdf's
//! metadata loader, and the properties parts of the zip formats.
//!
//! Like documents, media files are parsed in the sandboxed child: the
//! parsers are third-party code fed hostile bytes. The child answers a
//! [`Kind::Media`](crate::Kind::Media) request with [`Media::encode`]'s
//! lines as the text, and the daemon decodes them with [`Media::decode`].

mod audio;
mod document;
mod photo;
pub mod video;

use crate::Failure;
use std::path::Path;

/// The extractor's version: bump it when what is read for the same file
/// changes, so the daemon reads its cached rows again.
pub const VERSION: u32 = 1;

/// Which reader a media file needs, by extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MediaKind {
    Photo,
    Audio,
    Video,
    /// PDF, Office Open XML, OpenDocument and EPUB: pages, title, author.
    Document,
}

/// The media kind a file of this name is read as (extension compared
/// ASCII-case-insensitively); `None` for everything else.
pub fn media_kind_for_name(name: &[u8]) -> Option<MediaKind> {
    let dot = memchr::memrchr(b'.', name)?;
    let ext = &name[dot + 1..];
    if ext.is_empty() || ext.len() > 5 {
        return None;
    }
    let mut lower = [0u8; 5];
    for (d, s) in lower.iter_mut().zip(ext) {
        *d = s.to_ascii_lowercase();
    }
    Some(match &lower[..ext.len()] {
        b"jpg" | b"jpeg" | b"jpe" | b"png" | b"webp" | b"tif" | b"tiff" | b"heic" | b"heif"
        | b"avif" | b"dng" => MediaKind::Photo,
        b"mp3" | b"flac" | b"ogg" | b"oga" | b"opus" | b"m4a" | b"wav" | b"aiff" | b"aif" => {
            MediaKind::Audio
        }
        b"mp4" | b"m4v" | b"mov" | b"mkv" | b"webm" => MediaKind::Video,
        b"pdf" | b"docx" | b"docm" | b"dotx" | b"pptx" | b"pptm" | b"potx" | b"xlsx" | b"xlsm"
        | b"xltx" | b"odt" | b"ott" | b"ods" | b"ots" | b"odp" | b"otp" | b"epub" => {
            MediaKind::Document
        }
        _ => return None,
    })
}

/// What one media file says; every field only where known.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Media {
    /// Date taken as the camera wrote it (no time zone), `YYYY-MM-DDTHH:MM:SS`.
    pub taken: Option<String>,
    pub camera_make: Option<String>,
    pub camera_model: Option<String>,
    /// Pixels, after the EXIF orientation (a portrait photo is taller than wide).
    pub width: Option<u32>,
    pub height: Option<u32>,
    pub duration_ms: Option<u64>,
    pub artist: Option<String>,
    pub album: Option<String>,
    /// A song's title, or a document's (PDF Info, Office core properties,
    /// OpenDocument meta).
    pub title: Option<String>,
    pub track: Option<u32>,
    pub year: Option<i32>,
    pub genre: Option<String>,
    /// Degrees, north and east positive.
    pub gps_lat: Option<f64>,
    pub gps_lon: Option<f64>,
    /// A document's pages (a presentation's slides).
    pub pages: Option<u32>,
    /// A document's author.
    pub author: Option<String>,
}

impl Media {
    /// True when nothing was found.
    pub fn is_empty(&self) -> bool {
        *self == Media::default()
    }

    /// `key\tvalue` lines, one per known field (tabs and line breaks in a
    /// value become spaces).
    pub fn encode(&self) -> String {
        let mut out = String::new();
        let mut put = |k: &str, v: Option<String>| {
            if let Some(v) = v {
                let v: String = v
                    .chars()
                    .map(|c| if c.is_control() { ' ' } else { c })
                    .collect();
                out.push_str(k);
                out.push('\t');
                out.push_str(&v);
                out.push('\n');
            }
        };
        put("taken", self.taken.clone());
        put("camera_make", self.camera_make.clone());
        put("camera_model", self.camera_model.clone());
        put("width", self.width.map(|n| n.to_string()));
        put("height", self.height.map(|n| n.to_string()));
        put("duration_ms", self.duration_ms.map(|n| n.to_string()));
        put("artist", self.artist.clone());
        put("album", self.album.clone());
        put("title", self.title.clone());
        put("track", self.track.map(|n| n.to_string()));
        put("year", self.year.map(|n| n.to_string()));
        put("genre", self.genre.clone());
        put("gps_lat", self.gps_lat.map(|n| n.to_string()));
        put("gps_lon", self.gps_lon.map(|n| n.to_string()));
        put("pages", self.pages.map(|n| n.to_string()));
        put("author", self.author.clone());
        out
    }

    /// The inverse of [`Media::encode`]; unknown keys and bad numbers are
    /// skipped.
    pub fn decode(text: &str) -> Media {
        let mut m = Media::default();
        for line in text.lines() {
            let Some((k, v)) = line.split_once('\t') else {
                continue;
            };
            let s = Some(v.to_owned());
            match k {
                "taken" => m.taken = s,
                "camera_make" => m.camera_make = s,
                "camera_model" => m.camera_model = s,
                "width" => m.width = v.parse().ok(),
                "height" => m.height = v.parse().ok(),
                "duration_ms" => m.duration_ms = v.parse().ok(),
                "artist" => m.artist = s,
                "album" => m.album = s,
                "title" => m.title = s,
                "track" => m.track = v.parse().ok(),
                "year" => m.year = v.parse().ok(),
                "genre" => m.genre = s,
                "gps_lat" => m.gps_lat = v.parse().ok(),
                "gps_lon" => m.gps_lon = v.parse().ok(),
                "pages" => m.pages = v.parse().ok(),
                "author" => m.author = s,
                _ => {}
            }
        }
        m
    }
}

/// Reads `path`'s media metadata from its headers. The file must be a
/// regular file (checked on the open handle, like every extractor's);
/// its size is not limited, since only headers are read.
pub fn read_media(path: &Path) -> Result<Media, Failure> {
    let name = path
        .file_name()
        .map(|n| n.as_encoded_bytes())
        .unwrap_or_default();
    let kind = media_kind_for_name(name).ok_or(Failure::Parse("not a media file name".into()))?;
    let (file, size) = crate::open::open_regular(path, u64::MAX)?;
    let m = match kind {
        MediaKind::Photo => photo::read(file, size)?,
        MediaKind::Audio => audio::read(file)?,
        MediaKind::Video => video::read(file, size)?,
        MediaKind::Document => document::read(file, size)?,
    };
    if m.is_empty() {
        return Err(Failure::Parse("no metadata found".into()));
    }
    Ok(m)
}

/// Trims a tag value; `None` when nothing is left.
fn clean(s: &str) -> Option<String> {
    let t = s.trim_matches(|c: char| c.is_whitespace() || c == '\0');
    (!t.is_empty()).then(|| t.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_by_extension() {
        assert_eq!(media_kind_for_name(b"IMG_0001.JPG"), Some(MediaKind::Photo));
        assert_eq!(media_kind_for_name(b"a.flac"), Some(MediaKind::Audio));
        assert_eq!(media_kind_for_name(b"a.webm"), Some(MediaKind::Video));
        assert_eq!(media_kind_for_name(b"a.txt"), None);
        assert_eq!(
            media_kind_for_name(b"Report.PDF"),
            Some(MediaKind::Document)
        );
        assert_eq!(media_kind_for_name(b"deck.pptx"), Some(MediaKind::Document));
        assert_eq!(media_kind_for_name(b"jpg"), None);
    }

    #[test]
    fn lines_round_trip() {
        let m = Media {
            taken: Some("2019-06-14T10:30:00".into()),
            camera_make: Some("Canon\tInc".into()),
            width: Some(493),
            gps_lat: Some(-33.5),
            pages: Some(12),
            author: Some("Ada\nLovelace".into()),
            ..Media::default()
        };
        let back = Media::decode(&m.encode());
        assert_eq!(back.camera_make.as_deref(), Some("Canon Inc"));
        assert_eq!(back.width, Some(493));
        assert_eq!(back.gps_lat, Some(-33.5));
        assert_eq!(back.taken, m.taken);
        assert_eq!(back.pages, Some(12));
        assert_eq!(back.author.as_deref(), Some("Ada Lovelace"));
    }
}
