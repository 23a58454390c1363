//! What the writer's changes look like to subscribers (`fsctl watch`, the
//! Subscribe RPC): one event per applied change, in paths.

use crate::store::Kind;

/// What happened to an entry, for subscribers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChangeKind {
    Created,
    Modified,
    /// The entry and its whole subtree.
    Deleted,
    Renamed,
}

/// One applied change, in paths.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChangeEvent {
    pub kind: ChangeKind,
    pub path: Vec<u8>,
    /// The old path of a rename.
    pub from: Vec<u8>,
    pub entry: Kind,
}
