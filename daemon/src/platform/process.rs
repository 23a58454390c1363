//! The daemon's own process: running background work at low priority and
//! giving freed memory back to the operating system.

/// Lowers the calling thread's CPU and I/O priority (background hashing).
#[allow(unsafe_code)]
pub fn lower_thread_priority() {
    #[cfg(target_os = "linux")]
    // SAFETY: plain syscalls on the calling thread with integer arguments.
    unsafe {
        let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
        libc::setpriority(libc::PRIO_PROCESS, tid, 19);
        // IOPRIO_CLASS_IDLE (3) << IOPRIO_CLASS_SHIFT (13), who = this thread.
        libc::syscall(libc::SYS_ioprio_set, 1, tid as libc::c_long, 3 << 13);
    }
}

/// Returns freed heap pages to the OS. glibc keeps them otherwise, and a
/// scan of a million entries frees a lot: without this the idle daemon's
/// RSS stays at its scan-time peak.
#[allow(unsafe_code)]
pub fn release_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim takes no pointers; it only walks glibc's own arenas.
    unsafe {
        libc::malloc_trim(0);
    }
}
