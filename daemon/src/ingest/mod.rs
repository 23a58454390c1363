//! Getting the file system into the index: walking and reconciling
//! ([`scan`]), deciding what may enter ([`exclude`]), and keeping it current
//! ([`watch`]). Everything here produces change batches for the store's
//! single writer; nothing here answers a query.

pub mod exclude;
pub mod scan;
pub mod watch;
