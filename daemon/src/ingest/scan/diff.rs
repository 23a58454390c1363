//! What `verify` reports: the reconcile's findings turned into
//! differences between the disk and the index, in words, instead of
//! changes for the writer.

use crate::LockOk;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicI64, Ordering};

use super::{Found, Known, Sink};
use crate::Error;
use crate::store::{EntryRow, FLAG_UNREADABLE, Kind};

/// A difference between the disk and the index, as `verify` reports it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Difference {
    pub kind: DiffKind,
    pub path: PathBuf,
    /// What differs, in words (e.g. "size 10 -> 12").
    pub detail: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DiffKind {
    /// On disk, not in the index.
    Missing,
    /// In the index, not on disk.
    Extra,
    /// In both, with different metadata or type.
    Stale,
}

/// Collects differences instead of writing them.
#[derive(Default)]
pub(super) struct VerifySink {
    next_id: AtomicI64,
    pub(super) found: Mutex<Vec<Difference>>,
    /// Where each `Extra` path is in `found`: a folder that replaced a
    /// file is found missing later (when it is listed), and the two are one
    /// change of type.
    extra_at: Mutex<HashMap<PathBuf, usize>>,
}

fn kind_name(k: Kind) -> &'static str {
    match k {
        Kind::File => "file",
        Kind::Dir => "folder",
        Kind::Symlink => "symlink",
        Kind::Other => "special file",
    }
}

fn what_differs(k: &Known, row: &EntryRow) -> String {
    let mut what = Vec::new();
    if k.size != row.size {
        what.push(format!("size {} -> {}", k.size, row.size));
    }
    if k.mtime_ns != row.mtime_ns {
        what.push(format!("mtime {} -> {}", k.mtime_ns, row.mtime_ns));
    }
    if k.ino != row.ino {
        what.push(format!("inode {} -> {}", k.ino, row.ino));
    }
    if k.nlink != row.nlink {
        what.push(format!("links {} -> {}", k.nlink, row.nlink));
    }
    if k.blocks != row.blocks {
        what.push(format!("blocks {} -> {}", k.blocks, row.blocks));
    }
    if k.mode != row.mode {
        what.push(format!(
            "mode {:o} -> {:o}",
            k.mode & 0o7777,
            row.mode & 0o7777
        ));
    }
    if k.flags != row.flags {
        what.push(format!(
            "readable {} -> {}",
            k.flags & FLAG_UNREADABLE == 0,
            row.flags & FLAG_UNREADABLE == 0
        ));
    }
    what.join(", ")
}

impl Sink for VerifySink {
    fn wants_paths(&self) -> bool {
        true
    }
    fn new_id(&self) -> i64 {
        self.next_id.fetch_sub(1, Ordering::Relaxed) - 1
    }
    fn emit(&self, found: Vec<Found>) -> Result<(), Error> {
        let mut out = self.found.lock_ok();
        let mut extra_at = self.extra_at.lock_ok();
        for f in found {
            match f {
                Found::Insert(row, path) => {
                    // A delete and an insert of one path is a change of type.
                    if let Some(at) = extra_at.remove(&path) {
                        let d = &mut out[at];
                        d.kind = DiffKind::Stale;
                        d.detail = format!("type {} -> {}", d.detail, kind_name(row.kind));
                        continue;
                    }
                    out.push(Difference {
                        kind: DiffKind::Missing,
                        path,
                        detail: kind_name(row.kind).into(),
                    });
                }
                Found::Update(row, old, path) => out.push(Difference {
                    kind: DiffKind::Stale,
                    path,
                    detail: old.map(|k| what_differs(&k, &row)).unwrap_or_default(),
                }),
                Found::Delete(old, path) => {
                    extra_at.insert(path.clone(), out.len());
                    out.push(Difference {
                        kind: DiffKind::Extra,
                        path,
                        detail: kind_name(old.kind).into(),
                    });
                }
                Found::Unlisted(..) => {}
            }
        }
        Ok(())
    }
}
