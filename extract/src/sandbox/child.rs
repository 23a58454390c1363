//! The child's side: `fsindex-extract-child` serving requests until stdin closes.

use super::{MEMORY_ENV, priority, protocol};
use crate::{Failure, extract_file};
use std::io::{self, BufReader, BufWriter, Write};

/// Runs the extraction child: lowers its priority, limits its memory (bytes
/// from [`MEMORY_ENV`], set by the parent's [`super::Extractor`]), then
/// answers one request at a time on stdin/stdout until stdin closes. Never
/// returns.
///
/// The protocol gets a private copy of stdout and fd 1 is pointed at stderr,
/// so a stray `println!` in a parser cannot corrupt a frame. Panics are caught
/// and answered as `parse` failures; an allocation past the memory limit
/// aborts the process, which the parent reports as `memory`.
pub fn child_main() -> ! {
    std::process::exit(serve())
}

fn serve() -> i32 {
    priority::lower();
    priority::no_core_dumps();
    if let Some(bytes) = std::env::var(MEMORY_ENV).ok().and_then(|v| v.parse().ok())
        && let Err(e) = priority::limit_memory(bytes)
    {
        eprintln!("fsindex extract: cannot limit memory to {bytes} bytes: {e}");
    }
    // Panic messages travel in the response; stderr stays for real crashes.
    std::panic::set_hook(Box::new(|_| {}));
    let out = match protocol_stdout() {
        Ok(out) => out,
        Err(e) => {
            eprintln!("fsindex extract: cannot set up stdout: {e}");
            return 2;
        }
    };
    let mut w = BufWriter::new(out);
    let mut r = BufReader::new(io::stdin().lock());
    loop {
        let frame = match protocol::read_frame(&mut r, protocol::MAX_REQUEST) {
            Ok(Some(f)) => f,
            Ok(None) => return 0,
            Err(e) => {
                eprintln!("fsindex extract: bad request: {e}");
                return 2;
            }
        };
        let answer = match protocol::decode_request(&frame) {
            Ok(req) => std::panic::catch_unwind(|| extract_file(&req.path, req.kind, &req.limits))
                .unwrap_or_else(|p| {
                    Err(Failure::Parse(format!(
                        "extractor panicked: {}",
                        message(&p)
                    )))
                }),
            Err(e) => Err(Failure::Sandbox(format!("bad request: {e}"))),
        };
        if protocol::write_frame(&mut w, &protocol::encode_response(&answer))
            .and_then(|()| w.flush())
            .is_err()
        {
            // The parent is gone.
            return 0;
        }
    }
}

fn message(p: &Box<dyn std::any::Any + Send>) -> String {
    p.downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into())
}

/// A private handle on the real stdout, with fd 1 then pointed at stderr.
#[cfg(unix)]
fn protocol_stdout() -> io::Result<std::fs::File> {
    let private = rustix::io::fcntl_dupfd_cloexec(io::stdout(), 3)?;
    rustix::stdio::dup2_stdout(io::stderr())?;
    Ok(std::fs::File::from(private))
}

#[cfg(not(unix))]
fn protocol_stdout() -> io::Result<io::Stdout> {
    Ok(io::stdout())
}
