//! A move plan as an organiser writes it: JSON, `{"moves": [...]}` as
//! `check_move_plan` takes it (`actions` is the same list), each item
//! `{"from", "to"}` with an optional `action`:
//!
//! - `move` (the default): a file or folder to a new full path;
//! - `rename`: a new name in the same folder (`to` may be the name alone);
//! - `mkdir`: a folder to make (`path`), with its parents;
//! - `merge`: the contents of folder `from` into folder `to`, folders that
//!   exist on both sides merged in turn, names that exist on both sides
//!   listed as collisions and left where they are;
//! - `keep`: `path` stays where it is (nothing else may move it).
//!
//! An item may carry the `size` and `mtimeNs` its source had when it was
//! checked (`fsctl organise check --json` writes them): apply then skips a
//! source that changed since. A relative path is taken from `base`, else
//! from the folder the command runs in. Paths may be given in the shown
//! form (`\xE9` for a byte that is not UTF-8, `\n`, a doubled backslash):
//! that form is tried first, then the text as it is.

use std::path::{Component, Path, PathBuf};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::cmd::mcp::names::{path_of, unescape};

/// A plan file.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PlanFile {
    /// Folder that relative paths are taken from (default: the current one).
    #[serde(default)]
    pub base: Option<String>,
    /// The items, applied in order.
    #[serde(default)]
    pub moves: Vec<RawItem>,
    /// The same as `moves` (either may be used, not both).
    #[serde(default)]
    pub actions: Vec<RawItem>,
}

/// One item of a plan, as written.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawItem {
    /// move (default), rename, mkdir, merge or keep.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<String>,
    /// The source (move, rename, merge).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    /// The new full path (move), new name or path (rename), or the folder
    /// merged into (merge).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to: Option<String>,
    /// The folder to make (mkdir) or the entry that stays (keep).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The source's size in bytes when the plan was checked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// The source's mtime (ns since the epoch) when the plan was checked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mtime_ns: Option<i64>,
}

/// What an item does, its paths absolute.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    Move { from: PathBuf, to: PathBuf },
    Rename { from: PathBuf, to: PathBuf },
    Mkdir { path: PathBuf },
    Merge { from: PathBuf, into: PathBuf },
    Keep { path: PathBuf },
}

impl Action {
    /// The entry the item takes away from where it is, if any.
    pub fn source(&self) -> Option<&Path> {
        match self {
            Action::Move { from, .. } | Action::Rename { from, .. } => Some(from),
            Action::Merge { from, .. } => Some(from),
            _ => None,
        }
    }

    /// Where the item puts something.
    pub fn target(&self) -> &Path {
        match self {
            Action::Move { to, .. } | Action::Rename { to, .. } => to,
            Action::Merge { into, .. } => into,
            Action::Mkdir { path } | Action::Keep { path } => path,
        }
    }
}

/// An item resolved.
#[derive(Debug, Clone)]
pub struct Item {
    /// Its place in the plan (0-based).
    pub index: usize,
    pub action: Action,
    /// Size and mtime its source had at the check, when the plan says.
    pub expect_size: Option<u64>,
    pub expect_mtime_ns: Option<i64>,
}

/// How a path of the plan is turned into an absolute one: `existing` for
/// what must be there (a source), else for what may not be there yet.
/// The CLI resolves against a base folder; `fsctl mcp` through its guard.
pub trait Resolve {
    fn resolve(&self, raw: &str, existing: bool) -> Result<PathBuf, String>;
}

/// Plain resolution against a base folder: the folder part made absolute
/// and its symlinks resolved where it exists, the last name never followed
/// (a symlink is moved as itself).
pub struct Local {
    pub base: PathBuf,
}

impl Resolve for Local {
    fn resolve(&self, raw: &str, existing: bool) -> Result<PathBuf, String> {
        if raw.is_empty() {
            return Err("an empty path".into());
        }
        if raw.contains('\0') {
            return Err(format!(
                "{}: a path cannot hold a NUL byte",
                raw.escape_debug()
            ));
        }
        let mut forms = Vec::new();
        if let Some(bytes) = unescape(raw) {
            forms.push(path_of(bytes));
        }
        forms.push(PathBuf::from(raw));
        let mut first = None;
        for f in forms {
            let p = entry_path(&self.base.join(f))?;
            if !existing || std::fs::symlink_metadata(&p).is_ok() {
                return Ok(p);
            }
            first.get_or_insert(p);
        }
        Ok(first.expect("one form at least"))
    }
}

/// `p` normalised lexically, its folder part's symlinks resolved where the
/// folder exists; the last name kept as it is. Refuses a path ending in
/// `..` or naming `/`.
pub fn entry_path(p: &Path) -> Result<PathBuf, String> {
    let mut n = PathBuf::new();
    for c in p.components() {
        match c {
            Component::Prefix(_) | Component::RootDir => n.push(c.as_os_str()),
            Component::CurDir => {}
            Component::ParentDir => {
                n.pop();
            }
            Component::Normal(x) => n.push(x),
        }
    }
    let (Some(parent), Some(name)) = (n.parent(), n.file_name()) else {
        return Err(format!("{}: names no file or folder", p.display()));
    };
    let parent = real_prefix(parent);
    Ok(parent.join(name))
}

/// The longest existing ancestor of `p` with its symlinks resolved, the
/// rest appended as it is.
fn real_prefix(p: &Path) -> PathBuf {
    let mut rest = Vec::new();
    let mut cur = p.to_path_buf();
    loop {
        if let Ok(real) = fsindex_proto::paths::canonicalize(&cur) {
            let mut full = real;
            full.extend(rest.iter().rev());
            return full;
        }
        match (cur.file_name().map(|n| n.to_owned()), cur.parent()) {
            (Some(n), Some(parent)) => {
                rest.push(n);
                cur = parent.to_path_buf();
            }
            _ => return p.to_path_buf(),
        }
    }
}

