//! Mailboxes in the mbox format (`.mbox`, `.mbx`; issue 32): many messages
//! in one file, each starting with a `From ` line.
//!
//! Each message is read like an `.eml` file ([`super::mail::message`]:
//! Subject, From, To, Cc, Date, then the decoded text parts) and the
//! messages are separated in the text by a line holding only a form feed
//! ([`SEPARATOR`]), so the daemon can tell which message a search hit is
//! in and show it as `mailbox/<subject>`. A form feed inside a message's
//! own text becomes a space.
//!
//! The file is streamed, never held: lines are read with a cap
//! ([`MAX_LINE`] kept, the rest of a longer line skipped), each message's
//! bytes are kept up to [`MAX_MESSAGE`] (a bigger one is cut: what it says
//! first is what is searched), and reading stops at the text cap. A message
//! whose `Content-Length` header is honoured (mboxcl2, where bodies keep
//! their `From ` lines unescaped) is read for exactly that many bytes; a
//! length claim larger than what is left of the file is a lie, and the
//! mailbox fails as `parse` with the claim named, before anything of that
//! size is read. Otherwise a message ends at the next `From ` line after
//! an empty line, and mboxrd's `>From ` quoting is undone.

use super::mail;
use crate::sink::TextSink;
use crate::{Failure, Kind};
use std::fs::File;
use std::io::{BufRead, BufReader};

/// Bump when the output for the same file changes.
pub const VERSION: u32 = 1;

/// The line between two messages in the extracted text.
pub const SEPARATOR: char = '\u{c}';

/// The most bytes kept of one line.
const MAX_LINE: usize = 64 << 10;
/// The most bytes kept of one message.
const MAX_MESSAGE: usize = 16 << 20;

/// True when a file's first bytes are an mbox mailbox's: a `From ` line
/// as mail programs write it, `From sender Www Mmm dd hh:mm:ss yyyy`
/// (Thunderbird's sender is `-`; a zone may follow the year), then a
/// header line (`Name: value`). Read for files with no known extension
/// (Thunderbird's `Inbox`, `Sent`), which are otherwise text: a letter
/// that starts "From the desk of ..., 1851" has no such date.
pub fn looks_like_mbox(head: &[u8]) -> bool {
    const DAYS: [&str; 7] = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let mut lines = head.split(|&b| b == b'\n');
    let (Some(first), Some(second)) = (lines.next(), lines.next()) else {
        return false;
    };
    let Ok(first) = std::str::from_utf8(first.strip_suffix(b"\r").unwrap_or(first)) else {
        return false;
    };
    let t: Vec<&str> = first.split_ascii_whitespace().collect();
    let is_time = |s: &str| {
        let parts: Vec<&str> = s.split(':').collect();
        (2..=3).contains(&parts.len())
            && parts
                .iter()
                .all(|p| (1..=2).contains(&p.len()) && p.bytes().all(|b| b.is_ascii_digit()))
    };
    let is_year = |s: &str| s.len() == 4 && s.bytes().all(|b| b.is_ascii_digit());
    let date = t.len() >= 7
        && t[0] == "From"
        && DAYS.contains(&t[2])
        && MONTHS.contains(&t[3])
        && t[4].len() <= 2
        && t[4].bytes().all(|b| b.is_ascii_digit())
        && is_time(t[5])
        && (is_year(t[6]) || t.get(7).is_some_and(|y| is_year(y)));
    let name = second.split(|&b| b == b':').next().unwrap_or_default();
    date && name.len() < second.len()
        && !name.is_empty()
        && name.iter().all(|&b| b.is_ascii_graphic())
}

