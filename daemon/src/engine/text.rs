//! Reading a file's text (ReadText RPC, `fsctl cat`, MCP `read_text_file`):
//! what content search reads of a file, a page at a time.
//!
//! The text comes from the content index when it holds the file's text
//! for the file as it is now (same size, mtime and extractor version): no
//! file is opened then. Otherwise (a file outside the content folders, one
//! not read yet, or changed since) it is extracted on the spot, exactly as
//! the content worker would: plain text in-process, documents in the
//! sandboxed child, under the same caps.
//!
//! Who may read what is decided here, the same way for every client:
//! a caller sees only what it could read itself (machine-wide mode), a
//! BLOCK or SKIP file is never read, and a WARN file only when the request
//! says so, the answer marking it.

use super::visibility::{self, View};
use super::*;
use crate::queries::access;
use crate::store::Kind;
use crate::store::content::{self, StoredText};
use fsindex_extract::Failure;

/// A page of a file's text, as the ReadText RPC asks it.
#[derive(Clone, Debug, Default)]
pub struct TextArgs {
    pub path: Vec<u8>,
    /// Bytes of UTF-8 text to skip (moved back to a character's start).
    pub offset: u64,
    /// Bytes of text wanted: 0 for [`DEFAULT_PAGE`], at most [`MAX_PAGE`].
    pub length: u64,
    /// Read a WARN-tier file (config.toml `[sensitive] warn`).
    pub allow_sensitive: bool,
}

/// Text per answer when the request does not say.
pub const DEFAULT_PAGE: u64 = 64 << 10;
/// Most text per answer (a gRPC message is at most 4 MiB).
pub const MAX_PAGE: u64 = 1 << 20;

/// Where a page of text came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TextSource {
    /// The content index's stored text: the file was not opened.
    Index,
    /// Extracted from the file for this request.
    Extracted,
}

impl TextSource {
    pub fn name(self) -> &'static str {
        match self {
            TextSource::Index => "index",
            TextSource::Extracted => "extracted",
        }
    }
}

/// A page of a file's text.
#[derive(Clone, Debug)]
pub struct TextPage {
    pub path: PathBuf,
    pub text: String,
    /// Where `text` starts in the whole text (bytes).
    pub offset: u64,
    /// Bytes of the whole text (as capped by the extractor).
    pub total_bytes: u64,
    /// The file holds more text than the extractor keeps
    /// (`content_max_text_bytes`, 2 MiB by default).
    pub truncated: bool,
    /// What it was read as: `text`, `markdown`, `html`, `pdf`, `docx`, ...
    pub format: String,
    /// How its bytes were decoded (`UTF-8`, `windows-1252`, `PDF text
    /// (font encodings)`, ...).
    pub encoding: String,
    pub source: TextSource,
    /// A WARN-tier file, read because the request allowed it.
    pub sensitive: bool,
}

/// Why a file has no text, in words a user acts on.
fn no_text(path: &Path, f: &Failure) -> Error {
    let p = path.display();
    match f {
        Failure::Timeout => Error::Timeout(format!(
            "{p}: reading its text took longer than the extractor's limit; not read"
        )),
        Failure::Parse(_) | Failure::Bomb(_) | Failure::Crashed(_) | Failure::MemoryLimit => {
            Error::Precondition(format!(
                "{p}: cannot read its text: the file looks damaged ({f})"
            ))
        }
        Failure::Binary | Failure::Unsupported => Error::Precondition(format!(
            "{p}: not a text file or document ({f}); it has no text to read"
        )),
        _ => Error::Precondition(format!("{p}: cannot read its text: {f}")),
    }
}

