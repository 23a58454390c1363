//! The query language, in the spirit of Everything's.
//!
//! A query is a list of whitespace-separated groups, all of which must
//! match (AND). A group is one or more alternatives separated by `|` (OR).
//! An alternative is an item, optionally negated with `!`:
//!
//! | item | matches |
//! |---|---|
//! | `tax` | the path relative to its root contains it (case-insensitive) |
//! | `"total due"` | the same, spaces included; quotes make anything literal |
//! | `*.tar.gz`, `IMG_????.jpg` | wildcards: the whole name, case-insensitive |
//! | `ext:pdf`, `ext:jpg;png` | a file with one of these extensions |
//! | `size:>10mb`, `size:1kb..1mb`, `size:<=4096` | a file's size (b/kb/mb/gb/tb, 1024-based) |
//! | `dm:today`, `dm:2025`, `dm:2025-01..2025-03`, `dm:>2025-06-01` | modified in that span (local time) |
//! | `kind:image` | document, image, audio, video, archive, code, text, folder |
//! | `in:/home/me/Documents` | under that folder (fsctl expands `~` and relative paths) |
//! | `path:Taxes/2025` | the relative path contains it, taken literally |
//! | `regex:^IMG_\d{4}\.jpg$` | the name matches (case-insensitive) |
//! | `case:README` | the relative path contains it, case-sensitively |
//! | `content:invoice`, `content:"total due"`, `content:invo*` | the file's text holds the words, in that order; one word in any of its forms (`content:invoices` finds "invoiced"), `content:=word` or quotes exactly; `*` makes the last a prefix (folders with content on) |
//! | `taken:2019`, `camera:canon`, `width:>3000`, `duration:>3min`, `artist:`, `pages:>10`, `author:`, ... | media and document metadata (see [`super::media`]) |
//! | `tag:receipts` | the entry carries that tag (see [`super::labels`]) |
//! | `accents:ignore` | not an item: the whole query's terms and `path:` ignore accents (`cafe` finds `café`); `accents:match` is the default |
//!
//! Every term is folded (NFC + full case folding) once, here. A malformed
//! query is refused with one line that quotes the bad part.

use std::path::PathBuf;

use crate::Error;
use crate::index::fold::fold_str;
pub use crate::index::kinds::{KIND_BY_WHOLE_NAME, KindClass, kind_of};

/// At most this many items in a query.
pub const MAX_ITEMS: usize = 64;
/// At most this many bytes in a whole query.
pub const MAX_QUERY_BYTES: usize = 16 * 1024;
/// At most this many bytes in one term or filter value.
pub const MAX_TERM_BYTES: usize = 4096;
/// At most this many `*` and `?` in one wildcard pattern.
pub const MAX_WILDCARDS: usize = 32;

const FILTERS: &str = "accents: ext: size: dm: kind: in: path: regex: case: content: taken: camera: width: height: duration: artist: album: title: genre: pages: author: tag:";

/// One test on an entry.
#[derive(Clone, Debug)]
pub enum Item {
    /// The folded relative path contains this (folded) text.
    Term(String),
    /// The relative path contains this text, case-sensitively.
    CaseTerm(String),
    /// The folded name matches this pattern whole.
    Wildcard(regex::Regex),
    /// The name matches.
    Regex(regex::Regex),
    /// A non-folder whose folded extension is one of these.
    Ext(Vec<String>),
    /// A non-folder whose size is within these bounds (inclusive).
    Size {
        min: u64,
        max: u64,
    },
    /// Modified within [from, to) nanoseconds since the epoch.
    Modified {
        from: i64,
        to: i64,
    },
    Kind(KindClass),
    /// Under this folder (absolute path; resolved to an entry by the server).
    In(PathBuf),
    /// Under this entry (what `In` resolves to).
    InEntry(i64),
    /// The file's text holds these words, in this order (`content:`); the
    /// engine resolves it against the content index. One word matches in
    /// its forms; a leading `=` (`content:=word`, or a quoted value) asks
    /// for the words exactly.
    Content(String),
    /// What `Content` resolves to: the files that match, with their bm25
    /// scores (lower is better).
    ContentHits(std::sync::Arc<ContentHits>),
    /// A test on media metadata (`taken:`, `camera:`, ...); the engine
    /// resolves it against the media table.
    Media(super::media::MediaTest),
    /// What `Media` resolves to: the files that pass.
    MediaHits(std::sync::Arc<std::collections::HashSet<u32>>),
    /// Carries this tag (folded); the engine resolves it against the tags.
    Tag(String),
    /// What `Tag` resolves to: the entries carrying it.
    TagHits(std::sync::Arc<std::collections::HashSet<u32>>),
    Not(Box<Item>),
}

