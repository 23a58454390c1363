//! Link counts kept current: a link made or removed anywhere changes the
//! link count (and the ctime) of every other path of the inode, and the
//! kernel tells only the folder where it happened. A walk or a watcher
//! batch notes the inodes with several links whose rows it changes
//! ([`Links`]); [`refresh_links`] then re-reads every indexed path of
//! them.

use crate::LockOk;
use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

use rusqlite::Connection;

use super::{Known, row_from_stat, unchanged};
use crate::Error;
use crate::platform::fs as pfs;
use crate::store::{EntryRow, Kind, Op, Store, WriteHandle, load_row, scan_reads};

/// Inodes (dev, ino) whose other paths need their link counts refreshed,
/// each with the largest link count a fresh `lstat` reported for it (0:
/// only a deleted link was seen).
pub(crate) type LinkCounts = HashMap<(u64, u64), u64>;

/// Inodes with several links whose rows changed, collected so that the
/// other indexed paths of each inode get their link counts refreshed.
pub(in crate::ingest) struct Links {
    on: bool,
    inodes: Mutex<LinkCounts>,
}

impl Links {
    pub(in crate::ingest) fn new(on: bool) -> Links {
        Links {
            on,
            inodes: Mutex::new(HashMap::new()),
        }
    }

    /// Notes an entry written (new `row`) or deleted (`old`) when either
    /// side says it has several links.
    pub(in crate::ingest) fn note(&self, row: Option<&EntryRow>, old: Option<&Known>) {
        if !self.on {
            return;
        }
        let mut set = self.inodes.lock_ok();
        if let Some(r) = row
            && r.kind != Kind::Dir
            && (r.nlink > 1 || old.is_some_and(|k| k.nlink > 1))
        {
            let n = set.entry((r.dev, r.ino)).or_default();
            *n = (*n).max(r.nlink);
        }
        if let Some(k) = old
            && k.kind != Kind::Dir
            && k.nlink > 1
        {
            set.entry((k.dev, k.ino)).or_default();
        }
    }

    /// Notes the multi-link files of a folder's subtree, before it is deleted.
    pub(in crate::ingest) fn note_subtree(&self, conn: &Connection, dir: i64) -> Result<(), Error> {
        if !self.on {
            return Ok(());
        }
        let mut set = self.inodes.lock_ok();
        linked_under(conn, dir, &mut set)
    }

    pub(in crate::ingest) fn take(&self) -> LinkCounts {
        std::mem::take(&mut *self.inodes.lock_ok())
    }
}

/// Adds the inodes with several links of entry `id` (a file, or every file
/// under a folder) to `set`: about to be deleted, they lose a link.
pub(crate) fn linked_under(conn: &Connection, id: i64, set: &mut LinkCounts) -> Result<(), Error> {
    for inode in scan_reads::linked_inodes_under(conn, id)? {
        set.entry(inode).or_default();
    }
    Ok(())
}

/// How many refreshes an inode with an out-of-date path is tried again in.
const RELINK_TRIES: u8 = 8;

/// Re-reads every indexed path of the given inodes and writes what
/// changed: a link made or removed anywhere changes the link count (and the
/// ctime) of every other path of the inode, and the kernel tells only the
/// folder where it happened. Returns the rows updated.
pub(crate) fn refresh_links(
    store: &Store,
    writer: &WriteHandle,
    mut inodes: LinkCounts,
) -> Result<u64, Error> {
    // Inodes whose paths were out of date at an earlier refresh (see below).
    let retried = std::mem::take(&mut *store.relink.lock_ok());
    for &inode in retried.keys() {
        inodes.entry(inode).or_default();
    }
    if inodes.is_empty() {
        return Ok(0);
    }
    let conn = store.open_reader()?;
    let mut ids: HashSet<i64> = HashSet::new();
    // Inodes with fewer indexed multi-link paths than links.
    let mut short: HashSet<(u64, u64)> = HashSet::new();
    for (&(dev, ino), &links) in &inodes {
        let mut n = 0u64;
        for id in scan_reads::linked_paths(&conn, dev, ino)? {
            ids.insert(id);
            n += 1;
        }
        if n < links {
            short.insert((dev, ino));
        }
    }
    // Paths whose row still says one link (a link was made elsewhere) are
    // not in the multi-link index: when some link is unaccounted for, one
    // pass over the table finds them, for all such inodes at once. (It also
    // runs when the missing links are outside every root.)
    let inos: Vec<u64> = short.iter().map(|(_, i)| *i).collect();
    let devs: HashSet<u64> = short.iter().map(|(d, _)| *d).collect();
    if !short.is_empty() {
        for (id, dev, ino) in scan_reads::single_link_entries(&conn, &inos)? {
            if devs.contains(&dev) && short.contains(&(dev, ino)) {
                ids.insert(id);
            }
        }
    }
    // A few times: a path the index keeps is out of date only until its
    // event is applied.
    let again = |old: &Known| {
        let tries = retried.get(&(old.dev, old.ino)).copied().unwrap_or(0);
        if tries < RELINK_TRIES {
            store.relink.lock_ok().insert((old.dev, old.ino), tries + 1);
        }
    };
    let mut ops = Vec::new();
    for id in ids {
        let (Some(old), Some(path)) = (load_row(&conn, id)?, scan_reads::path_of(&conn, id)?)
        else {
            continue;
        };
        // Gone or replaced: the event for that is on its way. Or a folder
        // above it was renamed and the index does not know it yet: a later
        // refresh, after that rename is applied, tries again.
        let Ok(s) = pfs::lstat(&path) else {
            again(&old);
            continue;
        };
        if s.ino != old.ino || s.dev != old.dev || s.kind != old.kind {
            again(&old);
            continue;
        }
        let mut row = row_from_stat(id, None, Vec::new(), &s);
        row.flags = old.flags;
        if !unchanged(&old, &row) {
            ops.push(Op::Update(row));
        }
    }
    let n = ops.len() as u64;
    if n > 0 {
        writer.send(ops)?;
        writer.flush()?;
    }
    Ok(n)
}
