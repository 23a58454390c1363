//! `@name` in a query: a saved search, put in the query's place before it
//! is parsed, so that every client (fsctl, fsgui, MCP, gRPC) runs saved
//! searches alike. A query's terms are all ANDed, so a saved search's
//! terms written in place of its `@name` mean exactly "this and the saved
//! search"; a negated (`!@x`) or alternative (`a|@x`) saved search would
//! not, and is refused rather than half-meant.
//!
//! What is a saved search's name: a whole unquoted term of letters,
//! digits, `-`, `_` and `.` after the `@`. Anything else that starts with
//! `@` (`@types/node`) stays a plain term, and quotes make any `@` text
//! literal (`"@home"`).

use std::borrow::Cow;

use crate::Error;

/// At most this many bytes in a saved search's name.
pub const MAX_NAME_BYTES: usize = 64;

fn name_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '-' | '_' | '.')
}

/// Whether `name` (without its `@`) can name a saved search.
pub fn is_name(name: &str) -> bool {
    !name.is_empty() && name.len() <= MAX_NAME_BYTES && name.chars().all(name_char)
}

/// A saved search's name as given (a leading `@` is dropped), or why it
/// cannot be one.
pub fn check_name(raw: &str) -> Result<&str, Error> {
    let name = raw.trim();
    let name = name.strip_prefix('@').unwrap_or(name);
    let bad = |why: String| Error::InvalidArgument(format!("saved search name `{raw}`: {why}"));
    if name.is_empty() {
        return Err(bad("a name needs some text".into()));
    }
    if name.len() > MAX_NAME_BYTES {
        return Err(bad(format!("longer than {MAX_NAME_BYTES} bytes")));
    }
    if let Some(c) = name.chars().find(|c| !name_char(*c)) {
        return Err(bad(format!(
            "`{}` is not allowed: use letters, digits, `-`, `_` and `.`",
            c.escape_debug()
        )));
    }
    Ok(name)
}

/// The query's whitespace-separated terms as byte ranges (quotes keep
/// spaces inside a term, as the parser's tokens do).
fn term_spans(input: &str) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut start: Option<usize> = None;
    let mut quoted = false;
    for (i, c) in input.char_indices() {
        if c == '"' {
            quoted = !quoted;
        } else if !quoted && c.is_whitespace() {
            if let Some(s) = start.take() {
                spans.push((s, i));
            }
            continue;
        }
        if start.is_none() {
            start = Some(i);
        }
    }
    if let Some(s) = start {
        spans.push((s, input.len()));
    }
    spans
}

/// The saved-search name a term calls, if it calls one: `Ok(Some)` for a
/// whole `@name`, an error for one negated or among alternatives.
fn called(term: &str) -> Result<Option<&str>, Error> {
    // Quoted text is literal, and a regex's `|` and `@` are its own.
    if term.contains('"') || term.trim_start_matches('!').starts_with("regex:") {
        return Ok(None);
    }
    if let Some(name) = term.strip_prefix('@')
        && is_name(name)
    {
        return Ok(Some(name));
    }
    for alt in term.split('|') {
        if let Some(name) = alt.trim_start_matches('!').strip_prefix('@')
            && is_name(name)
        {
            return Err(Error::InvalidQuery(format!(
                "`{term}`: `@{name}` is a saved search, which stands alone in a query \
                 (not negated, not in an a|b alternative); to match the text, quote it: \"@{name}\""
            )));
        }
    }
    Ok(None)
}

/// The names `input` calls with `@name`, in order (errors as [`expand`]).
pub fn calls(input: &str) -> Result<Vec<String>, Error> {
    if !input.contains('@') {
        return Ok(Vec::new());
    }
    let mut names = Vec::new();
    for (s, e) in term_spans(input) {
        if let Some(name) = called(&input[s..e])? {
            names.push(name.to_owned());
        }
    }
    Ok(names)
}

