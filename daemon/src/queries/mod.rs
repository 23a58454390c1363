//! Answering questions from the index, never from the file system: name
//! search and its query language ([`search`], [`query`], [`fold`]), disk
//! usage ([`du`]), duplicates ([`dupes`]), the condensed map ([`fsmap`]),
//! browsing ([`browse`]), what a caller may see ([`access`]) and content
//! snippets ([`snippet`]). [`slots`] keeps the search snapshot's sparse
//! columns small.

pub mod access;
pub mod browse;
pub mod du;
pub mod dupes;
pub mod fold;
pub mod fsmap;
pub mod query;
pub mod search;
mod slots;
pub mod snippet;
