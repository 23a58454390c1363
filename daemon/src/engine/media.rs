//! Media metadata's running part (issue 32): the worker that reads what
//! photos, songs, videos and documents (pages, title, author) say about
//! themselves, under every root.
//!
//! One thread at nice 19 and idle I/O, woken like the content worker (after
//! each scan and applied watcher batch, at most twice a second). A sweep
//! passes over the search snapshot once: every file whose name is a known
//! media type and whose size, mtime or reader version differs from its
//! `media` row is read, in the sandboxed extractor child (`fsindexd
//! --extract`, a pool of its own), from headers only. The file is `lstat`ed
//! before and after: its row records the `(dev, ino, size, mtime_ns,
//! ctime_ns)` it was read for, and a file that changed while being read is
//! left for the next sweep. A file that gives nothing keeps a row saying
//! why, so it is not read again until it changes; an unchanged restart
//! finds every row current and reads nothing. WARN-tier files are never
//! opened (BLOCK and SKIP never reach the index), and their rows go.

use super::*;
use std::sync::atomic::AtomicU64;

use crate::store::media::{self, Media, MediaKey, MediaRow};
use fsindex_extract::media::media_kind_for_name;

/// How many files are read between writer commits.
const CHUNK: usize = 32;

/// The worker's state and counters since start.
#[derive(Default)]
pub struct MediaRuntime {
    wake: super::wake::Wake,
    started: AtomicBool,
    /// Files opened since start, and of those, files that gave nothing.
    pub read: AtomicU64,
    pub failed: AtomicU64,
    /// Files waiting to be read, as of the worker's last look.
    pub queued: AtomicU64,
    pool: std::sync::OnceLock<fsindex_extract::Pool>,
    /// The rows by status as last counted, and the index's writes then
    /// ([`Store::media_writes`](crate::store::Store), `rows_written`):
    /// counting them reads every failure's row (about 100 ms at 1M entries
    /// with 347k failures, where `status` was otherwise under a
    /// millisecond), so they are counted again only after a write that may
    /// have changed them.
    outcomes: std::sync::Mutex<Option<Counted>>,
}

/// The media rows by status, and the index's writes when they were
/// counted (see [`MediaRuntime`]).
type Counted = ((u64, u64), Vec<(String, u64)>);

impl std::fmt::Debug for MediaRuntime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MediaRuntime")
            .field("read", &self.read)
            .finish()
    }
}

/// What `status` says of media metadata.
#[derive(Clone, Debug, Default)]
pub struct MediaFigures {
    /// Rows by status (`ok`, or why a file gave nothing).
    pub rows: std::collections::BTreeMap<String, u64>,
    pub read: u64,
    pub failed: u64,
    pub queued: u64,
    /// The worker is sweeping or reading.
    pub busy: bool,
}

/// What the media rows were read for, by entry id: a print of the file's
/// size and mtime and the reader's version ([`media::read_for`]), kept
/// between sweeps so that an unchanged file is not read again. Two sorted
/// lists of exactly their length, 8 bytes a media file, plus the few
/// changed since they were last settled. (A map of the whole state took
/// about 40 bytes a file, 13 MiB of the idle daemon's heap on a tree of
/// 333,000 photos; a list of (u32, u64) pairs collected in place from the
/// table's rows kept their 32-byte capacity, 16 MiB for 347,000.)
#[derive(Default)]
struct Made {
    ids: Vec<u32>,
    prints: Vec<u32>,
    /// Changed since the last [`Made::settle`]; [`GONE`] for removed.
    fresh: HashMap<u32, u32>,
}

/// A removed id in [`Made::fresh`] (no fingerprint is 0).
const GONE: u32 = 0;

/// Up to this many files to read, the newest are read first.
const NEWEST_FIRST: usize = 4096;

/// Changes held in [`Made::fresh`] before they are merged in.
const SETTLE_AT: usize = 4096;

