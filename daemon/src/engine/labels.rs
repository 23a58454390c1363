//! Bookmarks and tags (issue 34), one call per RPC given the caller's view:
//! a path is resolved to its entry as the caller may name it, the change
//! goes through the single writer, and what is listed is what the caller
//! may see. Labels are kept by entry id (see `store::labels`), so they
//! follow their entry through moves and leave with it.
//!
//! Whose labels: a per-user daemon keeps its own user's; a machine-wide one
//! (`--system`) keeps each calling user's apart (root's, and a TCP caller's,
//! are the daemon's own user's). Tags read from the file system belong to
//! the file and are seen by everyone who sees the file.

use std::collections::HashSet;

use super::read::seen_path;
use super::*;
use crate::store::Kind;
use crate::store::labels::{self, Edit, Outcome, TagSource};

/// How long a label call waits for the watcher to bring in a path that is
/// on disk but not yet in the index (`touch x; fsctl tag add x ...`).
const SYNC_WAIT: Duration = Duration::from_secs(10);

/// At most this many bytes in a bookmark's name.
pub const MAX_BOOKMARK_BYTES: usize = 255;

/// One entry and the tags the caller sees on it.
#[derive(Clone, Debug)]
pub struct Tagged {
    pub path: Vec<u8>,
    pub kind: Kind,
    /// By folded name; a tag both set by the user and read from the file
    /// is listed once per source.
    pub tags: Vec<(String, TagSource)>,
}

/// A tag and how many entries the caller sees carrying it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TagTotal {
    pub name: String,
    pub source: TagSource,
    pub entries: u64,
}

/// A bookmark, with where its entry is now.
#[derive(Clone, Debug)]
pub struct Bookmark {
    pub name: String,
    pub path: Vec<u8>,
    pub kind: Kind,
    pub added_at: i64,
}

/// Whose labels a call reads and writes (see the module doc).
pub fn label_uid(view: &Option<View>) -> i64 {
    match view {
        Some(v) => i64::from(v.caller.uid),
        None => i64::from(crate::platform::process::own_uid()),
    }
}

fn bookmark_name(raw: &str) -> Result<String, Error> {
    let name = raw.trim();
    let bad = |why: &str| Error::InvalidArgument(format!("bookmark name `{raw}`: {why}"));
    if name.is_empty() {
        return Err(bad("a name needs some text"));
    }
    if name.chars().any(char::is_control) {
        return Err(bad("a name cannot hold control characters"));
    }
    if name.len() > MAX_BOOKMARK_BYTES {
        return Err(bad(&format!("longer than {MAX_BOOKMARK_BYTES} bytes")));
    }
    Ok(name.to_owned())
}

impl Engine {
    /// The entry at `path` as the caller may name it. A path on disk that
    /// the index has not caught up with yet is waited for (`--sync`).
    fn labelled_entry(&self, path: &[u8], view: &mut Option<View>) -> Result<(Kind, i64), Error> {
        let p = seen_path(view, path)?;
        let find = || {
            self.store.read(|c| {
                let (_, id) = crate::store::resolve(c, &p)?;
                Ok((crate::store::entries::kind(c, id)?, id))
            })
        };
        match find() {
            Err(Error::NotFound(_)) if crate::platform::fs::lstat(&p).is_ok() => {
                self.sync(SYNC_WAIT)?;
                find()
            }
            found => found,
        }
    }

    /// Sends one edit through the writer and waits for it to be committed.
    fn edit_labels(&self, edit: Edit) -> Result<Outcome, Error> {
        let (tx, rx) = mpsc::channel();
        self.writer.send(vec![Op::Labels { edit, reply: tx }])?;
        rx.recv().map_err(|_| Error::WriterGone)
    }

    /// The entry's tags as the caller sees them.
    fn tagged(&self, path: &[u8], kind: Kind, id: i64, uid: i64) -> Result<Tagged, Error> {
        let rows = self.store.read(|c| labels::of_entry(c, id, uid))?;
        Ok(Tagged {
            path: path.to_vec(),
            kind,
            tags: rows.into_iter().map(|r| (r.name, r.source)).collect(),
        })
    }

    /// Adds and removes the caller's tags on the entry at `path` (TagsAdd,
    /// TagsRemove); answers its tags afterwards.
    pub fn tag(
        &self,
        path: &[u8],
        add: &[String],
        remove: &[String],
        mut view: Option<View>,
    ) -> Result<Tagged, Error> {
        let add = add
            .iter()
            .map(|t| crate::queries::labels::tag_name(t))
            .collect::<Result<Vec<_>, _>>()?;
        let remove = remove
            .iter()
            .map(|t| crate::queries::labels::tag_name(t).map(|t| t.key))
            .collect::<Result<Vec<_>, _>>()?;
        if add.is_empty() && remove.is_empty() {
            return Err(Error::InvalidArgument(
                "give at least one tag, e.g. fsctl tag add PATH receipts".into(),
            ));
        }
        let uid = label_uid(&view);
        let (kind, entry_id) = self.labelled_entry(path, &mut view)?;
        let gone = || Error::NotFound(String::from_utf8_lossy(path).into_owned());
        if !add.is_empty()
            && self.edit_labels(Edit::AddTags {
                entry_id,
                uid,
                tags: add,
            })? == Outcome::Gone
        {
            return Err(gone());
        }
        if !remove.is_empty() {
            self.edit_labels(Edit::RemoveTags {
                entry_id,
                uid,
                keys: remove,
            })?;
        }
        self.tagged(path, kind, entry_id, uid)
    }