/// The files whose text matches one `content:` item.
#[derive(Clone, Debug, Default)]
pub struct ContentHits {
    /// The words asked for (`content:` value).
    pub words: String,
    /// Entry id to bm25 score (negative; lower ranks higher).
    pub scores: std::collections::HashMap<u32, f64>,
}

/// A parsed query: every group must match; a group matches when one of its
/// items does.
#[derive(Clone, Debug)]
pub struct Query {
    pub groups: Vec<Vec<Item>>,
    /// `accents:ignore`: plain terms (and `path:`) are bare (see
    /// [`crate::index::fold::strip_accents`]) and match names whose bare
    /// form holds them.
    pub ignore_accents: bool,
}

impl Query {
    /// Parses with the current local time (for `dm:today` and the like).
    pub fn parse(input: &str) -> Result<Query, Error> {
        Query::parse_at(input, &jiff::Zoned::now())
    }

    /// Parses relative dates against `now`.
    pub fn parse_at(input: &str, now: &jiff::Zoned) -> Result<Query, Error> {
        if input.len() > MAX_QUERY_BYTES {
            return Err(Error::InvalidQuery(format!(
                "the query is {} bytes long; at most {MAX_QUERY_BYTES}",
                input.len()
            )));
        }
        // Split first and count, so that a query past the limit is refused
        // before any of its items is compiled.
        let (tokens, ignore_accents) = super::accents::take_switch(tokens(input)?)?;
        let alternatives = tokens
            .iter()
            .map(split_alternatives)
            .collect::<Result<Vec<_>, _>>()?;
        let items: usize = alternatives.iter().map(Vec::len).sum();
        if items > MAX_ITEMS {
            return Err(Error::InvalidQuery(format!(
                "too many terms ({items}); at most {MAX_ITEMS}"
            )));
        }
        if alternatives.is_empty() {
            return Err(Error::InvalidQuery(
                "empty query: give at least one term or filter, e.g. `fsctl search report` or `ext:pdf`".into(),
            ));
        }
        let groups = alternatives
            .iter()
            .map(|alts| alts.iter().map(|a| parse_item(a, now)).collect())
            .collect::<Result<_, _>>()?;
        let mut query = Query {
            groups,
            ignore_accents,
        };
        if ignore_accents {
            super::accents::strip_terms(&mut query);
        }
        Ok(query)
    }

    /// Plain terms that must match (not negated, not in an alternative):
    /// relevance ranks entries whose own name holds them.
    pub fn ranking_terms(&self) -> Vec<&str> {
        self.groups
            .iter()
            .filter(|g| g.len() == 1)
            .filter_map(|g| match &g[0] {
                Item::Term(t) => Some(t.as_str()),
                _ => None,
            })
            .take(32)
            .collect()
    }

    /// The `content:` items that must match (not negated), for snippets.
    pub fn content_words(&self) -> Vec<&str> {
        self.groups
            .iter()
            .flatten()
            .filter_map(|i| match i {
                Item::Content(w) => Some(w.as_str()),
                Item::ContentHits(h) => Some(h.words.as_str()),
                _ => None,
            })
            .collect()
    }

    /// True when some item reads the content index.
    pub fn has_content(&self) -> bool {
        self.any_item(|i| matches!(i, Item::Content(_)))
    }

    /// Whether `test` holds for some item, looking inside `!` too.
    pub(crate) fn any_item(&self, test: impl Fn(&Item) -> bool) -> bool {
        fn inner(i: &Item) -> &Item {
            match i {
                Item::Not(x) => inner(x),
                _ => i,
            }
        }
        self.groups.iter().flatten().any(|i| test(inner(i)))
    }

    /// Calls `f` on every item, inside `!` too: what the resolvers below
    /// (and `accents:ignore`) rewrite in place.
    pub(crate) fn try_each_item(
        &mut self,
        mut f: impl FnMut(&mut Item) -> Result<(), Error>,
    ) -> Result<(), Error> {
        fn inner(i: &mut Item) -> &mut Item {
            match i {
                Item::Not(x) => inner(x),
                _ => i,
            }
        }
        for item in self.groups.iter_mut().flatten() {
            f(inner(item))?;
        }
        Ok(())
    }

