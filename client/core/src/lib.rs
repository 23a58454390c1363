//! What every fsindex client shares: where an instance's socket is, one
//! `connect` for unix sockets and TCP, starting the daemon when none is
//! listening (the way Watchman's clients do), and the version handshake that
//! refuses a daemon speaking another protocol.
//!
//! On Windows the instance's "socket" is a file holding the loopback TCP
//! address the daemon listens on; every request carries the instance's
//! token (see [`SOCKET_FILE`]). Unix sockets are not used there: tokio has
//! none on Windows, and the TCP transport with its token is the one the
//! daemon already serves for `--listen`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, anyhow, bail};
use fsindex_proto::v1 as pb;
use fsindex_proto::v1::index_client::IndexClient;
#[cfg(unix)]
use hyper_util::rt::TokioIo;
use tonic::metadata::{Ascii, MetadataValue};
use tonic::service::Interceptor;
use tonic::service::interceptor::InterceptedService;
#[cfg(unix)]
use tonic::transport::Uri;
use tonic::transport::{Channel, Endpoint};

/// A connected client: every request carries the bearer token, if any.
pub type Client = IndexClient<InterceptedService<Channel, Auth>>;

/// Adds `authorization: Bearer TOKEN` to every request (TCP daemons).
#[derive(Clone, Debug, Default)]
pub struct Auth(Option<MetadataValue<Ascii>>);

impl Auth {
    pub fn bearer(token: &str) -> anyhow::Result<Auth> {
        let v = format!("Bearer {}", token.trim())
            .parse()
            .map_err(|_| anyhow!("the token holds characters a header cannot"))?;
        Ok(Auth(Some(v)))
    }
}

impl Interceptor for Auth {
    fn call(&mut self, mut req: tonic::Request<()>) -> Result<tonic::Request<()>, tonic::Status> {
        if let Some(v) = &self.0 {
            req.metadata_mut().insert("authorization", v.clone());
        }
        Ok(req)
    }
}

/// The name of an instance's socket: a unix socket, or on Windows a file
/// holding the daemon's loopback address. Must agree with the daemon's
/// `Paths`.
#[cfg(unix)]
pub const SOCKET_FILE: &str = "fsindexd.sock";
/// The name of an instance's socket: a unix socket, or on Windows a file
/// holding the daemon's loopback address. Must agree with the daemon's
/// `Paths`.
#[cfg(not(unix))]
pub const SOCKET_FILE: &str = "fsindexd.addr";

/// The socket of the machine-wide daemon (`fsindexd --system`).
#[cfg(unix)]
pub fn system_socket() -> PathBuf {
    "/run/fsindex/fsindexd.sock".into()
}

/// The socket of the machine-wide daemon (`fsindexd --system`): on
/// Windows the address file in `%ProgramData%\fsindex`, beside the token
/// only administrators can read. Must agree with the daemon's `Paths`.
#[cfg(not(unix))]
pub fn system_socket() -> PathBuf {
    let data = std::env::var_os("ProgramData")
        .filter(|d| !d.is_empty())
        .unwrap_or_else(|| r"C:\ProgramData".into());
    Path::new(&data).join("fsindex").join(SOCKET_FILE)
}

/// How long to wait for a spawned daemon to start listening.
const SPAWN_DEADLINE: Duration = Duration::from_secs(30);

/// The default socket of this instance: `$FSINDEX_HOME/fsindexd.sock`, or
/// the per-user runtime directory. Must agree with the daemon's `Paths`.
pub fn default_socket() -> PathBuf {
    instance_file(SOCKET_FILE, |d| {
        d.runtime_dir().unwrap_or_else(|| d.data_dir())
    })
}

/// A file of this instance: under `FSINDEX_HOME`, or in the per-user
/// folder `dir` picks. Must agree with the daemon's `Paths`.
fn instance_file(name: &str, dir: fn(&directories::ProjectDirs) -> &Path) -> PathBuf {
    if let Some(home) = std::env::var_os("FSINDEX_HOME").filter(|h| !h.is_empty()) {
        return Path::new(&home).join(name);
    }
    match directories::ProjectDirs::from("", "", "fsindex") {
        Some(d) => dir(&d).join(name),
        None => Path::new(".fsindex").join(name),
    }
}

/// Where to find the daemon.
#[derive(Clone, Debug)]
pub enum Target {
    Socket(PathBuf),
    /// `http://127.0.0.1:PORT` and the like, with the daemon's token.
    Url {
        url: String,
        token: Option<String>,
    },
}

