//! Saved searches and search history (migration 0016), per user. Writes go
//! through the single writer ([`super::Op::Searches`]); this module holds
//! the SQL: the writer's half ([`apply`]) and the reads. What a name may
//! be, and what a query means, is decided a layer up (the engine checks a
//! saved query parses before it is saved).

use rusqlite::{Connection, OptionalExtension, params};

use crate::Error;

use super::unix_now;

/// At most this many history rows per user; the oldest go first.
pub const HISTORY_KEPT: i64 = 1000;

/// A change to one user's saved searches or history.
#[derive(Debug)]
pub enum Edit {
    /// Saves `query` as `name`; refused when the name is taken, unless
    /// `replace`.
    Save {
        uid: i64,
        name: String,
        query: String,
        replace: bool,
    },
    /// Forgets the saved search `name`.
    Remove { uid: i64, name: String },
    /// Adds a search to the history (or refreshes the newest row when it
    /// is the same query from the same client).
    Record {
        uid: i64,
        query: String,
        results: u64,
        client: String,
        at_ms: i64,
    },
}

/// What an [`Edit`] did, or why nothing was written.
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    Done,
    /// A saved search of that name exists already (its name as saved).
    Taken(String),
    /// No saved search of that name.
    Missing,
}

/// A saved search.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Saved {
    pub name: String,
    pub query: String,
    pub added_at: i64,
}

/// A search in the history.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Recent {
    pub query: String,
    pub results: u64,
    pub client: String,
    pub at_ms: i64,
}

/// Applies one edit (the writer thread, inside its transaction).
pub(super) fn apply(tx: &Connection, edit: Edit) -> Result<Outcome, Error> {
    match edit {
        Edit::Save {
            uid,
            name,
            query,
            replace,
        } => {
            if let Some(old) = named(tx, uid, &name)? {
                if !replace {
                    return Ok(Outcome::Taken(old.name));
                }
                // Replacing takes the new spelling and query.
                tx.execute(
                    "DELETE FROM saved_searches WHERE uid = ?1 AND name = ?2",
                    params![uid, name],
                )?;
            }
            tx.execute(
                "INSERT INTO saved_searches (uid, name, query, added_at) VALUES (?1, ?2, ?3, ?4)",
                params![uid, name, query, unix_now()],
            )?;
            Ok(Outcome::Done)
        }
        Edit::Remove { uid, name } => {
            let n = tx.execute(
                "DELETE FROM saved_searches WHERE uid = ?1 AND name = ?2",
                params![uid, name],
            )?;
            Ok(if n == 0 {
                Outcome::Missing
            } else {
                Outcome::Done
            })
        }
        Edit::Record {
            uid,
            query,
            results,
            client,
            at_ms,
        } => {
            let newest: Option<(i64, String, String)> = tx
                .prepare_cached(
                    "SELECT id, query, client FROM search_history WHERE uid = ?1
                     ORDER BY id DESC LIMIT 1",
                )?
                .query_row([uid], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
                .optional()?;
            let results = i64::try_from(results).unwrap_or(i64::MAX);
            match newest {
                Some((id, q, c)) if q == query && c == client => {
                    tx.prepare_cached(
                        "UPDATE search_history SET results = ?2, at_ms = ?3 WHERE id = ?1",
                    )?
                    .execute(params![id, results, at_ms])?;
                }
                _ => {
                    tx.prepare_cached(
                        "INSERT INTO search_history (uid, query, results, client, at_ms)
                         VALUES (?1, ?2, ?3, ?4, ?5)",
                    )?
                    .execute(params![uid, query, results, client, at_ms])?;
                    // Bounded: the rows past the newest HISTORY_KEPT go.
                    tx.prepare_cached(
                        "DELETE FROM search_history WHERE uid = ?1 AND id <= (
                             SELECT id FROM search_history WHERE uid = ?1
                             ORDER BY id DESC LIMIT 1 OFFSET ?2)",
                    )?
                    .execute(params![uid, HISTORY_KEPT])?;
                }
            }
            Ok(Outcome::Done)
        }
    }
}

/// The user's saved search called `name` (names compare ASCII
/// case-insensitively).
pub fn named(c: &Connection, uid: i64, name: &str) -> Result<Option<Saved>, Error> {
    Ok(c.prepare_cached(
        "SELECT name, query, added_at FROM saved_searches WHERE uid = ?1 AND name = ?2",
    )?
    .query_row(params![uid, name], |r| {
        Ok(Saved {
            name: r.get(0)?,
            query: r.get(1)?,
            added_at: r.get(2)?,
        })
    })
    .optional()?)
}

