//! Applying a checked plan step by step, finishing a plan a crash
//! interrupted, and undoing one.
//!
//! Each step is re-checked right before it runs: a source that is gone or
//! changed since the check, or a destination that appeared, skips the
//! step with the reason. Every step is in the journal, with its source's
//! inode, before the first one runs; a folder made or removed and each
//! phase of a copy are committed before the call, renames are recorded in
//! batches after it (`Journal::done_later`). So at the next start (any
//! `fsctl organise` command) the state of an interrupted step is read from
//! the journal and the file system, and the plan is finished: a rename
//! that happened (its inode at the destination) is recorded, one that did
//! not is run; a copy that was not yet checked is thrown away and made
//! again; one that was is put in place and its source deleted. A plan is therefore never half-known: every step ends
//! done, skipped with a reason, or failed with a reason.
//!
//! Undo takes the done steps newest first. Each entry goes back only if
//! it is exactly what the plan left (same inode, size, mtime and ctime;
//! for a folder the same inode) and its old place is free; otherwise that
//! step is refused with the reason and the rest go on.

use std::io;
use std::path::{Path, PathBuf};

use anyhow::bail;
use serde::Serialize;

use super::check::{Checked, StepKind};
use super::fsops::{self, Fingerprint, Via};
use super::journal::{Journal, Row};
use crate::cmd::mcp::names::shown_path;

/// What happened to one step.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Outcome {
    pub item: usize,
    pub action: String,
    pub from: String,
    pub to: String,
    /// done, skipped, failed (apply); undone, refused (undo).
    pub state: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub via: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// What an apply or an undo did.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    pub id: i64,
    /// The plan's state now: applied, undone, partly-undone.
    pub state: String,
    pub done: u64,
    pub skipped: u64,
    pub failed: u64,
    pub steps: Vec<Outcome>,
}

fn outcome(r: &Row, state: &str, reason: Option<String>) -> Outcome {
    Outcome {
        item: r.item,
        action: if r.auto {
            "mkdir (parent)".into()
        } else {
            r.kind.name().into()
        },
        from: shown_path(&r.src),
        to: shown_path(&r.dst),
        state: state.into(),
        via: r.via.clone(),
        reason,
    }
}

fn temp_beside(dst: &Path, plan: i64, seq: i64, undo: bool) -> PathBuf {
    let name = format!(
        ".fsindex-organise-{plan}-{seq}{}.part",
        if undo { "-undo" } else { "" }
    );
    dst.parent().unwrap_or(Path::new("/")).join(name)
}

/// Applies a checked plan; refuses one that contradicts itself.
pub fn apply(j: &mut Journal, c: &Checked, origin: &str, items: usize) -> anyhow::Result<Report> {
    if c.blocking() {
        bail!("the plan contradicts itself: nothing was applied (see `fsctl organise check`)");
    }
    let id = j.begin(origin, items, &c.steps)?;
    run_pending(j, id)?;
    j.set_plan(id, "applied", true, None)?;
    report(j, id, false)
}

/// The plan's steps as outcomes.
pub fn report(j: &Journal, id: i64, undo: bool) -> anyhow::Result<Report> {
    let plan = j.plan(id)?.map(|p| p.state).unwrap_or_default();
    let mut r = Report {
        id,
        state: plan,
        done: 0,
        skipped: 0,
        failed: 0,
        steps: Vec::new(),
    };
    for row in j.steps(id)? {
        let o = if undo {
            match row.undo.as_deref() {
                Some("undone") => {
                    r.done += 1;
                    outcome(&row, "undone", None)
                }
                Some("refused") => {
                    r.skipped += 1;
                    outcome(&row, "refused", row.undo_reason.clone())
                }
                _ => continue,
            }
        } else {
            match row.state.as_str() {
                "done" => r.done += 1,
                "skipped" => r.skipped += 1,
                _ => r.failed += 1,
            }
            outcome(&row, &row.state, row.reason.clone())
        };
        r.steps.push(o);
    }
    Ok(r)
}

