//! Re-reading `config.toml` while running (`SIGHUP`, `fsctl reload`).
//!
//! The new file is read and checked whole before anything changes: an
//! invalid file is refused with its line and reason, and the running
//! configuration stays. A valid one is applied without losing the index:
//! roots are added and removed (a new root is scanned at once), hashing
//! modes, content folders and the log level change in place. What needs a restart (the
//! listen address, watch settings, the fleet) is named in the answer.

use crate::LockOk;
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use crate::Error;
use crate::config::{Config, Paths};
use crate::engine::{Engine, HashSettings};
use crate::queries::dupes::HashMode;

/// Changes the log filter (`info`, `fsindexd=debug`).
pub type SetLog = Box<dyn Fn(&str) -> Result<(), String> + Send + Sync>;

/// What the command line set, which a reload keeps.
#[derive(Clone, Debug, Default)]
pub struct CommandLine {
    /// Roots given with `--root`: they stay whatever the file says.
    pub roots: Vec<PathBuf>,
    /// `--hashing`, which wins over the file's default.
    pub hashing: Option<HashMode>,
    /// `--content`: content on under every `--root`.
    pub content: bool,
}

/// What the daemon was started with, and the config in force.
pub struct Reloader {
    path: PathBuf,
    paths: Paths,
    current: Mutex<Config>,
    engine: Arc<Engine>,
    cli: CommandLine,
    set_log: Option<SetLog>,
}

impl std::fmt::Debug for Reloader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reloader")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

impl Reloader {
    pub fn new(
        path: PathBuf,
        paths: Paths,
        current: Config,
        engine: Arc<Engine>,
        cli: CommandLine,
        set_log: Option<SetLog>,
    ) -> Reloader {
        Reloader {
            path,
            paths,
            current: Mutex::new(current),
            engine,
            cli,
            set_log,
        }
    }

    pub fn path(&self) -> &std::path::Path {
        &self.path
    }

    /// The hashing settings a config asks for, with `--hashing` applied.
    pub fn hashing(config: &Config, cli: Option<HashMode>) -> HashSettings {
        let mut settings = HashSettings {
            default: cli.or(config.hashing).unwrap_or_default(),
            per_root: Default::default(),
        };
        for (root, mode) in config.root_hashing() {
            let root = crate::ingest::scan::canonical_root(&root).unwrap_or(root);
            settings.per_root.insert(root, mode);
        }
        settings
    }

    /// Re-reads the file and applies it; returns one line per change. An
    /// invalid file changes nothing.
    pub fn reload(&self) -> Result<Vec<String>, Error> {
        let new = Config::load(&self.path).map_err(|e| Error::InvalidArgument(e.to_string()))?;
        // Everything that can fail is checked before anything changes.
        let rules = crate::ingest::exclude::Rules::from_config(&new, &self.paths)
            .map_err(|e| Error::InvalidArgument(format!("{}: {e}", self.path.display())))?;
        let mut current = self.current.lock_ok();
        let mut changes = Vec::new();

        // Roots: the file's roots (plus any given with --root) become the
        // roots; a file without roots leaves them as they are.
        if !new.roots.is_empty() {
            let mut wanted = BTreeSet::new();
            for r in self.cli.roots.iter().chain(&new.roots) {
                let canon = crate::ingest::scan::canonical_root(r).map_err(|e| {
                    Error::InvalidArgument(format!(
                        "{}: root {}: {e}",
                        self.path.display(),
                        r.display()
                    ))
                })?;
                wanted.insert(canon);
            }
            let have: Vec<Vec<u8>> = self
                .engine
                .root_views()?
                .into_iter()
                .map(|v| v.path)
                .collect();
            let wanted: Vec<PathBuf> = wanted.into_iter().collect();
            let (remove, add) = super::roots::root_changes(&wanted, &have)?;
            for gone in remove {
                self.engine.remove_root(&gone)?;
                changes.push(format!("removed root {}", gone.display()));
            }
            for added in add {
                self.engine.add_root(&added, false)?;
                changes.push(format!("added root {} (scanning)", added.display()));
            }
        }

        if new.excludes != current.excludes
            || new.default_excludes != current.default_excludes
            || new.sensitive != current.sensitive
            || new.root != current.root
            || new.cross_filesystems != current.cross_filesystems
        {
            self.engine.set_rules(rules)?;
            changes.push(
                "exclusions, sensitive tiers or file-system crossing changed: rescanning every root"
                    .into(),
            );
        }

        let hashing = Self::hashing(&new, self.cli.hashing);
        if hashing != Self::hashing(&current, self.cli.hashing) {
            self.engine.set_hashing(hashing)?;
            changes.push("hashing modes updated".into());
        }

        let content = |c: &Config| {
            crate::engine::ContentSettings::from_config(c, &self.cli.roots, self.cli.content)
        };
        let wanted = content(&new);
        if wanted != content(&current) {
            self.engine.set_content(wanted)?;
            changes
                .push("content folders updated: reading what is new, dropping what is off".into());
        }

        if new.log_level != current.log_level
            && std::env::var_os("FSINDEX_LOG").is_none()
            && let Some(set) = &self.set_log
        {
            let level = new.log_level.as_deref().unwrap_or("info");
            set(level).map_err(Error::InvalidArgument)?;
            changes.push(format!("log level {level}"));
        }

        let restart = [
            (
                "listen",
                new.listen != current.listen || new.allow_remote != current.allow_remote,
            ),
            ("watch", new.watch != current.watch),
            ("max_watches", new.max_watches != current.max_watches),
            (
                "poll_interval_secs",
                new.poll_interval_secs != current.poll_interval_secs,
            ),
            (
                "log_retention_days",
                new.log_retention_days != current.log_retention_days,
            ),
            ("fleet", new.fleet != current.fleet),
        ];
        for (key, changed) in restart {
            if changed {
                changes.push(format!(
                    "{key} changed: takes effect when the daemon restarts"
                ));
            }
        }
        if changes.is_empty() {
            changes.push("no changes".into());
        }
        *current = new;
        tracing::info!(file = %self.path.display(), changes = %changes.join("; "), "config reloaded");
        Ok(changes)
    }
}
