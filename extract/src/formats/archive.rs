//! Archives (issue 32): zip, tar, tar.gz/tgz, tar.zst and 7z. What their
//! members are called and what the text among them says, read from the
//! archive itself as a stream: nothing is ever extracted to disk.
//!
//! The format is told by the file's first bytes, not its name (a `.tgz`
//! that is a plain tar is read as one). The text is one block per member,
//! in the archive's order, separated by the mailbox separator line
//! ([`super::mbox::SEPARATOR`]); each block's first line is
//! `Path: inner/path`, so the daemon can show a hit as
//! `archive.zip/inner/path`. A member whose name says text (plain text,
//! source, Markdown, HTML, XML, an unknown extension without NUL bytes) is
//! read and decoded as such a file would be; any other member (a photo, a
//! document) contributes its name only. A member that is not read for a
//! reason says so on the line after its path (`[not read: encrypted]`):
//! an encrypted zip member, an archive inside the archive (archives are not
//! opened inside archives: the nesting budget is one level), a name that
//! leaves the archive (`../x`, `/etc/x`: listed by number, never by that
//! name).
//!
//! The bomb budget is the Office files' one, [`Limits`]:
//! - zip: the sizes the text members declare (each counted up to
//!   [`Limits::max_text_file`], the most read of one) are summed against
//!   [`Limits::max_unzipped_bytes`] before anything is inflated, and a
//!   member inflating past what it declared is caught by the zip crate;
//! - tar.gz and tar.zst: every byte that comes out of the decompressor
//!   (the members skipped included, since a stream is read through) counts
//!   against [`Limits::max_unzipped_bytes`]; a plain tar skips unread
//!   members by seeking;
//! - any: more than [`Limits::max_zip_members`] members is a bomb.
//!
//! A cut or damaged archive is a parse failure, whatever was read before
//! the damage. A text member is read only as far as can fill the text cap,
//! and reading stops when the cap is full.
//!
//! 7z is read by [`super::sevenz`], into the same listing.

use super::markup;
use crate::sink::TextSink;
use crate::{Failure, Kind, Limits, decode};
use std::cell::Cell;
use std::fs::File;
use std::io::{self, BufReader, Read, Seek, SeekFrom};
use std::rc::Rc;

/// Bump when the output for the same file changes.
pub const VERSION: u32 = 3;

/// The first line of a member's block.
pub const PATH_LINE: &str = "Path: ";

/// What the archive is, by its first bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    Zip,
    Tar,
    Gzip,
    Zstd,
    SevenZ,
}

fn format(head: &[u8]) -> Option<Format> {
    if head.starts_with(b"PK\x03\x04") || head.starts_with(b"PK\x05\x06") {
        Some(Format::Zip)
    } else if head.starts_with(&[0x1f, 0x8b]) {
        Some(Format::Gzip)
    } else if head.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
        Some(Format::Zstd)
    } else if super::sevenz::is_7z(head) {
        Some(Format::SevenZ)
    } else if head.get(257..262) == Some(b"ustar") {
        Some(Format::Tar)
    } else {
        None
    }
}

