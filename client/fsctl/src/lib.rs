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
    let cli = parse(std::env::args_os());
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
    // Each command's future is made and run in a frame of its own (see
    // `run`), so this one stays small.
    let g = &cli.global;
    let result = match &cli.command {
        Command::Status(a) => run(&rt, || cmd::status::run(g, a)),
        Command::Roots(a) => run(&rt, || cmd::roots::run(g, a)),
        Command::Scan(a) => run(&rt, || cmd::scan::run(g, a)),
        Command::Search(a) => run(&rt, || cmd::search::run(g, a)),
        Command::Du(a) => run(&rt, || cmd::du::run(g, a)),
        Command::Dupes(a) => run(&rt, || cmd::dupes::run(g, a)),
        Command::Fleet(a) => run(&rt, || fleet(g, a)),
        Command::Verify(a) => run(&rt, || cmd::verify::run(g, a)),
        Command::Info(a) => run(&rt, || cmd::info::run(g, a)),
        Command::Cat(a) => run(&rt, || cmd::cat::run(g, a)),
        Command::Ls(a) => run(&rt, || cmd::ls::run(g, a)),
        Command::Tree(a) => run(&rt, || cmd::tree::run(g, a)),
        Command::Watch(a) => run(&rt, || cmd::watch::run(g, a)),
        Command::Map(a) => run(&rt, || cmd::map::run(g, a)),
        Command::Bookmark(a) => run(&rt, || cmd::bookmark::run(g, a)),
        Command::Tag(a) => run(&rt, || cmd::tag::run(g, a)),
        Command::Saved(a) => run(&rt, || cmd::saved::run(g, a)),
        Command::History(a) => run(&rt, || cmd::history::run(g, a)),
        Command::Organise(a) => run(&rt, || cmd::organise::run(g, a)),
        Command::Projects(a) => run(&rt, || cmd::projects::run(g, a)),
        Command::Manifest(a) => run(&rt, || cmd::manifest::run(g, a)),
        Command::Mcp(a) => run(&rt, || cmd::mcp::run(g, a)),
        Command::Reload(a) => run(&rt, || cmd::reload::run(g, a)),
        Command::Service(a) => run(&rt, || cmd::service::run(g, a)),
        Command::Completions(a) => cmd::completions::run(a, Cli::command()),
        Command::Man(a) => cmd::man::run(a, Cli::command()),
    };
    match result {
        Ok(code) => code,
        Err(e) if output::is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("fsctl: {}", output::error_line(&e));
            ExitCode::from(2)
        }
    }
}

/// Runs one command's future to its end. Not inlined, so that the future
/// lives in this function's frame alone: inlined into [`main`], every
/// command's future shared its frame, 47 KB of stack touched page by page
/// at every start, whichever command ran.
#[inline(never)]
fn run<F, Fut>(rt: &tokio::runtime::Runtime, f: F) -> anyhow::Result<ExitCode>
where
    F: FnOnce() -> Fut,
    Fut: Future<Output = anyhow::Result<ExitCode>>,
{
    rt.block_on(f())
}

/// The command line, parsed with only the options of the command it names
/// when that parse succeeds. clap builds every argument of every command
/// it is given before it parses: for `fsctl search`, the command people and
/// scripts run by the hundred, that was 5-6% of a search that matches
/// nothing, 38 KB of stack and most of the heap the process touched. The
/// narrow parser knows one command and the global options, so it accepts
/// no line the whole [`Cli`] would not, and reads each as it does;
/// anything it refuses (`--help`, `--version`, a mistake) is parsed again
/// by the whole [`Cli`], so what is printed then is unchanged.
fn parse<I>(args: I) -> Cli
where
    I: IntoIterator,
    I::Item: Into<std::ffi::OsString>,
{
    let args: Vec<std::ffi::OsString> = args.into_iter().map(Into::into).collect();
    parse_narrow(&args).unwrap_or_else(|| Cli::parse_from(args))
}

/// The narrow parse (see [`parse`]) of `fsctl [GLOBAL OPTIONS] NAME ...`,
/// for the first argument that names a command (where it was an option's
/// value instead, the narrow parser meets the real command as a stranger
/// and refuses): `None` where none does, or the parse fails.
fn parse_narrow(args: &[std::ffi::OsString]) -> Option<Cli> {
    let name = args
        .iter()
        .skip(1)
        .filter_map(|a| a.to_str())
        .find(|a| NARROW.contains(a))?;
    let (global, command) = narrow_command(name, args)?;
    Some(Cli { global, command })
}

/// The commands [`parse_narrow`] knows, each by its name on the command
/// line (`completions` and `man` print the whole command line, so they
/// build it anyway).
macro_rules! narrow_commands {
    ($($name:literal => $variant:ident($args:ty)),* $(,)?) => {
        const NARROW: &[&str] = &[$($name),*];

        fn narrow_command(name: &str, args: &[std::ffi::OsString]) -> Option<(Global, Command)> {
            match name {
                $($name => narrow::<$args>(args, $name).map(|(g, a)| (g, Command::$variant(a))),)*
                _ => None,
            }
        }
    };
}

