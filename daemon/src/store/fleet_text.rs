//! What files say, in the fleet's terms (`[fleet] content = true`): each
//! file's extracted text as two PostgreSQL `tsvector`s, made here rather
//! than by PostgreSQL's text search parser, so that the fleet matches
//! words exactly as this daemon does.
//!
//! - `words`: the text's tokens as the content index's FTS5 tokenizer
//!   (`unicode61 remove_diacritics 2`) makes them, with their positions.
//!   The tokens come from SQLite itself, a private in-memory FTS5 table and
//!   its `fts5vocab` instance table ([`Tokenizer`]), not from a copy of its
//!   rules. PostgreSQL's own parser differs: it keeps `report.pdf`,
//!   `me@example.com` and `3.14` whole, where FTS5 splits them.
//! - `stems`: the language-tagged Snowball stems of [`super::stem::stems`],
//!   the tokens `content_stem` indexes (no positions: they are matched one
//!   at a time).
//!
//! A query's `content:` item becomes `tsquery`s over the same tokens
//! ([`Tokenizer::query`]): a phrase is `'a' <-> 'b'`, a trailing `*` a
//! prefix (`'invo':*`), one word also its stem in every language.
//!
//! PostgreSQL's limits bound how close this gets: a position above 16,383
//! is stored as 16,383 and a word keeps at most 256 positions, so phrases
//! are matched exactly within a document's first 16,383 words (words alone
//! everywhere); a token longer than 2,046 bytes is left out; a tsvector
//! stops growing at [`MAX_TSVECTOR`] bytes (later new words are left out).

use std::collections::BTreeMap;

use rusqlite::Connection;

use crate::Error;

/// PostgreSQL's largest tsvector is 1 MiB; this leaves room for its
/// headers.
pub const MAX_TSVECTOR: usize = 1_000_000;

/// The longest lexeme PostgreSQL takes (bytes).
const MAX_LEXEME: usize = 2046;

/// The largest position a tsvector holds.
const MAX_POS: u32 = 16_383;

/// Positions a tsvector keeps per lexeme.
const MAX_POSITIONS: usize = 256;

/// The text of the files `ids` that have some (`status = 'ok'`), with the
/// language it was stemmed in.
pub fn texts_of(conn: &Connection, ids: &[i64]) -> Result<Vec<(i64, String, String)>, Error> {
    let mut out = Vec::new();
    let mut stmt = conn.prepare_cached(
        "SELECT s.lang FROM content_state s JOIN content_text t ON t.entry_id = s.entry_id
         WHERE s.entry_id = ?1 AND s.status = 'ok'",
    )?;
    for &id in ids {
        let lang: Option<String> = {
            let mut rows = stmt.query([id])?;
            match rows.next()? {
                Some(r) => Some(r.get(0)?),
                None => None,
            }
        };
        if let Some(lang) = lang
            && let Some(t) = super::content::text(conn, id)?
        {
            out.push((id, lang, t.text));
        }
    }
    Ok(out)
}

/// Every entry id that has extracted text.
pub fn ids_with_text(conn: &Connection) -> Result<Vec<i64>, Error> {
    let mut stmt = conn.prepare_cached(
        "SELECT s.entry_id FROM content_state s JOIN content_text t ON t.entry_id = s.entry_id
         WHERE s.status = 'ok' ORDER BY s.entry_id",
    )?;
    let rows = stmt.query_map([], |r| r.get(0))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// SQLite's FTS5 tokenizer, as the content index runs it, on a private
/// in-memory database.
pub struct Tokenizer {
    conn: Connection,
}

impl std::fmt::Debug for Tokenizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Tokenizer")
    }
}

impl Tokenizer {
    pub fn new() -> Result<Tokenizer, Error> {
        let conn = Connection::open_in_memory()?;
        // The content index's tokenizer (migrations 0004 and 0011).
        conn.execute_batch(
            "CREATE VIRTUAL TABLE tok USING fts5(body, tokenize = 'unicode61 remove_diacritics 2');
             CREATE VIRTUAL TABLE tok_v USING fts5vocab(tok, instance);",
        )?;
        Ok(Tokenizer { conn })
    }

    /// `text`'s tokens in order.
    pub fn tokens(&self, text: &str) -> Result<Vec<String>, Error> {
        let mut by_pos: Vec<(u32, String)> = Vec::new();
        self.each(text, |term, pos| by_pos.push((pos, term)))?;
        by_pos.sort();
        Ok(by_pos.into_iter().map(|(_, t)| t).collect())
    }

    fn each(&self, text: &str, mut f: impl FnMut(String, u32)) -> Result<(), Error> {
        self.conn
            .prepare_cached("INSERT INTO tok (rowid, body) VALUES (1, ?1)")?
            .execute([text])?;
        let out = (|| {
            let mut stmt = self
                .conn
                .prepare_cached("SELECT term, \"offset\" FROM tok_v")?;
            let mut rows = stmt.query([])?;
            while let Some(r) = rows.next()? {
                f(r.get(0)?, r.get::<_, i64>(1)? as u32);
            }
            Ok::<_, Error>(())
        })();
        self.conn.prepare_cached("DELETE FROM tok")?.execute([])?;
        out
    }

