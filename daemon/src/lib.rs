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

use std::path::PathBuf;

/// Errors of the engine. What stops the daemon (a newer schema, a held
/// lock) is separate from what a single request gets back (a bad query, a
/// path outside every root).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    #[error(
        "{path} was written by a newer fsindex (schema {found}, this binary knows up to {known}); refusing to open or modify it. Upgrade fsindex, or use another FSINDEX_HOME"
    )]
    NewerSchema {
        path: PathBuf,
        found: u32,
        known: u32,
    },
    #[error("another fsindexd already runs for this instance (lock {0} is held)")]
    AlreadyRunning(PathBuf),
    #[error("{0}")]
    InvalidQuery(String),
    #[error("{0} is not under any root (roots: {1})")]
    NotUnderRoot(String, String),
    #[error("{0} is not in the index")]
    NotFound(String),
    #[error("{0}")]
    InvalidArgument(String),
    /// The request is valid but the index is not set up to answer it.
    #[error("{0}")]
    Precondition(String),
    #[error("index writer stopped")]
    WriterGone,
    #[error("cancelled: the daemon is shutting down")]
    Cancelled,
    #[error("database: {0}")]
    Sqlite(#[from] rusqlite::Error),
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

impl From<Error> for tonic::Status {
    fn from(e: Error) -> Self {
        let msg = e.to_string();
        match e {
            Error::InvalidQuery(_) | Error::InvalidArgument(_) => {
                tonic::Status::invalid_argument(msg)
            }
            Error::NotUnderRoot(..) | Error::NotFound(_) => tonic::Status::not_found(msg),
            Error::AlreadyRunning(_) | Error::NewerSchema { .. } | Error::Precondition(_) => {
                tonic::Status::failed_precondition(msg)
            }
            Error::Cancelled => tonic::Status::cancelled(msg),
            Error::WriterGone | Error::Sqlite(_) | Error::Io(_) => tonic::Status::internal(msg),
        }
    }
}

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
