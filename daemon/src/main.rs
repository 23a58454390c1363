//! `fsindexd`: the fsindex daemon.
//!
//! Exit codes: 0 clean shutdown, 1 a start-up error (printed as one line),
//! 3 another daemon already runs for this instance.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use fsindexd::config::{Config, Paths};
use std::sync::{Arc, RwLock};

use fsindexd::daemon::{Engine, HashSettings, SnapshotMirror, WatchOptions};
use fsindexd::search::Snapshot;
use fsindexd::server::IndexService;
use fsindexd::store::Store;
use std::collections::HashMap;

/// Background indexing daemon: walks roots into a SQLite index and answers
/// queries over gRPC.
#[derive(Debug, Parser)]
#[command(version, about)]
struct Args {
    /// Root folder to index (repeatable); replaces the recorded roots for this run.
    #[arg(long = "root", value_name = "PATH")]
    roots: Vec<PathBuf>,
    /// Unix socket to listen on (default: the instance's socket).
    #[arg(long, env = "FSINDEX_SOCKET", value_name = "PATH")]
    socket: Option<PathBuf>,
    /// Config file (default: the instance's config.toml).
    #[arg(long, value_name = "PATH")]
    config: Option<PathBuf>,
    /// Do not watch for changes (the index changes only on rescans).
    #[arg(long)]
    no_watch: bool,
    /// At most N folder watches; folders beyond are polled (0: OS limit).
    #[arg(long, value_name = "N")]
    max_watches: Option<usize>,
    /// Seconds between rescans of folders that could not be watched.
    #[arg(long, value_name = "SECS")]
    poll_interval: Option<u64>,
    /// How file contents are hashed for duplicates, unless config.toml
    /// sets a root otherwise: off, on-demand (hashed by a dupes query, then
    /// cached) or background (hashed while idle).
    #[arg(long, value_name = "MODE")]
    hashing: Option<fsindexd::dupes::HashMode>,
    /// Print the default configuration and exit.
    #[arg(long)]
    print_config: bool,
}

fn main() -> ExitCode {
    let args = Args::parse();
    if args.print_config {
        print!(
            "{}",
            toml::to_string(&Config::default()).unwrap_or_default()
        );
        return ExitCode::SUCCESS;
    }
    match run(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("fsindexd: {e:#}");
            match e.downcast_ref::<fsindexd::Error>() {
                Some(fsindexd::Error::AlreadyRunning(_)) => ExitCode::from(3),
                _ => ExitCode::from(1),
            }
        }
    }
}

#[cfg(unix)]
fn private_dir(dir: &std::path::Path) -> std::io::Result<()> {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    if !dir.exists() {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)?;
    }
    let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700));
    Ok(())
}

fn run(args: Args) -> anyhow::Result<()> {
    use anyhow::Context;
    let paths = Paths::from_env();
    let config_path = args.config.clone().unwrap_or_else(|| paths.config.clone());
    let config = Config::load(&config_path)?;
    let socket = args.socket.clone().unwrap_or_else(|| paths.socket.clone());
    for dir in [
        paths.db.parent(),
        socket.parent(),
        Some(paths.logs.as_path()),
    ]
    .into_iter()
    .flatten()
    {
        if !dir.as_os_str().is_empty() {
            private_dir(dir).with_context(|| format!("creating {}", dir.display()))?;
        }
    }

    // One daemon per instance.
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&paths.lock)
        .with_context(|| format!("opening {}", paths.lock.display()))?;
    if lock.try_lock().is_err() {
        return Err(fsindexd::Error::AlreadyRunning(paths.lock.clone()).into());
    }

    let appender = tracing_appender::rolling::Builder::new()
        .rotation(tracing_appender::rolling::Rotation::DAILY)
        .filename_prefix("fsindexd")
        .filename_suffix("log")
        .max_log_files(7)
        .build(&paths.logs)
        .context("opening the log directory")?;
    let (writer, _log_guard) = tracing_appender::non_blocking(appender);
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("FSINDEX_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_ansi(false)
        .with_writer(writer)
        .init();
    tracing::info!(
        version = env!("CARGO_PKG_VERSION"),
        pid = std::process::id(),
        "fsindexd starting"
    );

    let defaults = WatchOptions::default();
    let watch = WatchOptions {
        enabled: !args.no_watch && config.watch.unwrap_or(true),
        max_watches: args.max_watches.unwrap_or(config.max_watches),
        poll_interval: args
            .poll_interval
            .or(config.poll_interval_secs)
            .map_or(defaults.poll_interval, std::time::Duration::from_secs),
        ..defaults
    };
    let snapshot = Arc::new(RwLock::new(Snapshot::default()));
    let (events, _) = tokio::sync::broadcast::channel(4096);
    let mirror = SnapshotMirror {
        snapshot: snapshot.clone(),
        events: events.clone(),
    };
    let (store, writer) = Store::open(&paths.db, Box::new(mirror))?;
    let wanted = if !args.roots.is_empty() {
        Some(args.roots.clone())
    } else if !config.roots.is_empty() {
        Some(config.roots.clone())
    } else {
        None
    };
    let rules = fsindexd::exclude::Rules::from_config(&config, &paths)
        .with_context(|| config_path.display().to_string())?;
    let engine = Engine::start(
        store,
        writer.handle(),
        snapshot,
        wanted,
        rules,
        watch,
        events,
    )?;
    let mut hashing = HashSettings {
        default: args.hashing.or(config.hashing).unwrap_or_default(),
        per_root: HashMap::new(),
    };
    for (root, mode) in &config.root_hashing {
        let root = fsindexd::scan::canonical_root(root).unwrap_or_else(|_| root.clone());
        hashing.per_root.insert(root, *mode);
    }
    engine.set_hashing(hashing)?;

    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    rt.block_on(async {
        // We hold the lock, so any socket file left here is stale.
        let _ = std::fs::remove_file(&socket);
        let listener = tokio::net::UnixListener::bind(&socket)
            .with_context(|| format!("listening on {}", socket.display()))?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&socket, std::fs::Permissions::from_mode(0o600))?;
        }
        tracing::info!(socket = %socket.display(), "listening");
        fsindexd::server::serve(
            IndexService::new(engine.clone()),
            listener,
            shutdown_signal(),
        )
        .await
    })?;
    tracing::info!("shutting down");
    engine.stop();
    drop(engine);
    writer.close();
    let _ = std::fs::remove_file(&socket);
    tracing::info!("stopped");
    Ok(())
}

async fn shutdown_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate()).expect("SIGTERM handler");
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term.recv() => {}
    }
}
