//! Instance paths and the config file, with the enums its settings take
//! ([`BackendKind`], [`HashMode`]): they live here, below the layers that
//! act on them, which re-export them.
//!
//! `FSINDEX_HOME=DIR` puts config, index, socket, lock and logs all under DIR
//! (an isolated instance: every test uses one). Otherwise the platform's
//! directories apply (XDG on Linux).

use std::path::{Path, PathBuf};

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The name of the instance's socket: a unix socket, or on Windows a file
/// holding the loopback TCP address the daemon listens on (clients read it
/// and send the token). Must agree with `fsindex_client::SOCKET_FILE`.
#[cfg(unix)]
pub const SOCKET_FILE: &str = "fsindexd.sock";
/// See the Unix one.
#[cfg(not(unix))]
pub const SOCKET_FILE: &str = "fsindexd.addr";

/// The machine-wide instance's folder on Windows: `%ProgramData%\fsindex`.
#[cfg(not(unix))]
pub fn system_dir() -> PathBuf {
    let data = std::env::var_os("ProgramData")
        .filter(|d| !d.is_empty())
        .unwrap_or_else(|| r"C:\ProgramData".into());
    Path::new(&data).join("fsindex")
}

/// Where one instance keeps its files.
#[derive(Clone, Debug)]
pub struct Paths {
    pub config: PathBuf,
    pub db: PathBuf,
    pub socket: PathBuf,
    pub lock: PathBuf,
    pub logs: PathBuf,
    /// The bearer token for TCP clients (beside config.toml).
    pub token: PathBuf,
}

impl Paths {
    /// The instance selected by `FSINDEX_HOME`, or the per-user default.
    pub fn from_env() -> Paths {
        if let Some(home) = std::env::var_os("FSINDEX_HOME").filter(|h| !h.is_empty()) {
            return Paths::under(Path::new(&home));
        }
        let dirs = directories::ProjectDirs::from("", "", "fsindex");
        match dirs {
            Some(d) => {
                let data = d.data_dir().to_owned();
                let runtime = d
                    .runtime_dir()
                    .map(Path::to_owned)
                    .unwrap_or_else(|| data.clone());
                Paths {
                    config: d.config_dir().join("config.toml"),
                    token: d.config_dir().join("token"),
                    db: data.join("index.db"),
                    socket: runtime.join(SOCKET_FILE),
                    lock: data.join("fsindexd.lock"),
                    logs: data.join("logs"),
                }
            }
            None => Paths::under(Path::new(".fsindex")),
        }
    }

    /// The machine-wide instance (`fsindexd --system`), unless
    /// `FSINDEX_HOME` names another.
    pub fn system() -> Paths {
        if let Some(home) = std::env::var_os("FSINDEX_HOME").filter(|h| !h.is_empty()) {
            return Paths::under(Path::new(&home));
        }
        #[cfg(unix)]
        return Paths {
            config: "/etc/fsindex/config.toml".into(),
            token: "/etc/fsindex/token".into(),
            db: "/var/lib/fsindex/index.db".into(),
            socket: "/run/fsindex/fsindexd.sock".into(),
            lock: "/var/lib/fsindex/fsindexd.lock".into(),
            logs: "/var/log/fsindex".into(),
        };
        // Windows: everything in %ProgramData%\fsindex, which the daemon
        // closes to everyone but SYSTEM and Administrators (see main.rs).
        #[cfg(not(unix))]
        Paths::under(&system_dir())
    }

    pub fn under(home: &Path) -> Paths {
        Paths {
            config: home.join("config.toml"),
            token: home.join("token"),
            db: home.join("index.db"),
            socket: home.join(SOCKET_FILE),
            lock: home.join("fsindexd.lock"),
            logs: home.join("logs"),
        }
    }
}

