//! Hits inside a mailbox (issue 32): which messages of an mbox file a
//! `content:` query found.
//!
//! The content index holds a mailbox as one text, its messages separated
//! by a form-feed line ([`fsindex_extract::formats::mbox::SEPARATOR`]),
//! each starting with its `Subject:`, `From:`, `To:`, `Date:` lines. A
//! search that finds the mailbox lists, instead of the mailbox, each of its
//! messages that holds every word of the query's `content:` terms (folded
//! as the index folds them; the last word of `invo*` as a prefix), shown as
//! `mailbox/<subject>`. A mailbox none of whose messages holds every word
//! alone (the words are spread over several) is listed as itself.
//!
//! An archive's text has the same shape, one block per member, each
//! starting with `Path: inner/path`: a member that holds every word (its
//! path's words included) is shown as `archive.zip/inner/path`.

use unicode_normalization::UnicodeNormalization;
use unicode_normalization::char::is_combining_mark;

/// The most messages listed for one mailbox.
pub const MAX_MESSAGES: usize = 1000;

/// A message that matched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MessageHit<'a> {
    /// 1-based position of the message in the mailbox's text.
    pub index: u32,
    /// Its subject, as shown: `(no subject)` when it has none, `/` made
    /// `∕` so the shown path has no extra level.
    pub subject: String,
    /// The message's text (for its snippet).
    pub text: &'a str,
}

/// The messages of `text` (a mailbox's stored text) holding every word of
/// `queries` (the query's `content:` terms), at most [`MAX_MESSAGES`].
pub fn matching<'a>(text: &'a str, queries: &[&str]) -> Vec<MessageHit<'a>> {
    let wanted: Vec<(String, bool)> = queries
        .iter()
        .flat_map(|q| {
            let prefix = q.trim_end().ends_with('*');
            let ws = words(q);
            let n = ws.len();
            ws.into_iter()
                .enumerate()
                .map(move |(k, w)| (w, prefix && k + 1 == n))
        })
        .collect();
    if wanted.is_empty() {
        return Vec::new();
    }
    fsindex_extract::formats::mbox::messages(text)
        .enumerate()
        .filter(|(_, m)| {
            let have = words(m);
            wanted.iter().all(|(w, prefix)| {
                have.iter()
                    .any(|h| if *prefix { h.starts_with(w) } else { h == w })
            })
        })
        .take(MAX_MESSAGES)
        .map(|(i, m)| MessageHit {
            index: i as u32 + 1,
            subject: shown_name(m),
            text: m,
        })
        .collect()
}

/// A block's name in a path: an archive member's path, or a message's
/// subject.
fn shown_name(block: &str) -> String {
    let first = block.lines().next().unwrap_or_default();
    match first.strip_prefix(fsindex_extract::formats::archive::PATH_LINE) {
        Some(path) => path
            .chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect(),
        None => subject(block),
    }
}

/// The `Subject:` line a message's text starts with (the mail extractor
/// writes it first), cleaned for a path.
fn subject(message: &str) -> String {
    let s = message
        .lines()
        .take_while(|l| !l.is_empty())
        .find_map(|l| l.strip_prefix("Subject: "))
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .unwrap_or("(no subject)");
    s.chars()
        .map(|c| match c {
            '/' => '\u{2215}',
            c if c.is_control() => ' ',
            c => c,
        })
        .collect()
}

/// The folded words of `s` (runs of letters and digits, lowercase, accents
/// dropped), as the content index and the snippets fold them.
fn words(s: &str) -> Vec<String> {
    let folded: String = s
        .chars()
        .nfd()
        .filter(|c| !is_combining_mark(*c))
        .flat_map(char::to_lowercase)
        .collect();
    folded
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_owned)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_holding_every_word_are_listed_with_their_subjects() {
        let sep = fsindex_extract::formats::mbox::SEPARATOR;
        let text = format!(
            "Subject: Milk order\nFrom: a@x\n\nTwo litres of milk, please.\n{sep}\n\
             Subject: Re: a/b test\n\nNo milk here? Café.\n{sep}\n\
             From: c@x\n\nBread only."
        );
        let got = |q: &[&str]| {
            matching(&text, q)
                .into_iter()
                .map(|h| (h.index, h.subject))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            got(&["milk"]),
            [
                (1, "Milk order".to_owned()),
                (2, "Re: a\u{2215}b test".into())
            ]
        );
        assert_eq!(got(&["milk", "please"]), [(1, "Milk order".to_owned())]);
        assert_eq!(got(&["cafe"]), [(2, "Re: a\u{2215}b test".to_owned())]);
        assert_eq!(got(&["brea*"]), [(3, "(no subject)".to_owned())]);
        assert_eq!(got(&["milk", "bread"]), []);
        let zip = format!("Path: notes/todo.txt\nbuy milk\n{sep}\nPath: a.jpg");
        let hits: Vec<_> = matching(&zip, &["todo"])
            .into_iter()
            .map(|h| h.subject)
            .collect();
        assert_eq!(hits, ["notes/todo.txt"]);
    }
}
