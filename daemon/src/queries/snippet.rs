//! Snippets: the passage of a file's text that best shows why it matched a
//! `content:` query, the words marked `**like this**`, cut from the text
//! the content index keeps (`content_text`): no file is opened or parsed
//! again for it.
//!
//! Words are compared as the index compares them: case-insensitively and
//! without accents (`resume` marks `Résumé`), and a one-word query in its
//! forms, through the stemmer of the document's language (`invoices` marks
//! "invoiced" in an English text; see `store::stem`).

use unicode_normalization::UnicodeNormalization;
use unicode_normalization::char::is_combining_mark;

/// Characters of context in a snippet.
pub const WIDTH: usize = 160;

/// `c` as the index folds it: lowercase, accents dropped.
fn fold(c: char) -> impl Iterator<Item = char> {
    std::iter::once(c)
        .nfd()
        .filter(|c| !is_combining_mark(*c))
        .flat_map(char::to_lowercase)
}

/// A word a snippet marks: whole, or (the last of a `content:word*`) as the
/// start of a word, or (a one-word `content:` query) a word of the same
/// stem.
struct Wanted {
    word: String,
    prefix: bool,
    /// The document's language and the word's stem in it, folded.
    stem: Option<(String, String)>,
}

impl Wanted {
    /// Does this word of the text (`original`, and `folded` as the index
    /// folds it) match?
    fn marks(&self, folded: &str, original: &str) -> bool {
        if self.prefix {
            return folded.starts_with(&self.word);
        }
        if folded == self.word {
            return true;
        }
        // Snowball rewrites endings only: a word of this stem starts as the
        // stem does (checked first, stemming every word of a text is slow).
        self.stem.as_ref().is_some_and(|(lang, stem)| {
            stem.chars().next().is_some_and(|c| folded.starts_with(c))
                && crate::store::stem::stem_of(original, lang)
                    .is_some_and(|s| s.chars().flat_map(fold).eq(stem.chars()))
        })
    }
}

/// The folded words of `s` (runs of letters and digits).
fn words(s: &str) -> Vec<String> {
    let folded: String = s.chars().flat_map(fold).collect();
    folded
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_owned)
        .collect()
}

/// The best passage of `text` for `queries` (each a word or a phrase), at
/// most about `width` characters, the matching words marked; `None` when no
/// word of the queries occurs. `lang` is the language the text's words were
/// stemmed in ('' for none): a one-word query (not `=word`) marks the words
/// of its stem too.
///
/// A text may be megabytes and folding every character of it costs
/// milliseconds, so when every word is ASCII the words are first found
/// with a byte-level search (case-insensitive, whole words) and only the
/// passage around the best place is folded; the full pass is the fallback
/// (a word with accents, or a place the quick search misjudged).
pub fn snippet(text: &str, queries: &[&str], width: usize, lang: &str) -> Option<String> {
    let wanted: Vec<Wanted> = queries
        .iter()
        .flat_map(|q| {
            // `invo*`: its last word is a prefix (see `store::content::matching`).
            let prefix = q.trim_end().ends_with('*');
            let ws = words(q);
            let n = ws.len();
            let stem = (n == 1 && !prefix && !q.starts_with('='))
                .then(|| crate::store::stem::stem_of(q, lang))
                .flatten()
                .map(|s| (lang.to_owned(), s.chars().flat_map(fold).collect()));
            ws.into_iter().enumerate().map(move |(k, word)| Wanted {
                word,
                prefix: prefix && k + 1 == n,
                stem: stem.clone(),
            })
        })
        .collect();
    if wanted.is_empty() {
        return None;
    }
    if text.len() > 4 * width
        && let Some(s) = quick(text, &wanted, width)
    {
        return Some(s);
    }
    full(text, &wanted, width)
}