narrow_commands! {
    "status" => Status(cmd::status::Args),
    "roots" => Roots(cmd::roots::Args),
    "scan" => Scan(cmd::scan::Args),
    "search" => Search(cmd::search::Args),
    "du" => Du(cmd::du::Args),
    "dupes" => Dupes(cmd::dupes::Args),
    "fleet" => Fleet(cmd::fleet::Args),
    "verify" => Verify(cmd::verify::Args),
    "info" => Info(cmd::info::Args),
    "cat" => Cat(cmd::cat::Args),
    "ls" => Ls(cmd::ls::Args),
    "tree" => Tree(cmd::tree::Args),
    "watch" => Watch(cmd::watch::Args),
    "map" => Map(cmd::map::Args),
    "bookmark" => Bookmark(cmd::bookmark::Args),
    "tag" => Tag(cmd::tag::Args),
    "saved" => Saved(cmd::saved::Args),
    "history" => History(cmd::history::Args),
    "organise" => Organise(cmd::organise::Args),
    "projects" => Projects(cmd::projects::Args),
    "manifest" => Manifest(cmd::manifest::Args),
    "mcp" => Mcp(cmd::mcp::Args),
    "reload" => Reload(cmd::reload::Args),
    "service" => Service(cmd::service::Args),
}

/// `fsctl NAME ...` parsed by a command line that has the global options
/// and the command `NAME` with its arguments `A`, and nothing else.
fn narrow<A: clap::Args + clap::FromArgMatches>(
    args: &[std::ffi::OsString],
    name: &'static str,
) -> Option<(Global, A)> {
    use clap::{Args, FromArgMatches};
    let command = clap::Command::new("fsctl")
        .bin_name("fsctl")
        .subcommand_required(true)
        .subcommand(A::augment_args(clap::Command::new(name)));
    let matches = Global::augment_args(command)
        .try_get_matches_from(args)
        .ok()?;
    let global = Global::from_arg_matches(&matches).ok()?;
    let (_, sub) = matches.subcommand()?;
    Some((global, A::from_arg_matches(sub).ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(line: &[&str]) -> Vec<std::ffi::OsString> {
        std::iter::once("fsctl")
            .chain(line.iter().copied())
            .map(Into::into)
            .collect()
    }

    /// The narrow parser reads every line it takes as the whole one does,
    /// and gives way wherever it cannot.
    #[test]
    fn a_command_is_parsed_as_the_whole_command_line_parses_it() {
        let lines: &[&[&str]] = &[
            &["search", "tax"],
            &["search", "tax", "2025", "--limit", "10", "--sort", "mtime"],
            &["search", "--json", "a b", "in:~/x", "-n", "3", "-r"],
            &["search", "-0", "x"],
            &["search", "-c", "x", "--sync", "--ignore-accents"],
            &["search", "x", "--socket", "/tmp/s", "--no-spawn"],
            &["search", "--snippets", "0", "content:tax"],
            &["search", "--", "-x"],
            &["status", "--json"],
            &["--json", "status"],
            &["--socket", "/tmp/s", "--no-spawn", "search", "x"],
            &["--socket", "search", "search", "x"],
            &["--json", "fleet", "search", "x"],
            &["roots", "add", "/tmp/x"],
            &["roots", "list"],
            &["du", "/tmp", "--top", "20"],
            &["dupes", "--json"],
            &["ls", "/tmp"],
            &["info", "/tmp/x"],
            &["fleet", "search", "x"],
            &["fleet", "hosts", "--json"],
            &["saved", "add", "search", "x"],
            &["tag", "add", "t", "/tmp/x"],
            &["organise", "undo"],
            &["mcp", "--allow-write"],
            &["scan", "/tmp", "--wait"],
            &["verify"],
            &["cat", "/tmp/x"],
            &["tree", "/tmp"],
            &["watch", "/tmp"],
            &["map", "/tmp"],
            &["bookmark", "list"],
            &["history", "-n", "5"],
            &["projects"],
            &["manifest", "/tmp"],
            &["reload"],
            &["service", "status"],
        ];
        for line in lines {
            let whole = Cli::try_parse_from(argv(line))
                .unwrap_or_else(|e| panic!("{line:?}: the whole parser refuses it: {e}"));
            let narrow = parse_narrow(&argv(line))
                .unwrap_or_else(|| panic!("{line:?}: the narrow parser refuses it"));
            assert_eq!(format!("{narrow:?}"), format!("{whole:?}"), "{line:?}");
        }
        // Help, version, mistakes, a command it does not know: left to the
        // whole parser.
        let others: &[&[&str]] = &[
            &[],
            &["search"],
            &["--socket", "search", "status"],
            &["search", "--help"],
            &["status", "--version"],
            &["--version"],
            &["search", "-0", "--json", "x"],
            &["search", "--count", "--print0", "x"],
            &["search", "--sort", "sideways", "x"],
            &["search", "--token-file", "t", "x"],
            &["search", "--socket", "s", "--endpoint", "http://h:1", "x"],
            &["statuss"],
            &["completions", "bash"],
            &["man"],
        ];
        for line in others {
            assert!(parse_narrow(&argv(line)).is_none(), "{line:?}");
        }
    }

    /// Every command but those that print the whole command line has its
    /// narrow parse, under the name the whole parser gives it (a line of
    /// each is in the table above).
    #[test]
    fn every_command_has_its_narrow_parse() {
        let whole = Cli::command();
        let mut names: Vec<&str> = whole
            .get_subcommands()
            .map(|c| c.get_name())
            .filter(|n| !matches!(*n, "completions" | "man"))
            .collect();
        names.sort();
        let mut narrow = NARROW.to_vec();
        narrow.sort();
        assert_eq!(names, narrow);
    }
}
