//! Bookmarks and tags (migration 0007): the user's own labels on entries,
//! kept by entry id so that they follow their entry through renames and
//! moves and leave with it (a trigger on `entries`). Writes go through the
//! single writer ([`super::Op::Labels`]); this module holds the SQL, the
//! writer's half ([`apply`]) and the reads.
//!
//! The store takes tags already folded (`key`): folding is the name
//! index's business, a layer up.

use rusqlite::{Connection, OptionalExtension, params};

use crate::Error;

use super::unix_now;

/// Whose label a tag read from the file system is: the file's own, for
/// everyone who may see the file.
pub const FILE_UID: i64 = -1;

/// Where a tag comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TagSource {
    /// Set through the daemon (fsctl, gRPC, MCP).
    User = 0,
    /// Read from the file system (`user.xdg.tags`).
    Xattr = 1,
}

impl TagSource {
    fn of(v: i64) -> TagSource {
        if v == 1 {
            TagSource::Xattr
        } else {
            TagSource::User
        }
    }
}

/// A tag as written, with its folded key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TagName {
    pub name: String,
    pub key: String,
}

/// One tag on one entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TagRow {
    pub entry_id: i64,
    pub name: String,
    pub key: String,
    pub source: TagSource,
}

/// A tag and how many entries carry it (for one user, with the files' own).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TagCount {
    pub name: String,
    pub source: TagSource,
    pub entries: Vec<i64>,
}

/// One bookmark.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BookmarkRow {
    pub name: String,
    pub entry_id: i64,
    pub added_at: i64,
}

/// A change to the labels, applied by the writer in its transaction.
#[derive(Debug)]
pub enum Edit {
    /// Adds tags to an entry (a tag it has already stays as it is).
    AddTags {
        entry_id: i64,
        uid: i64,
        tags: Vec<TagName>,
    },
    /// Removes tags (by key) from an entry.
    RemoveTags {
        entry_id: i64,
        uid: i64,
        keys: Vec<String>,
    },
    /// The entry's tags from the file system are now exactly `tags`.
    SetFileTags { entry_id: i64, tags: Vec<TagName> },
    /// Adds a bookmark; refused when the name is taken or the entry has
    /// one already.
    AddBookmark {
        uid: i64,
        name: String,
        entry_id: i64,
    },
    /// Removes the bookmark of this name, else the one on this entry.
    RemoveBookmark {
        uid: i64,
        name: String,
        entry_id: Option<i64>,
    },
}

/// What an [`Edit`] did, or why it was refused (nothing written).
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Rows added or removed.
    Changed(usize),
    /// The entry left the index before the edit was applied.
    Gone,
    /// A bookmark of that name exists already, on this entry.
    NameTaken(i64),
    /// The entry has a bookmark already, under this name.
    Bookmarked(String),
    /// No bookmark of that name or on that entry.
    NoBookmark,
}

fn exists(tx: &Connection, entry_id: i64) -> Result<bool, Error> {
    Ok(tx
        .prepare_cached("SELECT 1 FROM entries WHERE id=?1")?
        .query_row([entry_id], |_| Ok(()))
        .optional()?
        .is_some())
}

