//! What fsctl does about a daemon older than itself (the handshake found it
//! speaking an older protocol): on a terminal, offers to restart it; fsctl
//! then starts its own `fsindexd`, as it does when none is listening.
//! Elsewhere (scripts, pipes) it refuses with one line saying how.

use std::io::{BufRead, IsTerminal, Write};

use anyhow::bail;
use fsindex_client::ProtocolMismatch;

/// Asks whether to stop the older daemon, and stops it; an error when not
/// asked (no terminal), declined, or the daemon would not stop.
pub fn offer(old: &ProtocolMismatch) -> anyhow::Result<()> {
    let line = format!(
        "fsindexd {} (pid {}) is older than this fsctl {} (protocol {}, fsctl speaks {})",
        old.version,
        old.pid,
        env!("CARGO_PKG_VERSION"),
        old.protocol,
        fsindex_client::PROTOCOL
    );
    if !(std::io::stdin().is_terminal() && std::io::stderr().is_terminal()) {
        bail!(
            "{line}: restart it (kill {}; fsctl then starts the new one), or run fsctl on a terminal to be offered that",
            old.pid
        );
    }
    eprint!("{line}. Restart it now? [y/N] ");
    std::io::stderr().flush()?;
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer)?;
    if !matches!(answer.trim(), "y" | "Y" | "yes") {
        bail!("{line}: not restarted");
    }
    stop(old.pid)
}

/// SIGTERM (the daemon shuts down cleanly), then waits for it to be gone.
#[cfg(unix)]
fn stop(pid: u32) -> anyhow::Result<()> {
    use std::process::Command;
    use std::time::{Duration, Instant};

    use anyhow::Context;
    let signal = |args: &[&str]| {
        Command::new("kill")
            .args(args)
            .arg(pid.to_string())
            .stderr(std::process::Stdio::null())
            .status()
            .map(|s| s.success())
    };
    if !signal(&["-TERM"]).context("running kill")? {
        bail!("could not stop fsindexd (pid {pid}): is it another user's?");
    }
    // Gone, or a zombie its parent has not reaped (it holds no socket or
    // lock any more).
    let running = || {
        signal(&["-0"]).unwrap_or(false)
            && std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .map(|s| {
                    !s.rsplit(')')
                        .next()
                        .unwrap_or("")
                        .trim_start()
                        .starts_with('Z')
                })
                .unwrap_or(true)
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    while running() {
        if Instant::now() > deadline {
            bail!("fsindexd (pid {pid}) did not stop within 30 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Ok(())
}

#[cfg(not(unix))]
fn stop(pid: u32) -> anyhow::Result<()> {
    bail!(
        "stop fsindexd (pid {pid}) from the task manager or `fsctl service`, then run fsctl again"
    )
}