/// Runs every pending step in order. A move whose destination another
/// pending step frees waits for that one; what still waits at the end (a
/// cycle: a swap) is skipped.
fn run_pending(j: &mut Journal, plan: i64) -> anyhow::Result<()> {
    loop {
        let pending: Vec<Row> = j
            .steps(plan)?
            .into_iter()
            .filter(|r| r.state == "pending")
            .collect();
        if pending.is_empty() {
            return Ok(());
        }
        let mut progressed = false;
        let sources: std::collections::HashSet<&Path> = pending
            .iter()
            .filter(|o| o.kind == StepKind::Move)
            .map(|o| o.src.as_path())
            .collect();
        for r in &pending {
            let freed_later = r.kind == StepKind::Move
                && r.dst != r.src
                && sources.contains(r.dst.as_path())
                && std::fs::symlink_metadata(&r.dst).is_ok();
            if freed_later {
                continue;
            }
            run_step(j, r)?;
            progressed = true;
        }
        j.flush()?;
        if !progressed {
            for r in &pending {
                j.set_state(
                    plan,
                    r.seq,
                    "skipped",
                    Some("its destination is the source of another step waiting for it (a cycle, such as a swap): go through a temporary name"),
                )?;
            }
        }
    }
}

/// Makes the missing folders above `p`, each a journalled step.
fn make_parents(j: &mut Journal, r: &Row, p: &Path) -> anyhow::Result<Result<(), String>> {
    let mut missing = Vec::new();
    let mut up = p.parent().map(Path::to_path_buf);
    while let Some(u) = up {
        match std::fs::symlink_metadata(&u) {
            Ok(m) if m.is_dir() => break,
            Ok(_) => return Ok(Err(format!("{} is not a folder", shown_path(&u)))),
            Err(_) => {
                up = u.parent().map(Path::to_path_buf);
                missing.push(u);
            }
        }
    }
    for dir in missing.into_iter().rev() {
        let seq = j.add_started(r.plan, r.item, StepKind::Mkdir, &dir)?;
        match std::fs::create_dir(&dir) {
            Ok(()) => {
                if let Some(parent) = dir.parent() {
                    let _ = fsops::sync_dir(parent);
                }
                j.done(r.plan, seq, "mkdir", Fingerprint::at(&dir).as_ref(), None)?;
            }
            Err(e) => {
                j.set_state(r.plan, seq, "failed", Some(&e.to_string()))?;
                return Ok(Err(format!("cannot make {}: {e}", shown_path(&dir))));
            }
        }
    }
    Ok(Ok(()))
}

fn run_step(j: &mut Journal, r: &Row) -> anyhow::Result<()> {
    let (plan, seq) = (r.plan, r.seq);
    if r.kind != StepKind::Move {
        // Recorded in the order they ran.
        j.flush()?;
    }
    let now = Fingerprint::at(&r.src);
    match r.kind {
        StepKind::Keep => match now {
            Some(_) => j.done(plan, seq, "keep", now.as_ref(), None)?,
            None => j.set_state(plan, seq, "skipped", Some("it is gone"))?,
        },
        StepKind::Mkdir => {
            if let Some(f) = now {
                let why = if f.is_dir {
                    "exists already (made by someone else since the check)"
                } else {
                    "a file has that name now"
                };
                j.set_state(plan, seq, "skipped", Some(why))?;
                return Ok(());
            }
            if let Err(why) = make_parents(j, r, &r.src)? {
                j.set_state(plan, seq, "skipped", Some(&why))?;
                return Ok(());
            }
            j.start(plan, seq, None)?;
            match std::fs::create_dir(&r.src) {
                Ok(()) => {
                    if let Some(parent) = r.src.parent() {
                        let _ = fsops::sync_dir(parent);
                    }
                    j.done(plan, seq, "mkdir", Fingerprint::at(&r.src).as_ref(), None)?;
                }
                Err(e) => j.set_state(plan, seq, "failed", Some(&e.to_string()))?,
            }
        }
        StepKind::RmdirIfEmpty => {
            let Some(f) = now else {
                j.set_state(plan, seq, "skipped", Some("it is gone"))?;
                return Ok(());
            };
            let left = std::fs::read_dir(&r.src).map(|d| d.count()).unwrap_or(0);
            if left > 0 {
                let why = format!("{left} entries stayed in it (collisions, or added since)");
                j.set_state(plan, seq, "skipped", Some(&why))?;
                return Ok(());
            }
            // The folder as the check saw it (its mtime before the merge
            // emptied it) stays recorded: undo restores that.
            let _ = f;
            j.start(plan, seq, None)?;
            match std::fs::remove_dir(&r.src) {
                Ok(()) => {
                    if let Some(parent) = r.src.parent() {
                        let _ = fsops::sync_dir(parent);
                    }
                    j.done(plan, seq, "rmdir", None, None)?;
                }
                Err(e) => j.set_state(plan, seq, "failed", Some(&e.to_string()))?,
            }
        }
        StepKind::Move => {
            let Some(f) = now else {
                j.set_state(plan, seq, "skipped", Some("the source is gone"))?;
                return Ok(());
            };
            if let Some(seen) = &r.seen
                && !seen.unchanged(&f)
            {
                let why = format!("the source changed since the check: {}", seen.change(&f));
                j.set_state(plan, seq, "skipped", Some(&why))?;
                return Ok(());
            }
            if std::fs::symlink_metadata(&r.dst).is_ok() {
                j.set_state(
                    plan,
                    seq,
                    "skipped",
                    Some("the destination exists (it appeared since the check)"),
                )?;
                return Ok(());
            }
            if let Err(why) = make_parents(j, r, &r.dst)? {
                j.set_state(plan, seq, "skipped", Some(&why))?;
                return Ok(());
            }
            // No commit before a rename: one that happened is found by
            // its inode at the next start (see `Journal::done_later`).
            move_entry(j, r, &f, false)?;
        }
    }
    Ok(())
}