/// A plan read from JSON text. One line per fault, naming the item.
pub fn parse(text: &str) -> Result<PlanFile, String> {
    let plan: PlanFile =
        serde_json::from_str(text).map_err(|e| format!("the plan is not valid JSON: {e}"))?;
    if !plan.moves.is_empty() && !plan.actions.is_empty() {
        return Err("give the items as `moves` or as `actions`, not both".into());
    }
    if plan.moves.is_empty() && plan.actions.is_empty() {
        return Err(
            "the plan has no items: give {\"moves\": [{\"from\": ..., \"to\": ...}, ...]}".into(),
        );
    }
    Ok(plan)
}

/// The most items a plan may hold.
pub const MAX_ITEMS: usize = 100_000;

/// Each item resolved; the first fault is an error naming the item.
pub fn resolve(items: &[RawItem], r: &dyn Resolve) -> Result<Vec<Item>, String> {
    if items.len() > MAX_ITEMS {
        return Err(format!("at most {MAX_ITEMS} items per plan"));
    }
    let mut out = Vec::with_capacity(items.len());
    for (i, raw) in items.iter().enumerate() {
        let at = |what: &str| format!("item {i}: {what}");
        let need = |field: &Option<String>, name: &str| -> Result<String, String> {
            field
                .clone()
                .ok_or_else(|| at(&format!("`{name}` is missing")))
        };
        let get = |field: &Option<String>, name: &str, existing: bool| {
            let s = need(field, name)?;
            r.resolve(&s, existing).map_err(|e| at(&e))
        };
        let unused = |fields: &[(&Option<String>, &str)]| -> Result<(), String> {
            for (f, name) in fields {
                if f.is_some() {
                    return Err(at(&format!("`{name}` does not belong to this action")));
                }
            }
            Ok(())
        };
        let action = match raw.action.as_deref().unwrap_or("move") {
            "move" => {
                unused(&[(&raw.path, "path")])?;
                Action::Move {
                    from: get(&raw.from, "from", true)?,
                    to: get(&raw.to, "to", false)?,
                }
            }
            "rename" => {
                unused(&[(&raw.path, "path")])?;
                let from = get(&raw.from, "from", true)?;
                let to_raw = need(&raw.to, "to")?;
                let to = if to_raw.contains('/') {
                    r.resolve(&to_raw, false).map_err(|e| at(&e))?
                } else {
                    let name = unescape(&to_raw).map_or_else(|| PathBuf::from(&to_raw), path_of);
                    if to_raw.is_empty() || to_raw == "." || to_raw == ".." {
                        return Err(at("`to` must be a name"));
                    }
                    from.parent().unwrap_or(Path::new("/")).join(name)
                };
                Action::Rename { from, to }
            }
            "merge" => {
                unused(&[(&raw.path, "path")])?;
                Action::Merge {
                    from: get(&raw.from, "from", true)?,
                    into: get(&raw.to, "to", false)?,
                }
            }
            "mkdir" => {
                unused(&[(&raw.from, "from"), (&raw.to, "to")])?;
                Action::Mkdir {
                    path: get(&raw.path, "path", false)?,
                }
            }
            "keep" => {
                unused(&[(&raw.from, "from"), (&raw.to, "to")])?;
                Action::Keep {
                    path: get(&raw.path, "path", true)?,
                }
            }
            other => {
                return Err(at(&format!(
                    "unknown action `{}`: move, rename, mkdir, merge or keep",
                    other.escape_debug()
                )));
            }
        };
        out.push(Item {
            index: i,
            action,
            expect_size: raw.size,
            expect_mtime_ns: raw.mtime_ns,
        });
    }
    Ok(out)
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn items_resolve_against_the_base() {
        let tmp = tempfile::tempdir().unwrap();
        let base = fsindex_proto::paths::canonicalize(tmp.path()).unwrap();
        std::fs::create_dir(base.join("in")).unwrap();
        std::fs::write(base.join("in/a.txt"), b"a").unwrap();
        let plan = parse(
            r#"{"moves": [
                {"from": "in/a.txt", "to": "out/b/a.txt"},
                {"action": "rename", "from": "in/a.txt", "to": "c.txt"},
                {"action": "mkdir", "path": "./x/../y"},
                {"action": "keep", "path": "in"}
            ]}"#,
        )
        .unwrap();
        let items = resolve(&plan.moves, &Local { base: base.clone() }).unwrap();
        assert_eq!(
            items[0].action,
            Action::Move {
                from: base.join("in/a.txt"),
                to: base.join("out/b/a.txt")
            }
        );
        assert_eq!(items[1].action.target(), base.join("in/c.txt"));
        assert_eq!(items[2].action.target(), base.join("y"));
        let bad = parse(r#"{"moves": [{"action": "mkdir", "path": "a", "to": "b"}]}"#).unwrap();
        let e = resolve(&bad.moves, &Local { base: base.clone() }).unwrap_err();
        assert!(e.contains("item 0") && e.contains("`to`"), "{e}");
        let bad = parse(r#"{"moves": [{"action": "fling", "from": "a"}]}"#).unwrap();
        assert!(
            resolve(&bad.moves, &Local { base })
                .unwrap_err()
                .contains("unknown action")
        );
        assert!(parse("{}").is_err());
        assert!(parse(r#"{"moves": [], "extra": 1}"#).is_err());
    }
}
