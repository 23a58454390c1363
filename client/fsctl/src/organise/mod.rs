//! Organise: a reorganisation plan checked, applied with a journal, and
//! undone. This runs in the client process (fsctl, `fsctl mcp`), never in
//! the daemon: a machine-wide daemon runs as root, and a move must happen
//! with the permissions of the user who asked for it. The journal is a
//! SQLite file of that user's (`journal`), so a `kill -9` mid-apply is
//! finished at the next start and `history` says what happened.
//!
//! - `plan`: the plan as JSON, its paths resolved;
//! - `check`: what is wrong with a plan, the steps it comes to, and the
//!   tree it leaves;
//! - `fsops`: the file-system calls (a rename that never replaces, a copy
//!   checked by BLAKE3 across file systems), one body per OS;
//! - `journal`: the durable record of every step;
//! - `apply`: applying, finishing what a crash left, and undoing.

pub mod apply;
pub mod check;
pub mod fsops;
pub mod journal;
pub mod plan;