    /// Replaces `content:` items with the files that match them, using
    /// `find` (words -> hits).
    pub fn resolve_content(
        &mut self,
        mut find: impl FnMut(&str) -> Result<ContentHits, Error>,
    ) -> Result<(), Error> {
        self.try_each_item(|item| {
            if let Item::Content(w) = item {
                *item = Item::ContentHits(std::sync::Arc::new(find(w)?));
            }
            Ok(())
        })
    }

    /// The bm25 score of entry `i` summed over the query's content items
    /// (`None`: the query has none, or `i` matched none).
    pub fn content_score(&self, i: u32) -> Option<f64> {
        let mut score = None;
        for item in self.groups.iter().flatten() {
            if let Item::ContentHits(h) = item
                && let Some(s) = h.scores.get(&i)
            {
                *score.get_or_insert(0.0) += s;
            }
        }
        score
    }

    /// True when some item reads media metadata.
    pub fn has_media(&self) -> bool {
        self.any_item(|i| matches!(i, Item::Media(_)))
    }

    /// Replaces media tests with the files that pass them, using `find`.
    pub fn resolve_media(
        &mut self,
        mut find: impl FnMut(&super::media::MediaTest) -> Result<std::collections::HashSet<u32>, Error>,
    ) -> Result<(), Error> {
        self.try_each_item(|item| {
            if let Item::Media(t) = item {
                *item = Item::MediaHits(std::sync::Arc::new(find(t)?));
            }
            Ok(())
        })
    }

    /// Replaces `in:` paths with entries, using `resolve`.
    pub fn resolve_in(
        &mut self,
        mut resolve: impl FnMut(&std::path::Path) -> Result<i64, Error>,
    ) -> Result<(), Error> {
        self.try_each_item(|item| {
            if let Item::In(p) = item {
                *item = Item::InEntry(resolve(p)?);
            }
            Ok(())
        })
    }
}

/// A token as typed: its text without quotes, and which characters were
/// quoted (quoted text is literal: no `|`, `!`, filters or wildcards).
#[derive(Clone, Debug, Default)]
pub(super) struct Token {
    pub(super) text: String,
    pub(super) quoted: Vec<bool>,
}

impl Token {
    fn push(&mut self, c: char, quoted: bool) {
        self.text.push(c);
        self.quoted
            .extend(std::iter::repeat_n(quoted, c.len_utf8()));
    }
    fn all_quoted(&self) -> bool {
        !self.quoted.is_empty() && self.quoted.iter().all(|q| *q)
    }
    fn slice(&self, from: usize, to: usize) -> Token {
        Token {
            text: self.text[from..to].to_owned(),
            quoted: self.quoted[from..to].to_vec(),
        }
    }
}

fn tokens(input: &str) -> Result<Vec<Token>, Error> {
    let mut out = Vec::new();
    let mut cur = Token::default();
    let mut quote_start: Option<usize> = None;
    let mut started = false;
    for (i, c) in input.char_indices() {
        if c == '"' {
            quote_start = match quote_start {
                None => Some(i),
                Some(_) => None,
            };
            started = true;
            continue;
        }
        if quote_start.is_none() && c.is_whitespace() {
            if started {
                out.push(std::mem::take(&mut cur));
                started = false;
            }
            continue;
        }
        cur.push(c, quote_start.is_some());
        started = true;
    }
    if let Some(q) = quote_start {
        return Err(Error::InvalidQuery(format!(
            "unclosed quote at `{}`: close the phrase with another \"",
            &input[q..]
        )));
    }
    if started {
        out.push(cur);
    }
    for t in &out {
        if t.text.is_empty() {
            return Err(Error::InvalidQuery(
                "empty phrase `\"\"`: put text between the quotes".into(),
            ));
        }
    }
    Ok(out)
}

fn split_alternatives(t: &Token) -> Result<Vec<Token>, Error> {
    // A regex runs to the end of its token: its `|` is the regex's own.
    if t.text.trim_start_matches('!').starts_with("regex:") {
        return Ok(vec![t.clone()]);
    }
    let mut parts = Vec::new();
    let mut start = 0;
    for (i, c) in t.text.char_indices() {
        if c == '|' && !t.quoted[i] {
            parts.push(t.slice(start, i));
            start = i + 1;
        }
    }
    parts.push(t.slice(start, t.text.len()));
    if parts.len() > 1 && parts.iter().any(|p| p.text.is_empty()) {
        return Err(Error::InvalidQuery(format!(
            "empty alternative in `{}`: write `a|b`, with something on both sides of |",
            t.text
        )));
    }
    Ok(parts)
}

