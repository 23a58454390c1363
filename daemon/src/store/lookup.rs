//! Root and path look-ups: the roots table, which root holds a path, and
//! an absolute path's entry id (one indexed step per component). Every
//! part of the daemon that names entries by path goes through here.

use std::path::{Component, Path};

use rusqlite::{Connection, OptionalExtension};

use crate::Error;

/// A root as recorded in the index.
#[derive(Clone, Debug)]
pub struct RootRow {
    pub id: i64,
    pub path: Vec<u8>,
    pub entry_id: Option<i64>,
    pub scanned_at: i64,
}

pub fn roots(conn: &Connection) -> Result<Vec<RootRow>, Error> {
    let mut stmt =
        conn.prepare_cached("SELECT id, path, entry_id, scanned_at FROM roots ORDER BY path")?;
    let rows = stmt.query_map([], |r| {
        Ok(RootRow {
            id: r.get(0)?,
            path: r.get(1)?,
            entry_id: r.get(2)?,
            scanned_at: r.get(3)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// The root holding `path`, if any (component-wise prefix).
pub fn root_of<'r>(roots: &'r [RootRow], path: &Path) -> Option<&'r RootRow> {
    roots
        .iter()
        .filter(|r| path.starts_with(crate::platform::bytes::path(&r.path)))
        .max_by_key(|r| r.path.len())
}

/// Resolves an absolute path to its entry id.
pub fn resolve(conn: &Connection, path: &Path) -> Result<(RootRow, i64), Error> {
    let all = roots(conn)?;
    let shown = || String::from_utf8_lossy(crate::platform::bytes::of(path)).into_owned();
    let Some(root) = root_of(&all, path) else {
        let list: Vec<String> = all
            .iter()
            .map(|r| String::from_utf8_lossy(&r.path).into_owned())
            .collect();
        return Err(Error::NotUnderRoot(
            shown(),
            if list.is_empty() {
                "none".into()
            } else {
                list.join(", ")
            },
        ));
    };
    let Some(mut id) = root.entry_id else {
        let here = crate::platform::fs::lstat(&crate::platform::bytes::path_buf(&root.path))
            .is_ok_and(|m| m.is_dir());
        let why = if here {
            "its root is not scanned yet"
        } else {
            "its root's folder is gone"
        };
        return Err(Error::NotFound(format!("{} ({why})", shown())));
    };
    let rest = path
        .strip_prefix(crate::platform::bytes::path(&root.path))
        .unwrap_or(Path::new(""));
    let mut stmt = conn.prepare_cached("SELECT id FROM entries WHERE parent_id=?1 AND name=?2")?;
    for comp in rest.components() {
        let Component::Normal(name) = comp else {
            return Err(Error::InvalidArgument(format!(
                "{}: give an absolute path without `..`",
                shown()
            )));
        };
        id = stmt
            .query_row(
                rusqlite::params![id, crate::platform::bytes::of(Path::new(name))],
                |r| r.get(0),
            )
            .optional()?
            .ok_or_else(|| Error::NotFound(shown()))?;
    }
    Ok((root.clone(), id))
}