pub fn extract(mut file: File, limits: &Limits, sink: &mut TextSink) -> Result<(), Failure> {
    let mut head = [0u8; 262];
    let mut n = 0;
    while n < head.len() {
        match file.read(&mut head[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(Failure::Unreadable(e.to_string())),
        }
    }
    file.seek(SeekFrom::Start(0))
        .map_err(|e| Failure::Unreadable(e.to_string()))?;
    let mut out = Listing::new(sink);
    match format(&head[..n]) {
        Some(Format::Zip) => zip(file, limits, &mut out),
        Some(Format::Tar) => {
            let size = file
                .metadata()
                .map_err(|e| Failure::Unreadable(e.to_string()))?
                .len();
            let mut ar = tar::Archive::new(BufReader::new(file));
            let entries = ar.entries_with_seek().map_err(parse)?;
            tar(entries, Stream::Plain { size }, limits, &mut out)
        }
        Some(Format::Gzip) => {
            let (budget, over) = Budget::new(
                flate2::read::MultiGzDecoder::new(BufReader::new(file)),
                limits.max_unzipped_bytes,
            );
            let mut ar = tar::Archive::new(budget);
            let entries = ar.entries().map_err(parse)?;
            tar(
                entries,
                Stream::Compressed { over: &over },
                limits,
                &mut out,
            )
        }
        Some(Format::Zstd) => {
            let dec = ruzstd::decoding::StreamingDecoder::new(BufReader::new(file))
                .map_err(|e| Failure::Parse(format!("zstd: {e}")))?;
            let (budget, over) = Budget::new(dec, limits.max_unzipped_bytes);
            let mut ar = tar::Archive::new(budget);
            let entries = ar.entries().map_err(parse)?;
            tar(
                entries,
                Stream::Compressed { over: &over },
                limits,
                &mut out,
            )
        }
        Some(Format::SevenZ) => super::sevenz::extract(file, limits, &mut out),
        None => Err(Failure::Parse(
            "not an archive (zip, tar, tar.gz, tar.zst or 7z)".into(),
        )),
    }
}

fn parse(e: io::Error) -> Failure {
    Failure::Parse(e.to_string())
}

fn zip(file: File, limits: &Limits, out: &mut Listing<'_>) -> Result<(), Failure> {
    let mut zip = zip::ZipArchive::new(BufReader::new(file))
        .map_err(|e| Failure::Parse(format!("not a zip archive: {e}")))?;
    if zip.len() > limits.max_zip_members {
        return Err(too_many(zip.len(), limits));
    }
    // What each member is read as, and the sizes the text members declare.
    let mut members = Vec::with_capacity(zip.len());
    let mut declared = 0u64;
    for i in 0..zip.len() {
        let m = zip
            .by_index_raw(i)
            .map_err(|e| Failure::Parse(format!("member {i}: {e}")))?;
        if m.is_dir() {
            continue;
        }
        // A name that is not valid (not UTF-8, not CP437) is shown by number.
        let name = m
            .name()
            .map(std::borrow::Cow::into_owned)
            .unwrap_or_else(|_| format!("(member {})", i + 1));
        let read = if m.encrypted() {
            Reading::Skip("encrypted")
        } else {
            what_to_read(&name)
        };
        if let Reading::Text(_) = read {
            declared = declared.saturating_add(m.size().min(limits.max_text_file));
        }
        members.push((i, name, read));
    }
    if declared > limits.max_unzipped_bytes {
        return Err(Failure::Bomb(format!(
            "text members declare {declared} bytes unzipped, limit {}",
            limits.max_unzipped_bytes
        )));
    }
    for (n, (i, name, read)) in members.into_iter().enumerate() {
        if out.sink.is_full() {
            break;
        }
        let Some(kind) = out.member(n, &name, read) else {
            continue;
        };
        let m = zip
            .by_index(i)
            .map_err(|e| Failure::Parse(format!("{name}: {e}")))?;
        match out.read_text(m, kind, limits) {
            Ok(()) => {}
            Err(e) if e.to_string().contains("larger than its declared") => {
                return Err(Failure::Bomb(format!(
                    "{name} inflates past its declared size"
                )));
            }
            // A damaged member: its name stays, its text is skipped.
            Err(_) => out.note("damaged"),
        }
    }
    Ok(())
}

/// Where a tar's bytes come from.
#[derive(Clone, Copy)]
enum Stream<'a> {
    /// The file itself, of this size: a member is skipped by seeking, so a
    /// cut one is caught by where it would end.
    Plain { size: u64 },
    /// A decompressor, whose budget flag is set when it ran past it.
    Compressed { over: &'a Rc<Cell<bool>> },
}

/// Reads a tar's members.
fn tar<R: Read>(
    entries: tar::Entries<'_, R>,
    from: Stream<'_>,
    limits: &Limits,
    out: &mut Listing<'_>,
) -> Result<(), Failure> {
    let failed = |e: io::Error, members: usize| {
        if matches!(from, Stream::Compressed { over } if over.get()) {
            Failure::Bomb(format!(
                "more than {} bytes decompressed",
                limits.max_unzipped_bytes
            ))
        } else {
            Failure::Parse(format!("cut short or damaged after {members} members: {e}"))
        }
    };
    // Members listed (files), and entries seen (folders and links too).
    let mut n = 0;
    let mut seen = 0;
    for entry in entries {
        let entry = entry.map_err(|e| failed(e, n))?;
        seen += 1;
        if seen > limits.max_zip_members {
            return Err(too_many(seen, limits));
        }
        if let Stream::Plain { size } = from {
            let end = entry.raw_file_position().saturating_add(entry.size());
            if end > size {
                return Err(failed(
                    io::Error::other(format!("a member ends at byte {end} of {size}")),
                    n,
                ));
            }
        }
        if !entry.header().entry_type().is_file() {
            continue;
        }
        if out.sink.is_full() {
            break;
        }
        let name = String::from_utf8_lossy(&entry.path_bytes()).into_owned();
        if let Some(kind) = out.member(n, &name, what_to_read(&name)) {
            out.read_text(entry, kind, limits)
                .map_err(|e| failed(e, n))?;
        }
        n += 1;
    }
    Ok(())
}

pub(super) fn too_many(n: usize, limits: &Limits) -> Failure {
    Failure::Bomb(format!(
        "{n} members or more, limit {}",
        limits.max_zip_members
    ))
}

/// Whether a member's text is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Reading {
    /// As a file of this kind.
    Text(Kind),
    /// Its name only (a photo, a document).
    Name,
    /// Its name only, and the reason it is not read.
    Skip(&'static str),
    /// Not even its name, which would leave the archive's folder: listed by
    /// number.
    Escapes,
}

/// What is read of a member of this name.
pub(super) fn what_to_read(name: &str) -> Reading {
    if !stays_inside(name) {
        return Reading::Escapes;
    }
    match crate::kind_for_name(name.as_bytes()) {
        Some(k @ (Kind::Text | Kind::MaybeText | Kind::Markdown | Kind::Html | Kind::Xml)) => {
            Reading::Text(k)
        }
        Some(Kind::Archive) => Reading::Skip("an archive inside an archive"),
        _ => Reading::Name,
    }
}

/// False for a member name that would land outside the archive's folder if
/// unpacked: absolute, a drive, or with a `..` part.
fn stays_inside(name: &str) -> bool {
    !name.starts_with(['/', '\\'])
        && name.as_bytes().get(1) != Some(&b':')
        && !name.split(['/', '\\']).any(|part| part == "..")
}

/// The text being written, one block per member.
pub(super) struct Listing<'a> {
    sink: &'a mut TextSink,
}

