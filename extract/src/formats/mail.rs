//! Mail messages (`.eml`, RFC 5322 with MIME), through mail-parser.
//!
//! The text is the headers a person searches by (Subject, From, To, Cc, Date,
//! with RFC 2047 encoded words decoded) followed by the message's text body
//! parts. mail-parser undoes quoted-printable and base64 and converts each
//! part's charset with encoding_rs; an HTML part (when the message has no
//! plain-text alternative) goes through this crate's markup scanner so that
//! it follows the same rules as an `.html` file (no style, no script).
//! Attachments are not read.

use crate::sink::TextSink;
use crate::{Failure, formats::markup};
use mail_parser::{Address, MessageParser, PartType};
use std::fs::File;

/// Bump when the output for the same file changes.
pub const VERSION: u32 = 1;

pub fn extract(file: File, size: u64, sink: &mut TextSink) -> Result<(), Failure> {
    let bytes = crate::open::read_prefix(file, size)?;
    message(&bytes, sink)
}

/// One message's headers and text parts into `sink` (an `.eml` file, or a
/// message of a mailbox).
pub fn message(bytes: &[u8], sink: &mut TextSink) -> Result<(), Failure> {
    let msg = MessageParser::default()
        .parse(bytes)
        .ok_or_else(|| Failure::Parse("not a mail message".into()))?;
    if msg.headers().is_empty() {
        return Err(Failure::Parse("not a mail message: no headers".into()));
    }
    let mut line = |name: &str, value: &str| {
        if !value.is_empty() {
            sink.push_str(name);
            sink.push_str(": ");
            sink.push_str(value);
            sink.newline();
        }
    };
    line("Subject", msg.subject().unwrap_or_default());
    line("From", &addresses(msg.from()));
    line("To", &addresses(msg.to()));
    line("Cc", &addresses(msg.cc()));
    line(
        "Date",
        &msg.date().map(|d| d.to_rfc3339()).unwrap_or_default(),
    );
    sink.newline();
    for part in msg.text_bodies() {
        if sink.is_full() {
            break;
        }
        match &part.body {
            PartType::Text(t) => sink.push_str(t),
            PartType::Html(h) => markup::to_text(h, true, sink),
            _ => continue,
        }
        sink.newline();
    }
    Ok(())
}

/// `Name <addr>, ...`
fn addresses(a: Option<&Address<'_>>) -> String {
    let Some(a) = a else { return String::new() };
    a.iter()
        .map(|addr| match (addr.name(), addr.address()) {
            (Some(n), Some(e)) => format!("{n} <{e}>"),
            (Some(n), None) => n.to_owned(),
            (None, Some(e)) => e.to_owned(),
            (None, None) => String::new(),
        })
        .collect::<Vec<_>>()
        .join(", ")
}