/// [`snippet`] through a byte-level search for ASCII words: the passage
/// around the window of `width` bytes holding the most distinct words.
fn quick(text: &str, wanted: &[Wanted], width: usize) -> Option<String> {
    if !wanted.iter().all(|w| w.word.is_ascii()) {
        return None;
    }
    // Words, and the stems' starts (judged whole by `marks`).
    let mut alternatives: Vec<String> = wanted.iter().map(|w| regex::escape(&w.word)).collect();
    alternatives.extend(
        wanted
            .iter()
            .filter_map(|w| w.stem.as_ref())
            .filter(|(_, s)| s.is_ascii() && !s.is_empty())
            .map(|(_, s)| regex::escape(s)),
    );
    let re = searcher(&alternatives.join("|"))?;
    // A word ends where a letter or digit does not follow, as the index
    // splits words: `_` separates (regex's `\b` would not), and a byte of a
    // non-ASCII character does not (the full pass judges those).
    let bytes = text.as_bytes();
    let joins = |b: u8| b.is_ascii_alphanumeric() || b >= 0x80;
    // (start, which word): the first thousand places are plenty to choose from.
    let hits: Vec<(usize, usize)> = re
        .find_iter(bytes)
        .filter(|m| m.start() == 0 || !joins(bytes[m.start() - 1]))
        .filter_map(|m| {
            // The whole word that starts here (it ends at an ASCII byte
            // that is no letter or digit: a character boundary).
            let end = bytes[m.start()..]
                .iter()
                .position(|&b| !joins(b))
                .map_or(bytes.len(), |n| m.start() + n);
            let word = &text[m.start()..end];
            let folded: String = word.chars().flat_map(fold).collect();
            let k = wanted.iter().position(|x| x.marks(&folded, word))?;
            Some((m.start(), k))
        })
        .take(1000)
        .collect();
    let mut best: Option<(usize, usize)> = None; // (distinct, start)
    for (a, &(start, _)) in hits.iter().enumerate() {
        let mut seen = std::collections::HashSet::new();
        for &(s, k) in &hits[a..] {
            if s - start > width {
                break;
            }
            seen.insert(k);
        }
        if best.is_none_or(|(n, _)| seen.len() > n) {
            best = Some((seen.len(), start));
        }
    }
    let (_, at) = best?;
    // The passage around it, on character boundaries, marked by the full pass.
    let from = text.floor_char_boundary(at.saturating_sub(width));
    let to = text.ceil_char_boundary((at + 2 * width).min(text.len()));
    let mut s = full(&text[from..to], wanted, width)?;
    if from > 0 && !s.starts_with('…') {
        s.insert(0, '…');
    }
    if to < text.len() && !s.ends_with('…') {
        s.push('…');
    }
    Some(s)
}

/// The case-insensitive byte regex for `pattern`, built once per thread:
/// the first results of a query share it (building one took about 0.2 ms,
/// more than the search in the text: 12% of a `content:copyright` answer's
/// CPU when built for each of its ten snippets).
fn searcher(pattern: &str) -> Option<regex::bytes::Regex> {
    use std::cell::RefCell;
    use std::collections::HashMap;
    /// Patterns remembered per thread (the blocking threads that answer
    /// queries); the oldest are dropped all at once past this.
    const KEPT: usize = 64;
    thread_local! {
        static BUILT: RefCell<HashMap<String, regex::bytes::Regex>> = RefCell::new(HashMap::new());
    }
    BUILT.with_borrow_mut(|built| {
        if let Some(re) = built.get(pattern) {
            return Some(re.clone());
        }
        let re = regex::bytes::RegexBuilder::new(pattern)
            .case_insensitive(true)
            .unicode(false)
            .build()
            .ok()?;
        if built.len() >= KEPT {
            built.clear();
        }
        built.insert(pattern.to_owned(), re.clone());
        Some(re)
    })
}