/// The files a sweep found to read. A few (up to [`NEWEST_FIRST`]):
/// listed, the newest first. More (a first pass): not listed, but found
/// again a chunk at a time, in id order, from where the last chunk ended,
/// by the sweep's own test: a list of a first pass's 347k ids held 1.4 MB
/// through the half minute it took at 1M entries.
enum Queue {
    Listed(Vec<u32>),
    From {
        /// The next id to look at, and the id bound the sweep saw: ids
        /// given out since are read after the next sweep (their changes
        /// ask for one).
        next: u32,
        end: u32,
        /// How many the sweep found, less those read since.
        left: u64,
    },
}

impl Queue {
    fn is_empty(&self) -> bool {
        match self {
            Queue::Listed(ids) => ids.is_empty(),
            Queue::From { next, end, .. } => next >= end,
        }
    }

    /// For `status`: the files still to read, as far as is known.
    fn len(&self) -> u64 {
        match self {
            Queue::Listed(ids) => ids.len() as u64,
            Queue::From { left, .. } if !self.is_empty() => *left,
            Queue::From { .. } => 0,
        }
    }
}

/// The kind classes ruled out before any name is looked at: code, text,
/// archives and folders (documents have pages, a title and an author).
/// Half a byte per entry, against each name.
const NOT_MEDIA: [u8; 4] = {
    use crate::index::kinds::KindClass;
    [
        KindClass::Archive as u8 + 1,
        KindClass::Code as u8 + 1,
        KindClass::Text as u8 + 1,
        KindClass::Folder as u8 + 1,
    ]
};

/// Whether entry `i` is a file with a media type's name.
fn is_media(snapshot: &crate::index::Snapshot, i: u32) -> bool {
    !NOT_MEDIA.contains(&snapshot.class_of(i as usize))
        && snapshot.entry_kind(i) == Some(crate::store::Kind::File)
        && media_kind_for_name(&snapshot.entry_name(i)).is_some()
}

/// Whether media file `i`'s row is missing or was read for another size,
/// mtime or reader version.
fn is_stale(snapshot: &crate::index::Snapshot, i: u32, made: &Made) -> bool {
    let version = fsindex_extract::media::VERSION;
    let now = media::read_for(snapshot.entry_size(i), snapshot.entry_mtime_ns(i), version);
    made.get(i) != Some(now)
}

impl Made {
    fn from_states(states: Vec<(u32, u32)>) -> Made {
        let mut made = Made::default();
        made.set_sorted(states.into_iter());
        made
    }

    /// Replaces the lists with these pairs (sorted here).
    fn set_sorted(&mut self, pairs: impl Iterator<Item = (u32, u32)>) {
        let mut pairs: Vec<(u32, u32)> = pairs.collect();
        pairs.sort_unstable();
        let (mut ids, mut prints) = (
            Vec::with_capacity(pairs.len()),
            Vec::with_capacity(pairs.len()),
        );
        for (id, print) in pairs {
            ids.push(id);
            prints.push(print);
        }
        (self.ids, self.prints) = (ids, prints);
    }

    fn get(&self, id: u32) -> Option<u32> {
        match self.fresh.get(&id) {
            Some(&GONE) => None,
            Some(&f) => Some(f),
            None => self.ids.binary_search(&id).ok().map(|at| self.prints[at]),
        }
    }

    fn insert(&mut self, id: u32, print: u32) {
        self.fresh.insert(id, print);
    }

    /// Whether it was there.
    fn remove(&mut self, id: u32) -> bool {
        let was = self.get(id).is_some();
        if was {
            self.fresh.insert(id, GONE);
        }
        was
    }

