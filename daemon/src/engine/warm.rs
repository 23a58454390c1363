//! The first pages of short terms, worked out ahead in the background
//! (`queries::search::lone` keeps them with the name index): the first key
//! of every query typed in fsgui is one letter, which matches most of a
//! home, and costs a mark of half the names and a ranking of hundreds of
//! thousands when nothing is kept for it (50-95 ms at a million entries);
//! the second key, a pair, has no trigram filter either (10-40 ms).
//!
//! One thread per engine, at background priority, waiting on the name
//! index's commits (`index::quiet`), works them out:
//! - once the index is first ready after a start, every lone letter and
//!   digit (both accents modes: the first key after a start is then
//!   answered at once, whichever mode the client types in), then the
//!   pairs the names hold most often (`frequent_pairs`: up to 256, with
//!   accents ignored, fsgui's default; a frequent pair is the dearest
//!   second key, and keys typed back to back reach it before the pass a
//!   first key starts does);
//! - as soon as someone types a lone character: the pairs it starts with a
//!   letter or digit, the most frequent in the names first (the next key),
//!   then the other letters and digits, in the mode typed;
//! - after a change, once the index has been quiet for [`QUIET`], the
//!   characters and pairs someone typed within [`TYPING`], in the modes
//!   typed (first keys of queries are few: a pass of five letters costs a
//!   seventh of all 36): at most once per quiet period, and spaced so that
//!   this work takes at most a fifth of a core under a steady trickle of
//!   changes ([`SPACING`]; a change that comes sooner is worked out at the
//!   next quiet period after the spacing, or the next [`TICK`]).
//!
//! Whatever woke it, the terms typed lately come first, so a key that
//! starts the whole set never leaves them stale behind a long pass; and a
//! key typed during a pass stops it, so that key's pairs are worked out
//! next (the start's pass of 72 pages takes seconds at nice 19).
//!
//! It never holds a change back: a commit waiting for the index stops it
//! within milliseconds, and it starts again once the index is quiet (or at
//! the next [`TICK`]), with the pairs and the whole set it was asked for
//! still to do.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use crate::index::quiet::Commits;
use crate::queries::search::{
    ALL_WARMED, ShortKey, follower_pairs, frequent_pairs, lone_of, read_loaded, set_keys,
    short_pages_current, warm_short_pages, warmed_set,
};
use crate::{LockOk, RwLockOk};

use super::Engine;

/// How long the index must stay unchanged after a commit before the kept
/// pages are worked out again.
pub(super) const QUIET: Duration = Duration::from_millis(300);

/// After a change, only the accents modes someone typed a short term in
/// this recently are worked out again (a daemon nobody types into does
/// none of this work after its start).
const TYPING: Duration = Duration::from_secs(600);

/// Pairs typed lately that are worked out again after a change, at most
/// (the newest kept).
const TYPED_PAIRS: usize = 36;

/// A pass that took `d` is followed by at least `SPACING × d` before the
/// next one a change starts (a nudge, someone typing, does not wait).
const SPACING: u32 = 4;

/// How often the thread looks whether its engine is still there when
/// nothing happens.
const TICK: Duration = Duration::from_secs(5);

/// What was typed lately in one accents mode.
#[derive(Clone, Debug, Default)]
pub(super) struct Typed {
    /// When a short term was last typed.
    at: Option<Instant>,
    /// The lone characters typed since the mode was last unused for
    /// [`TYPING`] (a `warmed_set`).
    set: u64,
    /// The pairs typed since then, the newest last, at most
    /// [`TYPED_PAIRS`].
    pairs: Vec<ShortKey>,
    /// The lone character just typed, whose pairs are worked out next
    /// (taken by the thread).
    follow: Option<u8>,
}

/// What was typed lately, per accents mode (exact, ignored).
#[derive(Debug, Default)]
pub(super) struct LoneTyped(std::sync::Mutex<[Typed; 2]>);

impl Engine {
    /// Someone typed a short term (`bare`: accents ignored). After a lone
    /// character, the pairs it starts, then the other letters and digits,
    /// are worked out at once in the background; a pair is kept worked out
    /// after changes while the mode is in use.
    pub(super) fn typed_short(&self, bare: bool, key: ShortKey) {
        {
            let mut typed = self.lone_typed.0.lock_ok();
            let t = &mut typed[bare as usize];
            if t.at.is_none_or(|at| at.elapsed() >= TYPING) {
                t.set = 0;
                t.pairs.clear();
            }
            t.at = Some(Instant::now());
            match lone_of(key) {
                Some(byte) => {
                    t.set |= warmed_set(byte);
                    t.follow = Some(byte);
                }
                None => {
                    t.pairs.retain(|&p| p != key);
                    t.pairs.push(key);
                    if t.pairs.len() > TYPED_PAIRS {
                        t.pairs.remove(0);
                    }
                    return;
                }
            }
        }
        self.snapshot.read_ok().commits().nudge();
    }

    /// Starts the engine's thread that works short terms out ahead.
    pub(super) fn start_warming(engine: &Arc<Engine>) -> std::io::Result<()> {
        let commits = engine.snapshot.read_ok().commits();
        let weak = Arc::downgrade(engine);
        std::thread::Builder::new()
            .name("fsindex-warm".into())
            .spawn(move || Engine::warm_loop(weak, commits))?;
        Ok(())
    }