fn parse_item(t: &Token, now: &jiff::Zoned) -> Result<Item, Error> {
    // Negations are counted, not nested: `!!draft` is `draft`, so no depth
    // depends on the input (10,000 `!`s once overflowed the stack).
    let bangs = t
        .text
        .bytes()
        .zip(&t.quoted)
        .take_while(|&(b, &q)| b == b'!' && !q)
        .count();
    if bangs > 0 {
        let rest = t.slice(bangs, t.text.len());
        if rest.text.is_empty() {
            return Err(Error::InvalidQuery(
                "`!` needs something to negate, e.g. `!draft`".into(),
            ));
        }
        let item = parse_positive(&rest, now)?;
        return Ok(if bangs % 2 == 1 {
            Item::Not(Box::new(item))
        } else {
            item
        });
    }
    parse_positive(t, now)
}

/// An item without leading `!`s.
fn parse_positive(t: &Token, now: &jiff::Zoned) -> Result<Item, Error> {
    if t.text.len() > MAX_TERM_BYTES {
        let head: String = t.text.chars().take(24).collect();
        return Err(Error::InvalidQuery(format!(
            "term `{head}...` is {} bytes long; at most {MAX_TERM_BYTES}",
            t.text.len()
        )));
    }
    if t.all_quoted() {
        return Ok(Item::Term(fold_str(&t.text).into_owned()));
    }
    // A filter: an unquoted lowercase word and a colon.
    if let Some(colon) = t.text.find(':') {
        let name = &t.text[..colon];
        if !name.is_empty()
            && name.chars().all(|c| c.is_ascii_alphabetic())
            && !t.quoted[..colon].iter().any(|q| *q)
        {
            let value = &t.text[colon + 1..];
            // A quoted content: value is matched exactly, as `content:=word`.
            if name == "content" && t.quoted[colon + 1..].iter().any(|q| *q) {
                return parse_filter("content", &format!("={value}"), &t.text, now);
            }
            return parse_filter(&name.to_ascii_lowercase(), value, &t.text, now);
        }
    }
    let text = &t.text;
    let wild = text
        .char_indices()
        .filter(|&(i, c)| (c == '*' || c == '?') && !t.quoted[i])
        .count();
    if wild > MAX_WILDCARDS {
        return Err(Error::InvalidQuery(format!(
            "`{text}` has {wild} wildcards; at most {MAX_WILDCARDS}"
        )));
    }
    if wild > 0 {
        return Ok(Item::Wildcard(glob(t)?));
    }
    Ok(Item::Term(fold_str(text).into_owned()))
}

fn parse_filter(name: &str, value: &str, whole: &str, now: &jiff::Zoned) -> Result<Item, Error> {
    if value.is_empty() {
        return Err(Error::InvalidQuery(format!(
            "`{whole}` needs a value after the colon, e.g. `ext:pdf`"
        )));
    }
    match name {
        "ext" => {
            let exts: Vec<String> = value
                .split([';', ','])
                .map(|e| fold_str(e.trim_start_matches('.')).into_owned())
                .filter(|e| !e.is_empty())
                .collect();
            if exts.is_empty() {
                return Err(Error::InvalidQuery(format!(
                    "`{whole}`: give extensions like ext:pdf or ext:jpg;png"
                )));
            }
            Ok(Item::Ext(exts))
        }
        "size" => parse_size_filter(value, whole),
        "dm" | "datemodified" => parse_date_filter(value, whole, now),
        "kind" | "type" => Ok(Item::Kind(match value.to_ascii_lowercase().as_str() {
            "document" | "doc" | "documents" => KindClass::Document,
            "image" | "picture" | "pic" | "images" => KindClass::Image,
            "audio" | "music" => KindClass::Audio,
            "video" | "videos" => KindClass::Video,
            "archive" | "zip" | "archives" => KindClass::Archive,
            "code" | "source" => KindClass::Code,
            "text" | "txt" => KindClass::Text,
            "folder" | "dir" | "directory" => KindClass::Folder,
            _ => {
                return Err(Error::InvalidQuery(format!(
                    "unknown kind `{value}` in `{whole}`; kinds: document image audio video archive code text folder"
                )));
            }
        })),
        "in" => {
            let p = PathBuf::from(value);
            if !p.is_absolute() {
                return Err(Error::InvalidQuery(format!(
                    "`{whole}`: in: needs an absolute folder path (fsctl expands ~ and relative paths)"
                )));
            }
            Ok(Item::In(p))
        }
        "path" => Ok(Item::Term(fold_str(value).into_owned())),
        "case" => Ok(Item::CaseTerm(value.to_owned())),
        "regex" => regex::RegexBuilder::new(value)
            .case_insensitive(true)
            .size_limit(1 << 20)
            .dfa_size_limit(1 << 20)
            .build()
            .map(Item::Regex)
            .map_err(|e| {
                let first = e.to_string();
                let first = first.lines().last().unwrap_or("invalid").trim().to_owned();
                Error::InvalidQuery(format!("bad regex `{value}` in `{whole}`: {first}"))
            }),
        "content" => {
            if !value.chars().any(char::is_alphanumeric) {
                return Err(Error::InvalidQuery(format!(
                    "`{whole}`: content: needs a word, e.g. content:invoice or content:\"total due\""
                )));
            }
            Ok(Item::Content(value.to_owned()))
        }
        m if super::media::FILTERS.contains(&m) => super::media::parse(m, value, whole, now),
        "tag" => super::labels::parse(value, whole),
        _ => Err(Error::InvalidQuery(format!(
            "unknown filter `{name}:` in `{whole}`; filters: {FILTERS} (quote it, \"{whole}\", to search for the text)"
        ))),
    }
}

