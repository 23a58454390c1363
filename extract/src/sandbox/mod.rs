//! Running risky extractors in a child process that may die.
//!
//! PDF, zip and mail parsers are third-party code fed hostile bytes: any of
//! them can panic, loop, recurse past the stack or allocate without bound on
//! a malformed file. None of that may reach the daemon, so those kinds are
//! extracted by a child (`fsindex-extract-child`, which calls [`child_main`]):
//! it lowers its own CPU and I/O priority, limits its own address space, and
//! serves one file at a time over its stdin/stdout ([`protocol`]). The
//! parent side ([`Extractor`], or [`Pool`] for several workers) waits for
//! each answer with a time limit and kills and respawns the child on timeout
//! or crash: a bad file costs that one file, reported as a [`Failure`].
//!
//! [`Failure`]: crate::Failure

mod child;
mod pool;
mod priority;
pub mod protocol;

pub use child::child_main;
pub use pool::{Extractor, Pool};

use crate::Limits;
use std::time::Duration;

/// The environment variable through which the parent tells the child its
/// address-space limit in bytes (set by [`Extractor`] on its command).
pub const MEMORY_ENV: &str = "FSINDEX_EXTRACT_MEMORY";

/// How the child is bounded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxConfig {
    /// Per-file bounds, sent with every request.
    pub limits: Limits,
    /// Longest one file may take before the child is killed: 30 s (a large
    /// PDF takes a few seconds on this 2-core machine at nice 19).
    pub timeout: Duration,
    /// The child's address-space limit (RLIMIT_AS): 1 GiB. It must cover the
    /// executable's own mappings and a 50 MiB document parsed into objects;
    /// past it an allocation fails and the child dies, counted as `memory`.
    pub memory_limit: u64,
}

impl Default for SandboxConfig {
    fn default() -> Self {
        SandboxConfig {
            limits: Limits::default(),
            timeout: Duration::from_secs(30),
            memory_limit: 1 << 30,
        }
    }
}