impl Engine {
    /// A page of the text of the file at `args.path` (ReadText RPC).
    pub fn read_text(&self, args: TextArgs, mut view: Option<View>) -> Result<TextPage, Error> {
        self.note_activity();
        let path = read::seen_path(&mut view, &args.path)?;
        let shown = || path.display().to_string();
        // The sensitive tiers first: a SKIP file is not in the index (its
        // text may not be either); BLOCK and excluded files answer as
        // missing ones do, as Stat answers them.
        let live = self.on_disk_or_indexed(&path)?;
        let roots = self.store.read(crate::store::roots)?;
        let rules = self.rules();
        let verdict = match crate::store::root_of(&roots, &path) {
            Some(root) => {
                let root = crate::platform::bytes::path_buf(&root.path);
                rules.path_verdict(&root, &path, false)
            }
            None => Verdict::Index,
        };
        match verdict {
            Verdict::Skip => {
                return Err(Error::PermissionDenied(format!(
                    "{}: a sensitive file (config.toml [sensitive] skip); never read",
                    shown()
                )));
            }
            v if v.hides() => return Err(Error::NotFound(shown())),
            Verdict::Warn if !args.allow_sensitive => {
                return Err(Error::PermissionDenied(format!(
                    "{}: a sensitive file (config.toml [sensitive] warn); read it only if you \
                     mean to: --sensitive (fsctl cat), allowSensitive (MCP), allow_sensitive \
                     (ReadText)",
                    shown()
                )));
            }
            _ => {}
        }
        let sensitive = verdict == Verdict::Warn;
        let info = self
            .store
            .read(|c| crate::queries::browse::stat(c, &path))?;
        let Some(row) = info.row else {
            return Err(Error::NotFound(shown()));
        };
        if row.kind != Kind::File {
            return Err(Error::InvalidArgument(format!(
                "{}: not a file (a {}); only a file has text",
                shown(),
                match row.kind {
                    Kind::Dir => "folder",
                    Kind::Symlink => "symbolic link",
                    _ => "special file",
                }
            )));
        }
        if let Some(v) = &view
            && !visibility::may(&v.caller, &path, access::R)
        {
            return Err(Error::PermissionDenied(format!(
                "{}: you may not read this file",
                shown()
            )));
        }
        let Some(kind) = fsindex_extract::kind_for_name(&row.name) else {
            return Err(Error::Precondition(format!(
                "{}: not a text file or document ({}); it has no text to read",
                shown(),
                if info.kind.is_empty() {
                    "binary"
                } else {
                    info.kind.as_str()
                }
            )));
        };
        // The stored text serves only while it is the text of the file as
        // it is now.
        let stored = self
            .store
            .read(|c| content::text(c, row.id))?
            .filter(|s: &StoredText| {
                live.as_ref().is_some_and(|m| {
                    m.kind == Kind::File
                        && m.size == s.made.size
                        && m.mtime_ns == s.made.mtime_ns
                        && s.made.version == kind.version()
                })
            });
        let (text, truncated, encoding, source) = match stored {
            Some(s) => (s.text, s.truncated, s.encoding, TextSource::Index),
            None => {
                let e = self.extract(&path, kind).map_err(|f| no_text(&path, &f))?;
                (e.text, e.truncated, e.encoding, TextSource::Extracted)
            }
        };
        let length = match args.length {
            0 => DEFAULT_PAGE,
            n => n.min(MAX_PAGE),
        };
        let (from, to) = page(&text, args.offset, length);
        Ok(TextPage {
            offset: from as u64,
            total_bytes: text.len() as u64,
            text: text[from..to].to_owned(),
            path,
            truncated,
            format: kind.name().to_owned(),
            encoding,
            source,
            sensitive,
        })
    }
}

/// The byte range of `text` that a page from `offset` of `length` bytes
/// covers, moved back to character boundaries (a page never splits a
/// character; one that cannot hold a whole character holds one anyway).
fn page(text: &str, offset: u64, length: u64) -> (usize, usize) {
    let from = text.floor_char_boundary(offset.min(text.len() as u64) as usize);
    let want = from.saturating_add(length as usize).min(text.len());
    let mut to = text.floor_char_boundary(want);
    if to == from && from < text.len() {
        to = text.ceil_char_boundary(from + 1);
    }
    (from, to)
}

#[cfg(test)]
mod tests {
    use super::page;

    #[test]
    fn pages_never_split_a_character() {
        let t = "aé€z"; // 1 + 2 + 3 + 1 bytes
        assert_eq!(page(t, 0, 100), (0, 7));
        assert_eq!(page(t, 0, 2), (0, 1));
        assert_eq!(page(t, 2, 2), (1, 3), "an offset inside é starts at é");
        assert_eq!(page(t, 3, 1), (3, 6), "a page too short for € holds €");
        assert_eq!(page(t, 7, 10), (7, 7));
        assert_eq!(page(t, 99, 10), (7, 7));
    }
}
