//! A query in the fleet's terms: the daemon's own parse ([`Query::parse`],
//! its folding, its `accents:ignore`, its errors) turned into the tests
//! that `fsindex.search` in PostgreSQL (`migrations/fleet/0004_search.sql`)
//! runs on the rows every host ships, so that a fleet search is the union
//! of the hosts' own searches. `fsctl fleet search` gets them from
//! `fsindexd --fleet-query QUERY` (fsctl does not link the daemon crate).
//!
//! The shipped rows hold an entry's folded name, its folder's folded path,
//! its kind, size and mtime: what plain terms, `path:`, wildcards, `ext:`,
//! `size:`, `dm:` and `kind:folder` test; the texts of hosts that ship
//! content, what `content:` tests (as `tsquery`s over the daemon's own
//! tokens and stems, [`crate::store::fleet_text`]). The rest (`regex:`,
//! whose syntax PostgreSQL's differs from; `case:`, `in:`, `kind:` other
//! than folder, media, tags, `@saved` searches) is refused by name, never
//! matched as text or dropped.

use serde_json::{Value, json};

use crate::Error;
use crate::queries::query::{Item, KindClass, Query};

/// `s` as a LIKE pattern matching itself (`\` is the escape).
fn like_literal(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if matches!(c, '%' | '_' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// A wildcard's regex (`^`, then `.*`, `.` or an escaped character per
/// character of the folded pattern, then `$`: see `query::glob`) as a LIKE
/// pattern over the folded name.
fn glob_like(re: &str) -> Option<String> {
    let body = re.strip_prefix('^')?.strip_suffix('$')?;
    let mut out = String::with_capacity(body.len());
    let mut chars = body.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => out.push_str(&like_literal(chars.next()?.encode_utf8(&mut [0; 4]))),
            '.' if chars.peek() == Some(&'*') => {
                chars.next();
                out.push('%');
            }
            '.' => out.push('_'),
            c => out.push_str(&like_literal(c.encode_utf8(&mut [0; 4]))),
        }
    }
    Some(out)
}

fn refuse(what: &str) -> Error {
    Error::InvalidQuery(format!(
        "{what} is not answered by the fleet: a fleet search takes terms, \"phrases\", !term, a|b, \
         wildcards, path:, ext:, size:, dm:, kind:folder, content: and accents:ignore"
    ))
}

/// `content:VALUE` as `{"content": {"words": TSQUERY, "stems": TSQUERY}}`
/// over the texts hosts with `[fleet] content = true` ship
/// ([`crate::store::fleet_text`]): the same tokens as the content index's,
/// so the same files match.
fn content_test(value: &str) -> Result<Value, Error> {
    let (words, stems) = crate::store::fleet_text::Tokenizer::new()?.query(value)?;
    Ok(json!({ "content": { "words": words, "stems": stems } }))
}

