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
    if let Some(fast) = strip_latin(folded) {
        return fast;
    }
    strip_any(folded)
}

/// [`strip_accents`] of U+00C0..=U+017F (Latin-1 and Latin Extended-A, the
/// accented letters of most European names), one char each, worked out
/// once by [`strip_any`].
fn latin_table() -> &'static [String] {
    static TABLE: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| {
        (0xC0u32..=0x17F)
            .map(|u| {
                let c = char::from_u32(u).unwrap_or(' ');
                strip_any(c.encode_utf8(&mut [0; 4])).into_owned()
            })
            .collect()
    })
}

/// [`strip_accents`] by table for text of ASCII, Latin-1 and Latin
/// Extended-A letters and the common combining marks: the same answer as
/// decomposing (each of these chars decomposes alone, and the marks go),
/// without decomposing, which is what lets `accents:ignore` strip every
/// accented name a short term passes. `None` for any other text.
fn strip_latin(folded: &str) -> Option<Cow<'_, str>> {
    let table = latin_table();
    let mut out = String::with_capacity(folded.len());
    let mut changed = false;
    for c in folded.chars() {
        match c as u32 {
            0..=0x7F => out.push(c),
            u @ 0xC0..=0x17F => {
                let bare = &table[(u - 0xC0) as usize];
                changed |= bare.chars().ne(std::iter::once(c));
                out.push_str(bare);
            }
            0x300..=0x36F => changed = true,
            _ => return None,
        }
    }
    Some(if changed {
        Cow::Owned(out)
    } else {
        Cow::Borrowed(folded)
    })
}

/// [`strip_accents`] of any text, by decomposition.
fn strip_any(folded: &str) -> Cow<'_, str> {
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

    /// The table gives what decomposing gives, for every letter it holds,
    /// alone, between ASCII and beside combining marks.
    #[test]
    fn the_latin_table_equals_decomposition() {
        for u in 0xC0u32..=0x17F {
            let c = char::from_u32(u).unwrap();
            for text in [
                format!("{c}"),
                format!("ab{c}cd"),
                format!("x{c}\u{301}y"),
                format!("e\u{300}{c}"),
            ] {
                let folded = fold_str(&text).into_owned();
                if let Some(fast) = strip_latin(&folded) {
                    assert_eq!(fast, strip_any(&folded), "{text:?}");
                }
            }
        }
        assert_eq!(strip_latin("café").as_deref(), Some("cafe"));
        assert_eq!(strip_latin("京"), None);
    }
}
