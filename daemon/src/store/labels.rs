//! Bookmarks and tags (migration 0007): the user's own labels on entries,
//! kept by entry id so that they follow their entry through renames and
//! moves and leave with it. Writes go through the single writer
//! ([`super::Op::Labels`]); this module holds the SQL, the writer's half
//! ([`apply`], and [`leaving`] / [`arrived`], which the writer calls as
//! entries are deleted and inserted) and the reads.
//!
//! The store takes tags already folded (`key`): folding is the name
//! index's business, a layer up.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};

use rusqlite::{Connection, OptionalExtension, params};

use crate::Error;

use super::model::EntryRow;
use super::unix_now;

/// How long labels wait in `labels_limbo` for their file to come back.
pub const LIMBO_SECS: i64 = 600;

/// What the writer thread knows of the labels, so that entries without any
/// (nearly all) cost nothing as they come and go: the entries that carry
/// some, and until when the limbo may hold any.
struct Keeper {
    ids: HashSet<i64>,
    limbo_until: i64,
    /// While some entry carries labels: the entries inserted lately, by
    /// (device, inode, kind, mtime), so that a file whose new place was
    /// written before its old one left (a rescan that reaches the
    /// destination first: the poll backend, a move made while stopped)
    /// hands its labels straight over. Bounded: cleared past
    /// [`RECENT_CAP`].
    recent: HashMap<(i64, i64, u8, i64), i64>,
}

/// See [`Keeper::recent`].
const RECENT_CAP: usize = 1 << 16;

thread_local! {
    /// The writer thread's [`Keeper`], loaded at its first use; dropped
    /// when a batch fails (its transaction rolled back what it noted).
    static KEEPER: RefCell<Option<Keeper>> = const { RefCell::new(None) };
}

fn with_keeper<T>(
    tx: &Connection,
    f: impl FnOnce(&mut Keeper) -> Result<T, Error>,
) -> Result<T, Error> {
    KEEPER.with(|k| {
        let mut k = k.borrow_mut();
        if k.is_none() {
            // Labels of entries gone while no keeper watched (none should
            // be) go now, before their ids could be handed out again.
            tx.execute_batch(
                "DELETE FROM tags WHERE entry_id NOT IN (SELECT id FROM entries);
                 DELETE FROM bookmarks WHERE entry_id NOT IN (SELECT id FROM entries);",
            )?;
            let ids = tx
                .prepare("SELECT entry_id FROM tags UNION SELECT entry_id FROM bookmarks")?
                .query_map([], |r| r.get(0))?
                .collect::<Result<HashSet<i64>, _>>()?;
            let last: Option<i64> =
                tx.query_row("SELECT MAX(gone_at) FROM labels_limbo", [], |r| r.get(0))?;
            *k = Some(Keeper {
                ids,
                limbo_until: last.map_or(0, |t| t + LIMBO_SECS),
                recent: HashMap::new(),
            });
        }
        f(k.as_mut().expect("loaded above"))
    })
}

/// Forgets what the writer thread knew (its batch was rolled back).
pub(super) fn forget() {
    KEEPER.with(|k| *k.borrow_mut() = None);
}