    /// Merges the changes into the sorted lists, in place. (Merged into
    /// fresh lists through a list of pairs, a first pass held three copies
    /// at each merge: 24 bytes a file, 5 MB at 200k files, by arithmetic.)
    fn settle(&mut self) {
        if self.fresh.is_empty() {
            return;
        }
        let mut fresh: Vec<(u32, u32)> = self.fresh.drain().collect();
        self.fresh.shrink_to_fit();
        fresh.sort_unstable();
        // Changed and removed ids in place; new ones aside, in order.
        let mut added = Vec::new();
        let mut removed = false;
        for &(id, print) in &fresh {
            match self.ids.binary_search(&id) {
                Ok(at) => {
                    self.prints[at] = print;
                    removed |= print == GONE;
                }
                Err(_) if print != GONE => added.push((id, print)),
                Err(_) => {}
            }
        }
        drop(fresh);
        if removed {
            let mut kept = 0;
            for at in 0..self.ids.len() {
                if self.prints[at] != GONE {
                    self.ids[kept] = self.ids[at];
                    self.prints[kept] = self.prints[at];
                    kept += 1;
                }
            }
            self.ids.truncate(kept);
            self.prints.truncate(kept);
        }
        crate::index::slots::merge_sorted_in_place(&mut self.ids, Some(&mut self.prints), &added);
    }

    /// Every id, once settled.
    fn ids(&self) -> impl Iterator<Item = u32> + '_ {
        self.ids.iter().copied()
    }
}

impl Engine {
    /// Starts the media worker (once).
    pub(super) fn start_media(self: &Arc<Self>) -> Result<(), Error> {
        if !self.media.started.swap(true, Ordering::SeqCst) {
            let e = self.clone();
            std::thread::Builder::new()
                .name("fsindex-media".into())
                .spawn(move || e.media_loop())?;
        }
        self.media_due();
        Ok(())
    }

    /// Asks the media worker for a sweep.
    pub(super) fn media_due(&self) {
        self.media.wake.ask();
    }

    fn media_loop(self: Arc<Self>) {
        crate::platform::process::lower_thread_priority();
        // What the rows were read for, held from a sweep until the worker
        // has rested a round (5 s without a change): an idle daemon holds
        // none of it (8 bytes a media file); reading it back is one scan of
        // the two tables (347,201 rows: 60 ms in the sqlite3 shell, which
        // prints them too).
        let mut made: Option<Made> = None;
        let mut last_sweep = Instant::now() - Duration::from_secs(1);
        let mut queue = Queue::Listed(Vec::new());
        loop {
            let Some(sweep) = self
                .media
                .wake
                .next(&self.cancel, &mut last_sweep, || self.scanning())
            else {
                return;
            };
            if sweep {
                let m = made.get_or_insert_with(|| self.made_from_index());
                match self.media_sweep(m) {
                    Ok(q) => queue = q,
                    Err(e) => tracing::error!("media sweep failed: {e}"),
                }
            }
            self.media.queued.store(queue.len(), Ordering::Relaxed);
            if !queue.is_empty() {
                let m = made.get_or_insert_with(|| self.made_from_index());
                if let Err(e) = self.media_drain(&mut queue, m) {
                    tracing::error!("reading media metadata failed: {e}");
                }
            } else if !sweep && made.take().is_some() {
                // What it held, the rows left in the arenas and the code
                // the pass ran go back at the trimmer's next quiet look.
                self.note_activity();
            }
            self.media.queued.store(queue.len(), Ordering::Relaxed);
            self.media.wake.rest();
        }
    }

    /// What the media rows were read for, from the index.
    fn made_from_index(&self) -> Made {
        match self.store.read(media::states) {
            Ok(m) => Made::from_states(m),
            Err(e) => {
                tracing::error!("reading the media table failed: {e}");
                Made::default()
            }
        }
    }

