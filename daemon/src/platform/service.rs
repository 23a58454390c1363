//! Glue between the daemon and the service manager that runs it.
//!
//! systemd (`Type=notify` units, see `packaging/systemd/`) learns that the
//! daemon is ready (`READY=1`, sent once the socket listens), that it is
//! stopping (`STOPPING=1`), what it is doing (`STATUS=`), and that it is
//! alive (`WATCHDOG=1`, every half `WatchdogSec`). The protocol is one
//! datagram to `$NOTIFY_SOCKET` (sd_notify(3)), written here with
//! `UnixDatagram`: no C library and no unsafe code. Outside systemd every
//! call is a no-op.
//!
//! [`under_systemd`] tells whether stderr is collected by the journal, so the
//! daemon can log there too.
//!
//! Windows: [`windows::run`] runs the daemon under the Service Control
//! Manager; [`ready`] and [`stopping`] report to it, and its stop request
//! resolves [`stop_requested`], which the daemon's shutdown future awaits on
//! every platform.

use std::ffi::OsStr;
use std::time::Duration;

/// One assignment of the notify protocol.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Notify<'a> {
    /// Start-up is finished: the socket listens.
    Ready,
    /// Shutdown has begun.
    Stopping,
    /// A config reload has begun (`READY=1` follows when it is done).
    Reloading,
    /// Free-form status shown by `systemctl status` (one line).
    Status(&'a str),
    /// The daemon is alive (resets the watchdog timer).
    Watchdog,
}

impl Notify<'_> {
    fn write_to(&self, out: &mut String) {
        match self {
            Notify::Ready => out.push_str("READY=1\n"),
            Notify::Stopping => out.push_str("STOPPING=1\n"),
            Notify::Reloading => out.push_str("RELOADING=1\n"),
            Notify::Watchdog => out.push_str("WATCHDOG=1\n"),
            Notify::Status(s) => {
                // A newline would end the assignment early.
                out.push_str("STATUS=");
                out.extend(s.chars().map(|c| if c == '\n' { ' ' } else { c }));
                out.push('\n');
            }
        }
    }
}

