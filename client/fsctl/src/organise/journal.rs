//! The journal of applied plans: a SQLite file of the user who applies
//! them (`organise.db` under `FSINDEX_HOME`, else the per-user state
//! folder: `~/.local/state/fsindex` on Linux), never the daemon's index.
//! A machine-wide daemon runs as root; the moves run in the client, as the
//! user, and so does their record.
//!
//! Every step is recorded, with its source's inode, before the plan runs.
//! A change of a step's state is its own transaction with
//! `synchronous=FULL`, committed (fsynced) before the file-system call it
//! announces (a folder made or removed, each phase of a copy), so that
//! after a `kill -9` the last state says which call may have been in
//! flight; renames alone are recorded after, in batches (see `Later`),
//! and recognised by inode. One process at a time holds the journal
//! (an exclusive lock on `organise.lock`), so a plan being applied is
//! never taken for an interrupted one.

use std::fs::File;
use std::path::{Path, PathBuf};

use anyhow::Context;
use rusqlite::{Connection, OptionalExtension, params};

use super::check::{Step, StepKind};
use super::fsops::Fingerprint;
use crate::cmd::mcp::names::path_of;

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS plans(
    id INTEGER PRIMARY KEY,
    started_ns INTEGER NOT NULL,
    finished_ns INTEGER,
    origin TEXT NOT NULL,
    -- applying, applied, undoing, undone, partly-undone
    state TEXT NOT NULL,
    items INTEGER NOT NULL,
    note TEXT
);
CREATE TABLE IF NOT EXISTS steps(
    plan INTEGER NOT NULL REFERENCES plans(id),
    seq INTEGER NOT NULL,
    item INTEGER NOT NULL,
    -- mkdir, move, rmdir, keep; auto = a parent folder made on the way
    kind TEXT NOT NULL,
    auto INTEGER NOT NULL DEFAULT 0,
    src BLOB NOT NULL,
    dst BLOB NOT NULL,
    -- pending, started, done, skipped, failed
    state TEXT NOT NULL,
    -- a copy across file systems: copying, verified, placed
    phase TEXT,
    via TEXT,
    reason TEXT,
    done_order INTEGER,
    -- the source as the check saw it
    s_dev INTEGER, s_ino INTEGER, s_size INTEGER, s_mtime INTEGER, s_ctime INTEGER,
    s_mode INTEGER, s_dir INTEGER,
    -- the entry at the destination once done (what undo expects to find)
    a_dev INTEGER, a_ino INTEGER, a_size INTEGER, a_mtime INTEGER, a_ctime INTEGER,
    a_mode INTEGER, a_dir INTEGER,
    hash BLOB,
    -- null, started, undone, refused
    undo TEXT,
    undo_phase TEXT,
    undo_reason TEXT,
    PRIMARY KEY(plan, seq)
);
-- The next done_order and undo's newest-first walk, without a scan.
CREATE INDEX IF NOT EXISTS steps_done ON steps(plan, done_order);
";

/// The journal file and the lock that makes this process its one user.
pub struct Journal {
    conn: Connection,
    _lock: File,
    later: Later,
}

