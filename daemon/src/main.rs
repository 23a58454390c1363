//! `fsindexd`: the fsindex daemon.
//!
//! Exit codes: 0 clean shutdown, 1 a start-up error (printed as one line),
//! 3 another daemon already runs for this instance.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use fsindexd::config::{Config, Paths};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use fsindexd::engine::fleet::{FleetLink, FleetSettings};
use fsindexd::engine::reload::Reloader;
use fsindexd::engine::{Engine, SnapshotMirror, WatchOptions};
use fsindexd::index::Snapshot;
use fsindexd::server::IndexService;
use fsindexd::store::Store;

/// How long a stop waits for the calls in flight once their streams were
/// ended, before cutting them off (systemd waits 90 s, the issue's bound
/// for the whole stop is 2 s).
const SHUTDOWN_GRACE: Duration = Duration::from_secs(1);

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
    /// Index what the files say (for `content:` queries) under every
    /// `--root` of this run.
    #[arg(long)]
    content: bool,
    /// Do not watch for changes (the index changes only on rescans).
    #[arg(long)]
    no_watch: bool,
    /// Which watcher: auto (inotify on Linux, notify elsewhere), inotify,
    /// notify (FSEvents on macOS, ReadDirectoryChangesW on Windows) or poll
    /// (nothing watched; every root rescanned each poll interval).
    #[arg(long, value_name = "NAME")]
    watch_backend: Option<fsindexd::ingest::watch::BackendKind>,
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
    hashing: Option<fsindexd::queries::dupes::HashMode>,
    /// Also listen on this TCP address (e.g. 127.0.0.1:7700). Every request
    /// must carry the bearer token the daemon keeps beside config.toml; an
    /// address that is not loopback needs `allow_remote = true` in config.
    #[arg(long, value_name = "ADDR")]
    listen: Option<String>,
    /// Machine-wide mode, as root: one index for all users, each answer
    /// filtered to what the calling user could see. Uses /etc/fsindex,
    /// /var/lib/fsindex, /run/fsindex and /var/log/fsindex.
    #[arg(long)]
    system: bool,
    /// Seconds a streaming answer waits for a client that takes none of it
    /// before ending it with RESOURCE_EXHAUSTED (default 30).
    #[arg(long, value_name = "SECS", hide = true)]
    slow_reader_secs: Option<u64>,
    /// Print the default configuration and exit.
    #[arg(long)]
    print_config: bool,
    /// Print QUERY as the fleet's `fsindex.search` takes it (JSON) and exit:
    /// how `fsctl fleet search` parses with the daemon's own parser.
    #[arg(long, value_name = "QUERY", hide = true)]
    fleet_query: Option<String>,
    /// Write the man page fsindexd.1 into DIR and exit (for packagers).
    #[arg(long, value_name = "DIR", hide = true)]
    generate_man: Option<PathBuf>,
    /// Run under the Windows service manager (as registered by
    /// `fsctl service install --system`).
    #[cfg(windows)]
    #[arg(long, hide = true)]
    service: bool,
}

fn main() -> ExitCode {
    fsindexd::platform::process::tune_allocator();
    let args = Args::parse();
    if args.print_config {
        print!(
            "{}",
            toml::to_string(&Config::default()).unwrap_or_default()
        );
        return ExitCode::SUCCESS;
    }
    if let Some(q) = &args.fleet_query {
        return match fsindexd::queries::fleet::fleet_terms(q) {
            Ok(v) => {
                println!("{v}");
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("{e}");
                ExitCode::from(2)
            }
        };
    }
    if let Some(dir) = &args.generate_man {
        return generate_man(dir);
    }
    #[cfg(windows)]
    if args.service {
        let result = fsindexd::platform::service::windows::run(move || run(args));
        return match result {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("fsindexd: {e:#}");
                ExitCode::from(1)
            }
        };
    }
    match run(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("fsindexd: {e:#}");
            match e.downcast_ref::<fsindexd::Critical>() {
                Some(fsindexd::Critical::AlreadyRunning(_)) => ExitCode::from(3),
                _ => ExitCode::from(1),
            }
        }
    }
}

/// `--generate-man DIR`: the man page from the same clap definition as `--help`.
fn generate_man(dir: &std::path::Path) -> ExitCode {
    use clap::CommandFactory;
    let man = clap_mangen::Man::new(Args::command());
    match std::fs::create_dir_all(dir).and_then(|()| man.generate_to(dir)) {
        Ok(path) => {
            println!("wrote {}", path.display());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("fsindexd: writing the man page into {}: {e}", dir.display());
            ExitCode::from(1)
        }
    }
}