pub fn extract(file: File, size: u64, sink: &mut TextSink) -> Result<(), Failure> {
    let mut r = Lines {
        r: BufReader::with_capacity(64 << 10, file),
        read: 0,
        size,
        line: Vec::new(),
    };
    if !r.next()? || !r.line.starts_with(b"From ") {
        return Err(Failure::Parse(
            "not an mbox mailbox: it does not start with a `From ` line".into(),
        ));
    }
    let mut msg = Vec::new();
    let mut n = 0u64;
    let mut more = true;
    while more && !sink.is_full() {
        n += 1;
        msg.clear();
        // The headers, up to the first empty line.
        let mut length: Option<u64> = None;
        more = false;
        while r.next()? {
            keep(&mut msg, &r.line);
            if is_blank(&r.line) {
                more = true;
                break;
            }
            if let Some(v) = header_value(&r.line, b"content-length") {
                length = std::str::from_utf8(v)
                    .ok()
                    .and_then(|v| v.trim().parse().ok());
            }
        }
        if more {
            more = match length {
                Some(len) => {
                    let left = r.size.saturating_sub(r.read);
                    if len > left {
                        return Err(Failure::Parse(format!(
                            "message {n} claims a body of {len} bytes (Content-Length), \
                             {left} are left in the file"
                        )));
                    }
                    r.body(len, &mut msg)?;
                    r.skip_to_from()?
                }
                None => r.until_from(&mut msg)?,
            };
        }
        let mut one = TextSink::new(sink.room());
        if mail::message(&msg, &mut one).is_err() {
            continue;
        }
        let text = one.finish(Kind::Mbox).text.replace(SEPARATOR, " ");
        if n > 1 && !sink.is_empty() {
            sink.newline();
            sink.push(SEPARATOR);
            sink.newline();
        }
        sink.push_str(text.trim_end());
    }
    if more {
        sink.mark_truncated();
    }
    Ok(())
}

fn keep(msg: &mut Vec<u8>, line: &[u8]) {
    let room = MAX_MESSAGE.saturating_sub(msg.len());
    msg.extend_from_slice(&line[..line.len().min(room)]);
}

fn is_blank(line: &[u8]) -> bool {
    line == b"\n" || line == b"\r\n"
}

/// The value of a header line named `name` (ASCII case-insensitive).
fn header_value<'a>(line: &'a [u8], name: &[u8]) -> Option<&'a [u8]> {
    let colon = line.iter().position(|&b| b == b':')?;
    line[..colon]
        .eq_ignore_ascii_case(name)
        .then(|| &line[colon + 1..])
}

/// A mailbox read line by line, each line capped.
struct Lines {
    r: BufReader<File>,
    /// Bytes consumed so far.
    read: u64,
    size: u64,
    /// The current line, with its line ending, at most [`MAX_LINE`] bytes.
    line: Vec<u8>,
}

impl Lines {
    /// Reads the next line; false at the end of the file.
    fn next(&mut self) -> Result<bool, Failure> {
        self.line.clear();
        let mut any = false;
        loop {
            let buf = self.r.fill_buf().map_err(unreadable)?;
            if buf.is_empty() {
                return Ok(any);
            }
            any = true;
            let (take, done) = match memchr::memchr(b'\n', buf) {
                Some(i) => (i + 1, true),
                None => (buf.len(), false),
            };
            let room = MAX_LINE.saturating_sub(self.line.len());
            self.line.extend_from_slice(&buf[..take.min(room)]);
            self.r.consume(take);
            self.read += take as u64;
            if done {
                return Ok(true);
            }
        }
    }

    /// Reads `len` bytes of body into `msg` (kept up to the cap).
    fn body(&mut self, mut len: u64, msg: &mut Vec<u8>) -> Result<(), Failure> {
        while len > 0 {
            let buf = self.r.fill_buf().map_err(unreadable)?;
            if buf.is_empty() {
                return Ok(());
            }
            let take = buf.len().min(usize::try_from(len).unwrap_or(usize::MAX));
            keep(msg, &buf[..take]);
            self.r.consume(take);
            self.read += take as u64;
            len -= take as u64;
        }
        Ok(())
    }

