//! The child's own bounds: lowest CPU priority, idle I/O class, an address
//! space limit, no core dumps. One body per OS; set by the child on itself so
//! the parent needs no `pre_exec` (which would be unsafe code).

use std::io;

/// Nice 19 and (Linux) the idle I/O class: extraction yields to everything.
pub fn lower() {
    #[cfg(unix)]
    let _ = rustix::process::setpriority_process(None, 19);
    #[cfg(target_os = "linux")]
    ioprio_idle();
}

/// Puts the calling process in the idle I/O scheduling class.
///
/// rustix has no `ioprio_set`, so this is the crate's one use of `unsafe`:
/// a raw syscall with integer arguments that touches no memory. (The daemon's
/// `dupes::lower_thread_priority` does the same.)
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn ioprio_idle() {
    const IOPRIO_WHO_PROCESS: libc::c_long = 1;
    const IOPRIO_CLASS_IDLE: libc::c_long = 3;
    const IOPRIO_CLASS_SHIFT: libc::c_long = 13;
    // SAFETY: ioprio_set(which, who = 0 meaning the caller, ioprio) reads no
    // pointers; a failure only leaves the I/O priority as it was.
    unsafe {
        libc::syscall(
            libc::SYS_ioprio_set,
            IOPRIO_WHO_PROCESS,
            0 as libc::c_long,
            IOPRIO_CLASS_IDLE << IOPRIO_CLASS_SHIFT,
        );
    }
}

/// Caps the process's address space (RLIMIT_AS) at `bytes`.
pub fn limit_memory(bytes: u64) -> io::Result<()> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        use rustix::process::{Resource, Rlimit, setrlimit};
        setrlimit(
            Resource::As,
            Rlimit {
                current: Some(bytes),
                maximum: Some(bytes),
            },
        )?;
        Ok(())
    }
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    {
        let _ = bytes;
        Err(io::Error::other("no address-space limit on this OS"))
    }
}

/// A child that aborts on a bad file should not leave a core file behind.
pub fn no_core_dumps() {
    #[cfg(unix)]
    {
        use rustix::process::{Resource, Rlimit, setrlimit};
        let _ = setrlimit(
            Resource::Core,
            Rlimit {
                current: Some(0),
                maximum: Some(0),
            },
        );
    }
}
