//! Bytes of unknown encoding to text.
//!
//! Order of evidence, strongest first: a byte-order mark (UTF-8, UTF-16LE,
//! UTF-16BE), then valid UTF-8 (by far the common case, and chardetng is not
//! needed to know it), then chardetng's guess over the first 64 KiB (legacy
//! encodings: Latin-1/windows-1252, Shift-JIS, GBK, KOI8-R, ...), decoded with
//! encoding_rs; bytes that do not decode become U+FFFD.
//!
//! The input may be a prefix of a longer file (the text cap means a 20 MiB log
//! need not be read whole), so a UTF-8 sequence cut at the end of the input
//! does not make it "not UTF-8".

use chardetng::{EncodingDetector, Iso2022JpDetection, Utf8Detection};
use encoding_rs::Encoding;
use std::borrow::Cow;

/// How much of the input chardetng looks at: enough for a confident guess,
/// bounded so a 20 MiB file does not cost a second full pass.
const SNIFF: usize = 64 << 10;

/// Decodes `bytes` (the whole file when `complete`, else a prefix).
pub fn decode(bytes: &[u8], complete: bool) -> Cow<'_, str> {
    decode_named(bytes, complete).0
}

/// As [`decode`], with the name of the encoding it decoded from (`UTF-8`,
/// `UTF-16LE`, `windows-1252`, ...).
pub fn decode_named(bytes: &[u8], complete: bool) -> (Cow<'_, str>, &'static str) {
    if let Some((enc, bom)) = Encoding::for_bom(bytes) {
        return (enc.decode_without_bom_handling(&bytes[bom..]).0, enc.name());
    }
    match std::str::from_utf8(bytes) {
        Ok(s) => return (Cow::Borrowed(s), "UTF-8"),
        // Valid up to a sequence cut by the end of a prefix.
        Err(e) if e.error_len().is_none() && !complete => {
            return (
                Cow::Borrowed(std::str::from_utf8(&bytes[..e.valid_up_to()]).unwrap_or_default()),
                "UTF-8",
            );
        }
        Err(_) => {}
    }
    let enc = guess(bytes, complete);
    (enc.decode_without_bom_handling(bytes).0, enc.name())
}

/// chardetng's guess for bytes that are not valid UTF-8.
pub fn guess(bytes: &[u8], complete: bool) -> &'static Encoding {
    let mut det = EncodingDetector::new(Iso2022JpDetection::Allow);
    let sample = &bytes[..bytes.len().min(SNIFF)];
    det.feed(sample, complete && sample.len() == bytes.len());
    det.guess(None, Utf8Detection::Allow)
}

/// The binary test for files of unknown kind: a NUL byte in the first 8 KiB
/// (as git and grep decide), unless a byte-order mark says UTF-16.
pub fn looks_binary(bytes: &[u8]) -> bool {
    Encoding::for_bom(bytes).is_none()
        && memchr::memchr(0, &bytes[..bytes.len().min(8192)]).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boms_win() {
        let mut b = vec![0xFF, 0xFE];
        for u in "héllo".encode_utf16() {
            b.extend_from_slice(&u.to_le_bytes());
        }
        assert_eq!(decode(&b, true), "héllo");
        assert!(!looks_binary(&b));
        assert_eq!(decode(b"\xEF\xBB\xBFabc", true), "abc");
    }

    #[test]
    fn a_prefix_cut_inside_a_char_is_still_utf8() {
        let s = "aaaé".as_bytes();
        assert_eq!(decode(&s[..4], false), "aaa");
    }

    #[test]
    fn latin1_is_guessed() {
        assert_eq!(
            decode(b"Le caf\xe9 est tr\xe8s bon, d\xe9j\xe0 vu.", true),
            "Le café est très bon, déjà vu."
        );
    }
}