impl<'a> Listing<'a> {
    fn new(sink: &'a mut TextSink) -> Self {
        Listing { sink }
    }

    /// Bytes of text the cap still takes.
    pub(super) fn room(&self) -> usize {
        self.sink.room()
    }

    pub(super) fn is_full(&self) -> bool {
        self.sink.is_full()
    }

    /// Starts member `n`'s block; the kind to read its text as, if it is read.
    pub(super) fn member(&mut self, n: usize, name: &str, read: Reading) -> Option<Kind> {
        if n > 0 {
            self.sink.newline();
            self.sink.push(super::mbox::SEPARATOR);
            self.sink.newline();
        }
        self.sink.push_str(PATH_LINE);
        if read == Reading::Escapes {
            self.sink.push_str(&format!("(member {})", n + 1));
        } else {
            self.sink
                .push_str(&name.replace(['\n', '\r', super::mbox::SEPARATOR], " "));
        }
        self.sink.newline();
        match read {
            Reading::Text(kind) => Some(kind),
            Reading::Name => None,
            Reading::Skip(why) => {
                self.note(why);
                None
            }
            Reading::Escapes => {
                self.note("its name leaves the archive");
                None
            }
        }
    }

    pub(super) fn note(&mut self, why: &str) {
        self.sink.push_str(&format!("[not read: {why}]"));
        self.sink.newline();
    }

