//! Case folding for search: names and terms are compared in Unicode NFC with
//! full case folding, so `café` matches both spellings and `STRASSE` matches
//! `Straße`. Accents stay significant.

use std::borrow::Cow;

use unicode_normalization::UnicodeNormalization;

/// Folds text for comparison.
pub fn fold_str(s: &str) -> Cow<'_, str> {
    if s.is_ascii() {
        if s.bytes().any(|b| b.is_ascii_uppercase()) {
            return Cow::Owned(s.to_ascii_lowercase());
        }
        return Cow::Borrowed(s);
    }
    let nfc: String = s.nfc().collect();
    let folded = caseless::default_case_fold_str(&nfc);
    Cow::Owned(folded.nfc().collect())
}

/// Folds a byte-exact file name; bytes that are not UTF-8 become U+FFFD
/// first (the display form), then fold as text.
pub fn fold_bytes(b: &[u8]) -> Cow<'_, [u8]> {
    if b.is_ascii() {
        if b.iter().any(|c| c.is_ascii_uppercase()) {
            return Cow::Owned(b.to_ascii_lowercase());
        }
        return Cow::Borrowed(b);
    }
    let text = String::from_utf8_lossy(b);
    Cow::Owned(fold_str(&text).into_owned().into_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folds_case_and_normalisation() {
        assert_eq!(fold_str("ÄRGER"), "ärger");
        assert_eq!(fold_str("Cafe\u{301}"), "café");
        assert_eq!(fold_str("Straße"), "strasse");
        assert_eq!(fold_str("plain"), "plain");
        assert_eq!(&*fold_bytes(b"A\xffB"), "a\u{fffd}b".as_bytes());
    }
}
