//! fsindexd: the fsindex daemon as a library.
//!
//! Data flows one way, and the folders follow it:
//!
//! - [`ingest`]: the walker and the watcher produce change batches (what
//!   may enter is decided by [`ingest::exclude`]);
//! - [`store`]: the single writer commits them to SQLite and keeps the
//!   in-memory name index current; root and path look-ups;
//! - [`queries`]: search, du, dupes, map, browsing and per-caller views,
//!   answered from read-only connections and the name index;
//! - [`engine`]: the running daemon (roots and the scan queue, applying
//!   watch batches, `--sync`, hashing) and its read side, one call per RPC;
//! - [`server`]: the gRPC service, conversions and transport only;
//! - [`platform`]: what differs between operating systems (paths as bytes,
//!   long paths, priority, mounts, the service manager);
//! - [`error`]: what stops the daemon, what a request gets, what is
//!   counted while work goes on.

pub mod config;
pub mod engine;
pub mod index;
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