/// Entries about to be deleted (their rows still there): the labels of
/// those that carry some move to the limbo.
pub(super) fn leaving(tx: &Connection, ids: &[i64]) -> Result<(), Error> {
    with_keeper(tx, |k| {
        if k.ids.is_empty() {
            return Ok(());
        }
        let now = unix_now();
        for id in ids {
            if !k.ids.remove(id) {
                continue;
            }
            // The same file written at its new place already: its labels
            // go there.
            let key: Option<(i64, i64, u8, i64)> = tx
                .prepare_cached("SELECT dev, ino, kind, mtime_ns FROM entries WHERE id = ?1")?
                .query_row([id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
                .optional()?;
            if let Some(to) = key.and_then(|key| k.recent.get(&key).copied())
                && to != *id
            {
                tx.prepare_cached("UPDATE OR IGNORE tags SET entry_id = ?2 WHERE entry_id = ?1")?
                    .execute([id, &to])?;
                tx.prepare_cached(
                    "UPDATE OR IGNORE bookmarks SET entry_id = ?2 WHERE entry_id = ?1",
                )?
                .execute([id, &to])?;
                tx.prepare_cached("DELETE FROM tags WHERE entry_id = ?1")?
                    .execute([id])?;
                tx.prepare_cached("DELETE FROM bookmarks WHERE entry_id = ?1")?
                    .execute([id])?;
                k.ids.insert(to);
                continue;
            }
            if k.limbo_until < now {
                tx.execute(
                    "DELETE FROM labels_limbo WHERE gone_at < ?1",
                    [now - LIMBO_SECS],
                )?;
            }
            tx.prepare_cached(
                "INSERT INTO labels_limbo
                 SELECT e.dev, e.ino, e.kind, e.mtime_ns, ?2, 0, t.uid, t.key, t.name, t.source, t.added_at
                 FROM tags t JOIN entries e ON e.id = t.entry_id WHERE t.entry_id = ?1",
            )?
            .execute(params![id, now])?;
            tx.prepare_cached(
                "INSERT INTO labels_limbo
                 SELECT e.dev, e.ino, e.kind, e.mtime_ns, ?2, 1, b.uid, '', b.name, 0, b.added_at
                 FROM bookmarks b JOIN entries e ON e.id = b.entry_id WHERE b.entry_id = ?1",
            )?
            .execute(params![id, now])?;
            tx.prepare_cached("DELETE FROM tags WHERE entry_id = ?1")?
                .execute([id])?;
            tx.prepare_cached("DELETE FROM bookmarks WHERE entry_id = ?1")?
                .execute([id])?;
            k.limbo_until = now + LIMBO_SECS;
        }
        Ok(())
    })
}

/// An entry just inserted: labels waiting in the limbo for the same file
/// (device, inode, kind, mtime) go to it.
pub(super) fn arrived(tx: &Connection, row: &EntryRow) -> Result<(), Error> {
    with_keeper(tx, |k| {
        if !k.ids.is_empty() {
            if k.recent.len() >= RECENT_CAP {
                k.recent.clear();
            }
            k.recent.insert(
                (row.dev as i64, row.ino as i64, row.kind as u8, row.mtime_ns),
                row.id,
            );
        }
        if k.limbo_until == 0 {
            return Ok(()); // nothing ever left (the common case: no clock read)
        }
        let now = unix_now();
        if k.limbo_until < now {
            return Ok(());
        }
        let key = params![
            row.dev as i64,
            row.ino as i64,
            row.kind as u8,
            row.mtime_ns,
            row.id,
            now - LIMBO_SECS
        ];
        let restored = tx
            .prepare_cached(
                "INSERT OR IGNORE INTO tags (entry_id, uid, key, name, source, added_at)
                 SELECT ?5, uid, key, name, source, added_at FROM labels_limbo
                 WHERE dev = ?1 AND ino = ?2 AND kind = ?3 AND mtime_ns = ?4 AND what = 0 AND gone_at >= ?6",
            )?
            .execute(key)?
            + tx
                .prepare_cached(
                    "INSERT OR IGNORE INTO bookmarks (uid, name, entry_id, added_at)
                 SELECT uid, name, ?5, added_at FROM labels_limbo
                 WHERE dev = ?1 AND ino = ?2 AND kind = ?3 AND mtime_ns = ?4 AND what = 1 AND gone_at >= ?6",
                )?
                .execute(key)?;
        if restored > 0 {
            tx.prepare_cached(
                "DELETE FROM labels_limbo WHERE dev = ?1 AND ino = ?2 AND kind = ?3 AND mtime_ns = ?4",
            )?
            .execute(params![row.dev as i64, row.ino as i64, row.kind as u8, row.mtime_ns])?;
            k.ids.insert(row.id);
        }
        Ok(())
    })
}

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
            // One spelling per tag and user: the one first written.
            let mut put = tx.prepare_cached(
                "INSERT OR IGNORE INTO tags (entry_id, uid, key, name, source, added_at)
                 VALUES (?1, ?2, ?3, COALESCE((SELECT name FROM tags WHERE key=?3 AND uid=?2 LIMIT 1), ?4), 0, ?5)",
            )?;
            let mut n = 0;
            for t in tags {
                n += put.execute(params![entry_id, uid, t.key, t.name, now])?;
            }
            with_keeper(tx, |k| Ok(k.ids.insert(entry_id)))?;
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
            with_keeper(tx, |k| Ok(k.ids.insert(entry_id)))?;
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
            with_keeper(tx, |k| Ok(k.ids.insert(entry_id)))?;
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
