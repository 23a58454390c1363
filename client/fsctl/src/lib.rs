//! `fsctl`: the command-line client of fsindex, as a library for its two
//! binaries: `fsctl` itself and `fsctl-fleet`, which runs `fsctl fleet`.
//!
//! The fleet's commands are the only ones that speak to PostgreSQL, and
//! its TLS links the system's OpenSSL. Loading and binding libssl and
//! libcrypto cost 1.1-1.6 ms of every process start on the 2-core bench
//! machine (an empty C program, `benches/fsctl-ab.sh`), more than the
//! daemon takes to answer a rare term or one that matches nothing; so `fsctl`
//! never links them: `fsctl fleet ...` hands its whole command line to
//! `fsctl-fleet` (see [`fleet_elsewhere`]), which parses the same [`Cli`]
//! and runs it here ([`fleet_here`]). Which of the two a binary is, is
//! decided when it is linked, by the function it passes to [`main`], so
//! that nothing in `fsctl` refers to the fleet's database code.
//!
//! Exit codes, like grep: 0 success (for search: something found), 1 search
//! found nothing, 2 an error (printed as one line on stderr). A closed
//! stdout (`fsctl search x | head`) exits 0 quietly.
//!
//! This file holds the command line and the dispatch only: the options
//! every command takes and the connection they describe are in [`global`],
//! each subcommand is a module of [`cmd`] (an `Args` and a `run`), and the
//! shared printing helpers are in [`output`].

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

pub mod cmd;
pub mod global;
mod organise;
mod output;
mod restart;

use std::future::Future;
use std::pin::Pin;
use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};

use crate::global::Global;

/// Command-line client of the fsindex daemon.
#[derive(Debug, Parser)]
#[command(
    name = "fsctl",
    bin_name = "fsctl",
    version,
    about,
    propagate_version = true
)]
pub struct Cli {
    #[command(flatten)]
    global: Global,
    #[command(subcommand)]
    command: Command,
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
    /// Every host's index in the fleet's PostgreSQL: init, search, du, dupes, hosts.
    Fleet(cmd::fleet::Args),
    /// One entry in detail: type, sizes, times, permissions, kind, encoding, lines.
    Info(cmd::info::Args),
    /// The text of a file under a root, documents included (PDF, Office, OpenDocument, mail).
    Cat(cmd::cat::Args),
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
    /// Bookmark folders and files; bookmarks follow them when they move.
    Bookmark(cmd::bookmark::Args),
    /// Tag files and folders (found again with `tag:NAME`); tags follow them when they move.
    Tag(cmd::tag::Args),
    /// Searches saved under a name, run with `fsctl search @NAME` (shared with fsgui and MCP).
    Saved(cmd::saved::Args),
    /// Your recent searches, newest first, with when and how many results (every client's).
    History(cmd::history::Args),
    /// Check, apply and undo a reorganisation plan (moves, renames, folders, merges).
    Organise(cmd::organise::Args),
    /// Folders that hold projects (.git, Cargo.toml, package.json, ...): kinds, languages, size, branch.
    Projects(cmd::projects::Args),
    /// Every file of a folder with kind, size, mtime and a one-line summary, within a token budget.
    Manifest(cmd::manifest::Args),
    /// MCP server on stdio: tools over the index for AI agents (read-only unless --allow-write).
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

/// A fleet command's run, as [`Fleet`] gives it.
pub type FleetRun<'a> = Pin<Box<dyn Future<Output = anyhow::Result<ExitCode>> + 'a>>;

/// How `fsctl fleet` runs: [`fleet_elsewhere`] in `fsctl`, [`fleet_here`]
/// in `fsctl-fleet`.
pub type Fleet = for<'a> fn(&'a Global, &'a cmd::fleet::Args) -> FleetRun<'a>;

/// Runs the fleet command in this process.
pub fn fleet_here<'a>(g: &'a Global, a: &'a cmd::fleet::Args) -> FleetRun<'a> {
    Box::pin(cmd::fleet::run(g, a))
}

/// Hands the whole command line to `fsctl-fleet` (see the crate's doc).
pub fn fleet_elsewhere<'a>(_: &'a Global, _: &'a cmd::fleet::Args) -> FleetRun<'a> {
    Box::pin(std::future::ready(cmd::fleet_helper::run()))
}

/// The program: parses the command line and runs it, `fleet` as the
/// binary says.
pub fn main(fleet: Fleet) -> ExitCode {
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
            Command::Fleet(a) => fleet(&cli.global, a).await,
            Command::Verify(a) => cmd::verify::run(&cli.global, a).await,
            Command::Info(a) => cmd::info::run(&cli.global, a).await,
            Command::Cat(a) => cmd::cat::run(&cli.global, a).await,
            Command::Ls(a) => cmd::ls::run(&cli.global, a).await,
            Command::Tree(a) => cmd::tree::run(&cli.global, a).await,
            Command::Watch(a) => cmd::watch::run(&cli.global, a).await,
            Command::Map(a) => cmd::map::run(&cli.global, a).await,
            Command::Bookmark(a) => cmd::bookmark::run(&cli.global, a).await,
            Command::Tag(a) => cmd::tag::run(&cli.global, a).await,
            Command::Saved(a) => cmd::saved::run(&cli.global, a).await,
            Command::History(a) => cmd::history::run(&cli.global, a).await,
            Command::Organise(a) => cmd::organise::run(&cli.global, a).await,
            Command::Projects(a) => cmd::projects::run(&cli.global, a).await,
            Command::Manifest(a) => cmd::manifest::run(&cli.global, a).await,
            Command::Mcp(a) => cmd::mcp::run(&cli.global, a).await,
            Command::Reload(a) => cmd::reload::run(&cli.global, a).await,
            Command::Service(a) => cmd::service::run(&cli.global, a).await,
            Command::Completions(a) => cmd::completions::run(a, Cli::command()),
            Command::Man(a) => cmd::man::run(a, Cli::command()),
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
