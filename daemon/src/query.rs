//! Parsing a search query into terms.
//!
//! A query is a list of terms, all of which must match. Terms are separated
//! by whitespace; `"double quotes"` keep a phrase with spaces as one term.
//! Every term is folded (NFC + full case folding) here, once.

use crate::Error;
use crate::fold::fold_str;

/// At most this many terms (the matcher keeps one bit per term).
pub const MAX_TERMS: usize = 32;

/// A parsed query.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Query {
    /// Folded terms, in the order given.
    pub terms: Vec<String>,
}

impl Query {
    pub fn parse(input: &str) -> Result<Query, Error> {
        let mut terms = Vec::new();
        let mut chars = input.char_indices().peekable();
        while let Some(&(start, c)) = chars.peek() {
            if c.is_whitespace() {
                chars.next();
                continue;
            }
            let mut term = String::new();
            let mut quote_start = None;
            while let Some(&(i, c)) = chars.peek() {
                if quote_start.is_none() && c.is_whitespace() {
                    break;
                }
                chars.next();
                if c == '"' {
                    quote_start = match quote_start {
                        None => Some(i),
                        Some(_) => None,
                    };
                } else {
                    term.push(c);
                }
            }
            if let Some(q) = quote_start {
                return Err(Error::InvalidQuery(format!(
                    "unclosed quote at `{}`: close the phrase with another \"",
                    &input[q..]
                )));
            }
            if term.is_empty() {
                return Err(Error::InvalidQuery(format!(
                    "empty phrase `{}`: put text between the quotes",
                    input[start..].split_whitespace().next().unwrap_or("\"\"")
                )));
            }
            terms.push(fold_str(&term).into_owned());
        }
        if terms.is_empty() {
            return Err(Error::InvalidQuery(
                "empty query: give at least one term, e.g. `fsctl search report`".into(),
            ));
        }
        if terms.len() > MAX_TERMS {
            return Err(Error::InvalidQuery(format!(
                "too many terms ({}); at most {MAX_TERMS}",
                terms.len()
            )));
        }
        Ok(Query { terms })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_terms_and_phrases() {
        assert_eq!(Query::parse("Tax  2025").unwrap().terms, ["tax", "2025"]);
        assert_eq!(
            Query::parse("\"total due\" ÄRGER").unwrap().terms,
            ["total due", "ärger"]
        );
        assert_eq!(Query::parse("a\"b c\"d").unwrap().terms, ["ab cd"]);
    }

    #[test]
    fn refuses_bad_queries() {
        for bad in ["", "   ", "\"open", "x \"\""] {
            let err = Query::parse(bad).unwrap_err().to_string();
            assert!(!err.is_empty(), "{bad:?}");
        }
        assert!(
            Query::parse("\"open phrase")
                .unwrap_err()
                .to_string()
                .contains("`\"open phrase`")
        );
    }
}