    /// After a body of known length: skips to the next `From ` line; false
    /// at the end of the file.
    fn skip_to_from(&mut self) -> Result<bool, Failure> {
        while self.next()? {
            if self.line.starts_with(b"From ") {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Reads body lines into `msg` up to the next `From ` line that follows
    /// an empty line (mboxrd's `>From ` unquoted); false at the end of the
    /// file.
    fn until_from(&mut self, msg: &mut Vec<u8>) -> Result<bool, Failure> {
        let mut blank = true;
        while self.next()? {
            if blank && self.line.starts_with(b"From ") {
                return Ok(true);
            }
            blank = is_blank(&self.line);
            let quoted = self.line.iter().take_while(|&&b| b == b'>').count();
            if quoted > 0 && self.line[quoted..].starts_with(b"From ") {
                keep(msg, &self.line[1..]);
            } else {
                keep(msg, &self.line);
            }
        }
        Ok(false)
    }
}

fn unreadable(e: std::io::Error) -> Failure {
    Failure::Unreadable(e.to_string())
}

/// The messages of a mailbox's extracted text, in order.
pub fn messages(text: &str) -> impl Iterator<Item = &str> {
    let mut sep = String::from("\n");
    sep.push(SEPARATOR);
    sep.push('\n');
    let parts: Vec<&str> = text.split(sep.as_str()).collect();
    parts.into_iter()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_head_of_an_mbox_is_told_from_text_starting_with_from() {
        assert!(looks_like_mbox(
            b"From MAILER-DAEMON Thu Nov 26 16:58:22 2026\nSubject: a\n\nbody"
        ));
        assert!(looks_like_mbox(
            b"From - Mon Jan  1 00:00:00 2024\r\nX-Mozilla-Status: 0001\r\n"
        ));
        assert!(!looks_like_mbox(
            b"From the start I knew it.\nIt was a gannet.\n"
        ));
        assert!(!looks_like_mbox(b"From here 2024\nnot a header\n"));
        assert!(!looks_like_mbox(
            b"From the desk of Captain Ahab, 1851\nRe: the white whale\n"
        ));
        assert!(looks_like_mbox(
            b"From a@b.example Sat Jan  3 01:05:34 1996 +0000\nFrom: a@b.example\n"
        ));
        assert!(!looks_like_mbox(b"Subject: a\n"));
    }

    #[test]
    fn header_values_by_name() {
        assert_eq!(
            header_value(b"Content-Length: 12\n", b"content-length"),
            Some(&b" 12\n"[..])
        );
        assert_eq!(header_value(b"Subject: x\n", b"content-length"), None);
        assert_eq!(header_value(b"no colon\n", b"subject"), None);
    }

    fn read(bytes: &[u8]) -> Result<String, Failure> {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("box.mbox");
        std::fs::write(&p, bytes).unwrap();
        crate::extract_file(&p, Kind::Mbox, &crate::Limits::default()).map(|e| e.text)
    }

    #[test]
    fn a_content_length_keeps_an_unquoted_from_line_in_its_body() {
        let body = "Hello\n\nFrom the bridge, all is well.\n";
        let mbox = format!(
            "From a@x Mon Jan  1 00:00:00 2024\nSubject: one\nContent-Length: {}\n\n{body}\n\
             From b@x Mon Jan  1 00:00:00 2024\nSubject: two\n\n>From quoted\nbye\n",
            body.len()
        );
        let text = read(mbox.as_bytes()).unwrap();
        let msgs: Vec<&str> = messages(&text).collect();
        assert_eq!(msgs.len(), 2, "{text:?}");
        assert!(
            msgs[0].contains("From the bridge, all is well."),
            "{text:?}"
        );
        assert!(msgs[1].starts_with("Subject: two"), "{text:?}");
        assert!(msgs[1].contains("\nFrom quoted\n"), "{text:?}");
    }

    #[test]
    fn a_length_claim_past_the_end_is_refused_and_not_an_mbox_is_said() {
        let liar = b"From a@x Mon Jan  1 00:00:00 2024\nSubject: big\nContent-Length: 1073741824\n\nshort\n";
        let e = read(liar).unwrap_err();
        assert!(
            matches!(&e, Failure::Parse(d) if d.contains("1073741824")),
            "{e}"
        );
        let e = read(b"Subject: no From line\n\nbody\n").unwrap_err();
        assert_eq!(e.reason(), "parse");
    }

    #[test]
    fn messages_split_on_the_separator_line() {
        let text = format!("Subject: a\n\nbody a\n{SEPARATOR}\nSubject: b\n\nbody b");
        let v: Vec<&str> = messages(&text).collect();
        assert_eq!(v, ["Subject: a\n\nbody a", "Subject: b\n\nbody b"]);
    }
}