    /// The media files whose row is missing or stale; drops the rows of
    /// files that are no longer media files.
    fn media_sweep(&self, made: &mut Made) -> Result<Queue, Error> {
        let snapshot = crate::index::read_loaded(&self.snapshot);
        let end = snapshot.id_bound() as u32;
        // Up to NEWEST_FIRST of them, then how many and the first.
        let (mut few, mut count, mut first) = (Vec::new(), 0u64, None);
        // Ascending, as the ids are walked.
        let mut wanted = Vec::new();
        for i in 0..end {
            if !is_media(&snapshot, i) {
                continue;
            }
            wanted.push(i);
            if is_stale(&snapshot, i, made) {
                first.get_or_insert(i);
                count += 1;
                if few.len() <= NEWEST_FIRST {
                    few.push(i);
                }
            }
        }
        drop(snapshot);
        made.settle();
        let gone: Vec<i64> = made
            .ids()
            .filter(|i| wanted.binary_search(i).is_err())
            .map(i64::from)
            .collect();
        drop(wanted);
        if !gone.is_empty() {
            for i in &gone {
                made.remove(*i as u32);
            }
            made.settle();
            self.writer.send(vec![Op::DropMedia(gone)])?;
            self.writer.flush()?;
        }
        // A few files: the newest first, they are the ones a user just
        // added. A first pass over a whole tree: in id order, so that the
        // rows are appended to the table (written newest first, its pages
        // were split half-empty: 58 MiB for 333,000 rows, about 174 bytes
        // each).
        Ok(match first {
            Some(next) if few.len() > NEWEST_FIRST => Queue::From {
                next,
                end,
                left: count,
            },
            _ => {
                few.reverse();
                Queue::Listed(few)
            }
        })
    }

    /// The next files to read, up to [`CHUNK`] of them.
    fn next_chunk(&self, queue: &mut Queue, made: &Made) -> Vec<u32> {
        match queue {
            Queue::Listed(ids) => ids.drain(..ids.len().min(CHUNK)).collect(),
            Queue::From { next, end, left } => {
                let snapshot = crate::index::read_loaded(&self.snapshot);
                // Ids only grow; the bound only falls when the snapshot is
                // loaded afresh, which a sweep follows.
                let end = (*end).min(snapshot.id_bound() as u32);
                let mut chunk = Vec::with_capacity(CHUNK);
                while *next < end && chunk.len() < CHUNK {
                    let i = *next;
                    *next += 1;
                    if is_media(&snapshot, i) && is_stale(&snapshot, i, made) {
                        chunk.push(i);
                    }
                }
                if *next >= end {
                    *next = u32::MAX;
                }
                *left = left.saturating_sub(chunk.len() as u64);
                chunk
            }
        }
    }

    /// Reads queued files a chunk at a time until the queue is empty or a
    /// sweep is due.
    fn media_drain(&self, queue: &mut Queue, made: &mut Made) -> Result<(), Error> {
        let rules = self.rules();
        while !queue.is_empty() {
            if self.cancel.load(Ordering::Relaxed) || self.media.wake.is_due() || self.scanning() {
                return Ok(());
            }
            let chunk = self.next_chunk(queue, made);
            let (mut rows, mut dropped) = (Vec::new(), Vec::new());
            for id in chunk {
                match self.read_media_of(id, &rules) {
                    Some(Some(row)) => {
                        made.insert(id, row.read_for());
                        rows.push(row);
                    }
                    // Changed while read: the next sweep sees it again.
                    Some(None) => {}
                    None => {
                        if made.remove(id) {
                            dropped.push(i64::from(id));
                        }
                    }
                }
            }
            if !dropped.is_empty() {
                self.writer.send(vec![Op::DropMedia(dropped)])?;
            }
            if !rows.is_empty() {
                self.writer.send(vec![Op::PutMedia(rows)])?;
            }
            self.writer.flush()?;
            self.media.queued.store(queue.len(), Ordering::Relaxed);
            if made.fresh.len() >= SETTLE_AT {
                made.settle();
                // A pass of minutes: what its chunks freed (the lists
                // merged, rows written) goes back as it goes, not at its
                // end (4-7 MiB free but resident during a 1M first pass).
                crate::platform::process::release_memory();
            }
        }
        made.settle();
        Ok(())
    }