/// Renames made but not yet recorded done: recorded together, after one
/// `fsync` of each folder they changed, so that a plan of thousands of
/// moves does not pay two journal commits and two folder syncs for each.
/// A rename made and not recorded when the process dies is found at the
/// next start by its inode (the source's, recorded before the plan
/// began): at its destination, it is done.
#[derive(Default)]
struct Later {
    rows: Vec<(i64, i64, &'static str, Option<Fingerprint>, bool)>,
    dirs: std::collections::BTreeSet<PathBuf>,
    since: Option<std::time::Instant>,
}

/// How many renames, or how long, before they are recorded.
const LATER_ROWS: usize = 256;
const LATER_TIME: std::time::Duration = std::time::Duration::from_millis(250);

/// Where this user's journal lives.
pub fn default_dir() -> PathBuf {
    if let Some(home) = std::env::var_os("FSINDEX_HOME").filter(|h| !h.is_empty()) {
        return PathBuf::from(home);
    }
    match directories::ProjectDirs::from("", "", "fsindex") {
        Some(d) => d
            .state_dir()
            .unwrap_or_else(|| d.data_local_dir())
            .to_path_buf(),
        None => PathBuf::from(".fsindex"),
    }
}

/// A step as recorded.
#[derive(Debug, Clone)]
pub struct Row {
    pub plan: i64,
    pub seq: i64,
    pub item: usize,
    pub kind: StepKind,
    pub auto: bool,
    pub src: PathBuf,
    pub dst: PathBuf,
    pub state: String,
    pub phase: Option<String>,
    pub via: Option<String>,
    pub reason: Option<String>,
    pub seen: Option<Fingerprint>,
    pub after: Option<Fingerprint>,
    pub undo: Option<String>,
    pub undo_phase: Option<String>,
    pub undo_reason: Option<String>,
}

/// A plan as recorded.
#[derive(Debug, Clone)]
pub struct PlanRow {
    pub id: i64,
    pub started_ns: i64,
    pub finished_ns: Option<i64>,
    pub origin: String,
    pub state: String,
    pub items: i64,
    pub note: Option<String>,
}

fn bytes(p: &Path) -> Vec<u8> {
    p.as_os_str().as_encoded_bytes().to_vec()
}

pub fn now_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i64)
}

fn fp_cols(f: Option<&Fingerprint>) -> [Option<i64>; 7] {
    match f {
        None => [None; 7],
        Some(f) => [
            Some(f.dev as i64),
            Some(f.ino as i64),
            Some(f.size as i64),
            Some(f.mtime_ns),
            Some(f.ctime_ns),
            Some(i64::from(f.mode)),
            Some(i64::from(f.is_dir)),
        ],
    }
}

fn fp_from(r: &rusqlite::Row<'_>, first: usize) -> rusqlite::Result<Option<Fingerprint>> {
    let dev: Option<i64> = r.get(first)?;
    let Some(dev) = dev else { return Ok(None) };
    Ok(Some(Fingerprint {
        dev: dev as u64,
        ino: r.get::<_, i64>(first + 1)? as u64,
        size: r.get::<_, i64>(first + 2)? as u64,
        mtime_ns: r.get(first + 3)?,
        ctime_ns: r.get(first + 4)?,
        mode: r.get::<_, i64>(first + 5)? as u32,
        is_dir: r.get::<_, i64>(first + 6)? != 0,
    }))
}

const ROW_COLS: &str = "plan, seq, item, kind, auto, src, dst, state, phase, via, reason, \
     s_dev, s_ino, s_size, s_mtime, s_ctime, s_mode, s_dir, \
     a_dev, a_ino, a_size, a_mtime, a_ctime, a_mode, a_dir, undo, undo_phase, undo_reason";

fn row_from(r: &rusqlite::Row<'_>) -> rusqlite::Result<Row> {
    let kind: String = r.get(3)?;
    Ok(Row {
        plan: r.get(0)?,
        seq: r.get(1)?,
        item: r.get::<_, i64>(2)? as usize,
        kind: StepKind::parse(&kind).unwrap_or(StepKind::Keep),
        auto: r.get::<_, i64>(4)? != 0,
        src: path_of(r.get(5)?),
        dst: path_of(r.get(6)?),
        state: r.get(7)?,
        phase: r.get(8)?,
        via: r.get(9)?,
        reason: r.get(10)?,
        seen: fp_from(r, 11)?,
        after: fp_from(r, 18)?,
        undo: r.get(25)?,
        undo_phase: r.get(26)?,
        undo_reason: r.get(27)?,
    })
}