/// The token for a TCP daemon: `FSINDEX_TOKEN` (the token itself, or the
/// path of a file holding it), else `--token-file`, else this instance's
/// own token file when it is readable.
pub fn find_token(token_file: Option<&Path>) -> anyhow::Result<Option<String>> {
    let read = |p: &Path| {
        std::fs::read_to_string(p)
            .map(|t| t.trim().to_owned())
            .with_context(|| format!("reading the token file {}", p.display()))
    };
    if let Some(file) = token_file {
        return read(file).map(Some);
    }
    if let Some(t) = std::env::var_os("FSINDEX_TOKEN").filter(|t| !t.is_empty()) {
        let p = Path::new(&t);
        if p.is_absolute() && p.is_file() {
            return read(p).map(Some);
        }
        return Ok(Some(t.to_string_lossy().trim().to_owned()));
    }
    Ok(std::fs::read_to_string(default_token_file())
        .ok()
        .map(|t| t.trim().to_owned()))
}

/// This instance's config.toml (`fsctl fleet` reads its `[fleet]`).
pub fn default_config_file() -> PathBuf {
    instance_file("config.toml", |d| d.config_dir())
}

/// Where this instance's daemon keeps its token (beside config.toml).
pub fn default_token_file() -> PathBuf {
    instance_file("token", |d| d.config_dir())
}

/// The protocol this client speaks: a daemon whose `StatusResponse.protocol`
/// differs is refused by [`handshake`].
pub const PROTOCOL: i32 = pb::Protocol::V1 as i32;

/// A daemon that speaks another protocol than this client: the error
/// [`handshake`] (and so [`connect_or_spawn`]) returns for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProtocolMismatch {
    /// The daemon's version, protocol number and process id, from Status
    /// (fields every protocol keeps).
    pub version: String,
    pub protocol: i32,
    pub pid: u32,
}

impl ProtocolMismatch {
    /// The daemon is older than this client: restarting it with the
    /// `fsindexd` of this client's release resolves the mismatch.
    pub fn daemon_is_older(&self) -> bool {
        self.protocol < PROTOCOL
    }
}

impl std::fmt::Display for ProtocolMismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "fsindexd {} (pid {}) speaks protocol {}, this client ({}) speaks protocol {}: ",
            self.version,
            self.pid,
            self.protocol,
            env!("CARGO_PKG_VERSION"),
            PROTOCOL
        )?;
        if self.daemon_is_older() {
            write!(f, "restart the daemon with the newer fsindexd")
        } else {
            write!(f, "use a client of fsindexd {}'s release", self.version)
        }
    }
}

impl std::error::Error for ProtocolMismatch {}

/// The version handshake: asks the daemon's Status and refuses, with a
/// [`ProtocolMismatch`], a daemon whose protocol this client does not speak.
/// Returns the daemon's status.
pub async fn handshake(client: &mut Client) -> anyhow::Result<pb::StatusResponse> {
    let status = client
        .status(pb::StatusRequest {
            brief: true,
            ..Default::default()
        })
        .await?
        .into_inner();
    check_protocol(&status)?;
    Ok(status)
}

/// The check [`handshake`] makes on a daemon's status.
pub fn check_protocol(status: &pb::StatusResponse) -> Result<(), ProtocolMismatch> {
    if status.protocol == PROTOCOL {
        return Ok(());
    }
    Err(ProtocolMismatch {
        version: status.version.clone(),
        protocol: status.protocol,
        pid: status.pid,
    })
}

/// Connects once, without retrying and without the [`handshake`] (which
/// [`connect_or_spawn`] adds).
pub async fn connect(target: &Target) -> anyhow::Result<Client> {
    #[cfg(not(unix))]
    let loopback;
    #[cfg(not(unix))]
    let target = match target {
        Target::Socket(path) => {
            loopback = loopback_target(path)?;
            &loopback
        }
        other => other,
    };
    let channel = match target {
        #[cfg(unix)]
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
        #[cfg(not(unix))]
        Target::Socket(_) => unreachable!("turned into a URL above"),
        Target::Url { url, .. } => Endpoint::from_shared(url.clone())?.connect().await?,
    };
    let auth = match target {
        Target::Url {
            token: Some(token), ..
        } => Auth::bearer(token)?,
        _ => Auth::default(),
    };
    Ok(IndexClient::with_interceptor(channel, auth).max_decoding_message_size(64 << 20))
}