/// Creates `dir` (and its parents) with this mode, and sets the mode on
/// an existing one.
#[cfg(unix)]
fn dir_with_mode(dir: &std::path::Path, mode: u32) -> std::io::Result<()> {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    if !dir.exists() {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(mode)
            .create(dir)?;
    }
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(mode))
}

/// Creates `dir` (and its parents). Windows: the folders are in the user's
/// profile, whose ACL already keeps other users out; no mode to set.
#[cfg(not(unix))]
fn dir_with_mode(dir: &std::path::Path, _mode: u32) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)
}

/// The bearer token for TCP clients: read, or made at first start (32
/// random bytes as hex) and stored with mode 0600 (Windows: in the user's
/// profile, which only the user can read).
fn token(path: &std::path::Path) -> anyhow::Result<String> {
    use anyhow::Context;
    use std::io::Write;
    if let Ok(t) = std::fs::read_to_string(path) {
        let t = t.trim().to_owned();
        if t.len() >= 32 {
            return Ok(t);
        }
    }
    let mut raw = [0u8; 32];
    getrandom::fill(&mut raw)
        .map_err(|e| anyhow::anyhow!("the OS gave no random bytes for a token: {e}"))?;
    let t: String = raw.iter().map(|b| format!("{b:02x}")).collect();
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    let tmp = path.with_extension("new");
    let _ = std::fs::remove_file(&tmp);
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut f = options
        .open(&tmp)
        .with_context(|| format!("writing {}", tmp.display()))?;
    writeln!(f, "{t}")?;
    f.sync_all()?;
    std::fs::rename(&tmp, path)?;
    Ok(t)
}

/// Where logs go: daily files in the log directory (the oldest removed
/// beyond `retention`), and stderr too when systemd's journal reads it.
/// Returns the guard that flushes the files and a way to change the level.
fn logging(
    paths: &Paths,
    config: &Config,
) -> anyhow::Result<(
    tracing_appender::non_blocking::WorkerGuard,
    fsindexd::engine::reload::SetLog,
)> {
    use anyhow::Context;
    use tracing_subscriber::prelude::*;
    use tracing_subscriber::{EnvFilter, fmt, reload};
    let appender = tracing_appender::rolling::Builder::new()
        .rotation(tracing_appender::rolling::Rotation::DAILY)
        .filename_prefix("fsindexd")
        .filename_suffix("log")
        .max_log_files(config.log_retention_days.unwrap_or(7).max(1))
        .build(&paths.logs)
        .context("opening the log directory")?;
    // The queue to the log thread: its default of 128,000 lines is an array
    // allocated and touched up front (4.1 MiB resident for good). A burst
    // beyond 4,096 lines before the thread writes them is dropped, not
    // waited for (as before, at the larger bound).
    let (writer, guard) = tracing_appender::non_blocking::NonBlockingBuilder::default()
        .buffered_lines_limit(4096)
        .finish(appender);
    let filter = EnvFilter::try_from_env("FSINDEX_LOG").unwrap_or_else(|_| {
        EnvFilter::try_new(config.log_level.as_deref().unwrap_or("info"))
            .unwrap_or_else(|_| EnvFilter::new("info"))
    });
    let (filter, handle) = reload::Layer::new(filter);
    let journal = fsindexd::platform::service::under_systemd();
    tracing_subscriber::registry()
        .with(filter)
        .with(fmt::layer().with_ansi(false).with_writer(writer))
        .with(journal.then(|| {
            fmt::layer()
                .with_ansi(false)
                .without_time()
                .with_target(false)
                .with_writer(std::io::stderr)
        }))
        .init();
    let set: fsindexd::engine::reload::SetLog = Box::new(move |level: &str| {
        let f = EnvFilter::try_new(level).map_err(|e| format!("log_level {level:?}: {e}"))?;
        handle.reload(f).map_err(|e| e.to_string())
    });
    Ok((guard, set))
}