/// [`snippet`] over every word of `text`.
fn full(text: &str, wanted: &[Wanted], width: usize) -> Option<String> {
    // Each word of the text: its byte span in `text` and its folded form.
    let mut spans: Vec<(usize, usize, usize)> = Vec::new(); // (start, end, wanted index + 1 or 0)
    let mut start = None;
    let mut folded = String::new();
    let close = |s: usize, e: usize, folded: &mut String, spans: &mut Vec<_>| {
        let hit = wanted
            .iter()
            .position(|w| w.marks(folded, &text[s..e]))
            .map_or(0, |k| k + 1);
        spans.push((s, e, hit));
        folded.clear();
    };
    for (i, c) in text.char_indices() {
        if c.is_alphanumeric() {
            start.get_or_insert(i);
            folded.extend(fold(c));
        } else if let Some(s) = start.take() {
            close(s, i, &mut folded, &mut spans);
        }
    }
    if let Some(s) = start {
        close(s, text.len(), &mut folded, &mut spans);
    }
    // The window of `width` bytes holding the most distinct wanted words
    // (ties: the earliest).
    let hits: Vec<usize> = (0..spans.len()).filter(|&k| spans[k].2 > 0).collect();
    let mut best: Option<(usize, usize)> = None; // (distinct, first hit)
    for (a, &h) in hits.iter().enumerate() {
        let mut seen = std::collections::HashSet::new();
        for &k in &hits[a..] {
            if spans[k].1 - spans[h].0 > width {
                break;
            }
            seen.insert(spans[k].2);
        }
        if best.is_none_or(|(n, _)| seen.len() > n) {
            best = Some((seen.len(), h));
        }
    }
    let (_, first) = best?;
    // Some context before the first hit, whole words only.
    let lead = width / 4;
    let mut from = first;
    while from > 0 && spans[first].0 - spans[from - 1].0 <= lead {
        from -= 1;
    }
    let begin = spans[from].0;
    let mut out = String::new();
    if begin > 0 {
        out.push('…');
    }
    let mut at = begin;
    let mut k = from;
    while k < spans.len() && spans[k].1 - begin <= width {
        let (s, e, hit) = spans[k];
        push_spaced(&mut out, &text[at..s]);
        if hit > 0 {
            out.push_str("**");
            out.push_str(&text[s..e]);
            out.push_str("**");
        } else {
            out.push_str(&text[s..e]);
        }
        at = e;
        k += 1;
    }
    if k < spans.len() {
        out.push('…');
    }
    Some(out.trim().to_owned())
}

