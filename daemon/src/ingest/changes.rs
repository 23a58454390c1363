//! Turning a coalesced batch of watcher events into store operations.
//!
//! The engine's event loop coalesces what the watcher saw into a [`Batch`]
//! and hands it here on the scanner thread; this module decides what each
//! event means for the index and sends the changes to the writer:
//!
//! 0. case-only renames reported as two changed paths become renames;
//! 1. renames seen whole move one row each (the subtree follows), with
//!    the later events of the batch rebased onto the new paths;
//! 2. the other changed paths are reconciled name by name, folder by
//!    folder ([`apply_names`]): each name's `lstat` against its row;
//! 3. the inodes with several links whose rows changed have their other
//!    paths refreshed.
//!
//! What it cannot settle name by name (a folder new to the index, a subtree
//! to recrawl) it returns as folders to walk whole: the engine owns the
//! roots' state and runs those walks ([`super::scan::scan`]). Everything
//! the batch needs from the daemon around it comes in an [`Indexing`].

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;

use rusqlite::Connection;

use crate::Error;
use crate::ingest::exclude::Rules;
use crate::ingest::scan::{
    Found, Hidden, Known, LinkCounts, Links, Progress, Sink, WriteSink, linked_under, name_bytes,
    refresh_links, row_from_stat, through_symlink, unchanged,
};
use crate::ingest::watch::{Batch, Watcher, is_cookie};
use crate::platform::fs as pfs;
use crate::store::{Kind, Op, RootRow, Store, WriteHandle, load_row, scan_reads};

/// What a batch is applied to, and what decides what enters it.
#[derive(Clone, Copy)]
pub struct Indexing<'a> {
    pub store: &'a Store,
    pub writer: &'a WriteHandle,
    /// The roots as recorded, read once for the batch.
    pub roots: &'a [RootRow],
    /// What is indexed.
    pub rules: &'a Rules,
    /// Renames move its watches; files with several links get a watch of
    /// their own; folders the rules now keep out lose theirs.
    pub watcher: Option<&'a Watcher>,
}

