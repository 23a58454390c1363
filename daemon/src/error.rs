//! Errors, split by what they stop (watchexec's critical/runtime split).
//!
//! - [`Critical`]: the daemon cannot run at all (an index written by a newer
//!   fsindex, another daemon holding the lock, an index that cannot be
//!   opened). `main` prints it and exits; nothing else sees it.
//! - [`Error`]: what one request gets back. Each variant has one gRPC code,
//!   given in exactly one place (`server::convert`).
//! - [`Runtime`]: what goes wrong while work goes on (a scan that could not
//!   finish, a watcher batch that could not be applied). It is logged and
//!   shown in `status` (the root's state and error), and work continues; a
//!   request that waited for that very work gets it as an [`Error`].

use std::path::PathBuf;

/// What stops the daemon.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Critical {
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
    #[error("opening the index: {0}")]
    Index(#[from] Error),
}

impl From<rusqlite::Error> for Critical {
    fn from(e: rusqlite::Error) -> Self {
        Critical::Index(e.into())
    }
}

impl From<std::io::Error> for Critical {
    fn from(e: std::io::Error) -> Self {
        Critical::Index(e.into())
    }
}

/// What a request gets back.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A query that does not parse; the message points at the bad part.
    #[error("{0}")]
    InvalidQuery(String),
    #[error("{0}")]
    InvalidArgument(String),
    #[error("{0} is not under any root (roots: {1})")]
    NotUnderRoot(String, String),
    /// Not in the index, or not visible to this caller (the two are
    /// answered alike, so an answer never tells whether something exists).
    #[error("{0} is not in the index")]
    NotFound(String),
    /// The caller may not do this (change the roots of a machine-wide
    /// index, list a folder it cannot open).
    #[error("{0}")]
    PermissionDenied(String),
    /// What the request names does not exist (a bookmark), said whole.
    #[error("{0}")]
    Missing(String),
    /// What the request would make exists already (a bookmark's name).
    #[error("{0}")]
    Exists(String),
    /// The request is valid but the index is not set up to answer it.
    #[error("{0}")]
    Precondition(String),
    /// What the request waits for did not happen in time (`--sync`).
    #[error("{0}")]
    Timeout(String),
    /// Work the request waited for failed (a scan of the path asked for).
    #[error("{0}")]
    Failed(Runtime),
    /// The daemon is stopping: its writer or scanner is gone.
    #[error("index writer stopped: the daemon is shutting down")]
    WriterGone,
    /// The caller went away, or the daemon is shutting down mid-request.
    #[error("cancelled: the daemon is shutting down")]
    Cancelled,
    #[error("database: {0}")]
    Sqlite(#[from] rusqlite::Error),
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// What goes wrong while work goes on: logged, kept in the root's state for
/// `status`, and given to a request only if it waited for that work.
#[derive(Clone, Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Runtime {
    /// A scan of `path` stopped before the end.
    #[error("scanning {path} failed: {reason}", path = .path.display())]
    Scan { path: PathBuf, reason: String },
    /// The root was removed while its scan waited in the queue.
    #[error("the root was removed")]
    RootRemoved,
    /// The root's folder is gone (deleted, moved away, unmounted): its
    /// entries left the index; it is scanned again when it is back.
    #[error("{path} is gone (deleted, moved away or unmounted): its entries are out of the index until it is back", path = .path.display())]
    RootGone { path: PathBuf },
    /// The path to scan is not under the root (it moved away meanwhile).
    #[error("{path} is not under {root}", path = .path.display(), root = .root.display())]
    Outside { path: PathBuf, root: PathBuf },
    /// The index could not be read to start the work.
    #[error("reading the index: {0}")]
    Index(String),
}

impl From<Runtime> for Error {
    fn from(e: Runtime) -> Self {
        Error::Failed(e)
    }
}
