//! Hits inside mailboxes (issue 32): the messages of an mbox file that a
//! `content:` search found, from the text the content index keeps (no
//! file is opened for them), and a Maildir message found the same way.
//! Which messages match is decided by [`crate::queries::mailbox`]; this
//! module reads the stored text and makes each message a result of its
//! own, shown as `mailbox/<subject>` (for a Maildir, the folder holding
//! `cur/` and `new/`).

use super::*;
use crate::queries::search::Found;
use crate::store::content;

/// True for an mbox file, a Maildir message (a message-named file in a
/// `cur/` or `new/` folder), or an archive (its members are shown the
/// same way: `archive.zip/inner/path`); or maybe a file of no known
/// extension, which is a mailbox if it was read as one ([`Engine::messages_of`]
/// tells).
pub(super) fn is_mail_store(f: &Found) -> bool {
    matches!(
        fsindex_extract::kind_for_name(&f.name),
        Some(
            fsindex_extract::Kind::Mbox
                | fsindex_extract::Kind::Archive
                | fsindex_extract::Kind::MaybeText
        )
    ) || maildir_of(f).is_some()
}

/// The Maildir folder of a Maildir message's path.
fn maildir_of(f: &Found) -> Option<&[u8]> {
    use crate::platform::bytes;
    if !fsindex_extract::kind::is_maildir_message(&f.name) {
        return None;
    }
    let sub = bytes::path(&f.path).parent()?;
    let folder = sub.parent()?;
    matches!(sub.file_name()?.as_encoded_bytes(), b"cur" | b"new").then(|| bytes::of(folder))
}

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
        // A file of no known extension is a mailbox only if it was read as
        // one (Thunderbird's `Inbox`): asked of its state row, without
        // reading its text.
        if fsindex_extract::kind_for_name(&f.name) == Some(fsindex_extract::Kind::MaybeText) {
            let mbox = fsindex_extract::Kind::Mbox.extractor();
            match self.store.read(|c| content::extractor(c, i64::from(f.id))) {
                Ok(Some(e)) if e == mbox => {}
                _ => return Vec::new(),
            }
        }
        let (text, lang) = match self.store.read(|c| content::text(c, i64::from(f.id))) {
            Ok(Some(t)) => (t.text, t.lang),
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
                        &lang,
                    )
                    .unwrap_or_default()
                } else {
                    String::new()
                };
                let inside = match maildir_of(f) {
                    Some(folder) => super::read::Inside {
                        container: folder.to_vec(),
                        name: hit.subject,
                        index: 0,
                        file: Some(f.path.clone()),
                    },
                    None => super::read::Inside {
                        container: f.path.clone(),
                        name: hit.subject,
                        // An archive member is named by its path, not a position.
                        index: if fsindex_extract::kind_for_name(&f.name)
                            == Some(fsindex_extract::Kind::Archive)
                        {
                            0
                        } else {
                            hit.index
                        },
                        file: None,
                    },
                };
                (inside, snippet)
            })
            .collect()
    }
}
