//! Audio: tags and length through `lofty` (MP3, FLAC, Ogg Vorbis/Opus,
//! M4A, WAV, AIFF), without cover art, from the tags and the stream headers.

use super::{Media, clean};
use crate::Failure;
use lofty::config::{ParseOptions, ParsingMode};
use lofty::prelude::*;
use std::fs::File;
use std::io::BufReader;

pub(super) fn read(file: File) -> Result<Media, Failure> {
    let options = ParseOptions::new()
        .read_cover_art(false)
        .parsing_mode(ParsingMode::BestAttempt);
    let tagged = lofty::probe::Probe::new(BufReader::new(file))
        .options(options)
        .guess_file_type()
        .map_err(|e| Failure::Unreadable(e.to_string()))?
        .read()
        .map_err(|e| Failure::Parse(e.to_string()))?;
    let mut m = Media::default();
    let ms = tagged.properties().duration().as_millis();
    if ms > 0 {
        m.duration_ms = Some(ms as u64);
    }
    if let Some(tag) = tagged.primary_tag().or_else(|| tagged.first_tag()) {
        m.artist = tag.artist().and_then(|s| clean(&s));
        m.album = tag.album().and_then(|s| clean(&s));
        m.title = tag.title().and_then(|s| clean(&s));
        m.genre = tag.genre().and_then(|s| clean(&s));
        m.track = tag.track().filter(|&n| n > 0);
        m.year = tag.date().map(|d| i32::from(d.year)).filter(|&y| y > 0);
    }
    Ok(m)
}
