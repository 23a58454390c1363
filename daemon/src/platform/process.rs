//! The daemon's own process: running background work at low priority and
//! giving freed memory back to the operating system. One function per
//! concern, a body per OS.

/// How many cores the daemon sizes its threads for: the cores it may run
/// on, or `FSINDEX_CORES` where set (a benchmark's knob: the walk's and
/// hashing's threads, the queries allowed at once and the allocator's
/// arenas then grow as on a machine of that many cores, so a many-core
/// effect can be reproduced on a small machine). Read once.
pub fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| {
        std::env::var("FSINDEX_CORES")
            .ok()
            .and_then(|v| v.trim().parse::<usize>().ok())
            .filter(|&n| n > 0)
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
    })
}

/// Lowers the calling thread's CPU and I/O priority (background hashing).
///
/// Linux: nice 19 and the idle I/O class. macOS: `PRIO_DARWIN_BG` (low CPU
/// and throttled I/O) and `setiopolicy_np(IOPOL_THROTTLE)`. Windows:
/// `THREAD_MODE_BACKGROUND_BEGIN` (the per-thread form of
/// `PROCESS_MODE_BACKGROUND_BEGIN`: low CPU, I/O and memory priority, for
/// this thread only, so queries stay responsive).
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
    #[cfg(target_os = "macos")]
    {
        // <sys/resource.h>; the libc crate does not declare these.
        const IOPOL_TYPE_DISK: libc::c_int = 0;
        const IOPOL_SCOPE_THREAD: libc::c_int = 1;
        const IOPOL_THROTTLE: libc::c_int = 3;
        unsafe extern "C" {
            fn setiopolicy_np(
                iotype: libc::c_int,
                scope: libc::c_int,
                policy: libc::c_int,
            ) -> libc::c_int;
        }
        // SAFETY: plain calls on the calling thread with integer arguments.
        unsafe {
            libc::setpriority(libc::PRIO_DARWIN_THREAD, 0, libc::PRIO_DARWIN_BG);
            setiopolicy_np(IOPOL_TYPE_DISK, IOPOL_SCOPE_THREAD, IOPOL_THROTTLE);
        }
    }
    #[cfg(windows)]
    // SAFETY: the pseudo-handle of the calling thread; no pointers.
    unsafe {
        use windows_sys::Win32::System::Threading::{
            GetCurrentThread, SetThreadPriority, THREAD_MODE_BACKGROUND_BEGIN,
        };
        SetThreadPriority(GetCurrentThread(), THREAD_MODE_BACKGROUND_BEGIN);
    }
}

/// Tunes glibc's malloc for a long-lived daemon, before any thread starts:
///
/// - one arena per core (its default is eight per core): each thread that
///   allocates gets an arena of its own up to the cap, and what a finished
///   scan leaves scattered in an arena pins its pages (at a million
///   entries the idle daemon held 4 MiB more with the default);
/// - blocks of 256 KiB and more always mapped on their own, so freeing one
///   unmaps it. By default that threshold rises to the largest block freed
///   (up to 32 MiB), after which a search's large vectors came from the
///   arenas and stayed there: 25 large searches left the daemon at 93 MiB
///   even after `malloc_trim`, 61 MiB with the fixed threshold. No cost
///   measurable on the largest answers (`ar`, 272,290 results: 119-129 ms
///   in the daemon, 120-121 ms with the default; two runs each).
///
/// Elsewhere: nothing.
#[allow(unsafe_code)]
pub fn tune_allocator() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        let cores = cores();
        // SAFETY: mallopt takes two integers; called before other threads.
        unsafe {
            libc::mallopt(libc::M_ARENA_MAX, cores.min(64) as libc::c_int);
            libc::mallopt(libc::M_MMAP_THRESHOLD, 256 << 10);
        }
    }
}

/// Returns freed heap pages to the OS. glibc keeps them otherwise, and a
/// scan of a million entries frees a lot: without this the idle daemon's
/// RSS stays at its scan-time peak.
///
/// Linux (glibc): `malloc_trim`. macOS: `malloc_zone_pressure_relief` on
/// every zone. Windows: `HeapCompact` on the process heap (which Rust's
/// allocator uses). Elsewhere (musl, the BSDs): nothing; their allocators
/// return memory themselves.
#[allow(unsafe_code)]
pub fn release_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim takes no pointers; it only walks glibc's own arenas.
    unsafe {
        libc::malloc_trim(0);
    }
    #[cfg(target_os = "macos")]
    {
        unsafe extern "C" {
            // <malloc/malloc.h>: a null zone means every zone; goal 0 means
            // as much as possible.
            fn malloc_zone_pressure_relief(zone: *mut std::ffi::c_void, goal: usize) -> usize;
        }
        // SAFETY: a null zone pointer is documented to mean all zones.
        unsafe {
            malloc_zone_pressure_relief(std::ptr::null_mut(), 0);
        }
    }
    #[cfg(windows)]
    // SAFETY: the process heap's handle, owned by the process; no pointers.
    unsafe {
        use windows_sys::Win32::System::Memory::{GetProcessHeap, HeapCompact};
        HeapCompact(GetProcessHeap(), 0);
    }
}

