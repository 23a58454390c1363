//! What every fsindex client shares: where an instance's socket is, one
//! `connect` for unix sockets and TCP, and starting the daemon when none is
//! listening (the way Watchman's clients do).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, anyhow, bail};
use fsindex_proto::v1::index_client::IndexClient;
use hyper_util::rt::TokioIo;
use tonic::transport::{Channel, Endpoint, Uri};

/// How long to wait for a spawned daemon to start listening.
const SPAWN_DEADLINE: Duration = Duration::from_secs(30);

/// The default socket of this instance: `$FSINDEX_HOME/fsindexd.sock`, or
/// the per-user runtime directory. Must agree with the daemon's `Paths`.
pub fn default_socket() -> PathBuf {
    if let Some(home) = std::env::var_os("FSINDEX_HOME").filter(|h| !h.is_empty()) {
        return Path::new(&home).join("fsindexd.sock");
    }
    match directories::ProjectDirs::from("", "", "fsindex") {
        Some(d) => d
            .runtime_dir()
            .unwrap_or_else(|| d.data_dir())
            .join("fsindexd.sock"),
        None => PathBuf::from(".fsindex/fsindexd.sock"),
    }
}

/// Where to find the daemon.
#[derive(Clone, Debug)]
pub enum Target {
    Socket(PathBuf),
    /// `http://127.0.0.1:PORT` and the like.
    Url(String),
}

/// Connects once, without retrying.
pub async fn connect(target: &Target) -> anyhow::Result<IndexClient<Channel>> {
    let channel = match target {
        Target::Socket(path) => {
            let path = path.clone();
            Endpoint::try_from("http://[::]:50051")?
                .connect_with_connector(tower::service_fn(move |_: Uri| {
                    let path = path.clone();
                    async move {
                        Ok::<_, std::io::Error>(TokioIo::new(
                            tokio::net::UnixStream::connect(path).await?,
                        ))
                    }
                }))
                .await?
        }
        Target::Url(url) => Endpoint::from_shared(url.clone())?.connect().await?,
    };
    Ok(IndexClient::new(channel).max_decoding_message_size(64 << 20))
}

/// Finds `fsindexd`: beside the running executable first, then on PATH.
pub fn find_daemon() -> Option<PathBuf> {
    let name = format!("fsindexd{}", std::env::consts::EXE_SUFFIX);
    if let Ok(exe) = std::env::current_exe()
        && let Some(dir) = exe.parent()
    {
        let beside = dir.join(&name);
        if beside.is_file() {
            return Some(beside);
        }
    }
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join(&name))
            .find(|p| p.is_file())
    })
}

/// Connects; when nothing listens on a unix socket and `spawn` is set,
/// starts `fsindexd` for this instance and waits until it answers.
pub async fn connect_or_spawn(
    target: &Target,
    spawn: bool,
) -> anyhow::Result<IndexClient<Channel>> {
    let first = match connect(target).await {
        Ok(c) => return Ok(c),
        Err(e) => e,
    };
    let Target::Socket(socket) = target else {
        return Err(first).with_context(|| format!("cannot reach fsindexd at {target:?}"));
    };
    if !spawn {
        return Err(anyhow!(
            "no fsindexd is listening on {} (start one with `fsindexd`, or drop --no-spawn / FSINDEX_NO_SPAWN)",
            socket.display()
        ));
    }
    let exe = find_daemon().ok_or_else(|| {
        anyhow!(
            "no fsindexd is listening on {} and none was found beside fsctl or on PATH",
            socket.display()
        )
    })?;
    let mut cmd = Command::new(&exe);
    if *socket != default_socket() {
        cmd.arg("--socket").arg(socket);
    }
    cmd.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        // Its own process group: a Ctrl-C meant for fsctl must not stop it.
        cmd.process_group(0);
    }
    let mut child = cmd
        .spawn()
        .with_context(|| format!("starting {}", exe.display()))?;
    let deadline = Instant::now() + SPAWN_DEADLINE;
    loop {
        if let Ok(c) = connect(target).await {
            return Ok(c);
        }
        if let Some(status) = child.try_wait()? {
            let mut err = String::new();
            if let Some(mut e) = child.stderr.take() {
                use std::io::Read;
                let _ = e.read_to_string(&mut err);
            }
            // Another client may have started one at the same time.
            if let Ok(c) = connect(target).await {
                return Ok(c);
            }
            let err = err.trim();
            let err = err.strip_prefix("fsindexd: ").unwrap_or(err);
            bail!("fsindexd exited ({status}) before listening: {err}");
        }
        if Instant::now() > deadline {
            bail!(
                "started {} but it did not listen on {} within {SPAWN_DEADLINE:?}",
                exe.display(),
                socket.display()
            );
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}
