//! Answering questions from the index, never from the file system: name
//! search and its query language ([`search`], [`query`], [`fold`]), disk
//! usage ([`du`]), duplicates ([`dupes`]), the condensed map ([`fsmap`]),
//! browsing ([`browse`]) and what a caller may see ([`access`]).

pub mod access;
pub mod browse;
pub mod du;
pub mod dupes;
pub mod fold;
pub mod fsmap;
pub mod query;
pub mod search;