fn run(args: Args) -> anyhow::Result<()> {
    use anyhow::Context;
    if args.system && !running_as_root() {
        #[cfg(unix)]
        anyhow::bail!(
            "--system serves every user and must run as root (it reads everything and answers each caller with what they may see)"
        );
        #[cfg(not(unix))]
        anyhow::bail!(
            "--system reads everything and must run elevated (as the service `fsctl service install --system` registers, or from an administrator prompt)"
        );
    }
    let paths = if args.system {
        Paths::system()
    } else {
        Paths::from_env()
    };
    let config_path = args.config.clone().unwrap_or_else(|| paths.config.clone());
    let config = Config::load(&config_path)?;
    let socket = args.socket.clone().unwrap_or_else(|| paths.socket.clone());
    let listen = match args.listen.as_ref().or(config.listen.as_ref()) {
        None => None,
        Some(a) => Some(
            fsindexd::config::listen_addr(a, config.allow_remote)
                .map_err(|e| anyhow::anyhow!("--listen {e}"))?,
        ),
    };
    for dir in [paths.db.parent(), Some(paths.logs.as_path())]
        .into_iter()
        .flatten()
        .filter(|d| !d.as_os_str().is_empty())
    {
        dir_with_mode(dir, 0o700).with_context(|| format!("creating {}", dir.display()))?;
    }
    // In machine-wide mode every user connects to the socket (and is
    // answered per user); otherwise only its owner can reach it.
    if let Some(dir) = socket.parent().filter(|d| !d.as_os_str().is_empty()) {
        let mode = if args.system { 0o755 } else { 0o700 };
        dir_with_mode(dir, mode).with_context(|| format!("creating {}", dir.display()))?;
    }

    // Windows has no caller identity on the loopback transport, so the
    // machine-wide instance answers administrators only: its folder (token
    // included) is closed to everyone else before the token is written.
    #[cfg(not(unix))]
    if args.system && std::env::var_os("FSINDEX_HOME").is_none() {
        admins_only(&fsindexd::config::system_dir())?;
    }

    // One daemon per instance.
    let lock = {
        let mut options = std::fs::OpenOptions::new();
        options.create(true).truncate(false).write(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        options.open(&paths.lock)
    }
    .with_context(|| format!("opening {}", paths.lock.display()))?;
    if lock.try_lock().is_err() {
        return Err(fsindexd::Critical::AlreadyRunning(paths.lock.clone()).into());
    }

    let (_log_guard, set_log) = logging(&paths, &config)?;
    tracing::info!(
        version = env!("CARGO_PKG_VERSION"),
        pid = std::process::id(),
        system = args.system,
        config = %config_path.display(),
        "fsindexd starting"
    );
    // Windows serves its local clients on loopback TCP too: always a token.
    let token = match listen {
        Some(_) => Some(token(&paths.token)?),
        None if cfg!(windows) => Some(token(&paths.token)?),
        None => None,
    };

    let defaults = WatchOptions::default();
    let watch = WatchOptions {
        enabled: !args.no_watch && config.watch.unwrap_or(true),
        backend: args
            .watch_backend
            .or(config.watch_backend)
            .unwrap_or_default(),
        max_watches: args.max_watches.unwrap_or(config.max_watches),
        poll_interval: args
            .poll_interval
            .or(config.poll_interval_secs)
            .map_or(defaults.poll_interval, Duration::from_secs),
        ..defaults
    };
    let snapshot = Arc::new(RwLock::new(Snapshot::default()));
    let (events, _) = tokio::sync::broadcast::channel(4096);
    let mirror = SnapshotMirror {
        snapshot: snapshot.clone(),
        events: events.clone(),
    };
    // With a fleet configured the writer keeps the journal it ships from.
    let (store, writer) =
        Store::open_with(&paths.db, Box::new(mirror), config.fleet.database.is_some())?;
    let wanted = if !args.roots.is_empty() {
        Some(args.roots.clone())
    } else if !config.roots.is_empty() {
        Some(config.roots.clone())
    } else if args.system {
        Some(vec![PathBuf::from("/")])
    } else {
        None
    };
    let rules = fsindexd::ingest::exclude::Rules::from_config(&config, &paths)
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
    engine.set_hashing(Reloader::hashing(&config, args.hashing))?;
    // The fleet link: a bad [fleet] section is reported in status, never a
    // reason not to serve this host.
    match FleetSettings::from_config(&config.fleet) {
        Ok(Some(settings)) => engine.set_fleet(FleetLink::start(
            engine.store.clone(),
            writer.handle(),
            settings,
        )?),
        Ok(None) => {}
        Err(e) => engine.set_fleet(FleetLink::broken(engine.store.clone(), &config.fleet, e)),
    }
    engine.set_content(fsindexd::engine::ContentSettings::from_config(
        &config,
        &args.roots,
        args.content,
    ))?;
    let reloader = Arc::new(Reloader::new(
        config_path.clone(),
        paths.clone(),
        config,
        engine.clone(),
        fsindexd::engine::reload::CommandLine {
            roots: args.roots.clone(),
            hashing: args.hashing,
            content: args.content,
        },
        Some(set_log),
    ));
    // Turns true on SIGTERM/SIGINT or the service manager's stop: the
    // listeners stop accepting and every open stream ends.
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let service = IndexService::new(engine.clone())
        .machine_wide(args.system)
        .with_reloader(reloader.clone())
        .with_stopping(stop_rx.clone())
        .with_patience(
            args.slow_reader_secs
                .map(std::time::Duration::from_secs)
                .unwrap_or(fsindexd::server::outbox::SLOW_READER),
        );

    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    rt.block_on(async {
        // We hold the lock, so any socket file left here is stale.
        let _ = std::fs::remove_file(&socket);
        let local = local_listener(&socket, args.system).await?;
        tracing::info!(socket = %socket.display(), "listening");
        let tcp = match listen {
            Some(addr) => {
                let l = tokio::net::TcpListener::bind(addr)
                    .await
                    .with_context(|| format!("listening on {addr}"))?;
                tracing::info!(addr = %l.local_addr()?, token = %paths.token.display(), "listening on TCP");
                Some(l)
            }
            None => None,
        };
        let service = match &tcp {
            Some(l) => service.with_listen(l.local_addr()?.to_string()),
            None => service,
        };
        #[cfg(unix)]
        tokio::spawn(reload_on_hangup(reloader));
        #[cfg(not(unix))]
        drop(reloader);
        tokio::spawn(async move {
            shutdown_signal().await;
            let _ = stop_tx.send(true);
        });
        let stopped = |mut rx: tokio::sync::watch::Receiver<bool>| async move {
            let _ = rx.wait_for(|s| *s).await;
        };
        let tcp_task = tcp.map(|l| {
            let service = service.clone();
            let stop = stopped(stop_rx.clone());
            let token = token.clone().unwrap_or_default();
            tokio::spawn(async move { fsindexd::server::serve_tcp(service, l, token, stop).await })
        });
        // systemd (Type=notify): ready once the sockets listen; watchdog pings.
        fsindexd::platform::service::ready(&format!("listening on {}", socket.display()));
        let _watchdog = fsindexd::platform::service::spawn_watchdog();
        // Streams end when the daemon stops, and the server then waits for
        // the calls in flight; past this, what is left is cut off, so that a
        // stop never takes longer than a service manager will wait.
        let grace = {
            let stop = stopped(stop_rx.clone());
            async move {
                stop.await;
                tokio::time::sleep(SHUTDOWN_GRACE).await;
            }
        };
        #[cfg(unix)]
        let serving = fsindexd::server::serve(service, local, stopped(stop_rx));
        #[cfg(not(unix))]
        let serving =
            fsindexd::server::serve_tcp(service, local, token.unwrap_or_default(), stopped(stop_rx));
        tokio::select! {
            r = serving => r?,
            () = grace => tracing::warn!("calls still in flight {SHUTDOWN_GRACE:?} after the stop: cut off"),
        }
        if let Some(t) = tcp_task {
            match tokio::time::timeout(SHUTDOWN_GRACE, t).await {
                Ok(r) => r??,
                Err(_) => tracing::warn!("TCP calls still in flight after the stop: cut off"),
            }
        }
        anyhow::Ok(())
    })?;
    // Blocking work still running (a search or a duplicates pass whose
    // client is gone notices at its next step) is not waited for.
    rt.shutdown_timeout(Duration::from_millis(200));
    tracing::info!("shutting down");
    engine.stop();
    drop(engine);
    writer.close();
    let _ = std::fs::remove_file(&socket);
    tracing::info!("stopped");
    Ok(())
}

/// The instance's local listener. Unix: a unix socket at `socket` (mode
/// 0600, or 0666 in machine-wide mode, where callers are told apart by
/// their credentials).
#[cfg(unix)]
async fn local_listener(
    socket: &std::path::Path,
    system: bool,
) -> anyhow::Result<tokio::net::UnixListener> {
    use anyhow::Context;
    use std::os::unix::fs::PermissionsExt;
    let unix = tokio::net::UnixListener::bind(socket)
        .with_context(|| format!("listening on {}", socket.display()))?;
    let mode = if system { 0o666 } else { 0o600 };
    std::fs::set_permissions(socket, std::fs::Permissions::from_mode(mode))?;
    Ok(unix)
}

/// The instance's local listener. Windows: loopback TCP on a port the OS
/// picks, written into the `socket` file for clients, every request
/// guarded by the token beside config.toml (the TCP transport's, already
/// used for `--listen`).
#[cfg(not(unix))]
async fn local_listener(
    socket: &std::path::Path,
    _system: bool,
) -> anyhow::Result<tokio::net::TcpListener> {
    use anyhow::Context;
    let l = tokio::net::TcpListener::bind(("127.0.0.1", 0))
        .await
        .context("listening on loopback TCP")?;
    let tmp = socket.with_extension("new");
    std::fs::write(&tmp, format!("{}\n", l.local_addr()?))
        .and_then(|()| std::fs::rename(&tmp, socket))
        .with_context(|| format!("writing {}", socket.display()))?;
    Ok(l)
}

/// Effective uid 0.
#[cfg(unix)]
#[allow(unsafe_code)]
fn running_as_root() -> bool {
    // SAFETY: geteuid takes nothing and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// Windows: the process token is elevated (an administrator prompt, or
/// the service running as LocalSystem).
#[cfg(windows)]
#[allow(unsafe_code)]
fn running_as_root() -> bool {
    use windows_sys::Win32::Foundation::{CloseHandle, HANDLE};
    use windows_sys::Win32::Security::{
        GetTokenInformation, TOKEN_ELEVATION, TOKEN_QUERY, TokenElevation,
    };
    use windows_sys::Win32::System::Threading::{GetCurrentProcess, OpenProcessToken};
    let mut token: HANDLE = std::ptr::null_mut();
    let mut elevation = TOKEN_ELEVATION { TokenIsElevated: 0 };
    let mut len = 0u32;
    // SAFETY: the pseudo-handle of this process; `token` and `elevation`
    // are live locals of the sizes passed; the token is closed once read.
    unsafe {
        if OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &mut token) == 0 {
            return false;
        }
        let ok = GetTokenInformation(
            token,
            TokenElevation,
            (&raw mut elevation).cast(),
            std::mem::size_of::<TOKEN_ELEVATION>() as u32,
            &mut len,
        );
        CloseHandle(token);
        ok != 0 && elevation.TokenIsElevated != 0
    }
}

/// Neither Unix nor Windows: no machine-wide mode.
#[cfg(not(any(unix, windows)))]
fn running_as_root() -> bool {
    false
}

/// Creates `dir` and gives it to SYSTEM and Administrators alone
/// (inheritance cut, full control for both, by well-known SID so that a
/// localized Windows names them its own way): the machine-wide instance's
/// token, index and logs are then out of every other user's reach. Fails
/// rather than run with a token others could read.
#[cfg(not(unix))]
fn admins_only(dir: &std::path::Path) -> anyhow::Result<()> {
    use anyhow::Context;
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let out = std::process::Command::new("icacls.exe")
        .arg(dir)
        .args([
            "/inheritance:r",
            "/grant:r",
            "*S-1-5-18:(OI)(CI)F",
            "*S-1-5-32-544:(OI)(CI)F",
        ])
        .output()
        .context("running icacls.exe")?;
    if !out.status.success() {
        anyhow::bail!(
            "cannot close {} to other users (icacls: {}); not starting with a token they could read",
            dir.display(),
            String::from_utf8_lossy(&out.stdout).trim()
        );
    }
    Ok(())
}

/// `SIGHUP`: re-read config.toml; a bad file is logged with its line and
/// the running configuration stays.
#[cfg(unix)]
async fn reload_on_hangup(reloader: Arc<Reloader>) {
    use tokio::signal::unix::{SignalKind, signal};
    let Ok(mut hup) = signal(SignalKind::hangup()) else {
        return;
    };
    while hup.recv().await.is_some() {
        let r = reloader.clone();
        match tokio::task::spawn_blocking(move || r.reload()).await {
            Ok(Ok(_)) => {}
            Ok(Err(e)) => {
                tracing::error!("SIGHUP: config not reloaded, the running config stays: {e}")
            }
            Err(e) => tracing::error!("SIGHUP: reload failed: {e}"),
        }
    }
}

async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let mut term = signal(SignalKind::terminate()).expect("SIGTERM handler");
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
            _ = fsindexd::platform::service::stop_requested() => {}
        }
    }
    #[cfg(not(unix))]
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = fsindexd::platform::service::stop_requested() => {}
    }
    fsindexd::platform::service::stopping();
}