/// Applies one edit (the writer's half).
pub(super) fn apply(tx: &Connection, edit: Edit) -> Result<Outcome, Error> {
    let now = unix_now();
    match edit {
        Edit::AddTags {
            entry_id,
            uid,
            tags,
        } => {
            if !exists(tx, entry_id)? {
                return Ok(Outcome::Gone);
            }
            let mut put = tx.prepare_cached(
                "INSERT OR IGNORE INTO tags (entry_id, uid, key, name, source, added_at) VALUES (?1, ?2, ?3, ?4, 0, ?5)",
            )?;
            let mut n = 0;
            for t in tags {
                n += put.execute(params![entry_id, uid, t.key, t.name, now])?;
            }
            Ok(Outcome::Changed(n))
        }
        Edit::RemoveTags {
            entry_id,
            uid,
            keys,
        } => {
            let mut del =
                tx.prepare_cached("DELETE FROM tags WHERE entry_id=?1 AND uid=?2 AND key=?3")?;
            let mut n = 0;
            for k in keys {
                n += del.execute(params![entry_id, uid, k])?;
            }
            Ok(Outcome::Changed(n))
        }
        Edit::SetFileTags { entry_id, tags } => {
            if !exists(tx, entry_id)? {
                return Ok(Outcome::Gone);
            }
            let mut n = tx.execute(
                "DELETE FROM tags WHERE entry_id=?1 AND uid=?2",
                params![entry_id, FILE_UID],
            )?;
            let mut put = tx.prepare_cached(
                "INSERT OR IGNORE INTO tags (entry_id, uid, key, name, source, added_at) VALUES (?1, ?2, ?3, ?4, 1, ?5)",
            )?;
            for t in tags {
                n += put.execute(params![entry_id, FILE_UID, t.key, t.name, now])?;
            }
            Ok(Outcome::Changed(n))
        }
        Edit::AddBookmark {
            uid,
            name,
            entry_id,
        } => {
            if !exists(tx, entry_id)? {
                return Ok(Outcome::Gone);
            }
            if let Some(on) = tx
                .query_row(
                    "SELECT entry_id FROM bookmarks WHERE uid=?1 AND name=?2",
                    params![uid, name],
                    |r| r.get(0),
                )
                .optional()?
            {
                return Ok(Outcome::NameTaken(on));
            }
            if let Some(named) = tx
                .query_row(
                    "SELECT name FROM bookmarks WHERE uid=?1 AND entry_id=?2",
                    params![uid, entry_id],
                    |r| r.get(0),
                )
                .optional()?
            {
                return Ok(Outcome::Bookmarked(named));
            }
            tx.execute(
                "INSERT INTO bookmarks (uid, name, entry_id, added_at) VALUES (?1, ?2, ?3, ?4)",
                params![uid, name, entry_id, now],
            )?;
            Ok(Outcome::Changed(1))
        }
        Edit::RemoveBookmark {
            uid,
            name,
            entry_id,
        } => {
            let mut n = tx.execute(
                "DELETE FROM bookmarks WHERE uid=?1 AND name=?2",
                params![uid, name],
            )?;
            if n == 0
                && let Some(id) = entry_id
            {
                n = tx.execute(
                    "DELETE FROM bookmarks WHERE uid=?1 AND entry_id=?2",
                    params![uid, id],
                )?;
            }
            Ok(if n == 0 {
                Outcome::NoBookmark
            } else {
                Outcome::Changed(n)
            })
        }
    }
}

/// The tags on one entry that `uid` sees (its own and the file's), by
/// name.
pub fn of_entry(conn: &Connection, entry_id: i64, uid: i64) -> Result<Vec<TagRow>, Error> {
    let mut stmt = conn.prepare_cached(
        "SELECT entry_id, name, key, source FROM tags WHERE entry_id=?1 AND uid IN (?2, ?3) ORDER BY key, source",
    )?;
    let rows = stmt.query_map(params![entry_id, uid, FILE_UID], |r| {
        Ok(TagRow {
            entry_id: r.get(0)?,
            name: r.get(1)?,
            key: r.get(2)?,
            source: TagSource::of(r.get(3)?),
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// The entries carrying the tag `key` for `uid` (its own and the files').
pub fn entries_with(conn: &Connection, key: &str, uid: i64) -> Result<Vec<i64>, Error> {
    let mut stmt =
        conn.prepare_cached("SELECT DISTINCT entry_id FROM tags WHERE key=?1 AND uid IN (?2, ?3)")?;
    let rows = stmt.query_map(params![key, uid, FILE_UID], |r| r.get(0))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Every tag `uid` sees, with the entries carrying it, per source; by key.
pub fn counts(conn: &Connection, uid: i64) -> Result<Vec<TagCount>, Error> {
    let mut stmt = conn.prepare_cached(
        // The bare `name` comes from the row of MIN(added_at): the tag as
        // first written.
        "SELECT key, source, name, MIN(added_at), group_concat(entry_id) FROM tags WHERE uid IN (?1, ?2)
         GROUP BY key, source ORDER BY key, source",
    )?;
    let rows = stmt.query_map(params![uid, FILE_UID], |r| {
        let ids: String = r.get(4)?;
        Ok(TagCount {
            name: r.get(2)?,
            source: TagSource::of(r.get(1)?),
            entries: ids.split(',').filter_map(|s| s.parse().ok()).collect(),
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// `uid`'s bookmarks, by name.
pub fn bookmarks(conn: &Connection, uid: i64) -> Result<Vec<BookmarkRow>, Error> {
    let mut stmt = conn.prepare_cached(
        "SELECT name, entry_id, added_at FROM bookmarks WHERE uid=?1 ORDER BY name",
    )?;
    let rows = stmt.query_map([uid], |r| {
        Ok(BookmarkRow {
            name: r.get(0)?,
            entry_id: r.get(1)?,
            added_at: r.get(2)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Every tag read from the file system, as (entry, key), by entry and key.
pub fn file_tag_keys(conn: &Connection) -> Result<Vec<(i64, String)>, Error> {
    let mut stmt = conn.prepare_cached(
        "SELECT entry_id, key FROM tags WHERE uid=?1 AND source=1 ORDER BY entry_id, key",
    )?;
    let rows = stmt.query_map([FILE_UID], |r| Ok((r.get(0)?, r.get(1)?)))?;
    Ok(rows.collect::<Result<_, _>>()?)
}