/// A glob over the folded name: `*` any run, `?` one character; quoted
/// characters are literal.
fn glob(t: &Token) -> Result<regex::Regex, Error> {
    let folded = fold_str(&t.text);
    // Folding can change lengths; keep quoting per character only when it
    // does not (the common case), else treat every * and ? as wildcards.
    let same = folded.len() == t.text.len();
    let mut re = String::from("^");
    for (i, c) in folded.char_indices() {
        let quoted = same && t.quoted[i];
        match c {
            '*' if !quoted => re.push_str(".*"),
            '?' if !quoted => re.push('.'),
            _ => re.push_str(&regex::escape(c.encode_utf8(&mut [0; 4]))),
        }
    }
    re.push('$');
    regex::RegexBuilder::new(&re)
        .dot_matches_new_line(true)
        .size_limit(1 << 20)
        .build()
        .map_err(|e| Error::InvalidQuery(format!("bad wildcard `{}`: {e}", t.text)))
}

/// "10mb" -> bytes (1024-based units, decimals allowed).
fn parse_size(s: &str) -> Option<u64> {
    let s = s.trim().to_ascii_lowercase();
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    if num.is_empty() {
        return None;
    }
    let n: f64 = num.parse().ok()?;
    let mult: f64 = match unit {
        "" | "b" => 1.0,
        "k" | "kb" | "kib" => 1024.0,
        "m" | "mb" | "mib" => 1024.0 * 1024.0,
        "g" | "gb" | "gib" => 1024.0 * 1024.0 * 1024.0,
        "t" | "tb" | "tib" => 1024.0 * 1024.0 * 1024.0 * 1024.0,
        _ => return None,
    };
    let v = n * mult;
    (v.is_finite() && (0.0..1.8e19).contains(&v)).then_some(v.round() as u64)
}

fn parse_size_filter(value: &str, whole: &str) -> Result<Item, Error> {
    let bad = || {
        Error::InvalidQuery(format!(
            "bad size `{value}` in `{whole}`: use e.g. size:>10mb, size:<=4kb, size:1kb..1mb or size:512 (units b kb mb gb tb, 1024-based)"
        ))
    };
    if let Some((a, b)) = value.split_once("..") {
        let min = if a.is_empty() {
            0
        } else {
            parse_size(a).ok_or_else(bad)?
        };
        let max = if b.is_empty() {
            u64::MAX
        } else {
            parse_size(b).ok_or_else(bad)?
        };
        if min > max {
            return Err(Error::InvalidQuery(format!(
                "empty size range `{value}` in `{whole}`: the first bound is larger"
            )));
        }
        return Ok(Item::Size { min, max });
    }
    let (op, rest) = ["<=", ">=", "<", ">", "="]
        .iter()
        .find_map(|op| value.strip_prefix(op).map(|r| (*op, r)))
        .unwrap_or(("=", value));
    let n = parse_size(rest).ok_or_else(bad)?;
    Ok(match op {
        "<" => Item::Size {
            min: 0,
            max: n.checked_sub(1).ok_or_else(bad)?,
        },
        "<=" => Item::Size { min: 0, max: n },
        ">" => Item::Size {
            min: n.saturating_add(1),
            max: u64::MAX,
        },
        ">=" => Item::Size {
            min: n,
            max: u64::MAX,
        },
        _ => Item::Size { min: n, max: n },
    })
}

