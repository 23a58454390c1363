//! Applying what the watcher saw: coalesced batches become scans of the
//! folders they touch (in the scanner thread), and folders left unwatched
//! are polled.

use super::*;
use crate::ingest::watch::coalesce::Coalescer;

impl Engine {
    /// Coalesces watcher notices into batches: a batch closes after
    /// `debounce` without events, or `ceiling` after it opened, so a steady
    /// stream cannot postpone updates forever.
    pub(super) fn event_loop(self: Arc<Self>, rx: crate::ingest::watch::NoticeRx) {
        let Some(watcher) = self.watcher.clone() else {
            return;
        };
        let mut coalescer = Coalescer::new(rx, self.watch.debounce, self.watch.ceiling);
        let mut next_poll = Instant::now() + self.watch.poll_interval;
        // Roots whose folder is gone are looked for this often.
        let mut next_look = Instant::now() + Duration::from_secs(1);
        // Where the backend can lose events silently: every root, this often.
        let reconcile = watcher.reconcile_every();
        let mut next_reconcile = reconcile.map(|every| Instant::now() + every);
        loop {
            if self.cancel.load(Ordering::Relaxed) {
                return;
            }
            let wait = next_poll
                .saturating_duration_since(Instant::now())
                .min(Duration::from_millis(500));
            let Some(batch) = coalescer.next(wait, &watcher) else {
                return;
            };
            if !batch.is_empty() {
                self.send_job(Job::Apply(batch));
            }
            if Instant::now() >= next_look {
                self.look_for_gone_roots();
                next_look = Instant::now() + Duration::from_secs(1);
            }
            if Instant::now() >= next_poll {
                if watcher.polls_any() {
                    self.send_job(Job::Poll(None));
                }
                next_poll = Instant::now() + self.watch.poll_interval;
            }
            if let (Some(at), Some(every)) = (next_reconcile, reconcile)
                && Instant::now() >= at
            {
                tracing::info!(
                    "periodic reconcile of every root (the watcher cannot report lost events)"
                );
                let mut all = Batch::default();
                all.rescan_all = true;
                self.send_job(Job::Apply(all));
                next_reconcile = Some(Instant::now() + every);
            }
        }
    }
    /// Applies one batch of watcher notices (on the scanner thread).
    pub(super) fn apply_batch(&self, mut b: Batch) -> Result<(), Error> {
        let watcher = self.watcher.as_ref();
        if b.rescan_all {
            if let Some(w) = watcher {
                w.stats().recrawls.fetch_add(1, Ordering::Relaxed);
            }
            // Cookies written before the rescan starts are covered by it,
            // even when their own event was among those lost.
            let started = Instant::now();
            self.rescan_all_now();
            self.signal_cookies(&b.cookies);
            self.signal_registered_before(started);
            return Ok(());
        }
        let roots = self.store.read(crate::store::roots)?;
        let rules = self.rules();
        // 0. Case-only renames reported as two changed paths (FSEvents):
        // on a case-insensitive file system both names stat as the same
        // file, so only the folder's listing tells which one is there.
        let indexed = |p: &Path| self.store.read(|c| crate::store::resolve(c, p)).is_ok();
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
        let mut links = scan::LinkCounts::new();
        // Where this batch's renames put entries: the index learns of them
        // only when `ops` is applied, and a later rename may start or end
        // there (mv a x; mv x y, or mv a x; mv b x).
        let mut placed: HashMap<PathBuf, i64> = HashMap::new();
        // Entries those renames took away from where the index has them: an
        // entry the index still has at a name is not what the name holds
        // when a rename took it away (mv x y; mv a x).
        let mut moved: std::collections::HashSet<i64> = Default::default();
        for (from, to) in std::mem::take(&mut b.moves) {
            let in_index = |p: &Path| -> Option<i64> {
                self.store
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
            let meta = crate::platform::fs::lstat(&to);
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
                        self.store
                            .read(|c| scan::linked_under(c, old, &mut links))?;
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
                    if crate::platform::fs::is_dir(&to) {
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
            self.writer.send(ops)?;
            self.writer.flush()?;
        }
        // 2. Single entries, folder by folder.
        let mut groups: std::collections::BTreeMap<PathBuf, Vec<std::ffi::OsString>> =
            Default::default();
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
            let Some(root) = crate::store::root_of(&roots, &dir) else {
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
            if scan::through_symlink(&root_path, &dir) {
                // The folder was replaced by a symlink (or lies under one):
                // that change is in its parent's group; what the events say
                // of names inside it is not ours, and a stat through the
                // link would follow it.
                continue;
            }
            match self.store.read(|c| crate::store::resolve(c, &dir)) {
                Ok((_, dir_id)) => {
                    let found = self.store.read(|c| {
                        scan::apply_names(
                            &self.store,
                            c,
                            &self.writer,
                            dir_id,
                            &dir,
                            &names,
                            scan::Scope {
                                rules: &rules,
                                cross_filesystems: rules.cross_filesystems(&root_path),
                                watcher: watcher.map(|w| &**w),
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
        self.writer.flush()?;
        // Inodes whose own watch saw their link count change: a link made
        // or removed where the daemon cannot see it (outside the roots, in
        // a folder not scanned yet or just moved out).
        for inode in std::mem::take(&mut b.inodes) {
            links.entry(inode).or_default();
        }
        scan::refresh_links(&self.store, &self.writer, links)?;
        // 3. Whole scans: new folders (watched first, then listed) and
        // subtrees to recrawl.
        deep.extend(new_dirs);
        deep.sort();
        let mut done: Vec<PathBuf> = Vec::new();
        for d in deep {
            if done.iter().any(|x| d.starts_with(x)) {
                continue;
            }
            let Some(root) = crate::store::root_of(&roots, &d) else {
                continue;
            };
            let root_path = crate::platform::bytes::path_buf(&root.path);
            if !crate::platform::fs::is_dir(&d) && d != root_path
                || scan::through_symlink(&root_path, &d)
            {
                continue; // gone again (or a symlink now): its event follows
            }
            let target = match self.checked_target(root, &d) {
                Err(Runtime::RootGone { .. }) => continue,
                target => target?,
            };
            match self.scan_target(&target, &Progress::default()) {
                Ok(_) => done.push(d),
                // Gone between the check above and the scan's first stat:
                // as above, its event follows.
                Err(Error::Io(e))
                    if e.kind() == std::io::ErrorKind::NotFound
                        && !crate::platform::fs::is_dir(&target.start) =>
                {
                    tracing::debug!("{} vanished before its scan", target.start.display());
                }
                Err(e) => return Err(e),
            }
        }
        self.signal_cookies(&b.cookies);
        // After a large burst, give memory back as after a scan.
        let written = self.store.rows_written.load(Ordering::Relaxed);
        if written.saturating_sub(self.rows_at_idle.swap(written, Ordering::Relaxed)) > 10_000 {
            let _ = self.writer.send(vec![Op::Idle]);
        }
        Ok(())
    }
    /// Rescans the folders left unwatched by the watch limit.
    pub(super) fn poll_unwatched(&self) {
        let Some(watcher) = &self.watcher else { return };
        let Ok(roots) = self.store.read(crate::store::roots) else {
            return;
        };
        for top in watcher.polled_tops() {
            let Some(root) = crate::store::root_of(&roots, &top) else {
                watcher.forget_under(&top);
                continue;
            };
            let Ok(target) = self.checked_target(root, &top) else {
                continue;
            };
            if let Err(e) = self.scan_target(&target, &Progress::default()) {
                tracing::warn!("polling {} failed: {e}", top.display());
            }
        }
    }
}

/// Pairs of changed paths in one folder whose names differ only in case,
/// where the index has the one the folder no longer lists and the folder
/// lists the other: a case-only rename, applied as a rename (one row keeps
/// its id and its subtree). Each `listed` call lists a folder, so only
/// such pairs ask it.
pub(super) fn case_only_renames(
    changed: &std::collections::BTreeSet<PathBuf>,
    listed: impl Fn(&Path) -> bool,
    indexed: impl Fn(&Path) -> bool,
) -> Vec<(PathBuf, PathBuf)> {
    let mut by_folded: std::collections::BTreeMap<(PathBuf, String), Vec<&PathBuf>> =
        Default::default();
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
    crate::platform::fs::open_dir(dir)
        .and_then(crate::platform::fs::list)
        .is_ok_and(|(names, _)| names.iter().any(|(n, _)| n == name))
}

/// `p` with its prefix `from` replaced by `to` (unchanged when not under `from`).
pub(super) fn rebase(p: PathBuf, from: &Path, to: &Path) -> PathBuf {
    match p.strip_prefix(from) {
        Ok(rest) if rest.as_os_str().is_empty() => p,
        Ok(rest) => to.join(rest),
        Err(_) => p,
    }
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