    /// Reads a member's text, as far as can fill the rest of the text cap
    /// (two input bytes per output byte at worst), within
    /// [`Limits::max_text_file`].
    pub(super) fn read_text(
        &mut self,
        member: impl Read,
        kind: Kind,
        limits: &Limits,
    ) -> io::Result<()> {
        let want = limits.max_text_file.min(
            (self.sink.room() as u64)
                .saturating_mul(2)
                .saturating_add(8),
        );
        let mut bytes = Vec::new();
        member.take(want).read_to_end(&mut bytes)?;
        if kind == Kind::MaybeText && decode::looks_binary(&bytes) {
            return Ok(());
        }
        let text = decode::decode(&bytes, true);
        match kind {
            Kind::Html => markup::to_text(&text, true, self.sink),
            Kind::Xml => markup::to_text(&text, false, self.sink),
            _ => self
                .sink
                .push_str(&text.replace(super::mbox::SEPARATOR, " ")),
        }
        Ok(())
    }
}

/// A decompressed stream that fails once more than its budget came out.
struct Budget<R> {
    inner: R,
    left: u64,
    over: Rc<Cell<bool>>,
}

impl<R> Budget<R> {
    fn new(inner: R, budget: u64) -> (Self, Rc<Cell<bool>>) {
        let over = Rc::new(Cell::new(false));
        let b = Budget {
            inner,
            left: budget,
            over: over.clone(),
        };
        (b, over)
    }
}

impl<R: Read> Read for Budget<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        if n as u64 > self.left {
            self.over.set(true);
            return Err(io::Error::other("over the decompression budget"));
        }
        self.left -= n as u64;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn tar_of(members: &[(&str, &[u8])]) -> Vec<u8> {
        let mut b = tar::Builder::new(Vec::new());
        for (name, data) in members {
            let mut h = tar::Header::new_gnu();
            h.set_size(data.len() as u64);
            h.set_mode(0o644);
            // set_path refuses `..`; a hostile archive writes the bytes.
            h.as_old_mut().name[..name.len()].copy_from_slice(name.as_bytes());
            h.set_cksum();
            b.append(&h, *data).unwrap();
        }
        b.into_inner().unwrap()
    }

    fn read(bytes: &[u8], limits: &Limits) -> Result<String, Failure> {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.tar");
        std::fs::write(&p, bytes).unwrap();
        crate::extract_file(&p, Kind::Archive, limits).map(|e| e.text)
    }

    #[test]
    fn names_that_leave_the_archive_are_caught() {
        for bad in ["../x", "a/../../x", "/etc/x", "\\x", "C:x", "a\\..\\x"] {
            assert!(!stays_inside(bad), "{bad}");
        }
        for good in ["x", "a/b..c/x", "..x", "a/.../x"] {
            assert!(stays_inside(good), "{good}");
        }
    }

    #[test]
    fn a_tar_lists_its_members_and_reads_the_text_ones() {
        let t = tar_of(&[
            ("a/note.txt", b"kelp\n"),
            ("../up.txt", b"secret\n"),
            ("in.zip", b"PK"),
        ]);
        let text = read(&t, &Limits::default()).unwrap();
        let sep = super::super::mbox::SEPARATOR;
        assert_eq!(
            text,
            format!(
                "Path: a/note.txt\nkelp\n{sep}\nPath: (member 2)\n[not read: its name leaves \
                 the archive]\n{sep}\nPath: in.zip\n[not read: an archive inside an archive]"
            )
        );
    }

    #[test]
    fn a_compressed_tar_past_its_budget_is_a_bomb_and_a_cut_one_a_parse_failure() {
        let t = tar_of(&[("zeros.txt", &[0u8; 100_000]), ("b.txt", b"x")]);
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(&t).unwrap();
        let gz = gz.finish().unwrap();
        let small = Limits {
            max_unzipped_bytes: 50_000,
            ..Limits::default()
        };
        assert!(matches!(read(&gz, &small), Err(Failure::Bomb(_))));
        assert!(read(&gz, &Limits::default()).is_ok());
        let cut = &t[..t.len() / 2];
        assert!(matches!(
            read(cut, &Limits::default()),
            Err(Failure::Parse(_))
        ));
        let few = Limits {
            max_zip_members: 1,
            ..Limits::default()
        };
        assert!(matches!(read(&t, &few), Err(Failure::Bomb(_))));
        assert!(matches!(read(b"hello", &few), Err(Failure::Parse(_))));
    }
}
