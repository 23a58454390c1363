//! Outlook messages (`.msg`, issue 32): an OLE compound file ([MS-CFB])
//! holding the message's MAPI properties ([MS-OXMSG]), read through the
//! `cfb` crate. The text is what an `.eml` gives ([`super::mail`]):
//! Subject, From, To, Cc and Date lines, a blank line, then the plain-text
//! body, so a `.msg` is searched and shown like any other message.
//!
//! Where each property lives:
//! - strings are streams named `__substg1.0_IIIITTTT` (property id, then
//!   type `001F`: UTF-16LE, or `001E`: 8-bit in the message's code page,
//!   read here as Windows-1252 unless valid UTF-8);
//! - fixed-size values (the dates, a recipient's type) are 16-byte records
//!   of the `__properties_version1.0` stream, after a 32-byte header for
//!   the message and an 8-byte one for a recipient;
//! - each recipient is a storage `__recip_version1.0_#XXXXXXXX` with its
//!   own name, address and type (To, Cc, Bcc).
//!
//! The HTML and RTF bodies are not read (a message saved by Outlook keeps
//! the plain-text body too), nor are attachments (`__attach_...`). Every
//! stream is read only up to [`Limits::max_text_file`]; the file itself is
//! a document, capped at [`Limits::max_document_file`].

use crate::sink::TextSink;
use crate::{Failure, Limits};
use std::fs::File;
use std::io::{BufReader, Read, Seek};

/// Bump when the output for the same file changes.
pub const VERSION: u32 = 1;

const SUBJECT: u16 = 0x0037;
const SENDER_NAME: u16 = 0x0C1A;
const SENDER_ADDRESS: u16 = 0x0C1F;
const SENDER_SMTP: u16 = 0x5D01;
const DISPLAY_TO: u16 = 0x0E04;
const DISPLAY_CC: u16 = 0x0E03;
const BODY: u16 = 0x1000;
const RECIPIENT_NAME: u16 = 0x3001;
const RECIPIENT_ADDRESS: u16 = 0x3003;
const RECIPIENT_SMTP: u16 = 0x39FE;
const RECIPIENT_TYPE: u16 = 0x0C15;
/// When it was sent, else delivered, else made.
const DATES: [u16; 3] = [0x0039, 0x0E06, 0x3007];
const PT_SYSTIME: u16 = 0x0040;
const PT_LONG: u16 = 0x0003;

/// Most recipients listed.
const MAX_RECIPIENTS: usize = 1_000;

pub fn extract(file: File, limits: &Limits, sink: &mut TextSink) -> Result<(), Failure> {
    let mut cf = cfb::CompoundFile::open(BufReader::new(file))
        .map_err(|e| Failure::Parse(format!("not an Outlook message (compound file): {e}")))?;
    let cap = limits.max_text_file;
    let root = std::path::Path::new("/");
    let subject = string(&mut cf, root, SUBJECT, cap);
    let from_name = string(&mut cf, root, SENDER_NAME, cap);
    let from_addr = string(&mut cf, root, SENDER_SMTP, cap)
        .or_else(|| string(&mut cf, root, SENDER_ADDRESS, cap).filter(|a| a.contains('@')));
    let body = string(&mut cf, root, BODY, cap);
    if subject.is_none() && from_name.is_none() && body.is_none() {
        return Err(Failure::Parse(
            "not an Outlook message: no subject, sender or body".into(),
        ));
    }
    // Recipients, by type; the display lists when there are none.
    let mut to = Vec::new();
    let mut cc = Vec::new();
    let recipients: Vec<_> = cf
        .read_root_storage()
        .filter(|e| e.is_storage() && e.name().starts_with("__recip_version1.0_"))
        .map(|e| e.path().to_owned())
        .take(MAX_RECIPIENTS)
        .collect();
    for r in &recipients {
        let name = string(&mut cf, r, RECIPIENT_NAME, cap);
        let addr = string(&mut cf, r, RECIPIENT_SMTP, cap)
            .or_else(|| string(&mut cf, r, RECIPIENT_ADDRESS, cap).filter(|a| a.contains('@')));
        let shown = person(name, addr);
        if shown.is_empty() {
            continue;
        }
        match fixed(&mut cf, r, 8, RECIPIENT_TYPE, PT_LONG).map(|v| v as u32) {
            Some(2) => cc.push(shown),
            Some(3) => {} // Bcc: not shown on the message
            _ => to.push(shown),
        }
    }
    let to = if to.is_empty() {
        string(&mut cf, root, DISPLAY_TO, cap).unwrap_or_default()
    } else {
        to.join(", ")
    };
    let cc = if cc.is_empty() {
        string(&mut cf, root, DISPLAY_CC, cap).unwrap_or_default()
    } else {
        cc.join(", ")
    };
    let date = DATES
        .iter()
        .find_map(|&id| fixed(&mut cf, root, 32, id, PT_SYSTIME))
        .and_then(filetime_rfc3339)
        .unwrap_or_default();

    let mut line = |name: &str, value: &str| {
        if !value.is_empty() {
            sink.push_str(name);
            sink.push_str(": ");
            sink.push_str(&value.replace(['\r', '\n'], " "));
            sink.newline();
        }
    };
    line("Subject", subject.as_deref().unwrap_or_default());
    line("From", &person(from_name, from_addr));
    line("To", &to);
    line("Cc", &cc);
    line("Date", &date);
    sink.newline();
    if let Some(body) = body {
        sink.push_str(&body.replace("\r\n", "\n"));
    }
    Ok(())
}