    /// The `words` tsvector of a text, as PostgreSQL reads it back
    /// (`'lexeme':1,5 ...`; positions from 1).
    pub fn words_tsvector(&self, text: &str) -> Result<String, Error> {
        let mut at: BTreeMap<String, Vec<u32>> = BTreeMap::new();
        self.each(text, |term, pos| {
            if term.len() <= MAX_LEXEME {
                at.entry(term).or_default().push(pos + 1);
            }
        })?;
        let mut out = String::new();
        for (term, mut pos) in at {
            if out.len() + term.len() + 16 > MAX_TSVECTOR {
                break;
            }
            pos.sort_unstable();
            pos.truncate(MAX_POSITIONS);
            if !out.is_empty() {
                out.push(' ');
            }
            quote_lexeme(&term, &mut out);
            out.push(':');
            let list: Vec<String> = pos.iter().map(|p| p.min(&MAX_POS).to_string()).collect();
            out.push_str(&list.join(","));
        }
        Ok(out)
    }

    /// The tsqueries of a `content:` value, as `fsindex.search` takes them:
    /// `words` over the words tsvector (`=word` and quoted values: only
    /// this), and `stems` over the stems one (one word: its stem in every
    /// language, so any of its forms), the two ORed. `None` for words
    /// when the value has no token (it then matches nothing).
    pub fn query(&self, value: &str) -> Result<(Option<String>, Option<String>), Error> {
        let (exact, words) = match value.strip_prefix('=') {
            Some(w) => (true, w),
            None => (false, value),
        };
        let trimmed = words.trim_end();
        let (body, prefix) = match trimmed.strip_suffix('*') {
            Some(w) if w.chars().any(char::is_alphanumeric) => (w.trim_end_matches('*'), true),
            _ => (words, false),
        };
        let tokens = self.tokens(body)?;
        let words_q = if tokens.is_empty() {
            None
        } else {
            let mut q = String::new();
            for (i, t) in tokens.iter().enumerate() {
                if i > 0 {
                    q.push_str(" <-> ");
                }
                quote_lexeme(t, &mut q);
                if prefix && i + 1 == tokens.len() {
                    q.push_str(":*");
                }
            }
            Some(q)
        };
        // As `content::matching`: stems only for one word without `=` or
        // `*`.
        let stems_q = if exact || prefix || trimmed.ends_with('*') {
            None
        } else {
            let stems = super::stem::query_tokens(words);
            if stems.is_empty() {
                None
            } else {
                let mut q = String::new();
                for (i, s) in stems.iter().enumerate() {
                    if i > 0 {
                        q.push_str(" | ");
                    }
                    quote_lexeme(s, &mut q);
                }
                Some(q)
            }
        };
        Ok((words_q, stems_q))
    }
}

/// The `stems` tsvector of a text in `lang` (its distinct tagged stems).
pub fn stems_tsvector(text: &str, lang: &str) -> String {
    let stems = super::stem::stems(text, lang);
    let mut out = String::new();
    for s in stems
        .split(' ')
        .filter(|s| !s.is_empty() && s.len() <= MAX_LEXEME)
    {
        if out.len() + s.len() + 4 > MAX_TSVECTOR {
            break;
        }
        if !out.is_empty() {
            out.push(' ');
        }
        quote_lexeme(s, &mut out);
    }
    out
}

/// A lexeme in a tsvector or tsquery literal: single-quoted, `'` and `\`
/// escaped by a backslash.
fn quote_lexeme(term: &str, out: &mut String) {
    out.push('\'');
    for c in term.chars() {
        if c == '\'' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('\'');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_as_fts5_makes_them() {
        let t = Tokenizer::new().unwrap();
        assert_eq!(
            t.tokens("Report.PDF sent to me@example.com: Café 3.14")
                .unwrap(),
            [
                "report", "pdf", "sent", "to", "me", "example", "com", "cafe", "3", "14"
            ]
        );
        assert_eq!(
            t.words_tsvector("the cat and the hat").unwrap(),
            "'and':3 'cat':2 'hat':5 'the':1,4"
        );
        assert_eq!(t.words_tsvector("it's").unwrap(), "'it':1 's':2");
    }

    #[test]
    fn tsvectors_keep_within_postgresqls_limits() {
        let t = Tokenizer::new().unwrap();
        // 300 times one word, then a word at position 20,001.
        let mut text = "echo ".repeat(300);
        text.push_str(&"x ".repeat(19_700));
        text.push_str("last");
        let v = t.words_tsvector(&text).unwrap();
        let echo = v.split(' ').find(|l| l.starts_with("'echo':")).unwrap();
        assert_eq!(echo.split(',').count(), MAX_POSITIONS);
        assert!(v.contains("'last':16383"), "{}", &v[v.len() - 40..]);
        // A token PostgreSQL would refuse is left out.
        let long = "y".repeat(MAX_LEXEME + 1);
        assert_eq!(t.words_tsvector(&format!("ok {long}")).unwrap(), "'ok':1");
        assert_eq!(stems_tsvector("invoices invoiced", "en"), "'eninvoic'");
    }

    #[test]
    fn queries_as_the_daemon_reads_content() {
        let t = Tokenizer::new().unwrap();
        let (w, s) = t.query("invoices").unwrap();
        assert_eq!(w.as_deref(), Some("'invoices'"));
        assert!(s.unwrap().contains("'eninvoic'"));
        let (w, s) = t.query("=Total due").unwrap();
        assert_eq!(w.as_deref(), Some("'total' <-> 'due'"));
        assert_eq!(s, None);
        let (w, s) = t.query("invo*").unwrap();
        assert_eq!(w.as_deref(), Some("'invo':*"));
        assert_eq!(s, None);
        assert_eq!(t.query("-- !").unwrap(), (None, None));
    }
}
