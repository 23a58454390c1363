//! Tags other programs wrote on files (`user.xdg.tags`, see
//! [`crate::platform::tags`]), read into the index beside the user's own
//! (source xattr, uid -1: the file's, seen by everyone who sees the file),
//! so that `tag:` matches them and `fsctl tag list` shows them as such.
//!
//! When they are read: every entry of a root after its scan, on a thread of
//! its own at low priority ([`Engine::file_tags_due`]; one system call per
//! entry, about 1 µs, so the walk itself never pays for it); the folders a
//! watcher batch walked whole likewise; and each path a watcher batch
//! names, at once, on the scanner thread ([`Engine::file_tags_changed`]):
//! `setfattr` raises `IN_ATTRIB` on the file's folder, which names the file.

use std::collections::HashMap;
use std::sync::atomic::AtomicU64;

use super::*;
use crate::store::labels::{Edit, FILE_UID, TagName};

/// The sweeper's state.
#[derive(Debug, Default)]
pub struct FileTagRuntime {
    /// A sweep thread runs.
    sweeping: AtomicBool,
    /// Entries (subtree tops) a sweep was asked for while one ran.
    pending: Mutex<Vec<i64>>,
    /// Some entry may carry file tags (else a changed path without the
    /// attribute needs no look-up in the index).
    some: AtomicBool,
    /// Entries read by sweeps since start.
    pub read: AtomicU64,
}

/// Entries read per hold of the name index (paths are built under it, the
/// attributes read after it is let go).
const CHUNK: usize = 2048;

/// Valid tags from the attribute, folded, without repeats, by key.
fn parsed(raw: Vec<String>) -> Vec<TagName> {
    let mut tags: Vec<TagName> = raw
        .iter()
        .filter_map(|t| crate::queries::labels::tag_name(t).ok())
        .collect();
    tags.sort_by(|a, b| a.key.cmp(&b.key));
    tags.dedup_by(|a, b| a.key == b.key);
    tags
}

fn keys(tags: &[TagName]) -> Vec<&str> {
    tags.iter().map(|t| t.key.as_str()).collect()
}

impl Engine {
    /// Asks for the file tags of every entry at or below `tops` to be read
    /// again, on the sweeper thread.
    /// (Those [`Engine::file_tags_below`] noted too.)
    pub(super) fn file_tags_due(self: &Arc<Self>, tops: Vec<i64>) {
        {
            let mut pending = self.file_tags.pending.lock_ok();
            pending.extend(tops);
            if pending.is_empty() {
                return;
            }
        }
        if self.file_tags.sweeping.swap(true, Ordering::SeqCst) {
            return; // the running sweep takes them next
        }
        let e = self.clone();
        let spawned = std::thread::Builder::new()
            .name("fsindex-xattr".into())
            .spawn(move || {
                crate::platform::process::lower_thread_priority();
                loop {
                    let tops = std::mem::take(&mut *e.file_tags.pending.lock_ok());
                    if tops.is_empty() || e.cancel.load(Ordering::Relaxed) {
                        e.file_tags.sweeping.store(false, Ordering::SeqCst);
                        // Asked for between the take and the store: go on.
                        if e.file_tags.pending.lock_ok().is_empty()
                            || e.file_tags.sweeping.swap(true, Ordering::SeqCst)
                        {
                            return;
                        }
                        continue;
                    }
                    if let Err(err) = e.sweep_file_tags(&tops) {
                        tracing::warn!("reading user.xdg.tags failed: {err}");
                    }
                }
            });
        if spawned.is_err() {
            self.file_tags.sweeping.store(false, Ordering::SeqCst);
        }
    }

    /// Reads the file tags of `tops` and everything below them, and writes
    /// what differs from the index.
    fn sweep_file_tags(&self, tops: &[i64]) -> Result<(), Error> {
        let mut ids: Vec<u32> = Vec::new();
        {
            let snapshot = crate::index::read_loaded(&self.snapshot);
            for &top in tops {
                let Ok(top) = u32::try_from(top) else {
                    continue;
                };
                if snapshot.entry_kind(top).is_none() {
                    continue;
                }
                ids.push(top);
                snapshot.walk_below(top, &mut |i, _| {
                    ids.push(i);
                    true
                });
            }
        }
        ids.sort_unstable();
        ids.dedup();
        let stored = self.store.read(|c| {
            let mut map: HashMap<i64, Vec<String>> = HashMap::new();
            for (id, key) in crate::store::labels::file_tag_keys(c)? {
                map.entry(id).or_default().push(key);
            }
            Ok(map)
        })?;
        let mut edits = Vec::new();
        let mut some = false;
        for chunk in ids.chunks(CHUNK) {
            if self.cancel.load(Ordering::Relaxed) {
                break;
            }
            let paths: Vec<(u32, Vec<u8>)> = {
                let snapshot = crate::index::read_loaded(&self.snapshot);
                chunk
                    .iter()
                    .filter(|&&i| snapshot.entry_kind(i).is_some())
                    .map(|&i| (i, snapshot.path(i)))
                    .collect()
            };
            for (i, path) in paths {
                let tags = parsed(crate::platform::tags::file_tags(
                    &crate::platform::bytes::path_buf(&path),
                ));
                some |= !tags.is_empty();
                let had = stored.get(&i64::from(i)).map(Vec::as_slice).unwrap_or(&[]);
                if keys(&tags) != had {
                    let (tx, _) = mpsc::channel();
                    edits.push(Op::Labels {
                        edit: Edit::SetFileTags {
                            entry_id: i64::from(i),
                            tags,
                        },
                        reply: tx,
                    });
                }
            }
            self.file_tags
                .read
                .fetch_add(chunk.len() as u64, Ordering::Relaxed);
            if edits.len() >= 512 {
                self.writer.send(std::mem::take(&mut edits))?;
            }
        }
        if some || !stored.is_empty() {
            self.file_tags.some.store(true, Ordering::Relaxed);
        }
        self.writer.send(edits)
    }

    /// Notes folders walked whole for the next sweep (from the scanner
    /// thread, which starts it with [`Engine::file_tags_due`]).
    pub(super) fn file_tags_below(&self, folders: &[PathBuf]) {
        let ids: Vec<i64> = folders
            .iter()
            .filter_map(|d| self.store.read(|c| crate::store::resolve(c, d)).ok())
            .map(|(_, id)| id)
            .collect();
        self.file_tags.pending.lock_ok().extend(ids);
    }

    /// Reads the file tags of paths a watcher batch named (on the scanner
    /// thread, after the batch is applied) and writes what changed.
    pub(super) fn file_tags_changed(&self, paths: &[PathBuf]) -> Result<(), Error> {
        let mut edits = Vec::new();
        for p in paths {
            let tags = parsed(crate::platform::tags::file_tags(p));
            if tags.is_empty() && !self.file_tags.some.load(Ordering::Relaxed) {
                continue;
            }
            let Ok((_, id)) = self.store.read(|c| crate::store::resolve(c, p)) else {
                continue; // gone, or kept out
            };
            let had = self.store.read(|c| {
                Ok(crate::store::labels::of_entry(c, id, FILE_UID)?
                    .into_iter()
                    .filter(|t| t.source == crate::store::labels::TagSource::Xattr)
                    .map(|t| t.key)
                    .collect::<Vec<_>>())
            })?;
            if keys(&tags) != had {
                self.file_tags.some.store(true, Ordering::Relaxed);
                let (tx, _) = mpsc::channel();
                edits.push(Op::Labels {
                    edit: Edit::SetFileTags { entry_id: id, tags },
                    reply: tx,
                });
            }
        }
        self.writer.send(edits)
    }
}