/// `config.toml`. Unknown keys are an error, so a typo is not silently ignored.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    /// Roots to index. Empty: keep the roots recorded in the index, or the
    /// home directory on first start.
    pub roots: Vec<PathBuf>,
    /// Descend into other file systems under a root (off: like `du -x`).
    pub cross_filesystems: bool,
    /// Watch roots for changes (on by default).
    pub watch: Option<bool>,
    /// Which watcher: "auto" (inotify on Linux, notify elsewhere),
    /// "inotify", "notify" (FSEvents, ReadDirectoryChangesW) or "poll"
    /// (nothing watched: every root rescanned each `poll_interval_secs`).
    pub watch_backend: Option<BackendKind>,
    /// At most this many folder watches (0: as many as the OS allows);
    /// folders beyond are polled.
    pub max_watches: usize,
    /// Seconds between rescans of folders that could not be watched.
    pub poll_interval_secs: Option<u64>,
    /// How file contents are hashed for duplicates: "off", "on-demand"
    /// (the default: by a dupes query, then cached) or "background".
    pub hashing: Option<HashMode>,
    /// Per-root hashing modes, e.g. `"/home/me/Photos" = "background"`.
    pub root_hashing: BTreeMap<PathBuf, HashMode>,
    /// Per-root options: `[root."/home/me/Photos"]` with `one_filesystem`
    /// and `hashing`.
    pub root: BTreeMap<PathBuf, RootOptions>,
    /// Extra exclusions: globs matched against a name (`node_modules`,
    /// `*.tmp`) or, when they hold a `/`, against the end of the path
    /// (`build/*.o`; a leading `/` anchors: `/home/me/scratch`); a trailing
    /// `/` matches folders only. Case-sensitive on Linux. Excluded entries
    /// are neither indexed nor watched, and folders not descended into
    /// (see `ingest/exclude.rs`).
    pub excludes: Vec<String>,
    /// The built-in exclusions: pseudo and network file systems (/proc,
    /// /sys, /dev, /run, and mount points of types such as nfs, cifs,
    /// sshfs; see `ingest/exclude.rs`) unless a root lies on one, the trash
    /// and cache folders, and the index's own directory. On unless set to
    /// false.
    pub default_excludes: Option<bool>,
    /// Sensitive files in three tiers.
    pub sensitive: Sensitive,
    /// Also listen on this TCP address (`127.0.0.1:7700`); every request
    /// must then carry the bearer token kept in the config directory.
    pub listen: Option<String>,
    /// Allow `listen` on an address that is not loopback.
    pub allow_remote: bool,
    /// Log level or filter for the log files (`info`, `debug`,
    /// `fsindexd=debug`); `FSINDEX_LOG` overrides it.
    pub log_level: Option<String>,
    /// Daily log files kept in the log directory (default 7).
    pub log_retention_days: Option<usize>,
    /// Most text indexed per file for content search, in bytes (default
    /// 2 MiB; the rest of a longer file is not searched).
    pub content_max_text_bytes: Option<u64>,
    /// Ship this index into a fleet's PostgreSQL (`[fleet]`).
    pub fleet: FleetConfig,
}

/// `[fleet]`: where this host ships its index (see GUIDE.md, "The fleet").
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct FleetConfig {
    /// `postgresql://user@host:port/db`; no fleet when unset.
    pub database: Option<String>,
    /// This host's name in the fleet (default: the machine's host name).
    pub host: Option<String>,
    /// A file whose first line is the password (else `PGPASSFILE` or
    /// `~/.pgpass`, as psql reads them, unless the URL holds one).
    pub password_file: Option<PathBuf>,
    /// Ship what files say too (the text the content worker extracted,
    /// for `fsctl fleet search content:`); default: names and metadata.
    pub content: bool,
}

/// Which watcher to use (`watch_backend` in config.toml, `--watch-backend`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum BackendKind {
    /// inotify on Linux, notify elsewhere.
    #[default]
    Auto,
    /// Linux's inotify, used directly (Linux only).
    Inotify,
    /// The notify crate: FSEvents on macOS, ReadDirectoryChangesW on
    /// Windows, inotify on Linux.
    Notify,
    /// No watches: every root is rescanned every poll interval.
    Poll,
}

impl BackendKind {
    pub fn as_str(self) -> &'static str {
        match self {
            BackendKind::Auto => "auto",
            BackendKind::Inotify => "inotify",
            BackendKind::Notify => "notify",
            BackendKind::Poll => "poll",
        }
    }

    /// What `auto` means here.
    pub fn resolved(self) -> BackendKind {
        match self {
            BackendKind::Auto if cfg!(target_os = "linux") => BackendKind::Inotify,
            BackendKind::Auto => BackendKind::Notify,
            other => other,
        }
    }
}