/// The span [start, end) of one date word, in the local time zone.
fn date_span(word: &str, now: &jiff::Zoned) -> Option<(jiff::Zoned, jiff::Zoned)> {
    use jiff::ToSpan;
    let tz = now.time_zone().clone();
    let day_start = |d: jiff::civil::Date| d.to_zoned(tz.clone()).ok();
    let today = now.date();
    let w = word.to_ascii_lowercase();
    let (start, end) = match w.as_str() {
        "today" => (today, today.checked_add(1.day()).ok()?),
        "yesterday" => (today.checked_sub(1.day()).ok()?, today),
        "thisweek" | "lastweek" => {
            let monday = today
                .checked_sub((today.weekday().to_monday_zero_offset() as i64).days())
                .ok()?;
            let start = if w == "thisweek" {
                monday
            } else {
                monday.checked_sub(1.week()).ok()?
            };
            (start, start.checked_add(1.week()).ok()?)
        }
        "thismonth" | "lastmonth" => {
            let first = today.first_of_month();
            let start = if w == "thismonth" {
                first
            } else {
                first.checked_sub(1.month()).ok()?
            };
            (start, start.checked_add(1.month()).ok()?)
        }
        "thisyear" | "lastyear" => {
            let first = today.first_of_year();
            let start = if w == "thisyear" {
                first
            } else {
                first.checked_sub(1.year()).ok()?
            };
            (start, start.checked_add(1.year()).ok()?)
        }
        _ => {
            let parts: Vec<&str> = w.split('-').collect();
            let num = |s: &str, len: usize| {
                (s.len() == len && s.chars().all(|c| c.is_ascii_digit()))
                    .then(|| s.parse::<i16>().ok())
                    .flatten()
            };
            match parts.as_slice() {
                [y] => {
                    let start = jiff::civil::Date::new(num(y, 4)?, 1, 1).ok()?;
                    (start, start.checked_add(1.year()).ok()?)
                }
                [y, m] => {
                    let start = jiff::civil::Date::new(num(y, 4)?, num(m, 2)? as i8, 1).ok()?;
                    (start, start.checked_add(1.month()).ok()?)
                }
                [y, m, d] => {
                    let start =
                        jiff::civil::Date::new(num(y, 4)?, num(m, 2)? as i8, num(d, 2)? as i8)
                            .ok()?;
                    (start, start.checked_add(1.day()).ok()?)
                }
                _ => return None,
            }
        }
    };
    Some((day_start(start)?, day_start(end)?))
}

fn ns(z: &jiff::Zoned) -> i64 {
    z.timestamp()
        .as_nanosecond()
        .clamp(i64::MIN as i128, i64::MAX as i128) as i64
}