/// `input` with each `@name` replaced by the saved search's query, found
/// with `lookup` (`None`: there is no such saved search, an error that
/// lists `names()`). A query without `@` comes back as it is, unread.
pub fn expand<'a>(
    input: &'a str,
    mut lookup: impl FnMut(&str) -> Result<Option<String>, Error>,
    names: impl FnOnce() -> Result<Vec<String>, Error>,
) -> Result<Cow<'a, str>, Error> {
    if !input.contains('@') {
        return Ok(Cow::Borrowed(input));
    }
    let mut out = String::with_capacity(input.len());
    let mut last = 0;
    for (s, e) in term_spans(input) {
        let Some(name) = called(&input[s..e])? else {
            continue;
        };
        let Some(query) = lookup(name)? else {
            let known = names()?;
            let listed = if known.is_empty() {
                "there are no saved searches yet (save one with `fsctl saved add NAME QUERY`)"
                    .to_owned()
            } else {
                let at: Vec<String> = known.iter().map(|n| format!("@{n}")).collect();
                format!("saved: {}", at.join(", "))
            };
            return Err(Error::InvalidQuery(format!(
                "no saved search called `@{name}`; {listed}; to match the text, quote it: \"@{name}\""
            )));
        };
        out.push_str(&input[last..s]);
        out.push_str(&query);
        last = e;
    }
    if last == 0 {
        return Ok(Cow::Borrowed(input));
    }
    out.push_str(&input[last..]);
    Ok(Cow::Owned(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(q: &str) -> Result<String, Error> {
        expand(
            q,
            |n| {
                Ok(match n.to_ascii_lowercase().as_str() {
                    "taxes" => Some("ext:pdf \"tax return\"".to_owned()),
                    "big" => Some("size:>1gb".to_owned()),
                    _ => None,
                })
            },
            || Ok(vec!["big".into(), "taxes".into()]),
        )
        .map(Cow::into_owned)
    }

    #[test]
    fn a_whole_at_name_is_replaced_by_its_query() {
        assert_eq!(run("@taxes").unwrap(), "ext:pdf \"tax return\"");
        assert_eq!(run("@Taxes 2025").unwrap(), "ext:pdf \"tax return\" 2025");
        assert_eq!(
            run("kind:video  @big\t@taxes").unwrap(),
            "kind:video  size:>1gb\text:pdf \"tax return\""
        );
        // Not a name: plain text, as before.
        for q in [
            "report",
            "\"@taxes\"",
            "me@example.com",
            "@types/node",
            "path:@taxes",
            "regex:^@x|@taxes$",
            "@",
        ] {
            assert_eq!(run(q).unwrap(), q);
        }
    }

    #[test]
    fn an_unknown_negated_or_alternative_saved_search_is_refused_with_the_names() {
        let e = run("@nope ext:pdf").unwrap_err().to_string();
        assert!(e.contains("no saved search called `@nope`"), "{e}");
        assert!(e.contains("saved: @big, @taxes"), "{e}");
        assert!(e.contains("\"@nope\""), "{e}");
        let none = expand("@x", |_| Ok(None), || Ok(Vec::new())).unwrap_err();
        assert!(none.to_string().contains("no saved searches yet"), "{none}");
        for q in ["!@taxes", "a|@taxes", "@taxes|b", "!!@big"] {
            let e = run(q).unwrap_err().to_string();
            assert!(e.contains("stands alone"), "{q}: {e}");
        }
        assert_eq!(calls("a @taxes \"@big\" @big").unwrap(), ["taxes", "big"]);
    }

    #[test]
    fn names_are_letters_digits_and_a_few_marks() {
        assert_eq!(check_name("@taxes-2025").unwrap(), "taxes-2025");
        assert_eq!(check_name(" photos.raw_v2 ").unwrap(), "photos.raw_v2");
        assert_eq!(check_name("Fotos_été").unwrap(), "Fotos_été");
        let long = "x".repeat(65);
        for bad in ["", "@", "a b", "a|b", "a/b", "\"q\"", long.as_str()] {
            assert!(check_name(bad).is_err(), "{bad:?}");
        }
    }
}
