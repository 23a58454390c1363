//! The parent's side: one child per [`Extractor`], several in a [`Pool`].

use super::{MEMORY_ENV, SandboxConfig, protocol};
use crate::{Extracted, Failure, Kind};
use std::io::{self, Read};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::sync::{Condvar, Mutex};
use std::thread::JoinHandle;

/// How much of the child's stderr is kept to explain its death.
const STDERR_TAIL: usize = 4096;

/// Extracts files, risky kinds in a sandboxed child process.
///
/// Owns at most one child, spawned on first use from the command it was
/// given (the daemon passes `fsindex-extract-child` from beside itself) and respawned after a
/// timeout or crash. One file at a time: `&mut self`; for several workers
/// use a [`Pool`].
pub struct Extractor {
    command: Command,
    config: SandboxConfig,
    worker: Option<Worker>,
}

struct Worker {
    proc: Child,
    stdin: ChildStdin,
    frames: Receiver<io::Result<Vec<u8>>>,
    stderr: Option<JoinHandle<Vec<u8>>>,
}

impl Extractor {
    /// An extractor whose child is started with `command` (its stdio and the
    /// [`MEMORY_ENV`] variable are set here).
    pub fn new(mut command: Command, config: SandboxConfig) -> Extractor {
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        Extractor {
            command,
            config,
            worker: None,
        }
    }

    pub fn config(&self) -> &SandboxConfig {
        &self.config
    }

    /// Changes the bounds; limits and timeout apply to the next file, the
    /// memory limit to the next child started.
    pub fn config_mut(&mut self) -> &mut SandboxConfig {
        &mut self.config
    }

    /// The text of `path` read as `kind`: in-process for kinds this crate
    /// reads itself ([`Kind::in_process`]), in the child for the others.
    ///
    /// A file of no known extension that is an mbox mailbox is read as
    /// one ([`crate::kind::kind_for_file`]); the text keeps the version of
    /// the kind its name says, which is what the daemon compares.
    pub fn extract(&mut self, path: &Path, kind: Kind) -> Result<Extracted, Failure> {
        let read_as = crate::kind::kind_for_file(path, kind);
        let got = if read_as.in_process() {
            crate::extract_in_process(path, read_as, &self.config.limits)
        } else {
            self.extract_in_child(path, read_as)
        };
        got.map(|e| Extracted {
            version: kind.version(),
            ..e
        })
    }

    /// The text of `path` read as `kind` by the child, whatever the kind.
    pub fn extract_in_child(&mut self, path: &Path, kind: Kind) -> Result<Extracted, Failure> {
        let request = protocol::encode_request(path, kind, &self.config.limits);
        // A child that died while idle (killed, OOM-killer) is not this
        // file's fault: respawn once and send again.
        let mut sent = false;
        for _ in 0..2 {
            let w = self.worker()?;
            if protocol::write_frame(&mut w.stdin, &request).is_ok() {
                sent = true;
                break;
            }
            self.reap();
        }
        if !sent {
            return Err(Failure::Sandbox(
                "the child does not accept requests".into(),
            ));
        }
        let w = self
            .worker
            .as_mut()
            .ok_or_else(|| Failure::Sandbox("no child".into()))?;
        match w.frames.recv_timeout(self.config.timeout) {
            Ok(Ok(frame)) => match protocol::decode_response(&frame, kind) {
                Ok(answer) => answer,
                Err(e) => {
                    self.reap();
                    Err(Failure::Sandbox(format!("bad response: {e}")))
                }
            },
            Ok(Err(_)) | Err(RecvTimeoutError::Disconnected) => Err(self.died()),
            Err(RecvTimeoutError::Timeout) => {
                self.reap();
                Err(Failure::Timeout)
            }
        }
    }

    /// The running child's process id, if one is running.
    pub fn child_pid(&self) -> Option<u32> {
        self.worker.as_ref().map(|w| w.proc.id())
    }

    /// The live child, spawned if there is none or it has exited.
    fn worker(&mut self) -> Result<&mut Worker, Failure> {
        if let Some(w) = &mut self.worker
            && !matches!(w.proc.try_wait(), Ok(None))
        {
            self.reap();
        }
        if self.worker.is_none() {
            self.worker = Some(self.spawn()?);
        }
        self.worker
            .as_mut()
            .ok_or_else(|| Failure::Sandbox("no child".into()))
    }