    /// Reads one file: `None` when it is no longer a media file to read
    /// (gone, not a file, sensitive), `Some(None)` when it changed while
    /// being read.
    fn read_media_of(&self, id: u32, rules: &Rules) -> Option<Option<MediaRow>> {
        let path = {
            let snapshot = crate::index::read_loaded(&self.snapshot);
            if snapshot.entry_kind(id) != Some(crate::store::Kind::File) {
                return None;
            }
            crate::platform::bytes::path_buf(&snapshot.path(id))
        };
        // The WARN tier is never opened (BLOCK and SKIP are never indexed).
        if rules.is_sensitive(&path, false) {
            return None;
        }
        let before = file_key(&path)?;
        let got = self
            .media_pool()
            .extract(&path, fsindex_extract::Kind::Media);
        self.media.read.fetch_add(1, Ordering::Relaxed);
        if file_key(&path) != Some(before) {
            return Some(None);
        }
        let version = fsindex_extract::media::VERSION;
        let row = match got {
            Ok(e) => {
                let m = Media::decode(&e.text);
                MediaRow {
                    entry_id: i64::from(id),
                    key: before,
                    version,
                    status: "ok".into(),
                    detail: String::new(),
                    taken_s: m.taken.as_deref().and_then(taken_seconds),
                    media: m,
                }
            }
            Err(f) => {
                self.media.failed.fetch_add(1, Ordering::Relaxed);
                // The path, never what was read (a position is private).
                tracing::debug!(path = %path.display(), reason = f.reason(), "no media metadata");
                MediaRow {
                    entry_id: i64::from(id),
                    key: before,
                    version,
                    status: f.reason().into(),
                    detail: f.detail(),
                    taken_s: None,
                    media: Media::default(),
                }
            }
        };
        Some(Some(row))
    }

    fn media_pool(&self) -> &fsindex_extract::Pool {
        self.media.pool.get_or_init(|| {
            // Headers only: a file that takes longer is hostile.
            let config = fsindex_extract::SandboxConfig {
                timeout: Duration::from_secs(10),
                ..Default::default()
            };
            let cmd = std::process::Command::new(crate::platform::process::extractor_path());
            fsindex_extract::Pool::new(cmd, config, 1)
        })
    }

    /// One file's media row for `info`, current for the file's present
    /// `(dev, ino, size, mtime_ns, ctime_ns)`: a file not read yet, or
    /// changed since (a `chown` or `touch -r` too, which the sweep's size
    /// and mtime do not show), is read now, in the child, and its row
    /// written.
    pub(super) fn current_media(&self, id: i64, path: &Path) -> Result<Option<MediaRow>, Error> {
        let row = self.store.read(|c| media::of_entry(c, id))?;
        let now = file_key(path);
        if let (Some((row, print)), Some(now)) = (row, now) {
            // A read row knows its whole file state; a failure only the
            // print of its size, mtime and reader version.
            let current = if row.status == "ok" {
                now == row.key
            } else {
                print == media::read_for(now.size, now.mtime_ns, fsindex_extract::media::VERSION)
            };
            if current {
                return Ok(Some(row));
            }
        }
        let named = path
            .file_name()
            .is_some_and(|n| media_kind_for_name(n.as_encoded_bytes()).is_some());
        if now.is_none() || !named {
            return Ok(None);
        }
        let Ok(id) = u32::try_from(id) else {
            return Ok(None);
        };
        match self.read_media_of(id, &self.rules()) {
            Some(Some(row)) => {
                self.writer.send(vec![Op::PutMedia(vec![row.clone()])])?;
                Ok(Some(row))
            }
            _ => Ok(None),
        }
    }

    /// The media rows by status, counted again only when a commit since
    /// the last count wrote media rows or entries (a deleted entry takes
    /// its media row with it). The writes are read before the count, and
    /// bumped after their commit: a count is never older than its key.
    fn media_outcomes(&self) -> Result<Vec<(String, u64)>, Error> {
        let key = (
            self.store.media_writes.load(Ordering::Acquire),
            self.store.rows_written.load(Ordering::Acquire),
        );
        if let Some((k, rows)) = self.media.outcomes.lock_ok().as_ref()
            && *k == key
        {
            return Ok(rows.clone());
        }
        let rows = self.store.read(media::outcomes)?;
        *self.media.outcomes.lock_ok() = Some((key, rows.clone()));
        Ok(rows)
    }

