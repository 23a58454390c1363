//! `fsctl fleet`: every host's index, as the daemons ship it into
//! PostgreSQL. `init` creates and migrates the schema; `search`, `du`,
//! `dupes` and `hosts` answer for the whole fleet with the JSON shapes of
//! the local commands plus `"host"`. The database comes from `--database`,
//! else `[fleet] database` in this instance's config.toml; the password
//! from the URL, `--password-file` (or `[fleet] password_file`), else
//! `PGPASSFILE` or `~/.pgpass`, as psql finds it.

mod init;
mod pgpass;
mod query;
mod roles;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;

use crate::global::Global;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: Command,
    #[command(flatten)]
    db: Database,
}

/// Which database: the options every fleet command takes.
#[derive(Debug, clap::Args)]
pub struct Database {
    /// The fleet's PostgreSQL, e.g. postgresql://me@db.example/fleet
    /// (default: `[fleet] database` in config.toml).
    #[arg(long, global = true, value_name = "URL", help_heading = "Fleet")]
    database: Option<String>,
    /// A file whose first line is the password.
    #[arg(long, global = true, value_name = "PATH", help_heading = "Fleet")]
    password_file: Option<PathBuf>,
    /// The config.toml whose `[fleet]` to use (default: this instance's).
    #[arg(long, global = true, value_name = "PATH", help_heading = "Fleet")]
    config: Option<PathBuf>,
}

#[derive(Debug, clap::Subcommand)]
enum Command {
    /// Create or migrate the fleet's schema (an admin's job, once per database).
    Init,
    /// Entries on any host that match the query, read as `fsctl search` reads it (terms, wildcards, path:, ext:, size:, dm:, kind:folder, content:, accents:ignore).
    Search(query::SearchArgs),
    /// Disk usage of HOST:PATH and its largest children; with no argument, every host's roots.
    Du(query::DuArgs),
    /// Groups of identical files across the fleet, by size then BLAKE3 hash.
    Dupes(query::DupesArgs),
    /// The hosts that ship into the fleet, and how current each is.
    Hosts,
    /// Map a database role to a user of a host (it then sees what that user may read there), or make it an admin.
    Grant(roles::GrantArgs),
    /// Remove a role's mappings (one host's with --host) and its admin right.
    Revoke(roles::RevokeArgs),
    /// The roles mapped to hosts' users, and the admins.
    Roles,
}

pub async fn run(g: &Global, a: &Args) -> anyhow::Result<ExitCode> {
    // A search's query is parsed while the connection is made; a mistake
    // in it is reported before a connection's failure.
    let terms = match &a.command {
        Command::Search(s) => Some(query::Terms::start(s)?),
        _ => None,
    };
    let client = connect(&a.db).await;
    let terms = terms.map(query::Terms::finish).transpose()?;
    let mut client = client?;
    match &a.command {
        Command::Init => init::run(g, client).await,
        Command::Search(s) => {
            let terms = terms.expect("started for every search");
            query::search(g, &client, s, terms).await
        }
        Command::Du(d) => query::du(g, &client, d).await,
        Command::Dupes(d) => query::dupes(g, &client, d).await,
        Command::Hosts => query::hosts(g, &client).await,
        Command::Grant(r) => roles::grant(g, &mut client, r).await,
        Command::Revoke(r) => roles::revoke(g, &mut client, r).await,
        Command::Roles => roles::roles(g, &client).await,
    }
}

/// `[fleet]` of a config.toml: only the keys fsctl needs.
#[derive(Debug, Default, serde::Deserialize)]
struct FleetSection {
    database: Option<String>,
    password_file: Option<PathBuf>,
}

fn config_fleet(path: &std::path::Path) -> anyhow::Result<FleetSection> {
    #[derive(serde::Deserialize)]
    struct File {
        #[serde(default)]
        fleet: Option<toml::Table>,
    }
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(FleetSection::default()),
        Err(e) => return Err(e).with_context(|| path.display().to_string()),
    };
    let file: File = toml::from_str(&text).with_context(|| path.display().to_string())?;
    Ok(match file.fleet {
        Some(t) => FleetSection {
            database: t
                .get("database")
                .and_then(|v| v.as_str())
                .map(str::to_owned),
            password_file: t
                .get("password_file")
                .and_then(|v| v.as_str())
                .map(PathBuf::from),
        },
        None => FleetSection::default(),
    })
}

async fn connect(db: &Database) -> anyhow::Result<tokio_postgres::Client> {
    let config_path = db
        .config
        .clone()
        .unwrap_or_else(fsindex_client::default_config_file);
    let section = if db.database.is_none() || db.password_file.is_none() {
        config_fleet(&config_path)?
    } else {
        FleetSection::default()
    };
    let url = db.database.clone().or(section.database).ok_or_else(|| {
        anyhow::anyhow!(
            "no fleet database: give --database URL or set [fleet] database in {}",
            config_path.display()
        )
    })?;
    let target = fsindex_proto::pgtls::Database::parse(&url)
        .map_err(|e| anyhow::anyhow!("--database: {e}"))?;
    let mut config = target.config.clone();
    config.connect_timeout(Duration::from_secs(5));
    config.application_name("fsctl");
    // A password in the URL wins, as with libpq (the config's password
    // file is the daemon's, which may be another role's).
    let file = db.password_file.clone().or(section.password_file);
    if config.get_password().is_some() {
        // as given
    } else if let Some(file) = file {
        let text = std::fs::read_to_string(&file)
            .with_context(|| format!("reading the password file {}", file.display()))?;
        config.password(text.lines().next().unwrap_or("").as_bytes());
    } else if let Some(pw) = pgpass::lookup(&config) {
        config.password(pw.as_bytes());
    }
    let (client, conn) = config
        .connect(target.tls.clone())
        .await
        .map_err(|e| anyhow::anyhow!("the fleet database: {}", target.explain(describe(&e))))?;
    tokio::spawn(async move {
        let _ = conn.await;
    });
    Ok(client)
}

/// A database error in one line (PostgreSQL's own message where it sent one).
pub fn describe(e: &tokio_postgres::Error) -> String {
    if let Some(db) = e.as_db_error() {
        return format!("{}: {}", db.severity(), db.message());
    }
    let mut msg = e.to_string();
    let mut src = std::error::Error::source(e);
    while let Some(s) = src {
        let more = s.to_string();
        if !msg.contains(&more) {
            msg = format!("{msg}: {more}");
        }
        src = s.source();
    }
    msg
}