/// Windows: the loopback address the daemon wrote into its socket file,
/// with the instance's token (for the machine-wide instance, the one in
/// its folder, which only administrators can read).
#[cfg(not(unix))]
fn loopback_target(file: &Path) -> anyhow::Result<Target> {
    let addr = std::fs::read_to_string(file)
        .with_context(|| format!("no fsindexd address in {}", file.display()))?;
    let token = if file == system_socket() {
        let t = file.with_file_name("token");
        let t = std::fs::read_to_string(&t).with_context(|| {
            format!(
                "reading {}: the machine-wide index on Windows answers administrators only (run fsctl from an administrator prompt; without one, fsctl starts and asks your own daemon)",
                t.display()
            )
        })?;
        Some(t.trim().to_owned())
    } else {
        find_token(None)?
    };
    Ok(Target::Url {
        url: format!("http://{}", addr.trim()),
        token,
    })
}

/// Finds `fsindexd`: beside the running executable first, then on PATH.
pub fn find_daemon() -> Option<PathBuf> {
    find_program("fsindexd", &[])
}

/// Finds program `name` (`.exe` added on Windows): beside the running
/// executable first, then in each of `also` (folders relative to it,
/// e.g. `../libexec/fsindex`), then on PATH.
pub fn find_program(name: &str, also: &[&str]) -> Option<PathBuf> {
    let name = format!("{name}{}", std::env::consts::EXE_SUFFIX);
    if let Ok(exe) = std::env::current_exe()
        && let Some(dir) = exe.parent()
    {
        let beside = dir.join(&name);
        if beside.is_file() {
            return Some(beside);
        }
        for d in also {
            let p = dir.join(d).join(&name);
            if p.is_file() {
                return Some(p);
            }
        }
    }
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join(&name))
            .find(|p| p.is_file())
    })
}

/// Connects and makes the [`handshake`]; when nothing listens on a unix
/// socket and `spawn` is set, starts `fsindexd` for this instance and waits
/// until it answers. A daemon of another protocol is refused with a
/// [`ProtocolMismatch`] (never replaced behind the user's back).
pub async fn connect_or_spawn(target: &Target, spawn: bool) -> anyhow::Result<Client> {
    let mut client = connect_or_spawn_unchecked(target, spawn).await?;
    handshake(&mut client).await?;
    Ok(client)
}

/// [`connect_or_spawn`], with `first` sent on the new connection beside
/// the handshake instead of after it: a one-shot command (`fsctl search`)
/// waits for one round trip, not two. The handshake's verdict still comes
/// first: from a daemon of another protocol, `first`'s answer is dropped
/// and the [`ProtocolMismatch`] returned. `first` must only read.
pub async fn connect_or_spawn_with<T, F, Fut>(
    target: &Target,
    spawn: bool,
    first: F,
) -> anyhow::Result<(Client, T)>
where
    F: FnOnce(Client) -> Fut,
    Fut: std::future::Future<Output = Result<T, tonic::Status>>,
{
    let client = connect_or_spawn_unchecked(target, spawn).await?;
    let mut check = client.clone();
    let (checked, out) = tokio::join!(handshake(&mut check), first(client.clone()));
    checked?;
    Ok((client, out?))
}

async fn connect_or_spawn_unchecked(target: &Target, spawn: bool) -> anyhow::Result<Client> {
    let first = match connect(target).await {
        Ok(c) => return Ok(c),
        Err(e) => e,
    };
    let socket = match target {
        Target::Socket(socket) => socket,
        Target::Url { url, .. } => {
            return Err(first).with_context(|| format!("cannot reach fsindexd at {url}"));
        }
    };
    // No daemon of this user, but a machine-wide one: ask that one.
    if *socket == default_socket()
        && std::env::var_os("FSINDEX_HOME").is_none()
        && let Ok(c) = connect(&Target::Socket(system_socket())).await
    {
        return Ok(c);
    }
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
    #[cfg(windows)]
    {
        use std::os::windows::process::CommandExt;
        // Detached: no console window, and a Ctrl-C (or closing the
        // console) meant for fsctl does not reach it.
        const DETACHED_PROCESS: u32 = 0x0000_0008;
        const CREATE_NEW_PROCESS_GROUP: u32 = 0x0000_0200;
        cmd.creation_flags(DETACHED_PROCESS | CREATE_NEW_PROCESS_GROUP);
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