    /// Figures for `status`.
    pub fn media_status(&self) -> Result<MediaFigures, Error> {
        Ok(MediaFigures {
            rows: self.media_outcomes()?.into_iter().collect(),
            read: self.media.read.load(Ordering::Relaxed),
            failed: self.media.failed.load(Ordering::Relaxed),
            queued: self.media.queued.load(Ordering::Relaxed),
            busy: self.media.wake.working(),
        })
    }
}

/// A regular file's `(dev, ino, size, mtime_ns, ctime_ns)`.
#[cfg(unix)]
fn file_key(path: &Path) -> Option<MediaKey> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::symlink_metadata(path).ok()?;
    m.file_type().is_file().then(|| MediaKey {
        dev: m.dev(),
        ino: m.ino(),
        size: m.size(),
        mtime_ns: m.mtime() * 1_000_000_000 + m.mtime_nsec(),
        ctime_ns: m.ctime() * 1_000_000_000 + m.ctime_nsec(),
    })
}

/// Elsewhere there is no inode or ctime: size and mtime only.
#[cfg(not(unix))]
fn file_key(path: &Path) -> Option<MediaKey> {
    let m = std::fs::symlink_metadata(path).ok()?;
    let mtime_ns = m
        .modified()
        .ok()?
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i64);
    m.file_type().is_file().then(|| MediaKey {
        size: m.len(),
        mtime_ns,
        ..MediaKey::default()
    })
}

/// A camera's `YYYY-MM-DDTHH:MM:SS` (no zone) as unix seconds, read in the
/// daemon's time zone as `dm:` reads its dates.
pub fn taken_seconds(taken: &str) -> Option<i64> {
    let dt: jiff::civil::DateTime = taken.parse().ok()?;
    let z = dt.to_zoned(jiff::tz::TimeZone::system()).ok()?;
    Some(z.timestamp().as_second())
}

#[cfg(test)]
mod made_tests {
    use super::*;

    #[test]
    fn made_keeps_the_last_state_of_each_id_through_settles() {
        let p = media::read_for;
        let mut m = Made::from_states(vec![(2, p(4, 5, 6)), (5, p(1, 2, 3))]);
        assert_eq!(m.get(5), Some(p(1, 2, 3)));
        m.insert(3, p(7, 8, 9));
        m.insert(5, p(1, 2, 4));
        assert!(m.remove(2));
        assert!(!m.remove(9));
        assert_eq!(m.get(2), None);
        assert_eq!(m.get(5), Some(p(1, 2, 4)));
        m.settle();
        assert_eq!(m.ids().collect::<Vec<_>>(), [3, 5]);
        assert_eq!(m.get(3), Some(p(7, 8, 9)));
        assert_eq!(m.get(5), Some(p(1, 2, 4)));
        assert_ne!(p(1, 2, 3), p(1, 2, 4));
        m.insert(2, p(0, 0, 0));
        assert!(m.remove(3));
        m.settle();
        assert_eq!(m.ids().collect::<Vec<_>>(), [2, 5]);
    }

    /// Settling in place agrees with a map that takes every change in
    /// turn, through rounds of inserts, changes and removals at the front,
    /// the middle and the back of the lists.
    #[test]
    fn settling_in_place_agrees_with_a_map() {
        let mut m = Made::default();
        let mut want = std::collections::BTreeMap::new();
        let mut x = 12345u64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for round in 0..40 {
            for _ in 0..(next() % 300) {
                let id = (next() % 2000) as u32;
                if next() % 4 == 0 {
                    assert_eq!(m.remove(id), want.remove(&id).is_some(), "round {round}");
                } else {
                    let print = (next() % 1000 + 1) as u32;
                    m.insert(id, print);
                    want.insert(id, print);
                }
            }
            m.settle();
            assert_eq!(
                m.ids().collect::<Vec<_>>(),
                want.keys().copied().collect::<Vec<_>>()
            );
            for (&id, &print) in &want {
                assert_eq!(m.get(id), Some(print), "round {round}, id {id}");
            }
            assert!(m.fresh.is_empty());
        }
    }
}