    /// The tags on the entry at `path` that the caller sees.
    pub fn tags_of(&self, path: &[u8], mut view: Option<View>) -> Result<Tagged, Error> {
        let uid = label_uid(&view);
        let (kind, id) = self.labelled_entry(path, &mut view)?;
        self.tagged(path, kind, id, uid)
    }

    /// Every tag the caller sees, with how many entries it sees carrying it.
    pub fn tag_totals(&self, mut view: Option<View>) -> Result<Vec<TagTotal>, Error> {
        let uid = label_uid(&view);
        let counts = self.store.read(|c| labels::counts(c, uid))?;
        let snapshot = crate::index::read_loaded(&self.snapshot);
        let mut out = Vec::with_capacity(counts.len());
        for c in counts {
            let entries = match view.as_mut() {
                None => c.entries.len() as u64,
                Some(v) => c
                    .entries
                    .iter()
                    .filter(|&&id| v.sees(&snapshot.path(id as u32)))
                    .count() as u64,
            };
            if entries > 0 {
                out.push(TagTotal {
                    name: c.name,
                    source: c.source,
                    entries,
                });
            }
        }
        Ok(out)
    }

    /// The entries carrying the tag `key` for the caller, for `tag:` (the
    /// search filters what the caller may not see afterwards).
    pub(super) fn tag_hits(&self, key: &str, view: &Option<View>) -> Result<HashSet<u32>, Error> {
        let uid = label_uid(view);
        let ids = self.store.read(|c| labels::entries_with(c, key, uid))?;
        Ok(ids.into_iter().map(|id| id as u32).collect())
    }

    /// Bookmarks the entry at `path` as `name` (the entry's own name when
    /// empty); answers the caller's bookmarks.
    pub fn bookmark_add(
        &self,
        path: &[u8],
        name: &str,
        mut view: Option<View>,
    ) -> Result<Vec<Bookmark>, Error> {
        let uid = label_uid(&view);
        let (_, entry_id) = self.labelled_entry(path, &mut view)?;
        let name = if name.is_empty() {
            let p = crate::platform::bytes::path(path);
            let own = p.file_name().map_or(p.as_os_str(), |n| n);
            bookmark_name(&String::from_utf8_lossy(crate::platform::bytes::of(
                std::path::Path::new(own),
            )))?
        } else {
            bookmark_name(name)?
        };
        match self.edit_labels(Edit::AddBookmark {
            uid,
            name: name.clone(),
            entry_id,
        })? {
            Outcome::Changed(_) => {}
            Outcome::Gone => return Err(Error::NotFound(String::from_utf8_lossy(path).into())),
            Outcome::NameTaken(on) => {
                let at = crate::index::read_loaded(&self.snapshot).path(on as u32);
                return Err(Error::Exists(format!(
                    "a bookmark named `{name}` exists already ({}); give another with --name",
                    String::from_utf8_lossy(&at)
                )));
            }
            Outcome::Bookmarked(named) => {
                return Err(Error::Exists(format!(
                    "{} is bookmarked already, as `{named}`",
                    String::from_utf8_lossy(path)
                )));
            }
            Outcome::NoBookmark => {}
        }
        self.bookmarks(view)
    }

    /// Removes the caller's bookmark named `name`, or else the one on the
    /// entry at `path`; answers the caller's bookmarks.
    pub fn bookmark_remove(
        &self,
        name: &str,
        path: &[u8],
        mut view: Option<View>,
    ) -> Result<Vec<Bookmark>, Error> {
        let uid = label_uid(&view);
        let entry_id = if path.is_empty() {
            None
        } else {
            self.labelled_entry(path, &mut view).ok().map(|(_, id)| id)
        };
        let outcome = self.edit_labels(Edit::RemoveBookmark {
            uid,
            name: name.trim().to_owned(),
            entry_id,
        })?;
        if outcome == Outcome::NoBookmark {
            let at = if path.is_empty() {
                String::new()
            } else {
                format!(" and none at {}", String::from_utf8_lossy(path))
            };
            return Err(Error::Missing(format!(
                "no bookmark named `{}`{at} (fsctl bookmark list shows them)",
                name.trim()
            )));
        }
        self.bookmarks(view)
    }

    /// The caller's bookmarks that it may still see, by name, each with
    /// where its entry is now.
    pub fn bookmarks(&self, mut view: Option<View>) -> Result<Vec<Bookmark>, Error> {
        let uid = label_uid(&view);
        let rows = self.store.read(|c| labels::bookmarks(c, uid))?;
        let snapshot = crate::index::read_loaded(&self.snapshot);
        let mut out = Vec::with_capacity(rows.len());
        for r in rows {
            let Some(kind) = snapshot.entry_kind(r.entry_id as u32) else {
                continue;
            };
            let path = snapshot.path(r.entry_id as u32);
            if let Some(v) = view.as_mut()
                && !v.sees(&path)
            {
                continue;
            }
            out.push(Bookmark {
                name: r.name,
                path,
                kind,
                added_at: r.added_at,
            });
        }
        Ok(out)
    }
}
