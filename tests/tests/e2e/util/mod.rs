//! Test harness, split as cargo-test-support splits its own:
//!
//! - `instance`: an isolated daemon per test (its own FSINDEX_HOME and
//!   socket), who runs it, and running `fsctl` (and gRPC) against it;
//! - `oracles`: what fsindex should answer, from walks of its own and
//!   GNU `find` and `du`, and readable diffs against it;
//! - `postgres`: a real PostgreSQL server for the fleet tests;
//! - `trees`: temp-tree builders (the awkward tree, wide trees, files with
//!   given times, a seeded generator for random changes).
//!
//! Everything runs the real binaries over a real socket. The test files
//! call `util::X` whichever module `X` lives in.

mod instance;
mod oracles;
mod postgres;
mod trees;

use std::process::Output;
use std::time::{Duration, Instant};

use serde_json::Value;

pub use instance::*;
pub use oracles::*;
pub use postgres::*;
pub use trees::*;

/// The JSON objects of a `--json` command that prints one per line.
pub fn json_lines(out: &Output) -> Vec<Value> {
    out.stdout
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice(l).unwrap())
        .collect()
}

/// Polls `done` every 50 ms until it holds; fails with `what` after
/// `limit` (no sleeps on a guess).
pub fn eventually(limit: Duration, what: &str, done: impl FnMut() -> bool) {
    assert!(poll_until(limit, done), "{what}");
}

/// Polls `done` every 50 ms until it holds or `limit` has passed, and says
/// whether it held. For waits whose failure is reported afterwards, with
/// what the caller last saw (see [`eventually`] for a plain failure).
pub fn poll_until(limit: Duration, mut done: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + limit;
    loop {
        if done() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A command's stdout and stderr, for assertion messages and greps.
pub fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

pub fn lossy(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}
