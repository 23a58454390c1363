//! The text of files, for fsindex's content search (issue 13).
//!
//! The daemon asks one question of this crate: *what does this file say?* The
//! answer is an [`Extracted`] (the text, capped, and which extractor version
//! produced it, so stored rows can be redone when an extractor improves) or a
//! [`Failure`] with a stable short reason for `fsctl status`.
//!
//! Why a crate of its own: extraction parses hostile bytes with third-party
//! parsers (PDF, zip, mail), and it must never hurt the daemon. So the crate is
//! built around three guards, each in its own module:
//!
//! - [`open`]: nothing but a regular file is ever opened, and nothing too big
//!   is ever read (a FIFO named `notes.txt` must not block an indexer).
//! - [`formats`]: every extractor writes into a capped [`sink::TextSink`] and
//!   zip-based documents are read through a decompression budget (zip bombs).
//! - [`sandbox`]: PDF, Office, OpenDocument and mail are parsed in a child
//!   process (`fsindex-extract-child`) at nice 19 and idle I/O, under an address
//!   space limit and a time limit; a file that panics, loops or explodes
//!   memory costs that one file, never the daemon.
//!
//! Plain text, Markdown, HTML, XML and RTF are read in-process by code of this
//! crate whose cost is linear in the (capped) input: a round trip to the child
//! would cost more than the work. [`Kind::in_process`] says which is which and
//! [`Extractor::extract`] routes by it.

pub mod decode;
pub mod formats;
pub mod kind;
pub mod media;
pub mod open;
pub mod outcome;
pub mod sandbox;
pub mod sink;
pub mod summary;

pub use kind::{Kind, kind_for_name};
pub use outcome::{Extracted, Failure, Limits};
pub use sandbox::{Extractor, Pool, SandboxConfig, child_main};

use std::path::Path;

/// Extracts `path` as `kind` in the calling process, whatever the kind.
///
/// This is the work the sandboxed child does for each request; call it
/// directly only for kinds where [`Kind::in_process`] is true (or in a process
/// that may die), and use an [`Extractor`] for the rest. Re-extracting a file
/// on demand (the daemon's snippets) is the same call.
pub fn extract_file(path: &Path, kind: Kind, limits: &Limits) -> Result<Extracted, Failure> {
    if kind == Kind::Media {
        return media::read_media(path).map(|m| Extracted {
            text: m.encode(),
            truncated: false,
            kind,
            extractor: kind.extractor(),
            version: kind.version(),
            encoding: kind.decoding().to_owned(),
        });
    }
    let (file, size) = open::open_regular(path, max_size(kind, limits))?;
    let mut sink = sink::TextSink::new(limits.max_text_bytes);
    formats::extract(file, size, kind, limits, &mut sink)?;
    Ok(sink.finish(kind))
}

/// [`extract_file`] for the kinds read in the caller's own process
/// ([`Kind::in_process`]; any other kind is `Unsupported`). A program that
/// calls only this (the daemon) links none of the document, archive, mail
/// and media readers: they live in the child (`fsindex-extract-child`).
pub fn extract_in_process(path: &Path, kind: Kind, limits: &Limits) -> Result<Extracted, Failure> {
    if !kind.in_process() {
        return Err(Failure::Unsupported);
    }
    let (file, size) = open::open_regular(path, max_size(kind, limits))?;
    let mut sink = sink::TextSink::new(limits.max_text_bytes);
    formats::extract_in_process(file, size, kind, &mut sink)?;
    Ok(sink.finish(kind))
}

/// The largest file of `kind` that is opened. A mailbox is streamed and
/// stops at the text cap, a zip archive reads its directory and text
/// members under the unzip budget: any size.
fn max_size(kind: Kind, limits: &Limits) -> u64 {
    if matches!(kind, Kind::Mbox | Kind::Archive) {
        u64::MAX
    } else if kind.is_document() {
        limits.max_document_file
    } else {
        limits.max_text_file
    }
}
