//! Answering questions from the name index and the store, never from the
//! file system: name search and its query language ([`search`],
//! [`query`]), disk usage ([`du`]), duplicates ([`dupes`]), the condensed
//! map ([`fsmap`]), browsing ([`browse`]), what a caller may see
//! ([`access`]), content snippets ([`snippet`]), the user's labels in
//! queries ([`labels`]) and saved searches (`@name`, [`saved`]); names
//! compared without their accents on request ([`accents`]); a search
//! nobody waits for stops early ([`cancel`]); a query in the terms of the
//! fleet's search in PostgreSQL ([`fleet`]).

pub mod accents;
pub mod access;
pub mod browse;
pub mod cancel;
pub mod du;
pub mod dupes;
pub mod fleet;
pub mod fsmap;
pub mod labels;
pub mod mailbox;
pub mod media;
pub mod photos;
pub mod projects;
pub mod query;
pub mod saved;
pub mod search;
pub mod snippet;
