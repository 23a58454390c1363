//! The Subscribe stream as one caller may see it.
//!
//! The daemon's owner hears every change under the path. A filtered caller
//! (machine-wide mode) hears the changes to what it may see, so that a
//! client replaying the stream over its own search ends at its own search:
//!
//! - a change inside a folder the caller cannot open is not streamed;
//! - a rename across that line is, for the caller, a creation (from hidden
//!   to seen) or a deletion (from seen to hidden);
//! - a permission change (`chmod`, `chown`, `chgrp`) that closes a folder
//!   the caller could open is streamed as the folder deleted and created
//!   again, empty: its contents are gone from the caller's view, and no
//!   name inside it is streamed;
//! - one that opens a folder streams a creation for everything the caller
//!   may now see inside it, each folder before what it holds; past
//!   [`REVEAL_CAP`] entries, one [`Heard::Reread`] for the folder instead.
//!
//! Which folders the caller can open is looked at again (a bit per folder)
//! when a folder's own change is streamed, when the watcher counts a folder
//! event (inotify reports owner changes, which change no indexed field), and
//! every [`RECHECK_BLIND`] where the backend cannot tell of them; at most
//! every [`RECHECK_EVERY`].

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::Engine;
use super::visibility::{self, View, bit};
use crate::Error;
use crate::index::{ChangeEvent, ChangeKind};
use crate::queries::access::parent_bytes;
use crate::store::Kind;

/// What a subscriber hears next.
#[derive(Debug)]
pub enum Heard {
    Change(ChangeEvent),
    /// The subscriber fell behind and this many changes were dropped: said
    /// rather than pretending nothing happened.
    Missed(u64),
    /// What the caller may see under this folder changed by more than
    /// [`REVEAL_CAP`] entries at once (a permission change opened a large
    /// subtree): read it again.
    Reread(Vec<u8>),
}

/// The most creations streamed for one folder a permission change opens.
pub const REVEAL_CAP: usize = 10_000;

/// A filtered caller's folders are looked at again at most this often.
const RECHECK_EVERY: Duration = Duration::from_millis(200);

/// ... and at least this often where the watcher cannot say that a folder's
/// owner changed (the notify and poll backends, or a busy watcher).
const RECHECK_BLIND: Duration = Duration::from_secs(5);

/// Changes under a path, as one caller may see them (Subscribe RPC).
pub struct Subscription {
    rx: tokio::sync::broadcast::Receiver<ChangeEvent>,
    prefix: Option<PathBuf>,
    filter: Option<Filter>,
}

impl std::fmt::Debug for Subscription {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Subscription")
            .field("prefix", &self.prefix)
            .field("filtered", &self.filter.is_some())
            .finish()
    }
}

/// A filtered caller's side of a subscription.
struct Filter {
    engine: Arc<Engine>,
    view: View,
    /// When `view` was made: what it learnt of folders is kept a second.
    made: Instant,
    /// Bit per folder id: the caller could open it and every folder above
    /// it when last looked (`None` before the first look).
    open: Option<Vec<u64>>,
    looked: Instant,
    /// The watcher's folder epoch at the last look (`None`: it cannot say).
    epoch: Option<u64>,
    /// A folder's own change was streamed since the last look.
    dirty: bool,
    /// What the last look found to say, in order.
    queue: VecDeque<Heard>,
}

