//! The Manifest RPC (`fsctl manifest`, MCP `folder_manifest`): every file
//! under a folder with its path relative to it, kind, size, mtime and a
//! one-line summary, sized for an agent's context.
//!
//! The files come from the name index; each summary
//! ([`fsindex_extract::summary`]) from, in order: a document's title in its
//! properties (the media row, read now if the file has none current); the
//! head of a text file (64 KiB, through the daemon's no-follow open: its
//! first heading, doc comment or sentence); a document's text as the
//! content index stores it, else extracted now by the sandboxed child under
//! the usual caps. Summaries are cached per file state (`summaries`,
//! migration 0013), so a second manifest reads nothing.
//!
//! Sensitive tiers as for ReadText: BLOCK and SKIP files are not in the
//! index; a WARN file is listed (flagged) without a summary unless the
//! request allows it, and its summary is never cached. A machine-wide
//! caller sees the files of folders it can open and summaries of files it
//! may read.
//!
//! Over a token budget (bytes / 4 of the text form, as `fsctl map`), the
//! oldest files are left out first: summaries are made newest first until
//! the next line would not fit, so a large folder costs only what is shown.

use std::collections::{HashMap, HashSet};
use std::io::Read;

use super::read::seen_path;
use super::visibility::{self, View};
use super::*;
use crate::queries::access;
use crate::queries::browse::kind_name;
use crate::queries::query::kind_of;
use crate::store::Kind;
use crate::store::content;
use crate::store::summaries::{self, SummaryRow};
use fsindex_extract::summary::{self, Format, Source};

/// A manifest, as the Manifest RPC asks it.
#[derive(Clone, Debug, Default)]
pub struct ManifestArgs {
    pub path: Vec<u8>,
    /// Tokens (bytes / 4, rounded up) the text form may take; 0: no
    /// budget (then `offset` and `limit` page the files in path order).
    pub budget: u32,
    pub offset: u64,
    /// 0: all.
    pub limit: u64,
    /// Summarise WARN-tier files too.
    pub allow_sensitive: bool,
}

/// One file of a manifest.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ManifestFile {
    /// Below the manifest's folder, byte-exact.
    pub rel: Vec<u8>,
    /// document, image, audio, video, archive, code, text or other.
    pub kind: &'static str,
    pub size: u64,
    pub mtime_ns: i64,
    /// Empty when there is none (or it was not the caller's to read).
    pub summary: String,
    /// `title`, `heading`, `sentence`, `doc-comment`, or empty.
    pub source: &'static str,
    /// A WARN-tier name.
    pub sensitive: bool,
}

impl ManifestFile {
    /// The file's line in the text form (what the budget counts):
    /// `relativePath TAB kind TAB size TAB mtime TAB summary`, mtime in RFC
    /// 3339 to the second, UTC.
    pub fn line(&self) -> String {
        format!(
            "{}\t{}\t{}\t{}\t{}\n",
            String::from_utf8_lossy(&self.rel),
            self.kind,
            self.size,
            rfc3339_seconds(self.mtime_ns),
            self.summary
        )
    }
}

/// A time as RFC 3339 in UTC, to the second.
pub fn rfc3339_seconds(ns: i64) -> String {
    jiff::Timestamp::from_second(ns.div_euclid(1_000_000_000))
        .map(|t| t.to_string())
        .unwrap_or_default()
}

/// The header of the text form: what is shown of how many.
pub fn header(path: &[u8], shown: u64, total: u64, left_out: u64) -> String {
    let mut h = format!(
        "# {}: {shown} of {total} files",
        String::from_utf8_lossy(path)
    );
    if left_out > 0 {
        h += &format!(", the {left_out} oldest left out to fit the budget");
    }
    h + "\n# relativePath\tkind\tsize\tmtime\tsummary\n"
}

/// A manifest's answer.
#[derive(Clone, Debug, Default)]
pub struct Manifest {
    pub path: Vec<u8>,
    /// In path order (folders before what they hold, names byte-wise).
    pub files: Vec<ManifestFile>,
    /// Files under the folder in all.
    pub total: u64,
    /// Left out to fit the budget (the oldest).
    pub left_out: u64,
    /// Tokens of the text form ([`header`] and each [`ManifestFile::line`]).
    pub tokens: u64,
}

/// Summaries made so far of those to make.
#[derive(Clone, Copy, Debug, Default)]
pub struct ManifestProgress {
    pub done: u64,
    pub todo: u64,
}

/// Cached rows sent to the writer at a time.
const CACHE_BATCH: usize = 256;

/// A file found in the index.
struct Found {
    id: u32,
    path: Vec<u8>,
    rel: Vec<u8>,
    size: u64,
    mtime_ns: i64,
    sensitive: bool,
}

fn tokens_of(bytes: usize) -> u64 {
    (bytes as u64).div_ceil(4)
}

/// Up to `max` bytes of a file's head.
fn head(path: &Path, max: usize) -> Option<Vec<u8>> {
    let f = crate::platform::fs::open_file(path).ok()?;
    let mut buf = Vec::with_capacity(max.min(16 << 10));
    f.take(max as u64).read_to_end(&mut buf).ok()?;
    Some(buf)
}