impl std::str::FromStr for BackendKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "auto" => Ok(BackendKind::Auto),
            "inotify" => Ok(BackendKind::Inotify),
            "notify" => Ok(BackendKind::Notify),
            "poll" => Ok(BackendKind::Poll),
            _ => Err(format!(
                "unknown watch backend `{s}`: use auto, inotify, notify or poll"
            )),
        }
    }
}

/// How a root's files are hashed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum HashMode {
    /// Never: `dupes` leaves the root out.
    Off,
    /// Computed by a `dupes` query, then cached.
    #[default]
    OnDemand,
    /// Computed at low priority while the daemon is idle, then cached.
    Background,
}

impl HashMode {
    pub fn as_str(self) -> &'static str {
        match self {
            HashMode::Off => "off",
            HashMode::OnDemand => "on-demand",
            HashMode::Background => "background",
        }
    }
}

impl std::str::FromStr for HashMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "off" => Ok(HashMode::Off),
            "on-demand" => Ok(HashMode::OnDemand),
            "background" => Ok(HashMode::Background),
            _ => Err(format!(
                "unknown hashing mode `{s}`: use off, on-demand or background"
            )),
        }
    }
}

/// Options for one root.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields, default)]
pub struct RootOptions {
    /// Stay on the root's file system (like `du -x`), for its scans and
    /// its watcher events; the global `cross_filesystems` decides when
    /// unset.
    pub one_filesystem: Option<bool>,
    /// Hashing mode for this root.
    pub hashing: Option<HashMode>,
    /// Index what the files under this folder say (`content:` queries).
    /// The folder need not be a root; the deepest folder that sets it
    /// decides. By default on for the user's Documents, Desktop and
    /// Downloads, off elsewhere.
    pub content: Option<bool>,
}

/// Sensitive-file tiers. Each list replaces its default when given.
/// Patterns are globs, matched case-insensitively against the name, or
/// against the end of the path when they hold a `/`.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields, default)]
pub struct Sensitive {
    /// Never indexed, not even the name.
    pub block: Option<Vec<String>>,
    /// Not indexed; shown only when asked for by exact path.
    pub skip: Option<Vec<String>>,
    /// Indexed, flagged in results.
    pub warn: Option<Vec<String>>,
}

impl Sensitive {
    pub const DEFAULT_BLOCK: &[&str] = &[
        "*.pem",
        "*.key",
        "*.p12",
        "*.pfx",
        "id_rsa",
        "id_ed25519",
        "*.keystore",
        ".aws/credentials",
        ".ssh/*",
    ];
    pub const DEFAULT_SKIP: &[&str] = &[
        ".env",
        ".env.*",
        ".npmrc",
        ".pypirc",
        "credentials*",
        "secrets*",
    ];
    pub const DEFAULT_WARN: &[&str] = &["*password*", "*token*", "*secret*"];

    fn list(given: &Option<Vec<String>>, default: &[&str]) -> Vec<String> {
        given
            .clone()
            .unwrap_or_else(|| default.iter().map(|s| s.to_string()).collect())
    }
    pub fn block(&self) -> Vec<String> {
        Self::list(&self.block, Self::DEFAULT_BLOCK)
    }
    pub fn skip(&self) -> Vec<String> {
        Self::list(&self.skip, Self::DEFAULT_SKIP)
    }
    pub fn warn(&self) -> Vec<String> {
        Self::list(&self.warn, Self::DEFAULT_WARN)
    }
}