/// The user's saved searches, by name.
pub fn saved(c: &Connection, uid: i64) -> Result<Vec<Saved>, Error> {
    let mut st = c.prepare_cached(
        "SELECT name, query, added_at FROM saved_searches WHERE uid = ?1 ORDER BY name",
    )?;
    let rows = st.query_map([uid], |r| {
        Ok(Saved {
            name: r.get(0)?,
            query: r.get(1)?,
            added_at: r.get(2)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// The user's newest `limit` searches, newest first.
pub fn history(c: &Connection, uid: i64, limit: usize) -> Result<Vec<Recent>, Error> {
    let mut st = c.prepare_cached(
        "SELECT query, results, client, at_ms FROM search_history WHERE uid = ?1
         ORDER BY id DESC LIMIT ?2",
    )?;
    let rows = st.query_map(params![uid, limit as i64], |r| {
        Ok(Recent {
            query: r.get(0)?,
            results: r.get::<_, i64>(1)?.max(0) as u64,
            client: r.get(2)?,
            at_ms: r.get(3)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn db() -> Connection {
        let c = Connection::open_in_memory().unwrap();
        c.execute_batch(include_str!("../../../migrations/0016_searches.sql"))
            .unwrap();
        c
    }

    fn record(c: &Connection, uid: i64, q: &str, client: &str, at_ms: i64) {
        let edit = Edit::Record {
            uid,
            query: q.into(),
            results: 3,
            client: client.into(),
            at_ms,
        };
        assert_eq!(apply(c, edit).unwrap(), Outcome::Done);
    }

    #[test]
    fn saved_searches_are_per_user_and_names_are_taken_once() {
        let c = db();
        let save = |uid, name: &str, q: &str, replace| {
            apply(
                &c,
                Edit::Save {
                    uid,
                    name: name.into(),
                    query: q.into(),
                    replace,
                },
            )
            .unwrap()
        };
        assert_eq!(save(1, "Taxes", "ext:pdf tax", false), Outcome::Done);
        assert_eq!(save(1, "taxes", "x", false), Outcome::Taken("Taxes".into()));
        assert_eq!(save(2, "taxes", "ext:odt", false), Outcome::Done);
        assert_eq!(save(1, "taxes", "ext:pdf 2025", true), Outcome::Done);
        let one = saved(&c, 1).unwrap();
        assert_eq!(one.len(), 1);
        assert_eq!(
            (one[0].name.as_str(), one[0].query.as_str()),
            ("taxes", "ext:pdf 2025")
        );
        assert_eq!(named(&c, 2, "TAXES").unwrap().unwrap().query, "ext:odt");
        let gone = Edit::Remove {
            uid: 1,
            name: "TAXES".into(),
        };
        assert_eq!(apply(&c, gone).unwrap(), Outcome::Done);
        let again = Edit::Remove {
            uid: 1,
            name: "taxes".into(),
        };
        assert_eq!(apply(&c, again).unwrap(), Outcome::Missing);
        assert!(saved(&c, 1).unwrap().is_empty());
        assert_eq!(saved(&c, 2).unwrap().len(), 1);
    }

    #[test]
    fn history_is_newest_first_bounded_per_user_and_folds_repeats() {
        let c = db();
        for i in 0..HISTORY_KEPT + 5 {
            record(&c, 1, &format!("q{i}"), "fsctl", i);
        }
        record(&c, 2, "theirs", "fsgui", 7);
        let mine = history(&c, 1, 10_000).unwrap();
        assert_eq!(mine.len() as i64, HISTORY_KEPT);
        assert_eq!(mine[0].query, format!("q{}", HISTORY_KEPT + 4));
        assert_eq!(mine.last().unwrap().query, "q5");
        // The same query again from the same client is one row, refreshed;
        // from another client it is a row of its own.
        record(&c, 1, "again", "fsctl", 1);
        record(&c, 1, "again", "fsctl", 2);
        record(&c, 1, "again", "mcp", 3);
        let top = history(&c, 1, 3).unwrap();
        let seen: Vec<(&str, &str, i64)> = top
            .iter()
            .map(|r| (r.query.as_str(), r.client.as_str(), r.at_ms))
            .collect();
        assert_eq!(
            seen,
            [
                ("again", "mcp", 3),
                ("again", "fsctl", 2),
                (
                    format!("q{}", HISTORY_KEPT + 4).as_str(),
                    "fsctl",
                    HISTORY_KEPT + 4
                )
            ]
        );
        assert_eq!(history(&c, 2, 10).unwrap().len(), 1);
    }
}
