//! What differs between operating systems, one function per concern.
//!
//! [`fs`]: file-system calls on paths of any length (walking and stat'ing
//! relative to an open folder, as GNU find does).

pub mod bytes;
pub mod fs;
pub mod mounts;
pub mod process;
pub mod service;