fn clamp(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

fn test(item: &Item, bare: bool) -> Result<Value, Error> {
    Ok(match item {
        Item::Not(inner) => {
            let mut v = test(inner, bare)?;
            let neg = v["neg"].as_bool().unwrap_or(false);
            v["neg"] = json!(!neg);
            v
        }
        Item::Term(t) if bare => json!({ "bare": format!("%{}%", like_literal(t)) }),
        Item::Term(t) => json!({ "path": format!("%{}%", like_literal(t)) }),
        // The name, folded, ends with `.ext` and has something before it.
        Item::Ext(exts) => json!({
            "any": exts
                .iter()
                .map(|e| json!({ "name": format!("_%.{}", like_literal(e)), "nondir": true }))
                .collect::<Vec<_>>()
        }),
        Item::Wildcard(re) => json!({
            "name": glob_like(re.as_str()).ok_or_else(|| refuse("this wildcard"))?
        }),
        Item::Size { min, max } => json!({ "size": [clamp(*min), clamp(*max)] }),
        Item::Modified { from, to } => json!({ "mtime": [from, to] }),
        Item::Kind(KindClass::Folder) => json!({ "folder": true }),
        Item::Kind(_) => return Err(refuse("kind: (but kind:folder)")),
        Item::CaseTerm(_) => return Err(refuse("case:")),
        Item::Regex(_) => return Err(refuse("regex:")),
        Item::In(_) | Item::InEntry(_) => return Err(refuse("in:")),
        Item::Content(value) => content_test(value)?,
        Item::ContentHits(_) => return Err(refuse("content:")),
        Item::Media(_) | Item::MediaHits(_) => return Err(refuse("media metadata")),
        Item::Tag(_) | Item::TagHits(_) => return Err(refuse("tag:")),
    })
}

/// The query's groups as `fsindex.search` takes them: a JSON array, one
/// element per group (all must hold), each `{"any": [test, ...]}` (one
/// must hold). A test is one of `{"path": LIKE}` (the folded path relative
/// to the root), `{"bare": LIKE}` (the same without accents), `{"name":
/// LIKE, "nondir": bool}` (the folded name), `{"size": [min, max]}` (a
/// non-folder), `{"mtime": [from_ns, to_ns)}`, `{"folder": true}`,
/// `{"content": {"words": TSQUERY, "stems": TSQUERY}}` (schema 6) or
/// `{"any": [...]}`, with `"neg": true` where it is negated.
pub fn fleet_terms(input: &str) -> Result<Value, Error> {
    // A saved search lives in one host's daemon: unknown to the fleet,
    // and never searched for as the text `@name`.
    if let Some(name) = super::saved::calls(input)?.first() {
        return Err(refuse(&format!(
            "`@{name}` (a saved search, kept by each host)"
        )));
    }
    let query = Query::parse(input)?;
    let groups = query
        .groups
        .iter()
        .map(|alts| {
            let tests = alts
                .iter()
                .map(|i| test(i, query.ignore_accents))
                .collect::<Result<Vec<_>, _>>()?;
            Ok(json!({ "any": tests }))
        })
        .collect::<Result<Vec<_>, Error>>()?;
    Ok(Value::Array(groups))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wildcards_become_like_patterns() {
        let q = Query::parse("IMG_??.JP*").unwrap();
        let Item::Wildcard(re) = &q.groups[0][0] else {
            panic!("{q:?}")
        };
        assert_eq!(glob_like(re.as_str()).unwrap(), "img\\___.jp%");
    }

    #[test]
    fn content_becomes_tsqueries() {
        let v = fleet_terms("content:Invoices !content:\"Total Due\" content:invo*").unwrap();
        assert_eq!(v[0]["any"][0]["content"]["words"], "'invoices'");
        assert!(
            v[0]["any"][0]["content"]["stems"]
                .as_str()
                .unwrap()
                .contains("'eninvoic'")
        );
        assert_eq!(v[1]["any"][0]["neg"], true);
        assert_eq!(v[1]["any"][0]["content"]["words"], "'total' <-> 'due'");
        assert_eq!(v[1]["any"][0]["content"]["stems"], Value::Null);
        assert_eq!(v[2]["any"][0]["content"]["words"], "'invo':*");
    }

    #[test]
    fn terms_are_folded_and_filters_refused_by_name() {
        let v = fleet_terms("STRASSE !Draft ext:PDF;txt").unwrap();
        assert_eq!(v[0]["any"][0]["path"], "%strasse%");
        assert_eq!(v[1]["any"][0]["neg"], true);
        assert_eq!(v[2]["any"][0]["any"][0]["name"], "_%.pdf");
        let v = fleet_terms("accents:ignore Café").unwrap();
        assert_eq!(v[0]["any"][0]["bare"], "%cafe%");
        for (q, what) in [
            ("regex:^a", "regex:"),
            ("kind:image", "kind:"),
            ("camera:canon", "media"),
        ] {
            let e = fleet_terms(q).unwrap_err().to_string();
            assert!(
                e.contains(what) && e.contains("not answered by the fleet"),
                "{e}"
            );
        }
        assert!(fleet_terms("size:>>1").is_err());
        let e = fleet_terms("@taxes 2025").unwrap_err().to_string();
        assert!(
            e.contains("@taxes") && e.contains("not answered by the fleet"),
            "{e}"
        );
        // Quoted, or not a name, `@` is text.
        assert_eq!(
            fleet_terms("\"@home\"").unwrap()[0]["any"][0]["path"],
            "%@home%"
        );
    }
}