/// Moves `r.src` to `r.dst` (or back, for undo), journalled. `f` is the
/// entry as seen right before.
fn move_entry(j: &mut Journal, r: &Row, f: &Fingerprint, undo: bool) -> anyhow::Result<()> {
    let (from, to) = if undo {
        (&r.dst, &r.src)
    } else {
        (&r.src, &r.dst)
    };
    let (plan, seq) = (r.plan, r.seq);
    let fail = |j: &Journal, why: String| -> anyhow::Result<()> {
        if undo {
            j.set_undo(plan, seq, "refused", None, Some(&why))
        } else {
            j.set_state(plan, seq, "failed", Some(&why))
        }
    };
    match fsops::rename_noreplace(from, to) {
        Ok(via) => {
            if f.is_dir {
                // Moving a folder to another parent may touch its mtime.
                let _ = fsops::set_mtime(to, f.mtime_ns);
            }
            let dirs: Vec<&Path> = [to.parent(), from.parent()].into_iter().flatten().collect();
            j.done_later(r.plan, r.seq, via.name(), Fingerprint::at(to), undo, &dirs)
        }
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
            let why = format!("{} exists now: nothing was replaced", shown_path(to));
            if undo {
                j.set_undo(plan, seq, "refused", None, Some(&why))
            } else {
                j.set_state(plan, seq, "skipped", Some(&why))
            }
        }
        Err(e) if fsops::is_cross_device(&e) => {
            j.flush()?;
            if !undo {
                j.start(plan, seq, Some(f))?;
            }
            copy_across(j, r, from, to, undo)
        }
        Err(e) => fail(j, e.to_string()),
    }
}

fn set_phase(j: &Journal, r: &Row, undo: bool, phase: &str) -> anyhow::Result<()> {
    if undo {
        j.set_undo(r.plan, r.seq, "started", Some(phase), None)
    } else {
        j.set_phase(r.plan, r.seq, phase)
    }
}

/// Across file systems: copy into a temporary name beside the
/// destination, check, put in place, then delete the source.
fn copy_across(j: &mut Journal, r: &Row, from: &Path, to: &Path, undo: bool) -> anyhow::Result<()> {
    let tmp = temp_beside(to, r.plan, r.seq, undo);
    fsops::remove_all(&tmp)?;
    set_phase(j, r, undo, "copying")?;
    let hash = match fsops::copy_checked(from, &tmp) {
        Ok(h) => h,
        Err(e) => {
            let _ = fsops::remove_all(&tmp);
            let why = format!("copying to another file system failed: {e}");
            return if undo {
                j.set_undo(r.plan, r.seq, "refused", None, Some(&why))
            } else {
                j.set_state(r.plan, r.seq, "failed", Some(&why))
            };
        }
    };
    if let Some(p) = to.parent() {
        fsops::sync_dir(p)?;
    }
    set_phase(j, r, undo, "verified")?;
    place_and_delete(j, r, &tmp, from, to, undo, hash)
}