/// `Name <addr>`, or whichever is known.
fn person(name: Option<String>, addr: Option<String>) -> String {
    match (name, addr) {
        (Some(n), Some(a)) if n != a => format!("{n} <{a}>"),
        (Some(n), _) => n,
        (None, Some(a)) => a,
        (None, None) => String::new(),
    }
}

/// String property `id` of the storage at `dir`, read as far as `cap`
/// bytes; `None` when absent or empty.
fn string<F: Read + Seek>(
    cf: &mut cfb::CompoundFile<F>,
    dir: &std::path::Path,
    id: u16,
    cap: u64,
) -> Option<String> {
    let read = |cf: &mut cfb::CompoundFile<F>, ty: &str| -> Option<Vec<u8>> {
        let path = dir.join(format!("__substg1.0_{id:04X}{ty}"));
        let mut s = cf.open_stream(path).ok()?;
        let mut bytes = Vec::new();
        (&mut s).take(cap).read_to_end(&mut bytes).ok()?;
        Some(bytes)
    };
    let text = if let Some(b) = read(cf, "001F") {
        let units: Vec<u16> = b
            .chunks_exact(2)
            .map(|c| u16::from_le_bytes([c[0], c[1]]))
            .collect();
        String::from_utf16_lossy(&units)
    } else {
        let b = read(cf, "001E")?;
        match String::from_utf8(b) {
            Ok(s) => s,
            Err(e) => encoding_rs::WINDOWS_1252
                .decode(e.as_bytes())
                .0
                .into_owned(),
        }
    };
    let text = text.trim_end_matches('\0').trim().to_owned();
    (!text.is_empty()).then_some(text)
}

/// The 8-byte value of fixed-size property `id` of type `ty` in the
/// properties stream of the storage at `dir`, whose header is `header`
/// bytes (32 for the message, 8 for a recipient or attachment).
fn fixed<F: Read + Seek>(
    cf: &mut cfb::CompoundFile<F>,
    dir: &std::path::Path,
    header: usize,
    id: u16,
    ty: u16,
) -> Option<u64> {
    let mut s = cf.open_stream(dir.join("__properties_version1.0")).ok()?;
    let mut bytes = Vec::new();
    // 64 KiB holds 4,000 properties: far more than a message has.
    (&mut s).take(64 << 10).read_to_end(&mut bytes).ok()?;
    bytes.get(header..)?.chunks_exact(16).find_map(|r| {
        let tag = u32::from_le_bytes(r[0..4].try_into().ok()?);
        ((tag >> 16) as u16 == id && tag as u16 == ty)
            .then(|| u64::from_le_bytes(r[8..16].try_into().unwrap_or_default()))
    })
}

/// A FILETIME (100 ns since 1601-01-01 UTC) as `YYYY-MM-DDTHH:MM:SSZ`.
fn filetime_rfc3339(ft: u64) -> Option<String> {
    const UNIX_EPOCH: u64 = 11_644_473_600;
    let secs = (ft / 10_000_000).checked_sub(UNIX_EPOCH)? as i64;
    if ft == 0 || secs > 253_402_300_799 {
        return None; // unset, or past year 9999
    }
    let (days, rest) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Civil from days (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    Some(format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rest / 3600,
        rest / 60 % 60,
        rest % 60
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filetimes_read_as_utc_dates() {
        // 2024-02-29T12:34:56Z, as `date -u -d @1709210096` says.
        let ft = (1_709_210_096 + 11_644_473_600) * 10_000_000;
        assert_eq!(filetime_rfc3339(ft).unwrap(), "2024-02-29T12:34:56Z");
        assert_eq!(filetime_rfc3339(0), None);
        assert_eq!(filetime_rfc3339(u64::MAX), None);
    }

    #[test]
    fn a_compound_file_without_a_message_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.msg");
        let mut cf = cfb::create(&p).unwrap();
        cf.create_stream("/WordDocument").unwrap();
        cf.flush().unwrap();
        drop(cf);
        let e = crate::extract_file(&p, crate::Kind::Msg, &Limits::default()).unwrap_err();
        assert!(
            matches!(&e, Failure::Parse(m) if m.contains("no subject")),
            "{e}"
        );
        std::fs::write(&p, b"not ole").unwrap();
        let e = crate::extract_file(&p, crate::Kind::Msg, &Limits::default()).unwrap_err();
        assert!(
            matches!(&e, Failure::Parse(m) if m.contains("compound file")),
            "{e}"
        );
    }
}