impl Engine {
    /// The manifest of the folder at `args.path` (Manifest RPC).
    /// `progress` hears how many summaries are made, and stops the work
    /// by answering false.
    pub fn manifest(
        &self,
        args: ManifestArgs,
        mut view: Option<View>,
        progress: &mut dyn FnMut(ManifestProgress) -> bool,
    ) -> Result<Manifest, Error> {
        self.note_activity();
        self.store.backlog.wait();
        let base = seen_path(&mut view, &args.path)?;
        let (top, closed) = self.store.read(|c| {
            let (_, id) = crate::store::resolve(c, &base)?;
            let closed = match &view {
                Some(v) => self.closed_under(c, id, &args.path, v)?,
                None => Vec::new(),
            };
            Ok((id, closed))
        })?;
        let closed: HashSet<u32> = closed
            .iter()
            .filter_map(|c| u32::try_from(c.id).ok())
            .collect();
        let Ok(top) = u32::try_from(top) else {
            return Err(Error::NotFound(base.display().to_string()));
        };
        let base_bytes = crate::platform::bytes::of(&base).to_vec();
        let mut found = self.manifest_files(top, &base_bytes, &closed)?;
        let total = found.len() as u64;

        // Which files get a line: newest first within the budget, or the
        // page asked for in path order.
        let by_path =
            |a: &Found, b: &Found| a.rel.split(|&x| x == b'/').cmp(b.rel.split(|&x| x == b'/'));
        let caller = view.as_ref().map(|v| v.caller.clone());
        let mut cache = Vec::new();
        let mut files = Vec::new();
        let mut left_out = 0;
        let mut tokens;
        if args.budget == 0 {
            found.sort_by(by_path);
            let from = (args.offset as usize).min(found.len());
            let to = match args.limit {
                0 => found.len(),
                n => from.saturating_add(n as usize).min(found.len()),
            };
            let todo = (to - from) as u64;
            for (k, f) in found[from..to].iter().enumerate() {
                files.push(self.manifest_file(f, &args, caller.as_ref(), &mut cache)?);
                if !progress(ManifestProgress {
                    done: k as u64 + 1,
                    todo,
                }) {
                    return Err(Error::Cancelled);
                }
            }
            let shown = files.len() as u64;
            tokens = tokens_of(
                header(&base_bytes, shown, total, 0).len()
                    + files.iter().map(|f| f.line().len()).sum::<usize>(),
            );
        } else {
            found.sort_by(|a, b| b.mtime_ns.cmp(&a.mtime_ns).then_with(|| by_path(a, b)));
            let budget = u64::from(args.budget) * 4;
            // The header at its longest (every count at its most digits).
            let mut bytes = header(&base_bytes, total, total, total.max(1)).len() as u64;
            let todo = found.len() as u64;
            for (k, f) in found.iter().enumerate() {
                let file = self.manifest_file(f, &args, caller.as_ref(), &mut cache)?;
                let cost = file.line().len() as u64;
                if bytes + cost > budget {
                    left_out = total - k as u64;
                    break;
                }
                bytes += cost;
                files.push(file);
                if !progress(ManifestProgress {
                    done: k as u64 + 1,
                    todo,
                }) {
                    return Err(Error::Cancelled);
                }
            }
            files.sort_by(|a, b| a.rel.split(|&x| x == b'/').cmp(b.rel.split(|&x| x == b'/')));
            let shown = files.len() as u64;
            tokens = tokens_of(
                header(&base_bytes, shown, total, left_out).len()
                    + files.iter().map(|f| f.line().len()).sum::<usize>(),
            );
            if tokens > u64::from(args.budget) {
                // Not even the header fits.
                files.clear();
                left_out = total;
                tokens = tokens_of(header(&base_bytes, 0, total, total).len());
            }
        }
        if !cache.is_empty() {
            self.writer.send(vec![Op::PutSummaries(cache)])?;
        }
        Ok(Manifest {
            path: base_bytes,
            files,
            total,
            left_out,
            tokens,
        })
    }

    /// The files below folder `top` (not in `.git` folders, nor in folders
    /// the caller cannot open), with their sensitive flag.
    fn manifest_files(
        &self,
        top: u32,
        base: &[u8],
        closed: &HashSet<u32>,
    ) -> Result<Vec<Found>, Error> {
        let rules = self.rules();
        let snapshot = crate::index::read_loaded(&self.snapshot);
        if snapshot.entry_kind(top) != Some(Kind::Dir) {
            return Err(Error::InvalidArgument(format!(
                "{}: not a folder; a manifest lists a folder's files",
                String::from_utf8_lossy(base)
            )));
        }
        let mut dirs: HashMap<u32, Vec<u8>> = HashMap::from([(top, base.to_vec())]);
        let mut out = Vec::new();
        snapshot.walk_below(top, &mut |i, parent| {
            let Some(kind) = snapshot.entry_kind(i) else {
                return false;
            };
            let name = snapshot.entry_name(i);
            let Some(dir) = dirs.get(&parent) else {
                return false;
            };
            let path = crate::platform::bytes::child(dir, &name);
            match kind {
                Kind::Dir => {
                    if &*name == b".git" || closed.contains(&i) {
                        return false;
                    }
                    dirs.insert(i, path);
                    true
                }
                Kind::File => {
                    let folder = rules.folder(crate::platform::bytes::path(dir));
                    let sensitive =
                        folder.verdict(crate::platform::bytes::os(&name), false) == Verdict::Warn;
                    let rel = path[base.len()..]
                        .strip_prefix(b"/")
                        .unwrap_or(&path[base.len()..])
                        .to_vec();
                    out.push(Found {
                        id: i,
                        rel,
                        path,
                        size: snapshot.entry_size(i),
                        mtime_ns: snapshot.entry_mtime_ns(i),
                        sensitive,
                    });
                    false
                }
                _ => false,
            }
        });
        Ok(out)
    }

