//! Words in their forms: the Snowball stems that let `content:invoices`
//! find "invoice" and "invoiced", in the language each document is written
//! in.
//!
//! A document's language is guessed once, when its text is extracted, from
//! the first [`SAMPLE`] bytes of it (whatlang's trigram profiles). A guess
//! whatlang itself calls unreliable, or one of a language Snowball has no
//! stemmer for, falls back to English: most short notes, code and logs are
//! English, and an English stemmer leaves words of other scripts as they
//! are.
//!
//! The index (migration 0011's `content_stem`) holds each distinct stem of
//! a document once, as one token: the language's code, then the stem
//! (`eninvoic`, `dehaus`). A query word is stemmed in every language
//! ([`query_tokens`]) and matches a document only through the stem of the
//! document's own language: German "Häuser" is found by `content:haus`,
//! and an English "run" by `content:running`, but an English stem never
//! matches a German document that happens to spell it.
//!
//! Snowball strips suffixes by rule, so regular forms meet ("running",
//! "runs" and "run" all give `run`; "invoices", "invoiced", "invoice" give
//! `invoic`), irregular ones do not ("ran", "mice", "went").

use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::sync::LazyLock;

use foldhash::fast::RandomState;
use rust_stemmers::{Algorithm, Stemmer};

/// Bytes of a document's text its language is guessed from: whatlang is as
/// sure of 2 KiB of prose as of 8, and its cost per call is most of a
/// small file's (measured on 19k files of /usr/share/doc and crate sources).
pub const SAMPLE: usize = 2 * 1024;

/// Stems remembered per language on the thread that stems (the content
/// worker): most words of a tree recur from file to file (measured: 5.4M
/// distinct words a file, 19k files), and a Snowball stem costs more than a
/// look-up. Forgotten whole past this many.
const CACHED: usize = 200_000;

/// Words longer than this (in bytes) are not stemmed: hashes, base64 and
/// other runs of letters that are not words. They are still found by their
/// exact form.
pub const MAX_WORD: usize = 64;

/// The languages documents are stemmed in: ISO 639-1 code, Snowball
/// algorithm, and whatlang's name for it.
const LANGS: &[(&str, Algorithm, whatlang::Lang)] = &[
    ("en", Algorithm::English, whatlang::Lang::Eng),
    ("de", Algorithm::German, whatlang::Lang::Deu),
    ("fr", Algorithm::French, whatlang::Lang::Fra),
    ("es", Algorithm::Spanish, whatlang::Lang::Spa),
    ("it", Algorithm::Italian, whatlang::Lang::Ita),
    ("pt", Algorithm::Portuguese, whatlang::Lang::Por),
    ("nl", Algorithm::Dutch, whatlang::Lang::Nld),
    ("da", Algorithm::Danish, whatlang::Lang::Dan),
    ("sv", Algorithm::Swedish, whatlang::Lang::Swe),
    ("no", Algorithm::Norwegian, whatlang::Lang::Nob),
    ("fi", Algorithm::Finnish, whatlang::Lang::Fin),
    ("hu", Algorithm::Hungarian, whatlang::Lang::Hun),
    ("ro", Algorithm::Romanian, whatlang::Lang::Ron),
    ("tr", Algorithm::Turkish, whatlang::Lang::Tur),
    ("ru", Algorithm::Russian, whatlang::Lang::Rus),
    ("el", Algorithm::Greek, whatlang::Lang::Ell),
    ("ar", Algorithm::Arabic, whatlang::Lang::Ara),
    ("ta", Algorithm::Tamil, whatlang::Lang::Tam),
];

/// Only the languages there is a stemmer for are compared (half the cost
/// of comparing all of whatlang's); a text in another one gets an unsure
/// guess, so English.
static DETECTOR: LazyLock<whatlang::Detector> =
    LazyLock::new(|| whatlang::Detector::with_allowlist(LANGS.iter().map(|l| l.2).collect()));

/// The language a document is stemmed in, as its ISO 639-1 code.
pub fn guess(text: &str) -> &'static str {
    let sample = &text[..text.floor_char_boundary(SAMPLE.min(text.len()))];
    DETECTOR
        .detect(sample)
        .filter(whatlang::Info::is_reliable)
        .and_then(|info| LANGS.iter().find(|l| l.2 == info.lang()))
        .map_or("en", |l| l.0)
}

fn stemmer(code: &str) -> Option<Stemmer> {
    LANGS
        .iter()
        .find(|l| l.0 == code)
        .map(|l| Stemmer::create(l.1))
}

/// The words a text is stemmed from: runs of letters and digits (as the
/// FTS tokenizer splits them) holding a letter, at most [`MAX_WORD`] bytes,
/// lowercased (Snowball's input; accents stay, the stemmers use them).
fn words(text: &str) -> impl Iterator<Item = Cow<'_, str>> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty() && w.len() <= MAX_WORD && w.chars().any(char::is_alphabetic))
        .map(|w| {
            if w.bytes().any(|b| b.is_ascii_uppercase() || b >= 0x80) {
                Cow::Owned(w.to_lowercase())
            } else {
                Cow::Borrowed(w)
            }
        })
}

