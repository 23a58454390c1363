//! What differs between operating systems, one function per concern:
//! [`bytes`] (paths as the bytes the index stores), [`fs`] (file-system
//! calls on paths of any length, relative to an open folder as GNU find
//! does), [`mounts`] (mounted file systems and their types), [`peer`] (the
//! caller's identity on the socket), [`process`]
//! (low priority for background work, giving memory back), [`service`]
//! (systemd and Windows service glue) and [`tags`] (tags other programs
//! wrote on a file: `user.xdg.tags`; Finder tags, decoded by
//! [`finder_tags`]).

pub mod bytes;
pub mod finder_tags;
pub mod fs;
pub mod mounts;
pub mod peer;
pub mod process;
pub mod service;
pub mod tags;