    fn spawn(&mut self) -> Result<Worker, Failure> {
        let mut proc = self
            .command
            .env(MEMORY_ENV, self.config.memory_limit.to_string())
            .spawn()
            .map_err(|e| {
                let program = self.command.get_program().to_string_lossy().into_owned();
                Failure::Sandbox(format!("cannot start the extractor {program}: {e}"))
            })?;
        let (Some(stdin), Some(mut stdout), Some(mut stderr)) =
            (proc.stdin.take(), proc.stdout.take(), proc.stderr.take())
        else {
            let _ = proc.kill();
            let _ = proc.wait();
            return Err(Failure::Sandbox("the extractor has no pipes".into()));
        };
        let max = self.config.limits.max_text_bytes + (64 << 10);
        let (tx, frames) = channel();
        std::thread::Builder::new()
            .name("extract-stdout".into())
            .spawn(move || {
                loop {
                    let r = match protocol::read_frame(&mut stdout, max) {
                        Ok(Some(f)) => Ok(f),
                        Ok(None) => Err(io::ErrorKind::UnexpectedEof.into()),
                        Err(e) => Err(e),
                    };
                    let end = r.is_err();
                    if tx.send(r).is_err() || end {
                        return;
                    }
                }
            })
            .map_err(|e| Failure::Sandbox(format!("cannot start a reader thread: {e}")))?;
        let stderr = std::thread::Builder::new()
            .name("extract-stderr".into())
            .spawn(move || {
                let mut tail = Vec::new();
                let mut buf = [0u8; 4096];
                while let Ok(n) = stderr.read(&mut buf) {
                    if n == 0 {
                        break;
                    }
                    tail.extend_from_slice(&buf[..n]);
                    if tail.len() > STDERR_TAIL {
                        tail.drain(..tail.len() - STDERR_TAIL);
                    }
                }
                tail
            })
            .ok();
        Ok(Worker {
            proc,
            stdin,
            frames,
            stderr,
        })
    }

    /// Kills and waits for the child; returns its stderr's tail.
    fn reap(&mut self) -> (Option<std::process::ExitStatus>, Vec<u8>) {
        let Some(mut w) = self.worker.take() else {
            return (None, Vec::new());
        };
        drop(w.stdin);
        let _ = w.proc.kill();
        let status = w.proc.wait().ok();
        let tail = w
            .stderr
            .take()
            .and_then(|h| h.join().ok())
            .unwrap_or_default();
        (status, tail)
    }

    /// Why the child died in the middle of a request.
    fn died(&mut self) -> Failure {
        let (status, tail) = self.reap();
        let tail = String::from_utf8_lossy(&tail);
        if tail.contains("memory allocation of") || tail.contains("out of memory") {
            return Failure::MemoryLimit;
        }
        let last = tail
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("");
        let how = status.map_or_else(|| "unknown exit".to_owned(), describe);
        Failure::Crashed(if last.is_empty() {
            how
        } else {
            format!("{how}: {last}")
        })
    }
}

fn describe(s: std::process::ExitStatus) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(sig) = s.signal() {
            return format!("killed by signal {sig}");
        }
    }
    s.to_string()
}

impl Drop for Extractor {
    fn drop(&mut self) {
        self.reap();
    }
}

/// Several extractors shared by worker threads: `extract` takes an idle one,
/// waiting if all are busy. Children start on first use.
pub struct Pool {
    idle: Mutex<Vec<Extractor>>,
    returned: Condvar,
    config: SandboxConfig,
}

impl Pool {
    /// A pool of `size` extractors (at least one), each spawning its child
    /// with a copy of `command`.
    pub fn new(command: Command, config: SandboxConfig, size: usize) -> Pool {
        let idle = (0..size.max(1))
            .map(|_| Extractor::new(copy_command(&command), config.clone()))
            .collect();
        Pool {
            idle: Mutex::new(idle),
            returned: Condvar::new(),
            config,
        }
    }

    /// As [`Extractor::extract`]; in-process kinds do not wait for a child.
    pub fn extract(&self, path: &Path, kind: Kind) -> Result<Extracted, Failure> {
        let read_as = crate::kind::kind_for_file(path, kind);
        if read_as != kind {
            return self.extract(path, read_as).map(|e| Extracted {
                version: kind.version(),
                ..e
            });
        }
        if kind.in_process() {
            return crate::extract_in_process(path, kind, &self.config.limits);
        }
        let mut ex = {
            let mut idle = self.idle.lock().unwrap_or_else(|p| p.into_inner());
            loop {
                if let Some(ex) = idle.pop() {
                    break ex;
                }
                idle = self.returned.wait(idle).unwrap_or_else(|p| p.into_inner());
            }
        };
        let r = ex.extract_in_child(path, kind);
        self.idle.lock().unwrap_or_else(|p| p.into_inner()).push(ex);
        self.returned.notify_one();
        r
    }
}

/// `Command` is not `Clone`: rebuild program, arguments, environment and
/// working directory.
fn copy_command(c: &Command) -> Command {
    let mut n = Command::new(c.get_program());
    n.args(c.get_args());
    for (k, v) in c.get_envs() {
        match v {
            Some(v) => n.env(k, v),
            None => n.env_remove(k),
        };
    }
    if let Some(d) = c.get_current_dir() {
        n.current_dir(d);
    }
    n
}