    fn warm_loop(engine: Weak<Engine>, commits: Arc<Commits>) {
        crate::platform::process::lower_thread_priority();
        let mut since = commits.seen();
        // Both modes once after a start, when the index is first ready.
        let mut started = false;
        let mut not_before = Instant::now();
        // Work a key asked for and a pass did not finish (a commit came, or
        // another key), per mode: the pairs of the lone character typed
        // last, and the whole set after a key. Kept until a pass finishes
        // them, so a commit mid-pass only puts them off.
        let mut follow_due: [Option<u8>; 2] = [None, None];
        let mut whole_due = [false; 2];
        loop {
            let wait = QUIET.max(not_before.saturating_duration_since(Instant::now()));
            // Until the start's pass is done, look often whether the index
            // is ready (an unchanged restart commits nothing at its end).
            let tick = if started { TICK } else { QUIET };
            let seen = commits.wait_quiet(since, wait, tick);
            let Some(e) = engine.upgrade() else { return };
            if e.cancel.load(Ordering::Relaxed) {
                return;
            }
            let nudged = seen.nudged != since.nudged;
            since = seen;
            if !nudged && Instant::now() < not_before {
                continue;
            }
            let (typed, follow) = {
                let mut typed = e.lone_typed.0.lock_ok();
                let follow = [typed[0].follow.take(), typed[1].follow.take()];
                (typed.clone(), follow)
            };
            let start = !started && e.index_ready();
            // The short terms typed lately, per mode: worked out first
            // whatever woke the thread (they are few, and what the next
            // query most likely starts with); then the pairs of a lone
            // character just typed (the next key); then every character,
            // after a start (both modes) or when someone just typed (the
            // modes typed in).
            let recent = |bare: bool| {
                let t = &typed[bare as usize];
                t.at.filter(|at| at.elapsed() < TYPING).map(|_| t)
            };
            let first: Vec<(bool, Vec<ShortKey>)> = [false, true]
                .into_iter()
                .filter_map(|bare| {
                    recent(bare).map(|t| {
                        let mut keys = set_keys(t.set);
                        keys.extend(t.pairs.iter().rev());
                        (bare, keys)
                    })
                })
                .collect();
            for bare in [false, true] {
                let i = bare as usize;
                follow_due[i] = follow[i].or(follow_due[i]);
                whole_due[i] |= nudged && recent(bare).is_some();
            }
            let then: Vec<(bool, Vec<ShortKey>)> = [false, true]
                .into_iter()
                .filter(|&bare| start || whole_due[bare as usize])
                .map(|bare| (bare, set_keys(ALL_WARMED)))
                .collect();
            let snapshot = e.snapshot.clone();
            drop(e);
            // A pass stops at a change, or when a key was typed since this
            // one began (a nudge): that key's pairs come first, in the next.
            let pass = |modes: &[(bool, Vec<ShortKey>)]| {
                let mut worked = false;
                for (bare, keys) in modes {
                    if short_pages_current(&read_loaded(&snapshot), *bare, keys) {
                        continue;
                    }
                    worked = true;
                    for key in keys {
                        if commits.seen().nudged != since.nudged
                            || !warm_short_pages(&snapshot, *bare, std::slice::from_ref(key))
                        {
                            return (worked, false);
                        }
                    }
                }
                (worked, true)
            };
            let t = Instant::now();
            let (worked, _) = pass(&first);
            // Spaced by what the typed terms cost (the whole set is worked
            // out only at a start or a key, never for a change).
            if worked {
                not_before = Instant::now() + t.elapsed() * SPACING;
            }
            let follows: Vec<(bool, Vec<ShortKey>)> = [false, true]
                .into_iter()
                .filter_map(|bare| {
                    let byte = follow_due[bare as usize]?;
                    Some((bare, follower_pairs(&read_loaded(&snapshot), byte)))
                })
                .collect();
            if pass(&follows).1 {
                follow_due = [None, None];
            }
            let (_, mut whole) = pass(&then);
            if whole {
                whole_due = [false, false];
            }
            if start && whole {
                // Then the frequent pairs, counted only once the letters are
                // done (a start's pass that changes keep stopping never
                // counts them again and again). Accents ignored: the mode
                // fsgui types in unless told otherwise (the other mode's
                // pairs are worked out once someone types in it).
                let pairs = frequent_pairs(&read_loaded(&snapshot));
                whole = pass(&[(true, pairs)]).1;
                started = whole;
            }
            if worked || !follows.is_empty() || !then.is_empty() {
                tracing::debug!(
                    ms = t.elapsed().as_millis() as u64,
                    whole,
                    "short terms worked out ahead"
                );
            }
        }
    }

    /// Every root scanned and the name index loaded (`status`'s `ready`).
    fn index_ready(&self) -> bool {
        self.snapshot.read_ok().is_loaded()
            && self.root_views().is_ok_and(|roots| {
                roots
                    .iter()
                    .all(|r| r.state == super::RootState::Ready || r.gone)
            })
    }
}
