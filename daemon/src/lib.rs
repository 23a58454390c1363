//! fsindexd: the fsindex daemon as a library.
//!
//! Data flows one way: the walker ([`scan`]) produces change batches, the
//! single writer ([`store`]) commits them to SQLite, and query modules
//! ([`search`], [`du`]) answer from read-only connections and the in-memory
//! name index. [`server`] translates gRPC to module calls and nothing more.

pub mod config;
pub mod engine;
pub mod ingest;
pub mod platform;
pub mod queries;
pub mod server;
pub mod store;

pub mod error;

pub use error::{Critical, Error, Runtime};

/// Locks that outlive a panic. A thread that panicked while holding one of
/// the daemon's locks left consistent data behind (every critical section
/// writes whole values), so the others go on rather than fail every later
/// request: `m.lock_ok()` instead of `m.lock().unwrap_or_else(..)`.
pub trait LockOk<T: ?Sized> {
    fn lock_ok(&self) -> std::sync::MutexGuard<'_, T>;
}

impl<T: ?Sized> LockOk<T> for std::sync::Mutex<T> {
    fn lock_ok(&self) -> std::sync::MutexGuard<'_, T> {
        self.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// [`LockOk`] for reader-writer locks.
pub trait RwLockOk<T: ?Sized> {
    fn read_ok(&self) -> std::sync::RwLockReadGuard<'_, T>;
    fn write_ok(&self) -> std::sync::RwLockWriteGuard<'_, T>;
}

impl<T: ?Sized> RwLockOk<T> for std::sync::RwLock<T> {
    fn read_ok(&self) -> std::sync::RwLockReadGuard<'_, T> {
        self.read().unwrap_or_else(|e| e.into_inner())
    }
    fn write_ok(&self) -> std::sync::RwLockWriteGuard<'_, T> {
        self.write().unwrap_or_else(|e| e.into_inner())
    }
}
