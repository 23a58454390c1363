//! PDF, through lopdf.
//!
//! lopdf rather than pdf-extract: pdf-extract is lopdf plus font-program
//! parsers (Type 1, CFF, CMaps, euclid geometry) for better word spacing,
//! roughly doubling the build, and it panics on more real files; lopdf's own
//! `extract_text` decodes ToUnicode maps and the standard encodings, which is
//! what a search index needs. Both can panic or loop on hostile input, which
//! is why this module only ever runs in the sandboxed child.
//!
//! Pages are extracted one at a time, each page's decompressed content
//! capped at [`Limits::max_unzipped_bytes`] (lopdf refuses the page past
//! it), until the text cap is reached. A page that fails is skipped; a file
//! whose every page fails is a parse failure.

use crate::sink::TextSink;
use crate::{Failure, Limits};
use std::fs::File;

/// Bump when the output for the same file changes.
pub const VERSION: u32 = 1;

pub fn extract(file: File, size: u64, limits: &Limits, sink: &mut TextSink) -> Result<(), Failure> {
    let bytes = crate::open::read_prefix(file, size)?;
    let doc = lopdf::Document::load_mem(&bytes).map_err(|e| Failure::Parse(e.to_string()))?;
    drop(bytes);
    let pages: Vec<u32> = doc.get_pages().into_keys().collect();
    let cap = usize::try_from(limits.max_unzipped_bytes).unwrap_or(usize::MAX);
    let mut first_error = None;
    let mut ok = 0usize;
    for n in &pages {
        if sink.is_full() {
            break;
        }
        match doc.extract_text_with_limit(&[*n], cap) {
            Ok(text) => {
                ok += 1;
                sink.push_str(&text);
                sink.newline();
            }
            Err(e) => {
                first_error.get_or_insert_with(|| format!("page {n}: {e}"));
            }
        }
    }
    match first_error {
        Some(e) if ok == 0 => Err(Failure::Parse(e)),
        _ => Ok(()),
    }
}