/// The datagram for `states`: `KEY=VALUE` lines.
pub fn message(states: &[Notify<'_>]) -> String {
    let mut out = String::new();
    for s in states {
        s.write_to(&mut out);
    }
    out
}

/// Sends `states` to the service manager named by `$NOTIFY_SOCKET`.
/// `Ok(false)`: not run by a notify-aware manager (nothing sent).
pub fn notify(states: &[Notify<'_>]) -> std::io::Result<bool> {
    match std::env::var_os("NOTIFY_SOCKET").filter(|s| !s.is_empty()) {
        Some(socket) => notify_to(&socket, states).map(|()| true),
        None => Ok(false),
    }
}

/// Sends `states` to `socket`: a path, or `@name` for a Linux abstract
/// socket, as `$NOTIFY_SOCKET` gives it.
#[cfg(unix)]
pub fn notify_to(socket: &OsStr, states: &[Notify<'_>]) -> std::io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::net::UnixDatagram;

    let msg = message(states);
    let sock = UnixDatagram::unbound()?;
    let bytes = socket.as_bytes();
    let sent = if let Some(name) = bytes.strip_prefix(b"@") {
        #[cfg(any(target_os = "linux", target_os = "android"))]
        {
            #[cfg(target_os = "android")]
            use std::os::android::net::SocketAddrExt;
            #[cfg(target_os = "linux")]
            use std::os::linux::net::SocketAddrExt;
            let addr = std::os::unix::net::SocketAddr::from_abstract_name(name)?;
            sock.send_to_addr(msg.as_bytes(), &addr)?
        }
        #[cfg(not(any(target_os = "linux", target_os = "android")))]
        {
            let _ = name;
            return Err(std::io::Error::new(
                std::io::ErrorKind::Unsupported,
                "abstract NOTIFY_SOCKET on a system without abstract sockets",
            ));
        }
    } else if bytes.starts_with(b"/") {
        sock.send_to(msg.as_bytes(), socket)?
    } else {
        // systemd 254+ may also hand out `vsock:` addresses (for VMs).
        return Err(std::io::Error::new(
            std::io::ErrorKind::Unsupported,
            format!("unsupported NOTIFY_SOCKET {}", socket.to_string_lossy()),
        ));
    };
    if sent != msg.len() {
        return Err(std::io::Error::other("short write to NOTIFY_SOCKET"));
    }
    Ok(())
}

/// No notify socket outside unix.
#[cfg(not(unix))]
pub fn notify_to(_socket: &OsStr, _states: &[Notify<'_>]) -> std::io::Result<()> {
    Err(std::io::Error::new(
        std::io::ErrorKind::Unsupported,
        "NOTIFY_SOCKET is a unix socket",
    ))
}

/// Sends and logs a failure: a lost notification must not stop the daemon
/// (systemd then reports a start timeout, which says what went wrong).
fn send(states: &[Notify<'_>]) {
    if let Err(e) = notify(states) {
        tracing::warn!("cannot notify the service manager: {e}");
    }
}

/// Start-up is done (the socket listens): `READY=1` with a status line for
/// systemd; `Running` for the Windows SCM.
pub fn ready(status: &str) {
    send(&[Notify::Ready, Notify::Status(status)]);
    #[cfg(windows)]
    windows::report(windows::State::Running);
}

/// Shutdown has begun: `STOPPING=1` for systemd; `StopPending` for the SCM.
pub fn stopping() {
    send(&[Notify::Stopping, Notify::Status("stopping")]);
    #[cfg(windows)]
    windows::report(windows::State::StopPending);
}

/// A one-line status for `systemctl status`.
pub fn status(line: &str) {
    send(&[Notify::Status(line)]);
}

/// Whether stderr goes to the journal: systemd sets `JOURNAL_STREAM` when
/// it connects stderr to journald, and `INVOCATION_ID` for every service.
pub fn under_systemd() -> bool {
    ["JOURNAL_STREAM", "INVOCATION_ID"]
        .iter()
        .any(|k| std::env::var_os(k).is_some_and(|v| !v.is_empty()))
}

/// How often to ping systemd's watchdog, from this process's environment:
/// half of `WATCHDOG_USEC`, when it is set and `WATCHDOG_PID` is unset or
/// this process.
pub fn watchdog_interval() -> Option<Duration> {
    watchdog_interval_from(
        std::env::var_os("WATCHDOG_USEC").as_deref(),
        std::env::var_os("WATCHDOG_PID").as_deref(),
        std::process::id(),
    )
}

/// [`watchdog_interval`] on given values (`WATCHDOG_USEC`, `WATCHDOG_PID`,
/// our pid), so it can be tested without touching the environment.
pub fn watchdog_interval_from(
    usec: Option<&OsStr>,
    pid: Option<&OsStr>,
    own_pid: u32,
) -> Option<Duration> {
    let usec: u64 = usec?.to_str()?.trim().parse().ok()?;
    if usec == 0 {
        return None;
    }
    if let Some(pid) = pid.filter(|p| !p.is_empty()) {
        // Meant for another process (e.g. one we were started by).
        if pid.to_str()?.trim().parse::<u32>().ok()? != own_pid {
            return None;
        }
    }
    Some(Duration::from_micros(usec) / 2)
}

/// Pings the watchdog every `interval`, forever. Runs as a task on the
/// runtime that answers requests, so a wedged runtime stops the pings and
/// systemd restarts the daemon.
pub async fn watchdog(interval: Duration) {
    let mut tick = tokio::time::interval(interval);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        send(&[Notify::Watchdog]);
    }
}

/// Spawns [`watchdog`] on the current tokio runtime when systemd asked for
/// one (`WatchdogSec=` in the unit); `None` otherwise. Abort the handle, or
/// drop the runtime, to stop it.
pub fn spawn_watchdog() -> Option<tokio::task::JoinHandle<()>> {
    let interval = watchdog_interval()?;
    tracing::info!(?interval, "pinging the systemd watchdog");
    Some(tokio::spawn(watchdog(interval)))
}

static STOP: tokio::sync::Notify = tokio::sync::Notify::const_new();

/// Asks the daemon to shut down, as SIGTERM does (used for the Windows
/// SCM's stop request). A request made before anyone waits is kept.
pub fn request_stop() {
    STOP.notify_one();
}

/// Resolves once [`request_stop`] was called: one arm of the daemon's
/// shutdown future, beside SIGTERM and Ctrl-C.
pub async fn stop_requested() {
    STOP.notified().await;
}

/// The daemon as a Windows service: `fsindexd --service`, registered with
/// the SCM by `fsctl service install --system` (see packaging/windows/).
#[cfg(windows)]
pub mod windows {
    use crate::LockOk;
    use std::sync::{Mutex, OnceLock};
    use std::time::Duration;

    use windows_service::service::{
        ServiceControl, ServiceControlAccept, ServiceExitCode, ServiceState, ServiceStatus,
        ServiceType,
    };
    use windows_service::service_control_handler::{
        self, ServiceControlHandlerResult, ServiceStatusHandle,
    };

    /// The service's name in the SCM.
    pub const SERVICE_NAME: &str = "fsindexd";

    type Body = Box<dyn FnOnce() -> anyhow::Result<()> + Send>;

    static BODY: Mutex<Option<Body>> = Mutex::new(None);
    static HANDLE: OnceLock<ServiceStatusHandle> = OnceLock::new();
    static RESULT: Mutex<Option<anyhow::Result<()>>> = Mutex::new(None);

    /// What the daemon tells the SCM.
    #[derive(Clone, Copy, Debug)]
    pub enum State {
        Running,
        StopPending,
    }

    /// Runs `body` (the daemon until its shutdown future resolves) as the
    /// SCM's service; returns when it has stopped. Fails at once when the
    /// process was not started by the SCM.
    pub fn run(body: impl FnOnce() -> anyhow::Result<()> + Send + 'static) -> anyhow::Result<()> {
        *BODY.lock_ok() = Some(Box::new(body));
        entry::dispatch().map_err(|e| {
            anyhow::anyhow!(
                "not started by the Windows service manager ({e}); run fsindexd without --service"
            )
        })?;
        RESULT.lock_ok().take().unwrap_or(Ok(()))
    }

    // The `extern "system"` entry point the SCM calls, defined by the crate's
    // macro (which also converts the raw argument vector).
    mod entry {
        windows_service::define_windows_service!(ffi_service_main, service_main);

        fn service_main(_args: Vec<std::ffi::OsString>) {
            super::service_main();
        }

        /// Hands this thread to the SCM until the service stops.
        pub(super) fn dispatch() -> windows_service::Result<()> {
            windows_service::service_dispatcher::start(super::SERVICE_NAME, ffi_service_main)
        }
    }

    fn service_main() {
        let handler = |control| match control {
            ServiceControl::Stop | ServiceControl::Shutdown => {
                super::request_stop();
                ServiceControlHandlerResult::NoError
            }
            ServiceControl::Interrogate => ServiceControlHandlerResult::NoError,
            _ => ServiceControlHandlerResult::NotImplemented,
        };
        let handle = match service_control_handler::register(SERVICE_NAME, handler) {
            Ok(h) => h,
            Err(e) => {
                *RESULT.lock_ok() =
                    Some(Err(anyhow::anyhow!("registering the service handler: {e}")));
                return;
            }
        };
        let _ = HANDLE.set(handle);
        set(ServiceState::StartPending, ServiceExitCode::Win32(0));
        let body = BODY.lock_ok().take();
        let result = body.map_or(Ok(()), |b| b());
        let code = if result.is_ok() { 0 } else { 1 };
        *RESULT.lock_ok() = Some(result);
        set(
            ServiceState::Stopped,
            ServiceExitCode::ServiceSpecific(code),
        );
    }

    /// Reports a state change; a no-op when not running as a service.
    pub fn report(state: State) {
        let state = match state {
            State::Running => ServiceState::Running,
            State::StopPending => ServiceState::StopPending,
        };
        set(state, ServiceExitCode::Win32(0));
    }

    fn set(state: ServiceState, exit_code: ServiceExitCode) {
        let Some(handle) = HANDLE.get() else {
            return;
        };
        let controls_accepted = match state {
            ServiceState::Running => ServiceControlAccept::STOP | ServiceControlAccept::SHUTDOWN,
            _ => ServiceControlAccept::empty(),
        };
        let wait_hint = match state {
            ServiceState::StartPending | ServiceState::StopPending => Duration::from_secs(30),
            _ => Duration::default(),
        };
        let status = ServiceStatus {
            service_type: ServiceType::OWN_PROCESS,
            current_state: state,
            controls_accepted,
            exit_code,
            checkpoint: 0,
            wait_hint,
            process_id: None,
        };
        if let Err(e) = handle.set_service_status(status) {
            tracing::warn!("cannot report {state:?} to the service manager: {e}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsString;

    fn os(s: &str) -> OsString {
        OsString::from(s)
    }

    #[test]
    fn watchdog_interval_is_half_of_watchdog_usec() {
        let me = 4242;
        let at = |usec: Option<&str>, pid: Option<&str>| {
            watchdog_interval_from(usec.map(os).as_deref(), pid.map(os).as_deref(), me)
        };
        assert_eq!(at(Some("90000000"), None), Some(Duration::from_secs(45)));
        assert_eq!(
            at(Some("90000000"), Some("4242")),
            Some(Duration::from_secs(45))
        );
        assert_eq!(
            at(Some("90000000"), Some("")),
            Some(Duration::from_secs(45))
        );
        assert_eq!(at(Some("1"), None), Some(Duration::from_nanos(500)));
        // Meant for another process, off, or malformed: no watchdog.
        assert_eq!(at(Some("90000000"), Some("1")), None);
        assert_eq!(at(Some("90000000"), Some("x")), None);
        assert_eq!(at(Some("0"), None), None);
        assert_eq!(at(Some("ten"), None), None);
        assert_eq!(at(Some("-5"), None), None);
        assert_eq!(at(None, Some("4242")), None);
    }

    #[test]
    fn message_is_newline_separated_assignments() {
        assert_eq!(
            message(&[Notify::Ready, Notify::Status("listening on /run/x.sock")]),
            "READY=1\nSTATUS=listening on /run/x.sock\n"
        );
        assert_eq!(
            message(&[Notify::Stopping, Notify::Reloading, Notify::Watchdog]),
            "STOPPING=1\nRELOADING=1\nWATCHDOG=1\n"
        );
        // A newline in a status must not start a new assignment.
        assert_eq!(
            message(&[Notify::Status("a\nWATCHDOG=1")]),
            "STATUS=a WATCHDOG=1\n"
        );
    }

    #[cfg(unix)]
    fn receive(sock: &std::os::unix::net::UnixDatagram) -> String {
        sock.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let mut buf = [0u8; 4096];
        let n = sock.recv(&mut buf).unwrap();
        String::from_utf8(buf[..n].to_vec()).unwrap()
    }

    #[cfg(unix)]
    #[test]
    fn notify_to_sends_one_datagram_to_a_socket_path() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("notify.sock");
        let sock = std::os::unix::net::UnixDatagram::bind(&path).unwrap();
        notify_to(
            path.as_os_str(),
            &[Notify::Ready, Notify::Status("listening")],
        )
        .unwrap();
        assert_eq!(receive(&sock), "READY=1\nSTATUS=listening\n");
        notify_to(path.as_os_str(), &[Notify::Watchdog]).unwrap();
        assert_eq!(receive(&sock), "WATCHDOG=1\n");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn notify_to_reaches_an_abstract_socket() {
        use std::os::linux::net::SocketAddrExt;
        let name = format!("fsindex-notify-test-{}", std::process::id());
        let addr = std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes()).unwrap();
        let sock = std::os::unix::net::UnixDatagram::bind_addr(&addr).unwrap();
        notify_to(&os(&format!("@{name}")), &[Notify::Stopping]).unwrap();
        assert_eq!(receive(&sock), "STOPPING=1\n");
    }

    #[cfg(unix)]
    #[test]
    fn notify_to_refuses_what_it_cannot_reach() {
        let err = notify_to(&os("vsock:2:1234"), &[Notify::Ready]).unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::Unsupported);
        let dir = tempfile::tempdir().unwrap();
        // Nobody listens: an error, never a panic or a hang.
        assert!(notify_to(dir.path().join("absent.sock").as_os_str(), &[Notify::Ready]).is_err());
    }

    #[tokio::test]
    async fn a_stop_request_made_before_waiting_is_kept() {
        request_stop();
        tokio::time::timeout(Duration::from_secs(5), stop_requested())
            .await
            .expect("stop_requested resolves");
    }
}