/// The last two phases of a copy: the checked copy renamed into place,
/// then the source deleted.
fn place_and_delete(
    j: &mut Journal,
    r: &Row,
    tmp: &Path,
    from: &Path,
    to: &Path,
    undo: bool,
    hash: Option<[u8; 32]>,
) -> anyhow::Result<()> {
    if std::fs::symlink_metadata(tmp).is_ok() {
        match fsops::rename_noreplace(tmp, to) {
            Ok(_) => {}
            Err(e) => {
                let _ = fsops::remove_all(tmp);
                let why = format!("{}: {e}: nothing was replaced", shown_path(to));
                return if undo {
                    j.set_undo(r.plan, r.seq, "refused", None, Some(&why))
                } else {
                    j.set_state(r.plan, r.seq, "skipped", Some(&why))
                };
            }
        }
        if let Some(p) = to.parent() {
            fsops::sync_dir(p)?;
        }
    }
    set_phase(j, r, undo, "placed")?;
    fsops::remove_all(from)?;
    if let Some(p) = from.parent() {
        let _ = fsops::sync_dir(p);
    }
    finish(j, r, Via::Copy, to, hash, undo)
}

fn finish(
    j: &mut Journal,
    r: &Row,
    via: Via,
    to: &Path,
    hash: Option<[u8; 32]>,
    undo: bool,
) -> anyhow::Result<()> {
    if undo {
        j.set_undo(r.plan, r.seq, "undone", None, None)
    } else {
        j.done(
            r.plan,
            r.seq,
            via.name(),
            Fingerprint::at(to).as_ref(),
            hash.as_ref(),
        )
    }
}

/// Finishes every plan a crash left applying or undoing; one line per
/// plan finished.
pub fn recover(j: &mut Journal) -> anyhow::Result<Vec<String>> {
    let mut lines = Vec::new();
    for p in j.plans()? {
        match p.state.as_str() {
            "applying" => {
                for r in j.steps(p.id)? {
                    if r.state == "started" {
                        settle_started(j, &r)?;
                    } else if r.state == "pending"
                        && r.kind == StepKind::Move
                        && same_entry(Fingerprint::at(&r.dst).as_ref(), r.seen.as_ref())
                    {
                        // Renamed by a process that died before recording it
                        // (its source may hold what a later rename put there).
                        j.done(
                            p.id,
                            r.seq,
                            "rename",
                            Fingerprint::at(&r.dst).as_ref(),
                            None,
                        )?;
                    }
                }
                run_pending(j, p.id)?;
                let note = format!(
                    "interrupted while applying; finished at the next start ({})",
                    crate::output::rfc3339(super::journal::now_ns())
                );
                j.set_plan(p.id, "applied", true, Some(&note))?;
                lines.push(format!("plan {}: {note}", p.id));
            }
            "undoing" => {
                undo_steps(j, p.id)?;
                let note = format!(
                    "interrupted while undoing; finished at the next start ({})",
                    crate::output::rfc3339(super::journal::now_ns())
                );
                let state = undo_state(j, p.id)?;
                j.set_plan(p.id, &state, true, Some(&note))?;
                lines.push(format!("plan {}: {note}", p.id));
            }
            _ => {}
        }
    }
    Ok(lines)
}

/// The same inode (a rename keeps it).
fn same_entry(a: Option<&Fingerprint>, b: Option<&Fingerprint>) -> bool {
    matches!((a, b), (Some(a), Some(b)) if a.dev == b.dev && a.ino == b.ino)
}

