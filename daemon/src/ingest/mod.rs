//! Getting the file system into the index: walking and reconciling
//! ([`scan`]), deciding what may enter ([`exclude`]), keeping it current
//! ([`watch`]), and turning a batch of watcher events into store operations
//! ([`changes`]). Everything here produces change batches for the store's
//! single writer; nothing here answers a query.

pub mod changes;
pub mod exclude;
pub mod scan;
pub mod watch;
