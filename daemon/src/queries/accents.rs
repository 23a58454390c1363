//! `accents:ignore`: a query whose names and terms are compared without
//! their accents, the way Everything's "match diacritics" off does, so that
//! `cafe` finds `café`, `Café` and `cafe\u{301}` (the folding is
//! [`strip_accents`]; plocate's default, and ours, is exact).
//!
//! It is a switch on the whole query rather than a per-term modifier: every
//! client sets it by adding one word (`fsctl search --ignore-accents`, the
//! fsgui toggle, an MCP agent writing the query), and no request message
//! changes. Here: taking the switch out of the query's tokens, and making
//! the terms bare. The index side is [`crate::index::Snapshot`]'s bare
//! marking (`mark_bare_term`), over the trigram filter that holds every
//! accented name's bare trigrams too: no second copy of the names.

use crate::Error;
use crate::index::fold::strip_accents;
use crate::queries::query::{Item, Query, Token};

/// Takes `accents:ignore` / `accents:match` (unquoted, whole tokens) out of
/// the query's tokens; says whether accents are ignored (the last one
/// wins). Any other `accents:` value is refused.
pub(super) fn take_switch(tokens: Vec<Token>) -> Result<(Vec<Token>, bool), Error> {
    let mut ignore = false;
    let mut rest = Vec::with_capacity(tokens.len());
    for t in tokens {
        let head = t.text.get(..8).map(str::to_ascii_lowercase);
        if head.as_deref() != Some("accents:") || t.quoted[..8].iter().any(|q| *q) {
            rest.push(t);
            continue;
        }
        match t.text[8..].to_ascii_lowercase().as_str() {
            "ignore" | "off" | "no" => ignore = true,
            "match" | "on" | "yes" => ignore = false,
            _ => {
                return Err(Error::InvalidQuery(format!(
                    "`{}`: accents: takes `ignore` (cafe finds café) or `match` (the default)",
                    t.text
                )));
            }
        }
    }
    Ok((rest, ignore))
}

/// Makes every plain term (and `path:`) of `query` bare.
pub(super) fn strip_terms(query: &mut Query) {
    let stripped: Result<(), Error> = query.try_each_item(|item| {
        if let Item::Term(t) = item
            && let std::borrow::Cow::Owned(bare) = strip_accents(t)
        {
            *t = bare;
        }
        Ok(())
    });
    debug_assert!(stripped.is_ok(), "stripping never fails");
}

#[cfg(test)]
mod tests {
    use crate::queries::query::{Item, Query};

    fn terms(q: &Query) -> Vec<String> {
        q.groups
            .iter()
            .flatten()
            .filter_map(|i| match i {
                Item::Term(t) => Some(t.clone()),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn the_switch_is_taken_out_and_terms_made_bare() {
        let q = Query::parse("Café accents:ignore path:Ærø").unwrap();
        assert!(q.ignore_accents);
        assert_eq!(terms(&q), ["cafe", "aero"]);
        let q = Query::parse("Café").unwrap();
        assert!(!q.ignore_accents);
        assert_eq!(terms(&q), ["café"]);
        // Quoted, it is text to search for.
        let q = Query::parse("\"accents:ignore\"").unwrap();
        assert!(!q.ignore_accents);
        assert_eq!(terms(&q), ["accents:ignore"]);
        let q = Query::parse("ACCENTS:IGNORE accents:match é").unwrap();
        assert!(!q.ignore_accents);
    }

    #[test]
    fn a_bad_value_or_a_lone_switch_is_refused() {
        let e = Query::parse("cafe accents:maybe").unwrap_err().to_string();
        assert!(e.contains("accents:maybe") && e.contains("ignore"), "{e}");
        let e = Query::parse("accents:ignore").unwrap_err().to_string();
        assert!(e.contains("empty query"), "{e}");
    }
}