/// A step whose call may or may not have happened: decided from the file
/// system, then done, or pending again.
fn settle_started(j: &mut Journal, r: &Row) -> anyhow::Result<()> {
    let (plan, seq) = (r.plan, r.seq);
    let src = Fingerprint::at(&r.src);
    match r.kind {
        StepKind::Keep => j.set_state(plan, seq, "pending", None)?,
        StepKind::Mkdir => match src {
            Some(f) if f.is_dir => j.done(plan, seq, "mkdir", Some(&f), None)?,
            _ if r.auto => {
                j.set_state(plan, seq, "skipped", Some("interrupted before it was made"))?
            }
            _ => j.set_state(plan, seq, "pending", None)?,
        },
        StepKind::RmdirIfEmpty => match src {
            None => j.done(plan, seq, "rmdir", None, None)?,
            Some(_) => j.set_state(plan, seq, "pending", None)?,
        },
        StepKind::Move => {
            let same = |a: &Option<Fingerprint>| match (a, &r.seen) {
                (Some(a), Some(s)) => a.dev == s.dev && a.ino == s.ino,
                _ => false,
            };
            match r.phase.as_deref() {
                None => {
                    if same(&src) {
                        // The rename did not happen: run it again.
                        j.set_state(plan, seq, "pending", None)?;
                    } else if same(&Fingerprint::at(&r.dst)) {
                        j.done(plan, seq, "rename", Fingerprint::at(&r.dst).as_ref(), None)?;
                    } else {
                        j.set_state(plan, seq, "failed", Some("interrupted, and the entry is now neither at its source nor at its destination (moved by something else)"))?;
                    }
                }
                Some("copying") => {
                    fsops::remove_all(&temp_beside(&r.dst, plan, seq, false))?;
                    j.set_state(plan, seq, "pending", None)?;
                }
                Some("verified") | Some("placed") => {
                    let tmp = temp_beside(&r.dst, plan, seq, false);
                    place_and_delete(j, r, &tmp, &r.src, &r.dst, false, None)?;
                }
                Some(other) => bail!("journal: unknown phase {other}"),
            }
        }
    }
    Ok(())
}

/// Undoes a plan: every done step, newest first.
pub fn undo(j: &mut Journal, id: i64) -> anyhow::Result<Report> {
    let Some(p) = j.plan(id)? else {
        bail!("no plan {id} in the journal (see `fsctl organise history`)");
    };
    match p.state.as_str() {
        "applied" | "partly-undone" | "undoing" => {}
        "undone" => bail!("plan {id} is undone already"),
        other => bail!("plan {id} is {other}: it cannot be undone"),
    }
    j.set_plan(id, "undoing", false, None)?;
    undo_steps(j, id)?;
    let state = undo_state(j, id)?;
    j.set_plan(id, &state, true, None)?;
    report(j, id, true)
}

fn undo_state(j: &Journal, id: i64) -> anyhow::Result<String> {
    let refused = j
        .steps(id)?
        .iter()
        .any(|r| r.state == "done" && r.undo.as_deref() != Some("undone"));
    Ok(if refused { "partly-undone" } else { "undone" }.into())
}

fn undo_steps(j: &mut Journal, id: i64) -> anyhow::Result<()> {
    let rows = j.done_steps_newest_first(id)?;
    let mut remade: Vec<(PathBuf, i64)> = Vec::new();
    for r in rows {
        // Moved back by a process that died before recording it.
        if r.kind == StepKind::Move
            && r.undo.as_deref() != Some("undone")
            && same_entry(Fingerprint::at(&r.src).as_ref(), r.after.as_ref())
        {
            j.set_undo(r.plan, r.seq, "undone", None, None)?;
            continue;
        }
        // Refused before: tried again (what was in the way may be gone).
        let settled = r.undo.as_deref() == Some("started") && settle_undo_started(j, &r)?;
        if settled || r.undo.as_deref() == Some("undone") {
            continue;
        }
        undo_step(j, &r, &mut remade)?;
    }
    j.flush()?;
    // Moves back into a folder undo made again changed its mtime.
    for (dir, mtime) in remade {
        let _ = fsops::set_mtime(&dir, mtime);
    }
    Ok(())
}

