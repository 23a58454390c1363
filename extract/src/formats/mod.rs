//! One module per file format, each writing into a [`TextSink`].
//!
//! The dispatch below is the only place that knows which module reads which
//! [`Kind`]; every module receives an already opened, already size-checked
//! regular file (see [`crate::open`]).

pub mod archive;
pub mod epub;
pub mod mail;
pub mod markup;
pub mod mbox;
pub mod msg;
pub mod office;
pub mod pdf;
pub mod rtf;
pub mod sevenz;
pub mod text;

use crate::sink::TextSink;
use crate::{Failure, Kind, Limits};
use std::fs::File;

/// [`extract`] for the kinds read in the daemon's own process
/// ([`Kind::in_process`]); any other kind is `Unsupported`. The daemon calls
/// only this, so the document, archive and mail readers are linked into the
/// extraction child alone (3 MB less code mapped by the daemon).
pub fn extract_in_process(
    file: File,
    size: u64,
    kind: Kind,
    sink: &mut TextSink,
) -> Result<(), Failure> {
    match kind {
        Kind::Text | Kind::Markdown => text::extract(file, size, false, sink),
        Kind::MaybeText => text::extract(file, size, true, sink),
        Kind::Html => markup::extract(file, size, true, sink),
        Kind::Xml => markup::extract(file, size, false, sink),
        Kind::Rtf => rtf::extract(file, size, sink),
        _ => Err(Failure::Unsupported),
    }
}

/// Extracts the open `file` of `size` bytes as `kind` into `sink`.
pub fn extract(
    file: File,
    size: u64,
    kind: Kind,
    limits: &Limits,
    sink: &mut TextSink,
) -> Result<(), Failure> {
    match kind {
        _ if kind.in_process() => extract_in_process(file, size, kind, sink),
        Kind::Pdf => pdf::extract(file, size, limits, sink),
        Kind::Docx | Kind::Pptx | Kind::Xlsx | Kind::Odt | Kind::Ods | Kind::Odp => {
            office::extract(file, kind, limits, sink)
        }
        Kind::Eml => mail::extract(file, size, sink),
        Kind::Epub => epub::extract(file, limits, sink),
        Kind::Mbox => mbox::extract(file, size, sink),
        Kind::Archive => archive::extract(file, limits, sink),
        Kind::Msg => msg::extract(file, limits, sink),
        // Media is read from a path by `crate::media`, never as text; the
        // in-process kinds are read above.
        _ => Err(Failure::Unsupported),
    }
}