/// What `content_stem` indexes for a document in language `lang`: each
/// distinct stem of its words once, tagged with the language, separated by
/// spaces. Empty when the text has no words (or `lang` has no stemmer).
pub fn stems(text: &str, lang: &str) -> String {
    type Cache = HashMap<&'static str, HashMap<String, String, RandomState>>;
    thread_local! {
        static CACHE: RefCell<Cache> = RefCell::new(HashMap::new());
    }
    let Some((code, algorithm)) = LANGS.iter().find(|l| l.0 == lang).map(|l| (l.0, l.1)) else {
        return String::new();
    };
    let distinct: HashSet<Cow<'_, str>, RandomState> = words(text).collect();
    CACHE.with_borrow_mut(|cache| {
        let known = cache.entry(code).or_default();
        if known.len() > CACHED {
            known.clear();
        }
        let stemmer = Stemmer::create(algorithm);
        for w in &distinct {
            if !known.contains_key(w.as_ref()) {
                known.insert(w.to_string(), stemmer.stem(w).into_owned());
            }
        }
        let mut seen: HashSet<&str, RandomState> = HashSet::default();
        let mut out = String::new();
        for w in &distinct {
            let stem = known[w.as_ref()].as_str();
            if seen.insert(stem) {
                if !out.is_empty() {
                    out.push(' ');
                }
                out.push_str(code);
                out.push_str(stem);
            }
        }
        out
    })
}

/// The stem of `word` in `lang` (lowercased first), or `None` when `lang`
/// has no stemmer or `word` is not one word.
pub fn stem_of(word: &str, lang: &str) -> Option<String> {
    let stemmer = stemmer(lang)?;
    let mut ws = words(word);
    let w = ws.next()?;
    if ws.next().is_some() {
        return None;
    }
    Some(stemmer.stem(&w).into_owned())
}

/// The `content_stem` tokens a query word matches: its stem in every
/// language, each tagged as [`stems`] tags them. Empty when `word` is not
/// one word with a letter.
pub fn query_tokens(word: &str) -> Vec<String> {
    query_tokens_in(word, |_| true)
}

/// [`query_tokens`] in the languages `held` says the index holds (by
/// code, `en`).
pub fn query_tokens_in(word: &str, mut held: impl FnMut(&str) -> bool) -> Vec<String> {
    let mut ws = words(word);
    let (Some(w), None) = (ws.next(), ws.next()) else {
        return Vec::new();
    };
    let mut out: Vec<String> = LANGS
        .iter()
        .filter(|l| held(l.0))
        .map(|l| format!("{}{}", l.0, Stemmer::create(l.1).stem(&w)))
        .collect();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms_meet_at_their_stem() {
        for w in ["invoice", "invoices", "invoiced"] {
            assert_eq!(stem_of(w, "en").as_deref(), Some("invoic"), "{w}");
        }
        for w in ["run", "runs", "running"] {
            assert_eq!(stem_of(w, "en").as_deref(), Some("run"), "{w}");
        }
        // Irregular forms do not (Snowball strips suffixes by rule).
        assert_eq!(stem_of("ran", "en").as_deref(), Some("ran"));
        assert_eq!(stem_of("Häuser", "de"), stem_of("häuser", "de"));
        assert_eq!(stem_of("two words", "en"), None);
    }

    #[test]
    fn stems_are_tagged_and_distinct() {
        let s = stems("Invoices, invoice; INVOICED 2025 run", "en");
        let mut got: Vec<&str> = s.split(' ').collect();
        got.sort_unstable();
        assert_eq!(got, ["eninvoic", "enrun"]);
        assert!(query_tokens("invoices").contains(&"eninvoic".to_string()));
        assert!(query_tokens("two words").is_empty());
        // The second time from the worker's cache: the same stems (in
        // another order: the sets are seeded at random).
        let again = stems("Invoices, invoice; INVOICED 2025 run", "en");
        let mut again: Vec<&str> = again.split(' ').collect();
        again.sort_unstable();
        assert_eq!(again, got);
        // German keeps the umlaut in the stem (`häus`); the index folds it
        // away, so both forms meet there.
        let de = stems("Häuser Haus", "de").replace('ä', "a");
        assert!(de.split(' ').all(|t| t == "dehaus"), "{de}");
    }

    #[test]
    fn language_is_guessed_or_english() {
        let de = "Die Rechnung wurde gestern an den Kunden geschickt, und er hat sie \
                  noch nicht bezahlt. Wir werden ihm morgen eine Erinnerung schreiben, \
                  weil die Frist bald abläuft und das Geld gebraucht wird.";
        assert_eq!(guess(de), "de");
        let fr = "La facture a été envoyée hier au client, et il ne l'a pas encore \
                  payée. Nous lui écrirons demain un rappel, parce que le délai expire \
                  bientôt et que nous avons besoin de cet argent.";
        assert_eq!(guess(fr), "fr");
        // Too short to tell: English.
        assert_eq!(guess("Rechnung"), "en");
        assert_eq!(guess(""), "en");
    }
}
