//! `fsctl`: the command-line client of fsindex.
//!
//! Exit codes, like grep: 0 success (for search: something found), 1 search
//! found nothing, 2 an error (printed as one line on stderr). A closed
//! stdout (`fsctl search x | head`) exits 0 quietly.

// `println!` for every module below: std's panic when stdout
// is closed (`fsctl status | head -1`); these exit as the crate doc says.
macro_rules! println {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        if let Err(e) = writeln!(std::io::stdout(), $($arg)*) {
            $crate::output::stdout_failed(e);
        }
    }};
}

mod cmd;
mod output;
mod restart;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use fsindex_client::Target;

/// Command-line client of the fsindex daemon.
#[derive(Debug, Parser)]
#[command(version, about, propagate_version = true)]
struct Cli {
    #[command(flatten)]
    global: Global,
    #[command(subcommand)]
    command: Command,
}

/// Options every command takes.
#[derive(Debug, clap::Args)]
pub struct Global {
    /// Print JSON: one object per line for lists, one object otherwise.
    #[arg(long, global = true)]
    pub json: bool,
    /// Daemon socket (default: the instance's, see FSINDEX_HOME).
    #[arg(
        long,
        global = true,
        env = "FSINDEX_SOCKET",
        value_name = "PATH",
        help_heading = "Connection"
    )]
    pub socket: Option<PathBuf>,
    /// Daemon URL for a TCP daemon, e.g. http://127.0.0.1:7475.
    #[arg(
        long,
        global = true,
        value_name = "URL",
        conflicts_with = "socket",
        help_heading = "Connection"
    )]
    pub endpoint: Option<String>,
    /// File holding the TCP daemon's token (default: FSINDEX_TOKEN, then the
    /// instance's own token file).
    #[arg(
        long,
        global = true,
        value_name = "PATH",
        requires = "endpoint",
        help_heading = "Connection"
    )]
    pub token_file: Option<PathBuf>,
    /// Do not start fsindexd when none is listening.
    #[arg(long, global = true, env = "FSINDEX_NO_SPAWN", value_parser = clap::builder::BoolishValueParser::new(), default_value_t = false, help_heading = "Connection")]
    pub no_spawn: bool,
}

impl Global {
    fn target(&self) -> anyhow::Result<Target> {
        Ok(match (&self.endpoint, &self.socket) {
            (Some(url), _) => Target::Url {
                url: url.clone(),
                token: fsindex_client::find_token(self.token_file.as_deref())?,
            },
            (None, Some(s)) => Target::Socket(s.clone()),
            (None, None) => Target::Socket(fsindex_client::default_socket()),
        })
    }

    /// Connects and makes one read-only call, sent beside the handshake
    /// (see [`fsindex_client::connect_or_spawn_with`]); a daemon of another
    /// protocol is handled as by [`Global::client`], then asked again.
    pub async fn call<T, F, Fut>(&self, first: F) -> anyhow::Result<T>
    where
        F: Fn(fsindex_client::Client) -> Fut,
        Fut: std::future::Future<Output = Result<T, tonic::Status>>,
    {
        let target = self.target()?;
        match fsindex_client::connect_or_spawn_with(&target, !self.no_spawn, &first).await {
            Ok((_, out)) => Ok(out),
            Err(e) if e.is::<fsindex_client::ProtocolMismatch>() => {
                Ok(first(self.client().await?).await?)
            }
            Err(e) => Err(e),
        }
    }

    pub async fn client(&self) -> anyhow::Result<fsindex_client::Client> {
        let target = self.target()?;
        match fsindex_client::connect_or_spawn(&target, !self.no_spawn).await {
            Err(e) => match e.downcast::<fsindex_client::ProtocolMismatch>() {
                Ok(old) if old.daemon_is_older() && matches!(target, Target::Socket(_)) => {
                    restart::offer(&old)?;
                    fsindex_client::connect_or_spawn(&target, !self.no_spawn).await
                }
                Ok(other) => Err(other.into()),
                Err(e) => Err(e),
            },
            ok => ok,
        }
    }
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Daemon, roots, entry counts, scan state, index size, memory.
    Status(cmd::status::Args),
    /// List, add or remove roots.
    Roots(cmd::roots::Args),
    /// Rescan every root, or one folder under a root.
    Scan(cmd::scan::Args),
    /// Find entries whose path contains every term (case-insensitive).
    Search(cmd::search::Args),
    /// Disk usage of a folder and its largest children, from the index.
    Du(cmd::du::Args),
    /// Groups of byte-identical files, largest reclaimable first.
    Dupes(cmd::dupes::Args),
    /// One entry in detail: type, sizes, times, permissions, kind, encoding, lines.
    Info(cmd::info::Args),
    /// A folder's children, from the index.
    Ls(cmd::ls::Args),
    /// A folder's subtree with sizes and counts.
    Tree(cmd::tree::Args),
    /// Compare the index with a fresh walk; print every difference.
    Verify(cmd::verify::Args),
    /// Stream changes under a path as they are applied.
    Watch(cmd::watch::Args),
    /// A condensed outline of a tree for an LLM's context, within a token budget.
    Map(cmd::map::Args),
    /// MCP server on stdio: read-only tools over the index for AI agents.
    Mcp(cmd::mcp::Args),
    /// Make the daemon re-read config.toml (as SIGHUP does); an invalid file is refused.
    Reload(cmd::reload::Args),
    /// Install, remove or inspect fsindexd as a service (systemd, launchd, Windows).
    Service(cmd::service::Args),
    /// Print a shell completion script.
    Completions(cmd::completions::Args),
    /// Print the man page, or write all of them into a folder.
    Man(cmd::man::Args),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("fsctl: {e}");
            return ExitCode::from(2);
        }
    };
    let result = rt.block_on(async {
        match &cli.command {
            Command::Status(a) => cmd::status::run(&cli.global, a).await,
            Command::Roots(a) => cmd::roots::run(&cli.global, a).await,
            Command::Scan(a) => cmd::scan::run(&cli.global, a).await,
            Command::Search(a) => cmd::search::run(&cli.global, a).await,
            Command::Du(a) => cmd::du::run(&cli.global, a).await,
            Command::Dupes(a) => cmd::dupes::run(&cli.global, a).await,
            Command::Verify(a) => cmd::verify::run(&cli.global, a).await,
            Command::Info(a) => cmd::info::run(&cli.global, a).await,
            Command::Ls(a) => cmd::ls::run(&cli.global, a).await,
            Command::Tree(a) => cmd::tree::run(&cli.global, a).await,
            Command::Watch(a) => cmd::watch::run(&cli.global, a).await,
            Command::Map(a) => cmd::map::run(&cli.global, a).await,
            Command::Mcp(a) => cmd::mcp::run(&cli.global, a).await,
            Command::Reload(a) => cmd::reload::run(&cli.global, a).await,
            Command::Service(a) => cmd::service::run(&cli.global, a).await,
            Command::Completions(a) => cmd::completions::run(a),
            Command::Man(a) => cmd::man::run(a),
        }
    });
    match result {
        Ok(code) => code,
        Err(e) if output::is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("fsctl: {}", output::error_line(&e));
            ExitCode::from(2)
        }
    }
}