    /// One file's line, its summary from the cache or made now (and queued
    /// for the cache in `cache`).
    fn manifest_file(
        &self,
        f: &Found,
        args: &ManifestArgs,
        caller: Option<&access::Caller>,
        cache: &mut Vec<SummaryRow>,
    ) -> Result<ManifestFile, Error> {
        let name = f.rel.rsplit(|&b| b == b'/').next().unwrap_or(&f.rel);
        let lossy = String::from_utf8_lossy(name);
        let mut file = ManifestFile {
            rel: f.rel.clone(),
            kind: kind_of(&lossy, false).map_or("other", kind_name),
            size: f.size,
            mtime_ns: f.mtime_ns,
            sensitive: f.sensitive,
            ..Default::default()
        };
        let format = summary::format_for_name(name);
        if format == Format::None || (f.sensitive && !args.allow_sensitive) {
            return Ok(file);
        }
        let path = crate::platform::bytes::path(&f.path);
        if let Some(c) = caller
            && !visibility::may(c, path, access::R)
        {
            return Ok(file);
        }
        let id = i64::from(f.id);
        let cached = self
            .store
            .read(|c| summaries::of_entry(c, id))?
            .filter(|r| {
                r.size == f.size && r.mtime_ns == f.mtime_ns && r.version == summary::VERSION
            });
        let made = match cached {
            Some(r) => Source::from_name(&r.source).map(|s| (s, r.summary)),
            None => {
                let made = self.summarise(id, path, name, f, format);
                if !f.sensitive {
                    cache.push(SummaryRow {
                        entry_id: id,
                        size: f.size,
                        mtime_ns: f.mtime_ns,
                        version: summary::VERSION,
                        source: made.as_ref().map_or("", |m| m.0.name()).to_owned(),
                        summary: made.as_ref().map(|m| m.1.clone()).unwrap_or_default(),
                    });
                    if cache.len() >= CACHE_BATCH {
                        self.writer
                            .send(vec![Op::PutSummaries(std::mem::take(cache))])?;
                    }
                }
                made
            }
        };
        if let Some((source, text)) = made {
            file.source = source.name();
            file.summary = text;
        }
        Ok(file)
    }

    /// A summary made from the file itself: its title (documents), else
    /// its head (text), else its text (documents).
    fn summarise(
        &self,
        id: i64,
        path: &Path,
        name: &[u8],
        f: &Found,
        format: Format,
    ) -> Option<(Source, String)> {
        if format.reads_head() {
            let bytes = head(path, summary::HEAD_BYTES)?;
            if fsindex_extract::decode::looks_binary(&bytes) {
                return None;
            }
            let complete = (bytes.len() as u64) >= f.size;
            let text = fsindex_extract::decode::decode(&bytes, complete);
            return summary::summarise(format, &text);
        }
        // A document: the title in its properties first.
        if fsindex_extract::media::media_kind_for_name(name)
            == Some(fsindex_extract::media::MediaKind::Document)
            && let Ok(Some(row)) = self.current_media(id, path)
            && let Some(t) = row.media.title.as_deref().and_then(summary::one_line)
        {
            return Some((Source::Title, t));
        }
        let kind = fsindex_extract::kind_for_name(name)?;
        let stored = self
            .store
            .read(|c| content::text(c, id))
            .ok()
            .flatten()
            .filter(|s| {
                s.made.size == f.size
                    && s.made.mtime_ns == f.mtime_ns
                    && s.made.version == kind.version()
            });
        let text = match stored {
            Some(s) => s.text,
            None => self.extract(path, kind).ok()?.text,
        };
        summary::summarise(format, &text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_and_headers() {
        let f = ManifestFile {
            rel: b"docs/a.md".to_vec(),
            kind: "text",
            size: 12,
            mtime_ns: 1_704_164_645_123_456_789,
            summary: "Notes".into(),
            source: "heading",
            sensitive: false,
        };
        assert_eq!(
            f.line(),
            "docs/a.md\ttext\t12\t2024-01-02T03:04:05Z\tNotes\n"
        );
        assert_eq!(
            header(b"/t", 1, 3, 2),
            "# /t: 1 of 3 files, the 2 oldest left out to fit the budget\n\
             # relativePath\tkind\tsize\tmtime\tsummary\n"
        );
    }
}
