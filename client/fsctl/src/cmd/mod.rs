//! One module per subcommand: an `Args` struct and a `run`.

pub mod du;
pub mod roots;
pub mod scan;
pub mod search;
pub mod status;
pub mod verify;
pub mod watch;
