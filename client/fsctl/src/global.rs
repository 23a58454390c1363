//! The options every command takes (`--json` and the connection group) and
//! what they mean: which daemon to reach, whether to start one, and what
//! to do about one that speaks an older protocol. Command modules take a
//! [`Global`] and ask it for a client; none of them knows how one is made.

use std::path::PathBuf;

use fsindex_client::Target;

use crate::restart;

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
    pub fn target(&self) -> anyhow::Result<Target> {
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
