//! Plain text, source code and Markdown: decoded, otherwise kept as written.
//!
//! Only as much of the file is read as can fill the text cap: every encoding
//! handled yields at least one UTF-8 byte per two input bytes, so a prefix of
//! twice the cap (plus a little for a cut sequence) always suffices.

use crate::sink::TextSink;
use crate::{Failure, decode};
use std::fs::File;

/// Bump when the output for the same file changes.
pub const VERSION: u32 = 1;

pub fn extract(file: File, size: u64, sniff: bool, sink: &mut TextSink) -> Result<(), Failure> {
    let want = (sink.room() as u64).saturating_mul(2).saturating_add(8);
    let bytes = crate::open::read_prefix(file, want)?;
    if sniff && decode::looks_binary(&bytes) {
        return Err(Failure::Binary);
    }
    let complete = (bytes.len() as u64) >= size;
    let (text, encoding) = decode::decode_named(&bytes, complete);
    sink.set_encoding(encoding);
    sink.push_str(&text);
    if !complete {
        sink.mark_truncated();
    }
    Ok(())
}