impl Config {
    /// Reads and checks the config file; none at all is the defaults. An
    /// error names the file, the line and the reason
    /// (`config.toml:3: listen: 10.0.0.1:7700 is not a loopback address ...`).
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        match std::fs::read_to_string(path) {
            Ok(text) => Config::parse(path, &text),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Config::default()),
            Err(e) => Err(ConfigError {
                file: path.to_owned(),
                line: None,
                reason: e.to_string(),
            }),
        }
    }

    /// Parses and checks config text (`path` is for messages).
    pub fn parse(path: &Path, text: &str) -> Result<Config, ConfigError> {
        let err = |line: Option<usize>, reason: String| ConfigError {
            file: path.to_owned(),
            line,
            reason,
        };
        let config: Config = toml::from_str(text).map_err(|e| {
            let line = e.span().map(|s| line_at(text, s.start));
            err(line, e.message().trim().to_owned())
        })?;
        let at = |key: &str| line_of(text, key);
        if let Some(listen) = &config.listen {
            listen_addr(listen, config.allow_remote)
                .map_err(|e| err(at("listen"), format!("listen: {e}")))?;
        }
        if let Some(level) = &config.log_level {
            tracing_subscriber::EnvFilter::try_new(level)
                .map_err(|e| err(at("log_level"), format!("log_level: {level:?}: {e}")))?;
        }
        for root in config.roots.iter().chain(config.root.keys()) {
            if !root.is_absolute() {
                return Err(err(
                    line_of_value(text, root),
                    format!("root {}: give an absolute path", root.display()),
                ));
            }
        }
        let sensitive = [
            ("sensitive.block", &config.sensitive.block),
            ("sensitive.skip", &config.sensitive.skip),
            ("sensitive.warn", &config.sensitive.warn),
        ];
        let lists = std::iter::once(("excludes", Some(&config.excludes))).chain(
            sensitive
                .into_iter()
                .map(|(name, list)| (name, list.as_ref())),
        );
        for (name, list) in lists {
            for pattern in list.into_iter().flatten() {
                if let Err(e) = globset::Glob::new(pattern.trim_start_matches('/')) {
                    return Err(err(
                        line_of_value(text, Path::new(pattern)),
                        format!("{name}: bad pattern {pattern:?}: {}", e.kind()),
                    ));
                }
            }
        }
        if config.log_retention_days == Some(0) {
            return Err(err(
                at("log_retention_days"),
                "log_retention_days: keep at least 1 day".into(),
            ));
        }
        Ok(config)
    }

    /// The hashing mode set for each root, by `[root."PATH"] hashing` or
    /// the older `[root_hashing]`.
    pub fn root_hashing(&self) -> BTreeMap<PathBuf, HashMode> {
        let mut out = self.root_hashing.clone();
        for (root, o) in &self.root {
            if let Some(mode) = o.hashing {
                out.insert(root.clone(), mode);
            }
        }
        out
    }
}

/// The TCP address to serve on: an address and port, loopback unless
/// `allow_remote` (from `--listen` or `listen` in config.toml).
pub fn listen_addr(text: &str, allow_remote: bool) -> Result<std::net::SocketAddr, String> {
    let addr: std::net::SocketAddr = text
        .parse()
        .map_err(|_| format!("{text:?} is not an address and port like 127.0.0.1:7700"))?;
    if !addr.ip().is_loopback() && !allow_remote {
        return Err(format!(
            "{addr} is not a loopback address; refusing to serve the index there unless config.toml sets allow_remote = true"
        ));
    }
    Ok(addr)
}

/// A config file that cannot be used, with where and why.
#[derive(Clone, Debug, thiserror::Error)]
pub struct ConfigError {
    pub file: PathBuf,
    pub line: Option<usize>,
    pub reason: String,
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{line}: {}", self.file.display(), self.reason),
            None => write!(f, "{}: {}", self.file.display(), self.reason),
        }
    }
}

/// The 1-based line holding byte `offset`.
fn line_at(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset.min(text.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

/// The line that sets `key` (`key = ...`), if one does.
fn line_of(text: &str, key: &str) -> Option<usize> {
    text.lines()
        .position(|l| {
            l.trim_start()
                .strip_prefix(key)
                .is_some_and(|rest| rest.trim_start().starts_with('='))
        })
        .map(|i| i + 1)
}

/// The first line that mentions a path.
fn line_of_value(text: &str, value: &Path) -> Option<usize> {
    let v = value.to_string_lossy();
    text.lines()
        .position(|l| l.contains(v.as_ref()))
        .map(|i| i + 1)
}