/// Applies a batch's renames and changed paths to the index (their changes
/// committed when this returns) and refreshes the link counts they touched.
/// Returns the folders to walk whole, sorted (a folder before those under
/// it): the subtrees the batch asked to rescan, and the folders new to the
/// index. A batch asking to rescan everything, and its cookies, are the
/// caller's.
pub fn apply(ix: &Indexing<'_>, mut b: Batch) -> Result<Vec<PathBuf>, Error> {
    let Indexing {
        store,
        writer,
        roots,
        rules,
        watcher,
    } = *ix;
    // 0. Case-only renames reported as two changed paths (FSEvents):
    // on a case-insensitive file system both names stat as the same
    // file, so only the folder's listing tells which one is there.
    let indexed = |p: &Path| store.read(|c| crate::store::resolve(c, p)).is_ok();
    for (from, to) in case_only_renames(&b.changed, listed_exactly, indexed) {
        b.changed.remove(&from);
        b.changed.remove(&to);
        b.moves.push((from, to));
    }
    // 1. Renames seen whole: one row each, the subtree follows. A
    // rename to a name the rules keep out is a delete (the new name
    // never reaches the index); one from such a name is a create.
    let mut ops = Vec::new();
    // Inodes with several links whose rows change: their other paths
    // get their link counts refreshed.
    let mut links = LinkCounts::new();
    // Where this batch's renames put entries: the index learns of them
    // only when `ops` is applied, and a later rename may start or end
    // there (mv a x; mv x y, or mv a x; mv b x).
    let mut placed: HashMap<PathBuf, i64> = HashMap::new();
    // Entries those renames took away from where the index has them: an
    // entry the index still has at a name is not what the name holds
    // when a rename took it away (mv x y; mv a x).
    let mut moved: HashSet<i64> = Default::default();
    for (from, to) in std::mem::take(&mut b.moves) {
        let in_index = |p: &Path| -> Option<i64> {
            store
                .read(|c| crate::store::resolve(c, p))
                .ok()
                .map(|(_, id)| id)
        };
        // The entry at a path: placed there by this batch, or the index's
        // unless a rename of this batch took it away (`mv x y; mv a x`
        // replaces no x; `mv x y; touch x; mv x z` moves the new x).
        let at = |p: &Path| {
            placed
                .get(p)
                .copied()
                .or_else(|| in_index(p).filter(|id| !moved.contains(id)))
        };
        let src = at(&from);
        // A folder keeps its id wherever a rename put it: an event that
        // still names its old place names it too.
        let dst_parent = to
            .parent()
            .and_then(|p| placed.get(p).copied().or_else(|| in_index(p)));
        let meta = pfs::lstat(&to);
        let allowed = meta
            .as_ref()
            .is_ok_and(|m| !rules.verdict(&to, m.is_dir()).hides());
        match (src, dst_parent, to.file_name()) {
            (Some(id), Some(parent_id), Some(name)) if allowed && !is_cookie(name) => {
                // What holds the name now is replaced.
                let held = at(&to);
                placed.remove(&from);
                if let Some(old) = held
                    && old != id
                {
                    // Replaced (an editor's save): if it had other
                    // links, they lost one.
                    store.read(|c| linked_under(c, old, &mut links))?;
                    ops.push(Op::Delete { id: old });
                }
                ops.push(Op::Move {
                    id,
                    parent_id,
                    name: crate::platform::bytes::vec(Path::new(name)),
                });
                placed = std::mem::take(&mut placed)
                    .into_iter()
                    .map(|(p, id)| (rebase(p, &from, &to), id))
                    .collect();
                placed.insert(to.clone(), id);
                moved.insert(id);
                if let Some(w) = watcher {
                    w.rename_prefix(&from, &to);
                }
                // Changes seen under the old path now live under the new one.
                b.changed = std::mem::take(&mut b.changed)
                    .into_iter()
                    .map(|p| rebase(p, &from, &to))
                    .collect();
                b.rescan = std::mem::take(&mut b.rescan)
                    .into_iter()
                    .map(|p| rebase(p, &from, &to))
                    .collect();
                // Refresh metadata of the entry and both folders.
                b.changed.insert(from);
                b.changed.insert(to.clone());
                // Events about paths inside the folder may have been
                // applied (as deletions) before this move arrived: walk
                // the moved subtree once. Unchanged, it writes nothing.
                if pfs::is_dir(&to) {
                    b.rescan.insert(to);
                }
            }
            _ => {
                b.changed.insert(from);
                b.changed.insert(to);
            }
        }
    }
    if !ops.is_empty() {
        writer.send(ops)?;
        writer.flush()?;
    }
    // 2. Single entries, folder by folder.
    let mut groups: BTreeMap<PathBuf, Vec<OsString>> = Default::default();
    for p in std::mem::take(&mut b.changed) {
        if let (Some(dir), Some(name)) = (p.parent(), p.file_name()) {
            groups
                .entry(dir.to_owned())
                .or_default()
                .push(name.to_owned());
        }
    }
    let mut deep: Vec<PathBuf> = b.rescan.iter().cloned().collect();
    let mut new_dirs: Vec<PathBuf> = Vec::new();
    for (dir, names) in groups {
        if new_dirs.iter().any(|n| dir.starts_with(n)) {
            continue; // inside a new folder: its whole scan covers it
        }
        let Some(root) = crate::store::root_of(roots, &dir) else {
            // An event about a root itself.
            for n in names {
                let p = dir.join(n);
                if roots
                    .iter()
                    .any(|r| crate::platform::bytes::path_buf(&r.path) == p)
                {
                    deep.push(p);
                }
            }
            continue;
        };
        let root_path = crate::platform::bytes::path_buf(&root.path);
        if through_symlink(&root_path, &dir) {
            // The folder was replaced by a symlink (or lies under one):
            // that change is in its parent's group; what the events say
            // of names inside it is not ours, and a stat through the
            // link would follow it.
            continue;
        }
        match store.read(|c| crate::store::resolve(c, &dir)) {
            Ok((_, dir_id)) => {
                let found = store.read(|c| {
                    apply_names(
                        store,
                        c,
                        writer,
                        dir_id,
                        &dir,
                        &names,
                        Scope {
                            rules,
                            cross_filesystems: rules.cross_filesystems(&root_path),
                            watcher,
                        },
                        &mut links,
                    )
                })?;
                new_dirs.extend(found.into_iter().map(|(p, _)| p));
            }
            // A watched folder the rules now keep out (they changed
            // since it was watched): its events are not ours any more.
            Err(_) if rules.path_verdict(&root_path, &dir, true).hides() => {
                if let Some(w) = watcher {
                    w.unwatch_under(&dir);
                }
            }
            // The folder is not indexed yet (its own event was lost or
            // is in this batch under a new folder): scan it whole.
            Err(_) => deep.push(dir),
        }
    }
    writer.flush()?;
    // Inodes whose own watch saw their link count change: a link made
    // or removed where the daemon cannot see it (outside the roots, in
    // a folder not scanned yet or just moved out).
    for inode in std::mem::take(&mut b.inodes) {
        links.entry(inode).or_default();
    }
    refresh_links(store, writer, links)?;
    // New folders (watched first, then listed) and subtrees to recrawl.
    deep.extend(new_dirs);
    deep.sort();
    Ok(deep)
}

