//! Case folding for search: names and terms are compared in Unicode NFC with
//! full case folding, so `café` matches both spellings and `STRASSE` matches
//! `Straße`. Accents stay significant unless a query asks otherwise
//! (`accents:ignore`): then names and terms are also compared bare
//! ([`strip_accents`]), so `cafe` finds `café` and `Cafe`.

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

/// The combining marks that `accents:ignore` drops after canonical
/// decomposition: the Combining Diacritical Marks blocks (and their
/// extensions), where Latin, Greek and Cyrillic accents live. Marks of other
/// scripts stay (the kana voicing mark, Indic viramas and vowel signs):
/// dropping them would merge different words, not spellings of one.
#[inline]
fn is_accent(c: char) -> bool {
    matches!(c,
        '\u{0300}'..='\u{036F}'
        | '\u{1AB0}'..='\u{1AFF}'
        | '\u{1DC0}'..='\u{1DFF}'
        | '\u{20D0}'..='\u{20FF}'
        | '\u{FE20}'..='\u{FE2F}')
}

/// Letters with no decomposition that readers still take for an accented
/// base letter (`ø` as `o`, `ł` as `l`) or write out (`æ` as `ae`): the
/// rest of what Everything's "match diacritics" off folds. `ß` needs no
/// entry: case folding already made it `ss`.
#[inline]
fn bare_letter(c: char) -> Option<&'static str> {
    Some(match c {
        'æ' => "ae",
        'œ' => "oe",
        'ø' => "o",
        'ł' => "l",
        'đ' | 'ð' => "d",
        'þ' => "th",
        'ħ' => "h",
        'ŧ' => "t",
        'ı' => "i",
        'ŀ' => "l",
        _ => return None,
    })
}

/// Text already folded ([`fold_str`]) with its accents dropped: canonical
/// decomposition, the marks of [`is_accent`] removed, the letters of
/// [`bare_letter`] spelled out, recomposed (NFC). `café`, `cafe\u{301}`
/// and `Cafe` all become `cafe`; `ærø` becomes `aero`. A name that is only
/// ASCII is returned as it is.
pub fn strip_accents(folded: &str) -> Cow<'_, str> {
    if folded.is_ascii() {
        return Cow::Borrowed(folded);
    }
    let mut changed = false;
    let mut out = String::with_capacity(folded.len());
    for c in folded.nfd() {
        if is_accent(c) {
            changed = true;
        } else if let Some(s) = bare_letter(c) {
            changed = true;
            out.push_str(s);
        } else {
            out.push(c);
        }
    }
    if !changed {
        return Cow::Borrowed(folded);
    }
    Cow::Owned(out.nfc().collect())
}

/// [`strip_accents`] over the bytes of folded names (the arena's, which
/// are UTF-8: folding made them so).
pub fn strip_accents_bytes(folded: &[u8]) -> Cow<'_, [u8]> {
    if folded.is_ascii() {
        return Cow::Borrowed(folded);
    }
    match std::str::from_utf8(folded) {
        Ok(s) => match strip_accents(s) {
            Cow::Borrowed(_) => Cow::Borrowed(folded),
            Cow::Owned(o) => Cow::Owned(o.into_bytes()),
        },
        Err(_) => {
            let s = String::from_utf8_lossy(folded);
            Cow::Owned(strip_accents(&s).into_owned().into_bytes())
        }
    }
}

/// A term folded and stripped of accents, for `accents:ignore`.
pub fn bare_str(s: &str) -> String {
    strip_accents(&fold_str(s)).into_owned()
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

    #[test]
    fn strips_accents_for_accents_ignore() {
        assert_eq!(bare_str("Café"), "cafe");
        assert_eq!(bare_str("Cafe\u{301}"), "cafe");
        assert_eq!(bare_str("ÆRØ Łódź"), "aero lodz");
        assert_eq!(bare_str("Straße"), "strasse");
        assert_eq!(bare_str("İstanbul"), "istanbul");
        // Other scripts' marks stay: が is not か.
        assert_eq!(bare_str("が"), "が");
        assert_eq!(bare_str("plain"), "plain");
        // Already bare text is a fixed point.
        assert_eq!(strip_accents("cafe"), "cafe");
        assert_eq!(
            &*strip_accents_bytes("\u{fffd}é".as_bytes()),
            "\u{fffd}e".as_bytes()
        );
    }
}