/// An undo step a crash interrupted; true when it is settled (undone).
fn settle_undo_started(j: &mut Journal, r: &Row) -> anyhow::Result<bool> {
    if r.kind != StepKind::Move {
        return Ok(false);
    }
    let (plan, seq) = (r.plan, r.seq);
    let same = |a: Option<Fingerprint>| match (a, &r.after) {
        (Some(a), Some(s)) => a.dev == s.dev && a.ino == s.ino,
        _ => false,
    };
    match r.undo_phase.as_deref() {
        Some("copying") => {
            fsops::remove_all(&temp_beside(&r.src, plan, seq, true))?;
            j.set_undo(plan, seq, "pending", None, None)?;
            Ok(false)
        }
        Some("verified") | Some("placed") => {
            let tmp = temp_beside(&r.src, plan, seq, true);
            place_and_delete(j, r, &tmp, &r.dst, &r.src, true, None)?;
            Ok(true)
        }
        _ => {
            if same(Fingerprint::at(&r.dst)) {
                Ok(false)
            } else if Fingerprint::at(&r.src).is_some() && Fingerprint::at(&r.dst).is_none() {
                j.set_undo(plan, seq, "undone", None, None)?;
                Ok(true)
            } else {
                Ok(false)
            }
        }
    }
}

fn undo_step(j: &mut Journal, r: &Row, remade: &mut Vec<(PathBuf, i64)>) -> anyhow::Result<()> {
    let (plan, seq) = (r.plan, r.seq);
    let refuse = |j: &Journal, why: String| j.set_undo(plan, seq, "refused", None, Some(&why));
    match r.kind {
        StepKind::Keep => j.set_undo(plan, seq, "undone", None, None),
        StepKind::Mkdir => match fsops::is_empty_dir(&r.src) {
            None => j.set_undo(plan, seq, "undone", None, None),
            Some(false) => refuse(
                j,
                format!(
                    "{} is not empty: it holds entries made since",
                    shown_path(&r.src)
                ),
            ),
            Some(true) => match std::fs::remove_dir(&r.src) {
                Ok(()) => j.set_undo(plan, seq, "undone", None, None),
                Err(e) => refuse(j, e.to_string()),
            },
        },
        StepKind::RmdirIfEmpty => {
            if let Some(f) = Fingerprint::at(&r.src) {
                if f.is_dir {
                    return j.set_undo(plan, seq, "undone", None, None);
                }
                return refuse(j, format!("{} is a file now", shown_path(&r.src)));
            }
            match std::fs::create_dir(&r.src) {
                Ok(()) => {
                    if let Some(seen) = &r.seen {
                        #[cfg(unix)]
                        {
                            use std::os::unix::fs::PermissionsExt;
                            let _ = std::fs::set_permissions(
                                &r.src,
                                std::fs::Permissions::from_mode(seen.mode & 0o7777),
                            );
                        }
                        remade.push((r.src.clone(), seen.mtime_ns));
                    }
                    j.set_undo(plan, seq, "undone", None, None)
                }
                Err(e) => refuse(j, e.to_string()),
            }
        }
        StepKind::Move => {
            let Some(now) = Fingerprint::at(&r.dst) else {
                return refuse(j, format!("{} is gone", shown_path(&r.dst)));
            };
            if let Some(after) = &r.after
                && !after.unchanged(&now)
            {
                return refuse(
                    j,
                    format!(
                        "{} changed since the plan: {}",
                        shown_path(&r.dst),
                        after.change(&now)
                    ),
                );
            }
            if std::fs::symlink_metadata(&r.src).is_ok() {
                return refuse(
                    j,
                    format!("{} exists again: nothing was replaced", shown_path(&r.src)),
                );
            }
            if let Some(parent) = r.src.parent()
                && std::fs::symlink_metadata(parent).is_err()
                && let Err(e) = std::fs::create_dir_all(parent)
            {
                return refuse(j, format!("cannot make {}: {e}", shown_path(parent)));
            }
            move_entry(j, r, &now, true)?;
            // The original mtime, whatever the way back did to it.
            if let Some(seen) = &r.seen
                && Fingerprint::at(&r.src).is_some()
            {
                let _ = fsops::set_mtime(&r.src, seen.mtime_ns);
            }
            Ok(())
        }
    }
}