/// Pairs of changed paths in one folder whose names differ only in case,
/// where the index has the one the folder no longer lists and the folder
/// lists the other: a case-only rename, applied as a rename (one row keeps
/// its id and its subtree). Each `listed` call lists a folder, so only
/// such pairs ask it.
fn case_only_renames(
    changed: &BTreeSet<PathBuf>,
    listed: impl Fn(&Path) -> bool,
    indexed: impl Fn(&Path) -> bool,
) -> Vec<(PathBuf, PathBuf)> {
    let mut by_folded: BTreeMap<(PathBuf, String), Vec<&PathBuf>> = Default::default();
    for p in changed {
        if let (Some(dir), Some(name)) = (p.parent(), p.file_name()) {
            let folded = name.to_string_lossy().to_lowercase();
            by_folded
                .entry((dir.to_owned(), folded))
                .or_default()
                .push(p);
        }
    }
    let mut pairs = Vec::new();
    for paths in by_folded.into_values().filter(|v| v.len() == 2) {
        let (a, b) = (paths[0], paths[1]);
        for (from, to) in [(a, b), (b, a)] {
            if indexed(from) && !indexed(to) && listed(to) && !listed(from) {
                pairs.push((from.clone(), to.clone()));
                break;
            }
        }
    }
    pairs
}

/// True when the folder of `p` lists `p`'s name byte for byte (a stat
/// would answer for any spelling on a case-insensitive file system).
fn listed_exactly(p: &Path) -> bool {
    let (Some(dir), Some(name)) = (p.parent(), p.file_name()) else {
        return false;
    };
    let name = crate::platform::bytes::of(Path::new(name));
    pfs::open_dir(dir)
        .and_then(pfs::list)
        .is_ok_and(|(names, _)| names.iter().any(|(n, _)| n == name))
}

/// `p` with its prefix `from` replaced by `to` (unchanged when not under `from`).
fn rebase(p: PathBuf, from: &Path, to: &Path) -> PathBuf {
    match p.strip_prefix(from) {
        Ok(rest) if rest.as_os_str().is_empty() => p,
        Ok(rest) => to.join(rest),
        Err(_) => p,
    }
}

/// What a root lets into the index: its rules and whether other file
/// systems are entered.
#[derive(Clone, Copy, Debug)]
struct Scope<'a> {
    rules: &'a Rules,
    cross_filesystems: bool,
    /// Files with several links get a watch of their own.
    watcher: Option<&'a Watcher>,
}

