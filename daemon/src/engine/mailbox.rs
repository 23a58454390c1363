//! Hits inside mailboxes (issue 32): the messages of an mbox file that a
//! `content:` search found, from the text the content index keeps (no
//! file is opened for them). Which messages match is decided by
//! [`crate::queries::mailbox`]; this module reads the stored text and
//! makes each message a result of its own.

use super::*;
use crate::queries::search::Found;
use crate::store::content;

impl Engine {
    /// The messages of mailbox `f` holding every word of `words`, each
    /// with its snippet when `snippets` (empty otherwise); none when the
    /// index keeps no text for it.
    pub(super) fn messages_of(
        &self,
        f: &Found,
        words: &[&str],
        snippets: bool,
    ) -> Vec<(super::read::Inside, String)> {
        let text = match self.store.read(|c| content::text(c, i64::from(f.id))) {
            Ok(Some(t)) => t.text,
            Ok(None) => return Vec::new(),
            Err(e) => {
                tracing::warn!(id = f.id, "reading a mailbox's stored text failed: {e}");
                return Vec::new();
            }
        };
        crate::queries::mailbox::matching(&text, words)
            .into_iter()
            .map(|hit| {
                let snippet = if snippets {
                    crate::queries::snippet::snippet(
                        hit.text,
                        words,
                        crate::queries::snippet::WIDTH,
                    )
                    .unwrap_or_default()
                } else {
                    String::new()
                };
                let inside = super::read::Inside {
                    container: f.path.clone(),
                    name: hit.subject,
                    index: hit.index,
                };
                (inside, snippet)
            })
            .collect()
    }
}
