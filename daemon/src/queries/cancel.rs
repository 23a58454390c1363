//! A search nobody waits for any more stops early.
//!
//! fsgui searches as the user types: each key supersedes the search before
//! it, and fsgui drops that request's stream. The Search handler then marks
//! the search's [`Cancel`] (its future is dropped before the answer's head
//! arrived), and the query loop, which runs on a blocking thread under
//! [`Cancel::scope`], sees [`requested`] between its stages (after each
//! term is marked, before ranking) and every [`CHECK_EVERY`] keys while
//! ranking: the superseded search stops within a few milliseconds instead
//! of taking a core from the one that replaced it.
//!
//! The flag reaches the query loop through a thread-local, so the many
//! callers of `Snapshot::search_order` (fsctl, MCP, tests) are unchanged
//! and never cancelled; a helper thread the loop starts takes the flag
//! along ([`current`], then [`Cancel::scope`] there).

use std::cell::RefCell;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// How many ranked keys between two looks at the flag (a look is one
/// relaxed load: nothing next to a key's cost, and every 4,096 keys a
/// cancelled search stops within about 0.1 ms).
pub const CHECK_EVERY: usize = 4096;

/// One search's "nobody waits for it any more" flag.
#[derive(Clone, Debug, Default)]
pub struct Cancel(Arc<AtomicBool>);

thread_local! {
    static CURRENT: RefCell<Option<Cancel>> = const { RefCell::new(None) };
}

impl Cancel {
    pub fn new() -> Cancel {
        Cancel::default()
    }

    /// A flag raised from elsewhere: work done ahead stops when a commit
    /// waits for the index (`index::quiet::Commits::writing`).
    pub fn watching(flag: Arc<AtomicBool>) -> Cancel {
        Cancel(flag)
    }

    /// Asks the search to stop.
    pub fn cancel(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }

    /// Runs `f` with this flag as the thread's current one ([`requested`]
    /// reads it), restoring the one before afterwards.
    pub fn scope<R>(&self, f: impl FnOnce() -> R) -> R {
        struct Restore(Option<Cancel>);
        impl Drop for Restore {
            fn drop(&mut self) {
                let before = self.0.take();
                CURRENT.with(|c| *c.borrow_mut() = before);
            }
        }
        let _restore = Restore(CURRENT.with(|c| c.borrow_mut().replace(self.clone())));
        f()
    }

    /// A guard that cancels this search when dropped, unless
    /// [`disarmed`](CancelOnDrop::disarm) first: held by a handler's
    /// future, which the server drops when the client goes away.
    pub fn on_drop(&self) -> CancelOnDrop {
        CancelOnDrop(Some(self.clone()))
    }
}

/// See [`Cancel::on_drop`].
#[derive(Debug)]
pub struct CancelOnDrop(Option<Cancel>);

impl CancelOnDrop {
    /// The search is answered: it is no longer cancelled when this goes.
    pub fn disarm(mut self) {
        self.0 = None;
    }
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if let Some(c) = self.0.take() {
            c.cancel();
        }
    }
}

/// The thread's current flag (to take along to a helper thread).
pub fn current() -> Option<Cancel> {
    CURRENT.with(|c| c.borrow().clone())
}

/// True when the search this thread runs has been cancelled.
#[inline]
pub fn requested() -> bool {
    CURRENT.with(|c| c.borrow().as_ref().is_some_and(Cancel::is_cancelled))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_flag_is_seen_only_inside_its_scope_and_by_threads_that_take_it() {
        let c = Cancel::new();
        assert!(!requested());
        c.scope(|| {
            assert!(!requested());
            c.cancel();
            assert!(requested());
            // A nested scope shadows, then gives back, the outer flag.
            Cancel::new().scope(|| assert!(!requested()));
            assert!(requested());
            let taken = current();
            std::thread::scope(|s| {
                s.spawn(|| assert!(!requested()));
                s.spawn(|| taken.unwrap().scope(|| assert!(requested())));
            });
        });
        assert!(!requested());
    }

    #[test]
    fn a_cancelled_search_answers_nothing_and_the_others_are_unchanged() {
        use crate::index::Snapshot;
        use crate::queries::query::Query;
        use crate::queries::search::Sort;
        use crate::store::{Change, EntryRow, Kind};
        let row = |id: i64, parent: Option<i64>, name: &str, kind| {
            Change::Upsert(EntryRow::for_test(id, parent, name.as_bytes(), kind))
        };
        let mut s = Snapshot::default();
        let mut rows = vec![row(1, None, "/r", Kind::Dir)];
        rows.extend((2..10_000).map(|i| row(i, Some(1), &format!("report {i}.txt"), Kind::File)));
        s.apply(rows, None);
        let search = |q: &str| {
            s.search_order(
                &Query::parse(q).unwrap(),
                Sort::Relevance,
                0,
                200,
                false,
                None,
            )
        };
        for q in ["r", "report 12", "ext:txt", "zzz"] {
            let plain = search(q);
            let c = Cancel::new();
            assert_eq!(c.scope(|| search(q)), plain, "{q}");
            c.cancel();
            assert_eq!(c.scope(|| search(q)), (0, Vec::new()), "{q}");
        }
        assert_eq!(search("r").0, 9_998);
    }

    #[test]
    fn a_guard_cancels_when_dropped_unless_disarmed() {
        let (a, b) = (Cancel::new(), Cancel::new());
        drop(a.on_drop());
        b.on_drop().disarm();
        assert!(a.is_cancelled());
        assert!(!b.is_cancelled());
    }
}