/// Where the default file systems ignore case (APFS, NTFS): a name that is
/// new to the index is checked against the folder's listing before it is
/// added, since a stat answers for any spelling.
const MAYBE_CASE_INSENSITIVE: bool = cfg!(any(target_os = "macos", windows));

/// True when `dir` lists `name` byte for byte (listed once into `cache`).
fn listed(cache: &mut Option<HashSet<Vec<u8>>>, dir: &Path, name: &[u8]) -> bool {
    let names = cache.get_or_insert_with(|| {
        pfs::open_dir(dir)
            .and_then(pfs::list)
            .map(|(names, _)| names.into_iter().map(|(n, _)| n).collect())
            .unwrap_or_default()
    });
    names.contains(name)
}

/// Reconciles single entries of one folder (paths from watcher events) and
/// the folder's own row. Returns the folders that are new: the caller scans
/// them whole. The changes are sent; the caller flushes. Entries with
/// several links are noted in `links`, for [`refresh_links`].
#[allow(clippy::too_many_arguments)]
fn apply_names(
    store: &Store,
    conn: &Connection,
    writer: &WriteHandle,
    dir_id: i64,
    dir: &Path,
    names: &[std::ffi::OsString],
    scope: Scope<'_>,
    links: &mut LinkCounts,
) -> Result<Vec<(PathBuf, i64)>, Error> {
    let Scope {
        rules,
        cross_filesystems,
        watcher,
    } = scope;
    let progress = Progress::default();
    // Never a root's first index: the root id is not needed.
    let sink = WriteSink::new(store, writer, &progress, 0);
    let noted = Links::new(true);
    let mut found = Vec::new();
    let mut new_dirs = Vec::new();
    let dir_meta = match pfs::lstat(dir) {
        Ok(m) => m,
        // The folder itself is gone: its parent's event removes it.
        Err(_) => return Ok(new_dirs),
    };
    if let Some(old) = load_row(conn, dir_id)? {
        let mut row = row_from_stat(dir_id, None, Vec::new(), &dir_meta);
        row.flags = old.flags;
        if !unchanged(&old, &row) {
            found.push(Found::Update(row, Some(old), PathBuf::new()));
        }
    }
    let folder = rules.folder(dir);
    let mut hidden_changed = false;
    // The folder's names, listed once when a new name needs checking.
    let mut listing: Option<HashSet<Vec<u8>>> = None;
    for name in names {
        if is_cookie(name) {
            continue;
        }
        let bytes = name_bytes(name);
        let path = dir.join(name);
        let old = scan_reads::child(conn, dir_id, &bytes)?;
        let gone = |found: &mut Vec<Found>, k: Known| -> Result<(), Error> {
            if k.kind == Kind::Dir {
                noted.note_subtree(conn, k.id)?;
            }
            noted.note(None, Some(&k));
            found.push(Found::Delete(k, PathBuf::new()));
            Ok(())
        };
        let meta = match pfs::lstat(&path) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                if let Some(k) = old {
                    gone(&mut found, k)?;
                }
                // It may have been one of the folder's unlisted entries.
                hidden_changed |=
                    folder.verdict(name, false).hides() || folder.verdict(name, true).hides();
                continue;
            }
            Err(e) => {
                progress.errors.fetch_add(1, Ordering::Relaxed);
                // Not even the log may hold a name the rules keep out.
                if !folder.verdict(name, false).hides() && !folder.verdict(name, true).hides() {
                    tracing::warn!("cannot stat {}: {e}", path.display());
                }
                continue;
            }
        };
        if old.is_none() && MAYBE_CASE_INSENSITIVE && !listed(&mut listing, dir, &bytes) {
            // Another spelling of a name the folder holds: on a
            // case-insensitive file system the stat answered for that one
            // (it is indexed under its own name).
            continue;
        }
        if folder.verdict(name, meta.is_dir()).hides() {
            // Kept out; what the index had of it (from before the rules
            // changed) goes, and its bytes are counted afresh.
            if let Some(k) = old {
                gone(&mut found, k)?;
            }
            hidden_changed = true;
            continue;
        }
        if meta.is_dir() && !cross_filesystems && meta.dev != dir_meta.dev {
            continue; // a mount point appeared: not entered (du -x)
        }
        let mut row = row_from_stat(0, Some(dir_id), bytes, &meta);
        if let Some(w) = watcher
            && row.kind != Kind::Dir
            && row.nlink > 1
        {
            w.watch_linked_file(&path, (row.dev, row.ino), None);
        }
        // A folder at the name is the one indexed only if it is the same
        // inode: one moved away and another made or moved in under its name
        // (mv d out; mkdir d, or cp -a into d) holds other entries, so it is
        // a new folder and scanned whole.
        let same = |k: &Known| {
            k.kind == row.kind && (k.kind != Kind::Dir || (k.dev, k.ino) == (row.dev, row.ino))
        };
        match old {
            Some(k) if same(&k) => {
                row.id = k.id;
                row.flags = k.flags;
                if row.kind == Kind::Dir && k.mode != row.mode {
                    // Permissions decide what can be listed: walk it again.
                    new_dirs.push((path.clone(), k.id));
                }
                if !unchanged(&k, &row) {
                    noted.note(Some(&row), Some(&k));
                    found.push(Found::Update(row, Some(k), PathBuf::new()));
                }
            }
            other => {
                if let Some(k) = other {
                    gone(&mut found, k)?;
                }
                row.id = sink.new_id();
                let id = row.id;
                let is_dir = row.kind == Kind::Dir;
                noted.note(Some(&row), None);
                found.push(Found::Insert(row, PathBuf::new()));
                if is_dir {
                    new_dirs.push((path, id));
                }
            }
        }
    }
    if hidden_changed {
        // Count the folder's unlisted entries afresh (a sizes-only pass
        // over the names the rules keep out).
        let root_dev = dir_meta.dev;
        if let Ok(fd) = pfs::open_dir(dir)
            && let Ok((names, listing)) = pfs::list(fd)
            && let Ok(dfd) = pfs::listing_fd(&listing)
        {
            let mut hidden = Hidden::default();
            for (name, hint) in names {
                let os = pfs::os(&name);
                let is_dir =
                    hint.unwrap_or_else(|| pfs::lstat_at(dfd, os).is_ok_and(|s| s.is_dir()));
                let v = folder.verdict(os, is_dir);
                if v.hides() && !is_cookie(os) {
                    hidden.add_measured(dfd, &name, v, is_dir, root_dev, cross_filesystems);
                }
            }
            found.push(Found::Unlisted(dir_id, hidden.rows()));
        }
    }
    for (inode, n) in noted.take() {
        let m = links.entry(inode).or_default();
        *m = (*m).max(n);
    }
    sink.emit(found)?;
    sink.finish()?;
    Ok(new_dirs)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A case-only rename reported as two changed paths becomes one
    /// rename; the oracle is the folder's own listing (a real folder).
    #[test]
    fn a_case_only_rename_seen_as_two_changes_is_a_rename() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path();
        std::fs::write(d.join("Report.TXT"), b"x").unwrap();
        std::fs::rename(d.join("Report.TXT"), d.join("report.txt")).unwrap();
        std::fs::write(d.join("other"), b"y").unwrap();
        let changed: std::collections::BTreeSet<PathBuf> =
            [d.join("Report.TXT"), d.join("report.txt"), d.join("other")].into();
        let indexed = |p: &Path| p.ends_with("Report.TXT") || p.ends_with("other");
        assert_eq!(
            case_only_renames(&changed, listed_exactly, indexed),
            vec![(d.join("Report.TXT"), d.join("report.txt"))]
        );
        // Both spellings present (a case-sensitive file system): two files,
        // no rename.
        std::fs::write(d.join("Report.TXT"), b"x").unwrap();
        assert!(case_only_renames(&changed, listed_exactly, indexed).is_empty());
    }
}
