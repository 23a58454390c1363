//! The user's labels in the query language (issue 34): `tag:NAME` matches
//! the entries carrying that tag (set with `fsctl tag add`, or read from the
//! file's `user.xdg.tags`). Parsed here (the query parser hands `tag:` over)
//! and resolved by the engine to the set of entries that carry the tag, as
//! it resolves the media filters; a tag names the entry itself, not what
//! lies below a tagged folder.
//!
//! What makes a tag name valid is decided here too, once, for the parser
//! and for `fsctl tag add` alike ([`tag_name`]).

use std::collections::HashSet;
use std::sync::Arc;

use crate::Error;
use crate::index::fold::fold_str;
use crate::queries::query::{Item, Query};
use crate::store::labels::TagName;

/// At most this many bytes in a tag.
pub const MAX_TAG_BYTES: usize = 255;

/// A tag as the user wrote it, checked and folded: surrounding spaces
/// trimmed, not empty, no commas (`user.xdg.tags` separates tags with
/// them), no control characters, at most [`MAX_TAG_BYTES`].
pub fn tag_name(raw: &str) -> Result<TagName, Error> {
    let name = raw.trim();
    let bad = |why: &str| Error::InvalidArgument(format!("tag `{raw}`: {why}"));
    if name.is_empty() {
        return Err(bad("a tag needs some text"));
    }
    if name.contains(',') {
        return Err(bad(
            "a tag cannot hold a comma (user.xdg.tags separates tags with commas)",
        ));
    }
    if name.chars().any(char::is_control) {
        return Err(bad("a tag cannot hold control characters"));
    }
    if name.len() > MAX_TAG_BYTES {
        return Err(bad(&format!("longer than {MAX_TAG_BYTES} bytes")));
    }
    Ok(TagName {
        name: name.to_owned(),
        key: fold_str(name).into_owned(),
    })
}

/// Parses the value of `tag:` (`whole` is the item, for the message).
pub fn parse(value: &str, whole: &str) -> Result<Item, Error> {
    if value.contains(',') {
        return Err(Error::InvalidQuery(format!(
            "`{whole}`: a tag holds no comma; for either of two tags write tag:a|tag:b"
        )));
    }
    match tag_name(value) {
        Ok(t) => Ok(Item::Tag(t.key)),
        Err(_) if value.trim().is_empty() => Err(Error::InvalidQuery(format!(
            "`{whole}`: tag: needs a tag, e.g. tag:receipts"
        ))),
        Err(e) => Err(Error::InvalidQuery(format!("`{whole}`: {e}"))),
    }
}

impl Query {
    /// True when some item asks for a tag.
    pub fn has_tags(&self) -> bool {
        self.any_item(|i| matches!(i, Item::Tag(_)))
    }

    /// Replaces `tag:` items with the entries carrying the tag, using
    /// `find` (folded tag -> entry ids).
    pub fn resolve_tags(
        &mut self,
        mut find: impl FnMut(&str) -> Result<HashSet<u32>, Error>,
    ) -> Result<(), Error> {
        self.try_each_item(|item| {
            if let Item::Tag(key) = item {
                *item = Item::TagHits(Arc::new(find(key)?));
            }
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_fold_and_refuse_what_xattrs_cannot_hold() {
        let t = tag_name("  Receipts ").unwrap();
        assert_eq!((t.name.as_str(), t.key.as_str()), ("Receipts", "receipts"));
        assert_eq!(tag_name("ÄRGER").unwrap().key, "ärger");
        for bad in ["", "   ", "a,b", "a\nb", &"x".repeat(256)] {
            assert!(tag_name(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn malformed_tag_filters_point_at_the_item() {
        for q in ["tag:", "tag:a,b", "report tag:\"\""] {
            let e = Query::parse(q).unwrap_err();
            assert!(matches!(e, Error::InvalidQuery(_)), "{q}: {e:?}");
            assert!(e.to_string().contains("tag:"), "{q}: {e}");
        }
        let q = Query::parse("tag:Receipts !tag:old|x").unwrap();
        assert!(q.has_tags());
        assert!(matches!(&q.groups[0][0], Item::Tag(k) if k == "receipts"));
    }
}
