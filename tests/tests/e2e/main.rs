//! End-to-end tests: the real `fsindexd` and `fsctl` binaries, real SQLite
//! files, real temp trees, gRPC over a real unix socket. Oracles are
//! independent of fsindex: GNU `find` for the walk, GNU `du` for sizes.
//!
//! Linux only: the oracles, `setpriv` and the unix socket are Linux's
//! (macOS and Windows are type-checked, see `.ci/xcheck.sh`).
#![cfg(target_os = "linux")]

mod abuse;
mod accents;
mod archives;
mod bad_input;
mod browse;
mod clients;
mod config;
mod containers;
mod content;
mod du;
mod dupes;
mod exclude;
mod fleet;
mod fleet_content;
mod fleet_tls;
mod fleet_visibility;
mod fuzz;
mod held;
mod labels;
mod manifest;
mod map;
mod mcp;
mod mcp_clients;
mod mcp_fuzz;
mod mcp_names;
mod mcp_robust;
mod media;
mod media_documents;
mod organise;
mod outlook;
mod photos;
mod priority;
mod projects;
mod query;
mod read_text;
mod restart;
mod saved;
mod search;
mod security;
mod service;
mod snapshots;
mod stems;
mod user_watch;
mod util;
mod verify;
mod watch;
mod workloads;