/// The heap as the allocator sees it: bytes handed out, and bytes it holds
/// free (which it may or may not have given back to the OS). Linux (glibc):
/// `mallinfo2`. Elsewhere: none.
#[allow(unsafe_code)]
pub fn heap_figures() -> Option<(u64, u64)> {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: mallinfo2 takes nothing and returns a plain struct.
        let m = unsafe { libc::mallinfo2() };
        Some(((m.uordblks + m.hblkhd) as u64, m.fordblks as u64))
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    None
}

/// Resident memory split into anonymous (heap, stacks) and file-backed
/// (the binary's code, mapped files) bytes. Linux: `/proc/self/status`.
pub fn resident_split() -> Option<(u64, u64)> {
    #[cfg(target_os = "linux")]
    {
        let s = std::fs::read_to_string("/proc/self/status").ok()?;
        let field = |name: &str| -> Option<u64> {
            let line = s.lines().find(|l| l.starts_with(name))?;
            let kib: u64 = line[name.len()..]
                .trim()
                .trim_end_matches("kB")
                .trim()
                .parse()
                .ok()?;
            Some(kib * 1024)
        };
        Some((
            field("RssAnon:")?,
            field("RssFile:")? + field("RssShmem:").unwrap_or(0),
        ))
    }
    #[cfg(not(target_os = "linux"))]
    None
}

/// Whether a process with this id is running (the daemon's cookie files
/// carry their maker's pid: those of a daemon that was killed are removed).
///
/// Unix: `kill(pid, 0)`, which fails with `ESRCH` only when there is no such
/// process (`EPERM` means another user's). Windows: the process opens and
/// has not exited.
#[allow(unsafe_code)]
pub fn is_running(pid: u32) -> bool {
    #[cfg(unix)]
    {
        let Ok(pid) = libc::pid_t::try_from(pid) else {
            return false;
        };
        // SAFETY: signal 0 only checks that the process exists.
        let r = unsafe { libc::kill(pid, 0) };
        r == 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
    }
    #[cfg(windows)]
    // SAFETY: the handle is checked, used once and closed.
    unsafe {
        use windows_sys::Win32::Foundation::{CloseHandle, STILL_ACTIVE};
        use windows_sys::Win32::System::Threading::{
            GetExitCodeProcess, OpenProcess, PROCESS_QUERY_LIMITED_INFORMATION,
        };
        let h = OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, 0, pid);
        if h.is_null() {
            return false;
        }
        let mut code = 0u32;
        let ok = GetExitCodeProcess(h, &mut code) != 0;
        CloseHandle(h);
        ok && code == STILL_ACTIVE as u32
    }
}

/// The user the daemon runs as (its effective uid): whose labels a
/// per-user index keeps.
#[cfg(unix)]
#[allow(unsafe_code)]
pub fn own_uid() -> u32 {
    // SAFETY: geteuid takes nothing and cannot fail.
    unsafe { libc::geteuid() }
}

/// Windows has no uids: every label of a per-user index is uid 0's.
#[cfg(not(unix))]
pub fn own_uid() -> u32 {
    0
}

/// The extraction child's program name (`fsindex-extract-child`, `.exe` on
/// Windows), a binary of its own so that the readers of documents,
/// archives, mail and media are never mapped into the daemon.
pub const EXTRACTOR: &str = "fsindex-extract-child";

/// Where the extraction child is: beside the daemon's own executable (a
/// build's `target/release`, `/usr/bin`, an install folder), else in
/// `../libexec/fsindex/` from it (a package that keeps helpers out of
/// `PATH`). Never looked up on `PATH`: a machine-wide daemon must not run
/// whatever a `PATH` names. When neither exists, the path beside the daemon,
/// so that the failure to start it names where it was expected.
pub fn extractor_path() -> std::path::PathBuf {
    let name = format!("{EXTRACTOR}{}", std::env::consts::EXE_SUFFIX);
    let Some(dir) = std::env::current_exe()
        .ok()
        .and_then(|e| e.parent().map(std::path::Path::to_path_buf))
    else {
        return std::path::PathBuf::from(name);
    };
    let beside = dir.join(&name);
    if beside.is_file() {
        return beside;
    }
    let libexec = dir.join("../libexec/fsindex").join(&name);
    if libexec.is_file() {
        return libexec;
    }
    beside
}
