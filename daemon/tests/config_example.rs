//! `packaging/config.example.toml` must stay a valid config: the daemon's
//! `Config` denies unknown keys, so a renamed or removed field fails here.

use std::path::PathBuf;

use fsindexd::config::{Config, RootOptions};
use fsindexd::ingest::watch::BackendKind;
use fsindexd::queries::dupes::HashMode;

const EXAMPLE: &str = include_str!("../../packaging/config.example.toml");

/// The example with its `#key = ...` example lines switched on (prose
/// comments start with `# `); an example replaces the default spelled out
/// for the same key.
fn uncommented() -> String {
    let mut out: Vec<&str> = Vec::new();
    for line in EXAMPLE.lines() {
        let example = line.strip_prefix('#').filter(|rest| {
            rest.starts_with(|c: char| c.is_ascii_lowercase() || c == '[' || c == '"')
        });
        let Some(example) = example else {
            out.push(line);
            continue;
        };
        if let Some((key, _)) = example.split_once(" = ") {
            let table_start = out
                .iter()
                .rposition(|l| l.starts_with('['))
                .map_or(0, |i| i + 1);
            let key = format!("{key} = ");
            if let Some(i) = out[table_start..].iter().position(|l| l.starts_with(&key)) {
                out.remove(table_start + i);
            }
        }
        out.push(example);
    }
    out.join("\n")
}

#[test]
fn config_example_as_shipped_is_the_defaults() {
    let c: Config = toml::from_str(EXAMPLE).unwrap_or_else(|e| panic!("{e}"));
    let d = Config::default();
    assert!(c.roots.is_empty() && c.excludes.is_empty());
    assert_eq!(
        c.default_excludes.unwrap_or(true),
        d.default_excludes.unwrap_or(true)
    );
    assert_eq!(c.cross_filesystems, d.cross_filesystems);
    assert_eq!(c.watch.unwrap_or(true), d.watch.unwrap_or(true));
    assert_eq!(c.max_watches, d.max_watches);
    assert_eq!(
        c.watch_backend.unwrap_or_default(),
        d.watch_backend.unwrap_or_default()
    );
    assert_eq!(c.hashing.unwrap_or_default(), d.hashing.unwrap_or_default());
    assert_eq!(c.listen, None);
    assert!(!c.allow_remote);
    assert_eq!(c.sensitive, d.sensitive);
    assert!(c.root.is_empty() && c.root_hashing.is_empty());
    assert_eq!(c.fleet, d.fleet);
}

#[test]
fn config_example_with_every_example_line_parses() {
    let text = uncommented();
    let c: Config = toml::from_str(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(
        c.roots,
        [PathBuf::from("/home/me"), PathBuf::from("/srv/photos")]
    );
    assert!(c.excludes.contains(&"node_modules".to_string()));
    assert_eq!(c.listen.as_deref(), Some("127.0.0.1:7700"));
    assert_eq!(c.watch_backend, Some(BackendKind::Poll));
    assert!(c.fleet.database.is_some() && c.fleet.password_file.is_some());
    assert!(
        c.sensitive.block.is_some() && c.sensitive.skip.is_some() && c.sensitive.warn.is_some()
    );
    assert_eq!(
        c.sensitive
            .block()
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
        fsindexd::config::Sensitive::DEFAULT_BLOCK
    );
    assert_eq!(
        c.sensitive
            .skip()
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
        fsindexd::config::Sensitive::DEFAULT_SKIP
    );
    assert_eq!(
        c.sensitive
            .warn()
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
        fsindexd::config::Sensitive::DEFAULT_WARN
    );
    assert_eq!(
        c.root.get(&PathBuf::from("/home/me/Photos")),
        Some(&RootOptions {
            one_filesystem: Some(true),
            hashing: Some(HashMode::Background),
            content: Some(false),
        })
    );
    assert_eq!(
        c.root
            .get(&PathBuf::from("/home/me/Notes"))
            .and_then(|r| r.content),
        Some(true)
    );
    assert_eq!(
        c.root
            .get(&PathBuf::from("/mnt/backup"))
            .and_then(|r| r.hashing),
        Some(HashMode::Off)
    );
    assert_eq!(
        c.root_hashing.get(&PathBuf::from("/srv/archive")),
        Some(&HashMode::Off)
    );
}
