//! One module per subcommand: an `Args` struct and a `run`.

pub mod bookmark;
pub mod cat;
pub mod completions;
pub mod du;
pub mod dupes;
pub mod fleet;
pub mod history;
pub mod info;
pub mod ls;
pub mod man;
pub mod manifest;
pub mod map;
pub mod mcp;
pub mod organise;
pub mod projects;
pub mod reload;
pub mod roots;
pub mod saved;
pub mod scan;
pub mod search;
pub mod service;
pub mod status;
pub mod tag;
pub mod tree;
pub mod verify;
pub mod watch;