pub(crate) fn parse_date_filter(
    value: &str,
    whole: &str,
    now: &jiff::Zoned,
) -> Result<Item, Error> {
    let bad = || {
        Error::InvalidQuery(format!(
            "bad date `{value}` in `{whole}`: use today, yesterday, thisweek, lastweek, thismonth, lastmonth, thisyear, lastyear, 2025, 2025-03, 2025-03-14, a range 2025-01..2025-03, or >2025-06-01"
        ))
    };
    if let Some((a, b)) = value.split_once("..") {
        let from = if a.is_empty() {
            i64::MIN
        } else {
            ns(&date_span(a, now).ok_or_else(bad)?.0)
        };
        let to = if b.is_empty() {
            i64::MAX
        } else {
            ns(&date_span(b, now).ok_or_else(bad)?.1)
        };
        if from >= to {
            return Err(Error::InvalidQuery(format!(
                "empty date range `{value}` in `{whole}`: the first date is later"
            )));
        }
        return Ok(Item::Modified { from, to });
    }
    let (op, rest) = ["<=", ">=", "<", ">", "="]
        .iter()
        .find_map(|op| value.strip_prefix(op).map(|r| (*op, r)))
        .unwrap_or(("=", value));
    let (start, end) = date_span(rest, now).ok_or_else(bad)?;
    let (start, end) = (ns(&start), ns(&end));
    Ok(match op {
        "<" => Item::Modified {
            from: i64::MIN,
            to: start,
        },
        "<=" => Item::Modified {
            from: i64::MIN,
            to: end,
        },
        ">" => Item::Modified {
            from: end,
            to: i64::MAX,
        },
        ">=" => Item::Modified {
            from: start,
            to: i64::MAX,
        },
        _ => Item::Modified {
            from: start,
            to: end,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn now() -> jiff::Zoned {
        "2025-06-18T12:00:00[UTC]".parse().unwrap()
    }

    fn parse(q: &str) -> Result<Query, Error> {
        Query::parse_at(q, &now())
    }

    #[test]
    fn negations_are_counted_not_nested() {
        // 10,000 `!`s once overflowed the daemon's stack.
        let odd = format!("{}a", "!".repeat(10_001));
        let q = parse(&odd).unwrap();
        assert!(
            matches!(&q.groups[0][0], Item::Not(i) if matches!(&**i, Item::Term(t) if t == "a"))
        );
        let even = format!("{}a", "!".repeat(10_000));
        let q = parse(&even).unwrap();
        assert!(matches!(&q.groups[0][0], Item::Term(t) if t == "a"));
        // A quoted `!` is text.
        let q = parse("!\"!x\"").unwrap();
        assert!(
            matches!(&q.groups[0][0], Item::Not(i) if matches!(&**i, Item::Term(t) if t == "!x"))
        );
        assert!(parse("!!!").is_err());
    }

    #[test]
    fn every_input_is_bounded_and_the_error_names_the_limit() {
        let err = |q: &str| parse(q).unwrap_err().to_string();
        let long = "a".repeat(MAX_QUERY_BYTES + 1);
        assert!(err(&long).contains(&format!("at most {MAX_QUERY_BYTES}")));
        let term = "b".repeat(MAX_TERM_BYTES + 1);
        assert!(err(&term).contains(&format!("at most {MAX_TERM_BYTES}")));
        let terms = vec!["x"; MAX_ITEMS + 1].join(" ");
        assert!(err(&terms).contains(&format!("too many terms ({})", MAX_ITEMS + 1)));
        let alts = vec!["x"; MAX_ITEMS + 1].join("|");
        assert!(err(&alts).contains("too many terms"));
        let wild = "*a".repeat(MAX_WILDCARDS + 1);
        assert!(err(&wild).contains(&format!("at most {MAX_WILDCARDS}")));
        assert!(parse(&"*a".repeat(MAX_WILDCARDS)).is_ok());
        // The regex crate's own limits: nesting and compiled size.
        let nested = format!("regex:{}a{}", "(".repeat(1000), ")".repeat(1000));
        assert!(err(&nested).contains("bad regex"));
        assert!(err("regex:a{1000}{1000}").contains("bad regex"));
    }

    #[test]
    fn terms_phrases_alternatives_negation() {
        let q = parse("Tax  2025 \"total due\" invoice|receipt !draft").unwrap();
        assert_eq!(q.groups.len(), 5);
        assert!(matches!(&q.groups[0][0], Item::Term(t) if t == "tax"));
        assert!(matches!(&q.groups[2][0], Item::Term(t) if t == "total due"));
        assert_eq!(q.groups[3].len(), 2);
        assert!(matches!(&q.groups[4][0], Item::Not(_)));
        assert_eq!(q.ranking_terms(), ["tax", "2025", "total due"]);
        // Quotes make filters, | and wildcards literal.
        assert!(
            matches!(&parse("\"ext:pdf\"").unwrap().groups[0][0], Item::Term(t) if t == "ext:pdf")
        );
        assert!(matches!(&parse("\"a|b\"").unwrap().groups[0][0], Item::Term(t) if t == "a|b"));
        assert!(matches!(&parse("\"*\"").unwrap().groups[0][0], Item::Term(t) if t == "*"));
    }

    #[test]
    fn filters() {
        assert!(
            matches!(&parse("ext:.PDF;jpg").unwrap().groups[0][0], Item::Ext(e) if e == &["pdf", "jpg"])
        );
        assert!(matches!(
            parse("size:>10mb").unwrap().groups[0][0],
            Item::Size {
                min: 10485761,
                max: u64::MAX
            }
        ));
        assert!(matches!(
            parse("size:1kb..1mb").unwrap().groups[0][0],
            Item::Size {
                min: 1024,
                max: 1048576
            }
        ));
        assert!(matches!(
            parse("size:<=4096").unwrap().groups[0][0],
            Item::Size { min: 0, max: 4096 }
        ));
        assert!(matches!(
            parse("size:1.5kb").unwrap().groups[0][0],
            Item::Size {
                min: 1536,
                max: 1536
            }
        ));
        let Item::Modified { from, to } = parse("dm:2025").unwrap().groups[0][0] else {
            panic!()
        };
        assert_eq!(to - from, 365 * 86_400 * 1_000_000_000);
        let Item::Modified { from, to } = parse("dm:today").unwrap().groups[0][0] else {
            panic!()
        };
        assert_eq!(
            (from, to - from),
            (1_750_204_800_000_000_000, 86_400_000_000_000)
        );
        let Item::Modified { from, .. } = parse("dm:thisweek").unwrap().groups[0][0] else {
            panic!()
        };
        assert_eq!(from, 1_750_032_000_000_000_000); // Monday 2025-06-16
        assert!(parse("dm:2025-01..2025-03").is_ok());
        assert!(matches!(
            parse("kind:image").unwrap().groups[0][0],
            Item::Kind(KindClass::Image)
        ));
        assert!(
            matches!(&parse("in:/home/me").unwrap().groups[0][0], Item::In(p) if p == std::path::Path::new("/home/me"))
        );
        assert!(
            matches!(&parse("case:README").unwrap().groups[0][0], Item::CaseTerm(t) if t == "README")
        );
        assert!(
            matches!(&parse("*.tar.gz").unwrap().groups[0][0], Item::Wildcard(r) if r.is_match("x.tar.gz") && !r.is_match("x.tar.gz.bak"))
        );
        assert!(
            matches!(&parse("regex:^img_\\d{4}").unwrap().groups[0][0], Item::Regex(r) if r.is_match("IMG_1234.jpg"))
        );
    }

    #[test]
    fn a_regex_keeps_its_bars() {
        let q = parse("regex:\\.(md|txt)$").unwrap();
        assert!(
            matches!(&q.groups[0][..], [Item::Regex(r)] if r.is_match("notes.MD") && !r.is_match("a.rs"))
        );
    }

    proptest::proptest! {
        // No input panics the parser; whatever parses also evaluates.
        #[test]
        fn any_input_parses_or_is_refused(q in "\\PC{0,40}") {
            if let Ok(query) = parse(&q) {
                let s = crate::index::Snapshot::default();
                let _ = s.search(&query, crate::queries::search::Sort::Relevance, 10, false);
            }
        }

        #[test]
        fn filter_shaped_input_never_panics(
            name in "(ext|size|dm|kind|in|path|regex|case|x)",
            value in "[<>=.a-z0-9;:*?|!\\-\\[\\]()^$ ]{0,16}",
        ) {
            let _ = parse(&format!("{name}:{value}"));
            let _ = parse(&format!("!{name}:{value}|tax \"{value}\""));
        }
    }

    #[test]
    fn bad_queries_quote_the_bad_part() {
        let cases = [
            ("size:>abc", "bad size `>abc`"),
            ("\"open phrase", "unclosed quote at `\"open phrase`"),
            ("regex:[", "bad regex `[`"),
            ("foo:bar", "unknown filter `foo:`"),
            ("kind:spaceship", "unknown kind `spaceship`"),
            ("dm:someday", "bad date `someday`"),
            ("in:relative/dir", "absolute"),
            ("a||b", "empty alternative"),
            ("!", "needs something to negate"),
            ("ext:", "needs a value"),
            ("size:10mb..1kb", "empty size range"),
            ("", "empty query"),
        ];
        for (q, want) in cases {
            let err = parse(q).unwrap_err().to_string();
            assert!(err.contains(want), "{q:?}: {err}");
            assert_eq!(err.lines().count(), 1, "{q:?}: {err}");
        }
    }

    #[test]
    fn kinds_by_extension_and_mime() {
        assert_eq!(kind_of("a.JPG", false), Some(KindClass::Image));
        assert_eq!(kind_of("a.flac", false), Some(KindClass::Audio));
        assert_eq!(kind_of("a.mkv", false), Some(KindClass::Video));
        assert_eq!(kind_of("a.tar.gz", false), Some(KindClass::Archive));
        assert_eq!(kind_of("a.docx", false), Some(KindClass::Document));
        assert_eq!(kind_of("main.rs", false), Some(KindClass::Code));
        assert_eq!(kind_of("notes.md", false), Some(KindClass::Text));
        assert_eq!(kind_of("x", true), Some(KindClass::Folder));
        assert_eq!(kind_of("noext", false), None);
    }
}