impl Subscription {
    /// The next change this subscriber may see; `None` once the daemon
    /// stops.
    pub async fn next(&mut self) -> Option<Heard> {
        use tokio::sync::broadcast::error::RecvError;
        loop {
            let wait = match self.filter.as_mut() {
                None => None,
                Some(f) => {
                    if let Some(h) = f.queue.pop_front() {
                        return Some(h);
                    }
                    if f.due() {
                        let prefix = self.prefix.as_deref();
                        tokio::task::block_in_place(|| f.look(prefix));
                        continue;
                    }
                    Some(f.wait())
                }
            };
            let got = match wait {
                None => self.rx.recv().await,
                Some(w) => match tokio::time::timeout(w, self.rx.recv()).await {
                    Ok(got) => got,
                    Err(_) => continue, // time to look at the folders again
                },
            };
            let mut e = match got {
                Ok(e) => e,
                Err(RecvError::Lagged(n)) => {
                    if let Some(f) = self.filter.as_mut() {
                        f.dirty = true;
                    }
                    return Some(Heard::Missed(n));
                }
                Err(RecvError::Closed) => return None,
            };
            if !under(&self.prefix, &e.path) && !under(&self.prefix, &e.from) {
                continue;
            }
            if let Some(f) = self.filter.as_mut() {
                if e.entry == Kind::Dir {
                    f.dirty = true;
                }
                if f.made.elapsed() > Duration::from_secs(1) {
                    f.view = View::new(f.view.caller.clone());
                    f.made = Instant::now();
                }
                let v = &mut f.view;
                // A rename across what the caller may see is, for the
                // caller, a creation or a deletion.
                let to = v.sees(&e.path);
                if e.kind == ChangeKind::Renamed && !e.from.is_empty() {
                    match (v.sees(&e.from), to) {
                        (true, true) => {}
                        (false, true) => {
                            e.kind = ChangeKind::Created;
                            e.from.clear();
                        }
                        (true, false) => {
                            e.kind = ChangeKind::Deleted;
                            e.path = std::mem::take(&mut e.from);
                        }
                        (false, false) => continue,
                    }
                } else if !to {
                    continue;
                }
            }
            return Some(Heard::Change(e));
        }
    }
}

fn under(prefix: &Option<PathBuf>, p: &[u8]) -> bool {
    prefix
        .as_ref()
        .is_none_or(|pre| crate::platform::bytes::path(p).starts_with(pre))
}

impl Filter {
    /// Time to look at the caller's folders again?
    fn due(&self) -> bool {
        if self.open.is_none() {
            return true;
        }
        let since = self.looked.elapsed();
        if since < RECHECK_EVERY {
            return false;
        }
        if self.dirty {
            return true;
        }
        match (self.epoch, self.folder_epoch()) {
            (Some(was), Some(now)) => was != now,
            _ => since >= RECHECK_BLIND,
        }
    }

    /// How long the next event is waited for before [`due`](Self::due) is
    /// asked again.
    fn wait(&self) -> Duration {
        let left = RECHECK_EVERY.saturating_sub(self.looked.elapsed());
        if self.dirty {
            left
        } else {
            // The folder epoch moves without an event (an owner change).
            left.max(Duration::from_millis(250))
        }
    }

    fn folder_epoch(&self) -> Option<u64> {
        self.engine.watcher.as_ref()?.folder_epoch()
    }