/// Appends the text between two words with every run of whitespace made
/// one space (a snippet is one line).
fn push_spaced(out: &mut String, between: &str) {
    let mut space = false;
    for c in between.chars() {
        if c.is_whitespace() || c.is_control() {
            space = true;
        } else {
            if space {
                out.push(' ');
                space = false;
            }
            out.push(c);
        }
    }
    if space {
        out.push(' ');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trailing_star_marks_words_that_start_so() {
        let text = "We sent the Invoice; she invoiced twice, not the invitation.";
        let s = snippet(text, &["invo*"], WIDTH, "").unwrap();
        assert!(
            s.contains("**Invoice**") && s.contains("**invoiced**"),
            "{s}"
        );
        assert!(!s.contains("**invitation**"), "{s}");
        // Without the star, only the whole word.
        let s = snippet(text, &["invoice"], WIDTH, "").unwrap();
        assert!(
            s.contains("**Invoice**") && !s.contains("**invoiced**"),
            "{s}"
        );
        // The quick path (a long text) marks the same.
        let long = format!(
            "{}{text}{}",
            "filler words ".repeat(200),
            " tail".repeat(200)
        );
        let s = snippet(&long, &["invo*"], WIDTH, "").unwrap();
        assert!(
            s.contains("**Invoice**") && s.contains("**invoiced**"),
            "{s}"
        );
    }

    #[test]
    fn marks_the_words_case_and_accent_insensitively() {
        let text = "Dear client,\n\nplease find the Résumé attached.\nTotal   due: 1,240.00";
        assert_eq!(
            snippet(text, &["resume"], 160, "").unwrap(),
            "Dear client, please find the **Résumé** attached. Total due: 1,240.00"
        );
        assert_eq!(
            snippet(text, &["total due"], 160, "").unwrap(),
            // A quarter of the width of context before the first word.
            "…please find the Résumé attached. **Total** **due**: 1,240.00"
        );
        assert_eq!(snippet(text, &["invoice"], 160, ""), None);
    }

    #[test]
    fn a_long_text_gives_the_snippet_the_full_pass_gives() {
        // The quick search finds the place; the passage is the same as
        // folding all of the text would give, whatever the case.
        let filler = "lorem ipsum dolor sit amet ".repeat(2000);
        let text = format!(
            "{filler}The DEPRECATED call, deprecated since 2.0, and the undeprecated one. {filler}"
        );
        let wanted = [Wanted {
            word: "deprecated".to_owned(),
            prefix: false,
            stem: None,
        }];
        let quick = snippet(&text, &["deprecated"], WIDTH, "").unwrap();
        assert_eq!(Some(quick.clone()), full(&text, &wanted, WIDTH));
        assert!(
            quick.contains("**DEPRECATED** call, **deprecated** since"),
            "{quick}"
        );
        assert!(quick.starts_with('…') && quick.ends_with('…'), "{quick}");
        // Accents: the full pass answers.
        let text = format!("{filler} a Résumé here {filler}");
        let s = snippet(&text, &["resume"], WIDTH, "").unwrap();
        assert!(s.contains("**Résumé**"), "{s}");
        // `_` separates words, as in the index.
        let text = format!("{filler} IF_TYPE_ETHERNET_CSMACD {filler}");
        let quick = snippet(&text, &["ethernet"], WIDTH, "").unwrap();
        assert_eq!(
            Some(quick.clone()),
            full(
                &text,
                &[Wanted {
                    word: "ethernet".to_owned(),
                    prefix: false,
                    stem: None,
                }],
                WIDTH
            )
        );
        assert!(quick.contains("IF_TYPE_**ETHERNET**_CSMACD"), "{quick}");
        // Only inside a longer word: no snippet.
        let text = format!("{filler} undeprecated {filler}");
        assert_eq!(snippet(&text, &["deprecated"], WIDTH, ""), None);
    }

    #[test]
    fn a_word_marks_its_forms_in_the_texts_language() {
        let text = "She invoiced the client twice; both invoices were paid. Nothing else.";
        let s = snippet(text, &["invoice"], WIDTH, "en").unwrap();
        assert!(
            s.contains("**invoiced**") && s.contains("**invoices**"),
            "{s}"
        );
        // Exactly: no forms.
        assert_eq!(snippet(text, &["=invoice"], WIDTH, "en"), None);
        // No language (a row stored before stems): no forms either.
        assert_eq!(snippet(text, &["invoice"], WIDTH, ""), None);
        // The quick path of a long text finds a form alone.
        let long = format!(
            "{}{text}{}",
            "filler words ".repeat(200),
            " tail".repeat(200)
        );
        let s = snippet(&long, &["invoice"], WIDTH, "en").unwrap();
        assert!(s.contains("**invoiced**"), "{s}");
        // German, accents and all.
        let s = snippet("Die Häuser am See.", &["haus"], WIDTH, "de").unwrap();
        assert!(s.contains("**Häuser**"), "{s}");
    }

    #[test]
    fn picks_the_window_with_the_most_words() {
        let filler = "lorem ipsum ".repeat(40);
        let text = format!("alpha {filler} alpha beta gamma {filler}");
        let s = snippet(&text, &["alpha", "beta", "gamma"], 60, "").unwrap();
        assert!(s.contains("**alpha** **beta** **gamma**"), "{s}");
        assert!(s.starts_with('…') && s.ends_with('…'), "{s}");
    }
}