/// What `fsctl status` says about this user's plans, without taking the
/// journal or changing it: a plan left applying or undoing (being worked
/// on now, or interrupted and waiting for the next `fsctl organise`), and
/// the newest plan when a crash interrupted it. Nothing when there is no
/// journal or it cannot be read.
pub fn status_lines(dir: &Path) -> Vec<String> {
    let path = dir.join("organise.db");
    if !path.exists() {
        return Vec::new();
    }
    let busy = File::options()
        .write(true)
        .open(dir.join("organise.lock"))
        .is_ok_and(|f| f.try_lock().is_err());
    let Ok(conn) = Connection::open_with_flags(&path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
    else {
        return Vec::new();
    };
    let rows: Vec<(i64, String, Option<String>)> = conn
        .prepare("SELECT id, state, note FROM plans ORDER BY id")
        .and_then(|mut st| {
            st.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
                .collect()
        })
        .unwrap_or_default();
    let mut out = Vec::new();
    for (id, state, _) in &rows {
        if state == "applying" || state == "undoing" {
            out.push(if busy {
                format!("plan {id}: {state} now")
            } else {
                format!(
                    "plan {id}: interrupted while {state}; the next `fsctl organise` command finishes it"
                )
            });
        }
    }
    if let Some((id, state, Some(note))) = rows.last()
        && out.is_empty()
    {
        out.push(format!("plan {id}: {state} ({note})"));
    }
    out
}

impl Journal {
    /// Opens (creating) the journal in `dir` and takes its lock, waiting
    /// for another fsctl that holds it.
    pub fn open(dir: &Path) -> anyhow::Result<Journal> {
        if !dir.exists() {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("{}: cannot make the journal's folder", dir.display()))?;
            // A folder made here is this user's alone; one that exists
            // (FSINDEX_HOME) keeps its mode.
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700));
            }
        }
        let lock_path = dir.join("organise.lock");
        let lock = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .with_context(|| format!("{}: cannot open", lock_path.display()))?;
        if lock.try_lock().is_err() {
            eprintln!(
                "fsctl: another fsctl is applying or undoing a plan ({}); waiting",
                lock_path.display()
            );
            lock.lock()
                .with_context(|| format!("{}: cannot lock", lock_path.display()))?;
        }
        let path = dir.join("organise.db");
        let conn = Connection::open(&path)
            .with_context(|| format!("{}: cannot open the journal", path.display()))?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let _ = std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600));
        }
        conn.execute_batch(
            "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; PRAGMA busy_timeout=10000;",
        )?;
        conn.execute_batch(SCHEMA)?;
        Ok(Journal {
            conn,
            _lock: lock,
            later: Later::default(),
        })
    }

    /// A rename made (`undo`: made back), to be recorded done (undone)
    /// with the next [`Journal::flush`]; `dirs` are the folders it changed.
    pub fn done_later(
        &mut self,
        plan: i64,
        seq: i64,
        via: &'static str,
        after: Option<Fingerprint>,
        undo: bool,
        dirs: &[&Path],
    ) -> anyhow::Result<()> {
        self.later.rows.push((plan, seq, via, after, undo));
        self.later.dirs.extend(dirs.iter().map(|d| d.to_path_buf()));
        let since = *self.later.since.get_or_insert_with(std::time::Instant::now);
        if self.later.rows.len() >= LATER_ROWS || since.elapsed() >= LATER_TIME {
            self.flush()?;
        }
        Ok(())
    }

    /// Makes the renames made so far durable (their folders synced), then
    /// records them in one transaction.
    pub fn flush(&mut self) -> anyhow::Result<()> {
        if self.later.rows.is_empty() {
            return Ok(());
        }
        let later = std::mem::take(&mut self.later);
        for d in &later.dirs {
            let _ = super::fsops::sync_dir(d);
        }
        let tx = self.conn.transaction()?;
        for (plan, seq, via, after, undo) in &later.rows {
            if *undo {
                tx.execute(
                    "UPDATE steps SET undo = 'undone', undo_phase = NULL, undo_reason = NULL \
                     WHERE plan = ?1 AND seq = ?2",
                    params![plan, seq],
                )?;
            } else {
                let f = fp_cols(after.as_ref());
                tx.execute(
                    "UPDATE steps SET state = 'done', phase = NULL, via = ?3, \
                     a_dev = ?4, a_ino = ?5, a_size = ?6, a_mtime = ?7, a_ctime = ?8, a_mode = ?9, a_dir = ?10, \
                     done_order = (SELECT COALESCE(MAX(done_order), 0) + 1 FROM steps WHERE plan = ?1) \
                     WHERE plan = ?1 AND seq = ?2",
                    params![plan, seq, via, f[0], f[1], f[2], f[3], f[4], f[5], f[6]],
                )?;
            }
        }
        tx.commit()?;
        Ok(())
    }

    /// Records a plan and its steps, all pending; returns its id.
    pub fn begin(&mut self, origin: &str, items: usize, steps: &[Step]) -> anyhow::Result<i64> {
        let tx = self.conn.transaction()?;
        tx.execute(
            "INSERT INTO plans(started_ns, origin, state, items) VALUES (?1, ?2, 'applying', ?3)",
            params![now_ns(), origin, items as i64],
        )?;
        let id = tx.last_insert_rowid();
        {
            let mut ins = tx.prepare(
                "INSERT INTO steps(plan, seq, item, kind, src, dst, state, \
                 s_dev, s_ino, s_size, s_mtime, s_ctime, s_mode, s_dir) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'pending', ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
            )?;
            for (seq, s) in steps.iter().enumerate() {
                let f = fp_cols(s.seen.as_ref());
                ins.execute(params![
                    id,
                    seq as i64,
                    s.item as i64,
                    s.kind.name(),
                    bytes(&s.src),
                    bytes(&s.dst),
                    f[0],
                    f[1],
                    f[2],
                    f[3],
                    f[4],
                    f[5],
                    f[6]
                ])?;
            }
        }
        tx.commit()?;
        Ok(id)
    }

    /// Adds a step (a parent folder made on the way), already started.
    pub fn add_started(
        &mut self,
        plan: i64,
        item: usize,
        kind: StepKind,
        p: &Path,
    ) -> anyhow::Result<i64> {
        let seq: i64 = self.conn.query_row(
            "SELECT COALESCE(MAX(seq), -1) + 1 FROM steps WHERE plan = ?1",
            [plan],
            |r| r.get(0),
        )?;
        self.conn.execute(
            "INSERT INTO steps(plan, seq, item, kind, auto, src, dst, state) \
             VALUES (?1, ?2, ?3, ?4, 1, ?5, ?5, 'started')",
            params![plan, seq, item as i64, kind.name(), bytes(p)],
        )?;
        Ok(seq)
    }

    pub fn steps(&self, plan: i64) -> anyhow::Result<Vec<Row>> {
        let mut st = self.conn.prepare(&format!(
            "SELECT {ROW_COLS} FROM steps WHERE plan = ?1 ORDER BY seq"
        ))?;
        let rows = st.query_map([plan], row_from)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Done steps, the last done first (the order undo takes them in).
    pub fn done_steps_newest_first(&self, plan: i64) -> anyhow::Result<Vec<Row>> {
        let mut st = self.conn.prepare(&format!(
            "SELECT {ROW_COLS} FROM steps WHERE plan = ?1 AND state = 'done' \
             ORDER BY done_order DESC, seq DESC"
        ))?;
        let rows = st.query_map([plan], row_from)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    pub fn set_state(
        &self,
        plan: i64,
        seq: i64,
        state: &str,
        reason: Option<&str>,
    ) -> anyhow::Result<()> {
        self.conn.execute(
            "UPDATE steps SET state = ?3, reason = ?4, phase = NULL WHERE plan = ?1 AND seq = ?2",
            params![plan, seq, state, reason],
        )?;
        Ok(())
    }

    /// Marks a step started, with the source as seen right before.
    pub fn start(&self, plan: i64, seq: i64, seen: Option<&Fingerprint>) -> anyhow::Result<()> {
        let f = fp_cols(seen);
        self.conn.execute(
            "UPDATE steps SET state = 'started', phase = NULL, \
             s_dev = COALESCE(?3, s_dev), s_ino = COALESCE(?4, s_ino), s_size = COALESCE(?5, s_size), \
             s_mtime = COALESCE(?6, s_mtime), s_ctime = COALESCE(?7, s_ctime), \
             s_mode = COALESCE(?8, s_mode), s_dir = COALESCE(?9, s_dir) \
             WHERE plan = ?1 AND seq = ?2",
            params![plan, seq, f[0], f[1], f[2], f[3], f[4], f[5], f[6]],
        )?;
        Ok(())
    }

    pub fn set_phase(&self, plan: i64, seq: i64, phase: &str) -> anyhow::Result<()> {
        self.conn.execute(
            "UPDATE steps SET phase = ?3 WHERE plan = ?1 AND seq = ?2",
            params![plan, seq, phase],
        )?;
        Ok(())
    }

    /// Marks a step done, with what now stands at its destination.
    pub fn done(
        &self,
        plan: i64,
        seq: i64,
        via: &str,
        after: Option<&Fingerprint>,
        hash: Option<&[u8; 32]>,
    ) -> anyhow::Result<()> {
        let f = fp_cols(after);
        self.conn.execute(
            "UPDATE steps SET state = 'done', phase = NULL, via = ?3, \
             a_dev = ?4, a_ino = ?5, a_size = ?6, a_mtime = ?7, a_ctime = ?8, a_mode = ?9, a_dir = ?10, \
             hash = ?11, \
             done_order = (SELECT COALESCE(MAX(done_order), 0) + 1 FROM steps WHERE plan = ?1) \
             WHERE plan = ?1 AND seq = ?2",
            params![plan, seq, via, f[0], f[1], f[2], f[3], f[4], f[5], f[6], hash.map(|h| h.to_vec())],
        )?;
        Ok(())
    }

    pub fn set_undo(
        &self,
        plan: i64,
        seq: i64,
        undo: &str,
        phase: Option<&str>,
        reason: Option<&str>,
    ) -> anyhow::Result<()> {
        self.conn.execute(
            "UPDATE steps SET undo = ?3, undo_phase = ?4, undo_reason = ?5 WHERE plan = ?1 AND seq = ?2",
            params![plan, seq, undo, phase, reason],
        )?;
        Ok(())
    }

    pub fn set_plan(
        &self,
        plan: i64,
        state: &str,
        finished: bool,
        note: Option<&str>,
    ) -> anyhow::Result<()> {
        self.conn.execute(
            "UPDATE plans SET state = ?2, finished_ns = CASE WHEN ?3 THEN ?4 ELSE finished_ns END, \
             note = COALESCE(?5, note) WHERE id = ?1",
            params![plan, state, finished, now_ns(), note],
        )?;
        Ok(())
    }

    pub fn plans(&self) -> anyhow::Result<Vec<PlanRow>> {
        let mut st = self.conn.prepare(
            "SELECT id, started_ns, finished_ns, origin, state, items, note FROM plans ORDER BY id",
        )?;
        let rows = st.query_map([], |r| {
            Ok(PlanRow {
                id: r.get(0)?,
                started_ns: r.get(1)?,
                finished_ns: r.get(2)?,
                origin: r.get(3)?,
                state: r.get(4)?,
                items: r.get(5)?,
                note: r.get(6)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    pub fn plan(&self, id: i64) -> anyhow::Result<Option<PlanRow>> {
        Ok(self.plans()?.into_iter().find(|p| p.id == id))
    }

    /// The newest plan that undo can still act on.
    pub fn last_undoable(&self) -> anyhow::Result<Option<i64>> {
        Ok(self
            .conn
            .query_row(
                "SELECT id FROM plans WHERE state IN ('applied', 'partly-undone', 'undoing') \
                 ORDER BY id DESC LIMIT 1",
                [],
                |r| r.get(0),
            )
            .optional()?)
    }

    /// Counts of a plan's steps by state, and undo states.
    pub fn counts(&self, plan: i64) -> anyhow::Result<Vec<(String, i64)>> {
        let mut st = self.conn.prepare(
            "SELECT CASE WHEN undo IS NOT NULL THEN 'undo-' || undo ELSE state END, COUNT(*) \
             FROM steps WHERE plan = ?1 AND auto = 0 GROUP BY 1 ORDER BY 1",
        )?;
        let rows = st.query_map([plan], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}
