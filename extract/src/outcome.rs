//! What an extraction returns: the text with its provenance, or why not.
//!
//! Failures are counted and shown per reason in `fsctl status`, so every
//! variant has a stable short name ([`Failure::reason`]) that survives the
//! trip through the sandbox protocol ([`Failure::from_reason`]).

use crate::Kind;

/// The text of one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Extracted {
    /// What the file says, at most [`Limits::max_text_bytes`] bytes of UTF-8.
    pub text: String,
    /// True when the file had more text than the cap (cut on a char boundary).
    pub truncated: bool,
    /// The kind it was read as.
    pub kind: Kind,
    /// The extractor that produced the text (`text`, `markup`, `pdf`, ...).
    pub extractor: &'static str,
    /// That extractor's version: when it changes, stored rows made by an
    /// older version are worth extracting again.
    pub version: u32,
    /// How the bytes were decoded: for text, HTML and XML the encoding found
    /// (a byte-order mark, UTF-8, or chardetng's guess: `windows-1252`,
    /// `Shift_JIS`, ...); for documents what the format fixes
    /// ([`Kind::decoding`]).
    pub encoding: String,
}

/// Why a file has no text. A runtime error, counted, never fatal.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Failure {
    /// Bigger than the cap for its kind; the file was never read.
    #[error("too big: {size} bytes, limit {limit}")]
    TooBig { size: u64, limit: u64 },
    /// Not a regular file (FIFO, socket, device, directory, symlink): never opened,
    /// or opened without blocking and refused.
    #[error("not a regular file: {0}")]
    NotRegular(String),
    /// The file could not be opened or read (permissions, vanished, I/O error).
    #[error("unreadable: {0}")]
    Unreadable(String),
    /// A file with an unknown extension whose first 8 KiB hold a NUL byte.
    #[error("binary content")]
    Binary,
    /// No extractor for this name.
    #[error("unsupported kind")]
    Unsupported,
    /// The document is malformed (or a parser panicked on it).
    #[error("parse error: {0}")]
    Parse(String),
    /// A zip-based document whose members decompress (declared or actually)
    /// beyond the budget, or hold too many members.
    #[error("zip bomb: {0}")]
    Bomb(String),
    /// The sandboxed child took longer than its time limit; it was killed.
    #[error("timed out")]
    Timeout,
    /// The sandboxed child ran out of its memory limit; it died.
    #[error("memory limit exceeded")]
    MemoryLimit,
    /// The sandboxed child died for another reason (a signal, a crash).
    #[error("extractor crashed: {0}")]
    Crashed(String),
    /// The sandboxed child could not be started or spoke nonsense.
    #[error("sandbox: {0}")]
    Sandbox(String),
}

impl Failure {
    /// A stable short name, for counting failures by reason in status.
    pub fn reason(&self) -> &'static str {
        match self {
            Failure::TooBig { .. } => "too_big",
            Failure::NotRegular(_) => "not_regular",
            Failure::Unreadable(_) => "unreadable",
            Failure::Binary => "binary",
            Failure::Unsupported => "unsupported",
            Failure::Parse(_) => "parse",
            Failure::Bomb(_) => "bomb",
            Failure::Timeout => "timeout",
            Failure::MemoryLimit => "memory",
            Failure::Crashed(_) => "crashed",
            Failure::Sandbox(_) => "sandbox",
        }
    }

    /// The variant's detail, the inverse of [`Failure::from_reason`].
    pub fn detail(&self) -> String {
        match self {
            Failure::TooBig { size, limit } => format!("{size} {limit}"),
            Failure::NotRegular(s)
            | Failure::Unreadable(s)
            | Failure::Parse(s)
            | Failure::Bomb(s)
            | Failure::Crashed(s)
            | Failure::Sandbox(s) => s.clone(),
            Failure::Binary | Failure::Unsupported | Failure::Timeout | Failure::MemoryLimit => {
                String::new()
            }
        }
    }

    /// Rebuilds a failure from [`Failure::reason`] and [`Failure::detail`].
    pub fn from_reason(reason: &str, detail: &str) -> Failure {
        let s = detail.to_owned();
        match reason {
            "too_big" => {
                let mut it = detail.split(' ').map(|n| n.parse().unwrap_or(0));
                Failure::TooBig {
                    size: it.next().unwrap_or(0),
                    limit: it.next().unwrap_or(0),
                }
            }
            "not_regular" => Failure::NotRegular(s),
            "unreadable" => Failure::Unreadable(s),
            "binary" => Failure::Binary,
            "unsupported" => Failure::Unsupported,
            "parse" => Failure::Parse(s),
            "bomb" => Failure::Bomb(s),
            "timeout" => Failure::Timeout,
            "memory" => Failure::MemoryLimit,
            "crashed" => Failure::Crashed(s),
            _ => Failure::Sandbox(format!("unknown failure {reason:?}: {detail}")),
        }
    }
}

/// Bounds on what one extraction may read and produce.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Largest plain-text file (text, source, Markdown, HTML, XML) read: 20 MiB.
    pub max_text_file: u64,
    /// Largest document (PDF, Office, OpenDocument, RTF, mail) read: 50 MiB.
    pub max_document_file: u64,
    /// Most text kept per file: 2 MiB (UTF-8 bytes, cut on a char boundary).
    pub max_text_bytes: usize,
    /// Most bytes decompressed from one zip-based document, over all the
    /// members read, counted as they come out of the inflater: 200 MiB. Also
    /// the cap on one PDF page's decompressed content.
    pub max_unzipped_bytes: u64,
    /// Most members a zip-based document may list: 10,000.
    pub max_zip_members: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_text_file: 20 << 20,
            max_document_file: 50 << 20,
            max_text_bytes: 2 << 20,
            max_unzipped_bytes: 200 << 20,
            max_zip_members: 10_000,
        }
    }
}