    /// Looks at which folders the caller can open now, and queues what
    /// changed since the last look.
    fn look(&mut self, prefix: Option<&Path>) {
        self.dirty = false;
        self.looked = Instant::now();
        self.epoch = self.folder_epoch();
        self.view = View::new(self.view.caller.clone());
        self.made = Instant::now();
        let now = match self.open_now(prefix) {
            Ok(now) => now,
            Err(e) => {
                // Looked at again at the next chance: a look that failed
                // must not stand for one that found nothing changed.
                tracing::debug!("a subscriber's folders could not be looked at: {e}");
                self.dirty = true;
                return;
            }
        };
        let Some(was) = self.open.replace(now) else {
            return; // the first look: nothing streamed yet to change
        };
        let now = self.open.as_ref().expect("just set");
        let e = &self.engine;
        let snapshot = crate::index::read_loaded(&e.snapshot);
        let words = was.len().max(now.len());
        let word = |v: &[u64], w: usize| v.get(w).copied().unwrap_or(0);
        let pre = prefix.map(|p| p.as_os_str().as_encoded_bytes().to_vec());
        let within = |p: &[u8]| {
            pre.as_deref().is_none_or(|pre| {
                crate::platform::bytes::path(p).starts_with(crate::platform::bytes::path(pre))
            })
        };
        for w in 0..words {
            let mut changed = word(&was, w) ^ word(now, w);
            while changed != 0 {
                let id = (w * 64) as u32 + changed.trailing_zeros();
                changed &= changed - 1;
                let parent = snapshot.entry_parent(id);
                if snapshot.entry_kind(id) != Some(Kind::Dir) {
                    continue;
                }
                if bit(now, id) {
                    // Opened: the topmost such folder streams what it holds.
                    if parent.is_some_and(|p| !bit(&was, p)) {
                        continue;
                    }
                    let mut found = Vec::new();
                    let mut over = false;
                    snapshot.walk_below(id, &mut |i, _| {
                        if over || found.len() >= REVEAL_CAP {
                            over = true;
                            return false;
                        }
                        let entry = snapshot.entry_kind(i).unwrap_or(Kind::Other);
                        found.push(ChangeEvent {
                            kind: ChangeKind::Created,
                            path: snapshot.path(i),
                            from: Vec::new(),
                            entry,
                        });
                        entry == Kind::Dir && bit(now, i)
                    });
                    if over {
                        let path = snapshot.path(id);
                        if within(&path) {
                            self.queue.push_back(Heard::Reread(path));
                        } else if let Some(pre) = &pre {
                            self.queue.push_back(Heard::Reread(pre.clone()));
                        }
                    } else {
                        self.queue.extend(
                            found
                                .into_iter()
                                .filter(|e| within(&e.path))
                                .map(Heard::Change),
                        );
                    }
                } else {
                    // Closed: the topmost such folder loses what it held;
                    // it stays seen itself where its parent is open.
                    if parent.is_some_and(|p| !bit(now, p)) {
                        continue;
                    }
                    let path = snapshot.path(id);
                    let seen = parent.is_some() || self.view.sees(&path);
                    let gone = match &pre {
                        // The subscription's own folder is inside it.
                        Some(pre) if !within(&path) => pre.clone(),
                        _ => path.clone(),
                    };
                    if !within(&gone) {
                        continue;
                    }
                    self.queue.push_back(Heard::Change(ChangeEvent {
                        kind: ChangeKind::Deleted,
                        path: gone.clone(),
                        from: Vec::new(),
                        entry: Kind::Dir,
                    }));
                    if seen && gone == path {
                        self.queue.push_back(Heard::Change(ChangeEvent {
                            kind: ChangeKind::Created,
                            path,
                            from: Vec::new(),
                            entry: Kind::Dir,
                        }));
                    }
                }
            }
        }
    }

    /// A bit per folder the caller can open now, with every folder above
    /// it, over the roots that meet the subscription's path.
    fn open_now(&mut self, prefix: Option<&Path>) -> Result<Vec<u64>, Error> {
        let e = &self.engine;
        let roots = e.store.read(crate::store::roots)?;
        let snapshot = crate::index::read_loaded(&e.snapshot);
        let known = e.watcher.as_deref().map(|w| (&e.permissions, w));
        let mut open: Vec<u64> = Vec::new();
        for root in roots {
            let Some(id) = root.entry_id.and_then(|id| u32::try_from(id).ok()) else {
                continue;
            };
            let at = crate::platform::bytes::path(&root.path);
            if prefix.is_some_and(|pre| !at.starts_with(pre) && !pre.starts_with(at)) {
                continue;
            }
            if parent_bytes(&root.path).is_some_and(|up| !self.view.reaches(up)) {
                continue;
            }
            let bits = visibility::open_folders(&snapshot, id, &self.view, known);
            if open.len() < bits.len() {
                open.resize(bits.len(), 0);
            }
            for (w, b) in bits.into_iter().enumerate() {
                open[w] |= b;
            }
        }
        Ok(open)
    }
}

impl Engine {
    /// Changes under `path` (everything when empty) that this caller may
    /// see, from now on.
    pub fn subscribe_seen(
        self: &Arc<Self>,
        path: &[u8],
        view: Option<View>,
    ) -> Result<Subscription, Error> {
        let prefix = if path.is_empty() {
            None
        } else {
            Some(super::read::absolute(path)?)
        };
        Ok(Subscription {
            rx: self.subscribe(),
            prefix,
            filter: view.map(|view| Filter {
                engine: self.clone(),
                view,
                made: Instant::now(),
                open: None,
                looked: Instant::now(),
                epoch: None,
                dirty: false,
                queue: VecDeque::new(),
            }),
        })
    }
}
